#!/bin/sh
# A fake test program for tests/test_run_tests.py: reports 1 passed and
# exits 0, leaving a process in a session of its own (out of the runner's
# reach, its pid in escape.pid) that holds its output open: the runner
# reads on only for its --drain time.
setsid sleep 300 &
echo $! >escape.pid
echo '1 0' >"$SQLEASE_RESULT_DIR/fake_escape.result"
