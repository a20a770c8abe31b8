#!/usr/bin/env bash
# `make check`: the inner loop. Builds a plain tree (build-check: no
# sanitizer, -O1, so it compiles fast) with the pure and in-process
# suites, and runs them: the core, the store conformance and store tests
# on SQLite and the memory store, the simulation of the real runtime (its
# unit tests and a slice of the seeded runs), the layer check and the
# Markdown link check. No root, no network, no PostgreSQL, no process
# killed: what it needs is what `scripts/deps.sh` installs, and it
# installs nothing itself. `make test` is still what a change must pass.
#
#   scripts/check.sh            SEEDS=N for more seeded runs (default 500)
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
SEEDS=${SEEDS:-500}
tree=build-check

if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
  export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
fi
# -O1 -g0: compiling is most of this loop's time, and -O1 costs it
# little over -O0 while the simulation runs several times faster.
cmake -S . -B "$tree" -DCMAKE_BUILD_TYPE=Check -DCMAKE_CXX_FLAGS_CHECK="-O1 -g0" \
  -DWARDEN_BUILD_BENCH=OFF >/dev/null
cmake --build "$tree" -j "$JOBS" --target core_test store_test runtime_sim_test runtime_seeds_test

# The PostgreSQL cases want a server: `make test` runs them.
unset CI WARDEN_TEST_PG_URL
no_pg='-*/postgres:*Postgres*:*postgres*'
failed=()
run() {  # NAME COMMAND...
  local name=$1
  shift
  echo "== $name"
  if ! "$@" >"$tree/$name.log" 2>&1; then
    failed+=("$name")
    tail -40 "$tree/$name.log"
  else
    tail -1 "$tree/$name.log"
  fi
}
run core "$tree/tests/core_test" --gtest_brief=1
run store "$tree/tests/store_test" --gtest_brief=1 --gtest_filter="$no_pg"
run sim "$tree/tests/sim/runtime_sim_test" --gtest_brief=1
run seeds env WARDEN_RUNTIME_SIM_FROM=1 WARDEN_RUNTIME_SIM_SEEDS="$SEEDS" \
  "$tree/tests/sim/runtime_seeds_test" --gtest_brief=1
run layers python3 tests/layers/check_layers.py src
run migrations python3 tests/store/check_migrations.py
run line_length python3 scripts/check-line-length.py
run doc_links python3 scripts/check-links.py
if [ ${#failed[@]} -gt 0 ]; then
  echo "make check: failed: ${failed[*]} (logs in $tree/)"
  exit 1
fi
echo "make check: passed"
