/*
 * odbc.h -- the ODBC port (odbc.c), the one file that speaks ODBC, and
 * what is read from a DSN's odbc.ini section (db_open.c, which opens a
 * handle over this port).  Nothing here is needed by a second port.
 */
#ifndef SQLEASE_ODBC_H
#define SQLEASE_ODBC_H

#include <stddef.h>
#include <stdint.h>

#include "options.h"
#include "port.h"

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
 * SQLEASE_EINVAL naming the key and the DSN.  sqlease_db_open
 * (db_open.c) reads them so; the tool also reads them before it can
 * connect (supervise's retry while the database is away).  Free with sqle_dsn_ini_free, also after
 * an error. */
int sqle_dsn_ini_read(const char *conn, sqle_ini *ini, sqlease_error *err);
void sqle_dsn_ini_free(sqle_ini *ini);

/* Read a key from the odbc.ini section of the DSN that `conn` names (a
 * DSN name, or a connection string with DSN=; see sqle_odbc_dsn_name)
 * through the driver manager (SQLGetPrivateProfileString).  Returns 1 and
 * fills buf if the key is set, 0 if it is not or `conn` names no DSN. */
int sqle_odbc_dsn_setting(const char *conn, const char *key, char *buf, size_t cap);

#endif
