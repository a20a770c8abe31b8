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
  "$1" throughput --db "$url" --jobs "$jobs" --concurrency "$conc" --variant ab 2>/dev/null |
    grep '^{' | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["jobs_per_s"]))'
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
