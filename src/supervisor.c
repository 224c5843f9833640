/*
 * supervisor.c -- keep the caller's work running exactly while the lease
 * is held: the supervisor's state machine and the public calls.
 *
 * Every supervisor is one state (SUP_FOLLOWER, SUP_HOLDER, SUP_STALE,
 * SUP_STOPPED: supervisor.h) changed by one function, sqle_sup_step(),
 * from the events the engine's threads report (engine.c): an answer to a
 * statement, the watchdog's deadline, a stop.  The step decides what the
 * work does (queues on_started or on_stopped) and when the next
 * statement is due; the engine's threads do the sending, the watching and
 * the calling.
 *
 * A proof is dated at the moment its statement was sent, not when the
 * answer came back: the database may have applied it at any moment in
 * between, and the only safe assumption is the earliest.  Holding for
 * renew_deadline after that moment, with renew_deadline < ttl, leaves
 * ttl - renew_deadline for on_stopped to finish before the row expires
 * and anyone else may take it.
 *
 * `running` flips when a callback is queued, and a supervisor's callbacks
 * run one at a time in the order queued (engine.c), which is what makes
 * on_started and on_stopped strictly alternate whichever thread runs
 * them.  No statement runs inside a callback's turn: a callback may take
 * as long as its margin allows, and a statement may hang until its query
 * timeout, and neither waits for the other.
 *
 * A follower polls with a read of the row (lease.c), so it knows who holds
 * the lease at every retry; on_holder reports each change of holder or
 * token, queued like the other callbacks, while this supervisor is not
 * the holder.
 *
 * Every start of the work has a token of its own.  When the watchdog
 * stopped the work while the row may still be this hold (a slow database
 * rather than a lost one), the supervisor goes SUP_STALE: once on_stopped
 * has returned, the runner gives that hold up (a release scoped to its
 * token, so it cannot clear a successor) before it asks for the lease
 * again, and keeps trying every retry until the release answers; the take
 * that follows gets a new token, and a token that was started once is
 * never started again.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "internal.h"
#include "lease.h"
#include "options.h"
#include "platform.h"
#include "supervisor.h"

static const char *state_name(enum sup_state st)
{
    switch (st) {
    case SUP_NEW: return "new";
    case SUP_FOLLOWER: return "follower";
    case SUP_HOLDER: return "holder";
    case SUP_STALE: return "stale";
    case SUP_STOPPED: return "stopped";
    }
    return "?";
}

/* Every line names the lease, the owner and, when there is one, the token,
 * so that the logs of a fleet can be merged and read. */
static void vlog_token(sqlease_supervisor *s, int level, int64_t token, const char *msg)
{
    if (token > 0)
        sqle_log(s->log, s->log_userdata, s->log_level, level,
                 "lease %s owner %s token %lld: %s", s->r.name,
                 sqlease_lease_owner(s->lease), (long long)token, msg);
    else
        sqle_log(s->log, s->log_userdata, s->log_level, level, "lease %s owner %s: %s",
                 s->r.name, sqlease_lease_owner(s->lease), msg);
}

void sqle_sup_log(sqlease_supervisor *s, int level, const char *fmt, ...)
{
    char msg[640];
    va_list ap;
    int64_t token;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sqle_engine_lock(s->e);
    token = s->token;
    sqle_engine_unlock(s->e);
    vlog_token(s, level, token, msg);
}

void sqle_sup_note(sqlease_supervisor *s, const sup_note *note)
{
    if (note != NULL && note->set)
        sqle_sup_log(s, note->level, "%s", note->msg);
}

static void note_set(sup_note *note, int level, const char *fmt, ...) SQLEASE_PRINTF(3, 4);

static void note_set(sup_note *note, int level, const char *fmt, ...)
{
    va_list ap;

    if (note == NULL)
        return;
    /* The most severe line of one step is the one logged. */
    if (note->set && note->level <= level)
        return;
    note->set = 1;
    note->level = level;
    va_start(ap, fmt);
    vsnprintf(note->msg, sizeof note->msg, fmt, ap);
    va_end(ap);
}

