#!/usr/bin/env bash
# warden serve's HTTP API, measured on SQLite and PostgreSQL (bench/README.md,
# "The HTTP API"): single-job enqueue over kept-alive connections (wrk),
# batch enqueue over HTTP against the library, /metrics scrape times with N
# jobs in the store and what a 1 Hz scrape costs a worker, and serve's RSS.
# Builds Release, starts a throwaway PostgreSQL (scripts/pg-cluster.sh), runs
# bench/http_bench.py, prints one markdown table and writes it to
# bench/results/http.md with the machine, load and versions.
#
#   bench/http.sh [--quick] [--runs N] [--build DIR] [--only SCENARIOS]
#                 [--backends LIST] [--metrics-jobs N] [--connections LIST]
#                 [--duration S]
#
#   --quick          tiny sizes, one run (under a minute): checks the harness
#                    end to end (make test); its numbers mean nothing. Writes
#                    its table to BUILD/bench-results/http-quick/.
#   --runs N         runs of every measurement (full: 3)
#   --build DIR      the Release tree (default: build)
#   --only           comma list of enqueue,batch,metrics
#   --backends       comma list of sqlite,pg (default both)
#   --metrics-jobs N jobs in the store for the /metrics figures (full: 1,000,000)
#   --connections    wrk's connection counts (default 1,16,64)
#   --duration S     seconds of wrk per connection count (full: 10)
#
# Exit status: 1 if a measurement failed (a non-2xx answer, a wrong job
# count, a crash, a timeout); never for a speed. A tool it needs (wrk, psql,
# PostgreSQL's server) missing: it says so and exits 0, or 1 when CI=true.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
COMMAND="bench/http.sh $*"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
BENCH=$ROOT/bench
MODE=full
BUILD=$ROOT/build
RUNS="" ONLY=enqueue,batch,metrics BACKENDS=sqlite,pg
METRICS_JOBS="" CONNECTIONS=1,16,64 DURATION=""

while [ $# -gt 0 ]; do
  case $1 in
    --quick) MODE=quick ;;
    --runs) RUNS=$2; shift ;;
    --build) BUILD=$(cd "$2" 2>/dev/null && pwd || echo "$2"); shift ;;
    --only) ONLY=$2; shift ;;
    --backends) BACKENDS=$2; shift ;;
    --metrics-jobs) METRICS_JOBS=$2; shift ;;
    --connections) CONNECTIONS=$2; shift ;;
    --duration) DURATION=$2; shift ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "http.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

say() { echo "bench-http: $*" >&2; }

# --- sizes -------------------------------------------------------------------
if [ "$MODE" = quick ]; then
  RUNS=${RUNS:-1}; DURATION=${DURATION:-1}; METRICS_JOBS=${METRICS_JOBS:-2000}
  BATCH_JOBS=3000 SCRAPES=10 WORKER_SECONDS=2 STEP_TIMEOUT=120 DASHBOARD_LOADS=1
else
  RUNS=${RUNS:-3}; DURATION=${DURATION:-10}; METRICS_JOBS=${METRICS_JOBS:-1000000}
  BATCH_JOBS=50000 SCRAPES=30 WORKER_SECONDS=8 STEP_TIMEOUT=900 DASHBOARD_LOADS=5
fi
BATCH=1000                  # jobs per batch, HTTP and library (warden_bench bulk's default)
WORKER_CONCURRENCY=512      # bench/run.sh's tuned worker
SIZES=(--batch "$BATCH" --batch-jobs "$BATCH_JOBS" --scrapes "$SCRAPES"
       --worker-seconds "$WORKER_SECONDS" --worker-concurrency "$WORKER_CONCURRENCY"
       --step-timeout "$STEP_TIMEOUT" --dashboard-loads "$DASHBOARD_LOADS")

