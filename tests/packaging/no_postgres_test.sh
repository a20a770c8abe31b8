#!/usr/bin/env bash
# A build without PostgreSQL (-DWARDEN_POSTGRES=OFF), tested without a
# tree of its own (which would compile everything again, minutes on CI):
#  1. warden_nopg, linked in this tree from the very objects such a build
#     compiles (CMakeLists.txt: warden_lib_objects, warden_cli_objects, and
#     src/store/without_postgres/ for the store), has no libpq, refuses a
#     postgresql:// database with one clear error (at once: nothing to
#     wait for), and works on SQLite;
#  2. configuring the source tree with -DWARDEN_POSTGRES=OFF (a few
#     seconds) finds no libpq, turns the tests and benchmarks off, and no
#     compile or link line of the result names libpq or a PostgreSQL
#     source other than pg_url.cc (which only redacts passwords).
#
#   no_postgres_test.sh WARDEN_NOPG WARDEN SOURCE_DIR WORK_DIR
set -euo pipefail
. "$(dirname "$0")/lib.sh"
nopg=$1 warden=$2 src=$3 work=$4
need cmake ldd timeout

rm -rf "$work"
mkdir -p "$work"

ldd "$warden" | grep libpq >/dev/null || fail "ldd does not show libpq in $warden either: the check is blind"
if ldd "$nopg" | grep libpq; then fail "$nopg links libpq"; fi

set +e
out=$(timeout 20 "$nopg" --db 'postgresql://app:s3cret@127.0.0.1:1/jobs' worker --allow-cmd 2>&1)
rc=$?
set -e
echo "$out"
[ $rc -eq 1 ] || fail "exit $rc, not 1"
[ "$out" = "warden: this warden was built without PostgreSQL (-DWARDEN_POSTGRES=OFF), so it cannot open a postgresql:// database; use a SQLite file (--db PATH), or a build with PostgreSQL" ] ||
  fail "not the one line expected"
json=$("$nopg" --db postgres://h/db stats --json 2>/dev/null || true)
grep -q '"code": "failed_precondition"' <<<"$json" || fail "--json: $json"

db=$work/jobs.db
"$nopg" --db "$db" add --cmd 'echo sqlite works' >/dev/null
"$nopg" --db "$db" worker --allow-cmd --exit-when-idle --log-level error
"$nopg" --db "$db" jobs --state succeeded --json | grep '"stdout": "sqlite works' >/dev/null ||
  fail "the command job did not succeed on SQLite"

tree=$work/tree
cmake -S "$src" -B "$tree" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release \
  -DWARDEN_POSTGRES=OFF >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configure"; }
grep -q 'warden: PostgreSQL OFF, tests OFF, benchmarks OFF' "$work/configure.log" ||
  fail "the configuration is not SQLite alone: $(grep 'warden:' "$work/configure.log")"
# With WARDEN_UNITY the sources are compiled through the unity files CMake
# writes at configure time: they name every source too.
rules=$(find "$tree" -name flags.make -o -name link.txt -o -name build.make -o -name 'unity_*.cxx')
[ -n "$rules" ] || fail "no build rules in $tree"
# shellcheck disable=SC2086
if grep -l -e 'libpq' -e '-lpq' -e 'include/postgresql' $rules; then
  fail "a compile or link line above names libpq"
fi
# shellcheck disable=SC2086
if grep -h -o 'src/store/postgres/[a-z_]*\.cc' $rules | sort -u | grep -v pg_url.cc; then
  fail "PostgreSQL sources above are built"
fi
# shellcheck disable=SC2086
grep -q 'without_postgres/open_postgres.cc' $rules || fail "the store without PostgreSQL is not built"
echo "without PostgreSQL: no libpq, one clear error, SQLite works; configure: SQLite alone"
