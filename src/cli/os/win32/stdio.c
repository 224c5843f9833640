/*
 * stdio.c -- the standard descriptors on Win32 (see os.h): nothing to
 * fill in (a child inherits only the standard handles listed for it), no
 * journal, and stderr written as it is.
 */
#include "os_win32.h"

#include <stdio.h>

void sqle_stdio_ensure(void)
{
}

int cli_sys_stderr_is_journal(void)
{
    return 0;
}

/* A closed pipe shows up as a failed write, which is reported then. */
int cli_os_stdout_gone(void)
{
    return 0;
}

/* Windows has no guard process and no O_NONBLOCK for an anonymous pipe
 * (PIPE_NOWAIT is documented as legacy): the line is written as it is. */
int cli_os_stderr_write(const char *buf, size_t n)
{
    if (fwrite(buf, 1, n, stderr) != n)
        return -1;
    fflush(stderr);
    return 0;
}

unsigned long cli_os_stderr_dropped(void)
{
    return 0;
}
