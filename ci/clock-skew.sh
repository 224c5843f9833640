#!/usr/bin/env bash
# ci/clock-skew.sh -- how much a replicated database's clock skew between
# nodes eats into ttl - renew_deadline.  Runs inside ci/galera.sh, with
# node 2 started under libfaketime:
#
#   SQLEASE_GALERA_PRELOAD_NODE=2 \
#   SQLEASE_GALERA_PRELOAD=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1 \
#   bash ci/galera.sh bash ci/clock-skew.sh [SKEW_MS...]
#
# For each skew (default 0 500 1000 1500 1800 2000 2200 2500 ms) node 2 is
# restarted with its clock that far ahead (FAKETIME, the monotonic clock
# left alone), and the skew its UTC_TIMESTAMP(6) shows is measured.  Then
# `sqlease supervise` A holds through node 1, B follows through node 2,
# and A's sqlease is frozen (SIGSTOP): its guard stops A's CMD at the
# renew deadline, while B takes the lease once node 2's clock says the row
# (whose expiry node 1's clock wrote) has expired.  The margin is B's CMD
# start minus A's CMD stop, on this host's clock: below 0 the two ran at
# once.  Timings: ttl 4s, heartbeat 500ms, renew deadline 2s, retry 100ms,
# kill grace 500ms, so ttl - renew deadline is 2000 ms.
#
# Prints one line per skew and a summary; exits 0 when every trial ran
# (an overlap is the measurement, not a failure), 1 otherwise.
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
BIN=$TOP/build/bin/sqlease
CTL=${SQLEASE_GALERA_CTL:?run under ci/galera.sh}
[ "${SQLEASE_GALERA_PRELOAD_NODE:-}" = 2 ] && [ -n "${SQLEASE_GALERA_PRELOAD:-}" ] ||
    { echo "clock-skew.sh: needs SQLEASE_GALERA_PRELOAD_NODE=2 and SQLEASE_GALERA_PRELOAD" >&2
      exit 64; }
[ $# -gt 0 ] || set -- 0 500 1000 1500 1800 2000 2200 2500
TIMING=(--table skew_lease --name skew --ttl 4s --heartbeat 500ms --renew-deadline 2s
        --retry 100ms --query-timeout 1s --login-timeout 1s)
W=$(mktemp -d "${TMPDIR:-/tmp}/sqlease-skew-XXXXXX")
A=""
B=""
NOW_MS="SELECT (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)"

stop_ab() {
    local p
    for p in $A $B; do
        kill -CONT "$p" 2>/dev/null
        kill -TERM "$p" 2>/dev/null
    done
    for p in $A $B; do
        for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
        kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    A=""
    B=""
}
# shellcheck disable=SC2317  # called from the EXIT trap
cleanup() {
    stop_ab
    rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# CMD: log its start and its stop (SIGTERM) on this host's clock, in ms.
job() {
    printf 'echo "start $(date +%%s%%3N)" >>%q; trap '"'"'echo "stop $(date +%%s%%3N)" >>%q; exit 0'"'"' TERM; while :; do sleep 0.02; done' \
        "$1" "$1"
}
field() { awk -v k="$1" '$1 == k { print $2; exit }' "$2" 2>/dev/null; }
await_field() {
    local k=$1 f=$2 limit=$3 v
    for _ in $(seq 1 $((limit * 20))); do
        v=$(field "$k" "$f")
        [ -n "$v" ] && { echo "$v"; return 0; }
        sleep 0.05
    done
    return 1
}

"$BIN" --dsn "$SQLEASE_GALERA_DSN1" "${TIMING[@]}" -q migrate || exit 1
failed=0
rows=()
for s in "$@"; do
    secs=$(awk -v s="$s" 'BEGIN { printf "%.3f", s / 1000 }')
    $CTL stop 2 || { failed=1; break; }
    FAKETIME="+$secs" FAKETIME_DONT_FAKE_MONOTONIC=1 $CTL start 2 || { failed=1; break; }
    # The skew as the lease sees it: node 2's clock minus node 1's, read
    # around it on node 1 (the mean of the two reads).
    n1a=$($CTL sql 1 "$NOW_MS"); n2=$($CTL sql 2 "$NOW_MS"); n1b=$($CTL sql 1 "$NOW_MS")
    skew=$(( n2 - (n1a + n1b) / 2 ))
    "$BIN" --dsn "$SQLEASE_GALERA_DSN1" "${TIMING[@]}" -q release --force >/dev/null 2>&1
    rm -f "$W/a.log" "$W/b.log"
    "$BIN" --dsn "$SQLEASE_GALERA_DSN1" "${TIMING[@]}" -q supervise --kill-grace 500ms -- \
        bash -c "$(job "$W/a.log")" </dev/null >>"$W/a.out" 2>&1 &
    A=$!
    if ! await_field start "$W/a.log" 15 >/dev/null; then
        echo "skew $s ms: A did not start"; failed=1; stop_ab; continue
    fi
    "$BIN" --dsn "$SQLEASE_GALERA_DSN2" "${TIMING[@]}" -q supervise --kill-grace 500ms -- \
        bash -c "$(job "$W/b.log")" </dev/null >>"$W/b.out" 2>&1 &
    B=$!
    sleep 1.5
    if [ -n "$(field start "$W/b.log")" ]; then
        echo "skew $s ms: B started while A held (the skew is past the ttl)"; stop_ab; continue
    fi
    t_freeze=$(date +%s%3N)
    kill -STOP "$A"
    a_stop=$(await_field stop "$W/a.log" 15) || a_stop=""
    b_start=$(await_field start "$W/b.log" 15) || b_start=""
    stop_ab
    if [ -z "$a_stop" ] || [ -z "$b_start" ]; then
        echo "skew $s ms: no measurement (A stop '$a_stop', B start '$b_start')"; failed=1
        continue
    fi
    margin=$((b_start - a_stop))
    verdict=ok
    [ "$margin" -ge 0 ] || verdict=OVERLAP
    row=$(printf 'set %5s ms  measured %5s ms  A stopped +%4s ms  B started +%4s ms  margin %6s ms  %s' \
        "$s" "$skew" "$((a_stop - t_freeze))" "$((b_start - t_freeze))" "$margin" "$verdict")
    echo "$row"
    rows+=("$row")
done
echo
echo "clock skew (node 2 ahead of node 1) against ttl - renew deadline = 2000 ms:"
printf '%s\n' "${rows[@]}"
exit "$failed"
