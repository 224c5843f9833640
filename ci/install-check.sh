#!/usr/bin/env bash
# Install into a temporary prefix (through DESTDIR) and check what a
# packager and a user of the library would: the files and the soname
# links, that the shared library exports only sqlease_* symbols, that the
# version agrees everywhere, and that the example builds with pkg-config
# against the installed copy and runs (two instances: one holds).  Its
# counts go to $SQLEASE_RESULT_DIR (ci/results.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=ci/results.sh
. ci/results.sh

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=/opt/sqlease
stage="$tmp/stage"
root="$stage$prefix"
fail=0
passed=0
check() { # check DESCRIPTION COMMAND...
    if "${@:2}" >/dev/null 2>&1; then
        echo "ok    $1"; passed=$((passed + 1))
    else
        echo "FAIL  $1"; fail=$((fail + 1))
    fi
}

scons -Q install PREFIX="$prefix" DESTDIR="$stage" >/dev/null

ver=$(sed -n 's/^#define SQLEASE_VERSION "\(.*\)"$/\1/p' include/sqlease.h)
major=${ver%%.*}
check "header installed"              test -f "$root/include/sqlease.h"
check "static library installed"      test -f "$root/lib/libsqlease.a"
check "libsqlease.so.$ver installed"  test -f "$root/lib/libsqlease.so.$ver"
check "libsqlease.so.$major -> .$ver" test "$(readlink "$root/lib/libsqlease.so.$major")" = "libsqlease.so.$ver"
check "libsqlease.so link"            test -L "$root/lib/libsqlease.so"
check "soname libsqlease.so.$major"   sh -c "readelf -d '$root/lib/libsqlease.so.$ver' | grep -q 'SONAME.*libsqlease.so.$major'"
check "sqlease binary installed"      test -x "$root/bin/sqlease"
check "man page sqlease(1) installed" test -f "$root/share/man/man1/sqlease.1"
check "pkg-config file installed"     test -f "$root/lib/pkgconfig/sqlease.pc"

# Only the public API leaves the shared library.
others=$(nm -D --defined-only "$root/lib/libsqlease.so.$ver" | awk '{print $3}' | grep -v '^sqlease_' || true)
if [ -z "$others" ]; then
    echo "ok    exports only sqlease_* ($(nm -D --defined-only "$root/lib/libsqlease.so.$ver" | wc -l) symbols)"
    passed=$((passed + 1))
else
    echo "FAIL  exported symbols outside the API:"; echo "$others"; fail=$((fail + 1))
fi

# The .pc file says where it was installed (PREFIX); point pkg-config at
# the staged copy by rewriting its prefix.
mkdir -p "$tmp/pc"
sed "s|^prefix=.*|prefix=$root|" "$root/lib/pkgconfig/sqlease.pc" > "$tmp/pc/sqlease.pc"
export PKG_CONFIG_PATH="$tmp/pc"
check "pkg-config --modversion = $ver" test "$(pkg-config --modversion sqlease)" = "$ver"
check "sqlease --version = $ver"       test "$("$root/bin/sqlease" --version)" = "sqlease $ver"

# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -o "$tmp/scheduler" examples/scheduler.c $(pkg-config --cflags --libs sqlease)
check "example links the installed shared library" \
    sh -c "LD_LIBRARY_PATH='$root/lib' ldd '$tmp/scheduler' | grep -q '$root/lib/libsqlease.so.$major'"

db="Driver=SQLite3;Database=$tmp/example.db;Timeout=5000"
LD_LIBRARY_PATH="$root/lib" "$tmp/scheduler" "$db" 5 > "$tmp/a.out" 2>"$tmp/a.err" &
a=$!
# B starts once A holds, and stops before A does: it must never tick.
for _ in $(seq 1 100); do grep -q tick "$tmp/a.out" && break; sleep 0.05; done
LD_LIBRARY_PATH="$root/lib" "$tmp/scheduler" "$db" 3 > "$tmp/b.out" 2>"$tmp/b.err" || true
wait "$a" || true
# migrate seeds the token from the database clock: A's one take has the
# next one, the same on every tick.
check "example A ticks while it holds, with one token" \
    sh -c "grep -qE '^tick \(token [1-9][0-9]*\)$' '$tmp/a.out' && [ \$(grep '^tick' '$tmp/a.out' | sort -u | wc -l) = 1 ]"
check "example B only waits while A holds"       sh -c "grep -q waiting '$tmp/b.out' && ! grep -q tick '$tmp/b.out'"

echo "$passed passed, $fail failed"
results_write install-check "$passed" "$fail"
[ "$fail" -eq 0 ]
