/*
 * ledger.c -- the fire ledger's and the holder history's rows that a
 * statement names, read before and after it (ledger.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger.h"
#include "simdb.h"

typedef struct rowset {
    side_row *v;
    size_t n, cap;
} rowset;

static const char *g_tables[4];
static rowset g_before, g_after;
static sim_table g_t;
static char *g_where;

int ledger_init(const char *fire_table, const char *history_table)
{
    g_tables[ST_FIRE] = fire_table;
    g_tables[ST_HOLD] = history_table;
    return fire_table != NULL && history_table != NULL ? 0 : -1;
}

static int64_t num(const char *v)
{
    return v != NULL ? strtoll(v, NULL, 10) : 0;
}

static void text(char *dst, size_t cap, const char *v)
{
    snprintf(dst, cap, "%s", v != NULL ? v : "");
}

static int on_row(void *ud, int ncol, char **v, char **names)
{
    rowset *s = ud;
    side_row *r;
    int i;

    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        side_row *nv = realloc(s->v, cap * sizeof *nv);
        if (nv == NULL)
            return 1;
        s->v = nv;
        s->cap = cap;
    }
    r = &s->v[s->n++];
    memset(r, 0, sizeof *r);
    for (i = 0; i < ncol; i++) {
        const char *c = names[i];
        if (strcmp(c, "name") == 0)
            text(r->name, sizeof r->name, v[i]);
        else if (strcmp(c, "job") == 0)
            text(r->job, sizeof r->job, v[i]);
        else if (strcmp(c, "fire_at_ms") == 0)
            r->fire_at_ms = num(v[i]);
        else if (strcmp(c, "token") == 0)
            r->token = num(v[i]);
        else if (strcmp(c, "attempt") == 0)
            r->attempt = num(v[i]);
        else if (strcmp(c, "started_at_ms") == 0)
            r->started_at_ms = num(v[i]);
        else if (strcmp(c, "ended_at_ms") == 0)
            r->ended_at_ms = num(v[i]);
        else if (strcmp(c, "owner") == 0)
            text(r->owner, sizeof r->owner, v[i]);
        else if (strcmp(c, "state") == 0 || strcmp(c, "ended") == 0)
            text(r->state, sizeof r->state, v[i]);
    }
    return 0;
}

/* A row's key: (name, job, fire_at_ms) of a fire, (name, token) of a
 * hold (job '' and fire_at_ms 0). */
static int cmp_key(const side_row *a, const side_row *b)
{
    int c = strcmp(a->name, b->name);

    if (c == 0)
        c = strcmp(a->job, b->job);
    if (c == 0)
        c = a->fire_at_ms < b->fire_at_ms ? -1 : a->fire_at_ms > b->fire_at_ms;
    if (c == 0)
        c = g_t == ST_HOLD ? (a->token < b->token ? -1 : a->token > b->token) : 0;
    return c;
}

static int read_rows(sim_table t, const char *where, rowset *s)
{
    char *sql;
    size_t n;
    int rc;

    s->n = 0;
    if (t != ST_FIRE && t != ST_HOLD)
        return -1;
    n = strlen(where) + 160;
    sql = malloc(n);
    if (sql == NULL)
        return -1;
    snprintf(sql, n, "SELECT * FROM %s WHERE %s ORDER BY name, %s", g_tables[t], where,
             t == ST_FIRE ? "job, fire_at_ms" : "token");
    rc = simdb_rows(sql, on_row, s);
    free(sql);
    return rc;
}

void ledger_before(sim_table t, const char *where)
{
    free(g_where);
    g_where = NULL;
    g_t = t;
    g_before.n = 0;
    if (where == NULL || (g_where = malloc(strlen(where) + 1)) == NULL)
        return;
    strcpy(g_where, where);
    if (read_rows(t, g_where, &g_before) != 0)
        g_before.n = 0;
}

static int same(const side_row *a, const side_row *b)
{
    return strcmp(a->name, b->name) == 0 && strcmp(a->job, b->job) == 0 &&
           a->fire_at_ms == b->fire_at_ms && a->token == b->token && a->attempt == b->attempt &&
           a->started_at_ms == b->started_at_ms && a->ended_at_ms == b->ended_at_ms &&
           strcmp(a->owner, b->owner) == 0 && strcmp(a->state, b->state) == 0;
}

int ledger_after(void (*fn)(void *ud, const side_row *old, const side_row *now), void *ud)
{
    size_t i = 0, j = 0;
    int n = 0;

    if (g_where == NULL || read_rows(g_t, g_where, &g_after) != 0)
        return 0;
    /* Both in key order (the SELECT's, which cmp_key follows for the
     * keys of one table): a merge. */
    while (i < g_before.n || j < g_after.n) {
        int c = i == g_before.n ? 1 : j == g_after.n ? -1
                                                     : cmp_key(&g_before.v[i], &g_after.v[j]);
        if (c < 0) {
            fn(ud, &g_before.v[i++], NULL);
            n++;
        } else if (c > 0) {
            fn(ud, NULL, &g_after.v[j++]);
            n++;
        } else {
            if (!same(&g_before.v[i], &g_after.v[j])) {
                fn(ud, &g_before.v[i], &g_after.v[j]);
                n++;
            }
            i++;
            j++;
        }
    }
    free(g_where);
    g_where = NULL;
    return n;
}

int ledger_rows(sim_table t, const char *where, int (*fn)(void *ud, const side_row *r),
                void *ud)
{
    rowset s = {NULL, 0, 0};
    size_t i;
    int rc;

    rc = read_rows(t, where, &s);
    for (i = 0; rc == 0 && i < s.n; i++)
        if (fn(ud, &s.v[i]) != 0)
            break;
    free(s.v);
    return rc;
}
