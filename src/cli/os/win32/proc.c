/*
 * proc.c -- the process table on Win32 (see os.h): there is none to read
 * (a child's processes are counted through its job object instead).
 */
#include "os_win32.h"

#include <string.h>

int cli_os_proc_stat(long pid, cli_os_proc *p)
{
    (void)pid;
    memset(p, 0, sizeof *p);
    return -2;
}

int cli_os_proc_scan(int (*fn)(void *userdata, const cli_os_proc *p), void *userdata)
{
    (void)fn;
    (void)userdata;
    return -1;
}

int cli_os_group_members(long pgid)
{
    (void)pgid;
    return -1;
}

/* The demo is the only user, and it does not run on Windows. */
int cli_sys_pid_alive(long pid)
{
    (void)pid;
    return 0;
}
