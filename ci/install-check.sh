#!/usr/bin/env bash
# Install into a temporary prefix (through DESTDIR) and check what a
# packager and a user of the library would: the files and the soname
# links, that the shared library exports exactly the public API and the
# static library holds no process or signal code, that the version agrees
# everywhere, that the example builds against the installed
# copy with pkg-config (and runs: two instances, one holds), with CMake's
# find_package (shared and static) and with docs/c-api.md's static-link
# command from outside the repository, and that `scons uninstall` removes
# every file install put there and nothing of the build.
# Its counts go to $SQLEASE_RESULT_DIR (ci/results.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=ci/results.sh
. ci/results.sh
src=$(pwd)
command -v cmake >/dev/null || { echo "install-check: cmake is needed (ci/packages-full.txt)"; exit 1; }

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

# The README's install line (block readme-install) is what runs here, but
# staged: DESTDIR added, and without sudo and ldconfig, which are root's.
readme=$(python3 tests/docblocks.py readme-install)
check "README's install line is 'scons install PREFIX=...'" \
    test "$readme" = "sudo scons install PREFIX=/usr/local && sudo ldconfig"
scons -Q install PREFIX="$prefix" DESTDIR="$stage" >/dev/null

ver=$(sed -n 's/^#define SQLEASE_VERSION "\(.*\)"$/\1/p' include/sqlease.h)
major=${ver%%.*}
minor=$(echo "$ver" | cut -d. -f2)
# The soname's version: the major version from 1.0 on, 0.MINOR before
# (SConstruct: a minor version before 1.0 may break the ABI).
if [ "$major" -gt 0 ]; then so=$major; else so="0.$minor"; fi
check "header installed"              test -f "$root/include/sqlease.h"
check "static library installed"      test -f "$root/lib/libsqlease.a"
check "libsqlease.so.$ver installed"  test -f "$root/lib/libsqlease.so.$ver"
check "libsqlease.so.$so -> .$ver"    test "$(readlink "$root/lib/libsqlease.so.$so")" = "libsqlease.so.$ver"
check "libsqlease.so link"            test -L "$root/lib/libsqlease.so"
check "soname libsqlease.so.$so"      sh -c "readelf -d '$root/lib/libsqlease.so.$ver' | grep -q 'SONAME.*\\[libsqlease.so.$so\\]'"
check "sqlease binary installed"      test -x "$root/bin/sqlease"
check "man page sqlease(1) installed" test -f "$root/share/man/man1/sqlease.1"
check "pkg-config file installed"     test -f "$root/lib/pkgconfig/sqlease.pc"
check "CMake package installed"       test -f "$root/lib/cmake/sqlease/sqleaseConfig.cmake"
check "CMake package version file"    test -f "$root/lib/cmake/sqlease/sqleaseConfigVersion.cmake"

# Only the public API leaves the shared library: exactly the functions
# sqlease.h marks SQLEASE_API (each declaration read up to its '(', not
# into the macro that may follow it).
want=$(sed -n '/^SQLEASE_API/{:a;/(/!{N;ba};p}' include/sqlease.h | grep -o 'sqlease_[a-z0-9_]*(' | tr -d '(' | sort -u)
got=$(nm -D --defined-only "$root/lib/libsqlease.so.$ver" | awk '{print $3}' | sort -u)
if [ -n "$want" ] && [ "$want" = "$got" ]; then
    echo "ok    exports exactly the $(echo "$want" | wc -l) SQLEASE_API functions"
    passed=$((passed + 1))
else
    echo "FAIL  exports differ from SQLEASE_API in include/sqlease.h:"
    diff <(echo "$want") <(echo "$got") | sed -e 's/^/    /'; fail=$((fail + 1))
fi

# The static library hides nothing, so its global names must say which
# are the API: every global it defines is either a SQLEASE_API function
# or carries the private prefix sqle_.  A library-internal function named
# sqlease_* (or with no prefix at all) would read as API to a user and
# could clash with the user's own names.
stray=$(nm --defined-only "$root/lib/libsqlease.a" 2>/dev/null | awk 'NF == 3 && $2 ~ /[TDBRC]/ {print $3}' \
        | sort -u | grep -v '^sqle_' | comm -23 - <(echo "$want") || true)
if [ -z "$stray" ]; then
    echo "ok    libsqlease.a: every global is SQLEASE_API or sqle_-private"; passed=$((passed + 1))
else
    echo "FAIL  libsqlease.a globals neither in SQLEASE_API nor prefixed sqle_:"
    echo "$stray" | sed -e 's/^/    /'; fail=$((fail + 1))
fi

