/*
 * engine.c -- the threads every supervisor of one sqlease_db shares: the
 * runner, which sends the statements its nodes want (the renews and the
 * followers' reads of one table batched into one statement per round);
 * the watchdog, which wakes at the nodes' deadlines; and the pool that
 * runs their callbacks.  engine.h says why there are exactly these, in
 * which order their locks are taken, and how the engine calls its
 * clients: only through their sqle_engine_ops.  What a node wants and
 * what its answers mean are the client's (supervisor.c, sup_machine.c).
 */
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "engine.h"
#include "internal.h"
#include "history.h"
#include "lease.h"

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

int64_t sqle_engine_now(const sqle_engine *e)
{
    return e->now_ms();
}

/* Every wait on e->m, so that ENGINE_HELD stays true around it. */
static void engine_wait(sqle_engine *e, sqle_cond *cv, int64_t until)
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

void sqle_engine_wait_change(sqle_engine *e, int64_t until)
{
    engine_wait(e, &e->change_cv, until);
}

void sqle_engine_changed(sqle_engine *e)
{
    ENGINE_HELD(e);
    sqle_cond_broadcast(&e->change_cv);
}

void sqle_engine_kick(sqle_engine *e)
{
    ENGINE_HELD(e);
    sqle_cond_signal(&e->run_cv);
}

