/*
 * session.c -- the set-up and tear-down `run` and `supervise` share (see
 * session.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "child.h"
#include "platform.h"
#include "session.h"

int cli_job_flags_parse(const cli_args *a, int is_run, cli_job_flags *f)
{
    int i;

    memset(f, 0, sizeof *f);
    f->kill_grace_ms = -1;
    for (i = 0; i < a->cmd_argc; i++) {
        char **argv = a->cmd_argv;
        const char *arg = argv[i];
        const char *val = NULL;
        int r;

        if (strcmp(arg, "--") == 0) {
            if (i + 1 >= a->cmd_argc)
                return cli_usage("%s: missing CMD after --", a->command);
            f->cmd = argv + i + 1;
            return CLI_CONTINUE;
        }
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            cli_print_help();
            return CLI_EXIT_OK;
        }
        if (is_run && strcmp(arg, "--no-wait") == 0) {
            f->no_wait = 1;
            continue;
        }
        if (is_run) {
            r = cli_flag_value(a->cmd_argc, argv, &i, "--min-hold", &val);
            if (r < 0)
                return CLI_EXIT_USAGE;
            if (r > 0) {
                if (cli_parse_duration("--min-hold", val, &f->min_hold_ms) != 0)
                    return CLI_EXIT_USAGE;
                continue;
            }
        }
        r = cli_flag_value(a->cmd_argc, argv, &i, "--kill-grace", &val);
        if (r < 0)
            return CLI_EXIT_USAGE;
        if (r > 0) {
            if (cli_parse_duration("--kill-grace", val, &f->kill_grace_ms) != 0)
                return CLI_EXIT_USAGE;
            continue;
        }
        /* What the hold publishes in the row: checked with the other
         * options, before connecting (cli_session_start). */
        r = cli_flag_value(a->cmd_argc, argv, &i, "--data", &val);
        if (r < 0)
            return CLI_EXIT_USAGE;
        if (r > 0) {
            f->data = val;
            continue;
        }
        if (arg[0] == '-')
            return cli_unknown_flag(a->command, arg);
        return cli_usage("%s: expected -- CMD [ARG...] before '%s'", a->command, arg);
    }
    return cli_usage("%s: missing -- CMD [ARG...]", a->command);
}

/* The effective timing (the flags' values or the library defaults), the
 * kill grace and its rule: SIGTERM, the grace and the SIGKILL must all
 * fit in the ttl - renew_deadline that on_stopped has before another
 * owner may take the lease. */
static int resolve_timing(const sqlease_options *eff, cli_job_flags *f, cli_session *s)
{
    int64_t window;

    s->ttl_ms = eff->ttl_ms;
    s->heartbeat_ms = eff->heartbeat_ms;
    s->renew_deadline_ms = eff->renew_deadline_ms;
    s->retry_ms = eff->retry_ms;
    window = s->ttl_ms - s->renew_deadline_ms;
    if (f->kill_grace_ms < 0)
        f->kill_grace_ms = window / 2;
    s->kill_grace_ms = f->kill_grace_ms;
    /* The guard acts a little after the deadline, so that a responsive
     * sqlease (whose watchdog fires at the deadline) does the stopping,
     * yet well inside the window: half of what the grace leaves, at most
     * 100 ms. */
    s->guard_slack_ms = (window - f->kill_grace_ms) / 2;
    if (s->guard_slack_ms > 100)
        s->guard_slack_ms = 100;
    if (s->guard_slack_ms < 0)
        s->guard_slack_ms = 0;
    if (f->kill_grace_ms >= window)
        return cli_usage("--kill-grace %" PRId64 "ms does not fit inside ttl - renew-deadline"
                         " (%" PRId64 "ms); CMD must be gone before another owner may"
                         " take the lease", f->kill_grace_ms, window);
    return CLI_CONTINUE;
}

int cli_session_start(const cli_args *a, cli_job_flags *f, cli_session *s)
{
    sqlease_options o, eff;
    sqlease_error err;
    int64_t window, stop_wait;
    int rc, st;

    memset(s, 0, sizeof *s);
    memset(&err, 0, sizeof err);
    cli_guard_init(&s->guard);
    rc = cli_check_options(a);
    if (rc != CLI_CONTINUE)
        return rc;
    if (f->data != NULL) {
        sqlease_options_init(&o);
        o.data = f->data;
        if (sqlease_options_check(&o, &err) != SQLEASE_OK)
            return cli_usage("--data: %s", err.message);
    }
    /* The timing (and so the kill-grace rule) may come from the DSN's
     * odbc.ini section: settle it once connected. */
    rc = cli_open_db(a, &s->db);
    if (rc != CLI_CONTINUE)
        return rc;
    cli_lease_options(a, &o);
    rc = cli_effective_options(s->db, &o, &eff);
    if (rc == CLI_CONTINUE)
        rc = resolve_timing(&eff, f, s);
    if (rc != CLI_CONTINUE) {
        cli_session_stop(s);
        return rc;
    }
    s->name = eff.name;
    if (a->owner != NULL) {
        snprintf(s->owner, sizeof s->owner, "%s", a->owner);
    } else if ((st = sqlease_owner_id(s->owner, sizeof s->owner, &err)) != SQLEASE_OK) {
        cli_session_stop(s);
        return cli_fail(&err, st);
    }
    /* on_stopped waits for CMD up to the grace plus a margin for the
     * SIGKILL and the reap, never past the window. */
    window = s->ttl_ms - s->renew_deadline_ms;
    stop_wait = f->kill_grace_ms + 1000;
    if (stop_wait > window)
        stop_wait = window;
    if (cli_hold_init(&s->hold, stop_wait) != 0) {
        cli_error("cannot create a mutex");
        cli_session_stop(s);
        return CLI_EXIT_OSERR;
    }
    s->hold_ready = 1;
    /* Routed before the first acquire, so a SIGTERM that arrives while it
     * runs is seen afterwards instead of killing us mid-statement. */
    if (sqlease_signal_setup() != 0) {
        cli_error("cannot install signal handlers");
        cli_session_stop(s);
        return CLI_EXIT_OSERR;
    }
    cli_lease_options(a, &o);
    o.owner = s->owner;
    o.data = f->data;
    cli_hold_attach(&s->hold, &o);
    st = sqlease_supervisor_start(&s->sup, s->db, &o, &err);
    if (st != SQLEASE_OK) {
        s->sup = NULL;
        rc = cli_fail(&err, st);
        if ((st == SQLEASE_ENOTABLE || st == SQLEASE_ENOROW) &&
            strstr(err.message, "migrate") == NULL)
            cli_error("run `sqlease migrate` first");
        cli_session_stop(s);
        return rc;
    }
    /* CMD's SQLEASE_FENCE_SQL is the running hold's fence. */
    s->hold.sup = s->sup;
    cli_log(SQLEASE_LOG_DEBUG, "lease '%s': owner %s, ttl %" PRId64 "ms, heartbeat %" PRId64
            "ms, renew deadline %" PRId64 "ms, retry %" PRId64 "ms, kill grace %" PRId64 "ms",
            s->name, s->owner, s->ttl_ms, s->heartbeat_ms, s->renew_deadline_ms, s->retry_ms,
            f->kill_grace_ms);
    return CLI_CONTINUE;
}

