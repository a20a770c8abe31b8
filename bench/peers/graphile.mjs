// graphile-worker's adapter for run.mjs. Settings, as read in
// node_modules/graphile-worker (0.18.0):
// - defaults (dist/config.js, makeWorkerPresetWorkerOptions): concurrentJobs
//   1, maxPoolSize 10, pollInterval 2000 ms (LISTEN/NOTIFY wakes workers for
//   new jobs), no local queue, no batched completion (dist/index.d.ts:
//   localQueue.size -1, completeJobBatchDelay -1).
// - tuned: the configuration of the docs' performance page
//   (worker.graphile.org/docs/performance): concurrentJobs 24, maxPoolSize 25,
//   localQueue.size 500, completeJobBatchDelay 0, failJobBatchDelay 0.
// - rescue: a crashed worker's jobs are freed by resetLockedAt
//   (dist/sql/resetLockedAt.js), which hard-codes `locked_at < now() -
//   interval '4 hours'`; minResetLockedInterval/maxResetLockedInterval
//   (8-10 min) only set how often it looks. No setting shortens the 4 h, so
//   there is no aggressive variant.
import { Logger, makeWorkerUtils, run, runMigrations } from 'graphile-worker';
import pg from 'pg';

const SETTINGS = {
  default: {},
  tuned: {
    concurrentJobs: 24,
    maxPoolSize: 25,
    localQueue: { size: 500 },
    completeJobBatchDelay: 0,
    failJobBatchDelay: 0,
  },
};

const quiet = new Logger(() => () => {});

function preset(a, variant) {
  const worker = SETTINGS[variant];
  if (!worker) throw new Error(`graphile-worker has no variant '${variant}'`);
  return { worker: { connectionString: a.pg, logger: quiet, ...worker } };
}

async function count(url) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const r = await c.query('SELECT count(*)::int AS n FROM graphile_worker._private_jobs');
  await c.end();
  return r.rows[0].n;
}

export default {
  describe(variant) {
    if (variant === 'default') return 'defaults: concurrency 1, no local queue, no batching';
    if (variant === 'tuned') {
      return 'docs performance preset: concurrency 24, pool 25, localQueue 500, completeJobBatchDelay 0';
    }
    return 'no setting shortens the 4 h lock timeout';
  },

  async reset(a) {
    const c = new pg.Client({ connectionString: a.pg });
    await c.connect();
    await c.query('SET client_min_messages = warning; DROP SCHEMA IF EXISTS graphile_worker CASCADE');
    await c.end();
    await runMigrations({ connectionString: a.pg, logger: quiet });
  },

  async producer(a) {
    const utils = await makeWorkerUtils({ connectionString: a.pg, logger: quiet });
    let enqueued = 0;
    return {
      async enqueueMany(k) {
        const specs = [];
        for (let i = 0; i < k; i++) specs.push({ identifier: 'noop', payload: {} });
        await utils.addJobs(specs);
        enqueued += k;
      },
      async enqueueOne(payload) {
        await utils.addJob('noop', payload);
        enqueued += 1;
      },
      async enqueueRescue() {
        await utils.addJob('rescue', {});
      },
      countQueued: () => count(a.pg),
      // Completed jobs are deleted: what is gone was completed.
      countCompleted: async () => enqueued - (await count(a.pg)),
      close: () => utils.release(),
    };
  },

  async startWorker(a, variant, onJobs) {
    const runner = await run({
      noHandleSignals: true,
      taskList: { noop: async (payload) => onJobs([payload]) },
      preset: preset(a, variant),
    });
    return { stop: () => runner.stop() };
  },

  async startRescueWorker(a, variant, onStart) {
    await run({
      noHandleSignals: true,
      taskList: { rescue: (_payload, helpers) => onStart(helpers.job.id) },
      preset: preset(a, variant),
    });
  },
};
