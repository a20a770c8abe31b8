// The peers' side of the benchmark scenarios: the same definitions as
// warden's (bench/warden_bench.cc), on one peer through its adapter
// (graphile.mjs, pgboss.mjs, bullmq.mjs). One run per invocation; each
// prints one JSON line on stdout (bench/aggregate.py reads them).
//
//   node run.mjs SYSTEM bulk       --jobs N [--batch 1000]
//   node run.mjs SYSTEM throughput --jobs N --variant default|tuned [--max-seconds S]
//   node run.mjs SYSTEM backlog    --backlog B --measure M --variant tuned
//   node run.mjs SYSTEM latency    --jobs N [--interval-ms 10] --variant default|tuned
//   common: --run I, and the store: --pg URL (graphile, pgboss) or --redis URL (bullmq)
//
// Workers are separate processes (`node run.mjs SYSTEM worker ...`) so their
// peak RSS is their own; the rescue scenario (bench/rescue.py) starts
// `node run.mjs SYSTEM rescue-worker --variant default|aggressive --log FILE`
// twice and enqueues with `node run.mjs SYSTEM rescue-enqueue`.
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const ADAPTERS = {
  'graphile-worker': './graphile.mjs',
  'pg-boss': './pgboss.mjs',
  bullmq: './bullmq.mjs',
};

function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    if (!argv[i].startsWith('--')) continue;
    const key = argv[i].slice(2);
    if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) out[key] = argv[++i];
    else out[key] = '1';
  }
  return out;
}

// Microseconds since the epoch, sub-millisecond: compared with the
// enqueuing process's clock on the same host.
const wallMicros = () => Math.round((performance.timeOrigin + performance.now()) * 1000);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const emit = (line) => process.stdout.write(JSON.stringify(line) + '\n');
const num = (v, d) => (v === undefined ? d : Number(v));

function spawnSelf(system, args) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), system, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const queue = [];
  const waiters = [];
  lines.on('line', (l) => (waiters.length ? waiters.shift()(l) : queue.push(l)));
  lines.on('close', () => waiters.splice(0).forEach((w) => w(null)));
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    nextLine: () => (queue.length ? Promise.resolve(queue.shift()) : new Promise((r) => waiters.push(r))),
    exited,
  };
}

async function runWorker(system, args, extra) {
  const w = spawnSelf(system, ['worker', ...args, ...extra]);
  if ((await w.nextLine()) !== 'ready') throw new Error('worker did not start');
  return w;
}

async function finishWorker(w) {
  const line = await w.nextLine();
  const code = await w.exited;
  if (code !== 0 || !line) throw new Error(`worker exited with ${code}`);
  return JSON.parse(line);
}

async function enqueueMany(producer, n, batch) {
  const t0 = performance.now();
  for (let done = 0; done < n; done += batch) await producer.enqueueMany(Math.min(batch, n - done));
  return n / ((performance.now() - t0) / 1000);
}

// As warden_bench's SettleStore (bench/bench_util.h): the writes an
// enqueue left for later are not charged to the measurement after it. On
// PostgreSQL a CHECKPOINT; Redis has nothing to write back on request.
async function settle(a) {
  if (!a.pg) return;
  const c = new pg.Client({ connectionString: a.pg });
  await c.connect();
  try {
    await c.query('CHECKPOINT');
  } finally {
    await c.end();
  }
}

const base = (a, system, scenario, variant) => ({
  scenario, system, variant, run: num(a.run, 1),
});

// Shares the worker flags with the child and reports what the settings are.
function workerFlags(a) {
  const flags = [];
  for (const k of ['pg', 'redis', 'variant', 'max-seconds']) if (a[k] !== undefined) flags.push(`--${k}`, a[k]);
  return flags;
}

// A time-bounded run says so: its numbers cover only the jobs that ran.
function describe(ad, a, handled, n) {
  const text = ad.describe(a.variant);
  if (handled >= n) return text;
  return `${text}; stopped after ${a['max-seconds']} s with ${handled} of ${n} jobs run`;
}

