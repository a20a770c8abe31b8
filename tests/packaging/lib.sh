# shellcheck shell=bash
# Shared by the packaging tests' shell scripts (sourced).

# need TOOL...: each must be on PATH; else skip (77) on a workstation, and
# fail under CI=true (scripts/deps.sh installs them all).
need() {
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 && continue
    echo "$(basename "$0"): $tool not found (scripts/deps.sh installs it)"
    case "${CI:-}" in
      '' | false | 0) exit 77 ;;
      *) echo "CI=$CI: failing"; exit 1 ;;
    esac
  done
}

fail() {
  echo "FAIL: $*"
  exit 1
}

# The installed tree's libdir (lib, or lib/x86_64-linux-gnu for a /usr prefix).
libdir_of() {
  local a
  a=$(find "$1" -name libwarden.a -print -quit)
  [ -n "$a" ] || fail "no libwarden.a under $1"
  dirname "$a"
}

# expect_shim_parent WARDEN WORK: a command job run by WARDEN's worker (on a
# SQLite file under WORK) has the warden-shim program as its parent, the
# one installed with WARDEN (not a fork of the worker).
expect_shim_parent() {
  local warden=$1 dir=$2/shim-check
  rm -rf "$dir" && mkdir -p "$dir"
  "$warden" --config /dev/null --db "$dir/jobs.db" add --cmd "cat /proc/\$PPID/comm >$dir/parent" \
    >/dev/null 2>&1 || fail "$warden add --cmd"
  "$warden" --config /dev/null --db "$dir/jobs.db" worker --allow-cmd --exit-when-idle \
    --log-level error || fail "$warden worker --allow-cmd"
  [ "$(cat "$dir/parent" 2>/dev/null)" = warden-shim ] ||
    fail "$warden's command job ran under '$(cat "$dir/parent" 2>/dev/null)', not warden-shim"
}
