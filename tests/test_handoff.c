/*
 * test_handoff.c -- the directed hand-over against a real database (see
 * "Handing the lease over" in sqlease.h): a request refuses the holder's
 * renew, the holder hands over only once its on_stopped has returned, and
 * the target takes at once with token + 1; a reserved row is refused to
 * every other owner, by every take, until its deadline; a hand-over to a
 * dead target leaves the row free after it; a ready follower of higher
 * priority asks a holder for the lease once it has held for
 * preempt_after_ms, and equal priorities never do; the batched renew
 * refuses a requested hold exactly as the single one does (on MySQL and
 * MariaDB through the count-only path); and the ready rows, the stop that
 * hands over, the request's answers and its withdrawal.
 *
 * Every "host" is a handle of its own (its own connection, as separate
 * processes have), and the callbacks count how many run the work at once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "internal.h"
#include "lease.h"
#include "platform.h"
#include "supervisor.h"
#include "testutil.h"

#define TTL 3000
#define HB 500
#define DL 1500
#define RETRY 250

/* What one host's callbacks saw. */
#define MAX_EVENTS 32
typedef struct host {
    const char *owner;
    sqlease_db *db;
    sqlease_supervisor *sup;
    sqle_mutex m;
    int n;
    char kind[MAX_EVENTS];        /* 'S' started, 'T' stopped */
    int64_t value[MAX_EVENTS];    /* token, or stop reason */
    int64_t at[MAX_EVENTS];       /* mono ms */
    int64_t returned[MAX_EVENTS]; /* mono ms on_stopped returned */
    int64_t stop_sleep_ms;        /* on_stopped takes this long */
} host;

/* How many hosts run the work at once, and the most that ever did. */
static sqle_mutex g_m;
static int g_running, g_max_running;

static void on_started(void *ud, int64_t token)
{
    host *h = ud;

    sqle_mutex_lock(&g_m);
    if (++g_running > g_max_running)
        g_max_running = g_running;
    sqle_mutex_unlock(&g_m);
    sqle_mutex_lock(&h->m);
    if (h->n < MAX_EVENTS) {
        h->kind[h->n] = 'S';
        h->value[h->n] = token;
        h->at[h->n] = sqle_mono_ms();
        h->n++;
    }
    sqle_mutex_unlock(&h->m);
}

static void on_stopped(void *ud, int reason)
{
    host *h = ud;
    int k = -1;

    sqle_mutex_lock(&h->m);
    if (h->n < MAX_EVENTS) {
        k = h->n++;
        h->kind[k] = 'T';
        h->value[k] = reason;
        h->at[k] = sqle_mono_ms();
    }
    sqle_mutex_unlock(&h->m);
    if (h->stop_sleep_ms > 0)
        sqle_sleep_ms(h->stop_sleep_ms);
    /* Counted as stopped just before it returns: the work runs until
     * then. */
    sqle_mutex_lock(&g_m);
    g_running--;
    sqle_mutex_unlock(&g_m);
    sqle_mutex_lock(&h->m);
    if (k >= 0)
        h->returned[k] = sqle_mono_ms();
    sqle_mutex_unlock(&h->m);
}

static void running_reset(void)
{
    sqle_mutex_lock(&g_m);
    g_running = g_max_running = 0;
    sqle_mutex_unlock(&g_m);
}

static int max_running(void)
{
    int n;

    sqle_mutex_lock(&g_m);
    n = g_max_running;
    sqle_mutex_unlock(&g_m);
    return n;
}

static int events(host *h)
{
    int n;

    sqle_mutex_lock(&h->m);
    n = h->n;
    sqle_mutex_unlock(&h->m);
    return n;
}

typedef struct { host *h; int n; } want;
static int has_events(void *arg)
{
    want *w = arg;
    return events(w->h) >= w->n;
}

static int await_events(host *h, int n, int64_t timeout)
{
    want w;

    w.h = h;
    w.n = n;
    return tu_await(has_events, &w, timeout);
}

/* A host with a handle of its own. */
static void host_init(host *h, const char *owner)
{
    memset(h, 0, sizeof *h);
    sqle_mutex_init(&h->m);
    h->owner = owner;
    h->db = tu_open();
    CU_ASSERT_PTR_NOT_NULL_FATAL(h->db);
}

/* Start h's supervisor of "job" in table t with these timings: hand-over
 * on or off, with a priority, a preemption delay and a reservation (0:
 * the defaults). */
static void host_start_timed(host *h, const char *t, int64_t ttl, int64_t hb, int64_t dl,
                             int64_t retry, int handoff, int64_t priority,
                             int64_t preempt_after, int64_t reserve)
{
    sqlease_options o;
    sqlease_error err;
    int rc;

    tu_options(&o, t, "job", h->owner, ttl, hb, dl, retry);
    o.on_started = on_started;
    o.on_stopped = on_stopped;
    o.userdata = h;
    o.handoff = handoff;
    o.priority = priority;
    o.preempt_after_ms = preempt_after;
    o.handoff_reserve_ms = reserve;
    rc = sqlease_supervisor_start(&h->sup, h->db, &o, &err);
    if (rc != SQLEASE_OK)
        fprintf(stderr, "supervisor_start %s: %s\n", h->owner, err.message);
    CU_ASSERT_EQUAL_FATAL(rc, SQLEASE_OK);
}

/* The same with this file's short timings. */
static void host_start(host *h, const char *t, int handoff, int64_t priority,
                       int64_t preempt_after, int64_t reserve)
{
    host_start_timed(h, t, TTL, HB, DL, RETRY, handoff, priority, preempt_after, reserve);
}

