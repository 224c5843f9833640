/*
 * cmd_cron.c -- `sqlease cron FILE`: every host of a fleet runs the same
 * daemon with the same crontab-format file (crontab.h); the one that
 * holds the lease fires each job on the database's clock, each fire
 * claimed once in the ledger (the library's scheduler, src/scheduler.h), and
 * runs its command; the others stand by and take over, catching up on
 * what their predecessor left, within a ttl of its end.
 *
 * The scheduler decides; this file runs the commands.  A fire's command
 * is started on the scheduler's thread (on_fire: a fork and an exec, in
 * a process group of its own) and watched from the main thread, which
 * reports each exit to the scheduler; on_stop (the lease ended, a newer
 * fire replaces it, a shutdown) stops the command as `supervise` stops
 * CMD (SIGTERM to its group, SIGKILL after the kill grace) and returns
 * only when it is gone.  SIGHUP reads the file again: a file that does
 * not read keeps the old schedule and says why, with line and column.
 * --http serves /health, /leader, /holder and /metrics (http.h) from the
 * scheduler and its supervisor.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "child.h"
#include "cli.h"
#include "cronexpr.h"
#include "crontab.h"
#include "http.h"
#include "metrics.h"
#include "os.h"
#include "scheduler.h"
#include "session.h"

#define POLL_MS 50

/* One fire's command. */
typedef struct cron_child {
    struct cron_child *next;
    uint64_t id;              /* the scheduler's fire id */
    char job[SQLEASE_MAX_JOB + 1];
    int64_t fire_at_ms;
    sqle_child child;
    int running;              /* started and not yet reaped */
    int64_t termed_at;        /* mono ms its SIGTERM went out; 0 not yet */
    int exited;               /* reaped (or never started): code is its status */
    int code;
} cron_child;

/*
 * --http: what the endpoints answer from.  The callbacks run on the
 * server's threads; they ask the scheduler and its supervisor at the
 * moment of the request, and read what the main thread set here under
 * mu.  The scheduler is set once started and stays until the server has
 * stopped (the main thread stops the server before it frees the
 * scheduler), so a callback may use it after letting mu go.  mu is never
 * held while the scheduler's lock is taken (sqle_sched_stats_get comes
 * first, or after mu is let go): the scheduler's lock, then this one.
 */
typedef struct cron_http {
    cli_http *server;               /* main thread only */
    cli_http_row row;               /* /holder's read, shared (its own lock) */
    sqle_mutex mu;                  /* guards what follows */
    sqle_sched *sched;              /* once started */
    sqlease_db *db;                 /* once connected */
    char name[SQLEASE_MAX_NAME + 1]; /* "" until known */
    char labels[sizeof(((cli_metrics *)0)->labels)]; /* "" until the name is known */
    int64_t renew_deadline_ms, retry_ms; /* 0 until known */
    int stopping;
    int holder_known;               /* the supervisor has said who holds */
    char holder[SQLEASE_MAX_OWNER + 1]; /* "" free */
    int64_t holder_token;
} cron_http;

typedef struct cron_daemon {
    const cli_args *a;
    const char *path;
    const char *http_addr;    /* --http (checked); NULL: none */
    cron_http *http;          /* while serving */
    cli_crontab tab;
    sqle_sched *sched;
    sqlease_db *db;
    int64_t grace_ms;
    const char *name, *owner;
    char owner_buf[SQLEASE_MAX_OWNER + 1];
    sqle_mutex m;             /* the children (after the scheduler's lock) */
    int m_ready;
    cron_child *children;
    uint64_t started, failed_to_start;
} cron_daemon;

/* The environment of one fire's command: the file's variables, the
 * lease's and the fire's. */
