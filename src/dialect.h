/*
 * dialect.h -- finding a row of the dialect table.
 *
 * The rows themselves (their statements, clock, driver settings) are
 * data generated from templates/dialects.toml into build/gen/dialects.h;
 * this is the code that picks one: by the name a user gives (--dialect,
 * SqleaseDialect) or by the DBMS name a connection reports.
 */
#ifndef SQLEASE_DIALECT_H
#define SQLEASE_DIALECT_H

#include "dialects.h" /* generated: build/gen/dialects.h */

/* The dialect with this key or alias (exact, case-sensitive); NULL if
 * unknown or key is NULL. */
const sqle_dialect *sqle_dialect_find(const char *key);
/* The first dialect, in key order, one of whose dbms_names is a
 * case-insensitive substring of dbms_name; NULL if none or dbms_name is
 * NULL. */
const sqle_dialect *sqle_dialect_detect(const char *dbms_name);
/* The known keys, sorted, separated by ", ". */
const char *sqle_dialect_keys(void);

#endif
