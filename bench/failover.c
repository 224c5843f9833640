/*
 * failover.c -- how long a lease stays unheld when its holder goes away.
 *
 *  - graceful: two supervisors in this process on two connections; the
 *    holder is stopped (sqlease_supervisor_stop releases the row) and the
 *    gap runs from calling stop to the follower's on_started.
 *  - crash: a forked child process opens its own connection, holds the
 *    lease and says so through a pipe; it is killed with SIGKILL (no
 *    release), and the gap runs from the kill to this process's
 *    follower's on_started, which can only come after the row expires.
 *
 * Both check the invariants on the way: no two holders at once (the
 * follower must not start before the child is killed, unless the child
 * reported stopping its work first), and tokens that only grow.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "bench.h"
#include "internal.h"

#define GRACEFUL_NAME "bench-graceful"
#define GRACEFUL_TTL 5000
#define GRACEFUL_HEARTBEAT 500
#define GRACEFUL_DEADLINE 2000
#define GRACEFUL_RETRY 200

#define CRASH_NAME "bench-crash"
#define CRASH_TTL 2000
#define CRASH_HEARTBEAT 500
#define CRASH_DEADLINE 1000
#define CRASH_RETRY 200

/*
 * Each trial starts a fresh pair, so that every gap begins from the same
 * state, and stops the holder at a varied point of the follower's retry
 * period: the gap is spread over one retry and its median is what a fleet
 * sees on a rolling restart.
 */
int bench_graceful(const bench_cfg *cfg, bench_results *res)
{
    sqlease_db *da = NULL, *db = NULL;
    sqlease_error err;
    const char *names[] = { GRACEFUL_NAME };
    bench_watch w;
    double *gaps, *stops;
    int ntr = cfg->graceful_trials, done = 0;
    int rc, t;

    gaps = calloc((size_t)ntr, sizeof *gaps);
    stops = calloc((size_t)ntr, sizeof *stops);
    bench_watch_init(&w, GRACEFUL_NAME);
    rc = gaps == NULL || stops == NULL ? sqle_fail(&err, SQLEASE_ENOMEM, "out of memory")
                                       : bench_open(&da, cfg, &err);
    if (rc == SQLEASE_OK)
        rc = bench_open(&db, cfg, &err);
    if (rc == SQLEASE_OK)
        rc = sqlease_migrate(da, BENCH_TABLE, names, 1, &err);

    for (t = 0; t < ntr && rc == SQLEASE_OK && !bench_interrupted; t++) {
        sqlease_supervisor *a = NULL, *b = NULL;
        bench_member ma, mb;
        sqlease_options o;
        double t0, t1;

        bench_member_init(&ma, &w, "graceful holder");
        bench_member_init(&mb, &w, "graceful successor");
        bench_options(&o, BENCH_TABLE, GRACEFUL_NAME, "bench-graceful-a", GRACEFUL_TTL,
                      GRACEFUL_HEARTBEAT, GRACEFUL_DEADLINE, GRACEFUL_RETRY, &ma);
        rc = sqlease_supervisor_start(&a, da, &o, &err);
        if (rc == SQLEASE_OK && ma.starts != 1)
            rc = sqle_fail(&err, SQLEASE_ESTATE, "the holder did not take the free lease");
        if (rc == SQLEASE_OK) {
            bench_options(&o, BENCH_TABLE, GRACEFUL_NAME, "bench-graceful-b", GRACEFUL_TTL,
                          GRACEFUL_HEARTBEAT, GRACEFUL_DEADLINE, GRACEFUL_RETRY, &mb);
            rc = sqlease_supervisor_start(&b, db, &o, &err);
        }
        if (rc == SQLEASE_OK) {
            /* Vary where in the follower's retry period the stop falls. */
            bench_sleep_ms(300 + bench_rand(GRACEFUL_RETRY + 1));
            t0 = bench_now_us();
            sqlease_supervisor_stop(a, NULL);
            t1 = bench_now_us();
            if (!bench_member_wait_start(&mb, 1, GRACEFUL_TTL + 5000)) {
                if (!bench_interrupted)
                    rc = sqle_fail(&err, SQLEASE_ESTATE,
                                   "the successor did not start within ttl + 5 s");
            } else {
                gaps[done] = (mb.started_us - t0) / 1e3;
                stops[done] = (t1 - t0) / 1e3;
                done++;
            }
        }
        sqlease_supervisor_free(b);
        sqlease_supervisor_free(a);
        bench_member_destroy(&ma);
        bench_member_destroy(&mb);
    }
    sqlease_db_close(db);
    sqlease_db_close(da);
    bench_watch_destroy(&w);
    if (done > 0) {
        res->graceful = bench_spread_of(gaps, done);
        res->graceful_stop = bench_spread_of(stops, done);
        res->have_graceful = 1;
    }
    free(gaps);
    free(stops);
    if (rc != SQLEASE_OK) {
        bench_msg("graceful gap: %s (%s)", err.message, sqlease_strerror(rc));
        res->failed = 1;
        return -1;
    }
    return 0;
}

