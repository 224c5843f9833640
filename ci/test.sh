#!/usr/bin/env bash
# Build sqlease and run its tests: the default build (embedded SQLite unless
# SQLEASE_TEST_DSN names another database), then the same under
# AddressSanitizer+UBSan and under ThreadSanitizer.  Every step runs even
# after one fails; the script exits non-zero if any did.  It starts nothing
# that outlives it (scons test kills each test program's process group).
#
# Knobs (environment):
#   JOBS        parallel compile jobs (default: number of CPUs)
#   TSAN_TESTS  test programs to run under TSan, space separated, e.g.
#               "test_lease test_supervisor"; default: all but test_guard
#               and the single-threaded ones (see below)
#   SKIP_SANITIZERS=1  only the default build
#   HA_LONG=1   the long checks of replicated databases (ci/ha.sh --long,
#               about 15 minutes) instead of the short ones
#   ALLOW_WARNINGS=1   do not fail the build step on compiler warnings
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=ci/results.sh
. ci/results.sh

JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
# Under TSan, every test program except test_guard: the guard is a child
# that sqlease forks without exec, and a forked child of a multi-threaded
# TSan process may stall inside the TSan runtime, which would fail the
# guard's time bounds for reasons of the tool, not of the code.  Nor the
# programs that test parsing and the tool's words on one thread (options,
# odbc.ini, cron expressions, the ABI, the failure classes, the CLI's
# flags and messages: test_cli and test_cli_holder): the tool's threads
# (supervise, cron, --http, run) run under TSan in test_cron, test_http,
# test_cli_cron and test_sched_reload, the library's in the others; the
# ones left out cost two minutes of CI's hour under TSan and found nothing
# there that the default build's run of them does not.
TSAN_SKIP=" test_guard test_cli test_cli_holder test_cronexpr test_ini test_abi test_classify "
if [ -z "${TSAN_TESTS:-}" ]; then
    TSAN_TESTS=$(for f in tests/test_*.c; do b=$(basename "$f" .c); case $TSAN_SKIP in *" $b "*) ;; *) printf '%s ' "$b" ;; esac; done)
    TSAN_TESTS=${TSAN_TESTS% }
fi
SKIP_SANITIZERS=${SKIP_SANITIZERS:-0}
ALLOW_WARNINGS=${ALLOW_WARNINGS:-0}

failed_steps=()
failed_tests=()
step_times=()
total_passed=0
total_failed=0

section() {
    printf '\n==================== %s ====================\n' "$*"
}

# step NAME COMMAND...: run it, remember a failure, never stop the script.
# The command runs with SQLEASE_RESULT_DIR set to a directory of its own;
# the test counts left there (ci/results.sh: by `scons test`, the install
# check, the matrix, the Windows checks) are added to the totals, so the
# last line of this script counts everything that ran.
step() {
    local name=$1 rc=0 results log p f t t0
    shift
    section "$name"
    t0=$(date +%s)
    results=$(mktemp -d "${TMPDIR:-/tmp}/sqlease-results-XXXXXX")
    log=$results.log
    # The output goes on to the terminal as it comes, and into a file whose
    # failure lines the result section repeats: CI's report keeps only the
    # end of the output, and a failed test a thousand lines up is otherwise
    # lost.  A process substitution, not a pipe, so that a server a step
    # leaves behind by mistake cannot hold the step open through tee.
    SQLEASE_RESULT_DIR=$results "$@" > >(tee "$log") 2>&1 || rc=$?
    wait $! 2>/dev/null || true
    read -r p f _ < <(results_sum "$results")
    rm -rf "$results"
    total_passed=$((total_passed + p))
    total_failed=$((total_failed + f))
    step_times+=("$(printf '%5d s  %s' "$(($(date +%s) - t0))" "$name")")
    if [ "$rc" -ne 0 ] || [ "$f" -gt 0 ]; then
        while IFS= read -r t; do
            failed_tests+=("$name: $t")
        done < <(grep -aE '^FAIL |\.\.\.FAILED|^ +[0-9]+\. [^ ]+:[0-9]+ ' "$log" | cut -c1-200 | head -n 6)
    fi
    rm -f "$log"
    if [ "$rc" -ne 0 ]; then
        failed_steps+=("$name (exit $rc)")
        echo "---- step failed: $name (exit $rc)"
    fi
    return 0
}

# reported COMMAND...: a command that runs tests and reports their counts;
# if it stops before it does, that counts as one failed test.
reported() {
    local rc=0
    "$@" || rc=$?
    results_ensure "$*"
    return "$rc"
}

# Only the ODBC file and the OS files (the library's platform layer,
# src/platform/<os>/, and the tool's, src/cli/os/) include a vendor header
# (ODBC, Windows, libuuid).
check_headers() {
    local bad
    bad=$(grep -nE '^\s*#\s*include\s*[<"](sql|sqlext|sqltypes|sqlucode|odbcinst|odbcinstext|windows|rpc|uuid/uuid)\.h[>"]' \
              $(find src -name '*.[ch]' | sort) 2>/dev/null \
          | grep -vE '^src/(odbc\.c|platform/(posix|win32)/[^/]+\.[ch]|cli/os/(posix|win32)/[^/]+\.[ch]):' || true)
    if [ -n "$bad" ]; then
        echo "vendor headers outside src/odbc.c, src/platform/<os>/ and src/cli/os/<os>/:"
        echo "$bad"
        return 1
    fi
    echo "ok: only src/odbc.c, src/platform/<os>/ and src/cli/os/<os>/ include vendor headers"
}

