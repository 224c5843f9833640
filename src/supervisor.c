/*
 * supervisor.c -- keep the caller's work running exactly while the lease
 * is held.
 *
 * Two threads per supervisor:
 *
 *  - the heartbeat thread sends the acquire statement (a renew while
 *    holding, every heartbeat; a take attempt while not, every retry) and
 *    turns each answer into "start the work" or "stop the work";
 *  - the watchdog thread does nothing but stop the work when the last
 *    proof of holding is renew_deadline old.  It shares no blocking call
 *    with the heartbeat, so a statement that hangs inside the driver
 *    cannot keep work running past its deadline.
 *
 * A proof is dated at the moment its statement was sent, not when the
 * answer came back: the database may have applied it at any moment in
 * between, and the only safe assumption is the earliest.  Holding for
 * renew_deadline after that moment, with renew_deadline < ttl, leaves
 * ttl - renew_deadline for on_stopped to finish before the row expires
 * and anyone else may take it.
 *
 * Callbacks run under cb_lock, one at a time, and the `running` flag
 * flips inside that lock, which is what makes on_started and on_stopped
 * strictly alternate whichever thread calls them.  No statement runs while
 * cb_lock is held: a callback may take as long as its margin allows, and a
 * statement may hang until its query timeout, and neither may wait for the
 * other.
 *
 * A follower polls with a read of the row (lease.c), so it knows who holds
 * the lease at every retry; on_holder reports each change of holder or
 * token, under cb_lock like the other callbacks, from the heartbeat
 * thread, while this supervisor is not the holder.
 *
 * Every start of the work has a token of its own.  When the watchdog
 * stopped the work while the row may still be this hold (a slow database
 * rather than a lost one), the heartbeat gives that hold up (a release
 * scoped to its token, so it cannot clear a successor) before it asks for
 * the lease again, and keeps trying every retry until the release answers;
 * the take that follows gets a new token, and a token that was started
 * once is never started again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "internal.h"
#include "lease.h"
#include "options.h"
#include "platform.h"

struct sqlease_supervisor {
    sqlease_db *db;
    sqlease_lease *lease;
    sqle_resolved r;
    void (*on_started)(void *, int64_t);
    void (*on_stopped)(void *, int);
    void (*on_holder)(void *, const char *, int64_t, const char *);
    void *userdata;
    sqlease_log_fn log;
    void *log_userdata;
    int log_level;

    sqle_mutex m;         /* guards everything below */
    sqle_cond hb_cv;      /* wakes the heartbeat: stopping */
    sqle_cond wd_cv;      /* wakes the watchdog: deadline moved, stopping */
    sqle_cond done_cv;    /* the heartbeat thread has left its loop */
    sqle_cond up_cv;      /* wakes sqlease_supervisor_await: work up, stopping */
    sqle_mutex cb_lock;   /* one callback at a time */
    sqle_mutex stop_lock; /* one sqlease_supervisor_stop at a time */
    uint64_t cb_thread;      /* thread inside a callback, 0 if none */

    int stopping;
    int stopped;
    int stop_rc;
    int running;             /* on_started called, on_stopped not yet */
    int work_up;             /* running, and on_started has returned */
    int stale_hold;          /* work stopped at its deadline while the row
                                may still be ours: give it up before the
                                next start, so that start has a new token */
    int started_any;         /* on_started has been called at least once */
    int64_t deadline;        /* mono ms; meaningful while running */
    int64_t token;           /* token of the current or last hold started */
    int64_t next_due;        /* mono ms of the next acquire */
    int64_t last_contact;    /* mono ms of the last answer, -1 never */
    int64_t started_at;      /* mono ms of sqlease_supervisor_start */
    uint64_t acquires, takes, renew_failures, losses;

    sqle_thread hb_thread, wd_thread;
    int hb_started, wd_started;
    int hb_done;             /* heartbeat loop finished (no statement in flight) */

    /* The holder last reported to on_holder (touched only by the thread
     * running tick: the caller's inside start, then the heartbeat's). */
    int holder_reported;     /* 0: report the next read, whatever it says */
    char holder_owner[SQLEASE_MAX_OWNER + 1];
    int64_t holder_token;
};

