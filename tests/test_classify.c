/*
 * test_classify.c -- the failure classifier (src/classify.c) on
 * diagnostics recorded from the real drivers, and on the rules of the
 * dialect table.  Needs no database.
 *
 * Each row of `recorded` is one failure provoked through sqlease's own
 * ODBC port (so the record is the one odbc.c picks: the first that is not
 * a warning, else the first; messages as it redacts them), against the
 * servers ci/postgres.sh and ci/mariadb.sh start and an SQLite file:
 *
 *   - connection refused: Port=1 in the connection string (FreeTDS too);
 *   - login refused, unknown database: a wrong password, Database=nothere;
 *   - missing table, missing column, syntax error, unique violation;
 *   - statement timeout: a 1 s query timeout on pg_sleep(4) / BENCHMARK(...),
 *     and on an UPDATE waiting for a row another transaction locked;
 *   - lock wait timeout: lock_timeout = 1000 / innodb_lock_wait_timeout = 1;
 *   - serialization failure: a REPEATABLE READ transaction updating a row
 *     another connection changed; deadlock: two transactions, two rows,
 *     opposite order;
 *   - session killed: pg_terminate_backend / KILL CONNECTION from another
 *     connection, then a statement; idle session closed:
 *     idle_session_timeout = 1000 / wait_timeout = 1, 3 s idle;
 *   - server stopped mid-session, then down at connect: the ci script's
 *     stop command (pg_ctl stop -m fast, mariadb-admin shutdown);
 *   - server frozen: SIGSTOP to every server process; a statement, and a
 *     connect, with a 2 s login timeout;
 *   - packets dropped: an nftables table dropping the server port both
 *     ways, mid-session and at connect;
 *   - SQLite: another connection in BEGIN EXCLUSIVE (a write and a read),
 *     NoCreat=1 on a missing file, a missing directory, a file the
 *     process may not write (an unprivileged user, a root-owned 0644 file);
 *   - a privilege missing: CREATE TABLE and UPDATE by a role that may
 *     only log in (and SELECT), as tests/test_privileges.c runs them;
 *   - the driver manager: an unknown DSN, an unknown driver, a driver
 *     library path that does not exist.
 *
 * Versions: psqlODBC 13.02 with PostgreSQL 15, MariaDB Connector/ODBC
 * 3.1.15 with MariaDB 10.11, sqliteodbc 0.9998 with SQLite 3.40, FreeTDS
 * 1.3, unixODBC 2.3.11 (Debian 12).  Two cases gave no diagnostic to
 * record: sqliteodbc ignores the query timeout (a statement that runs too
 * long is ended by the handle's own bound in db.c, SQLEASE_ETIMEOUT with
 * no SQLSTATE), and psqlODBC waits on a frozen server until it runs again
 * (also left to the handle's bound).  MariaDB reports an expired query
 * timeout as a lost connection: the driver's READ_TIMEOUT, which sqlease
 * sets to the query timeout, ends the read first.
 *
 * `status` is what the library returned for the case before the
 * classifier existed (SQLEASE_ENOTABLE for the missing SQLite file comes
 * from odbc.c's look at the file system, after the classifier said
 * "cannot connect").  Connect rows classify with no dialect, as the first
 * connect does.
 */
#include <stdio.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "classify.h"
#include "internal.h"

typedef struct recorded_diag {
    const char *driver;
    const char *what;
    int stage;           /* SQLEASE_AT_STATEMENT or SQLEASE_AT_CONNECT */
    const char *sqlstate;
    long native;
    const char *message;
    sqle_failure kind;
    int status;
} recorded_diag;

#define STMT SQLEASE_AT_STATEMENT
#define CONN SQLEASE_AT_CONNECT

