/*
 * odbc.c -- the ODBC implementation of the database port (port.h,
 * declared in odbc.h).
 *
 * This is the one file of the project that speaks ODBC.  It connects
 * (autocommit on, login and query timeouts set), picks the dialect,
 * prepares each distinct SQL text once per connection and keeps it,
 * binds int64 and text parameters, reads the rows-affected count and the
 * first row of a result (or the first rows, for a listing), and turns ODBC
 * diagnostics into sqlease statuses (what a diagnostic means is decided by
 * classify.c from the dialect table; what to do with the connection, here).
 *
 * A connection-class failure or a timeout drops the connection and every
 * prepared statement with it; the next exec reconnects with the same
 * parameters, so callers never hold a handle that points at a dead
 * socket.  The sqlease_db handle gives an instance to one worker thread
 * at a time, so nothing here locks.
 *
 * Before the first connect, the driver is recognised from the connection
 * string's Driver= (or the DSN's Driver in odbc.ini, and the driver's
 * library in odbcinst.ini), and the dialect table's settings for that
 * driver (templates/dialects.toml, `drivers`) are added to the connection
 * string for every key the user did not set: they make the driver itself
 * end socket waits near the timeouts.  SQLCancel is not used to end a
 * stuck statement: psqlODBC's cancel (PQcancel) and Connector/ODBC's
 * (KILL QUERY) each open a new connection to the server, which blocks on
 * the same dead network, on the cancelling thread.  What the driver
 * settings miss is bounded by the handle (db.c), which abandons a
 * connection stuck past its deadline.
 */
#ifdef _WIN32
#include <windows.h>
#endif
#include <sql.h>
#include <sqlext.h>
#include <odbcinst.h>

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "internal.h"
#include "odbc.h"
#include "platform.h"

/* Prepared statements kept per connection before the cache is emptied and
 * refilled: bounds the server-side resources one process can pin (MySQL
 * caps prepared statements per server) while leaving room for thousands
 * of lease names sharing one connection. */
#define STMT_CACHE_MAX 8192
#define STMT_BUCKETS_MIN 64

/* Parameters bound from the stack before falling back to the heap. */
#define BIND_STACK 16

/* A text parameter is declared at least this wide, so that the declared
 * type of a parameter does not change from call to call (servers that
 * key their plans on parameter types then reuse one plan). */
#define TEXT_DECL_MIN 255

typedef struct stmt_entry {
    struct stmt_entry *next;
    uint64_t hash;
    SQLHSTMT h;       /* SQL_NULL_HSTMT: prepare again before use */
    char *sql;
} stmt_entry;

typedef struct odbc_conn {
    SQLHENV env;            /* SQL_NULL_HENV until the first connect */
    SQLHDBC dbc;            /* SQL_NULL_HDBC while disconnected */
    int connected;
    char *conn_str;         /* what SQLDriverConnect gets: the user's
                               string plus the driver's socket bounds */
    char *conn_redacted;    /* what messages quote: the user's string */
    char *dialect_key;      /* forced dialect, or NULL to detect */
    char *db_file;          /* an embedded database's file, as the
                               connection string or DSN names it; NULL */
    int must_exist;         /* the driver must not create the database */
    int64_t login_timeout_ms;
    int64_t query_timeout_ms;
    const sqle_dialect *dialect;
    stmt_entry **buckets;
    size_t nbuckets;
    size_t nstmts;
} odbc_conn;

/* The first diagnostic record of a failed call. */
typedef struct diag {
    char state[6];
    long native;
    char msg[1024];
} diag;

static int odbc_exec(void *self, const char *sql, const db_bind *binds, size_t nbinds,
                     db_out *out, size_t nout, int *has_row, int64_t *rows,
                     sqlease_error *err);
static int odbc_exec_rows(void *self, const char *sql, const db_bind *binds, size_t nbinds,
                          db_out *out, size_t nout, size_t max_rows, size_t *nrows,
                          sqlease_error *err);
static int odbc_connect(void *self, sqlease_error *err);
static int odbc_connected(void *self);
static const sqle_dialect *odbc_dialect(void *self);
static void *odbc_clone(void *self, const sqle_dialect *d, sqlease_error *err);
static void odbc_close(void *self);
static int odbc_ini_value(const char *section, const char *key, char *buf, size_t cap,
                          const char *file);

const db_ops sqle_odbc_ops = { odbc_exec, odbc_connect, odbc_connected, odbc_dialect, odbc_clone,
                          odbc_close, odbc_exec_rows };

static int ok(SQLRETURN r)
{
    return r == SQL_SUCCESS || r == SQL_SUCCESS_WITH_INFO;
}

/* Whole seconds for an ODBC timeout attribute, rounded up, at least 1:
 * 0 would mean "no timeout" to the driver. */
static SQLULEN secs_up(int64_t ms)
{
    int64_t s;
    if (ms <= 0)
        return 1;
    s = ms / 1000 + (ms % 1000 != 0);
    if (s > (int64_t)INT_MAX)
        s = INT_MAX;
    return (SQLULEN)s;
}

/* Read the diagnostic record of a handle that explains a failure: the
 * first one that is not a mere warning (class 01), else the first.
 * (unixODBC reports a driver library it cannot load as 01000 only.)
 * Driver messages are redacted here, before anything else can copy
 * them. */
static void diag_get(SQLSMALLINT type, SQLHANDLE h, diag *d)
{
    SQLSMALLINT rec;

    d->state[0] = '\0';
    d->native = 0;
    d->msg[0] = '\0';
    if (h == SQL_NULL_HANDLE)
        return;
    for (rec = 1; rec <= 8; rec++) {
        SQLCHAR state[6];
        SQLINTEGER native = 0;
        SQLSMALLINT len = 0;
        char msg[sizeof d->msg];
        SQLRETURN r;

        memset(state, 0, sizeof state);
        msg[0] = '\0';
        r = SQLGetDiagRec(type, h, rec, state, &native, (SQLCHAR *)msg,
                          (SQLSMALLINT)sizeof msg, &len);
        if (!ok(r))
            break;
        msg[sizeof msg - 1] = '\0';
        if (rec == 1 || (d->state[0] == '0' && d->state[1] == '1')) {
            memcpy(d->state, state, 5);
            d->state[5] = '\0';
            d->native = (long)native;
            memcpy(d->msg, msg, sizeof msg);
        }
        if (!(d->state[0] == '0' && d->state[1] == '1'))
            break;
    }
    sqle_redact_inplace(d->msg);
}

