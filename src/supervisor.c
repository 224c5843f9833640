/*
 * supervisor.c -- keep the caller's work running exactly while the lease
 * is held: the public calls (start, stop, free, state, health, await,
 * fence).  The state machine they drive, and what it tells the engine
 * whose threads do the sending, the watching and the calling, is
 * sup_machine.c.
 */
#include <stdarg.h>
#include <stdint.h>
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
    snprintf(s->fire_table, sizeof s->fire_table, "%s", s->r.fire_table);
    if (s->r.host != NULL)
        snprintf(s->host, sizeof s->host, "%s", s->r.host);
    else
        sqle_hostname(s->host, sizeof s->host);
    s->r.fire_table = s->fire_table;
    s->r.host = s->host;
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
    s->priority = s->r.priority;
    s->requested_token = -1;
    s->fast_token = -1;
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
        /* The answer made it a follower, which the runner may have
         * gathered since: start_each sends the other leases' statements
         * and runs earlier supervisors' first callbacks before it gets
         * here.  SUP_STOPPED keeps it from being gathered again; a poll
         * in flight still uses its lease, so wait for it before freeing. */
        while (sqle_engine_busy(&s->node))
            sqle_engine_wait_change(e, -1);
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

/* ---- the ready row (sqlease_options.handoff) --------------------------- */

/*
 * A ready follower says so in the table: a lease of its own in the same
 * table (sqle_ready_prefix + 16 hex digits, data "priority=N"), held by a
 * supervisor of its own with the same owner id, table and timing, so
 * that its renews go in the same batch as the lease's.  It lives as long
 * as the supervisor, holder or follower (a holder that hands over is a
 * ready follower again at once, with no statement), and its stop releases
 * it, free for the next start to take.  Its first take seeds the row when
 * there is none (sqle_lease_set_seed_missing): made like a group's
 * presence row, and again by the runner if the database was away.  Its
 * lines go to the supervisor's log at warn level and below: the ready
 * row's holding is no news.
 */
static int ready_create(sqlease_supervisor **out, sqlease_supervisor *s, const char *name,
                        const char *data, sqlease_error *err)
{
    sqlease_options o;
    sqlease_supervisor *r;
    int rc;

    sqlease_options_init(&o);
    o.table = sqle_lease_table(s->lease);
    o.name = name;
    o.owner = s->r.owner;
    o.ttl_ms = s->r.ttl_ms;
    o.heartbeat_ms = s->r.heartbeat_ms;
    o.renew_deadline_ms = s->r.renew_deadline_ms;
    o.retry_ms = s->r.retry_ms;
    o.data = data;
    o.priority = s->priority;
    /* A ready row's holds are no holds of the job: the holder history
     * (and `sqlease history`) lists the lease's alone. */
    o.history = SQLEASE_HISTORY_OFF;
    o.log = s->log;
    o.log_userdata = s->log_userdata;
    o.log_level = s->log_level;
    *out = NULL;
    rc = sup_create(&r, s->db, &o, err);
    if (rc != SQLEASE_OK)
        return rc;
    if (r->log_level > SQLEASE_LOG_WARN)
        r->log_level = SQLEASE_LOG_WARN;
    sqle_lease_set_seed_missing(r->lease, 1);
    rc = sqle_engine_send(r->e, &r->node, SQLE_SEND_POLL, err);
    rc = sup_first_done(r, rc);
    if (rc != SQLEASE_OK)
        return rc;
    *out = r;
    return SQLEASE_OK;
}

/* Start s's ready row (stop_lock held, or s not yet returned to its
 * caller): a free one a stopped follower left, else a new name; a free
 * one that another start took first is left for a new one.  A failure is
 * logged: the supervisor runs on, not listed as ready. */
