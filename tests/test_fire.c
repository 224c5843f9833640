/*
 * test_fire.c -- the fire ledger against a real database through the real
 * ODBC driver: a fire is claimed once among racing claimants, only under
 * a live hold and not before its time; how its run ended, its abandon and
 * rerun, the fires that did not run; the reads and trims of the table;
 * and run --schedule's take of a fire and its outcome row.  Runs on
 * whatever $SQLEASE_TEST_DSN names (SQLite by default).
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fire.h"
#include "internal.h"
#include "lease.h"
#include "platform.h"

#include "testutil.h"

static sqlease_db *db;

/* A lease table with `name` seeded and a fire table, named for this test. */
typedef struct tables {
    char lease[64], fire[64];
} tables;

static void make_tables(tables *t, const char *name)
{
    sqlease_error err;

    snprintf(t->lease, sizeof t->lease, "%s", tu_table());
    snprintf(t->fire, sizeof t->fire, "%s", tu_table());
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t->lease, name), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(sqle_fire_migrate(db, t->fire, &err), SQLEASE_OK);
}

static void drop_tables(const tables *t)
{
    tu_drop(db, t->fire);
    tu_drop(db, t->lease);
}

static sqlease_lease *make_lease(sqlease_db *d, const char *table, const char *name,
                                 const char *owner, int64_t ttl)
{
    sqlease_options o;
    sqlease_error err;
    sqlease_lease *l = NULL;

    tu_options(&o, table, name, owner, ttl, ttl / 4, ttl / 2, ttl / 8 > 0 ? ttl / 8 : 1);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&l, d, &o, &err), SQLEASE_OK);
    return l;
}

/* Take the lease with `l`; its token. */
static int64_t hold(sqlease_lease *l)
{
    sqlease_lease_info info;
    sqlease_error err;

    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(l, &info, &err), SQLEASE_OK);
    return info.token;
}

static int64_t db_now(void)
{
    sqlease_error err;
    int64_t now = 0;

    CU_ASSERT_EQUAL_FATAL(sqlease_db_now_ms(db, &now, &err), SQLEASE_OK);
    return now;
}

static sqle_fire_ctx ctx(sqlease_db *d, const tables *t, const char *name, const char *owner,
                         const char *host)
{
    sqle_fire_ctx c;

    c.db = d;
    c.lease_table = t->lease;
    c.fire_table = t->fire;
    c.name = name;
    c.owner = owner;
    c.host = host;
    return c;
}

/* The fire's row, which must exist. */
static sqlease_fire_info row_of(const sqle_fire_ctx *c, const char *job, int64_t fire_at)
{
    sqlease_fire_info f;
    sqlease_error err;
    int64_t now = 0;

    CU_ASSERT_EQUAL(sqle_fire_read(c, job, fire_at, &f, &now, 0, &err), SQLEASE_OK);
    CU_ASSERT(now > 0);
    return f;
}

/* ---- a start barrier for racing threads ---------------------------- */

typedef struct barrier {
    sqle_mutex m;
    sqle_cond cv;
    int ready, go;
} barrier;

static void barrier_init(barrier *b)
{
    memset(b, 0, sizeof *b);
    sqle_mutex_init(&b->m);
    sqle_cond_init(&b->cv);
}

static void barrier_wait(barrier *b)
{
    sqle_mutex_lock(&b->m);
    b->ready++;
    sqle_cond_broadcast(&b->cv);
    while (!b->go)
        sqle_cond_wait_until(&b->cv, &b->m, -1);
    sqle_mutex_unlock(&b->m);
}

/* Let them all go once n are waiting. */
static void barrier_release(barrier *b, int n)
{
    sqle_mutex_lock(&b->m);
    while (b->ready < n)
        sqle_cond_wait_until(&b->cv, &b->m, -1);
    b->go = 1;
    sqle_cond_broadcast(&b->cv);
    sqle_mutex_unlock(&b->m);
}

static void barrier_destroy(barrier *b)
{
    sqle_cond_destroy(&b->cv);
    sqle_mutex_destroy(&b->m);
}

/* ------------------------------------------------------------------ */

#define RACERS 8

typedef struct claimant {
    barrier *b;
    sqle_fire_ctx c;
    char host[32];
    int64_t token, fire_at;
    int rc;
    uint64_t statements;
    sqlease_fire_info seen;
    sqlease_error err;
} claimant;

static void claim_main(void *arg)
{
    claimant *k = arg;
    uint64_t before;

    barrier_wait(k->b);
    before = sqlease_db_statements(k->c.db);
    k->rc = sqle_fire_claim(&k->c, k->token, "backup", k->fire_at, 0, &k->seen, &k->err);
    k->statements = sqlease_db_statements(k->c.db) - before;
}

/*
 * One hold, eight threads on eight connections claiming one fire at the
 * same moment (a scheduler's duplicates): exactly one claims it, with one
 * statement, and every other is told the fire is claimed and by which
 * host, with one more statement (the read that says why).
 */
static void test_claim_once_among_racers(void)
{
    tables t;
    claimant k[RACERS];
    sqle_thread th[RACERS];
    barrier b;
    sqlease_lease *l;
    sqlease_fire_info f;
    int64_t token, fire_at;
    int i, ok = 0, claimed = 0, winner = -1;

    make_tables(&t, "sched");
    l = make_lease(db, t.lease, "sched", "holder", 30000);
    token = hold(l);
    fire_at = db_now() - 1000;
    barrier_init(&b);
    for (i = 0; i < RACERS; i++) {
        memset(&k[i], 0, sizeof k[i]);
        k[i].b = &b;
        snprintf(k[i].host, sizeof k[i].host, "host-%d", i);
        k[i].c = ctx(tu_open(), &t, "sched", "holder", k[i].host);
        CU_ASSERT_PTR_NOT_NULL_FATAL(k[i].c.db);
        k[i].token = token;
        k[i].fire_at = fire_at;
        CU_ASSERT_EQUAL_FATAL(sqle_thread_start(&th[i], claim_main, &k[i]), 0);
    }
    barrier_release(&b, RACERS);
    for (i = 0; i < RACERS; i++)
        sqle_thread_join(&th[i]);
    for (i = 0; i < RACERS; i++) {
        if (k[i].rc == SQLEASE_OK) {
            ok++;
            winner = i;
            CU_ASSERT_EQUAL(k[i].statements, 1);
            CU_ASSERT_STRING_EQUAL(k[i].seen.state, "running");
            CU_ASSERT_EQUAL(k[i].seen.attempt, 1);
            CU_ASSERT_EQUAL(k[i].seen.token, token);
        } else if (k[i].rc == SQLEASE_CLAIMED) {
            claimed++;
            CU_ASSERT_EQUAL(k[i].statements, 2);
        } else {
            fprintf(stderr, "racer %d: %s: %s\n", i, sqlease_status_name(k[i].rc),
                    k[i].err.message);
        }
    }
    CU_ASSERT_EQUAL(ok, 1);
    CU_ASSERT_EQUAL(claimed, RACERS - 1);
    CU_ASSERT_FATAL(winner >= 0);
    for (i = 0; i < RACERS; i++) {
        if (k[i].rc != SQLEASE_CLAIMED)
            continue;
        /* Named: the winner's host, the hold, the row's state. */
        CU_ASSERT_STRING_EQUAL(k[i].seen.host, k[winner].host);
        CU_ASSERT_STRING_EQUAL(k[i].seen.owner, "holder");
        CU_ASSERT_STRING_EQUAL(k[i].seen.state, "running");
        CU_ASSERT_EQUAL(k[i].seen.token, token);
        CU_ASSERT_EQUAL(k[i].seen.fire_at_ms, fire_at);
        CU_ASSERT_STRING_EQUAL(k[i].seen.job, "backup");
        CU_ASSERT(k[i].seen.started_at_ms >= fire_at);
        CU_ASSERT(k[i].seen.db_now_ms >= k[i].seen.started_at_ms);
        CU_ASSERT_PTR_NOT_NULL(strstr(k[i].err.message, k[winner].host));
    }
    f = row_of(&k[0].c, "backup", fire_at);
    CU_ASSERT_STRING_EQUAL(f.host, k[winner].host);
    CU_ASSERT_EQUAL(f.ended_at_ms, 0);
    CU_ASSERT_EQUAL(f.has_exit, 0);
    CU_ASSERT_EQUAL(f.duration_ms, -1);
    CU_ASSERT_STRING_EQUAL(f.note, "");
    for (i = 0; i < RACERS; i++)
        sqlease_db_close(k[i].c.db);
    barrier_destroy(&b);
    sqlease_lease_free(l);
    drop_tables(&t);
}

