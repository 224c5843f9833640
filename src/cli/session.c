/*
 * session.c -- the set-up and tear-down `run` and `supervise` share, and
 * what they show the outside world (see session.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "child.h"
#include "classify.h"
#include "db.h"
#include "http.h"
#include "internal.h"
#include "notify.h"
#include "odbc.h"
#include "os.h"
#include "session.h"

/* ---- flags --------------------------------------------------------- */

/* An exit code: digits only, 0..255 (what a process can return). */
static int parse_exit_code(const char *flag, const char *text, int *out)
{
    long v = 0;
    const char *p = text;

    if (*p == '\0')
        return cli_usage("%s: missing number", flag);
    for (; *p != '\0'; p++) {
        if (*p < '0' || *p > '9' || v > 255)
            return cli_usage("%s '%s': want a number from 0 to 255", flag, text);
        v = v * 10 + (*p - '0');
    }
    if (v > 255)
        return cli_usage("%s '%s': want a number from 0 to 255", flag, text);
    *out = (int)v;
    return CLI_CONTINUE;
}

/* A count: digits only, 0..1000000. */
static int parse_count(const char *flag, const char *text, int *out)
{
    long v = 0;
    const char *p = text;

    if (*p == '\0')
        return cli_usage("%s: missing number", flag);
    for (; *p != '\0'; p++) {
        if (*p < '0' || *p > '9' || v > 1000000)
            return cli_usage("%s '%s': want a whole number from 0 to 1000000", flag, text);
        v = v * 10 + (*p - '0');
    }
    if (v > 1000000)
        return cli_usage("%s '%s': want a whole number from 0 to 1000000", flag, text);
    *out = (int)v;
    return CLI_CONTINUE;
}

/* A priority: an optional '-', then digits, within the library's range. */
static int parse_priority(const char *flag, const char *text, int64_t *out)
{
    const char *p = text;
    int neg = *p == '-';
    int64_t v = 0;

    if (neg)
        p++;
    if (*p == '\0')
        return cli_usage("%s: missing number", flag);
    for (; *p != '\0'; p++) {
        if (*p < '0' || *p > '9' || v > SQLEASE_PRIORITY_MAX)
            return cli_usage("%s '%s': want a whole number from %lld to %lld", flag, text,
                             (long long)SQLEASE_PRIORITY_MIN, (long long)SQLEASE_PRIORITY_MAX);
        v = v * 10 + (*p - '0');
    }
    if (v > SQLEASE_PRIORITY_MAX)
        return cli_usage("%s '%s': want a whole number from %lld to %lld", flag, text,
                         (long long)SQLEASE_PRIORITY_MIN, (long long)SQLEASE_PRIORITY_MAX);
    *out = neg ? -v : v;
    return CLI_CONTINUE;
}

/* A duration flag: 1 parsed (into *ms), 0 not this flag, -1 usage error
 * (printed).  allow_zero: 0s is a meaningful value of this flag. */
static int duration_flag(const cli_args *a, int *i, const char *flag, int allow_zero,
                         int64_t *ms)
{
    const char *val = NULL;
    int r = cli_flag_value(a->cmd_argc, a->cmd_argv, i, flag, &val);

    if (r <= 0)
        return r;
    if (cli_parse_duration(flag, val, ms) != 0)
        return -1;
    if (!allow_zero && *ms <= 0) {
        cli_usage("%s: must be more than 0", flag);
        return -1;
    }
    return 1;
}

/*
 * The hand-over's flags, which supervise and cron share: --handoff,
 * --priority N, --preempt-after D and --min-hold D (the same as
 * --preempt-after: the least a hold lasts before a ready follower of
 * higher priority asks for it, as run's --min-hold is the least a hold
 * lasts before its release frees the row).  1 parsed, 0 not one of them,
 * -1 usage error (printed).
 */
int cli_handoff_flag(const cli_args *a, int *i, cli_handoff_flags *h)
{
    const char *val = NULL;
    int r;

    if (strcmp(a->cmd_argv[*i], "--handoff") == 0) {
        h->handoff = 1;
        return 1;
    }
    r = cli_flag_value(a->cmd_argc, a->cmd_argv, i, "--priority", &val);
    if (r != 0) {
        if (r < 0 || parse_priority("--priority", val, &h->priority) != CLI_CONTINUE)
            return -1;
        h->priority_given = 1;
        return 1;
    }
    if ((r = duration_flag(a, i, "--preempt-after", 0, &h->preempt_after_ms)) != 0) {
        if (r > 0)
            h->preempt_given = 1;
        return r;
    }
    if ((r = duration_flag(a, i, "--min-hold", 0, &h->preempt_after_ms)) != 0) {
        if (r > 0)
            h->min_hold_given = 1;
        return r;
    }
    return 0;
}

/*
 * The hand-over's flags once all are read: --priority, --preempt-after
 * and --min-hold make this instance a ready follower (--handoff), since a
 * priority means something only to a follower the others can see;
 * --preempt-after and --min-hold are one setting, given once.
 */
