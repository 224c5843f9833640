/*
 * test_holder.c -- what a lease's users build on, against a real database
 * through the real ODBC driver: the fence predicate inside the caller's
 * own UPDATE (bound and as literals), the holder's published data, the
 * follower's read-first poll, watching the holder (on_holder), waiting for
 * the lease with a timeout, listing every lease of a table, and the names
 * of statuses and stop reasons.
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "platform.h"

#include "testutil.h"

static sqlease_db *db;

/* The substring every dialect's take statement has, for fault matching. */
#define TAKE_SQL "owner = ?, expires_at_ms"

static sqlease_lease *make(const char *t, const char *name, const char *owner,
                           const char *data, int64_t ttl)
{
    sqlease_options o;
    sqlease_error err;
    sqlease_lease *l = NULL;
    int rc;

    tu_options(&o, t, name, owner, ttl, ttl / 4, ttl / 2, ttl / 8 > 0 ? ttl / 8 : 1);
    o.data = data;
    rc = sqlease_lease_new(&l, db, &o, &err);
    if (rc != SQLEASE_OK)
        fprintf(stderr, "lease_new: %s\n", err.message);
    CU_ASSERT_EQUAL_FATAL(rc, SQLEASE_OK);
    return l;
}

static int64_t status_token(sqlease_lease *l)
{
    sqlease_lease_info st;
    sqlease_error err;

    CU_ASSERT_EQUAL_FATAL(sqlease_lease_status(l, &st, &err), SQLEASE_OK);
    return st.token;
}

/* ---- names ---------------------------------------------------------- */

static void test_names(void)
{
    int s;

    for (s = SQLEASE_OK; s <= SQLEASE_PENDING; s++) {
        CU_ASSERT_STRING_NOT_EQUAL(sqlease_strerror(s), "unknown status");
        CU_ASSERT_STRING_NOT_EQUAL(sqlease_status_name(s), "unknown");
        CU_ASSERT_EQUAL(strncmp(sqlease_status_name(s), "SQLEASE_", 8), 0);
    }
    CU_ASSERT_STRING_EQUAL(sqlease_status_name(SQLEASE_OK), "SQLEASE_OK");
    CU_ASSERT_STRING_EQUAL(sqlease_status_name(SQLEASE_NOT_HELD), "SQLEASE_NOT_HELD");
    CU_ASSERT_STRING_EQUAL(sqlease_status_name(SQLEASE_EROWCOUNT), "SQLEASE_EROWCOUNT");
    CU_ASSERT_STRING_EQUAL(sqlease_strerror(SQLEASE_ETIMEOUT),
                           "the database did not answer in time (timeout)");
    CU_ASSERT_STRING_EQUAL(sqlease_strerror(-1), "unknown status");
    CU_ASSERT_STRING_EQUAL(sqlease_strerror(SQLEASE_PENDING + 1), "unknown status");
    CU_ASSERT_STRING_EQUAL(sqlease_status_name(999), "unknown");

    CU_ASSERT_STRING_EQUAL(sqlease_stop_reason_name(SQLEASE_STOP_LOST), "lost");
    CU_ASSERT_STRING_EQUAL(sqlease_stop_reason_name(SQLEASE_STOP_DEADLINE), "deadline");
    CU_ASSERT_STRING_EQUAL(sqlease_stop_reason_name(SQLEASE_STOP_SHUTDOWN), "shutdown");
    CU_ASSERT_STRING_EQUAL(sqlease_stop_reason_name(SQLEASE_STOP_HANDOFF), "handoff");
    CU_ASSERT_STRING_EQUAL(sqlease_stop_reason_name(0), "unknown");
    CU_ASSERT_STRING_EQUAL(sqlease_stop_reason_name(5), "unknown");
    CU_ASSERT_STRING_EQUAL(sqlease_stop_reason_str(SQLEASE_STOP_DEADLINE),
                           "the lease was not proven for the renew deadline");
    CU_ASSERT_PTR_NOT_NULL(strstr(sqlease_stop_reason_str(SQLEASE_STOP_LOST), "hold is gone"));
    CU_ASSERT_STRING_EQUAL(sqlease_stop_reason_str(SQLEASE_STOP_SHUTDOWN), "shutting down");
    CU_ASSERT_STRING_EQUAL(sqlease_stop_reason_str(-7), "unknown stop reason");
}

/* ---- the holder's data ---------------------------------------------- */

