#!/usr/bin/env python3
"""Rescue after SIGKILL, for any system: one run, one JSON line on stdout.

Two workers run (--worker-cmd, started twice, each in its own session, with
BENCH_WORKER=0 or 1 and BENCH_RESCUE_LOG in the environment). One 60 s job
is enqueued (--enqueue-cmd). Each time the job starts, it appends
`start WALL_US WORKER JOB` to the log (WORKER: its BENCH_WORKER). Two
seconds after the first start, the worker that runs it is SIGKILLed (the
worker process only, not its group: what happens to the job's process is
the system's business; the workers' output goes to LOG.workers). The result is the time from the kill to the next
start of the job, on any worker, or null if it has not started again within
--bound seconds.

  rescue.py --system NAME --variant NAME --run I --bound S --log FILE
            --worker-cmd CMD --enqueue-cmd CMD [--reset-cmd CMD]
            [--ready-lines N] [--ready-cmd CMD] [--settings TEXT] [--kill-after 2]

The workers are ready when the log has --ready-lines `ready` lines and
--ready-cmd (polled) exits 0.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time


def wall_us():
    return time.time_ns() // 1000


def read_log(path):
    try:
        with open(path) as f:
            return [line.split() for line in f if line.strip()]
    except FileNotFoundError:
        return []


def wait_for(pred, timeout, step=0.005):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(step)
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--system", required=True)
    p.add_argument("--variant", required=True)
    p.add_argument("--run", type=int, default=1)
    p.add_argument("--bound", type=float, default=300)
    p.add_argument("--kill-after", type=float, default=2)
    p.add_argument("--log", required=True)
    p.add_argument("--worker-cmd", required=True)
    p.add_argument("--enqueue-cmd", required=True)
    p.add_argument("--reset-cmd")
    p.add_argument("--ready-lines", type=int, default=0)
    p.add_argument("--ready-cmd")
    p.add_argument("--settings", default="")
    a = p.parse_args()

    if os.path.exists(a.log):
        os.remove(a.log)
    if a.reset_cmd:
        subprocess.run(a.reset_cmd, shell=True, check=True, stdout=sys.stderr)
    workers = []
    worker_out = open(a.log + ".workers", "w")  # their logs, for a failed run
    result = {"scenario": "rescue", "system": a.system, "variant": a.variant,
              "run": a.run, "bound_s": a.bound, "settings": a.settings}
    try:
        for i in range(2):
            env = dict(os.environ, BENCH_WORKER=str(i), BENCH_RESCUE_LOG=a.log)
            workers.append(subprocess.Popen(a.worker_cmd, shell=True, env=env,
                                            start_new_session=True, stdout=worker_out,
                                            stderr=subprocess.STDOUT))
        def ready():
            if sum(1 for l in read_log(a.log) if l[0] == "ready") < a.ready_lines:
                return False
            return not a.ready_cmd or subprocess.run(
                a.ready_cmd, shell=True, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL).returncode == 0
        if not wait_for(ready, 60, step=0.1):
            raise SystemExit("rescue: the workers did not start")
        time.sleep(1)  # both idle and listening
        subprocess.run(a.enqueue_cmd, shell=True, check=True, stdout=sys.stderr)
        starts = lambda: [l for l in read_log(a.log) if l[0] == "start"]
        first = wait_for(starts, 60)
        if not first:
            raise SystemExit("rescue: the job never started")
        _, t_start, who, _job = first[0][:4]
        time.sleep(max(0, int(t_start) / 1e6 + a.kill_after - time.time()))
        # With a shell in between, the worker is the shell's only child.
        victim = workers[int(who)]
        target = victim.pid
        if os.path.basename(os.readlink(f"/proc/{target}/exe")) in ("sh", "dash", "bash"):
            with open(f"/proc/{target}/task/{target}/children") as f:
                kids = f.read().split()
            if kids:
                target = int(kids[0])
        t_kill = wall_us()
        os.kill(target, signal.SIGKILL)
        again = wait_for(lambda: starts()[1:], a.bound, step=0.002)
        if again:
            result["rescue_s"] = (int(again[0][1]) - t_kill) / 1e6
            result["rerun_on"] = "other" if again[0][2] != who else "same"
        else:
            result["rescue_s"] = None
            result["timed_out"] = True
    finally:
        for w in workers:
            try:
                os.killpg(w.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            w.wait()
        worker_out.close()
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