/*
 * Only the holder claims: a claim under a token the lease has moved on
 * from (another holder took it since), under an owner id that is not the
 * holder's, or of a fire the database's clock has not reached, changes
 * nothing and says which.
 */
static void test_claim_guards(void)
{
    tables t;
    sqlease_lease *a, *b;
    sqle_fire_ctx ca, cb;
    sqlease_fire_info f;
    sqlease_error err;
    int64_t ta, tb, now;
    int released = 0;
    uint64_t before;

    make_tables(&t, "sched");
    a = make_lease(db, t.lease, "sched", "host-a", 30000);
    b = make_lease(db, t.lease, "sched", "host-b", 30000);
    ca = ctx(db, &t, "sched", "host-a", "a.example");
    cb = ctx(db, &t, "sched", "host-b", "b.example");
    ta = hold(a);
    now = db_now();
    CU_ASSERT_EQUAL(sqle_fire_claim(&ca, ta, "report", now - 10, 0, NULL, &err), SQLEASE_OK);
    /* Another owner id with the holder's token: not its hold. */
    CU_ASSERT_EQUAL(sqle_fire_claim(&cb, ta, "report", now - 5, 0, NULL, &err),
                    SQLEASE_NOT_HELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "host-b"));
    /* Not due yet by the database's clock: nothing written, and said. */
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_fire_claim(&ca, ta, "report", now + 60000, 0, &f, &err),
                    SQLEASE_NOT_DUE);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "not due"));
    CU_ASSERT_EQUAL(f.fire_at_ms, 0); /* seen is filled only for a claimed fire */
    CU_ASSERT_EQUAL(sqle_fire_read(&ca, "report", now + 60000, &f, NULL, 0, &err),
                    SQLEASE_ENOROW);
    CU_ASSERT_EQUAL(sqle_fire_read(&ca, "report", now - 5, &f, NULL, 0, &err), SQLEASE_ENOROW);

    /* a lets go, b takes the lease: a's token is stale. */
    CU_ASSERT_EQUAL(sqlease_lease_release(a, &released, &err), SQLEASE_OK);
    tb = hold(b);
    CU_ASSERT_EQUAL(tb, ta + 1);
    CU_ASSERT_EQUAL(sqle_fire_claim(&ca, ta, "report", now - 1, 0, &f, &err), SQLEASE_NOT_HELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "hold is gone"));
    CU_ASSERT_EQUAL(sqle_fire_read(&ca, "report", now - 1, &f, NULL, 0, &err), SQLEASE_ENOROW);
    /* The fire a claimed stays a's: b is told so. */
    CU_ASSERT_EQUAL(sqle_fire_claim(&cb, tb, "report", now - 10, 0, &f, &err), SQLEASE_CLAIMED);
    CU_ASSERT_STRING_EQUAL(f.owner, "host-a");
    CU_ASSERT_STRING_EQUAL(f.host, "a.example");
    CU_ASSERT_EQUAL(f.token, ta);
    CU_ASSERT_EQUAL(sqle_fire_claim(&cb, tb, "report", now - 1, 0, &f, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(f.token, tb);
    /* An expired hold claims nothing either. */
    sqlease_lease_free(a);
    sqlease_lease_free(b);
    a = make_lease(db, t.lease, "sched", "host-a", 300);
    CU_ASSERT_EQUAL(sqlease_lease_release_force(a, &released, &err), SQLEASE_OK);
    ta = hold(a);
    sqle_sleep_ms(400);
    CU_ASSERT_EQUAL(sqle_fire_claim(&ca, ta, "report", now, 0, NULL, &err), SQLEASE_NOT_HELD);
    sqlease_lease_free(a);
    drop_tables(&t);
}

/*
 * Jobs compare as exact bytes, as lease names do (MySQL/MariaDB's default
 * collation would call these one job): each is a fire of its own, and a
 * claim of one never reads as another's.
 */
static void test_look_alike_jobs(void)
{
    static const char *const jobs[] = { "backup", "Backup", "BACKUP", "b\xc3\xa4" "ckup",
                                        "backup.", "backup 2" };
    tables t;
    sqlease_lease *l;
    sqle_fire_ctx c;
    sqlease_fire_info f;
    sqlease_error err;
    int64_t token, now;
    size_t i;

    make_tables(&t, "sched");
    l = make_lease(db, t.lease, "sched", "holder", 30000);
    c = ctx(db, &t, "sched", "holder", "h");
    token = hold(l);
    now = db_now();
    for (i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
        CU_ASSERT_EQUAL(sqle_fire_claim(&c, token, jobs[i], now - 10, 0, &f, &err), SQLEASE_OK);
        CU_ASSERT_STRING_EQUAL(f.job, jobs[i]);
    }
    for (i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
        CU_ASSERT_EQUAL(sqle_fire_end(&c, token, jobs[i], now - 10, 1, "done", (int)i, NULL, 0,
                                      &err), SQLEASE_OK);
        f = row_of(&c, jobs[i], now - 10);
        CU_ASSERT_EQUAL(f.exit_status, (int)i);
        CU_ASSERT_STRING_EQUAL(f.job, jobs[i]);
    }
    CU_ASSERT_EQUAL(sqle_fire_read(&c, "backu", now - 10, NULL, NULL, 0, &err), SQLEASE_ENOROW);
    sqlease_lease_free(l);
    drop_tables(&t);
}

/*
 * The end of a claimed run: state, exit status, its times by the
 * database's clock, in one statement; only that claim's running row.
 */
static void test_end(void)
{
    tables t;
    sqlease_lease *l;
    sqle_fire_ctx c;
    sqlease_fire_info f;
    sqlease_error err;
    int64_t token, now;
    uint64_t before;

    make_tables(&t, "sched");
    l = make_lease(db, t.lease, "sched", "holder", 30000);
    c = ctx(db, &t, "sched", "holder", "h1");
    token = hold(l);
    now = db_now();
    CU_ASSERT_EQUAL(sqle_fire_claim(&c, token, "etl", now - 100, 0, NULL, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqle_fire_claim(&c, token, "etl", now - 50, 0, NULL, &err), SQLEASE_OK);
    sqle_sleep_ms(30);
    /* Another attempt or token is not that claim. */
    CU_ASSERT_EQUAL(sqle_fire_end(&c, token, "etl", now - 100, 2, "done", 0, NULL, 0, &err),
                    SQLEASE_NOT_HELD);
    CU_ASSERT_EQUAL(sqle_fire_end(&c, token + 1, "etl", now - 100, 1, "done", 0, NULL, 0, &err),
                    SQLEASE_NOT_HELD);
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_fire_end(&c, token, "etl", now - 100, 1, "done", 0, NULL, 0, &err),
                    SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 1);
    f = row_of(&c, "etl", now - 100);
    CU_ASSERT_STRING_EQUAL(f.state, "done");
    CU_ASSERT_EQUAL(f.has_exit, 1);
    CU_ASSERT_EQUAL(f.exit_status, 0);
    CU_ASSERT(f.ended_at_ms >= f.started_at_ms + 25);
    CU_ASSERT_EQUAL(f.duration_ms, f.ended_at_ms - f.started_at_ms);
    CU_ASSERT_STRING_EQUAL(f.note, "");
    /* Ended once: a second end finds no running claim and says what it is. */
    CU_ASSERT_EQUAL(sqle_fire_end(&c, token, "etl", now - 100, 1, "failed", 3, NULL, 0, &err),
                    SQLEASE_NOT_HELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "done by holder"));
    CU_ASSERT_STRING_EQUAL(row_of(&c, "etl", now - 100).state, "done");
    /* Failed, without an exit status, with a note: even after the hold
     * was released (the end is not fenced by the lease). */
    CU_ASSERT_EQUAL(sqlease_lease_release(l, NULL, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqle_fire_end(&c, token, "etl", now - 50, 1, "failed", SQLEASE_FIRE_NO_EXIT,
                                  "killed by signal 9", 0, &err), SQLEASE_OK);
    f = row_of(&c, "etl", now - 50);
    CU_ASSERT_STRING_EQUAL(f.state, "failed");
    CU_ASSERT_EQUAL(f.has_exit, 0);
    CU_ASSERT_STRING_EQUAL(f.note, "killed by signal 9");
    CU_ASSERT(f.duration_ms >= 0);
    CU_ASSERT_EQUAL(sqle_fire_end(&c, token, "etl", now - 7, 1, "done", 0, NULL, 0, &err),
                    SQLEASE_ENOROW);
    sqlease_lease_free(l);
    drop_tables(&t);
}

/*
 * A new holder marks the running rows of older holds abandoned (only
 * those: not its own, not finished ones, not another name's), fenced by
 * its hold; it reruns one once (attempt + 1), bound to the attempt read.
 */
static void test_abandon_and_rerun(void)
{
    tables t;
    sqlease_lease *a, *b, *o;
    sqle_fire_ctx ca, cb, co;
    sqlease_fire_info f;
    sqlease_error err;
    int64_t ta, tb, to, now, rows = -1;

    make_tables(&t, "sched");
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t.lease, "other"), SQLEASE_OK);
    a = make_lease(db, t.lease, "sched", "host-a", 30000);
    b = make_lease(db, t.lease, "sched", "host-b", 30000);
    o = make_lease(db, t.lease, "other", "host-a", 30000);
    ca = ctx(db, &t, "sched", "host-a", "a");
    cb = ctx(db, &t, "sched", "host-b", "b");
    co = ctx(db, &t, "other", "host-a", "a");
    ta = hold(a);
    to = hold(o);
    now = db_now();
    CU_ASSERT_EQUAL(sqle_fire_claim(&ca, ta, "j1", now - 30, 0, NULL, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqle_fire_claim(&ca, ta, "j2", now - 30, 0, NULL, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqle_fire_claim(&ca, ta, "j3", now - 30, 0, NULL, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqle_fire_end(&ca, ta, "j3", now - 30, 1, "done", 0, NULL, 0, &err),
                    SQLEASE_OK);
    CU_ASSERT_EQUAL(sqle_fire_claim(&co, to, "j1", now - 30, 0, NULL, &err), SQLEASE_OK);
    /* a's hold ends (its work was stopped), b takes the lease. */
    CU_ASSERT_EQUAL(sqlease_lease_release_force(a, NULL, &err), SQLEASE_OK);
    tb = hold(b);
    CU_ASSERT(tb > ta);
    CU_ASSERT_EQUAL(sqle_fire_claim(&cb, tb, "j4", now - 30, 0, NULL, &err), SQLEASE_OK);
    /* a stale holder abandons nothing. */
    CU_ASSERT_EQUAL(sqle_fire_abandon(&ca, ta + 5, &rows, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(rows, 0);
    CU_ASSERT_EQUAL(sqle_fire_abandon(&cb, tb, &rows, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(rows, 2);
    f = row_of(&cb, "j1", now - 30);
    CU_ASSERT_STRING_EQUAL(f.state, "abandoned");
    CU_ASSERT(f.ended_at_ms > 0);
    CU_ASSERT_EQUAL(f.token, ta);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.note, "token"));
    CU_ASSERT_STRING_EQUAL(row_of(&cb, "j2", now - 30).state, "abandoned");
    CU_ASSERT_STRING_EQUAL(row_of(&cb, "j3", now - 30).state, "done");
    CU_ASSERT_STRING_EQUAL(row_of(&cb, "j4", now - 30).state, "running");
    CU_ASSERT_STRING_EQUAL(row_of(&co, "j1", now - 30).state, "running");
    /* Again: nothing left to mark. */
    CU_ASSERT_EQUAL(sqle_fire_abandon(&cb, tb, &rows, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(rows, 0);
    /* A claim of an abandoned fire is told it is claimed, and reruns it. */
    CU_ASSERT_EQUAL(sqle_fire_claim(&cb, tb, "j1", now - 30, 0, &f, &err), SQLEASE_CLAIMED);
    CU_ASSERT_STRING_EQUAL(f.state, "abandoned");
    CU_ASSERT_EQUAL(f.attempt, 1);
    CU_ASSERT_EQUAL(sqle_fire_reclaim(&cb, tb, "j1", now - 30, f.attempt, 0, &f, &err),
                    SQLEASE_OK);
    CU_ASSERT_EQUAL(f.attempt, 2);
    f = row_of(&cb, "j1", now - 30);
    CU_ASSERT_STRING_EQUAL(f.state, "running");
    CU_ASSERT_EQUAL(f.attempt, 2);
    CU_ASSERT_EQUAL(f.token, tb);
    CU_ASSERT_STRING_EQUAL(f.owner, "host-b");
    CU_ASSERT_STRING_EQUAL(f.host, "b");
    CU_ASSERT_EQUAL(f.ended_at_ms, 0);
    CU_ASSERT_STRING_EQUAL(f.note, "");
    /* Once: the same attempt again is someone else's rerun now. */
    CU_ASSERT_EQUAL(sqle_fire_reclaim(&cb, tb, "j1", now - 30, 1, 0, &f, &err), SQLEASE_CLAIMED);
    CU_ASSERT_EQUAL(f.attempt, 2);
    /* A stale hold reruns nothing; a fire without a row has none to rerun. */
    CU_ASSERT_EQUAL(sqle_fire_reclaim(&ca, ta, "j2", now - 30, 1, 0, NULL, &err),
                    SQLEASE_NOT_HELD);
    CU_ASSERT_STRING_EQUAL(row_of(&cb, "j2", now - 30).state, "abandoned");
    CU_ASSERT_EQUAL(sqle_fire_reclaim(&cb, tb, "j9", now - 30, 1, 0, NULL, &err),
                    SQLEASE_ENOROW);
    /* The rerun ends under its attempt. */
    CU_ASSERT_EQUAL(sqle_fire_end(&cb, tb, "j1", now - 30, 2, "done", 0, NULL, 0, &err),
                    SQLEASE_OK);
    sqlease_lease_free(a);
    sqlease_lease_free(b);
    sqlease_lease_free(o);
    drop_tables(&t);
}

/* Fires that did not run: skipped or missed, with why, under the claim's
 * guards. */
static void test_record(void)
{
    tables t;
    sqlease_lease *l;
    sqle_fire_ctx c;
    sqlease_fire_info f;
    sqlease_error err;
    int64_t token, now;

    make_tables(&t, "sched");
    l = make_lease(db, t.lease, "sched", "holder", 30000);
    c = ctx(db, &t, "sched", "holder", "h1");
    token = hold(l);
    now = db_now();
    CU_ASSERT_EQUAL(sqle_fire_record(&c, token, "sync", now - 60000, "missed",
                                     "the scheduler was down", 0, &f, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(f.state, "missed");
    CU_ASSERT_EQUAL(sqle_fire_record(&c, token, "sync", now - 1, "skipped",
                                     "the previous run still runs", 0, NULL, &err), SQLEASE_OK);
    f = row_of(&c, "sync", now - 60000);
    CU_ASSERT_STRING_EQUAL(f.state, "missed");
    CU_ASSERT_STRING_EQUAL(f.note, "the scheduler was down");
    CU_ASSERT_EQUAL(f.started_at_ms, f.ended_at_ms);
    CU_ASSERT(f.started_at_ms >= now);
    CU_ASSERT_EQUAL(f.attempt, 1);
    CU_ASSERT_EQUAL(f.token, token);
    f = row_of(&c, "sync", now - 1);
    CU_ASSERT_STRING_EQUAL(f.state, "skipped");
    /* A fire that has a row keeps it; one not due is not recorded. */
    CU_ASSERT_EQUAL(sqle_fire_record(&c, token, "sync", now - 1, "missed", NULL, 0, &f, &err),
                    SQLEASE_CLAIMED);
    CU_ASSERT_STRING_EQUAL(f.state, "skipped");
    CU_ASSERT_EQUAL(sqle_fire_claim(&c, token, "sync", now - 1, 0, NULL, &err), SQLEASE_CLAIMED);
    CU_ASSERT_EQUAL(sqle_fire_record(&c, token, "sync", now + 60000, "skipped", NULL, 0, NULL,
                                     &err), SQLEASE_NOT_DUE);
    CU_ASSERT_EQUAL(sqle_fire_record(&c, token + 1, "sync", now - 2, "skipped", NULL, 0, NULL,
                                     &err), SQLEASE_NOT_HELD);
    sqlease_lease_free(l);
    drop_tables(&t);
}

/* Rows written directly, for the reads: `n` rows of (name, job,
 * fire_at_ms, state) in one INSERT. */
typedef struct fire_spec {
    const char *name, *job;
    int64_t fire_at;
    const char *state;
} fire_spec;

static void insert_rows(const tables *t, const fire_spec *v, size_t n)
{
    char *sql = malloc(200 + n * 160);
    size_t i, len;

    CU_ASSERT_PTR_NOT_NULL_FATAL(sql);
    len = (size_t)sprintf(sql, "INSERT INTO %s (name, job, fire_at_ms, state, attempt, owner, "
                          "host, token, started_at_ms, ended_at_ms) VALUES ", t->fire);
    for (i = 0; i < n; i++)
        len += (size_t)sprintf(sql + len, "%s('%s', '%s', %lld, '%s', 1, 'o', 'h', 1, %lld, 0)",
                               i > 0 ? ", " : "", v[i].name, v[i].job, (long long)v[i].fire_at,
                               v[i].state, (long long)v[i].fire_at);
    CU_ASSERT_EQUAL(tu_sql(db, sql, NULL), SQLEASE_OK);
    free(sql);
}

typedef struct last_seen {
    int n;
    char jobs[200][SQLEASE_MAX_JOB + 1];
    int64_t last[200];
} last_seen;

static int on_last(void *ud, const char *job, int64_t last)
{
    last_seen *s = ud;
    if (s->n < 200) {
        snprintf(s->jobs[s->n], sizeof s->jobs[s->n], "%s", job);
        s->last[s->n] = last;
    }
    s->n++;
    return 0;
}

/* Per job, its latest fire, whatever its state; of one name; all of
 * them, however many pages they take. */
static void test_last(void)
{
    tables t;
    sqle_fire_ctx c;
    sqlease_error err;
    fire_spec v[140];
    last_seen *s = calloc(1, sizeof *s);
    char jobs[130][16];
    size_t i;

    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    make_tables(&t, "sched");
    c = ctx(db, &t, "sched", "holder", "h");
    v[0] = (fire_spec){ "sched", "a", 1000, "done" };
    v[1] = (fire_spec){ "sched", "a", 3000, "missed" };
    v[2] = (fire_spec){ "sched", "a", 2000, "running" };
    v[3] = (fire_spec){ "sched", "b", 500, "failed" };
    v[4] = (fire_spec){ "other", "c", 9000, "done" };
    v[5] = (fire_spec){ "other", "a", 9000, "done" };
    insert_rows(&t, v, 6);
    CU_ASSERT_EQUAL(sqle_fire_last(&c, on_last, s, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(s->n, 2);
    CU_ASSERT_STRING_EQUAL(s->jobs[0], "a");
    CU_ASSERT_EQUAL(s->last[0], 3000);
    CU_ASSERT_STRING_EQUAL(s->jobs[1], "b");
    CU_ASSERT_EQUAL(s->last[1], 500);
    /* 130 jobs: two pages, each job once, in order. */
    for (i = 0; i < 130; i++) {
        snprintf(jobs[i], sizeof jobs[i], "job%03zu", i);
        v[i] = (fire_spec){ "many", jobs[i], (int64_t)(1000 + i), "done" };
    }
    insert_rows(&t, v, 130);
    c.name = "many";
    memset(s, 0, sizeof *s);
    CU_ASSERT_EQUAL(sqle_fire_last(&c, on_last, s, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(s->n, 130);
    for (i = 0; i < 130 && i < (size_t)s->n; i++) {
        CU_ASSERT_STRING_EQUAL(s->jobs[i], jobs[i]);
        CU_ASSERT_EQUAL(s->last[i], (int64_t)(1000 + i));
    }
    free(s);
    drop_tables(&t);
}

typedef struct listed {
    int n, stop_at;
    char name[64][SQLEASE_MAX_NAME + 1];
    char job[64][SQLEASE_MAX_JOB + 1];
    int64_t at[64];
    size_t size;
} listed;

static int on_row(void *ud, const sqlease_fire_info *f)
{
    listed *s = ud;
    if (s->n < 64) {
        snprintf(s->name[s->n], sizeof s->name[s->n], "%s", f->name);
        snprintf(s->job[s->n], sizeof s->job[s->n], "%s", f->job);
        s->at[s->n] = f->fire_at_ms;
    }
    s->size = f->size;
    s->n++;
    return s->stop_at > 0 && s->n >= s->stop_at;
}

/* Newest first, then by name and job; by name, job and since; in windows
 * of a few rows, also when more rows share one instant than a window
 * holds. */
static void test_list(void)
{
    tables t;
    sqlease_error err;
    listed s;
    fire_spec v[12];
    int i;

    make_tables(&t, "sched");
    v[0] = (fire_spec){ "sched", "a", 1000, "done" };
    v[1] = (fire_spec){ "sched", "b", 1000, "done" };
    v[2] = (fire_spec){ "sched", "a", 2000, "failed" };
    v[3] = (fire_spec){ "other", "a", 1500, "done" };
    v[4] = (fire_spec){ "other", "b", 3000, "running" };
    v[5] = (fire_spec){ "sched", "a", 500, "skipped" };
    for (i = 0; i < 6; i++) /* six rows at one instant */
        v[6 + i] = (fire_spec){ i % 2 ? "other" : "sched", i < 2 ? "x" : i < 4 ? "y" : "z", 700,
                                "done" };
    insert_rows(&t, v, 12);
    memset(&s, 0, sizeof s);
    CU_ASSERT_EQUAL(sqlease_fire_list(db, t.fire, NULL, NULL, 0, on_row, &s, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(s.n, 12);
    CU_ASSERT_EQUAL(s.size, sizeof(sqlease_fire_info));
    {
        static const char *const want[12][2] = {
            { "other", "b" }, { "sched", "a" }, { "other", "a" }, { "sched", "a" },
            { "sched", "b" }, { "other", "x" }, { "other", "y" }, { "other", "z" },
            { "sched", "x" }, { "sched", "y" }, { "sched", "z" }, { "sched", "a" } };
        static const int64_t at[12] = { 3000, 2000, 1500, 1000, 1000, 700, 700, 700, 700, 700,
                                        700, 500 };
        for (i = 0; i < 12; i++) {
            CU_ASSERT_STRING_EQUAL(s.name[i], want[i][0]);
            CU_ASSERT_STRING_EQUAL(s.job[i], want[i][1]);
            CU_ASSERT_EQUAL(s.at[i], at[i]);
        }
        /* The same in windows of 2 rows (the six of one instant are read
         * with a window grown to hold them), and of 5. */
        for (i = 2; i <= 5; i += 3) {
            listed w;
            int j;
            memset(&w, 0, sizeof w);
            CU_ASSERT_EQUAL(sqle_fire_list(db, t.fire, NULL, NULL, 0, INT64_MAX, (size_t)i,
                                           on_row, &w, &err), SQLEASE_OK);
            CU_ASSERT_EQUAL(w.n, 12);
            for (j = 0; j < 12 && j < w.n; j++) {
                CU_ASSERT_STRING_EQUAL(w.name[j], want[j][0]);
                CU_ASSERT_STRING_EQUAL(w.job[j], want[j][1]);
                CU_ASSERT_EQUAL(w.at[j], at[j]);
            }
        }
    }
    memset(&s, 0, sizeof s);
    CU_ASSERT_EQUAL(sqlease_fire_list(db, t.fire, "sched", NULL, 0, on_row, &s, &err),
                    SQLEASE_OK);
    CU_ASSERT_EQUAL(s.n, 7);
    memset(&s, 0, sizeof s);
    CU_ASSERT_EQUAL(sqlease_fire_list(db, t.fire, "sched", "a", 0, on_row, &s, &err),
                    SQLEASE_OK);
    CU_ASSERT_EQUAL(s.n, 3);
    CU_ASSERT_EQUAL(s.at[0], 2000);
    CU_ASSERT_EQUAL(s.at[2], 500);
    memset(&s, 0, sizeof s);
    CU_ASSERT_EQUAL(sqlease_fire_list(db, t.fire, NULL, "a", 1000, on_row, &s, &err),
                    SQLEASE_OK);
    CU_ASSERT_EQUAL(s.n, 3);
    memset(&s, 0, sizeof s);
    s.stop_at = 2;
    CU_ASSERT_EQUAL(sqlease_fire_list(db, t.fire, NULL, NULL, 0, on_row, &s, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(s.n, 2);
    memset(&s, 0, sizeof s);
    CU_ASSERT_EQUAL(sqlease_fire_list(db, t.fire, "nobody", NULL, 0, on_row, &s, &err),
                    SQLEASE_OK);
    CU_ASSERT_EQUAL(s.n, 0);
    drop_tables(&t);
}

/* Trimmed window by window, one name's finished rows only, and never a
 * job's latest row (b's only one is older than every window here): a
 * new holder's catch-up starts from it. */
static void test_prune(void)
{
    tables t;
    sqle_fire_ctx c;
    sqlease_error err;
    listed s;
    fire_spec v[7];
    int64_t deleted = -1;

    make_tables(&t, "sched");
    c = ctx(db, &t, "sched", "holder", "h");
    v[0] = (fire_spec){ "sched", "a", 100, "done" };
    v[1] = (fire_spec){ "sched", "b", 150, "failed" };
    v[2] = (fire_spec){ "sched", "a", 200, "running" };
    v[3] = (fire_spec){ "sched", "a", 250, "abandoned" };
    v[4] = (fire_spec){ "sched", "a", 300, "done" };
    v[5] = (fire_spec){ "other", "a", 120, "done" };
    v[6] = (fire_spec){ "sched", "c", 400, "missed" };
    insert_rows(&t, v, 7);
    CU_ASSERT_EQUAL(sqle_fire_prune(&c, 0, 200, &deleted, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(deleted, 1); /* a@100; b@150 is b's latest */
    CU_ASSERT_EQUAL(sqle_fire_prune(&c, 200, 300, &deleted, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(deleted, 1); /* a@250; the running a@200 stays */
    CU_ASSERT_EQUAL(sqle_fire_prune(&c, 200, 300, &deleted, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(deleted, 0);
    CU_ASSERT_EQUAL(sqle_fire_prune(&c, 300, 300, &deleted, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(deleted, 0);
    /* Everything older than the newest row: each job's latest stays. */
    CU_ASSERT_EQUAL(sqle_fire_prune(&c, 0, 1000, &deleted, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(deleted, 0);
    CU_ASSERT_EQUAL(sqle_fire_prune(&c, 301, 300, &deleted, 0, &err), SQLEASE_EINVAL);
    memset(&s, 0, sizeof s);
    CU_ASSERT_EQUAL(sqlease_fire_list(db, t.fire, NULL, NULL, 0, on_row, &s, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(s.n, 5);
    CU_ASSERT_EQUAL(s.at[0], 400);
    CU_ASSERT_EQUAL(s.at[1], 300);
    CU_ASSERT_EQUAL(s.at[2], 200);
    CU_ASSERT_EQUAL(s.at[3], 150);
    CU_ASSERT_STRING_EQUAL(s.name[4], "other");
    drop_tables(&t);
}

/* ---- run --schedule: the take that claims a fire ------------------- */

typedef struct taker {
    barrier *b;
    sqlease_db *db;
    sqlease_lease *l;
    int64_t fire_at;
    int rc, taken;
    sqlease_lease_info info;
    sqlease_error err;
} taker;

static void take_main(void *arg)
{
    taker *k = arg;
    sqlease_lease_info seen;

    barrier_wait(k->b);
    k->rc = sqlease_lease_status(k->l, &seen, &k->err);
    if (k->rc == SQLEASE_OK)
        k->rc = sqle_lease_take_fire(k->l, &seen, k->fire_at, &k->info, &k->taken, &k->err);
}

/*
 * Every host's cron starts `run --schedule` for one fire at once: exactly
 * one take succeeds, and every other host is told the fire was taken, and
 * by whom.  A host that comes after the winner released is told who ran it
 * and when from its read alone; the next fire is taken again.
 */
static void test_take_fire(void)
{
    tables t;
    taker k[RACERS];
    sqle_thread th[RACERS];
    barrier b;
    char owners[RACERS][32];
    sqlease_lease *late;
    sqlease_lease_info seen, info, st;
    sqlease_error err;
    int64_t seed, fire_at;
    uint64_t before;
    int i, ok = 0, claimed = 0, winner = -1, taken = 0;

    make_tables(&t, "cron");
    late = make_lease(db, t.lease, "cron", "late-host", 30000);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_status(late, &st, &err), SQLEASE_OK);
    seed = st.token;
    CU_ASSERT_EQUAL(st.fire_at_ms, 0);
    fire_at = db_now() - 2000;
    barrier_init(&b);
    for (i = 0; i < RACERS; i++) {
        memset(&k[i], 0, sizeof k[i]);
        k[i].b = &b;
        k[i].db = tu_open();
        CU_ASSERT_PTR_NOT_NULL_FATAL(k[i].db);
        snprintf(owners[i], sizeof owners[i], "cron-host-%d", i);
        k[i].l = make_lease(k[i].db, t.lease, "cron", owners[i], 30000);
        k[i].fire_at = fire_at;
        CU_ASSERT_EQUAL_FATAL(sqle_thread_start(&th[i], take_main, &k[i]), 0);
    }
    barrier_release(&b, RACERS);
    for (i = 0; i < RACERS; i++)
        sqle_thread_join(&th[i]);
    for (i = 0; i < RACERS; i++) {
        if (k[i].rc == SQLEASE_OK) {
            ok++;
            winner = i;
            CU_ASSERT_EQUAL(k[i].taken, 1);
            CU_ASSERT_EQUAL(k[i].info.token, seed + 1);
            CU_ASSERT_EQUAL(k[i].info.fire_at_ms, fire_at);
        } else if (k[i].rc == SQLEASE_CLAIMED) {
            claimed++;
            CU_ASSERT_EQUAL(k[i].taken, 0);
            CU_ASSERT_EQUAL(k[i].info.fire_at_ms, fire_at);
        } else {
            fprintf(stderr, "taker %d: %s: %s\n", i, sqlease_status_name(k[i].rc),
                    k[i].err.message);
        }
    }
    CU_ASSERT_EQUAL(ok, 1);
    CU_ASSERT_EQUAL(claimed, RACERS - 1);
    CU_ASSERT_FATAL(winner >= 0);
    for (i = 0; i < RACERS; i++)
        if (k[i].rc == SQLEASE_CLAIMED)
            CU_ASSERT_PTR_NOT_NULL(strstr(k[i].err.message, owners[winner]));
    CU_ASSERT_EQUAL(sqlease_lease_status(late, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.owner, owners[winner]);
    CU_ASSERT_EQUAL(st.token, seed + 1);
    CU_ASSERT_EQUAL(st.fire_at_ms, fire_at);

    /* The outcome row: one statement, started at the take. */
    {
        sqle_fire_ctx c = ctx(k[winner].db, &t, "cron", owners[winner], "winner.example");
        sqlease_fire_info f;

        before = sqlease_db_statements(k[winner].db);
        CU_ASSERT_EQUAL(sqle_fire_done(&c, seed + 1, "backup", fire_at, "done", 0, 0, &err),
                        SQLEASE_OK);
        CU_ASSERT_EQUAL(sqlease_db_statements(k[winner].db) - before, 1);
        f = row_of(&c, "backup", fire_at);
        CU_ASSERT_STRING_EQUAL(f.state, "done");
        CU_ASSERT_STRING_EQUAL(f.owner, owners[winner]);
        CU_ASSERT_STRING_EQUAL(f.host, "winner.example");
        CU_ASSERT_EQUAL(f.token, seed + 1);
        CU_ASSERT_EQUAL(f.started_at_ms, st.acquired_at_ms);
        CU_ASSERT_EQUAL(f.has_exit, 1);
        CU_ASSERT_EQUAL(f.exit_status, 0);
        CU_ASSERT_EQUAL(f.duration_ms, f.ended_at_ms - f.started_at_ms);
        /* Idempotent: sent again, the row is there and stays as it was. */
        CU_ASSERT_EQUAL(sqle_fire_done(&c, seed + 1, "backup", fire_at, "failed", 1, 0, &err),
                        SQLEASE_OK);
        CU_ASSERT_STRING_EQUAL(row_of(&c, "backup", fire_at).state, "done");
        /* Not that take's fire, or not that take: nothing written. */
        CU_ASSERT_EQUAL(sqle_fire_done(&c, seed + 1, "backup", fire_at + 1, "done", 0, 0, &err),
                        SQLEASE_NOT_HELD);
        CU_ASSERT_EQUAL(sqle_fire_done(&c, seed, "backup", fire_at + 1, "done", 0, 0, &err),
                        SQLEASE_NOT_HELD);
        CU_ASSERT_EQUAL(sqle_fire_read(&c, "backup", fire_at + 1, NULL, NULL, 0, &err),
                        SQLEASE_ENOROW);
        CU_ASSERT_EQUAL(sqle_fire_done(&c, seed, "backup", fire_at, "done", 0, 0, &err),
                        SQLEASE_CLAIMED);
    }

    /* The winner releases; a host that comes now is told from its read
     * alone who ran the fire and when, and sends nothing more. */
    CU_ASSERT_EQUAL(sqlease_lease_release(k[winner].l, NULL, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_status(late, &seen, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(seen.held, 0);
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_lease_take_fire(late, &seen, fire_at, &info, &taken, &err),
                    SQLEASE_CLAIMED);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 0);
    CU_ASSERT_EQUAL(taken, 0);
    CU_ASSERT_STRING_EQUAL(info.last_owner, owners[winner]);
    CU_ASSERT_EQUAL(info.acquired_at_ms, st.acquired_at_ms);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, owners[winner]));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "released"));
    /* An earlier fire than the one taken is not run either. */
    CU_ASSERT_EQUAL(sqle_lease_take_fire(late, &seen, fire_at - 60000, &info, &taken, &err),
                    SQLEASE_CLAIMED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "later fire"));
    /* The next fire: taken with one statement after the read. */
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_lease_take_fire(late, &seen, fire_at + 1000, &info, &taken, &err),
                    SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 1);
    CU_ASSERT_EQUAL(taken, 1);
    CU_ASSERT_EQUAL(info.token, seed + 2);
    CU_ASSERT_EQUAL(info.fire_at_ms, fire_at + 1000);
    /* Its outcome after its release: the hold's owner id from last_owner. */
    CU_ASSERT_EQUAL(sqlease_lease_release(late, NULL, &err), SQLEASE_OK);
    {
        sqle_fire_ctx c = ctx(db, &t, "cron", "late-host", "late.example");
        sqlease_fire_info f;

        CU_ASSERT_EQUAL(sqle_fire_done(&c, seed + 2, "backup", fire_at + 1000, "failed", 2, 0,
                                       &err), SQLEASE_OK);
        f = row_of(&c, "backup", fire_at + 1000);
        CU_ASSERT_STRING_EQUAL(f.owner, "late-host");
        CU_ASSERT_STRING_EQUAL(f.state, "failed");
        CU_ASSERT_EQUAL(f.exit_status, 2);
    }
    /* A live hold of another: not taken, the holder named. */
    CU_ASSERT_EQUAL(sqlease_lease_status(k[0].l, &seen, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqle_lease_take_fire(k[0].l, &seen, fire_at + 2000, &info, &taken, &err),
                    SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_status(late, &seen, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqle_lease_take_fire(late, &seen, fire_at + 3000, &info, &taken, &err),
                    SQLEASE_NOT_HELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, owners[0]));
    CU_ASSERT_EQUAL(sqle_lease_take_fire(late, &seen, 0, &info, &taken, &err), SQLEASE_EINVAL);
    for (i = 0; i < RACERS; i++) {
        sqlease_lease_free(k[i].l);
        sqlease_db_close(k[i].db);
    }
    barrier_destroy(&b);
    sqlease_lease_free(late);
    drop_tables(&t);
}

/* migrate adds the lease row's fire_at_ms to an older table (0.2.0's, with
 * ttl_ms and last_owner), and every read returns it. */
static void test_migrate_lease_column(void)
{
    const char *t = tu_table();
    char sql[600];
    sqlease_lease *l;
    sqlease_lease_info st, info, seen;
    sqlease_error err;
    int taken = 0;

    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (name VARCHAR(64) NOT NULL PRIMARY KEY, "
             "owner VARCHAR(255) NOT NULL DEFAULT '', acquired_at_ms BIGINT NOT NULL DEFAULT 0, "
             "expires_at_ms BIGINT NOT NULL DEFAULT 0, token BIGINT NOT NULL DEFAULT 0, "
             "version BIGINT NOT NULL DEFAULT 0, data VARCHAR(1024) NULL, "
             "ttl_ms BIGINT NOT NULL DEFAULT 0, last_owner VARCHAR(255) NOT NULL DEFAULT '')", t);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, NULL), SQLEASE_OK);
    snprintf(sql, sizeof sql, "INSERT INTO %s (name, token) VALUES ('old', 41)", t);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, NULL), SQLEASE_OK);
    CU_ASSERT_EQUAL(tu_migrate(db, t, "old"), SQLEASE_OK);
    CU_ASSERT_EQUAL(tu_migrate(db, t, "old"), SQLEASE_OK);
    l = make_lease(db, t, "old", "me", 30000);
    CU_ASSERT_EQUAL(sqlease_lease_status(l, &st, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(st.token, 41);
    CU_ASSERT_EQUAL(st.fire_at_ms, 0);
    CU_ASSERT_EQUAL(sqle_lease_take_fire(l, &st, 123456, &info, &taken, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.token, 42);
    /* A renew and a release keep it; a plain take too. */
    CU_ASSERT_EQUAL(sqlease_lease_acquire(l, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_release(l, NULL, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_release_force(l, NULL, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(l, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_status(l, &seen, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(seen.fire_at_ms, 123456);
    sqlease_lease_free(l);
    tu_drop(db, t);
}

/* ---- the public calls, on a supervisor ------------------------------ */

typedef struct sup_seen {
    sqlease_supervisor *sup;
    int rc;
    sqlease_fire_info info;
} sup_seen;

static void started(void *ud, int64_t token)
{
    (void)ud;
    (void)token;
}

static void stopped(void *ud, int reason)
{
    (void)ud;
    (void)reason;
}

/* A supervisor claims under its hold, with its options' fire table and
 * host, ends what it claimed, and a listing shows it; a supervisor that
 * does not hold claims nothing. */
static void test_public_calls(void)
{
    tables t;
    sqlease_options o;
    sqlease_supervisor *a = NULL, *b = NULL;
    sqlease_fire_info info;
    sqlease_error err;
    listed s;
    int64_t now;

    make_tables(&t, "svc");
    tu_options(&o, t.lease, "svc", "sup-a", 4000, 1000, 2500, 500);
    o.fire_table = t.fire;
    o.host = "a.example";
    o.on_started = started;
    o.on_stopped = stopped;
    CU_ASSERT_EQUAL_FATAL(sqlease_supervisor_start(&a, db, &o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_supervisor_await(a, 3000, &err), SQLEASE_OK);
    o.owner = "sup-b";
    o.host = NULL;
    CU_ASSERT_EQUAL_FATAL(sqlease_supervisor_start(&b, db, &o, &err), SQLEASE_OK);
    now = db_now();
    CU_ASSERT_EQUAL(sqlease_fire_claim(a, "nightly", now - 5, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.size, sizeof info);
    CU_ASSERT_STRING_EQUAL(info.state, "running");
    CU_ASSERT_STRING_EQUAL(info.host, "a.example");
    CU_ASSERT_STRING_EQUAL(info.owner, "sup-a");
    CU_ASSERT_STRING_EQUAL(info.name, "svc");
    CU_ASSERT_EQUAL(info.attempt, 1);
    CU_ASSERT_EQUAL(sqlease_fire_claim(a, "nightly", now - 5, &info, &err), SQLEASE_CLAIMED);
    CU_ASSERT_STRING_EQUAL(info.owner, "sup-a");
    CU_ASSERT_EQUAL(sqlease_fire_claim(b, "nightly", now - 1, &info, &err), SQLEASE_NOT_HELD);
    CU_ASSERT_EQUAL(info.fire_at_ms, 0);
    CU_ASSERT_EQUAL(sqlease_fire_claim(a, "nightly", now + 600000, &info, &err),
                    SQLEASE_NOT_DUE);
    CU_ASSERT_EQUAL(sqlease_fire_end(a, "nightly", now - 5, 1, 1, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_fire_end(b, "nightly", now - 5, 1, 1, 0, &err), SQLEASE_NOT_HELD);
    CU_ASSERT_EQUAL(sqlease_fire_claim(a, "", now - 5, &info, &err), SQLEASE_EINVAL);
    memset(&s, 0, sizeof s);
    CU_ASSERT_EQUAL(sqlease_fire_list(db, t.fire, "svc", "nightly", now - 10, on_row, &s, &err),
                    SQLEASE_OK);
    CU_ASSERT_EQUAL(s.n, 1);
    CU_ASSERT_EQUAL(s.at[0], now - 5);
    sqlease_supervisor_free(a);
    sqlease_supervisor_free(b);
    /* A bad fire table fails the start as a bad table does. */
    o.fire_table = "select";
    CU_ASSERT_EQUAL(sqlease_supervisor_start(&a, db, &o, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "fire table"));
    o.fire_table = NULL;
    {
        sqlease_options eff;
        CU_ASSERT_EQUAL(sqlease_options_effective(db, &o, &eff, &err), SQLEASE_OK);
        CU_ASSERT_STRING_EQUAL(eff.fire_table, SQLEASE_DEFAULT_FIRE_TABLE);
    }
    o.host = "bad\nhost";
    CU_ASSERT_EQUAL(sqlease_options_check(&o, &err), SQLEASE_EINVAL);
    drop_tables(&t);
}

/* ---- bad input: said at once, nothing sent -------------------------- */

static void test_bad_input(void)
{
    tables t;
    sqle_fire_ctx c, bad;
    sqlease_error err;
    char long_job[SQLEASE_MAX_JOB + 2];
    uint64_t before;
    int64_t rows = 0;

    make_tables(&t, "sched");
    memset(long_job, 'j', sizeof long_job - 1);
    long_job[sizeof long_job - 1] = '\0';
    c = ctx(db, &t, "sched", "holder", "h");
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_fire_claim(&c, 1, NULL, 1000, 0, NULL, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "job is NULL"));
    CU_ASSERT_EQUAL(sqle_fire_claim(&c, 1, "", 1000, 0, NULL, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "job is empty"));
    CU_ASSERT_EQUAL(sqle_fire_claim(&c, 1, long_job, 1000, 0, NULL, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "at most 64"));
    CU_ASSERT_EQUAL(sqle_fire_claim(&c, 1, "job ", 1000, 0, NULL, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqle_fire_claim(&c, 1, "a\tb", 1000, 0, NULL, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqle_fire_claim(&c, 1, "job", 0, 0, NULL, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqle_fire_record(&c, 1, "job", 1000, "done", NULL, 0, NULL, &err),
                    SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "skipped"));
    CU_ASSERT_EQUAL(sqle_fire_end(&c, 1, "job", 1000, 1, "running", 0, NULL, 0, &err),
                    SQLEASE_EINVAL);
    {
        char long_note[SQLEASE_MAX_NOTE + 2];
        memset(long_note, 'n', sizeof long_note - 1);
        long_note[sizeof long_note - 1] = '\0';
        CU_ASSERT_EQUAL(sqle_fire_end(&c, 1, "job", 1000, 1, "done", 0, long_note, 0, &err),
                        SQLEASE_EINVAL);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "note is 256 bytes"));
    }
    CU_ASSERT_EQUAL(sqle_fire_done(&c, 1, "job", 1000, "skipped", 0, 0, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqle_fire_reclaim(&c, 1, "job", 1000, 0, 0, NULL, &err), SQLEASE_EINVAL);
    bad = c;
    bad.fire_table = "1fires";
    CU_ASSERT_EQUAL(sqle_fire_claim(&bad, 1, "job", 1000, 0, NULL, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "invalid fire table '1fires'"));
    bad.fire_table = "jobs.order";
    CU_ASSERT_EQUAL(sqle_fire_abandon(&bad, 1, &rows, 0, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "reserved word"));
    CU_ASSERT_EQUAL(sqle_fire_migrate(db, "user", &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_fire_migrate(db, "a-b", &err), SQLEASE_EINVAL);
    bad = c;
    bad.lease_table = "t;DROP";
    CU_ASSERT_EQUAL(sqle_fire_claim(&bad, 1, "job", 1000, 0, NULL, &err), SQLEASE_EINVAL);
    bad = c;
    bad.owner = NULL;
    CU_ASSERT_EQUAL(sqle_fire_claim(&bad, 1, "job", 1000, 0, NULL, &err), SQLEASE_EINVAL);
    bad = c;
    bad.host = "";
    CU_ASSERT_EQUAL(sqle_fire_claim(&bad, 1, "job", 1000, 0, NULL, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "host is empty"));
    bad = c;
    bad.name = " sched";
    CU_ASSERT_EQUAL(sqle_fire_prune(&bad, 0, 1, NULL, 0, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqle_fire_claim(NULL, 1, "job", 1000, 0, NULL, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_fire_list(db, "from", NULL, NULL, 0, on_row, NULL, &err),
                    SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_fire_list(db, t.fire, NULL, "", 0, on_row, NULL, &err),
                    SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_fire_list(db, t.fire, NULL, NULL, 0, NULL, NULL, &err),
                    SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_fire_claim(NULL, "job", 1000, NULL, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_fire_end(NULL, "job", 1000, 1, 1, 0, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_db_statements(db), before);
    /* A missing fire table is said as a broken installation. */
    c.fire_table = "no_such_fires";
    CU_ASSERT_EQUAL(sqle_fire_end(&c, 1, "job", 1000, 1, "done", 0, NULL, 0, &err),
                    SQLEASE_ENOTABLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "fire table 'no_such_fires' does not exist"));
    drop_tables(&t);
}

static void add(void)
{
    CU_pSuite s = CU_add_suite("fire", NULL, NULL);

    CU_add_test(s, "eight racers for one fire: one claims it, the others are told by whom",
                test_claim_once_among_racers);
    CU_add_test(s, "a claim changes nothing under a stale token, another owner, or early",
                test_claim_guards);
    CU_add_test(s, "look-alike jobs are fires of their own", test_look_alike_jobs);
    CU_add_test(s, "the end of a run: state, exit, times, once", test_end);
    CU_add_test(s, "a new holder abandons older holds' runs and reruns one once",
                test_abandon_and_rerun);
    CU_add_test(s, "fires that did not run: skipped and missed", test_record);
    CU_add_test(s, "the latest fire of each job, over pages", test_last);
    CU_add_test(s, "the listing: newest first, filtered, in windows", test_list);
    CU_add_test(s, "pruned window by window, running rows and each job's latest kept", test_prune);
    CU_add_test(s, "run --schedule: one take per fire among racers, and its outcome row",
                test_take_fire);
    CU_add_test(s, "migrate adds the lease row's fire_at_ms, which only a take of a fire "
                   "changes", test_migrate_lease_column);
    CU_add_test(s, "a supervisor's claim, end and the listing", test_public_calls);
    CU_add_test(s, "bad input is refused before anything is sent", test_bad_input);
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
