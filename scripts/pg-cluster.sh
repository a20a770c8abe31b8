#!/usr/bin/env bash
# A real, throwaway PostgreSQL cluster for the tests, started by the tests
# themselves (CI has no database server of its own).
#
#   pg-cluster.sh start DIR         initdb DIR/data, start it on a free port on
#                                   127.0.0.1, create database warden_test;
#                                   prints the URL (also kept in DIR/url)
#   pg-cluster.sh stop DIR          fast shutdown; quiet if not running
#   pg-cluster.sh restart DIR       fast restart, same port and options
#   pg-cluster.sh kill-backends DIR terminate every client connection (but
#                                   our own) and wait until they are gone;
#                                   prints how many were terminated
#   pg-cluster.sh run CMD...        run CMD against a fresh cluster that is
#                                   stopped and removed when CMD ends
#
# `run` exports to CMD:
#   WARDEN_TEST_PG_URL        postgresql://postgres@127.0.0.1:PORT/warden_test
#   WARDEN_TEST_PG_CLUSTER    the cluster's DIR (absolute)
#   WARDEN_PG_CLUSTER_SCRIPT  this script (absolute), for restart/kill-backends
# If WARDEN_TEST_PG_URL is already set, `run` only execs CMD: that points the
# tests at a server of your own (then no cluster DIR exists, so tests that
# restart the server or kill its connections must skip).
#
# The server binaries come from Debian's postgresql package (scripts/deps.sh).
# PostgreSQL will not run as root: as root the cluster belongs to the
# `postgres` system user and its commands run through runuser. Authentication
# is `trust` and the server listens on 127.0.0.1 only (plus the addresses
# of PG_CLUSTER_LISTEN_EXTRA, below); fsync stays on, since durable commits
# are part of what the tests and benchmarks measure.
#
# Environment (optional):
#   PG_CLUSTER_LISTEN_EXTRA   for `start` (and `run`): more addresses to
#                             listen on besides 127.0.0.1, each ADDR[/PREFIX],
#                             separated by commas or spaces, e.g.
#                             "10.213.0.1/24". Every ADDR must already be
#                             configured on an interface of the network
#                             namespace the server starts in (start fails,
#                             and stops the server, if one cannot be bound).
#                             pg_hba.conf gets `host all all ADDR/PREFIX
#                             trust` (PREFIX defaults to the single address),
#                             so clients on that network need no password.
#                             `restart` keeps them; the URL still names
#                             127.0.0.1.
#
# Messages go to stderr, prefixed "pg-cluster:"; stdout carries only results.
set -euo pipefail
shopt -s inherit_errexit   # also inside $(...), e.g. url=$(cmd_start ...)

SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
DB=warden_test
PG_USER=postgres   # both the superuser inside the cluster and the OS user

say() { echo "pg-cluster: $*" >&2; }
die() { say "$*"; exit 1; }

usage() {
  echo "usage:" >&2
  sed -n '5,15s/^# //p' "$SCRIPT" >&2
  exit 2
}

is_root() { [ "$(id -u)" -eq 0 ]; }

# Run a server-side command as the cluster's owner: ourselves, or the
# postgres user when we are root. The working directory is / so that the
# postgres user never starts in a directory it cannot read (e.g. /root).
as_owner() {
  if is_root; then
    (cd / && runuser -u "$PG_USER" -- "$@")
  else
    "$@"
  fi
}

# Launch the server with nothing open but stdin/stdout/stderr: otherwise the
# postmaster inherits whatever pipes our caller had (make's jobserver, a CI
# runner's output capture) and would hold them open for its lifetime.
as_owner_no_fds() {
  (
    for fd in /proc/"$BASHPID"/fd/*; do
      fd=${fd##*/}
      if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi
    done
    as_owner "$@"
  )
}

# The newest /usr/lib/postgresql/*/bin that has a complete server.
find_bindir() {
  local d best=""
  while IFS= read -r d; do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ]; then
      best=$d
    fi
  done < <(compgen -G '/usr/lib/postgresql/*/bin' | sort -V)
  [ -n "$best" ] || die "no PostgreSQL server found (need initdb, pg_ctl and postgres under /usr/lib/postgresql/*/bin); run scripts/deps.sh"
  echo "$best"
}

