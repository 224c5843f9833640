/*
 * demo.c -- `sqlease demo`: a self-contained failover demonstration that
 * checks what it shows.  In a fresh temporary directory it migrates an
 * SQLite lease table, starts three real `sqlease supervise` processes of
 * this same binary (demo-A, demo-B, demo-C) whose CMD is the hidden
 * `__demo-job`, and then:
 *
 *   1. waits for demo-A to hold the lease and start its job;
 *   2. SIGKILLs demo-A's sqlease and checks its job died with it;
 *   3. checks a successor took over within ttl + retry (+ an allowance);
 *   4. SIGTERMs the successor and checks the third took over within
 *      retry + 1 s of the graceful release;
 *   5. checks the tokens strictly increase and no two jobs ever ran at
 *      once, stops everything and removes the directory.
 *
 * Every wait polls a condition (every 50 ms) with a bound; it exits 0 only
 * if all checks passed, and cleans up either way.  --dsn and the other
 * global flags are ignored: the demo brings its own database and timing.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "child.h"
#include "cli.h"
#include "os.h"

#define DEMO_PROCS 3
#define DEMO_NAME "demo"
#define DEMO_TTL_MS 3000
#define DEMO_RETRY_MS 250
#define DEMO_TIMING "--ttl", "3s", "--heartbeat", "500ms", "--renew-deadline", "1500ms", \
                    "--retry", "250ms"
/* Slack on top of the protocol's bounds: starting the job process,
 * writing its line, and this process polling every 50 ms. */
#define DEMO_TAKEOVER_ALLOWANCE_MS 500
#define DEMO_HANDOVER_ALLOWANCE_MS 1000
#define DEMO_POLL_MS 50
#define DEMO_MAX_EVENTS 64
#define DEMO_PATH 1024
/* Every wait is capped so the whole demo, clean-up included, ends within
 * a minute whatever goes wrong. */
#define DEMO_BUDGET_MS 50000

typedef struct demo_event {
    int is_start;
    int64_t mono_ms;
    char owner[64];
    int64_t token;
    long pid;
} demo_event;

typedef struct demo_proc {
    char owner[16];
    char log[DEMO_PATH + 32];
    sqle_child child;
    int alive;      /* spawned and not yet reaped */
    int exit_code;
} demo_proc;

typedef struct demo {
    char dir[DEMO_PATH];
    char db[DEMO_PATH + 32];
    char events[DEMO_PATH + 32];
    char dsn[DEMO_PATH + 128];
    char exe[DEMO_PATH];
    int64_t t0;
    demo_proc p[DEMO_PROCS];
    demo_event ev[DEMO_MAX_EVENTS];
    int nev;
} demo;

/* One line of the timeline, stamped with seconds since the demo began. */
static void say(const demo *d, const char *fmt, ...) CLI_PRINTF(2, 3);
static void say(const demo *d, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    printf("t=%.1fs  %s\n", (double)(sqle_mono_ms() - d->t0) / 1000.0, msg);
    fflush(stdout);
}

static int fail(const char *fmt, ...) CLI_PRINTF(1, 2);
static int fail(const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    cli_error("demo failed: %s", msg);
    return -1;
}

static double secs(int64_t ms)
{
    return (double)ms / 1000.0;
}

/* Re-read the whole event file (it stays tiny). */
static int read_events(demo *d)
{
    char *text = cli_sys_read_file(d->events);
    char *line, *next;

    if (text == NULL)
        return fail("cannot read %s", d->events);
    d->nev = 0;
    for (line = text; *line != '\0' && d->nev < DEMO_MAX_EVENTS; line = next) {
        demo_event *e = &d->ev[d->nev];
        char what[8];
        char *nl = strchr(line, '\n');

        if (nl == NULL)
            break; /* a line still being written: next time */
        *nl = '\0';
        next = nl + 1;
        if (sscanf(line, "%7s %" SCNd64 " %63s %" SCNd64 " %ld", what, &e->mono_ms, e->owner,
                   &e->token, &e->pid) != 5 ||
            (strcmp(what, "start") != 0 && strcmp(what, "stop") != 0)) {
            free(text);
            return fail("malformed event line '%s'", line);
        }
        e->is_start = strcmp(what, "start") == 0;
        d->nev++;
    }
    free(text);
    return 0;
}