static void host_free(host *h)
{
    sqlease_supervisor_free(h->sup);
    h->sup = NULL;
    sqlease_db_close(h->db);
    h->db = NULL;
    sqle_mutex_destroy(&h->m);
}

static int holding(host *h)
{
    sqlease_state st;

    return h->sup != NULL && sqlease_supervisor_state(h->sup, &st) == SQLEASE_OK && st.holding;
}

/* A bare lease of "job" in t as `owner`, on the shared handle. */
static sqlease_db *db;
static sqlease_lease *lease_of(const char *t, const char *owner)
{
    sqlease_options o;
    sqlease_lease *l = NULL;
    sqlease_error err;

    tu_options(&o, t, "job", owner, TTL, HB, DL, RETRY);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&l, db, &o, &err), SQLEASE_OK);
    return l;
}

static sqlease_lease_info row_of(const char *t)
{
    sqlease_lease *l = lease_of(t, "reader");
    sqlease_lease_info info;
    sqlease_error err;

    memset(&info, 0, sizeof info);
    CU_ASSERT_EQUAL(sqlease_lease_status(l, &info, &err), SQLEASE_OK);
    sqlease_lease_free(l);
    return info;
}

/* The ready rows' owners, best first. */
typedef struct ready_seen {
    int n;
    char owner[8][SQLEASE_MAX_OWNER + 1];
    int64_t priority[8];
    int64_t seen_ago[8];
} ready_seen;

static int on_ready(void *ud, const char *owner, int64_t priority, int64_t seen_ago_ms)
{
    ready_seen *r = ud;

    if (r->n < 8) {
        snprintf(r->owner[r->n], sizeof r->owner[0], "%s", owner);
        r->priority[r->n] = priority;
        r->seen_ago[r->n] = seen_ago_ms;
        r->n++;
    }
    return 0;
}

static ready_seen ready_of(const char *t)
{
    sqlease_lease *l = lease_of(t, "reader");
    ready_seen r;
    sqlease_error err;

    memset(&r, 0, sizeof r);
    CU_ASSERT_EQUAL(sqlease_lease_ready(l, on_ready, &r, &err), SQLEASE_OK);
    sqlease_lease_free(l);
    return r;
}

/*
 * An operator's request for a named follower: the holder's next renew is
 * refused, it stops its work after its lead (SQLEASE_STOP_HANDOFF, a slow
 * on_stopped), and only once that has returned does it hand over; the
 * target takes at once (no watch, no ttl), with token + 1, and the row
 * says so: its owner and priority, no hand-over left, who held it last.
 */
