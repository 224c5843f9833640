#!/usr/bin/env bash
# ci/chaos.sh -- prove "one holder at a time" under faults, per dialect.
#
#   bash ci/chaos.sh                    # 120 s of random faults per dialect (CI: 60),
#                                       # then the kernel-fault list (~2 min per server)
#   bash ci/chaos.sh --seconds 60 --seed 42
#   bash ci/chaos.sh --long             # soak: 600 s per dialect drawing every
#                                       # kind, kernel list with 30 s faults
#
# Builds build/bin/sqlease and build/bin/sqlease-chaos, then runs the chaos
# harness (tests/chaos/) for each dialect in turn:
#
#   sqlite     an SQLite file in the harness's own temporary directory
#   postgres   through ci/postgres.sh (a throwaway server on loopback)
#   mariadb    through ci/mariadb.sh (one pass, OPTION=0: changed rows)
#
# Per dialect: the random `chaos` scenario (--seconds: kills, pauses,
# freezes, SIGTERMs, proxy partitions, server restarts, a locked lease
# row), then on the server dialects the two reconnect scenarios
# (reconnect-short: the server restarted under a holder, which must ride
# it out; reconnect-long: the server down past the renew deadline) and
# partition-shutdown (a holder cut off by the proxy must still exit
# promptly on SIGTERM), and last the `kernel` scenario: a fixed list, each
# fault once --
#
#   cut-one-short/-long      the kernel drops the holder's packets (nftables,
#                            DROP), for less / more than the ttl
#   cut-fleet-short/-long    ... every instance's packets
#   loss-to-client/-server   ... only server->client / only client->server
#   server-freeze-short/-long  SIGSTOP of every server process
#   silent-server            the holder's legs become a listener that accepts
#                            and never answers; and `sqlease status` and
#                            `run --no-wait` with --login-timeout 1s against one
#   term-idle/-in-flight/-twice/-run  SIGTERM to the holder's supervise (or
#                            run) with the fleet cut off by the kernel
#   job-stop                 SIGSTOP of the holder's whole sqlease process group
#   same-owner               a second instance with the holder's --owner
#
#   galera     through ci/galera.sh (3 nodes)
#   pg-sync    through ci/pg-replica.sh --sync (a primary and a synchronous
#              standby, the fleet following a multi-host connection string)
#   pg-async   through ci/pg-replica.sh --async (the standby asynchronous)
#
# The last three are not in the default list (SQLEASE_CHAOS_DIALECTS names
# them).  On pg-sync and pg-async the `failover` scenario freezes the
# standby's WAL receiver, has the holder hand over, kills the primary and
# promotes the standby.  pg-async is expected to give a token out twice
# (its summary says LOSS, and it does not fail the run): an asynchronous
# standby loses the acknowledged take.  PASS there means the loss did not
# show in that run.
#
# On galera each of three instances talks to a node of its own, and the
# `galera` scenario kills the holder's node (and, before that, a node no
# holder uses), cuts it off from the others with nftables, freezes it,
# and restarts the whole cluster (--faults picks among node-kill,
# node-kill-other, node-cutoff, node-freeze, cluster-restart); the CMDs'
# writes are fenced by the library's own predicate.  Then `contend`
# counts the conflicts of concurrent takes on different nodes and what
# they were read as.  With --long the node faults run three times and the
# contention 30 s a phase.
#
# On SQLite only job-stop and same-owner apply.  Kernel faults need root and
# nft (package nftables): without them they are skipped, and the run says
# so.  After every fault the fleet must have a holder again within ttl +
# retry + query timeout + 1 s of its end (the recovery bound; 1 s is for a
# loaded 2-core machine); each fault has its own bounds too (see
# tests/chaos/scenarios.c).  The tables at the end give, per dialect, the
# verdicts, the longest recovery per kind of fault against its bound, and
# the figures measured against bounds of their own.  The exit status is 0
# only if no run found a violation.
#
# Every run stops everything it started.  The kernel rules live in one
# nftables table per harness process, `inet sqlease_chaos_<pid>`, which the
# harness's keeper process deletes when the harness exits or dies; this
# script deletes it too if it is left over, and sends SIGCONT to the
# server's processes after each run (a harness killed while the server was
# frozen).  Flags other than --long are passed to every chaos run (--seconds,
# --seed, --instances, --keep; --seconds applies to the random scenario
# only).
#
# Environment: SQLEASE_CHAOS_DIALECTS (default "sqlite postgres mariadb"),
# SQLEASE_PG_PORT / SQLEASE_MARIADB_PORT (first server port to try),
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

CURRENT_PID=""      # the harness running now
CURRENT_OUT=""      # and the file its output goes to
STARTED_PIDS=()     # every harness this process started
INTERRUPTED=""