# A client tool (psql, pg_isready): the server's own copy if it has one.
client() {
  local bindir=$1 tool=$2
  if [ -x "$bindir/$tool" ]; then
    echo "$bindir/$tool"
  else
    command -v "$tool" || die "$tool not found; run scripts/deps.sh"
  fi
}

# DIR made absolute, without requiring it to exist yet.
abs_dir() {
  [ -n "${1:-}" ] || usage
  readlink -m -- "$1"
}

# The bin dir a started cluster was created with.
cluster_bindir() {
  local dir=$1
  [ -f "$dir/bindir" ] || die "$dir is not a cluster made by pg-cluster.sh start"
  cat "$dir/bindir"
}

port_in_use() {
  local port=$1
  if command -v ss >/dev/null 2>&1; then
    [ -n "$(ss -Htln "sport = :$port")" ]
  else
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null
  fi
}

# A port that nothing listens on, below Linux's default ephemeral range
# (32768+) so that outgoing connections do not take it meanwhile. Two
# clusters can still race for the same port; start retries on bind failure.
free_port() {
  local port i
  for i in $(seq 1 100); do
    port=$((20000 + RANDOM % 12768))
    if ! port_in_use "$port"; then
      echo "$port"
      return 0
    fi
  done
  die "no free TCP port found in 20000-32767 after $i tries"
}

# Wait (at most ~30 s) until the server accepts connections.
wait_ready() {
  local dir=$1 bindir=$2 port=$3 isready i
  isready=$(client "$bindir" pg_isready)
  for i in $(seq 1 300); do
    if "$isready" -q -h 127.0.0.1 -p "$port" -d postgres -U "$PG_USER"; then
      return 0
    fi
    sleep 0.1
  done
  say "server on port $port not ready after 30 s (tried $i times); log tail:"
  tail -n 30 "$dir/log" >&2 || true
  return 1
}

log_size() { stat -c %s "$1/log" 2>/dev/null || echo 0; }

# PG_CLUSTER_LISTEN_EXTRA, validated, into EXTRA_NETS: one ADDR/PREFIX
# each (IPv4 or IPv6, the prefix made explicit). Only digits, hex letters,
# dots, colons and one slash pass, so the values are safe in the server's
# command line and in pg_hba.conf.
EXTRA_NETS=()
parse_extra_listen() {
  local item addr prefix max
  local -a items=()
  EXTRA_NETS=()
  IFS=$', \t\n' read -r -a items <<<"${PG_CLUSTER_LISTEN_EXTRA:-}" || true
  for item in "${items[@]}"; do
    addr=${item%%/*}
    prefix=""
    [ "$addr" = "$item" ] || prefix=${item#*/}
    if [[ $addr =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]]; then
      max=32
    elif [[ $addr =~ ^[0-9a-fA-F:]+$ && $addr == *:*:* ]]; then
      max=128
    else
      die "PG_CLUSTER_LISTEN_EXTRA: '$item' is not an IPv4 or IPv6 address[/prefix]"
    fi
    [ -n "$prefix" ] || prefix=$max
    if ! [[ $prefix =~ ^[0-9]{1,3}$ ]] || [ "$prefix" -gt "$max" ]; then
      die "PG_CLUSTER_LISTEN_EXTRA: bad prefix in '$item' (want 0-$max)"
    fi
    EXTRA_NETS+=("$addr/$prefix")
  done
}