static void slog(sqlease_supervisor *s, int level, const char *fmt, ...) SQLEASE_PRINTF(3, 4);

/* Every line names the lease, the owner and, when there is one, the token,
 * so that the logs of a fleet can be merged and read. */
static void slog(sqlease_supervisor *s, int level, const char *fmt, ...)
{
    char msg[640];
    va_list ap;
    int64_t token;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sqle_mutex_lock(&s->m);
    token = s->token;
    sqle_mutex_unlock(&s->m);
    if (token > 0)
        sqle_log(s->log, s->log_userdata, s->log_level, level,
                 "lease %s owner %s token %lld: %s", s->r.name,
                 sqlease_lease_owner(s->lease), (long long)token, msg);
    else
        sqle_log(s->log, s->log_userdata, s->log_level, level, "lease %s owner %s: %s",
                 s->r.name, sqlease_lease_owner(s->lease), msg);
}

/*
 * Start the work for a hold proven by a statement sent at `proof`, unless
 * that proof has already run out (an answer that arrives after its own
 * deadline never starts work), the supervisor is stopping, or the work
 * already ran under this token (a fenced resource would take a stopped
 * run's late writes for the new run's): such a hold is marked stale, to be
 * released before the next take.  A stop that comes while a renew is in
 * flight is the ordinary way to shut down (the renew's answer then finds
 * the work stopped): that is logged at debug level, not as a warning.
 */
static void start_work(sqlease_supervisor *s, int64_t token, int64_t proof)
{
    int go, again, stopping;

    sqle_mutex_lock(&s->cb_lock);
    sqle_mutex_lock(&s->m);
    again = s->started_any && token == s->token;
    stopping = s->stopping;
    go = !s->running && !stopping && !again &&
         sqle_mono_ms() < proof + s->r.renew_deadline_ms;
    if (again && !s->running) {
        s->stale_hold = 1;
        s->next_due = sqle_mono_ms();
    }
    if (go) {
        s->running = 1;
        s->work_up = 0;
        s->holder_reported = 0; /* after this hold, report the first read */
        s->started_any = 1;
        s->token = token;
        s->deadline = proof + s->r.renew_deadline_ms;
        s->cb_thread = sqle_thread_self();
        sqle_cond_signal(&s->wd_cv);
    }
    sqle_mutex_unlock(&s->m);
    if (go) {
        slog(s, SQLEASE_LOG_INFO, "holding the lease; starting the work");
        if (s->on_started != NULL)
            s->on_started(s->userdata, token);
        sqle_mutex_lock(&s->m);
        s->cb_thread = 0;
        s->work_up = s->running;
        sqle_cond_broadcast(&s->up_cv);
        sqle_mutex_unlock(&s->m);
    } else if (stopping) {
        slog(s, SQLEASE_LOG_DEBUG, "stopping; the answer that came in meanwhile starts nothing");
    } else if (again) {
        slog(s, SQLEASE_LOG_WARN, "the work already ran under token %lld; giving that hold up "
             "to start afresh with a new token", (long long)token);
    } else {
        slog(s, SQLEASE_LOG_WARN, "hold proven too late; not starting the work");
    }
    sqle_mutex_unlock(&s->cb_lock);
}

/*
 * Stop the work if it is running.  For a deadline stop the deadline is
 * checked again under the lock: a renew may have moved it while this
 * thread waited for a callback to finish.
 */
static void stop_work(sqlease_supervisor *s, int reason)
{
    int go;

    sqle_mutex_lock(&s->cb_lock);
    sqle_mutex_lock(&s->m);
    go = s->running &&
         (reason != SQLEASE_STOP_DEADLINE || sqle_mono_ms() >= s->deadline);
    if (go) {
        s->running = 0;
        s->work_up = 0;
        if (reason != SQLEASE_STOP_SHUTDOWN)
            s->losses++;
        if (reason == SQLEASE_STOP_DEADLINE)
            s->stale_hold = 1;
        s->cb_thread = sqle_thread_self();
    }
    sqle_mutex_unlock(&s->m);
    if (go) {
        slog(s, reason == SQLEASE_STOP_SHUTDOWN ? SQLEASE_LOG_INFO : SQLEASE_LOG_WARN,
             "stopping the work: %s", sqlease_stop_reason_str(reason));
        if (s->on_stopped != NULL)
            s->on_stopped(s->userdata, reason);
        sqle_mutex_lock(&s->m);
        s->cb_thread = 0;
        sqle_mutex_unlock(&s->m);
    }
    sqle_mutex_unlock(&s->cb_lock);
}