const scenarios = {
  async bulk(ad, a, system) {
    const n = num(a.jobs, 50000);
    const batch = num(a.batch, 1000);
    await ad.reset(a);
    const p = await ad.producer(a);
    const rate = await enqueueMany(p, n, batch);
    const queued = await p.countQueued();
    await p.close();
    if (queued !== n) throw new Error(`bulk: ${queued} of ${n} jobs queued`);
    emit({ ...base(a, system, 'bulk', `batch ${batch}`), jobs: n, jobs_per_s: rate });
  },

  async throughput(ad, a, system) {
    const n = num(a.jobs, 50000);
    await ad.reset(a);
    const p = await ad.producer(a);
    await enqueueMany(p, n, 1000);
    const w = await runWorker(system, workerFlags(a), ['--stop-after', String(n)]);
    const r = await finishWorker(w);
    const done = await p.countCompleted();
    await p.close();
    // A time-bounded run (--max-seconds) may stop early; others must finish.
    if (done < r.handled || (!a['max-seconds'] && done !== n)) {
      throw new Error(`throughput: ${done} recorded completed, ${r.handled} handled, of ${n}`);
    }
    emit({
      ...base(a, system, 'throughput', a.variant),
      settings: describe(ad, a, r.handled, n), jobs: n, handled: r.handled,
      jobs_per_s: r.handled / r.seconds, rss_mib: r.rss_mib,
    });
  },

  async backlog(ad, a, system) {
    const backlog = num(a.backlog, 10000);
    const measure = Math.min(backlog, num(a.measure, 10000));
    await ad.reset(a);
    const p = await ad.producer(a);
    const enqueueRate = await enqueueMany(p, backlog, 5000);
    await p.close();
    await settle(a);
    const w = await runWorker(system, workerFlags(a), ['--stop-after', String(measure)]);
    const r = await finishWorker(w);
    emit({
      ...base(a, system, 'backlog', String(backlog)),
      settings: ad.describe(a.variant), backlog, jobs: r.handled,
      jobs_per_s: r.handled / r.seconds, enqueue_jobs_per_s: enqueueRate,
    });
  },

  async latency(ad, a, system) {
    const n = num(a.jobs, 1000);
    const interval = num(a['interval-ms'], 10);
    await ad.reset(a);
    const p = await ad.producer(a);
    const w = await runWorker(system, workerFlags(a), ['--stop-after', String(n), '--latency']);
    await sleep(1000); // an idle worker, as the scenario says
    let next = performance.now();
    for (let i = 0; i < n; i++) {
      const wait = next - performance.now();
      if (wait > 0) await sleep(wait);
      next += interval;
      await p.enqueueOne({ t_us: wallMicros() });
    }
    const r = await finishWorker(w);
    await p.close();
    emit({
      ...base(a, system, 'latency', a.variant),
      settings: describe(ad, a, r.handled, n), jobs: n, handled: r.handled, samples_ms: r.samples_ms,
    });
  },

  // The worker process of the scenarios above.
  async worker(ad, a) {
    const stopAfter = num(a['stop-after'], Infinity);
    const latency = a.latency !== undefined;
    const maxSeconds = num(a['max-seconds'], Infinity);
    const samples = [];
    let handled = 0;
    let tFirst = null;
    let done;
    const finished = new Promise((r) => (done = r));
    const onJobs = (payloads) => {
      const now = wallMicros();
      if (tFirst === null) {
        tFirst = performance.now();
        if (Number.isFinite(maxSeconds)) setTimeout(done, maxSeconds * 1000);
      }
      if (latency) for (const p of payloads) samples.push((now - p.t_us) / 1000);
      handled += payloads.length;
      if (handled >= stopAfter) done();
    };
    const worker = await ad.startWorker(a, a.variant, onJobs);
    process.stdout.write('ready\n');
    await finished;
    await worker.stop();
    const out = { handled, seconds: (performance.now() - tFirst) / 1000,
      rss_mib: process.resourceUsage().maxRSS / 1024 };
    if (latency) out.samples_ms = samples;
    process.stdout.write(JSON.stringify(out) + '\n');
  },

  // A worker whose one job runs 60 s; it logs each start to --log.
  async 'rescue-worker'(ad, a) {
    const log = a.log;
    const onStart = (jobId) => {
      appendFileSync(log, `start ${wallMicros()} ${process.env.BENCH_WORKER} ${jobId}\n`);
      return sleep(num(a['job-seconds'], 60) * 1000);
    };
    await ad.startRescueWorker(a, a.variant, onStart);
    appendFileSync(log, `ready ${wallMicros()} ${process.env.BENCH_WORKER}\n`);
    await new Promise(() => {}); // until killed
  },

  // After rescue-reset and once both workers run.
  async 'rescue-enqueue'(ad, a) {
    const p = await ad.producer(a);
    await p.enqueueRescue();
    await p.close();
  },

  async 'rescue-reset'(ad, a) {
    await ad.reset(a);
  },

  async settings(ad, a) {
    process.stdout.write(ad.describe(a.variant) + '\n');
  },
};

async function main() {
  const [system, scenario, ...rest] = process.argv.slice(2);
  const a = parseArgs(rest);
  if (!ADAPTERS[system] || !scenarios[scenario]) {
    console.error('usage: node run.mjs graphile-worker|pg-boss|bullmq SCENARIO [--options]');
    process.exit(2);
  }
  a.system = system;
  a.variant ??= 'default';
  const ad = (await import(ADAPTERS[system])).default;
  await scenarios[scenario](ad, a, system);
  // Peers may leave timers behind after a graceful stop; the result is out.
  if (scenario !== 'rescue-worker') process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