static int ready_start(sqlease_supervisor *s, sqlease_error *err)
{
    /* A prefix leaves room for the 16 hex digits (sqle_ready_prefix);
     * the name's own check is the options'. */
    char prefix[SQLEASE_MAX_NAME + 1], name[SQLEASE_MAX_NAME + 24], data[48];
    unsigned char u[16];
    sqlease_supervisor *r = NULL;
    sqlease_error e1;
    int found = 0, attempt, rc = SQLEASE_OK;
    int64_t priority;

    sqle_engine_lock(s->e);
    priority = s->priority;
    sqle_engine_unlock(s->e);
    snprintf(data, sizeof data, "priority=%lld", (long long)priority);
    sqle_ready_prefix(s->r.name, prefix, sizeof prefix);
    if (sqle_uuid_random(u) != 0)
        return sqle_fail(err, SQLEASE_EPLATFORM, "no random bytes for a ready row's name");
    (void)sqle_lease_ready_free(s->lease, 0, (unsigned)u[8] << 8 | u[9], name, sizeof name, &found,
                                &e1);
    for (attempt = 0; attempt < 2; attempt++) {
        if (!found)
            snprintf(name, sizeof name, "%s%02x%02x%02x%02x%02x%02x%02x%02x", prefix, u[0], u[1],
                     u[2], u[3], u[4], u[5], u[6], u[7]);
        rc = ready_create(&r, s, name, data, err);
        if (rc != SQLEASE_OK || !found)
            break;
        {
            sqlease_state st;
            if (sqlease_supervisor_state(r, &st) == SQLEASE_OK && st.holding)
                break;
        }
        sqlease_supervisor_free(r);
        r = NULL;
        found = 0;
    }
    if (rc != SQLEASE_OK) {
        sqle_sup_log(s, SQLEASE_LOG_WARN, "could not start this instance's ready row %s (%s): "
                     "it is not listed as a ready follower", name, err != NULL ? err->message
                     : sqlease_strerror(rc));
        return rc;
    }
    sqle_engine_lock(s->e);
    s->ready = r;
    sqle_sup_ready_up(s);
    sqle_engine_unlock(s->e);
    return SQLEASE_OK;
}

static int stop_locked_by(sqlease_supervisor *s, int64_t budget_end, sqlease_error *err);

/* Stop s's ready row (s's stop_lock held) within what is left of s's
 * stop, `budget_end`: released, free for the next start, and freed; one
 * whose release found no time is left for sqlease_supervisor_free (it
 * expires by itself meanwhile). */
