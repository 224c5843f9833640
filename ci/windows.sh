#!/usr/bin/env bash
# Windows build, checked under Wine.  Cross-builds sqlease for 64-bit
# Windows with MinGW-w64 (scons PLATFORM_TARGET=mingw: build/mingw/), checks
# what the DLL exports and what sqlease.exe needs, then runs the .exe under
# Wine in a fresh, temporary WINEPREFIX: --version, migrate, status --json,
# run (token and exit status reach the caller), run --no-wait against a
# held lease, release --force, supervise stopped by Ctrl-C, CMD dying with
# a killed sqlease (job object), a DSN's lease settings read from the
# registry, the platform layer test (tests/win/test_platform_win.c), and
# examples/scheduler.c linked against sqlease.dll.
#
# The database is the embedded default, SQLite through the host's ODBC:
# Wine's odbc32.dll hands ODBC calls to the host's unixODBC, which reads
# the host's odbcinst.ini ($ODBCSYSINI if set) like any native program, so
# Database= is a host (Unix) path.  Nothing Wine-specific is configured.
#
# Installs nothing (ci/packages-full.txt lists gcc-mingw-w64-x86-64, wine,
# wine64).  Prints one PASS or FAIL line per check and exits non-zero if
# any failed; the counts go to $SQLEASE_RESULT_DIR (ci/results.sh).  Stops
# the prefix's wineserver (and with it every Windows process it ran) and
# removes the prefix on exit.  Runs in about a minute.
#
# Knobs (environment):
#   JOBS            parallel compile jobs (default: number of CPUs)
#   ALLOW_WARNINGS=1  do not fail the build on compiler warnings
#   WINE_TIMEOUT    seconds one Windows program may run (default 60)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
# shellcheck source=ci/results.sh
. ci/results.sh

JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
ALLOW_WARNINGS=${ALLOW_WARNINGS:-0}
WINE_TIMEOUT=${WINE_TIMEOUT:-60}
OUT=build/mingw

passed=0
failed=0
t_start=$SECONDS
tmp=
bg_pids=()

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

# Whatever happens: stop what we started in the background (by pid), then
# the prefix's wineserver with every process it still runs, then remove
# the prefix.
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
    local p
    for p in "${bg_pids[@]}"; do
        kill -9 "$p" 2>/dev/null || true
    done
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
for tool in scons x86_64-w64-mingw32-gcc x86_64-w64-mingw32-objdump wine wineserver odbcinst; do
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

# ------------------------------------------------------------------ build

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

products=("$OUT/bin/sqlease.exe" "$OUT/bin/sqlease.dll" "$OUT/lib/libsqlease.dll.a"
          "$OUT/lib/libsqlease.a" "$OUT/tests/test_platform_win.exe" "$OUT/tests/lease_child.exe")
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