static void test_data_take_renew_release(void)
{
    char t[64];
    sqlease_lease *a, *b, *admin;
    sqlease_lease_info ia, st;
    sqlease_error err;
    int released = 0;
    int64_t seed;

    snprintf(t, sizeof t, "%s", tu_table());
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    a = make(t, "job", "owner-a", "10.1.2.3:8080 h\xc3\xb4te", 30000);
    b = make(t, "job", "owner-b", "b-data", 30000);
    admin = make(t, "job", "admin", NULL, 30000);
    seed = status_token(a);

    /* Free: no data. */
    CU_ASSERT_EQUAL(sqlease_lease_status(b, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.data, "");

    /* The take writes it; the follower's read and status see it. */
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &ia, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(ia.token, seed + 1);
    CU_ASSERT_STRING_EQUAL(ia.data, "10.1.2.3:8080 h\xc3\xb4te");
    CU_ASSERT_EQUAL(sqlease_lease_acquire(b, &st, &err), SQLEASE_NOT_HELD);
    CU_ASSERT_STRING_EQUAL(st.owner, "owner-a");
    CU_ASSERT_STRING_EQUAL(st.data, "10.1.2.3:8080 h\xc3\xb4te");
    CU_ASSERT_EQUAL(st.token, seed + 1);

    /* A renew keeps it. */
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &ia, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_status(b, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.data, "10.1.2.3:8080 h\xc3\xb4te");
    CU_ASSERT_EQUAL(st.held, 1);

    /* A release clears it (NULL reads as ""). */
    CU_ASSERT_EQUAL(sqlease_lease_release(a, &released, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(released, 1);
    CU_ASSERT_EQUAL(sqlease_lease_status(b, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.data, "");
    CU_ASSERT_EQUAL(st.held, 0);

    /* The next holder writes its own; a forced release clears it. */
    CU_ASSERT_EQUAL(sqlease_lease_acquire(b, &ia, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(ia.token, seed + 2);
    CU_ASSERT_EQUAL(sqlease_lease_status(a, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.data, "b-data");
    CU_ASSERT_EQUAL(sqlease_lease_release_force(admin, &released, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_status(a, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.data, "");

    /* A holder without data leaves the column NULL. */
    CU_ASSERT_EQUAL(sqlease_lease_acquire(admin, &ia, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(ia.data, "");
    CU_ASSERT_EQUAL(sqlease_lease_status(a, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.owner, "admin");
    CU_ASSERT_STRING_EQUAL(st.data, "");

    sqlease_lease_free(a);
    sqlease_lease_free(b);
    sqlease_lease_free(admin);
    tu_drop(db, t);
}

static void test_data_checked(void)
{
    char big[SQLEASE_MAX_DATA + 2];
    sqlease_options o;
    sqlease_error err;
    sqlease_lease *l = NULL;
    char t[64];

    snprintf(t, sizeof t, "%s", tu_table());
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    tu_options(&o, t, "job", "owner-a", 3000, 500, 1500, 250);

    memset(big, 'x', SQLEASE_MAX_DATA + 1);
    big[SQLEASE_MAX_DATA + 1] = '\0';
    o.data = big;
    CU_ASSERT_EQUAL(sqlease_options_check(&o, &err), SQLEASE_EINVAL);
    CU_ASSERT_STRING_EQUAL(err.message, "data is 1025 bytes; at most 1024");
    CU_ASSERT_EQUAL(sqlease_lease_new(&l, db, &o, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NULL(l);
    o.data = "line\nbreak";
    CU_ASSERT_EQUAL(sqlease_options_check(&o, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "data contains a control character"));
    o.data = "bad \xff utf8";
    CU_ASSERT_EQUAL(sqlease_options_check(&o, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "data is not valid UTF-8"));
    o.data = "";
    CU_ASSERT_EQUAL(sqlease_options_check(&o, &err), SQLEASE_EINVAL);
    CU_ASSERT_STRING_EQUAL(err.message, "data is empty");

    /* Exactly the column's width fits, and reads back whole. */
    big[SQLEASE_MAX_DATA] = '\0';
    o.data = big;
    CU_ASSERT_EQUAL(sqlease_options_check(&o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&l, db, &o, &err), SQLEASE_OK);
    {
        sqlease_lease_info st;
        CU_ASSERT_EQUAL(sqlease_lease_acquire(l, NULL, &err), SQLEASE_OK);
        CU_ASSERT_EQUAL(sqlease_lease_status(l, &st, &err), SQLEASE_OK);
        CU_ASSERT_EQUAL(strlen(st.data), SQLEASE_MAX_DATA);
        CU_ASSERT_STRING_EQUAL(st.data, big);
    }
    sqlease_lease_free(l);
    tu_drop(db, t);
}

/* An older table (go-admin's, or one made before the data column) gets
 * the column from migrate, once. */
static void test_migrate_adds_data(void)
{
    char t[64], sql[512];
    sqlease_lease *a;
    sqlease_lease_info st;
    sqlease_error err;
    int64_t rows = -1;

    snprintf(t, sizeof t, "%s", tu_table());
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (name VARCHAR(64) NOT NULL PRIMARY KEY, "
             "owner VARCHAR(255) NOT NULL DEFAULT '', acquired_at_ms BIGINT NOT NULL DEFAULT 0, "
             "expires_at_ms BIGINT NOT NULL DEFAULT 0, token BIGINT NOT NULL DEFAULT 0, "
             "version BIGINT NOT NULL DEFAULT 0)", t);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, NULL), SQLEASE_OK);
    snprintf(sql, sizeof sql, "INSERT INTO %s (name, owner, token) VALUES ('job', '', 41)", t);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, &rows), SQLEASE_OK);
    /* Before migrate, the data column is missing. */
    snprintf(sql, sizeof sql, "SELECT data FROM %s", t);
    CU_ASSERT_NOT_EQUAL(sqle_db_exec(db, sql, NULL, 0, NULL, 0, NULL, NULL, &err), SQLEASE_OK);

    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    a = make(t, "job", "owner-a", "here", 30000);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &st, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(st.token, 42);
    CU_ASSERT_EQUAL(sqlease_lease_status(a, &st, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(st.data, "here");
    sqlease_lease_free(a);
    tu_drop(db, t);
}

/* ---- the follower's poll: a read, and a take bound to what it read --- */

static void test_follower_reads_first(void)
{
    char t[64];
    sqlease_lease *a, *b;
    sqlease_lease_info st;
    sqlease_error err;
    uint64_t before;
    int released = 0;
    int64_t seed;

    snprintf(t, sizeof t, "%s", tu_table());
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    a = make(t, "job", "owner-a", NULL, 30000);
    b = make(t, "job", "owner-b", NULL, 30000);
    seed = status_token(a);

    /* A take: the read and the UPDATE, and no SELECT after it. */
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &st, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 2);
    CU_ASSERT_EQUAL(st.token, seed + 1);
    CU_ASSERT_EQUAL(st.mine, 1);
    CU_ASSERT(st.expires_at_ms - st.db_now_ms == 30000);

    /* A miss: the read only, every time, and it says who holds. */
    for (int i = 0; i < 3; i++) {
        before = sqlease_db_statements(db);
        CU_ASSERT_EQUAL(sqlease_lease_acquire(b, &st, &err), SQLEASE_NOT_HELD);
        CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 1);
        CU_ASSERT_STRING_EQUAL(st.owner, "owner-a");
        CU_ASSERT_EQUAL(st.token, seed + 1);
        CU_ASSERT_EQUAL(st.held, 1);
        CU_ASSERT_EQUAL(st.mine, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "held by owner-a"));
    }
    /* A renew: one UPDATE. */
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, &st, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 1);

    /* The follower sees the change at its next read. */
    CU_ASSERT_EQUAL(sqlease_lease_release(a, &released, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(b, &st, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(st.token, seed + 2);
    CU_ASSERT_STRING_EQUAL(st.owner, "owner-b");
    sqlease_lease_free(a);
    sqlease_lease_free(b);
    tu_drop(db, t);
}

/* While b's take (after its read saw the row free) is held back, the row
 * is taken and released by another owner: free again, but with a newer
 * token.  The take is bound to the token b read, so it matches nothing
 * (an unbound take would have taken the row, and b would have believed a
 * token it never got). */
typedef struct interloper {
    tu_faulty *f;
    const char *table;
    int ok;
} interloper;

static void interloper_main(void *arg)
{
    interloper *ip = arg;
    sqlease_options o;
    sqlease_lease *c = NULL;
    sqlease_error err;
    int64_t until = sqle_mono_ms() + 5000;
    int released = 0;

    while (tu_fault_hung(ip->f) == 0 && sqle_mono_ms() < until)
        sqle_sleep_ms(2);
    tu_options(&o, ip->table, "job", "owner-c", 30000, 7500, 15000, 1000);
    if (tu_fault_hung(ip->f) == 1 && sqlease_lease_new(&c, db, &o, &err) == SQLEASE_OK &&
        sqlease_lease_acquire(c, NULL, &err) == SQLEASE_OK &&
        sqlease_lease_release(c, &released, &err) == SQLEASE_OK && released == 1)
        ip->ok = 1;
    sqlease_lease_free(c);
    tu_fault_match(ip->f, NULL, TU_FAULT_NONE);
}

static void test_take_bound_to_the_token_read(void)
{
    char t[64];
    sqlease_db *fdb = NULL;
    tu_faulty *f;
    sqlease_options o;
    sqlease_lease *b = NULL;
    sqlease_lease_info st;
    sqlease_error err;
    sqle_thread th;
    interloper ip;
    int64_t seed;

    snprintf(t, sizeof t, "%s", tu_table());
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    f = tu_faulty_open_qt(&fdb, 5000);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    tu_options(&o, t, "job", "owner-b", 30000, 7500, 15000, 1000);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&b, fdb, &o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_status(b, &st, &err), SQLEASE_OK);
    seed = st.token;

    memset(&ip, 0, sizeof ip);
    ip.f = f;
    ip.table = t;
    tu_fault_match(f, TAKE_SQL, TU_FAULT_HANG);
    CU_ASSERT_EQUAL_FATAL(sqle_thread_start(&th, interloper_main, &ip), 0);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(b, &st, &err), SQLEASE_NOT_HELD);
    sqle_thread_join(&th);
    CU_ASSERT_EQUAL(ip.ok, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "between its read and its take"));
    CU_ASSERT_EQUAL(sqlease_lease_status(b, &st, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(st.held, 0);
    CU_ASSERT_EQUAL(st.token, seed + 1);
    CU_ASSERT_STRING_EQUAL(st.owner, "");
    /* It has not taken the row, so it has no fence either. */
    {
        sqlease_fence fc;
        SQLEASE_FENCE_INIT(&fc);
        CU_ASSERT_EQUAL(sqlease_lease_fence(b, &fc, &err), SQLEASE_NOT_HELD);
    }
    /* Its next try reads the newer token and takes the row. */
    CU_ASSERT_EQUAL(sqlease_lease_acquire(b, &st, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(st.token, seed + 2);
    sqlease_lease_free(b);
    sqlease_db_close(fdb);
    tu_faulty_free(f);
    tu_drop(db, t);
}

/* ---- the fence ------------------------------------------------------ */

static void make_jobs(const char *jobs)
{
    char sql[256];
    int64_t rows = -1;

    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (id INTEGER NOT NULL PRIMARY KEY, v BIGINT NOT NULL)", jobs);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, NULL), SQLEASE_OK);
    snprintf(sql, sizeof sql, "INSERT INTO %s (id, v) VALUES (1, 0)", jobs);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, &rows), SQLEASE_OK);
}

/* UPDATE jobs SET v = v + 1 WHERE id = 1 AND <fence>, binding the id and
 * then the fence's values: the rows it changed, or -1 on an error. */
static int64_t fenced_update(const char *jobs, const sqlease_fence *f)
{
    char sql[4096];
    db_bind b[1 + SQLEASE_FENCE_MAX_VALUES];
    sqlease_error err;
    int64_t rows = -1;
    size_t i;
    int rc;

    snprintf(sql, sizeof sql, "UPDATE %s SET v = v + 1 WHERE id = ? AND %s", jobs, f->sql);
    memset(b, 0, sizeof b);
    b[0].type = DB_INT64;
    b[0].i = 1;
    for (i = 0; i < f->nvalues; i++) {
        if (f->values[i].type == SQLEASE_VALUE_TEXT) {
            b[i + 1].type = DB_TEXT;
            b[i + 1].s = f->values[i].text;
        } else {
            b[i + 1].type = DB_INT64;
            b[i + 1].i = f->values[i].int64;
        }
    }
    rc = sqle_db_exec(db, sql, b, 1 + f->nvalues, NULL, 0, NULL, &rows, &err);
    if (rc != SQLEASE_OK) {
        fprintf(stderr, "\n  fenced update: %s\n  %s\n", err.message, sql);
        return -1;
    }
    return rows;
}

/* The same statement with the fence written as literals, no binding. */
static int64_t literal_update(const char *jobs, const sqlease_fence *f)
{
    char lit[SQLEASE_FENCE_LITERAL_MAX], sql[SQLEASE_FENCE_LITERAL_MAX + 128];
    sqlease_error err;
    int64_t rows = -1;
    int rc;

    rc = sqlease_fence_literal(f, lit, sizeof lit, &err);
    if (rc != SQLEASE_OK) {
        fprintf(stderr, "\n  fence literal: %s\n", err.message);
        return -2;
    }
    snprintf(sql, sizeof sql, "UPDATE %s SET v = v + 1 WHERE id = 1 AND %s", jobs, lit);
    rc = sqle_db_exec(db, sql, NULL, 0, NULL, 0, NULL, &rows, &err);
    if (rc != SQLEASE_OK) {
        fprintf(stderr, "\n  literal update: %s\n  %s\n", err.message, sql);
        return -1;
    }
    return rows;
}

static int lease_free_now(void *arg)
{
    sqlease_lease_info st;
    sqlease_error err;
    return sqlease_lease_status(arg, &st, &err) == SQLEASE_OK && !st.held;
}

static void test_fence_in_own_update(void)
{
    char t[64], jobs[64];
    sqlease_lease *a, *b, *admin;
    sqlease_lease_info ia;
    sqlease_fence fa, fb;
    sqlease_error err;
    int released = 0;

    snprintf(t, sizeof t, "%s", tu_table());
    snprintf(jobs, sizeof jobs, "%s", tu_table());
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    make_jobs(jobs);
    a = make(t, "job", "owner-a", NULL, 30000);
    b = make(t, "job", "owner-b", NULL, 30000);
    admin = make(t, "job", "admin", NULL, 30000);

    SQLEASE_FENCE_INIT(&fa);
    CU_ASSERT_EQUAL(fa.size, sizeof fa);
    CU_ASSERT_EQUAL(sqlease_lease_fence(a, &fa, &err), SQLEASE_NOT_HELD);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(a, &ia, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_fence(a, &fa, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(fa.token, ia.token);
    CU_ASSERT_STRING_EQUAL(fa.owner, "owner-a");
    CU_ASSERT_STRING_EQUAL(fa.name, "job");
    CU_ASSERT_STRING_EQUAL(fa.dialect, sqlease_db_dialect(db));
    CU_ASSERT_EQUAL(strncmp(fa.sql, "EXISTS (", 8), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(fa.sql, t));

    /* Holding: the write lands, bound or literal, as often as it is sent. */
    CU_ASSERT_EQUAL(fenced_update(jobs, &fa), 1);
    CU_ASSERT_EQUAL(fenced_update(jobs, &fa), 1);
    CU_ASSERT_EQUAL(literal_update(jobs, &fa), 1);

    /* A forced release: the same statements change nothing. */
    CU_ASSERT_EQUAL(sqlease_lease_release_force(admin, &released, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(released, 1);
    CU_ASSERT_EQUAL(fenced_update(jobs, &fa), 0);
    CU_ASSERT_EQUAL(literal_update(jobs, &fa), 0);

    /* Another owner's take: its fence works, the old one still does not. */
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(b, NULL, &err), SQLEASE_OK);
    SQLEASE_FENCE_INIT(&fb);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_fence(b, &fb, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(fb.token, fa.token + 1);
    CU_ASSERT_EQUAL(fenced_update(jobs, &fb), 1);
    CU_ASSERT_EQUAL(literal_update(jobs, &fb), 1);
    CU_ASSERT_EQUAL(fenced_update(jobs, &fa), 0);
    CU_ASSERT_EQUAL(literal_update(jobs, &fa), 0);

    /* The same owner id with another token (a re-take) is another hold. */
    CU_ASSERT_EQUAL(sqlease_lease_release(b, &released, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(b, NULL, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(fenced_update(jobs, &fb), 0);
    CU_ASSERT_EQUAL(literal_update(jobs, &fb), 0);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_fence(b, &fb, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(fenced_update(jobs, &fb), 1);
    /* Released: nothing again, and no fence to ask for. */
    CU_ASSERT_EQUAL(sqlease_lease_release(b, &released, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(fenced_update(jobs, &fb), 0);
    CU_ASSERT_EQUAL(sqlease_lease_fence(b, &fb, &err), SQLEASE_NOT_HELD);

    /* 6 writes landed, no other. */
    {
        char sql[128];
        int64_t v = -1;
        db_out out;
        int has_row = 0;
        memset(&out, 0, sizeof out);
        out.type = DB_INT64;
        out.i = &v;
        snprintf(sql, sizeof sql, "SELECT v FROM %s WHERE id = 1", jobs);
        CU_ASSERT_EQUAL(sqle_db_exec(db, sql, NULL, 0, &out, 1, &has_row, NULL, &err), SQLEASE_OK);
        CU_ASSERT_EQUAL(v, 6);
    }
    sqlease_lease_free(a);
    sqlease_lease_free(b);
    sqlease_lease_free(admin);
    tu_drop(db, jobs);
    tu_drop(db, t);
}

static void test_fence_after_expiry(void)
{
    char t[64], jobs[64];
    sqlease_lease *a, *b;
    sqlease_fence fa;
    sqlease_error err;

    snprintf(t, sizeof t, "%s", tu_table());
    snprintf(jobs, sizeof jobs, "%s", tu_table());
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    make_jobs(jobs);
    a = make(t, "job", "owner-a", NULL, 1000);
    b = make(t, "job", "owner-b", NULL, 30000);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(a, NULL, &err), SQLEASE_OK);
    SQLEASE_FENCE_INIT(&fa);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_fence(a, &fa, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(fenced_update(jobs, &fa), 1);
    /* Expired, not yet taken: the row still names a, but the clock in the
     * predicate says the hold is over. */
    CU_ASSERT_FATAL(tu_await(lease_free_now, a, 10000));
    CU_ASSERT_EQUAL(fenced_update(jobs, &fa), 0);
    CU_ASSERT_EQUAL(literal_update(jobs, &fa), 0);
    /* The handle still has the hold it believes in (the predicate is what
     * knows better). */
    CU_ASSERT_EQUAL(sqlease_lease_fence(a, &fa, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(b, NULL, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(fenced_update(jobs, &fa), 0);
    sqlease_lease_free(a);
    sqlease_lease_free(b);
    tu_drop(db, jobs);
    tu_drop(db, t);
}

/* Owner ids compare as exact bytes in the fence as everywhere: a fence for
 * "worker" does not pass for the row of "worker " (MySQL/MariaDB's `=`
 * pads, SQL Server's too), nor "WORKER", nor "hote" for "hôte".  Values
 * with quotes and non-ASCII characters survive the literal form. */
static void test_fence_exact_and_quoted(void)
{
    static const struct { const char *holder, *other; } pairs[] = {
        { "worker ", "worker" },
        { "worker", "WORKER" },
        { "h\xc3\xb4te-\xf0\x9f\x99\x82", "hote-\xf0\x9f\x99\x82" },
        { "o'brien \"x\" ?", "o''brien \"x\" ?" },
    };
    char t[64], jobs[64];
    size_t i;
    sqlease_error err;

    snprintf(t, sizeof t, "%s", tu_table());
    snprintf(jobs, sizeof jobs, "%s", tu_table());
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    make_jobs(jobs);
    for (i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        sqlease_lease *a = make(t, "job", pairs[i].holder, NULL, 30000);
        sqlease_fence f, g;
        size_t k;
        int released = 0;

        CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(a, NULL, &err), SQLEASE_OK);
        SQLEASE_FENCE_INIT(&f);
        CU_ASSERT_EQUAL_FATAL(sqlease_lease_fence(a, &f, &err), SQLEASE_OK);
        CU_ASSERT_EQUAL(fenced_update(jobs, &f), 1);
        CU_ASSERT_EQUAL(literal_update(jobs, &f), 1);
        /* The same fence naming the look-alike owner. */
        g = f;
        for (k = 0; k < g.nvalues; k++)
            if (g.values[k].type == SQLEASE_VALUE_TEXT && strcmp(g.values[k].text, f.owner) == 0)
                g.values[k].text = pairs[i].other;
        CU_ASSERT_EQUAL(fenced_update(jobs, &g), 0);
        CU_ASSERT_EQUAL(literal_update(jobs, &g), 0);
        CU_ASSERT_EQUAL(sqlease_lease_release(a, &released, &err), SQLEASE_OK);
        CU_ASSERT_EQUAL(released, 1);
        sqlease_lease_free(a);
    }
    tu_drop(db, jobs);
    tu_drop(db, t);
}

/* A caller built against a later, larger sqlease_fence: the library fills
 * what it knows and leaves the rest alone.  One built with a size smaller
 * than the first version's is refused. */
static void test_fence_struct_grows(void)
{
    struct later {
        sqlease_fence f;
        char newer_fields[64];
    } big;
    sqlease_fence small;
    char t[64];
    sqlease_lease *a;
    sqlease_error err;
    size_t i;

    snprintf(t, sizeof t, "%s", tu_table());
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    a = make(t, "job", "owner-a", NULL, 30000);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(a, NULL, &err), SQLEASE_OK);

    sqlease_fence_init_(&big.f, sizeof big);
    CU_ASSERT_EQUAL(big.f.size, sizeof big);
    memset(big.newer_fields, 0x5a, sizeof big.newer_fields);
    CU_ASSERT_EQUAL(sqlease_lease_fence(a, &big.f, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(big.f.owner, "owner-a");
    for (i = 0; i < sizeof big.newer_fields; i++)
        CU_ASSERT_EQUAL(big.newer_fields[i], 0x5a);

    SQLEASE_FENCE_INIT(&small);
    small.size = offsetof(sqlease_fence, token);
    CU_ASSERT_EQUAL(sqlease_lease_fence(a, &small, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "SQLEASE_FENCE_INIT"));
    memset(&small, 0, sizeof small);
    CU_ASSERT_EQUAL(sqlease_lease_fence(a, &small, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_lease_fence(NULL, &small, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_lease_fence(a, NULL, &err), SQLEASE_EINVAL);
    sqlease_lease_free(a);
    tu_drop(db, t);
}

/* The literal form, dialect by dialect, without a database. */
static sqlease_fence lit_fence(const char *dialect, const char *sql, const char *a,
                               const char *b, int64_t tok)
{
    sqlease_fence f;

    SQLEASE_FENCE_INIT(&f);
    f.sql = sql;
    f.dialect = dialect;
    f.nvalues = 3;
    f.values[0].type = SQLEASE_VALUE_TEXT;
    f.values[0].text = a;
    f.values[1].type = SQLEASE_VALUE_TEXT;
    f.values[1].text = b;
    f.values[2].type = SQLEASE_VALUE_INT64;
    f.values[2].int64 = tok;
    return f;
}

static void test_fence_literal_quoting(void)
{
    const char *sql = "n = ? AND '?' <> o AND o = ? AND \"t?\" = ?";
    char buf[512];
    sqlease_fence f;
    sqlease_error err;

    f = lit_fence("sqlite", sql, "o'b", "a\\b", 42);
    CU_ASSERT_EQUAL(sqlease_fence_literal(&f, buf, sizeof buf, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(buf, "n = 'o''b' AND '?' <> o AND o = 'a\\b' AND \"t?\" = 42");
    f.dialect = "sqlserver";
    CU_ASSERT_EQUAL(sqlease_fence_literal(&f, buf, sizeof buf, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(buf, "n = 'o''b' AND '?' <> o AND o = 'a\\b' AND \"t?\" = 42");

    f = lit_fence("postgres", sql, "o'b", "a\\b h\xc3\xb4te \xe2\x82\xac \xf0\x9f\x99\x82", -5);
    CU_ASSERT_EQUAL(sqlease_fence_literal(&f, buf, sizeof buf, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(buf, "n = E'o''b' AND '?' <> o AND o = "
                                "E'a\\\\b h\\u00F4te \\u20AC \\U0001F642' AND \"t?\" = -5");

    f = lit_fence("mysql", sql, "o'b", "h\xc3\xb4te", 9000000000000LL);
    CU_ASSERT_EQUAL(sqlease_fence_literal(&f, buf, sizeof buf, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(buf, "n = _utf8mb4'o''b' AND '?' <> o AND o = _utf8mb4'h\xc3\xb4te' "
                                "AND \"t?\" = 9000000000000");
    /* A backslash means two things to MySQL, depending on sql_mode. */
    f = lit_fence("mysql", sql, "ok", "a\\b", 1);
    strcpy(buf, "untouched");
    CU_ASSERT_EQUAL(sqlease_fence_literal(&f, buf, sizeof buf, &err), SQLEASE_EINVAL);
    CU_ASSERT_STRING_EQUAL(buf, "");
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "backslash"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "NO_BACKSLASH_ESCAPES"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "value 2"));

    /* Too small a buffer: the size needed, and nothing half written. */
    f = lit_fence("sqlite", sql, "x", "y", 1);
    CU_ASSERT_EQUAL(sqlease_fence_literal(&f, buf, 10, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "needs 46 bytes"));
    CU_ASSERT_STRING_EQUAL(buf, "");
    CU_ASSERT_EQUAL(sqlease_fence_literal(&f, buf, 46, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(strlen(buf), 45);

    /* Markers and values must agree; the fence must be one the library
     * made (or at least initialised and complete). */
    f = lit_fence("sqlite", "n = ? AND o = ?", "x", "y", 1);
    CU_ASSERT_EQUAL(sqlease_fence_literal(&f, buf, sizeof buf, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "2 markers for 3 values"));
    f = lit_fence("sqlite", "n = ? AND o = ? AND t = ? AND u = ?", "x", "y", 1);
    CU_ASSERT_EQUAL(sqlease_fence_literal(&f, buf, sizeof buf, &err), SQLEASE_EINVAL);
    f = lit_fence("oracle", sql, "x", "y", 1);
    CU_ASSERT_EQUAL(sqlease_fence_literal(&f, buf, sizeof buf, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "unknown dialect 'oracle'"));
    memset(&f, 0, sizeof f);
    CU_ASSERT_EQUAL(sqlease_fence_literal(&f, buf, sizeof buf, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_fence_literal(NULL, buf, sizeof buf, &err), SQLEASE_EINVAL);
}

/* Every dialect's real predicate, with the longest name, owner and table
 * of the worst characters, fits SQLEASE_FENCE_LITERAL_MAX. */
static void test_fence_literal_max(void)
{
    char name[SQLEASE_MAX_NAME + 1], owner[SQLEASE_MAX_OWNER + 1], table[SQLEASE_MAX_TABLE + 1];
    char buf[SQLEASE_FENCE_LITERAL_MAX];
    size_t i, k;
    sqlease_error err;

    memset(name, '\'', SQLEASE_MAX_NAME);
    name[SQLEASE_MAX_NAME] = '\0';
    /* U+00E9 twice per 4 bytes: \u00E9 is 6 characters for 2 bytes. */
    for (k = 0; k + 2 <= SQLEASE_MAX_OWNER; k += 2)
        memcpy(owner + k, "\xc3\xa9", 2);
    owner[k] = '\0';
    memset(table, 't', SQLEASE_MAX_TABLE);
    table[SQLEASE_MAX_TABLE] = '\0';
    for (i = 0; i < sqle_dialect_count; i++) {
        const sqle_dialect *d = &sqle_dialects[i];
        char *sql = sqle_sql_for_table(d->fence.sql, table);
        sqlease_fence f;
        SQLEASE_FENCE_INIT(&f);
        f.sql = sql;
        f.dialect = d->key;
        f.nvalues = d->fence.nparams;
        for (k = 0; k < d->fence.nparams; k++) {
            if (d->fence.params[k] == SQLEASE_P_TOKEN) {
                f.values[k].type = SQLEASE_VALUE_INT64;
                f.values[k].int64 = INT64_MIN;
            } else {
                f.values[k].type = SQLEASE_VALUE_TEXT;
                f.values[k].text = d->fence.params[k] == SQLEASE_P_NAME ? name : owner;
            }
        }
        CU_ASSERT_EQUAL(sqlease_fence_literal(&f, buf, sizeof buf, &err), SQLEASE_OK);
        CU_ASSERT(strlen(buf) < SQLEASE_FENCE_LITERAL_MAX / 2);
        free(sql);
    }
}

/* ---- every lease of a table ------------------------------------------ */

#define MAX_SEEN 300
typedef struct seen {
    int n;
    int stop_after;
    char name[MAX_SEEN][SQLEASE_MAX_NAME + 1];
    sqlease_lease_info info[MAX_SEEN];
} seen;

static int collect(void *ud, const char *name, const sqlease_lease_info *info)
{
    seen *s = ud;
    if (s->n < MAX_SEEN) {
        snprintf(s->name[s->n], sizeof s->name[0], "%s", name);
        s->info[s->n] = *info;
    }
    s->n++;
    return s->stop_after > 0 && s->n >= s->stop_after;
}

static void test_list(void)
{
    static const char *const names[] = { "gamma", "alpha", "delta", "beta" };
    char t[64];
    sqlease_lease *a, *d, *b;
    sqlease_error err;
    seen *s = calloc(1, sizeof *s);
    int64_t seed;
    int i;

    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    snprintf(t, sizeof t, "%s", tu_table());
    CU_ASSERT_EQUAL_FATAL(sqlease_migrate(db, t, names, 4, &err), SQLEASE_OK);
    a = make(t, "alpha", "owner-a", "addr-a", 30000);
    d = make(t, "delta", "owner-d", NULL, 30000);
    b = make(t, "beta", "owner-b", "addr-b", 1000);
    seed = status_token(a);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(a, NULL, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(d, NULL, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(b, NULL, &err), SQLEASE_OK);
    /* beta's hold expires: its row still names owner-b, but it is free. */
    CU_ASSERT_FATAL(tu_await(lease_free_now, b, 10000));

    CU_ASSERT_EQUAL(sqlease_list(db, t, collect, s, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(s->n, 4);
    CU_ASSERT_STRING_EQUAL(s->name[0], "alpha");
    CU_ASSERT_STRING_EQUAL(s->name[1], "beta");
    CU_ASSERT_STRING_EQUAL(s->name[2], "delta");
    CU_ASSERT_STRING_EQUAL(s->name[3], "gamma");
    CU_ASSERT_STRING_EQUAL(s->info[0].owner, "owner-a");
    CU_ASSERT_EQUAL(s->info[0].held, 1);
    CU_ASSERT_EQUAL(s->info[0].mine, 0);
    CU_ASSERT_STRING_EQUAL(s->info[0].data, "addr-a");
    CU_ASSERT(s->info[0].token > 1600000000000LL);
    CU_ASSERT(s->info[0].expires_at_ms - s->info[0].db_now_ms > 20000 &&
              s->info[0].expires_at_ms - s->info[0].db_now_ms <= 30000);
    CU_ASSERT_STRING_EQUAL(s->info[1].owner, "owner-b");
    CU_ASSERT_EQUAL(s->info[1].held, 0);
    CU_ASSERT_STRING_EQUAL(s->info[1].data, "addr-b");
    CU_ASSERT_STRING_EQUAL(s->info[2].owner, "owner-d");
    CU_ASSERT_EQUAL(s->info[2].held, 1);
    CU_ASSERT_STRING_EQUAL(s->info[2].data, "");
    CU_ASSERT_STRING_EQUAL(s->info[3].owner, "");
    CU_ASSERT_EQUAL(s->info[3].held, 0);
    CU_ASSERT_EQUAL(s->info[3].expires_at_ms, 0);
    for (i = 0; i < 4; i++)
        CU_ASSERT(s->info[i].db_now_ms > 1600000000000LL);
    /* alpha's token is its seed + 1; each row has its own. */
    CU_ASSERT(s->info[0].token == seed + 1);

    /* The callback may stop the listing. */
    memset(s, 0, sizeof *s);
    s->stop_after = 2;
    CU_ASSERT_EQUAL(sqlease_list(db, t, collect, s, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(s->n, 2);

    /* Bad arguments and a missing table. */
    CU_ASSERT_EQUAL(sqlease_list(NULL, t, collect, s, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_list(db, t, NULL, s, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_list(db, "drop table", collect, s, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_list(db, "tu_no_such_table", collect, s, &err), SQLEASE_ENOTABLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "sqlease migrate"));

    sqlease_lease_free(a);
    sqlease_lease_free(b);
    sqlease_lease_free(d);
    tu_drop(db, t);
    free(s);
}

/* More rows than a page: every one once, in order. */
static void test_list_pages(void)
{
    enum { N = 250 };
    char t[64];
    char (*names)[16] = calloc(N, sizeof *names);
    const char **ptrs = calloc(N, sizeof *ptrs);
    seen *s = calloc(1, sizeof *s);
    sqlease_error err;
    uint64_t before;
    int i;

    CU_ASSERT_PTR_NOT_NULL_FATAL(names);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ptrs);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    snprintf(t, sizeof t, "%s", tu_table());
    for (i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "lease-%03d", N - 1 - i);
        ptrs[i] = names[i];
    }
    CU_ASSERT_EQUAL_FATAL(sqlease_migrate(db, t, ptrs, N, &err), SQLEASE_OK);
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqlease_list(db, t, collect, s, &err), SQLEASE_OK);
    /* Pages of 100: 100, 100, 50. */
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 3);
    CU_ASSERT_EQUAL_FATAL(s->n, N);
    for (i = 0; i < N; i++) {
        char want[16];
        snprintf(want, sizeof want, "lease-%03d", i);
        CU_ASSERT_STRING_EQUAL(s->name[i], want);
    }
    /* Exactly 100: one full page, and one empty one after it. */
    memset(s, 0, sizeof *s);
    tu_drop(db, t);
    CU_ASSERT_EQUAL_FATAL(sqlease_migrate(db, t, ptrs, 100, &err), SQLEASE_OK);
    before = sqlease_db_statements(db);
    CU_ASSERT_EQUAL(sqlease_list(db, t, collect, s, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_db_statements(db) - before, 2);
    CU_ASSERT_EQUAL(s->n, 100);
    tu_drop(db, t);
    free(names);
    free(ptrs);
    free(s);
}

/* ---- watching the holder, waiting for it ----------------------------- */

#define MAX_EVENTS 32
typedef struct recorder {
    sqle_mutex m;
    int n;
    char kind[MAX_EVENTS];                     /* 'H' holder, 'S' started, 'T' stopped */
    char owner[MAX_EVENTS][SQLEASE_MAX_OWNER + 1];
    char data[MAX_EVENTS][32];                 /* "(null)" for NULL */
    int64_t value[MAX_EVENTS];                 /* token, or stop reason */
    int inside;                                /* callbacks running now */
    int overlap;                               /* two at once, ever */
    sqlease_supervisor *sup;                   /* for calls from callbacks */
    int fence_rc;                              /* sqlease_supervisor_fence in on_started */
    int64_t fence_token;
    int await_rc;                              /* sqlease_supervisor_await in on_holder */
} recorder;

static void rec_init(recorder *r)
{
    memset(r, 0, sizeof *r);
    sqle_mutex_init(&r->m);
    r->fence_rc = r->await_rc = -1;
}

static void rec_enter(recorder *r)
{
    sqle_mutex_lock(&r->m);
    if (++r->inside > 1)
        r->overlap = 1;
    sqle_mutex_unlock(&r->m);
    sqle_sleep_ms(2); /* widen the window an overlap would need */
}

static void rec_add(recorder *r, char kind, const char *owner, int64_t value, const char *data)
{
    sqle_mutex_lock(&r->m);
    if (r->n < MAX_EVENTS) {
        r->kind[r->n] = kind;
        snprintf(r->owner[r->n], sizeof r->owner[0], "%s", owner != NULL ? owner : "");
        snprintf(r->data[r->n], sizeof r->data[0], "%s", data != NULL ? data : "(null)");
        r->value[r->n] = value;
    }
    r->n++;
    r->inside--;
    sqle_mutex_unlock(&r->m);
}

static void on_holder(void *ud, const char *owner, int64_t token, const char *data)
{
    recorder *r = ud;
    sqlease_supervisor *sup;
    sqlease_error err;
    rec_enter(r);
    sqle_mutex_lock(&r->m);
    sup = r->sup;
    sqle_mutex_unlock(&r->m);
    if (sup != NULL) {
        int rc = sqlease_supervisor_await(sup, 0, &err);
        sqle_mutex_lock(&r->m);
        r->await_rc = rc;
        sqle_mutex_unlock(&r->m);
    }
    rec_add(r, 'H', owner, token, data);
}

static void on_started(void *ud, int64_t token)
{
    recorder *r = ud;
    sqlease_supervisor *sup;
    rec_enter(r);
    sqle_mutex_lock(&r->m);
    sup = r->sup;
    sqle_mutex_unlock(&r->m);
    if (sup != NULL) {
        sqlease_fence f;
        sqlease_error err;
        int rc;
        SQLEASE_FENCE_INIT(&f);
        rc = sqlease_supervisor_fence(sup, &f, &err);
        sqle_mutex_lock(&r->m);
        r->fence_rc = rc;
        r->fence_token = rc == SQLEASE_OK ? f.token : -1;
        sqle_mutex_unlock(&r->m);
    }
    rec_add(r, 'S', NULL, token, NULL);
}

static void on_stopped(void *ud, int reason)
{
    recorder *r = ud;
    rec_enter(r);
    rec_add(r, 'T', NULL, reason, NULL);
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

#define ASSERT_EVENT(r, i, k, own, val, dat)                                               \
    do {                                                                                   \
        CU_ASSERT_EQUAL((r)->kind[i], k);                                                  \
        CU_ASSERT_STRING_EQUAL((r)->owner[i], own);                                        \
        CU_ASSERT_EQUAL((r)->value[i], val);                                               \
        CU_ASSERT_STRING_EQUAL((r)->data[i], dat);                                         \
    } while (0)

/*
 * A follower supervisor (whose takes are made to fail, so that it stays
 * a follower while the row goes through every state) reports each change
 * once, in order, with the data; then it takes the lease (no report while
 * it holds), loses it to another owner (on_stopped, then that holder).
 */
static void test_on_holder(void)
{
    char t[64], sql[512];
    sqlease_db *fdb = NULL;
    tu_faulty *f;
    sqlease_options o;
    sqlease_supervisor *s = NULL;
    sqlease_lease *a, *c, *admin;
    sqlease_error err;
    recorder r;
    int released = 0;
    int64_t seed, rows = -1;

    snprintf(t, sizeof t, "%s", tu_table());
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    a = make(t, "job", "holder-a", "10.0.0.1:8080", 30000);
    c = make(t, "job", "holder-c", NULL, 30000);
    admin = make(t, "job", "admin", NULL, 30000);
    seed = status_token(a);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(a, NULL, &err), SQLEASE_OK);

    f = tu_faulty_open(&fdb);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    rec_init(&r);
    tu_options(&o, t, "job", "watcher-b", 3000, 500, 1500, 100);
    o.on_started = on_started;
    o.on_stopped = on_stopped;
    o.on_holder = on_holder;
    o.userdata = &r;
    o.data = "b-data";
    /* The first report comes from the first acquire, inside start. */
    CU_ASSERT_EQUAL_FATAL(sqlease_supervisor_start(&s, fdb, &o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(rec_count(&r), 1);
    ASSERT_EVENT(&r, 0, 'H', "holder-a", seed + 1, "10.0.0.1:8080");
    sqle_mutex_lock(&r.m);
    r.sup = s;
    sqle_mutex_unlock(&r.m);

    /* Its takes fail from now on: it stays a follower. */
    tu_fault_match(f, TAKE_SQL, TU_FAULT_CONNECT);
    CU_ASSERT_EQUAL(sqlease_lease_release(a, &released, &err), SQLEASE_OK);
    CU_ASSERT_FATAL(await_events(&r, 2, 3000));
    ASSERT_EVENT(&r, 1, 'H', "", seed + 1, "(null)");
    CU_ASSERT_EQUAL(sqlease_lease_acquire(c, NULL, &err), SQLEASE_OK);
    CU_ASSERT_FATAL(await_events(&r, 3, 3000));
    ASSERT_EVENT(&r, 2, 'H', "holder-c", seed + 2, "(null)");
    /* Polled every 100 ms: no report while nothing changes. */
    sqle_sleep_ms(500);
    CU_ASSERT_EQUAL(rec_count(&r), 3);
    CU_ASSERT_EQUAL(sqlease_lease_release_force(admin, &released, &err), SQLEASE_OK);
    CU_ASSERT_FATAL(await_events(&r, 4, 3000));
    ASSERT_EVENT(&r, 3, 'H', "", seed + 2, "(null)");
    /* Waiting from inside a callback would wait for itself: refused. */
    CU_ASSERT_EQUAL(r.await_rc, SQLEASE_ESTATE);

    /* Its takes work again: it holds, and reports nothing while it does. */
    tu_fault_match(f, NULL, TU_FAULT_NONE);
    CU_ASSERT_EQUAL(sqlease_supervisor_await(s, 5000, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(rec_count(&r), 5);
    CU_ASSERT_EQUAL(r.kind[4], 'S');
    CU_ASSERT_EQUAL(r.value[4], seed + 3);
    CU_ASSERT_EQUAL(r.fence_rc, SQLEASE_OK);
    CU_ASSERT_EQUAL(r.fence_token, seed + 3);
    {
        sqlease_lease_info st;
        CU_ASSERT_EQUAL(sqlease_lease_status(admin, &st, &err), SQLEASE_OK);
        CU_ASSERT_STRING_EQUAL(st.data, "b-data");
    }
    sqle_sleep_ms(400);
    CU_ASSERT_EQUAL(rec_count(&r), 5);

    /* Another owner takes the row over in one statement: the renew finds
     * the hold gone (on_stopped), the read after it shows the new one. */
    snprintf(sql, sizeof sql,
             "UPDATE %s SET owner = 'holder-d', token = token + 1, data = 'd-data', "
             "expires_at_ms = expires_at_ms + 60000 WHERE name = 'job'", t);
    CU_ASSERT_EQUAL(tu_sql(db, sql, &rows), SQLEASE_OK);
    CU_ASSERT_EQUAL(rows, 1);
    CU_ASSERT_FATAL(await_events(&r, 7, 3000));
    CU_ASSERT_EQUAL(r.kind[5], 'T');
    CU_ASSERT_EQUAL(r.value[5], SQLEASE_STOP_LOST);
    ASSERT_EVENT(&r, 6, 'H', "holder-d", seed + 4, "d-data");
    sqle_sleep_ms(300);
    CU_ASSERT_EQUAL(rec_count(&r), 7);
    CU_ASSERT_EQUAL(r.overlap, 0);
    CU_ASSERT_EQUAL(sqlease_supervisor_stop(s, &err), SQLEASE_OK);
    /* Stopping reports nothing more. */
    CU_ASSERT_EQUAL(rec_count(&r), 7);
    sqlease_supervisor_free(s);
    sqlease_db_close(fdb);
    tu_faulty_free(f);
    sqlease_lease_free(a);
    sqlease_lease_free(c);
    sqlease_lease_free(admin);
    tu_drop(db, t);
}

/* Two threads wait for one supervisor at once. */
typedef struct waiter {
    sqlease_supervisor *s;
    int64_t timeout;
    int rc;
    int64_t took;
} waiter;

static void waiter_main(void *arg)
{
    waiter *w = arg;
    sqlease_error err;
    int64_t t0 = sqle_mono_ms();
    w->rc = sqlease_supervisor_await(w->s, w->timeout, &err);
    w->took = sqle_mono_ms() - t0;
}

static void test_await(void)
{
    char t[64];
    sqlease_options o;
    sqlease_supervisor *s = NULL;
    sqlease_lease *a;
    sqlease_error err;
    recorder r;
    waiter w1, w2;
    sqle_thread th1, th2;
    int64_t t0, took;
    int released = 0;

    snprintf(t, sizeof t, "%s", tu_table());
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    a = make(t, "job", "holder-a", NULL, 30000);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(a, NULL, &err), SQLEASE_OK);
    rec_init(&r);
    tu_options(&o, t, "job", "waiter-b", 3000, 500, 1500, 100);
    o.on_started = on_started;
    o.on_stopped = on_stopped;
    o.userdata = &r;
    CU_ASSERT_EQUAL_FATAL(sqlease_supervisor_start(&s, db, &o, &err), SQLEASE_OK);

    /* Held by another: the timeout, then NOT_HELD. */
    t0 = sqle_mono_ms();
    CU_ASSERT_EQUAL(sqlease_supervisor_await(s, 300, &err), SQLEASE_NOT_HELD);
    took = sqle_mono_ms() - t0;
    CU_ASSERT(took >= 300 && took < 3000);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "not held after waiting 300 ms"));
    CU_ASSERT_EQUAL(sqlease_supervisor_await(s, 0, &err), SQLEASE_NOT_HELD);
    CU_ASSERT_EQUAL(sqlease_supervisor_await(s, -1, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqlease_supervisor_await(NULL, 10, &err), SQLEASE_EINVAL);
    {
        sqlease_fence fc;
        SQLEASE_FENCE_INIT(&fc);
        CU_ASSERT_EQUAL(sqlease_supervisor_fence(s, &fc, &err), SQLEASE_NOT_HELD);
    }

    /* Two waiters; the holder lets go; both see the work up, after
     * on_started. */
    memset(&w1, 0, sizeof w1);
    w1.s = s;
    w1.timeout = 10000;
    w2 = w1;
    CU_ASSERT_EQUAL_FATAL(sqle_thread_start(&th1, waiter_main, &w1), 0);
    CU_ASSERT_EQUAL_FATAL(sqle_thread_start(&th2, waiter_main, &w2), 0);
    sqle_sleep_ms(100);
    CU_ASSERT_EQUAL(sqlease_lease_release(a, &released, &err), SQLEASE_OK);
    sqle_thread_join(&th1);
    sqle_thread_join(&th2);
    CU_ASSERT_EQUAL(w1.rc, SQLEASE_OK);
    CU_ASSERT_EQUAL(w2.rc, SQLEASE_OK);
    CU_ASSERT(w1.took < 5000 && w2.took < 5000);
    CU_ASSERT_EQUAL(rec_count(&r), 1);
    CU_ASSERT_EQUAL(r.kind[0], 'S');
    /* Holding: at once. */
    t0 = sqle_mono_ms();
    CU_ASSERT_EQUAL(sqlease_supervisor_await(s, 5000, &err), SQLEASE_OK);
    CU_ASSERT(sqle_mono_ms() - t0 < 1000);
    {
        sqlease_fence fc;
        SQLEASE_FENCE_INIT(&fc);
        CU_ASSERT_EQUAL(sqlease_supervisor_fence(s, &fc, &err), SQLEASE_OK);
        CU_ASSERT_EQUAL(fc.token, r.value[0]);
        CU_ASSERT_STRING_EQUAL(fc.owner, "waiter-b");
    }

    /* A waiter is woken by a stop, and a stopped supervisor answers at
     * once. */
    CU_ASSERT_EQUAL(sqlease_supervisor_stop(s, &err), SQLEASE_OK);
    t0 = sqle_mono_ms();
    CU_ASSERT_EQUAL(sqlease_supervisor_await(s, 5000, &err), SQLEASE_ESTATE);
    CU_ASSERT(sqle_mono_ms() - t0 < 1000);
    {
        sqlease_fence fc;
        SQLEASE_FENCE_INIT(&fc);
        CU_ASSERT_EQUAL(sqlease_supervisor_fence(s, &fc, &err), SQLEASE_NOT_HELD);
    }
    sqlease_supervisor_free(s);
    sqlease_lease_free(a);
    tu_drop(db, t);
}

typedef struct releaser {
    sqlease_lease *l;
    int64_t after_ms;
} releaser;

static void releaser_main(void *arg)
{
    releaser *rl = arg;
    sqlease_error err;
    sqle_sleep_ms(rl->after_ms);
    sqlease_lease_release(rl->l, NULL, &err);
}

static void test_lease_acquire_wait(void)
{
    char t[64];
    sqlease_options o;
    sqlease_lease *a, *b = NULL;
    sqlease_lease_info st;
    sqlease_error err;
    sqle_thread th;
    releaser rl;
    int64_t t0, took, seed;

    snprintf(t, sizeof t, "%s", tu_table());
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "job"), SQLEASE_OK);
    a = make(t, "job", "holder-a", NULL, 30000);
    tu_options(&o, t, "job", "waiter-b", 30000, 7500, 15000, 100);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&b, db, &o, &err), SQLEASE_OK);
    seed = status_token(a);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(a, NULL, &err), SQLEASE_OK);

    t0 = sqle_mono_ms();
    CU_ASSERT_EQUAL(sqlease_lease_acquire_wait(b, 300, &st, &err), SQLEASE_NOT_HELD);
    took = sqle_mono_ms() - t0;
    CU_ASSERT(took >= 300 && took < 3000);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "not held after waiting 300 ms"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "held by holder-a"));
    CU_ASSERT_STRING_EQUAL(st.owner, "holder-a");
    CU_ASSERT_EQUAL(sqlease_lease_acquire_wait(b, -5, &st, &err), SQLEASE_EINVAL);

    rl.l = a;
    rl.after_ms = 200;
    CU_ASSERT_EQUAL_FATAL(sqle_thread_start(&th, releaser_main, &rl), 0);
    t0 = sqle_mono_ms();
    CU_ASSERT_EQUAL(sqlease_lease_acquire_wait(b, 10000, &st, &err), SQLEASE_OK);
    took = sqle_mono_ms() - t0;
    sqle_thread_join(&th);
    CU_ASSERT(took >= 150 && took < 5000);
    CU_ASSERT_EQUAL(st.token, seed + 2);
    /* A missing row is not waited for. */
    {
        sqlease_lease *g = make(t, "ghost", "waiter-g", NULL, 30000);
        t0 = sqle_mono_ms();
        CU_ASSERT_EQUAL(sqlease_lease_acquire_wait(g, 5000, NULL, &err), SQLEASE_ENOROW);
        CU_ASSERT(sqle_mono_ms() - t0 < 2000);
        sqlease_lease_free(g);
    }
    sqlease_lease_free(a);
    sqlease_lease_free(b);
    tu_drop(db, t);
}

static void add(void)
{
    CU_pSuite s = CU_add_suite("holder", NULL, NULL);
    CU_add_test(s, "every status and stop reason has a name", test_names);
    CU_add_test(s, "data: written by the take, kept by renew, cleared by release",
                test_data_take_renew_release);
    CU_add_test(s, "data is checked like a name", test_data_checked);
    CU_add_test(s, "migrate adds the data column to an older table", test_migrate_adds_data);
    CU_add_test(s, "a follower reads first: 1 statement a miss, 2 a take",
                test_follower_reads_first);
    CU_add_test(s, "a take is bound to the token its read saw",
                test_take_bound_to_the_token_read);
    CU_add_test(s, "fence: the caller's UPDATE lands while held, not after",
                test_fence_in_own_update);
    CU_add_test(s, "fence: expiry ends it", test_fence_after_expiry);
    CU_add_test(s, "fence: exact owners, quoted and non-ASCII values",
                test_fence_exact_and_quoted);
    CU_add_test(s, "fence: the struct grows without breaking callers", test_fence_struct_grows);
    CU_add_test(s, "fence literals: each dialect's quoting", test_fence_literal_quoting);
    CU_add_test(s, "fence literals: the worst case fits the documented size",
                test_fence_literal_max);
    CU_add_test(s, "list: every lease, in order, held and free", test_list);
    CU_add_test(s, "list: more rows than a page", test_list_pages);
    CU_add_test(s, "on_holder: each change once, in order, never while holding",
                test_on_holder);
    CU_add_test(s, "supervisor_await: timeout, wake-up, stop", test_await);
    CU_add_test(s, "lease_acquire_wait: timeout and success", test_lease_acquire_wait);
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