static void fire_env(cron_daemon *d, const cli_cron_entry *e, const sqle_fire *f,
                     const char **env, size_t *n, char bufs[7][400])
{
    char when[40];
    size_t k;

    *n = 0;
    for (k = 0; k < e->nenv && *n < 64; k++)
        env[(*n)++] = e->env[k];
    sqle_cron_format_utc(f->fire_at_ms, when, sizeof when);
    snprintf(bufs[0], sizeof bufs[0], "SQLEASE_NAME=%s", d->name);
    snprintf(bufs[1], sizeof bufs[1], "SQLEASE_OWNER=%s", d->owner);
    snprintf(bufs[2], sizeof bufs[2], "SQLEASE_TOKEN=%" PRId64, f->token);
    snprintf(bufs[3], sizeof bufs[3], "SQLEASE_JOB=%s", f->job);
    snprintf(bufs[4], sizeof bufs[4], "SQLEASE_FIRE=%s", when);
    snprintf(bufs[5], sizeof bufs[5], "SQLEASE_FIRE_MS=%" PRId64, f->fire_at_ms);
    snprintf(bufs[6], sizeof bufs[6], "SQLEASE_ATTEMPT=%d", f->attempt);
    for (k = 0; k < 7; k++)
        env[(*n)++] = bufs[k];
    /* The connection string may hold a password; a fence of another
     * lease must not leak in from sqlease's own environment. */
    env[(*n)++] = "SQLEASE_DSN";
    env[(*n)++] = "SQLEASE_FENCE_SQL";
}

/* The scheduler claimed a fire: start its command (on the scheduler's
 * thread, its lock held: a fork and an exec, nothing slower). */
static void on_fire(void *ud, const sqle_fire *f)
{
    cron_daemon *d = ud;
    const cli_cron_entry *e = f->job_userdata;
    cron_child *c = calloc(1, sizeof *c);
    const char *env[80];
    char bufs[7][400], err[300], *argv[4];
    size_t n;

    if (c == NULL) {
        cli_log(SQLEASE_LOG_ERROR, "job %s: out of memory; fire not started", f->job);
        return;
    }
    c->id = f->id;
    snprintf(c->job, sizeof c->job, "%s", f->job);
    c->fire_at_ms = f->fire_at_ms;
    fire_env(d, e, f, env, &n, bufs);
    cli_os_shell_argv(e->command, argv);
    sqle_mutex_lock(&d->m);
    if (sqle_child_spawn_gated(&c->child, argv, env, n, 0, NULL, NULL, err, sizeof err) == 0) {
        c->running = 1;
        d->started++;
        cli_log(SQLEASE_LOG_INFO, "job %s: started its command (pid %ld) for fire %" PRId64
                " (token %" PRId64 ", attempt %d)", f->job, cli_child_pid(&c->child),
                f->fire_at_ms, f->token, f->attempt);
    } else {
        c->exited = 1;
        c->code = 127;
        d->failed_to_start++;
        cli_log(SQLEASE_LOG_ERROR, "job %s: cannot start its command: %s", f->job, err);
    }
    c->next = d->children;
    d->children = c;
    sqle_mutex_unlock(&d->m);
}

/* SIGTERM to c's command, once (d->m held); the line after the signal. */
static void term_child(cron_child *c, int reason)
{
    if (c->termed_at != 0)
        return;
    c->termed_at = cli_child_term(&c->child);
    cli_log(reason == SQLE_STOP_SHUTDOWN ? SQLEASE_LOG_INFO : SQLEASE_LOG_WARN,
            "job %s: stopping its command (fire %" PRId64 "): %s", c->job, c->fire_at_ms,
            reason == SQLE_STOP_LEASE      ? "the lease ended"
            : reason == SQLE_STOP_REPLACED ? "a newer fire replaces it"
            : reason == SQLE_STOP_HANDOFF  ? "the lease is being handed over"
                                           : "shutting down");
}

/*
 * Stop a fire's command and wait until it is gone (the supervisor's
 * on_stopped, or a replace, calls this).  When the hold ends, the
 * scheduler calls this for each running fire in turn, and all of them
 * must be gone within the ttl - renew_deadline the next holder waits:
 * the first call sends SIGTERM to every running command, so that each
 * one's kill grace counts from the same moment, and the calls for the
 * others find theirs sent (one after another, N commands took N kill
 * graces, and the next holder started a fire again while the last one
 * still ran).
 */