static void test_request_moves_after_on_stopped(void)
{
    const char *t = tu_table();
    host a, b;
    sqlease_lease *op;
    sqlease_lease_info req, row;
    sqlease_state st;
    sqlease_error err;
    int64_t token, asked;

    running_reset();
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    host_init(&a, "host-a");
    host_init(&b, "host-b");
    host_start(&a, t, 0, 0, 0, 0);
    CU_ASSERT_FATAL(holding(&a));
    host_start(&b, t, 1, 7, 0, 0);
    CU_ASSERT(!holding(&b));
    token = a.value[0];
    a.stop_sleep_ms = 400;

    op = lease_of(t, "operator");
    asked = sqle_mono_ms();
    CU_ASSERT_EQUAL(sqlease_lease_request_handoff(op, "host-b", &req, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(req.owner, "host-a");
    CU_ASSERT_EQUAL(req.token, token);
    CU_ASSERT_STRING_EQUAL(req.handoff_to, "host-b");
    /* A second request while this one stands: pending, naming it. */
    CU_ASSERT_EQUAL(sqlease_lease_request_handoff(op, "host-c", &row, &err), SQLEASE_PENDING);
    CU_ASSERT_STRING_EQUAL(row.handoff_to, "host-b");

    CU_ASSERT_FATAL(await_events(&a, 2, HB + 1000));
    CU_ASSERT_EQUAL(a.kind[1], 'T');
    CU_ASSERT_EQUAL(a.value[1], SQLEASE_STOP_HANDOFF);
    /* Noticed at its next renew; the work runs on for its lead (a retry
     * and a fast read), by which time b reads the row fast. */
    CU_ASSERT(a.at[1] - asked >= RETRY);
    CU_ASSERT(a.at[1] - asked <= HB + RETRY + 350);
    CU_ASSERT_FATAL(await_events(&b, 1, 2000));
    CU_ASSERT_EQUAL(b.kind[0], 'S');
    CU_ASSERT_EQUAL(b.value[0], token + 1);
    /* Not before a's on_stopped returned; right after it (the target
     * polls fast while it sees the request). */
    CU_ASSERT(b.at[0] >= a.returned[1]);
    CU_ASSERT(b.at[0] - a.returned[1] <= 200);
    CU_ASSERT_EQUAL(max_running(), 1);

    row = row_of(t);
    CU_ASSERT_STRING_EQUAL(row.owner, "host-b");
    CU_ASSERT_EQUAL(row.token, token + 1);
    CU_ASSERT_STRING_EQUAL(row.handoff_to, "");
    CU_ASSERT_EQUAL(row.priority, 7);
    CU_ASSERT_EQUAL(row.reserved, 0);
    CU_ASSERT_EQUAL(sqlease_supervisor_state(a.sup, &st), SQLEASE_OK);
    CU_ASSERT_EQUAL(st.handoffs, 1);
    CU_ASSERT_EQUAL(st.losses, 0);
    CU_ASSERT_EQUAL(st.holding, 0);
    /* a does not take it back: it is a follower now, and b renews. */
    sqle_sleep_ms(2 * HB);
    CU_ASSERT(holding(&b));
    CU_ASSERT(!holding(&a));
    /* Nothing to withdraw once answered. */
    {
        int cancelled = -1;
        CU_ASSERT_EQUAL(sqlease_lease_cancel_handoff(op, &req, &cancelled, &err), SQLEASE_OK);
        CU_ASSERT_EQUAL(cancelled, 0);
    }
    sqlease_lease_free(op);
    host_free(&a);
    host_free(&b);
    CU_ASSERT_EQUAL(max_running(), 1);
    tu_drop(db, t);
}

/* Run one generated statement of the dialect with `p` on the shared
 * handle: its row count. */
static int64_t run_stmt(const char *t, const sqle_stmt *st, db_params *p)
{
    char *sql = sqle_sql_for_table(st->sql, t);
    sqlease_error err;
    int64_t rows = -1;

    CU_ASSERT_PTR_NOT_NULL_FATAL(sql);
    if (sqle_db_run(db, st, sql, p, NULL, 0, NULL, &rows, &err) != SQLEASE_OK)
        fprintf(stderr, "statement failed: %s\n", err.message);
    free(sql);
    return rows;
}

/* The batched take of one row, as the library would build it. */
static int64_t run_take_each(const char *t, db_params *p)
{
    const sqle_dialect *d = sqle_db_dialect(db);
    db_bind *binds = NULL;
    size_t nb = 0;
    char *sql = NULL;
    sqlease_error err;
    int64_t rows = -1;

    CU_ASSERT_EQUAL_FATAL(sqle_each_build(&d->take_each, t, p, 1, 1, &sql, &binds, &nb, &err),
                          SQLEASE_OK);
    if (d->renew_each_returns) {
        /* It answers with the rows it took. */
        char name[SQLEASE_MAX_NAME + 1], owner[SQLEASE_MAX_OWNER + 1];
        int64_t token;
        db_out out[3];
        size_t n = 0;
        memset(out, 0, sizeof out);
        out[0].type = DB_TEXT;
        out[0].s = name;
        out[0].cap = sizeof name;
        out[1].type = DB_TEXT;
        out[1].s = owner;
        out[1].cap = sizeof owner;
        out[2].type = DB_INT64;
        out[2].i = &token;
        if (sqle_db_exec_rows_by(db, 0, sql, binds, nb, out, 3, 1, &n, &err) == SQLEASE_OK)
            rows = (int64_t)n;
        else
            fprintf(stderr, "take_each: %s\n", err.message);
    } else if (sqle_db_exec(db, sql, binds, nb, NULL, 0, NULL, &rows, &err) != SQLEASE_OK) {
        fprintf(stderr, "take_each: %s\n", err.message);
    }
    free(sql);
    free(binds);
    return rows;
}

/*
 * A row reserved for its target is refused to every other owner by every
 * take, in the database (each statement sent as it is, past the
 * library's own check of the read), until the reservation's deadline;
 * the library does not even send one.  Its target's take matches at
 * once, and clears handoff_to.
 */
static void test_reserved_refused_to_others(void)
{
    const char *t = tu_table();
    const sqle_dialect *d = sqle_db_dialect(db);
    sqlease_lease *holder = lease_of(t, "holder"), *other = lease_of(t, "other");
    sqlease_lease_info info, row;
    sqlease_error err;
    char resolved[SQLEASE_MAX_OWNER + 1];
    db_params p;
    int handed = 0;

    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(holder, &info, &err), SQLEASE_OK);
    /* The hand-over itself, as the supervisor sends it once its work
     * has stopped: reserved for "target" for 1.5 s. */
    CU_ASSERT_EQUAL(sqle_lease_handoff(holder, "target", 1500, 0, resolved, sizeof resolved,
                                       &handed, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(handed, 1);
    CU_ASSERT_STRING_EQUAL(resolved, "target");
    row = row_of(t);
    CU_ASSERT_STRING_EQUAL(row.owner, "");
    CU_ASSERT_STRING_EQUAL(row.last_owner, "holder");
    CU_ASSERT_STRING_EQUAL(row.handoff_to, "target");
    CU_ASSERT_EQUAL(row.reserved, 1);
    CU_ASSERT_EQUAL(row.held, 0);
    CU_ASSERT_EQUAL(row.token, info.token); /* kept: the target's take adds one */
    CU_ASSERT(row.expires_at_ms - row.db_now_ms > 1000 && row.expires_at_ms - row.db_now_ms <= 1500);

    /* The library sends no take for it ... */
    CU_ASSERT_EQUAL(sqlease_lease_acquire(other, &info, &err), SQLEASE_NOT_HELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "reserved for target"));
    CU_ASSERT_EQUAL(sqle_lease_take_bound(other, &row), 0);
    /* ... and the database refuses each take to another owner. */
    memset(&p, 0, sizeof p);
    p.name = "job";
    p.owner = "other";
    p.ttl_ms = TTL;
    p.token = row.token;
    p.version = row.version;
    p.priority = 3;
    p.fire_at_ms = row.db_now_ms;
    CU_ASSERT_EQUAL(run_stmt(t, &d->acquire, &p), 0);
    CU_ASSERT_EQUAL(run_stmt(t, &d->take_watched, &p), 0);
    CU_ASSERT_EQUAL(run_stmt(t, &d->take_fire, &p), 0);
    CU_ASSERT_EQUAL(run_take_each(t, &p), 0);
    CU_ASSERT_EQUAL(row_of(t).version, row.version); /* nothing changed */
    /* The target's take matches: token + 1, no hand-over left. */
    p.owner = "target";
    CU_ASSERT_EQUAL(run_take_each(t, &p), 1);
    info = row_of(t);
    CU_ASSERT_STRING_EQUAL(info.owner, "target");
    CU_ASSERT_EQUAL(info.token, row.token + 1);
    CU_ASSERT_STRING_EQUAL(info.handoff_to, "");
    CU_ASSERT_EQUAL(info.priority, 3);
    CU_ASSERT_EQUAL(info.reserved, 0);
    sqlease_lease_free(holder);
    sqlease_lease_free(other);
    tu_drop(db, t);
}

/* A preemption's request binds its preempt_after, and the statement
 * checks the hold's age on the database's clock as it writes: a younger
 * hold answers 0 rows and keeps no request (the follower's own read may
 * predate a step back of that clock); an operator's (0) is written. */
static void test_request_checks_the_age(void)
{
    const char *t = tu_table();
    sqlease_lease *holder = lease_of(t, "holder"), *other = lease_of(t, "other");
    sqlease_lease_info info, row;
    sqlease_error err;
    int done = -1;

    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(holder, &info, &err), SQLEASE_OK);
    row = row_of(t);
    /* An hour old at least: not this hold. */
    CU_ASSERT_EQUAL(sqle_lease_request(other, "holder", info.token, "other", 3600000, 0, &done,
                                       &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(done, 0);
    CU_ASSERT_STRING_EQUAL(row_of(t).handoff_to, "");
    CU_ASSERT_EQUAL(row_of(t).version, row.version);
    /* As old as it is now (its own start to the clock read): written. */
    CU_ASSERT_EQUAL(sqle_lease_request(other, "holder", info.token, "other",
                                       row.db_now_ms - row.acquired_at_ms, 0, &done, &err),
                    SQLEASE_OK);
    CU_ASSERT_EQUAL(done, 1);
    CU_ASSERT_STRING_EQUAL(row_of(t).handoff_to, "other");
    CU_ASSERT_EQUAL(row_of(t).version, row.version + 1);
    sqlease_lease_free(holder);
    sqlease_lease_free(other);
    tu_drop(db, t);
}

/* The single take by expiry of another owner is refused until the
 * reservation's deadline, and takes the row after it. */
static void test_reservation_deadline(void)
{
    const char *t = tu_table();
    sqlease_lease *holder = lease_of(t, "holder"), *other = lease_of(t, "other");
    sqlease_lease_info info;
    sqlease_error err;
    char resolved[SQLEASE_MAX_OWNER + 1];
    int handed = 0;
    int64_t at;
    /* Long enough that the second refusal, 300 ms in, still comes
     * before the deadline on a loaded box. */
    const int64_t reserve = 1500;

    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(holder, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqle_lease_handoff(holder, "ghost", reserve, 0, resolved, sizeof resolved,
                                       &handed, &err), SQLEASE_OK);
    at = sqle_mono_ms();
    CU_ASSERT_EQUAL(sqlease_lease_acquire(other, &info, &err), SQLEASE_NOT_HELD);
    sqle_sleep_ms(300);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(other, &info, &err), SQLEASE_NOT_HELD);
    sqle_sleep_ms(reserve - (sqle_mono_ms() - at) + 50);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(other, &info, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(info.owner, "other");
    CU_ASSERT_STRING_EQUAL(row_of(t).handoff_to, "");
    sqlease_lease_free(holder);
    sqlease_lease_free(other);
    tu_drop(db, t);
}

/* The lease started again after a's hand-over: b started, or a again. */
static int restarted_cb(void *arg)
{
    host **ab = arg;

    return events(ab[1]) > 0 || events(ab[0]) > 2;
}

/*
 * A hand-over to a target that is gone: the holder's follower peers do
 * not take the row while it is reserved, and one of them takes it within
 * a retry of the reservation's end; the lease is never held by nobody
 * for a ttl.
 */
static void test_dead_target_free_after_reservation(void)
{
    const char *t = tu_table();
    host a, b;
    sqlease_lease *op;
    sqlease_lease_info req;
    sqlease_error err;
    int64_t reserve = 800, stopped_at;
    host *ab[2];

    running_reset();
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    host_init(&a, "host-a");
    host_init(&b, "host-b");
    ab[0] = &a;
    ab[1] = &b;
    host_start(&a, t, 0, 0, 0, reserve);
    host_start(&b, t, 1, 0, 0, 0);
    op = lease_of(t, "operator");
    CU_ASSERT_EQUAL(sqlease_lease_request_handoff(op, "host-gone", &req, &err), SQLEASE_OK);
    CU_ASSERT_FATAL(await_events(&a, 2, HB + 1000));
    CU_ASSERT_EQUAL(a.value[1], SQLEASE_STOP_HANDOFF);
    stopped_at = a.returned[1];
    /* Awaited on the callbacks, not on the state: a supervisor says it
     * holds as soon as the statement proved it, and its on_started
     * follows from the callback thread a moment later. */
    CU_ASSERT_FATAL(tu_await(restarted_cb, &ab, reserve + 3 * RETRY + 1000));
    /* Whoever took it, not before the reservation passed. */
    {
        host *w = events(&b) > 0 ? &b : &a;
        int k = w == &a ? 2 : 0;
        CU_ASSERT_FATAL(events(w) > k);
        CU_ASSERT(w->at[k] - stopped_at >= reserve - 100);
        CU_ASSERT(w->at[k] - stopped_at <= reserve + 3 * RETRY + 500);
    }
    CU_ASSERT_EQUAL(max_running(), 1);
    sqlease_lease_free(op);
    host_free(&a);
    host_free(&b);
    tu_drop(db, t);
}

/*
 * Priorities: a ready follower of higher priority asks the holder to hand
 * over once it has held for preempt_after_ms, not before; the lease moves
 * to it; a ready follower of the same priority never asks.
 */
static void test_priority_preemption(void)
{
    const char *t = tu_table();
    host a, b, c;
    sqlease_lease_info row;
    int64_t preempt = 1200, taken;

    running_reset();
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    host_init(&a, "host-a");
    host_init(&b, "host-b");
    host_init(&c, "host-c");
    host_start(&a, t, 1, 0, preempt, 0);
    CU_ASSERT_FATAL(holding(&a));
    taken = a.at[0];
    host_start(&b, t, 1, 5, preempt, 0);
    CU_ASSERT_FATAL(await_events(&b, 1, preempt + HB + 2000));
    CU_ASSERT_EQUAL(a.value[1], SQLEASE_STOP_HANDOFF);
    CU_ASSERT(a.at[1] - taken >= preempt - 100);
    CU_ASSERT_EQUAL(b.value[0], a.value[0] + 1);
    row = row_of(t);
    CU_ASSERT_STRING_EQUAL(row.owner, "host-b");
    CU_ASSERT_EQUAL(row.priority, 5);
    /* The same priority as the holder: never. */
    host_start(&c, t, 1, 5, preempt, 0);
    sqle_sleep_ms(2 * preempt + HB);
    CU_ASSERT(holding(&b));
    CU_ASSERT_EQUAL(events(&c), 0);
    CU_ASSERT_EQUAL(row_of(t).token, row.token);
    /* Nor does a, of lower priority. */
    CU_ASSERT_EQUAL(events(&a), 2);
    CU_ASSERT_EQUAL(max_running(), 1);
    host_free(&c);
    host_free(&b);
    host_free(&a);
    tu_drop(db, t);
}

/* Many leases of one host renewed in one statement: a request on one of
 * them refuses its renew there too (on MySQL and MariaDB the count comes
 * back short and the read of the live holds calls it not live), it alone
 * stops, and the others renew on with their tokens. */
static void test_batched_renew_refuses_request(void)
{
    enum { N = 4, VICTIM = 2 };
    const char *t = tu_table();
    const char *names[N] = {"job-0", "job-1", "job-2", "job-3"};
    host h[N];
    sqlease_db *one = tu_open();
    sqlease_lease *op;
    sqlease_lease_info req;
    sqlease_state st;
    sqlease_error err;
    sqlease_options o;
    int i;

    running_reset();
    CU_ASSERT_PTR_NOT_NULL_FATAL(one);
    CU_ASSERT_EQUAL_FATAL(sqlease_migrate(db, t, names, N, &err), SQLEASE_OK);
    for (i = 0; i < N; i++) {
        memset(&h[i], 0, sizeof h[i]);
        sqle_mutex_init(&h[i].m);
        tu_options(&o, t, names[i], "batch-host", TTL, HB, DL, RETRY);
        o.on_started = on_started;
        o.on_stopped = on_stopped;
        o.userdata = &h[i];
        CU_ASSERT_EQUAL_FATAL(sqlease_supervisor_start(&h[i].sup, one, &o, &err), SQLEASE_OK);
        CU_ASSERT_FATAL(holding(&h[i]));
    }
    tu_options(&o, t, names[VICTIM], "operator", TTL, HB, DL, RETRY);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&op, db, &o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_request_handoff(op, "nobody", &req, &err), SQLEASE_OK);
    CU_ASSERT_FATAL(await_events(&h[VICTIM], 2, HB + 1000));
    CU_ASSERT_EQUAL(h[VICTIM].value[1], SQLEASE_STOP_HANDOFF);
    sqle_sleep_ms(2 * HB);
    for (i = 0; i < N; i++) {
        if (i == VICTIM)
            continue;
        CU_ASSERT_EQUAL(events(&h[i]), 1);
        CU_ASSERT_EQUAL(sqlease_supervisor_state(h[i].sup, &st), SQLEASE_OK);
        CU_ASSERT_EQUAL(st.holding, 1);
        CU_ASSERT_EQUAL(st.token, h[i].value[0]);
        CU_ASSERT_EQUAL(st.losses, 0);
    }
    CU_ASSERT_EQUAL(sqlease_supervisor_state(h[VICTIM].sup, &st), SQLEASE_OK);
    CU_ASSERT_EQUAL(st.handoffs, 1);
    for (i = 0; i < N; i++) {
        sqlease_supervisor_free(h[i].sup);
        sqle_mutex_destroy(&h[i].m);
    }
    sqlease_lease_free(op);
    sqlease_db_close(one);
    tu_drop(db, t);
}

/* The single renew and the batched renew answer a requested hold alike:
 * not held (the hold is not renewed), the others renewed. */
static void test_single_and_batched_renew_agree(void)
{
    enum { N = 3 };
    const char *t = tu_table();
    const char *names[N] = {"r-0", "r-1", "r-2"};
    sqlease_lease *l[N], *op;
    sqlease_lease_info info, req;
    sqlease_options o;
    sqlease_error err;
    sqle_each each[N];
    int i, round;

    CU_ASSERT_EQUAL_FATAL(sqlease_migrate(db, t, names, N, &err), SQLEASE_OK);
    for (round = 0; round < 2; round++) {
        for (i = 0; i < N; i++) {
            tu_options(&o, t, names[i], "renewer", TTL, HB, DL, RETRY);
            CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&l[i], db, &o, &err), SQLEASE_OK);
            CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(l[i], &info, &err), SQLEASE_OK);
        }
        tu_options(&o, t, names[1], "operator", TTL, HB, DL, RETRY);
        CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&op, db, &o, &err), SQLEASE_OK);
        CU_ASSERT_EQUAL(sqlease_lease_request_handoff(op, "*", &req, &err), SQLEASE_OK);
        CU_ASSERT_STRING_EQUAL(req.handoff_to, "*");
        if (round == 0) {
            /* One renew each. */
            for (i = 0; i < N; i++)
                CU_ASSERT_EQUAL(sqlease_lease_acquire(l[i], &info, &err),
                                i == 1 ? SQLEASE_NOT_HELD : SQLEASE_OK);
        } else {
            /* One renew for the three. */
            memset(each, 0, sizeof each);
            for (i = 0; i < N; i++)
                each[i].lease = l[i];
            CU_ASSERT_EQUAL(sqle_lease_renew_each(each, N, 0, &err), SQLEASE_OK);
            for (i = 0; i < N; i++)
                CU_ASSERT_EQUAL(each[i].rc, i == 1 ? SQLEASE_NOT_HELD : SQLEASE_OK);
        }
        /* The requested row is still that hold's, request and all. */
        CU_ASSERT_EQUAL(sqlease_lease_status(op, &info, &err), SQLEASE_OK);
        CU_ASSERT_STRING_EQUAL(info.owner, "renewer");
        CU_ASSERT_EQUAL(info.held, 1);
        CU_ASSERT_STRING_EQUAL(info.handoff_to, "*");
        for (i = 0; i < N; i++) {
            sqlease_lease_release(l[i], NULL, &err);
            sqlease_lease_free(l[i]);
        }
        sqlease_lease_free(op);
    }
    tu_drop(db, t);
}

