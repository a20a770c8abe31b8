#!/usr/bin/env bash
# Command jobs against the bare spawn loop: how much of what running
# `/bin/sh -c true` costs this machine a warden worker adds (issue 38's goal:
# at least 0.8 of the loop's rate at concurrency 8).
#
#   bench/cmd_jobs.sh [--build DIR] [--old WARDEN] [--jobs N] [--concurrency C] [--runs R]
#
# Each run, alternating: the bare loop (warden_bench_spawn_loop: C threads
# posix_spawn and wait for N shells in all), then `warden worker --allow-cmd
# --concurrency C --exit-when-idle` on a fresh SQLite file holding N `true`
# command jobs (timed from its start to its exit, so its start and its last
# commit count), then, with --old, another warden binary the same way (an
# A/B). Prints each run and a table of medians and ratios to the loop.
# Defaults: build, 3000 jobs, concurrency 8, 5 runs.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$ROOT/build OLD="" JOBS=3000 CONC=8 RUNS=5
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=$(cd "$2" && pwd); shift 2 ;;
    --old) OLD=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --concurrency) CONC=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    *) sed -n '2,14p' "$0" >&2; exit 2 ;;
  esac
done
loop=$BUILD/bench/warden_bench_spawn_loop new=$BUILD/warden
for f in "$loop" "$new"; do
  [ -x "$f" ] || { echo "cmd_jobs: $f is not built (cmake --build $BUILD)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

worker_rate() {  # WARDEN: jobs/s of one worker run
  local db=$tmp/run/jobs.db
  rm -rf "$tmp/run" && mkdir "$tmp/run"
  python3 -c "import sys; sys.stdout.write('{\"cmd\":\"true\"}\n' * $JOBS)" |
    "$1" --config /dev/null --db "$db" add --batch >/dev/null 2>&1
  sync
  local t0 t1
  t0=$(date +%s.%N)
  "$1" --config /dev/null --db "$db" worker --allow-cmd --concurrency "$CONC" --exit-when-idle \
    --log-level error
  t1=$(date +%s.%N)
  local done
  done=$("$1" --config /dev/null --db "$db" --json stats |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["jobs"].get("succeeded", 0))')
  [ "$done" = "$JOBS" ] || { echo "cmd_jobs: $1 ran $done of $JOBS jobs" >&2; exit 1; }
  python3 -c "print(round($JOBS / ($t1 - $t0)))"
}

declare -A all=([loop]="" [new]="" [old]="")
for r in $(seq "$RUNS"); do
  v=$("$loop" "$JOBS" "$CONC" | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["per_s"]))')
  all[loop]+="$v "
  line="run $r: loop $v/s, warden $(worker_rate "$new" | tee "$tmp/v")/s"
  all[new]+="$(cat "$tmp/v") "
  if [ -n "$OLD" ]; then
    line+=", old $(worker_rate "$OLD" | tee "$tmp/v")/s"
    all[old]+="$(cat "$tmp/v") "
  fi
  echo "$line"
done
python3 - "${all[loop]}" "${all[new]}" "${all[old]}" "$JOBS" "$CONC" "$OLD" <<'PY'
import statistics, sys
loop, new, old = ([int(x) for x in a.split()] for a in sys.argv[1:4])
jobs, conc, old_name = sys.argv[4], sys.argv[5], sys.argv[6]
print(f"\n{jobs} `true` jobs at concurrency {conc}, SQLite, medians of {len(loop)} runs\n")
print("| | per second | min – max | ÷ the bare loop |")
print("|---|---:|---:|---:|")
base = statistics.median(loop)
rows = [("bare posix_spawn loop", loop), ("warden worker", new)]
if old:
    rows.append((f"warden worker ({old_name})", old))
for name, xs in rows:
    m = statistics.median(xs)
    print(f"| {name} | {m:,.0f} | {min(xs):,} – {max(xs):,} | {m / base:.2f} |")
PY