# A leftover of harness pid $1: its nftables table (its keeper removes it
# moments after the harness exits; if it is still there after 2 s, the
# keeper is gone too), and a server left frozen.
cleanup_after() {
    local t=sqlease_chaos_$1
    if command -v nft >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        for _ in $(seq 1 20); do
            nft list table inet "$t" >/dev/null 2>&1 || break
            sleep 0.1
        done
        if nft list table inet "$t" >/dev/null 2>&1; then
            echo "chaos.sh: removing leftover nftables table inet $t" >&2
            nft delete table inet "$t" 2>/dev/null || true
        fi
    fi
    if [ -n "${SQLEASE_DB_PIDS_CMD:-}" ]; then
        $SQLEASE_DB_PIDS_CMD 2>/dev/null | xargs -r kill -CONT 2>/dev/null || true
    fi
}

# shellcheck disable=SC2317  # called from traps
on_signal() {
    INTERRUPTED=$2
    [ -n "$CURRENT_PID" ] && kill "-$1" "$CURRENT_PID" 2>/dev/null
}

# shellcheck disable=SC2317  # called from the EXIT trap
on_exit() {
    local p
    for p in "${STARTED_PIDS[@]}"; do
        kill -0 "$p" 2>/dev/null && kill -TERM "$p" 2>/dev/null
        cleanup_after "$p"
    done
    [ -z "$CURRENT_OUT" ] || rm -f "$CURRENT_OUT"
    [ -z "${SUMMARY_OWNED:-}" ] || rm -f "$SUMMARY_OWNED" "$SUMMARY_OWNED.galera"
}

# One harness run; its summary line goes to $SQLEASE_CHAOS_SUMMARY.  The
# harness runs in the background so that its pid is known (its nftables
# table is named after it) and a signal to this script is passed on.
run_one() {
    local name=$1 out rc r tailpid
    shift
    out=$(mktemp "${TMPDIR:-/tmp}/sqlease-chaos-out-XXXXXX")
    CURRENT_OUT=$out
    printf '\n==================== chaos: %s %s ====================\n' "$name" "$*"
    "$CHAOS" --sqlease "$BIN" "$@" >"$out" 2>&1 &
    CURRENT_PID=$!
    STARTED_PIDS+=("$CURRENT_PID")
    tail -n +1 -f --pid="$CURRENT_PID" "$out" &
    tailpid=$!
    while :; do
        wait "$CURRENT_PID"
        r=$?
        # >128 with the harness alive: a signal to this script interrupted
        # the wait (and was passed on); wait for the harness's own end.
        if [ "$r" -le 128 ] || ! kill -0 "$CURRENT_PID" 2>/dev/null; then
            rc=$r
            break
        fi
    done
    wait "$tailpid" 2>/dev/null
    cleanup_after "$CURRENT_PID"
    CURRENT_PID=""
    [ "$SQLEASE_CHAOS_SUMMARY" = /dev/null ] ||
        grep '^galera-summary ' "$out" | sed "s/^/$name /" >>"$SQLEASE_CHAOS_SUMMARY.galera"
    # The asynchronous standby's run shows a loss: say so rather than FAIL.
    grep '^chaos-summary ' "$out" |
        sed -e "s/^chaos-summary dialect=postgres /chaos-summary dialect=$name /" \
            -e "s/\$/ exit=$rc/" >>"$SQLEASE_CHAOS_SUMMARY" ||
        printf 'chaos-summary dialect=%s scenario=%s exit=%s (no verdict)\n' "$name" \
            "$(printf '%s' "$*" | sed 's/ /_/g')" "$rc" >>"$SQLEASE_CHAOS_SUMMARY"
    # The asynchronous standby's run keeps its logs for the violations it
    # is expected to find: nothing to look into.
    if [ "$name" = pg-async ]; then
        sed -n 's/^events and instance logs kept in \(\/.*sqlease-chaos-[A-Za-z0-9]*\)$/\1/p' \
            "$out" | xargs -r rm -rf
    fi
    rm -f "$out"
    CURRENT_OUT=""
    return "$rc"
}

: "${SQLEASE_CHAOS_SUMMARY:=/dev/null}"   # set by the outer run; --inner alone keeps none

trap 'on_signal INT 130' INT
trap 'on_signal TERM 143' TERM
trap on_exit EXIT