static sup_cb *cb_new(int kind)
{
    sup_cb *cb = calloc(1, sizeof *cb);

    if (cb != NULL)
        cb->kind = kind;
    return cb;
}

/* The work stops (on_stopped is queued): for a loss, a deadline or a
 * shutdown. */
static void stop_work(sqlease_supervisor *s, int reason, sup_note *note)
{
    sup_cb *cb;

    /* A stop that cannot be queued would leave the work running past its
     * hold: out of memory, wait for memory, lock held (nothing else may
     * change the state meanwhile). */
    while ((cb = cb_new(CB_STOPPED)) == NULL)
        sqle_sleep_ms(1);
    s->running = 0;
    s->work_up = 0;
    if (reason != SQLEASE_STOP_SHUTDOWN)
        s->losses++;
    cb->reason = reason;
    sqle_engine_queue_cb(s->e, s, cb);
    (void)note; /* "stopped the work" is logged where on_stopped is called */
}

/*
 * A hold proven by a statement sent at `proof` with `token`: start the
 * work, unless that proof has already run out (an answer that arrives
 * after its own deadline never starts work) or the work already ran
 * under this token (a fenced resource would take a stopped run's late
 * writes for the new run's): such a hold goes stale, to be released
 * before the next take, which gets a new token.
 */
static void start_work(sqlease_supervisor *s, int64_t token, int64_t proof, int64_t now,
                       sup_note *note)
{
    sup_cb *cb;

    if (s->started_any && token == s->token) {
        s->state = SUP_STALE;
        s->next_due = now;
        note_set(note, SQLEASE_LOG_WARN, "the work already ran under token %lld; giving that "
                 "hold up to start afresh with a new token", (long long)token);
        return;
    }
    if (now >= proof + s->r.renew_deadline_ms) {
        /* Give it up and take afresh: a follower never holds a token, so
         * what it sends is always a poll. */
        s->state = SUP_STALE;
        s->next_due = now;
        note_set(note, SQLEASE_LOG_WARN, "hold proven too late; not starting the work, "
                 "giving the hold up");
        return;
    }
    cb = cb_new(CB_STARTED);
    if (cb == NULL) {
        s->state = SUP_STALE;
        s->next_due = now;
        note_set(note, SQLEASE_LOG_ERROR, "out of memory; not starting the work, giving the "
                 "hold up");
        return;
    }
    s->state = SUP_HOLDER;
    s->running = 1;
    s->work_up = 0;
    s->started_any = 1;
    s->token = token;
    s->holder_reported = 0; /* after this hold, report the first read */
    s->deadline = proof + s->r.renew_deadline_ms;
    s->next_due = proof + s->r.heartbeat_ms;
    cb->token = token;
    sqle_engine_queue_cb(s->e, s, cb);
    sqle_cond_signal(&s->e->wd_cv);
    /* "starting the work" is logged where on_started is called. */
}

/* Tell on_holder what a follower's read showed, if the holder or its token
 * changed since the last report (or nothing was reported since this
 * supervisor last held).  An expired hold reads as free: owner "". */
static void report_holder(sqlease_supervisor *s, const sqlease_lease_info *row)
{
    const char *owner = row->held ? row->owner : "";
    sup_cb *cb;

    if (s->on_holder == NULL || s->running || s->state == SUP_STOPPED)
        return;
    if (s->holder_reported && s->holder_token == row->token &&
        strcmp(s->holder_owner, owner) == 0)
        return;
    cb = cb_new(CB_HOLDER);
    if (cb == NULL)
        return; /* reported at the next read */
    if (row->held && row->data[0] != '\0' && (cb->data = sqle_strdup(row->data)) == NULL) {
        free(cb);
        return;
    }
    s->holder_reported = 1;
    s->holder_token = row->token;
    snprintf(s->holder_owner, sizeof s->holder_owner, "%s", owner);
    cb->token = row->token;
    snprintf(cb->owner, sizeof cb->owner, "%s", owner);
    sqle_engine_queue_cb(s->e, s, cb);
}

