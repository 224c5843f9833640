/*
 * test_overlap.c -- never two holders' work at once, in the interleavings
 * of the engine's threads (runner, watchdog, callback pool) that a slow
 * database or a slow callback makes, against the database under test.
 *
 * Each test builds one shape end to end with real handles: a database
 * made slow by another connection holding a lock (the SQLite file in
 * BEGIN EXCLUSIVE, a row lock in an open transaction on a server), a
 * callback that takes its time, a second owner polling on a connection of
 * its own.  The work of each owner runs from the start of its on_started
 * to the return of its on_stopped, and the tests measure, in ms, how far
 * two owners' work overlapped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"
#include "testutil.h"

/* The take UPDATE of every dialect, and nothing else, contains this. */
#define TAKE_SQL "owner = ?, expires_at_ms"

/* What one owner's callbacks saw. */
typedef struct work {
    sqle_mutex m;
    int starts, stops;
    int64_t token;           /* of the last on_started */
    int64_t started_at;      /* mono ms on_started was called; -1 never */
    int64_t stop_called;     /* mono ms on_stopped was called; -1 never */
    int64_t stop_returned;   /* mono ms on_stopped returned; -1 never */
    int stop_reason;
    int bad_order;           /* a start while running, or a stop while not */
    int running;
    int64_t stop_ms;         /* on_stopped takes this long */
    /* on_holder: the next call after `slow_armed` is set takes slow_ms */
    int slow_armed;
    int64_t slow_ms;
    int64_t slow_began, slow_ended;  /* -1: not yet */
    int holder_calls;
} work;

static void work_init(work *w, int64_t stop_ms)
{
    memset(w, 0, sizeof *w);
    sqle_mutex_init(&w->m);
    w->started_at = w->stop_called = w->stop_returned = -1;
    w->slow_began = w->slow_ended = -1;
    w->stop_ms = stop_ms;
}

static void work_destroy(work *w)
{
    sqle_mutex_destroy(&w->m);
}

static void on_started(void *ud, int64_t token)
{
    work *w = ud;

    sqle_mutex_lock(&w->m);
    if (w->running)
        w->bad_order = 1;
    w->running = 1;
    w->starts++;
    w->token = token;
    w->started_at = sqle_mono_ms();
    sqle_mutex_unlock(&w->m);
}

static void on_stopped(void *ud, int reason)
{
    work *w = ud;
    int64_t ms;

    sqle_mutex_lock(&w->m);
    if (!w->running)
        w->bad_order = 1;
    w->stops++;
    w->stop_reason = reason;
    w->stop_called = sqle_mono_ms();
    ms = w->stop_ms;
    sqle_mutex_unlock(&w->m);
    /* Stopping the work takes this long; it is still running meanwhile. */
    if (ms > 0)
        sqle_sleep_ms(ms);
    sqle_mutex_lock(&w->m);
    w->running = 0;
    w->stop_returned = sqle_mono_ms();
    sqle_mutex_unlock(&w->m);
}

/* A follower's on_holder that connects to the address the holder
 * published: slow once armed (that host just died), quick otherwise. */
static void on_holder(void *ud, const char *owner, int64_t token, const char *data)
{
    work *w = ud;
    int64_t ms = 0;

    (void)owner;
    (void)token;
    (void)data;
    sqle_mutex_lock(&w->m);
    w->holder_calls++;
    if (w->slow_armed && w->slow_began < 0) {
        w->slow_began = sqle_mono_ms();
        ms = w->slow_ms;
    }
    sqle_mutex_unlock(&w->m);
    if (ms > 0) {
        sqle_sleep_ms(ms);
        sqle_mutex_lock(&w->m);
        w->slow_ended = sqle_mono_ms();
        sqle_mutex_unlock(&w->m);
    }
}

static int64_t work_get(work *w, const int64_t *field)
{
    int64_t v;

    sqle_mutex_lock(&w->m);
    v = *field;
    sqle_mutex_unlock(&w->m);
    return v;
}

typedef struct { work *w; const int64_t *field; } field_arg;

static int field_set(void *arg)
{
    field_arg *a = arg;
    return work_get(a->w, a->field) >= 0;
}

/* Wait until one of w's time stamps is set. */
static int await_field(work *w, const int64_t *field, int64_t timeout_ms)
{
    field_arg a;

    a.w = w;
    a.field = field;
    return tu_await(field_set, &a, timeout_ms);
}

static int holding(void *arg)
{
    sqlease_state st;

    return sqlease_supervisor_state((sqlease_supervisor *)arg, &st) == SQLEASE_OK &&
           st.holding;
}

