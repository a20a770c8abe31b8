#!/usr/bin/env python3
"""warden serve's HTTP benchmark (bench/README.md, "The HTTP API").

Run it through bench/http.sh, which builds, starts a throwaway PostgreSQL and
passes the paths and URLs here. Every measurement starts a fresh store and
its own `warden serve --listen 127.0.0.1:0 --no-auth`, and stops it with
SIGTERM; a serve that dies, or exits other than 0, fails the run.

Scenarios (each --runs times, backends alternating within a run):
  enqueue  single-job POST /v1/jobs on kept-alive connections (wrk, one
           thread, bench/http_enqueue.lua), per connection count: req/s,
           p50 / p99 latency; the store must then hold as many jobs as wrk
           counted answers (plus at most one in flight per connection)
  batch    POST /v1/jobs/batch of B jobs, one after another on one
           kept-alive connection, against `warden_bench bulk` (the
           library's Client::EnqueueMany) with the same B: jobs/s, ratio
  metrics  N jobs in the store (`warden_bench bulk`): GET /metrics
           p50 / p99, one scrape after another, and GET /v1/stats (the
           dashboard overview's poll) the same way; then a worker
           (`warden_bench worker`) for T s with and without a scraper
           at 1 Hz, the two orders alternating run by run: jobs/s, ratio;
           and (before the worker without the scraper) the dashboard's
           first load in headless Chromium, --dashboard-loads times, each
           in a new browser context (bench/dashboard_load.mjs)
  rss      serve's VmRSS once it answers, and VmHWM before it stops, per
           scenario (/proc/PID/status)

Exit status 1 if anything failed (non-2xx, a wrong count, a crash, a
timeout); never for a speed.
"""
import argparse
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time


class Failure(Exception):
    pass


def say(msg):
    print(f"bench-http: {msg}", file=sys.stderr, flush=True)


def ms(seconds):
    return seconds * 1000.0