/* A release attempted with less time than this left in a stop's budget
 * could not plausibly get an answer: it is not sent. */
#define STOP_MIN_RELEASE_MS 20

enum action { ACT_NONE, ACT_START, ACT_STOP, ACT_RESTART };

/*
 * Give up the hold whose work the watchdog stopped at its deadline, if the
 * row is still that hold.  The row must stay this hold until on_stopped
 * has returned (the ttl - renew_deadline margin is the time the work has
 * to stop before anyone else may take over), so this first waits for a
 * callback in progress: the deadline stop marks the hold stale while it
 * holds cb_lock, so taking cb_lock and letting it go at once returns after
 * that on_stopped has, and no statement runs under the lock.  The release
 * is scoped to the hold's token, so a successor's row is never cleared.
 * Returns 1 when the release answered (the hold is given up, or the row
 * was no longer that hold), 0 after a failure, logged; the heartbeat then
 * tries again after `retry` and takes nothing until it has succeeded.
 */
static int release_stale(sqlease_supervisor *s, sqlease_error *err)
{
    int released = 0;
    int rc;

    sqle_mutex_lock(&s->cb_lock);
    sqle_mutex_unlock(&s->cb_lock);
    sqle_lease_forget(s->lease);
    /* Never with the minimum hold: this hold's work did not finish. */
    rc = sqle_lease_release_for(s->lease, 0, 0, &released, err);
    if (rc != SQLEASE_OK) {
        slog(s, SQLEASE_LOG_WARN, "could not release the hold whose work passed its deadline "
             "(%s: %s); trying again in %lld ms", sqlease_strerror(rc), err->message,
             (long long)s->r.retry_ms);
        return 0;
    }
    sqle_mutex_lock(&s->m);
    s->stale_hold = 0;
    s->last_contact = sqle_mono_ms();
    sqle_mutex_unlock(&s->m);
    slog(s, SQLEASE_LOG_INFO, released
             ? "released the hold whose work passed its deadline; the next start gets a new "
               "token"
             : "the hold whose work passed its deadline is no longer the row's");
    return 1;
}

/*
 * Tell on_holder what a follower's read showed, if the holder or its token
 * changed since the last report (or nothing was reported since this
 * supervisor last held).  An expired hold reads as free: owner "".  Runs
 * under cb_lock, as the other callbacks do, and not once stopping has
 * begun or while this supervisor holds.
 */
static void report_holder(sqlease_supervisor *s, const sqlease_lease_info *row)
{
    const char *owner = row->held ? row->owner : "";
    int go;

    if (s->on_holder == NULL)
        return;
    if (s->holder_reported && s->holder_token == row->token &&
        strcmp(s->holder_owner, owner) == 0)
        return;
    sqle_mutex_lock(&s->cb_lock);
    sqle_mutex_lock(&s->m);
    go = !s->running && !s->stopping;
    if (go)
        s->cb_thread = sqle_thread_self();
    sqle_mutex_unlock(&s->m);
    if (go) {
        s->holder_reported = 1;
        s->holder_token = row->token;
        snprintf(s->holder_owner, sizeof s->holder_owner, "%s", owner);
        s->on_holder(s->userdata, owner, row->token,
                     row->held && row->data[0] != '\0' ? row->data : NULL);
        sqle_mutex_lock(&s->m);
        s->cb_thread = 0;
        sqle_mutex_unlock(&s->m);
    }
    sqle_mutex_unlock(&s->cb_lock);
}

/*
 * One acquire and what follows from its answer.  Returns the acquire's
 * status so that start can refuse a broken installation.
 */
