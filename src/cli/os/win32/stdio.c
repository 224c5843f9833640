/*
 * stdio.c -- the standard descriptors on Win32 (see os.h): nothing to
 * fill in (a child inherits only the standard handles listed for it), and
 * no journal.
 */
#include "os_win32.h"

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