int cli_handoff_finish(const char *command, cli_handoff_flags *h)
{
    if (h->preempt_given && h->min_hold_given)
        return cli_usage("%s: --min-hold and --preempt-after are the same setting: give one",
                         command);
    if (h->priority_given || h->preempt_given || h->min_hold_given)
        h->handoff = 1;
    return CLI_CONTINUE;
}

int cli_job_flags_parse(const cli_args *a, int is_run, cli_job_flags *f)
{
    int i, timeout_given = 0;

    memset(f, 0, sizeof *f);
    f->kill_grace_ms = -1;
    f->timeout_ms = -1;
    f->conflict_code = CLI_DEFAULT_CONFLICT_CODE;
    f->crash_limit = CLI_DEFAULT_CRASH_LIMIT;
    f->crash_window_ms = CLI_DEFAULT_CRASH_WINDOW_MS;
    f->crash_pause_ms = -1;
    for (i = 0; i < a->cmd_argc; i++) {
        char **argv = a->cmd_argv;
        const char *arg = argv[i];
        const char *val = NULL;
        int r;

        if (strcmp(arg, "--") == 0) {
            if (i + 1 >= a->cmd_argc)
                return cli_usage("%s: missing CMD after --", a->command);
            if (f->no_wait && timeout_given)
                return cli_usage("run: --no-wait and --timeout both given; --no-wait is"
                                 " --timeout 0s");
            if (f->schedule != NULL && (timeout_given || f->min_hold_ms > 0))
                return cli_usage("run --schedule: %s does not go with a schedule (the fire is "
                                 "claimed once whenever each host's run starts; a run that "
                                 "finds it claimed exits at once)",
                                 timeout_given ? "--timeout" : "--min-hold");
            if (f->schedule == NULL && (f->schedule_tz != NULL || f->late_limit_ms > 0))
                return cli_usage("run: %s is for --schedule or --every",
                                 f->schedule_tz != NULL ? "--tz" : "--late-limit");
            if (!is_run && cli_handoff_finish("supervise", &f->ho) != CLI_CONTINUE)
                return CLI_EXIT_USAGE;
            if (f->schedule != NULL)
                f->no_wait = 1;
            if (f->no_wait)
                f->timeout_ms = 0;
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
            /* A scheduled run: the take claims the schedule's fire, once
             * for the whole fleet (sqlease_options.schedule). */
            r = cli_flag_value(a->cmd_argc, argv, &i, "--schedule", &val);
            if (r == 0 && (r = cli_flag_value(a->cmd_argc, argv, &i, "--every", &val)) > 0) {
                int64_t ms = 0;
                if (cli_parse_duration("--every", val, &ms) != 0)
                    return CLI_EXIT_USAGE;
                snprintf(f->every_buf, sizeof f->every_buf, "@every %s", val);
                val = f->every_buf;
            }
            if (r < 0)
                return CLI_EXIT_USAGE;
            if (r > 0) {
                if (f->schedule != NULL)
                    return cli_usage("run: --schedule and --every: give one");
                f->schedule = val;
                continue;
            }
            r = cli_flag_value(a->cmd_argc, argv, &i, "--tz", &val);
            if (r < 0)
                return CLI_EXIT_USAGE;
            if (r > 0) {
                f->schedule_tz = val;
                continue;
            }
            if ((r = duration_flag(a, &i, "--late-limit", 0, &f->late_limit_ms)) != 0) {
                if (r < 0)
                    return CLI_EXIT_USAGE;
                continue;
            }
        }
        if (is_run) {
            if ((r = duration_flag(a, &i, "--min-hold", 1, &f->min_hold_ms)) != 0) {
                if (r < 0)
                    return CLI_EXIT_USAGE;
                continue;
            }
            if ((r = duration_flag(a, &i, "--timeout", 1, &f->timeout_ms)) != 0) {
                if (r < 0)
                    return CLI_EXIT_USAGE;
                timeout_given = 1;
                continue;
            }
            r = cli_flag_value(a->cmd_argc, argv, &i, "--conflict-exit-code", &val);
            if (r < 0)
                return CLI_EXIT_USAGE;
            if (r > 0) {
                if (parse_exit_code("--conflict-exit-code", val, &f->conflict_code) !=
                    CLI_CONTINUE)
                    return CLI_EXIT_USAGE;
                continue;
            }
        } else {
            r = cli_flag_value(a->cmd_argc, argv, &i, "--crash-limit", &val);
            if (r < 0)
                return CLI_EXIT_USAGE;
            if (r > 0) {
                if (parse_count("--crash-limit", val, &f->crash_limit) != CLI_CONTINUE)
                    return CLI_EXIT_USAGE;
                continue;
            }
            if ((r = duration_flag(a, &i, "--crash-window", 0, &f->crash_window_ms)) != 0) {
                if (r < 0)
                    return CLI_EXIT_USAGE;
                continue;
            }
            if ((r = duration_flag(a, &i, "--crash-pause", 0, &f->crash_pause_ms)) != 0) {
                if (r < 0)
                    return CLI_EXIT_USAGE;
                continue;
            }
            /* The hand-over (sqlease.h, "Handing the lease over"). */
            if ((r = cli_handoff_flag(a, &i, &f->ho)) != 0) {
                if (r < 0)
                    return CLI_EXIT_USAGE;
                continue;
            }
        }
        if ((r = duration_flag(a, &i, "--kill-grace", 1, &f->kill_grace_ms)) != 0) {
            if (r < 0)
                return CLI_EXIT_USAGE;
            continue;
        }
        if (!is_run) {
            /* --http: checked now, so that a typo is a usage error before
             * the database is reached. */
            r = cli_flag_value(a->cmd_argc, argv, &i, "--http", &val);
            if (r < 0)
                return CLI_EXIT_USAGE;
            if (r > 0) {
                char err[400];
                if (cli_http_check(val, err, sizeof err) != CLI_CONTINUE)
                    return cli_usage("%s", err);
                f->http = val;
                continue;
            }
        }
        r = cli_flag_value(a->cmd_argc, argv, &i, "--metrics-file", &val);
        if (r < 0)
            return CLI_EXIT_USAGE;
        if (r > 0) {
            if (val[0] == '\0')
                return cli_usage("--metrics-file must not be empty");
            f->metrics_file = val;
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

/* ---- the library's log ---------------------------------------------- */

/* Shared with the library's threads, hence the lock. */
typedef struct cli_session_log {
    sqle_mutex mu;
    int defer;              /* the first acquire runs: hold its error back */
    int quiet;              /* stopping a supervisor that never held */
    char deferred[640];     /* the first acquire's error, not printed yet */
    int failing;            /* an error was logged; no answer since */
    int64_t failing_since;  /* mono ms of the last error */
    unsigned repeats;       /* repeated errors not printed while failing */
    char last_error[640];   /* the last error line */
    char last_key[640];     /* the last warn/error printed, digits dropped */
} cli_session_log;

/* Lines in which the supervisor narrates a start or a stop of the work:
 * the tool says the same about CMD, with its pid and status, so these
 * would say each thing twice.  Kept at debug level. */
static int narration(const char *line)
{
    return strstr(line, ": holding the lease; starting the work") != NULL ||
           strstr(line, ": stopped the work: ") != NULL;
}

/* A line with its digits dropped: the same failure again ("no answer
 * within 5012 ms" and "... 5007 ms") compares equal. */
static void line_key(const char *line, char *key, size_t cap)
{
    size_t k = 0;

    for (; *line != '\0' && k + 1 < cap; line++)
        if (*line < '0' || *line > '9')
            key[k++] = *line;
    key[k] = '\0';
}

/*
 * Every log line of the library (database handle and supervisor) comes
 * here, from whatever thread.  An error marks the database as failing
 * until it answers again (cli_session_observe says when); the same
 * failure again while it fails is kept at debug level, so that an outage
 * reads as one line when it starts and one when it ends, not one per
 * retry.  The first acquire's error is held back: `run --no-wait` makes
 * it its final message, the others print it as a log line.  While a
 * supervisor that never held is stopped, what it says about releasing
 * (nothing to release) is debug.
 */
static void session_log_sink(void *userdata, int level, const char *line)
{
    cli_session_log *s = userdata;
    char key[sizeof s->last_key];
    int show = level;
    int emit = 1;

    if (narration(line))
        show = SQLEASE_LOG_DEBUG;
    sqle_mutex_lock(&s->mu);
    if (s->quiet) {
        show = SQLEASE_LOG_DEBUG;
    } else if (level <= SQLEASE_LOG_WARN && show <= SQLEASE_LOG_WARN) {
        if (level == SQLEASE_LOG_ERROR) {
            s->failing = 1;
            s->failing_since = sqle_mono_ms();
            snprintf(s->last_error, sizeof s->last_error, "%s", line);
        }
        if (s->defer && level == SQLEASE_LOG_ERROR) {
            if (s->deferred[0] == '\0')
                snprintf(s->deferred, sizeof s->deferred, "%s", line);
            emit = 0;
        } else {
            line_key(line, key, sizeof key);
            if (s->failing && strcmp(key, s->last_key) == 0) {
                show = SQLEASE_LOG_DEBUG;
                s->repeats++;
            } else {
                memcpy(s->last_key, key, sizeof key);
            }
        }
    }
    sqle_mutex_unlock(&s->mu);
    if (emit && show <= cli_log_level())
        cli_log_emit(show, line);
}

/* Note a failure the tool itself logged (a connect at start), as the
 * sink would have: failing from now, the line remembered. */
static void note_failure(cli_session *ss, const char *line, int print)
{
    cli_session_log *s = ss->log;
    char key[sizeof s->last_key];
    int repeat;

    line_key(line, key, sizeof key);
    sqle_mutex_lock(&s->mu);
    repeat = s->failing && strcmp(key, s->last_key) == 0;
    s->failing = 1;
    s->failing_since = sqle_mono_ms();
    snprintf(s->last_error, sizeof s->last_error, "%s", line);
    if (repeat)
        s->repeats++;
    else
        memcpy(s->last_key, key, sizeof key);
    sqle_mutex_unlock(&s->mu);
    if (print)
        cli_log(repeat ? SQLEASE_LOG_DEBUG : SQLEASE_LOG_ERROR, "%s", line);
}

/* Only the main thread writes deferred, outside the first acquire. */
const char *cli_session_first_error(cli_session *ss, int print)
{
    cli_session_log *s = ss->log;
    char key[sizeof s->last_key];

    if (s == NULL || s->deferred[0] == '\0')
        return NULL;
    if (print) {
        line_key(s->deferred, key, sizeof key);
        sqle_mutex_lock(&s->mu);
        memcpy(s->last_key, key, sizeof key);
        sqle_mutex_unlock(&s->mu);
        cli_log(SQLEASE_LOG_ERROR, "%s", s->deferred);
    }
    return s->deferred;
}

/* The log's flags, under its lock. */
static void log_set(cli_session *s, int *field, int value)
{
    sqle_mutex_lock(&s->log->mu);
    *field = value;
    sqle_mutex_unlock(&s->log->mu);
}

/* The database answered: the failure (if any) is over. */
static void log_clear_failure(cli_session *s)
{
    sqle_mutex_lock(&s->log->mu);
    s->log->failing = 0;
    s->log->repeats = 0;
    s->log->last_key[0] = '\0';
    sqle_mutex_unlock(&s->log->mu);
}

/*
 * The part of a library line worth a short status: without the "lease N
 * owner O token T: " every supervisor line starts with, and without the
 * "acquire failed (<status words>): " before the driver's message.
 */
static void short_reason(const cli_session *s, const char *line, char *out, size_t cap)
{
    char prefix[SQLEASE_MAX_NAME + SQLEASE_MAX_OWNER + 32];
    const char *p = line;
    size_t n;

    snprintf(prefix, sizeof prefix, "lease %s owner %s", s->name ? s->name : "", s->owner);
    n = strlen(prefix);
    if (strncmp(p, prefix, n) == 0) {
        p += n;
        if (strncmp(p, " token ", 7) == 0) {
            p += 7;
            while (*p >= '0' && *p <= '9')
                p++;
        }
        if (strncmp(p, ": ", 2) == 0)
            p += 2;
    }
    if (strncmp(p, "acquire failed (", 16) == 0) {
        const char *q = strstr(p, "): ");
        if (q != NULL)
            p = q + 3;
    }
    snprintf(out, cap, "%s", p);
    /* Cut at a character boundary (UTF-8), for the service manager. */
    n = strlen(out);
    if (n + 1 == cap) {
        while (n > 0 && ((unsigned char)out[n - 1] & 0xC0) == 0x80)
            n--;
        if (n > 0 && ((unsigned char)out[n - 1] & 0x80) != 0)
            n--;
        out[n] = '\0';
    }
}

int cli_session_failing(cli_session *s, char *reason, size_t cap)
{
    int failing;
    char line[sizeof s->log->last_error];

    if (s->log == NULL)
        return 0;
    sqle_mutex_lock(&s->log->mu);
    failing = s->log->failing;
    memcpy(line, s->log->last_error, sizeof line);
    sqle_mutex_unlock(&s->log->mu);
    if (reason != NULL && cap > 0) {
        reason[0] = '\0';
        if (failing)
            short_reason(s, line, reason, cap);
    }
    return failing;
}

/* ---- set-up and tear-down ------------------------------------------- */

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
    if (f->crash_pause_ms < 0)
        f->crash_pause_ms = 2 * s->ttl_ms;
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

/* Lease options from the flags, logging through the session. */
static void session_lease_options(cli_session *s, sqlease_options *o)
{
    cli_lease_options(s->args, o);
    o->owner = s->owner;
    o->min_hold_ms = s->min_hold_ms; /* the release at stop keeps the row */
    o->data = s->data;                /* published with every take */
    o->schedule = s->schedule;
    o->schedule_tz = s->schedule_tz;
    o->late_limit_ms = s->late_limit_ms;
    o->handoff = s->handoff;
    o->priority = s->priority;
    o->preempt_after_ms = s->preempt_after_ms;
    o->log = session_log_sink;
    o->log_userdata = s->log;
}

/* A failed connect worth trying again: the server is down or out of
 * reach.  The driver manager's own refusals (no such DSN; a driver
 * library that is not installed: the classifier's "config") are
 * configuration, and fail at once. */
static int open_retryable(int st, const sqlease_error *err)
{
    if (st != SQLEASE_ECONNECT && st != SQLEASE_ETIMEOUT)
        return 0;
    return sqle_classify_error(err, NULL, SQLEASE_AT_CONNECT) != SQLEASE_FAIL_CONFIG;
}

/*
 * The retry in force before there is a database to ask: the flags (and
 * variables) over the DSN's odbc.ini section, resolved as the library
 * resolves them once connected, so that a ttl alone gives min(2 s,
 * ttl/10) here too.  An odbc.ini value that is invalid makes the open
 * fail at once, so the default then never matters.
 */
static int64_t start_retry_ms(const cli_args *a)
{
    sqlease_options o;
    sqlease_error err;
    sqle_ini ini;
    sqle_resolved r;
    int64_t retry = SQLEASE_DEFAULT_RETRY_MS;

    memset(&err, 0, sizeof err);
    cli_lease_options(a, &o);
    if (sqle_dsn_ini_read(a->dsn, &ini, &err) != SQLEASE_OK) {
        sqle_dsn_ini_free(&ini);
        return a->retry_ms > 0 ? a->retry_ms : retry;
    }
    /* lease_only: the timing rules are checked once connected, with
     * their message; here only the retry's value is wanted. */
    if (sqle_options_resolve(&o, &ini, 1, &r, &err) == SQLEASE_OK && r.retry_ms > 0)
        retry = r.retry_ms;
    sqle_dsn_ini_free(&ini);
    return retry;
}

/*
 * Connect.  A `run` fails at once (cron runs it again tomorrow); a
 * `supervise` started while the database is away (a host booting before
 * its database, an outage) keeps trying every retry: with a service
 * manager's restart limits, exiting would leave it stopped for good.  A
 * failure is logged when it is new and once more when the database
 * answers; a signal ends the wait (returns CLI_EXIT_OK).
 */
static int open_db(cli_session *s)
{
    const cli_args *a = s->args;
    sqlease_db_options o;
    sqlease_error err;
    int64_t retry = s->persistent ? start_retry_ms(a) : 0;
    unsigned failures = 0;
    int st;

    cli_db_options(a, &o);
    o.log = session_log_sink;
    o.log_userdata = s->log;
    for (;;) {
        memset(&err, 0, sizeof err);
        st = sqlease_db_open(&s->db, &o, &err);
        if (st == SQLEASE_OK)
            break;
        s->db = NULL;
        if (!s->persistent || !open_retryable(st, &err)) {
            cli_fail(&err, st);
            return cli_open_exit_code(a, st);
        }
        failures++;
        note_failure(s, err.message[0] ? err.message : sqlease_strerror(st), 1);
        if (failures == 1)
            cli_log(SQLEASE_LOG_INFO, "trying again every %" PRId64 " ms", retry);
        cli_session_observe(s);
        for (int64_t until = sqle_mono_ms() + retry, left; (left = until - sqle_mono_ms()) > 0;) {
            if (sqle_signal_received() != 0)
                return CLI_EXIT_OK;
            sqle_sleep_ms(left < 50 ? left : 50);
        }
        if (sqle_signal_received() != 0)
            return CLI_EXIT_OK;
    }
    if (failures > 0) {
        log_clear_failure(s);
        cli_log(SQLEASE_LOG_WARN, "connected to '%s' after %u failed attempt%s",
                sqlease_db_conn_redacted(s->db), failures, failures == 1 ? "" : "s");
    }
    return CLI_CONTINUE;
}

/* CMD's SQLEASE_FENCE_SQL comes from the supervisor in force, which
 * cli_hold_start_child reads from the hold under its lock: set whenever a
 * supervisor is started, cleared before one is freed, so that a CMD
 * started after a crash pause (a new supervisor) never reads the one the
 * pause freed. */
static void hold_set_sup(cli_session *s, sqlease_supervisor *sup)
{
    cli_session_http_sup(s, sup);
    if (!s->hold_ready)
        return;
    sqle_mutex_lock(&s->hold.mu);
    s->hold.sup = sup;
    sqle_mutex_unlock(&s->hold.mu);
}

/* Start a supervisor with the first acquire's error held back. */
static int start_supervisor(cli_session *s)
{
    sqlease_options o;
    sqlease_error err;
    int st, rc;

    memset(&err, 0, sizeof err);
    session_lease_options(s, &o);
    /* A run that may not wait a ttl (--no-wait, a shorter --timeout)
     * cannot watch a dead holder's row for one: it takes by the
     * database's expiry, as before. */
    if (s->wait_ms >= 0) {
        sqlease_options eff;
        if (sqlease_options_effective(s->db, &o, &eff, &err) != SQLEASE_OK ||
            s->wait_ms < eff.ttl_ms)
            o.take_by_expiry = 1;
        memset(&err, 0, sizeof err);
    }
    cli_hold_attach(&s->hold, &o);
    {
        cli_hold_view v;
        cli_hold_view_get(&s->hold, &v);
        s->starts_before = v.starts;
    }
    s->log->deferred[0] = '\0';
    log_set(s, &s->log->defer, 1);
    st = sqlease_supervisor_start(&s->sup, s->db, &o, &err);
    log_set(s, &s->log->defer, 0);
    if (st == SQLEASE_OK) {
        hold_set_sup(s, s->sup);
        return CLI_CONTINUE;
    }
    /* The error that ends it is the final message; the same line held
     * back from the log is not printed too. */
    s->sup = NULL;
    s->log->deferred[0] = '\0';
    rc = cli_fail(&err, st);
    if ((st == SQLEASE_ENOTABLE || st == SQLEASE_ENOROW) && strstr(err.message, "migrate") == NULL)
        cli_error("run `sqlease migrate` first");
    return rc;
}

int cli_session_start(const cli_args *a, cli_job_flags *f, cli_session *s, int persistent)
{
    sqlease_options o, eff;
    sqlease_error err;
    char msg[600];
    int64_t window, stop_wait;
    int rc, st;

    memset(s, 0, sizeof *s);
    memset(&err, 0, sizeof err);
    s->args = a;
    s->min_hold_ms = f->min_hold_ms;
    s->wait_ms = f->timeout_ms;
    s->data = f->data;
    s->schedule = f->schedule;
    s->schedule_tz = f->schedule_tz;
    s->late_limit_ms = f->late_limit_ms;
    s->handoff = f->ho.handoff;
    s->priority = f->ho.priority;
    s->preempt_after_ms = f->ho.preempt_after_ms;
    s->persistent = persistent;
    s->contact_mono = -1;
    cli_guard_init(&s->guard);
    s->log = calloc(1, sizeof *s->log);
    if (s->log == NULL || sqle_mutex_init(&s->log->mu) != 0) {
        free(s->log);
        s->log = NULL;
        cli_error("cannot create a mutex");
        return CLI_EXIT_OSERR;
    }
    rc = cli_check_options(a);
    if (rc != CLI_CONTINUE) {
        cli_session_stop(s);
        return rc;
    }
    if (cli_metrics_init(&s->metrics, f->metrics_file, msg, sizeof msg) != 0) {
        cli_session_stop(s);
        return cli_usage("%s", msg);
    }
    if (cli_metrics_probe(&s->metrics, msg, sizeof msg) != 0) {
        cli_error("%s", msg);
        cli_session_stop(s);
        return CLI_EXIT_CANTCREAT;
    }
    if (a->owner != NULL) {
        snprintf(s->owner, sizeof s->owner, "%s", a->owner);
    } else if ((st = sqlease_owner_id(s->owner, sizeof s->owner, &err)) != SQLEASE_OK) {
        cli_session_stop(s);
        return cli_fail(&err, st);
    }
    /* The name is known before connecting unless it may come from the
     * DSN's odbc.ini section; the metrics file waits for it then. */
    if (a->name != NULL || !cli_conn_names_dsn(a->dsn)) {
        s->name = a->name != NULL ? a->name : SQLEASE_DEFAULT_NAME;
        cli_metrics_labels(&s->metrics, s->name, s->owner);
    }
    /* Routed before connecting, so that a SIGTERM while supervise waits
     * for the database, or while the first acquire runs, is seen
     * afterwards instead of killing us mid-statement. */
    if (sqle_signal_setup() != 0) {
        cli_error("cannot install signal handlers");
        cli_session_stop(s);
        return CLI_EXIT_OSERR;
    }
    if (f->data != NULL) {
        sqlease_options_init(&o);
        o.data = f->data;
        if (sqlease_options_check(&o, &err) != SQLEASE_OK) {
            cli_session_stop(s);
            return cli_usage("--data: %s", err.message);
        }
    }
    /* Listening before the database is reached, so that a supervise
     * waiting for its database answers /health (with why not) instead
     * of refusing connections. */
    if (f->http != NULL) {
        rc = cli_session_http_start(s, f->http);
        if (rc != CLI_CONTINUE) {
            cli_session_stop(s);
            return rc;
        }
    }
    /* The timing (and so the kill-grace rule) may come from the DSN's
     * odbc.ini section: settle it once connected. */
    rc = open_db(s);
    if (rc != CLI_CONTINUE) {
        cli_session_stop(s);
        return rc;
    }
    cli_lease_options(a, &o);
    rc = cli_effective_options(s->db, &o, &eff);
    if (rc == CLI_CONTINUE)
        rc = resolve_timing(&eff, f, s);
    if (rc != CLI_CONTINUE) {
        cli_session_stop(s);
        return rc;
    }
    s->name = eff.name;
    cli_metrics_labels(&s->metrics, s->name, s->owner);
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
    rc = start_supervisor(s);
    if (rc != CLI_CONTINUE) {
        cli_session_stop(s);
        return rc;
    }
    cli_log(SQLEASE_LOG_DEBUG, "lease '%s': owner %s, ttl %" PRId64 "ms, heartbeat %" PRId64
            "ms, renew deadline %" PRId64 "ms, retry %" PRId64 "ms, kill grace %" PRId64 "ms",
            s->name, s->owner, s->ttl_ms, s->heartbeat_ms, s->renew_deadline_ms, s->retry_ms,
            f->kill_grace_ms);
    return CLI_CONTINUE;
}

/* Stop and free the supervisor, keeping its counters for the metrics.
 * Returns what the stop returned. */
static int end_supervisor(cli_session *s, sqlease_error *err)
{
    sqlease_state st;
    int never_held = 1;
    int rc;

    if (s->hold_ready) {
        cli_hold_view v;
        cli_hold_view_get(&s->hold, &v);
        never_held = v.starts == s->starts_before;
    }
    log_set(s, &s->log->quiet, never_held);
    rc = sqlease_supervisor_stop(s->sup, err);
    if (sqlease_supervisor_state(s->sup, &st) == SQLEASE_OK) {
        s->base[0] += st.statements;
        s->base[1] += st.takes;
        s->base[2] += st.losses;
        s->base[3] += st.renew_failures;
        if (st.last_contact_ago_ms >= 0)
            s->contact_mono = sqle_mono_ms() - st.last_contact_ago_ms;
    }
    log_set(s, &s->log->quiet, 0);
    return rc;
}

void cli_session_release_at_once(cli_session *s)
{
    if (s->sup != NULL && s->min_hold_ms > 0)
        sqle_supervisor_release_at_once(s->sup);
}

int cli_session_stop(cli_session *s)
{
    sqlease_error err;
    int r = 0, left = 0;

    memset(&err, 0, sizeof err);
    cli_guard_disarm(&s->guard);
    if (s->sup != NULL) {
        int st;

        hold_set_sup(s, NULL);
        st = end_supervisor(s, &err);
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
            left = 1;
        } else {
            sqlease_supervisor_free(s->sup);
            s->sup = NULL;
        }
    }
    /* The endpoints answer until here (the lease released, /health and
     * /leader saying 503); their read of the row needs the database. */
    cli_session_http_stop(s);
    if (s->db != NULL) {
        sqlease_db_close(s->db);
        s->db = NULL;
    }
    if (s->hold_ready) {
        cli_hold_destroy(&s->hold);
        s->hold_ready = 0;
    }
    cli_metrics_close(&s->metrics);
    /* The handles left behind log into it until the process exits. */
    if (s->log != NULL && !left) {
        sqle_mutex_destroy(&s->log->mu);
        free(s->log);
    }
    s->log = NULL;
    return r;
}

void cli_session_pause(cli_session *s, const char *note)
{
    sqlease_error err;

    snprintf(s->pause_note, sizeof s->pause_note, "%s", note);
    if (s->sup != NULL) {
        hold_set_sup(s, NULL);
        memset(&err, 0, sizeof err);
        if (end_supervisor(s, &err) != SQLEASE_OK)
            cli_log(SQLEASE_LOG_WARN, "release of lease '%s' failed: %s (it expires by itself"
                    " within the ttl)", s->name, err.message[0] ? err.message : "no answer");
        /* Frees even after a stop that timed out: it waits, bounded, for
         * the statement in flight. */
        sqlease_supervisor_free(s->sup);
        s->sup = NULL;
    }
    cli_session_observe(s);
}

int cli_session_resume(cli_session *s)
{
    int rc;

    s->pause_note[0] = '\0';
    s->holder_known = 0;
    sqle_mutex_lock(&s->hold.mu);
    s->hold.holder_known = 0; /* the new supervisor reports afresh */
    sqle_mutex_unlock(&s->hold.mu);
    rc = start_supervisor(s);
    if (rc == CLI_CONTINUE)
        (void)cli_session_first_error(s, 1);
    return rc;
}

/* ---- what the outside world sees ------------------------------------ */

int cli_session_holder(cli_session *s, char *owner, size_t cap, int64_t *token,
                       int64_t *expires_in_ms, char *data, size_t dcap)
{
    sqlease_options o;
    sqlease_lease *lease = NULL;
    sqlease_lease_info info;
    sqlease_error err;
    int r = -1;

    if (s->db == NULL)
        return -1;
    memset(&err, 0, sizeof err);
    memset(&info, 0, sizeof info);
    session_lease_options(s, &o);
    if (sqlease_lease_new(&lease, s->db, &o, &err) == SQLEASE_OK &&
        sqlease_lease_status(lease, &info, &err) == SQLEASE_OK) {
        /* Not this process's hold, whatever the owner id says: a hold is
         * its token, and this one never proved one. */
        r = info.held && !info.mine;
        if (!r && !info.held) {
            /* A release keeps who held the row and the token it held. */
            snprintf(owner, cap, "%s", info.last_owner);
            if (token != NULL)
                *token = info.token;
        } else if (r) {
            snprintf(owner, cap, "%s", info.owner);
            if (data != NULL && dcap > 0)
                snprintf(data, dcap, "%s", info.data);
            if (token != NULL)
                *token = info.token;
            if (expires_in_ms != NULL)
                *expires_in_ms = info.expires_at_ms - info.db_now_ms;
        }
    }
    sqlease_lease_free(lease);
    return r;
}

/* Counters and gauges for the metrics file. */
static void current_values(cli_session *s, const sqlease_state *st, int have,
                           cli_metrics_values *v)
{
    int64_t now = sqle_mono_ms();

    memset(v, 0, sizeof *v);
    v->held = have && st->holding;
    v->token = have && st->token > 0 ? st->token : s->shown.token;
    v->deadline_in_ms = v->held ? st->deadline_in_ms : 0;
    v->last_contact_ms = s->contact_mono >= 0 ? now - s->contact_mono : -1;
    v->statements = s->base[0] + (have ? st->statements : 0);
    v->takes = s->base[1] + (have ? st->takes : 0);
    v->losses = s->base[2] + (have ? st->losses : 0);
    v->renew_failures = s->base[3] + (have ? st->renew_failures : 0);
}

/* The service manager's one-line status: what this instance is doing. */
static void compose_status(cli_session *s, const sqlease_state *st, int have, char *out,
                           size_t cap)
{
    char reason[160];
    int failing = cli_session_failing(s, reason, sizeof reason);

    if (s->pause_note[0] != '\0') {
        snprintf(out, cap, "%s", s->pause_note);
    } else if (have && st->holding) {
        if (failing)
            snprintf(out, cap, "holding, token %" PRId64 "; database unreachable: %s",
                     st->token, reason);
        else
            snprintf(out, cap, "holding, token %" PRId64, st->token);
    } else if (failing) {
        snprintf(out, cap, "database unreachable: %s", reason);
    } else if (!have) {
        snprintf(out, cap, "starting");
    } else {
        /* Who holds it, as the supervisor's own polls report it. */
        int r = cli_hold_holder(&s->hold, s->holder, sizeof s->holder, NULL);
        char who[SQLE_QUOTED_ID_MAX];

        s->holder_known = r >= 0;
        if (r <= 0)
            s->holder[0] = '\0';
        if (s->holder_known && s->holder[0] != '\0')
            snprintf(out, cap, "standby, held by %s",
                     sqle_quote_id(s->holder, who, sizeof who));
        else if (s->holder_known)
            snprintf(out, cap, "standby, lease free");
        else
            snprintf(out, cap, "standby");
    }
}

void cli_session_observe(cli_session *s)
{
    sqlease_state st;
    cli_metrics_values v;
    int have = 0, recovered = 0, changed;
    unsigned repeats = 0;
    int64_t now = sqle_mono_ms();
    int64_t every = s->heartbeat_ms > 0 ? s->heartbeat_ms : 1000;

    memset(&st, 0, sizeof st);
    if (s->sup != NULL && sqlease_supervisor_state(s->sup, &st) == SQLEASE_OK)
        have = 1;
    if (have && st.last_contact_ago_ms >= 0)
        s->contact_mono = now - st.last_contact_ago_ms;
    if (s->log != NULL) {
        cli_session_log *l = s->log;
        sqle_mutex_lock(&l->mu);
        if (l->failing && s->contact_mono >= 0 && s->contact_mono > l->failing_since) {
            l->failing = 0;
            recovered = 1;
            repeats = l->repeats;
            l->repeats = 0;
            l->last_key[0] = '\0';
        }
        sqle_mutex_unlock(&l->mu);
    }
    if (recovered) {
        if (repeats > 0)
            cli_log(SQLEASE_LOG_WARN, "the database answers again (the same failure"
                    " %u more time%s before)", repeats, repeats == 1 ? "" : "s");
        else
            cli_log(SQLEASE_LOG_WARN, "the database answers again");
    }

    if (s->http != NULL) {
        current_values(s, &st, have, &v);
        cli_session_http_update(s, &v);
    }
    if (s->metrics.path != NULL && s->metrics.labels[0] != '\0') {
        current_values(s, &st, have, &v);
        changed = v.held != s->shown.held || v.token != s->shown.token ||
                  v.statements != s->shown.statements || v.takes != s->shown.takes ||
                  v.losses != s->shown.losses || v.renew_failures != s->shown.renew_failures;
        if (changed || s->metrics_at == 0 || now - s->metrics_at >= every) {
            cli_metrics_write(&s->metrics, &v);
            s->shown = v;
            s->metrics_at = now;
        }
    }

    if (cli_notify_enabled()) {
        char raw[sizeof s->status], status[sizeof s->status], msg[sizeof s->status + 16];

        /* systemctl status prints the line to a terminal: the holder's id
         * and a driver's words are shown escaped, as in the log. */
        compose_status(s, &st, have, raw, sizeof raw);
        sqle_show_text(raw, status, sizeof status);
        if (strcmp(status, s->status) != 0) {
            snprintf(s->status, sizeof s->status, "%s", status);
            snprintf(msg, sizeof msg, "STATUS=%s", status);
            cli_notify_send(msg);
        }
    }
}

void cli_session_ready(cli_session *s)
{
    cli_session_observe(s);
    cli_notify_send("READY=1");
}

void cli_session_stopping(cli_session *s)
{
    cli_session_http_stopping(s);
    cli_notify_send("STOPPING=1\nSTATUS=stopping");
}

/* ---- CMD's guard ----------------------------------------------------- */

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
    return sqle_mono_ms() + st.deadline_in_ms;
}

void cli_session_guard_armed(void *session, long pid)
{
    cli_session *s = session;
    int64_t deadline = hold_deadline(s);

    /* Lost between the start and here: the guard gets "now", sqlease's own
     * stop follows within one round of its main loop. */
    if (deadline < 0)
        deadline = sqle_mono_ms();
    (void)cli_guard_start(&s->guard, pid, deadline, s->kill_grace_ms, s->guard_slack_ms);
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
