/*
 * migrate.c -- create the lease table, upgrade an older one, seed rows.
 *
 * The lease code never inserts a row: two instances racing to insert the
 * missing row is exactly the kind of decision that must not be made on
 * the fly.  Rows are created here, by an explicit, idempotent step, with
 * each dialect's own "insert unless present".  A new row's token starts at
 * the database clock (epoch ms), so that a row deleted and seeded again
 * never hands out a token below one its predecessor reached.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "db.h"
#include "fire.h"
#include "history.h"
#include "internal.h"
#include "lease.h"

/* What each step needs of the connection's role, in the words of GRANT
 * (SQLite has no grants: there the process must be able to write the
 * file and its directory). */
enum { NEED_SELECT, NEED_CREATE, NEED_ALTER, NEED_UPDATE, NEED_INSERT };

static const char *need_text(const sqle_dialect *d, int need)
{
    if (d != NULL && strcmp(d->key, "sqlite") == 0)
        return "write access to the database file and its directory";
    switch (need) {
    case NEED_CREATE: return "CREATE on the table's schema (database on MySQL/MariaDB)";
    case NEED_ALTER: return "ALTER on the table (on PostgreSQL: owning it)";
    case NEED_UPDATE: return "UPDATE on the table";
    case NEED_INSERT: return "INSERT on the table";
    default: return "SELECT on the table";
    }
}

/* Run a template statement that takes no parameter but its table (and
 * the name, for the seed): {table}, {fire_table} for the fire ledger's
 * or {history_table} for the holder history's, whichever it names.  With `has_row`, the first column of the first row
 * is fetched (as text) and *has_row says whether there was one.  A
 * privilege the role lacks is named first in the message, before the
 * driver's words (which may be cut at the message's size). */
static int run_ddl_row(sqlease_db *db, const sqle_stmt *st, const char *table,
                       const char *name, const char *what, int need, int *has_row,
                       sqlease_error *err)
{
    db_params p;
    db_out out;
    char text[256];
    char *sql = sqle_sql_for_all(st->sql, table, table, table);
    int rc;

    if (sql == NULL)
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    memset(&p, 0, sizeof p);
    p.name = name;
    p.owner = "";
    memset(&out, 0, sizeof out);
    out.type = DB_TEXT;
    out.s = text;
    out.cap = sizeof text;
    rc = sqle_db_run(db, st, sql, &p, has_row != NULL ? &out : NULL, has_row != NULL ? 1 : 0,
                     has_row, NULL, err);
    free(sql);
    if (rc != SQLEASE_OK && err != NULL) {
        const sqle_dialect *d = sqle_db_dialect(db);
        char driver[sizeof err->message];
        memcpy(driver, err->message, sizeof driver);
        if (sqle_classify_error(err, d, SQLEASE_AT_STATEMENT) == SQLEASE_FAIL_PRIVILEGE)
            sqle_err(err, rc, err->sqlstate, err->native_error,
                     "migrate: %s %s needs %s, which the connection lacks: run migrate as the"
                     " table's owner, or grant it: %s", what, table, need_text(d, need), driver);
        else
            sqle_err(err, rc, err->sqlstate, err->native_error, "migrate: %s %s: %s", what,
                     table, driver);
    }
    return rc;
}

static int run_ddl(sqlease_db *db, const sqle_stmt *st, const char *table, const char *name,
                   const char *what, int need, sqlease_error *err)
{
    return run_ddl_row(db, st, table, name, what, need, NULL, err);
}

/*
 * Add a column an older (go-admin) table lacks.  Whether it is there is
 * asked with a SELECT of that column, which every dialect answers the same
 * way; only a statement error (not a lost connection) means "absent".
 */
static int ensure_column(sqlease_db *db, const sqle_stmt *probe, const sqle_stmt *add,
                         const char *table, const char *column, sqlease_error *err)
{
    char what[64];
    int rc = run_ddl(db, probe, table, NULL, "probe", NEED_SELECT, err);
    if (rc == SQLEASE_OK)
        return SQLEASE_OK;
    if (rc != SQLEASE_EDB && rc != SQLEASE_ENOTABLE)
        return rc;
    sqle_err_clear(err);
    snprintf(what, sizeof what, "adding column %s to", column);
    return run_ddl(db, add, table, NULL, what, NEED_ALTER, err);
}