def percentile(samples, p):
    """Nearest-rank percentile: the smallest sample with p% at or below it."""
    s = sorted(samples)
    return s[max(0, min(len(s) - 1, -(-len(s) * p // 100) - 1))]


def proc_status_mib(pid):
    """VmRSS and VmHWM of pid, MiB."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(rest.split()[0]) / 1024.0
    return out["VmRSS"], out["VmHWM"]


STARTED = []  # every Serve, so that none outlives a failed measurement


class Serve:
    """One `warden serve` on a free loopback port; its stderr goes to a log."""

    def __init__(self, args, db):
        self.log = open(args.log, "ab")
        self.proc = subprocess.Popen(
            [args.warden, "--db", db, "serve", "--listen", "127.0.0.1:0", "--no-auth"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.port = None
        ready = threading.Event()

        def pump():
            for line in self.proc.stderr:
                self.log.write(line)
                self.log.flush()
                m = re.search(rb"serving on 127\.0\.0\.1:(\d+)", line)
                if m and self.port is None:
                    self.port = int(m.group(1))
                    ready.set()
            ready.set()

        self.pump = threading.Thread(target=pump, daemon=True)
        self.pump.start()
        STARTED.append(self)
        ready.wait(60)
        if self.port is None:
            self.proc.kill()
            raise Failure(f"warden serve did not start on {db} (log: {args.log})")
        self.conn = self.connect()
        self.get("/readyz")
        self.idle_rss_mib = proc_status_mib(self.proc.pid)[0]

    def kill(self):
        """After a measurement failed half-way: SIGKILL, if it still runs."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def connect(self):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)

    def alive(self):
        if self.proc.poll() is not None:
            raise Failure(f"warden serve exited {self.proc.returncode} (log: {self.log.name})")

    def peak_rss_mib(self):
        self.alive()
        return proc_status_mib(self.proc.pid)[1]

    def stop(self):
        """SIGTERM; it must exit 0 within 30 s."""
        self.conn.close()
        self.alive()
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise Failure("warden serve did not exit within 30 s of SIGTERM")
        self.pump.join(5)
        if rc != 0:
            raise Failure(f"warden serve exited {rc} after SIGTERM (log: {self.log.name})")

    def get(self, path, conn=None):
        return request(conn or self.conn, "GET", path)

    def job_counts(self, conn=None):
        """Jobs by state, summed over queues, from /metrics' warden_jobs."""
        counts = {}
        for m in re.finditer(r'^warden_jobs\{queue="[^"]*",state="(\w+)"\} (\d+)$',
                             self.get("/metrics", conn), re.M):
            counts[m.group(1)] = counts.get(m.group(1), 0) + int(m.group(2))
        if not counts:
            raise Failure("/metrics has no warden_jobs series")
        return counts


def request(conn, method, path, body=None):
    headers = {"Content-Type": "application/json"} if body is not None else {}
    conn.request(method, path, body=body, headers=headers)
    resp = conn.getresponse()
    data = resp.read()
    if not 200 <= resp.status < 300:
        raise Failure(f"{method} {path}: {resp.status} {data[:200]!r}")
    return data.decode()


def run(cmd, timeout, what):
    """Runs cmd; its stdout. A non-zero exit or a timeout is a failure."""
    try:
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Failure(f"{what}: no end within {timeout} s")
    if p.returncode != 0:
        raise Failure(f"{what}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    return p.stdout


def json_line(text, what):
    for line in text.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    raise Failure(f"{what}: no JSON line in its output")


class Bench:
    def __init__(self, args):
        self.args = args
        self.results = open(args.results, "a")
        self.failures = []

    def record(self, backend, scenario, figure, value, run):
        line = {"backend": backend, "scenario": scenario, "figure": figure, "value": value,
                "run": run}
        self.results.write(json.dumps(line) + "\n")
        self.results.flush()

    def fresh(self, db, jobs=0, batch=5000):
        """Empties the store; with jobs, fills it through warden_bench bulk
        (then a PostgreSQL CHECKPOINT, so the insert's dirty pages are not
        written back during what is measured next). Returns its JSON line."""
        a = self.args
        if jobs == 0:
            run([a.bench, "reset", "--db", db], 120, "warden_bench reset")
            return None
        out = run([a.bench, "bulk", "--db", db, "--jobs", str(jobs), "--batch", str(batch)],
                  a.step_timeout, "warden_bench bulk")
        if db.startswith("postgres"):
            run(["psql", "-X", "-q", "-d", db, "-c", "CHECKPOINT"], 300, "CHECKPOINT")
        return json_line(out, "warden_bench bulk")

    # --- enqueue: single jobs, wrk -----------------------------------------
    def enqueue(self, backend, db, r):
        a = self.args
        peak = 0.0
        for c in a.connections:
            self.fresh(db)
            serve = Serve(a, db)
            self.record(backend, "rss", "idle", serve.idle_rss_mib, r)
            out = run(["wrk", "-t1", f"-c{c}", f"-d{a.duration}s", "--timeout", "10s",
                       "-s", a.lua, f"http://127.0.0.1:{serve.port}/v1/jobs"],
                      a.duration + 120, f"wrk -c{c}")
            w = json_line(out, "wrk")
            bad = {k: v for k, v in w["errors"].items() if v}
            if bad:
                raise Failure(f"wrk -c{c}: errors {bad} (status: answers of 400 and up)")
            jobs = sum(serve.job_counts().values())
            if not w["requests"] <= jobs <= w["requests"] + c:
                raise Failure(f"wrk -c{c}: {w['requests']} answers but {jobs} jobs in the store")
            peak = max(peak, serve.peak_rss_mib())
            serve.stop()
            rate = w["requests"] / (w["duration_us"] / 1e6)
            self.record(backend, "enqueue", f"{c} conn req/s", rate, r)
            self.record(backend, "enqueue", f"{c} conn p50 ms", w["latency_us"]["p50"] / 1e3, r)
            self.record(backend, "enqueue", f"{c} conn p99 ms", w["latency_us"]["p99"] / 1e3, r)
            say(f"  {backend} {c} conn: {rate:,.0f} req/s, p50 "
                f"{w['latency_us']['p50'] / 1e3:.2f} ms, p99 {w['latency_us']['p99'] / 1e3:.2f} ms")
        self.record(backend, "rss", "peak, single-job enqueue", peak, r)

    # --- batch: HTTP against the library ---------------------------------------
    def batch(self, backend, db, r):
        a = self.args
        self.fresh(db)
        serve = Serve(a, db)
        body = json.dumps({"jobs": [{"task": "noop"}] * a.batch})
        t0 = time.monotonic()
        for done in range(0, a.batch_jobs, a.batch):
            k = min(a.batch, a.batch_jobs - done)
            part = body if k == a.batch else json.dumps({"jobs": [{"task": "noop"}] * k})
            ids = request(serve.conn, "POST", "/v1/jobs/batch", part).count('"id"')
            if ids != k:
                raise Failure(f"POST /v1/jobs/batch of {k} jobs: {ids} ids back")
        http_rate = a.batch_jobs / (time.monotonic() - t0)
        available = serve.job_counts().get("available", 0)
        if available != a.batch_jobs:
            raise Failure(f"batch: {available} jobs available, {a.batch_jobs} sent")
        self.record(backend, "rss", "peak, batch enqueue", serve.peak_rss_mib(), r)
        serve.stop()
        lib = self.fresh(db, a.batch_jobs, a.batch)  # warden_bench bulk checks its count
        self.record(backend, "batch", "HTTP jobs/s", http_rate, r)
        self.record(backend, "batch", "library jobs/s", lib["jobs_per_s"], r)
        say(f"  {backend} batch {a.batch}: HTTP {http_rate:,.0f} jobs/s, "
            f"library {lib['jobs_per_s']:,.0f} jobs/s")

    # --- metrics: scrape time at N jobs, and what 1 Hz scraping costs a worker ----
    def metrics(self, backend, db, r, scraper):
        a = self.args
        self.fresh(db, a.metrics_jobs)
        serve = Serve(a, db)
        times = []
        for i in range(a.scrapes + 1):
            t0 = time.monotonic()
            counts = serve.job_counts()
            if i > 0:  # the first one warms up
                times.append(time.monotonic() - t0)
            if sum(counts.values()) != a.metrics_jobs:
                raise Failure(f"/metrics counts {sum(counts.values())} jobs, not {a.metrics_jobs}")
        self.record(backend, "metrics", "scrape p50 ms", ms(percentile(times, 50)), r)
        self.record(backend, "metrics", "scrape p99 ms", ms(percentile(times, 99)), r)
        # GET /v1/stats, which the dashboard's overview polls: its `unserved`
        # (no worker runs yet, so every job is in it) must add up to them all.
        stats_times = []
        for i in range(a.scrapes + 1):
            t0 = time.monotonic()
            stats = json.loads(serve.get("/v1/stats"))
            if i > 0:
                stats_times.append(time.monotonic() - t0)
            unserved = sum(g["jobs"] for g in stats["unserved"])
            if unserved != a.metrics_jobs:
                raise Failure(f"/v1/stats: unserved adds up to {unserved}, not {a.metrics_jobs}")
        self.record(backend, "metrics", "/v1/stats p50 ms", ms(percentile(stats_times, 50)), r)
        self.record(backend, "metrics", "/v1/stats p99 ms", ms(percentile(stats_times, 99)), r)
        if not scraper and a.dashboard_loads > 0:
            self.dashboard(backend, serve, r)

        stop = threading.Event()
        during = []
        errors = []

        def scrape_every_second():
            conn = serve.connect()
            due = time.monotonic()
            try:
                while not stop.wait(max(0.0, due - time.monotonic())):
                    t0 = time.monotonic()
                    serve.get("/metrics", conn)
                    during.append(time.monotonic() - t0)
                    due += 1.0
            except Exception as e:  # noqa: BLE001 - reported as the run's failure
                errors.append(e)
            conn.close()

        worker = subprocess.Popen(
            [a.bench, "worker", "--db", db, "--concurrency", str(a.worker_concurrency),
             "--stop-after", str(a.metrics_jobs), "--seconds", str(a.worker_seconds)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
        thread = threading.Thread(target=scrape_every_second) if scraper else None
        try:
            if thread:
                thread.start()
            out, _ = worker.communicate(timeout=a.worker_seconds + a.step_timeout)
        except subprocess.TimeoutExpired:
            worker.kill()
            raise Failure("warden_bench worker: no end in time")
        finally:
            stop.set()
            if thread:
                thread.join()
        if worker.returncode != 0:
            raise Failure(f"warden_bench worker exited {worker.returncode}")
        if errors:
            raise Failure(f"the 1 Hz scraper: {errors[0]}")
        w = json_line(out, "warden_bench worker")
        succeeded = serve.job_counts().get("succeeded", 0)
        if succeeded != w["handled"]:
            raise Failure(f"worker handled {w['handled']} jobs, the store has {succeeded} succeeded")
        self.record(backend, "rss", f"peak, /metrics at {a.metrics_jobs:,} jobs",
                    serve.peak_rss_mib(), r)
        serve.stop()
        rate = w["handled"] / w["seconds"]
        mode = "1 Hz scraper" if scraper else "no scraper"
        self.record(backend, "scrape-cost", f"worker jobs/s, {mode}", rate, r)
        if during:
            self.record(backend, "scrape-cost", "scrape p50 ms under the worker",
                        ms(statistics.median(during)), r)
        say(f"  {backend} {a.metrics_jobs:,} jobs: /v1/stats p50 "
            f"{ms(percentile(stats_times, 50)):.1f} ms")
        say(f"  {backend} {a.metrics_jobs:,} jobs: scrape p50 {ms(percentile(times, 50)):.1f} ms,"
            f" p99 {ms(percentile(times, 99)):.1f} ms; worker, {mode}: {rate:,.0f} jobs/s "
            f"({w['handled']:,} jobs, {len(during)} scrapes)")

    def dashboard(self, backend, serve, r):
        """The dashboard's first load in headless Chromium (bench/dashboard_load.mjs),
        with the N jobs of the metrics scenario in the store."""
        a = self.args
        out = run(["node", a.dashboard_script, f"http://127.0.0.1:{serve.port}",
                   str(a.dashboard_loads + 1), str(a.metrics_jobs)],
                  a.step_timeout, "bench/dashboard_load.mjs")
        loads = [x / 1000.0 for x in json_line(out, "bench/dashboard_load.mjs")["loads_ms"]]
        self.record(backend, "metrics", "dashboard first load, median ms",
                    ms(statistics.median(loads)), r)
        self.record(backend, "metrics", "dashboard first load, slowest ms", ms(max(loads)), r)
        say(f"  {backend} {a.metrics_jobs:,} jobs: dashboard first load median "
            f"{ms(statistics.median(loads)):.0f} ms, slowest {ms(max(loads)):.0f} ms")

    def attempt(self, label, fn, *args):
        try:
            fn(*args)
        except (Failure, OSError, http.client.HTTPException, json.JSONDecodeError) as e:
            say(f"FAILED: {label}: {e}")
            self.failures.append(f"{label}: {e}")
        finally:
            while STARTED:
                STARTED.pop().kill()

    def run_all(self):
        a = self.args
        for r in range(1, a.runs + 1):
            for backend, db in a.backends:
                if "enqueue" in a.only:
                    say(f"run {r}: {backend}: single-job enqueue")
                    self.attempt(f"enqueue {backend} run {r}", self.enqueue, backend, db, r)
                if "batch" in a.only:
                    say(f"run {r}: {backend}: batch enqueue")
                    self.attempt(f"batch {backend} run {r}", self.batch, backend, db, r)
                if "metrics" in a.only:
                    # Alternate which goes first, so a drift over the run falls on both.
                    for scraper in ([False, True] if r % 2 else [True, False]):
                        say(f"run {r}: {backend}: /metrics, worker {'with' if scraper else 'without'}"
                            " a 1 Hz scraper")
                        self.attempt(f"metrics {backend} run {r}", self.metrics, backend, db, r,
                                     scraper)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--warden", required=True)
    p.add_argument("--bench", required=True, help="warden_bench")
    p.add_argument("--lua", required=True, help="bench/http_enqueue.lua")
    p.add_argument("--backend", action="append", required=True, metavar="NAME=URL")
    p.add_argument("--results", required=True, help="JSON lines are appended here")
    p.add_argument("--log", required=True, help="serve's stderr is appended here")
    p.add_argument("--failures", required=True, help="one line per failed measurement")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--only", default="enqueue,batch,metrics")
    p.add_argument("--connections", default="1,16,64")
    p.add_argument("--duration", type=int, default=10, help="seconds of wrk per connection count")
    p.add_argument("--batch", type=int, default=1000, help="jobs per batch (HTTP and library)")
    p.add_argument("--batch-jobs", type=int, default=50000)
    p.add_argument("--metrics-jobs", type=int, default=1000000, help="N: jobs in the store")
    p.add_argument("--scrapes", type=int, default=30, help="timed scrapes per measurement")
    p.add_argument("--worker-seconds", type=int, default=8)
    p.add_argument("--worker-concurrency", type=int, default=512)
    p.add_argument("--step-timeout", type=int, default=900)
    p.add_argument("--dashboard-loads", type=int, default=5,
                   help="timed first loads of the dashboard per metrics measurement (0: none)")
    p.add_argument("--dashboard-script", default=os.path.join(os.path.dirname(__file__),
                                                              "dashboard_load.mjs"))
    a = p.parse_args()
    a.connections = [int(c) for c in a.connections.split(",")]
    a.only = set(a.only.split(","))
    if not a.only <= {"enqueue", "batch", "metrics"}:
        p.error(f"--only: unknown {sorted(a.only - {'enqueue', 'batch', 'metrics'})}")
    a.backends = [tuple(b.split("=", 1)) for b in a.backend]
    # SIGTERM unwinds like Ctrl-C: the serve of the measurement is stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    b = Bench(a)
    b.run_all()
    with open(a.failures, "a") as f:
        f.writelines(line + "\n" for line in b.failures)
    sys.exit(1 if b.failures else 0)


if __name__ == "__main__":
    main()
