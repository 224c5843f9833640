/*
 * classify.h -- what a failed database call means.
 *
 * One pure function turns a driver's diagnostic (SQLSTATE, native code,
 * message) into the kind of failure it reports, from the rules of the
 * dialect table (templates/dialects.toml, `failures`: [common]'s, plus the
 * dialect's own when it is known).  The caller decides what to do about
 * it: odbc.c drops the connection for a timeout or a lost connection,
 * lease.c reads a serialization failure on a take as a lost race, the CLI
 * does not retry a connect the driver manager refused.  Nothing here
 * includes an ODBC header or touches a handle.
 */
#ifndef SQLEASE_CLASSIFY_H
#define SQLEASE_CLASSIFY_H

#include "sqlease.h"
#include "dialect.h"

/* What went wrong, in the order the classifier tests for it. */
typedef enum sqle_failure {
    SQLEASE_FAIL_ERROR = 0,     /* the statement failed; the connection is fine (EDB) */
    SQLEASE_FAIL_TIMEOUT,       /* a query or login timeout expired (ETIMEOUT) */
    SQLEASE_FAIL_CONN_LOST,     /* the connection is gone (ECONNECT) */
    SQLEASE_FAIL_NO_TABLE,      /* the table is not there (ENOTABLE) */
    SQLEASE_FAIL_SERIALIZATION, /* a concurrent transaction won: serialization
                                   failure or deadlock (EDB) */
    SQLEASE_FAIL_LOCKED,        /* another connection holds the write lock (EDB) */
    SQLEASE_FAIL_PRIVILEGE,     /* the role lacks a privilege the statement needs (EDB) */
    SQLEASE_FAIL_CONNECT,       /* a connect failed: the server is down, out of
                                   reach, or refused the login (ECONNECT) */
    SQLEASE_FAIL_CONFIG         /* a connect the driver manager refused: no such
                                   DSN, a driver it cannot load (ECONNECT) */
} sqle_failure;

/* Where the diagnostic came from: a connect reads only timeouts and the
 * driver manager's refusals, everything else being "cannot connect". */
enum { SQLEASE_AT_STATEMENT = 0, SQLEASE_AT_CONNECT = 1 };

/* One diagnostic record as the driver gave it.  sqlstate and message may
 * be NULL or "" (no record).  native is the driver's own code: recorded,
 * but no rule reads it (drivers disagree on what it means). */
typedef struct sqle_diag {
    const char *sqlstate;
    long native;
    const char *message;
} sqle_diag;

/* The kind of failure `d` reports, by [common]'s rules and, when `dl` is
 * not NULL, the dialect's.  Pure: reads only its arguments and the
 * generated table. */
sqle_failure sqle_classify(const sqle_diag *d, const sqle_dialect *dl, int stage);

/* The same for an error the library filled (its SQLSTATE, native code and
 * message, which quotes the driver's), for code above the database port. */
sqle_failure sqle_classify_error(const sqlease_error *err, const sqle_dialect *dl,
                                 int stage);

/* The status a failure of this kind is reported as (SQLEASE_EDB,
 * SQLEASE_ETIMEOUT, SQLEASE_ECONNECT, SQLEASE_ENOTABLE). */
int sqle_failure_status(sqle_failure f);

/* "timeout", "connection lost", ...: for logs and tests. */
const char *sqle_failure_name(sqle_failure f);

#endif
