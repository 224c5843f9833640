/*
 * supervisor.c -- keep the caller's work running exactly while the lease
 * is held: the public calls (start, stop, free, state, health, await,
 * fence).  The state machine they drive, and what it tells the engine
 * whose threads do the sending, the watching and the calling, is
 * sup_machine.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "engine.h"
#include "internal.h"
#include "lease.h"
#include "options.h"
#include "platform.h"
#include "supervisor.h"

/* A release attempted with less time than this left in a stop's budget
 * could not plausibly get an answer: it is not sent. */
#define STOP_MIN_RELEASE_MS 20

/* Free callbacks never delivered (the engine's queue hands them back). */
static void free_cbs(sqle_engine_cb *link)
{
    while (link != NULL) {
        sup_cb *cb = (sup_cb *)(void *)link;

        link = link->next;
        free(cb->data);
        free(cb);
    }
}

static void destroy(sqlease_supervisor *s)
{
    sqlease_lease_free(s->lease);
    sqle_mutex_destroy(&s->stop_lock);
    free(s);
}

/* Take s off its engine and let go of the engine (the last supervisor of
 * a db stops the engine's threads), then free it. */
static void retire(sqlease_supervisor *s)
{
    free_cbs(sqle_engine_remove(s->e, &s->node));
    sqle_engine_release(s->e);
    destroy(s);
}

/*
 * Everything of a start but its first acquire: the supervisor, its lease
 * and its node on the db's engine, in SUP_NEW (which the runner leaves
 * alone), its first callbacks held for the caller's thread.
 */
static int sup_create(sqlease_supervisor **out, sqlease_db *db, const sqlease_options *opt_in,
                      sqlease_error *err)
{
    sqlease_options full;
    const sqlease_options *opt = &full;
    sqlease_supervisor *s;
    sqle_engine *e;
    int rc;

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
    /* A supervisor waits, so it can watch (lease_impl.h), unless its
     * caller cannot wait a ttl. */
    sqle_lease_set_watch(s->lease, !s->r.take_by_expiry);
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
    s->node.ops = &sqle_sup_engine_ops;
    s->node.lease = s->lease;
    /* The caller's thread runs this supervisor's first callbacks (held
     * until then), so that a lone instance has its work running by the
     * time start returns; the runner leaves a SUP_NEW supervisor alone,
     * and the first acquire is sent by the caller. */
    sqle_engine_add(e, &s->node, 1);
    *out = s;
    return SQLEASE_OK;
}

/* Whether a first acquire's answer says the installation is broken:
 * nothing will ever start. */
static int first_fatal(int rc)
{
    return rc == SQLEASE_ENOROW || rc == SQLEASE_ENOTABLE || rc == SQLEASE_EROWCOUNT;
}

/*
 * After the first acquire answered (rc): a broken installation retires
 * the supervisor (those answers took nothing, so there is nothing to
 * release) and returns rc; else its first callbacks run on this thread
 * and the runner takes it over.
 */
static int sup_first_done(sqlease_supervisor *s, int rc)
{
    sqle_engine *e = s->e;

    if (first_fatal(rc)) {
        sqle_engine_lock(e);
        sqle_sup_step(s, EV_SHUTDOWN, 0, 0, NULL, NULL);
        sqle_engine_unlock(e);
        retire(s);
        return rc;
    }
    sqle_engine_lock(e);
    sqle_engine_run_held_cbs(e, &s->node);
    sqle_engine_kick(e);
    sqle_engine_unlock(e);
    return SQLEASE_OK;
}

int sqlease_supervisor_start(sqlease_supervisor **out, sqlease_db *db,
                             const sqlease_options *opt_in, sqlease_error *err)
{
    sqlease_supervisor *s;
    int rc;

    sqle_err_clear(err);
    if (out == NULL || db == NULL)
        return sqle_fail(err, SQLEASE_EINVAL,
                         "sqlease_supervisor_start: out and db must not be NULL");
    *out = NULL;
    rc = sup_create(&s, db, opt_in, err);
    if (rc != SQLEASE_OK)
        return rc;
    rc = sqle_engine_send(s->e, &s->node, SQLE_SEND_POLL, err);
    rc = sup_first_done(s, rc);
    if (rc != SQLEASE_OK)
        return rc;
    sqle_err_clear(err);
    *out = s;
    return SQLEASE_OK;
}

/* Whether the calling thread is inside one of s's callbacks (e->m held). */
static int in_own_callback(const sqlease_supervisor *s)
{
    return s->cb_thread != 0 && s->cb_thread == sqle_thread_self();
}

static int stop_locked(sqlease_supervisor *s, sqlease_error *err);

void sqle_supervisor_release_at_once(sqlease_supervisor *s)
{
    if (s == NULL)
        return;
    sqle_engine_lock(s->e);
    s->release_at_once = 1;
    sqle_engine_unlock(s->e);
}

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
    int64_t min_hold;
    sqle_engine *e = s->e;
    sup_note note = {0};
    int released = 0, at_once;
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
    while (!sqle_engine_run_cbs(e, &s->node) && sqle_engine_cbs_pending(&s->node))
        sqle_engine_wait_change(e, -1);
    while (sqle_engine_busy(&s->node) && sqle_mono_ms() < budget_end)
        sqle_engine_wait_change(e, budget_end);
    if (sqle_engine_busy(&s->node)) {
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
    sqle_engine_lock(e);
    at_once = s->release_at_once;
    sqle_engine_unlock(e);
    min_hold = at_once ? 0 : sqle_lease_min_hold(s->lease);
    rc = sqle_lease_release_for(s->lease, budget_end, min_hold, &released, err);
    if (rc == SQLEASE_OK && released && at_once && sqle_lease_min_hold(s->lease) > 0)
        sqle_sup_log(s, SQLEASE_LOG_INFO, "released the lease at once: its work never ran, "
                     "so the minimum hold does not apply");
    else if (rc == SQLEASE_OK && released && min_hold > 0)
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
        while (sqle_engine_busy(&s->node))
            sqle_engine_wait_change(s->e, -1);
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
        sqle_engine_wait_change(s->e, until);
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
