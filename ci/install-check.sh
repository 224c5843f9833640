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

# The install and uninstall lines of docs/operating.md (block
# operating-install) are what run here, staged: PREFIX ours, DESTDIR
# added, and without sudo and ldconfig, which are root's.  The README's
# install line (block readme-install) is the same line.
staged() { # staged N: line N of the block, as run here
    python3 tests/docblocks.py operating-install | sed -n "${1}p" |
        sed -e 's/ *#.*//' -e 's/ *&& *sudo ldconfig//' -e 's/^sudo //' \
            -e "s|PREFIX=/usr/local|PREFIX=$prefix DESTDIR=$stage|"
}
install_cmd=$(staged 1)
uninstall_cmd=$(staged 2)
check "the install line is 'scons install PREFIX=...'" \
    test "$install_cmd" = "scons install PREFIX=$prefix DESTDIR=$stage"
check "the uninstall line is 'scons uninstall PREFIX=...'" \
    test "$uninstall_cmd" = "scons uninstall PREFIX=$prefix DESTDIR=$stage"
check "the README's install line is docs/operating.md's" \
    test "$(python3 tests/docblocks.py readme-install)" = \
         "$(python3 tests/docblocks.py operating-install | sed -n 1p)"
$install_cmd -Q >/dev/null

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
check "man page sqlease(3) installed" test -f "$root/share/man/man3/sqlease.3"
check "man 3 sqlease finds it"        sh -c "MANPATH='$root/share/man' man -w 3 sqlease | grep -q '$root/share/man/man3/sqlease.3'"
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

# The build recipes of docs/c-api.md, run as written in a directory of
# their own with the README's program as app.c, against the staged copy:
# its paths (/usr/local, /opt/sqlease) become the staged ones, and no
# LD_LIBRARY_PATH is inherited.
recipe() { # recipe BLOCK DIR: run the block's commands in DIR, output in DIR/log
    mkdir -p "$2"
    python3 tests/docblocks.py readme-c > "$2/app.c"
    python3 tests/docblocks.py "$1" |
        sed -e "s|/opt/sqlease/lib/pkgconfig|$tmp/pc|g" -e "s|/usr/local|$root|g" > "$2/recipe.sh"
    (cd "$2" && env -u LD_LIBRARY_PATH bash -e recipe.sh > log 2>&1) && echo ok > "$2/status" ||
        { echo "---- $1 failed:"; cat "$2/recipe.sh" "$2/log"; }
}
recipe c-api-rpath "$tmp/rp"
recipe c-api-ld-library-path "$tmp/lp"
recipe c-api-build "$tmp/bl"
check "docs: the rpath recipe (c-api-rpath) builds and runs the program" \
    sh -c "test -f '$tmp/rp/status' && grep -q 'stop the work (shutdown)' '$tmp/rp/log'"
check "docs: its program finds the staged library by its rpath" \
    sh -c "env -u LD_LIBRARY_PATH ldd '$tmp/rp/app' | grep -q '=> $root/lib/libsqlease.so.$so '"
check "docs: the LD_LIBRARY_PATH recipe (c-api-ld-library-path) runs the program" \
    sh -c "test -f '$tmp/lp/status' && grep -q 'stop the work (shutdown)' '$tmp/lp/log'"
check "docs: without either, it fails as docs/c-api.md says" \
    sh -c "cd '$tmp/lp' && ! env -u LD_LIBRARY_PATH ./app > nolib.log 2>&1 &&
           grep -q 'libsqlease.so.$so: cannot open shared object file' nolib.log"
check "docs: the shared and static lines (c-api-build) build; the static one runs" \
    sh -c "test -f '$tmp/bl/status' && cd '$tmp/bl' && ! ldd ./app | grep -q libsqlease &&
           ./app | grep -q 'stop the work (shutdown)'"
check "docs: the CMake lines (c-api-cmake) are those examples/CMakeLists.txt builds" \
    sh -c "python3 tests/docblocks.py c-api-cmake | sed -e 's/ *#.*//' -e 's/(app /(scheduler /' |
           while read -r l; do grep -qF \"\$l\" examples/CMakeLists.txt || exit 1; done"

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
    sh -c "test -x '$tmp/cmake/scheduler_static' && ! ldd '$tmp/cmake/scheduler_static' | grep -q libsqlease"
db2="Driver=SQLite3;Database=$tmp/cmake.db"
"$tmp/cmake/scheduler" "$db2" 2 > "$tmp/c.out" 2>"$tmp/c.err" || true
"$tmp/cmake/scheduler_static" "$db2" 2 > "$tmp/s.out" 2>"$tmp/s.err" || true
check "CMake-built example runs and holds"        grep -q 'tick (token' "$tmp/c.out"
check "CMake-built static example runs and holds" grep -q 'tick (token' "$tmp/s.out"
# A version this installation does not satisfy is refused.
mkdir -p "$tmp/cmake-v"
printf 'cmake_minimum_required(VERSION 3.13)\nproject(v C)\nfind_package(sqlease %s.%s CONFIG REQUIRED)\n' \
    "$major" "$((minor + 1))" > "$tmp/cmake-v/CMakeLists.txt"
# It must fail for the version's sake: a CMake that cannot configure at
# all (no build program, no compiler) fails too, and must not pass this.
check "CMake: a newer minor version is not found" \
    sh -c "! cmake -S '$tmp/cmake-v' -B '$tmp/cmake-v/b' -DCMAKE_PREFIX_PATH='$root' >'$tmp/cmake-v.log' 2>&1 &&
           grep -q 'compatible with requested version' '$tmp/cmake-v.log' &&
           ! grep -q 'CMAKE_MAKE_PROGRAM is not set\\|CMAKE_C_COMPILER not set' '$tmp/cmake-v.log'"

# The static link of docs/c-api.md, from a directory outside the repository.
(cd "$tmp" && cc -std=c11 -Wall -Wextra -o scheduler-static "$src/examples/scheduler.c" \
    -I"$root/include" "$root/lib/libsqlease.a" -lodbc -lodbcinst -luuid -pthread)
check "static link from outside the repository"  sh -c "test -x '$tmp/scheduler-static' && ! ldd '$tmp/scheduler-static' | grep -q libsqlease"
"$tmp/scheduler-static" "Driver=SQLite3;Database=$tmp/static.db" 2 > "$tmp/st.out" 2>&1 || true
check "statically linked example runs and holds" grep -q 'tick (token' "$tmp/st.out"

# Uninstall: every file and link install wrote goes, the build stays.
$uninstall_cmd -Q >/dev/null
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
