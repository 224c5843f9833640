/*
 * fuzz_table.c -- libFuzzer target for the lease table's identifier
 * (--table, sqlease_options.table, SqleaseTable): the one piece of user
 * text pasted into SQL rather than bound.
 *
 * Properties, beyond not crashing:
 *  - sqle_check_table and sqle_valid_table agree, and a refusal is
 *    SQLEASE_EINVAL with a one-line message;
 *  - an accepted name is at most SQLEASE_MAX_TABLE bytes and has the
 *    documented shape (identifier or schema.identifier of ASCII letters,
 *    digits and '_', not starting with a digit), checked here apart from
 *    the library's code;
 *  - a name refused for its shape really lacks it, and one refused
 *    otherwise names a reserved word, or a name SQLite keeps for itself
 *    (sqlite_...), that is part of it;
 *  - every statement of the sqlite row of the dialect table, with an
 *    accepted name pasted in, runs through SQLite's own parser: the
 *    create runs, every other statement prepares (a real parser, not a
 *    model of one).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sqlite3.h>

#include "dialect.h"
#include "fuzzutil.h"
#include "internal.h"

static const sqle_dialect *sqlite_row;

static int ident_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int ident_char(unsigned char c)
{
    return ident_start(c) || (c >= '0' && c <= '9');
}

/* The documented shape; *dot gets the '.' or NULL. */
static int shape_ok(const char *t, const char **dot)
{
    size_t n = strlen(t), i, parts = 1;
    int start = 1;

    *dot = NULL;
    if (n == 0 || n > SQLEASE_MAX_TABLE)
        return 0;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c == '.') {
            if (start || ++parts > 2)
                return 0;
            *dot = t + i;
            start = 1;
        } else if (start) {
            if (!ident_start(c))
                return 0;
            start = 0;
        } else if (!ident_char(c)) {
            return 0;
        }
    }
    return !start;
}

/* Prepare (or, with run, execute) one statement of the row on db. */
static void check_stmt(sqlite3 *db, const char *what, const char *tmpl, const char *table,
                       int run)
{
    char *sql;
    sqlite3_stmt *st = NULL;
    int rc;

    if (tmpl == NULL || tmpl[0] == '\0')
        return;
    sql = sqle_sql_for_table(tmpl, table);
    FZ_CHECK(sql != NULL, "sqle_sql_for_table returned NULL");
    FZ_CHECK(strstr(sql, "{table}") == NULL, "'{table}' left in %s: %s", what, sql);
    rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    FZ_CHECK(rc == SQLITE_OK, "table '%s' accepted, but SQLite cannot prepare the %s: %s\n%s",
             table, what, sqlite3_errmsg(db), sql);
    if (run) {
        rc = sqlite3_step(st);
        FZ_CHECK(rc == SQLITE_DONE || rc == SQLITE_ROW,
                 "table '%s' accepted, but SQLite cannot run the %s: %s", table, what,
                 sqlite3_errmsg(db));
    }
    sqlite3_finalize(st);
    free(sql);
}

/* A batched statement for one lease: head, one item, tail. */
static void check_each(sqlite3 *db, const char *what, const sqle_each_stmt *e, const char *t)
{
    char *sql;
    size_t n;

    if (e->head.sql == NULL)
        return;
    n = strlen(e->head.sql) + strlen(e->item.sql) + strlen(e->tail.sql) + 1;
    sql = malloc(n);
    if (sql == NULL)
        abort();
    snprintf(sql, n, "%s%s%s", e->head.sql, e->item.sql, e->tail.sql);
    check_stmt(db, what, sql, t, 0);
    free(sql);
}

