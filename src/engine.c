/*
 * engine.c -- the threads every supervisor of one sqlease_db shares: the
 * runner, which sends their statements (the renews and the followers'
 * reads of one table batched into one statement per round); the
 * watchdog, which stops work at its deadline; and the pool that runs
 * their callbacks.  supervisor.h says why there are exactly these and in
 * which order their locks are taken; supervisor.c decides what each
 * answer means.
 */
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "internal.h"
#include "lease.h"
#include "supervisor.h"

/* A pool thread beyond the first leaves after this long without work. */
#define POOL_IDLE_MS 1000

void sqle_engine_lock(sqle_engine *e)
{
    sqle_mutex_lock(&e->m);
#ifndef NDEBUG
    e->m_owner = sqle_thread_self();
#endif
}

void sqle_engine_unlock(sqle_engine *e)
{
#ifndef NDEBUG
    e->m_owner = 0;
#endif
    sqle_mutex_unlock(&e->m);
}

void sqle_engine_wait(sqle_engine *e, sqle_cond *cv, int64_t until)
{
    ENGINE_HELD(e);
#ifndef NDEBUG
    e->m_owner = 0;
#endif
    sqle_cond_wait_until(cv, &e->m, until);
#ifndef NDEBUG
    e->m_owner = sqle_thread_self();
#endif
}

/* ---- the callback pool ---------------------------------------------- */

static void pool_main(void *arg);

/* One more pool thread (e->m held).  A thread that cannot be started
 * leaves the callback to the threads there are: later, never lost. */
static void pool_spawn(sqle_engine *e)
{
    sqle_thread t;

    ENGINE_HELD(e);
    if (sqle_thread_start(&t, pool_main, e) != 0)
        return;
    sqle_thread_detach(&t);
    e->cb_threads++;
}

/* The pool took a supervisor off the ready list: progress. */
static void ready_taken(sqle_engine *e)
{
    e->ready_count--;
    e->ready_since = e->ready_head != NULL ? sqle_mono_ms() : 0;
}

static void ready_remove(sqle_engine *e, sqlease_supervisor *s)
{
    sqlease_supervisor **pp, *prev = NULL;

    for (pp = &e->ready_head; *pp != NULL; prev = *pp, pp = &(*pp)->ready_next) {
        if (*pp == s) {
            *pp = s->ready_next;
            if (e->ready_tail == s)
                e->ready_tail = prev;
            s->ready_next = NULL;
            s->on_ready = 0;
            ready_taken(e);
            return;
        }
    }
}

/*
 * Queue cb for s.  If no thread is running s's callbacks, s joins the
 * ready list and an idle pool thread is woken.  When none is idle, the
 * callback waits for one to come free; should none come free within
 * POOL_STALL_MS (every thread is inside a slow callback), the watchdog
 * grows the pool (pool_grow), so that a slow callback of one supervisor
 * never holds up another's stop by more than that.
 */
void sqle_engine_queue_cb(sqle_engine *e, sqlease_supervisor *s, sup_cb *cb)
{
    ENGINE_HELD(e);
    cb->next = NULL;
    if (s->cbq_tail != NULL)
        s->cbq_tail->next = cb;
    else
        s->cbq_head = cb;
    s->cbq_tail = cb;
    if (s->in_cb || s->on_ready)
        return;
    s->on_ready = 1;
    s->ready_next = NULL;
    if (e->ready_tail != NULL)
        e->ready_tail->ready_next = s;
    else
        e->ready_head = s;
    e->ready_tail = s;
    e->ready_count++;
    if (e->ready_since == 0)
        e->ready_since = sqle_mono_ms();
    if (e->cb_idle > e->cb_woken) {
        e->cb_woken++;
        sqle_cond_signal(&e->cb_cv);
    } else if (e->cb_threads == 0) {
        pool_spawn(e);
    } else {
        sqle_cond_signal(&e->wd_cv); /* to check for a stall */
    }
}

/* Called by the watchdog (e->m held): if callbacks have waited
 * POOL_STALL_MS and no pool thread is free, start a thread for each
 * waiting supervisor.  Returns when to look again (mono ms, -1: no need). */
