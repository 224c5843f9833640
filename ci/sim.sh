#!/usr/bin/env bash
# ci/sim.sh -- the simulator (tests/sim/) over many seeds: the library's
# own engine, supervisor, group, lease and statement code on a simulated
# platform and database, each seed 30 s of a fleet under faults.
#
#   bash ci/sim.sh                  what CI runs: 10,000 seeds of the
#                                   scenario mix (the scheduler's and
#                                   groups' among them), 2,000 with the
#                                   database's clock stepping, 400 of the
#                                   hand-over scenario (--scenario
#                                   handoff), then each planted bug must
#                                   be found: 20,000, 2,000 and 400 took
#                                   795 s, 103 s and 21 s, the plants
#                                   23 s, on 2 cores that other builds
#                                   and tests shared, so the mix's half
#                                   keeps the step near 5 minutes
#   bash ci/sim.sh --seeds 1000000  the soak (and 200,000 with clock steps)
#   bash ci/sim.sh --seeds 5000 --clock-steps   only with clock steps
#   bash ci/sim.sh --plants         only the planted bugs
#
# Builds it (`scons sim`), runs the seeds split over JOBS processes (each
# a range of seeds: the same seeds whatever the split), prints each
# part's summary and every violation with its seed (replay one with
# build/sim/bin/sqlease-sim --replay SEED, adding --clock-steps for that
# part's), and exits non-zero on any.  Then two checks of the simulator
# itself: every kind of statement and event its summary counts (renews,
# batched takes, forced releases, clock steps, group moves, NULL repairs,
# fire claims, ends and prunes, hold starts and ends, ...) ran at least
# once over the parts, so that no path silently stops
# being simulated; and every bug planted with SQLE_PLANTED
# (`sqlease-sim --list-plants`) is found within PLANT_SEEDS seeds of the
# mix, or else of the clock-step part (`--plant NAME --first`).
set -uo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 2
# shellcheck source=ci/results.sh
. ci/results.sh

SEEDS=10000
ONLY_STEPS=0
ONLY_PLANTS=0
PLANT_SEEDS=${PLANT_SEEDS:-1000}
while [ $# -gt 0 ]; do
    case $1 in
    --seeds) SEEDS=$2; shift 2 ;;
    --clock-steps) ONLY_STEPS=1; shift ;;
    --plants) ONLY_PLANTS=1; shift ;;
    *) echo "usage: $0 [--seeds N] [--clock-steps | --plants]" >&2; exit 64 ;;
    esac
done
case $SEEDS in '' | *[!0-9]* | 0) echo "sim.sh: --seeds wants a number > 0" >&2; exit 64 ;; esac
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
scons -Q -j"$JOBS" sim || { results_write sim 0 1; exit 2; }
SIM=$TOP/build/sim/bin/sqlease-sim
[ -x "$SIM" ] || { echo "sim.sh: $SIM was not built (libsqlite3-dev missing?)"; results_write sim 0 1; exit 2; }

OUT=$(mktemp -d "${TMPDIR:-/tmp}/sqlease-sim-XXXXXX")
trap 'rm -rf "$OUT"' EXIT
failed=0

# run_part LABEL N [OPTION...]: seeds 1..N split over JOBS processes.
run_part() {
    local label=$1 seeds=$2 start per from n j p v pids=()
    shift 2
    start=$(date +%s)
    per=$(((seeds + JOBS - 1) / JOBS))
    from=1
    for ((j = 0; j < JOBS && from <= seeds; j++)); do
        n=$per
        [ $((from + n - 1)) -gt "$seeds" ] && n=$((seeds - from + 1))
        "$SIM" --seeds "$n" --from "$from" "$@" >"$OUT/$label.$j.out" 2>&1 &
        pids+=($!)
        from=$((from + n))
    done
    for p in "${pids[@]}"; do
        wait "$p" || failed=1
    done
    grep -h VIOLATION "$OUT/$label".*.out | head -n 50
    for f in "$OUT/$label".*.out; do tail -n 1 "$f"; done
    v=$(grep -h -o ' [0-9]* violations' "$OUT/$label".*.out | awk '{ s += $1 } END { print s + 0 }')
    echo "sim ($label): $seeds seeds, $v violations, in $(($(date +%s) - start)) s"
    [ "$v" = 0 ] || failed=1
}

