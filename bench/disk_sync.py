#!/usr/bin/env python3
"""How long this disk takes to make one small write durable: the floor under
every fsynced commit (SQLite's durable commits, PostgreSQL fsync on), so under
an acknowledged enqueue (and, on PostgreSQL, under a job's way to its start). Writes N blocks of 4 KiB to a file in DIR,
each followed by fdatasync, SLEEP ms apart (an idle queue's pace), and prints
p50 / p99 / max in ms.

    python3 bench/disk_sync.py [--dir build] [--writes 1000] [--sleep-ms 2]
"""
import argparse
import os
import statistics
import tempfile
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=".")
    ap.add_argument("--writes", type=int, default=1000)
    ap.add_argument("--sleep-ms", type=float, default=2.0)
    a = ap.parse_args()
    block = os.urandom(4096)
    samples = []
    with tempfile.NamedTemporaryFile(dir=a.dir) as f:
        fd = f.fileno()
        for i in range(a.writes):
            t0 = time.perf_counter()
            os.pwrite(fd, block, (i % 256) * 4096)
            os.fdatasync(fd)
            samples.append((time.perf_counter() - t0) * 1000)
            time.sleep(a.sleep_ms / 1000)
    samples.sort()
    q = statistics.quantiles(samples, n=100)
    print(f"fdatasync of a 4 KiB write, {a.writes} writes: "
          f"p50 {q[49]:.2f} ms, p99 {q[98]:.2f} ms, max {samples[-1]:.2f} ms")


if __name__ == "__main__":
    main()
