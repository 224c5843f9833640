/*
 * test_supervisor.c -- the supervisor's rules against a real database:
 * synchronous first acquire, strict start/stop alternation across a loss
 * and a re-acquire, the watchdog stopping work while a statement hangs,
 * errors that are not losses, late answers that start nothing, and a
 * graceful handover within one retry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"
#include "testutil.h"

static sqlease_db *db;

/* What the callbacks saw, in order. */
#define MAX_EVENTS 64
typedef struct recorder {
    sqle_mutex m;
    int n;
    char kind[MAX_EVENTS];        /* 'S' started, 'T' stopped */
    int64_t value[MAX_EVENTS];    /* token, or stop reason */
    int64_t at[MAX_EVENTS];       /* mono ms */
    int running;
    int overlap;                  /* a start while running, or stop while not */
    sqlease_supervisor *self;     /* for the re-entry test */
    int reentry_rc;
    int shared;                   /* count in g_holders (one lease, many supervisors) */
    int64_t stop_sleep_ms;        /* on_stopped takes this long (a slow stop) */
    int64_t stopped_returned;     /* mono ms the last on_stopped returned */
} recorder;

/* Supervisors of one lease whose recorders are `shared`: how many run
 * their work at once, and the most that ever did. */
static sqle_mutex g_holders_m;
static int g_holders, g_max_holders;

static void holders_reset(void)
{
    sqle_mutex_lock(&g_holders_m);
    g_holders = g_max_holders = 0;
    sqle_mutex_unlock(&g_holders_m);
}

static int max_holders(void)
{
    int n;
    sqle_mutex_lock(&g_holders_m);
    n = g_max_holders;
    sqle_mutex_unlock(&g_holders_m);
    return n;
}

static void rec_init(recorder *r)
{
    memset(r, 0, sizeof *r);
    sqle_mutex_init(&r->m);
    r->reentry_rc = -1;
}

static void on_started(void *ud, int64_t token)
{
    recorder *r = ud;
    if (r->shared) {
        sqle_mutex_lock(&g_holders_m);
        if (++g_holders > g_max_holders)
            g_max_holders = g_holders;
        sqle_mutex_unlock(&g_holders_m);
    }
    sqle_mutex_lock(&r->m);
    if (r->running)
        r->overlap = 1;
    r->running = 1;
    if (r->n < MAX_EVENTS) {
        r->kind[r->n] = 'S';
        r->value[r->n] = token;
        r->at[r->n] = sqle_mono_ms();
        r->n++;
    }
    sqle_mutex_unlock(&r->m);
}

static void on_stopped(void *ud, int reason)
{
    recorder *r = ud;
    sqle_mutex_lock(&r->m);
    if (!r->running)
        r->overlap = 1;
    r->running = 0;
    if (r->n < MAX_EVENTS) {
        r->kind[r->n] = 'T';
        r->value[r->n] = reason;
        r->at[r->n] = sqle_mono_ms();
        r->n++;
    }
    sqle_mutex_unlock(&r->m);
    if (r->stop_sleep_ms > 0)
        sqle_sleep_ms(r->stop_sleep_ms);
    sqle_mutex_lock(&r->m);
    r->stopped_returned = sqle_mono_ms();
    sqle_mutex_unlock(&r->m);
    if (r->shared) {
        sqle_mutex_lock(&g_holders_m);
        g_holders--;
        sqle_mutex_unlock(&g_holders_m);
    }
}

static int rec_count(recorder *r)
{
    int n;
    sqle_mutex_lock(&r->m);
    n = r->n;
    sqle_mutex_unlock(&r->m);
    return n;
}

typedef struct { recorder *r; int n; } want;
static int has_events(void *arg)
{
    want *w = arg;
    return rec_count(w->r) >= w->n;
}

static int await_events(recorder *r, int n, int64_t timeout)
{
    want w;
    w.r = r;
    w.n = n;
    return tu_await(has_events, &w, timeout);
}

static sqlease_supervisor *start(sqlease_db *on, const char *t, const char *owner,
                                 recorder *r, int64_t ttl, int64_t hb, int64_t dl, int64_t retry)
{
    sqlease_options o;
    sqlease_error err;
    sqlease_supervisor *s = NULL;
    int rc;

    tu_options(&o, t, "job", owner, ttl, hb, dl, retry);
    o.on_started = on_started;
    o.on_stopped = on_stopped;
    o.userdata = r;
    rc = sqlease_supervisor_start(&s, on, &o, &err);
    if (rc != SQLEASE_OK)
        fprintf(stderr, "supervisor_start: %s\n", err.message);
    CU_ASSERT_EQUAL(rc, SQLEASE_OK);
    return s;
}

/* The token of the free row `name` before its first take (migrate seeds
 * it from the database clock). */
static int64_t seed_of(sqlease_db *on, const char *t, const char *name)
{
    sqlease_options o;
    sqlease_lease *probe = NULL;
    sqlease_lease_info info;
    sqlease_error err;

    tu_options(&o, t, name, "probe", 3000, 500, 1500, 250);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&probe, on, &o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_status(probe, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.held, 0);
    CU_ASSERT(info.token > 1600000000000LL);
    sqlease_lease_free(probe);
    return info.token;
}