/* What a diagnostic record reports (classify.c decides; the caller acts
 * on it). */
static sqle_failure classify(const diag *d, const sqle_dialect *dl, int stage)
{
    sqle_diag in;

    in.sqlstate = d->state;
    in.native = d->native;
    in.message = d->msg;
    return sqle_classify(&in, dl, stage);
}

/* Case-insensitive substring search. */
static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    const char *p;
    if (n == 0)
        return 0;
    for (p = hay; *p != '\0'; p++) {
        size_t i;
        for (i = 0; i < n; i++) {
            if (p[i] == '\0' ||
                tolower((unsigned char)p[i]) != tolower((unsigned char)needle[i]))
                break;
        }
        if (i == n)
            return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Statement cache                                                     */
/* ------------------------------------------------------------------ */

/* FNV-1a (sqle_hash_text): cheap, and good enough to spread SQL texts
 * over buckets. */
#define hash_sql sqle_hash_text

/* Free every prepared statement and cache entry (before a disconnect, or
 * when the cache is full). */
static void cache_clear(odbc_conn *c)
{
    size_t i;
    for (i = 0; i < c->nbuckets; i++) {
        stmt_entry *e = c->buckets[i];
        while (e != NULL) {
            stmt_entry *next = e->next;
            if (e->h != SQL_NULL_HSTMT)
                SQLFreeHandle(SQL_HANDLE_STMT, e->h);
            free(e->sql);
            free(e);
            e = next;
        }
        c->buckets[i] = NULL;
    }
    c->nstmts = 0;
}

static stmt_entry *cache_find(odbc_conn *c, const char *sql, uint64_t h)
{
    stmt_entry *e;
    if (c->nbuckets == 0)
        return NULL;
    for (e = c->buckets[h & (c->nbuckets - 1)]; e != NULL; e = e->next) {
        if (e->hash == h && strcmp(e->sql, sql) == 0)
            return e;
    }
    return NULL;
}

/* Double the bucket array when the chains get longer than one on
 * average.  Failing to grow is harmless: the chains just get longer. */
static void cache_grow(odbc_conn *c)
{
    size_t nb = c->nbuckets == 0 ? STMT_BUCKETS_MIN : c->nbuckets * 2;
    stmt_entry **b = calloc(nb, sizeof *b);
    size_t i;
    if (b == NULL)
        return;
    for (i = 0; i < c->nbuckets; i++) {
        stmt_entry *e = c->buckets[i];
        while (e != NULL) {
            stmt_entry *next = e->next;
            e->next = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
            e = next;
        }
    }
    free(c->buckets);
    c->buckets = b;
    c->nbuckets = nb;
}

/* A new entry (without a prepared handle yet); NULL on out-of-memory. */
static stmt_entry *cache_add(odbc_conn *c, const char *sql, uint64_t h)
{
    stmt_entry *e;
    if (c->nstmts >= STMT_CACHE_MAX)
        cache_clear(c);
    if (c->nstmts >= c->nbuckets)
        cache_grow(c);
    if (c->nbuckets == 0)
        return NULL;
    e = calloc(1, sizeof *e);
    if (e == NULL)
        return NULL;
    e->sql = sqle_strdup(sql);
    if (e->sql == NULL) {
        free(e);
        return NULL;
    }
    e->hash = h;
    e->h = SQL_NULL_HSTMT;
    e->next = c->buckets[h & (c->nbuckets - 1)];
    c->buckets[h & (c->nbuckets - 1)] = e;
    c->nstmts++;
    return e;
}

/* ------------------------------------------------------------------ */
/* Connecting                                                          */
/* ------------------------------------------------------------------ */

/* Drop the connection and everything prepared on it.  The next exec
 * reconnects. */
static void disconnect(odbc_conn *c)
{
    cache_clear(c);
    if (c->dbc != SQL_NULL_HDBC) {
        if (c->connected)
            SQLDisconnect(c->dbc);
        SQLFreeHandle(SQL_HANDLE_DBC, c->dbc);
        c->dbc = SQL_NULL_HDBC;
    }
    c->connected = 0;
}

/*
 * Read a failed statement call's diagnostic, have it classified
 * (classify.c), fill err, and drop the connection when the status says it
 * can no longer be trusted: a broken link, or a timeout (the server may
 * still be running the statement, and the driver's state after a cancel
 * differs from driver to driver).  With free_h, `h` is an uncached
 * statement that is freed once its diagnostics have been read.
 */
static int stmt_failure(odbc_conn *c, SQLHSTMT h, int free_h, const char *what,
                        SQLRETURN r, sqlease_error *err)
{
    diag d;
    int status;

    diag_get(SQL_HANDLE_STMT, h, &d);
    if (free_h && h != SQL_NULL_HSTMT)
        SQLFreeHandle(SQL_HANDLE_STMT, h);
    if (d.state[0] == '\0' && d.msg[0] == '\0' && c->dbc != SQL_NULL_HDBC)
        diag_get(SQL_HANDLE_DBC, c->dbc, &d);
    if (d.state[0] == '\0' && d.msg[0] == '\0')
        snprintf(d.msg, sizeof d.msg, "%s returned %d with no diagnostic record", what,
                 (int)r);
    status = sqle_failure_status(classify(&d, c->dialect, SQLEASE_AT_STATEMENT));
    if (status == SQLEASE_ETIMEOUT || status == SQLEASE_ECONNECT)
        disconnect(c);
    return sqle_err(err, status, d.state, d.native, "[%s] %s",
                    d.state[0] != '\0' ? d.state : "-----", d.msg);
}

/* Run one statement without preparing or caching it (session setup). */
static int exec_direct(odbc_conn *c, const char *sql, sqlease_error *err)
{
    SQLHSTMT h = SQL_NULL_HSTMT;
    SQLRETURN r;

    r = SQLAllocHandle(SQL_HANDLE_STMT, c->dbc, &h);
    if (!ok(r))
        return stmt_failure(c, SQL_NULL_HSTMT, 0, "SQLAllocHandle", r, err);
    SQLSetStmtAttr(h, SQL_ATTR_QUERY_TIMEOUT, (SQLPOINTER)secs_up(c->query_timeout_ms),
                   SQL_IS_UINTEGER);
    r = SQLExecDirect(h, (SQLCHAR *)sql, SQL_NTS);
    if (!ok(r) && r != SQL_NO_DATA)
        return stmt_failure(c, h, 1, "SQLExecDirect", r, err);
    SQLFreeStmt(h, SQL_CLOSE);
    SQLFreeHandle(SQL_HANDLE_STMT, h);
    return SQLEASE_OK;
}

static int is_absolute_path(const char *p)
{
    return p[0] == '/' || p[0] == '\\' ||
           (isalpha((unsigned char)p[0]) && p[1] == ':');
}

/*
 * A missing database file, or a missing directory for it, is the usual
 * reason an embedded database's driver refuses to connect, and sqliteodbc
 * says only "connect failed": name the file (made absolute, since a
 * relative one is relative to wherever the process happens to run) or
 * the directory.  A missing file counts only for a handle that must not
 * create it (otherwise the driver would have).  Returns 2 with `out`
 * filled for a missing file, 1 for a missing directory, 0 otherwise.
 */
static int missing_file(const odbc_conn *c, char *out, size_t cap)
{
    char cwd[1024], path[2048], dir[2048];
    const char *f = c->db_file;
    size_t i, cut = 0;
    int sep = 0;

    if (f == NULL || f[0] == '\0' || strcmp(f, ":memory:") == 0 || strncmp(f, "file:", 5) == 0)
        return 0;
    cwd[0] = '\0';
    if (!is_absolute_path(f))
        sqle_cwd(cwd, sizeof cwd);
    if (cwd[0] != '\0')
        snprintf(path, sizeof path, "%s%s%s", cwd,
                 cwd[strlen(cwd) - 1] == '/' || cwd[strlen(cwd) - 1] == '\\' ? "" : "/", f);
    else
        snprintf(path, sizeof path, "%s", f);
    if (sqle_path_exists(path))
        return 0;
    for (i = 0; path[i] != '\0'; i++)
        if (path[i] == '/' || path[i] == '\\') {
            cut = i;
            sep = 1;
        }
    snprintf(dir, sizeof dir, "%s", sep ? path : ".");
    if (sep)
        dir[cut == 0 ? 1 : cut] = '\0'; /* "/x.db": the directory is "/" */
    if (!sqle_path_exists(dir))
        snprintf(out, cap, "directory '%.200s' does not exist (for the database file "
                 "'%.200s')", dir, path);
    else if (c->must_exist) {
        snprintf(out, cap, "database file '%.300s' does not exist; run `sqlease migrate` to "
                 "create it", path);
        return 2;
    } else
        return 0;
    return 1;
}

/* Fill err for a failed connect: which target (redacted), what the
 * driver said, and a hint when the driver or DSN is not there at all, or
 * the database file is not. */
static int connect_failure(odbc_conn *c, SQLSMALLINT type, SQLHANDLE h, const char *what,
                           sqlease_error *err)
{
    diag d;
    sqle_failure kind;
    int status;
    const char *hint = "";
    char missing[512];
    int file_state;

    diag_get(type, h, &d);
    if (d.state[0] == '\0' && d.msg[0] == '\0')
        snprintf(d.msg, sizeof d.msg, "%s failed with no diagnostic record", what);
    kind = classify(&d, c->dialect, SQLEASE_AT_CONNECT);
    status = sqle_failure_status(kind);
    if (kind == SQLEASE_FAIL_CONFIG)
        hint = " (is the ODBC driver installed and the DSN defined in odbc.ini?)";
    else if (status == SQLEASE_ECONNECT && (file_state = missing_file(c, missing,
                                                                     sizeof missing)) != 0)
        /* A database file that must exist and does not holds no lease
         * table either: a broken installation, not a network to wait for.
         * A missing directory may still appear (a volume not mounted yet). */
        return sqle_err(err, file_state == 2 ? SQLEASE_ENOTABLE : status, d.state, d.native,
                        "cannot connect to '%s': %s ([%s] %s)", c->conn_redacted, missing,
                        d.state[0] != '\0' ? d.state : "-----", d.msg);
    return sqle_err(err, status, d.state, d.native, "cannot connect to '%s': [%s] %s%s",
                    c->conn_redacted, d.state[0] != '\0' ? d.state : "-----", d.msg,
                    hint);
}

/*
 * Connect with the stored parameters: login timeout before the connect,
 * autocommit explicitly on after it (a DSN may have turned it off), the
 * dialect chosen on the first connect, then the dialect's session setup.
 * Runs at open and again after any failure that dropped the connection.
 */
static int do_connect(odbc_conn *c, sqlease_error *err)
{
    SQLRETURN r;
    SQLCHAR outstr[1024];
    SQLSMALLINT outlen = 0;
    char dbms[256];
    SQLSMALLINT dlen = 0;
    size_t i;
    int rc;

    disconnect(c);
    if (c->env == SQL_NULL_HENV) {
        r = SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &c->env);
        if (!ok(r)) {
            c->env = SQL_NULL_HENV;
            return sqle_fail(err, SQLEASE_ECONNECT,
                             "cannot allocate an ODBC environment (is the driver manager "
                             "installed?)");
        }
        r = SQLSetEnvAttr(c->env, SQL_ATTR_ODBC_VERSION, (SQLPOINTER)SQL_OV_ODBC3, 0);
        if (!ok(r)) {
            rc = connect_failure(c, SQL_HANDLE_ENV, c->env, "SQLSetEnvAttr(ODBC3)", err);
            SQLFreeHandle(SQL_HANDLE_ENV, c->env);
            c->env = SQL_NULL_HENV;
            return rc;
        }
    }
    r = SQLAllocHandle(SQL_HANDLE_DBC, c->env, &c->dbc);
    if (!ok(r)) {
        c->dbc = SQL_NULL_HDBC;
        return connect_failure(c, SQL_HANDLE_ENV, c->env, "SQLAllocHandle(DBC)", err);
    }
    SQLSetConnectAttr(c->dbc, SQL_ATTR_LOGIN_TIMEOUT,
                      (SQLPOINTER)secs_up(c->login_timeout_ms), SQL_IS_UINTEGER);
    r = SQLDriverConnect(c->dbc, NULL, (SQLCHAR *)c->conn_str, SQL_NTS, outstr,
                         (SQLSMALLINT)sizeof outstr, &outlen, SQL_DRIVER_NOPROMPT);
    if (!ok(r)) {
        rc = connect_failure(c, SQL_HANDLE_DBC, c->dbc, "SQLDriverConnect", err);
        disconnect(c);
        return rc;
    }
    c->connected = 1;
    r = SQLSetConnectAttr(c->dbc, SQL_ATTR_AUTOCOMMIT, (SQLPOINTER)SQL_AUTOCOMMIT_ON,
                          SQL_IS_UINTEGER);
    if (!ok(r)) {
        diag d;
        diag_get(SQL_HANDLE_DBC, c->dbc, &d);
        disconnect(c);
        return sqle_err(err, SQLEASE_EDB, d.state, d.native,
                        "cannot turn autocommit on for '%s': [%s] %s", c->conn_redacted,
                        d.state, d.msg);
    }
    /* Read committed, whatever the server's or the DSN's default: under
     * repeatable read or serializable (PostgreSQL), the slower of two
     * takes of one row fails with 40001 instead of matching 0 rows.
     * psqlODBC and Connector/ODBC apply this to the session; sqliteodbc
     * answers 01S02 and stays serializable, which SQLite is anyway (one
     * writer at a time), and any other refusal is tolerated too: the
     * lease code reads 40001 on a take as a lost race. */
    (void)SQLSetConnectAttr(c->dbc, SQL_ATTR_TXN_ISOLATION,
                            (SQLPOINTER)(SQLULEN)SQL_TXN_READ_COMMITTED, SQL_IS_UINTEGER);
    if (c->dialect == NULL) {
        if (c->dialect_key != NULL) {
            c->dialect = sqle_dialect_find(c->dialect_key);
            if (c->dialect == NULL) {
                disconnect(c);
                return sqle_fail(err, SQLEASE_EDIALECT,
                                 "unknown dialect '%s'; supported: %s", c->dialect_key,
                                 sqle_dialect_keys());
            }
        } else {
            dbms[0] = '\0';
            r = SQLGetInfo(c->dbc, SQL_DBMS_NAME, dbms, (SQLSMALLINT)sizeof dbms, &dlen);
            if (!ok(r)) {
                diag d;
                diag_get(SQL_HANDLE_DBC, c->dbc, &d);
                disconnect(c);
                return sqle_err(err, SQLEASE_EDIALECT, d.state, d.native,
                                "cannot read the DBMS name of '%s': [%s] %s; "
                                "name the dialect (one of: %s)",
                                c->conn_redacted, d.state, d.msg, sqle_dialect_keys());
            }
            dbms[sizeof dbms - 1] = '\0';
            c->dialect = sqle_dialect_detect(dbms);
            if (c->dialect == NULL) {
                disconnect(c);
                return sqle_fail(err, SQLEASE_EDIALECT,
                                 "unsupported DBMS '%s'; supported: %s", dbms,
                                 sqle_dialect_keys());
            }
        }
    }
    for (i = 0; i < c->dialect->nsession_setup; i++) {
        rc = exec_direct(c, c->dialect->session_setup[i], err);
        if (rc != SQLEASE_OK) {
            disconnect(c);
            return rc;
        }
    }
    return SQLEASE_OK;
}

