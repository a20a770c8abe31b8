#!/usr/bin/env bash
# `cmake --install` of a built tree into a scratch prefix: every file where
# it belongs, a binary that runs from there. The fixture of the consumer
# and header tests, which use the tree it leaves.
#
#   install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build=$1 src=$2 work=$3
need cmake ldd

rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" ||
  { cat "$work/install.log"; fail "cmake --install"; }
libdir=$(libdir_of "$prefix")

for f in bin/warden share/man/man1/warden.1 share/bash-completion/completions/warden; do
  [ -f "$prefix/$f" ] || fail "$f was not installed"
done
for f in cmake/warden/warden-config.cmake cmake/warden/warden-config-version.cmake \
         cmake/warden/warden-targets.cmake pkgconfig/warden.pc; do
  [ -f "$libdir/$f" ] || fail "${libdir#"$prefix"/}/$f was not installed"
done
# Every public header, and nothing from src/.
for h in "$src"/include/warden/*.h; do
  [ -f "$prefix/include/warden/$(basename "$h")" ] || fail "include/warden/$(basename "$h") missing"
done
extra=$(cd "$prefix/include" && find . -type f ! -path './warden/*.h')
[ -z "$extra" ] || fail "installed beside the public headers: $extra"
# Whatever systemd units deploy/systemd holds.
units=0
for u in "$src"/deploy/systemd/*.service; do
  [ -e "$u" ] || continue
  [ -f "$prefix/lib/systemd/system/$(basename "$u")" ] || fail "$(basename "$u") not installed"
  units=$((units + 1))
done

"$prefix/bin/warden" --version | grep -q '^warden ' || fail "the installed warden does not run"
if ldd "$prefix/bin/warden" | grep 'not found'; then fail "the installed warden lacks a library"; fi
echo "installed in $prefix: binary, library, headers, CMake package, warden.pc, man page," \
     "bash completion, $units systemd units"