static int tick(sqlease_supervisor *s, sqlease_error *err_out)
{
    sqlease_lease_info info;
    sqlease_error err;
    int64_t sent, answered;
    int taken = 0, lost = 0, stale, stopping;
    int rc;
    enum action act = ACT_NONE;

    sqle_err_clear(&err);
    sqle_mutex_lock(&s->m);
    stale = s->stale_hold && !s->running;
    sqle_mutex_unlock(&s->m);
    if (stale && !release_stale(s, &err)) {
        sqle_mutex_lock(&s->m);
        s->next_due = sqle_mono_ms() + s->r.retry_ms;
        sqle_mutex_unlock(&s->m);
        if (err_out != NULL)
            *err_out = err;
        return err.status;
    }
    sqle_mutex_lock(&s->m);
    stopping = s->stopping;
    sqle_mutex_unlock(&s->m);
    if (stale && stopping)
        return SQLEASE_OK; /* a stop came while the release ran: no new hold */

    sent = sqle_mono_ms();
    rc = sqle_lease_acquire(s->lease, &info, &taken, &lost, &err);
    answered = sqle_mono_ms();

    sqle_mutex_lock(&s->m);
    if (lost) {
        /* The renew found the hold gone: stop at once, whatever the take
         * that followed it answered (it can wait for the next retry). */
        s->last_contact = answered;
        s->stale_hold = 0; /* the row is no longer that hold */
    }
    if (rc == SQLEASE_OK) {
        s->last_contact = answered;
        s->acquires++;
        if (taken) {
            s->takes++;
            s->stale_hold = 0;
        }
        if (s->running && taken)
            act = ACT_RESTART; /* the hold we worked for is gone: fresh start */
        else if (s->running) {
            if (sent + s->r.renew_deadline_ms > s->deadline) {
                s->deadline = sent + s->r.renew_deadline_ms;
                sqle_cond_signal(&s->wd_cv);
            }
        } else if (!taken && s->stale_hold) {
            /* A renew of the hold whose work the watchdog has just
             * stopped: give it up first (next tick, at once). */
        } else
            act = ACT_START;
        s->next_due = !s->running && !taken && s->stale_hold ? answered
                                                             : sent + s->r.heartbeat_ms;
    } else if (rc == SQLEASE_NOT_HELD || lost) {
        if (rc == SQLEASE_NOT_HELD)
            s->last_contact = answered;
        if (s->running)
            act = ACT_STOP;
        s->next_due = sent + s->r.retry_ms;
    } else {
        if (rc == SQLEASE_ENOROW || rc == SQLEASE_ENOTABLE)
            s->last_contact = answered;
        if (s->running)
            s->renew_failures++;
        s->next_due = sent + s->r.retry_ms;
    }
    sqle_mutex_unlock(&s->m);

    if (rc != SQLEASE_OK && rc != SQLEASE_NOT_HELD)
        slog(s, lost ? SQLEASE_LOG_WARN : SQLEASE_LOG_ERROR, "%s (%s): %s",
             lost ? "the hold is gone, and taking the lease again failed" : "acquire failed",
             sqlease_strerror(rc), err.message);
    else if (rc == SQLEASE_OK && taken)
        slog(s, SQLEASE_LOG_DEBUG, "took the lease with token %lld in %lld ms",
             (long long)info.token, (long long)(answered - sent));

    switch (act) {
    case ACT_RESTART:
        stop_work(s, SQLEASE_STOP_LOST);
        start_work(s, info.token, sent);
        break;
    case ACT_START:
        start_work(s, info.token, sent);
        break;
    case ACT_STOP:
        stop_work(s, SQLEASE_STOP_LOST);
        break;
    case ACT_NONE:
        break;
    }
    /* Whatever did not end in a hold of ours, a follower's read that
     * answered (db_now_ms set) says who held the lease when it ran, even
     * if the take after it failed or lost a race (the next read says
     * what came of that). */
    if (rc != SQLEASE_OK && info.db_now_ms > 0)
        report_holder(s, &info);
    if (err_out != NULL)
        *err_out = err;
    return rc;
}