/*
 * The ready rows: each ready follower's, best first (highest priority,
 * then seen most recently); a stopped one's row is left free and taken by
 * the next start instead of a new one.
 */
static void test_ready_rows(void)
{
    const char *t = tu_table();
    host a, b, c;
    ready_seen r;
    int64_t before = 0;
    sqlease_error err;

    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    host_init(&a, "host-a");
    host_init(&b, "host-b");
    host_init(&c, "host-c");
    host_start(&a, t, 1, 1, 0, 0);
    host_start(&b, t, 1, 9, 0, 0);
    host_start(&c, t, 1, 4, 0, 0);
    r = ready_of(t);
    CU_ASSERT_EQUAL_FATAL(r.n, 3);
    CU_ASSERT_STRING_EQUAL(r.owner[0], "host-b");
    CU_ASSERT_EQUAL(r.priority[0], 9);
    CU_ASSERT_STRING_EQUAL(r.owner[1], "host-c");
    CU_ASSERT_STRING_EQUAL(r.owner[2], "host-a");
    CU_ASSERT(r.seen_ago[0] >= 0 && r.seen_ago[0] <= HB + 500);
    {
        sqlease_state st;
        CU_ASSERT_EQUAL(sqlease_supervisor_state(c.sup, &st), SQLEASE_OK);
        CU_ASSERT_EQUAL(st.ready, 1);
        CU_ASSERT_EQUAL(st.priority, 4);
    }
    /* c stops: its row is free, and the next start takes it. */
    CU_ASSERT_EQUAL(sqlease_supervisor_stop(c.sup, &err), SQLEASE_OK);
    r = ready_of(t);
    CU_ASSERT_EQUAL(r.n, 2);
    {
        char sql[256];
        db_out out;
        int has_row = 0;
        memset(&out, 0, sizeof out);
        out.type = DB_INT64;
        out.i = &before;
        snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM %s", t);
        CU_ASSERT_EQUAL(sqle_db_exec(db, sql, NULL, 0, &out, 1, &has_row, NULL, &err),
                        SQLEASE_OK);
        host_free(&c);
        host_init(&c, "host-c2");
        host_start(&c, t, 1, 2, 0, 0);
        r = ready_of(t);
        CU_ASSERT_EQUAL(r.n, 3);
        {
            int64_t after = 0;
            out.i = &after;
            CU_ASSERT_EQUAL(sqle_db_exec(db, sql, NULL, 0, &out, 1, &has_row, NULL, &err),
                            SQLEASE_OK);
            CU_ASSERT_EQUAL(after, before);
        }
    }
    /* A priority changed: its ready row says so at once. */
    CU_ASSERT_EQUAL(sqlease_supervisor_set_priority(a.sup, 20, &err), SQLEASE_OK);
    r = ready_of(t);
    CU_ASSERT_EQUAL_FATAL(r.n, 3);
    CU_ASSERT_STRING_EQUAL(r.owner[0], "host-a");
    CU_ASSERT_EQUAL(r.priority[0], 20);
    CU_ASSERT_EQUAL(sqlease_supervisor_set_priority(a.sup, SQLEASE_PRIORITY_MAX + 1, &err),
                    SQLEASE_EINVAL);
    host_free(&a);
    host_free(&b);
    host_free(&c);
    tu_drop(db, t);
}

