// The OpenAPI document against the server that serves it: the document is
// valid OpenAPI 3.1 (@seriousme/openapi-schema-validator), the server
// serves exactly it, and real responses of every route, success and
// errors, from a real `warden serve` over a real database, validate
// against the schema the document gives for their path, method and status
// (Ajv, JSON Schema 2020-12). Every operation of the document is called.
//
//   WARDEN_BIN=build/warden node tests/api/openapi_test.mjs
// With WARDEN_TEST_PG_URL set, it runs on PostgreSQL too (a database of
// its own on that server, dropped after).
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const here = dirname(fileURLToPath(import.meta.url));
const WARDEN = process.env.WARDEN_BIN;
if (!WARDEN) throw new Error('set WARDEN_BIN to the warden binary');
const doc = JSON.parse(readFileSync(join(here, '../../src/server/openapi.json'), 'utf8'));

// 1. The document itself.
const validity = await new Validator().validate(doc);
assert.ok(validity.valid, 'not valid OpenAPI: ' + JSON.stringify(validity.errors, null, 1));

// 2. A validator per (path, method, status).
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: 'doc', components: doc.components });
const rewrite = (node) => {  // '#/components/...' refs point into the 'doc' schema
  if (Array.isArray(node)) return node.map(rewrite);
  if (node && typeof node === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(node)) {
      out[k] = k === '$ref' && v.startsWith('#/components/') ? 'doc' + v : rewrite(v);
    }
    return out;
  }
  return node;
};
const routes = Object.entries(doc.paths).map(([template, ops]) => ({
  template,
  regex: new RegExp('^' + template.replace(/\{[^}]+\}/g, '[^/]+') + '$'),
  ops,
}));
const called = new Set();
function responseSpec(path, method, status) {
  const route = routes.find((r) => r.regex.test(path));
  assert.ok(route, `${method} ${path}: no path of the document matches`);
  const op = route.ops[method.toLowerCase()];
  // A method a path does not have: its 405 is the common error.
  if (!op && status === 405) return doc.components.responses.E405;
  assert.ok(op, `${method} ${path}: the document has no ${method} for ${route.template}`);
  called.add(`${method} ${route.template}`);
  let spec = op.responses[String(status)];
  assert.ok(spec, `${method} ${path}: status ${status} is not documented for ${route.template}`);
  if (spec.$ref) spec = spec.$ref.split('/').slice(1).reduce((n, k) => n[k], doc);
  return spec;
}

// 3. A real server.
const dir = mkdtempSync(join(tmpdir(), 'warden-openapi-'));
const children = [];
const cleanup = () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
};
process.on('exit', cleanup);

