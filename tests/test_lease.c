/*
 * test_lease.c -- the lease protocol against a real database through the
 * real ODBC driver: who holds, which token, what a release changes, and
 * the errors a broken installation gets.
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lease.h"
#include "lease_impl.h"
#include "platform.h"
#include "seam.h"

#include "testutil.h"

static sqlease_db *db;

static sqlease_lease *make(const char *t, const char *name, const char *owner, int64_t ttl)
{
    sqlease_options o;
    sqlease_error err;
    sqlease_lease *l = NULL;
    int rc;

    tu_options(&o, t, name, owner, ttl, ttl / 4, ttl / 2, ttl / 8 > 0 ? ttl / 8 : 1);
    rc = sqlease_lease_new(&l, db, &o, &err);
    CU_ASSERT_EQUAL_FATAL(rc, SQLEASE_OK);
    return l;
}

/* The token of the free row before the first take: migrate seeds it from
 * the database clock.  Read through `l`, which must not hold it. */
static int64_t seed_of(sqlease_lease *l)
{
    sqlease_lease_info st;
    sqlease_error err;
    int64_t now = 0;

    CU_ASSERT_EQUAL_FATAL(sqlease_lease_status(l, &st, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(st.held, 0);
    CU_ASSERT_EQUAL_FATAL(sqlease_db_now_ms(db, &now, &err), SQLEASE_OK);
    /* Seeded from the clock at migrate, a moment ago. */
    CU_ASSERT(st.token > 1600000000000LL && st.token <= now);
    return st.token;
}

static void test_contend_one_holder(void)
{
    const char *t = tu_table();
    sqlease_lease *a, *b;
    sqlease_lease_info ia, ib, st;
    sqlease_error err;
    int64_t seed;

    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    a = make(t, "job", "owner-a", 30000);
    b = make(t, "job", "owner-b", 30000);
    seed = seed_of(a);

    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &ia, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(ia.token, seed + 1);
    CU_ASSERT_STRING_EQUAL(ia.owner, "owner-a");
    CU_ASSERT_EQUAL(sqlease_lease_acquire(b, &ib, &err), SQLEASE_NOT_HELD);
    CU_ASSERT_STRING_EQUAL(ib.owner, "owner-a");
    CU_ASSERT_EQUAL(ib.token, seed + 1);
    CU_ASSERT_EQUAL(ib.mine, 0);
    /* A second miss reads the row again and says the same. */
    CU_ASSERT_EQUAL(sqlease_lease_acquire(b, &ib, &err), SQLEASE_NOT_HELD);
    CU_ASSERT_STRING_EQUAL(ib.owner, "owner-a");

    CU_ASSERT_EQUAL(sqlease_lease_status(b, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.owner, "owner-a");
    CU_ASSERT_EQUAL(st.held, 1);
    CU_ASSERT_EQUAL(st.mine, 0);
    CU_ASSERT_EQUAL(st.token, seed + 1);
    CU_ASSERT(st.expires_at_ms - st.db_now_ms > 25000 && st.expires_at_ms - st.db_now_ms <= 30000);

    sqlease_lease_free(a);
    sqlease_lease_free(b);
    tu_drop(db, t);
}

/*
 * Every take, renew and release adds one to the row's version, and the
 * reads return it.  A wait of at least a ttl takes a dead holder's
 * expired row only once it has seen it unchanged for a ttl itself (the
 * watch that makes a database clock stepped forward harmless); a shorter
 * wait, and the one-shot acquire, go by the database's expiry at once.
 */
static void test_version_and_watched_wait(void)
{
    const char *t = tu_table();
    sqlease_lease *a, *b, *c;
    sqlease_lease_info ia, st, ib;
    sqlease_error err;
    int64_t v0, t0, took;

    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    a = make(t, "job", "owner-a", 600);
    b = make(t, "job", "owner-b", 600);
    c = make(t, "job", "owner-c", 600);
    CU_ASSERT_EQUAL(sqlease_lease_status(b, &st, &err), SQLEASE_OK);
    v0 = st.version;
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &ia, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &ia, &err), SQLEASE_OK); /* a renew */
    CU_ASSERT_EQUAL(sqlease_lease_status(b, &st, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(st.version, v0 + 2);
    CU_ASSERT_EQUAL(st.token, ia.token);
    /* a dies; its row expires (600 ms) and stays a's. */
    sqle_sleep_ms(700);
    t0 = sqle_mono_ms();
    CU_ASSERT_EQUAL(sqlease_lease_acquire_wait(b, 5000, &ib, &err), SQLEASE_OK);
    took = sqle_mono_ms() - t0;
    CU_ASSERT_EQUAL(ib.token, ia.token + 1);
    CU_ASSERT(took >= 600);         /* watched for its ttl */
    CU_ASSERT(took <= 600 + 3 * 75 + 300);
    /* b dies too; a one-shot acquire and a wait shorter than the ttl
     * take by the database's expiry alone, at once. */
    sqle_sleep_ms(700);
    t0 = sqle_mono_ms();
    CU_ASSERT_EQUAL(sqlease_lease_acquire_wait(c, 300, &ib, &err), SQLEASE_OK);
    CU_ASSERT(sqle_mono_ms() - t0 < 300);
    CU_ASSERT_EQUAL(sqlease_lease_status(b, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.owner, "owner-c");
    CU_ASSERT_EQUAL(st.version, v0 + 4);
    sqle_sleep_ms(700);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &ia, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(ia.token, ib.token + 1);
    sqlease_lease_free(a);
    sqlease_lease_free(b);
    sqlease_lease_free(c);
    tu_drop(db, t);
}

static void test_renew_keeps_token(void)
{
    const char *t = tu_table();
    sqlease_lease *a;
    sqlease_lease_info i1, i2, st;
    sqlease_error err;
    uint64_t before;
    int64_t seed;

    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    a = make(t, "job", "owner-a", 30000);
    seed = seed_of(a);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &i1, &err), SQLEASE_OK);
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &i2, &err), SQLEASE_OK);
    /* A renew is exactly one statement. */
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 1);
    CU_ASSERT_EQUAL(i1.token, seed + 1);
    CU_ASSERT_EQUAL(i2.token, seed + 1);
    CU_ASSERT_EQUAL(sqlease_lease_status(a, &st, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(st.token, seed + 1);
    CU_ASSERT_EQUAL(st.mine, 1);
    sqlease_lease_free(a);
    tu_drop(db, t);
}

static int expired(void *arg)
{
    sqlease_lease *l = arg;
    sqlease_lease_info st;
    sqlease_error err;
    return sqlease_lease_status(l, &st, &err) == SQLEASE_OK && !st.held;
}

static void test_take_after_expiry_new_token(void)
{
    const char *t = tu_table();
    sqlease_lease *a, *b;
    sqlease_lease_info info;
    sqlease_error err;
    int64_t seed;

    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    a = make(t, "job", "owner-a", 400);
    b = make(t, "job", "owner-b", 400);
    seed = seed_of(a);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, seed + 1);
    CU_ASSERT_FATAL(tu_await(expired, a, 3000));
    /* The previous owner of an expired lease takes it afresh. */
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, seed + 2);
    CU_ASSERT_FATAL(tu_await(expired, a, 3000));
    CU_ASSERT_EQUAL(sqlease_lease_acquire(b, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, seed + 3);
    CU_ASSERT_STRING_EQUAL(info.owner, "owner-b");
    /* a still believes in token 2: its renew must fail, not take. */
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &info, &err), SQLEASE_NOT_HELD);
    CU_ASSERT_STRING_EQUAL(info.owner, "owner-b");
    sqlease_lease_free(a);
    sqlease_lease_free(b);
    tu_drop(db, t);
}