if [ "${1:-}" = "--inner" ]; then
    name=$2
    shift 2
    status=0
    # The other scenarios have their own length: --seconds applies to the
    # random one only; --seed, --instances and --keep apply to all.
    random=("$@")
    args=()
    given_seconds=0
    while [ $# -gt 0 ]; do
        case $1 in
        --seconds) given_seconds=1; shift 2 ;;
        *) args+=("$1"); shift ;;
        esac
    done
    if [ "$name" = galera ]; then
        # A node each (ci/galera.sh): the node faults, then the contention
        # count.  The CMDs' writes are fenced by the library's predicate.
        nodes=(--instances 3 --fence lease --instance-dsn "$SQLEASE_GALERA_DSN1"
               --instance-dsn "$SQLEASE_GALERA_DSN2" --instance-dsn "$SQLEASE_GALERA_DSN3")
        rounds=()
        [ "${SQLEASE_CHAOS_LONG:-0}" != 1 ] || rounds=(--rounds 3)
        run_one galera --scenario galera "${nodes[@]}" "${rounds[@]}" "${args[@]}" || status=1
        # --faults names node faults; the contention run has none.
        cargs=()
        for ((k = 0; k < ${#args[@]}; k++)); do
            if [ "${args[$k]}" = --faults ]; then k=$((k + 1)); else cargs+=("${args[$k]}"); fi
        done
        [ -n "$INTERRUPTED" ] ||
            run_one galera --scenario contend "${nodes[@]}" "${rounds[@]}" "${cargs[@]}" || status=1
        [ -z "$INTERRUPTED" ] || exit "$INTERRUPTED"
        exit "$status"
    fi
    if [ "$name" = pg-sync ] || [ "$name" = pg-async ]; then
        run_one "$name" --scenario failover --instances 3 "${args[@]}" || status=1
        exit "$status"
    fi
    kernel=()
    if [ "${SQLEASE_CHAOS_LONG:-0}" = 1 ]; then
        [ "$given_seconds" = 1 ] || random+=(--seconds 600)
        random+=(--kinds all)
        kernel+=(--long-fault 30s --give-up 120s)
    fi
    run_one "$name" "${random[@]}" || status=1
    if [ "$name" != sqlite ]; then
        [ -n "$INTERRUPTED" ] || run_one "$name" --scenario reconnect-short "${args[@]}" || status=1
        [ -n "$INTERRUPTED" ] || run_one "$name" --scenario reconnect-long "${args[@]}" || status=1
        [ -n "$INTERRUPTED" ] || run_one "$name" --scenario partition-shutdown "${args[@]}" ||
            status=1
    fi
    [ -n "$INTERRUPTED" ] || run_one "$name" --scenario kernel "${kernel[@]}" "${args[@]}" ||
        status=1
    [ -z "$INTERRUPTED" ] || exit "$INTERRUPTED"
    exit "$status"
fi

passthru=()
for a in "$@"; do
    if [ "$a" = --long ]; then
        export SQLEASE_CHAOS_LONG=1
    else
        passthru+=("$a")
    fi
done

JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
DIALECTS=${SQLEASE_CHAOS_DIALECTS:-sqlite postgres mariadb}
SUMMARY=$(mktemp "${TMPDIR:-/tmp}/sqlease-chaos-summary-XXXXXX")
SUMMARY_OWNED=$SUMMARY
export SQLEASE_CHAOS_SUMMARY=$SUMMARY

if [ "$(id -u)" != 0 ] || ! command -v nft >/dev/null 2>&1; then
    echo "chaos.sh: kernel faults will be SKIPPED: they need root and nft (package nftables)"
    # CI runs as root with nftables installed: a skip there is a bug.
    [ "${CI:-}" = true ] && { echo "chaos.sh: CI=true, so that is a failure"; exit 1; }
fi

scons -Q -j"$JOBS" build/bin/sqlease build/bin/sqlease-chaos || exit 2

failed=0
for d in $DIALECTS; do
    [ -z "$INTERRUPTED" ] || break
    case $d in
    sqlite)
        (unset SQLEASE_TEST_DSN SQLEASE_DB_PORT SQLEASE_DB_STOP SQLEASE_DB_START \
               SQLEASE_DB_PIDS_CMD
         bash "$HERE/chaos.sh" --inner sqlite "${passthru[@]}") || failed=1
        ;;
    postgres)
        bash "$HERE/postgres.sh" bash "$HERE/chaos.sh" --inner postgres "${passthru[@]}" ||
            failed=1
        ;;
    mariadb)
        SQLEASE_MARIADB_OPTIONS=0 bash "$HERE/mariadb.sh" bash "$HERE/chaos.sh" --inner mariadb \
            "${passthru[@]}" || failed=1
        ;;
    galera)
        bash "$HERE/galera.sh" bash "$HERE/chaos.sh" --inner galera "${passthru[@]}" || failed=1
        ;;
    pg-sync)
        bash "$HERE/pg-replica.sh" --sync bash "$HERE/chaos.sh" --inner pg-sync "${passthru[@]}" ||
            failed=1
        ;;
    pg-async)
        # Expected to find the token given out twice: reported, not a failure.
        bash "$HERE/pg-replica.sh" --async bash "$HERE/chaos.sh" --inner pg-async \
            "${passthru[@]}" || true
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
BEGIN { printf "%-9s %-18s %-6s %6s %9s %8s %8s %6s %7s %10s\n", "dialect", "scenario",
        "result", "faults", "handovers", "gap(ms)", "overlaps", "stale", "orphans", "violations" }
{ printf "%-9s %-18s %-6s %6s %9s %8s %8s %6s %7s %10s\n", val("dialect"), val("scenario"),
         val("exit") == "0" ? "PASS" : val("dialect") == "pg-async" ? "LOSS" : "FAIL",
         val("faults"), val("handovers"),
         val("longest_gap_ms"), val("overlaps"), val("stale_accepted"), val("orphans"),
         val("violations") }' "$SUMMARY"

