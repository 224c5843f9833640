/*
 * lease_child.c -- a CMD for testing `sqlease run` on Windows: prints the
 * lease variables sqlease gives its command, optionally sleeps, and exits
 * with the status it is told, so that ci/windows.sh can check under Wine
 * that the token reached CMD and CMD's status came back.
 *
 *   lease_child.exe [EXIT_CODE [SLEEP_MS]]     (defaults: 3, 0)
 */
#include <stdio.h>
#include <stdlib.h>

#include "platform.h"

static const char *env_or_unset(const char *name)
{
    const char *v = getenv(name);

    return v != NULL ? v : "(unset)";
}

int main(int argc, char **argv)
{
    int code = argc > 1 ? atoi(argv[1]) : 3;
    long long sleep_ms = argc > 2 ? atoll(argv[2]) : 0;

    printf("SQLEASE_NAME=%s\n", env_or_unset("SQLEASE_NAME"));
    printf("SQLEASE_OWNER=%s\n", env_or_unset("SQLEASE_OWNER"));
    printf("SQLEASE_TOKEN=%s\n", env_or_unset("SQLEASE_TOKEN"));
    fflush(stdout);
    sqlease_sleep_ms(sleep_ms);
    return code;
}
