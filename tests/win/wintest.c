/*
 * wintest.c -- assertions and reporting for the Windows test programs
 * (see wintest.h).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <io.h>
#include <stdarg.h>
#include <stdio.h>

#include "platform.h"
#include "testresult.h"
#include "wintest.h"

static int g_current_failed;
static unsigned long g_passed, g_failed;

int wt_check(int ok, const char *what, const char *file, int line)
{
    if (!ok) {
        printf("  check failed: %s (%s:%d)\n", what, file, line);
        fflush(stdout);
        g_current_failed = 1;
    }
    return ok;
}

int wt_checkf(int ok, const char *file, int line, const char *fmt, ...)
{
    va_list ap;

    if (!ok) {
        printf("  check failed (%s:%d): ", file, line);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
        fflush(stdout);
        g_current_failed = 1;
    }
    return ok;
}

/* Output goes to the runner through a pipe: binary mode keeps it free of
 * carriage returns, and each line is flushed before a test can hang or
 * crash. */
void wt_run(const char *name, void (*fn)(void))
{
    static int binary;
    int64_t t0;

    if (!binary) {
        fflush(stdout);
        (void)_setmode(_fileno(stdout), _O_BINARY);
        binary = 1;
    }
    g_current_failed = 0;
    t0 = sqle_mono_ms();
    fn();
    printf("%s %s (%" PRId64 " ms)\n", g_current_failed ? "FAIL" : "PASS", name,
           sqle_mono_ms() - t0);
    fflush(stdout);
    if (g_current_failed)
        g_failed++;
    else
        g_passed++;
}

int wt_finish(const char *program)
{
    printf("%lu passed, %lu failed\n", g_passed, g_failed);
    fflush(stdout);
    if (test_result_write(program, g_passed, g_failed) != 0)
        return 1;
    return g_failed != 0 ? 1 : 0;
}
