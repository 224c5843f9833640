/*
 * list.c -- every lease row of a table, for `sqlease list` and for
 * programs that watch many leases at once.
 *
 * The rows are read a page at a time with the dialect's `list` statement,
 * which returns the rows after a given name in name order: each page is
 * one bounded statement, however many leases the table has, and the
 * memory a listing needs does not grow with the table.  The caller's
 * callback runs between pages, never while a statement is in flight, so
 * it may use the library (the same handle included).
 */
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "internal.h"
#include "lease.h"

/* Rows per statement of sqlease_list: a page holds about 1.4 KB per
 * row. */
#define LIST_PAGE 100

/* name, then the status statement's columns (lease.h). */
#define LIST_COLUMNS (1 + SQLE_ROW_COLUMNS)

typedef struct list_row {
    char name[SQLEASE_MAX_NAME + 1];
    sqlease_lease_info info;
} list_row;

/* Point one row's descriptors at `r`: the name, then the columns every
 * read of a row has, read the same way. */
static void row_cells(db_out *out, list_row *r)
{
    memset(out, 0, sizeof *out);
    out[0].type = DB_TEXT;
    out[0].s = r->name;
    out[0].cap = sizeof r->name;
    sqle_lease_row_out(out + 1, &r->info);
}

/* One row as the callback sees it: as every read of a row finishes it
 * (lease.c), and never `mine`: a listing belongs to no hold. */
static int row_finish(const sqle_dialect *d, const db_out *out, list_row *r,
                      sqlease_error *err)
{
    int rc = sqle_lease_row_finish(out + 1, &r->info, d->now_ms, err);

    if (rc != SQLEASE_OK)
        return rc;
    if (out[0].is_null)
        r->name[0] = '\0';
    r->info.mine = 0;
    return SQLEASE_OK;
}

/*
 * Each page is one statement that returns every row after the page's
 * first name (the statement has no LIMIT: not every dialect has one),
 * and the drivers fetch a result whole, so a listing of N rows moves
 * about N * N / (2 * page) rows: a reader that lists often (a group)
 * asks for a larger page, and pays for it in the page's memory, held
 * only during the call.
 */
int sqle_list_paged(sqlease_db *db, const char *table, size_t page, sqlease_list_fn fn,
                    void *userdata, sqlease_error *err)
{
    const sqle_dialect *d;
    char after[SQLEASE_MAX_NAME + 1] = "";
    list_row *rows = NULL;
    db_out *out = NULL;
    char *sql = NULL;
    int rc = SQLEASE_OK;

    sqle_err_clear(err);
    if (db == NULL || fn == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_list: db and fn must not be NULL");
    if (table == NULL)
        table = db->ini.table != NULL ? db->ini.table : SQLEASE_DEFAULT_TABLE;
    if (sqle_check_table("table", table, err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    d = sqle_db_dialect(db);
    sql = sqle_sql_for_table(d->list.sql, table);
    if (page == 0)
        page = LIST_PAGE;
    rows = calloc(page, sizeof *rows);
    out = calloc(page * LIST_COLUMNS, sizeof *out);
    if (sql == NULL || rows == NULL || out == NULL) {
        rc = sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
        goto done;
    }
    for (;;) {
        db_params p;
        size_t n = 0, i;

        memset(&p, 0, sizeof p);
        p.name = after;
        memset(rows, 0, page * sizeof *rows);
        for (i = 0; i < page; i++)
            row_cells(out + i * LIST_COLUMNS, &rows[i]);
        rc = sqle_db_run_rows_by(db, 0, &d->list, sql, &p, out, LIST_COLUMNS, page, &n, err);
        if (rc == SQLEASE_ENOTABLE && err != NULL) {
            char driver[sizeof err->message];
            memcpy(driver, err->message, sizeof driver);
            sqle_err(err, rc, err->sqlstate, err->native_error,
                     "lease table '%s' does not exist; run `sqlease migrate` (%s)", table,
                     driver);
        }
        if (rc != SQLEASE_OK)
            goto done;
        for (i = 0; i < n; i++) {
            rc = row_finish(d, out + i * LIST_COLUMNS, &rows[i], err);
            if (rc != SQLEASE_OK)
                goto done;
            if (fn(userdata, rows[i].name, &rows[i].info) != 0)
                goto done;
        }
        if (n < page)
            break;
        /* The next page starts after this one's last name; a statement
         * that did not move on would repeat it forever. */
        if (strcmp(rows[n - 1].name, after) == 0) {
            rc = sqle_fail(err, SQLEASE_EDB, "list: the page after '%s' starts with it again",
                           after);
            goto done;
        }
        memcpy(after, rows[n - 1].name, sizeof after);
    }
done:
    free(sql);
    free(rows);
    free(out);
    return rc;
}

int sqlease_list(sqlease_db *db, const char *table, sqlease_list_fn fn, void *userdata,
                 sqlease_error *err)
{
    return sqle_list_paged(db, table, LIST_PAGE, fn, userdata, err);
}