static void conn_free(odbc_conn *c)
{
    if (c == NULL)
        return;
    disconnect(c);
    if (c->env != SQL_NULL_HENV)
        SQLFreeHandle(SQL_HANDLE_ENV, c->env);
    free(c->buckets);
    free(c->conn_str);
    free(c->conn_redacted);
    free(c->dialect_key);
    free(c->db_file);
    free(c);
}

/* ------------------------------------------------------------------ */
/* The driver's socket bounds                                          */
/* ------------------------------------------------------------------ */

/*
 * Walk a connection string's KEY=VALUE; pairs.  A value in braces may
 * hold ';'.  Calls fn for each pair with the key and value trimmed (not
 * NUL-terminated: lengths given); stops early when fn returns non-zero.
 */
static int each_attr(const char *s, int (*fn)(void *, const char *, size_t, const char *,
                                              size_t), void *arg)
{
    while (*s != '\0') {
        const char *k = s, *eq, *v, *end;
        size_t klen, vlen;

        while (*k == ' ' || *k == '\t' || *k == ';')
            k++;
        if (*k == '\0')
            break;
        eq = k;
        while (*eq != '\0' && *eq != '=' && *eq != ';')
            eq++;
        if (*eq != '=') {
            s = *eq == ';' ? eq + 1 : eq;
            continue;
        }
        klen = (size_t)(eq - k);
        while (klen > 0 && (k[klen - 1] == ' ' || k[klen - 1] == '\t'))
            klen--;
        v = eq + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        if (*v == '{') {
            end = strchr(v, '}');
            end = end != NULL ? end + 1 : v + strlen(v);
            vlen = (size_t)(end - v);
            while (*end != '\0' && *end != ';')
                end++;
        } else {
            end = v;
            while (*end != '\0' && *end != ';')
                end++;
            vlen = (size_t)(end - v);
            while (vlen > 0 && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
                vlen--;
        }
        if (fn(arg, k, klen, v, vlen))
            return 1;
        s = *end == ';' ? end + 1 : end;
    }
    return 0;
}

typedef struct attr_find {
    const char *key;
    char *value;   /* out: the value (braces removed unless keep_braces), or NULL */
    size_t cap;
    int keep_braces;
    int found;
} attr_find;

static int attr_match(void *arg, const char *k, size_t klen, const char *v, size_t vlen)
{
    attr_find *f = arg;
    size_t i;

    if (strlen(f->key) != klen)
        return 0;
    for (i = 0; i < klen; i++)
        if (tolower((unsigned char)k[i]) != tolower((unsigned char)f->key[i]))
            return 0;
    f->found = 1;
    if (f->value != NULL && f->cap > 0) {
        if (!f->keep_braces && vlen >= 2 && v[0] == '{' && v[vlen - 1] == '}') {
            v++;
            vlen -= 2;
        }
        if (vlen >= f->cap)
            vlen = f->cap - 1;
        memcpy(f->value, v, vlen);
        f->value[vlen] = '\0';
    }
    return 1;
}

static int find_attr(const char *conn, const char *key, char *value, size_t cap,
                     int keep_braces)
{
    attr_find f;

    f.key = key;
    f.value = value;
    f.cap = cap;
    f.keep_braces = keep_braces;
    f.found = 0;
    if (value != NULL && cap > 0)
        value[0] = '\0';
    each_attr(conn, attr_match, &f);
    return f.found;
}

/* The value of `key` in a connection string (case-insensitive key), a
 * value in braces without them.  Returns 1 if it is set. */
static int conn_attr(const char *conn, const char *key, char *value, size_t cap)
{
    return find_attr(conn, key, value, cap, 0);
}

/* The DSN a connection string names, as unixODBC's SQLDriverConnect
 * takes it: the first DSN= key, braces and all.  The driver manager
 * strips braces from Driver={...} but not from DSN={x}, which it looks
 * up as the section [{x}]; the lease settings must come from the same
 * section as the connection does. */
static int conn_dsn(const char *conn, char *value, size_t cap)
{
    return find_attr(conn, "DSN", value, cap, 1);
}

static const char *base_name(const char *path)
{
    const char *b = path, *p;

    for (p = path; *p != '\0'; p++)
        if (*p == '/' || *p == '\\')
            b = p + 1;
    return b;
}

/*
 * What driver a connection will load, as far as can be told before
 * loading it: the Driver= of the connection string, else the Driver key
 * of its DSN in odbc.ini; a registered name is looked up in odbcinst.ini
 * for its library.  Fills `name` (registered name, may be "") and `file`
 * (library file name, may be "").  `dsn` gets the DSN name, if any.
 */
static void driver_identity(const char *conn, char *dsn, size_t dcap, char *name, size_t ncap,
                            char *file, size_t fcap)
{
    char drv[512], path[1024];

    dsn[0] = name[0] = file[0] = drv[0] = '\0';
    if (strchr(conn, '=') == NULL)
        snprintf(dsn, dcap, "%s", conn);
    else
        conn_dsn(conn, dsn, dcap);
    if (!conn_attr(conn, "Driver", drv, sizeof drv) && dsn[0] != '\0')
        odbc_ini_value(dsn, "Driver", drv, sizeof drv, "odbc.ini");
    if (drv[0] == '\0')
        return;
    if (strchr(drv, '/') != NULL || strchr(drv, '\\') != NULL) {
        snprintf(file, fcap, "%s", base_name(drv));
        return;
    }
    snprintf(name, ncap, "%s", drv);
    if (odbc_ini_value(drv, "Driver", path, sizeof path, "odbcinst.ini"))
        snprintf(file, fcap, "%s", base_name(path));
}

static const sqle_driver *driver_lookup(const char *name, const char *file)
{
    size_t i, j, k;

    for (i = 0; i < sqle_dialect_count; i++) {
        const sqle_dialect *d = &sqle_dialects[i];
        for (j = 0; j < d->ndrivers; j++)
            for (k = 0; k < d->drivers[j].nmatch; k++)
                if (contains_ci(name, d->drivers[j].match[k]) ||
                    contains_ci(file, d->drivers[j].match[k]))
                    return &d->drivers[j];
    }
    return NULL;
}

/* Whole seconds, rounded up, at least 1. */
static long secs_ceil(int64_t ms)
{
    return ms <= 1000 ? 1 : (long)((ms + 999) / 1000);
}

/* A setting's value with its placeholders filled in; NULL on OOM. */
static char *expand_setting(const char *tmpl, int64_t login_ms, int64_t query_ms)
{
    size_t cap = strlen(tmpl) + 64, n = 0;
    char *out = malloc(cap);
    const char *p = tmpl;

    if (out == NULL)
        return NULL;
    while (*p != '\0') {
        char num[32];
        const char *put = NULL;

        if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
            num[0] = p[0];
            num[1] = '\0';
            put = num;
            p += 2;
        } else if (*p == '{') {
            const char *e = strchr(p, '}');
            size_t len = e != NULL ? (size_t)(e - p - 1) : 0;
            if (len == 7 && strncmp(p + 1, "login_s", len) == 0)
                snprintf(num, sizeof num, "%ld", secs_ceil(login_ms));
            else if (len == 7 && strncmp(p + 1, "query_s", len) == 0)
                snprintf(num, sizeof num, "%ld", secs_ceil(query_ms));
            else if (len == 8 && strncmp(p + 1, "query_ms", len) == 0)
                snprintf(num, sizeof num, "%lld", (long long)query_ms);
            else if (len == 13 && strncmp(p + 1, "query_half_ms", len) == 0)
                snprintf(num, sizeof num, "%lld", (long long)(query_ms / 2 > 0 ? query_ms / 2 : 1));
            else
                num[0] = '\0'; /* the generator admits no other */
            put = num;
            p = e != NULL ? e + 1 : p + strlen(p);
        } else {
            num[0] = *p++;
            num[1] = '\0';
            put = num;
        }
        if (n + strlen(put) + 1 > cap) {
            char *grown;
            cap = cap * 2 + strlen(put);
            grown = realloc(out, cap);
            if (grown == NULL) {
                free(out);
                return NULL;
            }
            out = grown;
        }
        memcpy(out + n, put, strlen(put));
        n += strlen(put);
    }
    out[n] = '\0';
    return out;
}