/* ---- crash ---------------------------------------------------------- */

static int child_fd = -1;

static void child_say(const char *fmt, long long a, double us)
{
    char line[128];
    int n = snprintf(line, sizeof line, fmt, a, us);
    if (n > 0 && write(child_fd, line, (size_t)n) < 0)
        _exit(4);
}

static void child_started(void *ud, int64_t token)
{
    (void)ud;
    child_say("S %lld %.0f\n", (long long)token, bench_now_us());
}

static void child_stopped(void *ud, int reason)
{
    (void)ud;
    child_say("X %lld %.0f\n", (long long)reason, bench_now_us());
}

/*
 * The child: a fresh connection of its own (no ODBC handle crosses the
 * fork), one supervisor, then wait to be killed.  It never returns into
 * the parent's code (which would run the parent's clean-up).
 */
static void child_main(const bench_cfg *cfg, int fd)
{
    sqlease_db *db = NULL;
    sqlease_supervisor *s = NULL;
    sqlease_options o;
    sqlease_error err;
    char owner[64];

#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    signal(SIGINT, SIG_IGN);
    child_fd = fd;
    if (bench_open(&db, cfg, &err) != SQLEASE_OK) {
        dprintf(fd, "E %s\n", err.message);
        _exit(3);
    }
    snprintf(owner, sizeof owner, "bench-crash-child-%ld", (long)getpid());
    sqlease_options_init(&o);
    o.table = BENCH_TABLE;
    o.name = CRASH_NAME;
    o.owner = owner;
    o.ttl_ms = CRASH_TTL;
    o.heartbeat_ms = CRASH_HEARTBEAT;
    o.renew_deadline_ms = CRASH_DEADLINE;
    o.retry_ms = CRASH_RETRY;
    o.on_started = child_started;
    o.on_stopped = child_stopped;
    if (sqlease_supervisor_start(&s, db, &o, &err) != SQLEASE_OK) {
        dprintf(fd, "E %s\n", err.message);
        _exit(3);
    }
    for (;;)
        pause();
}

/* Read one line from the child within timeout_ms; 1 if one came. */
static int read_line(int fd, char *buf, size_t cap, double timeout_ms)
{
    size_t len = 0;
    double end = bench_now_us() + timeout_ms * 1e3;

    while (len + 1 < cap) {
        struct pollfd p = { fd, POLLIN, 0 };
        double left = (end - bench_now_us()) / 1e3;
        ssize_t n;
        if (left <= 0 || bench_interrupted)
            break;
        if (poll(&p, 1, left > 100 ? 100 : (int)left + 1) <= 0)
            continue;
        n = read(fd, buf + len, 1);
        if (n <= 0)
            break;
        if (buf[len] == '\n') {
            buf[len] = '\0';
            return 1;
        }
        len++;
    }
    buf[len] = '\0';
    return 0;
}

/* Everything the child said that the parent has not read yet: the time it
 * reported stopping its work, or 0 if it did not. */
static double child_stop_time(int fd)
{
    char line[128];
    double stopped = 0;
    int fl = fcntl(fd, F_GETFL);

    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    while (read_line(fd, line, sizeof line, 1)) {
        long long a;
        double us;
        if (sscanf(line, "X %lld %lf", &a, &us) == 2 && stopped == 0)
            stopped = us;
    }
    fcntl(fd, F_SETFL, fl);
    return stopped;
}

/*
 * Each trial forks a holder, starts this process's follower once the child
 * says it holds, kills the child at a varied point of its heartbeat, and
 * times the follower's take.  With by_expiry 0 the follower is the
 * default, watching one: it takes only once it has itself seen the row
 * unchanged for a ttl, which protects against a step of the database's
 * clock.  With by_expiry 1 it takes as soon as the database says the row
 * expired (take_by_expiry, the rule before the watch): run side by side,
 * the two series show what the watch costs a crash hand-over.
 */
