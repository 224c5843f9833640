/*
 * test_abi.c -- the structs that grow (sqlease.h, "Structs that grow").
 *
 * A program built against an older, smaller copy of a struct (simulated
 * here by passing a size smaller than this header's sizeof) gets the
 * defaults for the fields it does not have, and the library writes no
 * byte past its size; a newer, larger one is read and written only as far
 * as this library knows; a struct never initialised is refused.
 *
 * Every smaller struct is tried twice: at the start of a full-size buffer
 * whose bytes past the smaller size hold a pattern that the library must
 * neither take for a value nor overwrite (checked in every build), and in
 * a malloc'd block of exactly the smaller size, so that reading or
 * writing one byte past it is an error under AddressSanitizer.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "internal.h"
#include "platform.h"
#include "testutil.h"

#define PATTERN 0x5A
#define NEWER 32 /* bytes a newer header's struct has past ours */

static sqlease_db *db;

/* A block of `size` bytes, every one PATTERN. */
static void *pattern_block(size_t size)
{
    void *p = malloc(size);

    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    memset(p, PATTERN, size);
    return p;
}

/* A block of exactly `size` bytes for a struct that is larger in this
 * header.  The size goes through a volatile so that the compiler does not
 * warn that the struct does not fit: not fitting is the point. */
static void *exact_block(size_t size)
{
    volatile size_t n = size;
    void *p = malloc(n);

    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    return p;
}

/* 1 if bytes from..to-1 of p are still PATTERN. */
static int pattern_kept(const void *p, size_t from, size_t to)
{
    const unsigned char *b = p;
    size_t i;

    for (i = from; i < to; i++)
        if (b[i] != PATTERN)
            return 0;
    return 1;
}

/* A table with one lease, "abi", for each test. */
static const char *fresh_table(void)
{
    const char *t = tu_table();

    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, t, "abi"), SQLEASE_OK);
    return t;
}

/* Options the caller's way, in a struct of `size` bytes at o. */
static void fill_options(sqlease_options *o, size_t size, const char *table, const char *owner)
{
    sqlease_options_init_(o, size);
    o->table = table;
    o->name = "abi";
    o->owner = owner;
    o->ttl_ms = 4000;
}

static int64_t g_started;

static void on_started(void *ud, int64_t token)
{
    (void)ud;
    g_started = token;
}

static void on_stopped(void *ud, int reason)
{
    (void)ud;
    (void)reason;
}

/* ---- options, read ----------------------------------------------- */

/* A program whose options end before min_hold_ms (and so before data and
 * on_holder): past its size the block holds the pattern, which as
 * min_hold_ms would be over 30 days (EINVAL), as data or on_holder a wild
 * pointer.  The library must take the defaults instead: no minimum hold,
 * nothing published, no holder callback. */
