#!/bin/sh
# A fake test program for tests/test_run_tests.py: reports 3 tests passed,
# in two result files (as a program whose parts report separately would),
# and exits 0.
echo 'fake_pass: 3 tests'
echo '2 0' >"$SQLEASE_RESULT_DIR/part1.result"
echo '1 0' >"$SQLEASE_RESULT_DIR/part2.result"
