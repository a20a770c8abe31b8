#!/usr/bin/env bash
# Builds the libFuzzer targets (clang) in build-fuzz, runs the ParseAddArgs
# tests, then fuzzes each target for a short time from its committed seed
# corpus (copied to a scratch corpus, so the committed one stays small).
# Fails on any crash, sanitizer report, leak, timeout or broken property,
# and prints the command that reproduces it.
#
#   fuzz/run.sh                      # every target, FUZZ_SECONDS (20) each
#   FUZZ_SECONDS=600 fuzz/run.sh     # longer
#   fuzz/run.sh add_args names       # some targets
# Environment: FUZZ_SECONDS, FUZZ_PARALLEL (targets at once; default nproc),
# FUZZ_BUILD (default build-fuzz), FUZZ_KNOWN_BUGS=1 (also check the
# properties that reported, open bugs break; see fuzz/README.md).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD:-$root/build-fuzz}
seconds=${FUZZ_SECONDS:-20}
parallel=${FUZZ_PARALLEL:-$(nproc)}
known_bugs=OFF
[ "${FUZZ_KNOWN_BUGS:-0}" = 1 ] && known_bugs=ON
all=(duration time payload_json add_args stored_json names db_url text_width batch_line request_target job_filter log_line rate inventory config)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")
for t in "${targets[@]}"; do
  [ -d "$root/fuzz/corpus/$t" ] || { echo "fuzz: no target '$t' (have: ${all[*]})" >&2; exit 2; }
done

start=$SECONDS
generator=()
command -v ninja >/dev/null && [ ! -f "$build/Makefile" ] && generator=(-G Ninja)
CC=clang CXX=clang++ cmake -S "$root" -B "$build" "${generator[@]}" -DWARDEN_FUZZ=ON \
  -DWARDEN_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWARDEN_FUZZ_KNOWN_BUGS="$known_bugs" >/dev/null
if ! cmake --build "$build" -j "$(nproc)" --target fuzz_add_args_test "${targets[@]/#/fuzz_}" \
    >"$build/fuzz-build.log" 2>&1; then
  tail -60 "$build/fuzz-build.log"
  echo "fuzz: build failed (log: $build/fuzz-build.log)" >&2
  exit 1
fi
echo "fuzz: built in $((SECONDS - start))s"

"$build/fuzz/fuzz_add_args_test" --gtest_brief=1

# A sanitizer report or a leak fails the input (libFuzzer saves it).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
artifacts="$build/fuzz/artifacts"

fuzz_one() {
  local t=$1 dict="$root/fuzz/dict/$1.dict"
  mkdir -p "$work/$t" "$artifacts/$t"
  cp "$root/fuzz/corpus/$t/"* "$work/$t/"
  local args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048
              -print_final_stats=1 -artifact_prefix="$artifacts/$t/")
  [ -f "$dict" ] && args+=(-dict="$dict")
  "$build/fuzz/fuzz_$t" "${args[@]}" "$work/$t" >"$work/$t.log" 2>&1
}

for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  echo "fuzz: $t for ${seconds}s"
  { if fuzz_one "$t"; then echo 0; else echo $?; fi >"$work/$t.rc"; } &
done
wait

failed=0
for t in "${targets[@]}"; do
  if [ "$(cat "$work/$t.rc")" = 0 ]; then
    read -r runs secs < <(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 \2/p' \
      "$work/$t.log")
    echo "fuzz: $t ok: $runs runs in ${secs}s ($((runs / (secs > 0 ? secs : 1))) exec/s)," \
      "corpus $(find "$work/$t" -type f | wc -l) inputs"
  else
    failed=1
    echo "fuzz: $t FAILED (exit $(cat "$work/$t.rc")); the end of its log:"
    grep -v '^#[0-9]' "$work/$t.log" | tail -40
    crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$work/$t.log" | tail -1)
    if [ -n "$crash" ]; then
      echo "fuzz: the input ($(wc -c <"$crash") bytes, first 512 shown):"
      head -c 512 "$crash" | od -An -c | head -20
      echo "fuzz: reproduce with: $build/fuzz/fuzz_$t $crash"
    fi
  fi
done
echo "fuzz: done in $((SECONDS - start))s"
exit "$failed"
