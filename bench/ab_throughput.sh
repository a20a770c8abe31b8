#!/usr/bin/env bash
# Two builds of warden_bench against each other, alternating in one
# sitting, so that both see the same disk and machine state (this disk's
# fsync time drifts between sittings more than most changes move it).
#
#   bench/ab_throughput.sh OLD_BENCH NEW_BENCH DB CONCURRENCY JOBS RUNS
#
# DB: `sqlite` (a fresh file under a temporary directory per run) or a
# postgresql:// URL (emptied with `warden_bench reset` before each run).
# Prints each run's jobs/s, then the median per build.
#
# Each run enqueues (`warden_bench bulk`), settles the store, then times
# the worker alone (`warden_bench worker`). Settling on PostgreSQL is
# ANALYZE and CHECKPOINT: otherwise autovacuum's ANALYZE of the fresh
# table, or the checkpoint of the enqueue's WAL, lands inside one run and
# not another, and one build's runs split into two modes 2x apart
# (history.md, 2026-12-06). On SQLite it is `sync`. Every build since
# 8cb82a3 has both commands, so old builds are timed the same way.
set -euo pipefail
[ $# -eq 6 ] || { sed -n '2,10p' "$0" >&2; exit 2; }
old=$1 new=$2 db=$3 conc=$4 jobs=$5 runs=$6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
one() {  # BENCH: prints jobs/s
  local url=$db
  if [ "$db" = sqlite ]; then
    rm -rf "$tmp/run" && mkdir "$tmp/run" && url="sqlite:$tmp/run/jobs.db"
  else
    "$1" reset --db "$url" >/dev/null
  fi
  "$1" bulk --db "$url" --jobs "$jobs" >/dev/null
  if [ "$db" = sqlite ]; then
    sync
  else
    psql -qX "$url" -c "ANALYZE warden.jobs" -c "CHECKPOINT" >/dev/null
  fi
  "$1" worker --db "$url" --concurrency "$conc" --stop-after "$jobs" 2>/dev/null |
    grep '^{' | python3 -c '
import json, sys
w = json.load(sys.stdin)
if w["handled"] != '"$jobs"':
    sys.exit("the worker handled %d of '"$jobs"' jobs" % w["handled"])
print(round(w["handled"] / w["seconds"]))'
}
declare -A all=([old]="" [new]="")
for r in $(seq "$runs"); do
  for b in old new; do
    bin=$old; [ $b = new ] && bin=$new
    v=$(one "$bin")
    echo "run $r $b: $v jobs/s"
    all[$b]+="$v "
  done
done
for b in old new; do
  echo "$b median: $(echo ${all[$b]} | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}') jobs/s (${all[$b]% })"
done
