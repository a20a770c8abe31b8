#!/usr/bin/env bash
# A program outside the tree (consumer/) built against the tree
# install_test.sh installed, and run: it enqueues one job on an SQLite file
# and runs it in process.
#
#   consumer_test.sh cmake|pkg-config SOURCE_DIR WORK_DIR
# cmake: find_package(warden) with CMAKE_PREFIX_PATH = the installed tree
# (and nothing of the source or build tree); pkg-config: `pkg-config
# --cflags --libs warden` from the installed warden.pc, on c++ lines.
# Each way builds the program and a shared library holding libwarden.a's
# code (which needs it position-independent), and runs both: the program
# alone, then the program calling the library it loads.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
how=$1 src=$2 work=$3
prefix=$work/prefix
[ -x "$prefix/bin/warden" ] || fail "no installed tree in $prefix (packaging_install sets it up)"
libdir=$(libdir_of "$prefix")
consumer=$src/tests/packaging/consumer
out=$work/consumer-$how
rm -rf "$out"
mkdir -p "$out"

case $how in
  cmake)
    need cmake c++
    cmake -S "$consumer" -B "$out" -DCMAKE_PREFIX_PATH="$prefix" >"$out/configure.log" ||
      { cat "$out/configure.log"; fail "configure"; }
    found=$(sed -n 's/^warden_DIR:PATH=//p' "$out/CMakeCache.txt")
    [ "$found" = "$libdir/cmake/warden" ] || fail "find_package found warden in '$found'"
    cmake --build "$out" >"$out/build.log" 2>&1 || { cat "$out/build.log"; fail "build"; }
    ;;
  pkg-config)
    need pkg-config c++
    export PKG_CONFIG_PATH=$libdir/pkgconfig
    flags=$(pkg-config --cflags --libs warden) || fail "pkg-config warden"
    [ "$(realpath "$(pkg-config --variable=prefix warden)")" = "$(realpath "$prefix")" ] ||
      fail "warden.pc's prefix is not where it was installed"
    echo "c++ -std=c++20 -fPIC run.cc main.cc / -shared run.o, with $flags"
    # shellcheck disable=SC2086  # the flags are words
    {
      c++ -std=c++20 -fPIC -c "$consumer/run.cc" $flags -o "$out/run.o" &&
        c++ -std=c++20 "$consumer/main.cc" "$out/run.o" $flags -ldl -o "$out/consumer" &&
        c++ -shared "$out/run.o" $flags -o "$out/libconsumer_plugin.so"
    } || fail "c++"
    ;;
  *) fail "cmake or pkg-config, not $how" ;;
esac

want='job 1 succeeded: {"greeting":"hello, installed tree"}'
result=$("$out/consumer" "$out/jobs.db") || fail "the consumer failed: $result"
echo "$result"
[ "$result" = "$want" ] || fail "unexpected output"
plugin=$out/libconsumer_plugin.so
[ -f "$plugin" ] || fail "no $plugin"
result=$("$out/consumer" "$out/plugin-jobs.db" "$plugin") ||
  fail "the consumer's shared library failed: $result"
echo "from $(basename "$plugin"): $result"
[ "$result" = "$want" ] || fail "unexpected output from the shared library"
