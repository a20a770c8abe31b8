#!/bin/sh
# The systemd units (deploy/systemd/*.service.in, docs/operations.md;
# cmake --install writes ExecStart's @CMAKE_INSTALL_FULL_BINDIR@ as the
# installed bin directory, tests/packaging checks that):
#  - `systemd-analyze verify` finds nothing to say about them (an unknown
#    key or a bad value is only a warning to systemd: any output fails);
#  - the flags their ExecStart gives are flags this warden takes;
#  - the worker's stop timeout covers its drain with the default flags
#    (--shutdown-timeout 30s, --kill-grace 5s, then the last outcomes'
#    writes, up to a lease of 10s), and its KillMode lets it drain;
#  - a unit with ProtectSystem=strict says how to give it ReadWritePaths=.
#
#   tests/systemd/check_units.sh deploy/systemd path/to/warden
# Without systemd-analyze it skips (exit 77, ctest's SKIP_RETURN_CODE) on a
# workstation and fails under CI=true (scripts/deps.sh installs systemd).
set -eu

units=${1:?usage: check_units.sh UNIT_DIR WARDEN_BIN}
warden=${2:?usage: check_units.sh UNIT_DIR WARDEN_BIN}

# A unit that makes the file system read-only (ProtectSystem=strict) says,
# beside it, how to let it write a database kept elsewhere, and so does
# docs/operations.md: without it a SQLite database outside /var/lib/warden
# fails at its first write. Text only: checked with or without systemd.
docs="$(dirname "$0")/../../docs/operations.md"
for unit in "$units"/*.service.in; do
  grep -qx 'ProtectSystem=strict' "$unit" || continue
  if ! grep -q '^#.*ReadWritePaths=' "$unit"; then
    echo "systemd_units: $(basename "$unit") has ProtectSystem=strict and no comment on"
    echo "  ReadWritePaths= for a database outside its state directory"
    exit 1
  fi
done
if ! grep -q 'ReadWritePaths=' "$docs"; then
  echo "systemd_units: docs/operations.md does not say ReadWritePaths= for a database elsewhere"
  exit 1
fi

if ! command -v systemd-analyze >/dev/null 2>&1; then
  case "${CI:-}" in
    '' | false | 0)
      echo "systemd_units: systemd-analyze not found; skipped (scripts/deps.sh installs systemd)"
      exit 77 ;;
    *)
      echo "systemd_units: systemd-analyze not found, and CI=$CI: failing"
      exit 1 ;;
  esac
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# verify wants an executable at ExecStart's path: the warden built here.
# A template is verified as an instance of it.
bin='@CMAKE_INSTALL_FULL_BINDIR@/warden'
for unit in "$units"/*.service.in; do
  name=$(basename "$unit" .in | sed 's/@\.service$/@ci-test.service/')
  sed "s#$bin#$warden#g" "$unit" >"$tmp/$name"
done
if grep -l '@[A-Z_]*@' "$tmp"/*.service; then
  echo "systemd_units: a placeholder above is left that install does not fill"
  fail=1
fi
for unit in "$tmp"/*.service; do
  if ! out=$(systemd-analyze verify --man=no "$unit" 2>&1) || [ -n "$out" ]; then
    echo "systemd_units: systemd-analyze verify $(basename "$unit"):"
    echo "$out"
    fail=1
  else
    echo "systemd_units: $(basename "$unit") verified"
  fi
done

# ExecStart's flags, run as the unit would with no configuration: a
# worker given nothing to run refuses to start (exit 2, saying so), which
# it says only once every flag before it was read; serve is stopped the
# same way by a port that cannot be.
flags() { sed -n "s#^ExecStart=$bin ##p" "$1" | sed 's/\$[A-Z_]*//g; s/%i/ci-test/g'; }
expect_refusal() {  # UNIT EXTRA_ARGS SAYS
  # shellcheck disable=SC2046
  if out=$(WARDEN_DB="$tmp/warden.db" "$warden" $(flags "$1") $2 2>&1); then rc=0; else rc=$?; fi
  case "$rc:$out" in
    2:*"$3"*) echo "systemd_units: $(basename "$1")'s ExecStart flags are read" ;;
    *) echo "systemd_units: $(basename "$1")'s ExecStart: exit $rc, want 2 and '$3':"
       echo "$out"
       fail=1 ;;
  esac
}
expect_refusal "$units/warden-worker@.service.in" "" "this worker can run nothing"
expect_refusal "$units/warden-serve.service.in" "--listen 127.0.0.1:99999" "is not a port"

# The worker's drain fits in its stop timeout.
seconds() { sed -n "s/^$1=\([0-9]*\)s\$/\1/p" "$2"; }
worker="$units/warden-worker@.service.in"
stop=$(seconds TimeoutStopSec "$worker")
if [ -z "$stop" ] || [ "$stop" -lt $((30 + 5 + 10)) ]; then
  echo "systemd_units: the worker's TimeoutStopSec ($stop s) is shorter than its drain"
  fail=1
fi
for want in Type=notify NotifyAccess=main KillMode=mixed OOMPolicy=continue; do
  grep -qx "$want" "$worker" || { echo "systemd_units: $worker lacks $want"; fail=1; }
done
grep -qx "Type=notify" "$units/warden-serve.service.in" ||
  { echo "systemd_units: warden-serve.service lacks Type=notify"; fail=1; }
exit $fail
