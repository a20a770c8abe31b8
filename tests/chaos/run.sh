#!/usr/bin/env bash
# A long chaos run on both backends (the `make chaos` target):
#
#   tests/chaos/run.sh [BUILD_DIR] [-- WARDEN_CHAOS_FLAGS...]
#
# BUILD_DIR (default: build) must hold a built warden_chaos
# (`cmake --build BUILD_DIR --target warden_chaos`). The PostgreSQL run goes
# through scripts/pg-cluster.sh run: a throwaway cluster of its own, which
# the run may restart. (If WARDEN_TEST_PG_URL is already set, `run` uses
# that server instead, and restarts only happen when WARDEN_TEST_PG_CLUSTER
# names its directory: nothing else may be using that server then.)
#
# Environment: CHAOS_DURATION (fault window, default 10m), CHAOS_JOBS
# (default 20000: about what 4 workers of 8 slots finish in 10 minutes on
# 2 cores under these faults; more builds a backlog that drains after the
# window), CHAOS_SEED (default: a fresh seed per backend, printed).
# Exits 1 if either run finds a violation; each run prints its seed and the
# command that reruns it.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=build
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  BUILD=$1
  shift
fi
[ "${1:-}" != "--" ] || shift
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
BIN=$BUILD/tests/chaos/warden_chaos
if [ ! -x "$BIN" ]; then
  echo "run.sh: $BIN is not built (cmake --build $BUILD --target warden_chaos)" >&2
  exit 2
fi

args=(--duration "${CHAOS_DURATION:-10m}" --jobs "${CHAOS_JOBS:-20000}")
if [ -n "${CHAOS_SEED:-}" ]; then args+=(--seed "$CHAOS_SEED"); fi
args+=("$@")

status=0
echo "=== chaos on SQLite ==="
"$BIN" --db sqlite "${args[@]}" || status=1

echo
echo "=== chaos on PostgreSQL ==="
# shellcheck disable=SC2016  # expanded by the inner shell, under pg-cluster.sh run
"$ROOT/scripts/pg-cluster.sh" run sh -c '
  bin=$1; shift
  if [ -n "${WARDEN_TEST_PG_CLUSTER:-}" ]; then
    exec "$bin" --db "$WARDEN_TEST_PG_URL" --pg-cluster "$WARDEN_TEST_PG_CLUSTER" "$@"
  fi
  exec "$bin" --db "$WARDEN_TEST_PG_URL" "$@"' sh "$BIN" "${args[@]}" || status=1

exit "$status"
