/*
 * session.h -- what `run` and `supervise` share: their command flags, the
 * kill grace and its check, the owner id, a supervisor wired to the
 * callback bridge on an open database, torn down in the one safe order,
 * and what the outside world sees of it: the log (the library's lines
 * filtered so that each thing is said once), the metrics file, the
 * service manager's status and the HTTP endpoints (session_http.c).
 */
#ifndef SQLEASE_CLI_SESSION_H
#define SQLEASE_CLI_SESSION_H

#include <stdint.h>

#include "cli.h"
#include "guard.h"
#include "hold.h"
#include "metrics.h"

/* Flags after `run` / `supervise`, up to and including `-- CMD...`. */
/* The hand-over's flags of supervise and cron. */
typedef struct cli_handoff_flags {
    int handoff;              /* --handoff (or implied): a ready follower; SIGTERM
                                 hands the lease over */
    int64_t priority;         /* --priority */
    int64_t preempt_after_ms; /* --preempt-after / --min-hold; 0: the library's */
    int priority_given, preempt_given, min_hold_given;
} cli_handoff_flags;

typedef struct cli_job_flags {
    int no_wait;             /* run: --no-wait (timeout_ms is then 0) */
    int64_t timeout_ms;      /* run: give up after this long; -1 wait for ever */
    int conflict_code;       /* run: exit code when the lease is not obtained */
    int64_t min_hold_ms;     /* run only */
    int64_t kill_grace_ms;  /* -1 until resolved */
    const char *metrics_file; /* NULL: none */
    const char *http;        /* supervise: --http ADDR:PORT (checked); NULL: none */
    int crash_limit;         /* supervise: quick failures in a row before pausing; 0 off */
    int64_t crash_window_ms; /* supervise: a failure is quick if CMD ran less */
    int64_t crash_pause_ms;  /* supervise: out of contention this long; -1: 2 x ttl */
    char **cmd;              /* NULL-terminated CMD argv */
    const char *data;        /* --data: published with the hold; NULL: none */
    const char *schedule;    /* run --schedule / --every: the fire it claims; NULL none */
    char every_buf[80];      /* "@every D" for --every */
    const char *schedule_tz; /* run --tz */
    int64_t late_limit_ms;   /* run --late-limit; 0: the schedule's period */
    cli_handoff_flags ho;    /* supervise: the hand-over's flags */
} cli_job_flags;

#define CLI_DEFAULT_CONFLICT_CODE CLI_EXIT_NOT_HELD
#define CLI_DEFAULT_CRASH_LIMIT 5
#define CLI_DEFAULT_CRASH_WINDOW_MS 60000

typedef struct cli_session {
    const cli_args *args;
    int persistent;          /* supervise: retry a database unreachable at start */
    sqlease_db *db;
    sqlease_supervisor *sup; /* NULL before start, and while paused */
    cli_hold hold;
    int hold_ready;
    uint64_t starts_before; /* holds started before the current supervisor */
    const char *name;
    char owner[SQLEASE_MAX_OWNER + 1];
    int64_t ttl_ms, heartbeat_ms, renew_deadline_ms, retry_ms;
    int64_t min_hold_ms;    /* run --min-hold: kept in the row at release */
    int64_t wait_ms;        /* run: how long it may wait for the lease (-1:
                               for ever); shorter than the ttl, it cannot
                               watch a row for a ttl (take_by_expiry) */
    const char *data;       /* --data: published with every take */
    const char *schedule;   /* run --schedule: every take claims its fire */
    const char *schedule_tz;
    int64_t late_limit_ms;
    int handoff;            /* supervise --handoff */
    int64_t priority;       /* the priority in force (--priority, or drained) */
    int64_t preempt_after_ms;
    int64_t kill_grace_ms;
    cli_guard guard;        /* CMD's guard process, while CMD runs */
    int64_t guard_slack_ms; /* the guard acts this long after the deadline */

    /* The library's log lines pass through the session (session.c);
     * on the heap, because a handle left behind by a stop that timed out
     * may still log after the session is gone. */
    struct cli_session_log *log;

    /* What the metrics file and the service manager are told. */
    cli_metrics metrics;
    int64_t metrics_at;     /* mono ms of the last metrics write, 0 never */
    cli_metrics_values shown;
    uint64_t base[4];       /* counters of supervisors stopped before */
    int64_t contact_mono;   /* the database's last answer, -1 never */
    char status[400];       /* the last STATUS= sent */
    char pause_note[200];   /* STATUS while out of contention */
    char holder[SQLEASE_MAX_OWNER + 1]; /* who holds it, as last reported */
    int holder_known;

    /* --http: what its endpoints answer from (session_http.c); NULL off. */
    struct cli_session_http *http;
} cli_session;

/* Parse the command's flags; is_run allows the run-only flags, else the
 * supervise-only ones; both take --data S.  Returns CLI_CONTINUE or an
 * exit code (message printed). */
int cli_job_flags_parse(const cli_args *a, int is_run, cli_job_flags *f);
/* One of the hand-over's flags at a->cmd_argv[*i] (session.c): 1 parsed
 * (*i moved past its value), 0 not one, -1 usage error (printed). */
