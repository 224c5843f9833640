/*
 * db.h -- the database handle (db.c) that the lease and supervisor code
 * use: statements with `?` markers run on a port instance (port.h) by a
 * worker thread of the handle, each caller bounded by its deadline.
 *
 * Everything above this line of the stack (lease.c, migrate.c,
 * supervisor.c) speaks in SQL text, int64 and text values, rows affected
 * and fetched rows.  Everything below it is a port: odbc.c (odbc.h), or
 * the simulator's database (tests/sim/simdb.c).  db.c knows no port by
 * name; db_open.c opens a handle over the ODBC one.
 */
#ifndef SQLEASE_DB_H
#define SQLEASE_DB_H

#include <stddef.h>
#include <stdint.h>

#include "sqlease.h"
#include "platform.h"
#include "dialect.h"  /* the dialect table (generated) and its lookup */
#include "options.h"
#include "port.h"


/* The lease statements with {table} substituted, shared by every lease of
 * one table on a handle: built by the first lease of the table, freed with
 * the handle (a lease must not outlive its handle).  Ten thousand leases
 * of one table keep one copy of the texts, not ten thousand. */
typedef struct sqle_table_sql {
    struct sqle_table_sql *next;
    const sqle_dialect *d;
    char *table;
    char *acquire, *take_watched, *renew, *release, *release_force, *repair, *status, *fence;
    char *take_fire;
    char *seed, *handoff_request, *handoff_cancel, *handoff, *ready_list;
} sqle_table_sql;

/* The fire ledger's statements (fire.c) with {table} and {fire_table}
 * substituted, per pair of tables and dialect, shared and freed the same
 * way. */
typedef struct sqle_fire_sql {
    struct sqle_fire_sql *next;
    const sqle_dialect *d;
    char *table, *fire_table;
    char *claim, *reclaim, *end, *record, *abandon, *last, *read, *list, *prune, *done;
} sqle_fire_sql;

/* The holder history's statements (history.c) with {table} and
 * {history_table} substituted, per pair of tables and dialect, shared and
 * freed the same way; and what the handle knows of that history table:
 * missing until `quiet_until` (sqle_mono_ms; 0: not known missing), and
 * whether that was said.  The two fields are guarded by the handle's m. */
typedef struct sqle_hist_sql {
    struct sqle_hist_sql *next;
    const sqle_dialect *d;
    char *table, *history_table;
    char *start, *expire, *end, *force, *list, *prune;
    int64_t quiet_until;
    int warned;
} sqle_hist_sql;

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
    sqle_fire_sql *fire_sql;       /* per pair of tables and dialect */
    sqle_hist_sql *hist_sql;       /* per pair of tables and dialect */
    struct sqle_engine *engine;    /* the supervisors' threads (engine.c), NULL
                                      while the handle has no supervisor */
    int closing;
    /* The test-only seam's statement observer (seam.h), or NULL. */
    void (*observe)(void *ud, const char *sql);
    void *observe_ud;
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
 * and a statement still in the driver is abandoned with its connection.
 * A deadline the caller gives is kept; with 0, a call begun while
 * connected that must wait for a reconnect (it waited behind a statement
 * that was abandoned) gets the login timeout on top, once, as its bound
 * allows. */
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

/* The fire ledger's statements of the lease table `table` and the fire
 * table `fire_table` in dialect d (shared; valid until sqlease_db_close),
 * or NULL when out of memory.  Both must be validated identifiers. */
const sqle_fire_sql *sqle_db_fire_sql(sqlease_db *db, const sqle_dialect *d, const char *table,
                                      const char *fire_table);

/* The holder history's statements of the lease table `table` and the
 * history table `history_table` in dialect d (shared; valid until
 * sqlease_db_close), or NULL when out of memory.  Both must be validated
 * identifiers. */
sqle_hist_sql *sqle_db_hist_sql(sqlease_db *db, const sqle_dialect *d, const char *table,
                                const char *history_table);

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
    /* The fire ledger's (fire.c). */
    const char *job;
    int64_t fire_at_ms;
    const char *state;
    int64_t attempt;
    const char *host;
    int64_t has_exit;   /* 1: exit_status is bound as the exit status */
    int64_t exit_status;
    const char *note;   /* NULL: SQL NULL */
    int64_t since_ms;
    int64_t before_ms;
    /* The holder history's (history.c). */
    int64_t pid;
    int64_t ended_at_ms;
    /* The hand-over's (lease.c). */
    int64_t priority;   /* the taker's priority, written by every take */
    const char *target; /* whom a hand-over is for */
    int64_t reserve_ms; /* how long a hand-over reserves the row */
    const char *prefix; /* the start of the names ready_list reads */
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

#endif