/* Append each of `keys`=`values` that neither *out nor the DSN's
 * section sets to *out (a user's own value always wins).  Returns 0, or -1
 * on out-of-memory (then *out is freed and NULL). */
static int add_settings(char **out, const char *dsn, const char *const *keys,
                        const char *const *values, size_t count, int64_t login_ms,
                        int64_t query_ms)
{
    char ini[16];
    size_t i, n;

    for (i = 0; i < count; i++) {
        char *val, *grown;
        size_t need;

        if (conn_attr(*out, keys[i], NULL, 0) ||
            (dsn[0] != '\0' && odbc_ini_value(dsn, keys[i], ini, sizeof ini, "odbc.ini")))
            continue;
        val = expand_setting(values[i], login_ms, query_ms);
        if (val == NULL)
            goto oom;
        n = strlen(*out);
        need = n + strlen(keys[i]) + strlen(val) + 4;
        grown = realloc(*out, need);
        if (grown == NULL) {
            free(val);
            goto oom;
        }
        *out = grown;
        snprintf(*out + n, need - n, "%s%s=%s", n > 0 && (*out)[n - 1] != ';' ? ";" : "",
                 keys[i], val);
        free(val);
    }
    return 0;
oom:
    free(*out);
    *out = NULL;
    return -1;
}