static void test_release_scoped_to_owner(void)
{
    const char *t = tu_table();
    sqlease_lease *a, *b;
    sqlease_lease_info info, st;
    sqlease_error err;
    int released = -1;
    int64_t seed;
    uint64_t before;

    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    a = make(t, "job", "owner-a", 30000);
    b = make(t, "job", "owner-b", 30000);
    seed = seed_of(a);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &info, &err), SQLEASE_OK);
    /* b never held: it has nothing to release and sends nothing. */
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqlease_lease_release(b, &released, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(released, 0);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 0);
    CU_ASSERT_EQUAL(sqlease_lease_status(b, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.owner, "owner-a");
    CU_ASSERT_EQUAL(st.held, 1);

    CU_ASSERT_EQUAL(sqlease_lease_release(a, &released, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(released, 1);
    CU_ASSERT_EQUAL(sqlease_lease_status(b, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.owner, "");
    CU_ASSERT_EQUAL(st.held, 0);
    CU_ASSERT_EQUAL(st.expires_at_ms, 0);
    CU_ASSERT_EQUAL(st.token, seed + 1);
    /* The successor gets the next token at once. */
    CU_ASSERT_EQUAL(sqlease_lease_acquire(b, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, seed + 2);
    /* a's release is scoped to the hold it proved (token seed + 1): it
     * does not clear b's. */
    CU_ASSERT_EQUAL(sqlease_lease_release(a, &released, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(released, 0);
    CU_ASSERT_EQUAL(sqlease_lease_status(a, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.owner, "owner-b");
    CU_ASSERT_EQUAL(st.held, 1);
    /* Force release clears it whoever holds it, keeping the token. */
    CU_ASSERT_EQUAL(sqlease_lease_release_force(a, &released, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(released, 1);
    CU_ASSERT_EQUAL(sqlease_lease_status(a, &st, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(st.held, 0);
    CU_ASSERT_EQUAL(st.token, seed + 2);
    /* b's hold was cleared under it: its renew is a loss, and its next
     * acquire a fresh take with a new token. */
    CU_ASSERT_EQUAL(sqlease_lease_acquire(b, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, seed + 3);
    sqlease_lease_free(a);
    sqlease_lease_free(b);
    tu_drop(db, t);
}

/* The database clock has passed *(int64_t *)arg. */
static int db_clock_past(void *arg)
{
    int64_t now = 0;
    sqlease_error err;
    return sqlease_db_now_ms(db, &now, &err) == SQLEASE_OK && now > *(const int64_t *)arg;
}

/*
 * A release with a minimum hold (lock-at-least-for) keeps the row held by
 * the released hold until acquired_at + min_hold on the database clock,
 * whatever expiry the last renew wrote: nobody takes it before then, not
 * even the handle that released it, and the next take gets a new token.
 * Past the minimum hold the same release frees the row at once.
 */
static void test_release_keeps_min_hold(void)
{
    const char *t = tu_table();
    sqlease_options o;
    sqlease_lease *a = NULL, *b, *c = NULL;
    sqlease_lease_info info, st;
    sqlease_error err;
    int released = -1;
    int64_t seed, until;

    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    tu_options(&o, t, "job", "owner-a", 30000, 7500, 15000, 3750);
    o.min_hold_ms = 1500;
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&a, db, &o, &err), SQLEASE_OK);
    b = make(t, "job", "owner-b", 30000);
    seed = seed_of(b);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, seed + 1);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &info, &err), SQLEASE_OK); /* a renew */
    CU_ASSERT_EQUAL(sqlease_lease_release(a, &released, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(released, 1);
    CU_ASSERT_EQUAL(sqlease_lease_status(b, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.owner, "owner-a");
    CU_ASSERT_EQUAL(st.held, 1);
    CU_ASSERT_EQUAL(st.token, seed + 1);
    /* Not the renew's now + 30 s: exactly the take + the minimum hold. */
    CU_ASSERT_EQUAL(st.expires_at_ms, st.acquired_at_ms + 1500);
    until = st.expires_at_ms;
    CU_ASSERT_EQUAL(sqlease_lease_acquire(b, &info, &err), SQLEASE_NOT_HELD);
    CU_ASSERT_STRING_EQUAL(info.owner, "owner-a");
    /* The releasing handle gave the hold up: it neither renews it nor
     * takes it again before the instant. */
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &info, &err), SQLEASE_NOT_HELD);
    CU_ASSERT_FATAL(tu_await(expired, b, 5000));
    CU_ASSERT_EQUAL(sqlease_lease_status(b, &st, &err), SQLEASE_OK);
    CU_ASSERT(st.db_now_ms >= until);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(b, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, seed + 2);
    CU_ASSERT_EQUAL(sqlease_lease_release(b, &released, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(released, 1);

    /* Past its minimum hold, a release frees the row at once. */
    tu_options(&o, t, "job", "owner-c", 30000, 7500, 15000, 3750);
    o.min_hold_ms = 200;
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&c, db, &o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(c, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, seed + 3);
    CU_ASSERT_EQUAL(sqlease_lease_status(c, &st, &err), SQLEASE_OK);
    until = st.acquired_at_ms + 200;
    CU_ASSERT_FATAL(tu_await(db_clock_past, &until, 3000));
    CU_ASSERT_EQUAL(sqlease_lease_release(c, &released, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(released, 1);
    CU_ASSERT_EQUAL(sqlease_lease_status(b, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.owner, "");
    CU_ASSERT_EQUAL(st.held, 0);
    CU_ASSERT_EQUAL(st.expires_at_ms, 0);
    CU_ASSERT_EQUAL(st.token, seed + 3);
    /* A negative minimum hold is refused. */
    o.min_hold_ms = -1;
    CU_ASSERT_EQUAL(sqlease_options_check(&o, &err), SQLEASE_EINVAL);
    sqlease_lease_free(a);
    sqlease_lease_free(b);
    sqlease_lease_free(c);
    tu_drop(db, t);
}

/*
 * A hold is a token, not an owner id: two handles given the same owner id
 * (two overlapping runs of one host, or a process and its restarted self)
 * are two holds.  The second never joins the first's live hold, takes only
 * once the first released or expired, with a higher token, and the
 * first's release then leaves the second's hold alone.
 */
static void test_same_owner_is_not_the_same_hold(void)
{
    const char *t = tu_table();
    sqlease_lease *a1, *a2;
    sqlease_lease_info info, st;
    sqlease_error err;
    int released = -1;
    int64_t seed;

    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    a1 = make(t, "job", "worker", 30000);
    a2 = make(t, "job", "worker", 30000);
    seed = seed_of(a1);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a1, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, seed + 1);
    /* Same owner id, live hold: a2 waits like anyone else. */
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a2, &info, &err), SQLEASE_NOT_HELD);
    CU_ASSERT_STRING_EQUAL(info.owner, "worker");
    CU_ASSERT_EQUAL(info.token, seed + 1);
    CU_ASSERT_EQUAL(info.mine, 0);
    CU_ASSERT_EQUAL(sqlease_lease_status(a2, &st, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(st.held, 1);
    CU_ASSERT_EQUAL(st.mine, 0);
    CU_ASSERT_EQUAL(sqlease_lease_status(a1, &st, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(st.mine, 1);
    /* a2 never held: its release frees nothing. */
    CU_ASSERT_EQUAL(sqlease_lease_release(a2, &released, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(released, 0);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a1, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, seed + 1);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a2, &info, &err), SQLEASE_NOT_HELD);

    /* a1 releases: a2 takes afresh, with a new token. */
    CU_ASSERT_EQUAL(sqlease_lease_release(a1, &released, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(released, 1);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a2, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, seed + 2);
    /* a1's release again (its hold was seed + 1) leaves a2's hold. */
    CU_ASSERT_EQUAL(sqlease_lease_release(a1, &released, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(released, 0);
    CU_ASSERT_EQUAL(sqlease_lease_status(a1, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.owner, "worker");
    CU_ASSERT_EQUAL(st.held, 1);
    CU_ASSERT_EQUAL(st.token, seed + 2);
    CU_ASSERT_EQUAL(st.mine, 0);
    /* ...and a1, now a follower with the same owner id, cannot take it. */
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a1, &info, &err), SQLEASE_NOT_HELD);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a2, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, seed + 2);
    sqlease_lease_free(a1);
    sqlease_lease_free(a2);

    /* Expiry: the second takes only once the first's hold has expired,
     * and the first's renew is then a loss, not a re-take. */
    a1 = make(t, "job", "worker", 400);
    a2 = make(t, "job", "worker", 400);
    CU_ASSERT_EQUAL(sqlease_lease_release_force(a1, NULL, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a1, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, seed + 3);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a2, &info, &err), SQLEASE_NOT_HELD);
    CU_ASSERT_FATAL(tu_await(expired, a1, 3000));
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a2, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, seed + 4);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a1, &info, &err), SQLEASE_NOT_HELD);
    CU_ASSERT_EQUAL(sqlease_lease_release(a1, &released, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(released, 0);
    CU_ASSERT_EQUAL(sqlease_lease_status(a1, &st, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(st.held, 1);
    CU_ASSERT_EQUAL(st.token, seed + 4);
    sqlease_lease_free(a1);
    sqlease_lease_free(a2);
    tu_drop(db, t);
}

/* A follower's acquire_wait on its own thread, timed. */
typedef struct waiter {
    sqlease_lease *l;
    int64_t timeout_ms;
    int rc;
    int64_t done_at;
    sqlease_lease_info info;
} waiter;

/* The thread body for waiter. */
static void wait_thread(void *arg)
{
    waiter *w = arg;
    sqlease_error err;

    w->rc = sqlease_lease_acquire_wait(w->l, w->timeout_ms, &w->info, &err);
    w->done_at = sqle_mono_ms();
}

/*
 * The database's clock steps back (modelled on SQLite by pushing the
 * row's expiry 30 s out, which is what the step does to it as the clock
 * reads it) after the holder died, while a follower waits: one that went
 * by the expiry would wait the step out too.  One that watches takes
 * once it has seen the row unchanged for a ttl, whatever the expiry
 * says; a renew in between (a new version) restarts its watch.  The
 * watched take is bound to the version: a row whose version moved on is
 * not taken (0 rows).
 */
static void test_watched_take_after_step_back(void)
{
    const char *t = tu_table();
    const sqle_dialect *d = sqle_db_dialect(db);
    sqlease_lease *a, *b;
    sqlease_lease_info ia, st;
    sqlease_error err;
    sqle_thread th;
    waiter w;
    db_params p;
    char sql[200];
    char *tw;
    int64_t rows = -1, renewed;
    const int64_t ttl = 600;

    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    a = make(t, "job", "owner-a", ttl);
    b = make(t, "job", "owner-b", ttl);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(a, &ia, &err), SQLEASE_OK);
    memset(&w, 0, sizeof w);
    w.l = b;
    w.timeout_ms = 5000;
    CU_ASSERT_EQUAL_FATAL(sqle_thread_start(&th, wait_thread, &w), 0);
    sqle_sleep_ms(300); /* b watches a's hold */
    /* a renews (a new version: b's watch starts again), then dies, and
     * the step comes. */
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &ia, &err), SQLEASE_OK);
    renewed = sqle_mono_ms();
    sqle_sleep_ms(100);
    snprintf(sql, sizeof sql, "UPDATE %s SET expires_at_ms = expires_at_ms + 30000", t);
    CU_ASSERT_EQUAL(tu_sql(db, sql, &rows), SQLEASE_OK);
    CU_ASSERT_EQUAL(rows, 1);
    sqle_thread_join(&th);
    CU_ASSERT_EQUAL(w.rc, SQLEASE_OK);
    CU_ASSERT_EQUAL(w.info.token, ia.token + 1);
    CU_ASSERT(w.done_at - renewed >= ttl);                /* watched the new version */
    CU_ASSERT(w.done_at - renewed <= ttl + 3 * 75 + 300); /* not the step's 30 s */
    CU_ASSERT_EQUAL(sqlease_lease_status(a, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.owner, "owner-b");
    CU_ASSERT_EQUAL(st.token, ia.token + 1);
    /* A watched take bound to a version the row no longer has. */
    tw = sqle_sql_for_table(d->take_watched.sql, t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tw);
    memset(&p, 0, sizeof p);
    p.name = "job";
    p.owner = "owner-a";
    p.ttl_ms = ttl;
    p.token = st.token;
    p.version = st.version - 1;
    rows = -1;
    CU_ASSERT_EQUAL(sqle_db_run(db, &d->take_watched, tw, &p, NULL, 0, NULL, &rows, &err),
                    SQLEASE_OK);
    CU_ASSERT_EQUAL(rows, 0);
    p.version = st.version; /* and the version it has: taken */
    CU_ASSERT_EQUAL(sqle_db_run(db, &d->take_watched, tw, &p, NULL, 0, NULL, &rows, &err),
                    SQLEASE_OK);
    CU_ASSERT_EQUAL(rows, 1);
    free(tw);
    CU_ASSERT_EQUAL(sqlease_lease_status(a, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.owner, "owner-a");
    CU_ASSERT_EQUAL(st.token, ia.token + 2);
    sqlease_lease_free(a);
    sqlease_lease_free(b);
    tu_drop(db, t);
}

/*
 * A release after the database's clock stepped back behind the hold's
 * acquired_at_ms (modelled by moving acquired_at_ms 30 s ahead, which is
 * what the step does to it as the clock reads it): a hold without a
 * minimum hold is freed, not kept until then as if one ran (which left
 * every follower waiting the step out).
 */
static void test_release_after_step_back(void)
{
    const char *t = tu_table();
    sqlease_lease *a, *b;
    sqlease_lease_info ia, st;
    sqlease_error err;
    char sql[200];
    int64_t rows = -1;
    int released = 0;

    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    a = make(t, "job", "owner-a", 5000);
    b = make(t, "job", "owner-b", 5000);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(a, &ia, &err), SQLEASE_OK);
    snprintf(sql, sizeof sql, "UPDATE %s SET acquired_at_ms = acquired_at_ms + 30000", t);
    CU_ASSERT_EQUAL(tu_sql(db, sql, &rows), SQLEASE_OK);
    CU_ASSERT_EQUAL(rows, 1);
    CU_ASSERT_EQUAL(sqlease_lease_release(a, &released, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(released, 1);
    CU_ASSERT_EQUAL(sqlease_lease_status(a, &st, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(st.held, 0);
    CU_ASSERT_STRING_EQUAL(st.owner, "");
    CU_ASSERT_EQUAL(sqlease_lease_acquire(b, &st, &err), SQLEASE_OK); /* at once */
    CU_ASSERT_EQUAL(st.token, ia.token + 1);
    sqlease_lease_free(a);
    sqlease_lease_free(b);
    tu_drop(db, t);
}

/* Run the dialect's renew or release statement for (name, owner, token)
 * directly, as a handle with that owner id and that token would; returns
 * the rows it affected. */
static int64_t run_as(const char *t, const sqle_stmt *st, const char *name,
                      const char *owner, int64_t token)
{
    db_params p;
    sqlease_error err;
    int64_t rows = -1;
    char *sql = sqle_sql_for_table(st->sql, t);
    int rc;

    CU_ASSERT_PTR_NOT_NULL_FATAL(sql);
    p.name = name;
    p.owner = owner;
    p.ttl_ms = 30000;
    p.token = token;
    p.min_hold_ms = 0;
    rc = sqle_db_run(db, st, sql, &p, NULL, 0, NULL, &rows, &err);
    if (rc != SQLEASE_OK)
        fprintf(stderr, "%s: %s\n", sql, err.message);
    CU_ASSERT_EQUAL(rc, SQLEASE_OK);
    free(sql);
    return rows;
}

/*
 * Owner ids and lease names are exact bytes: an id that differs in case,
 * by a trailing space or by an accent is another owner, even when it
 * knows the token (the collation of a MySQL/MariaDB table made with the
 * server's defaults would call them equal), and an owner of one space is
 * not a free row.
 */
static void test_look_alike_owners_and_names(void)
{
    static const struct { const char *holder, *other; } pairs[] = {
        { "worker", "WORKER" },
        { "worker", "worker " },
        { "worker ", "worker" },
        { "h\xc3\xb4te-1", "hote-1" },
        { "hote-1", "h\xc3\xb4te-1" },
        { " worker", "worker" },
    };
    const char *t = tu_table();
    const char *names[2] = { "job", "JOB" };
    const sqle_dialect *d = sqle_db_dialect(db);
    char table[64];
    sqlease_lease *h, *o, *n1, *n2;
    sqlease_lease_info info, st;
    sqlease_error err;
    int released;
    size_t i;
    int rc;

    snprintf(table, sizeof table, "%s", t);
    CU_ASSERT_EQUAL_FATAL(sqlease_migrate(db, table, names, 2, &err), SQLEASE_OK);
    for (i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        h = make(table, "job", pairs[i].holder, 30000);
        o = make(table, "job", pairs[i].other, 30000);
        CU_ASSERT_EQUAL(sqlease_lease_release_force(h, NULL, &err), SQLEASE_OK);
        CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(h, &info, &err), SQLEASE_OK);
        /* The row holds the holder's bytes, exactly. */
        CU_ASSERT_EQUAL(sqlease_lease_status(o, &st, &err), SQLEASE_OK);
        CU_ASSERT_STRING_EQUAL(st.owner, pairs[i].holder);
        CU_ASSERT_EQUAL(st.held, 1);
        CU_ASSERT_EQUAL(st.mine, 0);
        /* The look-alike is a follower like any other. */
        rc = sqlease_lease_acquire(o, &st, &err);
        if (rc != SQLEASE_NOT_HELD)
            fprintf(stderr, "holder '%s', other '%s': acquire %d (%s)\n", pairs[i].holder,
                    pairs[i].other, rc, err.message);
        CU_ASSERT_EQUAL(rc, SQLEASE_NOT_HELD);
        /* Even with the holder's token, its renew and release match
         * nothing. */
        CU_ASSERT_EQUAL(run_as(table, &d->renew, "job", pairs[i].other, info.token), 0);
        CU_ASSERT_EQUAL(run_as(table, &d->release, "job", pairs[i].other, info.token), 0);
        CU_ASSERT_EQUAL(sqlease_lease_status(o, &st, &err), SQLEASE_OK);
        CU_ASSERT_STRING_EQUAL(st.owner, pairs[i].holder);
        CU_ASSERT_EQUAL(st.held, 1);
        CU_ASSERT_EQUAL(st.token, info.token);
        /* The holder still renews and releases its hold. */
        CU_ASSERT_EQUAL(sqlease_lease_acquire(h, &st, &err), SQLEASE_OK);
        CU_ASSERT_EQUAL(st.token, info.token);
        CU_ASSERT_EQUAL(sqlease_lease_release(h, &released, &err), SQLEASE_OK);
        CU_ASSERT_EQUAL(released, 1);
        sqlease_lease_free(h);
        sqlease_lease_free(o);
    }

    /* Names: 'job' and 'JOB' are two leases.  ('job ' is refused up
     * front: where the primary key pads, MySQL/MariaDB, it could never
     * have a row of its own.) */
    n1 = make(table, "job", "a", 30000);
    n2 = make(table, "JOB", "b", 30000);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(n1, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(n2, &info, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(info.owner, "b");
    CU_ASSERT_EQUAL(sqlease_lease_status(n1, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.owner, "a");
    CU_ASSERT_EQUAL(st.mine, 1);
    sqlease_lease_free(n1);
    sqlease_lease_free(n2);
    tu_drop(db, table);
}

/* A row with no owner is free, whatever its expiry says (an admin's
 * hand-made release that left the expiry in place). */
static void test_no_owner_is_free(void)
{
    const char *t = tu_table();
    char sql[256];
    sqlease_lease *a;
    sqlease_lease_info info, st;
    sqlease_error err;
    int64_t now = 0, rows = -1, seed;

    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    a = make(t, "job", "owner-a", 30000);
    seed = seed_of(a);
    CU_ASSERT_EQUAL_FATAL(sqlease_db_now_ms(db, &now, &err), SQLEASE_OK);
    snprintf(sql, sizeof sql,
             "UPDATE %s SET owner = '', expires_at_ms = %lld WHERE name = 'job'", t,
             (long long)(now + 600000));
    CU_ASSERT_EQUAL(tu_sql(db, sql, &rows), SQLEASE_OK);
    CU_ASSERT_EQUAL(rows, 1);
    CU_ASSERT_EQUAL(sqlease_lease_status(a, &st, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(st.held, 0);
    CU_ASSERT_EQUAL(st.expires_at_ms, now + 600000);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, seed + 1);
    CU_ASSERT_STRING_EQUAL(info.owner, "owner-a");
    CU_ASSERT(info.expires_at_ms - info.db_now_ms > 25000 &&
              info.expires_at_ms - info.db_now_ms <= 30000);
    sqlease_lease_free(a);
    tu_drop(db, t);
}

/* Rows of `t` that match `cond`, by SELECT COUNT(*); -1 if it failed. */
static int64_t count_where(const char *t, const char *cond)
{
    char sql[512];
    db_out out;
    sqlease_error err;
    int64_t n = -1;
    int has_row = 0;

    memset(&out, 0, sizeof out);
    out.type = DB_INT64;
    out.i = &n;
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM %s WHERE %s", t, cond);
    if (sqle_db_exec(db, sql, NULL, 0, &out, 1, &has_row, NULL, &err) != SQLEASE_OK) {
        fprintf(stderr, "sql '%s': %s\n", sql, err.message);
        return -1;
    }
    return has_row ? n : -1;
}

/* The take of `name` by a fresh handle of owner-a: it must succeed with
 * `token`, and a second handle must then see owner-a holding it. */
static void take_row_expect(const char *t, const char *name, int64_t token)
{
    sqlease_lease *a = make(t, name, "owner-a", 30000);
    sqlease_lease *b = make(t, name, "owner-b", 30000);
    sqlease_lease_info info, st;
    sqlease_error err;

    CU_ASSERT_EQUAL(sqlease_lease_status(a, &st, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(st.held, 0);
    CU_ASSERT_EQUAL(st.token, token - 1);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &info, &err), SQLEASE_OK);
    if (info.token != token)
        fprintf(stderr, "\n  row %s: take answered token %lld (%s), expected %lld\n", name,
                (long long)info.token, err.message, (long long)token);
    CU_ASSERT_EQUAL(info.token, token);
    CU_ASSERT_STRING_EQUAL(info.owner, "owner-a");
    /* The row says so too, and a renew keeps the token. */
    CU_ASSERT_EQUAL(sqlease_lease_status(b, &st, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(st.held, 1);
    CU_ASSERT_STRING_EQUAL(st.owner, "owner-a");
    CU_ASSERT_EQUAL(st.token, token);
    CU_ASSERT(st.expires_at_ms - st.db_now_ms > 25000 && st.expires_at_ms - st.db_now_ms <= 30000);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(b, &info, &err), SQLEASE_NOT_HELD);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, token);
    sqlease_lease_free(a);
    sqlease_lease_free(b);
}

/* An older table made by hand without NOT NULL may hold a NULL owner or a
 * NULL expiry.  The status read shows such a row free, so the take must
 * take it too (`owner = ''` and `expires_at_ms <= now` are unknown, never
 * true, for NULL): else the lease could never be held again.  A live
 * hold in the same table is still nobody else's. */
static void test_null_owner_or_expiry_is_free(void)
{
    const char *t = tu_table();
    char sql[600];
    sqlease_lease *c;
    sqlease_lease_info info, st;
    sqlease_error err;
    int64_t now = 0, rows = -1;

    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (name VARCHAR(64) PRIMARY KEY, owner VARCHAR(255), "
             "acquired_at_ms BIGINT, expires_at_ms BIGINT, token BIGINT, version BIGINT, "
             "data VARCHAR(1024), ttl_ms BIGINT, last_owner VARCHAR(255), fire_at_ms BIGINT, "
             "handoff_to VARCHAR(255), priority BIGINT)", t);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, NULL), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlease_db_now_ms(db, &now, &err), SQLEASE_OK);
    snprintf(sql, sizeof sql,
             "INSERT INTO %s (name, owner, acquired_at_ms, expires_at_ms, token, version) "
             "VALUES ('no-owner', NULL, 1, %lld, 5, 0), ('no-expiry', 'old-host', 1, NULL, 9, 0), "
             "('neither', NULL, NULL, NULL, 20, 3), ('held', 'other', 1, %lld, 3, 0)",
             t, (long long)(now + 600000), (long long)(now + 600000));
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, &rows), SQLEASE_OK);
    CU_ASSERT_EQUAL(rows, 4);
    take_row_expect(t, "no-owner", 6);
    take_row_expect(t, "no-expiry", 10);
    take_row_expect(t, "neither", 21);
    c = make(t, "held", "owner-c", 30000);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(c, &info, &err), SQLEASE_NOT_HELD);
    CU_ASSERT_EQUAL(sqlease_lease_status(c, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.owner, "other");
    CU_ASSERT_EQUAL(st.token, 3);
    sqlease_lease_free(c);
    tu_drop(db, t);
}

static int clock_past(void *arg)
{
    int64_t *v = arg, now = 0;
    sqlease_error err;
    return sqlease_db_now_ms(db, &now, &err) == SQLEASE_OK && now > *v;
}

/* A row deleted and seeded again starts above every token the old row
 * gave out: a fenced resource never sees a token go back. */
static void test_tokens_never_go_back(void)
{
    const char *t = tu_table();
    char sql[256];
    sqlease_lease *a, *b;
    sqlease_lease_info info, st;
    sqlease_error err;
    int64_t rows = -1, seed, old, before = 0, after = 0;

    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    a = make(t, "job", "owner-a", 30000);
    seed = seed_of(a);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_release(a, NULL, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &info, &err), SQLEASE_OK);
    old = info.token;
    CU_ASSERT_EQUAL(old, seed + 2);
    /* (Two takes within a millisecond of the seed could outrun the clock:
     * the bound holds for rows taken at most once per millisecond on
     * average.  Let the clock pass the last token.) */
    CU_ASSERT_FATAL(tu_await(clock_past, &old, 2000));

    snprintf(sql, sizeof sql, "DELETE FROM %s WHERE name = 'job'", t);
    CU_ASSERT_EQUAL(tu_sql(db, sql, &rows), SQLEASE_OK);
    CU_ASSERT_EQUAL(rows, 1);
    CU_ASSERT_EQUAL(sqlease_db_now_ms(db, &before, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_db_now_ms(db, &after, &err), SQLEASE_OK);
    b = make(t, "job", "owner-b", 30000);
    CU_ASSERT_EQUAL(sqlease_lease_status(b, &st, &err), SQLEASE_OK);
    CU_ASSERT(st.token >= before && st.token <= after);
    CU_ASSERT(st.token > old);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(b, &info, &err), SQLEASE_OK);
    CU_ASSERT(info.token > old);
    CU_ASSERT_EQUAL(info.token, st.token + 1);
    /* An existing row keeps its token through another migrate. */
    CU_ASSERT_EQUAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_status(b, &st, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(st.token, info.token);
    CU_ASSERT_EQUAL(st.mine, 1);
    sqlease_lease_free(a);
    sqlease_lease_free(b);
    tu_drop(db, t);
}

/* A renew that finds the hold gone is a loss even when the take tried
 * after it fails: the answer is "not held", not "unknown". */
static void test_loss_even_if_take_fails(void)
{
    const char *t = tu_table();
    sqlease_db *fdb = NULL;
    tu_faulty *f = tu_faulty_open(&fdb);
    sqlease_options o;
    sqlease_lease *a = NULL, *admin;
    sqlease_lease_info info;
    sqlease_error err;
    int64_t token;
    int rc;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    tu_options(&o, t, "job", "owner-a", 30000, 5000, 10000, 1000);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&a, fdb, &o, &err), SQLEASE_OK);
    admin = make(t, "job", "admin", 30000);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &info, &err), SQLEASE_OK);
    token = info.token;
    CU_ASSERT_EQUAL(sqlease_lease_release_force(admin, NULL, &err), SQLEASE_OK);
    /* Every take statement now fails as if the connection dropped. */
    tu_fault_match(f, "owner = ?, expires_at_ms", TU_FAULT_CONNECT);
    rc = sqlease_lease_acquire(a, &info, &err);
    if (rc != SQLEASE_NOT_HELD)
        fprintf(stderr, "acquire after the hold was cleared: %d (%s)\n", rc, err.message);
    CU_ASSERT_EQUAL(rc, SQLEASE_NOT_HELD);
    CU_ASSERT_EQUAL(err.status, SQLEASE_NOT_HELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "the hold is gone"));
    CU_ASSERT_EQUAL(tu_fault_matched(f, NULL), 1);
    tu_fault_match(f, NULL, TU_FAULT_NONE);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, token + 1);
    sqlease_lease_free(a);
    sqlease_lease_free(admin);
    tu_drop(db, t);
    sqlease_db_close(fdb);
    tu_faulty_free(f);
}

static void test_names_independent(void)
{
    const char *t = tu_table();
    const char *names[2] = { "one", "two" };
    sqlease_lease *a, *b;
    sqlease_lease_info info;
    sqlease_error err;

    int64_t seed_a, seed_b;

    CU_ASSERT_EQUAL_FATAL(sqlease_migrate(db, t, names, 2, &err), SQLEASE_OK);
    a = make(t, "one", "owner-a", 30000);
    b = make(t, "two", "owner-b", 30000);
    seed_a = seed_of(a);
    seed_b = seed_of(b);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, seed_a + 1);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(b, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, seed_b + 1);
    CU_ASSERT_STRING_EQUAL(info.owner, "owner-b");
    sqlease_lease_free(a);
    sqlease_lease_free(b);
    tu_drop(db, t);
}

static void test_missing_row_and_table(void)
{
    const char *t = tu_table();
    sqlease_lease *a;
    sqlease_lease_info info;
    sqlease_error err;
    char table[64];

    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    snprintf(table, sizeof table, "%s", t);
    a = make(table, "ghost", "owner-a", 30000);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &info, &err), SQLEASE_ENOROW);
    CU_ASSERT_EQUAL(err.status, SQLEASE_ENOROW);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "'ghost'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, table));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "sqlease migrate"));
    CU_ASSERT_EQUAL(sqlease_lease_status(a, &info, &err), SQLEASE_ENOROW);
    sqlease_lease_free(a);
    tu_drop(db, table);

    a = make("no_such_lease_table", "job", "owner-a", 30000);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &info, &err), SQLEASE_ENOTABLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "no_such_lease_table"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "sqlease migrate"));
    CU_ASSERT_EQUAL(sqlease_lease_status(a, &info, &err), SQLEASE_ENOTABLE);
    sqlease_lease_free(a);
}

static void test_clock_zero_rejected(void)
{
    const char *t = tu_table();
    sqlease_db *fdb = NULL;
    tu_faulty *f = tu_faulty_open(&fdb);
    sqlease_options o;
    sqlease_lease *l = NULL;
    sqlease_lease_info info;
    sqlease_error err;
    int64_t now = -1;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL_FATAL(tu_migrate(fdb, t, "job"), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_db_now_ms(fdb, &now, &err), SQLEASE_OK);
    CU_ASSERT(now > 1600000000000LL);
    tu_fault_set(f, TU_FAULT_ZERO_CLOCK, 0);
    now = -1;
    CU_ASSERT_EQUAL(sqlease_db_now_ms(fdb, &now, &err), SQLEASE_ECLOCK);
    CU_ASSERT_EQUAL(now, -1);
    tu_options(&o, t, "job", "owner-a", 30000, 5000, 10000, 1000);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&l, fdb, &o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_status(l, &info, &err), SQLEASE_ECLOCK);
    /* A take must read the token back with a sane clock; a zero one is
     * an error, never a hold. */
    CU_ASSERT_EQUAL(sqlease_lease_acquire(l, &info, &err), SQLEASE_ECLOCK);
    tu_fault_set(f, TU_FAULT_NONE, 0);
    sqlease_lease_free(l);
    tu_drop(fdb, t);
    sqlease_db_close(fdb);
    tu_faulty_free(f);
}

static void test_migrate_idempotent_and_upgrade(void)
{
    const char *t = tu_table();
    char table[64], sql[512];
    sqlease_lease *a;
    sqlease_lease_info info, st;
    sqlease_error err;
    int64_t rows = -1, seed;

    snprintf(table, sizeof table, "%s", t);
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, table, "job"), SQLEASE_OK);
    a = make(table, "job", "owner-a", 30000);
    seed = seed_of(a);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &info, &err), SQLEASE_OK);
    /* Migrating again leaves the held row as it was. */
    CU_ASSERT_EQUAL(tu_migrate(db, table, "job"), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_status(a, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.owner, "owner-a");
    CU_ASSERT_EQUAL(st.token, seed + 1);
    CU_ASSERT_EQUAL(st.held, 1);
    sqlease_lease_free(a);
    tu_drop(db, table);

    /* A go-admin table: four columns and a live row. */
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (name VARCHAR(64) NOT NULL PRIMARY KEY, owner VARCHAR(255) NOT NULL, "
             "acquired_at_ms BIGINT NOT NULL, expires_at_ms BIGINT NOT NULL)", table);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, NULL), SQLEASE_OK);
    snprintf(sql, sizeof sql,
             "INSERT INTO %s (name, owner, acquired_at_ms, expires_at_ms) "
             "VALUES ('scheduler', 'old-host-1-abcdef12', 1, 9000000000000)", table);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, &rows), SQLEASE_OK);
    CU_ASSERT_EQUAL(rows, 1);
    CU_ASSERT_EQUAL(tu_migrate(db, table, "scheduler"), SQLEASE_OK);
    CU_ASSERT_EQUAL(tu_migrate(db, table, "scheduler"), SQLEASE_OK);
    a = make(table, "scheduler", "owner-a", 30000);
    CU_ASSERT_EQUAL(sqlease_lease_status(a, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.owner, "old-host-1-abcdef12");
    CU_ASSERT_EQUAL(st.expires_at_ms, 9000000000000LL);
    CU_ASSERT_EQUAL(st.token, 0);
    CU_ASSERT_EQUAL(st.held, 1);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &info, &err), SQLEASE_NOT_HELD);
    sqlease_lease_free(a);
    tu_drop(db, table);
}