# The DLL exports exactly the functions sqlease.h marks SQLEASE_API.
want=$(sed -n '/^SQLEASE_API/,/(/p' include/sqlease.h | grep -o 'sqlease_[a-z0-9_]*(' \
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
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sqlease-wine.XXXXXX")
mkdir -p "$tmp/home" "$tmp/bin" "$tmp/work"
# sqlease.exe alone in its directory (no DLL beside it), with the helper
# CMD; Windows looks for a program in the caller's own directory first.
cp "$OUT/bin/sqlease.exe" "$OUT/tests/lease_child.exe" "$OUT/tests/test_platform_win.exe" \
   "$tmp/bin/"
export WINEPREFIX="$tmp/prefix"
export WINEDEBUG=-all
# No Mono/Gecko install prompts, no menu entries or file associations;
# HOME and XDG dirs inside the temporary directory so nothing is left in
# the real home; no display.
export WINEDLLOVERRIDES='mscoree,mshtml=;winemenubuilder.exe=d'
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" XDG_DATA_HOME="$tmp/home/.local/share"
export XDG_CACHE_HOME="$tmp/home/.cache"
unset DISPLAY WAYLAND_DISPLAY

t0=$SECONDS
if timeout 180 wine wineboot -i >"$tmp/wineboot.out" 2>&1; then
    pass "new WINEPREFIX ready ($((SECONDS - t0)) s)"
else
    fail "wineboot -i in a new WINEPREFIX"
    sed -e 's/^/    /' "$tmp/wineboot.out" | tail -n 20
    finish
fi

exe="$tmp/bin/sqlease.exe"
work="$tmp/work"
dsn="Driver=SQLite3;Database=$work/w.db"
rc=0

# wrun NAME PROGRAM [ARGS...]: run a Windows program under Wine in $work,
# bounded by WINE_TIMEOUT, stdout to $tmp/NAME.out and stderr to
# $tmp/NAME.err (carriage returns removed); its exit status in $rc.
wrun() {
    local name=$1
    shift
    rc=0
    (cd "$work" && timeout "$WINE_TIMEOUT" wine "$@") >"$tmp/$name.raw" 2>"$tmp/$name.err" || rc=$?
    tr -d '\r' <"$tmp/$name.raw" >"$tmp/$name.out"
    sed -i -e 's/\r$//' "$tmp/$name.err"
}

# wbg NAME PROGRAM [ARGS...]: the same in the background; the pid (of the
# Windows program itself: wine execs it) in $bg.
wbg() {
    local name=$1
    shift
    (cd "$work" && exec wine "$@") >"$tmp/$name.out" 2>"$tmp/$name.err" &
    bg=$!
    bg_pids+=("$bg")
}

# status_has NAME PATTERN...: `status --json` into NAME; 0 if every fixed
# string is in it.
status_has() {
    local name=$1 p
    shift
    wrun "$name" "$exe" --dsn "$dsn" status --json
    [ "$rc" -eq 0 ] || return 1
    for p in "$@"; do
        grep -qF -- "$p" "$tmp/$name.out" || return 1
    done
}

# wait_held SECONDS: poll until status shows the lease held.
wait_held() {
    local end=$((SECONDS + $1))
    while [ "$SECONDS" -lt "$end" ]; do
        status_has poll '"held":true' && return 0
        sleep 0.3
    done
    return 1
}

# cmd_alive MARK: 1 if a process whose command line starts with
# "lease_child.exe 0 MARK" runs (Wine shows a Windows process's command
# line as its Unix one).  MARK is unique to this run.
cmd_alive() {
    local f line
    for f in /proc/[0-9]*/cmdline; do
        line=$({ tr '\0' ' ' <"$f"; } 2>/dev/null) || continue
        case "$line" in
            "lease_child.exe 0 $1"*|*[/\\]"lease_child.exe 0 $1"*) return 0 ;;
        esac
    done
    return 1
}

# wait_alive MARK SECONDS
wait_alive() {
    local end=$((SECONDS + $2))
    until cmd_alive "$1"; do
        [ "$SECONDS" -lt "$end" ] || return 1
        sleep 0.2
    done
    return 0
}

# wait_gone MARK SECONDS
wait_gone() {
    local end=$((SECONDS + $2))
    while cmd_alive "$1"; do
        [ "$SECONDS" -lt "$end" ] || return 1
        sleep 0.2
    done
    return 0
}

section "sqlease.exe under Wine"
t_cli=$SECONDS
version=$(sed -n 's/^#define SQLEASE_VERSION "\(.*\)"$/\1/p' include/sqlease.h)

wrun version "$exe" --version
if [ "$rc" -eq 0 ] && grep -qx "sqlease $version" "$tmp/version.out"; then
    pass "sqlease.exe --version: $(cat "$tmp/version.out")"
else
    fail "sqlease.exe --version (exit $rc, want 'sqlease $version')"
    show version
fi

