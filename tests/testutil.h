/*
 * testutil.h -- shared fixtures for the CUnit suites: a scratch directory,
 * the DSN under test, unique table names, a fault-injecting database port
 * and a polling wait for conditions.
 *
 * The DSN is a parameter: $SQLEASE_TEST_DSN when set (a PostgreSQL or
 * MariaDB server started by ci/), else an SQLite file in the scratch
 * directory through the real SQLite ODBC driver.
 */
#ifndef SQLEASE_TESTUTIL_H
#define SQLEASE_TESTUTIL_H

#include <stdint.h>

#include <CUnit/Basic.h>

#include "db.h"
#include "sqlease.h"

/* Scratch directory for this test process (created on first use, removed
 * by tu_cleanup). */
const char *tu_dir(void);
/* The connection string under test. */
const char *tu_dsn(void);
/* A table name unique to this process and call: "tu_<pid>_<n>". */
const char *tu_table(void);
/* Open the DSN under test; fails the test (and returns NULL) on error. */
sqlease_db *tu_open(void);
/* Migrate `table` with one lease name; returns the status. */
int tu_migrate(sqlease_db *db, const char *table, const char *name);
/* Drop a table made by a test (ignores errors). */
void tu_drop(sqlease_db *db, const char *table);
/* Run a statement with no parameters; returns the status. */
int tu_sql(sqlease_db *db, const char *sql, int64_t *rows);
/* Make the database slow for everyone else: a transaction on `locker`
 * holding the SQLite file (BEGIN EXCLUSIVE), or on a server the row
 * `name` of `table` (an UPDATE in an open transaction).  Returns the
 * status; tu_lock_end ends it (ROLLBACK). */
int tu_lock_begin(sqlease_db *locker, const char *table, const char *name);
int tu_lock_end(sqlease_db *locker);
/* Options with short timings: ttl, heartbeat, deadline, retry in ms; the
 * holder history off (test_history.c turns it on). */
void tu_options(sqlease_options *o, const char *table, const char *name, const char *owner,
                int64_t ttl, int64_t heartbeat, int64_t deadline, int64_t retry);
/* Poll cond(arg) every 5 ms until it is true or timeout_ms passes.
 * Returns 1 if it became true. */
int tu_await(int (*cond)(void *), void *arg, int64_t timeout_ms);

/* The log sink tu_open, tu_faulty_open and tu_options install: lines are
 * kept (not printed, so expected errors do not clutter the run) for
 * tu_log_has to search; SQLEASE_TEST_LOG=1 also prints them. */
void tu_log_sink(void *userdata, int level, const char *line);
/* 1 if a line logged since the last tu_log_clear contains needle. */
int tu_log_has(const char *needle);
/* Wait up to timeout_ms for such a line: for lines a library thread writes
 * after the event a test awaited (a stop is logged after on_stopped
 * returns, so that a slow log sink never delays the stop). */
int tu_await_log(const char *needle, int64_t timeout_ms);
void tu_log_clear(void);

/* ---- fault injection around the real ODBC port ------------------- */

enum tu_fault {
    TU_FAULT_NONE = 0,
    TU_FAULT_HANG,        /* every exec blocks until the mode changes */
    TU_FAULT_CONNECT,     /* every exec fails with SQLEASE_ECONNECT */
    TU_FAULT_ZERO_CLOCK,  /* statements run, int64 results read as 0 */
    TU_FAULT_DELAY,       /* every exec sleeps delay_ms first */
    TU_FAULT_HANG_ONCE,   /* the next exec blocks until the mode changes;
                             every other one runs normally */
    TU_FAULT_HANG_CONNECT /* connections read as dropped, and every
                             connect blocks until the mode changes (a
                             server that accepts and never answers) */
};

typedef struct tu_faulty tu_faulty;
/* The query timeout the faulty handle reports to the supervisor. */
#define TU_FAULTY_QUERY_TIMEOUT_MS 1000
/* Open the DSN under test behind a fault injector.  *db is a normal
 * handle; tu_fault_set changes what its statements do. */
tu_faulty *tu_faulty_open(sqlease_db **db);
/* The same with the handle's query and login timeouts set to qt_ms. */
tu_faulty *tu_faulty_open_qt(sqlease_db **db, int64_t qt_ms);
void tu_fault_set(tu_faulty *f, int mode, int64_t delay_ms);
/* Number of execs currently blocked in TU_FAULT_HANG. */
int tu_fault_hung(tu_faulty *f);
/* Drop the test's hold on the injector (after sqlease_db_close); ports
 * still alive keep its state until they end. */
void tu_faulty_free(tu_faulty *f);
/* Single out statements: while `needle` is set (NULL clears it), an exec
 * whose SQL contains it gets `mode` (TU_FAULT_NONE, _HANG or _CONNECT)
 * instead of the mode tu_fault_set gave, and is counted. */
void tu_fault_match(tu_faulty *f, const char *needle, int mode);
/* The same for the one statement whose SQL is exactly `sql` (the
 * clock's read, say, which other statements contain). */
void tu_fault_match_exact(tu_faulty *f, const char *sql, int mode);
/* Execs that matched the needle since it was set; *last_at (may be NULL)
 * gets the mono ms at which the last one began (-1 if none). */
int tu_fault_matched(tu_faulty *f, int64_t *last_at);

/* 1 if the process is gone, or a zombie (not ours to reap, and doing no
 * work: where PID 1 does not reap orphans it never goes away). */
int tu_pid_gone(long pid);

/* A test part that cannot run here (a tool missing): says why on stderr.
 * Under CI=true it is a failure instead, since CI installs everything the
 * suite uses and a skip there would hide a missing package. */
void tu_skip(const char *why);

/* Register the suites (via add) and run them in basic mode; returns the
 * process exit status (0 only when every test passed). */
int tu_main(void (*add)(void));
/* Remove the scratch directory (after every handle is closed). */
void tu_cleanup(void);

#endif