# build [ARGS...]: build the library and the CLI, failing on warnings.
build() {
    local log rc=0
    log=$(mktemp)
    scons -j"$JOBS" "$@" . 2>&1 | tee "$log" || rc=$?
    if [ "$rc" -eq 0 ] && [ "$ALLOW_WARNINGS" != 1 ] && grep -q 'warning:' "$log"; then
        echo "---- compiler warnings:"
        grep 'warning:' "$log" | sort -u
        rc=1
    fi
    rm -f "$log"
    return "$rc"
}

# run_tests [ARGS...]: scons test, which leaves its counts for step().
run_tests() {
    reported scons -j"$JOBS" test "$@"
}

section "environment"
echo "database under test: ${SQLEASE_TEST_DSN:-embedded SQLite (default)}"
gcc --version | head -n 1
scons --version | grep -m1 'SCons:' || true
python3 --version
odbcinst -j 2>/dev/null | head -n 3 || true

step "vendor header check" check_headers
step "build" build
step "test (default build)" run_tests
# A few seconds: Prometheus' promtool on what /metrics (supervise --http,
# status --watch --http, cron --http) and --metrics-file write.
step "metrics: promtool check metrics on /metrics and --metrics-file" \
    reported bash ci/metrics-check.sh
step "install, symbols, pkg-config and CMake examples, uninstall" reported bash ci/install-check.sh
# About 4.5 minutes: a Debian 12 minbase root (debootstrap, 1 minute), the
# README's demo command in it, the README's full package install (2.5) and
# the install check, so that a tool this machine has and a fresh one lacks
# fails here.  `bash ci/minbase.sh --full-suite` runs the whole suite there.
step "a minimal Debian root: the README's commands, the install check" reported bash ci/minbase.sh
step "dialect matrix (every row of the dialect table but sqlite)" reported env SQLEASE_MATRIX=servers bash ci/matrix.sh
step "Windows: MinGW cross-build, run under Wine" reported bash ci/windows.sh
step "valgrind: run, supervise and cron" bash ci/valgrind.sh
# About 4 minutes: the PostgreSQL suites and a killed holder through
# PgBouncer, in transaction and statement pooling.
step "PgBouncer: suites and a killed holder, transaction and statement pooling" \
    reported bash ci/pooler.sh
# About 2 minutes: the previous release (ci/previous-release) built from
# this clone's history, beside this tree on one table, across a rolling
# upgrade on PostgreSQL and MariaDB.
step "rolling upgrade from the previous release (postgres, mariadb)" \
    reported bash ci/upgrade.sh
# About 5 minutes: the simulator, 10,000 seeds of the real engine under a
# seeded schedule and faults, 2,000 with the database's clock stepping,
# 400 of hand-overs and 200 more with the clock stepping, then every
# planted bug found (ci/sim.sh; tests/sim/).
step "simulator: 10,000 seeds + 2,000 with clock steps + 400 hand-overs (+200 with steps), plants" reported bash ci/sim.sh
# About 100 s: a PostgreSQL server's clock stepped 30 s forward four times
# (libfaketime) under a holder and a waiting instance: no overlap; then
# back 30 s twice under the hold and twice right after a SIGKILL of the
# holder: handed over within ttl + 2 x retry + 1 s of the kill.
step "the database's clock stepped forward and back under supervise (postgres, libfaketime)" \
    reported bash ci/clock-step.sh
# About 3.5 minutes: scheduled jobs on a fleet of this host's processes on
# PostgreSQL: five `sqlease cron` through kills, rolling restarts, a holder
# cut off by nftables and clocks 30 s off; a whole fleet down with each
# missed-fire policy; five crontabs firing `run --every`, one late.  Every
# fire run once (ci/cron-fleet.sh --long: 10 minutes).
step "scheduled jobs: each fire once through a fleet's faults (postgres)" \
    reported bash ci/cron-fleet.sh
# The random faults for 30 s per dialect (the default, 120 s, is the
# fuller run to use by hand; the simulator draws far more of the same
# faults), then the fixed kernel list.
step "chaos: one holder under faults (sqlite, postgres, mariadb)" bash ci/chaos.sh --seconds 30
if [ "${HA_LONG:-0}" = 1 ]; then
    step "replicated databases (long: every node fault x3, clock skew)" bash ci/ha.sh --long
else
    step "replicated databases: Galera node faults, PostgreSQL failover" bash ci/ha.sh
fi
# The short run of docs/performance.md (block performance-bench-short).
step "benchmark (short: sqlite, postgres, mariadb)" bash ci/bench.sh
step "fuzz: 9 libFuzzer targets, 10 s each, 2 at a time (about 2 minutes)" reported bash ci/fuzz.sh
if [ "$SKIP_SANITIZERS" != 1 ]; then
    step "build (ASan+UBSan)" build SANITIZE=address
    step "test (ASan+UBSan)" run_tests SANITIZE=address
    step "build (TSan)" build SANITIZE=thread
    step "test (TSan${TSAN_TESTS:+: $TSAN_TESTS})" run_tests SANITIZE=thread TESTS="$TSAN_TESTS"
fi

section "result"
echo "time per step (CI must stay within its budget):"
printf '%s\n' "${step_times[@]}"
echo "total: $SECONDS s"
if [ "${#failed_steps[@]}" -eq 0 ]; then
    echo "all steps passed"
else
    printf 'FAILED: %s\n' "${failed_steps[@]}"
fi
if [ "${#failed_tests[@]}" -gt 0 ]; then
    echo "failed tests (the first lines of each failed step that say so):"
    printf '  %s\n' "${failed_tests[@]}"
fi
echo "$total_passed passed, $total_failed failed"
[ "${#failed_steps[@]}" -eq 0 ]