static int64_t pool_grow(sqle_engine *e, int64_t now)
{
    size_t want, n;

    ENGINE_HELD(e);
    if (e->ready_head == NULL)
        return -1;
    if (e->cb_idle > e->cb_woken || now < e->ready_since + POOL_STALL_MS)
        return e->ready_since + POOL_STALL_MS;
    want = e->ready_count;
    for (n = 0; n < want; n++)
        pool_spawn(e);
    e->ready_since = now;
    return now + POOL_STALL_MS;
}

/*
 * Whether a queued start may still be delivered (e->m held).  It was
 * proven when it was queued, but it may have waited behind a slow
 * callback of the same supervisor (an on_holder that connects to a host
 * that just died) for longer than its hold lasts: by then its deadline
 * may have passed, the hold may have been stopped, or another hold may
 * have started.  A start that is no longer the supervisor's running hold,
 * or whose deadline has passed, must not start the work: another owner
 * may hold the lease by now.
 */
static int start_current(sqle_engine *e, const sqlease_supervisor *s, const sup_cb *cb)
{
    return s->running && s->token == cb->token && e->now_ms() < s->deadline;
}

/*
 * Drop a start that is no longer current, and with it its stop, so that
 * on_started and on_stopped still alternate (e->m held).  Queued stops
 * follow the starts they end, in order: the next stop in the queue is
 * this start's.  If this start's hold still counts as running (its
 * deadline passed and the watchdog has not looked yet), it is stopped
 * here, which queues that stop; `note` gets what that step logs.
 */
static void drop_start(sqlease_supervisor *s, const sup_cb *cb, sup_note *note)
{
    if (s->running && s->token == cb->token)
        sqle_sup_step(s, EV_DEADLINE, 0, 0, NULL, note);
    s->drop_stop = 1;
}

/* Call one queued callback, e->m let go around the call.  The lines that
 * say the work starts or stops are written here, next to the call (the
 * start's before it, the stop's after it), so that they are in the order
 * the calls are.  Returns 1 if the callback was called, 0 if it was
 * dropped. */
static int deliver(sqle_engine *e, sqlease_supervisor *s, sup_cb *cb)
{
    sup_note note = {0};
    int go = 1;

    switch (cb->kind) {
    case CB_STARTED:
        go = start_current(e, s, cb);
        if (!go)
            drop_start(s, cb, &note);
        break;
    case CB_STOPPED:
        go = !s->drop_stop;
        s->drop_stop = 0;
        break;
    case CB_HOLDER:
        go = !s->running && s->state != SUP_STOPPED;
        break;
    }
    if (!go) {
        if (cb->kind == CB_STARTED) {
            sqle_engine_unlock(e);
            sqle_sup_note(s, &note);
            sqle_sup_log(s, SQLEASE_LOG_WARN, "the hold with token %lld ended before "
                         "on_started could be called (an earlier callback of this lease "
                         "took too long); not starting the work", (long long)cb->token);
            sqle_engine_lock(e);
        }
        return 0;
    }
    s->cb_thread = sqle_thread_self();
    sqle_engine_unlock(e);
    switch (cb->kind) {
    case CB_STARTED:
        sqle_sup_log(s, SQLEASE_LOG_INFO, "holding the lease; starting the work");
        if (s->on_started != NULL)
            s->on_started(s->userdata, cb->token);
        break;
    case CB_STOPPED: {
        /* The stop first, the line after: a log sink may block (the
         * default one writes to stderr, which may be a pipe nobody
         * drains), and the work must stop by its deadline whatever the
         * log does. */
        int64_t began = sqle_mono_ms();

        if (s->on_stopped != NULL)
            s->on_stopped(s->userdata, cb->reason);
        sqle_sup_log(s, cb->reason == SQLEASE_STOP_SHUTDOWN ? SQLEASE_LOG_INFO
                                                            : SQLEASE_LOG_WARN,
                     "stopped the work: %s (on_stopped took %lld ms)",
                     sqlease_stop_reason_str(cb->reason), (long long)(sqle_mono_ms() - began));
        break;
    }
    case CB_HOLDER:
        if (s->on_holder != NULL)
            s->on_holder(s->userdata, cb->owner, cb->token, cb->data);
        break;
    }
    sqle_engine_lock(e);
    s->cb_thread = 0;
    return 1;
}

