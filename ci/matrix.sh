#!/usr/bin/env bash
# ci/matrix.sh -- run the test suites against every dialect that can run here.
#
#   bash ci/matrix.sh                   # `scons -j$JOBS test` per dialect
#   bash ci/matrix.sh scons test TESTS=test_dialect
#
# In turn:
#   sqlite     the embedded default (SQLEASE_TEST_DSN unset)
#   postgres   ci/postgres.sh: a PostgreSQL server started for the run
#   mariadb    ci/mariadb.sh: a MariaDB server, suites run with OPTION=0 and 2
#   sqlserver  ci/sqlserver.sh, only when SQLEASE_TEST_SQLSERVER_DSN is set
#
# A failing dialect does not stop the others.  At the end a table gives
# each dialect's result, test counts and seconds; the exit status is 0
# only if none failed (a skipped SQL Server is not a failure).  The counts
# come from the result files the command leaves (ci/results.sh; a dialect
# that leaves none counts as one failed test), and their total goes to
# $SQLEASE_RESULT_DIR.
#
# Environment: SQLEASE_MATRIX (dialects to run, space separated; default
# "sqlite postgres mariadb sqlserver"), JOBS (parallel compile jobs).

set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
DIALECTS=${SQLEASE_MATRIX:-sqlite postgres mariadb sqlserver}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
[ $# -gt 0 ] || set -- scons -j"$JOBS" test

RESULTS=$(mktemp -d "${TMPDIR:-/tmp}/sqlease-matrix-XXXXXX")
trap 'rm -rf "$RESULTS"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cd "$TOP" || exit 2
# shellcheck source=ci/results.sh
. "$HERE/results.sh"

rows=()
any_failed=0
total_passed=0
total_failed=0

# run_dialect NAME COMMAND...: the command leaves its test counts in a
# directory of its own (`scons test` one result file, the MariaDB step
# two: one per OPTION).
run_dialect() {
    local name=$1 dir=$RESULTS/$1 start rc=0 result p f n
    shift
    printf '\n==================== matrix: %s ====================\n' "$name"
    mkdir -p "$dir"
    start=$(date +%s)
    SQLEASE_RESULT_DIR=$dir "$@" 2>&1 || rc=$?
    if [ "$rc" = 0 ]; then
        result=PASS
    else
        result="FAIL($rc)"
        any_failed=1
    fi
    read -r p f n < <(results_sum "$dir")
    if [ "$n" = 0 ]; then
        echo "---- matrix: $name left no test counts: counted as one failed test"
        f=1
    fi
    total_passed=$((total_passed + p))
    total_failed=$((total_failed + f))
    rows+=("$(printf '%-10s %-9s %-26s %5d' "$name" "$result" "$p passed, $f failed" \
              $(( $(date +%s) - start )))")
}

for d in $DIALECTS; do
    case $d in
    sqlite)
        run_dialect sqlite env -u SQLEASE_TEST_DSN SQLEASE_TEST_DIALECT=sqlite "$@"
        ;;
    postgres)
        run_dialect postgres bash "$HERE/postgres.sh" "$@"
        ;;
    mariadb)
        run_dialect mariadb bash "$HERE/mariadb.sh" "$@"
        ;;
    sqlserver)
        if [ -n "${SQLEASE_TEST_SQLSERVER_DSN:-}" ]; then
            run_dialect sqlserver bash "$HERE/sqlserver.sh" "$@"
        else
            printf '\n==================== matrix: sqlserver ====================\n'
            echo "skipped: no SQL Server DSN given (set SQLEASE_TEST_SQLSERVER_DSN)"
            rows+=("$(printf '%-10s %-9s %-26s %5d' sqlserver SKIP - 0)")
        fi
        ;;
    *)
        echo "matrix.sh: unknown dialect '$d' in SQLEASE_MATRIX" >&2
        rows+=("$(printf '%-10s %-9s %-26s %5d' "$d" UNKNOWN - 0)")
        any_failed=1
        ;;
    esac
done

printf '\n==================== matrix summary ====================\n'
printf '%-10s %-9s %-26s %5s\n' dialect result tests seconds
for r in "${rows[@]}"; do
    printf '%s\n' "$r"
done
echo "matrix: $total_passed passed, $total_failed failed"
results_write matrix "$total_passed" "$total_failed"
if [ "$any_failed" = 0 ]; then
    echo "matrix: all dialects passed"
else
    echo "matrix: FAILED"
fi
exit "$any_failed"
