#!/usr/bin/env bash
# The .deb packages: `cpack` from the built tree, their contents and
# Depends, installed with dpkg into a scratch root, and the crash-recovery
# demo run from the binary installed there.
#
#   deb_test.sh BUILD_DIR WORK_DIR
#
# The scratch root's dpkg database starts as a copy of this host's, so that
# dpkg checks the packages' Depends against the packages really installed
# here, whose libraries the installed binary then runs with (it is run from
# the scratch root, not chrooted into it). dpkg --force-not-root: as any
# user. Neither package has maintainer scripts.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build=$1 work=$2
need cpack dpkg dpkg-deb dpkg-shlibdeps file

rm -rf "$work"
mkdir -p "$work"
cpack -G DEB -B "$work/out" --config "$build/CPackConfig.cmake" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; fail "cpack"; }
deb=$(ls "$work"/out/warden_*.deb)
dev=$(ls "$work"/out/warden-dev_*.deb)

depends=$(dpkg-deb -f "$deb" Depends)
echo "warden Depends: $depends"
for lib in libc6 libsqlite3-0 libssl3 libtomlplusplus3; do  # from dpkg-shlibdeps, not a list of ours
  grep -q "$lib" <<<"$depends" || fail "Depends lacks $lib"
done
if grep -q 'WARDEN_POSTGRES:BOOL=ON' "$build/CMakeCache.txt"; then
  grep -q 'libpq5' <<<"$depends" || fail "Depends lacks libpq5"
fi
contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/warden ./usr/share/man/man1/warden.1 \
         ./usr/share/bash-completion/completions/warden; do
  grep -q " $f\$" <<<"$contents" || fail "$(basename "$deb") lacks $f"
done
dev_contents=$(dpkg-deb -c "$dev")
grep -q ' ./usr/include/warden/warden.h$' <<<"$dev_contents" || fail "warden-dev lacks the headers"

root=$work/root
mkdir -p "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/info"
cp /var/lib/dpkg/status "$root/var/lib/dpkg/status"
# The copied database lists no files of the host's packages: say nothing of it.
if ! dpkg --root="$root" --log=/dev/null --force-not-root -i "$deb" "$dev" >"$work/dpkg.log" 2>&1; then
  grep -v 'files list file for package' "$work/dpkg.log"
  fail "dpkg -i"
fi
grep -v 'files list file for package' "$work/dpkg.log"
installed=$(dpkg --root="$root" -s warden warden-dev | grep -c '^Status: install ok installed')
[ "$installed" = 2 ] || fail "dpkg does not list both packages as installed"

warden=$root/usr/bin/warden
if ldd "$warden" | grep 'not found'; then fail "the installed warden lacks a library"; fi
"$warden" --version
# The demo re-runs its own binary (/proc/self/exe) as its workers: all of
# it runs from the scratch root.
(cd "$work" && "$warden" demo --jobs 100) >"$work/demo.log" 2>&1 ||
  { cat "$work/demo.log"; fail "warden demo from the installed package"; }
tail -n 8 "$work/demo.log"