static void heartbeat_main(void *arg)
{
    sqlease_supervisor *s = arg;

    sqle_mutex_lock(&s->m);
    while (!s->stopping) {
        if (sqle_mono_ms() < s->next_due) {
            sqle_cond_wait_until(&s->hb_cv, &s->m, s->next_due);
            continue;
        }
        sqle_mutex_unlock(&s->m);
        tick(s, NULL);
        sqle_mutex_lock(&s->m);
    }
    s->hb_done = 1;
    sqle_cond_broadcast(&s->done_cv);
    sqle_mutex_unlock(&s->m);
}

static void watchdog_main(void *arg)
{
    sqlease_supervisor *s = arg;

    sqle_mutex_lock(&s->m);
    while (!s->stopping) {
        if (!s->running) {
            sqle_cond_wait_until(&s->wd_cv, &s->m, -1);
        } else if (sqle_mono_ms() < s->deadline) {
            sqle_cond_wait_until(&s->wd_cv, &s->m, s->deadline);
        } else {
            sqle_mutex_unlock(&s->m);
            stop_work(s, SQLEASE_STOP_DEADLINE);
            sqle_mutex_lock(&s->m);
        }
    }
    sqle_mutex_unlock(&s->m);
}

static void destroy(sqlease_supervisor *s)
{
    sqlease_lease_free(s->lease);
    sqle_cond_destroy(&s->hb_cv);
    sqle_cond_destroy(&s->wd_cv);
    sqle_cond_destroy(&s->done_cv);
    sqle_cond_destroy(&s->up_cv);
    sqle_mutex_destroy(&s->cb_lock);
    sqle_mutex_destroy(&s->stop_lock);
    sqle_mutex_destroy(&s->m);
    free(s);
}

/* Wake both threads and wait for them; the heartbeat may first have to
 * finish a statement in flight.  Called by one thread at a time (start,
 * or stop under stop_lock). */
static void join_threads(sqlease_supervisor *s)
{
    int hb, wd;

    sqle_mutex_lock(&s->m);
    s->stopping = 1;
    sqle_cond_broadcast(&s->hb_cv);
    sqle_cond_broadcast(&s->wd_cv);
    sqle_cond_broadcast(&s->up_cv);
    hb = s->hb_started;
    wd = s->wd_started;
    sqle_mutex_unlock(&s->m);
    if (hb)
        sqle_thread_join(&s->hb_thread);
    if (wd)
        sqle_thread_join(&s->wd_thread);
    sqle_mutex_lock(&s->m);
    s->hb_started = s->wd_started = 0;
    sqle_mutex_unlock(&s->m);
}

