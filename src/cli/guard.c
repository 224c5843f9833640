/*
 * guard.c -- the CMD guard process (see guard.h for what it is for): when
 * to tell it what.  The process itself, its pipes and its signals are the
 * OS layer's (os.h; src/cli/os/posix/guard.c); on Windows there is no
 * guard, and every call here does nothing.
 */
#include <inttypes.h>
#include <string.h>

#include "cli.h"
#include "guard.h"
#include "os.h"

void cli_guard_init(cli_guard *g)
{
    memset(g, 0, sizeof *g);
    cli_os_guard_init(&g->os);
}

/* A guard whose pipe broke is gone: said once, and CMD then has only the
 * supervisor's watchdog and the death signal. */
static void guard_send(cli_guard *g, int64_t term_at, int64_t kill_at)
{
    if (cli_os_guard_send(&g->os, term_at, kill_at) != 0)
        cli_log(SQLEASE_LOG_WARN, "the CMD guard (pid %ld) is gone; CMD is now stopped only by"
                " sqlease itself", g->os.pid);
}

int cli_guard_start(cli_guard *g, long pgid, int64_t deadline_mono, int64_t grace_ms,
                    int64_t slack_ms)
{
    int64_t term_at = deadline_mono + slack_ms;
    char why[256];
    int r;

    cli_guard_init(g);
    g->grace_ms = grace_ms;
    g->slack_ms = slack_ms;
    g->deadline = deadline_mono;
    r = cli_os_guard_start(&g->os, pgid, term_at, term_at + grace_ms, grace_ms,
                           cli_log_to_journal(), why, sizeof why);
    if (r > 0)
        return 0; /* no guard on this OS */
    if (r < 0) {
        if (why[0] != '\0')
            cli_log(SQLEASE_LOG_WARN, "cannot start the CMD guard: %s", why);
        return -1;
    }
    cli_log(SQLEASE_LOG_DEBUG, "CMD guard pid %ld watches process group %ld", g->os.pid, pgid);
    return 0;
}

void cli_guard_deadline(cli_guard *g, int64_t deadline_mono)
{
    if (g->os.pid <= 0 || deadline_mono == g->deadline)
        return;
    g->deadline = deadline_mono;
    guard_send(g, deadline_mono + g->slack_ms, deadline_mono + g->slack_ms + g->grace_ms);
}

void cli_guard_stopping(cli_guard *g)
{
    if (g->os.pid <= 0)
        return;
    guard_send(g, CLI_OS_GUARD_NEVER, sqle_mono_ms() + g->grace_ms + g->slack_ms);
}

int cli_guard_acted(cli_guard *g)
{
    if (!g->acted && cli_os_guard_reported(&g->os))
        g->acted = 1;
    return g->acted;
}

/* A second is far more than a guard needs to read one record and exit;
 * one that takes longer has been stopped by someone, and is killed. */
void cli_guard_disarm(cli_guard *g)
{
    cli_os_guard_end(&g->os, 1000);
    cli_guard_init(g);
}