/* Run s's queue to its end on this thread (e->m held, s claimed). */
static void drain(sqle_engine *e, sqlease_supervisor *s)
{
    sup_cb *cb;

    while ((cb = s->cbq_head) != NULL) {
        int called;

        s->cbq_head = cb->next;
        if (s->cbq_head == NULL)
            s->cbq_tail = NULL;
        called = deliver(e, s, cb);
        if (cb->kind == CB_STARTED)
            s->work_up = called && s->running && s->token == cb->token;
        else if (cb->kind == CB_STOPPED)
            sqle_cond_signal(&e->run_cv); /* a stale hold may be released now */
        sqle_cond_broadcast(&e->change_cv);
        free(cb->data);
        free(cb);
    }
}

int sqle_engine_run_cbs(sqle_engine *e, sqlease_supervisor *s)
{
    ENGINE_HELD(e);
    if (s->in_cb)
        return 0;
    if (s->on_ready)
        ready_remove(e, s);
    s->in_cb = 1;
    drain(e, s);
    s->in_cb = 0;
    sqle_cond_broadcast(&e->change_cv);
    return 1;
}

static void pool_main(void *arg)
{
    sqle_engine *e = arg;
    int64_t idle_until;

    sqle_engine_lock(e);
    for (;;) {
        sqlease_supervisor *s = e->ready_head;
        if (s != NULL) {
            if (!sqle_engine_run_cbs(e, s))
                ready_remove(e, s); /* another thread runs them */
            continue;
        }
        if (e->closing)
            break;
        /* The last thread waits without a timer: an idle process wakes
         * for nothing. */
        idle_until = e->cb_threads > 1 ? sqle_mono_ms() + POOL_IDLE_MS : -1;
        e->cb_idle++;
        sqle_engine_wait(e, &e->cb_cv, idle_until);
        e->cb_idle--;
        if (e->cb_woken > 0)
            e->cb_woken--;
        if (e->ready_head == NULL && !e->closing && e->cb_threads > 1 && idle_until >= 0 &&
            sqle_mono_ms() >= idle_until)
            break;
    }
    e->cb_threads--;
    sqle_cond_broadcast(&e->change_cv);
    sqle_engine_unlock(e);
}

/* ---- the watchdog --------------------------------------------------- */

/* Stop every holder whose deadline has come, grow the callback pool if
 * it is stalled; sleep until the next deadline or stall check.  A renew
 * only moves a deadline later, so waking at a deadline that has moved
 * costs one scan and nothing else; a new hold signals wd_cv. */
static void watchdog_main(void *arg)
{
    sqle_engine *e = arg;

    sqle_engine_lock(e);
    while (!e->closing) {
        int64_t now = sqle_mono_ms(), earliest = -1;
        sqlease_supervisor *s;

        int64_t grow_at;

        for (s = e->head; s != NULL; s = s->next) {
            if (s->state != SUP_HOLDER || !s->running)
                continue;
            if (now >= s->deadline)
                sqle_sup_step(s, EV_DEADLINE, 0, 0, NULL, NULL);
            else if (earliest < 0 || s->deadline < earliest)
                earliest = s->deadline;
        }
        grow_at = pool_grow(e, sqle_mono_ms());
        if (grow_at >= 0 && (earliest < 0 || grow_at < earliest))
            earliest = grow_at;
        sqle_engine_wait(e, &e->wd_cv, earliest);
    }
    sqle_engine_unlock(e);
}

/* ---- the runner ----------------------------------------------------- */

/* Log what a failed statement meant for s. */
static void log_failure(sqlease_supervisor *s, int rc, int lost, const sqlease_error *err)
{
    if (rc == SQLEASE_OK || rc == SQLEASE_NOT_HELD)
        return;
    sqle_sup_log(s, lost ? SQLEASE_LOG_WARN : SQLEASE_LOG_ERROR, "%s (%s): %s",
                 lost ? "the hold is gone, and taking the lease again failed"
                      : "acquire failed",
                 sqlease_strerror(rc), err->message);
}