static const recorded_diag recorded[] = {
    /* ---- unixODBC's driver manager ---- */
    { "unixodbc", "unknown DSN", CONN, "IM002", 0,
      "[unixODBC][Driver Manager]Data source name not found and no default driver specified",
      SQLEASE_FAIL_CONFIG, SQLEASE_ECONNECT },
    { "unixodbc", "unknown driver", CONN, "01000", 0,
      "[unixODBC][Driver Manager]Can't open lib 'NoSuchDriver' : file not found",
      SQLEASE_FAIL_CONFIG, SQLEASE_ECONNECT },
    { "unixodbc", "driver library missing", CONN, "01000", 0,
      "[unixODBC][Driver Manager]Can't open lib '/nonexistent/libnosuch.so' : file not found",
      SQLEASE_FAIL_CONFIG, SQLEASE_ECONNECT },

    /* ---- FreeTDS (sqlserver) ---- */
    { "freetds", "connection refused", CONN, "08S01", 20009,
      "[FreeTDS][SQL Server]Unable to connect: Adaptive Server is unavailable or does not exist",
      SQLEASE_FAIL_CONNECT, SQLEASE_ECONNECT },

    /* ---- sqliteodbc (sqlite) ---- */
    { "sqliteodbc", "missing table", STMT, "HY000", 1,
      "[SQLite]no such table: no_such_table (1)", SQLEASE_FAIL_NO_TABLE, SQLEASE_ENOTABLE },
    { "sqliteodbc", "missing column", STMT, "HY000", 1,
      "[SQLite]no such column: no_such_column (1)", SQLEASE_FAIL_ERROR, SQLEASE_EDB },
    { "sqliteodbc", "syntax error", STMT, "HY000", 1,
      "[SQLite]near \"SELEC\": syntax error (1)", SQLEASE_FAIL_ERROR, SQLEASE_EDB },
    { "sqliteodbc", "table exists", STMT, "HY000", 1,
      "[SQLite]table t already exists (1)", SQLEASE_FAIL_ERROR, SQLEASE_EDB },
    { "sqliteodbc", "unique violation", STMT, "HY000", 19,
      "[SQLite]UNIQUE constraint failed: t.a (19)", SQLEASE_FAIL_ERROR, SQLEASE_EDB },
    { "sqliteodbc", "locked file (a write)", STMT, "HY000", 5,
      "[SQLite]database is locked (5)", SQLEASE_FAIL_LOCKED, SQLEASE_EDB },
    { "sqliteodbc", "locked file (a read)", STMT, "HY000", 5,
      "[SQLite]database is locked (5)", SQLEASE_FAIL_LOCKED, SQLEASE_EDB },
    { "sqliteodbc", "file not writable by the process (a take)", STMT, "HY000", 8,
      "[SQLite]attempt to write a readonly database (8)", SQLEASE_FAIL_PRIVILEGE, SQLEASE_EDB },
    { "sqliteodbc", "database file missing (NoCreat=1)", CONN, "HY000", 14,
      "[SQLite]connect failed", SQLEASE_FAIL_CONNECT, SQLEASE_ECONNECT },
    { "sqliteodbc", "database directory missing", CONN, "HY000", 14,
      "[SQLite]connect failed", SQLEASE_FAIL_CONNECT, SQLEASE_ECONNECT },

    /* ---- psqlODBC (postgres) ---- */
    { "psqlodbc", "connection refused", CONN, "08001", 101,
      "connection to server at \"127.0.0.1\", port 1 failed: Connection refused  Is the server "
      "running on that host and accepting TCP/IP connections?",
      SQLEASE_FAIL_CONNECT, SQLEASE_ECONNECT },
    { "psqlodbc", "login refused (password)", CONN, "08001", 101,
      "connection to server at \"127.0.0.1\", port 57700 failed: FATAL:  password "
      "authentication failed for user \"sqlease\"",
      SQLEASE_FAIL_CONNECT, SQLEASE_ECONNECT },
    { "psqlodbc", "unknown database", CONN, "08001", 101,
      "connection to server at \"127.0.0.1\", port 57700 failed: FATAL:  database "
      "\"no_such_db\" does not exist",
      SQLEASE_FAIL_CONNECT, SQLEASE_ECONNECT },
    { "psqlodbc", "missing table", STMT, "42P01", 1,
      "ERROR: relation \"no_such_table\" does not exist; Error while preparing parameters",
      SQLEASE_FAIL_NO_TABLE, SQLEASE_ENOTABLE },
    { "psqlodbc", "CREATE TABLE without CREATE on the schema", STMT, "42501", 1,
      "ERROR: permission denied for schema public; Error while executing the query",
      SQLEASE_FAIL_PRIVILEGE, SQLEASE_EDB },
    { "psqlodbc", "UPDATE without the UPDATE privilege", STMT, "42501", 1,
      "ERROR: permission denied for table lp_t; Error while executing the query",
      SQLEASE_FAIL_PRIVILEGE, SQLEASE_EDB },
    { "psqlodbc", "missing column", STMT, "42703", 1,
      "ERROR: column \"no_such_column\" does not exist; Error while preparing parameters",
      SQLEASE_FAIL_ERROR, SQLEASE_EDB },
    { "psqlodbc", "syntax error", STMT, "42601", 1,
      "ERROR: syntax error at or near \"SELEC\"; Error while preparing parameters",
      SQLEASE_FAIL_ERROR, SQLEASE_EDB },
    { "psqlodbc", "statement timeout", STMT, "57014", 1,
      "ERROR: canceling statement due to statement timeout; Error while executing the query",
      SQLEASE_FAIL_TIMEOUT, SQLEASE_ETIMEOUT },
    { "psqlodbc", "statement timeout (row lock)", STMT, "57014", 1,
      "ERROR: canceling statement due to statement timeout; Error while executing the query",
      SQLEASE_FAIL_TIMEOUT, SQLEASE_ETIMEOUT },
    { "psqlodbc", "unique violation", STMT, "23505", 1,
      "ERROR: duplicate key value violates unique constraint \"cap_t_pkey\" DETAIL: Key "
      "(id)=(1) already exists.; Error while executing the query",
      SQLEASE_FAIL_ERROR, SQLEASE_EDB },
    { "psqlodbc", "serialization failure", STMT, "40001", 1,
      "ERROR: could not serialize access due to concurrent update; Error while executing the "
      "query",
      SQLEASE_FAIL_SERIALIZATION, SQLEASE_EDB },
    { "psqlodbc", "deadlock", STMT, "40P01", 1,
      "ERROR: deadlock detected DETAIL: Process 2271 waits for ShareLock on transaction 733; "
      "blocked by process 2272. Process 2272 waits for ShareLock on transaction 732; blocked by "
      "process 2271.; Error while executing the query",
      SQLEASE_FAIL_SERIALIZATION, SQLEASE_EDB },
    { "psqlodbc", "lock wait timeout", STMT, "55P03", 1,
      "ERROR: canceling statement due to lock timeout; Error while executing the query",
      SQLEASE_FAIL_ERROR, SQLEASE_EDB },
    { "psqlodbc", "session killed by an administrator", STMT, "HY000", 1,
      "FATAL:  terminating connection due to administrator command server closed the "
      "connection unexpectedly  This probably means the server terminated abnormally  before "
      "or while processing the request. ; Error while preparing parameters",
      SQLEASE_FAIL_CONN_LOST, SQLEASE_ECONNECT },
    { "psqlodbc", "idle session closed by the server", STMT, "HY000", 1,
      "FATAL:  terminating connection due to idle-session timeout server closed the "
      "connection unexpectedly  This probably means the server terminated abnormally  before "
      "or while processing the request. ; Error while preparing parameters",
      SQLEASE_FAIL_CONN_LOST, SQLEASE_ECONNECT },
    { "psqlodbc", "server stopped mid-session", STMT, "08S01", 35,
      "FATAL:  terminating connection due to administrator command server closed the "
      "connection unexpectedly  This probably means the server terminated abnormally  before "
      "or while processing the request. ; The connection has been lost",
      SQLEASE_FAIL_CONN_LOST, SQLEASE_ECONNECT },
    { "psqlodbc", "server down at connect", CONN, "08001", 101,
      "connection to server at \"127.0.0.1\", port 57700 failed: Connection refused  Is the "
      "server running on that host and accepting TCP/IP connections?",
      SQLEASE_FAIL_CONNECT, SQLEASE_ECONNECT },
    { "psqlodbc", "connect to a frozen server", CONN, "08001", 101,
      "connection to server at \"127.0.0.1\", port 57700 failed: timeout expired",
      SQLEASE_FAIL_CONNECT, SQLEASE_ECONNECT },
    { "psqlodbc", "packets dropped mid-session (read timeout)", STMT, "08S01", 35,
      "could not receive data from server: Connection timed out ; The connection has been lost",
      SQLEASE_FAIL_CONN_LOST, SQLEASE_ECONNECT },
    { "psqlodbc", "connect while packets are dropped", CONN, "08001", 101,
      "connection to server at \"127.0.0.1\", port 57700 failed: timeout expired",
      SQLEASE_FAIL_CONNECT, SQLEASE_ECONNECT },

    /* ---- MariaDB Connector/ODBC (mysql) ---- */
    { "maodbc", "connection refused", CONN, "HY000", 2002,
      "[ma-3.1.15]Can't connect to server on '127.0.0.1' (115)",
      SQLEASE_FAIL_CONNECT, SQLEASE_ECONNECT },
    { "maodbc", "login refused (password)", CONN, "28000", 1045,
      "[ma-3.1.15]Access denied for user 'sqlease'@'127.0.0.1' (using password: YES)",
      SQLEASE_FAIL_CONNECT, SQLEASE_ECONNECT },
    { "maodbc", "unknown database", CONN, "42000", 1044,
      "[ma-3.1.15]Access denied for user 'sqlease'@'127.0.0.1' to database 'no_such_db'",
      SQLEASE_FAIL_CONNECT, SQLEASE_ECONNECT },
    { "maodbc", "missing table", STMT, "42S02", 1146,
      "[ma-3.1.15][10.11.19-MariaDB-0+deb12u1]Table 'sqlease.no_such_table' doesn't exist",
      SQLEASE_FAIL_NO_TABLE, SQLEASE_ENOTABLE },
    { "maodbc", "CREATE TABLE without CREATE", STMT, "42000", 1142,
      "[ma-3.1.15][10.11.19-MariaDB-0+deb12u1]CREATE command denied to user "
      "'sqlease_lease'@'127.0.0.1' for table `sqlease`.`lp_t`",
      SQLEASE_FAIL_PRIVILEGE, SQLEASE_EDB },
    { "maodbc", "UPDATE without the UPDATE privilege", STMT, "42000", 1142,
      "[ma-3.1.15][10.11.19-MariaDB-0+deb12u1]UPDATE command denied to user "
      "'sqlease_lease'@'127.0.0.1' for table `sqlease`.`lp_t`",
      SQLEASE_FAIL_PRIVILEGE, SQLEASE_EDB },
    { "maodbc", "missing column", STMT, "42S22", 1054,
      "[ma-3.1.15][10.11.19-MariaDB-0+deb12u1]Unknown column 'no_such_column' in 'SELECT'",
      SQLEASE_FAIL_ERROR, SQLEASE_EDB },
    { "maodbc", "syntax error", STMT, "42000", 1064,
      "[ma-3.1.15][10.11.19-MariaDB-0+deb12u1]You have an error in your SQL syntax; check the "
      "manual that corresponds to your MariaDB server version for the right syntax to use near "
      "'SELEC 1' at line 1",
      SQLEASE_FAIL_ERROR, SQLEASE_EDB },
    { "maodbc", "statement timeout", STMT, "08S01", 2013,
      "[ma-3.1.15][10.11.19-MariaDB-0+deb12u1]Lost connection to server during query",
      SQLEASE_FAIL_CONN_LOST, SQLEASE_ECONNECT },
    { "maodbc", "statement timeout (row lock)", STMT, "08S01", 2013,
      "[ma-3.1.15][10.11.19-MariaDB-0+deb12u1]Lost connection to server during query",
      SQLEASE_FAIL_CONN_LOST, SQLEASE_ECONNECT },
    { "maodbc", "unique violation", STMT, "23000", 1062,
      "[ma-3.1.15][10.11.19-MariaDB-0+deb12u1]Duplicate entry '1' for key 'PRIMARY'",
      SQLEASE_FAIL_ERROR, SQLEASE_EDB },
    { "maodbc", "deadlock", STMT, "40001", 1213,
      "[ma-3.1.15][10.11.19-MariaDB-0+deb12u1]Deadlock found when trying to get lock; try "
      "restarting transaction",
      SQLEASE_FAIL_SERIALIZATION, SQLEASE_EDB },
    /* A Galera node: a take that lost to a take certified on another
     * node first (a certification failure or a brute-force abort) reads
     * as a deadlock, so as a lost race; a node out of the primary
     * component refuses statements as a broken link would. */
    { "maodbc", "galera certification conflict", STMT, "40001", 1213,
      "[ma-3.1.15][10.11.19-MariaDB-0+deb12u1]Deadlock found when trying to get lock; try "
      "restarting transaction",
      SQLEASE_FAIL_SERIALIZATION, SQLEASE_EDB },
    { "maodbc", "galera node not in the primary component", STMT, "08S01", 1047,
      "[ma-3.1.15][10.11.19-MariaDB-0+deb12u1]WSREP has not yet prepared node for application "
      "use",
      SQLEASE_FAIL_CONN_LOST, SQLEASE_ECONNECT },
    { "maodbc", "lock wait timeout", STMT, "HY000", 1205,
      "[ma-3.1.15][10.11.19-MariaDB-0+deb12u1]Lock wait timeout exceeded; try restarting "
      "transaction",
      SQLEASE_FAIL_ERROR, SQLEASE_EDB },
    { "maodbc", "session killed by an administrator", STMT, "08S01", 2013,
      "[ma-3.1.15][10.11.19-MariaDB-0+deb12u1]Lost connection to server during query",
      SQLEASE_FAIL_CONN_LOST, SQLEASE_ECONNECT },
    { "maodbc", "idle session closed by the server", STMT, "08S01", 2006,
      "[ma-3.1.15][10.11.19-MariaDB-0+deb12u1]Server has gone away",
      SQLEASE_FAIL_CONN_LOST, SQLEASE_ECONNECT },
    { "maodbc", "server stopped mid-session", STMT, "08S01", 2013,
      "[ma-3.1.15][10.11.19-MariaDB-0+deb12u1]Lost connection to server during query",
      SQLEASE_FAIL_CONN_LOST, SQLEASE_ECONNECT },
    { "maodbc", "server down at connect", CONN, "HY000", 2002,
      "[ma-3.1.15]Can't connect to server on '127.0.0.1' (115)",
      SQLEASE_FAIL_CONNECT, SQLEASE_ECONNECT },
    { "maodbc", "server frozen (read timeout)", STMT, "08S01", 2013,
      "[ma-3.1.15][10.11.19-MariaDB-0+deb12u1]Lost connection to server during query",
      SQLEASE_FAIL_CONN_LOST, SQLEASE_ECONNECT },
    { "maodbc", "connect to a frozen server", CONN, "08S01", 2013,
      "[ma-3.1.15]Lost connection to server at 'handshake: reading initial communication "
      "packet', system error: 110",
      SQLEASE_FAIL_CONNECT, SQLEASE_ECONNECT },
    { "maodbc", "packets dropped mid-session (read timeout)", STMT, "08S01", 2013,
      "[ma-3.1.15][10.11.19-MariaDB-0+deb12u1]Lost connection to server during query",
      SQLEASE_FAIL_CONN_LOST, SQLEASE_ECONNECT },
    { "maodbc", "connect while packets are dropped", CONN, "HY000", 2002,
      "[ma-3.1.15]Can't connect to server on '127.0.0.1' (110)",
      SQLEASE_FAIL_CONNECT, SQLEASE_ECONNECT },
};