static sqlease_supervisor *start_sup(sqlease_db *db, const char *t, const char *name,
                                     const char *owner, work *w, int64_t ttl, int64_t hb,
                                     int64_t rd, int64_t retry, int with_holder)
{
    sqlease_options o;
    sqlease_error err;
    sqlease_supervisor *s = NULL;
    int rc;

    tu_options(&o, t, name, owner, ttl, hb, rd, retry);
    o.on_started = on_started;
    o.on_stopped = on_stopped;
    if (with_holder)
        o.on_holder = on_holder;
    o.userdata = w;
    rc = sqlease_supervisor_start(&s, db, &o, &err);
    if (rc != SQLEASE_OK)
        fprintf(stderr, "supervisor_start %s/%s: %s\n", name, owner, err.message);
    CU_ASSERT_EQUAL(rc, SQLEASE_OK);
    return rc == SQLEASE_OK ? s : NULL;
}

/*
 * A stale hold is released only once its on_stopped has returned.
 *
 * One handle holds two leases in two groups of the runner's round (ttl
 * 2.5 s and 3 s: the first group's renew is sent first).  Another
 * connection makes the database slow: that renew waits, and the second
 * lease's renew, gathered into the same round, waits behind it on the
 * runner, past its renew deadline.  The watchdog stops the second
 * lease's work; its on_stopped takes 1.5 s (inside ttl - renew_deadline,
 * 2 s).  The lock goes; the round goes on.  A follower on its own
 * connection polls every 100 ms.  The hold must stay the row's until
 * on_stopped has returned: the follower's work starts after that, not
 * while the old work is still being stopped.  (The old holder's own
 * takes are refused, so that it is the follower that takes the lease.)
 */
static void test_stale_release_waits_for_on_stopped(void)
{
    const char *t = tu_table();
    const char *names[2] = {"a", "b"};
    sqlease_db *holder_db = NULL, *follower_db, *locker, *admin;
    tu_faulty *f = tu_faulty_open_qt(&holder_db, 5000);
    sqlease_supervisor *sa = NULL, *sb = NULL, *fb = NULL;
    sqlease_error err;
    work wa, wb, wf;
    int64_t overlap;
    int locked;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    admin = tu_open();
    follower_db = tu_open();
    locker = tu_open();
    CU_ASSERT_FATAL(admin != NULL && follower_db != NULL && locker != NULL);
    CU_ASSERT_EQUAL_FATAL(sqlease_migrate(admin, t, names, 2, &err), SQLEASE_OK);
    work_init(&wa, 0);
    work_init(&wb, 1500);
    work_init(&wf, 0);

    sa = start_sup(holder_db, t, "a", "host-1", &wa, 2500, 400, 2000, 100, 0);
    sb = start_sup(holder_db, t, "b", "host-1", &wb, 3000, 400, 1000, 100, 0);
    fb = start_sup(follower_db, t, "b", "host-2", &wf, 3000, 400, 1000, 100, 0);
    CU_ASSERT_FATAL(sa != NULL && sb != NULL && fb != NULL);
    CU_ASSERT_EQUAL(wa.starts, 1);
    CU_ASSERT_EQUAL(wb.starts, 1);
    CU_ASSERT_EQUAL(wf.starts, 0);
    tu_fault_match(f, TAKE_SQL, TU_FAULT_CONNECT);

    /* The database is slow until b's work is being stopped. */
    locked = tu_lock_begin(locker, t, "a") == SQLEASE_OK;
    CU_ASSERT_FATAL(locked);
    CU_ASSERT(await_field(&wb, &wb.stop_called, 5000));
    CU_ASSERT_EQUAL(tu_lock_end(locker), SQLEASE_OK);
    CU_ASSERT_EQUAL(wb.stop_reason, SQLEASE_STOP_DEADLINE);

    /* The follower takes b: once b's row is free, or expired. */
    CU_ASSERT(await_field(&wf, &wf.started_at, 6000));
    CU_ASSERT(await_field(&wb, &wb.stop_returned, 3000));
    overlap = work_get(&wb, &wb.stop_returned) - work_get(&wf, &wf.started_at);
    fprintf(stderr, "\n  on_stopped of the old holder: %lld ms; the follower started %lld ms "
            "after it was called: overlap %lld ms\n",
            (long long)(work_get(&wb, &wb.stop_returned) - work_get(&wb, &wb.stop_called)),
            (long long)(work_get(&wf, &wf.started_at) - work_get(&wb, &wb.stop_called)),
            (long long)(overlap > 0 ? overlap : 0));
    CU_ASSERT(work_get(&wf, &wf.started_at) >= 0 && overlap <= 0);
    CU_ASSERT_EQUAL(work_get(&wf, &wf.token), work_get(&wb, &wb.token) + 1);
    CU_ASSERT_EQUAL(wa.stops, 0); /* a kept its hold through the slow spell */
    CU_ASSERT_EQUAL(wa.bad_order + wb.bad_order + wf.bad_order, 0);

    tu_fault_match(f, NULL, TU_FAULT_NONE);
    sqlease_supervisor_free(fb);
    sqlease_supervisor_free(sb);
    sqlease_supervisor_free(sa);
    tu_drop(admin, t);
    sqlease_db_close(locker);
    sqlease_db_close(follower_db);
    sqlease_db_close(admin);
    sqlease_db_close(holder_db);
    tu_faulty_free(f);
    work_destroy(&wa);
    work_destroy(&wb);
    work_destroy(&wf);
}

