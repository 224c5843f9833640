#!/bin/sh
# A fake test program for tests/test_run_tests.py: reports 4 passed and no
# failure, then exits 3 all the same.
echo '4 0' >"$SQLEASE_RESULT_DIR/fake_exit.result"
exit 3