static void test_options_older(void)
{
    const size_t small = offsetof(sqlease_options, min_hold_ms);
    const char *t = fresh_table();
    sqlease_options *o = pattern_block(sizeof *o), eff, *exact;
    sqlease_lease *l = NULL;
    sqlease_supervisor *sup = NULL;
    sqlease_lease_info info;
    sqlease_error err;
    int released = 0;

    fill_options(o, small, t, "abi-older");
    CU_ASSERT_EQUAL(o->size, small);
    CU_ASSERT(pattern_kept(o, small, sizeof *o)); /* init wrote nothing past it */
    CU_ASSERT_EQUAL(sqlease_options_check(o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_options_effective(db, o, &eff, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(eff.size, sizeof eff);
    CU_ASSERT_EQUAL(eff.ttl_ms, 4000);
    CU_ASSERT_EQUAL(eff.heartbeat_ms, 4000 / 3);
    CU_ASSERT_EQUAL(eff.min_hold_ms, 0);
    CU_ASSERT_PTR_NULL(eff.data);
    CU_ASSERT_PTR_NULL(eff.on_holder);
    CU_ASSERT_STRING_EQUAL(eff.fire_table, SQLEASE_DEFAULT_FIRE_TABLE);
    CU_ASSERT_PTR_NULL(eff.host);

    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&l, db, o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_acquire(l, &info, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(info.owner, "abi-older");
    CU_ASSERT_STRING_EQUAL(info.data, "");
    /* No minimum hold: the release frees the row at once. */
    CU_ASSERT_EQUAL(sqlease_lease_release(l, &released, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(released, 1);
    CU_ASSERT_EQUAL(sqlease_lease_status(l, &info, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info.held, 0);
    sqlease_lease_free(l);
    CU_ASSERT(pattern_kept(o, small, sizeof *o));
    free(o);

    /* Exactly the older size: every read past it is an overflow. */
    exact = exact_block(small);
    fill_options(exact, small, t, "abi-exact");
    exact->on_started = on_started;
    exact->on_stopped = on_stopped;
    CU_ASSERT_EQUAL(sqlease_options_check(exact, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_options_effective(db, exact, &eff, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&l, db, exact, &err), SQLEASE_OK);
    sqlease_lease_free(l);
    g_started = 0;
    CU_ASSERT_EQUAL_FATAL(sqlease_supervisor_start(&sup, db, exact, &err), SQLEASE_OK);
    CU_ASSERT(g_started > 0); /* the callbacks within its size are used */
    sqlease_supervisor_free(sup);
    free(exact);
    tu_drop(db, t);
}

/* A newer program's options are longer than ours: init zeroes all of
 * them, and the library reads only what it knows. */
static void test_options_newer(void)
{
    const size_t big = sizeof(sqlease_options) + NEWER;
    const char *t = fresh_table();
    sqlease_options *o = pattern_block(big);
    sqlease_lease *l = NULL;
    sqlease_error err;

    fill_options(o, big, t, "abi-newer");
    CU_ASSERT_EQUAL(o->size, big);
    CU_ASSERT(!pattern_kept(o, sizeof *o, big)); /* the caller's, all of it, zeroed */
    CU_ASSERT_EQUAL(sqlease_options_check(o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&l, db, o, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(sqlease_lease_owner(l), "abi-newer");
    sqlease_lease_free(l);
    free(o);
    tu_drop(db, t);
}

/* Options zeroed by hand, or never initialised, say so. */
static void test_options_not_initialised(void)
{
    sqlease_options o;
    sqlease_db_options dbo;
    sqlease_lease *l = NULL;
    sqlease_supervisor *sup = NULL;
    sqlease_db *d = NULL;
    sqlease_options eff;
    sqlease_error err;

    memset(&o, 0, sizeof o);
    o.name = "abi";
    CU_ASSERT_EQUAL(sqlease_options_check(&o, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "sqlease_options_init"));
    CU_ASSERT_EQUAL(sqlease_lease_new(&l, db, &o, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NULL(l);
    CU_ASSERT_EQUAL(sqlease_supervisor_start(&sup, db, &o, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NULL(sup);
    CU_ASSERT_EQUAL(sqlease_options_effective(db, &o, &eff, &err), SQLEASE_EINVAL);
    o.size = (size_t)-1;
    CU_ASSERT_EQUAL(sqlease_options_check(&o, &err), SQLEASE_EINVAL);

    memset(&dbo, 0, sizeof dbo);
    dbo.conn = tu_dsn();
    CU_ASSERT_EQUAL(sqlease_db_open(&d, &dbo, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "sqlease_db_options_init"));
    CU_ASSERT_PTR_NULL(d);

    /* NULL options still mean every default. */
    CU_ASSERT_EQUAL(sqlease_options_check(NULL, &err), SQLEASE_OK);
}

/* ---- db options, read -------------------------------------------- */

/* A program whose db options end before the timeouts: the library takes
 * their defaults (5000 ms each, the stderr sink at info level), not the
 * pattern; and one whose options end before must_exist gets the driver's
 * own behaviour (an SQLite file is created), not a refusal. */
static void test_db_options_older(void)
{
    const size_t small = offsetof(sqlease_db_options, login_timeout_ms);
    const size_t no_must_exist = offsetof(sqlease_db_options, must_exist);
    sqlease_db_options *o = pattern_block(sizeof *o), *exact;
    sqlease_db *d = NULL;
    sqlease_error err;
    char path[600], conn[700];

    sqlease_db_options_init_(o, small);
    CU_ASSERT_EQUAL(o->size, small);
    CU_ASSERT(pattern_kept(o, small, sizeof *o));
    o->conn = tu_dsn();
    CU_ASSERT_EQUAL_FATAL(sqlease_db_open(&d, o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(d->query_timeout_ms, 5000);
    CU_ASSERT_EQUAL(d->login_timeout_ms, 5000);
    CU_ASSERT_EQUAL(d->log_level, SQLEASE_LOG_INFO);
    CU_ASSERT_PTR_NULL(d->log);
    sqlease_db_close(d);
    d = NULL;
    CU_ASSERT(pattern_kept(o, small, sizeof *o));

    snprintf(path, sizeof path, "%s/abi-new.db", tu_dir());
    snprintf(conn, sizeof conn, "Driver=SQLite3;Database=%s", path);
    memset(o, PATTERN, sizeof *o);
    sqlease_db_options_init_(o, no_must_exist);
    o->conn = conn;
    CU_ASSERT_EQUAL(sqlease_db_open(&d, o, &err), SQLEASE_OK);
    sqlease_db_close(d);
    d = NULL;
    CU_ASSERT(sqle_path_exists(path));
    free(o);

    exact = exact_block(small);
    sqlease_db_options_init_(exact, small);
    exact->conn = tu_dsn();
    CU_ASSERT_EQUAL(sqlease_db_open(&d, exact, &err), SQLEASE_OK);
    sqlease_db_close(d);
    free(exact);
}

/* A newer program's db options: ours are read, the rest zeroed by init. */
static void test_db_options_newer(void)
{
    const size_t big = sizeof(sqlease_db_options) + NEWER;
    sqlease_db_options *o = pattern_block(big);
    sqlease_db *d = NULL;
    sqlease_error err;

    sqlease_db_options_init_(o, big);
    CU_ASSERT_EQUAL(o->size, big);
    CU_ASSERT_EQUAL(o->query_timeout_ms, 5000);
    o->conn = tu_dsn();
    o->query_timeout_ms = 3000;
    CU_ASSERT_EQUAL_FATAL(sqlease_db_open(&d, o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(d->query_timeout_ms, 3000);
    sqlease_db_close(d);
    free(o);
}

/* ---- lease info, written ----------------------------------------- */

/* The three calls that fill an info, into an older program's info that
 * ends before `data`: what fits is right, `size` says how much that was,
 * and the bytes past it are untouched. */
static void test_info_older(void)
{
    const size_t small = offsetof(sqlease_lease_info, data);
    const char *t = fresh_table();
    sqlease_options o;
    sqlease_lease_info *info = pattern_block(sizeof *info), *exact;
    sqlease_lease *l = NULL;
    sqlease_error err;

    fill_options(&o, sizeof o, t, "abi-info");
    o.data = "published";
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&l, db, &o, &err), SQLEASE_OK);

    CU_ASSERT_EQUAL(sqlease_lease_acquire_(l, info, small, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info->size, small);
    CU_ASSERT_STRING_EQUAL(info->owner, "abi-info");
    CU_ASSERT(info->token > 0);
    CU_ASSERT_EQUAL(info->held, 1);
    CU_ASSERT_EQUAL(info->mine, 1);
    CU_ASSERT(pattern_kept(info, small, sizeof *info));

    memset(info, PATTERN, sizeof *info);
    CU_ASSERT_EQUAL(sqlease_lease_status_(l, info, small, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info->size, small);
    CU_ASSERT_STRING_EQUAL(info->owner, "abi-info");
    CU_ASSERT(info->db_now_ms > 0);
    CU_ASSERT_EQUAL(info->mine, 1);
    CU_ASSERT(pattern_kept(info, small, sizeof *info));

    memset(info, PATTERN, sizeof *info);
    CU_ASSERT_EQUAL(sqlease_lease_acquire_wait_(l, 0, info, small, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info->size, small);
    CU_ASSERT_STRING_EQUAL(info->owner, "abi-info");
    CU_ASSERT(pattern_kept(info, small, sizeof *info));
    free(info);

    exact = exact_block(small);
    CU_ASSERT_EQUAL(sqlease_lease_acquire_(l, exact, small, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(exact->mine, 1);
    CU_ASSERT_EQUAL(sqlease_lease_status_(l, exact, small, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_acquire_wait_(l, 0, exact, small, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(exact->size, small);
    free(exact);

    /* Too small to hold even its size: refused, nothing written. */
    {
        unsigned char tiny[sizeof(size_t)];

        memset(tiny, PATTERN, sizeof tiny);
        CU_ASSERT_EQUAL(sqlease_lease_status_(l, (sqlease_lease_info *)(void *)tiny,
                                              sizeof tiny - 1, &err), SQLEASE_EINVAL);
        CU_ASSERT(pattern_kept(tiny, 0, sizeof tiny));
    }
    sqlease_lease_free(l);
    tu_drop(db, t);
}

/* A newer program's info: the library fills what it knows and says so in
 * `size`; the newer fields are left as they were. */
static void test_info_newer(void)
{
    const size_t big = sizeof(sqlease_lease_info) + NEWER;
    const char *t = fresh_table();
    sqlease_options o;
    sqlease_lease_info *info = pattern_block(big);
    sqlease_lease *l = NULL;
    sqlease_error err;

    fill_options(&o, sizeof o, t, "abi-info-newer");
    o.data = "d";
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&l, db, &o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_lease_acquire_(l, info, big, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info->size, sizeof(sqlease_lease_info));
    CU_ASSERT_STRING_EQUAL(info->data, "d");
    CU_ASSERT(pattern_kept(info, sizeof(sqlease_lease_info), big));
    free(info);
    sqlease_lease_free(l);
    tu_drop(db, t);
}

/* The list callback's info is the library's own, and says its size. */
static size_t g_list_size;

static int list_row(void *ud, const char *name, const sqlease_lease_info *info)
{
    (void)ud;
    (void)name;
    g_list_size = info->size;
    return 0;
}

static void test_list_info_size(void)
{
    const char *t = fresh_table();
    sqlease_error err;

    g_list_size = 0;
    CU_ASSERT_EQUAL(sqlease_list(db, t, list_row, NULL, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(g_list_size, sizeof(sqlease_lease_info));
    tu_drop(db, t);
}

/* ---- the holder history's fields, appended ------------------------ */

/* The holder history's options come after every field 0.2.0 and the
 * fire ledger have, and its info starts with its size: a program built
 * before them passes options that end at late_limit_ms, whose tail (the
 * pattern here: as history, neither 0 nor SQLEASE_HISTORY_OFF, EINVAL)
 * must read as the defaults: history on, in the default table, kept 30
 * days. */
static void test_options_before_history(void)
{
    const size_t small = offsetof(sqlease_options, history_table);
    const char *t = fresh_table();
    sqlease_options *o = pattern_block(sizeof *o), eff;
    sqlease_error err;

    CU_ASSERT(offsetof(sqlease_options, history_table) >
              offsetof(sqlease_options, late_limit_ms));
    CU_ASSERT(offsetof(sqlease_options, history) > offsetof(sqlease_options, history_table));
    CU_ASSERT(offsetof(sqlease_options, history_keep_ms) > offsetof(sqlease_options, history));
    CU_ASSERT_EQUAL(offsetof(sqlease_hold_info, size), 0);
    fill_options(o, small, t, "abi-hist");
    CU_ASSERT(pattern_kept(o, small, sizeof *o));
    CU_ASSERT_EQUAL(sqlease_options_check(o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_options_effective(db, o, &eff, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(eff.history_table, SQLEASE_DEFAULT_HISTORY_TABLE);
    CU_ASSERT_EQUAL(eff.history, 0);
    CU_ASSERT_EQUAL(eff.history_keep_ms, 0);
    /* The full struct with a value the library does not know is refused. */
    free(o);
    o = pattern_block(sizeof *o);
    fill_options(o, sizeof *o, t, "abi-hist");
    o->history = 7;
    CU_ASSERT_EQUAL(sqlease_options_check(o, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "history"));
    free(o);
}

/* ---- fire info, written ------------------------------------------- */

static void fire_started(void *ud, int64_t token)
{
    (void)ud;
    (void)token;
}

/* A claim into an older program's fire info that ends before `note`:
 * what fits is right, `size` says so, nothing past it is written; and
 * into a newer one's, only what this library knows. */
static void test_fire_info_older(void)
{
    const size_t small = offsetof(sqlease_fire_info, note);
    const char *t = fresh_table();
    char fire[64];
    sqlease_options o;
    sqlease_supervisor *sup = NULL;
    sqlease_fire_info *info = pattern_block(sizeof *info), *exact, *newer;
    sqlease_error err;
    int64_t now = 0;

    snprintf(fire, sizeof fire, "%s_fire", t);
    CU_ASSERT_EQUAL_FATAL(sqlease_fire_migrate(db, fire, &err), SQLEASE_OK);
    tu_options(&o, t, "abi", "abi-fire", 4000, 1000, 2500, 500);
    o.fire_table = fire;
    o.host = "abi-host";
    o.on_started = fire_started;
    o.on_stopped = on_stopped;
    CU_ASSERT_EQUAL_FATAL(sqlease_supervisor_start(&sup, db, &o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlease_db_now_ms(db, &now, &err), SQLEASE_OK);

    CU_ASSERT_EQUAL(sqlease_fire_claim_(sup, "j", now - 10, info, small, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(info->size, small);
    CU_ASSERT_STRING_EQUAL(info->job, "j");
    CU_ASSERT_STRING_EQUAL(info->host, "abi-host");
    CU_ASSERT_EQUAL(info->attempt, 1);
    CU_ASSERT(pattern_kept(info, small, sizeof *info));
    memset(info, PATTERN, sizeof *info);
    CU_ASSERT_EQUAL(sqlease_fire_claim_(sup, "j", now - 10, info, small, &err), SQLEASE_CLAIMED);
    CU_ASSERT_EQUAL(info->size, small);
    CU_ASSERT_STRING_EQUAL(info->owner, "abi-fire");
    CU_ASSERT(pattern_kept(info, small, sizeof *info));
    free(info);

    exact = exact_block(small);
    CU_ASSERT_EQUAL(sqlease_fire_claim_(sup, "k", now - 10, exact, small, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(exact->size, small);
    free(exact);

    newer = pattern_block(sizeof(sqlease_fire_info) + NEWER);
    CU_ASSERT_EQUAL(sqlease_fire_claim_(sup, "k", now - 10, newer,
                                        sizeof(sqlease_fire_info) + NEWER, &err),
                    SQLEASE_CLAIMED);
    CU_ASSERT_EQUAL(newer->size, sizeof(sqlease_fire_info));
    CU_ASSERT(pattern_kept(newer, sizeof(sqlease_fire_info), sizeof(sqlease_fire_info) + NEWER));
    free(newer);

    {
        unsigned char tiny[sizeof(size_t)];
        memset(tiny, PATTERN, sizeof tiny);
        CU_ASSERT_EQUAL(sqlease_fire_claim_(sup, "j", now - 10, (sqlease_fire_info *)(void *)tiny,
                                            sizeof tiny - 1, &err), SQLEASE_EINVAL);
        CU_ASSERT(pattern_kept(tiny, 0, sizeof tiny));
    }
    sqlease_supervisor_free(sup);
    tu_drop(db, fire);
    tu_drop(db, t);
}

/* ---- supervisor state and effective options, written -------------- */

/* An older program's state ends before the owner and name; the numbers
 * that fit are right and nothing past them is written. */
static void test_state_older(void)
{
    const size_t small = offsetof(sqlease_state, owner);
    const char *t = fresh_table();
    sqlease_options o;
    sqlease_state *st = pattern_block(sizeof *st), *exact;
    sqlease_supervisor *sup = NULL;
    sqlease_error err;

    tu_options(&o, t, "abi", "abi-state", 4000, 1000, 2500, 500);
    CU_ASSERT_EQUAL_FATAL(sqlease_supervisor_start(&sup, db, &o, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_supervisor_state_(sup, st, small), SQLEASE_OK);
    CU_ASSERT_EQUAL(st->size, small);
    CU_ASSERT_EQUAL(st->holding, 1);
    CU_ASSERT(st->token > 0);
    CU_ASSERT(st->deadline_in_ms > 0 && st->deadline_in_ms <= 2500);
    CU_ASSERT_EQUAL(st->takes, 1);
    CU_ASSERT(pattern_kept(st, small, sizeof *st));
    free(st);

    exact = exact_block(small);
    CU_ASSERT_EQUAL(sqlease_supervisor_state_(sup, exact, small), SQLEASE_OK);
    CU_ASSERT_EQUAL(exact->holding, 1);
    free(exact);

    st = pattern_block(sizeof(sqlease_state) + NEWER);
    CU_ASSERT_EQUAL(sqlease_supervisor_state_(sup, st, sizeof(sqlease_state) + NEWER),
                    SQLEASE_OK);
    CU_ASSERT_EQUAL(st->size, sizeof(sqlease_state));
    CU_ASSERT_STRING_EQUAL(st->owner, "abi-state");
    CU_ASSERT(pattern_kept(st, sizeof(sqlease_state), sizeof(sqlease_state) + NEWER));
    free(st);

    CU_ASSERT_EQUAL(sqlease_supervisor_state_(sup, NULL, small), SQLEASE_EINVAL);
    sqlease_supervisor_free(sup);
    tu_drop(db, t);
}

/* sqlease_options_effective writes its `out` only as far as it reaches. */
static void test_effective_out_older(void)
{
    const size_t small = offsetof(sqlease_options, min_hold_ms);
    sqlease_options in, *out = pattern_block(sizeof(sqlease_options)), *exact;
    sqlease_error err;

    sqlease_options_init(&in);
    in.ttl_ms = 9000;
    in.min_hold_ms = 1000;
    CU_ASSERT_EQUAL(sqlease_options_effective_(db, &in, out, small, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(out->size, small);
    CU_ASSERT_EQUAL(out->ttl_ms, 9000);
    CU_ASSERT_EQUAL(out->renew_deadline_ms, 6000);
    CU_ASSERT(pattern_kept(out, small, sizeof *out));
    free(out);

    exact = exact_block(small);
    CU_ASSERT_EQUAL(sqlease_options_effective_(db, &in, exact, small, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(exact->retry_ms, 900);
    free(exact);
}

static void add(void)
{
    CU_pSuite s = CU_add_suite("abi", NULL, NULL);

    CU_add_test(s, "older options: defaults past their size", test_options_older);
    CU_add_test(s, "newer options: read as far as known", test_options_newer);
    CU_add_test(s, "options never initialised are refused", test_options_not_initialised);
    CU_add_test(s, "older db options: defaults past their size", test_db_options_older);
    CU_add_test(s, "newer db options: read as far as known", test_db_options_newer);
    CU_add_test(s, "older lease info: nothing written past its size", test_info_older);
    CU_add_test(s, "newer lease info: filled as far as known", test_info_newer);
    CU_add_test(s, "the list callback's info says its size", test_list_info_size);
    CU_add_test(s, "fire info: written only as far as its size", test_fire_info_older);
    CU_add_test(s, "the holder history's options: defaults past an older size",
                test_options_before_history);
    CU_add_test(s, "supervisor state: written only as far as its size", test_state_older);
    CU_add_test(s, "effective options: written only as far as their size",
                test_effective_out_older);
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
