/*
 * test_history.c -- the holder history against a real database through
 * the real ODBC driver: a take writes the new hold's row, each end is
 * written by whoever knows it first (the holder's release, its renew that
 * found the hold gone, the taker of a hold whose holder died, an
 * operator's forced release, a supervisor past its deadline, a hand-over)
 * and never written over; what each costs in statements; the batched forms; a
 * missing history table that leaves the lease working and says so once;
 * the listing with its gaps, and the pruning.  Runs on whatever
 * $SQLEASE_TEST_DSN names (SQLite by default).
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "internal.h"
#include "lease.h"
#include "platform.h"

#include "testutil.h"

static sqlease_db *db;

/* A lease table with `name` seeded and a history table, named for this
 * test. */
typedef struct tables {
    char lease[64], hist[64];
} tables;

static void make_tables(tables *t, const char *name)
{
    sqlease_error err;

    snprintf(t->lease, sizeof t->lease, "%s", tu_table());
    snprintf(t->hist, sizeof t->hist, "%s", tu_table());
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t->lease, name), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlease_history_migrate(db, t->hist, &err), SQLEASE_OK);
    /* Idempotent. */
    CU_ASSERT_EQUAL_FATAL(sqlease_history_migrate(db, t->hist, &err), SQLEASE_OK);
}

static void drop_tables(const tables *t)
{
    tu_drop(db, t->hist);
    tu_drop(db, t->lease);
}

static int is_postgres(void)
{
    return strcmp(sqlease_db_dialect(db), "postgres") == 0;
}

static int is_mysql(void)
{
    return strcmp(sqlease_db_dialect(db), "mysql") == 0;
}

/* The options of a lease of these tables with the history on. */
static void hist_options(sqlease_options *o, const tables *t, const char *name,
                         const char *owner, int64_t ttl)
{
    tu_options(o, t->lease, name, owner, ttl, ttl / 4, ttl / 2, ttl / 8 > 0 ? ttl / 8 : 1);
    o->history = 0;
    o->history_table = t->hist;
    o->host = "host-h";
}

static sqlease_lease *make_lease(sqlease_db *d, const tables *t, const char *name,
                                 const char *owner, int64_t ttl)
{
    sqlease_options o;
    sqlease_error err;
    sqlease_lease *l = NULL;

    hist_options(&o, t, name, owner, ttl);
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

/* The history of `name` (NULL: every name), newest first. */
#define MAX_ROWS 64
typedef struct rows {
    sqlease_hold_info r[MAX_ROWS];
    size_t n;
} rows;

static int on_row(void *ud, const sqlease_hold_info *info)
{
    rows *rs = ud;

    CU_ASSERT_EQUAL(info->size, sizeof *info);
    if (rs->n < MAX_ROWS)
        rs->r[rs->n++] = *info;
    return 0;
}

static void read_rows(const tables *t, const char *name, rows *rs)
{
    sqlease_error err;

    memset(rs, 0, sizeof *rs);
    CU_ASSERT_EQUAL(sqlease_history_list(db, t->hist, name, 0, on_row, rs, &err), SQLEASE_OK);
}

/* The row of hold `token`, or NULL. */
static const sqlease_hold_info *row_of(const rows *rs, int64_t token)
{
    size_t i;

    for (i = 0; i < rs->n; i++)
        if (rs->r[i].token == token)
            return &rs->r[i];
    return NULL;
}

/* ------------------------------------------------------------------ */

/* A take writes the new hold's row (one statement more than the take),
 * a renew writes nothing, a release ends it 'released' (one more); the
 * next hold's gap is the time between. */
static void test_take_and_release(void)
{
    tables t;
    sqlease_lease *a, *b;
    sqlease_lease_info st;
    sqlease_error err;
    const sqlease_hold_info *ra, *rb;
    rows rs;
    uint64_t before;
    int64_t ta, tb;
    int released = 0;

    make_tables(&t, "job");
    a = make_lease(db, &t, "job", "owner-a", 5000);
    b = make_lease(db, &t, "job", "owner-b", 5000);
    before = sqlease_db_statements(db);
    ta = hold(a);
    /* The read, the take and the history's row. */
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 3);
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(hold(a), ta);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 1); /* a renew: nothing more */
    CU_ASSERT_EQUAL(sqlease_lease_status(a, &st, &err), SQLEASE_OK);
    read_rows(&t, "job", &rs);
    CU_ASSERT_EQUAL_FATAL(rs.n, 1);
    ra = &rs.r[0];
    CU_ASSERT_STRING_EQUAL(ra->name, "job");
    CU_ASSERT_STRING_EQUAL(ra->owner, "owner-a");
    CU_ASSERT_STRING_EQUAL(ra->host, "host-h");
    CU_ASSERT_EQUAL(ra->pid, sqle_pid());
    CU_ASSERT_EQUAL(ra->token, ta);
    CU_ASSERT_EQUAL(ra->started_at_ms, st.acquired_at_ms);
    CU_ASSERT_EQUAL(ra->ended_at_ms, 0);
    CU_ASSERT_STRING_EQUAL(ra->ended, "");
    CU_ASSERT_EQUAL(ra->gap_ms, -1); /* no hold before it has a row */

    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqlease_lease_release(a, &released, &err), SQLEASE_OK);
    CU_ASSERT(released);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 2); /* the release and the end */
    sqle_sleep_ms(20);
    tb = hold(b);
    CU_ASSERT_EQUAL(tb, ta + 1);
    read_rows(&t, "job", &rs);
    CU_ASSERT_EQUAL_FATAL(rs.n, 2);
    rb = &rs.r[0]; /* newest first */
    ra = &rs.r[1];
    CU_ASSERT_EQUAL(rb->token, tb);
    CU_ASSERT_STRING_EQUAL(rb->owner, "owner-b");
    CU_ASSERT_STRING_EQUAL(ra->ended, "released");
    CU_ASSERT(ra->ended_at_ms >= ra->started_at_ms);
    CU_ASSERT_EQUAL(rb->prev_ended_at_ms, ra->ended_at_ms);
    CU_ASSERT_EQUAL(rb->gap_ms, rb->started_at_ms - ra->ended_at_ms);
    CU_ASSERT(rb->gap_ms >= 10);
    /* A release that finds the hold gone writes nothing: a second one. */
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqlease_lease_release(a, &released, &err), SQLEASE_OK);
    CU_ASSERT(!released);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 1);
    CU_ASSERT_EQUAL(sqlease_lease_release(b, &released, &err), SQLEASE_OK);
    sqlease_lease_free(a);
    sqlease_lease_free(b);
    drop_tables(&t);
}

