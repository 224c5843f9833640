#!/usr/bin/env bash
# ci/fuzz.sh -- run the libFuzzer targets of tests/fuzz/ (the text sqlease
# parses from users: durations, connection strings and their redaction,
# odbc.ini values, names and owners, table identifiers, the fence's
# literals, --data, cron expressions; and the time zone files it reads),
# each for a time budget, and report what they did.
#
#   bash ci/fuzz.sh                    every target, 10 s each (the CI step)
#   bash ci/fuzz.sh --seconds 600      every target, 10 minutes each
#   bash ci/fuzz.sh --targets "fence redact" --seconds 60
#   bash ci/fuzz.sh --jobs 1           one target at a time (default: 2)
#   bash ci/fuzz.sh --no-build         use the targets already built
#
# Builds them with `scons fuzz` (clang, libFuzzer, ASan+UBSan: see
# SConstruct), then runs each on a work corpus of its own that starts from
# the committed seeds (tests/fuzz/corpus/<target>/, read-only to the run)
# with its dictionary (tests/fuzz/<dict>.dict).  The work corpus is under
# build/fuzz/corpus/ and grows across runs by hand; CI starts from the
# seeds every time.  A target passes if it ran its budget without a crash,
# a sanitizer report or a broken property (FZ_CHECK); a failing input is
# kept as build/fuzz/artifacts/<target>-crash-<sha1> and its report is
# printed.  Reproduce with build/fuzz/bin/fuzz_<target> FILE.
#
# Prints one line per target (runs, execs/s, edges covered, features,
# corpus size, verdict) and leaves one test count per target for
# ci/test.sh (ci/results.sh).  Exits non-zero if any target failed.
set -uo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$TOP" || exit 2
# shellcheck source=ci/results.sh
. ci/results.sh

SECONDS_EACH=10
PAR=2
BUILD=1
ALL="cli_data cronexpr duration fence ini name redact table tzif"
TARGETS=$ALL
while [ $# -gt 0 ]; do
    case $1 in
    --seconds) SECONDS_EACH=$2; shift 2 ;;
    --seconds=*) SECONDS_EACH=${1#*=}; shift ;;
    --jobs) PAR=$2; shift 2 ;;
    --jobs=*) PAR=${1#*=}; shift ;;
    --targets) TARGETS=$2; shift 2 ;;
    --targets=*) TARGETS=${1#*=}; shift ;;
    --no-build) BUILD=0; shift ;;
    *) echo "usage: $0 [--seconds N] [--jobs J] [--targets \"a b\"] [--no-build]" >&2; exit 64 ;;
    esac
done
case $SECONDS_EACH in '' | *[!0-9]*) echo "fuzz.sh: --seconds wants a number" >&2; exit 64 ;; esac
case $PAR in '' | *[!0-9]* | 0) echo "fuzz.sh: --jobs wants a number > 0" >&2; exit 64 ;; esac

JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
BIN=$TOP/build/fuzz/bin
OUT=$TOP/build/fuzz
start=$(date +%s)

if [ "$BUILD" = 1 ]; then
    echo "==== scons fuzz"
    scons -Q -j"$JOBS" fuzz || { results_write fuzz 0 1; exit 1; }
fi

# The dictionary each target uses.
dict_of() {
    case $1 in
    name | cli_data) echo "$TOP/tests/fuzz/text.dict" ;;
    *) [ -f "$TOP/tests/fuzz/$1.dict" ] && echo "$TOP/tests/fuzz/$1.dict" ;;
    esac
}

# run_one T: fuzz target T for the budget; its log in $OUT/logs/T.log.
run_one() {
    local t=$1 dict args
    mkdir -p "$OUT/corpus/$t" "$OUT/artifacts" "$OUT/logs"
    args=(-max_total_time="$SECONDS_EACH" -print_final_stats=1 -timeout=10
          -rss_limit_mb=2048 -close_fd_mask=3 -artifact_prefix="$OUT/artifacts/$t-")
    dict=$(dict_of "$t")
    [ -n "$dict" ] && args+=(-dict="$dict")
    # The library logs to stderr and the tool prints usage errors there:
    # -close_fd_mask keeps that noise out; libFuzzer, the sanitizers and
    # FZ_CHECK report on a descriptor of their own.
    ( cd "$OUT" && TMPDIR=${TMPDIR:-/tmp} \
        ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
        UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
        "$BIN/fuzz_$t" "${args[@]}" "$OUT/corpus/$t" "$TOP/tests/fuzz/corpus/$t" ) \
        >"$OUT/logs/$t.log" 2>&1
    echo $? >"$OUT/logs/$t.rc"
}

# Run the targets, PAR at a time.
for t in $TARGETS; do
    if [ ! -x "$BIN/fuzz_$t" ]; then
        echo "fuzz.sh: no target fuzz_$t (known: $ALL)" >&2
        results_write fuzz 0 1
        exit 2
    fi
done
echo "==== fuzzing: ${SECONDS_EACH}s per target, $PAR at a time: $TARGETS"
pids=()
for t in $TARGETS; do
    rm -f "$OUT/logs/$t.rc"
    run_one "$t" &
    pids+=($!)
    while [ "$(jobs -rp | wc -l)" -ge "$PAR" ]; do
        wait -n 2>/dev/null || true
    done
done
wait

# Report: one line per target from libFuzzer's log.
passed=0
failed=0
printf '%-10s %10s %8s %6s %6s %6s  %s\n' target runs exec/s cov ft corpus result
for t in $TARGETS; do
    log=$OUT/logs/$t.log
    rc=$(cat "$OUT/logs/$t.rc" 2>/dev/null || echo 99)
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    last=$(grep -a -E '^#[0-9]+.*cov: ' "$log" | tail -n 1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p' <<<"$last")
    if [ "$rc" = 0 ]; then
        verdict=ok
        passed=$((passed + 1))
    else
        verdict="FAILED (exit $rc)"
        failed=$((failed + 1))
    fi
    printf '%-10s %10s %8s %6s %6s %6s  %s\n' "$t" "${runs:--}" "${eps:--}" "${cov:--}" \
        "${ft:--}" "${corp:--}" "$verdict"
done
for t in $TARGETS; do
    rc=$(cat "$OUT/logs/$t.rc" 2>/dev/null || echo 99)
    [ "$rc" = 0 ] && continue
    echo
    echo "==== fuzz_$t failed; its report ($OUT/logs/$t.log):"
    grep -a -E -A3 'property violated|ERROR: (AddressSanitizer|UndefinedBehaviorSanitizer|libFuzzer|LeakSanitizer)|runtime error|SUMMARY|^==== input|Test unit written' \
        "$OUT/logs/$t.log" | head -n 60
done
echo "fuzz: ${passed} passed, ${failed} failed in $(($(date +%s) - start)) s"
results_write fuzz "$passed" "$failed"
[ "$failed" -eq 0 ]
