#!/usr/bin/env bash
# The one list of what warden needs from Debian. Installs only what is missing,
# so a second run costs a few dpkg queries.
#
#   scripts/deps.sh          everything: building, the tests, the benchmarks
#   scripts/deps.sh build    only what building the `warden` binary needs
#                            (`make build`, `make demo`: a newcomer's first
#                            command should not wait for Chromium or clang)
set -euo pipefail
case "${1:-all}" in
  all | build) what=${1:-all} ;;
  *) echo "usage: scripts/deps.sh [all|build]" >&2; exit 2 ;;
esac

# What the `warden` binary and library need to build.
BUILD_PACKAGES=(
  build-essential cmake pkg-config   # toolchain (build-essential brings dpkg-dev: dpkg-shlibdeps)
  mold                               # a faster linker: CI links dozens of test programs
  libsqlite3-dev                     # embedded store (the default backend)
  libpq-dev                          # PostgreSQL store: the client library
  nlohmann-json3-dev                 # payloads, results, --json output
  libfmt-dev                         # formatting (g++ 12 has no <format>)
  libcli11-dev                       # command-line parsing
  libtomlplusplus-dev                # toml++: reads warden.toml (docs/configuration.md)
  libboost-dev                       # Boost.Beast/Asio: warden serve's HTTP (header-only)
  libssl-dev                         # OpenSSL: TLS for warden serve, SHA-256 of API tokens
  libsystemd-dev                     # sd_notify under a Type=notify unit (optional: WARDEN_SYSTEMD)
)

# What the tests, the packaging check and the benchmarks need besides.
TEST_PACKAGES=(
  ccache                             # make test: a compiler cache kept between runs (scripts/test-all.sh)
  file                               # cpack's .deb: finds the binaries dpkg-shlibdeps reads
  postgresql                         # a throwaway server for the tests
  iproute2                           # ip netns/veth for the partition test; ss for a keepalive test
  libfaketime                        # steps the wall clock of the clock-step test's processes
  systemd                            # tests: systemd-analyze verify checks deploy/systemd/*.service.in
  curl openssl                       # tests: an HTTP client that is not the server's; test certificates
  sqlite3                            # tests/web: writes a node name no command accepts, by hand
  wrk                                # bench/http.sh: HTTP load (keep-alive, a Lua script, latency percentiles)
  libgtest-dev libgmock-dev          # tests
  clang libclang-rt-14-dev llvm-14   # fuzzing (fuzz/run.sh): clang 14, its libFuzzer
                                     # runtime (only recommended by clang), llvm-symbolizer;
                                     # clang's -Wthread-safety (scripts/thread-safety.sh)
  redis-server                       # BullMQ's store, for the benchmark
  gnuplot-nox                        # the benchmark's plots
  prometheus                         # promtool: checks and unit-tests the alert rules
                                     # (deploy/prometheus/); its server is stopped below
  chromium                           # the dashboard's end-to-end test (tests/web): a real
                                     # headless browser, driven by playwright-core from npm
)

# The dashboard's end-to-end test (tests/web) drives that chromium with
# playwright-core, from npm at the version tests/web/package-lock.json pins
# (it downloads no browser of its own); installed again only when the lock
# file changes. Run last, once npm is there.
web_test_modules() {
  local web
  web=$(cd "$(dirname "$0")/.." && pwd)/tests/web
  cmp -s "$web/package-lock.json" "$web/node_modules/.deps-lock" 2>/dev/null && return
  echo "deps: installing tests/web's node modules (playwright-core)"
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --prefix "$web" --no-audit --no-fund --loglevel=error >/dev/null
  cp "$web/package-lock.json" "$web/node_modules/.deps-lock"
}

PACKAGES=("${BUILD_PACKAGES[@]}")
[ "$what" = all ] && PACKAGES+=("${TEST_PACKAGES[@]}")

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "install ok installed" >/dev/null || missing+=("$p")
done
# npm installs the benchmark's peers. The machine's Node.js may come with its
# own npm (NodeSource's nodejs), which Debian's npm would conflict with.
[ "$what" = all ] && { command -v npm >/dev/null || missing+=(npm); }
if [ ${#missing[@]} -eq 0 ]; then
  if [ "$what" = all ]; then web_test_modules; fi
  exit 0
fi
echo "deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
# prometheus is here for promtool alone, but its package also enables and
# starts a Prometheus server (systemd unit, or its init script where there is
# no systemd), which would scrape and store data on this machine from then
# on. Stop and disable the server we just installed; one installed before
# this script ran is left as it was.
if [[ " ${missing[*]} " == *" prometheus "* ]]; then
  if [ -d /run/systemd/system ]; then
    $SUDO systemctl disable --now prometheus.service
  else
    $SUDO /etc/init.d/prometheus stop
    $SUDO update-rc.d prometheus disable
  fi
fi
if [ "$what" = all ]; then web_test_modules; fi
