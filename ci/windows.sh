#!/usr/bin/env bash
# Windows build, checked under Wine.  Cross-builds sqlease for 64-bit
# Windows with MinGW-w64 (scons PLATFORM_TARGET=mingw: build/mingw/), checks
# what the DLL exports and what sqlease.exe needs, then in a fresh,
# temporary WINEPREFIX runs the Windows test programs (tests/win/test_*.c,
# through tests/run_tests.py): test_cli_win.exe runs sqlease.exe the way a
# user does (--version, migrate, status --json, run with its token and
# exit status, run --no-wait against a held lease, release --force,
# supervise stopped by Ctrl-C, CMD dying with a killed sqlease.exe, an
# unknown driver, a DSN's lease settings from the registry, CMD inheriting
# only the standard handles, demo refused), test_platform_win.exe the
# platform layer; last, examples/scheduler.c linked against sqlease.dll.
#
# The database is the embedded default, SQLite through the host's ODBC:
# Wine's odbc32.dll hands ODBC calls to the host's unixODBC, which reads
# the host's odbcinst.ini ($ODBCSYSINI if set) like any native program, so
# Database= is a host (Unix) path, or one relative to the directory the
# program runs in.  Nothing Wine-specific is configured.
#
# Installs nothing (ci/packages-full.txt lists gcc-mingw-w64-x86-64, wine,
# wine64).  Prints one PASS or FAIL line per check (the test programs'
# checks among them) and exits non-zero if any failed; the counts go to
# $SQLEASE_RESULT_DIR (ci/results.sh).  Stops the prefix's wineserver (and
# with it every Windows process it ran) and removes the prefix on exit.
# Runs in about half a minute.
#
# Knobs (environment):
#   JOBS            parallel compile jobs (default: number of CPUs)
#   ALLOW_WARNINGS=1  do not fail the build on compiler warnings
#   WINE_TIMEOUT    seconds one Windows test program may run (default 120)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
# shellcheck source=ci/results.sh
. ci/results.sh

JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
ALLOW_WARNINGS=${ALLOW_WARNINGS:-0}
WINE_TIMEOUT=${WINE_TIMEOUT:-120}
OUT=build/mingw

passed=0
failed=0
t_start=$SECONDS
tmp=
boot_pid=

section() {
    printf '\n==================== %s ====================\n' "$*"
}

pass() {
    echo "PASS $*"
    passed=$((passed + 1))
}

fail() {
    echo "FAIL $*"
    failed=$((failed + 1))
}

# show NAME: what a failed Windows program printed.
show() {
    local f
    for f in "$tmp/$1.out" "$tmp/$1.err"; do
        [ -s "$f" ] || continue
        echo "---- ${f##*/}"
        sed -e 's/^/    /' "$f" | head -n 40
    done
}

finish() {
    section "Windows result"
    echo "$passed passed, $failed failed ($((SECONDS - t_start)) s)"
    results_write windows "$passed" "$failed"
    [ "$failed" -eq 0 ]
    exit
}

# Whatever happens: stop wineboot if it still runs (timeout passes the
# signal on), the prefix's wineserver with every process it still runs,
# then remove the prefix.
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
    if [ -n "$boot_pid" ]; then
        kill "$boot_pid" 2>/dev/null || true
        wait "$boot_pid" 2>/dev/null || true
    fi
    if [ -n "$tmp" ] && [ -d "$tmp" ]; then
        if [ -n "${WINEPREFIX:-}" ] && [ -d "$WINEPREFIX" ]; then
            wineserver -k 2>/dev/null || true
            wineserver -w 2>/dev/null || true
        fi
        rm -rf "$tmp"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ------------------------------------------------------------------ tools

section "tools"
missing=()
for tool in scons python3 x86_64-w64-mingw32-gcc x86_64-w64-mingw32-objdump wine wineserver odbcinst; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ "${#missing[@]}" -ne 0 ]; then
    fail "tools: missing ${missing[*]} (run: bash ci/install-deps.sh)"
    finish
fi
x86_64-w64-mingw32-gcc --version | head -n 1
wine --version 2>/dev/null || true
# The SQLite3 driver Wine will reach through the host's unixODBC.
if odbcinst -q -d -n SQLite3 >/dev/null 2>&1; then
    pass "host ODBC has driver SQLite3 (libsqliteodbc)"