/* A holder killed (its handle freed without a release) and a take by
 * another once the row expired: the taker ends the dead hold 'expired'
 * at the expiry its read showed, in one more statement (none more on
 * PostgreSQL, whose row insert closes it too); the dead hold's own later
 * renew (it was only frozen) writes nothing over it. */
static void test_expired_and_taken(void)
{
    tables t;
    sqlease_lease *a, *b;
    sqlease_lease_info st, got;
    sqlease_error err;
    const sqlease_hold_info *ra, *rb;
    rows rs;
    uint64_t before;
    int64_t ta, tb, expiry;

    make_tables(&t, "job");
    a = make_lease(db, &t, "job", "owner-a", 800);
    b = make_lease(db, &t, "job", "owner-b", 800);
    ta = hold(a);
    CU_ASSERT_EQUAL(sqlease_lease_status(b, &st, &err), SQLEASE_OK);
    expiry = st.expires_at_ms;
    sqle_sleep_ms(1000);
    before = sqlease_db_statements(db);
    tb = hold(b);
    CU_ASSERT_EQUAL(tb, ta + 1);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, is_postgres() ? 3 : 4);
    read_rows(&t, "job", &rs);
    CU_ASSERT_EQUAL_FATAL(rs.n, 2);
    ra = row_of(&rs, ta);
    rb = row_of(&rs, tb);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ra);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rb);
    CU_ASSERT_STRING_EQUAL(ra->ended, "expired");
    CU_ASSERT_EQUAL(ra->ended_at_ms, expiry);
    CU_ASSERT_STRING_EQUAL(rb->ended, "");
    CU_ASSERT_EQUAL(rb->gap_ms, rb->started_at_ms - expiry);
    CU_ASSERT(rb->gap_ms >= 100);
    /* The holder that was only frozen renews: its hold is gone (lost),
     * and its row keeps the taker's end. */
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &got, &err), SQLEASE_NOT_HELD);
    read_rows(&t, "job", &rs);
    CU_ASSERT_EQUAL_FATAL(rs.n, 2);
    CU_ASSERT_STRING_EQUAL(row_of(&rs, ta)->ended, "expired");
    CU_ASSERT_EQUAL(row_of(&rs, ta)->ended_at_ms, expiry);
    sqlease_lease_free(a); /* killed: no release */
    CU_ASSERT_EQUAL(sqlease_lease_release(b, NULL, &err), SQLEASE_OK);
    sqlease_lease_free(b);
    drop_tables(&t);
}

/* A holder whose renew finds its hold gone before anyone took it ends
 * it 'lost' (it stops its work); the take it then tries (the row is
 * free to it) is a new hold with a row of its own. */
static void test_lost(void)
{
    tables t;
    sqlease_lease *a;
    sqlease_error err;
    rows rs;
    int64_t ta, again;

    make_tables(&t, "job");
    a = make_lease(db, &t, "job", "owner-a", 600);
    ta = hold(a);
    sqle_sleep_ms(800);
    again = hold(a); /* the renew finds it expired: lost; then a new take */
    CU_ASSERT_EQUAL(again, ta + 1);
    read_rows(&t, "job", &rs);
    CU_ASSERT_EQUAL_FATAL(rs.n, 2);
    CU_ASSERT_STRING_EQUAL(row_of(&rs, ta)->ended, "lost");
    CU_ASSERT(row_of(&rs, ta)->ended_at_ms > row_of(&rs, ta)->started_at_ms);
    CU_ASSERT_STRING_EQUAL(row_of(&rs, again)->ended, "");
    CU_ASSERT_EQUAL(sqlease_lease_release(a, NULL, &err), SQLEASE_OK);
    sqlease_lease_free(a);
    drop_tables(&t);
}

/* An operator's forced release ends the hold 'forced' (a read of which
 * hold it is, and its end: two statements more than the release); the
 * holder's renew after it finds its hold gone and writes nothing over
 * that.  A forced release of a free row ends nothing, and a record of a
 * force that comes late, after another hold was taken and released,
 * does not end that hold. */
