/*
 * guard.c -- the guard process on Win32 (see os.h): there is none.  CMD
 * runs in a job object that is killed when sqlease's handle to it
 * closes, however sqlease ends; what Windows cannot do is stop CMD at the
 * deadline while sqlease itself is frozen.
 */
#include "os_win32.h"

#include <string.h>

void cli_os_guard_init(cli_os_guard *g)
{
    memset(g, 0, sizeof *g);
    g->fd = -1;
    g->report_fd = -1;
}

int cli_os_guard_start(cli_os_guard *g, long pgid, int64_t term_at, int64_t kill_at,
                       int64_t grace_ms, int journal, char *why, size_t cap)
{
    (void)pgid;
    (void)journal;
    (void)term_at;
    (void)kill_at;
    (void)grace_ms;
    cli_os_guard_init(g);
    if (cap > 0)
        why[0] = '\0';
    return 1;
}

int cli_os_guard_send(cli_os_guard *g, int64_t term_at, int64_t kill_at)
{
    (void)g;
    (void)term_at;
    (void)kill_at;
    return 0;
}

int cli_os_guard_reported(cli_os_guard *g)
{
    (void)g;
    return 0;
}

void cli_os_guard_end(cli_os_guard *g, int64_t wait_ms)
{
    (void)wait_ms;
    cli_os_guard_init(g);
}
