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
# only if none failed (a skipped SQL Server is not a failure).
#
# Environment: SQLEASE_MATRIX (dialects to run, space separated; default
# "sqlite postgres mariadb sqlserver"), JOBS (parallel compile jobs).

set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
DIALECTS=${SQLEASE_MATRIX:-sqlite postgres mariadb sqlserver}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
[ $# -gt 0 ] || set -- scons -j"$JOBS" test

LOGDIR=$(mktemp -d "${TMPDIR:-/tmp}/sqlease-matrix-XXXXXX")
trap 'rm -rf "$LOGDIR"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cd "$TOP" || exit 2

rows=()
any_failed=0

# Sum the "N passed, M failed" lines `scons test` prints at its end (the
# MariaDB step prints two, one per OPTION).
counts() {
    awk '/^[0-9]+ passed, [0-9]+ failed$/ { p += $1; f += $3; n++ }
         END { if (n) printf "%d passed, %d failed", p, f; else printf "-" }' "$1"
}

run_dialect() {
    local name=$1 log=$LOGDIR/$1.log start rc result
    shift
    printf '\n==================== matrix: %s ====================\n' "$name"
    start=$(date +%s)
    "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    if [ "$rc" = 0 ]; then
        result=PASS
    else
        result="FAIL($rc)"
        any_failed=1
    fi
    rows+=("$(printf '%-10s %-9s %-26s %5d' "$name" "$result" "$(counts "$log")" \
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
if [ "$any_failed" = 0 ]; then
    echo "matrix: all dialects passed"
else
    echo "matrix: FAILED"
fi
exit "$any_failed"
