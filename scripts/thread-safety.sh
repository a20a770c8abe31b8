#!/usr/bin/env bash
# The lock discipline, checked by the compiler: clang's thread-safety
# analysis (-Wthread-safety) over every source of the library and the CLI,
# syntax only (nothing is built, so it costs a fraction of a clang build).
# Fails on any finding: a GUARDED_BY member touched without its mutex, a
# REQUIRES function called without it, a lock not released on some path
# (see src/core/thread_annotations.h and src/core/mutex.h).
#
#   scripts/thread-safety.sh                 # everything
#   scripts/thread-safety.sh src/runtime/worker.cc   # some files
# Environment: CLANGXX (default clang++), JOBS (files at once; default nproc).
# Without clang it skips (exit 0) on a workstation and fails under CI=true.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
clangxx=${CLANGXX:-clang++}
jobs=${JOBS:-$(nproc)}

if ! command -v "$clangxx" >/dev/null; then
  case "${CI:-}" in
    '' | false | 0)
      echo "thread-safety: $clangxx not found; skipped (scripts/deps.sh installs clang)" >&2
      exit 0 ;;
    *)
      echo "thread-safety: $clangxx not found, and CI=$CI: failing" >&2
      exit 1 ;;
  esac
fi

files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  mapfile -t files < <(find src/core src/env src/store src/runtime src/maintenance src/client src/demo \
                         src/cli -name '*.cc' | sort)
fi

# -Wthread-safety: the analysis, attributes, precise and reference checks.
# Not -Wthread-safety-beta (its checks change from one clang to the next)
# nor -negative (it wants every function to declare the locks it must not
# hold). -Werror: a finding fails the check, like any warning of the build.
flags=(-std=c++20 -Iinclude -Isrc $(pkg-config --cflags libpq)
       -DWARDEN_VERSION='"thread-safety"' -Wthread-safety -Werror)

start=$SECONDS
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=$work/out
# The headers nearly every file includes (nlohmann/json above all), parsed
# once: a precompiled header halves the time per file, as in the build.
printf '#include <%s>\n' nlohmann/json.hpp fmt/format.h string vector map memory optional \
  chrono functional mutex condition_variable thread >"$work/common.h"
"$clangxx" "${flags[@]}" -x c++-header "$work/common.h" -o "$work/common.h.pch"
flags+=(-fsyntax-only -include-pch "$work/common.h.pch")

# The canary: a write without its lock, which the analysis must report. A
# check that silently stopped checking (macros emptied, a flag lost) fails.
cat >"$work/canary.cc" <<'CANARY'
#include "core/mutex.h"
struct Canary {
  warden::Mutex mu;
  int n GUARDED_BY(mu) = 0;
  void Unlocked() { ++n; }
};
CANARY
canary=$("$clangxx" "${flags[@]}" "$work/canary.cc" 2>&1 || true)
if ! grep -q "requires holding mutex 'mu'" <<<"$canary"; then
  echo "thread-safety: the canary (a write without its lock) was not reported:" \
       "the analysis is not running" >&2
  exit 1
fi
if printf '%s\0' "${files[@]}" |
    xargs -0 -n 1 -P "$jobs" "$clangxx" "${flags[@]}" >"$out" 2>&1; then
  echo "thread-safety: ${#files[@]} files clean in $((SECONDS - start))s"
else
  cat "$out"
  echo "thread-safety: FAILED ($(grep -c 'error:' "$out" || true) errors;" \
       "scripts/thread-safety.sh FILE... to repeat)" >&2
  exit 1
fi