int sqlease_supervisor_start(sqlease_supervisor **out, sqlease_db *db,
                             const sqlease_options *opt_in, sqlease_error *err)
{
    sqlease_options full;
    const sqlease_options *opt = &full;
    sqlease_supervisor *s;
    int rc;

    sqle_err_clear(err);
    if (out == NULL || db == NULL)
        return sqle_fail(err, SQLEASE_EINVAL,
                         "sqlease_supervisor_start: out and db must not be NULL");
    *out = NULL;
    rc = sqle_options_import(opt_in, &full, err);
    if (rc != SQLEASE_OK)
        return rc;
    s = calloc(1, sizeof *s);
    if (s == NULL)
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    rc = sqle_options_resolve(opt, &db->ini, 0, &s->r, err);
    if (rc != SQLEASE_OK) {
        free(s);
        return rc;
    }
    rc = sqle_lease_new_resolved(&s->lease, db, &s->r, err);
    if (rc != SQLEASE_OK) {
        free(s);
        return rc;
    }
    /* The resolved strings were borrowed from the caller; point them at
     * the lease's own copies. */
    s->r.name = sqlease_lease_name(s->lease);
    s->r.owner = sqlease_lease_owner(s->lease);
    s->r.table = NULL;
    s->r.data = NULL;
    s->db = db;
    s->on_started = opt->on_started;
    s->on_stopped = opt->on_stopped;
    s->on_holder = opt->on_holder;
    s->userdata = opt->userdata;
    if (opt->log != NULL) {
        s->log = opt->log;
        s->log_userdata = opt->log_userdata;
        s->log_level = opt->log_level;
    } else {
        s->log = db->log;
        s->log_userdata = db->log_userdata;
        s->log_level = db->log_level;
    }
    s->last_contact = -1;
    s->started_at = sqle_mono_ms();
    if (sqle_mutex_init(&s->m) != 0 || sqle_mutex_init(&s->cb_lock) != 0 ||
        sqle_mutex_init(&s->stop_lock) != 0 ||
        sqle_cond_init(&s->hb_cv) != 0 || sqle_cond_init(&s->wd_cv) != 0 ||
        sqle_cond_init(&s->done_cv) != 0 || sqle_cond_init(&s->up_cv) != 0) {
        sqlease_lease_free(s->lease);
        free(s);
        return sqle_fail(err, SQLEASE_EPLATFORM, "cannot create a mutex or condition variable");
    }

    if (sqle_thread_start(&s->wd_thread, watchdog_main, s) != 0) {
        destroy(s);
        return sqle_fail(err, SQLEASE_EPLATFORM, "cannot start the watchdog thread");
    }
    sqle_mutex_lock(&s->m);
    s->wd_started = 1;
    sqle_mutex_unlock(&s->m);

    /* The first acquire runs here, so that a lone instance has its work
     * running by the time start returns. */
    rc = tick(s, err);
    if (rc == SQLEASE_ENOROW || rc == SQLEASE_ENOTABLE || rc == SQLEASE_EROWCOUNT) {
        /* A broken installation: nothing will ever start, say so now. */
        join_threads(s);
        destroy(s);
        return rc;
    }
    sqle_err_clear(err);

    if (sqle_thread_start(&s->hb_thread, heartbeat_main, s) != 0) {
        join_threads(s);
        stop_work(s, SQLEASE_STOP_SHUTDOWN);
        sqlease_lease_release(s->lease, NULL, NULL);
        destroy(s);
        return sqle_fail(err, SQLEASE_EPLATFORM, "cannot start the heartbeat thread");
    }
    sqle_mutex_lock(&s->m);
    s->hb_started = 1;
    sqle_mutex_unlock(&s->m);
    *out = s;
    return SQLEASE_OK;
}

/*
 * Wait for the heartbeat thread to leave its loop, at most until
 * `until` (mono ms; -1 without bound).  Returns 1 if it has.  A statement
 * in flight normally ends within the query timeout; a driver that ignores
 * it (or a connection blackholed by the network) can hold it longer, and
 * shutdown must not hang on that: the work is already stopped by then.
 */
static int await_heartbeat(sqlease_supervisor *s, int64_t until)
{
    int done;

    sqle_mutex_lock(&s->m);
    while (!s->hb_done && s->hb_started &&
           (until < 0 || sqle_mono_ms() < until))
        sqle_cond_wait_until(&s->done_cv, &s->m, until);
    done = s->hb_done || !s->hb_started;
    sqle_mutex_unlock(&s->m);
    return done;
}

static int stop_locked(sqlease_supervisor *s, sqlease_error *err);

/* Two threads may stop one supervisor at once; the second waits for the
 * first and gets its answer, so the threads are joined and the lease
 * released exactly once. */
int sqlease_supervisor_stop(sqlease_supervisor *s, sqlease_error *err)
{
    int rc;

    sqle_err_clear(err);
    if (s == NULL)
        return SQLEASE_OK;
    sqle_mutex_lock(&s->m);
    if (s->cb_thread != 0 && s->cb_thread == sqle_thread_self()) {
        sqle_mutex_unlock(&s->m);
        return sqle_fail(err, SQLEASE_ESTATE,
                         "sqlease_supervisor_stop called from the supervisor's own callback");
    }
    sqle_mutex_unlock(&s->m);
    sqle_mutex_lock(&s->stop_lock);
    rc = stop_locked(s, err);
    sqle_mutex_unlock(&s->stop_lock);
    return rc;
}

/*
 * The whole of a stop fits in one budget, query timeout + DB_SLACK_MS from
 * the call: the work is stopped first, at once; a statement the heartbeat
 * has in flight answers (or is abandoned) by its own deadline, which was
 * set before the stop began and so falls inside the budget; the release
 * gets what is left of it.  A database that does not answer in that time
 * costs the successor the rest of the ttl, never the caller more time.
 */