/*
 * The transition function.  Each case says what the event means in each
 * state; anything not listed changes nothing.  SUP_STOPPED absorbs every
 * event but the counters: once a stop began, nothing starts.
 */
void sqle_sup_step(sqlease_supervisor *s, enum sup_event ev, int64_t proof, int64_t arg,
                   const sqlease_lease_info *row, sup_note *note)
{
    int64_t now = s->e->now_ms();
    enum sup_state was = s->state;

    ENGINE_HELD(s->e);
    if (s->state == SUP_NEW && ev != EV_SHUTDOWN)
        s->state = SUP_FOLLOWER; /* the first answer of start */
    switch (ev) {
    case EV_TAKEN:
    case EV_RENEWED:
        s->last_contact = now;
        s->acquires++;
        if (ev == EV_TAKEN)
            s->takes++;
        if (s->state == SUP_HOLDER && ev == EV_RENEWED) {
            if (proof + s->r.renew_deadline_ms > s->deadline)
                s->deadline = proof + s->r.renew_deadline_ms;
            s->next_due = proof + s->r.heartbeat_ms;
        } else if (s->state == SUP_HOLDER) {
            /* A take while holding: the hold worked for is gone (the
             * caller reports EV_LOST first; this is a guard). */
            stop_work(s, SQLEASE_STOP_LOST, note);
            start_work(s, arg, proof, now, note);
        } else if (s->state == SUP_FOLLOWER && ev == EV_TAKEN) {
            start_work(s, arg, proof, now, note);
        } else if (s->state == SUP_FOLLOWER || s->state == SUP_STALE) {
            /* A renew of a hold no work runs under (a follower sends no
             * renew; this is a guard) or of the stale one: give it up. */
            s->state = SUP_STALE;
            s->next_due = now;
        }
        break;
    case EV_LOST:
        s->last_contact = now;
        if (s->state == SUP_HOLDER && s->running)
            stop_work(s, SQLEASE_STOP_LOST, note);
        if (s->state != SUP_STOPPED) {
            s->state = SUP_FOLLOWER; /* the row is no longer that hold */
            s->next_due = proof + s->r.retry_ms;
        }
        break;
    case EV_NOT_HELD:
        s->last_contact = now;
        if (s->state == SUP_HOLDER && s->running) /* guard: a holder's loss comes as EV_LOST */
            stop_work(s, SQLEASE_STOP_LOST, note);
        if (s->state != SUP_STOPPED) {
            s->state = SUP_FOLLOWER;
            s->next_due = proof + s->r.retry_ms;
            if (row != NULL && row->db_now_ms > 0)
                report_holder(s, row);
        }
        break;
    case EV_FAILED:
        if (arg == SQLEASE_ENOROW || arg == SQLEASE_ENOTABLE)
            s->last_contact = now;
        if (s->running)
            s->renew_failures++;
        if (s->state != SUP_STOPPED)
            s->next_due = proof + s->r.retry_ms;
        /* A follower's read that answered says who held the lease when it
         * ran, even if the take after it failed. */
        if (s->state == SUP_FOLLOWER && row != NULL && row->db_now_ms > 0)
            report_holder(s, row);
        break;
    case EV_DEADLINE:
        if (s->state == SUP_HOLDER && s->running && now >= s->deadline) {
            stop_work(s, SQLEASE_STOP_DEADLINE, note);
            s->state = SUP_STALE;
            s->next_due = now;
        }
        break;
    case EV_RELEASED:
        if (s->state == SUP_STALE) {
            s->last_contact = now;
            s->state = SUP_FOLLOWER;
            s->next_due = now;
        }
        break;
    case EV_SHUTDOWN:
        if (s->running)
            stop_work(s, SQLEASE_STOP_SHUTDOWN, note);
        s->state = SUP_STOPPED;
        break;
    }
    if (s->state != was)
        note_set(note, SQLEASE_LOG_DEBUG, "%s -> %s", state_name(was), state_name(s->state));
    sqle_cond_broadcast(&s->e->change_cv);
    sqle_cond_signal(&s->e->run_cv);
}