static int crash_series(const bench_cfg *cfg, int by_expiry, bench_spread *out, int *have)
{
    sqlease_db *db = NULL;
    sqlease_error err;
    const char *names[] = { CRASH_NAME };
    bench_watch w;
    double *gaps;
    int ntr = cfg->crash_trials, done = 0;
    int rc, t;

    gaps = calloc((size_t)ntr, sizeof *gaps);
    bench_watch_init(&w, CRASH_NAME);
    rc = gaps == NULL ? sqle_fail(&err, SQLEASE_ENOMEM, "out of memory")
                      : bench_open(&db, cfg, &err);
    if (rc == SQLEASE_OK)
        rc = sqlease_migrate(db, BENCH_TABLE, names, 1, &err);
    /* The parent connects afresh in every trial, after the fork, so that
     * the child inherits no connection at all (SQLite in particular keeps
     * per-process lock state that a forked copy would share). */
    sqlease_db_close(db);
    db = NULL;

    for (t = 0; t < ntr && rc == SQLEASE_OK && !bench_interrupted; t++) {
        sqlease_supervisor *f = NULL;
        bench_member mf;
        sqlease_options o;
        char line[600];
        long long token = 0;
        double held_us = 0, t_kill, child_stopped_us, early_us;
        int early;
        int fds[2];
        pid_t pid;
        int status;

        /* No thread of this process runs at the fork: every supervisor of
         * the previous trial has been freed. */
        fflush(NULL);
        if (pipe(fds) != 0) {
            rc = sqle_fail(&err, SQLEASE_EPLATFORM, "pipe: %s", strerror(errno));
            break;
        }
        pid = fork();
        if (pid < 0) {
            close(fds[0]);
            close(fds[1]);
            rc = sqle_fail(&err, SQLEASE_EPLATFORM, "fork: %s", strerror(errno));
            break;
        }
        if (pid == 0) {
            close(fds[0]);
            child_main(cfg, fds[1]);
            _exit(0);
        }
        close(fds[1]);

        if (!read_line(fds[0], line, sizeof line, 15000) ||
            sscanf(line, "S %lld %lf", &token, &held_us) != 2) {
            rc = sqle_fail(&err, SQLEASE_ESTATE, "the child did not report holding: %s",
                           line[0] ? line : "(nothing)");
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            close(fds[0]);
            break;
        }
        pthread_mutex_lock(&w.m);
        if (token <= w.last_token)
            bench_violation("lease %s: the child process took token %lld, not above %lld",
                            CRASH_NAME, token, (long long)w.last_token);
        w.last_token = token;
        w.last_member = NULL;
        pthread_mutex_unlock(&w.m);

        bench_member_init(&mf, &w, "crash successor");
        bench_options(&o, BENCH_TABLE, CRASH_NAME, "bench-crash-successor", CRASH_TTL,
                      CRASH_HEARTBEAT, CRASH_DEADLINE, CRASH_RETRY, &mf);
        o.take_by_expiry = by_expiry;
        rc = bench_open(&db, cfg, &err);
        if (rc == SQLEASE_OK)
            rc = sqlease_supervisor_start(&f, db, &o, &err);
        if (rc == SQLEASE_OK) {
            /* Vary where in the child's heartbeat and the follower's retry
             * period the kill falls. */
            bench_sleep_ms(300 + bench_rand(CRASH_HEARTBEAT + 1));
            t_kill = bench_now_us();
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            child_stopped_us = child_stop_time(fds[0]);
            pthread_mutex_lock(&mf.m);
            early = mf.starts > 0 && mf.started_us < t_kill;
            early_us = mf.started_us;
            pthread_mutex_unlock(&mf.m);
            if (early && (child_stopped_us == 0 || child_stopped_us > early_us))
                bench_violation("lease %s: the successor started before the holder process "
                                "was killed and while it still held", CRASH_NAME);
            if (!bench_member_wait_start(&mf, 1, CRASH_TTL + 10000)) {
                if (!bench_interrupted)
                    rc = sqle_fail(&err, SQLEASE_ESTATE,
                                   "the successor did not start within ttl + 10 s");
            } else if (mf.started_us >= t_kill) {
                gaps[done++] = (mf.started_us - t_kill) / 1e3;
            }
        } else {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
        }
        close(fds[0]);
        sqlease_supervisor_free(f);
        sqlease_db_close(db);
        db = NULL;
        bench_member_destroy(&mf);
    }
    sqlease_db_close(db);
    bench_watch_destroy(&w);
    if (done > 0) {
        *out = bench_spread_of(gaps, done);
        *have = 1;
    }
    free(gaps);
    if (rc != SQLEASE_OK) {
        bench_msg("crash gap%s: %s (%s)", by_expiry ? " (take by expiry)" : "", err.message,
                  sqlease_strerror(rc));
        return -1;
    }
    return 0;
}

/* The watching follower's series, then (in a full run) the series of a
 * follower that takes by the database's expiry, in the same run. */
int bench_crash(const bench_cfg *cfg, bench_results *res)
{
    int rc = crash_series(cfg, 0, &res->crash, &res->have_crash);
    if (rc == 0 && !cfg->short_run && !bench_interrupted)
        rc = crash_series(cfg, 1, &res->crash_expiry, &res->have_crash_expiry);
    if (rc != 0)
        res->failed = 1;
    return rc;
}
