/*
 * demo_job.c -- the hidden `__demo-job EVENTFILE` command: the CMD that
 * the demo's supervisors run.  It records "start <mono_ms> <owner>
 * <token> <pid>" when it starts and "stop ..." when SIGTERM (or SIGINT)
 * asks it to stop, one atomic append per line, so the demo can check
 * from the outside who ran when.  Monotonic milliseconds are comparable
 * across processes of one host.
 */
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"
#include "os.h"

static int record(const char *path, const char *what, const char *owner, const char *token)
{
    char line[512];

    snprintf(line, sizeof line, "%s %" PRId64 " %s %s %ld\n", what, sqle_mono_ms(), owner,
             token, sqle_pid());
    return cli_sys_append_line(path, line);
}

int cli_cmd_demo_job(const cli_args *a)
{
    const char *owner = sqle_getenv("SQLEASE_OWNER");
    const char *token = sqle_getenv("SQLEASE_TOKEN");
    const char *events;

    if (a->cmd_argc != 1)
        return cli_usage("__demo-job needs exactly one EVENTFILE");
    events = a->cmd_argv[0];
    if (owner == NULL || owner[0] == '\0' || token == NULL || token[0] == '\0') {
        cli_error("__demo-job: SQLEASE_OWNER and SQLEASE_TOKEN must be set");
        return CLI_EXIT_USAGE;
    }
    if (sqle_signal_setup() != 0 || record(events, "start", owner, token) != 0) {
        cli_error("__demo-job: cannot record to %s", events);
        return CLI_EXIT_OSERR;
    }
    /* Short naps: the stop is recorded within 20 ms of the signal. */
    while (sqle_signal_received() == 0)
        sqle_sleep_ms(20);
    if (record(events, "stop", owner, token) != 0)
        return CLI_EXIT_OSERR;
    return CLI_EXIT_OK;
}