# --- what is needed ------------------------------------------------------------
# scripts/deps.sh is the one install list (wrk is on it). Whatever is still
# missing after it stops the run: a failure in CI, a skip elsewhere.
"$ROOT/scripts/deps.sh" >&2 || say "scripts/deps.sh failed; checking what is there"
missing=()
for tool in wrk psql curl python3 cmake node; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
# The dashboard's first load runs in the Chromium and playwright-core of
# its end-to-end test (tests/web).
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || missing+=(chromium)
[ -d "$ROOT/tests/web/node_modules/playwright-core" ] || missing+=("tests/web's playwright-core")
ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || missing+=("PostgreSQL's server (pg_ctl)")
if [ ${#missing[@]} -gt 0 ]; then
  if [ "${CI:-}" = true ]; then
    say "FAILED: missing ${missing[*]} (scripts/deps.sh installs them)"
    exit 1
  fi
  say "skipped: missing ${missing[*]} (scripts/deps.sh installs them)"
  exit 0
fi

say "building Release in $BUILD"
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" -j "${JOBS:-$(nproc)}" --target warden warden_bench >&2
WARDEN=$BUILD/warden
WBENCH=$BUILD/bench/warden_bench

# --- PostgreSQL ------------------------------------------------------------------
WORK=$(mktemp -d /tmp/warden-bench-http.XXXXXX)
chmod 755 "$WORK"   # the PostgreSQL server (user postgres) lives inside
cleanup() {
  local rc=$?
  "$ROOT/scripts/pg-cluster.sh" stop "$WORK/pg" >/dev/null 2>&1 || true
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

backend_args=()
PG_URL=""
if [[ ",$BACKENDS," == *",sqlite,"* ]]; then
  backend_args+=(--backend "warden-sqlite=sqlite:$WORK/warden.db")
fi
if [[ ",$BACKENDS," == *",pg,"* ]]; then
  PG_URL=$("$ROOT/scripts/pg-cluster.sh" start "$WORK/pg")
  backend_args+=(--backend "warden-pg=$PG_URL")
fi
[ ${#backend_args[@]} -gt 0 ] || { say "--backends names neither sqlite nor pg"; exit 2; }

# --- running -----------------------------------------------------------------------
RAW=$BUILD/bench-results/$(date -u +%Y%m%dT%H%M%SZ)-http-$MODE
if [ "$MODE" = quick ]; then OUT=$BUILD/bench-results/http-quick; else OUT=$BENCH/results; fi
mkdir -p "$OUT" "$RAW"
RESULTS=$RAW/results.jsonl
FAILURES=$RAW/failures
: >"$RESULTS"
: >"$FAILURES"
START=$(date +%s)
rc=0
python3 "$BENCH/http_bench.py" --warden "$WARDEN" --bench "$WBENCH" --lua "$BENCH/http_enqueue.lua" \
  "${backend_args[@]}" --results "$RESULTS" --failures "$FAILURES" --log "$RAW/serve.log" \
  --runs "$RUNS" --only "$ONLY" --connections "$CONNECTIONS" --duration "$DURATION" \
  --metrics-jobs "$METRICS_JOBS" "${SIZES[@]}" || rc=$?
[ $rc -eq 0 ] || [ -s "$FAILURES" ] || echo "bench/http_bench.py exited $rc" >>"$FAILURES"

# --- the table -------------------------------------------------------------------
rev=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
# Read-only, and without the index refresh that would take git's lock.
if [ -n "$(GIT_OPTIONAL_LOCKS=0 git -C "$ROOT" status --porcelain -uno 2>/dev/null)" ]; then
  rev="$rev+changes"
fi
PG_VERSION=""
[ -n "$PG_URL" ] && PG_VERSION=$(psql -X -At -d "$PG_URL" -c 'SHOW server_version')
META=$RAW/meta.json
python3 - "$META" <<EOF
import json, os, sys, time
def read(path, key):
    with open(path) as f:
        for line in f:
            if line.startswith(key):
                return line.split(":", 1)[1].strip()
elapsed = $(date +%s) - $START
meta = {
  "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
  "mode": "$MODE" + " (numbers from a quick run mean nothing)" * ("$MODE" == "quick"),
  "command": "$COMMAND",
  "elapsed": "%d min %d s" % divmod(elapsed, 60),
  "machine": {"nproc": os.cpu_count(), "cpu": read("/proc/cpuinfo", "model name"),
              "ram": "%.0f GiB" % (int(read("/proc/meminfo", "MemTotal").split()[0]) / 2**20),
              "kernel": os.uname().release, "load_start": "$LOAD_START",
              "load_end": "$(cut -d' ' -f1-3 /proc/loadavg)"},
  "versions": {"warden": "$rev", "PostgreSQL": "$PG_VERSION" or "not run",
               "SQLite": "$(dpkg-query -W -f='${Version}' libsqlite3-0 2>/dev/null)",
               "wrk": "$(dpkg-query -W -f='${Version}' wrk 2>/dev/null)",
               "Python": "$(python3 -c 'import platform; print(platform.python_version())')"},
  "settings": {"runs": $RUNS, "wrk": "1 thread, $DURATION s per connection count ($CONNECTIONS), timeout 10 s",
               "batch": "$BATCH jobs a request, $BATCH_JOBS jobs a run",
               "/metrics": "N = $METRICS_JOBS jobs (available) in the store, $SCRAPES timed scrapes after one untimed",
               "worker": "warden_bench worker, concurrency $WORKER_CONCURRENCY, $WORKER_SECONDS s from its first job (or until the N jobs are done)",
               "PostgreSQL": "fsync on, synchronous_commit on",
               "SQLite": "WAL, each acknowledged commit fsynced"},
  "failures": [l.strip() for l in open("$FAILURES") if l.strip()],
}
json.dump(meta, open(sys.argv[1], "w"), indent=1)
EOF
echo
python3 "$BENCH/http_table.py" --results "$RESULTS" --meta "$META" --out "$OUT/http.md"
echo
say "written: $OUT/http.md (raw lines: $RESULTS); took $(( $(date +%s) - START )) s"
if [ -s "$FAILURES" ]; then
  say "failed:"; cat "$FAILURES" >&2
  exit 1
fi
