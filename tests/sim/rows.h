/*
 * rows.h -- the lease table as the simulator last saw it (rows.c), and
 * what a statement changed in it: the checks of what each statement may
 * change compare every row before and after.
 */
#ifndef SQLEASE_SIM_ROWS_H
#define SQLEASE_SIM_ROWS_H

#include <stdint.h>

/* One row: the columns the checks read (NULL: SQL NULL; a number's
 * is_null says so), and every column as one text, to tell whether
 * anything changed whatever columns the table has. */
typedef struct sim_row {
    char *name, *owner;
    int64_t token, version, expires_at_ms, acquired_at_ms;
    int token_null, version_null, expires_null, acquired_null;
    /* The hand-over's: a request or reservation ("" or NULL: none), the
     * holder's priority. */
    char *handoff_to;
    int64_t priority;
    char *all;
} sim_row;

/* Read `table` into the cache: after the harness changed it by hand, or
 * its columns (migrate).  0, or -1. */
int rows_sync(const char *table);
/* Forget the cache (a new database). */
void rows_reset(void);
/* Read the table, call fn for each row that differs from the cache
 * (old NULL: a new row; new NULL: a row gone), then keep what was read.
 * 0, or -1 (the read failed; the cache is kept). */
int rows_diff(const char *table, void (*fn)(void *ud, const sim_row *old, const sim_row *now),
              void *ud);
/* The cached row of that name, or NULL. */
const sim_row *rows_get(const char *name);

#endif
