#!/bin/sh
# A fake test program for tests/test_run_tests.py: reports 2 passed and 1
# failed, and exits 1 as a failing suite does.
echo '2 1' >"$SQLEASE_RESULT_DIR/fake_fail.result"
exit 1
