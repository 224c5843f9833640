#!/usr/bin/env bash
# ci/sim.sh -- the simulator (tests/sim/) over many seeds: the library's
# own engine, supervisor, lease and statement code on a simulated
# platform and database, each seed 30 s of a fleet under faults.
#
#   bash ci/sim.sh                  20,000 seeds (CI: about 2 minutes on 2 cores)
#   bash ci/sim.sh --seeds 1000000  the soak
#   bash ci/sim.sh --seeds 5000 --clock-steps
#
# Builds it (`scons sim`), runs the seeds split over JOBS processes (each
# a range of seeds: the same seeds whatever the split), prints each
# part's summary and every violation with its seed (replay one with
# build/sim/bin/sqlease-sim --replay SEED), and exits non-zero on any.
set -uo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 2
# shellcheck source=ci/results.sh
. ci/results.sh

SEEDS=20000
EXTRA=()
while [ $# -gt 0 ]; do
    case $1 in
    --seeds) SEEDS=$2; shift 2 ;;
    --clock-steps) EXTRA+=(--clock-steps); shift ;;
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
start=$(date +%s)
per=$(((SEEDS + JOBS - 1) / JOBS))
from=1
pids=()
for ((j = 0; j < JOBS && from <= SEEDS; j++)); do
    n=$per
    [ $((from + n - 1)) -gt "$SEEDS" ] && n=$((SEEDS - from + 1))
    "$SIM" --seeds "$n" --from "$from" "${EXTRA[@]}" >"$OUT/$j.out" 2>&1 &
    pids+=($!)
    from=$((from + n))
done
failed=0
for p in "${pids[@]}"; do
    wait "$p" || failed=1
done
grep -h VIOLATION "$OUT"/*.out | head -n 50
for f in "$OUT"/*.out; do tail -n 1 "$f"; done
v=$(grep -h -o ' [0-9]* violations' "$OUT"/*.out | awk '{ s += $1 } END { print s + 0 }')
echo "sim: $SEEDS seeds, $v violations, in $(($(date +%s) - start)) s"
if [ "$failed" = 0 ] && [ "$v" = 0 ]; then
    results_write sim 1 0
else
    results_write sim 0 1
    failed=1
fi
exit "$failed"