static void check_in_sqlite(const char *table, const char *dot)
{
    const sqle_dialect *d = sqlite_row;
    sqlite3 *db = NULL;
    char *fence;

    FZ_CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK, "cannot open SQLite in memory");
    if (dot != NULL) {
        /* A schema: attach one by that name (main and temp exist). */
        char sql[200];
        snprintf(sql, sizeof sql, "ATTACH DATABASE ':memory:' AS %.*s", (int)(dot - table),
                 table);
        if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
            FZ_CHECK(strstr(sqlite3_errmsg(db), "already in use") != NULL,
                     "schema of accepted table '%s' cannot be attached: %s", table,
                     sqlite3_errmsg(db));
    }
    check_stmt(db, "create_table", d->create_table.sql, table, 1);
    check_stmt(db, "probe_token", d->probe_token.sql, table, 0);
    check_stmt(db, "probe_version", d->probe_version.sql, table, 0);
    check_stmt(db, "probe_data", d->probe_data.sql, table, 0);
    check_stmt(db, "fill_nulls", d->fill_nulls.sql, table, 0);
    check_stmt(db, "probe_exact", d->probe_exact.sql, table, 0);
    check_stmt(db, "make_exact", d->make_exact.sql, table, 0);
    check_stmt(db, "seed", d->seed.sql, table, 0);
    check_stmt(db, "acquire", d->acquire.sql, table, 0);
    check_stmt(db, "renew", d->renew.sql, table, 0);
    check_stmt(db, "release", d->release.sql, table, 0);
    check_stmt(db, "release_force", d->release_force.sql, table, 0);
    check_stmt(db, "status", d->status.sql, table, 0);
    check_stmt(db, "list", d->list.sql, table, 0);
    check_each(db, "renew_each", &d->renew_each, table);
    check_each(db, "renewed_each", &d->renewed_each, table);
    check_each(db, "status_each", &d->status_each, table);
    fence = malloc(strlen(d->fence.sql) + 8);
    if (fence == NULL)
        abort();
    sprintf(fence, "SELECT %s", d->fence.sql);
    check_stmt(db, "fence", fence, table, 0);
    free(fence);
    sqlite3_close(db);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init();
    sqlite_row = sqle_dialect_find("sqlite");
    if (sqlite_row == NULL)
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *t;
    const char *dot;
    sqlease_error err;
    int rc, valid, shape;

    if (size > 4096)
        return 0;
    fz_input(data, size);
    t = fz_cstr(data, size);
    rc = sqle_check_table("table", t, &err);
    valid = sqle_valid_table(t);
    shape = shape_ok(t, &dot);
    FZ_CHECK((rc == SQLEASE_OK) == (valid != 0), "sqle_check_table says %d, sqle_valid_table %d",
             rc, valid);
    if (rc == SQLEASE_OK) {
        FZ_CHECK(shape, "accepted '%s', which is not an identifier or schema.identifier", t);
        FZ_CHECK(strlen(t) <= SQLEASE_MAX_TABLE, "accepted a name of %zu bytes", strlen(t));
        check_in_sqlite(t, dot);
    } else {
        fz_check_error(&err, rc, "table");
        FZ_CHECK(rc == SQLEASE_EINVAL, "status %d", rc);
        if (shape) {
            /* Refused for a reserved word, or a name SQLite keeps for
             * itself (sqlite_...): one of its parts is one. */
            size_t first = dot != NULL ? (size_t)(dot - t) : strlen(t);
            int reserved = sqle_reserved_word(t, first) ||
                           (dot != NULL && sqle_reserved_word(dot + 1, strlen(dot + 1)));
            int sqlite_own = strncasecmp(t, "sqlite_", 7) == 0 ||
                             (dot != NULL && strncasecmp(dot + 1, "sqlite_", 7) == 0);
            FZ_CHECK(reserved || sqlite_own,
                     "refused '%s', which has the shape and no reserved word: %s", t,
                     err.message);
            FZ_CHECK(strstr(err.message, "reserved word") != NULL ||
                         strstr(err.message, "'sqlite_'") != NULL,
                     "message does not say why: %s", err.message);
        }
    }
    free(t);
    return 0;
}
