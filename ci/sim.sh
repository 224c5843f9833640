#!/usr/bin/env bash
# ci/sim.sh -- the simulator (tests/sim/) over many seeds: the library's
# own engine, supervisor, lease and statement code on a simulated
# platform and database, each seed 30 s of a fleet under faults.
#
#   bash ci/sim.sh                  20,000 seeds, then 2,000 with the
#                                   database's clock stepping (CI: 120 s
#                                   and 11 s measured on 2 loaded cores)
#   bash ci/sim.sh --seeds 1000000  the soak (and 100,000 with clock steps)
#   bash ci/sim.sh --seeds 5000 --clock-steps   only with clock steps
#
# Builds it (`scons sim`), runs the seeds split over JOBS processes (each
# a range of seeds: the same seeds whatever the split), prints each
# part's summary and every violation with its seed (replay one with
# build/sim/bin/sqlease-sim --replay SEED, adding --clock-steps for that
# part's), and exits non-zero on any.
set -uo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 2
# shellcheck source=ci/results.sh
. ci/results.sh

SEEDS=20000
ONLY_STEPS=0
while [ $# -gt 0 ]; do
    case $1 in
    --seeds) SEEDS=$2; shift 2 ;;
    --clock-steps) ONLY_STEPS=1; shift ;;
    *) echo "usage: $0 [--seeds N] [--clock-steps]" >&2; exit 64 ;;
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
    local label=$1 seeds=$2 start per from n j p pids=()
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

if [ "$ONLY_STEPS" = 1 ]; then
    run_part clock-steps "$SEEDS" --clock-steps
else
    run_part plain "$SEEDS"
    run_part clock-steps $(((SEEDS + 9) / 10)) --clock-steps
fi
if [ "$failed" = 0 ]; then
    results_write sim 1 0
else
    results_write sim 0 1
fi
exit "$failed"
