/*
 * rows.c -- the simulator's copy of the lease table (rows.h), read with
 * SELECT * so that a column added to the table (by migrate, from a later
 * dialect table) is compared too without the simulator knowing it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rows.h"
#include "simdb.h"

typedef struct table {
    sim_row *rows;   /* by name (the SELECT orders them) */
    size_t n, cap;
} table;

static table g_cache, g_read;

static void row_free(sim_row *r)
{
    free(r->name);
    free(r->owner);
    free(r->handoff_to);
    free(r->all);
}

static void table_clear(table *t)
{
    size_t i;

    for (i = 0; i < t->n; i++)
        row_free(&t->rows[i]);
    t->n = 0;
}

void rows_reset(void)
{
    table_clear(&g_cache);
}

static char *dup(const char *s)
{
    size_t n;
    char *d;

    if (s == NULL)
        return NULL;
    n = strlen(s) + 1;
    d = malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

static int64_t num(const char *v, int *is_null)
{
    *is_null = v == NULL;
    return v != NULL ? strtoll(v, NULL, 10) : 0;
}

static int on_row(void *ud, int ncol, char **v, char **names)
{
    table *t = ud;
    sim_row *r;
    size_t len = 0;
    int i;
    char *p;

    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 32;
        sim_row *rows = realloc(t->rows, cap * sizeof *rows);
        if (rows == NULL)
            return 1;
        t->rows = rows;
        t->cap = cap;
    }
    r = &t->rows[t->n];
    memset(r, 0, sizeof *r);
    r->token_null = r->version_null = r->expires_null = r->acquired_null = 1;
    for (i = 0; i < ncol; i++) {
        const char *c = names[i];
        if (strcmp(c, "name") == 0)
            r->name = dup(v[i]);
        else if (strcmp(c, "owner") == 0)
            r->owner = dup(v[i]);
        else if (strcmp(c, "token") == 0)
            r->token = num(v[i], &r->token_null);
        else if (strcmp(c, "version") == 0)
            r->version = num(v[i], &r->version_null);
        else if (strcmp(c, "expires_at_ms") == 0)
            r->expires_at_ms = num(v[i], &r->expires_null);
        else if (strcmp(c, "acquired_at_ms") == 0)
            r->acquired_at_ms = num(v[i], &r->acquired_null);
        else if (strcmp(c, "handoff_to") == 0)
            r->handoff_to = dup(v[i]);
        else if (strcmp(c, "priority") == 0)
            r->priority = num(v[i], &(int){0});
        len += strlen(c) + (v[i] != NULL ? strlen(v[i]) : 4) + 3;
    }
    /* Every column as name=value (NULL as \1), so that one comparison
     * says whether anything in the row changed. */
    r->all = malloc(len + 1);
    if (r->name == NULL || r->all == NULL) {
        row_free(r);
        return 1;
    }
    p = r->all;
    for (i = 0; i < ncol; i++)
        p += sprintf(p, "%s=%s\x1f", names[i], v[i] != NULL ? v[i] : "\x01");
    t->n++;
    return 0;
}

static int read_table(const char *table_name, table *t)
{
    char sql[128];

    table_clear(t);
    snprintf(sql, sizeof sql, "SELECT * FROM %s ORDER BY name", table_name);
    return simdb_rows(sql, on_row, t);
}

static void swap_in(void)
{
    table t = g_cache;

    g_cache = g_read;
    g_read = t;
    table_clear(&g_read);
}

int rows_sync(const char *table_name)
{
    if (read_table(table_name, &g_read) != 0) {
        table_clear(&g_read);
        return -1;
    }
    swap_in();
    return 0;
}

int rows_diff(const char *table_name,
              void (*fn)(void *ud, const sim_row *old, const sim_row *now), void *ud)
{
    size_t i = 0, j = 0;

    if (read_table(table_name, &g_read) != 0) {
        table_clear(&g_read);
        return -1;
    }
    /* Both by name: a merge. */
    while (i < g_cache.n || j < g_read.n) {
        int c = i == g_cache.n ? 1 : j == g_read.n ? -1
                                                   : strcmp(g_cache.rows[i].name,
                                                            g_read.rows[j].name);
        if (c < 0) {
            fn(ud, &g_cache.rows[i++], NULL);
        } else if (c > 0) {
            fn(ud, NULL, &g_read.rows[j++]);
        } else {
            if (strcmp(g_cache.rows[i].all, g_read.rows[j].all) != 0)
                fn(ud, &g_cache.rows[i], &g_read.rows[j]);
            i++;
            j++;
        }
    }
    swap_in();
    return 0;
}

const sim_row *rows_get(const char *name)
{
    size_t lo = 0, hi = g_cache.n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(g_cache.rows[mid].name, name);
        if (c == 0)
            return &g_cache.rows[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}