# Every kind the summaries count ran somewhere ("other", statements the
# simulator does not know, may stay 0).
check_kinds() {
    local zero
    zero=$(grep -h '^kinds:' "$OUT"/*.out | tr ' ' '\n' | grep '=' |
        awk -F= '{ s[$1] += $2 } END { for (k in s) if (s[k] == 0 && k != "other") print k }' |
        sort | tr '\n' ' ')
    grep -h '^kinds:' "$OUT"/*.out | tr ' ' '\n' | grep '=' |
        awk -F= '{ s[$1] += $2 } END { for (k in s) printf "%s=%d\n", k, s[k] }' | sort |
        tr '\n' ' ' | sed 's/^/sim: ran /; s/ $/\n/'
    if [ -n "$zero" ]; then
        echo "sim: never ran over these seeds (a path the simulator no longer reaches): $zero"
        failed=1
    fi
}

# plant NAME: found within PLANT_SEEDS seeds of the mix, else of the
# clock-step part; the hand-over's plants (named handoff_*) within
# PLANT_SEEDS seeds of its scenario, which the mix does not run.
plant() {
    local name=$1 mode modes=(mix clock-steps) found
    case $name in handoff_*) modes=(handoff) ;; esac
    for mode in "${modes[@]}"; do
        if [ "$mode" = mix ]; then
            "$SIM" --plant "$name" --seeds "$PLANT_SEEDS" --first >"$OUT/plant.$name.txt" 2>&1
        elif [ "$mode" = handoff ]; then
            "$SIM" --plant "$name" --seeds "$PLANT_SEEDS" --first --scenario handoff \
                >"$OUT/plant.$name.txt" 2>&1
        else
            "$SIM" --plant "$name" --seeds "$PLANT_SEEDS" --first --clock-steps \
                >"$OUT/plant.$name.txt" 2>&1
        fi
        found=$(grep -m 1 VIOLATION "$OUT/plant.$name.txt")
        if [ -n "$found" ]; then
            echo "plant $name ($mode): $found"
            return 0
        fi
    done
    echo "plant $name: NOT FOUND in $PLANT_SEEDS seeds of ${modes[*]} ($(grep reached "$OUT/plant.$name.txt"))"
    return 1
}

run_plants() {
    local start names name pids=() p
    start=$(date +%s)
    names=$("$SIM" --list-plants) || { failed=1; return; }
    # JOBS plants at a time, each a process of its own.
    for name in $names; do
        plant "$name" >"$OUT/plant.$name.res" &
        pids+=($!)
        if [ "${#pids[@]}" -ge "$JOBS" ]; then
            wait "${pids[0]}" || failed=1
            pids=("${pids[@]:1}")
        fi
    done
    for p in "${pids[@]}"; do
        wait "$p" || failed=1
    done
    for name in $names; do cat "$OUT/plant.$name.res"; done
    echo "sim (plants): $(echo "$names" | wc -w) planted bugs, in $(($(date +%s) - start)) s"
}

if [ "$ONLY_PLANTS" = 1 ]; then
    run_plants
elif [ "$ONLY_STEPS" = 1 ]; then
    run_part clock-steps "$SEEDS" --clock-steps
else
    run_part mix "$SEEDS"
    run_part clock-steps $(((SEEDS + 4) / 5)) --clock-steps
    # The hand-over and priorities (ready followers, requests, hand-overs
    # to live and dead targets, preemption): a scenario of its own, which
    # the mix's seeds do not draw (400 seeds: 21 s on 2 loaded cores).
    run_part handoff $(((SEEDS + 24) / 25)) --scenario handoff
    # ... and with the database's clock stepping under them (200 seeds, 15
    # s): a preemption decided on a read before a step back must not cut
    # the damping short (the request checks the age again as it writes).
    run_part handoff-clock-steps $(((SEEDS + 49) / 50)) --scenario handoff --clock-steps
    check_kinds
    run_plants
fi
if [ "$failed" = 0 ]; then
    results_write sim 1 0
else
    results_write sim 0 1
fi
exit "$failed"