static void test_forced(void)
{
    tables t;
    sqlease_lease *a, *admin, *quiet = NULL;
    sqlease_lease_info got;
    sqlease_error err;
    rows rs;
    uint64_t before;
    int64_t ta, ended;
    int released = 0;

    make_tables(&t, "job");
    a = make_lease(db, &t, "job", "owner-a", 5000);
    admin = make_lease(db, &t, "job", "admin", 5000);
    ta = hold(a);
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqlease_lease_release_force(admin, &released, &err), SQLEASE_OK);
    CU_ASSERT(released);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 3);
    read_rows(&t, "job", &rs);
    CU_ASSERT_EQUAL_FATAL(rs.n, 1);
    CU_ASSERT_STRING_EQUAL(rs.r[0].ended, "forced");
    ended = rs.r[0].ended_at_ms;
    CU_ASSERT(ended > 0);
    sqle_sleep_ms(5);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &got, &err), SQLEASE_OK); /* lost, then a take */
    CU_ASSERT_EQUAL(got.token, ta + 1);
    read_rows(&t, "job", &rs);
    CU_ASSERT_EQUAL_FATAL(rs.n, 2);
    CU_ASSERT_STRING_EQUAL(row_of(&rs, ta)->ended, "forced");
    CU_ASSERT_EQUAL(row_of(&rs, ta)->ended_at_ms, ended);
    CU_ASSERT_EQUAL(sqlease_lease_release(a, NULL, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_release_force(admin, &released, &err), SQLEASE_OK);
    read_rows(&t, "job", &rs);
    CU_ASSERT_STRING_EQUAL(row_of(&rs, ta + 1)->ended, "released");
    /* The record of a force of hold ta + 2, late: meanwhile ta + 2 was
     * released, ta + 3 taken, and the row freed with its end not yet
     * written (a forced release that records nothing stands in for a
     * release whose end is still to come): ta + 3 is not ended 'forced'
     * by the late record (its own end is what will say how it ended),
     * nor ta + 2 again. */
    {
        sqlease_options o;
        hist_options(&o, &t, "job", "admin-2", 5000);
        o.history = SQLEASE_HISTORY_OFF;
        CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&quiet, db, &o, &err), SQLEASE_OK);
    }
    CU_ASSERT_EQUAL(hold(a), ta + 2);
    CU_ASSERT_EQUAL(sqlease_lease_release(a, NULL, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(hold(a), ta + 3);
    CU_ASSERT_EQUAL(sqlease_lease_release_force(quiet, &released, &err), SQLEASE_OK);
    CU_ASSERT(released);
    sqle_hist_forced(sqle_lease_hist(admin), ta + 2, sqle_mono_ms() + 5000);
    read_rows(&t, "job", &rs);
    CU_ASSERT_STRING_EQUAL(row_of(&rs, ta + 2)->ended, "released");
    CU_ASSERT_STRING_EQUAL(row_of(&rs, ta + 3)->ended, "");
    /* The right one, once it is the freed row's: ended 'forced'. */
    sqle_hist_forced(sqle_lease_hist(admin), ta + 3, sqle_mono_ms() + 5000);
    read_rows(&t, "job", &rs);
    CU_ASSERT_STRING_EQUAL(row_of(&rs, ta + 3)->ended, "forced");
    sqlease_lease_free(quiet);
    sqlease_lease_free(a);
    sqlease_lease_free(admin);
    drop_tables(&t);
}

/* The end another file writes (a hand-over): the release records it as
 * it says, and the release after it ends nothing twice. */
static void test_release_as(void)
{
    tables t;
    sqlease_lease *a;
    sqlease_error err;
    rows rs;
    int64_t ta;
    int released = 0;

    make_tables(&t, "job");
    a = make_lease(db, &t, "job", "owner-a", 5000);
    ta = hold(a);
    CU_ASSERT_EQUAL(sqle_lease_release_as(a, 0, 0, SQLE_END_HANDED_OVER, &released, &err),
                    SQLEASE_OK);
    CU_ASSERT(released);
    sqle_lease_history_end(a, ta, SQLE_END_RELEASED, 0); /* too late: written already */
    read_rows(&t, "job", &rs);
    CU_ASSERT_EQUAL_FATAL(rs.n, 1);
    CU_ASSERT_STRING_EQUAL(rs.r[0].ended, "handed_over");
    CU_ASSERT_STRING_EQUAL(sqle_hold_end_name(SQLE_END_DEADLINE), "deadline");
    CU_ASSERT_STRING_EQUAL(sqle_hold_end_name(99), "");
    sqlease_lease_free(a);
    drop_tables(&t);
}

/* A holder's end written after a take of the freed row (its release, the
 * take, then its end, as a slow holder does): the end is the next hold's
 * start, never after it, so that the holds do not overlap; written once a
 * hold after that one began, nothing (its end stays unknown). */
static void test_end_after_a_take(void)
{
    tables t;
    sqlease_lease *a, *b, *admin;
    sqlease_options o;
    sqlease_error err;
    rows rs;
    int64_t ta, tb, tc;
    int released = 0;

    make_tables(&t, "job");
    a = make_lease(db, &t, "job", "owner-a", 5000);
    b = make_lease(db, &t, "job", "owner-b", 5000);
    /* The row freed without a word in the history (an operator whose
     * handle writes none): a's row is still open, as after a release
     * whose end was not written yet. */
    hist_options(&o, &t, "job", "admin", 5000);
    o.history = SQLEASE_HISTORY_OFF;
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&admin, db, &o, &err), SQLEASE_OK);
    ta = hold(a);
    CU_ASSERT_EQUAL(sqlease_lease_release_force(admin, &released, &err), SQLEASE_OK);
    CU_ASSERT(released);
    tb = hold(b);
    CU_ASSERT_EQUAL(tb, ta + 1);
    sqle_sleep_ms(30);
    sqle_lease_history_end(a, ta, SQLE_END_DEADLINE, 0);
    read_rows(&t, "job", &rs);
    CU_ASSERT_EQUAL_FATAL(rs.n, 2);
    CU_ASSERT_STRING_EQUAL(row_of(&rs, ta)->ended, "deadline");
    CU_ASSERT_EQUAL(row_of(&rs, ta)->ended_at_ms, row_of(&rs, tb)->started_at_ms);
    /* b's hold freed and taken again (a later hold than the next): b's
     * late end writes nothing. */
    CU_ASSERT_EQUAL(sqlease_lease_release_force(admin, &released, &err), SQLEASE_OK);
    tc = hold(a);
    CU_ASSERT_EQUAL(tc, tb + 1);
    CU_ASSERT_EQUAL(sqlease_lease_release_force(admin, &released, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(hold(a), tc + 1);
    sqle_lease_history_end(b, tb, SQLE_END_RELEASED, 0);
    read_rows(&t, "job", &rs);
    CU_ASSERT_EQUAL_FATAL(rs.n, 4);
    CU_ASSERT_STRING_EQUAL(row_of(&rs, tb)->ended, "");
    CU_ASSERT_EQUAL(row_of(&rs, tb)->ended_at_ms, 0);
    CU_ASSERT_EQUAL(sqlease_lease_release(a, NULL, &err), SQLEASE_OK);
    sqlease_lease_free(a);
    sqlease_lease_free(b);
    sqlease_lease_free(admin);
    drop_tables(&t);
}

/* A hand-over (lease.c's sqle_lease_handoff) ends the hold 'handed_over'
 * once the row is reserved for its target; the target's take starts its
 * own hold and closes none (its read showed the row free), so the gap is
 * the time between.  A "*" that finds no ready follower releases the row:
 * 'released'.  A hand-over of a hold that is no longer the row's writes
 * nothing. */
static void test_handed_over(void)
{
    tables t;
    sqlease_lease *a, *b;
    sqlease_error err;
    char to[SQLEASE_MAX_OWNER + 1];
    rows rs;
    int64_t ta, tb;
    int handed = 0;

    make_tables(&t, "job");
    a = make_lease(db, &t, "job", "owner-a", 5000);
    b = make_lease(db, &t, "job", "owner-b", 5000);
    ta = hold(a);
    CU_ASSERT_EQUAL(sqle_lease_handoff(a, "owner-b", 3000, 0, to, sizeof to, &handed, &err),
                    SQLEASE_OK);
    CU_ASSERT(handed);
    CU_ASSERT_STRING_EQUAL(to, "owner-b");
    tb = hold(b);
    CU_ASSERT_EQUAL(tb, ta + 1);
    read_rows(&t, "job", &rs);
    CU_ASSERT_EQUAL_FATAL(rs.n, 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(row_of(&rs, ta));
    CU_ASSERT_PTR_NOT_NULL_FATAL(row_of(&rs, tb));
    CU_ASSERT_STRING_EQUAL(row_of(&rs, ta)->owner, "owner-a");
    CU_ASSERT_STRING_EQUAL(row_of(&rs, ta)->ended, "handed_over");
    CU_ASSERT(row_of(&rs, ta)->ended_at_ms > 0);
    CU_ASSERT_STRING_EQUAL(row_of(&rs, tb)->owner, "owner-b");
    CU_ASSERT_STRING_EQUAL(row_of(&rs, tb)->ended, "");
    CU_ASSERT_EQUAL(row_of(&rs, tb)->prev_ended_at_ms, row_of(&rs, ta)->ended_at_ms);
    CU_ASSERT(row_of(&rs, tb)->gap_ms >= 0 && row_of(&rs, tb)->gap_ms < 2000);
    /* Again, by a now stale handle: the row is b's, nothing is written. */
    CU_ASSERT_EQUAL(sqle_lease_handoff(a, "owner-c", 3000, 0, to, sizeof to, &handed, &err),
                    SQLEASE_OK);
    CU_ASSERT_EQUAL(handed, 0);
    /* No ready follower: the "*" hand-over releases. */
    CU_ASSERT_EQUAL(sqle_lease_handoff(b, "*", 3000, 0, to, sizeof to, &handed, &err),
                    SQLEASE_OK);
    CU_ASSERT(handed);
    CU_ASSERT_STRING_EQUAL(to, "");
    read_rows(&t, "job", &rs);
    CU_ASSERT_EQUAL_FATAL(rs.n, 2);
    CU_ASSERT_STRING_EQUAL(row_of(&rs, ta)->ended, "handed_over");
    CU_ASSERT_STRING_EQUAL(row_of(&rs, tb)->ended, "released");
    sqlease_lease_free(a);
    sqlease_lease_free(b);
    drop_tables(&t);
}

/* An older deployment that did not migrate the history: the lease works,
 * the log says so once, and the handle leaves the table alone (no
 * statement) afterwards. */
static void test_missing_table(void)
{
    tables t;
    sqlease_options o;
    sqlease_lease *a;
    sqlease_error err;
    uint64_t before;
    int released = 0;

    make_tables(&t, "job");
    hist_options(&o, &t, "job", "owner-a", 5000);
    o.history_table = "no_such_history";
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&a, db, &o, &err), SQLEASE_OK);
    tu_log_clear();
    before = sqlease_db_statements(db);
    (void)hold(a);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 3); /* the row's insert failed */
    CU_ASSERT(tu_log_has("history table 'no_such_history' does not exist"));
    tu_log_clear();
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqlease_lease_release(a, &released, &err), SQLEASE_OK);
    CU_ASSERT(released);
    (void)hold(a);
    CU_ASSERT_EQUAL(sqlease_lease_release(a, &released, &err), SQLEASE_OK);
    /* release, read + take, release: nothing of the history */
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 4);
    CU_ASSERT(!tu_log_has("no_such_history"));
    /* The listing of a missing table is an error, said as such. */
    CU_ASSERT_EQUAL(sqlease_history_list(db, "no_such_history", NULL, 0, on_row, NULL, &err),
                    SQLEASE_ENOTABLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "run `sqlease migrate`"));
    sqlease_lease_free(a);
    /* With the history off, nothing is sent and nothing said. */
    hist_options(&o, &t, "job", "owner-b", 5000);
    o.history = SQLEASE_HISTORY_OFF;
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&a, db, &o, &err), SQLEASE_OK);
    before = sqlease_db_statements(db);
    (void)hold(a);
    CU_ASSERT_EQUAL(sqlease_lease_release(a, NULL, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 3);
    sqlease_lease_free(a);
    drop_tables(&t);
}

