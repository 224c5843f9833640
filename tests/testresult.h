/*
 * testresult.h -- the result file a test program leaves for the test
 * runner (tests/run_tests.py, which documents the format): one line
 * "PASSED FAILED" in $SQLEASE_RESULT_DIR/NAME.PID.result.  The CUnit
 * suites write it through tests/testutil.c, the Windows test programs
 * through tests/win/wintest.c.  Without SQLEASE_RESULT_DIR (a program run
 * by hand) nothing is written.
 */
#ifndef SQLEASE_TESTRESULT_H
#define SQLEASE_TESTRESULT_H

/* Write (or rewrite) this process's result file.  Returns 0, or -1 after
 * saying on stderr why it could not. */
int test_result_write(const char *name, unsigned long passed, unsigned long failed);

#endif