/*
 * An on_started that can only be called after its hold's deadline is
 * never called, and neither is its on_stopped.
 *
 * A follower's on_holder is slow once (5 s: it connects to the address
 * the holder published, and that host just died).  Meanwhile the lease
 * expires and the follower takes it: its on_started waits behind the
 * slow callback.  Its database is gone from then on, so its renews fail,
 * its deadline passes and its row expires; a third owner takes the
 * lease and starts.  When the slow callback returns, the old start must
 * be dropped with its stop, not run on top of the third owner's work.
 */
static void test_late_start_is_dropped(void)
{
    const char *t = tu_table();
    sqlease_db *y_db = NULL, *x_db, *z_db;
    tu_faulty *f = tu_faulty_open_qt(&y_db, 1000);
    sqlease_supervisor *y = NULL, *z = NULL;
    sqlease_lease *x = NULL;
    sqlease_lease_info info;
    sqlease_options o;
    sqlease_state st;
    sqlease_error err;
    work wy, wz;
    char sql[256];
    int64_t y_token = 0;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    x_db = tu_open();
    z_db = tu_open();
    CU_ASSERT_FATAL(x_db != NULL && z_db != NULL);
    CU_ASSERT_EQUAL_FATAL(tu_migrate(x_db, t, "job"), SQLEASE_OK);
    work_init(&wy, 0);
    work_init(&wz, 0);
    wy.slow_ms = 5000;

    /* Host x holds the lease, then dies: it never renews. */
    tu_options(&o, t, "job", "host-x", 1500, 500, 1000, 100);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&x, x_db, &o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(x, &info, &err), SQLEASE_OK);
    y = start_sup(y_db, t, "job", "host-y", &wy, 1500, 300, 900, 150, 1);
    CU_ASSERT_FATAL(y != NULL);
    CU_ASSERT_EQUAL(wy.holder_calls, 1);
    CU_ASSERT_EQUAL(wy.starts, 0);

    /* Host x's hold is handed to its stand-in, x2, which publishes an
     * address of its own (the row as x2's take leaves it, expiry kept):
     * y's next poll reports it, and that on_holder is the slow one. */
    sqle_mutex_lock(&wy.m);
    wy.slow_armed = 1;
    sqle_mutex_unlock(&wy.m);
    snprintf(sql, sizeof sql, "UPDATE %s SET owner = 'host-x2', token = token + 1, "
             "version = version + 1 WHERE name = 'job'", t);
    CU_ASSERT_EQUAL_FATAL(tu_sql(x_db, sql, NULL), SQLEASE_OK);
    CU_ASSERT_FATAL(await_field(&wy, &wy.slow_began, 3000));

    /* The row expires; y takes it while its on_holder is still slow. */
    CU_ASSERT_FATAL(tu_await(holding, y, 4000));
    tu_fault_set(f, TU_FAULT_CONNECT, 0);
    CU_ASSERT_EQUAL(sqlease_supervisor_state(y, &st), SQLEASE_OK);
    y_token = st.token;
    CU_ASSERT_EQUAL(wy.starts, 0);

    /* z takes once y's row expires (y's renews fail), and starts. */
    z = start_sup(z_db, t, "job", "host-z", &wz, 1500, 300, 900, 100, 0);
    CU_ASSERT_FATAL(z != NULL);
    CU_ASSERT(await_field(&wz, &wz.started_at, 4000));
    CU_ASSERT_EQUAL(wz.token, y_token + 1);
    CU_ASSERT(work_get(&wy, &wy.slow_ended) < 0); /* the shape: z started first */

    /* The slow callback returns; a stop waits for y's queue to drain. */
    CU_ASSERT(await_field(&wy, &wy.slow_ended, 6000));
    (void)sqlease_supervisor_stop(y, &err);
    if (wy.starts > 0)
        fprintf(stderr, "\n  y's on_started(token %lld) ran %lld ms after z had started "
                "with token %lld, while z's work ran\n", (long long)wy.token,
                (long long)(wy.started_at - wz.started_at), (long long)wz.token);
    CU_ASSERT_EQUAL(wy.starts, 0);
    CU_ASSERT_EQUAL(wy.stops, 0);
    CU_ASSERT_EQUAL(wz.starts, 1);
    CU_ASSERT_EQUAL(wz.stops, 0);
    CU_ASSERT_EQUAL(wy.bad_order + wz.bad_order, 0);

    sqlease_supervisor_free(z);
    sqlease_supervisor_free(y);
    sqlease_lease_free(x);
    tu_drop(x_db, t);
    sqlease_db_close(z_db);
    sqlease_db_close(x_db);
    sqlease_db_close(y_db);
    tu_faulty_free(f);
    work_destroy(&wy);
    work_destroy(&wz);
}

