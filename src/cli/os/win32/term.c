/*
 * term.c -- the terminal and job control on Win32 (see os.h): there is
 * none.  CMD shares sqlease's console, so nothing is handed over and
 * nothing is ever reported stopped.
 */
#include "os_win32.h"

int sqle_child_stopped(sqle_child *c, int *sig)
{
    (void)c;
    (void)sig;
    return 0;
}

int sqle_child_terminal(sqle_child *c, int to_child)
{
    (void)c;
    (void)to_child;
    return 0;
}

void sqle_job_suspend(int sig)
{
    (void)sig;
}

int sqle_child_resume(sqle_child *c, int sig)
{
    (void)c;
    (void)sig;
    return 1;
}