async function onBackend(name, db) {
  const warden = (...args) =>
    execFileSync(WARDEN, ['--db', db, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const admin = JSON.parse(warden('--json', 'tokens', 'create', 'admin', '--scope', 'admin')).token;
  const reader = JSON.parse(warden('--json', 'tokens', 'create', 'reader', '--scope', 'read')).token;

  const server = spawn(WARDEN, ['--db', db, 'serve', '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(server);
  const port = await new Promise((resolve, reject) => {
    let err = '';
    server.stderr.on('data', (d) => {
      err += d;
      const m = err.match(/serving on 127\.0\.0\.1:(\d+)/);
      if (m) resolve(Number(m[1]));
    });
    server.on('exit', (code) => reject(new Error(`warden serve exited ${code}: ${err}`)));
    setTimeout(() => reject(new Error('warden serve did not start: ' + err)), 30000);
  });
  const worker = spawn(WARDEN, ['--db', db, 'worker', '--allow-cmd', '--name', 'w1', '--concurrency', '2',
    '--heartbeat', '100ms', '--lease', '1s'], { stdio: 'ignore' });
  children.push(worker);

  const base = `http://127.0.0.1:${port}`;
  let checked = 0;
  async function call(method, path, { token = admin, body, expect }) {
    const headers = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(base + path, {
      method, headers, body: body === undefined ? undefined : (typeof body === 'string' ? body : JSON.stringify(body)),
    });
    const text = await res.text();
    const where = `${name}: ${method} ${path} -> ${res.status}`;
    if (expect !== undefined) assert.equal(res.status, expect, `${where}: ${text}`);
    const spec = responseSpec(path.split('?')[0], method, res.status);
    const type = (res.headers.get('content-type') || '').split(';')[0];
    const media = spec.content && spec.content[type];
    assert.ok(media, `${where}: content type ${type} is not documented (${Object.keys(spec.content || {})})`);
    if (type === 'application/json') {
      const data = JSON.parse(text);
      const validate = ajv.compile(rewrite(media.schema));
      assert.ok(validate(data), `${where}: ${ajv.errorsText(validate.errors)}\n${text.slice(0, 600)}`);
      checked++;
      return data;
    }
    return text;
  }

  // GET /v1/events: a stream that stays open. Its first event comes at
  // once; an enqueue must bring the next within a few looks (250 ms each).
  async function events() {
    const abort = new AbortController();
    const res = await fetch(base + '/v1/events', { headers: { authorization: `Bearer ${reader}` }, signal: abort.signal });
    const spec = responseSpec('/v1/events', 'GET', res.status);
    assert.equal(res.status, 200);
    assert.ok(spec.content[res.headers.get('content-type')], `${name}: events content type ${res.headers.get('content-type')}`);
    const validate = ajv.compile(rewrite({ $ref: '#/components/schemas/ChangeEvent' }));
    const reader_ = res.body.getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    let pending = null;
    const nextChange = async (ms) => {
      const deadline = Date.now() + ms;
      while (Date.now() < deadline) {
        const end = buffered.indexOf('\n\n');
        if (end >= 0) {
          const block = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const data = block.split('\n').find((l) => l.startsWith('data: '));
          if (!block.split('\n').includes('event: change') || !data) continue;  // a ping
          const parsed = JSON.parse(data.slice(6));
          assert.ok(validate(parsed), `${name}: event ${data}: ${ajv.errorsText(validate.errors)}`);
          checked++;
          return parsed;
        }
        // A read that outlasts the wait is kept for the next call.
        pending ??= reader_.read();
        let timer;
        const got = await Promise.race([pending,
          new Promise((r) => { timer = setTimeout(() => r(null), Math.max(1, deadline - Date.now())); })]);
        clearTimeout(timer);
        if (got === null) break;
        pending = null;
        if (got.done) break;
        buffered += decoder.decode(got.value, { stream: true });
      }
      return null;
    };
    const hello = await nextChange(5000);
    assert.ok(hello, `${name}: no first event`);
    // The first look after a listener arrives may report a change too.
    let seen = hello.version;
    for (let e; (e = await nextChange(600));) seen = e.version;
    warden('add', '--cmd', 'true', '--queue', 'events');
    const after = await nextChange(5000);
    assert.ok(after && after.version > seen, `${name}: an enqueue brought no change event`);
    abort.abort();
  }

  // Jobs in several states, a finished attempt with an error among them.
  const dead = JSON.parse(warden('--json', 'add', '--cmd', 'echo oops >&2; exit 3', '--max-attempts', '1')).id;
  const keyed = JSON.parse(warden('--json', 'add', '--cmd', 'sleep 30', '--concurrency-key', 'k')).id;
  for (let i = 0; i < 100 && JSON.parse(warden('--json', 'jobs', 'show', String(dead))).state !== 'dead'; i++) {
    await new Promise((r) => setTimeout(r, 100));
  }

  await call('GET', '/healthz', { token: null, expect: 200 });
  await call('GET', '/readyz', { token: null, expect: 200 });
  const served = await call('GET', '/openapi.json', { token: null, expect: 200 });
  // The document in the tree, but for its server: the one asked (its
  // scheme and the request's Host).
  assert.deepEqual(served.servers, [{ url: base }], 'servers names the server asked');
  assert.deepEqual({ ...served, servers: doc.servers }, doc,
    'the server serves the document in the tree');
  assert.match(await call('GET', '/metrics', { expect: 200 }), /warden_jobs\{/);
  await call('GET', '/metrics', { token: null, expect: 401 });

  await call('GET', '/v1/queues', { expect: 200 });
  await call('POST', '/v1/queues/mail/pause', { expect: 404 });
  await call('POST', '/v1/queues/mail/pause', { body: { create: 'yes' }, expect: 400 });
  await call('POST', '/v1/queues/mail/pause', { body: { create: true }, expect: 200 });
  await call('POST', '/v1/queues/mail/pause', { token: reader, expect: 403 });
  await call('POST', '/v1/queues/mail/resume', { expect: 200 });
  await call('POST', '/v1/queues/a%2Cb/pause', { expect: 400 });
  await call('GET', '/v1/queues/mail/limits', { expect: 200 });
  const limited = await call('PUT', '/v1/queues/mail/limits', { body: { concurrency: 2, rate: '10/1s' }, expect: 200 });
  assert.deepEqual(limited.limits, { concurrency: 2, rate: '10/1s' });
  await call('GET', '/v1/queues/mail/limits', { token: reader, expect: 200 });
  await call('GET', '/v1/queues', { expect: 200 });
  await call('PUT', '/v1/queues/mail/limits', { body: { rate: '10 per second' }, expect: 400 });
  await call('PUT', '/v1/queues/mail/limits', { body: { concurrency: -1 }, expect: 400 });
  await call('PUT', '/v1/queues/mail/limits', { body: { concurrency: 2 }, token: reader, expect: 403 });
  await call('DELETE', '/v1/queues/mail/limits', { expect: 200 });
  await call('POST', '/v1/queues/mail/limits', { expect: 405 });

  const one = await call('POST', '/v1/jobs', { body: { task: 'email', payload: { to: 'x' }, delay: '1h', unique_key: 'u' }, expect: 201 });
  const same = await call('POST', '/v1/jobs', { body: { task: 'email', unique_key: 'u' }, expect: 200 });
  assert.equal(same.id, one.id, 'the job the unique key holds');
  await call('POST', '/v1/jobs?require_worker=true', { body: { task: 'email' }, expect: 409 });
  await call('POST', '/v1/jobs', { body: { task: 'email', bogus: 1 }, expect: 400 });
  await call('POST', '/v1/jobs', { body: '{"task":', expect: 400 });
  await call('POST', '/v1/jobs', { body: { cmd: 'true' }, expect: 403 });
  const batch = await call('POST', '/v1/jobs/batch', { body: { jobs: [{ task: 'a' }, { task: 'b', delay: '2h' }] }, expect: 201 });
  await call('POST', '/v1/jobs/batch', { body: { jobs: [{ task: '' }] }, expect: 400 });
  await call('GET', '/v1/jobs', { expect: 200 });
  await call('GET', '/v1/jobs?state=dead,scheduled&queue=default&limit=5', { expect: 200 });
  await call('GET', '/v1/jobs?limit=0', { expect: 400 });
  await call('GET', '/v1/jobs', { token: null, expect: 401 });
  await call('GET', `/v1/jobs/${dead}`, { expect: 200 });
  await call('GET', `/v1/jobs/${keyed}`, { expect: 200 });
  await call('GET', '/v1/jobs/424242', { expect: 404 });
  await call('GET', '/v1/jobs/abc', { expect: 400 });
  await call('GET', `/v1/jobs/${one.id}/why`, { expect: 200 });
  await call('GET', `/v1/jobs/${dead}/why`, { expect: 200 });
  const story = await call('GET', `/v1/jobs/${dead}/timeline`, { expect: 200 });
  assert.deepEqual(story.events.map((e) => e.kind), ['enqueued', 'claimed', 'failed', 'finished'],
    JSON.stringify(story.events));
  await call('GET', `/v1/jobs/${keyed}/timeline`, { expect: 200 });
  await call('GET', '/v1/jobs/424242/timeline', { expect: 404 });
  await call('POST', `/v1/jobs/${dead}/retry`, { expect: 200 });
  await call('POST', `/v1/jobs/${keyed}/retry`, { expect: 409 });
  await call('POST', `/v1/jobs/${one.id}/retry`, { expect: 409 });  // scheduled: run-now is its word
  await call('POST', `/v1/jobs/${batch.jobs[1].id}/run-now`, { expect: 200 });
  await call('POST', `/v1/jobs/${batch.jobs[1].id}/run-now`, { expect: 409 });  // due already
  await call('POST', '/v1/jobs/424242/run-now', { expect: 404 });
  await call('POST', `/v1/jobs/${one.id}/cancel`, { expect: 200 });
  await call('POST', `/v1/jobs/${one.id}/cancel`, { expect: 409 });
  await call('POST', `/v1/jobs/${keyed}/cancel`, { expect: 200 });
  await call('DELETE', `/v1/jobs/${keyed}/cancel`, { expect: 405 });

  // Filters, keyset pages, delete and bulk operations.
  const first = await call('GET', '/v1/jobs?limit=1', { expect: 200 });
  assert.ok(first.next_cursor, 'more than one job: a next page');
  const filters = 'q=oops&unique_key=u&concurrency_key=k&task=email&created_after=2000-01-01T00:00:00Z' +
    '&created_before=2999-01-01T00:00:00Z&finished_after=2000-01-01T00:00:00Z&finished_before=2999-01-01T00:00:00Z';
  await call('GET', `/v1/jobs?limit=1&cursor=${first.next_cursor}&${filters}`, { expect: 200 });
  await call('GET', '/v1/jobs?cursor=bogus', { expect: 400 });
  await call('GET', '/v1/jobs?created_after=yesterday', { expect: 400 });
  await call('DELETE', `/v1/jobs/${batch.jobs[1].id}`, { expect: 409 });  // scheduled: not finished
  await call('DELETE', `/v1/jobs/${one.id}`, { token: reader, expect: 403 });
  await call('DELETE', `/v1/jobs/${one.id}`, { expect: 200 });
  await call('DELETE', `/v1/jobs/${one.id}`, { expect: 404 });
  const dry = await call('POST', '/v1/jobs/bulk', { body: { action: 'retry', filter: { state: ['dead', 'cancelled'] }, dry_run: true }, expect: 200 });
  assert.equal(typeof dry.count, 'number');
  const op = await call('POST', '/v1/jobs/bulk', { body: { action: 'cancel', filter: { task: 'a' } }, expect: 202 });
  await call('POST', '/v1/jobs/bulk', { body: { action: 'cancel', filter: { task: 'a' } }, token: reader, expect: 403 });
  await call('POST', '/v1/jobs/bulk', { body: { action: 'retry', filter: { state: 'running' } }, expect: 400 });
  await call('POST', '/v1/jobs/bulk', { body: { action: 'nuke' }, expect: 400 });
  let progress = op;
  for (let i = 0; i < 100 && progress.state !== 'done'; i++) {
    await new Promise((r) => setTimeout(r, 100));
    progress = await call('GET', `/v1/jobs/bulk/${op.id}`, { expect: 200 });
  }
  assert.equal(progress.state, 'done', JSON.stringify(progress));
  assert.equal(progress.done, 1);
  await call('GET', '/v1/jobs/bulk/424242', { expect: 404 });
  await call('GET', '/v1/jobs/bulk?limit=5', { expect: 200 });
  await call('GET', '/v1/jobs/bulk?limit=x', { expect: 400 });

  await call('GET', '/v1/workers', { expect: 200 });
  await call('GET', '/v1/workers?all=true', { expect: 200 });
  await call('GET', '/v1/workers?all=maybe', { expect: 400 });
  await call('POST', '/v1/workers/no-such-worker/release', { expect: 404 });
  await call('POST', '/v1/workers/w1/release', { expect: 409 });  // its process runs here

  // Nodes: w1's host is listed unregistered; the registry over HTTP.
  const before = await call('GET', '/v1/nodes', { token: reader, expect: 200 });
  assert.ok(before.nodes.some((n) => !n.registered && n.live_workers === 1), JSON.stringify(before));
  await call('PUT', '/v1/nodes/web-1', { body: { capacity: 4 }, expect: 200 });
  await call('PUT', '/v1/nodes/web-1', { expect: 200 });
  await call('PUT', '/v1/nodes/web-1', { body: { capacity: 0 }, expect: 400 });
  await call('PUT', '/v1/nodes/web-1', { body: '{"capacity":', expect: 400 });
  await call('PUT', '/v1/nodes/web-1', { body: { capacity: 4 }, token: reader, expect: 403 });
  await call('GET', '/v1/nodes/web-1', { expect: 405 });
  await call('POST', '/v1/nodes/web-1/disable', { expect: 200 });
  await call('POST', '/v1/nodes/no-such-node/disable', { expect: 404 });
  await call('POST', '/v1/nodes/web-1/enable', { expect: 200 });
  await call('POST', '/v1/nodes/web-1/enable', { token: reader, expect: 403 });
  const dryNodes = await call('POST', '/v1/nodes/sync', { body: { nodes: ['web-1', { name: 'web-2', capacity: 2 }], dry_run: true }, expect: 200 });
  assert.deepEqual(dryNodes.added, ['web-2']);
  await call('POST', '/v1/nodes/sync', { body: { nodes: [] }, expect: 400 });
  await call('POST', '/v1/nodes/sync', { body: { nodes: ['web-1'] }, token: reader, expect: 403 });
  await call('POST', '/v1/nodes/sync', { body: { nodes: ['web-1', { name: 'web-2', capacity: 2 }] }, expect: 200 });
  const after = await call('GET', '/v1/nodes', { expect: 200 });
  assert.deepEqual(after.nodes.filter((n) => n.registered).map((n) => [n.name, n.capacity]), [['web-1', null], ['web-2', 2]]);
  await call('DELETE', '/v1/nodes/web-2?force=false', { expect: 200 });
  await call('DELETE', '/v1/nodes/no-such-node', { expect: 404 });
  await call('DELETE', '/v1/nodes/web-1?force=maybe', { expect: 400 });
  await call('GET', '/v1/stats', { expect: 200 });
  const history = await call('GET', '/v1/stats/history', { token: reader, expect: 200 });
  assert.ok(history.samples.length >= 1, 'the stats just read were kept');
  await call('GET', '/v1/stats/history', { token: null, expect: 401 });
  const me = await call('GET', '/v1/whoami', { token: reader, expect: 200 });
  assert.deepEqual(me, { actor: 'token:reader', scope: 'read' });
  await call('GET', '/v1/whoami', { token: null, expect: 401 });
  await events();
  await call('GET', '/v1/events', { token: null, expect: 401 });
  await call('GET', '/v1/events?x=1', { expect: 400 });
  await call('GET', '/v1/audit?limit=10', { expect: 200 });
  await call('GET', '/v1/audit?before=x', { expect: 400 });

  await call('GET', '/v1/tokens', { expect: 200 });
  await call('GET', '/v1/tokens', { token: reader, expect: 403 });
  await call('POST', '/v1/tokens', { body: { name: 'ci', scope: 'enqueue' }, expect: 201 });
  await call('POST', '/v1/tokens', { body: { name: 'ci' }, expect: 409 });
  await call('POST', '/v1/tokens', { body: { scope: 'read' }, expect: 400 });
  await call('DELETE', '/v1/tokens/ci', { expect: 200 });
  await call('DELETE', '/v1/tokens/ci', { expect: 404 });

  server.kill('SIGTERM');
  worker.kill('SIGTERM');
  console.log(`${name}: ${checked} JSON responses valid against the document`);
}

await onBackend('sqlite', join(dir, 'api.db'));
const pg = process.env.WARDEN_TEST_PG_URL;
if (pg) {
  const name = `openapi_${process.pid}`;
  execFileSync('psql', [pg, '-qc', `CREATE DATABASE ${name}`]);
  try {
    await onBackend('postgres', pg.replace(/\/[^/?]*(\?|$)/, `/${name}$1`));
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 500));
    execFileSync('psql', [pg, '-qc', `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`]);
  }
} else if (process.env.CI === 'true') {
  throw new Error('CI=true and no WARDEN_TEST_PG_URL: the PostgreSQL half cannot run');
}

// Every operation of the document was called.
const documented = routes.flatMap((r) => Object.keys(r.ops).map((m) => `${m.toUpperCase()} ${r.template}`));
const missed = documented.filter((op) => !called.has(op));
assert.deepEqual(missed, [], 'operations of the document no request called');
console.log(`openapi: ${documented.length} operations, each called; the document is valid OpenAPI 3.1`);