/* The dialect a driver's statements run under. */
static const sqle_dialect *dialect_of(const char *driver)
{
    if (strcmp(driver, "psqlodbc") == 0)
        return sqle_dialect_find("postgres");
    if (strcmp(driver, "maodbc") == 0)
        return sqle_dialect_find("mysql");
    if (strcmp(driver, "sqliteodbc") == 0)
        return sqle_dialect_find("sqlite");
    if (strcmp(driver, "freetds") == 0)
        return sqle_dialect_find("sqlserver");
    return NULL;
}

static sqle_failure classify3(const char *state, const char *msg, const char *dialect,
                              int stage)
{
    sqle_diag d;

    d.sqlstate = state;
    d.native = 0;
    d.message = msg;
    return sqle_classify(&d, dialect != NULL ? sqle_dialect_find(dialect) : NULL, stage);
}

/* Every recorded diagnostic is the kind, and gives the status, it gave
 * before; a connect is classified the same whether or not the dialect is
 * known yet (a first connect, or a reconnect). */
static void test_recorded(void)
{
    size_t i;
    int bad = 0;

    for (i = 0; i < sizeof recorded / sizeof recorded[0]; i++) {
        const recorded_diag *r = &recorded[i];
        const sqle_dialect *dl = r->stage == CONN ? NULL : dialect_of(r->driver);
        sqle_diag d;
        sqle_failure got, again;

        d.sqlstate = r->sqlstate;
        d.native = r->native;
        d.message = r->message;
        got = sqle_classify(&d, dl, r->stage);
        again = sqle_classify(&d, dialect_of(r->driver), r->stage);
        if (got != r->kind || sqle_failure_status(got) != r->status || again != got) {
            fprintf(stderr, "\n  %s, %s: [%s] %ld %s: got %s (%s), %s with the dialect; "
                    "expected %s (%s)", r->driver, r->what, r->sqlstate, r->native, r->message,
                    sqle_failure_name(got), sqlease_status_name(sqle_failure_status(got)),
                    sqle_failure_name(again), sqle_failure_name(r->kind),
                    sqlease_status_name(r->status));
            bad++;
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(sizeof recorded / sizeof recorded[0] >= 50);
}

/* A dialect's phrases and SQLSTATEs apply to it only; [common]'s to all,
 * also before the dialect is known. */
static void test_dialect_rules_stay_with_their_dialect(void)
{
    static const char *const killed =
        "FATAL:  terminating connection due to administrator command server closed the "
        "connection unexpectedly";

    CU_ASSERT_EQUAL(classify3("HY000", killed, "postgres", STMT), SQLEASE_FAIL_CONN_LOST);
    CU_ASSERT_EQUAL(classify3("HY000", killed, NULL, STMT), SQLEASE_FAIL_ERROR);
    CU_ASSERT_EQUAL(classify3("HY000", killed, "sqlite", STMT), SQLEASE_FAIL_ERROR);
    CU_ASSERT_EQUAL(classify3("57014", "canceling statement", "postgres", STMT),
                    SQLEASE_FAIL_TIMEOUT);
    CU_ASSERT_EQUAL(classify3("57014", "canceling statement", "mysql", STMT), SQLEASE_FAIL_ERROR);
    CU_ASSERT_EQUAL(classify3("40P01", "deadlock detected", "postgres", STMT),
                    SQLEASE_FAIL_SERIALIZATION);
    CU_ASSERT_EQUAL(classify3("40P01", "deadlock detected", NULL, STMT), SQLEASE_FAIL_ERROR);
    CU_ASSERT_EQUAL(classify3("HY000", "[SQLite]database is locked (5)", "sqlite", STMT),
                    SQLEASE_FAIL_LOCKED);
    CU_ASSERT_EQUAL(classify3("HY000", "[SQLite]database is locked (5)", NULL, STMT),
                    SQLEASE_FAIL_ERROR);
    /* [common]'s: ODBC's and the driver manager's. */
    CU_ASSERT_EQUAL(classify3("08S01", "", NULL, STMT), SQLEASE_FAIL_CONN_LOST);
    CU_ASSERT_EQUAL(classify3("HYT00", "Timeout expired", NULL, STMT), SQLEASE_FAIL_TIMEOUT);
    CU_ASSERT_EQUAL(classify3("HYT01", "Connection timeout expired", NULL, CONN),
                    SQLEASE_FAIL_TIMEOUT);
    CU_ASSERT_EQUAL(classify3("40001", "", NULL, STMT), SQLEASE_FAIL_SERIALIZATION);
    CU_ASSERT_EQUAL(classify3("42S02", "", NULL, STMT), SQLEASE_FAIL_NO_TABLE);
    CU_ASSERT_EQUAL(classify3("HY000", "Communication link failure", NULL, STMT),
                    SQLEASE_FAIL_CONN_LOST);
    CU_ASSERT_EQUAL(classify3("IM003", "Specified driver could not be loaded", NULL, CONN),
                    SQLEASE_FAIL_CONFIG);
}

/* A missing table's phrase counts only under a generic SQLSTATE or none:
 * PostgreSQL's missing column says "does not exist" too. */
static void test_missing_table_phrase_needs_generic_state(void)
{
    CU_ASSERT_EQUAL(classify3("42703", "column \"x\" does not exist", "postgres", STMT),
                    SQLEASE_FAIL_ERROR);
    CU_ASSERT_EQUAL(classify3("HY000", "relation \"x\" does not exist", "postgres", STMT),
                    SQLEASE_FAIL_NO_TABLE);
    CU_ASSERT_EQUAL(classify3("", "relation \"x\" does not exist", "postgres", STMT),
                    SQLEASE_FAIL_NO_TABLE);
    CU_ASSERT_EQUAL(classify3(NULL, "relation \"x\" does not exist", "postgres", STMT),
                    SQLEASE_FAIL_NO_TABLE);
    CU_ASSERT_EQUAL(classify3("S1000", "Table 't' doesn't exist", "mysql", STMT),
                    SQLEASE_FAIL_NO_TABLE);
    CU_ASSERT_EQUAL(classify3("42000", "Invalid object name 'dbo.t'.", "sqlserver", STMT),
                    SQLEASE_FAIL_NO_TABLE);
    CU_ASSERT_EQUAL(classify3("42S22", "Unknown column 'x' doesn't exist", "mysql", STMT),
                    SQLEASE_FAIL_ERROR);
}

/* A two-character entry is a class; SQLSTATEs otherwise match whole. */
static void test_sqlstate_matching(void)
{
    CU_ASSERT_EQUAL(classify3("08001", "", NULL, STMT), SQLEASE_FAIL_CONN_LOST);
    CU_ASSERT_EQUAL(classify3("08003", "", NULL, STMT), SQLEASE_FAIL_CONN_LOST);
    CU_ASSERT_EQUAL(classify3("0", "", NULL, STMT), SQLEASE_FAIL_ERROR);
    CU_ASSERT_EQUAL(classify3("80801", "", NULL, STMT), SQLEASE_FAIL_ERROR);
    CU_ASSERT_EQUAL(classify3("HYT0", "", NULL, STMT), SQLEASE_FAIL_ERROR);
    CU_ASSERT_EQUAL(classify3("HYT000", "", NULL, STMT), SQLEASE_FAIL_ERROR);
    CU_ASSERT_EQUAL(classify3("40001X", "", NULL, STMT), SQLEASE_FAIL_ERROR);
    CU_ASSERT_EQUAL(classify3("IM010", "", NULL, CONN), SQLEASE_FAIL_CONFIG);
    /* Phrases ignore case, nothing else. */
    CU_ASSERT_EQUAL(classify3("HY000", "SERVER HAS GONE AWAY", "mysql", STMT),
                    SQLEASE_FAIL_CONN_LOST);
    CU_ASSERT_EQUAL(classify3("HY000", "server has  gone away", "mysql", STMT),
                    SQLEASE_FAIL_ERROR);
}

/* Which kind wins when a diagnostic fits two; what a connect can be. */
static void test_order_and_stage(void)
{
    /* A timeout wins over everything. */
    CU_ASSERT_EQUAL(classify3("HYT00", "Lost connection to server", "mysql", STMT),
                    SQLEASE_FAIL_TIMEOUT);
    CU_ASSERT_EQUAL(classify3("57014", "terminating connection", "postgres", STMT),
                    SQLEASE_FAIL_TIMEOUT);
    /* A lost connection over a missing table or a lost race. */
    CU_ASSERT_EQUAL(classify3("42S02", "server has gone away", "mysql", STMT),
                    SQLEASE_FAIL_CONN_LOST);
    CU_ASSERT_EQUAL(classify3("40001", "Lost connection", "mysql", STMT),
                    SQLEASE_FAIL_CONN_LOST);
    /* A missing table over a lock. */
    CU_ASSERT_EQUAL(classify3("HY000", "no such table: t; database is locked", "sqlite", STMT),
                    SQLEASE_FAIL_NO_TABLE);
    /* At connect: a timeout, the driver manager, or "cannot connect"; a
     * statement's kinds do not apply. */
    CU_ASSERT_EQUAL(classify3("42S02", "doesn't exist", "mysql", CONN), SQLEASE_FAIL_CONNECT);
    CU_ASSERT_EQUAL(classify3("40001", "", NULL, CONN), SQLEASE_FAIL_CONNECT);
    CU_ASSERT_EQUAL(classify3("08S01", "Lost connection", "mysql", CONN), SQLEASE_FAIL_CONNECT);
    CU_ASSERT_EQUAL(classify3("", "", NULL, CONN), SQLEASE_FAIL_CONNECT);
    /* The driver manager's refusals are not statements' errors. */
    CU_ASSERT_EQUAL(classify3("IM002", "Data source name not found", NULL, STMT),
                    SQLEASE_FAIL_ERROR);
    /* Nothing to go on. */
    CU_ASSERT_EQUAL(classify3(NULL, NULL, NULL, STMT), SQLEASE_FAIL_ERROR);
    CU_ASSERT_EQUAL(classify3("", "", "postgres", STMT), SQLEASE_FAIL_ERROR);
    CU_ASSERT_EQUAL(sqle_classify(NULL, NULL, STMT), SQLEASE_FAIL_ERROR);
    CU_ASSERT_EQUAL(sqle_classify(NULL, NULL, CONN), SQLEASE_FAIL_CONNECT);
}

/* Each kind's status and name. */
static void test_status_and_name(void)
{
    static const struct { sqle_failure f; int status; const char *name; } kinds[] = {
        { SQLEASE_FAIL_ERROR, SQLEASE_EDB, "error" },
        { SQLEASE_FAIL_TIMEOUT, SQLEASE_ETIMEOUT, "timeout" },
        { SQLEASE_FAIL_CONN_LOST, SQLEASE_ECONNECT, "connection lost" },
        { SQLEASE_FAIL_NO_TABLE, SQLEASE_ENOTABLE, "missing table" },
        { SQLEASE_FAIL_SERIALIZATION, SQLEASE_EDB, "serialization failure" },
        { SQLEASE_FAIL_LOCKED, SQLEASE_EDB, "locked" },
        { SQLEASE_FAIL_CONNECT, SQLEASE_ECONNECT, "cannot connect" },
        { SQLEASE_FAIL_CONFIG, SQLEASE_ECONNECT, "driver or DSN missing" },
    };
    size_t i;

    for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        CU_ASSERT_EQUAL(sqle_failure_status(kinds[i].f), kinds[i].status);
        CU_ASSERT_STRING_EQUAL(sqle_failure_name(kinds[i].f), kinds[i].name);
    }
    CU_ASSERT_STRING_EQUAL(sqle_failure_name((sqle_failure)99), "unknown");
}

/* Code above the port classifies the error the library filled: its
 * SQLSTATE and its message, which quotes the driver's after its own
 * words. */
static void test_classify_error(void)
{
    sqlease_error err;

    sqle_err(&err, SQLEASE_EDB, "40001", 1, "[40001] %s",
             "ERROR: could not serialize access due to concurrent update");
    CU_ASSERT_EQUAL(sqle_classify_error(&err, sqle_dialect_find("postgres"), STMT),
                    SQLEASE_FAIL_SERIALIZATION);
    sqle_err(&err, SQLEASE_ECONNECT, "01000", 0, "cannot connect to '%s': [01000] %s%s",
             "Driver=NoSuch;PWD=***",
             "[unixODBC][Driver Manager]Can't open lib 'NoSuch' : file not found",
             " (is the ODBC driver installed and the DSN defined in odbc.ini?)");
    CU_ASSERT_EQUAL(sqle_classify_error(&err, NULL, CONN), SQLEASE_FAIL_CONFIG);
    sqle_err(&err, SQLEASE_ECONNECT, "08001", 101, "cannot connect to '%s': [08001] %s",
             "DSN=pg", "connection to server at \"127.0.0.1\", port 1 failed");
    CU_ASSERT_EQUAL(sqle_classify_error(&err, NULL, CONN), SQLEASE_FAIL_CONNECT);
    CU_ASSERT_EQUAL(sqle_classify_error(NULL, NULL, STMT), SQLEASE_FAIL_ERROR);
}

/* Every entry of the table's rules classifies as its own kind (with a
 * generic SQLSTATE for a phrase), for every dialect: the data and the
 * classifier agree on what each list means. */
static void test_every_rule_entry(void)
{
    size_t i, j;
    int bad = 0;

    for (i = 0; i <= sqle_dialect_count; i++) {
        const sqle_dialect *dl = i < sqle_dialect_count ? &sqle_dialects[i] : NULL;
        const sqle_failure_rules *r = dl != NULL ? &dl->failures : &sqle_common_failures;
        const struct { const sqle_strings *l; int is_state; int stage; sqle_failure f; }
        lists[] = {
            { &r->timeout_sqlstates, 1, STMT, SQLEASE_FAIL_TIMEOUT },
            { &r->connection_lost_sqlstates, 1, STMT, SQLEASE_FAIL_CONN_LOST },
            { &r->connection_lost_messages, 0, STMT, SQLEASE_FAIL_CONN_LOST },
            { &r->missing_table_sqlstates, 1, STMT, SQLEASE_FAIL_NO_TABLE },
            { &r->missing_table_messages, 0, STMT, SQLEASE_FAIL_NO_TABLE },
            { &r->serialization_sqlstates, 1, STMT, SQLEASE_FAIL_SERIALIZATION },
            { &r->locked_messages, 0, STMT, SQLEASE_FAIL_LOCKED },
            { &r->config_sqlstates, 1, CONN, SQLEASE_FAIL_CONFIG },
            { &r->config_messages, 0, CONN, SQLEASE_FAIL_CONFIG },
        };
        size_t k;

        for (k = 0; k < sizeof lists / sizeof lists[0]; k++) {
            for (j = 0; j < lists[k].l->n; j++) {
                const char *e = lists[k].l->items[j];
                char state[6];
                sqle_diag d;
                sqle_failure got;

                /* A class stands for its members. */
                snprintf(state, sizeof state, "%s%s", e, strlen(e) == 2 ? "XYZ" : "");
                d.sqlstate = lists[k].is_state ? state : "HY000";
                d.native = 0;
                d.message = lists[k].is_state ? "" : e;
                got = sqle_classify(&d, dl, lists[k].stage);
                if (got != lists[k].f) {
                    fprintf(stderr, "\n  %s: '%s' classified as %s, listed as %s",
                            dl != NULL ? dl->key : "[common]", e, sqle_failure_name(got),
                            sqle_failure_name(lists[k].f));
                    bad++;
                }
            }
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    /* The generic SQLSTATEs themselves mean nothing. */
    for (j = 0; j < sqle_common_failures.generic_sqlstates.n; j++)
        CU_ASSERT_EQUAL(classify3(sqle_common_failures.generic_sqlstates.items[j], "", NULL,
                                  STMT), SQLEASE_FAIL_ERROR);
}

int main(void)
{
    CU_pSuite s;
    int failures;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    s = CU_add_suite("classify", NULL, NULL);
    if (s == NULL ||
        CU_add_test(s, "recorded diagnostics of each driver", test_recorded) == NULL ||
        CU_add_test(s, "a dialect's rules stay with it", test_dialect_rules_stay_with_their_dialect)
            == NULL ||
        CU_add_test(s, "a missing table's phrase needs a generic SQLSTATE",
                    test_missing_table_phrase_needs_generic_state) == NULL ||
        CU_add_test(s, "SQLSTATEs, classes and phrases", test_sqlstate_matching) == NULL ||
        CU_add_test(s, "order of the kinds, statement and connect", test_order_and_stage)
            == NULL ||
        CU_add_test(s, "status and name of each kind", test_status_and_name) == NULL ||
        CU_add_test(s, "an error the library filled", test_classify_error) == NULL ||
        CU_add_test(s, "every rule of the table means its kind", test_every_rule_entry) == NULL) {
        fprintf(stderr, "test_classify: %s\n", CU_get_error_msg());
        CU_cleanup_registry();
        return 2;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    if (CU_basic_run_tests() != CUE_SUCCESS) {
        fprintf(stderr, "test_classify: %s\n", CU_get_error_msg());
        CU_cleanup_registry();
        return 2;
    }
    failures = (int)CU_get_number_of_failures();
    CU_cleanup_registry();
    return failures ? 1 : 0;
}
