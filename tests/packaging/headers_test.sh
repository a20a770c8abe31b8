#!/usr/bin/env bash
# The installed public headers stand alone: each one compiles by itself
# with nothing but the installed include directory, and includes only
# other public headers, the standard library, nlohmann/json and (the
# SQLite transaction API, warden/sqlite.h) sqlite3.h.
#
#   headers_test.sh PREFIX
set -euo pipefail
. "$(dirname "$0")/lib.sh"
prefix=$1
need c++
inc=$prefix/include
[ -d "$inc/warden" ] || fail "no installed headers in $inc (packaging_install sets them up)"

bad=$(grep -H '^[[:space:]]*#[[:space:]]*include' "$inc"/warden/*.h |
  grep -Ev '#[[:space:]]*include[[:space:]]+(<[a-z_]+>|<nlohmann/json\.hpp>|"warden/[a-z_]+\.h")' |
  grep -Ev '^[^:]*/sqlite\.h:#include <sqlite3\.h>$' || true)
[ -z "$bad" ] || fail "includes outside the public API: $bad"
missing=""
for dep in $(grep -ho '"warden/[a-z_]*\.h"' "$inc"/warden/*.h | tr -d '"' | sort -u); do
  [ -f "$inc/$dep" ] || missing="$missing $dep"
done
[ -z "$missing" ] || fail "included but not installed:$missing"

# One at a time (ctest runs another test beside it on CI's two cores);
# -fsyntax-only: self-containment is a matter of parsing.
# shellcheck disable=SC2016  # the script is sh -c's, with its own $1 and $2
find "$inc/warden" -name '*.h' -print0 | xargs -0 -I{} sh -c \
  'printf "#include <warden/%s>\n" "$(basename "$1")" |
   c++ -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I"$2" -x c++ - ||
   { echo "FAIL: $(basename "$1") does not compile alone"; exit 255; }' _ {} "$inc"
echo "$(find "$inc/warden" -name '*.h' | wc -l) installed headers, each compiles alone"
