#!/bin/sh
# A fake test program for tests/test_run_tests.py: reports 1 passed and
# exits 0, leaving a process behind in its group that holds its output
# open (its pid in leave.pid), which the runner must kill rather than
# wait for.
sleep 300 &
echo $! >leave.pid
echo '1 0' >"$SQLEASE_RESULT_DIR/fake_leave.result"
