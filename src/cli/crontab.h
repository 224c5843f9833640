/*
 * crontab.h -- the file `sqlease cron FILE` runs: crontab(5)'s format,
 * read into jobs for the scheduler (src/scheduler.h).
 *
 *   # a comment; blank lines are ignored
 *   NAME=value              an environment variable for the commands of
 *                           the job lines after it (quotes around the
 *                           value, '...' or "...", are taken off)
 *   CRON_TZ=Area/City       the zone of the job lines after it (UTC until
 *                           one is given; "UTC" goes back to it)
 *   SQLEASE_JOB=name        the name of the next job line only
 *   SQLEASE_MISSED=once|skip|all
 *   SQLEASE_MAX_AGE=DURATION
 *   SQLEASE_ABANDONED=at-most-once|at-least-once
 *   SQLEASE_MAX_ATTEMPTS=N
 *   SQLEASE_OVERLAP=forbid|allow|replace
 *                           the policies of the job lines after them
 *   MIN HOUR DOM MON DOW COMMAND
 *   SEC MIN HOUR DOM MON DOW COMMAND   (when the sixth word is a field)
 *   @daily COMMAND, @every 5m COMMAND, ...
 *
 * COMMAND is the rest of the line, run by /bin/sh -c; `%` has no special
 * meaning (unlike crontab(5), where it starts the command's input).  A
 * job without SQLEASE_JOB is named after its command's first word and a
 * hash of the whole line (backup.sh-3fa2c1d0), so that every host that
 * runs the same file calls it the same, and a changed line is a new job.
 */
#ifndef SQLEASE_CLI_CRONTAB_H
#define SQLEASE_CLI_CRONTAB_H

#include <stddef.h>

#include "scheduler.h"

typedef struct cli_cron_entry {
    sqle_job job;            /* name, schedule, tz and policies (owned strings) */
    char *command;
    char **env;              /* "NAME=value" in effect for it, NULL-terminated */
    size_t nenv;
    int line;                /* where it is in the file */
} cli_cron_entry;

typedef struct cli_crontab {
    cli_cron_entry *entries;
    size_t n;
} cli_crontab;

/* Read `text` (the file's contents; `path` names it in errors).  Every
 * schedule is parsed and every zone loaded here, so that a file that
 * reads is one the scheduler takes.  Returns 0, or -1 with one line in
 * err: "PATH:LINE:COLUMN: what is wrong" (nothing is kept). */
int cli_crontab_parse(const char *path, const char *text, cli_crontab *out, char *err,
                      size_t cap);

/* The jobs for sqle_sched_start (pointing into `t`); *n gets how many.
 * NULL when out of memory. */
sqle_job *cli_crontab_jobs(const cli_crontab *t, size_t *n);

void cli_crontab_free(cli_crontab *t);

#endif
