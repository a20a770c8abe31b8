#!/usr/bin/env python3
"""What SQLite itself charges to insert one job row: warden's row (the
17 values src/store/sqlite/job_insert.cc binds, into warden's table with
all its indexes, the schema read from a file warden made) against the
ceiling's row (bench/ceiling_sqlite.cc: 4 columns, one index). Rows are
made by SQLite in one INSERT ... SELECT, so no client cost, no binding and
no commit are counted: a floor under any way of enqueueing. Prints the
median of 3 per row, in microseconds per row.

    build/bench/warden_bench bulk --db sqlite:/dev/shm/jobs.db --jobs 1000
    python3 bench/row_insert_cost.py /dev/shm/jobs.db [--rows 200000]

Put the file on tmpfs to measure the CPU and not the disk.
"""
import argparse
import os
import sqlite3
import statistics
import time

from row_update_cost import remove_db

CEILING_SCHEMA = """
CREATE TABLE jobs (id INTEGER PRIMARY KEY, state INTEGER NOT NULL,
  lease_token INTEGER NOT NULL DEFAULT 0, payload TEXT NOT NULL);
CREATE INDEX jobs_available ON jobs (id) WHERE state = 0;
"""
CEILING_ROW = "INSERT INTO jobs (state, payload) SELECT 0, '{}' FROM n"

# A no-op job at the defaults, as warden_bench bulk enqueues it.
WARDEN_ROW = (
    "INSERT INTO jobs (queue, task, command, payload, priority, state, run_at, max_attempts, "
    "max_crashes, retry, delivery, timeout_ms, lease_ms, start_deadline_at, unique_key, "
    "concurrency_key, created_at) SELECT 'default', 'noop', '', '{}', 0, 'available', "
    "1700000000000 + i, 5, 3, 'default', 'at_least_once', 1800000, NULL, NULL, NULL, NULL, "
    "1700000000000 + i FROM n")


def warden_schema(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    sql = [r[0] for r in db.execute(
        "SELECT sql FROM sqlite_master WHERE tbl_name = 'jobs' AND sql IS NOT NULL "
        "ORDER BY type DESC")]  # the table before its indexes
    db.close()
    if not sql:
        raise SystemExit(f"{path} has no jobs table: make it with warden_bench bulk")
    return ";\n".join(sql) + ";"


def measure(scratch, schema, insert, rows):
    remove_db(scratch)
    db = sqlite3.connect(scratch, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(schema)
    db.execute("BEGIN IMMEDIATE")
    t0 = time.perf_counter()
    db.execute(f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
               f"WHERE i < {rows}) {insert}")
    seconds = time.perf_counter() - t0
    count = db.execute("SELECT count(*) FROM jobs").fetchone()[0]
    db.execute("ROLLBACK")
    db.close()
    remove_db(scratch)
    if count != rows:
        raise SystemExit(f"inserted {count} of {rows} rows")
    return seconds / rows * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db", help="a SQLite file warden made (warden_bench bulk)")
    ap.add_argument("--rows", type=int, default=200000)
    a = ap.parse_args()
    scratch = a.db + ".insert-cost"
    print("| row | µs per row |")
    print("|---|---|")
    for name, schema, insert in (
            ("ceiling's (4 columns, 1 index)", CEILING_SCHEMA, CEILING_ROW),
            ("warden's (17 values, its indexes)", warden_schema(a.db), WARDEN_ROW)):
        runs = [measure(scratch, schema, insert, a.rows) for _ in range(3)]
        print(f"| {name} | {statistics.median(runs):.2f} |")


if __name__ == "__main__":
    main()