int sqle_engine_tick_one(sqle_engine *e, sqlease_supervisor *s, sqlease_error *err_out)
{
    sqlease_lease_info info;
    sqlease_error err;
    sup_note n1 = {0}, n2 = {0};
    enum sup_state st;
    int64_t sent;
    int taken = 0, lost = 0, released = 0;
    int rc;

    sqle_err_clear(&err);
    sqle_engine_lock(e);
    st = s->state;
    if (st == SUP_STALE && (s->in_cb || s->cbq_head != NULL)) {
        /* The row must stay this hold until on_stopped has returned.  The
         * round that sends this was gathered earlier, maybe while s still
         * held (the watchdog may stop the work while the round waits on a
         * slow statement of another lease), so the rule is checked here,
         * where the release would be sent; the callback's end wakes the
         * runner, whose next round sends it. */
        sqle_engine_unlock(e);
        if (err_out != NULL)
            *err_out = err;
        return SQLEASE_OK;
    }
    sqle_engine_unlock(e);
    if (st == SUP_STALE) {
        /* Never with the minimum hold: this hold's work did not finish. */
        sqle_lease_forget(s->lease);
        sent = sqle_mono_ms();
        rc = sqle_lease_release_for(s->lease, 0, 0, &released, &err);
        sqle_engine_lock(e);
        sqle_sup_step(s, rc == SQLEASE_OK ? EV_RELEASED : EV_FAILED, sent, rc, NULL, &n1);
        sqle_engine_unlock(e);
        sqle_sup_note(s, &n1);
        if (rc != SQLEASE_OK)
            sqle_sup_log(s, SQLEASE_LOG_WARN, "could not release the hold whose work passed "
                         "its deadline (%s: %s); trying again in %lld ms",
                         sqlease_strerror(rc), err.message, (long long)s->r.retry_ms);
        else
            sqle_sup_log(s, SQLEASE_LOG_INFO, released
                             ? "released the hold whose work passed its deadline; the next "
                               "start gets a new token"
                             : "the hold whose work passed its deadline is no longer the "
                               "row's");
    } else {
        sent = sqle_mono_ms();
        rc = sqle_lease_acquire(s->lease, &info, &taken, &lost, &err);
        sqle_engine_lock(e);
        if (lost)
            sqle_sup_step(s, EV_LOST, sent, 0, NULL, &n1);
        if (rc == SQLEASE_OK)
            sqle_sup_step(s, taken ? EV_TAKEN : EV_RENEWED, sent, info.token, NULL, &n2);
        else if (rc == SQLEASE_NOT_HELD)
            sqle_sup_step(s, EV_NOT_HELD, sent, 0, &info, &n2);
        else
            sqle_sup_step(s, EV_FAILED, sent, rc, &info, &n2);
        sqle_engine_unlock(e);
        sqle_sup_note(s, &n1);
        sqle_sup_note(s, &n2);
        log_failure(s, rc, lost, &err);
        if (rc == SQLEASE_OK && taken)
            sqle_sup_log(s, SQLEASE_LOG_DEBUG, "took the lease with token %lld in %lld ms",
                         (long long)info.token, (long long)(sqle_mono_ms() - sent));
    }
    if (err_out != NULL)
        *err_out = err;
    return rc;
}

/* Holders renewed together: same table, same ttl. */
static int by_table_ttl(const void *a, const void *b)
{
    const sqlease_supervisor *x = *(sqlease_supervisor *const *)a;
    const sqlease_supervisor *y = *(sqlease_supervisor *const *)b;
    int c = strcmp(sqle_lease_table(x->lease), sqle_lease_table(y->lease));
    int64_t tx = sqle_lease_ttl(x->lease), ty = sqle_lease_ttl(y->lease);

    return c != 0 ? c : tx < ty ? -1 : tx > ty;
}

