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
 * The sqlease_db handle (db.c) gives each port instance to one worker
 * thread at a time, so port implementations need no locking of their
 * own.
 */
#ifndef SQLEASE_DB_H
#define SQLEASE_DB_H

#include <stddef.h>
#include <stdint.h>

#include "sqlease.h"
#include "platform.h"
#include "dialect.h"  /* the dialect table (generated) and its lookup */
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

/* The lease statements with {table} substituted, shared by every lease of
 * one table on a handle: built by the first lease of the table, freed with
 * the handle (a lease must not outlive its handle).  Ten thousand leases
 * of one table keep one copy of the texts, not ten thousand. */
typedef struct sqle_table_sql {
    struct sqle_table_sql *next;
    const sqle_dialect *d;
    char *table;
    char *acquire, *take_watched, *renew, *release, *release_force, *status, *fence;
} sqle_table_sql;

typedef struct db_worker db_worker;
typedef struct db_req db_req;

/* The public handle (db.c).  Statements do not run on the caller's
 * thread: a worker thread owns the connection and runs them one at a
 * time, earliest deadline first, while each caller waits for its own
 * answer no longer than its deadline.  A worker stuck in the driver past
 * a deadline is abandoned with its connection (it finishes on its own and
 * frees them), and a new worker with a fresh connection takes over, so
 * no caller ever waits on the network past its bound.  Fields other than
 * the immutable ones are guarded by `m`. */
struct sqlease_db {
    const db_ops *ops;
    void *proto;                   /* never connected: workers' instances are its clones */
    const sqle_dialect *dialect; /* set by the first connect, then fixed */
    char *conn_redacted;
    sqlease_log_fn log;
    void *log_userdata;
    int log_level;
    int64_t query_timeout_ms;      /* what statements were given */
    int64_t login_timeout_ms;      /* what connects were given */
    sqle_atomic_u64 statements; /* statements handed to the driver */
    sqle_ini ini;               /* the DSN's Sqlease* settings */

    sqle_mutex m;
    sqle_cond work_cv;          /* wakes the worker: a request, or closing */
    db_worker *worker;             /* the one serving the queue; NULL: start one */
    db_req *queue;                 /* waiting requests, earliest deadline first */
    int need_connect;              /* the worker's connection is down */
    int nabandoned;                /* abandoned workers still inside the driver */
    int refs;                      /* the owner's, plus one per worker alive */
    sqle_table_sql *table_sql;     /* per table and dialect, see above */
    struct sqle_engine *engine;    /* the supervisors' threads (engine.c), NULL
                                      while the handle has no supervisor */
    int closing;
};

/* How long past its timeout a statement or connect may keep its caller
 * waiting before it is abandoned: the driver's own timeout (whole seconds,
 * rounded up) fires before this when the driver honours it. */
#define DB_SLACK_MS 500

/* Abandoned workers (connections stuck in the driver) one handle keeps at
 * once.  With this many stuck, no connection is opened: the statements
 * waiting and every one that comes are answered at once with
 * SQLEASE_ETIMEOUT, unsent, until a stuck call returns. */
#define DB_MAX_ABANDONED 4

/* Wrap a port instance in a handle, start its worker and connect, all
 * within the login timeout + DB_SLACK_MS (db.c).  Used by sqlease_db_open
 * and by tests that interpose a fault injector.  `proto` is never
 * connected itself: the worker runs a clone of it.  Takes ownership of
 * `proto`, also on failure. */
int sqle_db_wrap(sqlease_db **out, const db_ops *ops, void *proto, const char *conn_redacted,
                 const sqlease_db_options *opt, sqlease_error *err);

/* The deadline (sqle_mono_ms) a call that starts now is bound by: the
 * query timeout + DB_SLACK_MS, plus the login timeout when the
 * connection is down and the call must reconnect first.  Every statement
 * of one public call (an acquire's UPDATE and SELECT) shares it. */
int64_t sqle_db_deadline(sqlease_db *db);

/* Run one statement on the handle's connection, answering by `deadline`
 * (a sqle_mono_ms value; 0: sqle_db_deadline now).  Past it: SQLEASE_ETIMEOUT,
 * and a statement still in the driver is abandoned with its connection. */
int sqle_db_exec_by(sqlease_db *db, int64_t deadline, const char *sql, const db_bind *binds,
                    size_t nbinds, db_out *out, size_t nout, int *has_row, int64_t *rows,
                    sqlease_error *err);
int sqle_db_exec(sqlease_db *db, const char *sql, const db_bind *binds, size_t nbinds,
                 db_out *out, size_t nout, int *has_row, int64_t *rows, sqlease_error *err);
/* The same through the port's exec_rows: up to max_rows rows into out,
 * which has nout * max_rows descriptors (one per cell, row after row);
 * *nrows gets how many rows came. */
int sqle_db_exec_rows_by(sqlease_db *db, int64_t deadline, const char *sql, const db_bind *binds,
                         size_t nbinds, db_out *out, size_t nout, size_t max_rows, size_t *nrows,
                         sqlease_error *err);

