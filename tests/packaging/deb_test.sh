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
# user.
#
# warden's maintainer scripts (deploy/debian/) run for real, by dpkg,
# outside a chroot (--force-script-chrootless: the scratch root has no
# shell to chroot to) with DPKG_ROOT set to the scratch root, as dpkg sets
# it for any --root: postinst makes user warden in the scratch root's
# /etc/passwd with systemd-sysusers --root, and leaves the host's alone;
# postrm purge keeps /var/lib/warden. postinst's other way, adduser where
# there is no systemd-sysusers, would change the host's users: it runs
# with adduser, getent and systemctl replaced by stubs that log their
# arguments. What is not tested: a real adduser, and daemon-reload under a
# running systemd (neither exists in CI's container).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build=$1 work=$2
need cpack dpkg dpkg-deb dpkg-shlibdeps file unshare mount

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
for f in ./usr/bin/warden ./usr/libexec/warden/warden-shim ./usr/share/man/man1/warden.1 \
         ./usr/share/bash-completion/completions/warden; do
  grep -q " $f\$" <<<"$contents" || fail "$(basename "$deb") lacks $f"
done
for f in ./usr/lib/systemd/system/warden-serve.service \
         ./usr/lib/systemd/system/warden-worker@.service ./usr/lib/sysusers.d/warden.conf; do
  grep -q " $f\$" <<<"$contents" || fail "$(basename "$deb") lacks $f"
done
# The units run the packaged binary (written at install time, from the
# prefix: cmake/install.cmake).
for u in warden-serve.service warden-worker@.service; do
  exec_start=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/lib/systemd/system/$u" |
    sed -n 's/^ExecStart=//p')
  case $exec_start in
    '/usr/bin/warden '*) ;;
    *) fail "$u in the .deb: ExecStart=$exec_start" ;;
  esac
done

# Maintainer scripts: there, executable, POSIX sh (sh -n; shellcheck -s sh
# when it is installed, as on CI), set -e.
ctrl=$work/control
dpkg-deb -e "$deb" "$ctrl"
for script in postinst prerm postrm; do
  f=$ctrl/$script
  [ -x "$f" ] || fail "$(basename "$deb") has no executable $script"
  [ "$(head -n 1 "$f")" = '#!/bin/sh' ] || fail "$script is not a #!/bin/sh script"
  grep -qx 'set -e' "$f" || fail "$script does not set -e"
  sh -n "$f" || fail "$script: sh -n"
  if command -v shellcheck >/dev/null; then shellcheck -s sh "$f" || fail "$script: shellcheck"; fi
done
if grep -nE 'systemctl +(enable|start|restart)|deb-systemd-invoke' "$ctrl"/postinst; then
  fail "postinst enables or starts a unit: that is the operator's choice"
fi
dev_contents=$(dpkg-deb -c "$dev")
grep -q ' ./usr/include/warden/warden.h$' <<<"$dev_contents" || fail "warden-dev lacks the headers"

# postinst without systemd-sysusers: adduser, once, with these flags.
stubs=$work/stubs
mkdir -p "$stubs"
for tool in adduser systemctl; do
  printf '#!/bin/sh\necho "%s $*" >>"%s"\n' "$tool" "$work/stub.log" >"$stubs/$tool"
