#!/usr/bin/env bash
# ci/pooler.sh -- sqlease through PgBouncer: the PostgreSQL suites and a
# fleet whose holder is killed, in transaction pooling and in statement
# pooling.
#
#   bash ci/pooler.sh                 # both modes (about 3 minutes)
#   SQLEASE_POOL_MODES=statement bash ci/pooler.sh
#
# One PostgreSQL server and one PgBouncer in front of it (ci/pgbouncer.sh:
# a pool of 2 server connections per mode, on loopback), then per mode:
#
#   suites  `scons test` of the library's suites that reach the database
#           and the CLI holder's, every statement through the pooler
#           (statement mode: the lease, ODBC, handle, holder and cron
#           suites)
#   fleet   ci/fleet.py pooler: three `supervise` through the pooler, the
#           holder killed twice and stopped once; one holder at a time,
#           a successor within its bound, and not one error line
#
# PgBouncer and the server are stopped on every exit path (their scripts'
# traps).  The suites' and the fleets' counts go to $SQLEASE_RESULT_DIR
# (ci/results.sh).  Exit status 0 only if every part passed.
#
# Environment: SQLEASE_POOL_MODES (default "transaction statement"), JOBS.

set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)

if [ "${1:-}" != --inner ]; then
    exec bash "$HERE/pgbouncer.sh" --mode transaction --pool 2 bash "$HERE/pooler.sh" --inner
fi

cd "$TOP" || exit 2
MODES=${SQLEASE_POOL_MODES:-transaction statement}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
# The library's suites, and the CLI's holder: test_cli and test_supervisor
# send the same statements through the same code (and the fleet below runs
# `supervise` through the pooler), about 90 s that CI's hour needs.
SUITES_TRANSACTION="test_cli_holder test_cron test_db test_dialect test_holder test_ini
                    test_lease test_odbc"
SUITES_STATEMENT="test_cron test_db test_holder test_lease test_odbc"
BIN=$TOP/build/bin/sqlease
rows=()
failed=0

# part NAME COMMAND...: run it, time it, remember a failure.
part() {
    local name=$1 t0 rc=0
    shift
    printf '\n==================== pooler: %s ====================\n' "$name"
    t0=$(date +%s)
    "$@" || rc=$?
    [ "$rc" = 0 ] || failed=1
    rows+=("$(printf '%-34s %-8s %4d s' "$name" "$([ "$rc" = 0 ] && echo PASS || echo "FAIL($rc)")" \
              $(( $(date +%s) - t0 )))")
}

for mode in $MODES; do
    case $mode in
    transaction) dsn="DSN=sqlease_pgb_tx"; suites=$SUITES_TRANSACTION ;;
    statement) dsn="DSN=sqlease_pgb_st"; suites=$SUITES_STATEMENT ;;
    *) echo "pooler.sh: unknown mode '$mode'" >&2; failed=1; continue ;;
    esac
    # shellcheck disable=SC2086  # the list is meant to be split
    part "$mode: suites" env SQLEASE_TEST_DSN="$dsn" SQLEASE_POOL_MODE="$mode" \
        scons -Q -j"$JOBS" test TESTS="$(echo $suites)"
    part "$mode: fleet, holder killed" python3 "$HERE/fleet.py" pooler --bin "$BIN" \
        --dsn "$dsn" --direct-dsn "$SQLEASE_DIRECT_DSN" --label "pgbouncer-$mode"
done

printf '\n==================== pooler summary ====================\n'
printf '%s\n' "${rows[@]}"
if [ "$failed" = 0 ]; then
    echo "pooler: everything passed through PgBouncer"
else
    echo "pooler: FAILED"
fi
exit "$failed"
