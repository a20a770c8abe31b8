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
# Whatever systemd units deploy/systemd holds, written at install time:
# ExecStart runs the warden installed beside them (here, not /usr/bin).
units=0
for u in "$src"/deploy/systemd/*.service.in; do
  [ -e "$u" ] || continue
  name=$(basename "$u" .in)
  unit=$prefix/lib/systemd/system/$name
  [ -f "$unit" ] || fail "$name not installed"
  exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
  case $exec_start in
    "$prefix/bin/warden "*) ;;
    *) fail "$name: ExecStart=$exec_start does not run $prefix/bin/warden" ;;
  esac
  if grep -n '@[A-Za-z_]*@' "$unit"; then fail "$name: a placeholder above is left"; fi
  units=$((units + 1))
done
[ "$units" -gt 0 ] || fail "no unit in $src/deploy/systemd"
# The units' user.
grep -qx 'u warden - "warden job queue" /var/lib/warden' "$prefix/lib/sysusers.d/warden.conf" ||
  fail "lib/sysusers.d/warden.conf was not installed, or does not make user warden"

"$prefix/bin/warden" --version | grep '^warden ' >/dev/null || fail "the installed warden does not run"
if ldd "$prefix/bin/warden" | grep 'not found'; then fail "the installed warden lacks a library"; fi
# Its command jobs' supervisor, found from the installed binary
# (FindShimProgram): the job's parent is the installed warden-shim.
[ -x "$prefix/libexec/warden/warden-shim" ] || fail "libexec/warden/warden-shim was not installed"
expect_shim_parent "$prefix/bin/warden" "$work"
echo "installed in $prefix: binary, command-job shim, library, headers, CMake package, warden.pc, man page," \
     "bash completion, $units systemd units (ExecStart in $prefix/bin), sysusers.d file"
