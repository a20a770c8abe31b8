#!/usr/bin/env python3
"""What the two UPDATEs of a job's life (the claim's and the completion's)
cost per row on warden's SQLite schema, and how much of it is the secondary
indexes: the same statements warden runs, one row at a time, on copies of a
file of available jobs, first as it is, then without the indexes beside the
claim index. Prints the median of 3 per variant, in microseconds per row.

    build/bench/warden_bench bulk --db sqlite:/dev/shm/jobs.db --jobs 100000
    python3 bench/row_update_cost.py /dev/shm/jobs.db [--rows 50000]

Put the file on tmpfs to measure the CPU and not the disk.
"""
import argparse
import os
import shutil
import sqlite3
import statistics
import time

VARIANTS = {
    "as is": "",
    "only jobs_claim": "DROP INDEX jobs_state; "
    "DROP INDEX jobs_finished; DROP INDEX jobs_running_worker; DROP INDEX jobs_running_ckey; "
    "DROP INDEX jobs_live_unique; DROP INDEX jobs_deadline; DROP INDEX jobs_due;",
}

CLAIM = ("UPDATE jobs SET state = 'running', worker_id = ?, lease_token = ?, attempt = ?, "
         "active_lease_ms = ?, lease_expires_at = ?, started_mark = 0, attempt_started_at = NULL, "
         "cancel_requested = 0, started_at = ? WHERE id = ? AND state = 'available' AND lease_token = ?")
COMPLETE = ("UPDATE jobs SET state = 'succeeded', result = ?, finished_at = ?, "
            "lease_expires_at = NULL WHERE id = ? AND lease_token = ? AND state = 'running'")


def measure(source, sql, rows):
    copy = source + ".row-cost"
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(copy + suffix):
            os.remove(copy + suffix)
    shutil.copy(source, copy)
    db = sqlite3.connect(copy, isolation_level=None)
    db.executescript(sql)
    ids = [r[0] for r in db.execute(
        "SELECT id FROM jobs WHERE state = 'available' ORDER BY id LIMIT ?", (rows,))]
    if len(ids) < rows:
        raise SystemExit(f"{source} has {len(ids)} available jobs, fewer than --rows {rows}")
    db.execute("BEGIN IMMEDIATE")
    t0 = time.perf_counter()
    db.executemany(CLAIM, [(1, 1, 1, 10000, 5, 5, i, 0) for i in ids])
    t1 = time.perf_counter()
    db.executemany(COMPLETE, [(None, 6, i, 1) for i in ids])
    t2 = time.perf_counter()
    db.execute("ROLLBACK")
    db.close()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(copy + suffix):
            os.remove(copy + suffix)
    return (t1 - t0) / rows * 1e6, (t2 - t1) / rows * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db", help="a warden SQLite file of available jobs (warden_bench bulk)")
    ap.add_argument("--rows", type=int, default=50000)
    a = ap.parse_args()
    print("| indexes | claim UPDATE µs/row | completion UPDATE µs/row |")
    print("|---|---|---|")
    for name, sql in VARIANTS.items():
        runs = [measure(a.db, sql, a.rows) for _ in range(3)]
        print(f"| {name} | {statistics.median(r[0] for r in runs):.2f} | "
              f"{statistics.median(r[1] for r in runs):.2f} |")


if __name__ == "__main__":
    main()