/* ------------------------------------------------------------------ */
/* Batched takes, releases and renews                                   */
/* ------------------------------------------------------------------ */

#define MANY 6

typedef struct many {
    char names[MANY][16];
    sqlease_lease *l[MANY];
    sqle_each each[MANY];
} many;

static void many_make(many *m, const tables *t, const char *owner, int64_t ttl, int watch)
{
    size_t i;

    memset(m, 0, sizeof *m);
    for (i = 0; i < MANY; i++) {
        snprintf(m->names[i], sizeof m->names[i], "n%zu", i);
        m->l[i] = make_lease(db, t, m->names[i], owner, ttl);
        sqle_lease_set_watch(m->l[i], watch);
        m->each[i].lease = m->l[i];
    }
}

static void many_free(many *m)
{
    size_t i;

    for (i = 0; i < MANY; i++)
        sqlease_lease_free(m->l[i]);
}

/* Read every row and keep what the take would bind. */
static void many_read(many *m)
{
    sqlease_error err;
    size_t i;

    CU_ASSERT_EQUAL(sqle_lease_status_each(m->each, MANY, 0, &err), SQLEASE_OK);
    for (i = 0; i < MANY; i++)
        (void)sqle_lease_wants_take(m->l[i], &m->each[i].info);
}

static void test_batched(void)
{
    tables t;
    sqlease_error err;
    many x, y, z;
    rows rs;
    uint64_t before, take_cost;
    size_t i;

    make_tables(&t, "n0");
    for (i = 1; i < MANY; i++) {
        char name[8];
        snprintf(name, sizeof name, "n%zu", i);
        CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t.lease, name), SQLEASE_OK);
    }
    many_make(&x, &t, "owner-x", 800, 0);
    many_read(&x);
    /* The take of six free rows: one statement, and one for the rows. */
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_lease_take_each(x.each, MANY, 0, &err), SQLEASE_OK);
    take_cost = sqlease_db_statements(db) - before;
    CU_ASSERT_EQUAL(take_cost, 2);
    for (i = 0; i < MANY; i++)
        CU_ASSERT(x.each[i].hit);
    read_rows(&t, NULL, &rs);
    CU_ASSERT_EQUAL(rs.n, MANY);
    for (i = 0; i < rs.n; i++) {
        CU_ASSERT_STRING_EQUAL(rs.r[i].owner, "owner-x");
        CU_ASSERT_STRING_EQUAL(rs.r[i].ended, "");
        CU_ASSERT_STRING_EQUAL(rs.r[i].host, "host-h");
    }
    /* x dies with all six (no release); y watches them unchanged for a
     * ttl and takes them in one statement: the rows of its holds and the
     * end of x's, 'expired' (x's six expire at one instant: one
     * statement for the six). */
    many_make(&y, &t, "owner-y", 800, 1);
    many_read(&y);
    sqle_sleep_ms(1000);
    many_read(&y);
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_lease_take_each(y.each, MANY, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 3);
    for (i = 0; i < MANY; i++)
        CU_ASSERT(y.each[i].hit);
    read_rows(&t, NULL, &rs);
    CU_ASSERT_EQUAL(rs.n, 2 * MANY);
    for (i = 0; i < rs.n; i++) {
        if (strcmp(rs.r[i].owner, "owner-x") == 0) {
            CU_ASSERT_STRING_EQUAL(rs.r[i].ended, "expired");
            CU_ASSERT(rs.r[i].ended_at_ms > rs.r[i].started_at_ms);
        } else {
            CU_ASSERT_STRING_EQUAL(rs.r[i].ended, "");
            CU_ASSERT(rs.r[i].gap_ms >= 0);
        }
    }
    /* The release of the six: one statement, and one for their ends. */
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_lease_release_each(y.each, MANY, 0, 0, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 2);
    read_rows(&t, NULL, &rs);
    for (i = 0; i < rs.n; i++)
        if (strcmp(rs.r[i].owner, "owner-y") == 0)
            CU_ASSERT_STRING_EQUAL(rs.r[i].ended, "released");
    /* z takes them and loses them all to expiry: its renew of the six
     * finds them gone, one statement for their ends ('lost'). */
    many_make(&z, &t, "owner-z", 800, 0);
    many_read(&z);
    CU_ASSERT_EQUAL(sqle_lease_take_each(z.each, MANY, 0, &err), SQLEASE_OK);
    sqle_sleep_ms(1000);
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqle_lease_renew_each(z.each, MANY, 0, &err), SQLEASE_OK);
    for (i = 0; i < MANY; i++)
        CU_ASSERT_EQUAL(z.each[i].rc, SQLEASE_NOT_HELD);
    /* The ends are written once the caller has acted on the losses (a
     * supervisor's on_stopped comes first). */
    sqle_lease_history_flush_each(z.each, MANY);
    /* The renew (on MySQL/MariaDB with the read of which holds are
     * live) and the ends. */
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, is_mysql() ? 3 : 2);
    read_rows(&t, NULL, &rs);
    CU_ASSERT_EQUAL(rs.n, 3 * MANY);
    for (i = 0; i < MANY; i++) {
        const sqlease_hold_info *r = &rs.r[i]; /* the newest six: z's */
        CU_ASSERT_STRING_EQUAL(r->owner, "owner-z");
        CU_ASSERT_STRING_EQUAL(r->ended, "lost");
    }
    many_free(&x);
    many_free(&y);
    many_free(&z);
    drop_tables(&t);
}