/* Followers read together: same table. */
static int by_table(const void *a, const void *b)
{
    const sqlease_supervisor *x = *(sqlease_supervisor *const *)a;
    const sqlease_supervisor *y = *(sqlease_supervisor *const *)b;

    return strcmp(sqle_lease_table(x->lease), sqle_lease_table(y->lease));
}

/* One renew statement (per chunk) for n holders of one table and ttl. */
static void renew_batch(sqle_engine *e, sqlease_supervisor **v, size_t n)
{
    sqle_each *each = calloc(n, sizeof *each);
    sup_note *notes = calloc(n, sizeof *notes);
    sqlease_error err;
    int64_t sent;
    size_t i;

    if (each == NULL || notes == NULL) {
        free(each);
        free(notes);
        for (i = 0; i < n; i++)
            sqle_engine_tick_one(e, v[i], NULL);
        return;
    }
    for (i = 0; i < n; i++)
        each[i].lease = v[i]->lease;
    sent = sqle_mono_ms();
    sqle_lease_renew_each(each, n, 0, &err);
    sqle_engine_lock(e);
    for (i = 0; i < n; i++) {
        if (each[i].rc == SQLEASE_OK)
            sqle_sup_step(v[i], EV_RENEWED, sent, v[i]->token, NULL, &notes[i]);
        else if (each[i].rc == SQLEASE_NOT_HELD)
            sqle_sup_step(v[i], EV_LOST, sent, 0, NULL, &notes[i]);
        else
            sqle_sup_step(v[i], EV_FAILED, sent, each[i].rc, NULL, &notes[i]);
    }
    sqle_engine_unlock(e);
    for (i = 0; i < n; i++) {
        sqle_sup_note(v[i], &notes[i]);
        log_failure(v[i], each[i].rc, 0, &err);
    }
    free(each);
    free(notes);
}

/* One read (per chunk) for n followers of one table, then a take for each
 * row the read showed free or expired. */
static void poll_batch(sqle_engine *e, sqlease_supervisor **v, size_t n)
{
    sqle_each *each = calloc(n, sizeof *each);
    sqlease_error err, terr;
    int64_t sent, tsent;
    size_t i;

    if (each == NULL) {
        for (i = 0; i < n; i++)
            sqle_engine_tick_one(e, v[i], NULL);
        return;
    }
    for (i = 0; i < n; i++)
        each[i].lease = v[i]->lease;
    sent = sqle_mono_ms();
    sqle_lease_status_each(each, n, 0, &err);
    for (i = 0; i < n; i++) {
        sqlease_supervisor *s = v[i];
        sqlease_lease_info got;
        sup_note note = {0};
        int taken = 0, rc = each[i].rc;

        if (rc == SQLEASE_OK && !each[i].info.held) {
            tsent = sqle_mono_ms();
            sqle_err_clear(&terr);
            rc = sqle_lease_take_seen(s->lease, &each[i].info, 0, &got, &taken, &terr);
            sqle_engine_lock(e);
            if (rc == SQLEASE_OK)
                sqle_sup_step(s, EV_TAKEN, tsent, got.token, NULL, &note);
            else if (rc == SQLEASE_NOT_HELD)
                sqle_sup_step(s, EV_NOT_HELD, tsent, 0, &each[i].info, &note);
            else
                sqle_sup_step(s, EV_FAILED, tsent, rc, &each[i].info, &note);
            sqle_engine_unlock(e);
            sqle_sup_note(s, &note);
            log_failure(s, rc, 0, &terr);
            continue;
        }
        sqle_engine_lock(e);
        if (rc == SQLEASE_OK)
            sqle_sup_step(s, EV_NOT_HELD, sent, 0, &each[i].info, &note);
        else
            sqle_sup_step(s, EV_FAILED, sent, rc, NULL, &note);
        sqle_engine_unlock(e);
        sqle_sup_note(s, &note);
        log_failure(s, rc, 0, &err);
    }
    free(each);
}

/* Run fn over each run of equal elements (by cmp) of the sorted v; a run
 * of one goes through the single statement instead, which is the same
 * statement the lease would send on its own. */