static void on_stop(void *ud, const sqle_fire *f, int reason)
{
    cron_daemon *d = ud;
    cron_child *c, *x;

    sqle_mutex_lock(&d->m);
    for (c = d->children; c != NULL && c->id != f->id; c = c->next)
        ;
    if (c != NULL && c->running) {
        term_child(c, reason);
        if (reason != SQLE_STOP_REPLACED)
            for (x = d->children; x != NULL; x = x->next)
                if (x->running)
                    term_child(x, reason);
        c->code = cli_child_finish(&c->child, c->termed_at, d->grace_ms);
        c->running = 0;
        c->exited = 1;
    }
    sqle_mutex_unlock(&d->m);
}

static void on_log(void *ud, int level, const char *line)
{
    (void)ud;
    cli_log(level, "%s", line);
}

/* Reap what exited and tell the scheduler, outside the children's lock
 * (sqle_sched_done sends a statement, and takes the scheduler's lock,
 * which comes first). */
static void reap(cron_daemon *d)
{
    for (;;) {
        cron_child **pp, *c = NULL;
        sqlease_error err;

        sqle_mutex_lock(&d->m);
        for (pp = &d->children; *pp != NULL; pp = &(*pp)->next) {
            cron_child *x = *pp;
            if (x->running) {
                int code = 0;
                int r = cli_child_poll(&x->child, d->grace_ms, &code);
                if (r != 0) {
                    x->running = 0;
                    x->exited = 1;
                    x->code = r == 1 ? code : -1;
                }
            }
            if (x->exited) {
                c = x;
                *pp = x->next;
                break;
            }
        }
        sqle_mutex_unlock(&d->m);
        if (c == NULL)
            return;
        (void)sqle_sched_done(d->sched, c->id, c->code, c->code != 0, &err);
        free(c);
    }
}

/* ---- --http --------------------------------------------------------- */

/* The supervisor's word on who holds while this process does not (on its
 * callback thread, without the scheduler's lock). */
static void on_holder(void *ud, const char *owner, int64_t token)
{
    cron_daemon *d = ud;
    cron_http *h = d->http;

    if (h == NULL)
        return;
    sqle_mutex_lock(&h->mu);
    h->holder_known = 1;
    snprintf(h->holder, sizeof h->holder, "%s", owner);
    h->holder_token = token;
    sqle_mutex_unlock(&h->mu);
}

static sqle_sched *http_sched(cron_http *h)
{
    sqle_sched *sched;

    sqle_mutex_lock(&h->mu);
    sched = h->sched;
    sqle_mutex_unlock(&h->mu);
    return sched;
}

/* The lease's figures (as supervise's --metrics-file has them), then the
 * scheduler's. */
static int http_metrics(void *ud, cli_text *out)
{
    cron_http *h = ud;
    char labels[sizeof h->labels];
    sqle_sched *sched;
    sqle_sched_stats ss;
    sqlease_state st;
    cli_metrics_values v;
    int have = 0;

    sqle_mutex_lock(&h->mu);
    sched = h->sched;
    memcpy(labels, h->labels, sizeof labels);
    sqle_mutex_unlock(&h->mu);
    if (labels[0] == '\0') {
        cli_text_puts(out, "# the lease's name is not known until the database has answered\n");
        return 503;
    }
    memset(&ss, 0, sizeof ss);
    memset(&st, 0, sizeof st);
    if (sched != NULL) {
        sqle_sched_stats_get(sched, &ss);
        have = sqlease_supervisor_state(sqle_sched_supervisor(sched), &st) == SQLEASE_OK;
    }
    memset(&v, 0, sizeof v);
    v.held = have && st.holding;
    v.token = have ? st.token : 0;
    v.deadline_in_ms = v.held ? st.deadline_in_ms : 0;
    v.last_contact_ms = have ? st.last_contact_ago_ms : -1;
    v.statements = st.statements;
    v.takes = st.takes;
    v.losses = st.losses;
    v.renew_failures = st.renew_failures;
    cli_metrics_format(labels, &v, out);
    cli_metrics_format_sched(labels, &ss, out);
    return 200;
}

/* supervise's rule (cli_http_health) once the scheduler runs. */
static int http_health(void *ud, cli_text *out)
{
    cron_http *h = ud;
    char name[SQLEASE_MAX_NAME + 1];
    sqle_sched *sched;
    int64_t deadline;
    int stopping, connected;

    sqle_mutex_lock(&h->mu);
    sched = h->sched;
    stopping = h->stopping;
    connected = h->db != NULL;
    deadline = h->renew_deadline_ms;
    memcpy(name, h->name, sizeof name);
    sqle_mutex_unlock(&h->mu);
    if (stopping)
        cli_text_puts(out, "stopping");
    else if (sched == NULL)
        cli_text_puts(out, connected ? "starting the scheduler" : "connecting to the database");
    else
        return cli_http_health(sqle_sched_supervisor(sched), name, deadline, "", out);
    return 503;
}

