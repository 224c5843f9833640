/*
 * db.h -- the narrow database port that the lease and supervisor code use.
 *
 * Everything above this line of the stack (lease.c, migrate.c,
 * supervisor.c) speaks in SQL text with `?` markers, int64 and text
 * values, rows affected and one fetched row.  Everything below it
 * (odbc.c) speaks ODBC.  Keeping the port this small is what lets the
 * tests wrap the real ODBC implementation with a fault injector (a hung
 * statement, a dropped connection) without a fake database.
 *
 * The sqlease_db handle (db.c) owns one port instance and serialises
 * every call to it with one mutex, so port implementations need no
 * locking of their own.
 */
#ifndef SQLEASE_DB_H
#define SQLEASE_DB_H

#include <stddef.h>
#include <stdint.h>

#include "sqlease.h"
#include "platform.h"
#include "dialects.h" /* generated: build/gen/dialects.h */
#include "options.h"

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
    /* Run one statement.  `sql` has `?` markers for `binds` in order.  If
     * nout > 0 the first row of the result is fetched into `out` and
     * *has_row says whether there was one.  *rows gets SQLRowCount (-1
     * when the driver does not know).  has_row and rows may be NULL.
     * Implementations may cache prepared statements keyed by the sql
     * text.  Returns SQLEASE_OK or a status with err filled; a
     * connection-class failure marks the connection for a reconnect on
     * the next call. */
    int (*exec)(void *self, const char *sql, const db_bind *binds, size_t nbinds,
                db_out *out, size_t nout, int *has_row, int64_t *rows,
                sqlease_error *err);
    /* The dialect of the connected DBMS (never NULL once opened). */
    const sqlease_dialect *(*dialect)(void *self);
    /* Disconnect and free `self`. */
    void (*close)(void *self);
} db_ops;

/* The public handle.  Fields are for db.c, lease.c, migrate.c and
 * supervisor.c; nobody else looks inside. */
struct sqlease_db {
    const db_ops *ops;
    void *self;
    sqlease_mutex lock;        /* serialises every ops call */
    char *conn_redacted;
    sqlease_log_fn log;
    void *log_userdata;
    int log_level;
    sqlease_atomic_u64 statements; /* bumped by db_exec */
    sqlease_ini ini;               /* the DSN's Sqlease* settings */
    int64_t query_timeout_ms;      /* what statements were given */
};

/* Wrap an opened port in a handle (db.c).  Used by sqlease_db_open and by
 * tests that interpose a fault injector.  Takes ownership of `self` on
 * success. */
int db_wrap(sqlease_db **out, const db_ops *ops, void *self, const char *conn_redacted,
            const sqlease_db_options *opt, sqlease_error *err);

/* Run one statement on the handle's connection under its lock. */
int db_exec(sqlease_db *db, const char *sql, const db_bind *binds, size_t nbinds,
            db_out *out, size_t nout, int *has_row, int64_t *rows, sqlease_error *err);

const sqlease_dialect *db_dialect(sqlease_db *db);

/* The values a template statement's named parameters take. */
typedef struct db_params {
    const char *name;
    const char *owner;
    int64_t ttl_ms;
    int64_t token;
} db_params;

/* Run a generated statement: `sql` is st->sql with {table} substituted;
 * its `?` markers are bound from `p` in the order st->params lists. */
int db_run(sqlease_db *db, const sqlease_stmt *st, const char *sql, const db_params *p,
           db_out *out, size_t nout, int *has_row, int64_t *rows, sqlease_error *err);

/* The ODBC implementation of the port (odbc.c).  `conn` is a DSN name or
 * a connection string; `dialect_key` NULL means detect from
 * SQL_DBMS_NAME.  On success *self is the port instance and *conn_redacted
 * a malloc'd redacted copy of conn. */
extern const db_ops odbc_ops;
int odbc_open(void **self, const char *conn, const char *dialect_key,
              int64_t login_timeout_ms, int64_t query_timeout_ms,
              sqlease_error *err);

/* Read a key from a DSN's section in odbc.ini through the driver manager
 * (SQLGetPrivateProfileString).  Returns 1 and fills buf if the key is
 * set, 0 if it is not or `conn` is a connection string rather than a DSN
 * name. */
int odbc_dsn_setting(const char *conn, const char *key, char *buf, size_t cap);

#endif