/*
 * An older table made by hand without NOT NULL may hold NULLs where
 * sqlease writes values: give them a new row's values before anything
 * changes a column's type or collation, since MySQL/MariaDB refuse to
 * make a column holding NULLs NOT NULL (and outside strict mode would
 * convert them silently).  It changes each such row's version, as every
 * write does: a follower that watched a NULL version (read as 0) while
 * its holder's renews left it NULL must see the repaired row as new, or
 * it would take a live hold.  The statement matches no row once there is
 * no NULL, so running migrate again changes nothing.
 */
static int fill_nulls(sqlease_db *db, const sqle_dialect *d, const char *table,
                      sqlease_error *err)
{
    return run_ddl(db, &d->fill_nulls, table, NULL, "filling in the NULLs of", NEED_UPDATE,
                   err);
}

/*
 * Make the name and owner columns of an existing table compare as exact
 * bytes, where the dialect's default collation does not (MySQL/MariaDB:
 * case-, accent- and pad-insensitive by default).  The dialect's probe
 * returns a row only while a column still needs it, so running migrate
 * again changes nothing.
 */
static int ensure_exact(sqlease_db *db, const sqle_dialect *d, const char *table,
                        sqlease_error *err)
{
    int has_row = 0;
    int rc = run_ddl_row(db, &d->probe_exact, table, NULL, "checking the collation of",
                         NEED_SELECT, &has_row, err);
    if (rc != SQLEASE_OK || !has_row)
        return rc;
    return run_ddl(db, &d->make_exact, table, NULL,
                   "making the name and owner columns compare exactly in", NEED_ALTER, err);
}

/*
 * Seed every name with the dialect's seed_each, one statement per chunk
 * of batch_max names (fewer when max_params says so), instead of a
 * statement (and, on SQLite, a durable commit) per name: 10,000 names
 * are a few dozen statements.  Each statement is an insert that leaves
 * existing rows alone, so a chunk is as idempotent as the single seed.
 */
static int seed_names(sqlease_db *db, const sqle_dialect *d, const char *table,
                      const char *const *names, size_t count, sqlease_error *err)
{
    size_t cmax = sqle_each_chunk_max(d, &d->seed_each, 0);
    db_params *ps;
    size_t i;
    int rc = SQLEASE_OK;

    if (count == 0)
        return SQLEASE_OK;
    ps = calloc(count, sizeof *ps);
    if (ps == NULL)
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    for (i = 0; i < count; i++) {
        ps[i].name = names[i];
        ps[i].owner = "";
    }
    for (i = 0; i < count && rc == SQLEASE_OK; i += cmax) {
        size_t k = count - i < cmax ? count - i : cmax;
        db_bind *binds = NULL;
        size_t nb = 0;
        char *sql = NULL;

        rc = sqle_each_build(&d->seed_each, table, ps + i, k, sqle_each_padded(k, cmax), &sql,
                             &binds, &nb, err);
        if (rc == SQLEASE_OK)
            rc = sqle_db_exec(db, sql, binds, nb, NULL, 0, NULL, NULL, err);
        free(sql);
        free(binds);
        if (rc != SQLEASE_OK && err != NULL && rc != SQLEASE_ENOMEM) {
            /* Said as the single seed says it, naming a privilege the
             * role lacks first. */
            char driver[sizeof err->message];
            memcpy(driver, err->message, sizeof driver);
            if (sqle_classify_error(err, d, SQLEASE_AT_STATEMENT) == SQLEASE_FAIL_PRIVILEGE)
                sqle_err(err, rc, err->sqlstate, err->native_error,
                         "migrate: seeding rows in %s needs %s, which the connection lacks:"
                         " run migrate as the table's owner, or grant it: %s", table,
                         need_text(d, NEED_INSERT), driver);
            else
                sqle_err(err, rc, err->sqlstate, err->native_error,
                         "migrate: seeding rows in %s (names #%zu to #%zu): %s", table, i + 1,
                         i + k, driver);
        }
    }
    free(ps);
    return rc;
}