static void test_first_acquire_synchronous(void)
{
    const char *t = tu_table();
    recorder r;
    sqlease_supervisor *s;
    sqlease_state st;
    sqlease_lease_info info;
    sqlease_lease *probe = NULL;
    sqlease_options o;
    sqlease_error err;
    int64_t seed;

    rec_init(&r);
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    seed = seed_of(db, t, "job");
    s = start(db, t, "sup-a", &r, 3000, 500, 1500, 250);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    /* Already running when start returns. */
    CU_ASSERT_EQUAL(rec_count(&r), 1);
    CU_ASSERT_EQUAL(r.kind[0], 'S');
    CU_ASSERT_EQUAL(r.value[0], seed + 1);
    CU_ASSERT_EQUAL(sqlease_supervisor_state(s, &st), SQLEASE_OK);
    CU_ASSERT_EQUAL(st.holding, 1);
    CU_ASSERT_EQUAL(st.token, seed + 1);
    CU_ASSERT_STRING_EQUAL(st.owner, "sup-a");
    CU_ASSERT(st.deadline_in_ms > 0 && st.deadline_in_ms <= 1500);
    CU_ASSERT_EQUAL(sqlease_supervisor_health(s, &err), SQLEASE_OK);

    CU_ASSERT_EQUAL(sqlease_supervisor_stop(s, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(rec_count(&r), 2);
    CU_ASSERT_EQUAL(r.kind[1], 'T');
    CU_ASSERT_EQUAL(r.value[1], SQLEASE_STOP_SHUTDOWN);
    CU_ASSERT_EQUAL(sqlease_supervisor_stop(s, &err), SQLEASE_OK); /* idempotent */
    CU_ASSERT_EQUAL(rec_count(&r), 2);

    tu_options(&o, t, "job", "probe", 3000, 500, 1500, 250);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&probe, db, &o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_status(probe, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.held, 0); /* released at stop */
    CU_ASSERT_EQUAL(info.token, seed + 1);
    sqlease_lease_free(probe);
    sqlease_supervisor_free(s);
    CU_ASSERT_EQUAL(r.overlap, 0);
    tu_drop(db, t);
}

static void test_alternation_across_loss(void)
{
    const char *t = tu_table();
    recorder r;
    sqlease_supervisor *s;
    sqlease_lease *admin = NULL, *other = NULL;
    sqlease_lease_info info;
    sqlease_options o;
    sqlease_error err;
    int released = 0, i;
    int64_t seed;
    char line[128];

    rec_init(&r);
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    seed = seed_of(db, t, "job");
    s = start(db, t, "sup-a", &r, 2000, 200, 800, 100);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(rec_count(&r), 1);

    /* An admin clears the row and another owner takes it: a loss. */
    tu_options(&o, t, "job", "other", 30000, 5000, 10000, 1000);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&other, db, &o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&admin, db, &o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_release_force(admin, &released, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(other, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, seed + 2);
    CU_ASSERT_FATAL(await_events(&r, 2, 3000));
    CU_ASSERT_EQUAL(r.kind[1], 'T');
    CU_ASSERT_EQUAL(r.value[1], SQLEASE_STOP_LOST);
    /* The log line names the lease, the owner and the token it lost. */
    snprintf(line, sizeof line, "lease job owner sup-a token %lld: stopped the work: the hold "
             "is gone", (long long)(seed + 1));
    CU_ASSERT(tu_await_log(line, 3000));

    /* The other owner releases: the supervisor takes it afresh. */
    CU_ASSERT_EQUAL(sqlease_lease_release(other, &released, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(released, 1);
    CU_ASSERT_FATAL(await_events(&r, 3, 3000));
    CU_ASSERT_EQUAL(r.kind[2], 'S');
    CU_ASSERT_EQUAL(r.value[2], seed + 3);

    CU_ASSERT_EQUAL(sqlease_supervisor_stop(s, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(rec_count(&r), 4);
    for (i = 0; i < rec_count(&r); i++)
        CU_ASSERT_EQUAL(r.kind[i], i % 2 == 0 ? 'S' : 'T');
    CU_ASSERT_EQUAL(r.overlap, 0);
    {
        sqlease_state st;
        sqlease_supervisor_state(s, &st);
        CU_ASSERT_EQUAL(st.takes, 2);
        CU_ASSERT_EQUAL(st.losses, 1);
    }
    sqlease_supervisor_free(s);
    sqlease_lease_free(admin);
    sqlease_lease_free(other);
    tu_drop(db, t);
}

typedef struct { tu_faulty *f; int n; } hung_arg;
static int is_hung(void *arg)
{
    hung_arg *h = arg;
    return tu_fault_hung(h->f) >= h->n;
}

static void test_watchdog_stops_during_hung_statement(void)
{
    const char *t = tu_table();
    sqlease_db *fdb = NULL;
    tu_faulty *f = tu_faulty_open(&fdb);
    recorder r;
    sqlease_supervisor *s;
    sqlease_error err;
    int64_t hang_at;
    const int64_t deadline = 800;
    hung_arg h;
    int64_t seed;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    rec_init(&r);
    CU_ASSERT_EQUAL_FATAL(tu_migrate(fdb, t, "job"), SQLEASE_OK);
    seed = seed_of(fdb, t, "job");
    s = start(fdb, t, "sup-a", &r, 2000, 200, deadline, 100);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(rec_count(&r), 1);

    /* Every statement from now on hangs.  The last proof was sent before
     * this moment, so the work must stop by hang_at + deadline. */
    hang_at = sqle_mono_ms();
    tu_fault_set(f, TU_FAULT_HANG, 0);
    CU_ASSERT_FATAL(await_events(&r, 2, 3 * deadline));
    CU_ASSERT_EQUAL(r.kind[1], 'T');
    CU_ASSERT_EQUAL(r.value[1], SQLEASE_STOP_DEADLINE);
    CU_ASSERT(r.at[1] <= hang_at + deadline + 100);
    h.f = f;
    h.n = 1;
    /* ...and it stopped while the heartbeat was still stuck. */
    CU_ASSERT(tu_await(is_hung, &h, 1000));
    CU_ASSERT_EQUAL(sqlease_supervisor_health(s, &err), SQLEASE_OK);

    tu_fault_set(f, TU_FAULT_NONE, 0);
    /* Back: the row was still ours, but the work that ran under the
     * first token was stopped, so the next start is a new hold with a new
     * token. */
    CU_ASSERT(await_events(&r, 3, 3000));
    CU_ASSERT_EQUAL(r.kind[2], 'S');
    CU_ASSERT_EQUAL(r.value[2], seed + 2);
    sqlease_supervisor_free(s);
    CU_ASSERT_EQUAL(r.overlap, 0);
    tu_drop(fdb, t);
    sqlease_db_close(fdb);
    tu_faulty_free(f);
}

/* A statement stuck past the query timeout must not hang shutdown: stop
 * stops the work at once and returns within query timeout + 1 s, the
 * stuck statement and the release it could not send abandoned. */
static void test_stop_bounded_while_statement_hangs(void)
{
    const char *t = tu_table();
    sqlease_db *fdb = NULL;
    tu_faulty *f = tu_faulty_open(&fdb);
    recorder r;
    sqlease_supervisor *s;
    sqlease_error err;
    int64_t t0, took;
    hung_arg h;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    rec_init(&r);
    CU_ASSERT_EQUAL_FATAL(tu_migrate(fdb, t, "job"), SQLEASE_OK);
    s = start(fdb, t, "sup-a", &r, 20000, 200, 10000, 100);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    tu_fault_set(f, TU_FAULT_HANG, 0);
    h.f = f;
    h.n = 1;
    CU_ASSERT_FATAL(tu_await(is_hung, &h, 2000));
    t0 = sqle_mono_ms();
    CU_ASSERT_EQUAL(sqlease_supervisor_stop(s, &err), SQLEASE_ETIMEOUT);
    took = sqle_mono_ms() - t0;
    CU_ASSERT(took >= TU_FAULTY_QUERY_TIMEOUT_MS);
    CU_ASSERT(took <= TU_FAULTY_QUERY_TIMEOUT_MS + 1000);
    /* The work stopped first, at once. */
    CU_ASSERT_EQUAL(rec_count(&r), 2);
    CU_ASSERT_EQUAL(r.value[1], SQLEASE_STOP_SHUTDOWN);
    CU_ASSERT(r.at[1] - t0 <= 100);
    tu_fault_set(f, TU_FAULT_NONE, 0);
    /* Once the statement returns, stopping completes and releases. */
    CU_ASSERT_EQUAL(sqlease_supervisor_stop(s, &err), SQLEASE_OK);
    sqlease_supervisor_free(s);
    CU_ASSERT_EQUAL(rec_count(&r), 2);
    tu_drop(fdb, t);
    sqlease_db_close(fdb);
    tu_faulty_free(f);
}

typedef struct { sqlease_supervisor *s; int rc; } stopper;
static void stop_thread(void *arg)
{
    stopper *st = arg;
    sqlease_error err;
    st->rc = sqlease_supervisor_stop(st->s, &err);
}

/* Two threads stopping one supervisor: one stop, one release, one
 * on_stopped, both told OK. */
static void test_concurrent_stop(void)
{
    const char *t = tu_table();
    recorder r;
    stopper a, b;
    sqle_thread ta, tb;
    int i;

    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    for (i = 0; i < 20; i++) {
        rec_init(&r);
        a.s = b.s = start(db, t, "sup-a", &r, 3000, 500, 1500, 250);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a.s);
        a.rc = b.rc = -1;
        CU_ASSERT_EQUAL_FATAL(sqle_thread_start(&ta, stop_thread, &a), 0);
        CU_ASSERT_EQUAL_FATAL(sqle_thread_start(&tb, stop_thread, &b), 0);
        sqle_thread_join(&ta);
        sqle_thread_join(&tb);
        CU_ASSERT_EQUAL(a.rc, SQLEASE_OK);
        CU_ASSERT_EQUAL(b.rc, SQLEASE_OK);
        CU_ASSERT_EQUAL(rec_count(&r), 2);
        sqlease_supervisor_free(a.s);
    }
    tu_drop(db, t);
}

static void test_error_is_not_loss(void)
{
    const char *t = tu_table();
    sqlease_db *fdb = NULL;
    tu_faulty *f = tu_faulty_open(&fdb);
    recorder r;
    sqlease_supervisor *s;
    sqlease_state st;
    int64_t until, seed;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    rec_init(&r);
    CU_ASSERT_EQUAL_FATAL(tu_migrate(fdb, t, "job"), SQLEASE_OK);
    seed = seed_of(fdb, t, "job");
    s = start(fdb, t, "sup-a", &r, 3000, 300, 1500, 100);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    /* Connection errors for less than deadline - heartbeat. */
    tu_fault_set(f, TU_FAULT_CONNECT, 0);
    until = sqle_mono_ms() + 700;
    while (sqle_mono_ms() < until)
        sqle_sleep_ms(20);
    tu_fault_set(f, TU_FAULT_NONE, 0);
    sqlease_supervisor_state(s, &st);
    CU_ASSERT(st.renew_failures >= 1);
    CU_ASSERT_EQUAL(st.holding, 1);
    CU_ASSERT_EQUAL(st.token, seed + 1);
    CU_ASSERT_EQUAL(rec_count(&r), 1);
    sqlease_supervisor_free(s);
    CU_ASSERT_EQUAL(rec_count(&r), 2);
    CU_ASSERT_EQUAL(r.value[1], SQLEASE_STOP_SHUTDOWN);
    tu_drop(fdb, t);
    sqlease_db_close(fdb);
    tu_faulty_free(f);
}

static void test_late_answer_starts_nothing(void)
{
    const char *t = tu_table();
    sqlease_db *fdb = NULL;
    tu_faulty *f = tu_faulty_open(&fdb);
    recorder r;
    sqlease_supervisor *s;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    rec_init(&r);
    CU_ASSERT_EQUAL_FATAL(tu_migrate(fdb, t, "job"), SQLEASE_OK);
    /* Each statement takes longer than the renew deadline. */
    tu_fault_set(f, TU_FAULT_DELAY, 500);
    s = start(fdb, t, "sup-a", &r, 1000, 150, 400, 100);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(rec_count(&r), 0);
    tu_fault_set(f, TU_FAULT_NONE, 0);
    CU_ASSERT(await_events(&r, 1, 3000));
    CU_ASSERT_EQUAL(r.kind[0], 'S');
    sqlease_supervisor_free(s);
    tu_drop(fdb, t);
    sqlease_db_close(fdb);
    tu_faulty_free(f);
}

static void test_graceful_handover_within_retry(void)
{
    const char *t = tu_table();
    recorder ra, rb;
    sqlease_supervisor *a, *b;
    sqlease_error err;
    const int64_t retry = 200;
    int64_t stopped_at, seed;

    rec_init(&ra);
    rec_init(&rb);
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    seed = seed_of(db, t, "job");
    a = start(db, t, "sup-a", &ra, 3000, 500, 1500, retry);
    b = start(db, t, "sup-b", &rb, 3000, 500, 1500, retry);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(rec_count(&ra), 1);
    CU_ASSERT_EQUAL(rec_count(&rb), 0);
    CU_ASSERT_EQUAL(sqlease_supervisor_stop(a, &err), SQLEASE_OK);
    stopped_at = sqle_mono_ms();
    CU_ASSERT_FATAL(await_events(&rb, 1, 3000));
    CU_ASSERT_EQUAL(rb.value[0], seed + 2);
    CU_ASSERT(rb.at[0] - stopped_at <= retry + 100);
    /* a's work had stopped before b's started. */
    CU_ASSERT(ra.at[1] <= rb.at[0]);
    sqlease_supervisor_free(a);
    sqlease_supervisor_free(b);
    tu_drop(db, t);
}

/*
 * The database's clock steps forward (an NTP step, a VM resumed): every
 * expiry in the table is suddenly in the past, the holder's included,
 * while the holder is alive and working.  Modelled on SQLite by moving
 * the row's expiry 30 s back, which is what the step does to it as the
 * clock reads it.  A waiting supervisor that went by the database's
 * expiry alone took at its next poll while the holder's work still ran
 * (until its next renew failed); one that watches takes only after it
 * has seen the row unchanged for a ttl itself, by which time the holder
 * has stopped.  `by_expiry`: the old rule (take_by_expiry), the control.
 */
static void clock_step_forward(int by_expiry)
{
    const char *t = tu_table();
    recorder ra, rb;
    sqlease_supervisor *a, *b = NULL;
    sqlease_options o;
    sqlease_error err;
    char sql[300];
    int64_t rows = -1, stepped, seed;
    const int64_t ttl = 3000, hb = 500, retry = 100;

    rec_init(&ra);
    rec_init(&rb);
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    seed = seed_of(db, t, "job");
    a = start(db, t, "sup-a", &ra, ttl, hb, 1500, retry);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    tu_options(&o, t, "job", "sup-b", ttl, hb, 1500, retry);
    o.on_started = on_started;
    o.on_stopped = on_stopped;
    o.userdata = &rb;
    o.take_by_expiry = by_expiry;
    CU_ASSERT_EQUAL_FATAL(sqlease_supervisor_start(&b, db, &o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(rec_count(&ra), 1);
    CU_ASSERT_EQUAL(rec_count(&rb), 0);
    sqle_sleep_ms(2 * hb); /* b has read a few versions of a's hold */
    snprintf(sql, sizeof sql, "UPDATE %s SET expires_at_ms = expires_at_ms - 30000", t);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, &rows), SQLEASE_OK);
    stepped = sqle_mono_ms();
    CU_ASSERT_EQUAL(rows, 1);
    CU_ASSERT_FATAL(await_events(&rb, 1, ttl + 3000));
    CU_ASSERT_EQUAL(rb.value[0], seed + 2);
    if (by_expiry) {
        /* At its next poll, while a's work still ran: the overlap the
         * watch prevents. */
        CU_ASSERT(rb.at[0] - stepped <= 3 * retry + 200);
        CU_ASSERT(ra.n < 2 || ra.at[1] > rb.at[0]);
    } else {
        /* a's next renew failed and stopped its work; b took only once it
         * had seen the row unchanged for its ttl (the version last
         * changed at a's last renew, at most a heartbeat before the
         * step). */
        CU_ASSERT_EQUAL(ra.n, 2);
        CU_ASSERT(ra.stopped_returned > 0 && ra.stopped_returned <= rb.at[0]);
        CU_ASSERT(rb.at[0] - stepped >= ttl - hb);
        CU_ASSERT(rb.at[0] - stepped <= ttl + 2 * retry + 500);
        CU_ASSERT_EQUAL(ra.overlap, 0);
        CU_ASSERT_EQUAL(rb.overlap, 0);
    }
    sqlease_supervisor_free(b);
    sqlease_supervisor_free(a);
    tu_drop(db, t);
}

static void test_clock_step_forward_watched(void)
{
    clock_step_forward(0);
}

static void test_clock_step_forward_by_expiry(void)
{
    clock_step_forward(1);
}

static void test_many_supervisors_one_connection(void)
{
    enum { N = 20 };
    const char *t = tu_table();
    const char *names[N];
    char buf[N][16];
    recorder r[N];
    sqlease_supervisor *s[N];
    sqlease_options o;
    sqlease_error err;
    char table[64];
    int i;

    snprintf(table, sizeof table, "%s", t);
    for (i = 0; i < N; i++) {
        snprintf(buf[i], sizeof buf[i], "job-%d", i);
        names[i] = buf[i];
    }
    CU_ASSERT_EQUAL_FATAL(sqlease_migrate(db, table, names, N, &err), SQLEASE_OK);
    for (i = 0; i < N; i++) {
        int64_t seed = seed_of(db, table, names[i]);
        rec_init(&r[i]);
        tu_options(&o, table, names[i], "sup-many", 3000, 500, 1500, 250);
        o.on_started = on_started;
        o.on_stopped = on_stopped;
        o.userdata = &r[i];
        CU_ASSERT_EQUAL_FATAL(sqlease_supervisor_start(&s[i], db, &o, &err), SQLEASE_OK);
        CU_ASSERT_EQUAL(rec_count(&r[i]), 1);
        CU_ASSERT_EQUAL(r[i].value[0], seed + 1);
    }
    for (i = 0; i < N; i++) {
        sqlease_supervisor_free(s[i]);
        CU_ASSERT_EQUAL(rec_count(&r[i]), 2);
    }
    tu_drop(db, table);
}

typedef struct { sqlease_supervisor *s; uint64_t n; } polled_arg;
static int polled(void *arg)
{
    polled_arg *p = arg;
    sqlease_state st;
    return sqlease_supervisor_state(p->s, &st) == SQLEASE_OK && st.statements >= p->n;
}

/* Wait until `s` has sent `more` lease statements beyond what it has sent
 * so far. */
static int await_polls(sqlease_supervisor *s, uint64_t more, int64_t timeout)
{
    polled_arg p;
    sqlease_state st;
    sqlease_supervisor_state(s, &st);
    p.s = s;
    p.n = st.statements + more;
    return tu_await(polled, &p, timeout);
}

/*
 * Two supervisors given one owner id (two `sqlease run --owner X` at once):
 * never both running.  The second waits while the first holds, takes
 * only once the first's hold has expired (its database hung), with a
 * higher token, and the first, back, neither starts again nor frees the
 * second's hold when it stops.
 */
static void test_same_owner_supervisors(void)
{
    const char *t = tu_table();
    sqlease_db *fdb = NULL;
    tu_faulty *f = tu_faulty_open(&fdb);
    recorder ra, rb;
    sqlease_supervisor *a, *b;
    sqlease_options o;
    sqlease_lease *probe = NULL;
    sqlease_lease_info info;
    sqlease_state st;
    sqlease_error err;
    int64_t seed;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    rec_init(&ra);
    rec_init(&rb);
    ra.shared = rb.shared = 1;
    holders_reset();
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    seed = seed_of(db, t, "job");
    a = start(fdb, t, "sup-same", &ra, 2000, 200, 800, 100);
    b = start(db, t, "sup-same", &rb, 2000, 200, 800, 100);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(rec_count(&ra), 1);
    CU_ASSERT_EQUAL(ra.value[0], seed + 1);
    /* b polls (several times) and does not join a's live hold. */
    CU_ASSERT(await_polls(b, 5, 5000));
    CU_ASSERT_EQUAL(rec_count(&rb), 0);
    CU_ASSERT_EQUAL(sqlease_supervisor_state(b, &st), SQLEASE_OK);
    CU_ASSERT_EQUAL(st.holding, 0);

    /* a's database hangs: a stops at its deadline, b takes once the row
     * has expired, with the next token. */
    tu_fault_set(f, TU_FAULT_HANG, 0);
    CU_ASSERT_FATAL(await_events(&ra, 2, 3000));
    CU_ASSERT_EQUAL(ra.value[1], SQLEASE_STOP_DEADLINE);
    CU_ASSERT_FATAL(await_events(&rb, 1, 5000));
    CU_ASSERT_EQUAL(rb.kind[0], 'S');
    CU_ASSERT_EQUAL(rb.value[0], seed + 2);
    CU_ASSERT(rb.at[0] >= ra.at[1]);

    /* a is back: it finds the hold gone and does not start again. */
    tu_fault_set(f, TU_FAULT_NONE, 0);
    CU_ASSERT(await_polls(a, 3, 5000));
    CU_ASSERT_EQUAL(rec_count(&ra), 2);
    /* a stops: its release is scoped to its own hold, not b's. */
    CU_ASSERT_EQUAL(sqlease_supervisor_stop(a, &err), SQLEASE_OK);
    tu_options(&o, t, "job", "probe", 3000, 500, 1500, 250);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&probe, db, &o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_status(probe, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.held, 1);
    CU_ASSERT_STRING_EQUAL(info.owner, "sup-same");
    CU_ASSERT_EQUAL(info.token, seed + 2);
    CU_ASSERT(await_polls(b, 2, 5000));
    CU_ASSERT_EQUAL(sqlease_supervisor_state(b, &st), SQLEASE_OK);
    CU_ASSERT_EQUAL(st.holding, 1);
    CU_ASSERT_EQUAL(st.token, seed + 2);
    CU_ASSERT_EQUAL(rec_count(&rb), 1);
    CU_ASSERT_EQUAL(max_holders(), 1);
    sqlease_supervisor_free(a);
    sqlease_supervisor_free(b);
    CU_ASSERT_EQUAL(max_holders(), 1);
    CU_ASSERT_EQUAL(ra.overlap, 0);
    CU_ASSERT_EQUAL(rb.overlap, 0);
    sqlease_lease_free(probe);
    tu_drop(db, t);
    sqlease_db_close(fdb);
    tu_faulty_free(f);
}

/* Counts the warnings about a failed release of a stale hold, and checks
 * they come at warn level. */
static sqle_mutex g_warn_m;
static int g_release_warnings, g_release_warnings_other_level;

static void counting_sink(void *ud, int level, const char *line)
{
    tu_log_sink(ud, level, line);
    if (strstr(line, "could not release the hold whose work passed its deadline") != NULL) {
        sqle_mutex_lock(&g_warn_m);
        if (level == SQLEASE_LOG_WARN)
            g_release_warnings++;
        else
            g_release_warnings_other_level++;
        sqle_mutex_unlock(&g_warn_m);
    }
}

static int release_warnings(void)
{
    int n;
    sqle_mutex_lock(&g_warn_m);
    n = g_release_warnings;
    sqle_mutex_unlock(&g_warn_m);
    return n;
}

typedef struct { tu_faulty *f; int n; } matched_arg;
static int has_matched(void *arg)
{
    matched_arg *m = arg;
    return tu_fault_matched(m->f, NULL) >= m->n;
}

/* The release SQL of every dialect (and nothing else) decides so whether
 * the row is freed. */
#define RELEASE_SQL "THEN owner ELSE '' END"
/* ...and the renew is scoped to the token and the expiry. */
#define RENEW_SQL "token = ? AND expires_at_ms >"
/* ...and the take's sets the owner and then the expiry. */
#define TAKE_SQL "owner = ?, expires_at_ms"

/*
 * After a deadline stop the row may still be this hold.  When giving it up
 * fails (the release statement times out, the connection drops), the
 * supervisor keeps trying every retry, logs each failure at warn level,
 * and never starts the work again under the token it already ran with:
 * the next start, once the release went through, has a new token.
 */
static void test_deadline_stop_release_fails(void)
{
    const char *t = tu_table();
    sqlease_db *fdb = NULL;
    tu_faulty *f = tu_faulty_open(&fdb);
    recorder r;
    sqlease_supervisor *s = NULL;
    sqlease_options o;
    sqlease_error err;
    matched_arg m;
    int64_t seed;
    int i;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    rec_init(&r);
    sqle_mutex_lock(&g_warn_m);
    g_release_warnings = g_release_warnings_other_level = 0;
    sqle_mutex_unlock(&g_warn_m);
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    seed = seed_of(db, t, "job");
    tu_options(&o, t, "job", "sup-a", 3000, 200, 800, 100);
    o.on_started = on_started;
    o.on_stopped = on_stopped;
    o.userdata = &r;
    o.log = counting_sink;
    CU_ASSERT_EQUAL_FATAL(sqlease_supervisor_start(&s, fdb, &o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(rec_count(&r), 1);
    CU_ASSERT_EQUAL(r.value[0], seed + 1);

    /* The database hangs past the deadline: the work stops. */
    tu_fault_set(f, TU_FAULT_HANG, 0);
    CU_ASSERT_FATAL(await_events(&r, 2, 3000));
    CU_ASSERT_EQUAL(r.value[1], SQLEASE_STOP_DEADLINE);
    /* Back, except that every release fails: the renew in flight proves
     * the row is still this hold, and it cannot be given up. */
    tu_fault_match(f, RELEASE_SQL, TU_FAULT_CONNECT);
    tu_fault_set(f, TU_FAULT_NONE, 0);
    m.f = f;
    m.n = 3;
    CU_ASSERT(tu_await(has_matched, &m, 5000));
    /* Still stopped, and each failure was logged at warn level. */
    CU_ASSERT_EQUAL(rec_count(&r), 2);
    CU_ASSERT(release_warnings() >= 2);
    CU_ASSERT_EQUAL(g_release_warnings_other_level, 0);

    /* The release goes through: the work starts afresh, new token. */
    tu_fault_match(f, NULL, TU_FAULT_NONE);
    CU_ASSERT_FATAL(await_events(&r, 3, 3000));
    CU_ASSERT_EQUAL(r.kind[2], 'S');
    CU_ASSERT_EQUAL(r.value[2], seed + 2);
    CU_ASSERT(tu_await_log("released the hold whose work passed its deadline", 3000));
    sqlease_supervisor_free(s);
    CU_ASSERT_EQUAL(rec_count(&r), 4);
    for (i = 0; i < rec_count(&r); i++)
        CU_ASSERT_EQUAL(r.kind[i], i % 2 == 0 ? 'S' : 'T');
    CU_ASSERT_EQUAL(r.overlap, 0);
    tu_drop(db, t);
    sqlease_db_close(fdb);
    tu_faulty_free(f);
}

typedef struct { tu_faulty *f; int64_t after_ms; } unhang_arg;
static void unhang_later(void *arg)
{
    unhang_arg *u = arg;
    sqle_sleep_ms(u->after_ms);
    tu_fault_match(u->f, NULL, TU_FAULT_NONE);
}

/*
 * The release of a stale hold waits for on_stopped to have returned (the
 * row must stay this hold while the work stops), but holds no callback
 * lock while it runs: a release that hangs does not hold up a stop.
 */
static void test_stale_release_after_on_stopped(void)
{
    const char *t = tu_table();
    sqlease_db *fdb = NULL;
    tu_faulty *f = tu_faulty_open(&fdb);
    recorder r;
    sqlease_supervisor *s;
    sqlease_error err;
    sqle_thread th;
    unhang_arg u;
    hung_arg h;
    matched_arg m;
    int64_t released_at = -1, t0, took;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    rec_init(&r);
    r.stop_sleep_ms = 400;
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    s = start(fdb, t, "sup-a", &r, 5000, 200, 800, 100);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    tu_fault_match(f, RELEASE_SQL, TU_FAULT_NONE);
    tu_fault_set(f, TU_FAULT_HANG, 0);
    CU_ASSERT_FATAL(await_events(&r, 2, 3000));
    CU_ASSERT_EQUAL(r.value[1], SQLEASE_STOP_DEADLINE);
    /* Back while on_stopped is still stopping the work (400 ms). */
    tu_fault_set(f, TU_FAULT_NONE, 0);
    CU_ASSERT_FATAL(await_events(&r, 3, 3000));
    CU_ASSERT_EQUAL(tu_fault_matched(f, &released_at), 1);
    CU_ASSERT(released_at >= r.stopped_returned);
    CU_ASSERT(r.stopped_returned - r.at[1] >= 400);

    /* Now a deadline stop whose release hangs. */
    tu_fault_match(f, RELEASE_SQL, TU_FAULT_HANG);
    tu_fault_set(f, TU_FAULT_HANG, 0);
    CU_ASSERT_FATAL(await_events(&r, 4, 3000));
    tu_fault_set(f, TU_FAULT_NONE, 0);
    m.f = f;
    m.n = 1;
    CU_ASSERT_FATAL(tu_await(has_matched, &m, 3000));
    h.f = f;
    h.n = 1;
    CU_ASSERT_FATAL(tu_await(is_hung, &h, 3000));
    u.f = f;
    u.after_ms = 6000; /* so that the test ends even if stop blocks */
    CU_ASSERT_EQUAL_FATAL(sqle_thread_start(&th, unhang_later, &u), 0);
    t0 = sqle_mono_ms();
    (void)sqlease_supervisor_stop(s, &err);
    took = sqle_mono_ms() - t0;
    if (took > TU_FAULTY_QUERY_TIMEOUT_MS + 2000)
        fprintf(stderr, "stop took %lld ms while a release hung\n", (long long)took);
    CU_ASSERT(took <= TU_FAULTY_QUERY_TIMEOUT_MS + 2000);
    sqle_thread_join(&th);
    sqlease_supervisor_free(s);
    CU_ASSERT_EQUAL(rec_count(&r), 4);
    CU_ASSERT_EQUAL(r.overlap, 0);
    tu_drop(db, t);
    sqlease_db_close(fdb);
    tu_faulty_free(f);
}

/*
 * A renew that finds the hold gone stops the work at once, with
 * SQLEASE_STOP_LOST, even when the take attempted after it fails; the
 * take is tried again at the next retry.
 */
static void test_lost_renew_stops_even_if_take_fails(void)
{
    const char *t = tu_table();
    sqlease_db *fdb = NULL;
    tu_faulty *f = tu_faulty_open(&fdb);
    recorder r;
    sqlease_supervisor *s;
    sqlease_options o;
    sqlease_lease *admin = NULL;
    sqlease_error err;
    const int64_t deadline = 4000;
    int64_t cleared_at, seed;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    rec_init(&r);
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    seed = seed_of(db, t, "job");
    s = start(fdb, t, "sup-a", &r, 8000, 200, deadline, 100);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(rec_count(&r), 1);
    tu_fault_match(f, TAKE_SQL, TU_FAULT_CONNECT);
    tu_options(&o, t, "job", "admin", 30000, 5000, 10000, 1000);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&admin, db, &o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_release_force(admin, NULL, &err), SQLEASE_OK);
    cleared_at = sqle_mono_ms();
    CU_ASSERT_FATAL(await_events(&r, 2, deadline / 2));
    CU_ASSERT_EQUAL(r.value[1], SQLEASE_STOP_LOST);
    CU_ASSERT(r.at[1] - cleared_at < deadline / 2);
    CU_ASSERT(tu_fault_matched(f, NULL) >= 1);
    /* The take works again: a new hold, a new token. */
    tu_fault_match(f, NULL, TU_FAULT_NONE);
    CU_ASSERT_FATAL(await_events(&r, 3, 3000));
    CU_ASSERT_EQUAL(r.kind[2], 'S');
    CU_ASSERT_EQUAL(r.value[2], seed + 2);
    sqlease_supervisor_free(s);
    CU_ASSERT_EQUAL(r.overlap, 0);
    sqlease_lease_free(admin);
    tu_drop(db, t);
    sqlease_db_close(fdb);
    tu_faulty_free(f);
}

static recorder reentry;
static void on_stopped_reenter(void *ud, int reason)
{
    recorder *r = ud;
    sqlease_error err;
    (void)reason;
    if (r->self != NULL)
        r->reentry_rc = sqlease_supervisor_stop(r->self, &err);
}

static void test_bad_start(void)
{
    const char *t = tu_table();
    sqlease_options o;
    sqlease_error err;
    sqlease_supervisor *s = (sqlease_supervisor *)1;
    recorder r;
    char table[64];

    snprintf(table, sizeof table, "%s", t);
    rec_init(&r);
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, table, "job"), SQLEASE_OK);
    tu_options(&o, table, "ghost", "sup-a", 3000, 500, 1500, 250);
    o.on_started = on_started;
    o.on_stopped = on_stopped;
    o.userdata = &r;
    CU_ASSERT_EQUAL(sqlease_supervisor_start(&s, db, &o, &err), SQLEASE_ENOROW);
    CU_ASSERT_PTR_NULL(s);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "sqlease migrate"));
    CU_ASSERT_EQUAL(rec_count(&r), 0);
    tu_options(&o, table, "job", "sup-a", 3000, 2000, 1500, 250);
    CU_ASSERT_EQUAL(sqlease_supervisor_start(&s, db, &o, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_supervisor_start(&s, NULL, &o, &err), SQLEASE_EINVAL);

    /* A callback that stops its own supervisor is refused, not deadlocked. */
    rec_init(&reentry);
    tu_options(&o, table, "job", "sup-a", 3000, 500, 1500, 250);
    o.on_stopped = on_stopped_reenter;
    o.userdata = &reentry;
    CU_ASSERT_EQUAL_FATAL(sqlease_supervisor_start(&s, db, &o, &err), SQLEASE_OK);
    reentry.self = s;
    CU_ASSERT_EQUAL(sqlease_supervisor_stop(s, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(reentry.reentry_rc, SQLEASE_ESTATE);
    sqlease_supervisor_free(s);
    tu_drop(db, table);
}

/* Counts lines logged at warn level or worse. */
static sqle_mutex g_loud_m;
static int g_loud;

static void loud_sink(void *ud, int level, const char *line)
{
    tu_log_sink(ud, level, line);
    if (level <= SQLEASE_LOG_WARN) {
        sqle_mutex_lock(&g_loud_m);
        g_loud++;
        sqle_mutex_unlock(&g_loud_m);
        fprintf(stderr, "\n  logged: %s\n", line);
    }
}

static int loud_lines(void)
{
    int n;
    sqle_mutex_lock(&g_loud_m);
    n = g_loud;
    sqle_mutex_unlock(&g_loud_m);
    return n;
}

/*
 * A stop that comes while a renew is in flight is the ordinary way to
 * shut down: the work stops at once, the renew's answer (a proof of the
 * hold just stopped) starts nothing, and nothing is logged as a warning.
 * (A clean `run --min-hold` used to end with "hold proven too late (or
 * stopping)" whenever its stop met a renew.)
 */
static void test_stop_during_renew_is_quiet(void)
{
    const char *t = tu_table();
    sqlease_db *fdb = NULL;
    tu_faulty *f = tu_faulty_open(&fdb);
    recorder r;
    sqlease_supervisor *s = NULL;
    sqlease_options o;
    sqlease_error err;
    sqle_thread th;
    stopper sa;
    hung_arg h;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    rec_init(&r);
    sqle_mutex_lock(&g_loud_m);
    g_loud = 0;
    sqle_mutex_unlock(&g_loud_m);
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    tu_options(&o, t, "job", "sup-a", 5000, 200, 2000, 100);
    o.on_started = on_started;
    o.on_stopped = on_stopped;
    o.userdata = &r;
    o.log = loud_sink;
    o.log_level = SQLEASE_LOG_DEBUG;
    CU_ASSERT_EQUAL_FATAL(sqlease_supervisor_start(&s, fdb, &o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(rec_count(&r), 1);
    /* The next renew hangs in the driver; stop meanwhile. */
    tu_fault_match(f, RENEW_SQL, TU_FAULT_HANG);
    h.f = f;
    h.n = 1;
    CU_ASSERT_FATAL(tu_await(is_hung, &h, 3000));
    sa.s = s;
    sa.rc = -1;
    CU_ASSERT_EQUAL_FATAL(sqle_thread_start(&th, stop_thread, &sa), 0);
    CU_ASSERT(await_events(&r, 2, 3000));
    /* The renew answers now: it proves the hold that was just stopped. */
    tu_fault_match(f, NULL, TU_FAULT_NONE);
    sqle_thread_join(&th);
    CU_ASSERT_EQUAL(sa.rc, SQLEASE_OK);
    CU_ASSERT_EQUAL(rec_count(&r), 2);
    CU_ASSERT_EQUAL(r.value[1], SQLEASE_STOP_SHUTDOWN);
    CU_ASSERT(tu_log_has("released the lease"));
    CU_ASSERT_EQUAL(loud_lines(), 0);
    sqlease_supervisor_free(s);
    CU_ASSERT_EQUAL(r.overlap, 0);
    tu_drop(db, t);
    sqlease_db_close(fdb);
    tu_faulty_free(f);
}

/*
 * With a minimum hold, the supervisor's release at stop keeps the row held
 * by its hold until acquired_at + min_hold (database clock); a second
 * supervisor takes it only after that, with the next token.
 */
static void test_stop_keeps_min_hold(void)
{
    const char *t = tu_table();
    recorder ra, rb;
    sqlease_supervisor *a = NULL, *b = NULL;
    sqlease_options o;
    sqlease_lease *probe = NULL;
    sqlease_lease_info st;
    sqlease_error err;
    int64_t seed, t0;

    rec_init(&ra);
    rec_init(&rb);
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    seed = seed_of(db, t, "job");
    tu_options(&o, t, "job", "sup-a", 5000, 200, 2000, 100);
    o.on_started = on_started;
    o.on_stopped = on_stopped;
    o.userdata = &ra;
    o.min_hold_ms = 1500;
    CU_ASSERT_EQUAL_FATAL(sqlease_supervisor_start(&a, db, &o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(rec_count(&ra), 1);
    CU_ASSERT_EQUAL(sqlease_supervisor_stop(a, &err), SQLEASE_OK);
    t0 = sqle_mono_ms();
    tu_options(&o, t, "job", "probe", 5000, 200, 2000, 100);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&probe, db, &o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_status(probe, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.owner, "sup-a");
    CU_ASSERT_EQUAL(st.held, 1);
    CU_ASSERT_EQUAL(st.token, seed + 1);
    CU_ASSERT_EQUAL(st.expires_at_ms, st.acquired_at_ms + 1500);
    CU_ASSERT(tu_log_has("minimum hold"));
    /* A successor polls every 100 ms and takes once the hold runs out
     * by the database's clock, and once it has itself seen the row
     * unchanged for its ttl (5 s): it started just now, so the later. */
    b = start(db, t, "sup-b", &rb, 5000, 200, 2000, 100);
    CU_ASSERT_EQUAL(rec_count(&rb), 0);
    CU_ASSERT_FATAL(await_events(&rb, 1, 9000));
    CU_ASSERT_EQUAL(rb.value[0], seed + 2);
    CU_ASSERT(rb.at[0] - t0 >= 4900);
    CU_ASSERT(rb.at[0] - t0 < 8000);
    sqlease_supervisor_free(b);
    sqlease_supervisor_free(a);
    sqlease_lease_free(probe);
    tu_drop(db, t);
}


/* ---- many leases on one handle: batched statements, shared threads ---- */

/* Migrate `n` names "part-<i>" of table t into names/buf. */
static void many_names(const char *t, int n, char (*buf)[16], const char **names)
{
    sqlease_error err;
    int i;

    for (i = 0; i < n; i++) {
        snprintf(buf[i], 16, "part-%d", i);
        names[i] = buf[i];
    }
    CU_ASSERT_EQUAL_FATAL(sqlease_migrate(db, t, names, (size_t)n, &err), SQLEASE_OK);
}

static sqlease_supervisor *start_named(const char *t, const char *name, const char *owner,
                                       recorder *r, int64_t hb, int64_t retry)
{
    sqlease_options o;
    sqlease_error err;
    sqlease_supervisor *s = NULL;

    tu_options(&o, t, name, owner, 3000, hb, 1500, retry);
    o.on_started = on_started;
    o.on_stopped = on_stopped;
    o.userdata = r;
    CU_ASSERT_EQUAL(sqlease_supervisor_start(&s, db, &o, &err), SQLEASE_OK);
    return s;
}

typedef struct { sqlease_supervisor **s; int n; uint64_t *base; uint64_t more; } acq_arg;
/* Every supervisor has answered `more` acquires beyond base[i]. */
static int all_acquired(void *arg)
{
    acq_arg *a = arg;
    sqlease_state st;
    int i;

    for (i = 0; i < a->n; i++)
        if (sqlease_supervisor_state(a->s[i], &st) != SQLEASE_OK || st.acquires < a->base[i] + a->more)
            return 0;
    return 1;
}

/*
 * 64 holders of one table and ttl on one handle renew with one statement
 * per heartbeat (per chunk), not 64: over BEATS heartbeats the handle
 * sends at most 4 statements per round (a round may split in two when
 * takes were spread out; MariaDB adds a read only when a renew falls
 * short), while one statement per lease would be 64 per round.  Every
 * hold keeps its token.
 */
static void test_batched_renews(void)
{
    enum { N = 64, BEATS = 6 };
    char t[64], buf[N][16];
    const char *names[N];
    recorder r[N];
    sqlease_supervisor *s[N];
    uint64_t base[N], before, sent;
    sqlease_state st;
    acq_arg a;
    int i;

    snprintf(t, sizeof t, "%s", tu_table());
    many_names(t, N, buf, names);
    for (i = 0; i < N; i++) {
        rec_init(&r[i]);
        s[i] = start_named(t, names[i], "batch-owner", &r[i], 300, 100);
        CU_ASSERT_FATAL(s[i] != NULL);
        CU_ASSERT_EQUAL(rec_count(&r[i]), 1);
    }
    for (i = 0; i < N; i++) {
        CU_ASSERT_EQUAL(sqlease_supervisor_state(s[i], &st), SQLEASE_OK);
        base[i] = st.acquires;
    }
    before = sqlease_db_statements(db);
    a.s = s;
    a.n = N;
    a.base = base;
    a.more = BEATS;
    CU_ASSERT(tu_await(all_acquired, &a, BEATS * 300 * 3));
    sent = sqlease_db_statements(db) - before;
    printf("\n    %d holders, %d heartbeats: %llu statements\n", N, BEATS,
           (unsigned long long)sent);
    CU_ASSERT(sent <= 4 * (BEATS + 1));
    for (i = 0; i < N; i++) {
        CU_ASSERT_EQUAL(sqlease_supervisor_state(s[i], &st), SQLEASE_OK);
        CU_ASSERT_EQUAL(st.holding, 1);
        CU_ASSERT_EQUAL(st.token, r[i].value[0]);
        CU_ASSERT_EQUAL(st.losses, 0);
    }
    for (i = 0; i < N; i++) {
        sqlease_supervisor_free(s[i]);
        CU_ASSERT_EQUAL(rec_count(&r[i]), 2);
        CU_ASSERT_EQUAL(r[i].value[1], SQLEASE_STOP_SHUTDOWN);
    }
    tu_drop(db, t);
}

/* A recorder whose on_stopped first reads its row on another handle: the
 * release must not have come before it returned. */
typedef struct probe_rec {
    recorder r;                 /* first: the callbacks' userdata */
    sqlease_lease *probe;
    int64_t token;              /* the hold on_started was given */
    int still_held;             /* on_stopped saw the row still this hold */
} probe_rec;

static void on_started_probe(void *ud, int64_t token)
{
    ((probe_rec *)ud)->token = token;
    on_started(ud, token);
}

static void on_stopped_probe(void *ud, int reason)
{
    probe_rec *p = ud;
    sqlease_lease_info info;
    sqlease_error err;

    p->still_held = sqlease_lease_status(p->probe, &info, &err) == SQLEASE_OK && info.held &&
                    strcmp(info.owner, "batch-owner") == 0 && info.token == p->token;
    on_stopped(ud, reason);
}

/*
 * Many supervisors started and stopped at once: the first acquires go as
 * one read and one take of the free rows, the releases as one statement,
 * each lease answered on its own.  Two rows are held by a rival's live
 * supervisors and one by an owner that died (expired, never released):
 * those three are never the batch's (misses that keep following, the
 * dead one watched for a ttl); the others start with the seed's token +
 * 1, stop after their on_stopped returned (which still sees the row
 * held), and their rows are free afterwards, exactly those.  Started again,
 * they get the next token.
 */
/*
 * A lease of start_each whose row is missing (SQLEASE_ENOROW) is freed
 * only once the runner no longer uses it.  Its first answer made it a
 * follower, and the runner may gather and poll it while an earlier
 * lease's on_started still runs on the caller's thread: here that
 * on_started waits until the poll hangs in the database, and the call
 * must not free the lease under it (ASan reports the use after free the
 * fix removed; the plain build checks the answers).
 */
static tu_faulty *g_hang_f;
static void on_started_hang_poll(void *ud, int64_t token)
{
    hung_arg h;
    on_started(ud, token);
    h.f = g_hang_f;
    h.n = 1;
    tu_fault_set(g_hang_f, TU_FAULT_HANG, 0);
    (void)tu_await(is_hung, &h, 2000);
}

static void test_start_each_missing_row_polled(void)
{
    const char *t = tu_table();
    sqlease_db *fdb = NULL;
    tu_faulty *f = tu_faulty_open(&fdb);
    sqlease_options o[2];
    const sqlease_options *op[2] = { &o[0], &o[1] };
    sqlease_supervisor *s[2] = { NULL, NULL };
    int rcs[2] = { -1, -1 };
    sqlease_error err;
    recorder r;
    hung_arg h;
    int64_t t0, took;
    int rc;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    rec_init(&r);
    CU_ASSERT_EQUAL_FATAL(tu_migrate(fdb, t, "job"), SQLEASE_OK);
    g_hang_f = f;
    /* Two groups (another ttl): "job" is taken, "no-row" has no row. */
    tu_options(&o[0], t, "job", "sup-a", 3000, 500, 1500, 100);
    o[0].on_started = on_started_hang_poll;
    o[0].on_stopped = on_stopped;
    o[0].userdata = &r;
    tu_options(&o[1], t, "no-row", "sup-a", 4000, 500, 1500, 100);
    /* The hung poll is abandoned at its bound, and the call returns. */
    t0 = sqle_mono_ms();
    rc = sqlease_supervisor_start_each(s, 2, fdb, op, rcs, &err);
    took = sqle_mono_ms() - t0;
    CU_ASSERT(took <= TU_FAULTY_QUERY_TIMEOUT_MS + 3000);
    h.f = f;
    h.n = 1;
    /* The poll of "no-row" was in the database when on_started returned. */
    CU_ASSERT(tu_await(is_hung, &h, 10));
    CU_ASSERT_EQUAL(rc, SQLEASE_ENOROW);
    CU_ASSERT_EQUAL(rcs[0], SQLEASE_OK);
    CU_ASSERT_EQUAL(rcs[1], SQLEASE_ENOROW);
    CU_ASSERT_PTR_NOT_NULL(s[0]);
    CU_ASSERT_PTR_NULL(s[1]);
    /* "job" started (its renews hang too: it may have stopped since). */
    CU_ASSERT(rec_count(&r) >= 1);
    CU_ASSERT_EQUAL(r.kind[0], 'S');
    tu_fault_set(f, TU_FAULT_NONE, 0);
    sqlease_supervisor_free(s[0]);
    CU_ASSERT_EQUAL(r.overlap, 0);
    tu_drop(fdb, t);
    sqlease_db_close(fdb);
    tu_faulty_free(f);
}

static void test_start_each_stop_each(void)
{
    enum { N = 48 };
    const int rival_at[2] = { 5, 17 };
    const int dead = 30;
    char t[64], buf[N][16], sql[256];
    const char *names[N];
    probe_rec *pr;
    recorder rr[2];
    sqlease_options o[N];
    const sqlease_options *op[N];
    sqlease_supervisor *s[N], *rival[2];
    sqlease_db *db2 = tu_open();
    int64_t seed[N], rows = -1;
    int rcs[N], i, k, mine;
    sqlease_lease_info info;
    sqlease_state st;
    sqlease_error err;
    uint64_t before;

    CU_ASSERT_PTR_NOT_NULL_FATAL(db2);
    pr = calloc(N, sizeof *pr);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pr);
    snprintf(t, sizeof t, "%s", tu_table());
    many_names(t, N, buf, names);
    for (i = 0; i < N; i++)
        seed[i] = seed_of(db, t, names[i]);
    for (k = 0; k < 2; k++) {
        sqlease_options ro;
        rec_init(&rr[k]);
        tu_options(&ro, t, names[rival_at[k]], "rival", 3000, 500, 1500, 1000);
        ro.on_started = on_started;
        ro.on_stopped = on_stopped;
        ro.userdata = &rr[k];
        CU_ASSERT_EQUAL_FATAL(sqlease_supervisor_start(&rival[k], db2, &ro, &err), SQLEASE_OK);
        CU_ASSERT_EQUAL(rec_count(&rr[k]), 1);
    }
    snprintf(sql, sizeof sql, "UPDATE %s SET owner = 'dead', token = token + 1, "
             "expires_at_ms = 1 WHERE name = '%s'", t, names[dead]);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db2, sql, &rows), SQLEASE_OK);
    CU_ASSERT_EQUAL(rows, 1);
    for (i = 0; i < N; i++) {
        sqlease_options po;
        rec_init(&pr[i].r);
        tu_options(&po, t, names[i], "probe", 3000, 500, 1500, 1000);
        CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&pr[i].probe, db2, &po, &err), SQLEASE_OK);
        tu_options(&o[i], t, names[i], "batch-owner", 3000, 500, 1500, 1000);
        o[i].on_started = on_started_probe;
        o[i].on_stopped = on_stopped_probe;
        o[i].userdata = &pr[i];
        op[i] = &o[i];
    }

    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL_FATAL(sqlease_supervisor_start_each(s, N, db, op, rcs, &err), SQLEASE_OK);
    /* One read and one take for all 48 (a renew of the runner's may slip
     * in); one each would be 96. */
    printf("\n    start_each of %d: %llu statements\n", N,
           (unsigned long long)(sqlease_db_statements(db) - before));
    CU_ASSERT(sqlease_db_statements(db) - before <= 3);
    mine = 0;
    for (i = 0; i < N; i++) {
        int other = i == dead || i == rival_at[0] || i == rival_at[1];
        CU_ASSERT_EQUAL(rcs[i], SQLEASE_OK);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s[i]);
        CU_ASSERT_EQUAL(sqlease_supervisor_state(s[i], &st), SQLEASE_OK);
        CU_ASSERT_EQUAL(st.holding, !other);
        /* on_started ran on this thread, before the call returned. */
        CU_ASSERT_EQUAL(rec_count(&pr[i].r), other ? 0 : 1);
        if (!other) {
            CU_ASSERT_EQUAL(st.token, seed[i] + 1);
            CU_ASSERT_EQUAL(pr[i].r.value[0], seed[i] + 1);
            mine++;
        }
    }
    CU_ASSERT_EQUAL(mine, N - 3);
    for (k = 0; k < 2; k++) {
        CU_ASSERT_EQUAL(sqlease_supervisor_state(rival[k], &st), SQLEASE_OK);
        CU_ASSERT_EQUAL(st.holding, 1);
        CU_ASSERT_EQUAL(rec_count(&rr[k]), 1);
    }
    CU_ASSERT_EQUAL(sqlease_lease_status(pr[dead].probe, &info, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(info.owner, "dead");

    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqlease_supervisor_stop_each(s, N, rcs, &err), SQLEASE_OK);
    printf("    stop_each of %d: %llu statements\n", N,
           (unsigned long long)(sqlease_db_statements(db) - before));
    CU_ASSERT(sqlease_db_statements(db) - before <= 2);
    for (i = 0; i < N; i++) {
        int other = i == dead || i == rival_at[0] || i == rival_at[1];
        CU_ASSERT_EQUAL(rcs[i], SQLEASE_OK);
        CU_ASSERT_EQUAL(sqlease_lease_status(pr[i].probe, &info, &err), SQLEASE_OK);
        if (other) {
            CU_ASSERT_STRING_EQUAL(info.owner, i == dead ? "dead" : "rival");
            CU_ASSERT_EQUAL(rec_count(&pr[i].r), 0);
            continue;
        }
        CU_ASSERT_EQUAL(rec_count(&pr[i].r), 2);
        CU_ASSERT_EQUAL(pr[i].r.value[1], SQLEASE_STOP_SHUTDOWN);
        CU_ASSERT_EQUAL(pr[i].r.overlap, 0);
        CU_ASSERT_EQUAL(pr[i].still_held, 1);
        CU_ASSERT_STRING_EQUAL(info.owner, "");
        CU_ASSERT_EQUAL(info.token, seed[i] + 1);
    }
    /* Stopped already: freeing sends nothing more. */
    before = sqlease_db_statements(db);
    for (i = 0; i < N; i++)
        sqlease_supervisor_free(s[i]);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 0);
    for (k = 0; k < 2; k++)
        CU_ASSERT_EQUAL(rec_count(&rr[k]), 1);

    /* Started again: the next token. */
    CU_ASSERT_EQUAL(sqlease_supervisor_start_each(s, 4, db, op, rcs, &err), SQLEASE_OK);
    for (i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(sqlease_supervisor_state(s[i], &st), SQLEASE_OK);
        CU_ASSERT_EQUAL(st.holding, 1);
        CU_ASSERT_EQUAL(st.token, seed[i] + 2);
    }
    CU_ASSERT_EQUAL(sqlease_supervisor_stop_each(s, 4, NULL, &err), SQLEASE_OK);
    for (i = 0; i < 4; i++)
        sqlease_supervisor_free(s[i]);

    for (k = 0; k < 2; k++)
        sqlease_supervisor_free(rival[k]);
    for (i = 0; i < N; i++)
        sqlease_lease_free(pr[i].probe);
    free(pr);
    sqlease_db_close(db2);
    tu_drop(db, t);
}

/*
 * A batch in which one hold was taken from under its holder (an admin's
 * UPDATE: another owner, the next token) is a loss for that lease alone:
 * it stops with SQLEASE_STOP_LOST within a heartbeat and a bit, and the
 * others keep running with their tokens.
 */
static void test_batch_loses_one(void)
{
    enum { N = 12, VICTIM = 5 };
    char t[64], buf[N][16], sql[256];
    const char *names[N];
    recorder r[N];
    sqlease_supervisor *s[N];
    sqlease_state st;
    int64_t rows = -1, at;
    int i;

    snprintf(t, sizeof t, "%s", tu_table());
    many_names(t, N, buf, names);
    for (i = 0; i < N; i++) {
        rec_init(&r[i]);
        s[i] = start_named(t, names[i], "batch-owner", &r[i], 200, 100);
        CU_ASSERT_FATAL(s[i] != NULL);
    }
    snprintf(sql, sizeof sql,
             "UPDATE %s SET owner = 'thief', token = token + 1 WHERE name = 'part-%d'", t,
             VICTIM);
    at = sqle_mono_ms();
    CU_ASSERT_EQUAL(tu_sql(db, sql, &rows), SQLEASE_OK);
    CU_ASSERT_EQUAL(rows, 1);
    CU_ASSERT_FATAL(await_events(&r[VICTIM], 2, 800));
    CU_ASSERT_EQUAL(r[VICTIM].kind[1], 'T');
    CU_ASSERT_EQUAL(r[VICTIM].value[1], SQLEASE_STOP_LOST);
    CU_ASSERT(r[VICTIM].at[1] - at <= 800);
    /* Two more rounds: the others still hold, with the tokens they began with. */
    sqle_sleep_ms(450);
    for (i = 0; i < N; i++) {
        if (i == VICTIM)
            continue;
        CU_ASSERT_EQUAL(rec_count(&r[i]), 1);
        CU_ASSERT_EQUAL(sqlease_supervisor_state(s[i], &st), SQLEASE_OK);
        CU_ASSERT_EQUAL(st.holding, 1);
        CU_ASSERT_EQUAL(st.token, r[i].value[0]);
    }
    for (i = 0; i < N; i++)
        sqlease_supervisor_free(s[i]);
    tu_drop(db, t);
}

typedef struct { recorder *r; int n; int events; } all_arg;
static int all_have(void *arg)
{
    all_arg *a = arg;
    int i;

    for (i = 0; i < a->n; i++)
        if (rec_count(&a->r[i]) < a->events)
            return 0;
    return 1;
}

/*
 * 32 followers waiting on leases another handle holds poll with one read
 * per retry round, not one each: over ROUNDS retries at most 28
 * statements (32 per round without batching).  When the holder lets go
 * of every lease, every follower starts within two retries and a bit.
 */
static void test_batched_followers(void)
{
    enum { N = 32, ROUNDS = 6, RETRY = 200 };
    char t[64], buf[N][16];
    const char *names[N];
    recorder r[N];
    sqlease_supervisor *s[N];
    sqlease_lease *held[N];
    sqlease_db *other = tu_open();
    sqlease_options o;
    sqlease_error err;
    uint64_t before, sent;
    int64_t freed;
    all_arg a;
    int i;

    CU_ASSERT_PTR_NOT_NULL_FATAL(other);
    snprintf(t, sizeof t, "%s", tu_table());
    many_names(t, N, buf, names);
    for (i = 0; i < N; i++) {
        tu_options(&o, t, names[i], "other-holder", 30000, 10000, 20000, 1000);
        CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&held[i], other, &o, &err), SQLEASE_OK);
        CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(held[i], NULL, &err), SQLEASE_OK);
    }
    for (i = 0; i < N; i++) {
        rec_init(&r[i]);
        s[i] = start_named(t, names[i], "follower", &r[i], 100, RETRY);
        CU_ASSERT_FATAL(s[i] != NULL);
        CU_ASSERT_EQUAL(rec_count(&r[i]), 0);
    }
    before = sqlease_db_statements(db);
    sqle_sleep_ms(ROUNDS * RETRY);
    sent = sqlease_db_statements(db) - before;
    printf("\n    %d followers, %d retries: %llu statements\n", N, ROUNDS,
           (unsigned long long)sent);
    CU_ASSERT(sent <= 28);
    CU_ASSERT(sent >= ROUNDS / 2); /* they do poll */
    freed = sqle_mono_ms();
    for (i = 0; i < N; i++)
        CU_ASSERT_EQUAL(sqlease_lease_release(held[i], NULL, &err), SQLEASE_OK);
    a.r = r;
    a.n = N;
    a.events = 1;
    CU_ASSERT(tu_await(all_have, &a, 2 * RETRY + 500 + 2000));
    for (i = 0; i < N; i++) {
        CU_ASSERT_EQUAL(rec_count(&r[i]), 1);
        CU_ASSERT(r[i].at[0] - freed <= 2 * RETRY + 500);
    }
    for (i = 0; i < N; i++) {
        sqlease_supervisor_free(s[i]);
        sqlease_lease_free(held[i]);
    }
    sqlease_db_close(other);
    tu_drop(db, t);
}

/*
 * 32 followers of leases whose holder died (it took them and never
 * renews): each follower's watch runs a ttl on its own clock, and then
 * the runner takes every row with one batched statement bound to the
 * version its read saw, not an UPDATE each.  Over the whole wait that is
 * the start's read, one read per retry round and the take (a few more
 * for rounds that split): at most elapsed / retry + 6 statements, where
 * 32 takes would be 31 more.  Each follower starts with the dead hold's
 * token + 1, and not before a ttl after it was started.
 */
static void test_batched_takes_after_watch(void)
{
    enum { N = 32, TTL = 600, RETRY = 100 };
    char t[64], buf[N][16];
    const char *names[N];
    recorder r[N];
    sqlease_supervisor *s[N];
    sqlease_lease *dead[N];
    sqlease_options o[N];
    const sqlease_options *op[N];
    sqlease_lease_info info;
    sqlease_db *other = tu_open();
    sqlease_error err;
    int64_t tok[N], t0, elapsed;
    uint64_t before, sent;
    all_arg a;
    int i;

    CU_ASSERT_PTR_NOT_NULL_FATAL(other);
    snprintf(t, sizeof t, "%s", tu_table());
    many_names(t, N, buf, names);
    for (i = 0; i < N; i++) {
        tu_options(&o[i], t, names[i], "dead-holder", TTL, 150, 400, RETRY);
        CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&dead[i], other, &o[i], &err), SQLEASE_OK);
        CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(dead[i], &info, &err), SQLEASE_OK);
        tok[i] = info.token;
    }
    for (i = 0; i < N; i++) {
        rec_init(&r[i]);
        tu_options(&o[i], t, names[i], "heir", TTL, 150, 400, RETRY);
        o[i].on_started = on_started;
        o[i].on_stopped = on_stopped;
        o[i].userdata = &r[i];
        op[i] = &o[i];
    }
    before = sqlease_db_statements(db);
    t0 = sqle_mono_ms();
    CU_ASSERT_EQUAL_FATAL(sqlease_supervisor_start_each(s, N, db, op, NULL, &err), SQLEASE_OK);
    a.r = r;
    a.n = N;
    a.events = 1;
    CU_ASSERT(tu_await(all_have, &a, 2 * TTL + 2000));
    elapsed = sqle_mono_ms() - t0;
    sent = sqlease_db_statements(db) - before;
    printf("\n    %d followers of dead holds: all started after %lld ms, %llu statements\n", N,
           (long long)elapsed, (unsigned long long)sent);
    CU_ASSERT(sent <= (uint64_t)(elapsed / RETRY) + 6);
    for (i = 0; i < N; i++) {
        CU_ASSERT_EQUAL(rec_count(&r[i]), 1);
        CU_ASSERT_EQUAL(r[i].kind[0], 'S');
        CU_ASSERT_EQUAL(r[i].value[0], tok[i] + 1);
        CU_ASSERT(r[i].at[0] - t0 >= TTL);
    }
    CU_ASSERT_EQUAL(sqlease_supervisor_stop_each(s, N, NULL, &err), SQLEASE_OK);
    for (i = 0; i < N; i++) {
        sqlease_supervisor_free(s[i]);
        sqlease_lease_free(dead[i]);
    }
    sqlease_db_close(other);
    tu_drop(db, t);
}

