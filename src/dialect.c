/*
 * dialect.c -- finding a row of the generated dialect table by name or by
 * the DBMS a connection reports.
 *
 * The table is data (build/gen/dialects.c, from templates/dialects.toml);
 * the search is ordinary code, kept here so that the generator writes no
 * C logic and this can be read, compiled and tested like the rest.
 */
#include <stddef.h>

#include "dialect.h"

static int ascii_lower(int c)
{
    return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

/* 1 if needle occurs in hay, ignoring ASCII case (a DBMS reports its
 * name as it likes: "PostgreSQL", "MySQL", "mysql").  An empty needle
 * matches nothing; the generator refuses one anyway. */
static int contains_ascii_ci(const char *hay, const char *needle)
{
    size_t i, j;

    if (needle[0] == '\0')
        return 0;
    for (i = 0; hay[i] != '\0'; i++) {
        for (j = 0; needle[j] != '\0' && hay[i + j] != '\0'; j++) {
            if (ascii_lower((unsigned char)hay[i + j]) != ascii_lower((unsigned char)needle[j]))
                break;
        }
        if (needle[j] == '\0')
            return 1;
    }
    return 0;
}

static int same(const char *a, const char *b)
{
    while (*a != '\0' && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

/* Keys and aliases are compared exactly: they are identifiers the
 * generator checked ([a-z][a-z0-9_]*), and a user's "SQLite" is refused
 * with the list of names rather than guessed at. */
const sqle_dialect *sqle_dialect_find(const char *key)
{
    size_t i, j;

    if (key == NULL)
        return NULL;
    for (i = 0; i < sqle_dialect_count; i++) {
        const sqle_dialect *d = &sqle_dialects[i];
        if (same(d->key, key))
            return d;
        for (j = 0; j < d->naliases; j++) {
            if (same(d->aliases[j], key))
                return d;
        }
    }
    return NULL;
}

/* Substrings, because drivers decorate the name ("Microsoft SQL Server
 * 2019", "PostgreSQL 15.4"); the first row in key order wins, so that
 * the answer never depends on how the table was written. */
const sqle_dialect *sqle_dialect_detect(const char *dbms_name)
{
    size_t i, j;

    if (dbms_name == NULL)
        return NULL;
    for (i = 0; i < sqle_dialect_count; i++) {
        const sqle_dialect *d = &sqle_dialects[i];
        for (j = 0; j < d->ndbms_names; j++) {
            if (contains_ascii_ci(dbms_name, d->dbms_names[j]))
                return d;
        }
    }
    return NULL;
}

const char *sqle_dialect_keys(void)
{
    return sqle_dialect_key_list;
}
