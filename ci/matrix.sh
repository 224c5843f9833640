#!/usr/bin/env bash
# ci/matrix.sh -- run the test suites against every dialect that can run here.
#
#   bash ci/matrix.sh                   # `scons -j$JOBS test` per dialect
#   bash ci/matrix.sh scons test TESTS=test_dialect
#
# The dialects are the rows of templates/dialects.toml, in key order, so
# that a new row is in the matrix as soon as it is in the table.  Each
# runs through a script of its own, ci/NAME.sh, NAME being the row's key
# or one of its aliases, which gets a server of that kind, runs the
# command against it and stops what it started:
#   sqlite     the suites' default database, the embedded one
#              (SQLEASE_TEST_DSN unset): no script
#   postgres   ci/postgres.sh: a PostgreSQL server started for the run
#   mysql      ci/mariadb.sh: a MariaDB server, suites run with OPTION=0 and 2
#   sqlserver  ci/sqlserver.sh, which skips unless SQLEASE_TEST_SQLSERVER_DSN
#              names a server
# A script that exits 77 skipped (it had no server to run on); a row with
# no script is listed as not run (SKIP, "no ci/KEY.sh").
#
# A failing dialect does not stop the others.  At the end a table gives
# each dialect's result, test counts and seconds; the exit status is 0
# only if none failed (a skipped one is not a failure).  The counts come
# from the result files the command leaves (ci/results.sh; a dialect
# that leaves none counts as one failed test), and their total goes to
# $SQLEASE_RESULT_DIR.
#
# Environment: SQLEASE_MATRIX (the dialects to run, by key, alias or
# script name, space separated; "servers": every row but sqlite, which the
# plain test step covers; default: every row), JOBS (parallel compile
# jobs).

set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
[ $# -gt 0 ] || set -- scons -j"$JOBS" test

RESULTS=$(mktemp -d "${TMPDIR:-/tmp}/sqlease-matrix-XXXXXX")
trap 'rm -rf "$RESULTS"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cd "$TOP" || exit 2
# shellcheck source=ci/results.sh
. "$HERE/results.sh"

# The table's rows, one line each: the key, then its aliases.
ROWS=$(python3 -c '
import sys, tomllib
with open(sys.argv[1], "rb") as f:
    rows = tomllib.load(f)
for key in sorted(k for k in rows if k != "common"):
    print(key, *rows[key].get("aliases", []))
' templates/dialects.toml) || { echo "matrix.sh: cannot read templates/dialects.toml" >&2; exit 2; }
EMBEDDED=sqlite

case ${SQLEASE_MATRIX:-} in
"")      DIALECTS=$(cut -d' ' -f1 <<<"$ROWS") ;;
servers) DIALECTS=$(cut -d' ' -f1 <<<"$ROWS" | grep -vx "$EMBEDDED") ;;
*)       DIALECTS=$SQLEASE_MATRIX ;;
esac

# row_of NAME: the row NAME is the key or an alias of ("" if none).
row_of() {
    local line
    while read -r line; do
        for n in $line; do
            [ "$n" = "$1" ] && { echo "${line%% *}"; return; }
        done
    done <<<"$ROWS"
}

# script_of NAME ROW: the script that runs the row: ci/NAME.sh, else the
# first of ci/KEY.sh and ci/ALIAS.sh that exists ("" if none).
script_of() {
    local n
    for n in "$1" $(grep -m1 "^$2\( \|\$\)" <<<"$ROWS"); do
        [ -f "$HERE/$n.sh" ] && { echo "$n"; return; }
    done
}

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
    if [ "$rc" = 77 ]; then
        rows+=("$(printf '%-10s %-9s %-26s %5d' "$name" SKIP - $(( $(date +%s) - start )))")
        return
    elif [ "$rc" = 0 ]; then
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
    row=$(row_of "$d")
    script=$(script_of "$d" "$row")
    if [ -z "$row" ]; then
        echo "matrix.sh: '$d' in SQLEASE_MATRIX is no row of templates/dialects.toml" >&2
        rows+=("$(printf '%-10s %-9s %-26s %5d' "$d" UNKNOWN - 0)")
        any_failed=1
    elif [ "$row" = "$EMBEDDED" ]; then
        run_dialect "$row" env -u SQLEASE_TEST_DSN SQLEASE_TEST_DIALECT="$row" "$@"
    elif [ -n "$script" ]; then
        run_dialect "$script" bash "$HERE/$script.sh" "$@"
    else
        printf '\n==================== matrix: %s ====================\n' "$row"
        echo "not run: no ci/$row.sh (a script that runs the suites against a server of it)"
        rows+=("$(printf '%-10s %-9s %-26s %5d' "$row" SKIP "no ci/$row.sh" 0)")
    fi
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
