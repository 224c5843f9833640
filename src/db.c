/*
 * db.c -- the sqlease_db handle: one database connection behind a mutex.
 *
 * A handle wraps one instance of the database port (db.h), normally the
 * ODBC one.  Many leases and supervisors may share it; the mutex here is
 * what serialises their statements on the single connection, so that a
 * thousand lease names cost one connection rather than a thousand.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "internal.h"

void sqlease_db_options_init(sqlease_db_options *opt)
{
    if (opt == NULL)
        return;
    memset(opt, 0, sizeof *opt);
    opt->login_timeout_ms = 5000;
    opt->query_timeout_ms = 5000;
    opt->log_level = SQLEASE_LOG_INFO;
}

int db_wrap(sqlease_db **out, const db_ops *ops, void *self, const char *conn_redacted,
            const sqlease_db_options *opt, sqlease_error *err)
{
    sqlease_db *db = calloc(1, sizeof *db);
    if (db == NULL)
        return sqlease_fail(err, SQLEASE_ENOMEM, "out of memory");
    db->conn_redacted = sqlease_strdup(conn_redacted != NULL ? conn_redacted : "");
    if (db->conn_redacted == NULL || sqlease_mutex_init(&db->lock) != 0) {
        free(db->conn_redacted);
        free(db);
        return sqlease_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    db->ops = ops;
    db->self = self;
    db->log = opt != NULL ? opt->log : NULL;
    db->log_userdata = opt != NULL ? opt->log_userdata : NULL;
    db->log_level = opt != NULL ? opt->log_level : SQLEASE_LOG_INFO;
    db->query_timeout_ms =
        opt != NULL && opt->query_timeout_ms > 0 ? opt->query_timeout_ms : 5000;
    *out = db;
    return SQLEASE_OK;
}

/*
 * A DSN's own odbc.ini section may carry the lease settings, so that a
 * fleet's configuration lives where its connection already does.  They are
 * read once, here, and checked as strictly as flags: a bare number or a
 * bad identifier fails the open with the key and the DSN named, rather
 * than surfacing later as a lease that behaves differently from what the
 * file says.
 */