done
printf '#!/bin/sh\nexit 2\n' >"$stubs/getent"  # no such user
chmod +x "$stubs"/*
PATH=$stubs /bin/sh "$ctrl/postinst" configure || fail "postinst (adduser) failed"
want='adduser --system --group --home /var/lib/warden --no-create-home --gecos warden job queue warden'
[ "$(head -n 1 "$work/stub.log")" = "$want" ] ||
  fail "postinst without systemd-sysusers ran: $(cat "$work/stub.log")"
if [ -d /run/systemd/system ]; then
  grep -qx 'systemctl daemon-reload' "$work/stub.log" || fail "no daemon-reload under systemd"
fi
printf '#!/bin/sh\nexit 0\n' >"$stubs/getent"  # the user exists
: >"$work/stub.log"
PATH=$stubs /bin/sh "$ctrl/postinst" configure || fail "postinst (adduser, again) failed"
if grep adduser "$work/stub.log"; then fail "postinst ran adduser for an existing user"; fi

# prerm: on remove under a running systemd, stop the units (in a mount
# namespace whose /run says systemd runs, so the host's is untouched); on
# upgrade, or for a --root system, nothing.
prerm_under_systemd() {  # ARGS: prerm's; DPKG_ROOT passes through
  : >"$work/stub.log"
  unshare -m /bin/sh -c 'mount -t tmpfs none /run && mkdir -p /run/systemd/system &&
    PATH="$1" exec /bin/sh "$2" "$3"' sh "$stubs" "$ctrl/prerm" "$@" ||
    fail "prerm $*: exit $?"
}
prerm_under_systemd remove
[ "$(cat "$work/stub.log")" = "systemctl stop warden-worker@*.service warden-serve.service" ] ||
  fail "prerm remove under systemd ran: $(cat "$work/stub.log")"
prerm_under_systemd upgrade
[ ! -s "$work/stub.log" ] || fail "prerm upgrade ran: $(cat "$work/stub.log")"
DPKG_ROOT=/nonexistent prerm_under_systemd remove
[ ! -s "$work/stub.log" ] || fail "prerm remove for a --root system ran: $(cat "$work/stub.log")"

root=$work/root
mkdir -p "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/info" "$root/etc"
cp /var/lib/dpkg/status "$root/var/lib/dpkg/status"
# A scratch passwd and group for postinst (systemd-sysusers --root) to add to.
echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
echo 'root:x:0:' >"$root/etc/group"
host_users=$(md5sum /etc/passwd /etc/group)
# The copied database lists no files of the host's packages: say nothing of it.
if ! dpkg --root="$root" --log=/dev/null --force-not-root --force-script-chrootless \
     -i "$deb" "$dev" >"$work/dpkg.log" 2>&1; then
  grep -v 'files list file for package' "$work/dpkg.log"
  fail "dpkg -i"
fi
grep -v 'files list file for package' "$work/dpkg.log"
installed=$(dpkg --root="$root" -s warden warden-dev | grep -c '^Status: install ok installed')
[ "$installed" = 2 ] || fail "dpkg does not list both packages as installed"

[ "$(md5sum /etc/passwd /etc/group)" = "$host_users" ] || fail "postinst changed the host's users"
if command -v systemd-sysusers >/dev/null; then
  grep -E '^warden:x:[0-9]+:[0-9]+:warden job queue:/var/lib/warden:/usr/sbin/nologin$' \
    "$root/etc/passwd" || fail "postinst made no user warden: $(cat "$root/etc/passwd")"
  grep -q '^warden:x:' "$root/etc/group" || fail "postinst made no group warden"
  users=$(md5sum "$root/etc/passwd")
  DPKG_ROOT=$root /bin/sh "$root/var/lib/dpkg/info/warden.postinst" configure ||
    fail "postinst, run again, failed"
  [ "$(md5sum "$root/etc/passwd")" = "$users" ] || fail "postinst, run again, changed the users"
else
  echo "no systemd-sysusers here: the user it makes is not checked"
fi

warden=$root/usr/bin/warden
if ldd "$warden" | grep 'not found'; then fail "the installed warden lacks a library"; fi
"$warden" --version
expect_shim_parent "$warden" "$work"
# The demo re-runs its own binary (/proc/self/exe) as its workers: all of
# it runs from the scratch root.
(cd "$work" && "$warden" demo --jobs 100) >"$work/demo.log" 2>&1 ||
  { cat "$work/demo.log"; fail "warden demo from the installed package"; }
tail -n 8 "$work/demo.log"

# Purging the package keeps the jobs (deploy/debian/postrm).
mkdir -p "$root/var/lib/warden"
echo jobs >"$root/var/lib/warden/warden.db"
dpkg --root="$root" --log=/dev/null --force-not-root --force-script-chrootless \
  --purge warden >"$work/purge.log" 2>&1 || { cat "$work/purge.log"; fail "dpkg --purge warden"; }
[ ! -e "$root/usr/bin/warden" ] || fail "the purge left /usr/bin/warden"
[ -f "$root/var/lib/warden/warden.db" ] || fail "the purge deleted /var/lib/warden"
echo "maintainer scripts: user warden made (once), no unit started, the jobs kept on purge"