# Per dialect and kind of fault: how many, the longest recovery (end of
# the fault to the next holder'"'"'s CMD start; ">" when a fault had no
# holder at all before the next), and the bound of the scenario it ran in.
printf '\nrecovery after each kind of fault (ms from its end to the next holder'"'"'s CMD start)\n'
awk '
function num(s) { sub(/^>/, "", s); return s + 0 }
{
    d = "-"; b = "-"
    for (i = 2; i <= NF; i++) {
        split($i, a, "=")
        if (a[1] == "dialect") d = a[2]
        if (a[1] == "recovery_bound_ms") b = a[2]
    }
    for (i = 2; i <= NF; i++) {
        if ($i !~ /^rec\./) continue
        split($i, a, "="); kind = substr(a[1], 5); split(a[2], v, ":")
        key = d SUBSEP kind SUBSEP b
        if (!(key in cnt)) { order[++n] = key }
        cnt[key] += v[1]
        if (!(key in mx) || num(v[2]) > num(mx[key]) || (v[2] ~ /^>/ && num(v[2]) == num(mx[key])))
            mx[key] = v[2]
        if (v[2] ~ /^>/) none[key] = 1
    }
    for (i = 2; i <= NF; i++) {
        if ($i !~ /^fig\./) continue
        split($i, a, "="); fig = substr(a[1], 5); split(a[2], v, ":")
        key = d SUBSEP fig
        if (!(key in fv)) { forder[++fn] = key }
        if (!(key in fv) || num(v[1]) > num(fv[key])) fv[key] = v[1]
        fb[key] = v[2]
    }
    for (i = 2; i <= NF; i++)
        if ($i ~ /^skipped=/ && $i != "skipped=-") skip[d] = skip[d] " " substr($i, 9)
}
END {
    printf "%-9s %-20s %5s %10s %10s %s\n", "dialect", "fault", "count", "max(ms)", "bound(ms)",
           "result"
    for (k = 1; k <= n; k++) {
        split(order[k], p, SUBSEP)
        bad = (order[k] in none) || (p[3] != "-" && num(mx[order[k]]) > p[3] + 0)
        printf "%-9s %-20s %5d %10s %10s %s\n", p[1], p[2], cnt[order[k]], mx[order[k]], p[3],
               bad ? "FAIL" : "PASS"
    }
    if (fn > 0) {
        printf "\nmeasured against bounds of their own (ms; \">\": the harness stopped waiting)\n"
        printf "%-9s %-28s %10s %10s %s\n", "dialect", "figure", "max(ms)", "bound(ms)", "result"
        for (k = 1; k <= fn; k++) {
            split(forder[k], p, SUBSEP)
            bad = fv[forder[k]] ~ /^>/ || num(fv[forder[k]]) > fb[forder[k]] + 0
            printf "%-9s %-28s %10s %10s %s\n", p[1], p[2], fv[forder[k]], fb[forder[k]],
                   bad ? "FAIL" : "PASS"
        }
    }
    for (d in skip) printf "\nskipped on %s:%s\n", d, skip[d]
}' "$SUMMARY"
if [ -s "$SUMMARY.galera" ]; then
    # Conflicts the cluster's nodes counted (certification failures,
    # brute-force aborts) and, under contention, what the takes read them as.
    printf '\nreplicated cluster: conflicts and contention\n'
    sed 's/ galera-summary / /' "$SUMMARY.galera"
fi
if [ -n "$INTERRUPTED" ]; then
    echo "chaos: INTERRUPTED"
    exit "$INTERRUPTED"
fi
if [ "$failed" = 0 ]; then
    echo "chaos: no violation"
else
    echo "chaos: FAILED"
fi
exit "$failed"