static int read_ini(const char *conn, sqlease_ini *ini, sqlease_error *err)
{
    static const struct { const char *key; size_t off; } durations[] = {
        { "SqleaseTTL", offsetof(sqlease_ini, ttl_ms) },
        { "SqleaseHeartbeat", offsetof(sqlease_ini, heartbeat_ms) },
        { "SqleaseRenewDeadline", offsetof(sqlease_ini, renew_deadline_ms) },
        { "SqleaseRetry", offsetof(sqlease_ini, retry_ms) },
    };
    char buf[512];
    size_t i;
    int rc;

    memset(ini, 0, sizeof *ini);
    if (odbc_dsn_setting(conn, "SqleaseTable", buf, sizeof buf)) {
        if (!sqlease_valid_table(buf))
            return sqlease_fail(err, SQLEASE_EINVAL,
                                "odbc.ini: SqleaseTable = '%.128s' in DSN '%.128s' is not a "
                                "valid table (identifier or schema.identifier)", buf, conn);
        ini->table = sqlease_strdup(buf);
        if (ini->table == NULL)
            return sqlease_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    if (odbc_dsn_setting(conn, "SqleaseName", buf, sizeof buf)) {
        if (strlen(buf) > SQLEASE_MAX_NAME)
            return sqlease_fail(err, SQLEASE_EINVAL,
                                "odbc.ini: SqleaseName in DSN '%.128s' is longer than %d bytes",
                                conn, SQLEASE_MAX_NAME);
        ini->name = sqlease_strdup(buf);
        if (ini->name == NULL)
            return sqlease_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    for (i = 0; i < sizeof durations / sizeof durations[0]; i++) {
        int64_t ms = 0;
        sqlease_error perr;
        if (!odbc_dsn_setting(conn, durations[i].key, buf, sizeof buf))
            continue;
        rc = sqlease_parse_duration(buf, &ms, &perr);
        if (rc == SQLEASE_OK && ms == 0)
            rc = sqlease_fail(&perr, SQLEASE_EINVAL, "duration '%s' is zero", buf);
        if (rc != SQLEASE_OK)
            return sqlease_fail(err, rc, "odbc.ini: %s in DSN '%.128s': %s", durations[i].key,
                                conn, perr.message);
        *(int64_t *)((char *)ini + durations[i].off) = ms;
    }
    return SQLEASE_OK;
}

static void free_ini(sqlease_ini *ini)
{
    free(ini->table);
    free(ini->name);
    memset(ini, 0, sizeof *ini);
}

/*
 * Open by DSN name or connection string.  The connection target and the
 * dialect fall back to $SQLEASE_DSN and the DSN's SqleaseDialect key, in
 * the design's precedence (API > environment > odbc.ini > default).
 */
int sqlease_db_open(sqlease_db **out, const sqlease_db_options *opt, sqlease_error *err)
{
    sqlease_db_options defaults;
    const char *conn;
    const char *dialect;
    char ini_dialect[64];
    sqlease_ini ini;
    void *self = NULL;
    char *redacted;
    int rc;

    sqlease_err_clear(err);
    if (out == NULL)
        return sqlease_fail(err, SQLEASE_EINVAL, "sqlease_db_open: out is NULL");
    *out = NULL;
    if (opt == NULL) {
        sqlease_db_options_init(&defaults);
        opt = &defaults;
    }
    conn = opt->conn;
    if (conn == NULL || conn[0] == '\0')
        conn = sqlease_getenv("SQLEASE_DSN");
    if (conn == NULL || conn[0] == '\0')
        conn = SQLEASE_DEFAULT_CONN;
    dialect = opt->dialect;
    if (dialect != NULL && dialect[0] == '\0')
        dialect = NULL;
    if (dialect == NULL && odbc_dsn_setting(conn, "SqleaseDialect", ini_dialect,
                                            sizeof ini_dialect))
        dialect = ini_dialect;
    rc = read_ini(conn, &ini, err);
    if (rc != SQLEASE_OK) {
        free_ini(&ini);
        return rc;
    }

    rc = odbc_open(&self, conn,
                   dialect, opt->login_timeout_ms > 0 ? opt->login_timeout_ms : 5000,
                   opt->query_timeout_ms > 0 ? opt->query_timeout_ms : 5000, err);
    if (rc != SQLEASE_OK) {
        free_ini(&ini);
        return rc;
    }
    redacted = sqlease_redact(conn);
    rc = db_wrap(out, &odbc_ops, self, redacted, opt, err);
    free(redacted);
    if (rc != SQLEASE_OK) {
        odbc_ops.close(self);
        free_ini(&ini);
        return rc;
    }
    (*out)->ini = ini;
    return rc;
}

void sqlease_db_close(sqlease_db *db)
{
    if (db == NULL)
        return;
    if (db->ops != NULL && db->ops->close != NULL)
        db->ops->close(db->self);
    sqlease_mutex_destroy(&db->lock);
    free_ini(&db->ini);
    free(db->conn_redacted);
    free(db);
}

const char *sqlease_db_dialect(const sqlease_db *db)
{
    const sqlease_dialect *d;
    if (db == NULL)
        return NULL;
    d = db->ops->dialect(db->self);
    return d != NULL ? d->key : NULL;
}

const char *sqlease_db_conn_redacted(const sqlease_db *db)
{
    return db != NULL ? db->conn_redacted : NULL;
}

int sqlease_options_effective(const sqlease_db *db, const sqlease_options *in,
                              sqlease_options *out, sqlease_error *err)
{
    sqlease_resolved r;
    int rc;

    sqlease_err_clear(err);
    if (db == NULL || out == NULL)
        return sqlease_fail(err, SQLEASE_EINVAL, "sqlease_options_effective: NULL argument");
    rc = sqlease_options_resolve(in, &db->ini, 0, &r, err);
    if (rc != SQLEASE_OK)
        return rc;
    if (in != NULL)
        *out = *in;
    else
        sqlease_options_init(out);
    out->table = r.table;
    out->name = r.name;
    out->ttl_ms = r.ttl_ms;
    out->heartbeat_ms = r.heartbeat_ms;
    out->renew_deadline_ms = r.renew_deadline_ms;
    out->retry_ms = r.retry_ms;
    return SQLEASE_OK;
}

uint64_t sqlease_db_statements(const sqlease_db *db)
{
    return db != NULL ? sqlease_atomic_load(&db->statements) : 0;
}

const sqlease_dialect *db_dialect(sqlease_db *db)
{
    return db->ops->dialect(db->self);
}

int db_exec(sqlease_db *db, const char *sql, const db_bind *binds, size_t nbinds,
            db_out *out, size_t nout, int *has_row, int64_t *rows, sqlease_error *err)
{
    int rc;
    sqlease_mutex_lock(&db->lock);
    sqlease_atomic_add(&db->statements, 1);
    rc = db->ops->exec(db->self, sql, binds, nbinds, out, nout, has_row, rows, err);
    sqlease_mutex_unlock(&db->lock);
    return rc;
}

/*
 * The clock is read in SQL so that every instance compares times from one
 * clock.  Zero and negative are rejected rather than passed on: zero is
 * what a failed conversion looks like, and it would make every lease look
 * expired to everyone.
 */
int sqlease_db_now_ms(sqlease_db *db, int64_t *now_ms, sqlease_error *err)
{
    const sqlease_dialect *d;
    int64_t v = 0;
    db_out out = { DB_INT64, NULL, NULL, 0, 0 };
    int has_row = 0;
    int rc;

    sqlease_err_clear(err);
    if (db == NULL || now_ms == NULL)
        return sqlease_fail(err, SQLEASE_EINVAL, "sqlease_db_now_ms: NULL argument");
    d = db_dialect(db);
    out.i = &v;
    rc = db_exec(db, d->now.sql, NULL, 0, &out, 1, &has_row, NULL, err);
    if (rc != SQLEASE_OK)
        return rc;
    if (!has_row || out.is_null || v <= 0)
        return sqlease_fail(err, SQLEASE_ECLOCK,
                            "the database clock read as %s from \"%s\"",
                            !has_row ? "no row" : out.is_null ? "NULL" : v == 0 ? "0" : "negative",
                            d->now_ms);
    *now_ms = v;
    return SQLEASE_OK;
}

int db_run(sqlease_db *db, const sqlease_stmt *st, const char *sql, const db_params *p,
           db_out *out, size_t nout, int *has_row, int64_t *rows, sqlease_error *err)
{
    db_bind binds[16];
    size_t i;

    if (st->nparams > sizeof binds / sizeof binds[0])
        return sqlease_fail(err, SQLEASE_EINVAL, "statement has %zu parameters; at most 16",
                            st->nparams);
    for (i = 0; i < st->nparams; i++) {
        memset(&binds[i], 0, sizeof binds[i]);
        switch (st->params[i]) {
        case SQLEASE_P_NAME:
            binds[i].type = DB_TEXT;
            binds[i].s = p->name;
            break;
        case SQLEASE_P_OWNER:
            binds[i].type = DB_TEXT;
            binds[i].s = p->owner;
            break;
        case SQLEASE_P_TTL_MS:
            binds[i].type = DB_INT64;
            binds[i].i = p->ttl_ms;
            break;
        case SQLEASE_P_TOKEN:
            binds[i].type = DB_INT64;
            binds[i].i = p->token;
            break;
        default:
            return sqlease_fail(err, SQLEASE_EINVAL, "unknown statement parameter %d",
                                (int)st->params[i]);
        }
    }
    return db_exec(db, sql != NULL ? sql : st->sql, binds, st->nparams, out, nout, has_row,
                   rows, err);
}
