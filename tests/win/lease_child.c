/*
 * lease_child.c -- a CMD for testing `sqlease run` and `sqlease supervise`
 * on Windows (tests/win/test_cli_win.c): prints the lease variables
 * sqlease gives its command, optionally writes its pid to a file (so that
 * the test can watch it), sleeps, and exits with the status it is told.
 *
 *   lease_child.exe [EXIT_CODE [SLEEP_MS [PIDFILE]]]     (defaults: 3, 0, none)
 */
#include <stdio.h>
#include <stdlib.h>

#include "platform.h"

static const char *env_or_unset(const char *name)
{
    const char *v = getenv(name);

    return v != NULL ? v : "(unset)";
}

/* Written under a temporary name and renamed, so that a reader polling
 * for the file never reads half a pid. */
static int write_pid(const char *path)
{
    char tmp[1024];
    FILE *f;

    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    f = fopen(tmp, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "%ld\n", sqle_pid());
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    int code = argc > 1 ? atoi(argv[1]) : 3;
    long long sleep_ms = argc > 2 ? atoll(argv[2]) : 0;

    printf("SQLEASE_NAME=%s\n", env_or_unset("SQLEASE_NAME"));
    printf("SQLEASE_OWNER=%s\n", env_or_unset("SQLEASE_OWNER"));
    printf("SQLEASE_TOKEN=%s\n", env_or_unset("SQLEASE_TOKEN"));
    fflush(stdout);
    if (argc > 3 && write_pid(argv[3]) != 0) {
        perror(argv[3]);
        return 2;
    }
    sqle_sleep_ms(sleep_ms);
    return code;
}