/*
 * sqlease_supervisor_handoff: to the best ready follower (the highest
 * priority), then to a named one; with no ready follower, nothing
 * changes.  A stop with hand-over on hands the hold to the best ready
 * follower instead of releasing it.
 */
static void test_supervisor_handoff_and_stop(void)
{
    const char *t = tu_table();
    host a, b, c;
    sqlease_error err;
    sqlease_lease_info row;
    int64_t stop_at, asked;

    running_reset();
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    host_init(&a, "host-a");
    host_init(&b, "host-b");
    host_init(&c, "host-c");
    host_start(&a, t, 1, 0, 0, 0);
    CU_ASSERT_FATAL(holding(&a));
    /* Alone: nobody to hand over to. */
    CU_ASSERT_EQUAL(sqlease_supervisor_handoff(a.sup, NULL, &err), SQLEASE_NO_FOLLOWER);
    CU_ASSERT(holding(&a));
    CU_ASSERT_EQUAL(events(&a), 1);
    CU_ASSERT_EQUAL(sqlease_supervisor_handoff(b.sup, NULL, &err), SQLEASE_EINVAL);

    host_start(&b, t, 1, 3, 0, 0);
    host_start(&c, t, 1, 1, 0, 0);
    CU_ASSERT_EQUAL(sqlease_supervisor_handoff(b.sup, NULL, &err), SQLEASE_NOT_HELD);
    asked = sqle_mono_ms();
    CU_ASSERT_EQUAL(sqlease_supervisor_handoff(a.sup, NULL, &err), SQLEASE_OK);
    /* The work runs on for its lead (a retry and a fast read), long
     * enough for b to have read the request: b then takes within a fast
     * read of the hand-over, not a retry. */
    CU_ASSERT_EQUAL(events(&a), 1);
    CU_ASSERT_FATAL(await_events(&b, 1, 2000));
    CU_ASSERT_EQUAL(a.value[1], SQLEASE_STOP_HANDOFF);
    CU_ASSERT(a.at[1] - asked >= RETRY);
    CU_ASSERT(b.at[0] - a.returned[1] <= 200);
    CU_ASSERT_EQUAL(events(&c), 0);
    /* To a named one, of lower priority. */
    CU_ASSERT_EQUAL(sqlease_supervisor_handoff(b.sup, "host-c", &err), SQLEASE_OK);
    CU_ASSERT_FATAL(await_events(&c, 1, 2000));
    CU_ASSERT_EQUAL(c.value[0], b.value[0] + 1);
    /* The stop of c hands it to the best ready one left (b, priority 3). */
    stop_at = sqle_mono_ms();
    CU_ASSERT_EQUAL(sqlease_supervisor_stop(c.sup, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(c.value[1], SQLEASE_STOP_HANDOFF);
    CU_ASSERT_FATAL(await_events(&b, 3, 2000));
    CU_ASSERT_EQUAL(b.value[2], c.value[0] + 1);
    CU_ASSERT(b.at[2] - stop_at <= 600);
    row = row_of(t);
    CU_ASSERT_STRING_EQUAL(row.owner, "host-b");
    CU_ASSERT_STRING_EQUAL(row.last_owner, "host-c");
    CU_ASSERT_EQUAL(max_running(), 1);
    host_free(&c);
    host_free(&b);
    host_free(&a);
    tu_drop(db, t);
}

/* Whether the ready rows of t list `owner`. */
static int is_ready(const char *t, const char *owner)
{
    ready_seen r = ready_of(t);
    int i;

    for (i = 0; i < r.n; i++)
        if (strcmp(r.owner[i], owner) == 0)
            return 1;
    return 0;
}

typedef struct ready_arg {
    const char *t, *owner;
} ready_arg;

static int is_ready_cb(void *arg)
{
    ready_arg *r = arg;
    return is_ready(r->t, r->owner);
}

/*
 * At the default timings (ttl 30 s: a heartbeat of 10 s, a retry of 2 s),
 * with hand-over on, a request to a ready follower moves the lease within
 * about a second, not a heartbeat and a retry: the holder renews every
 * SQLE_HANDOFF_WATCH_MS (so it sees the request within that), its lead is
 * that and a fast read, and the target reads the row that often too.
 * Expected about 2 x 250 + 50 ms and the statements; the bound allows a
 * loaded machine (without the watch it was up to 12 s).
 */
static void test_request_at_default_timing(void)
{
    const char *t = tu_table();
    host a, b;
    sqlease_lease *op;
    sqlease_lease_info req, row;
    sqlease_error err;
    ready_arg ra;
    int64_t asked, took;

    running_reset();
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    host_init(&a, "host-a");
    host_init(&b, "host-b");
    host_start_timed(&a, t, 30000, 10000, 20000, 2000, 1, 0, 0, 0);
    CU_ASSERT_FATAL(holding(&a));
    host_start_timed(&b, t, 30000, 10000, 20000, 2000, 1, 0, 0, 0);
    ra.t = t;
    ra.owner = "host-b";
    CU_ASSERT_FATAL(tu_await(is_ready_cb, &ra, 5000));
    /* Anywhere in b's read interval and a's renew interval. */
    sqle_sleep_ms(137);

    op = lease_of(t, "operator");
    asked = sqle_mono_ms();
    CU_ASSERT_EQUAL(sqlease_lease_request_handoff(op, "host-b", &req, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(req.owner, "host-a");
    CU_ASSERT_FATAL(await_events(&b, 1, 5000));
    took = b.at[0] - asked;
    CU_ASSERT(took >= SQLE_HANDOFF_WATCH_MS); /* the lead, at least */
    CU_ASSERT(took <= 1500);
    if (took > 1500)
        fprintf(stderr, "transfer at the default timing took %lld ms\n", (long long)took);
    CU_ASSERT_EQUAL(a.value[1], SQLEASE_STOP_HANDOFF);
    CU_ASSERT(b.at[0] >= a.returned[1]);
    CU_ASSERT_EQUAL(b.value[0], req.token + 1);
    row = row_of(t);
    CU_ASSERT_STRING_EQUAL(row.owner, "host-b");
    CU_ASSERT_EQUAL(max_running(), 1);
    sqlease_lease_free(op);
    host_free(&a);
    host_free(&b);
    tu_drop(db, t);
}

/* A request's answers: not held on a free row, withdrawn when the holder
 * has not answered yet (a bare lease that renews no more), refused for a
 * bad target. */
static void test_request_answers_and_cancel(void)
{
    const char *t = tu_table();
    sqlease_lease *holder = lease_of(t, "holder"), *op = lease_of(t, "operator");
    sqlease_lease_info info, req;
    sqlease_error err;
    int cancelled = -1;

    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_request_handoff(op, "x", &req, &err), SQLEASE_NOT_HELD);
    CU_ASSERT_EQUAL(sqlease_lease_request_handoff(op, "", &req, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_lease_request_handoff(op, "a\nb", &req, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(holder, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_request_handoff(op, NULL, &req, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(req.handoff_to, "*");
    CU_ASSERT_STRING_EQUAL(row_of(t).handoff_to, "*");
    CU_ASSERT_EQUAL(sqlease_lease_cancel_handoff(op, &req, &cancelled, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(cancelled, 1);
    CU_ASSERT_STRING_EQUAL(row_of(t).handoff_to, "");
    /* The hold renews again once the request is gone. */
    CU_ASSERT_EQUAL(sqlease_lease_acquire(holder, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, req.token);
    /* A release clears a request. */
    CU_ASSERT_EQUAL(sqlease_lease_request_handoff(op, "y", &req, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_release(holder, NULL, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(row_of(t).handoff_to, "");
    CU_ASSERT_EQUAL(sqlease_lease_cancel_handoff(op, NULL, NULL, &err), SQLEASE_EINVAL);
    sqlease_lease_free(holder);
    sqlease_lease_free(op);
    tu_drop(db, t);
}

/* migrate adds the hand-over's columns to a table made before them,
 * keeping its row's hold and token. */
static void test_migrate_adds_columns(void)
{
    const char *t = tu_table();
    char sql[600];
    sqlease_lease_info info;
    sqlease_error err;

    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (name VARCHAR(64) NOT NULL PRIMARY KEY, "
             "owner VARCHAR(255) NOT NULL DEFAULT '', acquired_at_ms BIGINT NOT NULL DEFAULT 0, "
             "expires_at_ms BIGINT NOT NULL DEFAULT 0, token BIGINT NOT NULL DEFAULT 0, "
             "version BIGINT NOT NULL DEFAULT 0, data VARCHAR(1024) NULL, "
             "ttl_ms BIGINT NOT NULL DEFAULT 0, last_owner VARCHAR(255) NOT NULL DEFAULT '', "
             "fire_at_ms BIGINT NOT NULL DEFAULT 0)", t);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, NULL), SQLEASE_OK);
    snprintf(sql, sizeof sql, "INSERT INTO %s (name, owner, expires_at_ms, token, version) "
             "VALUES ('job', 'old', 9000000000000, 41, 3)", t);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, NULL), SQLEASE_OK);
    CU_ASSERT_EQUAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    CU_ASSERT_EQUAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    info = row_of(t);
    CU_ASSERT_STRING_EQUAL(info.owner, "old");
    CU_ASSERT_EQUAL(info.token, 41);
    CU_ASSERT_STRING_EQUAL(info.handoff_to, "");
    CU_ASSERT_EQUAL(info.priority, 0);
    (void)err;
    tu_drop(db, t);
}

static void add(void)
{
    CU_pSuite s = CU_add_suite("handoff", NULL, NULL);
    CU_add_test(s, "a request moves the lease once on_stopped returned, token + 1",
                test_request_moves_after_on_stopped);
    CU_add_test(s, "a reserved row is refused to others by every take",
                test_reserved_refused_to_others);
    CU_add_test(s, "a reservation ends at its deadline", test_reservation_deadline);
    CU_add_test(s, "a preemption's request checks the hold's age as it writes",
                test_request_checks_the_age);
    CU_add_test(s, "a dead target: free again after the reservation",
                test_dead_target_free_after_reservation);
    CU_add_test(s, "a higher priority preempts after preempt_after, an equal one never",
                test_priority_preemption);
    CU_add_test(s, "the batched renew refuses a requested hold, the others renew",
                test_batched_renew_refuses_request);
    CU_add_test(s, "the single and the batched renew refuse a request alike",
                test_single_and_batched_renew_agree);
    CU_add_test(s, "ready rows: best first, reused, priority changed", test_ready_rows);
    CU_add_test(s, "sqlease_supervisor_handoff and a stop that hands over",
                test_supervisor_handoff_and_stop);
    CU_add_test(s, "a request's answers, and its withdrawal", test_request_answers_and_cancel);
    CU_add_test(s, "at the default ttl a request moves the lease within a second",
                test_request_at_default_timing);
    CU_add_test(s, "migrate adds the hand-over's columns", test_migrate_adds_columns);
}

int main(void)
{
    int rc;

    sqle_mutex_init(&g_m);
    db = tu_open();
    if (db == NULL)
        return 2;
    rc = tu_main(add);
    sqlease_db_close(db);
    tu_cleanup();
    return rc;
}