static int stop_locked(sqlease_supervisor *s, sqlease_error *err)
{
    int64_t budget_end = sqle_mono_ms() + s->db->query_timeout_ms + DB_SLACK_MS;
    int released = 0;
    int rc;

    sqle_mutex_lock(&s->m);
    if (s->stopped) {
        rc = s->stop_rc;
        sqle_mutex_unlock(&s->m);
        return rc;
    }
    s->stopping = 1;
    sqle_cond_broadcast(&s->hb_cv);
    sqle_cond_broadcast(&s->wd_cv);
    sqle_cond_broadcast(&s->up_cv);
    sqle_mutex_unlock(&s->m);

    /* No new start can happen once stopping is set, so the work is
     * stopped now, before waiting for a statement that may be in flight. */
    stop_work(s, SQLEASE_STOP_SHUTDOWN);
    if (!await_heartbeat(s, budget_end)) {
        slog(s, SQLEASE_LOG_WARN, "a lease statement is still in flight; not releasing "
             "(the lease expires by itself within the ttl)");
        return sqle_fail(err, SQLEASE_ETIMEOUT,
                         "lease '%s': a statement is still in flight after the query "
                         "timeout; the work is stopped but the lease was not released "
                         "(it expires by itself within the ttl)", s->r.name);
    }
    join_threads(s);
    if (budget_end - sqle_mono_ms() < STOP_MIN_RELEASE_MS) {
        rc = sqle_fail(err, SQLEASE_ETIMEOUT,
                       "lease '%s': no time left to release after the statement in flight; "
                       "the work is stopped and the lease expires by itself within the ttl",
                       s->r.name);
        slog(s, SQLEASE_LOG_WARN, "%s", err != NULL ? err->message : "no time left to release");
        return rc;
    }
    rc = sqle_lease_release_by(s->lease, budget_end, &released, err);
    if (rc == SQLEASE_OK && released && sqle_lease_min_hold(s->lease) > 0)
        slog(s, SQLEASE_LOG_INFO, "released the lease; the row stays held until %lld ms after "
             "the take (minimum hold), if that is still ahead",
             (long long)sqle_lease_min_hold(s->lease));
    else if (rc == SQLEASE_OK)
        slog(s, SQLEASE_LOG_INFO, released ? "released the lease" : "stopped (lease not held)");
    else
        slog(s, SQLEASE_LOG_WARN, "release failed (%s); the lease expires by itself",
             sqlease_strerror(rc));
    sqle_mutex_lock(&s->m);
    if (rc != SQLEASE_ETIMEOUT) {
        s->stopped = 1;
        s->stop_rc = rc;
    }
    sqle_mutex_unlock(&s->m);
    return rc;
}

void sqlease_supervisor_free(sqlease_supervisor *s)
{
    int inside;

    if (s == NULL)
        return;
    sqle_mutex_lock(&s->m);
    inside = s->cb_thread != 0 && s->cb_thread == sqle_thread_self();
    sqle_mutex_unlock(&s->m);
    if (inside) {
        slog(s, SQLEASE_LOG_ERROR,
             "sqlease_supervisor_free called from the supervisor's own callback; ignored");
        return;
    }
    if (sqlease_supervisor_stop(s, NULL) == SQLEASE_ETIMEOUT) {
        /* Freeing means the memory must go: wait for the statement. */
        await_heartbeat(s, -1);
        sqlease_supervisor_stop(s, NULL);
    }
    destroy(s);
}

/* Filled in a full state of the library's own, then copied out as far as
 * the caller's reaches (see "Structs that grow"). */