static void by_group(sqle_engine *e, sqlease_supervisor **v, size_t n,
                     int (*cmp)(const void *, const void *),
                     void (*fn)(sqle_engine *, sqlease_supervisor **, size_t))
{
    size_t i = 0, j;

    if (n == 0)
        return; /* v may be NULL: nothing was ever gathered of this kind */
    qsort(v, n, sizeof *v, cmp);
    while (i < n) {
        for (j = i + 1; j < n && cmp(&v[i], &v[j]) == 0; j++)
            ;
        if (j - i == 1)
            sqle_engine_tick_one(e, v[i], NULL);
        else
            fn(e, v + i, j - i);
        i = j;
    }
}

/* A supervisor the runner may send a statement for now or later. */
static int runnable(const sqlease_supervisor *s)
{
    if (s->busy)
        return 0;
    switch (s->state) {
    case SUP_FOLLOWER:
    case SUP_HOLDER:
        return 1;
    case SUP_STALE:
        /* The row must stay this hold until on_stopped has returned. */
        return !s->in_cb && s->cbq_head == NULL;
    case SUP_NEW:
    case SUP_STOPPED:
        return 0;
    }
    return 0;
}

/* How early a due statement may be sent to share a round: a renew up to
 * half a heartbeat (sent early, never late: the deadline only gains), a
 * poll up to half a retry; a release not at all. */
static int64_t early_by(const sqlease_supervisor *s)
{
    switch (s->state) {
    case SUP_HOLDER: return s->r.heartbeat_ms / 2;
    case SUP_FOLLOWER: return s->r.retry_ms / 2;
    default: return 0;
    }
}

typedef struct sup_vec {
    sqlease_supervisor **v;
    size_t n, cap;
} sup_vec;