/* 200 while the scheduler holds the lease: the fires due start here. */
static int http_leader(void *ud, cli_text *out)
{
    cron_http *h = ud;
    char name[SQLEASE_MAX_NAME + 1], who[SQLEASE_MAX_OWNER + 1];
    sqle_sched *sched = http_sched(h);
    sqle_sched_stats ss;
    int stopping, known;
    int64_t who_token;

    memset(&ss, 0, sizeof ss);
    if (sched != NULL)
        sqle_sched_stats_get(sched, &ss);
    sqle_mutex_lock(&h->mu);
    stopping = h->stopping;
    memcpy(name, h->name, sizeof name);
    /* A word older than this process's last hold is not news. */
    known = h->holder_known && h->holder_token >= ss.token;
    memcpy(who, h->holder, sizeof who);
    who_token = h->holder_token;
    sqle_mutex_unlock(&h->mu);
    if (stopping) {
        cli_text_puts(out, "stopping: no fire starts here any more");
        return 503;
    }
    if (ss.holding) {
        cli_text_printf(out, "holding lease '%s', token %" PRId64 ", %" PRIu64 " fire(s) running",
                        name, ss.token, ss.running);
        return 200;
    }
    if (sched == NULL)
        cli_text_puts(out, "standby: connecting to the database");
    else if (known && who[0] != '\0')
        cli_text_printf(out, "standby: lease '%s' is held by %s, token %" PRId64, name, who,
                        who_token);
    else if (known)
        cli_text_printf(out, "standby: lease '%s' is free", name);
    else
        cli_text_printf(out, "standby: not holding lease '%s'", name);
    return 503;
}

/* The row's hold is this daemon's: the scheduler holds with its token. */
static int sched_is_mine(void *ud, int64_t token)
{
    sqle_sched *sched = http_sched(ud);
    sqle_sched_stats ss;

    if (sched == NULL)
        return 0;
    sqle_sched_stats_get(sched, &ss);
    return ss.holding && ss.token == token;
}

static int http_holder(void *ud, cli_text *out)
{
    cron_http *h = ud;
    char name[SQLEASE_MAX_NAME + 1];
    sqlease_db *db;
    int64_t retry;

    sqle_mutex_lock(&h->mu);
    db = h->db;
    retry = h->retry_ms;
    memcpy(name, h->name, sizeof name);
    sqle_mutex_unlock(&h->mu);
    return cli_http_row_holder(&h->row, db, retry, name, sched_is_mine, h, out);
}

/* Listen (before the database is reached, so that a port in use is said
 * first and the endpoints answer while it connects). */
static int http_start(cron_daemon *d)
{
    cron_http *h = calloc(1, sizeof *h);
    cli_http_provider p;
    char err[600];
    int rc;

    if (h == NULL || sqle_mutex_init(&h->mu) != 0) {
        free(h);
        cli_error("out of memory");
        return CLI_EXIT_OSERR;
    }
    if (cli_http_row_init(&h->row, d->a, d->owner) != 0) {
        sqle_mutex_destroy(&h->mu);
        free(h);
        cli_error("cannot create a mutex");
        return CLI_EXIT_OSERR;
    }
    memset(&p, 0, sizeof p);
    p.ud = h;
    p.metrics = http_metrics;
    p.health = http_health;
    p.leader = http_leader;
    p.holder = http_holder;
    rc = cli_http_start(d->http_addr, &p, &h->server, err, sizeof err);
    if (rc != CLI_CONTINUE) {
        cli_error("%s", err);
        cli_http_row_destroy(&h->row);
        sqle_mutex_destroy(&h->mu);
        free(h);
        return rc;
    }
    d->http = h;
    cli_log(SQLEASE_LOG_INFO, "serving /metrics, /health, /leader and /holder on %s",
            cli_http_url(h->server));
    return CLI_CONTINUE;
}

