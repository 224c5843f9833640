/*
 * wintest.h -- assertions and reporting for the Windows test programs
 * (tests/win/test_*.c), which run without CUnit (it is not packaged for
 * MinGW).  Each test is a function run by wt_run, which prints one PASS
 * or FAIL line for it; a test fails when one of its WT_CHECKs does.
 * wt_finish prints the total and leaves the result file the test runner
 * counts (tests/testresult.h), as the CUnit suites do.
 */
#ifndef SQLEASE_WINTEST_H
#define SQLEASE_WINTEST_H

/* Check a condition inside a test: on failure, print it with its place
 * and fail the current test.  Evaluates to the condition's truth, so
 * that a test can stop early: if (!WT_CHECK(x != NULL)) return; */
#define WT_CHECK(cond) wt_check((cond) != 0, #cond, __FILE__, __LINE__)

/* The same with a message in printf form, printed on failure. */
#define WT_CHECKF(cond, ...) wt_checkf((cond) != 0, __FILE__, __LINE__, __VA_ARGS__)

int wt_check(int ok, const char *what, const char *file, int line);
int wt_checkf(int ok, const char *file, int line, const char *fmt, ...)
    __attribute__((format(gnu_printf, 4, 5)));

/* Run one test and print "PASS name (N ms)" or "FAIL name (N ms)". */
void wt_run(const char *name, void (*fn)(void));

/* Print "N passed, M failed", write the result file under the program's
 * name and return the exit status for main: 0 only if every test passed. */
int wt_finish(const char *program);

#endif
