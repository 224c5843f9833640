/*
 * seam.h -- the test-only seam: what the benchmark (bench/) and the
 * tests may do to a database handle beyond the public API, so that they
 * need not reach into a port (odbc.c) or the handle's fields.
 *
 * Not part of the API: not installed, not exported from the shared
 * library (hidden, like every sqle_ symbol); only programs linked with
 * the static library (build/lib/libsqlease.a) see it.  Nothing here
 * changes what a handle does; it only watches and runs plain text.
 */
#ifndef SQLEASE_SEAM_H
#define SQLEASE_SEAM_H

#include <stddef.h>

#include "sqlease.h"

/* A statement observer: called with the text of each statement the
 * handle sends, as sent (valid during the call only). */
typedef void (*sqle_db_observer)(void *ud, const char *sql);

/* Call fn(ud, sql) on the handle's statement thread just before each
 * statement goes to the port, from the next statement on; NULL stops it.
 * fn must be quick and must not call into the handle; ud must outlive the
 * handle (or the observing).  Thread-safe. */
void sqle_db_observe(sqlease_db *db, sqle_db_observer fn, void *ud);

/* The text a lease of `table` on `db` sends for `which` ("acquire",
 * "renew", "release", "status"), as an observer sees it.  Owned by the
 * handle, valid until sqlease_db_close.  NULL for another name, or when
 * out of memory. */
const char *sqle_db_lease_sql(sqlease_db *db, const char *table, const char *which);

/* Run one statement without parameters on the handle's connection (the
 * one its leases use), bounded as every call is, and copy the first
 * row's first ncols columns as text into cols[i] (cap bytes each,
 * NUL-terminated; "" for NULL).  *has_row says whether there was a row.
 * Counted in sqlease_db_statements.  Returns SQLEASE_OK, or the status
 * of the failure (SQLEASE_ETIMEOUT, SQLEASE_ECONNECT, SQLEASE_EDB, ...)
 * with err filled. */
int sqle_db_query_text(sqlease_db *db, const char *sql, char **cols, size_t ncols, size_t cap,
                       int *has_row, sqlease_error *err);

#endif