/*
 * A slow on_stopped of one lease delays no other lease's stop: both
 * holds are taken from under their holders at once, A's on_stopped takes
 * 2 s, and B's on_stopped still comes within a heartbeat and a bit (the
 * callback pool starts a thread when every one it has is busy).
 */
static void test_slow_stop_delays_no_other(void)
{
    char t[64], buf[2][16], sql[256];
    const char *names[2];
    recorder ra, rb;
    sqlease_supervisor *a, *b;
    int64_t rows = -1, at;

    snprintf(t, sizeof t, "%s", tu_table());
    many_names(t, 2, buf, names);
    rec_init(&ra);
    rec_init(&rb);
    ra.stop_sleep_ms = 2000;
    a = start_named(t, names[0], "slow", &ra, 200, 100);
    b = start_named(t, names[1], "fast", &rb, 200, 100);
    CU_ASSERT_FATAL(a != NULL && b != NULL);
    snprintf(sql, sizeof sql, "UPDATE %s SET owner = 'thief', token = token + 1", t);
    at = sqle_mono_ms();
    CU_ASSERT_EQUAL(tu_sql(db, sql, &rows), SQLEASE_OK);
    CU_ASSERT_EQUAL(rows, 2);
    CU_ASSERT_FATAL(await_events(&ra, 2, 1000));
    CU_ASSERT_FATAL(await_events(&rb, 2, 1000));
    CU_ASSERT_EQUAL(rb.value[1], SQLEASE_STOP_LOST);
    CU_ASSERT(rb.at[1] - at <= 700);
    sqlease_supervisor_free(a);
    sqlease_supervisor_free(b);
    tu_drop(db, t);
}

