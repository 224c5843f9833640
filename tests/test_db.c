/*
 * test_db.c -- the database handle's promise that no caller waits on the
 * network past its bound (src/db.c): a statement stuck in the driver is
 * answered with SQLEASE_ETIMEOUT by query timeout + DB_SLACK_MS and its
 * connection abandoned; abandoned connections are capped; what waits
 * behind a stuck statement is served on a fresh connection; a connect to
 * a server that never answers ends by login timeout + DB_SLACK_MS; and
 * the driver's socket settings are added to the connection string unless
 * the user set them.
 *
 * The hangs are injected by the fault port of tests/testutil.c around the
 * real driver under test; the connect test uses a TCP listener of its own
 * that accepts and never answers, through the PostgreSQL and MariaDB
 * drivers when they are installed.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "db.h"
#include "odbc.h"
#include "internal.h"
#include "platform.h"
#include "testutil.h"

/* Scheduling on a loaded two-core machine: how late past a bound an
 * answer may still count as on time. */
#define LATE_MS 250

static int nabandoned(sqlease_db *db)
{
    int n;

    sqle_mutex_lock(&db->m);
    n = db->nabandoned;
    sqle_mutex_unlock(&db->m);
    return n;
}

typedef struct { sqlease_db *db; int n; } count_arg;

static int abandoned_at_most(void *arg)
{
    count_arg *c = arg;
    return nabandoned(c->db) <= c->n;
}

typedef struct { tu_faulty *f; int n; } hung_arg;

static int hung_at_least(void *arg)
{
    hung_arg *h = arg;
    return tu_fault_hung(h->f) >= h->n;
}

static int select_one(sqlease_db *db, int64_t *v, sqlease_error *err)
{
    db_out out;
    int has_row = 0;
    int rc;

    memset(&out, 0, sizeof out);
    out.type = DB_INT64;
    out.i = v;
    rc = sqle_db_exec(db, "SELECT 42", NULL, 0, &out, 1, &has_row, NULL, err);
    if (rc == SQLEASE_OK && !has_row)
        rc = SQLEASE_EDB;
    return rc;
}

/* A statement that never comes back from the driver is answered by its
 * deadline, and the next one runs on a fresh connection; the abandoned
 * one ends when the driver gives its call back. */