/* A release attempted with less time than this left in a stop's budget
 * could not plausibly get an answer: it is not sent. */
#define STOP_MIN_RELEASE_MS 20

static void destroy(sqlease_supervisor *s)
{
    sup_cb *cb;

    while ((cb = s->cbq_head) != NULL) {
        s->cbq_head = cb->next;
        free(cb->data);
        free(cb);
    }
    sqlease_lease_free(s->lease);
    sqle_mutex_destroy(&s->stop_lock);
    free(s);
}

/* Take s off its engine and let go of the engine (the last supervisor of
 * a db stops the engine's threads), then free it. */
static void retire(sqlease_supervisor *s)
{
    sqle_engine_remove(s->e, s);
    sqle_engine_release(s->e);
    destroy(s);
}

int sqlease_supervisor_start(sqlease_supervisor **out, sqlease_db *db,
                             const sqlease_options *opt_in, sqlease_error *err)
{
    sqlease_options full;
    const sqlease_options *opt = &full;
    sqlease_supervisor *s;
    sqle_engine *e;
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
    s->state = SUP_NEW;
    s->last_contact = -1;
    s->started_at = sqle_mono_ms();
    if (sqle_mutex_init(&s->stop_lock) != 0) {
        sqlease_lease_free(s->lease);
        free(s);
        return sqle_fail(err, SQLEASE_EPLATFORM, "cannot create a mutex");
    }
    rc = sqle_engine_acquire(db, &e, err);
    if (rc != SQLEASE_OK) {
        sqlease_lease_free(s->lease);
        sqle_mutex_destroy(&s->stop_lock);
        free(s);
        return rc;
    }
    s->e = e;
    /* The caller's thread runs this supervisor's first callbacks (in_cb),
     * so that a lone instance has its work running by the time start
     * returns; the runner leaves a SUP_NEW supervisor alone. */
    s->in_cb = 1;
    sqle_engine_add(e, s);

    rc = sqle_engine_tick_one(e, s, err);
    if (rc == SQLEASE_ENOROW || rc == SQLEASE_ENOTABLE || rc == SQLEASE_EROWCOUNT) {
        /* A broken installation: nothing will ever start, say so now.
         * These answers took nothing, so there is nothing to release. */
        sqle_engine_lock(e);
        sqle_sup_step(s, EV_SHUTDOWN, 0, 0, NULL, NULL);
        s->in_cb = 0;
        sqle_engine_unlock(e);
        retire(s);
        return rc;
    }
    sqle_err_clear(err);
    sqle_engine_lock(e);
    s->in_cb = 0;
    sqle_engine_run_cbs(e, s);
    sqle_cond_signal(&e->run_cv);
    sqle_engine_unlock(e);
    *out = s;
    return SQLEASE_OK;
}

/* Whether the calling thread is inside one of s's callbacks (e->m held). */
static int in_own_callback(const sqlease_supervisor *s)
{
    return s->cb_thread != 0 && s->cb_thread == sqle_thread_self();
}

static int stop_locked(sqlease_supervisor *s, sqlease_error *err);

/* Two threads may stop one supervisor at once; the second waits for the
 * first and gets its answer, so the lease is released exactly once. */