/*
 * The connection string SQLDriverConnect gets: the user's (a bare DSN
 * name becomes DSN=name), then each socket-bound setting of the
 * recognised driver, and with must_exist each setting that stops it
 * creating the database, whose key neither the string nor the DSN's
 * section sets.  *db_file gets the database file the string or the DSN
 * names, for a driver of an embedded database (else NULL).  NULL on
 * out-of-memory.
 */
static char *build_conn_str(const char *conn, int64_t login_ms, int64_t query_ms,
                            int must_exist, char **db_file)
{
    char dsn[256], name[256], file[256], path[1024];
    const sqle_driver *drv;
    size_t cap;
    char *out;

    *db_file = NULL;
    driver_identity(conn, dsn, sizeof dsn, name, sizeof name, file, sizeof file);
    drv = driver_lookup(name, file);
    cap = strlen(conn) + sizeof "DSN=;" + 1;
    out = malloc(cap);
    if (out == NULL)
        return NULL;
    if (strchr(conn, '=') != NULL)
        snprintf(out, cap, "%s", conn);
    else
        snprintf(out, cap, "DSN=%s;", conn);
    if (drv == NULL)
        return out;
    if (add_settings(&out, dsn, drv->keys, drv->values, drv->nsettings, login_ms, query_ms) != 0)
        return NULL;
    if (must_exist && add_settings(&out, dsn, drv->must_keys, drv->must_values, drv->nmust,
                                   login_ms, query_ms) != 0)
        return NULL;
    if (drv->database_file != NULL &&
        (conn_attr(out, drv->database_file, path, sizeof path) ||
         (dsn[0] != '\0' &&
          odbc_ini_value(dsn, drv->database_file, path, sizeof path, "odbc.ini")))) {
        *db_file = sqle_strdup(path);
        if (*db_file == NULL) {
            free(out);
            return NULL;
        }
    }
    return out;
}

