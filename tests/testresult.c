/*
 * testresult.c -- writes the result file of a test program (see
 * testresult.h).  Plain C and the platform layer's pid, so that the
 * POSIX suites and the Windows programs share it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "platform.h"
#include "testresult.h"

/* The file is written under a temporary name and then renamed, so that
 * the runner finds either no file (which it counts as a failure: the
 * program died before reporting) or a whole one. */
int test_result_write(const char *name, unsigned long passed, unsigned long failed)
{
    const char *dir = getenv("SQLEASE_RESULT_DIR");
    char tmp[1024], path[1024];
    FILE *f;
    int bad;

    if (dir == NULL || dir[0] == '\0')
        return 0;
    snprintf(tmp, sizeof tmp, "%s/.%s.%ld.tmp", dir, name, sqle_pid());
    snprintf(path, sizeof path, "%s/%s.%ld.result", dir, name, sqle_pid());
    f = fopen(tmp, "w");
    if (f == NULL) {
        perror(tmp);
        return -1;
    }
    bad = fprintf(f, "%lu %lu\n", passed, failed) < 0;
    bad = fclose(f) != 0 || bad;
#ifdef _WIN32
    (void)remove(path); /* the C runtime's rename does not replace a file */
#endif
    if (bad || rename(tmp, path) != 0) {
        perror(path);
        (void)remove(tmp);
        return -1;
    }
    return 0;
}
