// The dashboard's first load, timed in a real headless Chromium: for each
// run a new browser context (no cache, no session), from navigation to the
// overview drawn with its numbers (job counts, queues, live workers: the
// files, then GET /v1/queues, /v1/stats and /v1/workers). bench/http_bench.py
// runs it against a `warden serve --no-auth` on a store of N jobs.
//
//   node bench/dashboard_load.mjs BASE_URL RUNS EXPECTED_JOBS
// prints {"loads_ms": [...]} on stdout; exits 1 when a load fails or the
// overview's tiles do not add up to EXPECTED_JOBS.
import path from 'node:path';
import {createRequire} from 'node:module';
import {fileURLToPath} from 'node:url';

// playwright-core is installed once, for the dashboard's test (tests/web).
const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '..', 'tests', 'web', 'package.json'));
const {chromium} = require('playwright-core');

const [base, runsArg, expectedArg] = process.argv.slice(2);
const runs = Number(runsArg);
const expected = Number(expectedArg);
if (!base || !(runs > 0) || !(expected >= 0)) {
  console.error('usage: node bench/dashboard_load.mjs BASE_URL RUNS EXPECTED_JOBS');
  process.exit(2);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true});
const loads = [];
try {
  for (let i = 0; i < runs; i++) {
    const context = await browser.newContext({viewport: {width: 1400, height: 1000}});
    const page = await context.newPage();
    const t0 = performance.now();
    await page.goto(`${base}/`);
    // Drawn: every state's tile, the queue table and the workers' table.
    await page.locator('#job-counts .tile[data-state=dead] .count').waitFor({timeout: 60000});
    await page.locator('#overview-queues table').waitFor({timeout: 60000});
    await page.locator('#live-workers').waitFor({timeout: 60000});
    const elapsed = performance.now() - t0;
    const counts = await page.locator('#job-counts .tile .count').allTextContents();
    const total = counts.reduce((sum, c) => sum + Number(c), 0);
    if (total !== expected) {
      throw new Error(`the overview's tiles add up to ${total} jobs, not ${expected}`);
    }
    if (i > 0) loads.push(elapsed);  // the first starts the browser's own caches
    await context.close();
  }
} catch (e) {
  console.error(`dashboard_load: ${e.message}`);
  await browser.close();
  process.exit(1);
}
await browser.close();
console.log(JSON.stringify({loads_ms: loads}));
