// pg-boss's adapter for run.mjs. Settings, as read in node_modules/pg-boss
// (12.35.0):
// - defaults: work() fetches batchSize 1 with localConcurrency 1 and polls
//   every pollingIntervalSeconds 2 (dist/manager.js work(); dist/attorney.js
//   applyPollingInterval); LISTEN/NOTIFY is off (useListenNotify false,
//   queue notify false: dist/types.d.ts). A job expires after expireInSeconds
//   900 (dist/plans.js QUEUE_DEFAULTS), checked by the supervisor every
//   superviseIntervalSeconds 60 (dist/attorney.js); heartbeats are off.
//   retryLimit 2, retryDelay 0.
// - tuned: LISTEN/NOTIFY on (useListenNotify, queue notify), batchSize 100,
//   localConcurrency 4, burstWhenBatchFull (fetch again at once while batches
//   come back full), pollingIntervalSeconds 0.5 (the minimum,
//   POLICY.MIN_POLLING_INTERVAL_MS).
// - aggressive (rescue): heartbeatSeconds 10 (the minimum, attorney.js
//   validateHeartbeatConfig; refreshed every 5 s), superviseIntervalSeconds 1
//   and monitorIntervalSeconds 1 (the minimums; dist/boss.js #monitor runs
//   the expiry and heartbeat checks of a queue only when its monitor time is
//   older than monitorIntervalSeconds), pollingIntervalSeconds 0.5 (without
//   LISTEN/NOTIFY: a job failed into `retry` sends no NOTIFY, and with notify
//   on, workers poll only every notifyPollingIntervalSeconds, 30 s). A
//   smaller expireInSeconds would also kill the 60 s job in normal runs.
import { PgBoss } from 'pg-boss';
import pg from 'pg';

const QUEUE = 'noop';
const RESCUE = 'rescue';

const SETTINGS = {
  default: { boss: {}, queue: {}, work: {} },
  tuned: {
    boss: { useListenNotify: true },
    queue: { notify: true },
    work: { batchSize: 100, localConcurrency: 4, burstWhenBatchFull: true, pollingIntervalSeconds: 0.5 },
  },
  aggressive: {
    boss: { superviseIntervalSeconds: 1, monitorIntervalSeconds: 1 },
    queue: { heartbeatSeconds: 10 },
    work: { pollingIntervalSeconds: 0.5 },
  },
};

function settings(variant) {
  const s = SETTINGS[variant];
  if (!s) throw new Error(`pg-boss has no variant '${variant}'`);
  return s;
}

async function boss(a, variant, extra = {}) {
  const b = new PgBoss({ connectionString: a.pg, ...settings(variant).boss, ...extra });
  b.on('error', (e) => console.error('pg-boss:', e.message));
  await b.start();
  return b;
}

async function countState(url, state) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const r = await c.query(
    'SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND ($2::text IS NULL OR state::text = $2)',
    [QUEUE, state],
  );
  await c.end();
  return r.rows[0].n;
}

export default {
  describe(variant) {
    return {
      default: 'defaults: batchSize 1, localConcurrency 1, polling 2 s, no LISTEN/NOTIFY',
      tuned: 'LISTEN/NOTIFY, batchSize 100, localConcurrency 4, burstWhenBatchFull, polling 0.5 s',
      aggressive: 'heartbeatSeconds 10, supervise and monitor intervals 1 s (all minimums), polling 0.5 s',
    }[variant];
  },

  async reset(a) {
    const c = new pg.Client({ connectionString: a.pg });
    await c.connect();
    await c.query('SET client_min_messages = warning; DROP SCHEMA IF EXISTS pgboss CASCADE');
    await c.end();
    // Creates the schema and the queues, with the variant's queue options.
    const b = await boss(a, a.variant, { supervise: false, schedule: false });
    await b.createQueue(QUEUE, settings(a.variant).queue);
    await b.createQueue(RESCUE, settings(a.variant).queue);
    await b.stop({ graceful: false });
  },

  async producer(a) {
    const b = await boss(a, a.variant, { supervise: false, schedule: false });
    return {
      async enqueueMany(k) {
        const jobs = [];
        for (let i = 0; i < k; i++) jobs.push({ data: {} });
        await b.insert(QUEUE, jobs);
      },
      enqueueOne: (data) => b.send(QUEUE, data),
      enqueueRescue: () => b.send(RESCUE, {}),
      countQueued: () => countState(a.pg, 'created'),
      countCompleted: () => countState(a.pg, 'completed'),
      close: () => b.stop({ graceful: false }),
    };
  },

  async startWorker(a, variant, onJobs) {
    const b = await boss(a, variant);
    await b.work(QUEUE, settings(variant).work, async (jobs) => onJobs(jobs.map((j) => j.data)));
    return { stop: () => b.stop({ graceful: true }) };
  },

  async startRescueWorker(a, variant, onStart) {
    const b = await boss(a, variant);
    await b.work(RESCUE, settings(variant).work, async (jobs) => {
      await Promise.all(jobs.map((j) => onStart(j.id)));
    });
  },
};