wrun migrate "$exe" --dsn "$dsn" migrate
if [ "$rc" -eq 0 ]; then
    pass "migrate: $(head -n 1 "$tmp/migrate.out")"
else
    fail "migrate (exit $rc)"
    show migrate
fi

if status_has status0 '"held":false' '"token":0,' '"name":"scheduler"' '"dialect":"sqlite"'; then
    pass "status --json after migrate: free, token 0"
else
    fail "status --json after migrate (exit $rc; want held false, token 0)"
    show status0
fi

# CMD gets the token in its environment, and its exit status comes back.
wrun run1 "$exe" --dsn "$dsn" run -- lease_child.exe 3
if [ "$rc" -eq 3 ] && grep -qx 'SQLEASE_TOKEN=1' "$tmp/run1.out" \
   && grep -qx 'SQLEASE_NAME=scheduler' "$tmp/run1.out"; then
    pass "run -- lease_child.exe 3: exit 3, CMD saw SQLEASE_TOKEN=1"
else
    fail "run -- lease_child.exe 3 (exit $rc; want 3 and SQLEASE_TOKEN=1)"
    show run1
fi

if status_has status1 '"held":false' '"token":1,' '"owner":""'; then
    pass "status --json after run: released, token 1"
else
    fail "status --json after run (exit $rc; want held false, token 1)"
    show status1
fi

wrun run2 "$exe" --dsn "$dsn" run -- cmd /c exit 0
if [ "$rc" -eq 0 ] && status_has status2 '"held":false' '"token":2,'; then
    pass "run -- cmd /c exit 0: exit 0, then free with token 2"
else
    fail "run -- cmd /c exit 0 (exit $rc), then status token 2"
    show run2
    show status2
fi

wrun baddsn "$exe" --dsn "Driver=NoSuchDriver;Database=$work/x.db" status
if [ "$rc" -eq 69 ]; then
    pass "status with an unknown ODBC driver: exit 69 ($(head -n 1 "$tmp/baddsn.err"))"
else
    fail "status with an unknown ODBC driver (exit $rc, want 69)"
    show baddsn
fi

# sqlease killed outright while CMD runs: the job object takes CMD with
# it; the lease stays held by the dead owner until its ttl.
mark=$((600000 + RANDOM))
wbg kill "$exe" --dsn "$dsn" run -- lease_child.exe 0 "$mark"
if wait_held 20 && wait_alive "$mark" 10; then
    kill -9 "$bg"
    wait "$bg" 2>/dev/null
    if wait_gone "$mark" 5; then
        pass "CMD dies when sqlease.exe is killed (job object, kill on close)"
    else
        fail "CMD still running 5 s after sqlease.exe was killed"
    fi
else
    fail "run in the background did not come to hold the lease with CMD running"
    show kill
    show poll
fi

wrun nowait "$exe" --dsn "$dsn" run --no-wait -- lease_child.exe 0
if [ "$rc" -eq 75 ] && ! grep -q SQLEASE_TOKEN "$tmp/nowait.out"; then
    pass "run --no-wait while another owner holds the lease: exit 75, CMD not run"
else
    fail "run --no-wait against a held lease (exit $rc, want 75)"
    show nowait
fi

wrun force "$exe" --dsn "$dsn" release --force
if [ "$rc" -eq 0 ] && status_has status3 '"held":false' '"token":3,'; then
    pass "release --force: free again, token 3"
else
    fail "release --force (exit $rc), then status free with token 3"
    show force
    show status3
fi

