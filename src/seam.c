/*
 * seam.c -- the test-only seam of seam.h: a statement observer, the
 * lease statements' texts and plain text queries on a handle, for the
 * benchmark and the tests (never for the library's own callers).
 */
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "internal.h"
#include "seam.h"

/* The observer is read by the worker under db->m as it takes each
 * request, so a change applies from the next statement on. */
void sqle_db_observe(sqlease_db *db, sqle_db_observer fn, void *ud)
{
    if (db == NULL)
        return;
    sqle_mutex_lock(&db->m);
    db->observe = fn;
    db->observe_ud = ud;
    sqle_mutex_unlock(&db->m);
}

/* The same shared texts the leases of the handle send (db.c builds them
 * once per table), so that an observer can compare with strcmp. */
const char *sqle_db_lease_sql(sqlease_db *db, const char *table, const char *which)
{
    const sqle_table_sql *t;
    const sqle_dialect *d = db != NULL ? sqle_db_dialect(db) : NULL;

    if (d == NULL || table == NULL || which == NULL ||
        (t = sqle_db_table_sql(db, d, table)) == NULL)
        return NULL;
    if (strcmp(which, "acquire") == 0)
        return t->acquire;
    if (strcmp(which, "renew") == 0)
        return t->renew;
    if (strcmp(which, "release") == 0)
        return t->release;
    if (strcmp(which, "status") == 0)
        return t->status;
    return NULL;
}

/* Text columns through the handle's ordinary statement path: the same
 * queue, deadline and connection as the leases' statements. */
int sqle_db_query_text(sqlease_db *db, const char *sql, char **cols, size_t ncols, size_t cap,
                       int *has_row, sqlease_error *err)
{
    db_out out[16];
    size_t i;
    int rc;

    if (db == NULL || sql == NULL || ncols > sizeof out / sizeof out[0] ||
        (ncols > 0 && (cols == NULL || cap == 0)))
        return sqle_fail(err, SQLEASE_EINVAL, "sqle_db_query_text: bad arguments");
    memset(out, 0, sizeof out);
    for (i = 0; i < ncols; i++) {
        cols[i][0] = '\0';
        out[i].type = DB_TEXT;
        out[i].s = cols[i];
        out[i].cap = cap;
    }
    rc = sqle_db_exec(db, sql, NULL, 0, out, ncols, has_row, NULL, err);
    for (i = 0; rc == SQLEASE_OK && i < ncols; i++)
        if (out[i].is_null)
            cols[i][0] = '\0';
    return rc;
}
