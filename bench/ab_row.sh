#!/usr/bin/env bash
# The four A/Bs a change to a store, the runtime or maintenance owes
# bench/results/history.md: both backends at 8 and 512 slots, each
# through ab_throughput.sh (alternating, one sitting), printed as the
# cells of one row: "old → new (change; spread old, new)" per setting.
#
#   bench/ab_row.sh OLD_BENCH NEW_BENCH PG_URL [RUNS]
#
# OLD_BENCH: warden_bench built from the last row's commit; NEW_BENCH:
# from the change. PG_URL: a server of your own (scripts/pg-cluster.sh
# start DIR prints one); it is emptied before every run. RUNS: per build
# and setting (default 5). Run it on a quiet machine: nothing compiling.
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,13p' "$0" >&2; exit 2; }
old=$1 new=$2 pg=$3 runs=${4:-5}
here=$(cd "$(dirname "$0")" && pwd)
cells=()
for setting in "$pg 512 50000" "$pg 8 20000" "sqlite 512 100000" "sqlite 8 20000"; do
  # shellcheck disable=SC2086
  out=$("$here/ab_throughput.sh" "$old" "$new" $setting "$runs")
  echo "$out" >&2
  cells+=("$(echo "$out" | python3 -c '
import re, sys
meds, runs = {}, {}
for line in sys.stdin:
    m = re.match(r"(old|new) median: (\d+) jobs/s \(([\d ]+)\)", line)
    if m:
        meds[m[1]] = int(m[2])
        runs[m[1]] = [int(x) for x in m[3].split()]
old, new = meds["old"], meds["new"]
so = "%s–%s" % (format(min(runs["old"]), ","), format(max(runs["old"]), ","))
sn = "%s–%s" % (format(min(runs["new"]), ","), format(max(runs["new"]), ","))
print(f"{old:,} → {new:,} ({100.0 * (new - old) / old:+.0f}%; {so}, {sn})")
')")
done
printf '| %s | %s | %s | %s |\n' "${cells[@]}"
