#!/usr/bin/env bash
# ci/chaos.sh -- prove "one holder at a time" under faults, per dialect.
#
#   bash ci/chaos.sh                    # 120 s of faults per dialect
#   bash ci/chaos.sh --seconds 60 --seed 42
#
# Builds build/bin/sqlease and build/bin/sqlease-chaos, then runs the chaos
# harness (tests/chaos/) for each dialect in turn:
#
#   sqlite     an SQLite file in the harness's own temporary directory
#   postgres   through ci/postgres.sh (a throwaway server on loopback)
#   mariadb    through ci/mariadb.sh (one pass, OPTION=0: changed rows)
#
# On the server dialects it also runs the two reconnect scenarios
# (reconnect-short: the server restarted under a holder, which must ride it
# out; reconnect-long: the server down past the renew deadline) and
# partition-shutdown (a holder cut off from the server must still exit
# promptly on SIGTERM).  Flags are
# passed to every chaos run (--seconds, --seed, --instances, --keep).  A
# table of the verdicts ends the output; the exit status is 0 only if no
# run found a violation.  Every run stops everything it started.
#
# Environment: SQLEASE_CHAOS_DIALECTS (default "sqlite postgres mariadb"),
# JOBS (parallel compile jobs).
#
# Internal: `ci/chaos.sh --inner NAME ARGS...` is what the server scripts
# run with their server up.

set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
cd "$TOP" || exit 2
BIN=$TOP/build/bin/sqlease
CHAOS=$TOP/build/bin/sqlease-chaos

# One harness run; its summary line goes to $SQLEASE_CHAOS_SUMMARY.
run_one() {
    local name=$1 out rc
    shift
    out=$(mktemp "${TMPDIR:-/tmp}/sqlease-chaos-out-XXXXXX")
    printf '\n==================== chaos: %s %s ====================\n' "$name" "$*"
    "$CHAOS" --sqlease "$BIN" "$@" 2>&1 | tee "$out"
    rc=${PIPESTATUS[0]}
    grep '^chaos-summary ' "$out" | sed "s/\$/ exit=$rc/" >>"$SQLEASE_CHAOS_SUMMARY" ||
        printf 'chaos-summary dialect=%s scenario=%s exit=%s (no verdict)\n' "$name" "$*" \
            "$rc" >>"$SQLEASE_CHAOS_SUMMARY"
    rm -f "$out"
    return "$rc"
}

if [ "${1:-}" = "--inner" ]; then
    name=$2
    shift 2
    status=0
    run_one "$name" "$@" || status=1
    # The reconnect scenarios have their own length; --seconds does not
    # apply, --seed and --keep do.
    args=()
    while [ $# -gt 0 ]; do
        case $1 in
        --seconds) shift 2 ;;
        *) args+=("$1"); shift ;;
        esac
    done
    run_one "$name" --scenario reconnect-short "${args[@]}" || status=1
    run_one "$name" --scenario reconnect-long "${args[@]}" || status=1
    run_one "$name" --scenario partition-shutdown "${args[@]}" || status=1
    exit "$status"
fi

JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
DIALECTS=${SQLEASE_CHAOS_DIALECTS:-sqlite postgres mariadb}
SUMMARY=$(mktemp "${TMPDIR:-/tmp}/sqlease-chaos-summary-XXXXXX")
trap 'rm -f "$SUMMARY"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
export SQLEASE_CHAOS_SUMMARY=$SUMMARY

scons -Q -j"$JOBS" build/bin/sqlease build/bin/sqlease-chaos || exit 2

failed=0
for d in $DIALECTS; do
    case $d in
    sqlite)
        (unset SQLEASE_TEST_DSN SQLEASE_DB_PORT SQLEASE_DB_STOP SQLEASE_DB_START
         run_one sqlite "$@") || failed=1
        ;;
    postgres)
        bash "$HERE/postgres.sh" bash "$HERE/chaos.sh" --inner postgres "$@" || failed=1
        ;;
    mariadb)
        SQLEASE_MARIADB_OPTIONS=0 bash "$HERE/mariadb.sh" bash "$HERE/chaos.sh" --inner mariadb \
            "$@" || failed=1
        ;;
    *)
        echo "chaos.sh: unknown dialect '$d' in SQLEASE_CHAOS_DIALECTS" >&2
        failed=1
        ;;
    esac
done

printf '\n==================== chaos summary ====================\n'
awk '
function val(k,   i, a) {
    for (i = 2; i <= NF; i++) { split($i, a, "="); if (a[1] == k) return a[2] }
    return "-"
}
BEGIN { printf "%-9s %-16s %-6s %6s %9s %8s %8s %6s %7s %10s\n", "dialect", "scenario",
        "result", "faults", "handovers", "gap(ms)", "overlaps", "stale", "orphans", "violations" }
{ printf "%-9s %-16s %-6s %6s %9s %8s %8s %6s %7s %10s\n", val("dialect"), val("scenario"),
         val("exit") == "0" ? "PASS" : "FAIL", val("faults"), val("handovers"),
         val("longest_gap_ms"), val("overlaps"), val("stale_accepted"), val("orphans"),
         val("violations") }' "$SUMMARY"
if [ "$failed" = 0 ]; then
    echo "chaos: no violation"
else
    echo "chaos: FAILED"
fi
exit "$failed"