/* The statements of `table` in dialect d for the leases of db (shared;
 * valid until sqlease_db_close), or NULL when out of memory. */
const sqle_table_sql *sqle_db_table_sql(sqlease_db *db, const sqle_dialect *d,
                                        const char *table);

const sqle_dialect *sqle_db_dialect(sqlease_db *db);

/* The values a template statement's named parameters take: one field
 * per entry of the generator's parameter list (gen/gen_dialects.py,
 * PARAM_LIST), of the type it gives there (checked at compile time in
 * db.c). */
typedef struct db_params {
    const char *name;
    const char *owner;
    int64_t ttl_ms;
    int64_t token;
    int64_t min_hold_ms;
    const char *data;   /* NULL: SQL NULL */
    int64_t version;    /* the row version a watched take is bound to */
} db_params;

/* The value parameter `param` (a sqle_param) takes from `p`, as a
 * bind: through the generated binding table, so every parameter the
 * dialect table knows is bound the same way.  Returns 0, or -1 for a
 * parameter the table does not have (b is then zeroed). */
int sqle_db_param_bind(const db_params *p, unsigned param, db_bind *b);

/* Run a generated statement: `sql` is st->sql with {table} substituted;
 * its `?` markers are bound from `p` in the order st->params lists.
 * `deadline` as for sqle_db_exec_by. */
int sqle_db_run_by(sqlease_db *db, int64_t deadline, const sqle_stmt *st, const char *sql,
                   const db_params *p, db_out *out, size_t nout, int *has_row, int64_t *rows,
                   sqlease_error *err);
int sqle_db_run(sqlease_db *db, const sqle_stmt *st, const char *sql, const db_params *p,
                db_out *out, size_t nout, int *has_row, int64_t *rows, sqlease_error *err);
/* A generated statement through sqle_db_exec_rows_by. */
int sqle_db_run_rows_by(sqlease_db *db, int64_t deadline, const sqle_stmt *st, const char *sql,
                        const db_params *p, db_out *out, size_t nout, size_t max_rows,
                        size_t *nrows, sqlease_error *err);

/* The ODBC implementation of the port (odbc.c).  `conn` is a DSN name or
 * a connection string; `dialect_key` NULL means detect from
 * SQL_DBMS_NAME.  sqle_odbc_new makes an instance without connecting (it
 * checks the arguments and settles the connection string, with the
 * driver's socket bounds added); sqle_odbc_open also connects, on the calling
 * thread. */
extern const db_ops sqle_odbc_ops;
int sqle_odbc_new(void **self, const char *conn, const char *dialect_key,
                  int64_t login_timeout_ms, int64_t query_timeout_ms, sqlease_error *err);
/* The same; with must_exist, the dialect table's must_exist settings are
 * added for the driver too (it must not create a missing database), and a
 * connect that fails on a missing database file says so. */
int sqle_odbc_new_with(void **self, const char *conn, const char *dialect_key,
                       int64_t login_timeout_ms, int64_t query_timeout_ms, int must_exist,
                       sqlease_error *err);
int sqle_odbc_open(void **self, const char *conn, const char *dialect_key,
                   int64_t login_timeout_ms, int64_t query_timeout_ms,
                   sqlease_error *err);
/* The connection string the instance hands the driver (it may hold a
 * password: for tests, never for messages). */
const char *sqle_odbc_conn_string(const void *self);

/* Room for a DSN name (unixODBC's SQL_MAX_DSN_LENGTH is 32; Windows
 * allows longer names in the registry). */
#define SQLE_DSN_NAME_MAX 256

/* The DSN whose odbc.ini section `conn` connects with: `conn` itself when
 * it is a bare name, else the value of its first DSN= key.  Returns 1
 * and fills buf, or 0 (a connection string without DSN=, or a name that
 * does not fit in cap). */
int sqle_odbc_dsn_name(const char *conn, char *buf, size_t cap);

/* The lease settings of the odbc.ini section of the DSN that `conn`
 * names (none when it names no DSN), checked: an invalid value returns
 * SQLEASE_EINVAL naming the key and the DSN.  sqlease_db_open reads them
 * so; the tool also reads them before it can connect (supervise's retry
 * while the database is away).  Free with sqle_dsn_ini_free, also after
 * an error. */
int sqle_dsn_ini_read(const char *conn, sqle_ini *ini, sqlease_error *err);
void sqle_dsn_ini_free(sqle_ini *ini);

/* Read a key from the odbc.ini section of the DSN that `conn` names (a
 * DSN name, or a connection string with DSN=; see sqle_odbc_dsn_name)
 * through the driver manager (SQLGetPrivateProfileString).  Returns 1 and
 * fills buf if the key is set, 0 if it is not or `conn` names no DSN. */
int sqle_odbc_dsn_setting(const char *conn, const char *key, char *buf, size_t cap);

#endif