else
    fail "host ODBC has no driver SQLite3: install libsqliteodbc"
    finish
fi

# ------------------------------------------------------------------ Wine prefix

# A new prefix takes seconds to create and needs nothing from the build:
# wineboot runs in the background while the cross-build runs.  One
# wineserver serves the whole run, persistent until cleanup stops it: one
# that a later wine command started would inherit that command's output
# and hold it open after the command ended.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sqlease-wine.XXXXXX")
mkdir -p "$tmp/home" "$tmp/bin" "$tmp/results"
export WINEPREFIX="$tmp/prefix"
export WINEDEBUG=-all
# No Mono/Gecko install prompts, no menu entries or file associations;
# HOME and XDG dirs inside the temporary directory so nothing is left in
# the real home; no display.
export WINEDLLOVERRIDES='mscoree,mshtml=;winemenubuilder.exe=d'
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" XDG_DATA_HOME="$tmp/home/.local/share"
export XDG_CACHE_HOME="$tmp/home/.cache"
unset DISPLAY WAYLAND_DISPLAY
mkdir -p "$WINEPREFIX"
wineserver -p </dev/null >"$tmp/wineserver.out" 2>&1
timeout 180 wine wineboot -i >"$tmp/wineboot.out" 2>&1 &
boot_pid=$!

# ------------------------------------------------------------------ build

# The command of docs/windows.md (block windows-build).
section "cross-build (scons PLATFORM_TARGET=mingw)"
t0=$SECONDS
log=$(mktemp)
rc=0
scons -j"$JOBS" PLATFORM_TARGET=mingw 2>&1 | tee "$log" || rc=$?
if [ "$rc" -ne 0 ]; then
    rm -f "$log"
    fail "cross-build (scons exit $rc)"
    finish
fi
if grep -q 'warning:' "$log"; then
    echo "---- compiler warnings:"
    grep 'warning:' "$log" | sort -u
    if [ "$ALLOW_WARNINGS" = 1 ]; then
        pass "cross-build ($((SECONDS - t0)) s; warnings allowed)"
    else
        fail "cross-build: compiler warnings"
    fi
else
    pass "cross-build, no warnings ($((SECONDS - t0)) s)"
fi
rm -f "$log"

win_tests=("$OUT"/tests/test_*.exe)
products=("$OUT/bin/sqlease.exe" "$OUT/bin/sqlease.dll" "$OUT/lib/libsqlease.dll.a"
          "$OUT/lib/libsqlease.a" "$OUT/tests/test_cli_win.exe" "$OUT/tests/test_platform_win.exe"
          "$OUT/tests/lease_child.exe")
absent=()
for f in "${products[@]}"; do
    [ -s "$f" ] || absent+=("$f")
done
if [ "${#absent[@]}" -eq 0 ]; then
    pass "build products: ${products[*]}"
else
    fail "build products missing: ${absent[*]}"
    finish
fi

# The DLL exports exactly the functions sqlease.h marks SQLEASE_API (each
# declaration read up to its '(', not into the macro that may follow it).
want=$(sed -n '/^SQLEASE_API/{:a;/(/!{N;ba};p}' include/sqlease.h | grep -o 'sqlease_[a-z0-9_]*(' \
       | tr -d '(' | sort -u)
