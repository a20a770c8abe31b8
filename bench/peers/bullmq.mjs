// BullMQ's adapter for run.mjs. Settings, as read in node_modules/bullmq
// (6.7.0, dist/esm/classes/worker.js, the Worker constructor's defaults):
// - defaults: concurrency 1, lockDuration 30000 ms (renewed every 15 s),
//   stalledInterval 30000 ms, maxStalledCount 1, drainDelay 5 s.
//   Completed jobs are kept (removeOnComplete unset), as warden keeps them.
// - tuned: concurrency 200 (the best of the reference measurements; the
//   docs, docs.bullmq.io/guide/workers/concurrency, leave it to the user).
// - aggressive (rescue): lockDuration 1000 ms and stalledInterval 1000 ms, so
//   a dead worker's lock lapses within 1 s and the stalled-job check of the
//   surviving worker runs every second.
import { Queue, Worker } from 'bullmq';
import IORedis from 'ioredis';

const QUEUE = 'noop';
const RESCUE = 'rescue';

const SETTINGS = {
  default: {},
  tuned: { concurrency: 200 },
  aggressive: { lockDuration: 1000, stalledInterval: 1000 },
};

function connection(a) {
  const u = new URL(a.redis);
  return { host: u.hostname, port: Number(u.port), maxRetriesPerRequest: null };
}

function settings(variant) {
  const s = SETTINGS[variant];
  if (!s) throw new Error(`bullmq has no variant '${variant}'`);
  return s;
}

export default {
  describe(variant) {
    return {
      default: 'defaults: concurrency 1, lockDuration 30 s, stalledInterval 30 s',
      tuned: 'concurrency 200',
      aggressive: 'lockDuration 1 s, stalledInterval 1 s',
    }[variant];
  },

  async reset(a) {
    const r = new IORedis(connection(a));
    await r.flushall();
    r.disconnect();
  },

  async producer(a) {
    const q = new Queue(QUEUE, { connection: connection(a) });
    const rescue = new Queue(RESCUE, { connection: connection(a) });
    return {
      async enqueueMany(k) {
        const jobs = [];
        for (let i = 0; i < k; i++) jobs.push({ name: 'noop', data: {} });
        await q.addBulk(jobs);
      },
      enqueueOne: (data) => q.add('noop', data),
      enqueueRescue: () => rescue.add('rescue', {}),
      countQueued: async () => (await q.getJobCounts('wait')).wait,
      countCompleted: async () => (await q.getJobCounts('completed')).completed,
      async close() {
        await q.close();
        await rescue.close();
      },
    };
  },

  async startWorker(a, variant, onJobs) {
    const w = new Worker(QUEUE, async (job) => onJobs([job.data]), {
      connection: connection(a), ...settings(variant),
    });
    w.on('error', (e) => console.error('bullmq:', e.message));
    await w.waitUntilReady();
    return { stop: () => w.close() };
  },

  async startRescueWorker(a, variant, onStart) {
    const w = new Worker(RESCUE, (job) => onStart(job.id), {
      connection: connection(a), ...settings(variant),
    });
    w.on('error', (e) => console.error('bullmq:', e.message));
    await w.waitUntilReady();
  },
};