/* The n-th (0-based) start event, or NULL. */
static const demo_event *nth_start(const demo *d, int n)
{
    for (int i = 0; i < d->nev; i++)
        if (d->ev[i].is_start && n-- == 0)
            return &d->ev[i];
    return NULL;
}

static const demo_event *stop_of(const demo *d, const demo_event *start)
{
    for (int i = 0; i < d->nev; i++)
        if (!d->ev[i].is_start && d->ev[i].pid == start->pid)
            return &d->ev[i];
    return NULL;
}

static demo_proc *proc_of(demo *d, const char *owner)
{
    for (int i = 0; i < DEMO_PROCS; i++)
        if (strcmp(d->p[i].owner, owner) == 0)
            return &d->p[i];
    return NULL;
}

/* Conditions the demo waits for. */
static int have_starts(demo *d, int n)
{
    return nth_start(d, n - 1) != NULL;
}

static int is_waiting(demo *d, int idx)
{
    char *log = cli_sys_read_file(d->p[idx].log);
    int yes = log != NULL && strstr(log, "waiting for lease") != NULL;

    free(log);
    return yes;
}

/* Poll cond every 50 ms until it holds (0) or timeout_ms passes (-1,
 * after saying what was awaited).  A SIGINT/SIGTERM to the demo ends the
 * wait as a failure, so the clean-up still runs. */
static int await(demo *d, int (*cond)(demo *, int), int arg, int64_t timeout_ms,
                 const char *what)
{
    int64_t deadline = sqle_mono_ms() + timeout_ms;

    if (deadline > d->t0 + DEMO_BUDGET_MS)
        deadline = d->t0 + DEMO_BUDGET_MS;
    for (;;) {
        if (sqle_signal_received() != 0)
            return fail("interrupted while waiting for %s", what);
        if (read_events(d) != 0)
            return -1;
        if (cond(d, arg))
            return 0;
        if (sqle_mono_ms() >= deadline)
            return fail("%s did not happen within %.1f s", what, secs(timeout_ms));
        sqle_sleep_ms(DEMO_POLL_MS);
    }
}

/* Start one `sqlease supervise` with its output in its own log file (a
 * shell redirects, then execs, so the pid is sqlease's own). */
static int spawn_proc(demo *d, int idx)
{
    demo_proc *p = &d->p[idx];
    char env_log[DEMO_PATH + 64];
    const char *env[1];
    char err[512];
    const char *argv[] = {
        "/bin/sh", "-c", "exec \"$@\" >>\"$SQLEASE_DEMO_LOG\" 2>&1", "sh",
        d->exe, "--dsn", d->dsn, "--table", SQLEASE_DEFAULT_TABLE, "--name", DEMO_NAME,
        DEMO_TIMING, "--owner", p->owner,
        "supervise", "--", d->exe, "__demo-job", d->events, NULL};

    snprintf(env_log, sizeof env_log, "SQLEASE_DEMO_LOG=%s", p->log);
    env[0] = env_log;
    /* execv's convention: the strings are not written to. */
    if (sqle_child_spawn(&p->child, (char *const *)argv, env, 1, err, sizeof err) != 0)
        return fail("cannot start %s: %s", p->owner, err);
    p->alive = 1;
    return 0;
}

/* Wait for one of our sqlease processes to exit; 0 with its status in
 * exit_code, -1 if it did not within timeout_ms. */
static int reap(demo_proc *p, int64_t timeout_ms)
{
    int64_t deadline = sqle_mono_ms() + timeout_ms;

    while (p->alive) {
        int64_t left = deadline - sqle_mono_ms();
        int r = sqle_child_wait(&p->child, left > 0 ? left : 0, &p->exit_code);
        if (r == 1) {
            sqle_child_close(&p->child);
            p->alive = 0;
        } else if (r < 0 || left <= 0) {
            return -1;
        }
    }
    return 0;
}