/* What the endpoints learn as the daemon starts and stops. */
static void http_connected(cron_daemon *d, sqlease_db *db)
{
    if (d->http == NULL)
        return;
    sqle_mutex_lock(&d->http->mu);
    d->http->db = db;
    sqle_mutex_unlock(&d->http->mu);
}

static void http_lease(cron_daemon *d, const sqlease_options *eff)
{
    cli_metrics m;

    if (d->http == NULL)
        return;
    memset(&m, 0, sizeof m);
    cli_metrics_labels(&m, d->name, d->owner);
    sqle_mutex_lock(&d->http->mu);
    snprintf(d->http->name, sizeof d->http->name, "%s", d->name);
    memcpy(d->http->labels, m.labels, sizeof d->http->labels);
    d->http->renew_deadline_ms = eff->renew_deadline_ms;
    d->http->retry_ms = eff->retry_ms;
    sqle_mutex_unlock(&d->http->mu);
}

static void http_sched_set(cron_daemon *d, sqle_sched *sched)
{
    if (d->http == NULL)
        return;
    sqle_mutex_lock(&d->http->mu);
    d->http->sched = sched;
    sqle_mutex_unlock(&d->http->mu);
}

static void http_stopping(cron_daemon *d)
{
    if (d->http == NULL)
        return;
    sqle_mutex_lock(&d->http->mu);
    d->http->stopping = 1;
    sqle_mutex_unlock(&d->http->mu);
}

/* Stop serving: waits for the answers in flight, after which no callback
 * runs.  Before the scheduler is freed. */
static void http_stop_server(cron_daemon *d)
{
    if (d->http == NULL)
        return;
    cli_http_stop(d->http->server);
    d->http->server = NULL;
}

/* Free what is left: after the scheduler, whose supervisor may call
 * on_holder until it is freed. */
static void http_free(cron_daemon *d)
{
    if (d->http == NULL)
        return;
    http_stop_server(d);
    cli_http_row_destroy(&d->http->row);
    sqle_mutex_destroy(&d->http->mu);
    free(d->http);
    d->http = NULL;
}

/* ---- the command ----------------------------------------------------- */

static int read_tab(const char *path, cli_crontab *tab, char *err, size_t cap)
{
    char *text = cli_sys_read_file(path);
    int rc;

    if (text == NULL) {
        snprintf(err, cap, "%s: cannot be read", path);
        return -1;
    }
    rc = cli_crontab_parse(path, text, tab, err, cap);
    free(text);
    return rc;
}

/* SIGHUP: the file again.  A file that does not read keeps the old
 * schedule. */
static void reload(cron_daemon *d)
{
    cli_crontab tab;
    sqle_job *jobs;
    sqlease_error err;
    char why[700];
    size_t n;

    if (read_tab(d->path, &tab, why, sizeof why) != 0) {
        cli_log(SQLEASE_LOG_ERROR, "SIGHUP: %s; keeping the schedule read before", why);
        return;
    }
    jobs = cli_crontab_jobs(&tab, &n);
    if (jobs == NULL || sqle_sched_reload(d->sched, jobs, n, &err) != SQLEASE_OK) {
        cli_log(SQLEASE_LOG_ERROR, "SIGHUP: %s; keeping the schedule read before",
                jobs == NULL ? "out of memory" : err.message);
        free(jobs);
        cli_crontab_free(&tab);
        return;
    }
    free(jobs);
    cli_crontab_free(&d->tab);
    d->tab = tab;
    cli_log(SQLEASE_LOG_INFO, "SIGHUP: %s read again: %zu job(s)", d->path, n);
}

/* --check: the jobs and their next fires by this host's clock. */
static int check_only(const cli_crontab *tab)
{
    int64_t now = sqle_wall_ms();
    size_t i;

    for (i = 0; i < tab->n; i++) {
        const cli_cron_entry *e = &tab->entries[i];
        sqle_cron *c = NULL;
        sqle_cron_error ce;
        int64_t next = -1;
        char when[40] = "never";

        if (sqle_cron_parse(e->job.schedule, e->job.tz, &c, &ce) == SQLEASE_OK &&
            sqle_cron_next(c, now, &next) == 1)
            sqle_cron_format_utc(next, when, sizeof when);
        sqle_cron_free(c);
        printf("%s\t%s%s%s\tnext %s\tline %d\n", e->job.name, e->job.schedule,
               e->job.tz != NULL ? " CRON_TZ=" : "", e->job.tz != NULL ? e->job.tz : "", when,
               e->line);
    }
    return CLI_EXIT_OK;
}