int sqlease_supervisor_stop(sqlease_supervisor *s, sqlease_error *err)
{
    int rc, inside;

    sqle_err_clear(err);
    if (s == NULL)
        return SQLEASE_OK;
    sqle_engine_lock(s->e);
    inside = in_own_callback(s);
    sqle_engine_unlock(s->e);
    if (inside)
        return sqle_fail(err, SQLEASE_ESTATE,
                         "sqlease_supervisor_stop called from the supervisor's own callback");
    sqle_mutex_lock(&s->stop_lock);
    rc = stop_locked(s, err);
    sqle_mutex_unlock(&s->stop_lock);
    return rc;
}

/*
 * The whole of a stop fits in one budget, query timeout + DB_SLACK_MS from
 * the call: the work is stopped first (on_stopped runs on this thread
 * unless another thread is inside one of this supervisor's callbacks,
 * which it then finishes first); a statement the runner has in flight
 * for it answers (or is abandoned) by its own deadline, which was set
 * before the stop began and so falls inside the budget; the release gets
 * what is left of it.  A database that does not answer in that time costs
 * the successor the rest of the ttl, never the caller more time.
 */
static int stop_locked(sqlease_supervisor *s, sqlease_error *err)
{
    int64_t budget_end = sqle_mono_ms() + s->db->query_timeout_ms + DB_SLACK_MS;
    sqle_engine *e = s->e;
    sup_note note = {0};
    int released = 0;
    int rc;

    sqle_engine_lock(e);
    if (s->stopped) {
        rc = s->stop_rc;
        sqle_engine_unlock(e);
        return rc;
    }
    sqle_sup_step(s, EV_SHUTDOWN, 0, 0, NULL, &note);
    /* No new start can happen in SUP_STOPPED, so the work is stopped now,
     * before waiting for a statement that may be in flight. */
    while (!sqle_engine_run_cbs(e, s) && (s->in_cb || s->cbq_head != NULL))
        sqle_engine_wait(e, &e->change_cv, -1);
    while (s->busy && sqle_mono_ms() < budget_end)
        sqle_engine_wait(e, &e->change_cv, budget_end);
    if (s->busy) {
        sqle_engine_unlock(e);
        sqle_sup_note(s, &note);
        sqle_sup_log(s, SQLEASE_LOG_WARN, "a lease statement is still in flight; not releasing "
                     "(the lease expires by itself within the ttl)");
        return sqle_fail(err, SQLEASE_ETIMEOUT,
                         "lease '%s': a statement is still in flight after the query "
                         "timeout; the work is stopped but the lease was not released "
                         "(it expires by itself within the ttl)", s->r.name);
    }
    sqle_engine_unlock(e);
    sqle_sup_note(s, &note);
    /* Not busy and SUP_STOPPED: the runner will not touch the lease again,
     * so this thread may use it. */
    if (budget_end - sqle_mono_ms() < STOP_MIN_RELEASE_MS) {
        rc = sqle_fail(err, SQLEASE_ETIMEOUT,
                       "lease '%s': no time left to release after the statement in flight; "
                       "the work is stopped and the lease expires by itself within the ttl",
                       s->r.name);
        sqle_sup_log(s, SQLEASE_LOG_WARN, "%s",
                     err != NULL ? err->message : "no time left to release");
        return rc;
    }
    rc = sqle_lease_release_by(s->lease, budget_end, &released, err);
    if (rc == SQLEASE_OK && released && sqle_lease_min_hold(s->lease) > 0)
        sqle_sup_log(s, SQLEASE_LOG_INFO, "released the lease; the row stays held until %lld "
                     "ms after the take (minimum hold), if that is still ahead",
                     (long long)sqle_lease_min_hold(s->lease));
    else if (rc == SQLEASE_OK)
        sqle_sup_log(s, SQLEASE_LOG_INFO,
                     released ? "released the lease" : "stopped (lease not held)");
    else
        sqle_sup_log(s, SQLEASE_LOG_WARN, "release failed (%s); the lease expires by itself",
                     sqlease_strerror(rc));
    sqle_engine_lock(e);
    if (rc != SQLEASE_ETIMEOUT) {
        s->stopped = 1;
        s->stop_rc = rc;
    }
    sqle_engine_unlock(e);
    return rc;
}