/* Poll until a process that is not our child is gone; -1 on timeout. */
static int await_pid_gone(long pid, int64_t timeout_ms, int64_t *gone_at)
{
    int64_t deadline = sqle_mono_ms() + timeout_ms;

    for (;;) {
        if (!cli_sys_pid_alive(pid)) {
            *gone_at = sqle_mono_ms();
            return 0;
        }
        if (sqle_mono_ms() >= deadline)
            return -1;
        sqle_sleep_ms(10);
    }
}

static int migrate(demo *d)
{
    sqlease_db_options o;
    sqlease_db *db = NULL;
    sqlease_error err;
    const char *const names[1] = {DEMO_NAME};
    int st;

    memset(&err, 0, sizeof err);
    sqlease_db_options_init(&o);
    o.conn = d->dsn;
    o.log = cli_log_sink;
    o.log_level = cli_log_level();
    st = sqlease_db_open(&db, &o, &err);
    if (st == SQLEASE_OK)
        st = sqlease_migrate(db, SQLEASE_DEFAULT_TABLE, names, 1, &err);
    sqlease_db_close(db);
    if (st != SQLEASE_OK)
        return fail("migrate: %s", err.message[0] ? err.message : sqlease_strerror(st));
    return 0;
}

/* The checks over the whole run: one start per holder with strictly
 * increasing tokens, and the jobs' [start, end] intervals never overlap.
 * A job killed with its sqlease ends when it was seen gone. */
static int check_history(demo *d, int64_t killed_gone_ms)
{
    int64_t end[DEMO_PROCS];
    const demo_event *s[DEMO_PROCS];
    int starts = 0;

    for (int i = 0; i < d->nev; i++)
        starts += d->ev[i].is_start;
    if (starts != DEMO_PROCS)
        return fail("expected %d job starts, saw %d", DEMO_PROCS, starts);
    for (int i = 0; i < DEMO_PROCS; i++) {
        const demo_event *stop;
        s[i] = nth_start(d, i);
        stop = stop_of(d, s[i]);
        if (i == 0) {
            if (stop != NULL)
                return fail("the killed job recorded a stop: it was not killed");
            end[i] = killed_gone_ms;
        } else {
            if (stop == NULL)
                return fail("%s's job (token %" PRId64 ") never recorded its stop",
                            s[i]->owner, s[i]->token);
            end[i] = stop->mono_ms;
        }
        if (i > 0 && s[i]->token <= s[i - 1]->token)
            return fail("tokens did not increase: %" PRId64 " then %" PRId64,
                        s[i - 1]->token, s[i]->token);
        if (i > 0 && s[i]->mono_ms < end[i - 1])
            return fail("%s's job started %" PRId64 " ms before %s's job ended",
                        s[i]->owner, end[i - 1] - s[i]->mono_ms, s[i - 1]->owner);
    }
    for (int i = 0; i < DEMO_PROCS; i++)
        if (cli_sys_pid_alive(s[i]->pid))
            return fail("%s's job (pid %ld) is still running", s[i]->owner, s[i]->pid);
    return 0;
}

