#!/usr/bin/env bash
# ci/bench.sh -- build sqlease-bench and run it against every dialect that
# can run here, printing each dialect's table.
#
#   bash ci/bench.sh                    # sqlease-bench --short --json per dialect
#   bash ci/bench.sh --json             # the full run (a few minutes per dialect)
#   bash ci/bench.sh --short --only stmts,latency
#
# In turn:
#   sqlite     the embedded default (a file in a fresh temporary directory)
#   postgres   through ci/pgbouncer.sh: a PostgreSQL server started for the run,
#              and PgBouncer in front of it for the pooler measurement
#   mariadb    through ci/mariadb.sh: a MariaDB server, Connector/ODBC OPTION=0
#
# The servers are stopped by those scripts' traps on every exit path.  The
# JSON lines (one per dialect) are printed at the end and kept in
# build/bench/<dialect>.json.  The exit status is non-zero only when the
# benchmark itself failed (a lease invariant broke, a measurement could not
# run, a server did not start) -- never because of a timing.
#
# Environment: SQLEASE_BENCH_DIALECTS (default "sqlite postgres mariadb"),
# JOBS (parallel compile jobs).

set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
DIALECTS=${SQLEASE_BENCH_DIALECTS:-sqlite postgres mariadb}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
[ $# -gt 0 ] || set -- --short --json

cd "$TOP" || exit 2
OUT=$TOP/build/bench
mkdir -p "$OUT"

printf '==================== bench: build ====================\n'
scons -Q -j"$JOBS" bench || { echo "bench.sh: building sqlease-bench failed"; exit 2; }
BENCH=$TOP/build/bin/sqlease-bench

rows=()
any_failed=0

# run_dialect NAME COMMAND...: run it, keep its stdout (the JSON line) in
# build/bench/NAME.json while showing everything.
run_dialect() {
    local name=$1 rc result
    shift
    printf '\n==================== bench: %s ====================\n' "$name"
    "$@" | tee "$OUT/$name.json"
    rc=${PIPESTATUS[0]}
    case $rc in
    0) result=ok ;;
    1) result="FAILED: a lease invariant broke" ;;
    *) result="FAILED (exit $rc)" ;;
    esac
    [ "$rc" = 0 ] || any_failed=1
    rows+=("$(printf '%-10s %s' "$name" "$result")")
}

for d in $DIALECTS; do
    case $d in
    sqlite)
        run_dialect sqlite "$BENCH" "$@"
        ;;
    postgres)
        # Through ci/pgbouncer.sh: the pooler measurement times the direct
        # connection and PgBouncer in both pooling modes side by side.
        # shellcheck disable=SC2016  # expanded by the inner shell, where it is set
        run_dialect postgres bash "$HERE/pgbouncer.sh" \
            bash -c 'exec "$0" --dsn "$SQLEASE_DIRECT_DSN" \
                --pooler pgbouncer-transaction=DSN=sqlease_pgb_tx \
                --pooler pgbouncer-statement=DSN=sqlease_pgb_st "$@"' "$BENCH" "$@"
        ;;
    mariadb)
        # shellcheck disable=SC2016
        run_dialect mariadb env SQLEASE_MARIADB_OPTIONS=0 bash "$HERE/mariadb.sh" \
            bash -c 'exec "$0" --dsn "$SQLEASE_TEST_DSN" "$@"' "$BENCH" "$@"
        ;;
    *)
        echo "bench.sh: unknown dialect '$d' in SQLEASE_BENCH_DIALECTS" >&2
        rows+=("$(printf '%-10s %s' "$d" "UNKNOWN")")
        any_failed=1
        ;;
    esac
done

printf '\n==================== bench summary ====================\n'
for r in "${rows[@]}"; do
    printf '%s\n' "$r"
done
for d in $DIALECTS; do
    [ -s "$OUT/$d.json" ] && grep '^{' "$OUT/$d.json"
done
if [ "$any_failed" = 0 ]; then
    echo "bench: every dialect ran"
else
    echo "bench: FAILED"
fi
exit "$any_failed"
