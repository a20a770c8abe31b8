#!/bin/sh
# The Prometheus alert rules (deploy/prometheus/, docs/alerts.md): promtool
# checks the rule file, then runs its unit tests.
#
#   tests/alerts/check_alert_rules.sh deploy/prometheus
# Environment: PROMTOOL (default promtool). Without promtool it skips (exit
# 77, ctest's SKIP_RETURN_CODE) on a workstation and fails under CI=true.
set -eu

dir=${1:?usage: check_alert_rules.sh DIR (the one holding warden-alerts.yml)}
promtool=${PROMTOOL:-promtool}

if ! command -v "$promtool" >/dev/null 2>&1; then
  case "${CI:-}" in
    '' | false | 0)
      echo "alert_rules: $promtool not found; skipped (scripts/deps.sh installs prometheus, which has it)"
      exit 77 ;;
    *)
      echo "alert_rules: $promtool not found, and CI=$CI: failing"
      exit 1 ;;
  esac
fi

"$promtool" check rules "$dir/warden-alerts.yml"
"$promtool" test rules "$dir/warden-alerts_test.yml"
