#!/usr/bin/env bash
# The body of `make test` (run it through `make test`, which starts the
# throwaway PostgreSQL server every stage shares). The stages, in order:
#   1. the thread-safety check (no build: a lock taken wrongly fails first)
#   2. the Release tree: build, ctest, the benchmark and HTTP harnesses'
#      smoke runs on warden's own systems (`--quick`: they fail when a run
#      fails, never for a speed)
#   3. AddressSanitizer+UBSan: the functional suites, and beside them the
#      fuzz targets (FUZZ_SECONDS each)
#   4. ThreadSanitizer: the integration tests
# Compiling is most of the time on two cores, and many tests mostly wait
# (on recoveries, on processes they start), so each sanitizer tree is built
# in the background at the lowest priority while the stage before it runs
# its tests: the tests keep the CPU when they want it (nice 19 yields to
# them), and the compiler takes what they leave. A background build that
# fails fails the run with its log.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
BUILD=${BUILD:-build}
CMAKE_ARGS=${CMAKE_ARGS:-}
FUZZ_SECONDS=${FUZZ_SECONDS:-5}
# The tests and benchmarks explicitly: `make build` and `make demo` turn
# them off in the same tree, and a CMake cache keeps what it was last told.
RELEASE_ARGS="-DCMAKE_BUILD_TYPE=Release -DWARDEN_FUNCTIONAL_TESTS=OFF -DWARDEN_WERROR=ON \
  -DWARDEN_BUILD_TESTS=ON -DWARDEN_BUILD_BENCH=ON"
ASAN_ARGS="-DCMAKE_BUILD_TYPE=Debug -DWARDEN_WERROR=ON -DWARDEN_SANITIZE=address"
TSAN_ARGS="-DCMAKE_BUILD_TYPE=Debug -DWARDEN_WERROR=ON -DWARDEN_SANITIZE=thread"

stage() { echo "== $(date +%T) $*"; }

# A compiler cache that outlives the clone: compiling is most of this run's
# time, and most files are the same from one run to the next. It cannot
# change a result (a hit is the output of the same preprocessed input and
# flags), and without ccache (or with an empty cache) everything is
# compiled as before. CMake (3.17+) takes the launcher from the
# environment at each tree's first configure: the fuzz tree's too. Paths
# under the clone are hashed relative to it (BASEDIR, NOHASHDIR), so a
# fresh clone elsewhere hits what the last one compiled; the precompiled
# headers need the two sloppiness flags ccache documents for them.
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-12G}
  export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
  ccache --zero-stats >/dev/null
fi

# Background builds: their pids, so that an early failure stops them too.
declare -A building=()
trap 'for p in "${building[@]}"; do kill -- -"$p" 2>/dev/null || true; done' EXIT

# start_build DIR ARGS...: configure and build DIR in the background (its
# own process group, nice 19), logging to DIR/build.log.
start_build() {
  local dir=$1
  shift
  mkdir -p "$dir"
  # shellcheck disable=SC2086 # ARGS are word lists
  setsid bash -c "cmake -S . -B '$dir' $* $CMAKE_ARGS >/dev/null && \
    nice -n 19 cmake --build '$dir' -j $JOBS" >"$dir/build.log" 2>&1 &
  building[$dir]=$!
  stage "building $dir in the background (log: $dir/build.log)"
}

# finish_build DIR: waits for it; its log and exit 1 if it failed.
finish_build() {
  local dir=$1 rc=0
  wait "${building[$dir]}" || rc=$?
  unset "building[$dir]"
  if [ "$rc" -ne 0 ]; then
    echo "building $dir failed (exit $rc):"
    cat "$dir/build.log"
    exit 1
  fi
  stage "built $dir"
}

stage "thread-safety"
JOBS=$JOBS ./scripts/thread-safety.sh

stage "Release tree: build"
# shellcheck disable=SC2086
cmake -S . -B "$BUILD" $RELEASE_ARGS $CMAKE_ARGS >/dev/null
cmake --build "$BUILD" -j "$JOBS"
start_build build-asan "$ASAN_ARGS"
stage "Release tree: ctest"
(cd "$BUILD" && ctest --output-on-failure -j "$JOBS" --timeout 300)
stage "benchmark harness (quick)"
# warden's own systems: the peers' side of the harness runs in `make bench`
# (it cost this stage about 1.5 of its 4.4 minutes, Node and npm included).
bench/run.sh --quick --build "$BUILD" --systems warden-sqlite,warden-pg
bench/http.sh --quick --build "$BUILD"

finish_build build-asan
start_build build-tsan "$TSAN_ARGS"
# The fuzz stage (its own clang tree, then FUZZ_SECONDS a target) runs
# beside the AddressSanitizer ctest, whose tests mostly wait: run before
# it, it cost 11 minutes of the critical path, most of them compiling.
mkdir -p build-fuzz
setsid bash -c "FUZZ_SECONDS=$FUZZ_SECONDS nice -n 10 ./fuzz/run.sh" >build-fuzz/run.log 2>&1 &
building[fuzz]=$!
stage "fuzz in the background (log: build-fuzz/run.log)"
stage "AddressSanitizer+UBSan: ctest"
make --no-print-directory test-asan CMAKE_ARGS="$CMAKE_ARGS" JOBS="$JOBS"
fuzz_rc=0
wait "${building[fuzz]}" || fuzz_rc=$?
unset "building[fuzz]"
cat build-fuzz/run.log
[ "$fuzz_rc" -eq 0 ] || { echo "fuzz failed (exit $fuzz_rc)"; exit 1; }
stage "fuzz passed"

finish_build build-tsan
stage "ThreadSanitizer: ctest"
make --no-print-directory test-tsan CMAKE_ARGS="$CMAKE_ARGS" JOBS="$JOBS"
stage "all passed"
if command -v ccache >/dev/null; then ccache --show-stats | sed -n '1,8p'; fi
