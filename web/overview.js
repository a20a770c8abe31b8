// Overview: jobs by state, workers, the queues, and two charts (jobs that
// succeeded, and that failed for good, per second), derived here from the
// differences between successive fetches of GET /v1/stats, begun with the
// samples the server kept (GET /v1/stats/history), so that a page opened
// or reloaded draws the last minute at once.
import {el, table, link, ago, plural, JOB_STATES, workerBadge, workerState} from './dom.js';
import {get} from './api.js';
import {barChart} from './chart.js';
import {queueTable} from './queues.js';

// The charts: the last minute in one-second bars. Fetches come when
// something changed (or every few seconds), not on a beat: each delta is
// spread over the seconds between the two fetches that saw it.
const BIN_MS = 1000;
const SLOTS = 60;
// Kept across visits of the page while the tab lives: {at, succeeded, dead}.
const samples = [];
let seeded = false;  // the server's history was asked for (once a tab)

export function render() {
  const counts = el('section', {id: 'job-counts', class: 'tiles'});
  const charts = el('section', {class: 'charts'});
  const queues = el('section', {id: 'overview-queues'});
  const workers = el('section', {id: 'overview-workers'});
  const recovery = el('p', {id: 'recovery', class: 'muted'});
  // Jobs waiting that no live worker can run: hidden while there is none.
  const unserved = el('section', {id: 'unserved', class: 'warning', hidden: true});
  const node = el('div', {class: 'page overview'},
    el('h1', {}, 'Overview'),
    unserved, counts, recovery, charts,
    el('h2', {}, 'Queues'), queues,
    el('h2', {}, 'Live workers'), workers);

  async function load() {
    const [history, stats, q, w] = await Promise.all([
      seeded ? null : get('/v1/stats/history'), get('/v1/stats'), get('/v1/queues'),
      get('/v1/workers')]);
    return {history, stats, queues: q.queues, workers: w.workers};
  }

  function show({history, stats, queues: qs, workers: ws}) {
    if (history) seed(history.samples);
    record(stats);
    counts.replaceChildren(...JOB_STATES.map((s) =>
      el('a', {class: `tile state-${s}`, href: `#/jobs?state=${s}`, 'data-state': s},
        el('span', {class: 'count'}, String(stats.jobs[s] ?? 0)), el('span', {}, s))));
    const r = stats.recovery;
    // `warden serve`'s rows claim nothing: no worker of a queue.
    const upkeep = (state) => ws.filter((w) => w.maintenance_only && w.state === state).length;
    recovery.replaceChildren(
      `Workers: ${stats.workers.active - upkeep('active')} active, ` +
      `${stats.workers.draining - upkeep('draining')} draining, ` +
      `${ws.filter((w) => w.silent && !w.maintenance_only).length} of them silent, ` +
      `${stats.workers.dead} dead. Recovery: ${plural(r.rescued_attempts, 'rescued attempt')} (of `,
      // Each link lists exactly the jobs its count counts: those with a
      // lost attempt, and those whose last error is crash_loop.
      el('a', {id: 'rescued-jobs', href: '#/jobs?rescued=true'}, plural(r.rescued_jobs, 'job')),
      `), ${plural(r.fenced_writes, 'fenced write')}, `,
      el('a', {id: 'crash-loops', href: '#/jobs?error_kind=crash_loop'},
        plural(r.crash_loops, 'crash loop')), '.');
    showUnserved(unserved, stats.unserved ?? []);
    const {succeeded, failed} = rates();
    charts.replaceChildren(
      barChart({id: 'throughput', title: 'Succeeded', values: succeeded, slots: SLOTS,
        unit: 'jobs/s', kind: 'ok'}),
      barChart({id: 'failures', title: 'Failed (dead)', values: failed, slots: SLOTS,
        unit: 'jobs/s', kind: 'bad'}));
    queues.replaceChildren(queueTable(qs));
    workers.replaceChildren(table([
      {title: 'name', cell: (w) => w.name},
      {title: 'node', cell: (w) => w.node},
      {title: 'pid', cell: (w) => String(w.pid)},
      {title: 'state', cell: (w) => workerBadge(w)},
      {title: 'heartbeat', cell: (w) => ago(w.last_heartbeat)},
      {title: 'running', cell: (w) => (w.maintenance_only ? '—' : String(w.running)),
        class: 'num'},
      {title: 'queues', cell: (w) => (w.maintenance_only ? '—' : w.queues.join(', '))},
    ], ws, {id: 'live-workers', empty: 'no live worker',
      rowAttrs: (w) => ({'data-worker': w.name, 'data-shown': workerState(w)})}),
    el('p', {}, link('#/workers', 'every worker, past ones too')));
  }

  return {node, load, show};
}

// The groups of waiting jobs (queue, task, command or not, state) that no
// live worker's queues, tasks and --allow-cmd cover: work that will wait
// for ever unless a worker for it starts (docs/metrics.md).
function showUnserved(box, groups) {
  box.hidden = groups.length === 0;
  if (box.hidden) return box.replaceChildren();
  const jobs = groups.reduce((sum, g) => sum + g.jobs, 0);
  box.replaceChildren(
    el('strong', {}, `${plural(jobs, 'waiting job')} no live worker can run`),
    el('ul', {}, groups.map((g) => el('li', {'data-queue': g.queue, 'data-task': g.task},
      link(`#/jobs?queue=${encodeURIComponent(g.queue)}&task=${encodeURIComponent(g.task)}`,
        `${g.queue} / ${g.task}`),
      `: ${plural(g.jobs, 'job')} ${g.state}`, g.command ? ' (command jobs)' : ''))));
}

// The server's samples from before this tab's first: by the server's
// clock, which the bars are drawn against this browser's (as heartbeat
// ages are).
function seed(kept) {
  seeded = true;
  const first = samples.length ? samples[0].at : Infinity;
  const older = kept.map((x) => ({at: Date.parse(x.at), succeeded: x.succeeded, dead: x.dead}))
    .filter((x) => x.at < first);
  samples.unshift(...older);
}

function record(stats) {
  const now = Date.now();
  samples.push({at: now, succeeded: stats.jobs.succeeded, dead: stats.jobs.dead});
  // The last minute's samples, and the one before it (its delta reaches in).
  const first = samples.findIndex((x) => x.at >= now - SLOTS * BIN_MS);
  if (first > 1) samples.splice(0, first - 1);
}

// Jobs per second in each of the last SLOTS seconds. A count can fall (a
// dead job retried, old jobs pruned): a fall counts as zero.
function rates() {
  const start = Date.now() - SLOTS * BIN_MS;
  const succeeded = new Array(SLOTS).fill(0);
  const failed = new Array(SLOTS).fill(0);
  for (let i = 1; i < samples.length; ++i) {
    const prev = samples[i - 1];
    const cur = samples[i];
    const span = Math.max(1, cur.at - prev.at);
    const ok = Math.max(0, cur.succeeded - prev.succeeded);
    const bad = Math.max(0, cur.dead - prev.dead);
    const from = Math.max(prev.at, start);
    for (let k = Math.floor((from - start) / BIN_MS); k < SLOTS; ++k) {
      const lo = Math.max(from, start + k * BIN_MS);
      const hi = Math.min(cur.at, start + (k + 1) * BIN_MS);
      if (hi <= lo) break;
      const share = (hi - lo) / span / (BIN_MS / 1000);
      succeeded[k] += ok * share;
      failed[k] += bad * share;
    }
  }
  return {succeeded, failed};
}