/* The scenario; returns 0 if everything observed was right. */
static int scenario(demo *d)
{
    const demo_event *e1, *e2, *e3;
    demo_proc *h1, *h2, *h3;
    int64_t killed_at, gone_at, termed_at;

    say(d, "3 supervisors, lease '%s' in %s (ttl 3s, heartbeat 500ms, renew deadline 1.5s,"
        " retry 250ms)", DEMO_NAME, d->db);
    if (migrate(d) != 0 || spawn_proc(d, 0) != 0 ||
        await(d, have_starts, 1, 10000, "a first holder") != 0)
        return -1;
    e1 = nth_start(d, 0);
    h1 = proc_of(d, e1->owner);
    if (h1 != &d->p[0])
        return fail("job started by unexpected owner '%s'", e1->owner);
    say(d, "%s holds the lease (token %" PRId64 "), its job runs as pid %ld", e1->owner,
        e1->token, e1->pid);

    if (spawn_proc(d, 1) != 0 || spawn_proc(d, 2) != 0 ||
        await(d, is_waiting, 1, 10000, "demo-B waiting") != 0 ||
        await(d, is_waiting, 2, 10000, "demo-C waiting") != 0)
        return -1;
    say(d, "demo-B and demo-C are up and waiting for the lease");

    killed_at = sqle_mono_ms();
    if (sqle_process_signal(cli_child_pid(&h1->child), 9) != 0)
        return fail("cannot SIGKILL %s", h1->owner);
    say(d, "SIGKILL %s's sqlease (pid %ld)", h1->owner, cli_child_pid(&h1->child));
    if (reap(h1, 5000) != 0)
        return fail("%s's sqlease did not die after SIGKILL", h1->owner);
    if (await_pid_gone(e1->pid, 2000, &gone_at) != 0)
        return fail("%s's job (pid %ld) outlived its sqlease by 2 s", h1->owner, e1->pid);
    say(d, "%s's job (pid %ld) died with it (%" PRId64 " ms after the kill)", h1->owner,
        e1->pid, gone_at - killed_at);

    if (await(d, have_starts, 2, DEMO_TTL_MS + DEMO_RETRY_MS + 5000, "a takeover") != 0)
        return -1;
    e2 = nth_start(d, 1);
    h2 = proc_of(d, e2->owner);
    if (h2 == NULL || h2 == h1)
        return fail("takeover by unexpected owner '%s'", e2->owner);
    say(d, "%s took over after %.2f s (token %" PRId64 "); bound ttl + retry = %.2f s"
        " (+%.1f s allowance for process start-up and polling)", e2->owner,
        secs(e2->mono_ms - killed_at), e2->token, secs(DEMO_TTL_MS + DEMO_RETRY_MS),
        secs(DEMO_TAKEOVER_ALLOWANCE_MS));
    if (e2->mono_ms - killed_at > DEMO_TTL_MS + DEMO_RETRY_MS + DEMO_TAKEOVER_ALLOWANCE_MS)
        return fail("takeover took %.2f s, more than %.2f s", secs(e2->mono_ms - killed_at),
                    secs(DEMO_TTL_MS + DEMO_RETRY_MS + DEMO_TAKEOVER_ALLOWANCE_MS));

    termed_at = sqle_mono_ms();
    if (sqle_process_signal(cli_child_pid(&h2->child), 15) != 0)
        return fail("cannot SIGTERM %s", h2->owner);
    say(d, "SIGTERM %s's sqlease (graceful: stop the job, release the lease)", h2->owner);
    if (await(d, have_starts, 3, DEMO_RETRY_MS + 5000, "a handover") != 0)
        return -1;
    e3 = nth_start(d, 2);
    h3 = proc_of(d, e3->owner);
    if (h3 == NULL || h3 == h1 || h3 == h2)
        return fail("handover to unexpected owner '%s'", e3->owner);
    say(d, "%s took over after %.2f s (token %" PRId64 "); bound retry + 1 s = %.2f s",
        e3->owner, secs(e3->mono_ms - termed_at), e3->token,
        secs(DEMO_RETRY_MS + DEMO_HANDOVER_ALLOWANCE_MS));
    if (e3->mono_ms - termed_at > DEMO_RETRY_MS + DEMO_HANDOVER_ALLOWANCE_MS)
        return fail("handover took %.2f s, more than %.2f s", secs(e3->mono_ms - termed_at),
                    secs(DEMO_RETRY_MS + DEMO_HANDOVER_ALLOWANCE_MS));
    if (reap(h2, 5000) != 0 || h2->exit_code != 0)
        return fail("%s's sqlease did not exit 0 after SIGTERM (status %d)", h2->owner,
                    h2->alive ? -1 : h2->exit_code);
    say(d, "%s's sqlease exited 0", h2->owner);

    if (sqle_process_signal(cli_child_pid(&h3->child), 15) != 0 || reap(h3, 5000) != 0 ||
        h3->exit_code != 0)
        return fail("%s's sqlease did not exit 0 after SIGTERM", h3->owner);
    say(d, "SIGTERM %s's sqlease: exited 0", h3->owner);

    if (read_events(d) != 0 || check_history(d, gone_at) != 0)
        return -1;
    e1 = nth_start(d, 0);
    e2 = nth_start(d, 1);
    e3 = nth_start(d, 2);
    printf("demo passed: 3 holders, tokens %" PRId64 " < %" PRId64 " < %" PRId64
           ", never two at once\n", e1->token, e2->token, e3->token);
    return 0;
}

