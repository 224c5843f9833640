/*
 * session.h -- what `run` and `supervise` share: their command flags, the
 * kill grace and its check, the owner id, and a supervisor wired to the
 * callback bridge on an open database, torn down in the one safe order.
 */
#ifndef SQLEASE_CLI_SESSION_H
#define SQLEASE_CLI_SESSION_H

#include <stdint.h>

#include "cli.h"
#include "guard.h"
#include "hold.h"

/* Flags after `run` / `supervise`, up to and including `-- CMD...`. */
typedef struct cli_job_flags {
    int no_wait;            /* run only */
    int64_t min_hold_ms;    /* run only */
    int64_t kill_grace_ms;  /* -1 until resolved */
    char **cmd;             /* NULL-terminated CMD argv */
    const char *data;       /* --data: published with the hold; NULL: none */
} cli_job_flags;

typedef struct cli_session {
    sqlease_db *db;
    sqlease_supervisor *sup;
    cli_hold hold;
    int hold_ready;
    const char *name;
    char owner[SQLEASE_MAX_OWNER + 1];
    int64_t ttl_ms, heartbeat_ms, renew_deadline_ms, retry_ms;
    int64_t kill_grace_ms;
    cli_guard guard;        /* CMD's guard process, while CMD runs */
    int64_t guard_slack_ms; /* the guard acts this long after the deadline */
} cli_session;

/* Parse the command's flags; is_run allows --no-wait and --min-hold;
 * both take --data S.
 * Returns CLI_CONTINUE or an exit code (message printed). */
int cli_job_flags_parse(const cli_args *a, int is_run, cli_job_flags *f);

/* Check everything, connect, and start the supervisor (whose first
 * acquire runs before this returns).  Resolves f->kill_grace_ms.  Returns
 * CLI_CONTINUE or an exit code (message printed, nothing left open). */
int cli_session_start(const cli_args *a, cli_job_flags *f, cli_session *s);

/* Stop the supervisor (releases the lease, scoped to our owner id), free
 * it and close the database.  CMD must already be stopped.  Returns 0, or
 * -1 if the release failed (already logged). */
int cli_session_stop(cli_session *s);

/* CMD's guard (guard.h), driven from the main thread.  guard_start right
 * after CMD was started; guard_tick every round of the main loop while CMD
 * runs (passes the hold's deadline on when it moved); guard_stopping just
 * before sqlease stops CMD itself; guard_done once CMD has been reaped. */
void cli_session_guard_start(cli_session *s, const sqlease_child *c);
void cli_session_guard_tick(cli_session *s);
void cli_session_guard_stopping(cli_session *s);
void cli_session_guard_done(cli_session *s);
/* 1 if the guard stopped CMD at the hold's deadline (sqlease was frozen
 * or suspended past it): the lease was lost.  Before guard_done. */
int cli_session_guard_acted(cli_session *s);

/* 1 if the supervisor has never had an answer from the database. */
int cli_session_never_reached_db(cli_session *s);

/* Log who holds the lease (for `run --no-wait`): one status query. */
void cli_session_describe_holder(cli_session *s, const cli_args *a);

#endif