/* ------------------------------------------------------------------ */
/* Supervisors                                                          */
/* ------------------------------------------------------------------ */

static int is_holding(void *arg)
{
    sqlease_state st;

    sqlease_supervisor_state(arg, &st);
    return st.holding;
}

static int is_stopped(void *arg)
{
    return !is_holding(arg);
}

/* A supervisor cut off from the database stops its work at its deadline;
 * another takes the lease once it expired and ends the dead hold
 * 'expired'; the cut-off one's giving up of its hold, once it is
 * reached again, finds it gone and writes nothing over that.  A
 * supervisor whose database comes back before anyone took the row gives
 * its hold up as 'deadline'.  A stop ends the hold 'released'. */
static void test_supervisors(void)
{
    tables t;
    sqlease_options o;
    sqlease_supervisor *a, *b;
    sqlease_db *fdb = NULL;
    tu_faulty *f;
    sqlease_error err;
    rows rs;
    sqlease_state st;
    int64_t ta;

    make_tables(&t, "job");
    f = tu_faulty_open(&fdb);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    /* deadline: cut off, then reached again before anyone takes it. */
    hist_options(&o, &t, "job", "sup-a", 1600);
    o.heartbeat_ms = 200;
    o.renew_deadline_ms = 600;
    o.retry_ms = 100;
    CU_ASSERT_EQUAL_FATAL(sqlease_supervisor_start(&a, fdb, &o, &err), SQLEASE_OK);
    CU_ASSERT_FATAL(tu_await(is_holding, a, 3000));
    sqlease_supervisor_state(a, &st);
    ta = st.token;
    tu_fault_set(f, TU_FAULT_CONNECT, 0);
    /* Past its deadline, before the row's expiry: awaited on its work's
     * stop, which a loaded box may see well after the deadline (back in
     * reach before that, a renews and ends no hold 'deadline'). */
    CU_ASSERT_FATAL(tu_await(is_stopped, a, 1600));
    tu_fault_set(f, TU_FAULT_NONE, 0);
    CU_ASSERT(tu_await(is_holding, a, 4000));
    read_rows(&t, "job", &rs);
    CU_ASSERT_PTR_NOT_NULL_FATAL(row_of(&rs, ta));
    CU_ASSERT_STRING_EQUAL(row_of(&rs, ta)->ended, "deadline");
    sqlease_supervisor_state(a, &st);
    ta = st.token;
    /* expired: cut off for good; b takes it after a ttl unchanged. */
    tu_fault_set(f, TU_FAULT_CONNECT, 0);
    hist_options(&o, &t, "job", "sup-b", 1600);
    o.heartbeat_ms = 200;
    o.renew_deadline_ms = 600;
    o.retry_ms = 100;
    CU_ASSERT_EQUAL_FATAL(sqlease_supervisor_start(&b, db, &o, &err), SQLEASE_OK);
    CU_ASSERT(tu_await(is_holding, b, 6000));
    tu_fault_set(f, TU_FAULT_NONE, 0);
    sqle_sleep_ms(400); /* a gives up its stale hold: gone already */
    read_rows(&t, "job", &rs);
    CU_ASSERT_PTR_NOT_NULL_FATAL(row_of(&rs, ta));
    CU_ASSERT_STRING_EQUAL(row_of(&rs, ta)->ended, "expired");
    CU_ASSERT_PTR_NOT_NULL_FATAL(row_of(&rs, ta + 1));
    CU_ASSERT_STRING_EQUAL(row_of(&rs, ta + 1)->owner, "sup-b");
    CU_ASSERT(row_of(&rs, ta + 1)->gap_ms >= 0);
    sqlease_supervisor_free(a);
    sqlease_supervisor_free(b);
    read_rows(&t, "job", &rs);
    CU_ASSERT_STRING_EQUAL(row_of(&rs, ta + 1)->ended, "released");
    sqlease_db_close(fdb);
    tu_faulty_free(f);
    drop_tables(&t);
}