/* A log sink that blocks, once armed, on the lines that narrate the work
 * (as a write to a stderr that nobody drains would), until released or
 * until a bound so that the test always ends. */
static sqle_mutex g_sink_m;
static sqle_cond g_sink_cv;
static int g_sink_armed, g_sink_open;

static void blocking_sink(void *ud, int level, const char *line)
{
    int64_t until = sqle_mono_ms() + 4000;

    tu_log_sink(ud, level, line);
    if (strstr(line, "the work") == NULL)
        return;
    sqle_mutex_lock(&g_sink_m);
    while (g_sink_armed && !g_sink_open && sqle_mono_ms() < until)
        sqle_cond_wait_until(&g_sink_cv, &g_sink_m, until);
    sqle_mutex_unlock(&g_sink_m);
}

static void sink_set(int armed, int open)
{
    sqle_mutex_lock(&g_sink_m);
    g_sink_armed = armed;
    g_sink_open = open;
    sqle_cond_broadcast(&g_sink_cv);
    sqle_mutex_unlock(&g_sink_m);
}

/*
 * The work is stopped at its deadline even when the log blocks: the line
 * that says so is written after on_stopped, not before it, so a sink
 * stuck on a full pipe cannot hold the stop past the margin (and a
 * successor's start on top of it).
 */
static void test_stop_not_held_by_log(void)
{
    const char *t = tu_table();
    sqlease_db *db = NULL;
    tu_faulty *f = tu_faulty_open_qt(&db, 1000);
    sqlease_supervisor *s = NULL;
    sqlease_options o;
    sqlease_error err;
    work w;
    int64_t hang_at, late;
    const int64_t rd = 800;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    work_init(&w, 0);
    tu_options(&o, t, "job", "host-1", 3000, 200, rd, 100);
    o.on_started = on_started;
    o.on_stopped = on_stopped;
    o.userdata = &w;
    o.log = blocking_sink;
    CU_ASSERT_EQUAL_FATAL(sqlease_supervisor_start(&s, db, &o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(w.starts, 1);
    sink_set(1, 0);
    hang_at = sqle_mono_ms();
    tu_fault_set(f, TU_FAULT_HANG, 0);
    CU_ASSERT(await_field(&w, &w.stop_called, 6000));
    late = work_get(&w, &w.stop_called) - (hang_at + rd);
    fprintf(stderr, "\n  on_stopped called %lld ms after the deadline, the log blocked\n",
            (long long)late);
    CU_ASSERT(late <= 100);
    CU_ASSERT_EQUAL(w.stop_reason, SQLEASE_STOP_DEADLINE);
    sink_set(0, 1);
    tu_fault_set(f, TU_FAULT_NONE, 0);
    sqlease_supervisor_free(s);
    tu_drop(db, t);
    sqlease_db_close(db);
    tu_faulty_free(f);
    work_destroy(&w);
}

static void add_tests(void)
{
    CU_pSuite s = CU_add_suite("one holder's work at a time", NULL, NULL);

    CU_add_test(s, "a stale hold is released only after its on_stopped returned",
                test_stale_release_waits_for_on_stopped);
    CU_add_test(s, "an on_started past its hold's deadline is dropped with its stop",
                test_late_start_is_dropped);
    CU_add_test(s, "a log that blocks does not hold the stop at the deadline",
                test_stop_not_held_by_log);
}

int main(void)
{
    int rc;

    sqle_mutex_init(&g_sink_m);
    sqle_cond_init(&g_sink_cv);
    rc = tu_main(add_tests);

    if (rc == 0)
        tu_cleanup();
    return rc;
}