/* What cli_cmd_cron made, in the order it is undone (the scheduler, or
 * its remains after a signal, is the caller's). */
static int give_up(cron_daemon *d, int rc)
{
    http_free(d);
    if (d->m_ready)
        sqle_mutex_destroy(&d->m);
    if (d->db != NULL)
        sqlease_db_close(d->db);
    cli_crontab_free(&d->tab);
    return rc;
}

int cli_cmd_cron(const cli_args *a)
{
    cron_daemon d;
    cli_handoff_flags ho;
    sqlease_options o, eff;
    sqle_sched_callbacks cb;
    sqle_job *jobs;
    sqlease_error err;
    int64_t keep_ms = 0;
    char why[700];
    size_t n;
    int i, check = 0, rc, sig;

    cli_log_init(a, SQLEASE_LOG_INFO);
    memset(&d, 0, sizeof d);
    memset(&ho, 0, sizeof ho);
    d.a = a;
    d.grace_ms = -1;
    for (i = 0; i < a->cmd_argc; i++) {
        const char *v = NULL;
        int r;
        if (strcmp(a->cmd_argv[i], "--help") == 0 || strcmp(a->cmd_argv[i], "-h") == 0) {
            cli_print_help();
            return CLI_EXIT_OK;
        }
        if (strcmp(a->cmd_argv[i], "--check") == 0) {
            check = 1;
            continue;
        }
        if ((r = cli_flag_value(a->cmd_argc, a->cmd_argv, &i, "--keep", &v)) != 0) {
            if (r < 0 || cli_parse_duration("--keep", v, &keep_ms) != 0)
                return CLI_EXIT_USAGE;
            continue;
        }
        if ((r = cli_flag_value(a->cmd_argc, a->cmd_argv, &i, "--kill-grace", &v)) != 0) {
            if (r < 0 || cli_parse_duration("--kill-grace", v, &d.grace_ms) != 0)
                return CLI_EXIT_USAGE;
            continue;
        }
        /* --http: checked now, so that a typo is a usage error before
         * the database is reached. */
        if ((r = cli_flag_value(a->cmd_argc, a->cmd_argv, &i, "--http", &v)) != 0) {
            if (r < 0)
                return CLI_EXIT_USAGE;
            if (cli_http_check(v, why, sizeof why) != CLI_CONTINUE)
                return cli_usage("%s", why);
            d.http_addr = v;
            continue;
        }
        /* The hand-over's, as supervise's: SIGTERM hands the lease to a
         * ready cron once the running jobs have stopped. */
        if ((r = cli_handoff_flag(a, &i, &ho)) != 0) {
            if (r < 0)
                return CLI_EXIT_USAGE;
            continue;
        }
        if (a->cmd_argv[i][0] == '-' && a->cmd_argv[i][1] != '\0')
            return cli_unknown_flag("cron", a->cmd_argv[i]);
        if (d.path != NULL)
            return cli_usage("cron: one FILE only ('%s' and '%s')", d.path, a->cmd_argv[i]);
        d.path = a->cmd_argv[i];
    }
    if (d.path == NULL)
        return cli_usage("cron: which FILE? (sqlease cron FILE)");
    if (cli_handoff_finish("cron", &ho) != CLI_CONTINUE)
        return CLI_EXIT_USAGE;
    if (read_tab(d.path, &d.tab, why, sizeof why) != 0) {
        cli_error("%s", why);
        return CLI_EXIT_USAGE;
    }
    if (check) {
        rc = check_only(&d.tab);
        cli_crontab_free(&d.tab);
        return rc;
    }
    if (d.tab.n == 0)
        cli_log(SQLEASE_LOG_WARN, "%s has no job line: holding the lease fires nothing",
                d.path);
    rc = cli_check_options(a);
    if (rc != CLI_CONTINUE)
        return give_up(&d, rc);
    if (sqle_signal_setup() != 0) {
        cli_error("cannot install the signal handlers");
        return give_up(&d, CLI_EXIT_OSERR);
    }
    cli_lease_options(a, &o);
    if (o.owner == NULL) {
        /* Generated here, so that the log and the commands name it. */
        if (sqlease_owner_id(d.owner_buf, sizeof d.owner_buf, &err) != SQLEASE_OK) {
            cli_error("%s", err.message);
            return give_up(&d, CLI_EXIT_OSERR);
        }
        o.owner = d.owner_buf;
    }
    d.owner = o.owner;
    /* --keep is the holder history's keep too: the holder prunes both. */
    o.history_keep_ms = keep_ms;
    o.handoff = ho.handoff;
    o.priority = ho.priority;
    o.preempt_after_ms = ho.preempt_after_ms;
    if (sqle_mutex_init(&d.m) != 0)
        return give_up(&d, CLI_EXIT_OSERR);
    d.m_ready = 1;
    if (d.http_addr != NULL && (rc = http_start(&d)) != CLI_CONTINUE)
        return give_up(&d, rc);
    rc = cli_open_db(a, &d.db);
    if (rc != CLI_CONTINUE)
        return give_up(&d, rc);
    http_connected(&d, d.db);
    rc = cli_effective_options(d.db, &o, &eff);
    if (rc != CLI_CONTINUE)
        return give_up(&d, rc);
    /* The kill grace and its rule, as run's and supervise's: every job's
     * SIGTERM, grace and SIGKILL fit in the ttl - renew_deadline the next
     * holder waits before it may fire (all of them at once: on_stop). */
    {
        int64_t window = eff.ttl_ms - eff.renew_deadline_ms;
        if (d.grace_ms < 0)
            d.grace_ms = window / 2;
        if (d.grace_ms >= window)
            return give_up(&d, cli_usage("--kill-grace %" PRId64 "ms does not fit inside ttl - "
                                         "renew-deadline (%" PRId64 "ms); the jobs must be gone "
                                         "before another owner may take the lease",
                                         d.grace_ms, window));
    }
    d.name = eff.name != NULL ? eff.name : SQLEASE_DEFAULT_NAME;
    http_lease(&d, &eff);
    memset(&cb, 0, sizeof cb);
    cb.userdata = &d;
    cb.on_fire = on_fire;
    cb.on_stop = on_stop;
    cb.on_log = on_log;
    if (d.http != NULL)
        cb.on_holder = on_holder;
    jobs = cli_crontab_jobs(&d.tab, &n);
    rc = jobs == NULL ? SQLEASE_ENOMEM
                      : sqle_sched_start(&d.sched, d.db, &o, NULL, NULL, jobs, n,
                                         keep_ms, &cb, &err);
    free(jobs);
    if (rc != SQLEASE_OK) {
        cli_error("cron: %s", jobs == NULL ? "out of memory" : err.message);
        return give_up(&d, cli_exit_for_status(rc));
    }
    http_sched_set(&d, d.sched);
    cli_log(SQLEASE_LOG_INFO, "cron: %zu job(s) from %s under lease '%s' as owner %s", n,
            d.path, d.name, d.owner);
    for (;;) {
        sig = cli_os_signal_take();
        if (sig != 0 && sig == cli_os_sighup()) {
            reload(&d);
            continue;
        }
        if (sig != 0)
            break;
        reap(&d);
        sqle_sleep_ms(POLL_MS);
    }
    cli_log(SQLEASE_LOG_INFO, "signal %d: shutting down", sig);
    /* The endpoints say "stopping" while the jobs stop and the lease is
     * released, and are gone before the scheduler is freed. */
    http_stopping(&d);
    rc = sqle_sched_stop(d.sched, &err);
    reap(&d);
    http_stop_server(&d);
    sqle_sched_free(d.sched);
    /* A child reaped from here on is not reported: the scheduler is
     * gone (sqle_sched_done(NULL) answers EINVAL and sends nothing). */
    d.sched = NULL;
    reap(&d);
    if (rc != SQLEASE_OK)
        cli_log(SQLEASE_LOG_WARN, "stopping: %s", err.message);
    return give_up(&d, CLI_EXIT_OK);
}