void sqle_engine_watch_kick(sqle_engine *e)
{
    ENGINE_HELD(e);
    sqle_cond_signal(&e->wd_cv);
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

/* The pool took a node off the ready list.  The stall is timed from
 * when the node now first in line was queued, not from this take: quick
 * callbacks of other leases one after another on one thread would
 * otherwise hold a stop up by their sum, each below POOL_STALL_MS.  The
 * nodes that waited at the last growth have threads of their own on the
 * way, so that growth is the latest a stall can be timed from. */
static void ready_taken(sqle_engine *e)
{
    e->ready_count--;
    if (e->ready_head == NULL)
        e->ready_since = 0;
    else
        e->ready_since = e->ready_head->ready_at > e->grown_at ? e->ready_head->ready_at
                                                               : e->grown_at;
}

static void ready_remove(sqle_engine *e, sqle_engine_node *n)
{
    sqle_engine_node **pp, *prev = NULL;

    for (pp = &e->ready_head; *pp != NULL; prev = *pp, pp = &(*pp)->ready_next) {
        if (*pp == n) {
            *pp = n->ready_next;
            if (e->ready_tail == n)
                e->ready_tail = prev;
            n->ready_next = NULL;
            n->on_ready = 0;
            ready_taken(e);
            return;
        }
    }
}

/*
 * Queue cb for n.  If no thread is running n's callbacks, n joins the
 * ready list and an idle pool thread is woken.  When none is idle, the
 * callback waits for one to come free; should none come free within
 * POOL_STALL_MS (every thread is inside a slow callback), the watchdog
 * grows the pool (pool_grow), so that a slow callback of one lease never
 * holds up another's stop by more than that.
 */
void sqle_engine_queue_cb(sqle_engine *e, sqle_engine_node *n, sqle_engine_cb *cb)
{
    ENGINE_HELD(e);
    cb->next = NULL;
    if (n->cbq_tail != NULL)
        n->cbq_tail->next = cb;
    else
        n->cbq_head = cb;
    n->cbq_tail = cb;
    if (n->in_cb || n->on_ready)
        return;
    n->on_ready = 1;
    n->ready_next = NULL;
    n->ready_at = sqle_mono_ms();
    if (e->ready_tail != NULL)
        e->ready_tail->ready_next = n;
    else
        e->ready_head = n;
    e->ready_tail = n;
    e->ready_count++;
    if (e->ready_since == 0)
        e->ready_since = n->ready_at;
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
 * waiting node.  Returns when to look again (mono ms, -1: no need). */
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
    e->ready_since = e->grown_at = now;
    return now + POOL_STALL_MS;
}

/* Run n's queue to its end on this thread (e->m held, n claimed): each
 * callback is the client's to deliver (or drop), in order. */
static void drain(sqle_engine *e, sqle_engine_node *n)
{
    sqle_engine_cb *cb;

    while ((cb = n->cbq_head) != NULL) {
        n->cbq_head = cb->next;
        if (n->cbq_head == NULL)
            n->cbq_tail = NULL;
        cb->next = NULL;
        n->ops->deliver(n, cb);
        sqle_cond_broadcast(&e->change_cv);
    }
}

int sqle_engine_run_cbs(sqle_engine *e, sqle_engine_node *n)
{
    ENGINE_HELD(e);
    if (n->in_cb)
        return 0;
    if (n->on_ready)
        ready_remove(e, n);
    n->in_cb = 1;
    drain(e, n);
    n->in_cb = 0;
    sqle_cond_broadcast(&e->change_cv);
    /* A node may hold back a statement until its callbacks are done (a
     * stale hold's release, a hand-over: the row stays the hold's while
     * on_stopped runs), and with nothing else due the runner sleeps: wake
     * it.  Any callback, not only a stop: a slow on_holder queued before
     * the stop holds the release back just the same. */
    if (!SQLE_PLANTED(runner_not_woken_after_callbacks))
        sqle_engine_kick(e);
    return 1;
}

void sqle_engine_run_held_cbs(sqle_engine *e, sqle_engine_node *n)
{
    ENGINE_HELD(e);
    n->in_cb = 0;
    (void)sqle_engine_run_cbs(e, n);
}

int sqle_engine_cbs_pending(const sqle_engine_node *n)
{
    return n->in_cb || n->cbq_head != NULL;
}

int sqle_engine_busy(const sqle_engine_node *n)
{
    return n->busy;
}

static void pool_main(void *arg)
{
    sqle_engine *e = arg;
    int64_t idle_until;

    sqle_engine_lock(e);
    for (;;) {
        sqle_engine_node *n = e->ready_head;
        if (n != NULL) {
            if (!sqle_engine_run_cbs(e, n))
                ready_remove(e, n); /* another thread runs them */
            continue;
        }
        if (e->closing)
            break;
        /* The last thread waits without a timer: an idle process wakes
         * for nothing. */
        idle_until = e->cb_threads > 1 ? sqle_mono_ms() + POOL_IDLE_MS : -1;
        e->cb_idle++;
        engine_wait(e, &e->cb_cv, idle_until);
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

/* Let every node act on a deadline that has come, grow the callback pool
 * if it is stalled; sleep until the next deadline or stall check.  A
 * renew only moves a deadline later, so waking at a deadline that has
 * moved costs one scan and nothing else; a new one kicks the watchdog. */
static void watchdog_main(void *arg)
{
    sqle_engine *e = arg;

    sqle_engine_lock(e);
    while (!e->closing) {
        int64_t now = sqle_mono_ms(), earliest = -1, grow_at;
        sqle_engine_node *n;

        for (n = e->head; n != NULL; n = n->next) {
            int64_t at = n->ops->watch(n, now);
            if (at >= 0 && (earliest < 0 || at < earliest))
                earliest = at;
        }
        grow_at = pool_grow(e, sqle_mono_ms());
        if (grow_at >= 0 && (earliest < 0 || grow_at < earliest))
            earliest = grow_at;
        engine_wait(e, &e->wd_cv, earliest);
    }
    sqle_engine_unlock(e);
}

/* ---- the runner ----------------------------------------------------- */

int sqle_engine_send(sqle_engine *e, sqle_engine_node *n, int what, sqlease_error *err_out)
{
    sqle_due d;

    memset(&d, 0, sizeof d);
    d.what = what;
    return sqle_engine_send_due(e, n, &d, err_out);
}

int sqle_engine_send_due(sqle_engine *e, sqle_engine_node *n, const sqle_due *d,
                         sqlease_error *err_out)
{
    sqlease_lease_info info;
    sqlease_error err;
    sqle_answer a;
    char target[SQLEASE_MAX_OWNER + 1];
    int what = d->what;

    (void)e;
    sqle_err_clear(&err);
    memset(&a, 0, sizeof a);
    memset(&info, 0, sizeof info);
    a.err = &err;
    if (what == SQLE_SEND_NONE) {
        a.rc = SQLEASE_OK;
    } else if (what == SQLE_SEND_HANDOFF) {
        /* Never with the minimum hold either: the work moved. */
        a.kind = SQLE_ANS_HANDOFF;
        a.sent = sqle_mono_ms();
        a.rc = sqle_lease_handoff(n->lease, d->arg, d->arg_ms, 0, target, sizeof target,
                                  &a.released, &err);
        a.target = target;
        n->ops->answer(n, &a);
    } else if (what == SQLE_SEND_REQUEST) {
        a.kind = SQLE_ANS_REQUEST;
        a.sent = sqle_mono_ms();
        a.token = d->token;
        a.rc = sqle_lease_request(n->lease, d->arg, d->token, sqlease_lease_owner(n->lease),
                                  d->arg_ms, 0, &a.taken, &err);
        n->ops->answer(n, &a);
    } else if (what == SQLE_SEND_RELEASE) {
        /* Never with the minimum hold: this hold's work did not finish.
         * The only hold a node gives up so is one whose work was stopped
         * at its deadline (or never started: proven too late), and the
         * holder history says so. */
        sqle_lease_forget(n->lease);
        a.kind = SQLE_ANS_RELEASE;
        a.sent = sqle_mono_ms();
        a.rc = sqle_lease_release_as(n->lease, 0, 0, SQLE_END_DEADLINE, &a.released, &err);
        n->ops->answer(n, &a);
    } else {
        a.kind = SQLE_ANS_ACQUIRE;
        a.sent = sqle_mono_ms();
        a.rc = sqle_lease_acquire(n->lease, &info, &a.taken, &a.lost, &err);
        a.token = info.token;
        a.row = &info;
        n->ops->answer(n, &a);
        /* A loss's end in the holder history: after the answer, which
         * has the work stopped. */
        sqle_lease_history_flush(n->lease);
    }
    if (err_out != NULL)
        *err_out = err;
    return a.rc;
}

/* One node's statement, sent alone.  What it wants is asked again here,
 * where it is sent, not only when the round was gathered: the round may
 * have waited on a slow statement of another group meanwhile, and what
 * was due then (a renew) may be something else now (nothing yet: a
 * release must wait for on_stopped to return). */
static void send_due(sqle_engine *e, sqle_engine_node *n)
{
    sqle_due d;

    sqle_engine_lock(e);
    n->ops->due(n, &d);
    sqle_engine_unlock(e);
    (void)sqle_engine_send_due(e, n, &d, NULL);
}

/* Renews sent together: same table, same ttl. */
static int by_table_ttl(const void *a, const void *b)
{
    const sqle_engine_node *x = *(sqle_engine_node *const *)a;
    const sqle_engine_node *y = *(sqle_engine_node *const *)b;
    int c = strcmp(sqle_lease_table(x->lease), sqle_lease_table(y->lease));
    int64_t tx = sqle_lease_ttl(x->lease), ty = sqle_lease_ttl(y->lease);

    return c != 0 ? c : tx < ty ? -1 : tx > ty;
}

/* Reads sent together: same table. */
static int by_table(const void *a, const void *b)
{
    const sqle_engine_node *x = *(sqle_engine_node *const *)a;
    const sqle_engine_node *y = *(sqle_engine_node *const *)b;

    return strcmp(sqle_lease_table(x->lease), sqle_lease_table(y->lease));
}

/*
 * The holds a batched renew found gone: one read of their rows (per
 * chunk), as the single renew's acquire reads the row after a 0-row
 * answer, so that each one's client can tell a hold that is gone from one
 * asked to hand over (which the renew refuses too): each[i].info gets
 * the row and .hit 1 where the read answered.  A read that fails leaves
 * them without (a loss, as before).
 */
static void lost_rows(sqle_each *each, size_t n)
{
    sqle_each *lost;
    sqlease_error err;
    size_t i, k = 0;

    for (i = 0; i < n; i++)
        each[i].hit = 0;
    for (i = 0; i < n; i++)
        k += each[i].rc == SQLEASE_NOT_HELD;
    if (k == 0 || (lost = calloc(k, sizeof *lost)) == NULL)
        return;
    for (i = 0, k = 0; i < n; i++)
        if (each[i].rc == SQLEASE_NOT_HELD)
            lost[k++].lease = each[i].lease;
    (void)sqle_lease_status_each(lost, k, 0, &err);
    for (i = 0, k = 0; i < n; i++) {
        if (each[i].rc != SQLEASE_NOT_HELD)
            continue;
        if (lost[k].rc == SQLEASE_OK) {
            each[i].info = lost[k].info;
            each[i].hit = 1;
        }
        k++;
    }
    free(lost);
}

/* One renew statement (per chunk) for n holders of one table and ttl. */
static void renew_batch(sqle_engine *e, sqle_engine_node **v, size_t n)
{
    sqle_each *each = calloc(n, sizeof *each);
    sqlease_error err;
    sqle_answer a;
    int64_t sent;
    size_t i;

    if (each == NULL) {
        for (i = 0; i < n; i++)
            send_due(e, v[i]);
        return;
    }
    for (i = 0; i < n; i++)
        each[i].lease = v[i]->lease;
    sent = sqle_mono_ms();
    sqle_lease_renew_each(each, n, 0, &err);
    lost_rows(each, n);
    for (i = 0; i < n; i++) {
        memset(&a, 0, sizeof a);
        a.kind = SQLE_ANS_RENEW;
        a.sent = sent;
        a.rc = each[i].rc;
        a.row = each[i].rc == SQLEASE_NOT_HELD && each[i].hit ? &each[i].info : NULL;
        a.err = &err;
        v[i]->ops->answer(v[i], &a);
    }
    sqle_lease_history_flush_each(each, n); /* the losses' ends, after the answers */
    free(each);
}

/*
 * One read (per chunk) for n followers of one table, then the takes it
 * calls for: one batched take (per run of equal ttl, owner and data) of
 * every row it showed free or whose watch has run, bound to the version
 * read, so that a dead worker's many leases move with a statement per
 * chunk rather than one each; and the take by the database's expiry,
 * which only a follower that does not watch sends, on its own.
 */
static void poll_batch(sqle_engine *e, sqle_engine_node **v, size_t n)
{
    sqle_each *each = calloc(n, sizeof *each);
    sqle_each *takes = NULL; /* a row each is 1.4 KB: only when some take is due */
    size_t *slot = calloc(n, sizeof *slot); /* 1 + index in takes, or 0 */
    int *want = calloc(n, sizeof *want);
    sqlease_error err, terr, berr, lost;
    sqle_answer a;
    int64_t sent, took_sent = 0;
    size_t i, nt = 0;

    if (each == NULL || slot == NULL || want == NULL) {
        free(each);
        free(slot);
        free(want);
        for (i = 0; i < n; i++)
            send_due(e, v[i]);
        return;
    }
    for (i = 0; i < n; i++)
        each[i].lease = v[i]->lease;
    sent = sqle_mono_ms();
    sqle_lease_status_each(each, n, 0, &err);
    for (i = 0; i < n; i++) {
        want[i] = each[i].rc == SQLEASE_OK && sqle_lease_wants_take(v[i]->lease, &each[i].info);
        if (want[i] && sqle_lease_take_bound(v[i]->lease, &each[i].info))
            slot[i] = ++nt;
    }
    /* A lone take goes as the single statement the lease would send on
     * its own (as by_group sends a run of one), which is also the
     * cheaper statement for the database to plan. */
    if (nt == 1 || (nt > 0 && (takes = malloc(nt * sizeof *takes)) == NULL)) {
        for (i = 0; i < n; i++)
            slot[i] = 0; /* one, or out of memory: each take on its own */
        nt = 0;
    }
    if (nt > 0) {
        for (i = 0; i < n; i++)
            if (slot[i] != 0)
                takes[slot[i] - 1] = each[i];
        took_sent = sqle_mono_ms();
        (void)sqle_lease_take_each_mixed(takes, nt, 0, &berr);
    }
    for (i = 0; i < n; i++) {
        memset(&a, 0, sizeof a);
        a.rc = each[i].rc;
        if (slot[i] != 0) {
            const sqle_each *t = &takes[slot[i] - 1];

            a.kind = SQLE_ANS_TAKE;
            a.sent = took_sent;
            a.row = &each[i].info;
            a.rc = t->rc;
            a.taken = t->rc == SQLEASE_OK && t->hit;
            a.token = a.taken ? t->info.token : 0;
            a.err = &berr;
            if (t->rc == SQLEASE_OK && !t->hit)
                a.rc = SQLEASE_NOT_HELD; /* not sent: a row some owner has */
            if (a.rc == SQLEASE_NOT_HELD) {
                sqle_err(&lost, SQLEASE_NOT_HELD, NULL, 0,
                         "lease '%s' was taken by another acquire between its read and its "
                         "take", sqlease_lease_name(v[i]->lease));
                a.err = &lost;
            }
        } else if (each[i].rc == SQLEASE_ENOROW && sqle_lease_seeds(v[i]->lease)) {
            /* A ready row not made yet: the lone acquire seeds it, reads
             * it again and takes it. */
            sqlease_lease_info got;

            memset(&got, 0, sizeof got);
            a.kind = SQLE_ANS_ACQUIRE;
            a.sent = sqle_mono_ms();
            sqle_err_clear(&terr);
            a.rc = sqle_lease_acquire(v[i]->lease, &got, &a.taken, &a.lost, &terr);
            a.token = got.token;
            a.row = &got;
            a.err = &terr;
            v[i]->ops->answer(v[i], &a);
            continue;
        } else if (want[i]) {
            sqlease_lease_info got;

            memset(&got, 0, sizeof got);
            a.kind = SQLE_ANS_TAKE;
            a.sent = sqle_mono_ms();
            sqle_err_clear(&terr);
            a.rc = sqle_lease_take_seen(v[i]->lease, &each[i].info, 0, &got, &a.taken, &terr);
            a.token = got.token;
            a.row = &each[i].info;
            a.err = &terr;
        } else {
            a.kind = SQLE_ANS_READ;
            a.sent = sent;
            a.row = a.rc == SQLEASE_OK ? &each[i].info : NULL;
            a.err = &err;
        }
        v[i]->ops->answer(v[i], &a);
    }
    free(each);
    free(takes);
    free(slot);
    free(want);
}

/* Run fn over each run of equal elements (by cmp) of the sorted v; a run
 * of one goes through the single statement instead, which is the same
 * statement the lease would send on its own. */
static void by_group(sqle_engine *e, sqle_engine_node **v, size_t n,
                     int (*cmp)(const void *, const void *),
                     void (*fn)(sqle_engine *, sqle_engine_node **, size_t))
{
    size_t i = 0, j;

    if (n == 0)
        return; /* v may be NULL: nothing was ever gathered of this kind */
    qsort(v, n, sizeof *v, cmp);
    while (i < n) {
        for (j = i + 1; j < n && cmp(&v[i], &v[j]) == 0; j++)
            ;
        if (j - i == 1)
            send_due(e, v[i]);
        else
            fn(e, v + i, j - i);
        i = j;
    }
}

typedef struct node_vec {
    sqle_engine_node **v;
    size_t n, cap;
} node_vec;

static int vec_push(node_vec *a, sqle_engine_node *n)
{
    if (a->n == a->cap) {
        size_t cap = a->cap != 0 ? a->cap * 2 : 16;
        sqle_engine_node **v = realloc(a->v, cap * sizeof *v);
        if (v == NULL)
            return -1;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = n;
    return 0;
}

/*
 * The runner: wait for the earliest due statement, then gather everything
 * due by then or shortly after into one round: the renews first (they
 * have deadlines), then the polls and takes, then the releases.
 * Statements go to the db's worker, which serves every caller of the
 * handle earliest deadline first.
 */
static void runner_main(void *arg)
{
    sqle_engine *e = arg;
    node_vec kind[3] = {{0}};  /* renews, polls, releases */
    size_t k, i;

    sqle_engine_lock(e);
    while (!e->closing) {
        int64_t now = sqle_mono_ms(), earliest = -1;
        sqle_engine_node *n;
        sqle_due d;
        int due = 0;

        for (n = e->head; n != NULL; n = n->next) {
            if (n->busy)
                continue;
            n->ops->due(n, &d);
            if (d.what == SQLE_SEND_NONE)
                continue;
            if (d.at <= now)
                due = 1;
            else if (earliest < 0 || d.at < earliest)
                earliest = d.at;
        }
        if (!due) {
            engine_wait(e, &e->run_cv, earliest);
            continue;
        }
        for (k = 0; k < 3; k++)
            kind[k].n = 0;
        for (n = e->head; n != NULL; n = n->next) {
            if (n->busy)
                continue;
            n->ops->due(n, &d);
            if (d.what == SQLE_SEND_NONE || d.at > now + d.early)
                continue;
            k = d.what == SQLE_SEND_RENEW ? 0 : d.what == SQLE_SEND_POLL ? 1 : 2;
            if (vec_push(&kind[k], n) != 0)
                break; /* the rest go next round */
            n->busy = 1;
        }
        sqle_engine_unlock(e);
        by_group(e, kind[0].v, kind[0].n, by_table_ttl, renew_batch);
        by_group(e, kind[1].v, kind[1].n, by_table, poll_batch);
        for (i = 0; i < kind[2].n; i++)
            send_due(e, kind[2].v[i]);
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
        engine_wait(e, &e->change_cv, -1);
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

void sqle_engine_add(sqle_engine *e, sqle_engine_node *n, int hold_cbs)
{
    sqle_engine_lock(e);
    n->busy = 0;
    n->cbq_head = n->cbq_tail = NULL;
    n->in_cb = hold_cbs;
    n->on_ready = 0;
    n->ready_next = NULL;
    n->prev = NULL;
    n->next = e->head;
    if (e->head != NULL)
        e->head->prev = n;
    e->head = n;
    e->count++;
    sqle_engine_unlock(e);
}

sqle_engine_cb *sqle_engine_remove(sqle_engine *e, sqle_engine_node *n)
{
    sqle_engine_cb *left;

    sqle_engine_lock(e);
    if (n->on_ready)
        ready_remove(e, n);
    if (n->prev != NULL)
        n->prev->next = n->next;
    else
        e->head = n->next;
    if (n->next != NULL)
        n->next->prev = n->prev;
    n->next = n->prev = NULL;
    e->count--;
    left = n->cbq_head;
    n->cbq_head = n->cbq_tail = NULL;
    sqle_engine_unlock(e);
    return left;
}
