#!/bin/sh
# Runs openapi_test.mjs: installs its npm packages (the locked versions,
# again only when package-lock.json changes), then validates the server's
# responses against src/server/openapi.json.
#
#   tests/api/run.sh WARDEN_BIN
# Without node it skips (exit 77, ctest's SKIP_RETURN_CODE) on a
# workstation and fails under CI=true.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
export WARDEN_BIN="${1:?usage: run.sh WARDEN_BIN}"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  case "${CI:-}" in
    '' | false | 0) echo "openapi: node or npm not found; skipped (scripts/deps.sh installs npm)"; exit 77 ;;
    *) echo "openapi: node or npm not found, and CI=$CI: failing"; exit 1 ;;
  esac
fi
stamp="$here/node_modules/.warden-lock"
if ! cmp -s "$stamp" "$here/package-lock.json" 2>/dev/null; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$here/package-lock.json" "$stamp"
fi
exec node "$here/openapi_test.mjs"