/* migrate on an older table made by hand without NOT NULL, holding NULLs
 * in every column sqlease writes: it fills them in before it changes any
 * column (MySQL/MariaDB make the owner column NOT NULL with a binary
 * collation, which a column holding NULLs refuses), so that it succeeds
 * and leaves no NULL; the free rows are then takeable, a NULL token
 * starting where a new row's starts (the clock), and a live hold stays
 * its holder's. */
static void test_migrate_fills_nulls(void)
{
    const char *t = tu_table();
    char sql[700];
    sqlease_lease *c;
    sqlease_lease_info info, st;
    sqlease_error err;
    int64_t now = 0, rows = -1, token = 0;

    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (name VARCHAR(64) PRIMARY KEY, owner VARCHAR(255), "
             "acquired_at_ms BIGINT, expires_at_ms BIGINT, token BIGINT, version BIGINT)", t);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, NULL), SQLEASE_OK);
    snprintf(sql, sizeof sql,
             "INSERT INTO %s (name, owner, acquired_at_ms, expires_at_ms, token, version) "
             "VALUES ('job', NULL, NULL, NULL, NULL, NULL), "
             "('no-expiry', 'old-host', 1, NULL, 4, 2), "
             "('live', 'old-host', 1, 9000000000000, 7, NULL)", t);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, &rows), SQLEASE_OK);
    CU_ASSERT_EQUAL(rows, 3);
    CU_ASSERT_EQUAL(count_where(t, "owner IS NULL OR expires_at_ms IS NULL"), 2);
    CU_ASSERT_EQUAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    CU_ASSERT_EQUAL(count_where(t, "owner IS NULL OR acquired_at_ms IS NULL OR "
                                   "expires_at_ms IS NULL OR token IS NULL OR "
                                   "version IS NULL"), 0);
    /* Each repaired row's version changed, as every write changes it (a
     * NULL one starts again from the clock, as a token does, past any
     * count a follower could have seen before): a follower that watched
     * the row starts over. */
    CU_ASSERT_EQUAL(count_where(t, "owner = '' AND acquired_at_ms = 0 AND "
                                   "expires_at_ms = 0 AND version > 1600000000000"), 1);
    CU_ASSERT_EQUAL(count_where(t, "name = 'no-expiry' AND version = 3"), 1);
    CU_ASSERT_EQUAL(count_where(t, "name = 'live' AND version > 1600000000000"), 1);
    /* Again: nothing left to change. */
    CU_ASSERT_EQUAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlease_db_now_ms(db, &now, &err), SQLEASE_OK);
    c = make(t, "job", "owner-c", 30000);
    CU_ASSERT_EQUAL(sqlease_lease_status(c, &st, &err), SQLEASE_OK);
    token = st.token;
    CU_ASSERT(token > 1600000000000LL && token <= now);
    sqlease_lease_free(c);
    take_row_expect(t, "job", token + 1);
    take_row_expect(t, "no-expiry", 5);
    c = make(t, "live", "owner-c", 30000);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(c, &info, &err), SQLEASE_NOT_HELD);
    CU_ASSERT_EQUAL(sqlease_lease_status(c, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.owner, "old-host");
    CU_ASSERT_EQUAL(st.token, 7);
    CU_ASSERT_EQUAL(st.held, 1);
    sqlease_lease_free(c);
    tu_drop(db, t);
}

