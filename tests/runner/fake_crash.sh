#!/bin/sh
# A fake test program for tests/test_run_tests.py: dies of SIGSEGV before
# it writes its result file.
echo 'fake_crash: about to crash'
kill -SEGV $$
