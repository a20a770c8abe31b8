#!/usr/bin/env python3
"""The dashboard overview's cost at N jobs: GET /v1/stats (its `unserved`
groups), /v1/queues and /v1/workers, each alone and the three at once as
web/overview.js asks them, p50 / p99 over a number of requests.

    bench/stats_bench.py --warden build/warden --db sqlite:/tmp/x.db --fill 1000000
    bench/stats_bench.py --warden build/warden --db postgres://... --requests 20

--fill N first adds N jobs through POST /v1/jobs/batch (1000 a request):
5 queues, two tasks each (9 jobs in 10 of the first), priorities 0 and 5,
one job in 20 scheduled an hour ahead: 15 groups. No worker runs, so every waiting
job is unserved: the answer's `unserved` must add up to every job, which is
checked. Prints one JSON line per figure."""
import argparse
import http.client
import json
import re
import subprocess
import sys
import threading
import time


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


class Serve:
    def __init__(self, warden, db):
        self.proc = subprocess.Popen(
            [warden, "--db", db, "serve", "--listen", "127.0.0.1:0", "--no-auth"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.port = None
        ready = threading.Event()

        def pump():
            for line in self.proc.stderr:
                m = re.search(rb"serving on 127\.0\.0\.1:(\d+)", line)
                if m and self.port is None:
                    self.port = int(m.group(1))
                    ready.set()
            ready.set()

        threading.Thread(target=pump, daemon=True).start()
        ready.wait(600)  # opening may migrate (count) a large store
        if self.port is None:
            self.proc.kill()
            sys.exit(f"warden serve did not start on {db}")

    def conn(self):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(60)


def request(conn, method, path, body=None):
    conn.request(method, path, body=body,
                 headers={"Content-Type": "application/json"} if body else {})
    r = conn.getresponse()
    data = r.read()
    if r.status >= 300:
        sys.exit(f"{method} {path}: {r.status} {data[:200]!r}")
    return data


def fill(serve, n):
    conn = serve.conn()
    t0 = time.monotonic()
    done = 0
    while done < n:
        jobs = []
        for i in range(done, min(n, done + 1000)):
            k = i // 5  # the job's place in its queue
            job = {"queue": f"q{i % 5}", "task": "resize" if k % 10 else "report",
                   "priority": 5 if k % 7 == 0 else 0}
            if k % 20 == 3:
                job["delay"] = "1h"
            jobs.append(job)
        request(conn, "POST", "/v1/jobs/batch", json.dumps({"jobs": jobs}))
        done += len(jobs)
    return time.monotonic() - t0


def timed(conn, path):
    t0 = time.monotonic()
    body = request(conn, "GET", path)
    return time.monotonic() - t0, body


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--warden", required=True)
    p.add_argument("--db", required=True)
    p.add_argument("--fill", type=int, default=0)
    p.add_argument("--requests", type=int, default=20)
    p.add_argument("--label", default="")
    a = p.parse_args()

    t0 = time.monotonic()
    serve = Serve(a.warden, a.db)
    opened = time.monotonic() - t0
    print(json.dumps({"label": a.label, "figure": "serve start s", "value": round(opened, 2)}))
    try:
        if a.fill:
            s = fill(serve, a.fill)
            print(json.dumps({"label": a.label, "figure": "fill jobs/s",
                              "value": round(a.fill / s)}))
        conn = serve.conn()
        _, body = timed(conn, "/v1/stats")  # warms up; checks the answer
        stats = json.loads(body)
        waiting = sum(v for k, v in stats["jobs"].items()
                      if k in ("available", "scheduled", "retryable"))
        unserved = sum(g["jobs"] for g in stats["unserved"])
        if not stats["workers"].get("active") and unserved != waiting:
            sys.exit(f"/v1/stats: unserved adds up to {unserved}, {waiting} jobs wait")
        print(json.dumps({"label": a.label, "figure": "unserved groups",
                          "value": len(stats["unserved"]), "jobs": unserved}))
        for path in ("/v1/stats", "/v1/queues", "/v1/workers"):
            times = [timed(conn, path)[0] for _ in range(a.requests)]
            for q in (50, 99):
                print(json.dumps({"label": a.label, "figure": f"{path} p{q} ms",
                                  "value": round(percentile(times, q) * 1e3, 1)}))
        # The overview: the three at once, each on its own connection.
        conns = [serve.conn() for _ in range(3)]
        times = []
        for _ in range(a.requests):
            out = [None] * 3
            t0 = time.monotonic()
            threads = [threading.Thread(target=lambda i=i, path=path: out.__setitem__(
                i, timed(conns[i], path))) for i, path in
                enumerate(("/v1/stats", "/v1/queues", "/v1/workers"))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            times.append(time.monotonic() - t0)
        for q in (50, 99):
            print(json.dumps({"label": a.label, "figure": f"overview (3 at once) p{q} ms",
                              "value": round(percentile(times, q) * 1e3, 1)}))
    finally:
        serve.stop()


if __name__ == "__main__":
    main()