got=$(x86_64-w64-mingw32-objdump -p "$OUT/bin/sqlease.dll" \
      | sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/p' | awk '/^[[:space:]]*\[ *[0-9]+\]/ {print $NF}' | sort -u)
if [ -n "$want" ] && [ "$want" = "$got" ]; then
    pass "sqlease.dll exports exactly the $(echo "$want" | wc -l) SQLEASE_API functions"
else
    fail "sqlease.dll exports differ from SQLEASE_API in include/sqlease.h:"
    diff <(echo "$want") <(echo "$got") | sed -e 's/^/    /'
fi

# sqlease.exe is linked statically: it needs no sqlease.dll, and neither
# it nor the DLL needs a MinGW runtime DLL (libgcc_s, libwinpthread): only
# what Windows has.
for f in sqlease.exe sqlease.dll; do
    imports=$(x86_64-w64-mingw32-objdump -p "$OUT/bin/$f" | awk '/DLL Name:/ {print $3}')
    echo "$f imports: $(echo "$imports" | tr '\n' ' ')"
    if grep -qiE '^(sqlease|lib.*)\.dll$' <<<"$imports"; then
        fail "$f needs a non-system DLL"
    else
        pass "$f needs only system DLLs"
    fi
done

# ------------------------------------------------------------------ Wine

section "Wine prefix"
t0=$SECONDS
boot_rc=0
wait "$boot_pid" || boot_rc=$?
boot_pid=
if [ "$boot_rc" -eq 0 ]; then
    pass "new WINEPREFIX ready (made during the build, then $((SECONDS - t0)) s more)"
else
    fail "wineboot -i in a new WINEPREFIX (exit $boot_rc)"
    sed -e 's/^/    /' "$tmp/wineboot.out" | tail -n 20
    finish
fi
# sqlease.exe alone in its directory (no DLL beside it), with the test
# programs and the CMD they give it; Windows looks for a program in the
# caller's own directory first.
cp "$OUT/bin/sqlease.exe" "$OUT/tests/lease_child.exe" "${win_tests[@]}" "$tmp/bin/"

# The test programs, each checked by its own assertions.  Under Wine a
# DSN is defined for the host's unixODBC: test_cli_win.exe writes the one
# it uses to the odbc.ini ODBCINI names.  The console host and desktop
# process Wine starts for test_cli_win.exe's console outlive it by
# seconds, holding its stderr: --drain 1 reads on for a second only.
section "Windows test programs under Wine (tests/win/test_*.c)"
progs=()
for t in "${win_tests[@]}"; do
    progs+=("$tmp/bin/${t##*/}")
done
rc=0
SQLEASE_RESULT_DIR=$tmp/results ODBCINI=$tmp/odbc.ini \
    python3 tests/run_tests.py --wrapper wine --timeout "$WINE_TIMEOUT" --drain 1 \
        --work "$tmp/work" --label "Windows test programs" "${progs[@]}" || rc=$?
read -r p f n < <(results_sum "$tmp/results")
if [ "$n" = 0 ]; then
    fail "Windows test programs: tests/run_tests.py exited $rc without a result"
else
    passed=$((passed + p))
    failed=$((failed + f))
fi

# The DLL from the other side: the C example, built as a user would
# (sqlease.h as it is, so dllimport; -lsqlease finds the import library),
# run with sqlease.dll beside it.  The example sleeps with nanosleep(),
# which MinGW has in libwinpthread: linked statically.
if [ -f examples/scheduler.c ]; then
    section "examples/scheduler.c against sqlease.dll under Wine"
    mkdir -p "$tmp/dll"
    if x86_64-w64-mingw32-gcc -std=c11 -Wall -Wextra -D__USE_MINGW_ANSI_STDIO=1 -Iinclude \
           -o "$tmp/dll/scheduler.exe" examples/scheduler.c -L"$OUT/lib" -lsqlease \
           -Wl,-Bstatic -lwinpthread -Wl,-Bdynamic >"$tmp/example.build" 2>&1 \
       && x86_64-w64-mingw32-objdump -p "$tmp/dll/scheduler.exe" >"$tmp/example.pe" \
       && grep -q 'DLL Name: sqlease.dll' "$tmp/example.pe"
    then
        cp "$OUT/bin/sqlease.dll" "$tmp/dll/"
        rc=0
        (cd "$tmp/dll" && timeout "$WINE_TIMEOUT" wine scheduler.exe "Driver=SQLite3;Database=example.db" 2) \
            >"$tmp/example.raw" 2>"$tmp/example.err" || rc=$?
        tr -d '\r' <"$tmp/example.raw" >"$tmp/example.out"
        sed -i -e 's/\r$//' "$tmp/example.err"
        if [ "$rc" -eq 0 ] && grep -qE '^tick \(token [1-9][0-9]*\)$' "$tmp/example.out"; then
            pass "examples/scheduler.c linked against sqlease.dll: holds the lease and ticks"
        else
            fail "examples/scheduler.c against sqlease.dll (exit $rc; want ticks with a token)"
            show example
        fi
    else
        fail "examples/scheduler.c does not build against (and import from) sqlease.dll"
        sed -e 's/^/    /' "$tmp/example.build"
    fi
fi

finish
