#!/bin/sh
# A fake test program for tests/test_run_tests.py: starts a process in its
# own group, writes that pid to hang.pid in its work directory, and hangs,
# so that the runner's timeout has to kill both.
sleep 300 &
echo $! >hang.pid
echo 'fake_hang: hanging'
wait