static int vec_push(sup_vec *a, sqlease_supervisor *s)
{
    if (a->n == a->cap) {
        size_t cap = a->cap != 0 ? a->cap * 2 : 16;
        sqlease_supervisor **v = realloc(a->v, cap * sizeof *v);
        if (v == NULL)
            return -1;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = s;
    return 0;
}

/*
 * The runner: wait for the earliest due statement, then gather everything
 * due by then or shortly after into one round: the renews first (they
 * have deadlines), then the polls and takes, then the releases of stale
 * holds.  Statements go to the db's worker, which serves every caller of
 * the handle earliest deadline first.
 */
static void runner_main(void *arg)
{
    sqle_engine *e = arg;
    sup_vec kind[3] = {{0}};  /* holders, followers, stale */
    size_t k, i;

    sqle_engine_lock(e);
    while (!e->closing) {
        int64_t now = sqle_mono_ms(), earliest = -1;
        sqlease_supervisor *s;
        int due = 0;

        for (s = e->head; s != NULL; s = s->next) {
            if (!runnable(s))
                continue;
            if (s->next_due <= now)
                due = 1;
            else if (earliest < 0 || s->next_due < earliest)
                earliest = s->next_due;
        }
        if (!due) {
            sqle_engine_wait(e, &e->run_cv, earliest);
            continue;
        }
        for (k = 0; k < 3; k++)
            kind[k].n = 0;
        for (s = e->head; s != NULL; s = s->next) {
            if (!runnable(s) || s->next_due > now + early_by(s))
                continue;
            k = s->state == SUP_HOLDER ? 0 : s->state == SUP_FOLLOWER ? 1 : 2;
            if (vec_push(&kind[k], s) != 0)
                break; /* the rest go next round */
            s->busy = 1;
        }
        sqle_engine_unlock(e);
        by_group(e, kind[0].v, kind[0].n, by_table_ttl, renew_batch);
        by_group(e, kind[1].v, kind[1].n, by_table, poll_batch);
        for (i = 0; i < kind[2].n; i++)
            sqle_engine_tick_one(e, kind[2].v[i], NULL);
        sqle_engine_lock(e);
        for (k = 0; k < 3; k++)
            for (i = 0; i < kind[k].n; i++)
                kind[k].v[i]->busy = 0;
        sqle_cond_broadcast(&e->change_cv);
    }
    sqle_engine_unlock(e);
    for (k = 0; k < 3; k++)
        free(kind[k].v);
}

/* ---- lifetime ------------------------------------------------------- */

static void engine_destroy(sqle_engine *e)
{
    sqle_cond_destroy(&e->run_cv);
    sqle_cond_destroy(&e->wd_cv);
    sqle_cond_destroy(&e->cb_cv);
    sqle_cond_destroy(&e->change_cv);
    sqle_mutex_destroy(&e->m);
    free(e);
}

/* Stop the threads that were started and wait for them. */
static void engine_stop(sqle_engine *e)
{
    sqle_engine_lock(e);
    e->closing = 1;
    sqle_cond_broadcast(&e->run_cv);
    sqle_cond_broadcast(&e->wd_cv);
    sqle_cond_broadcast(&e->cb_cv);
    sqle_engine_unlock(e);
    if (e->runner_up)
        sqle_thread_join(&e->runner);
    if (e->watchdog_up)
        sqle_thread_join(&e->watchdog);
    sqle_engine_lock(e);
    while (e->cb_threads > 0)
        sqle_engine_wait(e, &e->change_cv, -1);
    sqle_engine_unlock(e);
}

int sqle_engine_acquire(sqlease_db *db, sqle_engine **out, sqlease_error *err)
{
    sqle_engine *e;
    int ok;

    sqle_mutex_lock(&db->m);
    if (db->engine != NULL) {
        db->engine->users++;
        *out = db->engine;
        sqle_mutex_unlock(&db->m);
        return SQLEASE_OK;
    }
    e = calloc(1, sizeof *e);
    if (e == NULL) {
        sqle_mutex_unlock(&db->m);
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    if (sqle_mutex_init(&e->m) != 0 || sqle_cond_init(&e->run_cv) != 0 ||
        sqle_cond_init(&e->wd_cv) != 0 || sqle_cond_init(&e->cb_cv) != 0 ||
        sqle_cond_init(&e->change_cv) != 0) {
        sqle_mutex_unlock(&db->m);
        free(e);
        return sqle_fail(err, SQLEASE_EPLATFORM, "cannot create a mutex or condition variable");
    }
    e->db = db;
    e->now_ms = sqle_mono_ms;
    e->runner_up = sqle_thread_start(&e->runner, runner_main, e) == 0;
    e->watchdog_up = e->runner_up && sqle_thread_start(&e->watchdog, watchdog_main, e) == 0;
    ok = e->watchdog_up;
    if (ok) {
        sqle_engine_lock(e);
        pool_spawn(e);
        ok = e->cb_threads == 1;
        sqle_engine_unlock(e);
    }
    if (!ok) {
        sqle_mutex_unlock(&db->m);
        engine_stop(e);
        engine_destroy(e);
        return sqle_fail(err, SQLEASE_EPLATFORM, "cannot start the supervisors' threads");
    }
    e->users = 1;
    db->engine = e;
    sqle_mutex_unlock(&db->m);
    *out = e;
    return SQLEASE_OK;
}

void sqle_engine_release(sqle_engine *e)
{
    sqlease_db *db = e->db;
    int last;

    sqle_mutex_lock(&db->m);
    last = --e->users == 0;
    if (last)
        db->engine = NULL;
    sqle_mutex_unlock(&db->m);
    if (last) {
        engine_stop(e);
        engine_destroy(e);
    }
}

void sqle_engine_add(sqle_engine *e, sqlease_supervisor *s)
{
    sqle_engine_lock(e);
    s->prev = NULL;
    s->next = e->head;
    if (e->head != NULL)
        e->head->prev = s;
    e->head = s;
    e->count++;
    sqle_engine_unlock(e);
}

void sqle_engine_remove(sqle_engine *e, sqlease_supervisor *s)
{
    sqle_engine_lock(e);
    if (s->on_ready)
        ready_remove(e, s);
    if (s->prev != NULL)
        s->prev->next = s->next;
    else
        e->head = s->next;
    if (s->next != NULL)
        s->next->prev = s->prev;
    s->next = s->prev = NULL;
    e->count--;
    sqle_engine_unlock(e);
}
