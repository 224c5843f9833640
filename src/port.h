/*
 * port.h -- the contract a database port fills: how the database handle
 * (db.c) runs a statement on one connection, whatever talks to the
 * database underneath.
 *
 * Two ports implement it: odbc.c (odbc.h), the library's own, and the
 * simulator's database (tests/sim/simdb.c), which runs the same generated
 * statements on an in-memory SQLite under a simulated clock; the tests
 * and the benchmark may interpose a wrapper around either (a fault
 * injector, a counter).  A port needs nothing from db.c: only the types
 * below, the dialect table (dialect.h) and the error helpers of
 * internal.h (sqle_fail, sqle_err).  The handle calls down into it and it
 * never calls back.
 *
 * The rules every implementation keeps:
 *  - An instance is used by one thread at a time (the handle's worker),
 *    so an instance needs no locking of its own.  clone() may run on
 *    another thread while an instance it was cloned from is busy: it
 *    reads only what that instance was created with.
 *  - A call may block as long as the database makes it: the handle, not
 *    the port, bounds how long a caller waits (it abandons an instance
 *    stuck past its deadline, and closes it once the call returns).
 *  - A connection-class failure or a timeout leaves the instance
 *    unconnected (connected() 0); the next exec connects again.
 *  - Errors fill the caller's sqlease_error (status, SQLSTATE, native
 *    code, a message without passwords) and return its status.
 */
#ifndef SQLEASE_PORT_H
#define SQLEASE_PORT_H

#include <stddef.h>
#include <stdint.h>

#include "sqlease.h"
#include "dialect.h"  /* the dialect table (generated) and its lookup */

enum db_type { DB_INT64 = 1, DB_TEXT = 2 };

/* One bound input parameter. */
typedef struct db_bind {
    int type;         /* DB_INT64 or DB_TEXT */
    int64_t i;        /* DB_INT64 value */
    const char *s;    /* DB_TEXT value, NUL-terminated */
} db_bind;

/* One output column of the first fetched row.  The caller provides the
 * storage; the port fills it and sets is_null. */
typedef struct db_out {
    int type;         /* DB_INT64 or DB_TEXT */
    int64_t *i;       /* DB_INT64 destination */
    char *s;          /* DB_TEXT destination, cap bytes incl. NUL */
    size_t cap;
    int is_null;      /* set by the port */
} db_out;

typedef struct db_ops {
    /* Run one statement, connecting first when the instance is not
     * connected.  `sql` has `?` markers for `binds` in order.  If nout > 0
     * the first row of the result is fetched into `out` and *has_row says
     * whether there was one.  *rows gets SQLRowCount (-1 when the driver
     * does not know).  has_row and rows may be NULL.  Implementations may
     * cache prepared statements keyed by the sql text.  Returns
     * SQLEASE_OK or a status with err filled; a connection-class failure
     * or a timeout drops the connection, and the next call reconnects. */
    int (*exec)(void *self, const char *sql, const db_bind *binds, size_t nbinds,
                db_out *out, size_t nout, int *has_row, int64_t *rows,
                sqlease_error *err);
    /* Connect now (dropping any connection the instance had). */
    int (*connect)(void *self, sqlease_error *err);
    /* 1 while the instance has an open connection. */
    int (*connected)(void *self);
    /* The dialect of the connected DBMS; NULL before the first connect
     * detected it (or when it was forced, the forced one). */
    const sqle_dialect *(*dialect)(void *self);
    /* A new, unconnected instance with the same parameters as `self`,
     * and `d` as its dialect when d is not NULL (so that it need not be
     * detected again).  Only reads what `self` was created with, so it
     * may be called while another instance is busy on another thread.
     * NULL on out-of-memory (err filled). */
    void *(*clone)(void *self, const sqle_dialect *d, sqlease_error *err);
    /* Disconnect and free `self`. */
    void (*close)(void *self);
    /* Like exec, for a statement whose rows are all wanted (a listing):
     * up to max_rows rows are fetched, row r's columns into
     * out[r * nout ... r * nout + nout - 1]; *nrows gets how many (fewer
     * than max_rows: there were no more).  A port without it (NULL) cannot
     * list. */
    int (*exec_rows)(void *self, const char *sql, const db_bind *binds, size_t nbinds,
                     db_out *out, size_t nout, size_t max_rows, size_t *nrows,
                     sqlease_error *err);
} db_ops;

#endif