/* For tu_await: hold `token` of tables `t` has an end written. */
typedef struct hold_at {
    const tables *t;
    int64_t token;
} hold_at;

static int hold_ended(void *arg)
{
    const hold_at *h = arg;
    const sqlease_hold_info *r;
    rows rs;

    read_rows(h->t, "job", &rs);
    r = row_of(&rs, h->token);
    return r != NULL && r->ended[0] != '\0';
}

/* For tu_await: the lease's ready followers, read with `arg` (a lease
 * handle), include sup-b. */
static int on_ready(void *ud, const char *owner, int64_t priority, int64_t seen_ago_ms)
{
    (void)priority;
    (void)seen_ago_ms;
    if (strcmp(owner, "sup-b") == 0)
        *(int *)ud |= 1;
    if (strcmp(owner, "sup-c") == 0)
        *(int *)ud |= 2;
    return 0;
}

static int b_is_ready(void *arg)
{
    sqlease_error err;
    int seen = 0;

    return sqlease_lease_ready(arg, on_ready, &seen, &err) == SQLEASE_OK && (seen & 1);
}

static int c_is_ready(void *arg)
{
    sqlease_error err;
    int seen = 0;

    return sqlease_lease_ready(arg, on_ready, &seen, &err) == SQLEASE_OK && (seen & 2);
}