static void test_stuck_statement_bounded(void)
{
    const int64_t qt = 1000;
    sqlease_db *db = NULL;
    tu_faulty *f = tu_faulty_open_qt(&db, qt);
    sqlease_error err;
    int64_t t0, took, v = 0;
    count_arg none;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL_FATAL(select_one(db, &v, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(v, 42);
    tu_log_clear();
    tu_fault_set(f, TU_FAULT_HANG, 0);
    t0 = sqle_mono_ms();
    CU_ASSERT_EQUAL(select_one(db, &v, &err), SQLEASE_ETIMEOUT);
    took = sqle_mono_ms() - t0;
    CU_ASSERT(took >= qt);
    CU_ASSERT(took <= qt + DB_SLACK_MS + LATE_MS);
    CU_ASSERT_EQUAL(err.status, SQLEASE_ETIMEOUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "no answer from"));
    CU_ASSERT(tu_log_has("abandoning that connection"));
    CU_ASSERT_EQUAL(tu_fault_hung(f), 1);
    CU_ASSERT_EQUAL(nabandoned(db), 1);

    tu_fault_set(f, TU_FAULT_NONE, 0);
    t0 = sqle_mono_ms();
    v = 0;
    CU_ASSERT_EQUAL(select_one(db, &v, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(v, 42);
    CU_ASSERT(sqle_mono_ms() - t0 <= qt);
    none.db = db;
    none.n = 0;
    CU_ASSERT(tu_await(abandoned_at_most, &none, 5000));
    sqlease_db_close(db);
    tu_faulty_free(f);
}

/* An outage cannot pile up connections: past DB_MAX_ABANDONED stuck ones,
 * a statement is refused at once instead of opening another, and service
 * comes back as soon as the stuck calls return. */
static void test_abandoned_capped(void)
{
    const int64_t qt = 100;
    sqlease_db *db = NULL;
    tu_faulty *f = tu_faulty_open_qt(&db, qt);
    sqlease_error err;
    int64_t t0, v = 0;
    count_arg none;
    int i;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    tu_fault_set(f, TU_FAULT_HANG, 0);
    for (i = 0; i < DB_MAX_ABANDONED; i++) {
        t0 = sqle_mono_ms();
        CU_ASSERT_EQUAL(select_one(db, &v, &err), SQLEASE_ETIMEOUT);
        CU_ASSERT(sqle_mono_ms() - t0 <= qt * 2 + 2 * DB_SLACK_MS + LATE_MS);
    }
    CU_ASSERT_EQUAL(nabandoned(db), DB_MAX_ABANDONED);
    CU_ASSERT_EQUAL(tu_fault_hung(f), DB_MAX_ABANDONED);
    t0 = sqle_mono_ms();
    CU_ASSERT_EQUAL(select_one(db, &v, &err), SQLEASE_ETIMEOUT);
    CU_ASSERT(sqle_mono_ms() - t0 <= LATE_MS);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "still stuck in the driver"));
    CU_ASSERT_EQUAL(tu_fault_hung(f), DB_MAX_ABANDONED); /* nothing new was sent */

    tu_fault_set(f, TU_FAULT_NONE, 0);
    none.db = db;
    none.n = 0;
    CU_ASSERT_FATAL(tu_await(abandoned_at_most, &none, 5000));
    v = 0;
    CU_ASSERT_EQUAL(select_one(db, &v, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(v, 42);
    sqlease_db_close(db);
    tu_faulty_free(f);
}

typedef struct {
    sqlease_db *db;
    int rc;
    int64_t took;
    int64_t ended;      /* mono ms the call returned */
    sqlease_error err;
} stuck_call;

static void stuck_main(void *arg)
{
    stuck_call *c = arg;
    int64_t v = 0, t0 = sqle_mono_ms();

    c->rc = select_one(c->db, &v, &c->err);
    c->ended = sqle_mono_ms();
    c->took = c->ended - t0;
}

/* A statement queued behind a stuck one (another lease on the same
 * handle) is not held hostage: once the stuck one is abandoned it runs on
 * a fresh connection, within its own bound (which now includes the
 * reconnect). */
static void test_queued_behind_stuck(void)
{
    const int64_t qt = 1000;
    sqlease_db *db = NULL;
    tu_faulty *f = tu_faulty_open_qt(&db, qt);
    sqle_thread th;
    stuck_call c;
    sqlease_error err;
    hung_arg h;
    int64_t t0, took, v = 0;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL_FATAL(select_one(db, &v, &err), SQLEASE_OK);
    tu_fault_set(f, TU_FAULT_HANG_ONCE, 0);
    memset(&c, 0, sizeof c);
    c.db = db;
    CU_ASSERT_EQUAL_FATAL(sqle_thread_start(&th, stuck_main, &c), 0);
    h.f = f;
    h.n = 1;
    CU_ASSERT_FATAL(tu_await(hung_at_least, &h, 2000));
    t0 = sqle_mono_ms();
    v = 0;
    CU_ASSERT_EQUAL(select_one(db, &v, &err), SQLEASE_OK);
    took = sqle_mono_ms() - t0;
    CU_ASSERT_EQUAL(v, 42);
    CU_ASSERT(took <= 2 * qt + DB_SLACK_MS + LATE_MS);
    sqle_thread_join(&th);
    CU_ASSERT_EQUAL(c.rc, SQLEASE_ETIMEOUT);
    CU_ASSERT(c.took <= qt + DB_SLACK_MS + LATE_MS);
    tu_fault_set(f, TU_FAULT_NONE, 0);
    sqlease_db_close(db);
    tu_faulty_free(f);
}

static int queued(void *arg)
{
    sqlease_db *db = arg;
    int n;

    sqle_mutex_lock(&db->m);
    n = db->queue != NULL;
    sqle_mutex_unlock(&db->m);
    return n;
}

/*
 * The cap on abandoned connections, reached while another call waits:
 * that call cannot run on a fresh connection (there may be no more), so
 * it is answered at once, and so is every call after it until a stuck
 * one returns.  Nothing waits behind a connection that may never come
 * back, and no connection beyond the cap is opened.
 */
static void test_cap_reached_while_waiting(void)
{
    const int64_t qt = 500;
    sqlease_db *db = NULL;
    tu_faulty *f = tu_faulty_open_qt(&db, qt);
    sqle_thread ta, tb;
    stuck_call a, b;
    sqlease_error err;
    count_arg none;
    hung_arg h;
    int64_t t0, took, v = 0;
    int i;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    tu_fault_set(f, TU_FAULT_HANG, 0);
    for (i = 0; i < DB_MAX_ABANDONED - 1; i++)
        CU_ASSERT_EQUAL(select_one(db, &v, &err), SQLEASE_ETIMEOUT);
    CU_ASSERT_EQUAL_FATAL(nabandoned(db), DB_MAX_ABANDONED - 1);

    /* One more gets stuck, and another call waits behind it. */
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.db = b.db = db;
    CU_ASSERT_EQUAL_FATAL(sqle_thread_start(&ta, stuck_main, &a), 0);
    h.f = f;
    h.n = DB_MAX_ABANDONED;
    CU_ASSERT_FATAL(tu_await(hung_at_least, &h, 2000));
    CU_ASSERT_EQUAL_FATAL(sqle_thread_start(&tb, stuck_main, &b), 0);
    CU_ASSERT(tu_await(queued, db, 2000));
    sqle_thread_join(&ta);
    sqle_thread_join(&tb);
    CU_ASSERT_EQUAL(a.rc, SQLEASE_ETIMEOUT);
    CU_ASSERT_EQUAL(nabandoned(db), DB_MAX_ABANDONED);
    /* The waiting call is answered when the stuck one is given up, not
     * after a bound of its own on yet another stuck connection. */
    printf("\n    the call behind the stuck one: answered %lld ms after it, %d calls in "
           "the driver\n", (long long)(b.ended - a.ended), tu_fault_hung(f));
    CU_ASSERT_EQUAL(b.rc, SQLEASE_ETIMEOUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(b.err.message, "still stuck in the driver"));
    CU_ASSERT(b.ended - a.ended <= LATE_MS);
    CU_ASSERT_EQUAL(tu_fault_hung(f), DB_MAX_ABANDONED);

    /* Later calls too, at once, without sending anything. */
    t0 = sqle_mono_ms();
    CU_ASSERT_EQUAL(select_one(db, &v, &err), SQLEASE_ETIMEOUT);
    took = sqle_mono_ms() - t0;
    printf("    a later call: %lld ms\n", (long long)took);
    CU_ASSERT(took <= LATE_MS);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "still stuck in the driver"));
    CU_ASSERT_EQUAL(tu_fault_hung(f), DB_MAX_ABANDONED);

    /* The stuck calls return: service comes back on a fresh connection. */
    tu_fault_set(f, TU_FAULT_NONE, 0);
    none.db = db;
    none.n = 0;
    CU_ASSERT_FATAL(tu_await(abandoned_at_most, &none, 5000));
    v = 0;
    CU_ASSERT_EQUAL(select_one(db, &v, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(v, 42);
    sqlease_db_close(db);
    tu_faulty_free(f);
}

/* Closing a handle whose worker is stuck returns at once; the worker
 * frees what is left when its call returns. */
static void test_close_does_not_wait(void)
{
    sqlease_db *db = NULL;
    tu_faulty *f = tu_faulty_open_qt(&db, 500);
    sqle_thread th;
    stuck_call c;
    hung_arg h;
    int64_t t0;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    tu_fault_set(f, TU_FAULT_HANG, 0);
    memset(&c, 0, sizeof c);
    c.db = db;
    CU_ASSERT_EQUAL_FATAL(sqle_thread_start(&th, stuck_main, &c), 0);
    h.f = f;
    h.n = 1;
    CU_ASSERT_FATAL(tu_await(hung_at_least, &h, 2000));
    /* The caller gives up first (as a supervisor's stop would), then the
     * handle is closed with its worker still in the driver. */
    sqle_thread_join(&th);
    CU_ASSERT_EQUAL(c.rc, SQLEASE_ETIMEOUT);
    t0 = sqle_mono_ms();
    sqlease_db_close(db);
    CU_ASSERT(sqle_mono_ms() - t0 <= LATE_MS);
    tu_fault_set(f, TU_FAULT_NONE, 0);
    tu_faulty_free(f);
}

/* A statement that has to reconnect first, to a server that accepts and
 * never answers, is given up at the connect's own bound (login timeout +
 * DB_SLACK_MS), not at the statement's bound with the login timeout on
 * top. */
static void test_reconnect_bounded_by_login(void)
{
    const int64_t qt = 1000;
    sqlease_db *db = NULL;
    tu_faulty *f = tu_faulty_open_qt(&db, qt);
    sqlease_error err;
    int64_t t0, took, v = 0;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL_FATAL(select_one(db, &v, &err), SQLEASE_OK);
    /* The connection drops... */
    tu_fault_set(f, TU_FAULT_CONNECT, 0);
    CU_ASSERT_EQUAL(select_one(db, &v, &err), SQLEASE_ECONNECT);
    /* ...and the server it reconnects to never answers. */
    tu_fault_set(f, TU_FAULT_HANG_CONNECT, 0);
    t0 = sqle_mono_ms();
    CU_ASSERT_EQUAL(select_one(db, &v, &err), SQLEASE_ETIMEOUT);
    took = sqle_mono_ms() - t0;
    CU_ASSERT(took >= qt);
    CU_ASSERT(took <= qt + DB_SLACK_MS + LATE_MS);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "connecting"));
    tu_fault_set(f, TU_FAULT_NONE, 0);
    v = 0;
    CU_ASSERT_EQUAL(select_one(db, &v, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(v, 42);
    sqlease_db_close(db);
    tu_faulty_free(f);
}

/* ---- connecting to a server that never answers ------------------- */

/* A listener that completes TCP handshakes (the kernel does, from the
 * backlog) and never reads or writes: a frozen server, or a port that
 * is not a database at all. */
static int silent_listener(int *port)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd < 0)
        return -1;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 16) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

static void connect_silent(const char *driver, const char *fmt)
{
    char conn[512];
    sqlease_db_options o;
    sqlease_db *db = NULL;
    sqlease_error err;
    int port = 0, fd, rc;
    int64_t t0, took;

    fd = silent_listener(&port);
    CU_ASSERT_FATAL(fd >= 0);
    snprintf(conn, sizeof conn, fmt, driver, port);
    sqlease_db_options_init(&o);
    o.conn = conn;
    o.login_timeout_ms = 1000;
    o.query_timeout_ms = 1000;
    o.log = tu_log_sink;
    t0 = sqle_mono_ms();
    rc = sqlease_db_open(&db, &o, &err);
    took = sqle_mono_ms() - t0;
    close(fd);
    if (rc == SQLEASE_ECONNECT && (strcmp(err.sqlstate, "IM002") == 0 ||
                                   strstr(err.message, "can't open lib") != NULL ||
                                   strstr(err.message, "not found") != NULL) &&
        took < 500) {
        printf("\n    (driver '%s' not installed here: not tried) ", driver);
        return;
    }
    printf("\n    (%s: %s after %lld ms) ", driver, sqlease_strerror(rc), (long long)took);
    CU_ASSERT(rc == SQLEASE_ETIMEOUT || rc == SQLEASE_ECONNECT);
    CU_ASSERT_PTR_NULL(db);
    CU_ASSERT(took <= 1000 + DB_SLACK_MS + LATE_MS);
    sqlease_db_close(db);
}

static void test_connect_to_silent_server_bounded(void)
{
    connect_silent("PostgreSQL Unicode",
                   "Driver=%s;Servername=127.0.0.1;Port=%d;Database=x;Username=x;"
                   "Password=x;SSLmode=disable");
    connect_silent("MariaDB Unicode",
                   "Driver=%s;Server=127.0.0.1;Port=%d;Database=x;User=x;Password=x");
}

/* ---- the driver's socket settings --------------------------------- */

/* The connection string the driver gets: the dialect table's settings
 * for a recognised driver are added, and a key the user set wins. */
static void test_driver_settings_added_unless_set(void)
{
    void *p = NULL;
    sqlease_error err;
    const char *s;

    CU_ASSERT_EQUAL_FATAL(sqle_odbc_new(&p, "Driver=/usr/lib/x/psqlodbcw.so;Servername=h", NULL,
                                        3000, 2500, &err), SQLEASE_OK);
    s = sqle_odbc_conn_string(p);
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "KeepaliveTime=3"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "KeepaliveInterval=1"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "pqopt={keepalives_count=3 tcp_user_timeout=2500}"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "UseServerSidePrepare=0"));
    sqle_odbc_ops.close(p);

    /* A user who wants psqlODBC's named statements back (no pooler in
     * between) says so, and that wins. */
    CU_ASSERT_EQUAL_FATAL(sqle_odbc_new(&p, "Driver=/usr/lib/x/psqlodbcw.so;Servername=h;"
                                        "useserversideprepare=1", NULL, 3000, 2500, &err),
                          SQLEASE_OK);
    s = sqle_odbc_conn_string(p);
    CU_ASSERT_PTR_NULL(strstr(s, "UseServerSidePrepare=0"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "useserversideprepare=1"));
    sqle_odbc_ops.close(p);

    CU_ASSERT_EQUAL_FATAL(sqle_odbc_new(&p, "Driver={/usr/lib/x/psqlodbcw.so};keepalivetime=60;"
                                        "pqopt={sslmode=require};Servername=h", NULL, 3000, 2500,
                                        &err), SQLEASE_OK);
    s = sqle_odbc_conn_string(p);
    CU_ASSERT_PTR_NULL(strstr(s, "KeepaliveTime=3"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "keepalivetime=60"));
    CU_ASSERT_PTR_NULL(strstr(s, "tcp_user_timeout"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "KeepaliveInterval=1"));
    sqle_odbc_ops.close(p);

    CU_ASSERT_EQUAL_FATAL(sqle_odbc_new(&p, "Driver=/opt/libmaodbc.so;Server=h", NULL, 1500, 4000,
                                        &err), SQLEASE_OK);
    s = sqle_odbc_conn_string(p);
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "CONN_TIMEOUT=2"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "READ_TIMEOUT=4"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "WRITE_TIMEOUT=4"));
    sqle_odbc_ops.close(p);

    CU_ASSERT_EQUAL_FATAL(sqle_odbc_new(&p, "Driver=SQLite3;Database=x.db", NULL, 1000, 3000, &err),
                          SQLEASE_OK);
    s = sqle_odbc_conn_string(p);
    CU_ASSERT_PTR_NOT_NULL(strstr(s, "Timeout=1500"));
    sqle_odbc_ops.close(p);
    CU_ASSERT_EQUAL_FATAL(sqle_odbc_new(&p, "Driver=SQLite3;Database=x.db;TIMEOUT=200", NULL, 1000,
                                        3000, &err), SQLEASE_OK);
    s = sqle_odbc_conn_string(p);
    CU_ASSERT_PTR_NULL(strstr(s, "Timeout=1500"));
    CU_ASSERT_STRING_EQUAL(s, "Driver=SQLite3;Database=x.db;TIMEOUT=200");
    sqle_odbc_ops.close(p);

    /* A driver the table does not know gets nothing added. */
    CU_ASSERT_EQUAL_FATAL(sqle_odbc_new(&p, "Driver=/opt/libsomething.so;X=1", NULL, 1000, 1000,
                                        &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(sqle_odbc_conn_string(p), "Driver=/opt/libsomething.so;X=1");
    sqle_odbc_ops.close(p);
}

/* A handle that must not create its database gets the driver's setting
 * for that (sqliteodbc: NoCreat=1) unless the user set the key; one that
 * may gets nothing of the kind. */
static void test_must_exist_setting(void)
{
    void *p = NULL;
    sqlease_error err;

    CU_ASSERT_EQUAL_FATAL(sqle_odbc_new_with(&p, "Driver=SQLite3;Database=x.db", NULL, 1000, 3000, 1,
                                             &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(sqle_odbc_conn_string(p), "Driver=SQLite3;Database=x.db;Timeout=1500;"
                                                "NoCreat=1");
    sqle_odbc_ops.close(p);
    CU_ASSERT_EQUAL_FATAL(sqle_odbc_new_with(&p, "Driver=SQLite3;Database=x.db", NULL, 1000, 3000, 0,
                                             &err), SQLEASE_OK);
    CU_ASSERT_PTR_NULL(strstr(sqle_odbc_conn_string(p), "NoCreat"));
    sqle_odbc_ops.close(p);
    CU_ASSERT_EQUAL_FATAL(sqle_odbc_new_with(&p, "Driver=SQLite3;nocreat=0;Database=x.db", NULL,
                                             1000, 3000, 1, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(sqle_odbc_conn_string(p), "Driver=SQLite3;nocreat=0;Database=x.db;"
                                                "Timeout=1500");
    sqle_odbc_ops.close(p);
    /* A server's driver has no such setting. */
    CU_ASSERT_EQUAL_FATAL(sqle_odbc_new_with(&p, "Driver=/opt/libmaodbc.so;Server=h", NULL, 1000,
                                             1000, 1, &err), SQLEASE_OK);
    CU_ASSERT_PTR_NULL(strstr(sqle_odbc_conn_string(p), "NoCreat"));
    sqle_odbc_ops.close(p);
}

/* Through the public open: a missing file with must_exist, and a missing
 * directory either way, fail the open naming them; nothing is created. */
static void test_must_exist_open(void)
{
    sqlease_db_options o;
    sqlease_db *h = NULL;
    sqlease_error err;
    char conn[1000], path[900], want[1000];

    snprintf(path, sizeof path, "%s/must-exist.db", tu_dir());
    snprintf(conn, sizeof conn, "Driver=SQLite3;Database=%s", path);
    sqlease_db_options_init(&o);
    o.conn = conn;
    o.log = tu_log_sink;
    o.must_exist = 1;
    CU_ASSERT_EQUAL(sqlease_db_open(&h, &o, &err), SQLEASE_ENOTABLE);
    CU_ASSERT_PTR_NULL(h);
    snprintf(want, sizeof want, "database file '%s' does not exist", path);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, want));
    CU_ASSERT(!sqle_path_exists(path));
    /* Without must_exist the driver creates it, as before. */
    o.must_exist = 0;
    CU_ASSERT_EQUAL_FATAL(sqlease_db_open(&h, &o, &err), SQLEASE_OK);
    sqlease_db_close(h);
    CU_ASSERT(sqle_path_exists(path));
    /* ...and now that it exists, must_exist opens it. */
    o.must_exist = 1;
    CU_ASSERT_EQUAL_FATAL(sqlease_db_open(&h, &o, &err), SQLEASE_OK);
    sqlease_db_close(h);
    remove(path);
    /* A missing directory is named whatever must_exist says. */
    snprintf(path, sizeof path, "%s/nowhere/x.db", tu_dir());
    snprintf(conn, sizeof conn, "Driver=SQLite3;Database=%s", path);
    o.must_exist = 0;
    CU_ASSERT_EQUAL(sqlease_db_open(&h, &o, &err), SQLEASE_ECONNECT);
    snprintf(want, sizeof want, "directory '%s/nowhere' does not exist", tu_dir());
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, want));
}

static void add(void)
{
    CU_pSuite s = CU_add_suite("db", NULL, NULL);
    CU_add_test(s, "a stuck statement is answered by its bound", test_stuck_statement_bounded);
    CU_add_test(s, "must_exist: the driver's no-create setting, unless set",
                test_must_exist_setting);
    CU_add_test(s, "must_exist: a missing file or directory is named", test_must_exist_open);
    CU_add_test(s, "abandoned connections are capped", test_abandoned_capped);
    CU_add_test(s, "a statement behind a stuck one runs on a new connection",
                test_queued_behind_stuck);
    CU_add_test(s, "the cap reached while a call waits: answered at once, nothing queued",
                test_cap_reached_while_waiting);
    CU_add_test(s, "closing does not wait for a stuck worker", test_close_does_not_wait);
    CU_add_test(s, "a reconnect inside a statement is bounded by the login timeout",
                test_reconnect_bounded_by_login);
    CU_add_test(s, "connecting to a server that never answers is bounded",
                test_connect_to_silent_server_bounded);
    CU_add_test(s, "driver socket settings are added unless set",
                test_driver_settings_added_unless_set);
}

int main(void)
{
    int rc = tu_main(add);
    tu_cleanup();
    return rc;
}