static void test_options_and_bad_input(void)
{
    sqlease_options o;
    sqlease_error err;
    sqlease_lease *l = (sqlease_lease *)1;
    char longname[SQLEASE_MAX_NAME + 2];
    char owner[SQLEASE_MAX_OWNER + 1];
    int64_t ms = -1;

    sqlease_options_init(&o);
    CU_ASSERT_EQUAL(sqlease_options_check(&o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_options_check(NULL, &err), SQLEASE_OK);
    o.table = "x; DROP TABLE y";
    CU_ASSERT_EQUAL(sqlease_options_check(&o, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "invalid table"));
    CU_ASSERT_EQUAL(sqlease_lease_new(&l, db, &o, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NULL(l);
    o.table = "public.sys_job_lease";
    CU_ASSERT_EQUAL(sqlease_options_check(&o, &err), SQLEASE_OK);
    o.name = "";
    CU_ASSERT_EQUAL(sqlease_options_check(&o, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "empty"));
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    o.name = longname;
    CU_ASSERT_EQUAL(sqlease_options_check(&o, &err), SQLEASE_EINVAL);
    o.name = NULL;
    o.owner = "";
    CU_ASSERT_EQUAL(sqlease_options_check(&o, &err), SQLEASE_EINVAL);
    o.owner = NULL;
    o.ttl_ms = 10000; /* the rest is derived from it: 3333, 6666, 1000 */
    CU_ASSERT_EQUAL(sqlease_options_check(&o, &err), SQLEASE_OK);
    o.renew_deadline_ms = 20000; /* set, and not below the ttl */
    CU_ASSERT_EQUAL(sqlease_options_check(&o, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "renew deadline (20000 ms)"));
    o.renew_deadline_ms = 0;
    tu_options(&o, NULL, NULL, NULL, 3000, 750, 1500, 250);
    CU_ASSERT_EQUAL(sqlease_options_check(&o, &err), SQLEASE_OK);
    o.heartbeat_ms = 800; /* more than half the deadline */
    CU_ASSERT_EQUAL(sqlease_options_check(&o, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "heartbeat"));
    tu_options(&o, NULL, NULL, NULL, 3000, 500, 1500, 1500);
    CU_ASSERT_EQUAL(sqlease_options_check(&o, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "retry"));

    CU_ASSERT_EQUAL(sqlease_parse_duration("500ms", &ms, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(ms, 500);
    CU_ASSERT_EQUAL(sqlease_parse_duration("30s", &ms, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(ms, 30000);
    CU_ASSERT_EQUAL(sqlease_parse_duration("2m", &ms, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(ms, 120000);
    CU_ASSERT_EQUAL(sqlease_parse_duration("1h", &ms, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(ms, 3600000);
    /* Days, as --keep 30d and --since 2d say them; 30 d is the most. */
    CU_ASSERT_EQUAL(sqlease_parse_duration("2d", &ms, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(ms, 2 * 86400000);
    CU_ASSERT_EQUAL(sqlease_parse_duration("30d", &ms, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(ms, SQLEASE_MAX_DURATION_MS);
    CU_ASSERT_EQUAL(sqlease_parse_duration("31d", &ms, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "at most 30 days"));
    CU_ASSERT_EQUAL(sqlease_parse_duration("2w", &ms, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "use ms, s, m, h or d"));
    ms = 7;
    CU_ASSERT_EQUAL(sqlease_parse_duration("30", &ms, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "no unit"));
    CU_ASSERT_EQUAL(ms, 7);
    /* Zero needs no unit; 01 is still a bare number. */
    CU_ASSERT_EQUAL(sqlease_parse_duration("0", &ms, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(ms, 0);
    ms = 7;
    CU_ASSERT_EQUAL(sqlease_parse_duration("00", &ms, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(ms, 0);
    ms = 7;
    CU_ASSERT_EQUAL(sqlease_parse_duration("01", &ms, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "no unit"));
    CU_ASSERT_EQUAL(ms, 7);
    CU_ASSERT_EQUAL(sqlease_parse_duration("", &ms, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_parse_duration("-1s", &ms, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_parse_duration("10x", &ms, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_parse_duration("s", &ms, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_parse_duration("99999999999999999999ms", &ms, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_parse_duration("9999999999999999h", &ms, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_parse_duration(NULL, &ms, NULL), SQLEASE_EINVAL);

    CU_ASSERT_EQUAL(sqlease_owner_id(owner, sizeof owner, &err), SQLEASE_OK);
    {
        const char *dash = strrchr(owner, '-');
        size_t i;
        CU_ASSERT_PTR_NOT_NULL_FATAL(dash);
        CU_ASSERT_EQUAL(strlen(dash + 1), 8);
        for (i = 1; i <= 8; i++)
            CU_ASSERT_PTR_NOT_NULL(strchr("0123456789abcdef", dash[i]));
    }
    CU_ASSERT_EQUAL(sqlease_owner_id(owner, 8, &err), SQLEASE_EINVAL);
    /* At the documented minimum the host name is cut, never the pid or
     * the random part that make the id unique. */
    {
        char small[32], pid[32];
        CU_ASSERT_EQUAL(sqlease_owner_id(small, sizeof small, &err), SQLEASE_OK);
        snprintf(pid, sizeof pid, "-%ld-", sqle_pid());
        CU_ASSERT_PTR_NOT_NULL(strstr(small, pid));
        CU_ASSERT_EQUAL(strlen(strrchr(small, '-') + 1), 8);
    }
    /* Durations are capped (30 days), so deadline sums cannot overflow. */
    CU_ASSERT_EQUAL(sqlease_parse_duration("720h", &ms, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(ms, SQLEASE_MAX_DURATION_MS);
    CU_ASSERT_EQUAL(sqlease_parse_duration("721h", &ms, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "too large"));
    sqlease_options_init(&o);
    o.ttl_ms = INT64_MAX;
    CU_ASSERT_EQUAL(sqlease_options_check(&o, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "30 days"));
    /* A bare lease needs only a ttl: the supervisor's rules do not apply. */
    sqlease_options_init(&o);
    o.ttl_ms = 5000;
    l = NULL;
    CU_ASSERT_EQUAL(sqlease_lease_new(&l, db, &o, &err), SQLEASE_OK);
    sqlease_lease_free(l);

    /* NULLs are refused, frees of NULL are harmless. */
    CU_ASSERT_EQUAL(sqlease_lease_acquire(NULL, NULL, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_lease_status(NULL, NULL, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_lease_release(NULL, NULL, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_lease_new(NULL, db, NULL, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_lease_new(&l, NULL, NULL, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_db_open(NULL, NULL, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_migrate(db, "bad table", NULL, 0, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_migrate(db, NULL, NULL, 1, &err), SQLEASE_EINVAL);
    sqlease_lease_free(NULL);
    sqlease_db_close(NULL);
    sqlease_supervisor_free(NULL);
    CU_ASSERT_STRING_EQUAL(sqlease_version(), SQLEASE_VERSION);
}

/* ---- input checks and redaction (no statement needed) -------------- */

/* Every way a name, owner or table is refused up front: EINVAL from
 * sqlease_options_check, sqlease_lease_new and sqlease_migrate alike, with
 * the field named, and no statement sent. */
static void test_names_owners_tables_checked(void)
{
    static const struct {
        const char *table, *name, *owner;
        const char *want; /* in the message */
    } bad[] = {
        {NULL, "job\xff", NULL, "lease name is not valid UTF-8"},
        {NULL, "caf\xc3", NULL, "lease name is not valid UTF-8"},       /* truncated */
        {NULL, "\xc0\xaf", NULL, "lease name is not valid UTF-8"},      /* overlong '/' */
        {NULL, "\xed\xa0\x80", NULL, "lease name is not valid UTF-8"},  /* surrogate */
        {NULL, NULL, "host-\xfe-1", "owner id is not valid UTF-8"},
        {NULL, " ", NULL, "lease name is only white space"},
        {NULL, "\xc2\xa0\xe3\x80\x80", NULL, "lease name is only white space"},
        {NULL, NULL, "   ", "owner id is only white space"},
        {NULL, " job", NULL, "lease name ' job' starts with white space"},
        {NULL, "job ", NULL, "lease name 'job ' ends with white space"},
        {NULL, NULL, "\t", "owner id contains a control character"},
        {NULL, "a\tb", NULL, "lease name contains a control character"},
        {NULL, NULL, "x\ny", "owner id contains a control character"},
        {"select", NULL, NULL, "'select' is a reserved word"},
        {"ORDER", NULL, NULL, "'ORDER' is a reserved word"},
        {"User", NULL, NULL, "'User' is a reserved word"},
        {"s.table", NULL, NULL, "'table' is a reserved word"},
        {"group.t", NULL, NULL, "'group' is a reserved word"},
        {"public.order", NULL, NULL, "'order' is a reserved word"},
        {"limit", NULL, NULL, "reserved word"},        /* PostgreSQL, MySQL, SQLite */
        {"returning", NULL, NULL, "reserved word"},
        {"autoincrement", NULL, NULL, "reserved word"}, /* SQLite */
        {"straight_join", NULL, NULL, "reserved word"}, /* MySQL */
        {"tran", NULL, NULL, "reserved word"},          /* T-SQL */
        {"zone", NULL, NULL, "reserved word"},          /* SQL-92 */
        /* SQLite's own names: CREATE TABLE refuses them ("object name
         * reserved for internal use"), and sqlite_sequence exists. */
        {"sqlite_leases", NULL, NULL, "SQLite keeps names starting with 'sqlite_'"},
        {"SQLITE_SEQUENCE", NULL, NULL, "('SQLITE_SEQUENCE')"},
        {"app.Sqlite_x", NULL, NULL, "('Sqlite_x')"},
    };
    static const char *const good_tables[] = {"sys_job_lease", "public.sys_job_lease",
                                              "orders", "user_lease", "selection", "s.t",
                                              "PUBLIC.leases", "_order", "sqlite",
                                              "sqlitex_lease", "my_sqlite_leases"};
    sqlease_options o;
    sqlease_error err;
    sqlease_lease *l;
    uint64_t sent = sqlease_db_statements(db);
    size_t i;

    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *names[1];
        int ok;

        sqlease_options_init(&o);
        o.table = bad[i].table;
        o.name = bad[i].name;
        o.owner = bad[i].owner;
        memset(&err, 0, sizeof err);
        CU_ASSERT_EQUAL(sqlease_options_check(&o, &err), SQLEASE_EINVAL);
        ok = strstr(err.message, bad[i].want) != NULL;
        if (!ok)
            fprintf(stderr, "\n  case %zu: '%s', want '%s'\n", i, err.message, bad[i].want);
        CU_ASSERT(ok);
        l = (sqlease_lease *)1;
        CU_ASSERT_EQUAL(sqlease_lease_new(&l, db, &o, &err), SQLEASE_EINVAL);
        CU_ASSERT_PTR_NULL(l);
        if (bad[i].owner == NULL) {
            names[0] = bad[i].name != NULL ? bad[i].name : "scheduler";
            CU_ASSERT_EQUAL(sqlease_migrate(db, bad[i].table != NULL ? bad[i].table
                                                                     : tu_table(),
                                            names, 1, &err), SQLEASE_EINVAL);
            CU_ASSERT_PTR_NOT_NULL(strstr(err.message, bad[i].want));
        }
    }
    CU_ASSERT_EQUAL(sqlease_db_statements(db), sent);

    for (i = 0; i < sizeof good_tables / sizeof good_tables[0]; i++) {
        sqlease_options_init(&o);
        o.table = good_tables[i];
        o.name = "job \xc3\xa9t\xc3\xa9";   /* inner spaces and UTF-8 are fine */
        o.owner = "host-1 \xe2\x9c\x93";
        CU_ASSERT_EQUAL(sqlease_options_check(&o, &err), SQLEASE_OK);
        if (err.message[0] != '\0')
            fprintf(stderr, "\n  %s: %s\n", good_tables[i], err.message);
    }
}

/* Redaction, table-driven: connection strings and free text (a driver
 * message quoting one).  Keys ending in PWD, any case, and blanks around
 * the key are secrets too. */
static void test_redaction_table(void)
{
    static const struct {
        const char *in, *conn, *msg;
    } cases[] = {
        {"Driver=X;PWD=s3cr3t;UID=u", "Driver=X;PWD=***;UID=u", "Driver=X;PWD=***;UID=u"},
        {"Driver=X;ENCRYPT_PWD=s3cr3t;UID=u", "Driver=X;ENCRYPT_PWD=***;UID=u",
         "Driver=X;ENCRYPT_PWD=***;UID=u"},
        {"Driver=X;PRIV_KEY_FILE_PWD=s3cr3t", "Driver=X;PRIV_KEY_FILE_PWD=***",
         "Driver=X;PRIV_KEY_FILE_PWD=***"},
        {"Driver=X;priv_key_file_pwd={a;b}", "Driver=X;priv_key_file_pwd=***",
         "Driver=X;priv_key_file_pwd=***"},
        {"Driver=X;NewPwd=s3cr3t;x=1", "Driver=X;NewPwd=***;x=1", "Driver=X;NewPwd=***;x=1"},
        {"Driver=X;Pwd\t=s3cr3t;x=1", "Driver=X;Pwd\t=***;x=1", "Driver=X;Pwd\t=***;x=1"},
        {"Driver=X;PWD =s3cr3t;x=1", "Driver=X;PWD =***;x=1", "Driver=X;PWD =***;x=1"},
        {"Driver=X;Password\t=\ts3cr3t;x=1", "Driver=X;Password\t=***;x=1",
         "Driver=X;Password\t=\t***;x=1"},
        {"Driver=X;\tENCRYPT_PWD\t=s3cr3t", "Driver=X;\tENCRYPT_PWD\t=***",
         "Driver=X;\tENCRYPT_PWD\t=***"},
        {"Driver=X;SSLPassphrase=s3cr3t", "Driver=X;SSLPassphrase=***",
         "Driver=X;SSLPassphrase=***"},
        {"Driver=X;AuthPassword=s3cr3t", "Driver=X;AuthPassword=***",
         "Driver=X;AuthPassword=***"},
        {"Driver=X;Client_Secret=s3cr3t", "Driver=X;Client_Secret=***",
         "Driver=X;Client_Secret=***"},
        {"Driver=X;PASSWD=s3cr3t", "Driver=X;PASSWD=***", "Driver=X;PASSWD=***"},
        {"Driver=X;pwd=", "Driver=X;pwd=***", "Driver=X;pwd="},
        /* not secrets: left readable */
        {"Driver=X;PwdRule=strict;UID=pwd", "Driver=X;PwdRule=strict;UID=pwd",
         "Driver=X;PwdRule=strict;UID=pwd"},
        {"Driver=X;Database=pwd;User=password", "Driver=X;Database=pwd;User=password",
         "Driver=X;Database=pwd;User=password"},
    };
    static const struct {
        const char *in, *want;
    } msgs[] = {
        {"[MySQL][ODBC] Access denied; ENCRYPT_PWD=s3cr3t given",
         "[MySQL][ODBC] Access denied; ENCRYPT_PWD=***"},
        {"login failed (PWD\t=s3cr3t)", "login failed (PWD\t=***"},
        {"key PRIV_KEY_FILE_PWD = 's3 cr;3t' rejected", "key PRIV_KEY_FILE_PWD = *** rejected"},
        {"using encrypt_pwd={s3;cr3t} now", "using encrypt_pwd=*** now"},
        {"token=5 owner=a", "token=5 owner=a"},
    };
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[256];
        char *got = sqle_redact(cases[i].in);

        CU_ASSERT_PTR_NOT_NULL_FATAL(got);
        if (strcmp(got, cases[i].conn) != 0)
            fprintf(stderr, "\n  redact(%s) = %s, want %s\n", cases[i].in, got, cases[i].conn);
        CU_ASSERT_STRING_EQUAL(got, cases[i].conn);
        CU_ASSERT(strstr(got, "s3cr3t") == NULL);
        free(got);
        snprintf(buf, sizeof buf, "%s", cases[i].in);
        sqle_redact_inplace(buf);
        if (strcmp(buf, cases[i].msg) != 0)
            fprintf(stderr, "\n  redact_inplace(%s) = %s, want %s\n", cases[i].in, buf,
                    cases[i].msg);
        CU_ASSERT_STRING_EQUAL(buf, cases[i].msg);
    }
    for (i = 0; i < sizeof msgs / sizeof msgs[0]; i++) {
        char buf[256];

        snprintf(buf, sizeof buf, "%s", msgs[i].in);
        sqle_redact_inplace(buf);
        if (strcmp(buf, msgs[i].want) != 0)
            fprintf(stderr, "\n  redact_inplace(%s) = %s, want %s\n", msgs[i].in, buf,
                    msgs[i].want);
        CU_ASSERT_STRING_EQUAL(buf, msgs[i].want);
    }
}

/* ------------------------------------------------------------------ */
/* Batched statements (lease_each.c)                                    */
/* ------------------------------------------------------------------ */

/* More than 64, and not a power of two: the chunk is padded. */
#define MANY 70

typedef struct many {
    const char *t;
    char names[MANY][16];
    sqlease_lease *l[MANY];
    sqle_each each[MANY];
    int64_t token[MANY];
} many;

/* MANY rows in a fresh table, each held by a lease of its own. */
static void many_hold(many *m, int64_t ttl)
{
    const char *names[MANY];
    sqlease_lease_info info;
    sqlease_error err;
    size_t i;

    memset(m, 0, sizeof *m);
    m->t = tu_table();
    for (i = 0; i < MANY; i++) {
        snprintf(m->names[i], sizeof m->names[i], "n%02zu", i);
        names[i] = m->names[i];
    }
    CU_ASSERT_EQUAL_FATAL(sqlease_migrate(db, m->t, names, MANY, &err), SQLEASE_OK);
    for (i = 0; i < MANY; i++) {
        m->l[i] = make(m->t, m->names[i], i % 2 ? "owner-a" : "owner-b", ttl);
        CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(m->l[i], &info, &err), SQLEASE_OK);
        m->token[i] = info.token;
        m->each[i].lease = m->l[i];
        m->each[i].rc = -1;
    }
}

static void many_free(many *m)
{
    size_t i;

    for (i = 0; i < MANY; i++)
        sqlease_lease_free(m->l[i]);
    tu_drop(db, m->t);
}

static int is_mysql(void)
{
    return strcmp(sqlease_db_dialect(db), "mysql") == 0;
}

/* The database clock, once it has moved past every expiry the takes
 * wrote minus the ttl (so a renew now writes a later expiry). */
static int64_t clock_after_takes(many *m, int64_t ttl)
{
    sqlease_error err;
    int64_t past = 0, now = 0;
    size_t i;

    CU_ASSERT_EQUAL_FATAL(sqle_lease_status_each(m->each, MANY, 0, &err), SQLEASE_OK);
    for (i = 0; i < MANY; i++)
        if (m->each[i].info.expires_at_ms - ttl > past)
            past = m->each[i].info.expires_at_ms - ttl;
    CU_ASSERT_FATAL(tu_await(clock_past, &past, 3000));
    CU_ASSERT_EQUAL_FATAL(sqlease_db_now_ms(db, &now, &err), SQLEASE_OK);
    return now;
}

static void test_renew_each_one_statement(void)
{
    many m;
    sqlease_error err;
    sqlease_fence f;
    uint64_t before, per[MANY];
    int64_t now;
    size_t i;
    int rc;

    many_hold(&m, 30000);
    now = clock_after_takes(&m, 30000);
    for (i = 0; i < MANY; i++)
        per[i] = sqle_lease_statements(m.l[i]);
    before = sqlease_db_statements(db);
    rc = sqle_lease_renew_each(m.each, MANY, 0, &err);
    if (rc != SQLEASE_OK)
        fprintf(stderr, "renew_each: %s\n", err.message);
    CU_ASSERT_EQUAL(rc, SQLEASE_OK);
    /* 70 leases in one chunk (batch_max is 256 or more): one statement. */
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 1);
    for (i = 0; i < MANY; i++) {
        CU_ASSERT_EQUAL(m.each[i].rc, SQLEASE_OK);
        CU_ASSERT_EQUAL(m.each[i].info.token, m.token[i]);
        CU_ASSERT_EQUAL(m.each[i].info.mine, 1);
        CU_ASSERT_STRING_EQUAL(m.each[i].info.owner, i % 2 ? "owner-a" : "owner-b");
        /* The lease's own counter: one statement carried it. */
        CU_ASSERT_EQUAL(sqle_lease_statements(m.l[i]) - per[i], 1);
        SQLEASE_FENCE_INIT(&f);
        CU_ASSERT_EQUAL(sqlease_lease_fence(m.l[i], &f, &err), SQLEASE_OK);
        CU_ASSERT_EQUAL(f.token, m.token[i]);
    }
    /* The renew wrote every expiry from the clock read after the takes. */
    CU_ASSERT_EQUAL(sqle_lease_status_each(m.each, MANY, 0, &err), SQLEASE_OK);
    for (i = 0; i < MANY; i++) {
        CU_ASSERT_EQUAL(m.each[i].rc, SQLEASE_OK);
        CU_ASSERT(m.each[i].info.expires_at_ms >= now + 30000);
        CU_ASSERT_EQUAL(m.each[i].info.token, m.token[i]);
        CU_ASSERT_EQUAL(m.each[i].info.mine, 1);
    }
    /* A single renew of one of them still works, with the same token. */
    {
        sqlease_lease_info info;
        CU_ASSERT_EQUAL(sqlease_lease_acquire(m.l[3], &info, &err), SQLEASE_OK);
        CU_ASSERT_EQUAL(info.token, m.token[3]);
    }
    many_free(&m);
}

/* One hold stolen and one expired in the table: exactly those two are
 * lost.  MySQL/MariaDB count 68 of 70 and read which, in a second
 * statement. */
static void test_renew_each_exact_losses(void)
{
    many m;
    sqlease_error err;
    sqlease_fence f;
    char sql[256];
    uint64_t before;
    int64_t rows = -1;
    size_t i;
    int rc;

    many_hold(&m, 30000);
    /* A statement whose every hold is gone: no row renewed, no row
     * returned, and that is an answer (not held), not an error. */
    snprintf(sql, sizeof sql, "UPDATE %s SET owner = '', expires_at_ms = 0 WHERE name = 'n05'",
             m.t);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, &rows), SQLEASE_OK);
    before = sqlease_db_statements(db);
    rc = sqle_lease_renew_each(m.each + 5, 1, 0, &err);
    if (rc != SQLEASE_OK)
        fprintf(stderr, "renew_each of a lost hold: %s\n", err.message);
    CU_ASSERT_EQUAL(rc, SQLEASE_OK);
    CU_ASSERT_EQUAL(m.each[5].rc, SQLEASE_NOT_HELD);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, is_mysql() ? 2 : 1);
    snprintf(sql, sizeof sql,
             "UPDATE %s SET owner = 'thief', token = token + 1 WHERE name = 'n17'", m.t);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, &rows), SQLEASE_OK);
    CU_ASSERT_EQUAL(rows, 1);
    snprintf(sql, sizeof sql, "UPDATE %s SET expires_at_ms = 1 WHERE name = 'n42'", m.t);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, &rows), SQLEASE_OK);
    CU_ASSERT_EQUAL(rows, 1);
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_lease_renew_each(m.each, MANY, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, is_mysql() ? 3 : 1);
    for (i = 0; i < MANY; i++) {
        int lost = i == 5 || i == 17 || i == 42;
        CU_ASSERT_EQUAL(m.each[i].rc, lost ? SQLEASE_NOT_HELD : SQLEASE_OK);
        SQLEASE_FENCE_INIT(&f);
        /* A loss forgets the held token, as a lost renew does. */
        CU_ASSERT_EQUAL(sqlease_lease_fence(m.l[i], &f, &err),
                        lost ? SQLEASE_NOT_HELD : SQLEASE_OK);
    }
    /* The expired row was not renewed by the batch either. */
    CU_ASSERT_EQUAL(sqle_lease_status_each(m.each, MANY, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(m.each[42].info.held, 0);
    CU_ASSERT_EQUAL(m.each[42].info.expires_at_ms, 1);
    CU_ASSERT_STRING_EQUAL(m.each[17].info.owner, "thief");
    CU_ASSERT_EQUAL(m.each[17].info.mine, 0);
    /* Next heartbeat: the two lost ones send nothing, the rest renew in
     * one statement whose count is complete (no second one anywhere). */
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_lease_renew_each(m.each, MANY, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 1);
    for (i = 0; i < MANY; i++)
        CU_ASSERT_EQUAL(m.each[i].rc,
                        i == 5 || i == 17 || i == 42 ? SQLEASE_NOT_HELD : SQLEASE_OK);
    many_free(&m);
}

/* Chunks of at most 8: ceil(70 / 8) = 9 statements, every lease in one. */
static void test_renew_each_chunks(void)
{
    many m;
    sqlease_error err;
    char sql[256];
    uint64_t before, per[MANY];
    int64_t rows = -1;
    size_t i;

    many_hold(&m, 30000);
    for (i = 0; i < MANY; i++)
        per[i] = sqle_lease_statements(m.l[i]);
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_lease_renew_each_max(m.each, MANY, 0, 8, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, (MANY + 7) / 8);
    for (i = 0; i < MANY; i++) {
        CU_ASSERT_EQUAL(m.each[i].rc, SQLEASE_OK);
        CU_ASSERT_EQUAL(sqle_lease_statements(m.l[i]) - per[i], 1);
    }
    /* A loss in the last chunk (6 leases, padded to 8): only its chunk
     * needs more on MySQL/MariaDB: the read of the live holds, and the
     * renew of those alone (which a live read alone cannot prove). */
    snprintf(sql, sizeof sql,
             "UPDATE %s SET owner = 'thief', token = token + 1 WHERE name = 'n66'", m.t);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, &rows), SQLEASE_OK);
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_lease_renew_each_max(m.each, MANY, 0, 8, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, (MANY + 7) / 8 + (is_mysql() ? 2 : 0));
    for (i = 0; i < MANY; i++)
        CU_ASSERT_EQUAL(m.each[i].rc, i == 66 ? SQLEASE_NOT_HELD : SQLEASE_OK);
    /* Chunks of 3 (not a power of two) and of 1. */
    CU_ASSERT_EQUAL(sqle_lease_renew_each_max(m.each, MANY, 0, 3, &err), SQLEASE_OK);
    for (i = 0; i < MANY; i++)
        CU_ASSERT_EQUAL(m.each[i].rc, i == 66 ? SQLEASE_NOT_HELD : SQLEASE_OK);
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_lease_status_each_max(m.each, MANY, 0, 1, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, MANY);
    for (i = 0; i < MANY; i++) {
        CU_ASSERT_EQUAL(m.each[i].rc, SQLEASE_OK);
        CU_ASSERT_EQUAL(m.each[i].info.mine, i != 66);
    }
    many_free(&m);
}

/* The same lease twice, and a handle that believes in a hold under a
 * look-alike owner id: the duplicate is renewed once (a complete count on
 * MySQL/MariaDB), the look-alike is not a hold. */
static void test_renew_each_duplicates_and_look_alikes(void)
{
    const char *t = tu_table();
    const char *names[2] = { "job", "other" };
    sqlease_lease *a, *fake, *b;
    sqlease_lease_info info;
    sqle_each each[4];
    sqlease_error err;
    uint64_t before;

    CU_ASSERT_EQUAL_FATAL(sqlease_migrate(db, t, names, 2, &err), SQLEASE_OK);
    a = make(t, "job", "worker", 30000);
    fake = make(t, "job", "worker ", 30000);
    b = make(t, "other", "WORKER", 30000);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(a, &info, &err), SQLEASE_OK);
    fake->held_token = info.token; /* as if it had proved a's hold */
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(b, &info, &err), SQLEASE_OK);
    memset(each, 0, sizeof each);
    each[0].lease = a;
    each[1].lease = fake;
    each[2].lease = b;
    each[3].lease = a;
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_lease_renew_each(each, 4, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(each[0].rc, SQLEASE_OK);
    CU_ASSERT_EQUAL(each[1].rc, SQLEASE_NOT_HELD);
    CU_ASSERT_EQUAL(each[2].rc, SQLEASE_OK);
    CU_ASSERT_EQUAL(each[3].rc, SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, is_mysql() ? 3 : 1);
    CU_ASSERT_EQUAL(fake->held_token, -1);
    /* Without the look-alike, the duplicate alone: a complete count. */
    each[1].lease = b;
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_lease_renew_each(each, 4, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 1);
    CU_ASSERT(each[0].rc == SQLEASE_OK && each[1].rc == SQLEASE_OK && each[2].rc == SQLEASE_OK &&
              each[3].rc == SQLEASE_OK);
    /* A batch must be one table and one ttl: EINVAL for all, nothing
     * sent. */
    {
        sqlease_lease *x = make(t, "job", "owner-x", 20000);
        each[1].lease = x;
        before = sqlease_db_statements(db);
        CU_ASSERT_EQUAL(sqle_lease_renew_each(each, 4, 0, &err), SQLEASE_EINVAL);
        CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 0);
        CU_ASSERT(each[0].rc == SQLEASE_EINVAL && each[3].rc == SQLEASE_EINVAL);
        sqlease_lease_free(x);
    }
    sqlease_lease_free(a);
    sqlease_lease_free(fake);
    sqlease_lease_free(b);
    tu_drop(db, t);
}

/* One read for rows held by this handle, by another, free, expired and
 * missing. */
static void test_status_each_mix(void)
{
    const char *t = tu_table();
    const char *names[4] = { "mine", "theirs", "free", "expired" };
    sqlease_options o;
    sqlease_lease *l[5], *other, *gone;
    sqlease_lease_info info;
    sqle_each each[5];
    sqlease_error err;
    char sql[256];
    int64_t rows = -1, mine_token, their_token, free_token, now = 0;
    uint64_t before, per;
    size_t i;

    CU_ASSERT_EQUAL_FATAL(sqlease_migrate(db, t, names, 4, &err), SQLEASE_OK);
    tu_options(&o, t, "mine", "me", 30000, 7500, 15000, 3750);
    o.data = "10.0.0.5:8080";
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&l[0], db, &o, &err), SQLEASE_OK);
    l[1] = make(t, "theirs", "me", 30000);
    l[2] = make(t, "free", "me", 30000);
    l[3] = make(t, "expired", "me", 30000);
    l[4] = make(t, "ghost", "me", 30000);
    other = make(t, "theirs", "them", 30000);
    gone = make(t, "expired", "them", 30000);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(l[0], &info, &err), SQLEASE_OK);
    mine_token = info.token;
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(other, &info, &err), SQLEASE_OK);
    their_token = info.token;
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_status(l[2], &info, &err), SQLEASE_OK);
    free_token = info.token;
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(gone, &info, &err), SQLEASE_OK);
    snprintf(sql, sizeof sql, "UPDATE %s SET expires_at_ms = 1 WHERE name = 'expired'", t);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, &rows), SQLEASE_OK);
    memset(each, 0, sizeof each);
    for (i = 0; i < 5; i++)
        each[i].lease = l[i];
    per = sqle_lease_statements(l[4]);
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_lease_status_each(each, 5, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 1);
    CU_ASSERT_EQUAL(sqle_lease_statements(l[4]) - per, 1);
    CU_ASSERT_EQUAL_FATAL(sqlease_db_now_ms(db, &now, &err), SQLEASE_OK);

    CU_ASSERT_EQUAL(each[0].rc, SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(each[0].info.owner, "me");
    CU_ASSERT_EQUAL(each[0].info.token, mine_token);
    CU_ASSERT_EQUAL(each[0].info.held, 1);
    CU_ASSERT_EQUAL(each[0].info.mine, 1);
    CU_ASSERT_STRING_EQUAL(each[0].info.data, "10.0.0.5:8080");
    CU_ASSERT(each[0].info.db_now_ms > 1600000000000LL && each[0].info.db_now_ms <= now);
    CU_ASSERT(each[0].info.expires_at_ms - each[0].info.db_now_ms > 25000);

    CU_ASSERT_EQUAL(each[1].rc, SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(each[1].info.owner, "them");
    CU_ASSERT_EQUAL(each[1].info.token, their_token);
    CU_ASSERT_EQUAL(each[1].info.held, 1);
    CU_ASSERT_EQUAL(each[1].info.mine, 0);
    CU_ASSERT_STRING_EQUAL(each[1].info.data, "");

    CU_ASSERT_EQUAL(each[2].rc, SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(each[2].info.owner, "");
    CU_ASSERT_EQUAL(each[2].info.token, free_token);
    CU_ASSERT_EQUAL(each[2].info.held, 0);
    CU_ASSERT_EQUAL(each[2].info.expires_at_ms, 0);

    CU_ASSERT_EQUAL(each[3].rc, SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(each[3].info.owner, "them");
    CU_ASSERT_EQUAL(each[3].info.held, 0);
    CU_ASSERT_EQUAL(each[3].info.expires_at_ms, 1);

    CU_ASSERT_EQUAL(each[4].rc, SQLEASE_ENOROW);
    CU_ASSERT_EQUAL(each[4].info.token, 0);
    CU_ASSERT_STRING_EQUAL(each[4].info.owner, "");

    /* Every row read with one clock reading where the clock is volatile
     * (PostgreSQL reads it once, in FROM), and one instant elsewhere. */
    CU_ASSERT_EQUAL(each[0].info.db_now_ms, each[1].info.db_now_ms);
    CU_ASSERT_EQUAL(each[0].info.db_now_ms, each[2].info.db_now_ms);

    for (i = 0; i < 5; i++)
        sqlease_lease_free(l[i]);
    sqlease_lease_free(other);
    sqlease_lease_free(gone);
    tu_drop(db, t);
}

/* The take after a batched read: a free row is taken with token + 1; a
 * row that changed since the read is not; a read that showed a live hold
 * sends nothing. */
static void test_take_seen(void)
{
    const char *t = tu_table();
    const char *names[2] = { "a", "b" };
    sqlease_lease *fa, *fb, *rival;
    sqlease_lease_info info;
    sqle_each each[2];
    sqlease_error err;
    uint64_t before;
    int taken = -1;

    CU_ASSERT_EQUAL_FATAL(sqlease_migrate(db, t, names, 2, &err), SQLEASE_OK);
    fa = make(t, "a", "follower", 30000);
    fb = make(t, "b", "follower", 30000);
    rival = make(t, "b", "rival", 30000);
    memset(each, 0, sizeof each);
    each[0].lease = fa;
    each[1].lease = fb;
    CU_ASSERT_EQUAL_FATAL(sqle_lease_status_each(each, 2, 0, &err), SQLEASE_OK);
    CU_ASSERT(each[0].rc == SQLEASE_OK && each[1].rc == SQLEASE_OK);
    CU_ASSERT(!each[0].info.held && !each[1].info.held);

    /* a: free since the read, taken in one statement, token + 1. */
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_lease_take_seen(fa, &each[0].info, 0, &info, &taken, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 1);
    CU_ASSERT_EQUAL(taken, 1);
    CU_ASSERT_EQUAL(info.token, each[0].info.token + 1);
    CU_ASSERT_STRING_EQUAL(info.owner, "follower");
    CU_ASSERT_EQUAL(info.mine, 1);
    /* It now holds that token: the batched renew renews it. */
    CU_ASSERT_EQUAL(sqle_lease_renew_each(each, 1, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(each[0].rc, SQLEASE_OK);
    CU_ASSERT_EQUAL(each[0].info.token, info.token);

    /* b: a rival takes it between the read and the take.  The lost take
     * names the winner (one more read, only after a lost race), not the
     * free row the first read saw: a herd of `run --no-wait` says who
     * ran. */
    CU_ASSERT_EQUAL(sqlease_lease_acquire(rival, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, each[1].info.token + 1);
    taken = -1;
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_lease_take_seen(fb, &each[1].info, 0, &info, &taken, &err),
                    SQLEASE_NOT_HELD);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 2);
    CU_ASSERT_EQUAL(taken, 0);
    CU_ASSERT_STRING_EQUAL(info.owner, "rival");
    CU_ASSERT_EQUAL(info.token, each[1].info.token + 1);
    CU_ASSERT_EQUAL(info.held, 1);
    CU_ASSERT_EQUAL(info.mine, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "taken by rival"));
    CU_ASSERT_EQUAL(sqlease_lease_status(fb, &info, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(info.owner, "rival");

    /* A read that shows the rival's live hold: nothing is sent. */
    CU_ASSERT_EQUAL_FATAL(sqle_lease_status_each(each + 1, 1, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(each[1].info.held, 1);
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_lease_take_seen(fb, &each[1].info, 0, &info, &taken, &err),
                    SQLEASE_NOT_HELD);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 0);
    CU_ASSERT_STRING_EQUAL(info.owner, "rival");
    CU_ASSERT_EQUAL(taken, 0);

    sqlease_lease_free(fa);
    sqlease_lease_free(fb);
    sqlease_lease_free(rival);
    tu_drop(db, t);
}

#define TAKES 40
#define TAKE_CHUNK 8

/*
 * The batched take of rows some owner has, once each lease's watch has
 * run: none is sent while the watch runs (0 statements), then one
 * statement takes the rows still as read and misses the one its holder
 * renewed meanwhile (the version moved), though that row too has expired
 * by the database's clock by then.
 */
static void test_take_each_watched(void)
{
    const char *t = tu_table();
    const char *np[3] = { "w0", "w1", "w2" };
    sqlease_lease *l[3], *rival[3];
    sqle_each each[3];
    sqlease_lease_info info;
    sqlease_error err;
    int64_t seen[3];
    uint64_t before;
    size_t i;

    CU_ASSERT_EQUAL_FATAL(sqlease_migrate(db, t, np, 3, &err), SQLEASE_OK);
    memset(each, 0, sizeof each);
    for (i = 0; i < 3; i++) {
        rival[i] = make(t, np[i], "rival", 300);
        CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(rival[i], &info, &err), SQLEASE_OK);
        l[i] = make(t, np[i], "watcher", 300);
        sqle_lease_set_watch(l[i], 1);
        each[i].lease = l[i];
    }
    CU_ASSERT_EQUAL_FATAL(sqle_lease_status_each(each, 3, 0, &err), SQLEASE_OK);
    for (i = 0; i < 3; i++) {
        CU_ASSERT_STRING_EQUAL(each[i].info.owner, "rival");
        CU_ASSERT_EQUAL(sqle_lease_wants_take(l[i], &each[i].info), 0);
        CU_ASSERT_EQUAL(sqle_lease_take_bound(l[i], &each[i].info), 0);
        seen[i] = each[i].info.token;
    }
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_lease_take_each(each, 3, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 0);
    for (i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(each[i].rc, SQLEASE_NOT_HELD);
        CU_ASSERT_EQUAL(each[i].hit, 0);
    }
    /* The holder of w1 renews: its version moves, its token stays. */
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(rival[1], &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, seen[1]);
    sqle_sleep_ms(400); /* the watchers' ttl, on their clock, and the rows' */
    for (i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(sqle_lease_wants_take(l[i], &each[i].info), 1);
        CU_ASSERT_EQUAL(sqle_lease_take_bound(l[i], &each[i].info), 1);
    }
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_lease_take_each(each, 3, 0, &err), SQLEASE_OK);
    /* One take; a dialect that only counts reads the short chunk. */
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 1 + (is_mysql() ? 1 : 0));
    for (i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(each[i].hit, i != 1);
        CU_ASSERT_EQUAL(each[i].rc, i != 1 ? SQLEASE_OK : SQLEASE_NOT_HELD);
        CU_ASSERT_EQUAL(sqlease_lease_status(l[i], &info, &err), SQLEASE_OK);
        CU_ASSERT_STRING_EQUAL(info.owner, i != 1 ? "watcher" : "rival");
        CU_ASSERT_EQUAL(info.token, i != 1 ? seen[i] + 1 : seen[i]);
    }
    for (i = 0; i < 3; i++) {
        sqlease_lease_free(l[i]);
        sqlease_lease_free(rival[i]);
    }
}

/* A bare lease of `name` under owner "o" with `ttl` and `data`. */
static sqlease_lease *mixed_lease(const char *t, const char *name, int64_t ttl, const char *data)
{
    sqlease_options o;
    sqlease_lease *l = NULL;
    sqlease_error err;

    tu_options(&o, t, name, "o", ttl, ttl / 4, ttl / 2, ttl / 10);
    o.data = data;
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&l, db, &o, &err), SQLEASE_OK);
    return l;
}

/*
 * The runner's take of followers that differ in ttl or data
 * (sqle_lease_take_each_mixed): two followers of one row "mx" under one
 * owner id with different ttl go in two runs, and a follower of "my" in
 * the second.  Exactly one lease of "mx" may hold it, and "my" must be
 * held by its lease: a second take of "mx" would match nothing, and on a
 * dialect that only counts, that shortfall made the read that decides
 * call "my" a miss too (taken, and held by nobody until it expired).
 * Rounds on free rows, then on a dead holder's rows whose watch has run,
 * each with the leases in both orders.
 */
static void test_take_each_mixed(void)
{
    const char *t = tu_table();
    const char *names[] = { "mx", "my" };
    sqlease_error err;
    int round, i;

    CU_ASSERT_EQUAL_FATAL(sqlease_migrate(db, t, names, 2, &err), SQLEASE_OK);
    for (round = 0; round < 4; round++) {
        int watched = round >= 2, mx = 0, my = 0;
        sqlease_lease *l[3];
        sqle_each e[3];
        char sql[200];
        int64_t rows;

        for (i = 0; i < 2; i++) {
            snprintf(sql, sizeof sql, "UPDATE %s SET owner = '%s', expires_at_ms = 0, "
                     "version = version + 1 WHERE name = '%s'", t, watched ? "dead" : "",
                     names[i]);
            CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, &rows), SQLEASE_OK);
        }
        l[0] = mixed_lease(t, "mx", 1200, NULL);
        l[1] = mixed_lease(t, "mx", 1500, "one");
        l[2] = mixed_lease(t, "my", 1500, "one");
        memset(e, 0, sizeof e);
        for (i = 0; i < 3; i++)
            e[i].lease = l[round % 2 ? 2 - i : i];
        CU_ASSERT_EQUAL_FATAL(sqle_lease_status_each(e, 3, 0, &err), SQLEASE_OK);
        for (i = 0; i < 3 && watched; i++) {
            /* A watch begun 5 s ago, as a group's read seeds it. */
            sqle_watch_seed seed = { 1, sqle_hash_text(e[i].info.owner), e[i].info.token,
                                     e[i].info.version, e[i].info.expires_at_ms,
                                     e[i].info.db_now_ms, sqle_mono_ms() - 5000,
                                     e[i].info.ttl_ms };
            sqle_lease_set_watch(e[i].lease, 1);
            sqle_lease_seed_watch(e[i].lease, &seed);
            CU_ASSERT(sqle_lease_take_bound(e[i].lease, &e[i].info));
        }
        CU_ASSERT_EQUAL(sqle_lease_take_each_mixed(e, 3, 0, &err), SQLEASE_OK);
        for (i = 0; i < 3; i++) {
            if (!e[i].hit)
                continue;
            if (strcmp(sqlease_lease_name(e[i].lease), "mx") == 0)
                mx++;
            else
                my++;
        }
        CU_ASSERT_EQUAL(mx, 1);
        CU_ASSERT_EQUAL(my, 1);
        for (i = 0; i < 3; i++)
            sqlease_lease_free(l[i]);
    }
    tu_drop(db, t);
}

/*
 * The batched first take of free rows, and the batched release: each
 * lease's answer is its own.  Every row is read free; then, before the
 * take, a rival takes three of them (their tokens move: the take misses
 * them), and a fourth is given an expired owner behind the read's back
 * with its token unchanged (only the version, which that write bumped,
 * stops it: the take is of the row as read).  A second
 * lease of a name already in the batch is not sent.  Then the release of
 * the holds frees exactly the rows it held (rows affected), not one a
 * rival took after a forced release; a take after it gets the next token.
 */
static void test_take_each_and_release_each(void)
{
    const char *t = tu_table();
    char names[TAKES][8];
    const char *np[TAKES];
    sqlease_lease *l[TAKES + 1], *rival[3], *thief;
    sqle_each each[TAKES + 1], rel[TAKES + 1];
    sqlease_lease_info info;
    sqlease_error err;
    int64_t seen[TAKES], rows = -1, held_tok[TAKES];
    const int stolen[3] = { 3, 7, 11 };
    const int dead = 15, forced = 20;
    char sql[256];
    uint64_t before;
    size_t i, k, hits = 0;

    for (i = 0; i < TAKES; i++) {
        snprintf(names[i], sizeof names[i], "n%02zu", i);
        np[i] = names[i];
    }
    CU_ASSERT_EQUAL_FATAL(sqlease_migrate(db, t, np, TAKES, &err), SQLEASE_OK);
    memset(each, 0, sizeof each);
    for (i = 0; i < TAKES; i++) {
        l[i] = make(t, names[i], "starter", 30000);
        each[i].lease = l[i];
    }
    /* The same name twice in one batch: only one of them is sent. */
    l[TAKES] = make(t, names[0], "starter", 30000);
    each[TAKES].lease = l[TAKES];
    CU_ASSERT_EQUAL_FATAL(sqle_lease_status_each(each, TAKES + 1, 0, &err), SQLEASE_OK);
    for (i = 0; i < TAKES; i++) {
        CU_ASSERT_EQUAL(each[i].rc, SQLEASE_OK);
        CU_ASSERT_STRING_EQUAL(each[i].info.owner, "");
        seen[i] = each[i].info.token;
    }
    for (k = 0; k < 3; k++) {
        rival[k] = make(t, names[stolen[k]], "rival", 30000);
        CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(rival[k], &info, &err), SQLEASE_OK);
        CU_ASSERT_EQUAL(info.token, seen[stolen[k]] + 1);
    }
    /* A holder that died since the read (a write bumps the version, as
     * every write does): expired, but not as the read saw it. */
    snprintf(sql, sizeof sql, "UPDATE %s SET owner = 'dead', expires_at_ms = 1, "
             "version = version + 1 WHERE name = '%s'", t, names[dead]);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, &rows), SQLEASE_OK);
    CU_ASSERT_EQUAL(rows, 1);

    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_lease_take_each_max(each, TAKES + 1, 0, TAKE_CHUNK, &err), SQLEASE_OK);
    /* One statement per chunk of 8 (40 names); a dialect that only counts
     * reads the two chunks whose count fell short. */
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before,
                    TAKES / TAKE_CHUNK + (is_mysql() ? 2 : 0));
    for (i = 0; i < TAKES; i++) {
        int miss = i == (size_t)dead;
        for (k = 0; k < 3; k++)
            miss |= i == (size_t)stolen[k];
        if (miss) {
            CU_ASSERT_EQUAL(each[i].rc, SQLEASE_NOT_HELD);
            CU_ASSERT_EQUAL(each[i].hit, 0);
            CU_ASSERT_EQUAL(l[i]->held_token, -1);
        } else {
            CU_ASSERT_EQUAL(each[i].rc, SQLEASE_OK);
            CU_ASSERT_EQUAL(each[i].hit, 1);
            CU_ASSERT_EQUAL(each[i].info.token, seen[i] + 1);
            CU_ASSERT_EQUAL(each[i].info.mine, 1);
            CU_ASSERT_EQUAL(l[i]->held_token, seen[i] + 1);
            hits++;
        }
        held_tok[i] = l[i]->held_token;
    }
    CU_ASSERT_EQUAL(hits, TAKES - 4);
    CU_ASSERT_EQUAL(each[TAKES].rc, SQLEASE_NOT_HELD);
    CU_ASSERT_EQUAL(each[TAKES].hit, 0);
    CU_ASSERT_EQUAL(l[TAKES]->held_token, -1);
    /* What the rows say: the rivals' and the dead owner's untouched. */
    for (i = 0; i < TAKES; i++) {
        CU_ASSERT_EQUAL(sqlease_lease_status(l[i], &info, &err), SQLEASE_OK);
        if (held_tok[i] >= 0) {
            CU_ASSERT_STRING_EQUAL(info.owner, "starter");
            CU_ASSERT_EQUAL(info.token, held_tok[i]);
        } else if (i == (size_t)dead) {
            CU_ASSERT_STRING_EQUAL(info.owner, "dead");
            CU_ASSERT_EQUAL(info.token, seen[i]);
            CU_ASSERT_EQUAL(info.held, 0);
        } else {
            CU_ASSERT_STRING_EQUAL(info.owner, "rival");
            CU_ASSERT_EQUAL(info.token, seen[i] + 1);
        }
    }
    /* The holds renew as any other. */
    CU_ASSERT_EQUAL(sqle_lease_renew_each(each, 2, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(each[0].rc, SQLEASE_OK);
    CU_ASSERT_EQUAL(each[1].rc, SQLEASE_OK);

    /* One hold is cleared by force and taken by a thief: the release
     * must leave the thief's row alone. */
    thief = make(t, names[forced], "thief", 30000);
    CU_ASSERT_EQUAL(sqlease_lease_release_force(thief, NULL, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(thief, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, held_tok[forced] + 1);
    memset(rel, 0, sizeof rel);
    for (i = 0; i <= TAKES; i++)
        rel[i].lease = l[i];
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_lease_release_each_max(rel, TAKES + 1, 0, 0, TAKE_CHUNK, &err),
                    SQLEASE_OK);
    /* 35 holds sent (the 5 that hold nothing are not): 5 chunks, and on
     * a dialect that only counts, the read of the one that fell short. */
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before,
                    (TAKES - 5 + TAKE_CHUNK - 1) / TAKE_CHUNK + (is_mysql() ? 1 : 0));
    hits = 0;
    for (i = 0; i <= TAKES; i++) {
        CU_ASSERT_EQUAL(rel[i].rc, SQLEASE_OK);
        CU_ASSERT_EQUAL(l[i]->held_token, -1);
        CU_ASSERT_EQUAL(rel[i].hit, i < TAKES && held_tok[i] >= 0 && i != (size_t)forced);
        hits += (size_t)rel[i].hit;
    }
    CU_ASSERT_EQUAL(hits, TAKES - 5);
    for (i = 0; i < TAKES; i++) {
        CU_ASSERT_EQUAL(sqlease_lease_status(l[i], &info, &err), SQLEASE_OK);
        if (i == (size_t)forced) {
            CU_ASSERT_STRING_EQUAL(info.owner, "thief");
        } else if (held_tok[i] >= 0) {
            CU_ASSERT_STRING_EQUAL(info.owner, "");
            CU_ASSERT_EQUAL(info.token, held_tok[i]);
            CU_ASSERT_EQUAL(info.held, 0);
        } else {
            CU_ASSERT_STRING_EQUAL(info.owner, i == (size_t)dead ? "dead" : "rival");
        }
    }
    /* Taken again: the token after the released one. */
    CU_ASSERT_EQUAL(sqle_lease_status_each(each, 2, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqle_lease_take_each(each, 2, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(each[0].hit, 1);
    CU_ASSERT_EQUAL(each[1].hit, 1);
    CU_ASSERT_EQUAL(l[0]->held_token, held_tok[0] + 1);
    CU_ASSERT_EQUAL(l[1]->held_token, held_tok[1] + 1);
    /* A batch whose owners differ is refused before anything is sent. */
    each[1].lease = rival[0];
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_lease_take_each(each, 2, 0, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 0);

    for (i = 0; i <= TAKES; i++)
        sqlease_lease_free(l[i]);
    for (k = 0; k < 3; k++)
        sqlease_lease_free(rival[k]);
    sqlease_lease_free(thief);
    tu_drop(db, t);
}

/* A failed statement answers every lease it carried, and the ones after
 * it, with its status: an error, not a loss (the holds are kept). */
static void test_each_failure(void)
{
    many m;
    sqlease_error err;
    sqlease_fence f;
    int rc;
    size_t i;

    many_hold(&m, 30000);
    tu_drop(db, m.t);
    rc = sqle_lease_renew_each_max(m.each, MANY, 0, 16, &err);
    CU_ASSERT_EQUAL(rc, SQLEASE_ENOTABLE);
    CU_ASSERT_EQUAL(err.status, SQLEASE_ENOTABLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, m.t));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "sqlease migrate"));
    for (i = 0; i < MANY; i++) {
        CU_ASSERT_EQUAL(m.each[i].rc, SQLEASE_ENOTABLE);
        SQLEASE_FENCE_INIT(&f);
        CU_ASSERT_EQUAL(sqlease_lease_fence(m.l[i], &f, &err), SQLEASE_OK);
    }
    rc = sqle_lease_status_each(m.each, MANY, 0, &err);
    CU_ASSERT_EQUAL(rc, SQLEASE_ENOTABLE);
    for (i = 0; i < MANY; i++)
        CU_ASSERT_EQUAL(m.each[i].rc, SQLEASE_ENOTABLE);
    many_free(&m);
}

/* The row of `name` in `t`, as text: owner, token, version, ttl_ms,
 * last_owner ("NULL" for a NULL). */
static void row_text(const char *t, const char *name, char out[5][300])
{
    char sql[300], *cols[5];
    sqlease_error err;
    int has_row = 0, i;

    for (i = 0; i < 5; i++)
        cols[i] = out[i];
    snprintf(sql, sizeof sql,
             "SELECT COALESCE(owner, 'NULL'), COALESCE(CAST(token AS VARCHAR(30)), 'NULL'), "
             "COALESCE(CAST(version AS VARCHAR(30)), 'NULL'), "
             "COALESCE(CAST(ttl_ms AS VARCHAR(30)), 'NULL'), COALESCE(last_owner, 'NULL') "
             "FROM %s WHERE name = '%s'", t, name);
    if (strcmp(sqlease_db_dialect(db), "mysql") == 0)
        snprintf(sql, sizeof sql,
                 "SELECT COALESCE(owner, 'NULL'), COALESCE(CAST(token AS CHAR), 'NULL'), "
                 "COALESCE(CAST(version AS CHAR), 'NULL'), "
                 "COALESCE(CAST(ttl_ms AS CHAR), 'NULL'), COALESCE(last_owner, 'NULL') "
                 "FROM %s WHERE name = '%s'", t, name);
    CU_ASSERT_EQUAL_FATAL(sqle_db_query_text(db, sql, cols, 5, 300, &has_row, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(has_row, 1);
}

/*
 * A row with a NULL where the library writes a value (a table made by
 * hand, a row another tool wrote) is never stuck and never watched as
 * "unchanged": a follower repairs it first (one UPDATE that also changes
 * its version) and then reads it again.  A NULL version read as 0 while
 * its holder's renews left it NULL (NULL + 1 is NULL) once let a
 * watching follower take a live hold after migrate filled it in; a NULL
 * token matched no take, so nobody ever took the row again, and a forced
 * release reported "token 0" and left it NULL.
 */
static void test_null_token_or_version_repaired(void)
{
    const char *t = tu_table();
    char sql[900], row[5][300];
    sqlease_lease *f, *g, *h;
    sqlease_lease_info info;
    sqlease_error err;
    int64_t now = 0, rows = -1, token;
    uint64_t before;
    int released = -1;

    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (name VARCHAR(64) PRIMARY KEY, owner VARCHAR(255), "
             "acquired_at_ms BIGINT, expires_at_ms BIGINT, token BIGINT, version BIGINT, "
             "data VARCHAR(1024), ttl_ms BIGINT, last_owner VARCHAR(255), fire_at_ms BIGINT, "
             "handoff_to VARCHAR(255), priority BIGINT)", t);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, NULL), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlease_db_now_ms(db, &now, &err), SQLEASE_OK);
    snprintf(sql, sizeof sql,
             "INSERT INTO %s (name, owner, acquired_at_ms, expires_at_ms, token, version) "
             "VALUES ('live', 'old-host', 1, %lld, 7, NULL), ('free', '', 0, 0, NULL, NULL), "
             "('dead', 'gone', 1, %lld, 3, NULL), ('forced', 'x', 1, %lld, NULL, NULL)",
             t, (long long)(now + 600000), (long long)(now - 1000), (long long)(now + 600000));
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, &rows), SQLEASE_OK);
    CU_ASSERT_EQUAL(rows, 4);

    /* A live hold with a NULL version: the follower's read shows the
     * NULL, the repair gives the row a version (the clock's, plus one),
     * the read after it shows the hold, still its holder's, with its
     * token. */
    f = make(t, "live", "follower", 300);
    sqle_lease_set_watch(f, 1);
    CU_ASSERT_EQUAL(sqlease_lease_status(f, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.has_nulls, 1);
    CU_ASSERT_EQUAL(info.version, 0);
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(f, &info, &err), SQLEASE_NOT_HELD);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 3); /* read, repair, read */
    CU_ASSERT_STRING_EQUAL(info.owner, "old-host");
    CU_ASSERT_EQUAL(info.has_nulls, 0);
    row_text(t, "live", row);
    CU_ASSERT_STRING_EQUAL(row[0], "old-host");
    CU_ASSERT_STRING_EQUAL(row[1], "7");
    CU_ASSERT(strtoll(row[2], NULL, 10) > now && strtoll(row[2], NULL, 10) <= now + 60000);
    CU_ASSERT_EQUAL(info.version, strtoll(row[2], NULL, 10));
    /* Watched past the follower's ttl: the holder's expiry is far off,
     * so it stays the holder's. */
    sqle_sleep_ms(400);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(f, &info, &err), SQLEASE_NOT_HELD);
    CU_ASSERT_STRING_EQUAL(info.owner, "old-host");
    sqlease_lease_free(f);

    /* A free row with a NULL token: taken at once, the token starting
     * from the clock as a new row's does. */
    g = make(t, "free", "taker", 30000);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(g, &info, &err), SQLEASE_OK);
    CU_ASSERT(info.token > 1600000000000LL && info.token <= now + 60000 + 1);
    /* Repaired (the clock's, plus one), then taken (one more). */
    CU_ASSERT(info.version > now + 1 && info.version <= now + 60000 + 2);
    token = info.token;
    CU_ASSERT_EQUAL(sqlease_lease_acquire(g, &info, &err), SQLEASE_OK); /* a renew */
    CU_ASSERT_EQUAL(info.token, token);
    sqlease_lease_free(g);

    /* An expired hold with a NULL version: repaired, then watched for a
     * ttl from the repaired version, then taken with token + 1. */
    f = make(t, "dead", "follower", 300);
    sqle_lease_set_watch(f, 1);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(f, &info, &err), SQLEASE_NOT_HELD);
    sqle_sleep_ms(400);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(f, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, 4);
    sqlease_lease_free(f);

    /* A forced release of a row with a NULL token gives it one, a
     * version, and keeps who held it. */
    h = make(t, "forced", "admin", 30000);
    CU_ASSERT_EQUAL(sqlease_lease_release_force(h, &released, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(released, 1);
    row_text(t, "forced", row);
    CU_ASSERT_STRING_EQUAL(row[0], "");
    CU_ASSERT(strtoll(row[2], NULL, 10) > now);
    CU_ASSERT_STRING_EQUAL(row[4], "x");
    CU_ASSERT(strtoll(row[1], NULL, 10) > 1600000000000LL);
    CU_ASSERT_EQUAL(sqlease_lease_status(h, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.has_nulls, 0);
    CU_ASSERT_STRING_EQUAL(info.last_owner, "x");
    CU_ASSERT_EQUAL(sqlease_lease_acquire(h, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, strtoll(row[1], NULL, 10) + 1);
    sqlease_lease_free(h);
    tu_drop(db, t);
}

/*
 * A watching follower waits the HOLDER's ttl, as its take wrote it in the
 * row, not its own: a follower with ttl 0.5 s must not take, 0.5 s after
 * its first read, the row of a holder with ttl 2.5 s whose expiry the
 * database's clock already calls past (a step forward of that clock,
 * made here by moving the expiry back without a version change).
 */
static void test_watch_waits_the_holders_ttl(void)
{
    const char *t = tu_table();
    char sql[300], row[5][300];
    sqlease_lease *a, *b;
    sqlease_lease_info info;
    sqlease_error err;
    int64_t first, token;
    int i, took = 0;

    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    a = make(t, "job", "holder", 2500);
    b = make(t, "job", "quick", 500);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(a, &info, &err), SQLEASE_OK);
    token = info.token;
    row_text(t, "job", row);
    CU_ASSERT_STRING_EQUAL(row[3], "2500");
    CU_ASSERT_EQUAL(sqlease_lease_status(b, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.ttl_ms, 2500);
    snprintf(sql, sizeof sql, "UPDATE %s SET expires_at_ms = expires_at_ms - 100000 "
             "WHERE name = 'job'", t);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, NULL), SQLEASE_OK);
    sqle_lease_set_watch(b, 1);
    first = sqle_mono_ms();
    for (i = 0; i < 12; i++) {
        CU_ASSERT_EQUAL(sqlease_lease_acquire(b, &info, &err), SQLEASE_NOT_HELD);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "unchanged for 2500 ms"));
        sqle_sleep_ms(100);
    }
    CU_ASSERT(sqle_mono_ms() - first < 2400); /* else the box was too slow to tell */
    /* Once the holder's ttl has passed unchanged: taken, token + 1. */
    while (!took && sqle_mono_ms() - first < 6000) {
        took = sqlease_lease_acquire(b, &info, &err) == SQLEASE_OK;
        if (!took)
            sqle_sleep_ms(100);
    }
    CU_ASSERT_EQUAL(took, 1);
    CU_ASSERT(sqle_mono_ms() - first >= 2500);
    CU_ASSERT_EQUAL(info.token, token + 1);
    row_text(t, "job", row);
    CU_ASSERT_STRING_EQUAL(row[0], "quick");
    CU_ASSERT_STRING_EQUAL(row[3], "500");
    /* A release frees the row, keeps who held it and clears the ttl. */
    CU_ASSERT_EQUAL(sqlease_lease_release(b, NULL, &err), SQLEASE_OK);
    row_text(t, "job", row);
    CU_ASSERT_STRING_EQUAL(row[0], "");
    CU_ASSERT_STRING_EQUAL(row[3], "0");
    CU_ASSERT_STRING_EQUAL(row[4], "quick");
    sqlease_lease_free(a);
    sqlease_lease_free(b);
    tu_drop(db, t);
}

/*
 * A take that lost the race to a winner whose work was quick (it took
 * and released between this follower's read and its take) names the
 * winner all the same: the release kept it in last_owner, with the token
 * just after the one the read saw.
 */
static void test_lost_take_names_a_released_winner(void)
{
    const char *t = tu_table();
    sqlease_lease *f, *w;
    sqlease_lease_info info;
    sqle_each each;
    sqlease_error err;
    int taken = -1;

    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    f = make(t, "job", "loser", 30000);
    w = make(t, "job", "winner", 30000);
    memset(&each, 0, sizeof each);
    each.lease = f;
    CU_ASSERT_EQUAL_FATAL(sqle_lease_status_each(&each, 1, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(w, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_release(w, NULL, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqle_lease_take_seen(f, &each.info, 0, &info, &taken, &err),
                    SQLEASE_NOT_HELD);
    CU_ASSERT_EQUAL(taken, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "taken by winner"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "released since"));
    CU_ASSERT_STRING_EQUAL(info.last_owner, "winner");
    CU_ASSERT_EQUAL(info.token, each.info.token + 1);
    sqlease_lease_free(f);
    sqlease_lease_free(w);
    tu_drop(db, t);
}

/* Armed by the test below: force-release a row on another handle just
 * before the read that follows a batched take (a dialect that only
 * counts reads its rows to tell which it took). */
typedef struct force_between {
    sqlease_db *other;
    const char *table, *name;
    const char *status_each_head;
    int armed, fired;
} force_between;

static void force_on_read(void *ud, const char *sql)
{
    force_between *fb = ud;
    sqlease_lease *l = NULL;
    sqlease_options o;
    sqlease_error err;

    if (!fb->armed || strncmp(sql, fb->status_each_head, 40) != 0)
        return;
    fb->armed = 0;
    tu_options(&o, fb->table, fb->name, "admin", 30000, 7500, 15000, 3750);
    if (sqlease_lease_new(&l, fb->other, &o, &err) == SQLEASE_OK &&
        sqlease_lease_release_force(l, NULL, &err) == SQLEASE_OK)
        fb->fired = 1;
    sqlease_lease_free(l);
}

/*
 * Two processes given one owner id ("twin") read rows r and s free; the
 * second takes s first; the first's batched take then takes r alone.  On
 * a dialect whose UPDATE only counts (MySQL/MariaDB), a read tells which
 * rows it took: r shows "twin" and the token after the read's, and so
 * does s, the twin's.  If r is force-released just before that read, the
 * count (1) matches the one row that still shows "twin" (s), and the
 * first process would take s for its own: two holders of one token.  A
 * row taken and changed since makes the answer unknown: every take of
 * the chunk is a miss.  On a dialect that returns the rows it took the
 * answer is exact.  Either way s is never the first process's.
 */
static void test_take_each_twin_owner_forced_release(void)
{
    const char *t = tu_table();
    const char *names[2] = { "r", "s" };
    sqlease_lease *p1[2], *p2;
    sqlease_lease_info info;
    sqle_each each[2];
    sqlease_error err;
    force_between fb;
    char *head;
    size_t i;

    CU_ASSERT_EQUAL_FATAL(sqlease_migrate(db, t, names, 2, &err), SQLEASE_OK);
    memset(&fb, 0, sizeof fb);
    fb.other = tu_open();
    CU_ASSERT_PTR_NOT_NULL_FATAL(fb.other);
    fb.table = t;
    fb.name = "r";
    head = sqle_sql_for_table(sqlease_db_dialect(db) != NULL
                                  ? sqle_db_dialect(db)->status_each.head.sql : "",
                              t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(head);
    fb.status_each_head = head;
    memset(each, 0, sizeof each);
    for (i = 0; i < 2; i++) {
        p1[i] = make(t, names[i], "twin", 30000);
        each[i].lease = p1[i];
    }
    p2 = make(t, "s", "twin", 30000);
    CU_ASSERT_EQUAL_FATAL(sqle_lease_status_each(each, 2, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(p2, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, each[1].info.token + 1);
    fb.armed = 1;
    sqle_db_observe(db, force_on_read, &fb);
    CU_ASSERT_EQUAL(sqle_lease_take_each(each, 2, 0, &err), SQLEASE_OK);
    sqle_db_observe(db, NULL, NULL);
    /* s: the twin's, never this one's. */
    CU_ASSERT_EQUAL(each[1].hit, 0);
    CU_ASSERT_EQUAL(each[1].rc, SQLEASE_NOT_HELD);
    CU_ASSERT_EQUAL(sqlease_lease_fence(p1[1], &(sqlease_fence){ .size = sizeof(sqlease_fence) },
                                        &err), SQLEASE_NOT_HELD);
    if (is_mysql()) {
        /* The read ran, after the forced release of r: unknown, so r is
         * a miss too. */
        CU_ASSERT_EQUAL(fb.fired, 1);
        CU_ASSERT_EQUAL(each[0].hit, 0);
    } else {
        CU_ASSERT_EQUAL(fb.fired, 0);
        CU_ASSERT_EQUAL(each[0].hit, 1);
    }
    /* The twin still renews s: its hold, alone. */
    CU_ASSERT_EQUAL(sqlease_lease_acquire(p2, &info, &err), SQLEASE_OK);
    for (i = 0; i < 2; i++)
        sqlease_lease_free(p1[i]);
    sqlease_lease_free(p2);
    free(head);
    sqlease_db_close(fb.other);
    tu_drop(db, t);
}

static void add(void)
{
    CU_pSuite s = CU_add_suite("lease", NULL, NULL);
    CU_add_test(s, "two owners contend, exactly one holds", test_contend_one_holder);
    CU_add_test(s, "renew keeps the token in one statement", test_renew_keeps_token);
    CU_add_test(s, "take after expiry gives token + 1", test_take_after_expiry_new_token);
    CU_add_test(s, "release is scoped to the hold", test_release_scoped_to_owner);
    CU_add_test(s, "a release with a minimum hold keeps the row until then",
                test_release_keeps_min_hold);
    CU_add_test(s, "one owner id, two handles: two holds, never both",
                test_same_owner_is_not_the_same_hold);
    CU_add_test(s, "look-alike owner ids and names are others",
                test_look_alike_owners_and_names);
    CU_add_test(s, "a row with no owner is free", test_no_owner_is_free);
    CU_add_test(s, "an older table's NULL owner or expiry is free",
                test_null_owner_or_expiry_is_free);
    CU_add_test(s, "tokens never go back, even for a re-created row",
                test_tokens_never_go_back);
    CU_add_test(s, "a lost renew is a loss even if the take fails",
                test_loss_even_if_take_fails);
    CU_add_test(s, "two lease names are independent", test_names_independent);
    CU_add_test(s, "missing row and table are reported", test_missing_row_and_table);
    CU_add_test(s, "a clock read of 0 is rejected", test_clock_zero_rejected);
    CU_add_test(s, "migrate is idempotent and upgrades go-admin tables",
                test_migrate_idempotent_and_upgrade);
    CU_add_test(s, "migrate fills an older table's NULLs before changing its columns",
                test_migrate_fills_nulls);
    CU_add_test(s, "options, durations, owner ids and NULLs", test_options_and_bad_input);
    CU_add_test(s, "names, owners and tables are checked up front",
                test_names_owners_tables_checked);
    CU_add_test(s, "redaction: PWD-suffixed keys, blanks before '='", test_redaction_table);
    CU_add_test(s, "batched renew: 70 leases, one statement", test_renew_each_one_statement);
    CU_add_test(s, "batched renew: exactly the stolen and the expired hold are lost",
                test_renew_each_exact_losses);
    CU_add_test(s, "batched renew and read split into chunks", test_renew_each_chunks);
    CU_add_test(s, "batched renew: duplicates, look-alike owners, mixed batches",
                test_renew_each_duplicates_and_look_alikes);
    CU_add_test(s, "batched read: held, free, expired and missing rows", test_status_each_mix);
    CU_add_test(s, "take after a batched read", test_take_seen);
    CU_add_test(s, "batched take of watched rows: none before the watch, only those as read",
                test_take_each_watched);
    CU_add_test(s, "batched take of followers that differ in ttl: one take of a row",
                test_take_each_mixed);
    CU_add_test(s, "batched first take of free rows and batched release: per-lease answers",
                test_take_each_and_release_each);
    CU_add_test(s, "the version, and a wait of a ttl watches before it takes",
                test_version_and_watched_wait);
    CU_add_test(s, "a step back of the database's clock: taken after a ttl's watch",
                test_watched_take_after_step_back);
    CU_add_test(s, "a step back of the database's clock: a release still frees the row",
                test_release_after_step_back);
    CU_add_test(s, "a failed batch answers every lease with the error", test_each_failure);
    CU_add_test(s, "a NULL token or version is repaired, never stuck, never watched",
                test_null_token_or_version_repaired);
    CU_add_test(s, "a watch waits the holder's ttl, not the follower's",
                test_watch_waits_the_holders_ttl);
    CU_add_test(s, "a lost take names a winner that has released already",
                test_lost_take_names_a_released_winner);
    CU_add_test(s, "a batched take never takes a twin owner id's row for its own",
                test_take_each_twin_owner_forced_release);
}

int main(void)
{
    int rc;
    db = tu_open();
    if (db == NULL)
        return 2;
    rc = tu_main(add);
    sqlease_db_close(db);
    tu_cleanup();
    return rc;
}