int cli_handoff_flag(const cli_args *a, int *i, cli_handoff_flags *h);
/* After the last flag: conflicts (exit 64, printed), and --priority,
 * --preempt-after, --min-hold imply --handoff. */
int cli_handoff_finish(const char *command, cli_handoff_flags *h);

/* Check everything, connect, and start the supervisor (whose first
 * acquire runs before this returns).  Resolves f->kill_grace_ms and
 * f->crash_pause_ms.  persistent (supervise): a database that cannot be
 * reached is tried again every retry until it answers, logging each new
 * failure once, instead of exiting 69; a signal meanwhile returns 0.
 * An error of the first acquire is held back (see
 * cli_session_first_error).  Returns CLI_CONTINUE or an exit code
 * (message printed, nothing left open). */
int cli_session_start(const cli_args *a, cli_job_flags *f, cli_session *s, int persistent);

/* The first acquire failed (the supervisor keeps retrying): its error
 * line, which has not been printed; NULL if it did not fail.  print: log
 * it now (a waiting `run`, `supervise`) instead of leaving it to the
 * caller's final message. */
const char *cli_session_first_error(cli_session *s, int print);

/* Stop the supervisor (releases the lease, scoped to our owner id), free
 * it, close the database, remove the metrics file.  CMD must already be
 * stopped.  Returns 0, or -1 if the release failed (already logged). */
int cli_session_stop(cli_session *s);

/* Make cli_session_stop's release free the row at once even with
 * --min-hold: CMD never ran (it could not be started), and a minimum hold
 * would keep every other host from running it until it passed. */
void cli_session_release_at_once(cli_session *s);

/* Stay out of contention (supervise's crash limit): stop and free the
 * supervisor, which releases the lease; the database stays open.  note
 * is what the service manager's status says meanwhile. */
void cli_session_pause(cli_session *s, const char *note);
/* Contend again with a new supervisor.  Returns CLI_CONTINUE, or an exit
 * code (message printed). */
int cli_session_resume(cli_session *s);

/* Once per round of the main loop: rewrite the metrics file when
 * something changed (and at least every heartbeat), tell the service
 * manager a new status, say when the database answers again after a
 * failure. */
void cli_session_observe(cli_session *s);
/* supervise: READY=1 to the service manager (contending now). */
void cli_session_ready(cli_session *s);
/* STOPPING=1 to the service manager. */
void cli_session_stopping(cli_session *s);

/* 1 if the database is failing now: an error was logged and it has not
 * answered since (or never has).  reason (may be NULL) gets the error. */
int cli_session_failing(cli_session *s, char *reason, size_t cap);

/* CMD's guard (guard.h), driven from the main thread.  guard_armed is
 * cli_hold_start_child's `armed` (ud: the session): it starts the guard
 * for CMD's process group while CMD waits between fork and exec, so that
 * CMD never runs unguarded; guard_tick every round of the main loop while
 * CMD runs (passes the hold's deadline on when it moved); guard_stopping
 * just before sqlease stops CMD itself; guard_done once CMD has been
 * reaped, or was never let run. */
void cli_session_guard_armed(void *session, long pid);
void cli_session_guard_tick(cli_session *s);
void cli_session_guard_stopping(cli_session *s);
void cli_session_guard_done(cli_session *s);
/* 1 if the guard stopped CMD at the hold's deadline (sqlease was frozen
 * or suspended past it): the lease was lost.  Before guard_done. */
int cli_session_guard_acted(cli_session *s);

/* ---- session_http.c: --http ------------------------------------------ */

/* Serve the session's /metrics, /health, /leader and /holder on
 * addr_port (checked by the flag's parse), from before the database is
 * reached (they say it is not, meanwhile).  Returns CLI_CONTINUE, or an
 * exit code (message printed). */
int cli_session_http_start(cli_session *s, const char *addr_port);
/* Stop serving (waits for answers in flight); before the database and
 * the bridge go.  Nothing without --http. */
void cli_session_http_stop(cli_session *s);
/* The supervisor now in force (NULL: none), before it is stopped. */
void cli_session_http_sup(cli_session *s, sqlease_supervisor *sup);
/* The session is stopping: /health and /leader say so. */
void cli_session_http_stopping(cli_session *s);
/* Every round of the main loop: what the endpoints answer from (v: the
 * metrics now; NULL keeps the last). */
void cli_session_http_update(cli_session *s, const cli_metrics_values *v);

/* Who holds the lease, from one status query on a short-lived lease
 * handle.  Returns 1 with owner (and *token, *expires_in_ms and the
 * holder's data, "" when none) set when another hold has it; 0 when it
 * is free, with owner set to who held it last (the row's last_owner, ""
 * if it does not say) and *token to the token that hold had; -1 if the
 * query failed.  token, expires_in_ms and data may be NULL. */
int cli_session_holder(cli_session *s, char *owner, size_t cap, int64_t *token,
                       int64_t *expires_in_ms, char *data, size_t dcap);

#endif
