// The dashboard end to end, in a real headless Chromium: real `warden
// serve` and worker processes on one SQLite file, jobs added with the CLI,
// and a person's clicks. Login with a token, the overview and its charts
// (kept through a reload), the unserved jobs' warning, filtering jobs, a
// job's attempts and its timeline (why it died, who retried it), retrying a
// dead job (and a fresh retry, without its checkpoint), run now, a bulk cancel by filter and
// deleting a job, Retry all and Delete all on the dead letters, pausing a
// queue and setting its limits, adding, resizing, removing, disabling a
// node, releasing a worker, a read token shown no button (and a click's
// 401 or 403 said, never an unhandled rejection), 200-character names
// that do not widen a page, a worker SIGKILLed and its job rescued (seen
// within seconds, without a reload), a SIGKILLed worker nobody else
// notices shown silent (never a green badge) and one on a disabled node
// shown so, markup in every field shown as text and never run, the
// Content-Security-Policy, --no-auth (and a DNS-rebinding page refused),
// and a revoked token.
//
//   WARDEN_BIN=build/warden WARDEN_ARTIFACTS=build/web-artifacts \
//     node --test tests/web/dashboard.test.mjs
// (tests/web/run.sh, the ctest `dashboard`, checks what it needs first.)
// A screenshot of each page, and each process's output, land in
// WARDEN_ARTIFACTS.
import {test, after} from 'node:test';
import assert from 'node:assert/strict';
import {spawn, execFileSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {chromium} from 'playwright-core';

const BIN = process.env.WARDEN_BIN;
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const ARTIFACTS = path.resolve(process.env.WARDEN_ARTIFACTS || 'web-artifacts');
assert.ok(BIN, 'set WARDEN_BIN to the warden binary');

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
// Markup in every field a job has: none of it may run or become an element.
const MARKUP = '<img src=x onerror=alert(1)><script>alert(2)</script>';
const XSS_QUEUE = '<img src=x onerror=alert(3)>';
const XSS_TASK = '<script>alert(5)</script>';
// No warden command takes this as a node name; written into the database
// by hand, it must still show as text.
const XSS_NODE = '<img src=x onerror=alert(6)>';
// A queue no worker serves: its job is listed as unserved, as text.
const ORPHAN_QUEUE = '<b>orphan</b>';
const XSS_PAYLOAD = {html: '<img src=x onerror=alert(4)>', quote: '"\'><b>bold</b>'};
// The workers' recovery settings of tests/support/harness.cc (FastFlags):
// a killed worker's jobs are rescued about a second after its death.
const FAST = ['--heartbeat', '100ms', '--lease', '1s', '--keepalive-threshold', '1s',
  '--sweep-interval', '100ms', '--kill-grace', '200ms', '--poll-interval', '200ms'];

// The database, the flag files and each process's output, kept with the
// screenshots: a failure's logs are artifacts too.
fs.mkdirSync(ARTIFACTS, {recursive: true});
const dir = fs.mkdtempSync(path.join(ARTIFACTS, 'run-'));
const DB = path.join(dir, 'jobs.db');

// Every process started here, stopped by cleanup() whatever happens.
const children = new Set();
let browser = null;

function start(name, args, db = DB) {
  const log = fs.createWriteStream(path.join(dir, `${name}.log`));
  const child = spawn(BIN, ['--db', db, ...args], {stdio: ['ignore', 'pipe', 'pipe']});
  child.output = '';
  for (const stream of [child.stdout, child.stderr]) {
    stream.on('data', (chunk) => {
      child.output += chunk;
      log.write(chunk);
    });
  }
  child.exited = new Promise((resolve) => child.on('exit', (code, signal) => {
    children.delete(child);
    resolve({code, signal});
  }));
  child.label = name;
  children.add(child);
  return child;
}

async function stop(child, signal = 'SIGTERM') {
  if (!children.has(child)) return;
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await child.exited;
  clearTimeout(timer);
}

async function cleanup() {
  if (browser) await browser.close().catch(() => {});
  browser = null;
  await Promise.all([...children].map((c) => stop(c)));
}

after(cleanup);
// If the runner dies some other way, no worker or server outlives it.
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

// `warden --db DB ARGS...`: its stdout, trimmed.
function cli(...args) {
  return execFileSync(BIN, ['--db', DB, ...args], {encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']}).trim();
}

function add(...args) {
  return Number(cli('add', ...args));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Retries `check` until it returns a truthy value (which it returns) or
// `timeout` ms pass; then fails with `what` and the last reason.
async function until(what, check, timeout = 10000) {
  const deadline = Date.now() + timeout;
  let last = null;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
      last = `got ${JSON.stringify(v)}`;
    } catch (e) {
      last = e.message;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeout} ms (${last})`);
    await sleep(50);
  }
}

// What the DOM holds now, without waiting: the text of the first match.
const textOf = (page, selector) =>
  page.evaluate((s) => document.querySelector(s)?.textContent ?? null, selector);
// The value of a job page's fact (its <dd>) named `name`.
const fact = (page, name) => page.evaluate((n) => [...document.querySelectorAll('dl.facts dt')]
  .find((dt) => dt.textContent === n)?.nextElementSibling?.textContent ?? null, name);
const count = (page, selector) =>
  page.evaluate((s) => document.querySelectorAll(s).length, selector);

async function shot(page, name) {
  await page.screenshot({path: path.join(ARTIFACTS, `${name}.png`), fullPage: true});
}

async function startServer(name, extra = [], db = DB, maintenance = false) {
  // --no-maintenance: a server taking part in maintenance would end the
  // silences (frozen and killed workers) these pages are checked showing.
  const server = start(name, ['serve', '--listen', '127.0.0.1:0',
    ...(maintenance ? [] : ['--no-maintenance']), ...extra], db);
  const port = await until('warden serve says where it serves', () => {
    if (server.exitCode !== null) throw new Error(`serve exited: ${server.output}`);
    const m = server.output.match(/serving on 127\.0\.0\.1:(\d+) \(http\)/);
    return m && Number(m[1]);
  }, 15000);
  return `http://127.0.0.1:${port}`;
}

function startWorker(name, queues) {
  return start(name, ['worker', '--allow-cmd', '--name', name, '--queues', queues, ...FAST]);
}

// A new tab that fails the test on any dialog, page error or CSP report.
async function newPage(context, problems) {
  const page = await context.newPage();
  page.setDefaultTimeout(10000);
  page.on('dialog', async (d) => {
    problems.push(`a dialog opened: ${d.type()} ${d.message()}`);
    await d.dismiss().catch(() => {});
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) {
      problems.push(`CSP violation: ${m.text()}`);
    }
  });
  return page;
}

async function login(page, base, token) {
  await page.goto(`${base}/`);
  await page.locator('#login').waitFor();
  await page.fill('#token', token);
  await page.click('#login button[type=submit]');
  await page.locator('#job-counts').waitFor();
}

async function go(page, route) {
  await page.evaluate((r) => { location.hash = r; }, route);
}

test('the dashboard, end to end in Chromium', async (t) => {
  const problems = [];
  const token = cli('tokens', 'create', 'ui', '--scope', 'operate').split('\n')[0];
  assert.match(token, /^wdn_\d+_[0-9a-f]{64}$/);
  const base = await startServer('serve');

  // Jobs that succeed, one that fails once then succeeds when retried, and
  // one with markup everywhere whose stderr is markup too.
  const retryFlag = path.join(dir, 'retried');
  for (let i = 0; i < 3; ++i) add('--cmd', 'true');
  add('--cmd', 'true', '--queue', 'mail');
  const flaky = add('--cmd', `if [ -e ${retryFlag} ]; then echo fine; exit 0; fi; ` +
    `touch ${retryFlag}; echo boom >&2; exit 3`, '--max-attempts', '1', 'flaky');
  const xss = add('--cmd', `printf '%s' '${MARKUP}' >&2; exit 1`, '--queue', XSS_QUEUE,
    '--max-attempts', '1', XSS_TASK, JSON.stringify(XSS_PAYLOAD));
  const w1 = startWorker('w1', `default,mail,rescue,${XSS_QUEUE}`);

  browser = await chromium.launch({executablePath: CHROMIUM, headless: true});
  const context = await browser.newContext({viewport: {width: 1400, height: 1000}});
  const page = await newPage(context, problems);

  await t.test('the files are served with their types and a strict CSP', async () => {
    const res = await page.goto(`${base}/`);
    const h = res.headers();
    assert.equal(res.status(), 200);
    assert.equal(h['content-security-policy'], CSP);
    assert.equal(h['x-frame-options'], 'DENY');
    assert.equal(h['referrer-policy'], 'no-referrer');
    assert.match(h['content-type'], /^text\/html/);
    const js = await fetch(`${base}/ui/app.js`);
    assert.match(js.headers.get('content-type'), /^text\/javascript/);
    assert.equal(js.headers.get('content-security-policy'), CSP);
    assert.equal(js.headers.get('set-cookie'), null);
    const css = await fetch(`${base}/ui/app.css`);
    assert.match(css.headers.get('content-type'), /^text\/css/);
    const missing = await fetch(`${base}/ui/nope.js`);
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get('content-security-policy'), CSP);
    assert.equal((await fetch(`${base}/`, {method: 'POST'})).status, 405);
    // The API still wants its token.
    assert.equal((await fetch(`${base}/v1/queues`)).status, 401);
  });

  await t.test('a wrong token is refused; the right one shows the overview', async () => {
    await page.goto(`${base}/`);
    await page.locator('#login').waitFor();
    await page.fill('#token', 'wdn_1_' + '0'.repeat(64));
    await page.click('#login button[type=submit]');
    await until('the refusal', async () =>
      /not a live token/.test(await textOf(page, '#login-error')));
    await page.fill('#token', token);
    await page.click('#login button[type=submit]');
    await page.locator('#job-counts').waitFor();
    assert.equal(await page.evaluate(() => document.cookie), '');
    await until('the four quick jobs succeeded', async () =>
      Number(await textOf(page, '#job-counts [data-state=succeeded] .count')) >= 4);
    await until('the dead jobs', async () =>
      Number(await textOf(page, '#job-counts [data-state=dead] .count')) >= 2);
    await until('w1 among the live workers', () => count(page, '#live-workers tr[data-worker=w1]'));
    assert.equal(await count(page, '#queues tr[data-queue=default]'), 1);
    // The charts move with new work, polled without a reload.
    for (let i = 0; i < 5; ++i) add('--cmd', 'true');
    add('--cmd', 'exit 1', '--max-attempts', '1', 'doomed');
    const bars = (id) => page.evaluate((s) => [...document.querySelectorAll(`#${s} rect`)]
      .some((r) => Number(r.getAttribute('height')) > 0), id);
    await until('a bar in the throughput chart', () => bars('throughput'));
    await until('a bar in the failure chart', () => bars('failures'));
    await shot(page, 'overview');
  });

  await t.test('a reload keeps the charts: the server kept the samples', async () => {
    let history = null;
    const onResponse = async (r) => {
      if (r.url().endsWith('/v1/stats/history')) history = await r.json();
    };
    page.on('response', onResponse);
    await page.reload();
    await page.locator('#job-counts .count').first().waitFor();
    // The first drawing, before this tab has two samples of its own.
    const bars = await page.evaluate(() => [...document.querySelectorAll('#throughput rect')]
      .filter((r) => Number(r.getAttribute('height')) > 0).length);
    page.off('response', onResponse);
    assert.ok(bars > 0, 'the throughput chart starts empty after a reload');
    await until('the history answered', () => history);
    assert.ok(history.samples.length >= 1, JSON.stringify(history));
    assert.deepEqual(Object.keys(history.samples[0]).sort(), ['at', 'dead', 'succeeded']);
  });

  await t.test('jobs no live worker serves: a warning on the overview, names as text',
    async () => {
      assert.equal(await page.isHidden('#unserved'), true, 'no warning while all is served');
      add('--cmd', 'true', '--queue', ORPHAN_QUEUE, 'orphaned');
      await until('the warning', async () =>
        (await textOf(page, '#unserved'))?.includes(`${ORPHAN_QUEUE} / orphaned: 1 job available`));
      assert.match(await textOf(page, '#unserved strong'), /^1 waiting job no live worker can run/);
      assert.equal(await count(page, 'main b'), 0);
      const href = await page.getAttribute('#unserved li a', 'href');
      assert.equal(href, `#/jobs?queue=${encodeURIComponent(ORPHAN_QUEUE)}&task=orphaned`);
      await shot(page, 'overview-unserved');
    });

  await t.test('the crash-loop count links to exactly the jobs it counts', async () => {
    const looped = add('--cmd', 'kill -9 $$', '--max-crashes', '1', 'looper');
    await go(page, '#/');
    await until('the crash loop counted', async () =>
      /, 1 crash loop\.$/.test(await textOf(page, '#recovery') ?? ''));
    assert.equal(await page.getAttribute('#crash-loops', 'href'), '#/jobs?error_kind=crash_loop');
    await page.click('#crash-loops');
    await until('the looped job alone', async () =>
      (await count(page, '#jobs tbody tr')) === 1 &&
      (await count(page, `#jobs tr[data-job="${looped}"]`)) === 1);
    assert.equal(await page.inputValue('#filter-error-kind'), 'crash_loop');
    assert.match(await textOf(page, '#jobs-total'), / of 1 matching/);
    assert.equal(JSON.parse(cli('--json', 'stats')).recovery.crash_loops, 1);
  });

  await t.test('jobs filter by state, queue and task', async () => {
    await page.click('nav a[href="#/jobs"]');
    await page.locator('#filters').waitFor();
    await page.selectOption('#filter-state', 'dead');
    await until('only dead jobs', async () => {
      const states = await page.evaluate(() =>
        [...document.querySelectorAll('#jobs tbody tr')].map((r) => r.dataset.state));
      return states.length >= 3 && states.every((s) => s === 'dead');
    });
    assert.match(page.url(), /#\/jobs\?state=dead$/);
    await page.fill('#filter-task', 'flaky');
    await page.click('#filters button[type=submit]');
    await until('the flaky job alone', async () =>
      (await count(page, '#jobs tbody tr')) === 1 &&
      (await count(page, `#jobs tr[data-job="${flaky}"]`)) === 1);
    // Who ran it, when it was due, and how long its run took.
    const headers = await page.$$eval('#jobs thead th', (ths) => ths.map((th) => th.textContent));
    for (const h of ['worker', 'runs at', 'took']) assert.ok(headers.includes(h), h);
    const row = `#jobs tr[data-job="${flaky}"]`;
    assert.equal(await textOf(page, `${row} td.worker`), 'w1');
    assert.match(await textOf(page, `${row} td.run-at`), /^\d{4}-\d\d-\d\d \d\d:\d\d:/);
    assert.match(await textOf(page, `${row} td.took`), /^\d+(\.\d)? (ms|s)$/);
    await shot(page, 'jobs');
  });

  await t.test('a job shows its attempts', async () => {
    await page.click(`#jobs a[href="#/jobs/${flaky}"]`);
    await until('its failed attempt', async () =>
      (await count(page, '#attempts tr[data-attempt="1"][data-outcome=error]')) === 1);
    const row = await page.evaluate(() => [...document.querySelectorAll(
      '#attempts tr[data-attempt="1"] td')].map((td) => td.textContent));
    assert.equal(row[1], 'w1');
    assert.equal(row[6], '3', `exit code in ${JSON.stringify(row)}`);
    assert.equal(row[9], 'boom\n');
    assert.equal(await textOf(page, '#job-state'), 'dead');
    await shot(page, 'job');
  });

  await t.test('a dead job retried from the dead letters runs again', async () => {
    await page.click('nav a[href="#/dead"]');
    const button = `#jobs tr[data-job="${flaky}"] button.retry`;
    await page.locator(button).waitFor();
    await shot(page, 'dead-letters');
    await page.click(button);
    await until('the retry said', async () => /is available again/.test(await textOf(page, '#flash')));
    await go(page, `#/jobs/${flaky}`);
    await until('its second attempt succeeded', async () =>
      (await count(page, '#attempts tr[data-attempt="2"][data-outcome=succeeded]')) === 1 &&
      (await textOf(page, '#job-state')) === 'succeeded');
    assert.match(await textOf(page, '#result'), /fine/);
    // One attempt count, as the CLI's: charged of max, then the runs (the
    // retry reset the charge, and a success is not charged; it was "0
    // charged of 1", and the CLI said "2/1").
    assert.match(await fact(page, 'attempts'), /^0\/1 \(2 runs\); 0 crashes of \d+$/);
    // The timeline says why it died and who retried it.
    await until('the timeline', () => count(page, '#timeline tr[data-kind=operator]'));
    assert.equal(await textOf(page, '#timeline tr[data-kind=operator] td:last-child'),
      'retried by token:ui: attempts and crashes reset, checkpoint kept');
    assert.equal(await textOf(page, '#timeline tr[data-kind=finished] td:last-child'),
      'the job is dead: its attempts ran out (attempts 1/1, last error error)');
  });

  await t.test('Retry fresh starts a job over without its checkpoint', async () => {
    const restart = add('--cmd', 'if [ "$WARDEN_ATTEMPT" = 1 ]; then ' +
      'echo \'checkpoint {"step":3}\' >&3; exit 1; fi; echo "cp=$WARDEN_CHECKPOINT"',
    '--max-attempts', '1', 'restart');
    await go(page, `#/jobs/${restart}`);
    await until('it died with a checkpoint', async () =>
      (await textOf(page, '#job-state')) === 'dead' &&
      /step/.test(await textOf(page, '#checkpoint')));
    await page.click('#retry-fresh');
    await until('the fresh retry said', async () =>
      /available again, without its checkpoint/.test(await textOf(page, '#flash')));
    await until('its second attempt succeeded', async () =>
      (await textOf(page, '#job-state')) === 'succeeded');
    assert.match(await textOf(page, '#result'), /cp=(\\n|")/);
    assert.doesNotMatch(await textOf(page, '#checkpoint'), /step/);
    await until('the fresh retry in the timeline', async () =>
      /checkpoint dropped \(fresh\)$/.test(
        await textOf(page, '#timeline tr[data-kind=operator] td:last-child')));
    await shot(page, 'job-retried-fresh');
  });

  await t.test('a paused queue keeps a new job available until resumed', async () => {
    await page.click('nav a[href="#/queues"]');
    await page.click('#queues tr[data-queue=mail] button[data-action=pause]');
    await until('mail paused', () => count(page, '#queues tr[data-queue=mail][data-paused=true]'));
    const held = add('--cmd', 'true', '--queue', 'mail', 'held');
    // Several of the worker's polls and the page's: still waiting.
    await sleep(1500);
    await until('the held job counted available', async () =>
      (await textOf(page, '#queues tr[data-queue=mail] td:nth-child(3)')) === '1');
    await shot(page, 'queues-paused');
    assert.equal(JSON.parse(cli('jobs', 'show', String(held), '--json')).state, 'available');
    await page.click('#queues tr[data-queue=mail] button[data-action=resume]');
    await until('mail resumed', () => count(page, '#queues tr[data-queue=mail][data-paused=false]'));
    await go(page, `#/jobs/${held}`);
    await until('the held job ran', async () => (await textOf(page, '#job-state')) === 'succeeded');
  });

  await t.test('a queue\'s limits set, refused and removed from the page', async () => {
    await go(page, '#/queues');
    const cell = '#queues tr[data-queue=mail] td.limits';
    await until('mail without limits', async () => (await textOf(page, cell)) === 'none');
    await page.fill('#limit-queue', 'mail');
    await page.fill('#limit-concurrency', '2');
    await page.fill('#limit-rate', '10/1s');
    await page.click('#limit-set');
    await until('the limits shown', async () =>
      (await textOf(page, cell)) === 'at most 2 running, 10/1s starts');
    const mail = () => JSON.parse(cli('--json', 'queues')).find((q) => q.name === 'mail');
    assert.deepEqual(mail().limits, {concurrency: 2, rate: '10/1s'});
    await page.fill('#limit-rate', '10');
    await page.click('#limit-set');
    await until('the bad rate refused', async () =>
      /invalid rate '10'/.test(await textOf(page, '#flash.error') ?? ''));
    assert.deepEqual(mail().limits, {concurrency: 2, rate: '10/1s'});
    await page.click('#limit-remove');
    await until('the limits gone', async () => (await textOf(page, cell)) === 'none');
    assert.deepEqual(mail().limits, {concurrency: null, rate: null});
  });

  await t.test('a scheduled job is run now from its page', async () => {
    const later = add('--cmd', 'echo early', '--queue', 'mail', '--delay', '1h', 'later');
    await go(page, `#/jobs/${later}`);
    await until('shown scheduled', async () => (await textOf(page, '#job-state')) === 'scheduled');
    assert.equal(await page.isVisible('#run-now'), true);
    await page.click('#run-now');
    await until('said', async () => /is available now/.test(await textOf(page, '#flash')));
    await until('it ran long before its hour', async () =>
      (await textOf(page, '#job-state')) === 'succeeded');
    assert.equal(await page.isHidden('#run-now'), true, 'no Run now for a finished job');
  });

  await t.test('the audit log names what the token did', async () => {
    await page.click('nav a[href="#/audit"]');
    for (const action of ['queue.pause', 'queue.resume', 'job.retry', 'job.run_now']) {
      await until(action, () => count(page, `#audit tr[data-action="${action}"]`));
    }
    assert.match(await textOf(page, '#audit tbody'), /token:ui/);
    await shot(page, 'audit');
  });

  await t.test('a bulk cancel by filter: counted, confirmed, its progress shown', async () => {
    const held = [];
    for (let i = 0; i < 3; ++i) held.push(add('--cmd', 'true', '--queue', 'bulkq', '--delay', '1h'));
    await go(page, '#/jobs?queue=bulkq');
    await until('the three scheduled jobs', async () =>
      (await count(page, '#jobs tbody tr[data-state=scheduled]')) === 3);
    assert.equal(await page.isDisabled('#bulk-confirm'), true, 'nothing to confirm before a count');
    await page.selectOption('#bulk-action', 'cancel');
    await page.click('#bulk-count');
    await until('the dry run\'s count', async () =>
      /^3 jobs would be cancelled/.test(await textOf(page, '#bulk-said')));
    for (const id of held) {
      assert.equal(JSON.parse(cli('jobs', 'show', String(id), '--json')).state, 'scheduled');
    }
    await page.click('#bulk-confirm');
    await until('the operation done', async () =>
      /3 of 3 cancelled, done/.test(await textOf(page, '#bulk-progress')));
    await until('the jobs shown cancelled', async () =>
      (await count(page, '#jobs tbody tr[data-state=cancelled]')) === 3);
    await shot(page, 'bulk-cancel');
  });

  await t.test('an unfiltered page counts every job: the page says "all" for it', async () => {
    // The API refuses a bulk request with no filter unless it says "all"
    // (issue 35): the dashboard says it for an unfiltered page.
    await go(page, '#/jobs');
    await page.selectOption('#bulk-action', 'delete');
    await page.click('#bulk-count');
    await until('the dry run\'s count of every job', async () =>
      /^\d+ jobs? would be deleted/.test(await textOf(page, '#bulk-said')));
  });

  await t.test('a finished job is deleted from its page', async () => {
    const gone = Number(JSON.parse(cli('jobs', '--queue', 'bulkq', '--json'))[0].id);
    await go(page, `#/jobs/${gone}`);
    await until('the cancelled job', async () => (await textOf(page, '#job-state')) === 'cancelled');
    assert.equal(await page.isHidden('#delete-confirm'), true);
    await page.click('#delete');
    await page.click('#delete-confirm');
    await until('back on the jobs page', async () => /#\/jobs$/.test(page.url()));
    assert.throws(() => cli('jobs', 'show', String(gone)), 'the job is gone');
    await go(page, '#/jobs?queue=bulkq');
    await until('two left', async () => (await count(page, '#jobs tbody tr[data-job]')) === 2);
  });

  await t.test('a read token sees no button that changes anything; refusals are said',
    async () => {
      const viewerToken = cli('tokens', 'create', 'viewer', '--scope', 'read').split('\n')[0];
      const viewer = await newPage(context, problems);
      // Script errors of any kind; a refused fetch's own network line is not one.
      const errors = [];
      viewer.on('console', (m) => {
        if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) {
          errors.push(m.text());
        }
      });
      viewer.on('pageerror', (e) => errors.push(e.message));
      await login(viewer, base, viewerToken);
      assert.equal(await viewer.evaluate(() => document.body.dataset.scope), 'read');
      // A reload while /v1/whoami fails: the page still shows, and learns
      // the scope once the server answers it.
      await viewer.route('**/v1/whoami', (r) => r.abort());
      await viewer.reload();
      await viewer.locator('#job-counts .count').first().waitFor();
      assert.equal(await viewer.evaluate(() => document.body.dataset.scope), undefined);
      await viewer.unroute('**/v1/whoami');
      await until('the scope learnt', async () =>
        (await viewer.evaluate(() => document.body.dataset.scope)) === 'read');
      const shown = () => viewer.$$eval('main button',
        (bs) => bs.filter((b) => b.checkVisibility()).map((b) => b.textContent));
      const pages = [[`#/jobs/${xss}`, '#job-fields dd'], ['#/dead', '#jobs tbody tr'],
        ['#/queues', '#queues tbody tr'], ['#/nodes', '#nodes tbody tr'],
        ['#/workers', '#workers tbody tr'], ['#/jobs', '#jobs tbody tr'], ['#/', '#queues']];
      for (const [route, ready] of pages) {
        await go(viewer, route);
        await viewer.locator(ready).first().waitFor();
        assert.deepEqual((await shown()).filter((b) => b !== 'Filter'), [], route);
      }
      // Shown anyway (a page of an older server), a button's 403 is said.
      await go(viewer, `#/jobs/${xss}`);
      await viewer.locator('#job-fields dd').first().waitFor();
      await viewer.evaluate(() => { document.body.dataset.operate = 'yes'; });
      await viewer.click('#retry');
      await until('the refusal said', async () =>
        /needs a token with scope operate or above; token:viewer has read/
          .test(await textOf(viewer, '#flash.error') ?? ''));
      assert.equal(JSON.parse(cli('jobs', 'show', String(xss), '--json')).state, 'dead');
      // A 401 answered inside a click handler brings the login form back.
      await go(viewer, '#/jobs?queue=bulkq');
      await viewer.locator('#bulk-count').waitFor();
      await viewer.route('**/v1/jobs/bulk', (r) => r.fulfill({status: 401,
        contentType: 'application/json',
        body: JSON.stringify({error: {code: 'unauthorized', message: 'revoked'}})}));
      await viewer.click('#bulk-count');
      await until('the login form', () => count(viewer, '#login'));
      assert.match(await textOf(viewer, '#login-error'), /log in again/);
      await sleep(200);
      assert.deepEqual(errors, [], 'no unhandled rejection or script error');
      await viewer.close();
    });

  await t.test('a SIGKILLed worker and its rescued job show within seconds', async () => {
    const flag = path.join(dir, 'rescued');
    const slow = add('--cmd', `if [ -e ${flag} ]; then echo second; exit 0; fi; touch ${flag}; ` +
      'sleep 60', '--queue', 'rescue', 'slow');
    await go(page, `#/jobs/${slow}`);
    await until('the slow job running on w1', async () =>
      (await textOf(page, '#job-state')) === 'running' &&
      (await count(page, '#attempts tr[data-attempt="1"][data-outcome=running]')) === 1);
    // The page is told of changes (GET /v1/events) instead of polling: while
    // nothing changes it fetches the job every 5 s, where polling took 500 ms.
    await until('the event stream open', async () =>
      (await page.getAttribute('#status', 'data-live')) === 'stream');
    let loads = 0;
    const onRequest = (r) => { if (r.url().endsWith(`/v1/jobs/${slow}`)) loads++; };
    page.on('request', onRequest);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    page.off('request', onRequest);
    assert.ok(loads <= 2, `${loads} loads of the job in 3 s while nothing changed: it polls`);
    const w2 = startWorker('w2', 'default,mail,rescue');
    // A second tab (its own login: the token is kept per tab) on the workers.
    const workers = await newPage(context, problems);
    await login(workers, base, token);
    await go(workers, '#/workers');
    await until('w2 live', () => count(workers, '#workers tr[data-worker=w2][data-state=active]'));

    const killed = Date.now();
    w1.kill('SIGKILL');
    await until('the lost attempt shown', () =>
      count(page, '#attempts tr[data-attempt="1"][data-outcome=lost]'), 8000);
    const lostAfter = Date.now() - killed;
    await until('w1 shown dead', () =>
      count(workers, '#workers tr[data-worker=w1][data-state=dead]'), 8000);
    const deadAfter = Date.now() - killed;
    t.diagnostic(`after SIGKILL: lost attempt shown in ${lostAfter} ms, dead worker in ${deadAfter} ms`);
    assert.notEqual(await textOf(workers, '#workers tr[data-worker=w1] td.note'), '');
    await until('the rescued job run again by w2', async () =>
      (await textOf(page, '#job-state')) === 'succeeded' &&
      (await textOf(page, '#attempts tr[data-attempt="2"] td:nth-child(2)')) === 'w2');
    // The recovery timeline says how the loss was found, then the rerun.
    await until('the timeline shows the proven death', () =>
      count(page, '#timeline tr[data-kind=lost][data-lost-by=proven_death]'));
    const kinds = await page.$$eval('#timeline tbody tr', (rows) => rows.map((r) => r.dataset.kind));
    assert.deepEqual(kinds, ['enqueued', 'claimed', 'lost', 'runnable', 'claimed', 'succeeded']);
    assert.ok((await textOf(page, '#why-reasons')).includes('finished'));
    // Counts read as English: the SIGKILL cost the job one crash, and the
    // overview counts the rescue ("1 crashes of 3", "1 rescued attempts"
    // before).
    const facts = await textOf(page, '#job-fields');
    t.diagnostic(`job facts: ${facts}`);
    assert.match(facts, /; 1 crash of \d+/);
    await shot(page, 'rescued-job');
    await go(page, '#/');
    await until('the recovery line', async () =>
      /Recovery: /.test(await textOf(page, '#recovery')));
    const recovery = await textOf(page, '#recovery');
    t.diagnostic(`overview: ${recovery}`);
    assert.doesNotMatch(recovery, /(^|\D)1 (rescued attempts|jobs|fenced writes|crash loops)/);
    assert.match(recovery,
      /Recovery: \d+ rescued attempts? \(of \d+ jobs?\), \d+ fenced writes?, \d+ crash loops?\./);
    // The rescued count's link lists exactly the jobs it counts.
    assert.equal(await page.getAttribute('#rescued-jobs', 'href'), '#/jobs?rescued=true');
    await page.click('#rescued-jobs');
    const rescued = JSON.parse(cli('--json', 'stats')).recovery.rescued_jobs;
    await until('the rescued jobs listed', async () =>
      (await count(page, '#jobs tbody tr[data-job]')) === rescued &&
      (await count(page, `#jobs tr[data-job="${slow}"]`)) === 1);
    assert.equal(await page.isChecked('#filter-rescued'), true);
    assert.match(await textOf(page, '#jobs-total'), new RegExp(` of ${rescued} matching`));
    await go(page, `#/jobs/${slow}`);
    await shot(workers, 'workers');
    await workers.close();
    await stop(w2);
  });

  await t.test('nodes: listed, disabled and enabled from the page, names as text', async () => {
    cli('nodes', 'add', 'web-1', '--capacity', '3');
    execFileSync('sqlite3', ['-cmd', '.timeout 5000', DB,
      `INSERT INTO nodes (name, present, enabled, capacity, updated_at) VALUES ('${XSS_NODE}', 1, 1, NULL, 0)`]);
    await page.click('nav a[href="#/nodes"]');
    const row = '#nodes tr[data-node="web-1"]';
    await until('web-1 listed, enabled', () => count(page, `${row}[data-state=enabled]`));
    const cells = await page.$$eval(`${row} td`, (tds) => tds.map((td) => td.textContent));
    assert.deepEqual(cells.slice(0, 5), ['web-1', 'enabled', '3', '0', '0']);
    // The hand-written name: text in its cell, no element made of it.
    await until('the markup node listed', async () =>
      (await page.$$eval('#nodes tbody td:first-child', (tds) => tds.map((td) => td.textContent)))
        .includes(XSS_NODE));
    assert.equal(await count(page, 'img'), 0);
    assert.equal(await page.evaluate((n) =>
      [...document.querySelectorAll('#nodes tbody tr')].filter((r) => r.dataset.node === n).length,
    XSS_NODE), 1);
    await shot(page, 'nodes');

    await page.click(`${row} button[data-action=disable]`);
    await until('web-1 shown disabled', () => count(page, `${row}[data-state=disabled]`));
    assert.match(await textOf(page, '#flash'), /Node web-1 disabled\./);
    const stored = JSON.parse(cli('--json', 'nodes')).find((n) => n.name === 'web-1');
    assert.equal(stored.enabled, false, JSON.stringify(stored));
    const audit = JSON.parse(cli('--json', 'audit'));
    assert.ok(audit.some((e) => e.action === 'node.disable' && e.actor === 'token:ui' &&
      e.target === 'web-1'), JSON.stringify(audit.slice(0, 3)));
    await page.click(`${row} button[data-action=enable]`);
    await until('web-1 shown enabled again', () => count(page, `${row}[data-state=enabled]`));
    assert.equal(JSON.parse(cli('--json', 'nodes')).find((n) => n.name === 'web-1').enabled, true);

    // Added, resized and removed from the page.
    const stored2 = () => JSON.parse(cli('--json', 'nodes')).find((n) => n.name === 'web-2');
    const row2 = '#nodes tr[data-node="web-2"]';
    await page.fill('#node-name', 'web-2');
    await page.fill('#node-capacity', '2');
    await page.click('#node-form button[type=submit]');
    await until('web-2 listed', () => count(page, `${row2}[data-state=enabled]`));
    assert.equal(await textOf(page, `${row2} td:nth-child(3)`), '2');
    await page.fill('#node-capacity', '5');
    await page.click('#node-form button[type=submit]');
    await until('web-2 resized', async () =>
      (await textOf(page, `${row2} td:nth-child(3)`)) === '5');
    assert.match(await textOf(page, '#flash'), /^Node web-2 has capacity 5\.$/);
    assert.equal(stored2().capacity, 5);
    await page.click(`${row2} button[data-action=remove]`);
    assert.equal(stored2().present, true, 'asked first');
    await page.click(`${row2} button[data-action=remove-confirm]`);
    await until('web-2 removed', () => count(page, `${row2}[data-state=removed]`));
    assert.equal(stored2().present, false);

    // The server refuses the markup name (400): said in the flash, as text.
    await page.evaluate((n) => [...document.querySelectorAll('#nodes tbody tr')]
      .find((r) => r.dataset.node === n).querySelector('button[data-action=disable]').click(),
    XSS_NODE);
    await until('the refusal shown', async () =>
      /may hold only letters/.test(await textOf(page, '#flash.error') ?? ''));
    assert.ok((await textOf(page, '#flash')).includes(XSS_NODE));
    assert.equal(await count(page, 'img'), 0);
    await shot(page, 'nodes-refused');
  });

  await t.test('markup in a job is shown as text and never runs', async () => {
    await go(page, `#/jobs/${xss}`);
    await until('the failed attempt', () => count(page, '#attempts tr[data-attempt="1"]'));
    const tailText = await textOf(page, '#attempts tr[data-attempt="1"] pre.tail');
    assert.equal(tailText, MARKUP);
    assert.deepEqual(JSON.parse(await textOf(page, '#payload pre')), XSS_PAYLOAD);
    const fields = await textOf(page, '#job-fields');
    assert.ok(fields.includes(XSS_QUEUE) && fields.includes(XSS_TASK), fields);
    await shot(page, 'xss-job');
    // Every page that shows its queue or task, each checked once it shows it.
    const shown = [
      ['#/', '#queues tbody', XSS_QUEUE],
      [`#/jobs?queue=${encodeURIComponent(XSS_QUEUE)}`, '#jobs tbody td:nth-child(2)', XSS_QUEUE],
      [`#/jobs?task=${encodeURIComponent(XSS_TASK)}`, '#jobs tbody td:nth-child(3)', XSS_TASK],
      ['#/dead', '#jobs tbody', XSS_TASK],
      ['#/queues', '#queues tbody', XSS_QUEUE],
    ];
    for (const [route, selector, markup] of shown) {
      await go(page, route);
      await until(`${route} shows ${markup} as text`, async () =>
        (await textOf(page, selector))?.includes(markup));
      assert.equal(await count(page, 'img'), 0, route);
    }
    // Nothing of it became an element: the page has no image, no bold, and
    // one script, its own.
    assert.equal(await count(page, 'img'), 0);
    assert.equal(await count(page, 'main b'), 0);
    assert.deepEqual(await page.evaluate(() =>
      [...document.scripts].map((s) => new URL(s.src).pathname)), ['/ui/app.js']);
    await shot(page, 'xss-queues');
  });

  await t.test('a 200-character name is cut, not pushed off the screen', async () => {
    const longQueue = 'q'.repeat(200);
    const longTask = 't'.repeat(200);
    const id = add('--cmd', 'true', '--queue', longQueue, longTask);
    const pages = [
      ['#/queues', `#queues tr[data-queue="${longQueue}"]`],
      [`#/jobs?queue=${longQueue}`, `#jobs tr[data-job="${id}"]`],
      ['#/jobs', `#jobs tr[data-job="${id}"]`],
      ['#/', `#queues tr[data-queue="${longQueue}"]`],
    ];
    for (const [route, row] of pages) {
      await go(page, route);
      await page.locator(row).waitFor();
      const {scroll, inner} = await page.evaluate(() =>
        ({scroll: document.documentElement.scrollWidth, inner: window.innerWidth}));
      assert.ok(scroll <= inner, `${route}: ${scroll} px wide in a ${inner} px window`);
      // The whole name is still there, as a tooltip.
      const titles = await page.$$eval(`${row} .clip`, (spans) => spans.map((x) => x.title));
      assert.deepEqual(titles, row.startsWith('#jobs') ? [longQueue, longTask] : [longQueue]);
    }
    await shot(page, 'long-names');
  });

  await t.test('--no-auth: no login form', async () => {
    const open = await startServer('serve-no-auth', ['--no-auth']);
    const p = await newPage(context, problems);
    await p.goto(`${open}/`);
    await p.locator('#job-counts').waitFor();
    assert.equal(await count(p, '#login'), 0);
    assert.equal(await p.isHidden('#logout'), true);
    await p.close();

    // DNS rebinding: a page at a name of its own that was made to resolve
    // to 127.0.0.1 once the browser had it (here, Chromium's resolver maps
    // it) is same-origin with itself, Origin and Host alike. The server
    // answers it nothing: not the dashboard, not a token.
    const port = new URL(open).port;
    const rebinding = await chromium.launch({executablePath: CHROMIUM, headless: true,
      args: ['--host-resolver-rules=MAP rebind.test 127.0.0.1']});
    try {
      const evil = await rebinding.newPage();
      const res = await evil.goto(`http://rebind.test:${port}/`);
      assert.equal(res.status(), 403);
      assert.equal(JSON.parse(await res.text()).error.code, 'host_not_allowed');
      const minted = await evil.evaluate(async () => {
        const r = await fetch('/v1/tokens', {method: 'POST',
          headers: {'Content-Type': 'application/json'},
          body: JSON.stringify({name: 'rebound', scope: 'admin'})});
        return {status: r.status, body: await r.json()};
      });
      assert.equal(minted.status, 403, JSON.stringify(minted.body));
      assert.equal(minted.body.error.code, 'host_not_allowed');
      const paused = await evil.evaluate(async () =>
        (await fetch('/v1/queues/default/pause', {method: 'POST'})).status);
      assert.equal(paused, 403);
      assert.ok(!cli('tokens').includes('rebound'), 'no token was minted');
      // localhost is a name no DNS answer can move: it is served.
      const local = await evil.goto(`http://localhost:${port}/`);
      assert.equal(local.status(), 200);
      await evil.locator('#job-counts').waitFor();
    } finally {
      await rebinding.close();
    }
  });

  await t.test('a silent worker is never a green badge; a disabled node\'s worker says so',
    async () => {
      // A database of its own, where the SIGKILLed worker is the only one:
      // no other process proves its death, so its row stays `active`.
      const db2 = path.join(dir, 'silent.db');
      const run2 = (...args) => execFileSync(BIN, ['--db', db2, ...args],
        {encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']}).trim();
      const w9 = start('w9', ['worker', '--allow-cmd', '--name', 'w9', '--queues', 'quiet',
        ...FAST], db2);
      await until('w9 registered', () => JSON.parse(run2('workers', '--json')).length === 1);
      const job = Number(run2('add', '--cmd', 'sleep 60', '--queue', 'quiet'));
      await until('the job running on w9', () =>
        JSON.parse(run2('jobs', 'show', String(job), '--json')).state === 'running');
      const open2 = await startServer('serve-silent', ['--no-auth'], db2);
      const p = await newPage(context, problems);
      await p.goto(`${open2}/#/workers`);
      await until('w9 shown live', () =>
        count(p, '#workers tr[data-worker=w9][data-shown=active]'));
      await stop(w9, 'SIGKILL');
      await until('w9 shown silent', () =>
        count(p, '#workers tr[data-worker=w9][data-state=active][data-shown=silent]'));
      const badge = '#workers tr[data-worker=w9] .badge';
      assert.equal(await textOf(p, badge), 'silent');
      assert.equal(await p.$eval(badge, (b) => b.classList.contains('state-active')), false);
      const green = 'rgb(220, 243, 229)';
      assert.notEqual(await p.$eval(badge, (b) => getComputedStyle(b).backgroundColor), green);
      assert.match(await textOf(p, '#workers tr[data-worker=w9] td.note'),
        /^no heartbeat for .+, keepalive 1\.0 s$/);
      await go(p, '#/');
      await until('w9 silent among the live workers', () =>
        count(p, '#live-workers tr[data-worker=w9][data-shown=silent]'));
      assert.equal(await textOf(p, '#live-workers tr[data-worker=w9] .badge'), 'silent');
      await shot(p, 'silent-worker');

      await go(p, '#/workers');
      // The silent w9's host is gone: released from the page, asked twice,
      // its job comes back (then cancelled: w10 below is to claim nothing).
      const w9row = '#workers tr[data-worker=w9]';
      await p.click(`${w9row} button[data-action=release]`);
      assert.equal(JSON.parse(run2('workers', '--json')).some((w) => w.name === 'w9'), true);
      await p.click(`${w9row} button[data-action=release-confirm]`);
      await until('w9 released', () => count(p, `${w9row}[data-state=dead]`));
      assert.match(await textOf(p, '#flash'), /^Worker w9 released; 1 job recovered\.$/);
      assert.match(JSON.parse(run2('jobs', 'show', String(job), '--json')).state,
        /^(available|retryable)$/);
      assert.equal(await count(p, `${w9row} button`), 0, 'no Release for a dead worker');
      run2('jobs', 'cancel', String(job));

      // A worker on a node that takes no work is not shown plainly active.
      run2('nodes', 'add', 'vm2');
      const w10 = start('w10', ['worker', '--allow-cmd', '--name', 'w10', '--node', 'vm2',
        '--queues', 'quiet', ...FAST], db2);
      await go(p, '#/workers');
      await until('w10 shown active', () =>
        count(p, '#workers tr[data-worker=w10][data-shown=active]'));
      run2('nodes', 'disable', 'vm2');
      await until('w10 shown on a disabled node', () =>
        count(p, '#workers tr[data-worker=w10][data-state=active][data-shown=node-disabled]'));
      assert.equal(await textOf(p, '#workers tr[data-worker=w10] .badge'), 'node-disabled');

      await p.close();
      await stop(w10);

      // `warden serve`'s own row claims nothing: a maintenance badge, no
      // claim columns, and no live worker in the counts.
      const upkeep = await startServer('serve-upkeep',
        ['--no-auth', '--maintenance-name', 'serve-upkeep'], db2, true);
      const q = await newPage(context, problems);
      await q.goto(`${upkeep}/#/workers`);
      const row = '#workers tr[data-worker=serve-upkeep]';
      await until('serve\'s row shown as maintenance', () =>
        count(q, `${row}[data-state=active][data-shown=maintenance]`));
      assert.equal(await textOf(q, `${row} .badge`), 'maintenance');
      assert.equal(await textOf(q, `${row} td.note`),
        'maintenance only (warden serve): claims nothing');
      const cells = await q.$$eval(`${row} td`, (tds) => tds.map((td) => td.textContent));
      assert.deepEqual(cells.slice(6, 8), ['—', '—'], JSON.stringify(cells));
      assert.match(await textOf(q, '#workers-summary'),
        /^0 live, \d+ past; 1 warden serve taking part in maintenance$/);
      await go(q, '#/');
      await until('the overview\'s row', () =>
        count(q, '#live-workers tr[data-worker=serve-upkeep][data-shown=maintenance]'));
      assert.match(await textOf(q, '#recovery'), /^Workers: 0 active, 0 draining, 0 of them/);
      await shot(q, 'maintenance-row');
      await q.close();
    });

  await t.test('dead letters: Retry all and Delete all, its polling ends with the page',
    async () => {
      const w3 = startWorker('w3', 'doom');
      const doomed = [];
      for (let i = 0; i < 2; ++i) {
        doomed.push(add('--cmd', 'exit 1', '--queue', 'doom', '--max-attempts', '1', 'doom'));
      }
      const state = (id) => JSON.parse(cli('jobs', 'show', String(id), '--json'));
      await until('both dead', () => doomed.every((id) => state(id).state === 'dead'));
      const dead = Number(JSON.parse(cli('--json', 'stats')).jobs.dead);
      await go(page, '#/dead');
      await page.click('#retry-all');
      await until('the count', async () =>
        (await textOf(page, '#dead-said')) === `${dead} jobs would be retried: every dead job, ` +
          'on every page.');
      // The operation's progress, answered "running" for ever: the page
      // asks again every half second, until it is left.
      let asked = 0;
      await page.route('**/v1/jobs/bulk/*', async (r) => {
        ++asked;
        const real = await (await r.fetch()).json();
        await r.fulfill({json: {...real, state: 'running'}});
      });
      await page.click('#dead-confirm');
      await until('progress asked for', () => asked >= 2);
      await until('the doomed jobs retried and dead again', () =>
        doomed.every((id) => state(id).state === 'dead' && state(id).attempt === 2));
      await go(page, '#/queues');
      await page.locator('#queues').waitFor();
      const left = asked;
      await sleep(1500);
      assert.equal(asked, left, 'the progress of a page left was still asked for');
      await page.unroute('**/v1/jobs/bulk/*');

      await go(page, '#/dead');
      await page.click('#delete-all');
      await until('the count', async () =>
        /^\d+ jobs? would be deleted: every dead job/.test(await textOf(page, '#dead-said')));
      assert.equal(await textOf(page, '#dead-confirm'), 'Confirm: delete them for good');
      await page.click('#dead-confirm');
      await until('done', async () =>
        /deleted, done\.$/.test(await textOf(page, '#dead-progress')));
      await until('none dead', async () => /^0 dead/.test(await textOf(page, '#dead-total')));
      assert.equal(Number(JSON.parse(cli('--json', 'stats')).jobs.dead), 0);
      await shot(page, 'dead-deleted');
      await stop(w3);
    });

  await t.test('a revoked token brings the login form back', async () => {
    await go(page, '#/');
    await page.locator('#job-counts').waitFor();
    cli('tokens', 'revoke', 'ui');
    await until('the login form', () => count(page, '#login'));
    assert.equal(await page.evaluate(() => sessionStorage.getItem('warden.token')), null);
    await shot(page, 'login');
  });

  assert.deepEqual(problems, [], 'no dialog, page error or CSP violation');
});