static void ready_stop(sqlease_supervisor *s, int64_t budget_end)
{
    sqlease_supervisor *r;
    int rc;

    sqle_engine_lock(s->e);
    r = s->ready;
    s->ready_up = 0;
    sqle_engine_unlock(s->e);
    if (r == NULL)
        return;
    sqle_mutex_lock(&r->stop_lock);
    rc = stop_locked_by(r, budget_end, NULL);
    sqle_mutex_unlock(&r->stop_lock);
    if (rc == SQLEASE_ETIMEOUT)
        return;
    sqle_engine_lock(s->e);
    s->ready = NULL;
    sqle_engine_unlock(s->e);
    sqlease_supervisor_free(r);
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
    if (s->r.handoff) {
        sqlease_error e1;
        (void)ready_start(s, &e1);
    }
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
 * The first part of a stop (stop_lock held): the work is stopped first
 * (on_stopped runs on this thread unless another thread is inside one of
 * s's callbacks, which it then finishes first), then a statement the
 * runner has in flight for s answers (or is abandoned) by its own
 * deadline, which was set before the stop began and so falls before
 * budget_end.  Returns 1 when s's lease may be released now (on_stopped
 * has returned, nothing is in flight, and the runner will not touch the
 * lease again), else 0 with *rc the stop's answer (err filled).
 */
static int stop_work(sqlease_supervisor *s, int64_t budget_end, int *rc, sqlease_error *err)
{
    sqle_engine *e = s->e;
    sup_note note = {0};

    sqle_engine_lock(e);
    if (s->stopped) {
        *rc = s->stop_rc;
        sqle_engine_unlock(e);
        return 0;
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
        *rc = sqle_fail(err, SQLEASE_ETIMEOUT,
                        "lease '%s': a statement is still in flight after the query "
                        "timeout; the work is stopped but the lease was not released "
                        "(it expires by itself within the ttl)", s->r.name);
        return 0;
    }
    sqle_engine_unlock(e);
    sqle_sup_note(s, &note);
    /* Not busy and SUP_STOPPED: the runner will not touch the lease again,
     * so this thread may use it. */
    if (budget_end - sqle_mono_ms() < STOP_MIN_RELEASE_MS) {
        *rc = sqle_fail(err, SQLEASE_ETIMEOUT,
                        "lease '%s': no time left to release after the statement in flight; "
                        "the work is stopped and the lease expires by itself within the ttl",
                        s->r.name);
        sqle_sup_log(s, SQLEASE_LOG_WARN, "%s",
                     err != NULL ? err->message : "no time left to release");
        return 0;
    }
    return 1;
}

/* The minimum hold the stop's release keeps (0 when the work never ran:
 * release_at_once), and whether that was why. */
static int64_t stop_min_hold(sqlease_supervisor *s, int *at_once)
{
    sqle_engine_lock(s->e);
    *at_once = s->release_at_once;
    sqle_engine_unlock(s->e);
    return *at_once ? 0 : sqle_lease_min_hold(s->lease);
}

/* The release answered (rc, released): say so, and remember the stop's
 * answer unless it timed out (a later stop tries the release again). */
static void stop_finish(sqlease_supervisor *s, int rc, int released, int64_t min_hold,
                        int at_once)
{
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
    sqle_engine_lock(s->e);
    if (rc != SQLEASE_ETIMEOUT) {
        s->stopped = 1;
        s->stop_rc = rc;
    }
    sqle_engine_unlock(s->e);
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
static int handoff_now(sqlease_supervisor *s, const char *to, int lead, int64_t deadline,
                       sqlease_error *err);

/*
 * A stop whose hold is to be handed over (stop_lock held, the work
 * stopped, nothing in flight): a hand-over owed (asked for, and not sent
 * by the runner before the stop) is sent instead of the release; one the
 * runner sent already leaves nothing to release.  Returns 1 when it
 * answered (*rc), 0 when the release is to be sent as usual.
 */
static int stop_handoff(sqlease_supervisor *s, int64_t budget_end, int *rc, sqlease_error *err)
{
    char target[SQLEASE_MAX_OWNER + 1], resolved[SQLEASE_MAX_OWNER + 1], who[SQLE_QUOTED_ID_MAX];
    int pending, handed, changed = 0;

    sqle_engine_lock(s->e);
    pending = s->handoff_pending;
    handed = s->handed;
    snprintf(target, sizeof target, "%s", s->handoff_to);
    sqle_engine_unlock(s->e);
    if (!pending && !handed)
        return 0;
    if (handed) {
        sqle_sup_log(s, SQLEASE_LOG_INFO, "stopped (the lease was handed over)");
        *rc = SQLEASE_OK;
    } else {
        *rc = sqle_lease_handoff(s->lease, target, s->r.handoff_reserve_ms, budget_end, resolved,
                                 sizeof resolved, &changed, err);
        sqle_engine_lock(s->e);
        if (*rc == SQLEASE_OK)
            sqle_sup_step(s, EV_HANDED, sqle_mono_ms(),
                          !changed ? HANDED_GONE
                          : resolved[0] != '\0' ? HANDED_TO_TARGET : HANDED_RELEASED,
                          NULL, NULL);
        sqle_engine_unlock(s->e);
        if (*rc != SQLEASE_OK)
            sqle_sup_log(s, SQLEASE_LOG_WARN, "hand-over failed (%s); the lease expires by itself",
                         sqlease_strerror(*rc));
        else if (changed && resolved[0] != '\0')
            sqle_sup_log(s, SQLEASE_LOG_INFO, "handed the lease over to %s (reserved for %lld ms)",
                         sqle_quote_id(resolved, who, sizeof who),
                         (long long)s->r.handoff_reserve_ms);
        else if (changed)
            sqle_sup_log(s, SQLEASE_LOG_INFO, "released the lease: no ready follower to hand it "
                         "over to");
        else
            sqle_sup_log(s, SQLEASE_LOG_INFO, "stopped (lease not held)");
    }
    sqle_engine_lock(s->e);
    if (*rc != SQLEASE_ETIMEOUT) {
        s->stopped = 1;
        s->stop_rc = *rc;
    }
    sqle_engine_unlock(s->e);
    return 1;
}

static int stop_locked(sqlease_supervisor *s, sqlease_error *err)
{
    return stop_locked_by(s, sqle_mono_ms() + s->db->query_timeout_ms + DB_SLACK_MS, err);
}

static int stop_locked_by(sqlease_supervisor *s, int64_t budget_end, sqlease_error *err)
{
    char to[SQLEASE_MAX_OWNER + 1] = "";
    int64_t min_hold;
    int released = 0, at_once, holding;
    int rc;

    /* With hand-over on, a hold whose work runs goes to the best ready
     * follower: asked for first (so that it polls fast while the work
     * stops), then handed over below in place of the release; and so does
     * one asked for (sqlease_supervisor_handoff) whose lead still runs,
     * to its target, at once.  With none ready, or a database that does
     * not answer, the stop goes on as usual. */
    sqle_engine_lock(s->e);
    holding = (s->r.handoff || s->handoff_at != 0) && !s->stopped && s->state == SUP_HOLDER &&
              s->running && !s->handoff_pending;
    if (s->handoff_at != 0)
        snprintf(to, sizeof to, "%s", s->handoff_to);
    sqle_engine_unlock(s->e);
    if (holding) {
        sqlease_error e1;
        (void)handoff_now(s, to[0] != '\0' ? to : NULL, 0, budget_end, &e1);
    }
    if (!stop_work(s, budget_end, &rc, err)) {
        ready_stop(s, budget_end);
        return rc;
    }
    if (!stop_handoff(s, budget_end, &rc, err)) {
        min_hold = stop_min_hold(s, &at_once);
        rc = sqle_lease_release_for(s->lease, budget_end, min_hold, &released, err);
        stop_finish(s, rc, released, min_hold, at_once);
    }
    /* Its ready row last: a hand-over to "the best" reads the others'. */
    ready_stop(s, budget_end);
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
    /* A ready row whose stop found no time: freed now (its free waits for
     * its statement and tries the release once more). */
    sqlease_supervisor_free(s->ready);
    s->ready = NULL;
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
    st->fire_at_ms = s->fire_at;
    st->deadline_in_ms = s->running && s->deadline > now ? s->deadline - now : 0;
    st->last_contact_ago_ms = s->last_contact < 0 ? -1 : now - s->last_contact;
    st->acquires = s->acquires;
    st->takes = s->takes;
    st->renew_failures = s->renew_failures;
    st->losses = s->losses;
    st->handoffs = s->handoffs;
    st->priority = s->priority;
    st->ready = s->ready_up;
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

/* ---- handing the lease over ------------------------------------------ */

/*
 * Hand the hold whose work runs over to `to` (NULL or "*": the best ready
 * follower but this one, read first), by `deadline` (stop_lock held).
 * The request goes into its own row first: the target, which reads the
 * row every retry, then reads it every SQLE_HANDOFF_POLL_MS until the row
 * is reserved for it, and no renew of this hold succeeds after it.  With
 * `lead` the work goes on for a retry and a fast read first
 * (sqle_sup_lead: sending no renew, within its deadline), so that the
 * target has seen the request by the time the work stops and takes the
 * row within a fast read of its reservation: the time nothing runs is
 * then that read, not a retry.  A stop passes no lead.  Then the
 * machine stops the work and owes the hand-over (SUP_HANDOFF), which the
 * runner sends once on_stopped has returned (or a stop, in place of its
 * release).  The statements use only what is fixed in the lease
 * (sqle_lease_ready_read), so the runner may be sending its own
 * meanwhile.
 */
static int handoff_now(sqlease_supervisor *s, const char *to, int lead, int64_t deadline,
                       sqlease_error *err)
{
    char target[SQLEASE_MAX_OWNER + 1];
    sqlease_lease_info req;
    sup_note note = {0};
    int64_t token;
    int holding, found = 0, done = 0, rc;

    sqle_engine_lock(s->e);
    holding = s->state == SUP_HOLDER && s->running;
    token = s->token;
    sqle_engine_unlock(s->e);
    if (!holding)
        return sqle_fail(err, SQLEASE_NOT_HELD, "lease '%s': the work is not running (not "
                         "holding the lease)", s->r.name);
    if (to == NULL || strcmp(to, "*") == 0) {
        rc = sqle_lease_ready_best(s->lease, s->r.owner, deadline, target, sizeof target, &found,
                                   err);
        if (rc != SQLEASE_OK)
            return rc;
        if (!found)
            return sqle_fail(err, SQLEASE_NO_FOLLOWER, "lease '%s': no ready follower to hand "
                             "it over to", s->r.name);
    } else {
        if (to[0] == '\0' ||
            sqle_check_text("hand-over target", to, SQLEASE_MAX_OWNER, 1, err) != SQLEASE_OK)
            return sqle_fail(err, SQLEASE_EINVAL, "lease '%s': hand-over target '%.255s' is "
                             "not an owner id", s->r.name, to);
        snprintf(target, sizeof target, "%s", to);
    }
    /* A request that finds one there already (an operator's, a
     * follower's) changes nothing: the hand-over below names its own
     * target, and a hold that is gone shows at the next renew. */
    rc = sqle_lease_request(s->lease, s->r.owner, token, target, 0, deadline, &done, err);
    if (rc != SQLEASE_OK)
        return rc;
    memset(&req, 0, sizeof req);
    snprintf(req.handoff_to, sizeof req.handoff_to, "%s", target);
    sqle_engine_lock(s->e);
    if (s->state == SUP_HOLDER && s->running && s->token == token) {
        int64_t now = sqle_mono_ms();
        /* The watchdog stops the work at the lead's end. */
        if (lead && sqle_sup_lead(s, target, now))
            sqle_engine_changed(s->e);
        else
            sqle_sup_step(s, EV_HANDOFF, now, 0, &req, &note);
    }
    holding = (s->state == SUP_HANDOFF || (s->state == SUP_HOLDER && s->handoff_at != 0)) &&
              s->token == token;
    sqle_engine_unlock(s->e);
    sqle_sup_note(s, &note);
    if (!holding)
        return sqle_fail(err, SQLEASE_NOT_HELD, "lease '%s': the hold ended before it could be "
                         "handed over", s->r.name);
    sqle_err_clear(err);
    return SQLEASE_OK;
}

int sqlease_supervisor_handoff(sqlease_supervisor *s, const char *to, sqlease_error *err)
{
    int rc, inside;

    sqle_err_clear(err);
    if (s == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_supervisor_handoff: NULL supervisor");
    sqle_engine_lock(s->e);
    inside = in_own_callback(s);
    sqle_engine_unlock(s->e);
    if (inside)
        return sqle_fail(err, SQLEASE_ESTATE, "sqlease_supervisor_handoff called from the "
                         "supervisor's own callback");
    sqle_mutex_lock(&s->stop_lock);
    /* With a lead: the target has read the request by the time the work
     * stops. */
    rc = handoff_now(s, to, 1, 0, err);
    sqle_mutex_unlock(&s->stop_lock);
    return rc;
}

int sqlease_supervisor_set_priority(sqlease_supervisor *s, int64_t priority,
                                    sqlease_error *err)
{
    int rc = SQLEASE_OK, inside, stopped, had_ready;

    sqle_err_clear(err);
    if (s == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_supervisor_set_priority: NULL "
                         "supervisor");
    if (priority < SQLEASE_PRIORITY_MIN || priority > SQLEASE_PRIORITY_MAX)
        return sqle_fail(err, SQLEASE_EINVAL, "priority %lld is not within %lld..%lld",
                         (long long)priority, (long long)SQLEASE_PRIORITY_MIN,
                         (long long)SQLEASE_PRIORITY_MAX);
    sqle_engine_lock(s->e);
    inside = in_own_callback(s);
    sqle_engine_unlock(s->e);
    if (inside)
        return sqle_fail(err, SQLEASE_ESTATE, "sqlease_supervisor_set_priority called from the "
                         "supervisor's own callback");
    sqle_mutex_lock(&s->stop_lock);
    sqle_engine_lock(s->e);
    stopped = s->stopped || s->state == SUP_STOPPED;
    if (!stopped)
        s->priority = priority;
    had_ready = s->ready != NULL;
    sqle_engine_unlock(s->e);
    if (stopped) {
        sqle_mutex_unlock(&s->stop_lock);
        return sqle_fail(err, SQLEASE_ESTATE, "lease '%s': the supervisor is stopped",
                         s->r.name);
    }
    sqle_lease_set_priority(s->lease, priority);
    /* The ready row publishes it: given up and taken again with it. */
    if (had_ready || s->r.handoff) {
        ready_stop(s, sqle_mono_ms() + s->db->query_timeout_ms + DB_SLACK_MS);
        rc = ready_start(s, err);
    }
    sqle_mutex_unlock(&s->stop_lock);
    if (rc == SQLEASE_OK) {
        sqle_err_clear(err);
        sqle_sup_log(s, SQLEASE_LOG_INFO, "priority now %lld", (long long)priority);
    }
    return rc;
}

/* ---- many supervisors at once ---------------------------------------- */

/* Supervisors whose first takes can share one statement: one table, ttl,
 * owner and data (what take_each binds once). */
static int by_take_group(const void *a, const void *b)
{
    return sqle_lease_cmp_take((*(sqlease_supervisor *const *)a)->lease,
                               (*(sqlease_supervisor *const *)b)->lease);
}

/* Hand s its first answer, as the engine would (e->m not held). */
static void first_answer(sqlease_supervisor *s, const sqle_answer *a)
{
    s->node.ops->answer(&s->node, a);
}

/*
 * The first acquire of a group of new supervisors (one table, ttl, owner,
 * data): one read of their rows (status_each), then one take of the rows
 * it found free or whose watch has run (a seeded start), each bound to
 * the version read (take_each), each lease answered on its own.  A lease
 * whose row some owner has goes through what the runner does with a
 * follower's read (the watch begins, or the take by expiry for one that
 * does not watch); a lease whose take lost, or whose read failed, sends
 * the single statements of a lone start (sqle_engine_send).  rcs[i] gets
 * each one's first answer.
 */
static void first_group(sqlease_supervisor **v, size_t n, int *rcs)
{
    sqle_each *each = calloc(n, sizeof *each);
    sqle_each *take_rows = calloc(n, sizeof *take_rows);
    size_t *which = calloc(n, sizeof *which);
    int *answered = calloc(n, sizeof *answered);
    int *tried = calloc(n, sizeof *tried);
    sqlease_error err, terr;
    sqle_answer a;
    int64_t sent;
    size_t i, nf = 0;

    if (each == NULL || take_rows == NULL || which == NULL || answered == NULL ||
        tried == NULL) {
        free(each);
        free(take_rows);
        free(which);
        free(answered);
        free(tried);
        for (i = 0; i < n; i++)
            rcs[i] = sqle_engine_send(v[i]->e, &v[i]->node, SQLE_SEND_POLL, NULL);
        return;
    }
    for (i = 0; i < n; i++)
        each[i].lease = v[i]->lease;
    sent = sqle_mono_ms();
    (void)sqle_lease_status_each(each, n, 0, &err);
    for (i = 0; i < n; i++) {
        /* A free row, or one whose watch has run (a group's read began
         * it, sqle_supervisor_start_seeded): bound to its version. */
        if (each[i].rc == SQLEASE_OK &&
            (each[i].info.owner[0] == '\0' ||
             (sqle_lease_wants_take(v[i]->lease, &each[i].info) &&
              sqle_lease_take_bound(v[i]->lease, &each[i].info)))) {
            take_rows[nf] = each[i];
            which[nf++] = i;
            tried[i] = 1;
        }
    }
    if (nf > 0) {
        int64_t took_sent = sqle_mono_ms();
        (void)sqle_lease_take_each(take_rows, nf, 0, &terr);
        for (i = 0; i < nf; i++) {
            if (take_rows[i].rc != SQLEASE_OK || !take_rows[i].hit)
                continue; /* lost, or failed: the single statements below */
            memset(&a, 0, sizeof a);
            a.kind = SQLE_ANS_TAKE;
            a.sent = took_sent;
            a.rc = SQLEASE_OK;
            a.taken = 1;
            a.token = take_rows[i].info.token;
            a.row = &each[which[i]].info;
            a.err = &terr;
            first_answer(v[which[i]], &a);
            rcs[which[i]] = SQLEASE_OK;
            answered[which[i]] = 1;
        }
    }
    for (i = 0; i < n; i++) {
        sqlease_supervisor *s = v[i];
        if (answered[i])
            continue;
        if (each[i].rc != SQLEASE_OK || tried[i]) {
            /* A failed read (a broken installation is told this way, as
             * a lone start tells it), or a row whose batched take lost. */
            rcs[i] = sqle_engine_send(s->e, &s->node, SQLE_SEND_POLL, NULL);
            continue;
        }
        memset(&a, 0, sizeof a);
        a.row = &each[i].info;
        if (sqle_lease_wants_take(s->lease, &each[i].info)) {
            sqlease_lease_info got;

            memset(&got, 0, sizeof got);
            a.kind = SQLE_ANS_TAKE;
            a.sent = sqle_mono_ms();
            sqle_err_clear(&terr);
            a.rc = sqle_lease_take_seen(s->lease, &each[i].info, 0, &got, &a.taken, &terr);
            a.token = got.token;
            a.err = &terr;
        } else {
            a.kind = SQLE_ANS_READ;
            a.sent = sent;
            a.rc = SQLEASE_OK;
            a.err = &err;
        }
        first_answer(s, &a);
        rcs[i] = a.rc;
    }
    free(each);
    free(take_rows);
    free(which);
    free(answered);
    free(tried);
}

int sqlease_supervisor_start_each(sqlease_supervisor **out, size_t n, sqlease_db *db,
                                  const sqlease_options *const *opts, int *rcs_out,
                                  sqlease_error *err_in)
{
    return sqle_supervisor_start_seeded(out, n, db, opts, NULL, rcs_out, err_in);
}

int sqle_supervisor_start_seeded(sqlease_supervisor **out, size_t n, sqlease_db *db,
                                 const sqlease_options *const *opts,
                                 const sqle_watch_seed *seeds, int *rcs_out,
                                 sqlease_error *err_in)
{
    sqlease_error local;
    sqlease_error *err = err_in != NULL ? err_in : &local;
    sqlease_supervisor **v = NULL;
    int *rcs = NULL, *first = NULL;
    size_t i, m = 0, g, h;
    int rc = SQLEASE_OK;

    sqle_err_clear(err);
    if (out == NULL || db == NULL || opts == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_supervisor_start_each: out, db and "
                         "opts must not be NULL");
    for (i = 0; i < n; i++)
        out[i] = NULL;
    if (n == 0)
        return SQLEASE_OK;
    v = malloc(n * sizeof *v);
    rcs = calloc(n, sizeof *rcs);
    first = calloc(n, sizeof *first);
    if (v == NULL || rcs == NULL || first == NULL) {
        free(v);
        free(rcs);
        free(first);
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    for (i = 0; i < n; i++) {
        sqlease_error e1;
        sqle_err_clear(&e1);
        rcs[i] = sup_create(&out[i], db, opts[i], &e1);
        if (rcs[i] != SQLEASE_OK && rc == SQLEASE_OK) {
            rc = rcs[i];
            *err = e1;
        }
        if (out[i] != NULL && seeds != NULL)
            sqle_lease_seed_watch(out[i]->lease, &seeds[i]);
        if (out[i] != NULL)
            v[m++] = out[i];
    }
    /* The first acquires, a group (one take statement's worth) at a time;
     * a group of one sends what a lone start sends. */
    qsort(v, m, sizeof *v, by_take_group);
    for (g = 0; g < m; g = h) {
        for (h = g + 1; h < m && by_take_group(&v[g], &v[h]) == 0; h++)
            ;
        if (h - g == 1)
            first[g] = sqle_engine_send(v[g]->e, &v[g]->node, SQLE_SEND_POLL, NULL);
        else
            first_group(v + g, h - g, first + g);
    }
    /* Each one's first callbacks (on_started of those that hold), on this
     * thread; a broken installation retires the supervisor. */
    for (g = 0; g < m; g++) {
        int r = sup_first_done(v[g], first[g]);
        if (r == SQLEASE_OK) {
            if (v[g]->r.handoff) {
                sqlease_error e1;
                (void)ready_start(v[g], &e1);
            }
            continue;
        }
        for (i = 0; i < n; i++) {
            if (out[i] == v[g]) {
                out[i] = NULL;
                rcs[i] = r;
                if (rc == SQLEASE_OK)
                    rc = sqle_fail(err, r, "sqlease_supervisor_start_each: lease %zu: the "
                                   "first acquire answered %s", i, sqlease_strerror(r));
            }
        }
    }
    if (rcs_out != NULL)
        memcpy(rcs_out, rcs, n * sizeof *rcs);
    free(v);
    free(rcs);
    free(first);
    return rc;
}

/* Stops in a fixed order of their locks, so that two threads stopping
 * sets that overlap cannot deadlock. */
static int by_address(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(sqlease_supervisor *const *)a;
    uintptr_t y = (uintptr_t)*(sqlease_supervisor *const *)b;

    return x < y ? -1 : x > y;
}

/* Releases sent together: one handle, one table and one minimum hold. */
typedef struct stop_item {
    sqlease_supervisor *s;
    size_t index;      /* in the caller's array */
    int64_t min_hold;
    int at_once;
} stop_item;

static int by_release_group(const void *a, const void *b)
{
    const stop_item *x = a, *y = b;
    uintptr_t dx = (uintptr_t)x->s->db, dy = (uintptr_t)y->s->db;
    int c = dx < dy ? -1 : dx > dy;

    if (c == 0)
        c = strcmp(sqle_lease_table(x->s->lease), sqle_lease_table(y->s->lease));
    return c != 0 ? c : x->min_hold < y->min_hold ? -1 : x->min_hold > y->min_hold;
}

int sqlease_supervisor_stop_each(sqlease_supervisor **sups, size_t n, int *rcs_out,
                                 sqlease_error *err_in)
{
    sqlease_error local;
    sqlease_error *err = err_in != NULL ? err_in : &local;
    sqlease_supervisor **locked = NULL;
    unsigned char *seen = NULL;
    stop_item *ready = NULL;
    sqle_each *each = NULL;
    int *rcs = NULL;
    size_t i, j, nl = 0, nr = 0, g, h;
    int64_t deadline;
    int rc = SQLEASE_OK;

    sqle_err_clear(err);
    if (sups == NULL && n > 0)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_supervisor_stop_each: sups is NULL");
    if (n == 0)
        return SQLEASE_OK;
    locked = malloc(n * sizeof *locked);
    ready = malloc(n * sizeof *ready);
    each = calloc(n, sizeof *each);
    rcs = calloc(n, sizeof *rcs);
    if (locked == NULL || ready == NULL || each == NULL || rcs == NULL) {
        free(locked);
        free(ready);
        free(each);
        free(rcs);
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    for (i = 0; i < n; i++) {
        int inside;
        if (sups[i] == NULL)
            continue;
        sqle_engine_lock(sups[i]->e);
        inside = in_own_callback(sups[i]);
        sqle_engine_unlock(sups[i]->e);
        if (inside) {
            rc = sqle_fail(err, SQLEASE_ESTATE, "sqlease_supervisor_stop_each called from "
                           "the callback of supervisor %zu", i);
            goto out;
        }
        locked[nl++] = sups[i];
    }
    qsort(locked, nl, sizeof *locked, by_address);
    for (i = j = 0; i < nl; i++)
        if (j == 0 || locked[j - 1] != locked[i])
            locked[j++] = locked[i];
    nl = j;
    seen = calloc(nl > 0 ? nl : 1, 1);
    if (seen == NULL) {
        rc = sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
        goto out;
    }
    for (j = 0; j < nl; j++)
        sqle_mutex_lock(&locked[j]->stop_lock);
    /* Every work stopped (each on_stopped has returned) before any
     * release is sent. */
    for (i = 0; i < n; i++) {
        sqlease_supervisor *s = sups[i], **at;
        sqlease_error e1;
        int64_t end;
        int r, holding;
        if (s == NULL)
            continue;
        at = bsearch(&s, locked, nl, sizeof *locked, by_address);
        if (seen[at - locked]) {
            rcs[i] = -1; /* listed twice: the first's answer, below */
            continue;
        }
        seen[at - locked] = 1;
        sqle_err_clear(&e1);
        end = sqle_mono_ms() + s->db->query_timeout_ms + DB_SLACK_MS;
        /* As a lone stop: a hold to hand over is asked for first. */
        sqle_engine_lock(s->e);
        holding = s->r.handoff && !s->stopped && s->state == SUP_HOLDER && s->running &&
                  !s->handoff_pending;
        sqle_engine_unlock(s->e);
        if (holding)
            (void)handoff_now(s, NULL, 0, end, NULL);
        if (stop_work(s, end, &r, &e1) && !stop_handoff(s, end, &r, &e1)) {
            ready[nr].s = s;
            ready[nr].index = i;
            ready[nr].min_hold = stop_min_hold(s, &ready[nr].at_once);
            nr++;
        } else {
            rcs[i] = r;
            if (r != SQLEASE_OK && rc == SQLEASE_OK) {
                rc = r;
                *err = e1;
            }
        }
    }
    /* The releases, one statement per chunk of a handle, table and
     * minimum hold, within one query timeout from here (the first
     * handle's: the longest wait a caller of one handle expects). */
    deadline = sqle_mono_ms();
    if (nr > 0)
        deadline += ready[0].s->db->query_timeout_ms + DB_SLACK_MS;
    qsort(ready, nr, sizeof *ready, by_release_group);
    for (g = 0; g < nr; g = h) {
        sqlease_error e1;
        sqle_err_clear(&e1);
        for (h = g + 1; h < nr && by_release_group(&ready[g], &ready[h]) == 0; h++)
            ;
        for (i = g; i < h; i++)
            each[i - g].lease = ready[i].s->lease;
        if (h - g == 1) {
            each[0].rc = sqle_lease_release_for(ready[g].s->lease, deadline, ready[g].min_hold,
                                                &each[0].hit, &e1);
        } else {
            (void)sqle_lease_release_each(each, h - g, deadline, ready[g].min_hold, &e1);
        }
        for (i = g; i < h; i++) {
            int r = each[i - g].rc;
            stop_finish(ready[i].s, r, each[i - g].hit, ready[i].min_hold, ready[i].at_once);
            rcs[ready[i].index] = r;
            if (r != SQLEASE_OK && rc == SQLEASE_OK) {
                rc = r;
                *err = e1;
            }
        }
    }
    /* Their ready rows last, each within a stop's bound from here. */
    deadline = sqle_mono_ms();
    for (j = 0; j < nl; j++)
        ready_stop(locked[j], deadline + locked[j]->db->query_timeout_ms + DB_SLACK_MS);
    for (j = 0; j < nl; j++)
        sqle_mutex_unlock(&locked[j]->stop_lock);
    /* A supervisor listed twice gets its first listing's answer. */
    for (i = 0; i < n; i++)
        for (j = 0; j < i && rcs[i] == -1; j++)
            if (sups[j] == sups[i])
                rcs[i] = rcs[j];
out:
    if (rcs_out != NULL)
        memcpy(rcs_out, rcs, n * sizeof *rcs);
    free(locked);
    free(seen);
    free(ready);
    free(each);
    free(rcs);
    return rc;
}
