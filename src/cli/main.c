/*
 * main.c -- the `sqlease` tool's entry point: put the signal state a
 * parent left back to defaults, parse the global flags, hand over to the
 * command, and make sure what it printed reached stdout.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "os.h"

typedef struct command {
    const char *name;
    int (*run)(const cli_args *a);
} command;

static const command commands[] = {
    {"migrate", cli_cmd_migrate},
    {"status", cli_cmd_status},
    {"list", cli_cmd_list},
    {"run", cli_cmd_run},
    {"supervise", cli_cmd_supervise},
    {"cron", cli_cmd_cron},
    {"fires", cli_cmd_fires},
    {"history", cli_cmd_history},
    {"release", cli_cmd_release},
    {"transfer", cli_cmd_transfer},
    {"demo", cli_cmd_demo},
    {"__demo-job", cli_cmd_demo_job}, /* the demo's CMD; not in --help */
};

int main(int argc, char **argv)
{
    cli_args a;
    int rc;
    size_t i;

    /* Before anything else, and before any thread exists (they inherit
     * the mask): a parent may have left SIGCHLD ignored, which makes the
     * kernel discard CMD's exit status, or SIGTERM blocked, which would
     * keep sqlease from ever hearing it. */
    sqle_signal_defaults();
    /* Output to a reader that has gone (`sqlease list | head -0`) must
     * end in "cannot write to standard output" and 74, as below, not in
     * a silent death by SIGPIPE: every command, not only those that
     * route signals. */
    cli_os_ignore_sigpipe();
    /* A closed stdin would be the next thing opened (the database's
     * socket), and CMD would get it as its stdin. */
    sqle_stdio_ensure();
    cli_log_detect();
    rc = cli_args_parse(argc, argv, &a);
    if (rc == CLI_CONTINUE) {
        for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
            if (strcmp(a.command, commands[i].name) == 0)
                break;
        if (i == sizeof commands / sizeof commands[0])
            rc = cli_usage("unknown command '%s'", a.command);
        else
            rc = commands[i].run(&a);
    }
    /* A script reading our output must not get a silent truncation. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error("cannot write to standard output");
        if (rc == CLI_EXIT_OK)
            rc = CLI_EXIT_IOERR;
    }
    return rc;
}