# supervise, stopped the way a console user stops it: Wine turns SIGINT
# into CTRL_C_EVENT.  CMD is stopped (killed after the 1 s grace where
# CTRL_BREAK cannot reach it), the lease released, exit 0.
mark=$((600000 + RANDOM))
wbg sup "$exe" --dsn "$dsn" supervise --kill-grace 1s -- lease_child.exe 0 "$mark"
if wait_held 20 && wait_alive "$mark" 10; then
    sup_rc=0
    kill -INT "$bg"
    for _ in $(seq 1 100); do
        kill -0 "$bg" 2>/dev/null || break
        sleep 0.1
    done
    wait "$bg" 2>/dev/null || sup_rc=$?
    if [ "$sup_rc" -eq 0 ] && wait_gone "$mark" 5 && status_has status4 '"held":false' '"token":4,'; then
        pass "supervise: Ctrl-C stops CMD, releases the lease (token 4), exit 0"
    else
        fail "supervise after Ctrl-C (exit $sup_rc; want 0, CMD gone, lease free)"
        show sup
        show status4
    fi
else
    fail "supervise did not come to hold the lease with CMD running"
    show sup
fi

# A DSN's lease settings come from its odbc.ini section, read with
# SQLGetPrivateProfileString: on Windows (and in Wine's odbccp32) that is
# the DSN's key under Software\ODBC\ODBC.INI in the registry.  The DSN
# itself is defined in an odbc.ini for the host's unixODBC, which Wine's
# odbc32 passes the connection to.
printf '[sqlease-win]\nDriver = SQLite3\nDatabase = %s\n' "$work/dsn.db" >"$tmp/odbc.ini"
reg_ok=1
for kv in SqleaseName=from-registry SqleaseTTL=45s; do
    wrun reg reg add 'HKCU\Software\ODBC\ODBC.INI\sqlease-win' /v "${kv%%=*}" /d "${kv#*=}" /f
    [ "$rc" -eq 0 ] || reg_ok=0
done
ODBCINI="$tmp/odbc.ini" wrun dsnmig "$exe" --dsn sqlease-win migrate
mig_rc=$rc
ODBCINI="$tmp/odbc.ini" wrun dsnrun "$exe" --dsn sqlease-win -v run -- lease_child.exe 0
if [ "$reg_ok" -eq 1 ] && [ "$mig_rc" -eq 0 ] && [ "$rc" -eq 0 ] \
   && grep -qx 'SQLEASE_NAME=from-registry' "$tmp/dsnrun.out" \
   && grep -q 'ttl 45000ms' "$tmp/dsnrun.err"; then
    pass "DSN lease settings from the registry's ODBC.INI (SqleaseName, SqleaseTTL)"
else
    fail "DSN lease settings from the registry (reg $reg_ok, migrate exit $mig_rc, run exit $rc)"
    show reg
    show dsnmig
    show dsnrun
fi

wrun demo "$exe" demo
if [ "$rc" -eq 69 ] && grep -qi 'windows' "$tmp/demo.err"; then
    pass "demo: refused on Windows with a message, exit 69"
else
    fail "demo on Windows (exit $rc; want 69 and a message)"
    show demo
fi
echo "(sqlease.exe checks: $((SECONDS - t_cli)) s)"

section "platform layer under Wine (tests/win/test_platform_win.c)"
t0=$SECONDS
wrun platform "$tmp/bin/test_platform_win.exe"
sed -e 's/^/    /' "$tmp/platform.out"
if [ "$rc" -eq 0 ] && grep -q '^0 test(s) failed' "$tmp/platform.out"; then
    pass "test_platform_win.exe ($((SECONDS - t0)) s)"
else
    fail "test_platform_win.exe (exit $rc)"
    show platform
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
        wrun example "$tmp/dll/scheduler.exe" "Driver=SQLite3;Database=$work/example.db" 2
        if [ "$rc" -eq 0 ] && grep -q '^tick (token 1)' "$tmp/example.out"; then
            pass "examples/scheduler.c linked against sqlease.dll: holds the lease and ticks"
        else
            fail "examples/scheduler.c against sqlease.dll (exit $rc; want ticks with token 1)"
            show example
        fi
    else
        fail "examples/scheduler.c does not build against (and import from) sqlease.dll"
        sed -e 's/^/    /' "$tmp/example.build"
    fi
fi

finish