#ifdef __linux__
#include <dirent.h>
/* Threads of this process now. */
static int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *de;
    int n = 0;

    if (d == NULL)
        return -1;
    while ((de = readdir(d)) != NULL)
        if (de->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

/* Threads do not grow with leases: 200 supervisors on one handle run on
 * the handle's few threads (its statement worker, the runner, the
 * watchdog, the callback pool), not two each. */
static void test_threads_per_handle(void)
{
    enum { N = 200 };
    char t[64], (*buf)[16] = calloc(N, 16);
    const char **names = calloc(N, sizeof *names);
    recorder *r = calloc(N, sizeof *r);
    sqlease_supervisor **s = calloc(N, sizeof *s);
    int i, base, during;

    CU_ASSERT_FATAL(buf != NULL && names != NULL && r != NULL && s != NULL);
    snprintf(t, sizeof t, "%s", tu_table());
    many_names(t, N, buf, names);
    base = thread_count();
    for (i = 0; i < N; i++) {
        rec_init(&r[i]);
        s[i] = start_named(t, names[i], "threads", &r[i], 300, 100);
        CU_ASSERT_FATAL(s[i] != NULL);
    }
    sqle_sleep_ms(700);
    during = thread_count();
    printf("\n    threads: %d before, %d with %d supervisors\n", base, during, N);
    CU_ASSERT(during - base <= 8); /* 3 here; a sanitizer may add its own */
    for (i = 0; i < N; i++)
        sqlease_supervisor_free(s[i]);
    tu_drop(db, t);
    free(buf);
    free(names);
    free(r);
    free(s);
}
#endif

static void add(void)
{
    CU_pSuite s = CU_add_suite("supervisor", NULL, NULL);
    CU_add_test(s, "first acquire is synchronous; stop releases", test_first_acquire_synchronous);
    CU_add_test(s, "start/stop alternate across loss and re-acquire", test_alternation_across_loss);
    CU_add_test(s, "watchdog stops work while a statement hangs",
                test_watchdog_stops_during_hung_statement);
    CU_add_test(s, "an error is not a loss", test_error_is_not_loss);
    CU_add_test(s, "two threads stop one supervisor", test_concurrent_stop);
    CU_add_test(s, "stop is bounded while a statement hangs",
                test_stop_bounded_while_statement_hangs);
    CU_add_test(s, "an answer after its deadline starts nothing", test_late_answer_starts_nothing);
    CU_add_test(s, "graceful shutdown hands over within one retry",
                test_graceful_handover_within_retry);
    CU_add_test(s, "a database clock stepped forward hands no live hold over",
                test_clock_step_forward_watched);
    CU_add_test(s, "the same step without the watch (take_by_expiry): taken at once",
                test_clock_step_forward_by_expiry);
    CU_add_test(s, "many supervisors share one connection", test_many_supervisors_one_connection);
    CU_add_test(s, "bad start: missing row, bad timing, re-entry", test_bad_start);
    CU_add_test(s, "one owner id, two supervisors: never both, no stolen release",
                test_same_owner_supervisors);
    CU_add_test(s, "a failed release after a deadline stop: retried, never the same token",
                test_deadline_stop_release_fails);
    CU_add_test(s, "a stale hold is released after on_stopped, outside the callback lock",
                test_stale_release_after_on_stopped);
    CU_add_test(s, "a lost renew stops the work even if the take fails",
                test_lost_renew_stops_even_if_take_fails);
    CU_add_test(s, "a stop while a renew is in flight logs no warning",
                test_stop_during_renew_is_quiet);
    CU_add_test(s, "a stop with a minimum hold keeps the row until then",
                test_stop_keeps_min_hold);
    CU_add_test(s, "64 holders renew with one statement per heartbeat", test_batched_renews);
    CU_add_test(s, "a batch that loses one lease stops that one alone", test_batch_loses_one);
    CU_add_test(s, "32 followers poll with one read per retry", test_batched_followers);
    CU_add_test(s, "32 followers of dead holds take them with one statement",
                test_batched_takes_after_watch);
    CU_add_test(s, "a slow on_stopped delays no other lease's stop",
                test_slow_stop_delays_no_other);
#ifdef __linux__
    CU_add_test(s, "threads do not grow with supervisors", test_threads_per_handle);
    CU_add_test(s, "start_each frees a lease with no row only once no poll uses it",
                test_start_each_missing_row_polled);
    CU_add_test(s, "48 supervisors started and stopped with a statement or two",
                test_start_each_stop_each);
#endif
}

int main(void)
{
    int rc;
    sqle_mutex_init(&g_holders_m);
    sqle_mutex_init(&g_warn_m);
    sqle_mutex_init(&g_loud_m);
    db = tu_open();
    if (db == NULL)
        return 2;
    rc = tu_main(add);
    sqlease_db_close(db);
    tu_cleanup();
    return rc;
}