/* Print the tail of a file, for a failure report. */
static void dump(const char *title, const char *path)
{
    char *text = cli_sys_read_file(path);

    if (text != NULL && text[0] != '\0') {
        size_t n = strlen(text);
        fprintf(stderr, "---- %s ----\n%s%s", title, n > 4000 ? "...\n" : "",
                n > 4000 ? text + n - 4000 : text);
        if (text[n - 1] != '\n')
            fputc('\n', stderr);
    }
    free(text);
}

/* Stop whatever still runs (SIGTERM, SIGKILL after 3 s), make sure no job
 * is left, and remove the directory. */
static void cleanup(demo *d, int failed)
{
    int64_t deadline = sqle_mono_ms() + 3000;

    for (int i = 0; i < DEMO_PROCS; i++)
        if (d->p[i].alive)
            sqle_child_terminate(&d->p[i].child);
    for (int i = 0; i < DEMO_PROCS; i++) {
        int64_t left = deadline - sqle_mono_ms();
        if (d->p[i].alive && reap(&d->p[i], left > 0 ? left : 0) != 0) {
            sqle_child_kill(&d->p[i].child);
            reap(&d->p[i], 5000);
        }
    }
    if (read_events(d) == 0)
        for (int i = 0; i < d->nev; i++)
            if (d->ev[i].is_start && cli_sys_pid_alive(d->ev[i].pid))
                (void)sqle_process_signal(d->ev[i].pid, 9);
    if (failed) {
        for (int i = 0; i < DEMO_PROCS; i++)
            dump(d->p[i].owner, d->p[i].log);
        dump("events", d->events);
    }
    if (cli_sys_remove_dir(d->dir) != 0)
        cli_error("demo: could not remove %s", d->dir);
}

int cli_cmd_demo(const cli_args *a)
{
    static const char *const owners[DEMO_PROCS] = {"demo-A", "demo-B", "demo-C"};
    demo *d;
    int failed;

    cli_log_init(a, SQLEASE_LOG_WARN);
#ifdef _WIN32
    (void)owners;
    (void)scenario;
    (void)cleanup;
    cli_error("demo needs a POSIX system; it is not supported on Windows yet");
    return CLI_EXIT_UNAVAILABLE;
#endif
    if (a->cmd_argc > 0) {
        if (strcmp(a->cmd_argv[0], "--help") == 0) {
            cli_print_help();
            return CLI_EXIT_OK;
        }
        return cli_usage("demo takes no arguments");
    }
    d = calloc(1, sizeof *d);
    if (d == NULL) {
        cli_error("out of memory");
        return CLI_EXIT_OSERR;
    }
    d->t0 = sqle_mono_ms();
    if (sqle_signal_setup() != 0 || cli_sys_self_exe(a->argv0, d->exe, sizeof d->exe) != 0 ||
        cli_sys_make_temp_dir("sqlease-demo", d->dir, sizeof d->dir) != 0) {
        cli_error("demo: cannot set up (temporary directory, own path or signals)");
        free(d);
        return CLI_EXIT_OSERR;
    }
    snprintf(d->db, sizeof d->db, "%s/demo.db", d->dir);
    snprintf(d->events, sizeof d->events, "%s/events", d->dir);
    /* Timeout= is the SQLite busy wait: three processes share one file. */
    snprintf(d->dsn, sizeof d->dsn, "Driver=SQLite3;Database=%s;Timeout=1000", d->db);
    for (int i = 0; i < DEMO_PROCS; i++) {
        snprintf(d->p[i].owner, sizeof d->p[i].owner, "%s", owners[i]);
        snprintf(d->p[i].log, sizeof d->p[i].log, "%s/%s.log", d->dir, owners[i]);
    }
    failed = scenario(d) != 0;
    cleanup(d, failed);
    free(d);
    return failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
