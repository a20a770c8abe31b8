#!/usr/bin/env python3
"""What the two UPDATEs of a job's life (the claim's and a plain success's)
cost per job on warden's SQLite schema: the statements warden runs
(src/store/sqlite/: kClaimSql in sqlite_store_claim.cc, kSucceedPlainSql in
sqlite_store_finish.cc), on copies of a file of available jobs, given one
job per execution and then --batch jobs per execution (as a worker's claim
and its completer do), first with warden's indexes, then in a table of only
the columns the hot path uses (with warden's indexes), then without the
indexes beside the claim index. Prints the median of 3 per variant, in
microseconds per job.

    build/bench/warden_bench bulk --db sqlite:/dev/shm/jobs.db --jobs 100000
    python3 bench/row_update_cost.py /dev/shm/jobs.db [--rows 50000] [--batch 512]

Put the file on tmpfs to measure the CPU and not the disk. One job per
execution includes Python's cost of a call (under 1 µs).
"""
import argparse
import json
import os
import shutil
import sqlite3
import statistics
import time

# The columns a job's usual life reads or writes after its insert, and those
# warden's indexes name, in a table of their own with all of warden's
# indexes: what a split into a hot and a cold table would leave the two
# UPDATEs to rewrite.
HOT_COLUMNS = ("id, queue, priority, state, run_at, attempt, worker_id, lease_token, "
               "lease_expires_at, lease_ms, active_lease_ms, started_mark, cancel_requested, "
               "concurrency_key, unique_key, start_deadline_at, started_at, "
               "attempt_started_at, finished_at, result")
HOT_ONLY = f"""
CREATE TABLE hot (id INTEGER PRIMARY KEY AUTOINCREMENT, queue TEXT NOT NULL,
  priority INTEGER NOT NULL, state TEXT NOT NULL, run_at INTEGER NOT NULL,
  attempt INTEGER NOT NULL, worker_id INTEGER, lease_token INTEGER NOT NULL,
  lease_expires_at INTEGER, lease_ms INTEGER, active_lease_ms INTEGER,
  started_mark INTEGER NOT NULL, cancel_requested INTEGER NOT NULL, concurrency_key TEXT,
  unique_key TEXT, start_deadline_at INTEGER, started_at INTEGER,
  attempt_started_at INTEGER, finished_at INTEGER, result TEXT);
INSERT INTO hot SELECT {HOT_COLUMNS} FROM jobs;
DROP TABLE jobs;
ALTER TABLE hot RENAME TO jobs;
CREATE INDEX jobs_claim ON jobs (queue, priority DESC, run_at, id) WHERE state = 'available';
CREATE INDEX jobs_due ON jobs (run_at) WHERE state IN ('scheduled', 'retryable');
CREATE INDEX jobs_running_worker ON jobs (worker_id) WHERE state = 'running';
CREATE INDEX jobs_deadline ON jobs (start_deadline_at)
  WHERE start_deadline_at IS NOT NULL AND state IN ('scheduled', 'available', 'retryable');
CREATE INDEX jobs_state ON jobs (state, id) WHERE state NOT IN ('running', 'available');
CREATE INDEX jobs_finished ON jobs (finished_at) WHERE finished_at IS NOT NULL;
CREATE UNIQUE INDEX jobs_running_ckey ON jobs (concurrency_key)
  WHERE state = 'running' AND concurrency_key IS NOT NULL;
CREATE UNIQUE INDEX jobs_live_unique ON jobs (unique_key)
  WHERE unique_key IS NOT NULL AND state IN ('scheduled', 'available', 'running', 'retryable');
"""

VARIANTS = {
    "as is": "",
    "as is, hot columns only": HOT_ONLY,
    "only jobs_claim": "DROP INDEX jobs_state; "
    "DROP INDEX jobs_finished; DROP INDEX jobs_running_worker; DROP INDEX jobs_running_ckey; "
    "DROP INDEX jobs_live_unique; DROP INDEX jobs_deadline; DROP INDEX jobs_due;",
}

# ?1 worker, ?2 the worker's lease (ms), ?3 now, ?4 the ids as a JSON list.
CLAIM = ("UPDATE jobs SET state = 'running', worker_id = ?1, lease_token = lease_token + 1, "
         "attempt = attempt + 1, active_lease_ms = coalesce(lease_ms, ?2), "
         "lease_expires_at = ?3 + coalesce(lease_ms, ?2), started_mark = 0, "
         "attempt_started_at = NULL, cancel_requested = 0, started_at = ?3 "
         "WHERE id IN (SELECT value FROM json_each(?4)) AND state = 'available'")
# ?1 now, ?2 the ids as a JSON list.
COMPLETE = ("UPDATE jobs SET state = 'succeeded', result = NULL, finished_at = ?1, "
            "lease_expires_at = NULL WHERE id IN (SELECT value FROM json_each(?2)) "
            "AND state = 'running'")


def remove_db(path):
    """Removes a SQLite file and its -wal and -shm, where they exist."""
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)


def measure(source, sql, rows, batch):
    copy = source + ".row-cost"
    remove_db(copy)
    shutil.copy(source, copy)
    db = sqlite3.connect(copy, isolation_level=None)
    db.executescript(sql)
    ids = [r[0] for r in db.execute(
        "SELECT id FROM jobs WHERE state = 'available' ORDER BY id LIMIT ?", (rows,))]
    if len(ids) < rows:
        raise SystemExit(f"{source} has {len(ids)} available jobs, fewer than --rows {rows}")
    lists = [json.dumps(ids[i:i + batch]) for i in range(0, rows, batch)]
    db.execute("BEGIN IMMEDIATE")
    t0 = time.perf_counter()
    for ids_json in lists:
        db.execute(CLAIM, (1, 10000, 5, ids_json))
    t1 = time.perf_counter()
    for ids_json in lists:
        db.execute(COMPLETE, (6, ids_json))
    t2 = time.perf_counter()
    done = db.execute("SELECT count(*) FROM jobs WHERE state = 'succeeded'").fetchone()[0]
    db.execute("ROLLBACK")
    db.close()
    remove_db(copy)
    if done != rows:
        raise SystemExit(f"{done} of {rows} jobs succeeded: the statements no longer match")
    return (t1 - t0) / rows * 1e6, (t2 - t1) / rows * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db", help="a warden SQLite file of available jobs (warden_bench bulk)")
    ap.add_argument("--rows", type=int, default=50000)
    ap.add_argument("--batch", type=int, default=512)
    a = ap.parse_args()
    print("| indexes | jobs per statement | claim UPDATE µs/job | completion UPDATE µs/job |")
    print("|---|---|---|---|")
    for name, sql in VARIANTS.items():
        for batch in (1, a.batch):
            runs = [measure(a.db, sql, a.rows, batch) for _ in range(3)]
            print(f"| {name} | {batch} | {statistics.median(r[0] for r in runs):.2f} | "
                  f"{statistics.median(r[1] for r in runs):.2f} |")


if __name__ == "__main__":
    main()