int sqlease_migrate(sqlease_db *db, const char *table, const char *const *names, size_t count,
                    sqlease_error *err)
{
    const sqle_dialect *d;
    size_t i;
    int rc;

    sqle_err_clear(err);
    if (db == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_migrate: db is NULL");
    if (table == NULL)
        table = SQLEASE_DEFAULT_TABLE;
    if (sqle_check_table("table", table, err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    if (count > 0 && names == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_migrate: names is NULL");
    for (i = 0; i < count; i++) {
        char field[48];

        if (count == 1)
            snprintf(field, sizeof field, "lease name");
        else
            snprintf(field, sizeof field, "lease name #%zu", i + 1);
        if (sqle_check_text(field, names[i], SQLEASE_MAX_NAME, 0, err) != SQLEASE_OK)
            return SQLEASE_EINVAL;
    }

    d = sqle_db_dialect(db);
    rc = run_ddl(db, &d->create_table, table, NULL, "creating table", NEED_CREATE, err);
    if (rc != SQLEASE_OK)
        return rc;
    rc = ensure_column(db, &d->probe_token, &d->add_token, table, "token", err);
    if (rc != SQLEASE_OK)
        return rc;
    rc = ensure_column(db, &d->probe_version, &d->add_version, table, "version", err);
    if (rc != SQLEASE_OK)
        return rc;
    rc = ensure_column(db, &d->probe_data, &d->add_data, table, "data", err);
    if (rc != SQLEASE_OK)
        return rc;
    rc = ensure_column(db, &d->probe_ttl, &d->add_ttl, table, "ttl_ms", err);
    if (rc != SQLEASE_OK)
        return rc;
    rc = ensure_column(db, &d->probe_last_owner, &d->add_last_owner, table, "last_owner", err);
    if (rc != SQLEASE_OK)
        return rc;
    rc = ensure_column(db, &d->probe_fire_at, &d->add_fire_at, table, "fire_at_ms", err);
    if (rc != SQLEASE_OK)
        return rc;
    rc = ensure_column(db, &d->probe_handoff_to, &d->add_handoff_to, table, "handoff_to", err);
    if (rc != SQLEASE_OK)
        return rc;
    rc = ensure_column(db, &d->probe_priority, &d->add_priority, table, "priority", err);
    if (rc != SQLEASE_OK)
        return rc;
    rc = fill_nulls(db, d, table, err);
    if (rc != SQLEASE_OK)
        return rc;
    rc = ensure_exact(db, d, table, err);
    if (rc != SQLEASE_OK)
        return rc;
    return seed_names(db, d, table, names, count, err);
}

/*
 * The fire ledger's table (fire.c), for a scheduler's fires: created
 * here, by the same explicit deployment step, and never by the calls
 * that write it.  It is new in 0.2.1: there is no older version of it to
 * upgrade.
 */
int sqle_fire_migrate(sqlease_db *db, const char *fire_table, sqlease_error *err)
{
    sqle_err_clear(err);
    if (db == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_fire_migrate: db is NULL");
    if (fire_table == NULL)
        fire_table = db->ini.fire_table != NULL ? db->ini.fire_table
                                                : SQLEASE_DEFAULT_FIRE_TABLE;
    if (sqle_check_table(db->ini.fire_table == fire_table
                             ? "fire table (SqleaseFireTable in odbc.ini)" : "fire table",
                         fire_table, err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    return run_ddl(db, &sqle_db_dialect(db)->fire_create_table, fire_table, NULL,
                   "creating fire table", NEED_CREATE, err);
}

int sqlease_fire_migrate(sqlease_db *db, const char *fire_table, sqlease_error *err)
{
    return sqle_fire_migrate(db, fire_table, err);
}

/*
 * The holder history's table (history.c), beside the lease table: by
 * the same explicit deployment step.  New in 0.2.1, like the fire table.
 * Until it exists, the leases record nothing and say so once.
 */
int sqle_history_migrate(sqlease_db *db, const char *history_table, sqlease_error *err)
{
    sqle_err_clear(err);
    if (db == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_history_migrate: db is NULL");
    if (history_table == NULL)
        history_table = db->ini.history_table != NULL ? db->ini.history_table
                                                      : SQLEASE_DEFAULT_HISTORY_TABLE;
    if (sqle_check_table(db->ini.history_table == history_table
                             ? "history table (SqleaseHistoryTable in odbc.ini)"
                             : "history table",
                         history_table, err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    return run_ddl(db, &sqle_db_dialect(db)->hold_create_table, history_table, NULL,
                   "creating history table", NEED_CREATE, err);
}

int sqlease_history_migrate(sqlease_db *db, const char *history_table, sqlease_error *err)
{
    return sqle_history_migrate(db, history_table, err);
}