int cli_session_stop(cli_session *s)
{
    sqlease_error err;
    int r = 0;

    memset(&err, 0, sizeof err);
    cli_guard_disarm(&s->guard);
    if (s->sup != NULL) {
        int st = sqlease_supervisor_stop(s->sup, &err);
        if (st != SQLEASE_OK) {
            cli_log(SQLEASE_LOG_DEBUG, "release of lease '%s' failed: %s (it expires by itself"
                    " within the ttl)", s->name, err.message[0] ? err.message
                    : sqlease_strerror(st));
            r = -1;
        }
        if (st == SQLEASE_ETIMEOUT) {
            /* A statement is stuck in the driver (a partition, a driver
             * that ignores its timeout).  CMD is already stopped and the
             * process is about to exit: waiting for the statement to free
             * the handles would only delay the exit, so leave them. */
            s->sup = NULL;
            s->db = NULL;
        } else {
            sqlease_supervisor_free(s->sup);
            s->sup = NULL;
        }
    }
    if (s->db != NULL) {
        sqlease_db_close(s->db);
        s->db = NULL;
    }
    if (s->hold_ready) {
        cli_hold_destroy(&s->hold);
        s->hold_ready = 0;
    }
    return r;
}

/* The deadline of the current hold as a monotonic time, or -1 when the
 * supervisor says it is not holding (then sqlease is about to stop CMD
 * itself, and the guard keeps the last deadline it was told). */
static int64_t hold_deadline(cli_session *s)
{
    sqlease_state st;

    memset(&st, 0, sizeof st);
    if (s->sup == NULL || sqlease_supervisor_state(s->sup, &st) != SQLEASE_OK ||
        !st.holding || st.deadline_in_ms <= 0)
        return -1;
    return sqlease_mono_ms() + st.deadline_in_ms;
}

void cli_session_guard_start(cli_session *s, const sqlease_child *c)
{
    int64_t deadline = hold_deadline(s);

    /* Lost between the start and here: the guard gets "now", sqlease's own
     * stop follows within one round of its main loop. */
    if (deadline < 0)
        deadline = sqlease_mono_ms();
    (void)cli_guard_start(&s->guard, cli_child_pid(c), deadline, s->kill_grace_ms,
                         s->guard_slack_ms);
}

void cli_session_guard_tick(cli_session *s)
{
    int64_t deadline = hold_deadline(s);

    /* Two clock readings go into the figure: ignore jitter of a few ms so
     * that only a renew (a move by about a heartbeat) is written. */
    if (deadline >= 0 && (deadline > s->guard.deadline + 10 || deadline < s->guard.deadline - 10))
        cli_guard_deadline(&s->guard, deadline);
}

void cli_session_guard_stopping(cli_session *s)
{
    cli_guard_stopping(&s->guard);
}

void cli_session_guard_done(cli_session *s)
{
    cli_guard_disarm(&s->guard);
}

int cli_session_guard_acted(cli_session *s)
{
    return cli_guard_acted(&s->guard);
}

int cli_session_never_reached_db(cli_session *s)
{
    sqlease_state st;

    memset(&st, 0, sizeof st);
    if (s->sup == NULL || sqlease_supervisor_state(s->sup, &st) != SQLEASE_OK)
        return 1;
    return st.last_contact_ago_ms < 0;
}

void cli_session_describe_holder(cli_session *s, const cli_args *a)
{
    sqlease_options o;
    sqlease_lease *lease = NULL;
    sqlease_lease_info info;
    sqlease_error err;

    memset(&err, 0, sizeof err);
    memset(&info, 0, sizeof info);
    cli_lease_options(a, &o);
    o.owner = s->owner;
    if (sqlease_lease_new(&lease, s->db, &o, &err) == SQLEASE_OK &&
        sqlease_lease_status(lease, &info, &err) == SQLEASE_OK && info.held)
        cli_error("lease '%s' is held by %s (token %" PRId64 ", expires in %" PRId64 " ms%s%s)",
                  s->name, info.owner, info.token, info.expires_at_ms - info.db_now_ms,
                  info.data[0] != '\0' ? ", data " : "", info.data);
    else
        cli_error("lease '%s' is not held by this process", s->name);
    sqlease_lease_free(lease);
}