# The tool's OS layer (src/cli/os.h: processes, signals, the terminal) is
# not in the library: the static library neither defines one of its
# functions nor calls a process or signal function of the C library.
bad=$( { nm --defined-only "$root/lib/libsqlease.a" 2>/dev/null | awk 'NF == 3 {print $3}' \
         | grep -E '^(cli_|sqle_(child|signal|process|job|stdio|file_replace|wall))' ;
       nm -u "$root/lib/libsqlease.a" 2>/dev/null | awk '{print $NF}' \
         | grep -xE '(fork|vfork|execve|execvp|posix_spawnp?|kill|killpg|sigaction|signal|sigprocmask|waitpid|wait|setpgid|setsid|tcsetpgrp|tcgetpgrp|pipe2?|prctl)' ; } \
       | sort -u || true)
if [ -z "$bad" ]; then
    echo "ok    libsqlease.a has no process or signal code"; passed=$((passed + 1))
else
    echo "FAIL  libsqlease.a defines or calls process/signal functions:"; echo "$bad"
    fail=$((fail + 1))
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
    sh -c "LD_LIBRARY_PATH='$root/lib' ldd '$tmp/scheduler' | grep -q '=> $root/lib/libsqlease.so.$so '"

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

# CMake: find_package(sqlease CONFIG) through CMAKE_PREFIX_PATH, the way
# examples/CMakeLists.txt shows; sqlease::sqlease links the shared library
# (its directory is in the build RPATH), sqlease::sqlease_static the
# static one and its dependencies.
cmake_ok=0
if cmake -S examples -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$root" >"$tmp/cmake.log" 2>&1 &&
   cmake --build "$tmp/cmake" >>"$tmp/cmake.log" 2>&1; then
    cmake_ok=1
else
    cat "$tmp/cmake.log"
fi
check "CMake: find_package(sqlease $major.$minor CONFIG) builds the example" test "$cmake_ok" = 1
check "CMake: sqlease::sqlease links the installed shared library" \
    sh -c "ldd '$tmp/cmake/scheduler' | grep -q '=> $root/lib/libsqlease.so.$so '"
check "CMake: sqlease::sqlease_static needs no libsqlease.so" \
    sh -c "! ldd '$tmp/cmake/scheduler_static' | grep -q libsqlease"
db2="Driver=SQLite3;Database=$tmp/cmake.db"
"$tmp/cmake/scheduler" "$db2" 2 > "$tmp/c.out" 2>"$tmp/c.err" || true
"$tmp/cmake/scheduler_static" "$db2" 2 > "$tmp/s.out" 2>"$tmp/s.err" || true
check "CMake-built example runs and holds"        grep -q 'tick (token' "$tmp/c.out"
check "CMake-built static example runs and holds" grep -q 'tick (token' "$tmp/s.out"
# A version this installation does not satisfy is refused.
mkdir -p "$tmp/cmake-v"
printf 'cmake_minimum_required(VERSION 3.13)\nproject(v C)\nfind_package(sqlease %s.%s CONFIG REQUIRED)\n' \
    "$major" "$((minor + 1))" > "$tmp/cmake-v/CMakeLists.txt"
check "CMake: a newer minor version is not found" \
    sh -c "! cmake -S '$tmp/cmake-v' -B '$tmp/cmake-v/b' -DCMAKE_PREFIX_PATH='$root' >/dev/null 2>&1"

# The static link of docs/c-api.md, from a directory outside the repository.
(cd "$tmp" && cc -std=c11 -Wall -Wextra -o scheduler-static "$src/examples/scheduler.c" \
    -I"$root/include" "$root/lib/libsqlease.a" -lodbc -lodbcinst -luuid -pthread)
check "static link from outside the repository"  sh -c "! ldd '$tmp/scheduler-static' | grep -q libsqlease"
"$tmp/scheduler-static" "Driver=SQLite3;Database=$tmp/static.db" 2 > "$tmp/st.out" 2>&1 || true
check "statically linked example runs and holds" grep -q 'tick (token' "$tmp/st.out"

# Uninstall: every file and link install wrote goes, the build stays.
scons -Q uninstall PREFIX="$prefix" DESTDIR="$stage" >/dev/null
left=$(find "$stage" \( -type f -o -type l \) | sed "s|^$stage||")
if [ -z "$left" ]; then
    echo "ok    scons uninstall removes every installed file"; passed=$((passed + 1))
else
    echo "FAIL  left after scons uninstall:"; echo "$left"; fail=$((fail + 1))
fi
check "scons uninstall leaves the build"          test -f build/lib/libsqlease.a -a -x build/bin/sqlease

echo "$passed passed, $fail failed"
results_write install-check "$passed" "$fail"
[ "$fail" -eq 0 ]
