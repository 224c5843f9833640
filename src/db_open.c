/*
 * db_open.c -- sqlease_db_open: a handle (db.c) over the ODBC port
 * (odbc.c), with the settings of the DSN's odbc.ini section.
 *
 * Kept apart from db.c so that the handle knows no port by name: the
 * simulator (tests/sim/) links db.c with a database port of its own and
 * neither this file nor odbc.c, and nothing in db.c reaches for ODBC.
 */
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "internal.h"
#include "odbc.h"

/* The odbc.ini lookup sqle_ini_read is given: the DSN's own section,
 * through the driver manager. */
static int dsn_ini_get(void *conn, const char *key, char *buf, size_t cap)
{
    return sqle_odbc_dsn_setting(conn, key, buf, cap);
}

/*
 * A DSN's own odbc.ini section may carry the lease settings, so that a
 * fleet's configuration lives where its connection already does: the
 * section of a bare DSN name, or of the DSN= in a connection string
 * ("DSN=jobs;UID=x" connects with that section too).  They are read once
 * per open, here; sqle_ini_read (options.c) checks them.
 */
int sqle_dsn_ini_read(const char *conn, sqle_ini *ini, sqlease_error *err)
{
    char dsn[SQLE_DSN_NAME_MAX];

    memset(ini, 0, sizeof *ini);
    /* Messages name the DSN, never the connection string (it may carry a
     * password). */
    if (!sqle_odbc_dsn_name(conn, dsn, sizeof dsn))
        return SQLEASE_OK;
    return sqle_ini_read(dsn_ini_get, (void *)conn, dsn, ini, err);
}

void sqle_dsn_ini_free(sqle_ini *ini)
{
    sqle_ini_free(ini);
}

/*
 * Open by DSN name or connection string.  The connection target and the
 * dialect fall back to $SQLEASE_DSN and the DSN's SqleaseDialect key, in
 * the design's precedence (API > environment > odbc.ini > default).
 */
int sqlease_db_open(sqlease_db **out, const sqlease_db_options *opt_in, sqlease_error *err)
{
    sqlease_db_options full;
    const sqlease_db_options *opt = &full;
    const char *conn;
    const char *dialect;
    char ini_dialect[64];
    sqle_ini ini;
    void *self = NULL;
    char *redacted;
    int rc;

    sqle_err_clear(err);
    if (out == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_db_open: out is NULL");
    *out = NULL;
    sqlease_db_options_init(&full);
    if (opt_in != NULL) {
        rc = sqle_struct_in(&full, sizeof full, opt_in, "sqlease_db_options",
                            "sqlease_db_options_init", err);
        if (rc != SQLEASE_OK)
            return rc;
    }
    conn = opt->conn;
    if (conn == NULL || conn[0] == '\0')
        conn = sqle_getenv("SQLEASE_DSN");
    if (conn == NULL || conn[0] == '\0')
        conn = SQLEASE_DEFAULT_CONN;
    dialect = opt->dialect;
    if (dialect != NULL && dialect[0] == '\0')
        dialect = NULL;
    if (dialect == NULL && sqle_odbc_dsn_setting(conn, "SqleaseDialect", ini_dialect,
                                                 sizeof ini_dialect))
        dialect = ini_dialect;
    rc = sqle_dsn_ini_read(conn, &ini, err);
    if (rc != SQLEASE_OK) {
        sqle_dsn_ini_free(&ini);
        return rc;
    }

    rc = sqle_odbc_new_with(&self, conn,
                            dialect, opt->login_timeout_ms > 0 ? opt->login_timeout_ms : 5000,
                            opt->query_timeout_ms > 0 ? opt->query_timeout_ms : 5000,
                            opt->must_exist, err);
    if (rc != SQLEASE_OK) {
        sqle_dsn_ini_free(&ini);
        return rc;
    }
    redacted = sqle_redact(conn);
    if (redacted == NULL) {
        sqle_odbc_ops.close(self);
        sqle_dsn_ini_free(&ini);
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    rc = sqle_db_wrap(out, &sqle_odbc_ops, self, redacted, opt, err);
    free(redacted);
    if (rc != SQLEASE_OK) {
        sqle_dsn_ini_free(&ini);
        return rc;
    }
    (*out)->ini = ini;
    return rc;
}
