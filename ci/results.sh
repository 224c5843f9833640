# shellcheck shell=bash
# ci/results.sh -- test counts in the CI scripts: how a script reports its
# own and adds up those of what it ran.  Sourced, not run.
#
# Counts travel in result files, never in printed text: a file
# NAME.PID.result holding one line "PASSED FAILED" (two decimal numbers),
# left in the directory named by SQLEASE_RESULT_DIR.  Every test program
# writes one (tests/run_tests.py describes how), the runner leaves the
# total of a `scons test` in its caller's directory, and a script that
# runs tests (ci/matrix.sh, ci/windows.sh, ci/install-check.sh) leaves its
# total for ci/test.sh, which adds them all up for its last line.

# results_write NAME PASSED FAILED: leave a result file in
# $SQLEASE_RESULT_DIR; nothing when it is not set (a script run by hand).
results_write() {
    [ -n "${SQLEASE_RESULT_DIR:-}" ] || return 0
    local tmp=$SQLEASE_RESULT_DIR/.$1.$$.tmp
    printf '%d %d\n' "$2" "$3" >"$tmp" && mv -f "$tmp" "$SQLEASE_RESULT_DIR/$1.$$.result"
}

# results_sum DIR: print "PASSED FAILED FILES", added up over the result
# files in DIR.  A file that is not one line of two numbers counts as one
# failure (whoever wrote it did not report properly).
results_sum() {
    local f line passed=0 failed=0 files=0
    for f in "$1"/*.result; do
        [ -f "$f" ] || continue
        files=$((files + 1))
        line=$(<"$f")
        if [[ $line =~ ^([0-9]+)\ ([0-9]+)$ ]]; then
            passed=$((passed + 10#${BASH_REMATCH[1]}))
            failed=$((failed + 10#${BASH_REMATCH[2]}))
        else
            echo "malformed result file $f" >&2
            failed=$((failed + 1))
        fi
    done
    echo "$passed $failed $files"
}

# results_ensure WHAT: when $SQLEASE_RESULT_DIR holds no result file, WHAT
# (a command that runs tests) stopped before it reported: count it as one
# failed test.
results_ensure() {
    local n
    [ -n "${SQLEASE_RESULT_DIR:-}" ] || return 0
    read -r _ _ n < <(results_sum "$SQLEASE_RESULT_DIR")
    if [ "$n" = 0 ]; then
        echo "---- $1 left no test counts: counted as one failed test"
        results_write unreported 0 1
    fi
}