/* ------------------------------------------------------------------ */
/* Instances                                                           */
/* ------------------------------------------------------------------ */

int sqle_odbc_new(void **self, const char *conn, const char *dialect_key, int64_t login_timeout_ms,
                  int64_t query_timeout_ms, sqlease_error *err)
{
    return sqle_odbc_new_with(self, conn, dialect_key, login_timeout_ms, query_timeout_ms, 0, err);
}

int sqle_odbc_new_with(void **self, const char *conn, const char *dialect_key,
                       int64_t login_timeout_ms, int64_t query_timeout_ms, int must_exist,
                       sqlease_error *err)
{
    odbc_conn *c;
    int rc;

    if (self == NULL || conn == NULL || conn[0] == '\0')
        return sqle_fail(err, SQLEASE_EINVAL, "sqle_odbc_open: no connection string or DSN");
    *self = NULL;
    c = calloc(1, sizeof *c);
    if (c == NULL)
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    c->env = SQL_NULL_HENV;
    c->dbc = SQL_NULL_HDBC;
    c->login_timeout_ms = login_timeout_ms > 0 ? login_timeout_ms : 5000;
    c->query_timeout_ms = query_timeout_ms > 0 ? query_timeout_ms : 5000;
    c->must_exist = must_exist;
    c->conn_redacted = sqle_redact(conn);
    c->conn_str = build_conn_str(conn, c->login_timeout_ms, c->query_timeout_ms, must_exist,
                                 &c->db_file);
    if (dialect_key != NULL && dialect_key[0] != '\0')
        c->dialect_key = sqle_strdup(dialect_key);
    if (c->conn_redacted == NULL || c->conn_str == NULL ||
        (dialect_key != NULL && dialect_key[0] != '\0' && c->dialect_key == NULL)) {
        conn_free(c);
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    /* An unknown forced dialect is refused before any connection is
     * tried: the error is in the caller's options, not the network. */
    if (c->dialect_key != NULL) {
        c->dialect = sqle_dialect_find(c->dialect_key);
        if (c->dialect == NULL) {
            rc = sqle_fail(err, SQLEASE_EDIALECT, "unknown dialect '%s'; supported: %s",
                           c->dialect_key, sqle_dialect_keys());
            conn_free(c);
            return rc;
        }
    }
    *self = c;
    return SQLEASE_OK;
}

int sqle_odbc_open(void **self, const char *conn, const char *dialect_key,
                   int64_t login_timeout_ms, int64_t query_timeout_ms, sqlease_error *err)
{
    int rc = sqle_odbc_new(self, conn, dialect_key, login_timeout_ms, query_timeout_ms, err);

    if (rc != SQLEASE_OK)
        return rc;
    rc = do_connect(*self, err);
    if (rc != SQLEASE_OK) {
        conn_free(*self);
        *self = NULL;
    }
    return rc;
}

/* Only what the instance was made with is read: the copy connects on its
 * own, with its own environment, and knows the dialect from the start. */
static void *odbc_clone(void *self, const sqle_dialect *d, sqlease_error *err)
{
    const odbc_conn *c = self;
    odbc_conn *n = calloc(1, sizeof *n);

    if (n == NULL) {
        sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
        return NULL;
    }
    n->env = SQL_NULL_HENV;
    n->dbc = SQL_NULL_HDBC;
    n->login_timeout_ms = c->login_timeout_ms;
    n->query_timeout_ms = c->query_timeout_ms;
    n->conn_str = sqle_strdup(c->conn_str);
    n->conn_redacted = sqle_strdup(c->conn_redacted);
    n->dialect_key = c->dialect_key != NULL ? sqle_strdup(c->dialect_key) : NULL;
    n->db_file = c->db_file != NULL ? sqle_strdup(c->db_file) : NULL;
    n->must_exist = c->must_exist;
    n->dialect = d != NULL ? d : c->dialect;
    if (n->conn_str == NULL || n->conn_redacted == NULL ||
        (c->dialect_key != NULL && n->dialect_key == NULL) ||
        (c->db_file != NULL && n->db_file == NULL)) {
        conn_free(n);
        sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
        return NULL;
    }
    return n;
}

const char *sqle_odbc_conn_string(const void *self)
{
    const odbc_conn *c = self;
    return c != NULL ? c->conn_str : NULL;
}

static int odbc_connect(void *self, sqlease_error *err)
{
    return do_connect(self, err);
}

static int odbc_connected(void *self)
{
    const odbc_conn *c = self;
    return c != NULL && c->connected;
}

/* ------------------------------------------------------------------ */
/* Executing                                                           */
/* ------------------------------------------------------------------ */

/* The prepared handle for `sql`, preparing and caching it on first use. */
static int get_stmt(odbc_conn *c, const char *sql, stmt_entry **out, sqlease_error *err)
{
    uint64_t h = hash_sql(sql);
    stmt_entry *e = cache_find(c, sql, h);
    SQLRETURN r;

    if (e == NULL) {
        e = cache_add(c, sql, h);
        if (e == NULL)
            return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    if (e->h == SQL_NULL_HSTMT) {
        SQLHSTMT st = SQL_NULL_HSTMT;
        r = SQLAllocHandle(SQL_HANDLE_STMT, c->dbc, &st);
        if (!ok(r))
            return stmt_failure(c, SQL_NULL_HSTMT, 0, "SQLAllocHandle(STMT)", r, err);
        SQLSetStmtAttr(st, SQL_ATTR_QUERY_TIMEOUT, (SQLPOINTER)secs_up(c->query_timeout_ms),
                       SQL_IS_UINTEGER);
        r = SQLPrepare(st, (SQLCHAR *)e->sql, SQL_NTS);
        if (!ok(r))
            return stmt_failure(c, st, 1, "SQLPrepare", r, err);
        e->h = st;
    }
    *out = e;
    return SQLEASE_OK;
}

/* Fetch the next row into `out`.  Text that does not fit is an error
 * rather than a silently shortened value: an owner id cut short would
 * compare unequal to the real one. */
static int fetch_row(odbc_conn *c, SQLHSTMT h, db_out *out, size_t nout, int *has_row,
                     sqlease_error *err)
{
    SQLRETURN r;
    size_t i;

    r = SQLFetch(h);
    if (r == SQL_NO_DATA) {
        /* No row reads as all-NULL, so a caller that forgets to look at
         * has_row still never takes a stale value for data. */
        for (i = 0; i < nout; i++)
            out[i].is_null = 1;
        *has_row = 0;
        return SQLEASE_OK;
    }
    if (!ok(r))
        return stmt_failure(c, h, 0, "SQLFetch", r, err);
    *has_row = 1;
    for (i = 0; i < nout; i++) {
        SQLLEN ind = 0;
        SQLUSMALLINT col = (SQLUSMALLINT)(i + 1);
        out[i].is_null = 0;
        if (out[i].type == DB_INT64) {
            SQLBIGINT v = 0;
            r = SQLGetData(h, col, SQL_C_SBIGINT, &v, (SQLLEN)sizeof v, &ind);
            if (!ok(r))
                return stmt_failure(c, h, 0, "SQLGetData", r, err);
            if (ind == SQL_NULL_DATA) {
                out[i].is_null = 1;
                v = 0;
            }
            if (out[i].i != NULL)
                *out[i].i = (int64_t)v;
        } else if (out[i].type == DB_TEXT) {
            if (out[i].s == NULL || out[i].cap == 0 || out[i].cap > (size_t)LONG_MAX)
                return sqle_fail(err, SQLEASE_EINVAL, "column %u: no text buffer",
                                 (unsigned)col);
            out[i].s[0] = '\0';
            r = SQLGetData(h, col, SQL_C_CHAR, out[i].s, (SQLLEN)out[i].cap, &ind);
            if (!ok(r))
                return stmt_failure(c, h, 0, "SQLGetData", r, err);
            if (ind == SQL_NULL_DATA) {
                out[i].is_null = 1;
                out[i].s[0] = '\0';
            } else if (ind == SQL_NO_TOTAL || ind < 0 || (size_t)ind >= out[i].cap) {
                out[i].s[out[i].cap - 1] = '\0';
                return sqle_fail(err, SQLEASE_EDB,
                                 "column %u: text longer than %lu bytes", (unsigned)col,
                                 (unsigned long)(out[i].cap - 1));
            }
        } else {
            return sqle_fail(err, SQLEASE_EINVAL, "column %u: unknown type %d",
                             (unsigned)col, out[i].type);
        }
    }
    return SQLEASE_OK;
}

/*
 * Run one statement: reconnect if the last failure dropped the
 * connection, fetch or prepare the statement, bind, execute, read the
 * row count and up to max_rows rows (row r into out[r * nout ...]).  The
 * cursor is closed on every path so the cached statement can run again.
 * A statement that failed for a reason other than the connection is
 * re-prepared on its next use, so a table created or altered in between
 * is seen afresh.
 */
static int exec_fetch(odbc_conn *c, const char *sql, const db_bind *binds, size_t nbinds,
                      db_out *out, size_t nout, size_t max_rows, size_t *nrows, int64_t *rows,
                      sqlease_error *err)
{
    SQLLEN ind_stack[BIND_STACK];
    SQLLEN *ind = ind_stack;
    stmt_entry *e = NULL;
    SQLHSTMT h;
    SQLRETURN r;
    SQLLEN count = -1;
    size_t got = 0;
    int rc;
    size_t i;

    if (nrows != NULL)
        *nrows = 0;
    if (rows != NULL)
        *rows = -1;
    if (c == NULL || sql == NULL || (nbinds > 0 && binds == NULL) ||
        (nout > 0 && max_rows > 0 && out == NULL))
        return sqle_fail(err, SQLEASE_EINVAL, "exec: NULL argument");
    if (nbinds > 32767)
        return sqle_fail(err, SQLEASE_EINVAL, "exec: too many parameters");
    if (!c->connected) {
        rc = do_connect(c, err);
        if (rc != SQLEASE_OK)
            return rc;
    }
    rc = get_stmt(c, sql, &e, err);
    if (rc != SQLEASE_OK)
        return rc;
    h = e->h;

    if (nbinds > BIND_STACK) {
        ind = malloc(nbinds * sizeof *ind);
        if (ind == NULL)
            return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    SQLFreeStmt(h, SQL_RESET_PARAMS);
    for (i = 0; i < nbinds; i++) {
        SQLUSMALLINT pn = (SQLUSMALLINT)(i + 1);
        if (binds[i].type == DB_INT64) {
            ind[i] = 0;
            r = SQLBindParameter(h, pn, SQL_PARAM_INPUT, SQL_C_SBIGINT, SQL_BIGINT, 0, 0,
                                 (SQLPOINTER)&binds[i].i, 0, &ind[i]);
        } else if (binds[i].type == DB_TEXT) {
            size_t len = binds[i].s != NULL ? strlen(binds[i].s) : 0;
            SQLULEN decl = len > TEXT_DECL_MIN ? len : TEXT_DECL_MIN;
            ind[i] = binds[i].s != NULL ? (SQLLEN)len : SQL_NULL_DATA;
            r = SQLBindParameter(h, pn, SQL_PARAM_INPUT, SQL_C_CHAR, SQL_VARCHAR, decl, 0,
                                 (SQLPOINTER)binds[i].s, (SQLLEN)len + 1, &ind[i]);
        } else {
            rc = sqle_fail(err, SQLEASE_EINVAL, "parameter %lu: unknown type %d",
                           (unsigned long)(i + 1), binds[i].type);
            goto done;
        }
        if (!ok(r)) {
            rc = stmt_failure(c, h, 0, "SQLBindParameter", r, err);
            goto done;
        }
    }

    r = SQLExecute(h);
    if (r == SQL_NO_DATA) {
        /* An UPDATE or DELETE that matched nothing: success, 0 rows
         * (psqlODBC and others say so this way).  psqlODBC says it of an
         * UPDATE ... RETURNING that matched nothing too, and then has no
         * cursor to fetch from: no rows, read as no row. */
        count = 0;
        for (i = 0; i < nout; i++)
            out[i].is_null = 1;
        nout = 0;
    } else if (!ok(r)) {
        rc = stmt_failure(c, h, 0, "SQLExecute", r, err);
        goto done;
    } else if (!ok(SQLRowCount(h, &count))) {
        count = -1;
    }
    if (nout > 0) {
        /* An empty result reads as one all-NULL row in out (fetch_row),
         * so that a caller that ignores the count never takes a stale
         * value for data. */
        for (got = 0; got < max_rows; got++) {
            int row = 0;
            rc = fetch_row(c, h, out + got * nout, nout, &row, err);
            if (rc != SQLEASE_OK)
                goto done;
            if (!row)
                break;
        }
    }
    if (nrows != NULL)
        *nrows = got;
    if (rows != NULL)
        *rows = (int64_t)count;
    rc = SQLEASE_OK;

done:
    if (c->connected && e->h != SQL_NULL_HSTMT) {
        SQLFreeStmt(e->h, SQL_CLOSE);
        SQLFreeStmt(e->h, SQL_RESET_PARAMS);
        if (rc != SQLEASE_OK) {
            SQLFreeHandle(SQL_HANDLE_STMT, e->h);
            e->h = SQL_NULL_HSTMT;
        }
    }
    if (ind != ind_stack)
        free(ind);
    return rc;
}

static int odbc_exec(void *self, const char *sql, const db_bind *binds, size_t nbinds,
                     db_out *out, size_t nout, int *has_row, int64_t *rows,
                     sqlease_error *err)
{
    size_t n = 0;
    int rc;

    if (has_row != NULL)
        *has_row = 0;
    rc = exec_fetch(self, sql, binds, nbinds, out, nout, nout > 0 ? 1 : 0, &n, rows, err);
    if (rc == SQLEASE_OK && has_row != NULL)
        *has_row = n > 0;
    return rc;
}

static int odbc_exec_rows(void *self, const char *sql, const db_bind *binds, size_t nbinds,
                          db_out *out, size_t nout, size_t max_rows, size_t *nrows,
                          sqlease_error *err)
{
    return exec_fetch(self, sql, binds, nbinds, out, nout, max_rows, nrows, NULL, err);
}

static const sqle_dialect *odbc_dialect(void *self)
{
    odbc_conn *c = self;
    return c != NULL ? c->dialect : NULL;
}

static void odbc_close(void *self)
{
    conn_free(self);
}

/* odbc.ini and odbcinst.ini are read through the driver manager so that
 * the usual ODBCINI / ODBCSYSINI / user-then-system lookup applies (the
 * registry on Windows). */
static int odbc_ini_value(const char *section, const char *key, char *buf, size_t cap,
                          const char *file)
{
    int n;
    if (buf == NULL || cap == 0)
        return 0;
    buf[0] = '\0';
    if (section == NULL || section[0] == '\0' || key == NULL)
        return 0;
    if (cap > INT_MAX)
        cap = INT_MAX;
    n = SQLGetPrivateProfileString(section, key, "", buf, (int)cap, file);
    if (n <= 0 || buf[0] == '\0') {
        buf[0] = '\0';
        return 0;
    }
    buf[cap - 1] = '\0';
    return 1;
}

/* A connection string that names a DSN (DSN=...) connects with that
 * section's settings as much as a bare DSN name does (the driver reads
 * the section and lets the string's own keys win), so it is the same
 * section for sqlease's keys too.  The first DSN= counts, as it does for
 * the driver manager. */
int sqle_odbc_dsn_name(const char *conn, char *buf, size_t cap)
{
    if (buf == NULL || cap == 0)
        return 0;
    buf[0] = '\0';
    if (conn == NULL || conn[0] == '\0')
        return 0;
    if (strchr(conn, '=') == NULL) {
        if (strlen(conn) >= cap)
            return 0;
        memcpy(buf, conn, strlen(conn) + 1);
        return 1;
    }
    if (!conn_dsn(conn, buf, cap) || buf[0] == '\0') {
        buf[0] = '\0';
        return 0;
    }
    return 1;
}

int sqle_odbc_dsn_setting(const char *conn, const char *key, char *buf, size_t cap)
{
    char dsn[SQLE_DSN_NAME_MAX];

    if (buf != NULL && cap > 0)
        buf[0] = '\0';
    if (!sqle_odbc_dsn_name(conn, dsn, sizeof dsn))
        return 0;
    return odbc_ini_value(dsn, key, buf, cap, "odbc.ini");
}