void sqlease_supervisor_free(sqlease_supervisor *s)
{
    int inside;

    if (s == NULL)
        return;
    sqle_engine_lock(s->e);
    inside = in_own_callback(s);
    sqle_engine_unlock(s->e);
    if (inside) {
        sqle_sup_log(s, SQLEASE_LOG_ERROR,
                     "sqlease_supervisor_free called from the supervisor's own callback; "
                     "ignored");
        return;
    }
    if (sqlease_supervisor_stop(s, NULL) == SQLEASE_ETIMEOUT) {
        /* Freeing means the memory must go: wait for the statement. */
        sqle_engine_lock(s->e);
        while (s->busy)
            sqle_engine_wait(s->e, &s->e->change_cv, -1);
        sqle_engine_unlock(s->e);
        sqlease_supervisor_stop(s, NULL);
    }
    retire(s);
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
    sqle_engine_lock(s->e);
    st->holding = s->running;
    st->token = s->token;
    st->deadline_in_ms = s->running && s->deadline > now ? s->deadline - now : 0;
    st->last_contact_ago_ms = s->last_contact < 0 ? -1 : now - s->last_contact;
    st->acquires = s->acquires;
    st->takes = s->takes;
    st->renew_failures = s->renew_failures;
    st->losses = s->losses;
    sqle_engine_unlock(s->e);
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
    sqle_engine_lock(s->e);
    since = s->last_contact >= 0 ? s->last_contact : s->started_at;
    if (s->stopped || s->state == SUP_STOPPED)
        rc = sqle_fail(err, SQLEASE_ESTATE, "supervisor is stopped");
    else if (s->running && now >= s->deadline)
        rc = sqle_fail(err, SQLEASE_ESTATE, "holder is %lld ms past its renew deadline",
                       (long long)(now - s->deadline));
    else if (!s->running && now - since >= s->r.ttl_ms)
        rc = sqle_fail(err, SQLEASE_ESTATE, "the database has not answered for %lld ms",
                       (long long)(now - since));
    sqle_engine_unlock(s->e);
    return rc;
}

/*
 * Wait for the work to be up, bounded by the caller's timeout alone: the
 * runner does the acquiring, so nothing here waits on the database.  A
 * stop wakes every waiter.
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
    sqle_engine_lock(s->e);
    if (in_own_callback(s)) {
        sqle_engine_unlock(s->e);
        return sqle_fail(err, SQLEASE_ESTATE,
                         "sqlease_supervisor_await called from the supervisor's own "
                         "callback");
    }
    while (!s->work_up && s->state != SUP_STOPPED && sqle_mono_ms() < until)
        sqle_engine_wait(s->e, &s->e->change_cv, until);
    if (s->state == SUP_STOPPED)
        rc = sqle_fail(err, SQLEASE_ESTATE, "lease '%s': the supervisor is stopped",
                       s->r.name);
    else if (s->work_up)
        rc = SQLEASE_OK;
    else
        rc = sqle_fail(err, SQLEASE_NOT_HELD, "lease '%s' not held after waiting %lld ms",
                       s->r.name, (long long)timeout_ms);
    sqle_engine_unlock(s->e);
    return rc;
}

int sqlease_supervisor_fence(sqlease_supervisor *s, sqlease_fence *f, sqlease_error *err)
{
    int64_t token;
    int running;

    sqle_err_clear(err);
    if (s == NULL || f == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_supervisor_fence: NULL argument");
    sqle_engine_lock(s->e);
    running = s->running;
    token = s->token;
    sqle_engine_unlock(s->e);
    if (!running)
        return sqle_fail(err, SQLEASE_NOT_HELD, "lease '%s': the work is not running "
                         "(not holding the lease)", s->r.name);
    /* The lease's strings and statements do not change after start, so
     * they are read without the lock. */
    return sqle_lease_fence(s->lease, token, f, err);
}