cmd_start() {
  local dir bindir port opts before attempt url listen net started_log
  dir=$(abs_dir "${1:-}")
  parse_extra_listen
  listen=127.0.0.1
  for net in "${EXTRA_NETS[@]}"; do listen+=",${net%/*}"; done
  # The DIR goes, unquoted, into the server's command line (pg_ctl -o runs
  # through sh) and becomes the unix socket's directory, whose path is
  # limited to ~107 bytes.
  case $dir in
    *[[:space:]\'\"\\\$\`,]*) die "DIR must not contain whitespace, quotes, commas, \$, \` or backslashes: $dir" ;;
  esac
  [ ${#dir} -le 90 ] || die "DIR path too long for a unix socket (max 90 characters): $dir"
  [ ! -e "$dir/data" ] || die "$dir/data already exists"
  bindir=$(find_bindir)

  mkdir -p -- "$dir"
  if is_root; then
    if ! id -u "$PG_USER" >/dev/null 2>&1; then
      say "creating system user $PG_USER"
      useradd --system --user-group --home-dir /nonexistent --no-create-home \
        --shell /usr/sbin/nologin "$PG_USER"
    fi
    chmod 755 "$dir"   # mktemp makes 0700; the postgres user must get in
    chown "$PG_USER:" "$dir"
    as_owner test -w "$dir" -a -x "$dir" ||
      die "user $PG_USER cannot write to $dir (is a parent directory closed to it?)"
  fi
  echo "$bindir" >"$dir/bindir"

  if ! as_owner "$bindir/initdb" -D "$dir/data" -U "$PG_USER" --auth=trust \
      --locale=C --encoding=UTF8 --no-sync >"$dir/initdb.log" 2>&1; then
    cat "$dir/initdb.log" >&2
    die "initdb failed in $dir/data"
  fi
  for net in "${EXTRA_NETS[@]}"; do
    echo "host all all $net trust" | as_owner tee -a "$dir/data/pg_hba.conf" >/dev/null
  done

  for attempt in $(seq 1 10); do
    port=$(free_port)
    opts="-c listen_addresses=$listen -p $port -c unix_socket_directories=$dir -c max_connections=300 -c fsync=on"
    before=$(log_size "$dir")
    if as_owner_no_fds "$bindir/pg_ctl" -w -t 30 -s -D "$dir/data" -l "$dir/log" -o "$opts" start >&2; then
      # With several addresses the server starts if it can bind any one of
      # them, and only logs the others: check that it has them all.
      started_log=$(tail -c +"$((before + 1))" "$dir/log" 2>/dev/null || true)
      if ! grep -q 'could not create listen socket' <<<"$started_log"; then
        break
      fi
      cmd_stop "$dir" || true
      if grep -q 'could not bind.*Address already in use' <<<"$started_log"; then
        say "port $port was taken on one of $listen meanwhile; trying another (attempt $attempt)"
        port=""
        continue
      fi
      say "server could not listen on every address of $listen; log tail:"
      tail -n 30 "$dir/log" >&2 || true
      die "is each PG_CLUSTER_LISTEN_EXTRA address configured in this network namespace?"
    fi
    # Someone took the port between our check and the server's bind: retry.
    if tail -c +"$((before + 1))" "$dir/log" 2>/dev/null | grep 'could not create any TCP/IP sockets' >/dev/null; then
      say "port $port was taken meanwhile; trying another (attempt $attempt)"
      port=""
      continue
    fi
    say "server failed to start; log tail:"
    tail -n 30 "$dir/log" >&2 || true
    cmd_stop "$dir" || true
    exit 1
  done
  [ -n "$port" ] || die "could not find a port the server could bind after $attempt attempts"
  echo "$opts" >"$dir/options"
  echo "$port" >"$dir/port"

  if ! wait_ready "$dir" "$bindir" "$port" ||
     ! "$(client "$bindir" psql)" -X -q -v ON_ERROR_STOP=1 \
         -d "postgresql://$PG_USER@127.0.0.1:$port/postgres" \
         -c "CREATE DATABASE $DB" >&2; then
    cmd_stop "$dir" || true
    die "could not make database $DB on port $port"
  fi

  url="postgresql://$PG_USER@127.0.0.1:$port/$DB"
  echo "$url" >"$dir/url"
  say "started PostgreSQL $(cat "$dir/data/PG_VERSION") in $dir at $url"
  echo "$url"
}

cmd_stop() {
  local dir bindir
  dir=$(abs_dir "${1:-}")
  if [ ! -f "$dir/data/PG_VERSION" ] || [ ! -f "$dir/bindir" ]; then
    return 0   # nothing was ever started here
  fi
  bindir=$(cluster_bindir "$dir")
  # status: 0 running, 3 not running, 4 no data directory.
  as_owner "$bindir/pg_ctl" -D "$dir/data" status >/dev/null 2>&1 || return 0
  if ! as_owner "$bindir/pg_ctl" -w -t 60 -s -D "$dir/data" -m fast stop >&2; then
    say "fast shutdown failed; shutting down immediately"
    as_owner "$bindir/pg_ctl" -w -t 30 -s -D "$dir/data" -m immediate stop >&2
  fi
}

cmd_restart() {
  local dir bindir
  dir=$(abs_dir "${1:-}")
  bindir=$(cluster_bindir "$dir")
  if [ ! -f "$dir/options" ] || [ ! -f "$dir/port" ]; then
    die "$dir was never started"
  fi
  # pg_ctl restart would reuse data/postmaster.opts by itself; passing the
  # options explicitly also covers a server that is not running. -l keeps
  # the server's output in the log instead of our stdout.
  if ! as_owner_no_fds "$bindir/pg_ctl" -w -t 30 -s -D "$dir/data" -l "$dir/log" -m fast \
      -o "$(cat "$dir/options")" restart >&2; then
    say "restart failed; log tail:"
    tail -n 30 "$dir/log" >&2 || true
    exit 1
  fi
  wait_ready "$dir" "$bindir" "$(cat "$dir/port")"
}

cmd_kill_backends() {
  local dir bindir n
  dir=$(abs_dir "${1:-}")
  bindir=$(cluster_bindir "$dir")
  [ -f "$dir/port" ] || die "$dir was never started"
  # pg_terminate_backend(pid, 5000) waits (up to 5 s each) until the backend
  # has really exited, so the connections are gone when we return.
  n=$("$(client "$bindir" psql)" -X -q -At -v ON_ERROR_STOP=1 \
    -d "postgresql://$PG_USER@127.0.0.1:$(cat "$dir/port")/postgres" -c "
      SELECT count(*) FILTER (WHERE terminated)
      FROM (SELECT pg_terminate_backend(pid, 5000) AS terminated
            FROM pg_stat_activity
            WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()) t")
  say "terminated $n client backend(s)"
  echo "$n"
}

# --- run ---------------------------------------------------------------------

RUN_DIR=""

run_teardown() {
  if [ -n "$RUN_DIR" ]; then
    cmd_stop "$RUN_DIR" || say "could not stop the cluster in $RUN_DIR"
    rm -rf -- "$RUN_DIR"
    RUN_DIR=""
  fi
}

run_exit() {
  local rc=$?
  trap - EXIT
  run_teardown
  exit "$rc"
}

# Tear down, then die of the same signal so that our caller sees it. (bash
# runs this only once the foreground CMD has returned; a terminal's ^C
# reaches CMD too.)
run_signal() {
  trap - EXIT "$1"
  run_teardown
  kill -s "$1" "$$"
}

cmd_run() {
  [ $# -ge 1 ] || usage
  if [ -n "${WARDEN_TEST_PG_URL:-}" ]; then
    exec "$@"
  fi
  RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/warden-pg.XXXXXX")
  trap run_exit EXIT
  local sig
  for sig in INT TERM HUP; do
    # shellcheck disable=SC2064  # $sig is meant to expand now
    trap "run_signal $sig" "$sig"
  done

  WARDEN_TEST_PG_URL=$(cmd_start "$RUN_DIR")
  export WARDEN_TEST_PG_URL
  export WARDEN_TEST_PG_CLUSTER="$RUN_DIR"
  export WARDEN_PG_CLUSTER_SCRIPT="$SCRIPT"

  local status=0
  "$@" || status=$?
  exit "$status"
}

[ $# -ge 1 ] || usage
sub=$1
shift
case $sub in
  start)         [ $# -eq 1 ] || usage; cmd_start "$1" ;;
  stop)          [ $# -eq 1 ] || usage; cmd_stop "$1" ;;
  restart)       [ $# -eq 1 ] || usage; cmd_restart "$1" ;;
  kill-backends) [ $# -eq 1 ] || usage; cmd_kill_backends "$1" ;;
  run)           cmd_run "$@" ;;
  -h|--help|help) usage ;;
  *)             say "unknown subcommand: $sub"; usage ;;
esac