int sqlease_supervisor_state_(sqlease_supervisor *s, sqlease_state *out, size_t size)
{
    sqlease_state full, *st = &full;
    int64_t now;

    if (s == NULL || out == NULL || size < sizeof(size_t))
        return SQLEASE_EINVAL;
    memset(st, 0, sizeof *st);
    now = sqle_mono_ms();
    sqle_mutex_lock(&s->m);
    st->holding = s->running;
    st->token = s->token;
    st->deadline_in_ms = s->running && s->deadline > now ? s->deadline - now : 0;
    st->last_contact_ago_ms = s->last_contact < 0 ? -1 : now - s->last_contact;
    st->acquires = s->acquires;
    st->takes = s->takes;
    st->renew_failures = s->renew_failures;
    st->losses = s->losses;
    sqle_mutex_unlock(&s->m);
    st->statements = sqle_lease_statements(s->lease);
    snprintf(st->owner, sizeof st->owner, "%s", sqlease_lease_owner(s->lease));
    snprintf(st->name, sizeof st->name, "%s", sqlease_lease_name(s->lease));
    sqle_struct_out(out, size, st, sizeof *st);
    return SQLEASE_OK;
}

int sqlease_supervisor_health(sqlease_supervisor *s, sqlease_error *err)
{
    int64_t now, since;
    int rc = SQLEASE_OK;

    sqle_err_clear(err);
    if (s == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_supervisor_health: NULL supervisor");
    now = sqle_mono_ms();
    sqle_mutex_lock(&s->m);
    since = s->last_contact >= 0 ? s->last_contact : s->started_at;
    if (s->stopped || s->stopping)
        rc = sqle_fail(err, SQLEASE_ESTATE, "supervisor is stopped");
    else if (s->running && now >= s->deadline)
        rc = sqle_fail(err, SQLEASE_ESTATE, "holder is %lld ms past its renew deadline",
                       (long long)(now - s->deadline));
    else if (!s->running && now - since >= s->r.ttl_ms)
        rc = sqle_fail(err, SQLEASE_ESTATE, "the database has not answered for %lld ms",
                       (long long)(now - since));
    sqle_mutex_unlock(&s->m);
    return rc;
}

/*
 * Wait for the work to be up, bounded by the caller's timeout alone: the
 * heartbeat thread does the acquiring, so nothing here waits on the
 * database.  A stop wakes every waiter.
 */
int sqlease_supervisor_await(sqlease_supervisor *s, int64_t timeout_ms, sqlease_error *err)
{
    int64_t until;
    int rc;

    sqle_err_clear(err);
    if (s == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_supervisor_await: NULL supervisor");
    if (timeout_ms < 0 || timeout_ms > SQLEASE_MAX_DURATION_MS)
        return sqle_fail(err, SQLEASE_EINVAL,
                         "sqlease_supervisor_await: timeout %lld ms is not within 0..30 "
                         "days", (long long)timeout_ms);
    until = sqle_mono_ms() + timeout_ms;
    sqle_mutex_lock(&s->m);
    if (s->cb_thread != 0 && s->cb_thread == sqle_thread_self()) {
        sqle_mutex_unlock(&s->m);
        return sqle_fail(err, SQLEASE_ESTATE,
                         "sqlease_supervisor_await called from the supervisor's own "
                         "callback");
    }
    while (!s->work_up && !s->stopping && sqle_mono_ms() < until)
        sqle_cond_wait_until(&s->up_cv, &s->m, until);
    if (s->stopping)
        rc = sqle_fail(err, SQLEASE_ESTATE, "lease '%s': the supervisor is stopped",
                       s->r.name);
    else if (s->work_up)
        rc = SQLEASE_OK;
    else
        rc = sqle_fail(err, SQLEASE_NOT_HELD, "lease '%s' not held after waiting %lld ms",
                       s->r.name, (long long)timeout_ms);
    sqle_mutex_unlock(&s->m);
    return rc;
}

int sqlease_supervisor_fence(sqlease_supervisor *s, sqlease_fence *f, sqlease_error *err)
{
    int64_t token;
    int running;

    sqle_err_clear(err);
    if (s == NULL || f == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_supervisor_fence: NULL argument");
    sqle_mutex_lock(&s->m);
    running = s->running;
    token = s->token;
    sqle_mutex_unlock(&s->m);
    if (!running)
        return sqle_fail(err, SQLEASE_NOT_HELD, "lease '%s': the work is not running "
                         "(not holding the lease)", s->r.name);
    /* The lease's strings and statements do not change after start, so
     * they are read without the lock. */
    return sqle_lease_fence(s->lease, token, f, err);
}
