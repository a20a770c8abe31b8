#!/bin/sh
# The dashboard's end-to-end test (dashboard.test.mjs) in Debian's chromium
# through playwright-core, once what it needs is here: chromium, Node.js 20
# or newer (playwright-core's minimum) and tests/web/node_modules, which
# scripts/deps.sh installs (npm ci). Without them it skips (exit 77,
# ctest's SKIP_RETURN_CODE) on a workstation and fails under CI=true.
#
#   tests/web/run.sh WARDEN_BIN ARTIFACTS_DIR
# Environment: CHROMIUM (default /usr/bin/chromium).
set -eu

bin=${1:?usage: run.sh WARDEN_BIN ARTIFACTS_DIR}
artifacts=${2:?usage: run.sh WARDEN_BIN ARTIFACTS_DIR}
here=$(cd "$(dirname "$0")" && pwd)
chromium=${CHROMIUM:-/usr/bin/chromium}

missing() {
  case "${CI:-}" in
    '' | false | 0)
      echo "dashboard: $1; skipped (scripts/deps.sh installs it)"
      exit 77 ;;
    *)
      echo "dashboard: $1, and CI=$CI: failing"
      exit 1 ;;
  esac
}

[ -x "$chromium" ] || missing "no chromium at $chromium"
command -v node >/dev/null 2>&1 || missing "no node"
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 20 ] || missing "node $(node --version) is older than 20, which playwright-core needs"
command -v sqlite3 >/dev/null 2>&1 || missing "no sqlite3 (the command-line shell)"
[ -f "$here/node_modules/playwright-core/package.json" ] ||
  missing "no playwright-core in $here/node_modules"

rm -rf "$artifacts"
mkdir -p "$artifacts"
WARDEN_BIN=$bin WARDEN_ARTIFACTS=$artifacts CHROMIUM=$chromium \
  exec node --test --test-reporter=spec "$here/dashboard.test.mjs"