/* A supervisor of "job" with hand-over on and short timings. */
static sqlease_supervisor *start_ready(const tables *t, const char *owner)
{
    sqlease_options o;
    sqlease_error err;
    sqlease_supervisor *s = NULL;

    hist_options(&o, t, "job", owner, 1600);
    o.heartbeat_ms = 200;
    o.renew_deadline_ms = 600;
    /* A retry of 250 ms makes the work's lead 300 ms: far enough above
     * the hand-over's own gap (a fast read, about 50 ms) that the bound
     * between them can leave a loaded box room. */
    o.retry_ms = 250;
    o.handoff = 1;
    CU_ASSERT_EQUAL_FATAL(sqlease_supervisor_start(&s, db, &o, &err), SQLEASE_OK);
    return s;
}

/* Supervisors with hand-over on: a's stop hands the lease to the ready
 * b, whose hold starts as a's ends 'handed_over'; an operator's request
 * (sqlease transfer) moves it from b to c, and b's hold ends
 * 'handed_over' too, not 'lost' (its renew was refused for the request)
 * and not when b saw the request but at the hand-over; c's own stop,
 * with nobody ready, releases ('released'). */
static void test_supervisors_hand_over(void)
{
    tables t;
    sqlease_supervisor *a, *b, *c;
    sqlease_error err;
    sqlease_state st;
    hold_at ended_ht;
    sqlease_lease *ready_lease, *op;
    sqlease_lease_info req;
    rows rs;
    int64_t ta, tb, tc;

    make_tables(&t, "job");
    a = start_ready(&t, "sup-a");
    CU_ASSERT_FATAL(tu_await(is_holding, a, 3000));
    sqlease_supervisor_state(a, &st);
    ta = st.token;
    b = start_ready(&t, "sup-b");
    /* a's stop hands over to the best ready follower it reads: b, once
     * b's ready row is there (b's start makes it, or its runner after a
     * failed first try). */
    ready_lease = make_lease(db, &t, "job", "reader", 1600);
    CU_ASSERT(tu_await(b_is_ready, ready_lease, 3000));
    sqlease_lease_free(ready_lease);
    CU_ASSERT_EQUAL(sqlease_supervisor_stop(a, &err), SQLEASE_OK);
    CU_ASSERT_FATAL(tu_await(is_holding, b, 3000));
    sqlease_supervisor_state(b, &st);
    tb = st.token;
    CU_ASSERT_EQUAL(tb, ta + 1);
    /* a's end is written right after its hand-over statement, which the
     * runner may have sent: b's take may come first. */
    ended_ht.t = &t;
    ended_ht.token = ta;
    CU_ASSERT(tu_await(hold_ended, &ended_ht, 2000));
    read_rows(&t, "job", &rs);
    CU_ASSERT_PTR_NOT_NULL_FATAL(row_of(&rs, ta));
    CU_ASSERT_PTR_NOT_NULL_FATAL(row_of(&rs, tb));
    CU_ASSERT_STRING_EQUAL(row_of(&rs, ta)->ended, "handed_over");
    CU_ASSERT_STRING_EQUAL(row_of(&rs, tb)->owner, "sup-b");
    CU_ASSERT_STRING_EQUAL(row_of(&rs, tb)->ended, "");
    CU_ASSERT(row_of(&rs, tb)->gap_ms >= 0 && row_of(&rs, tb)->gap_ms < 1000);
    /* The ready rows' holds are not the job's: no history of their own. */
    CU_ASSERT_EQUAL(rs.n, 2);
    read_rows(&t, NULL, &rs);
    CU_ASSERT_EQUAL(rs.n, 2);
    sqlease_supervisor_free(a);

    /* c, ready; the operator asks b to hand over to it. */
    c = start_ready(&t, "sup-c");
    ready_lease = make_lease(db, &t, "job", "reader", 1600);
    CU_ASSERT(tu_await(c_is_ready, ready_lease, 3000));
    op = make_lease(db, &t, "job", "operator", 1600);
    CU_ASSERT_EQUAL(sqlease_lease_request_handoff(op, "sup-c", &req, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(req.token, tb);
    CU_ASSERT_FATAL(tu_await(is_holding, c, 3000));
    sqlease_supervisor_state(c, &st);
    tc = st.token;
    CU_ASSERT_EQUAL(tc, tb + 1);
    ended_ht.token = tb;
    CU_ASSERT(tu_await(hold_ended, &ended_ht, 2000));
    read_rows(&t, "job", &rs);
    CU_ASSERT_PTR_NOT_NULL_FATAL(row_of(&rs, tc));
    CU_ASSERT_STRING_EQUAL(row_of(&rs, tb)->ended, "handed_over");
    CU_ASSERT_STRING_EQUAL(row_of(&rs, tc)->owner, "sup-c");
    /* The gap is the hand-over's read, not the work's lead (b's work ran
     * on for a follower's read interval after it saw the request). */
    CU_ASSERT(row_of(&rs, tc)->gap_ms >= 0 && row_of(&rs, tc)->gap_ms < 200);
    if (row_of(&rs, tc)->gap_ms >= 200)
        fprintf(stderr, "\n  gap after the requested hand-over: %lld ms\n",
                (long long)row_of(&rs, tc)->gap_ms);
    sqlease_lease_free(op);
    sqlease_lease_free(ready_lease);
    CU_ASSERT_EQUAL(sqlease_supervisor_stop(b, &err), SQLEASE_OK);
    sqlease_supervisor_free(b);
    CU_ASSERT_EQUAL(sqlease_supervisor_stop(c, &err), SQLEASE_OK);
    read_rows(&t, "job", &rs);
    CU_ASSERT_STRING_EQUAL(row_of(&rs, tc)->ended, "released");
    sqlease_supervisor_free(c);
    drop_tables(&t);
}

/* ------------------------------------------------------------------ */
/* The listing and the pruning                                          */
/* ------------------------------------------------------------------ */

static int stop_after_two(void *ud, const sqlease_hold_info *info)
{
    int *n = ud;
    (void)info;
    return ++*n >= 2;
}

static void test_list_and_prune(void)
{
    tables t;
    sqlease_lease *a, *b;
    sqlease_error err;
    rows rs, paged;
    sqle_hist h;
    int64_t deleted = -1;
    size_t i;
    int n = 0;

    make_tables(&t, "job");
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t.lease, "other"), SQLEASE_OK);
    a = make_lease(db, &t, "job", "owner-a", 5000);
    b = make_lease(db, &t, "other", "owner-b", 5000);
    for (i = 0; i < 5; i++) {
        (void)hold(a);
        CU_ASSERT_EQUAL(sqlease_lease_release(a, NULL, &err), SQLEASE_OK);
        (void)hold(b);
        CU_ASSERT_EQUAL(sqlease_lease_release(b, NULL, &err), SQLEASE_OK);
    }
    (void)hold(a);
    read_rows(&t, NULL, &rs);
    CU_ASSERT_EQUAL(rs.n, 11);
    for (i = 1; i < rs.n; i++)
        CU_ASSERT(rs.r[i - 1].started_at_ms >= rs.r[i].started_at_ms);
    read_rows(&t, "other", &rs);
    CU_ASSERT_EQUAL(rs.n, 5);
    /* Pages of two give the same rows in the same order. */
    read_rows(&t, "job", &rs);
    memset(&paged, 0, sizeof paged);
    CU_ASSERT_EQUAL(sqle_history_list(db, t.hist, "job", 0, INT64_MAX, 2, on_row, &paged, &err),
                    SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(paged.n, rs.n);
    for (i = 0; i < rs.n; i++)
        CU_ASSERT_EQUAL(paged.r[i].token, rs.r[i].token);
    /* since: the newest two only; a callback may stop. */
    CU_ASSERT_EQUAL(sqlease_history_list(db, t.hist, "job", rs.r[1].started_at_ms, on_row,
                                         memset(&paged, 0, sizeof paged), &err), SQLEASE_OK);
    CU_ASSERT(paged.n >= 2 && paged.n < rs.n);
    CU_ASSERT_EQUAL(sqlease_history_list(db, t.hist, NULL, 0, stop_after_two, &n, &err),
                    SQLEASE_OK);
    CU_ASSERT_EQUAL(n, 2);
    /* The prune of everything started so far deletes the ended holds of
     * its name and keeps the one that lasts. */
    h = *sqle_lease_hist(a);
    CU_ASSERT_EQUAL(sqle_hist_prune(&h, 0, rs.r[0].started_at_ms + 1, &deleted, &err),
                    SQLEASE_OK);
    CU_ASSERT_EQUAL(deleted, 5);
    read_rows(&t, "job", &rs);
    CU_ASSERT_EQUAL(rs.n, 1);
    CU_ASSERT_STRING_EQUAL(rs.r[0].ended, "");
    read_rows(&t, "other", &rs);
    CU_ASSERT_EQUAL(rs.n, 5);
    /* Bad input, refused before anything is sent. */
    CU_ASSERT_EQUAL(sqlease_history_list(db, "from", NULL, 0, on_row, NULL, &err),
                    SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_history_list(db, t.hist, "", 0, on_row, NULL, &err),
                    SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_history_list(NULL, t.hist, NULL, 0, on_row, NULL, &err),
                    SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_history_migrate(db, "select", &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_lease_release(a, NULL, &err), SQLEASE_OK);
    sqlease_lease_free(a);
    sqlease_lease_free(b);
    drop_tables(&t);
}

static void add(void)
{
    CU_pSuite s = CU_add_suite("history", NULL, NULL);

    CU_add_test(s, "a take writes the hold's row, a release ends it; what each costs",
                test_take_and_release);
    CU_add_test(s, "a killed holder's hold is ended 'expired' by its taker, never again",
                test_expired_and_taken);
    CU_add_test(s, "a renew that finds the hold gone ends it 'lost'", test_lost);
    CU_add_test(s, "a forced release ends the hold 'forced'", test_forced);
    CU_add_test(s, "an end another file writes (a hand-over), once", test_release_as);
    CU_add_test(s, "a holder's end after a take: the next hold's start at the latest",
                test_end_after_a_take);
    CU_add_test(s, "a hand-over ends the hold 'handed_over', the target's starts",
                test_handed_over);
    CU_add_test(s, "a missing history table: the lease works, said once", test_missing_table);
    CU_add_test(s, "batched takes, releases and losses: one statement per chunk",
                test_batched);
    CU_add_test(s, "supervisors: deadline, expired by the taker, released at stop",
                test_supervisors);
    CU_add_test(s, "supervisors: a stop hands over ('handed_over'), the last releases",
                test_supervisors_hand_over);
    CU_add_test(s, "the listing: newest first, by name, in pages; the pruning",
                test_list_and_prune);
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
