/*
 * kinds.c -- which of the sqlite row's generated statements a text is
 * (kinds.h).  The texts are the generator's (build/gen/dialects.c) with
 * the table pasted in, as the library sends them; a batched one is its
 * head, its item repeated with the separator, and its tail, and each
 * item's binds are one row it names.  A text that is none of them is
 * SK_OTHER, which the checks refuse when it changes a row: a statement
 * added to the dialect table must be taught to the simulator.
 */
#include <stdlib.h>
#include <string.h>

#include "dialect.h"
#include "internal.h"
#include "kinds.h"

typedef struct one {
    sim_kind kind;
    const sqle_stmt *st;
    char *sql;
} one;

typedef struct each {
    sim_kind kind;
    const sqle_each_stmt *st;
    char *head, *tail;
    size_t hl, tl, il, sl;
} each;

static one g_one[80];
static size_t g_none;
static each g_each[16];
static size_t g_neach;
static sim_key *g_keys;
static size_t g_cap;

static const char *const g_names[SK_COUNT] = {
    "other", "now", "status", "status_each", "list", "probe", "ready_list",
    "renew", "renew_each", "release", "release_each",
    "handoff_request", "handoff_cancel", "handoff",
    "acquire", "take_watched", "take_each",
    "repair",
    "release_force", "seed", "seed_each", "fill_nulls", "ddl",
    "fire_last", "fire_read", "fire_list",
    "fire_claim", "fire_reclaim", "fire_end", "fire_record", "fire_abandon",
    "fire_prune", "fire_done",
    "hold_list",
    "hold_start", "hold_start_each", "hold_expire", "hold_expire_each", "hold_end",
    "hold_end_each", "hold_force", "hold_prune",
};
static const char *g_fire_table, *g_history_table;

const char *kinds_name(sim_kind k)
{
    return k < SK_COUNT ? g_names[k] : "?";
}

int kinds_reads(sim_kind k)
{
    return k == SK_NOW || k == SK_STATUS || k == SK_STATUS_EACH || k == SK_LIST ||
           k == SK_PROBE || k == SK_READY_LIST || k == SK_FIRE_LAST || k == SK_FIRE_READ ||
           k == SK_FIRE_LIST || k == SK_HOLD_LIST;
}

sim_table kinds_table(sim_kind k)
{
    if (k >= SK_FIRE_CLAIM && k <= SK_FIRE_DONE)
        return ST_FIRE;
    if (k >= SK_HOLD_START && k <= SK_HOLD_PRUNE)
        return ST_HOLD;
    if (k == SK_OTHER || k == SK_DDL || kinds_reads(k))
        return ST_NONE;
    return ST_LEASE;
}

int kinds_simulated(sim_kind k)
{
    return k != SK_FIRE_DONE;
}

int kinds_proves(sim_kind k)
{
    return k == SK_RENEW || k == SK_RENEW_EACH || k == SK_ACQUIRE || k == SK_TAKE_WATCHED ||
           k == SK_TAKE_EACH;
}

static int add_one(sim_kind k, const sqle_stmt *st, const char *table)
{
    if (st->sql == NULL)
        return 0;
    if (g_none == sizeof g_one / sizeof g_one[0])
        return -1;
    g_one[g_none].kind = k;
    g_one[g_none].st = st;
    g_one[g_none].sql = sqle_sql_for_all(st->sql, table, g_fire_table, g_history_table);
    if (g_one[g_none].sql == NULL)
        return -1;
    g_none++;
    return 0;
}

static int add_each(sim_kind k, const sqle_each_stmt *st, const char *table)
{
    each *e;

    if (st->head.sql == NULL)
        return 0;
    if (g_neach == sizeof g_each / sizeof g_each[0])
        return -1;
    e = &g_each[g_neach];
    e->kind = k;
    e->st = st;
    e->head = sqle_sql_for_all(st->head.sql, table, g_fire_table, g_history_table);
    e->tail = sqle_sql_for_all(st->tail.sql, table, g_fire_table, g_history_table);
    if (e->head == NULL || e->tail == NULL)
        return -1;
    e->hl = strlen(e->head);
    e->tl = strlen(e->tail);
    e->il = strlen(st->item.sql);
    e->sl = strlen(st->sep);
    g_neach++;
    return 0;
}

int kinds_init(const char *table, const char *fire_table, const char *history_table)
{
    const sqle_dialect *d = sqle_dialect_find("sqlite");
    int rc = 0;

    if (d == NULL)
        return -1;
    g_fire_table = fire_table;
    g_history_table = history_table;
    /* Order matters only for texts that are the same (a probe and
     * make_exact are one SELECT on SQLite): the first wins. */
    rc |= add_one(SK_RENEW, &d->renew, table);
    rc |= add_one(SK_STATUS, &d->status, table);
    rc |= add_one(SK_ACQUIRE, &d->acquire, table);
    rc |= add_one(SK_TAKE_WATCHED, &d->take_watched, table);
    rc |= add_one(SK_RELEASE, &d->release, table);
    rc |= add_one(SK_NOW, &d->now, table);
    rc |= add_one(SK_LIST, &d->list, table);
    rc |= add_one(SK_RELEASE_FORCE, &d->release_force, table);
    rc |= add_one(SK_SEED, &d->seed, table);
    rc |= add_one(SK_FILL_NULLS, &d->fill_nulls, table);
    rc |= add_one(SK_REPAIR, &d->repair, table);
    rc |= add_one(SK_PROBE, &d->probe_token, table);
    rc |= add_one(SK_PROBE, &d->probe_version, table);
    rc |= add_one(SK_PROBE, &d->probe_data, table);
    rc |= add_one(SK_PROBE, &d->probe_ttl, table);
    rc |= add_one(SK_PROBE, &d->probe_last_owner, table);
    rc |= add_one(SK_PROBE, &d->probe_exact, table);
    rc |= add_one(SK_PROBE, &d->probe_handoff_to, table);
    rc |= add_one(SK_PROBE, &d->probe_priority, table);
    rc |= add_one(SK_READY_LIST, &d->ready_list, table);
    rc |= add_one(SK_HANDOFF_REQUEST, &d->handoff_request, table);
    rc |= add_one(SK_HANDOFF_CANCEL, &d->handoff_cancel, table);
    rc |= add_one(SK_HANDOFF, &d->handoff, table);
    rc |= add_one(SK_DDL, &d->make_exact, table);
    rc |= add_one(SK_DDL, &d->create_table, table);
    rc |= add_one(SK_DDL, &d->add_token, table);
    rc |= add_one(SK_DDL, &d->add_version, table);
    rc |= add_one(SK_DDL, &d->add_data, table);
    rc |= add_one(SK_DDL, &d->add_ttl, table);
    rc |= add_one(SK_DDL, &d->add_last_owner, table);
    rc |= add_one(SK_PROBE, &d->probe_fire_at, table);
    rc |= add_one(SK_DDL, &d->add_fire_at, table);
    rc |= add_one(SK_DDL, &d->fire_create_table, table);
    rc |= add_one(SK_FIRE_CLAIM, &d->fire_claim, table);
    rc |= add_one(SK_FIRE_RECLAIM, &d->fire_reclaim, table);
    rc |= add_one(SK_FIRE_END, &d->fire_end, table);
    rc |= add_one(SK_FIRE_RECORD, &d->fire_record, table);
    rc |= add_one(SK_FIRE_ABANDON, &d->fire_abandon, table);
    rc |= add_one(SK_FIRE_LAST, &d->fire_last, table);
    rc |= add_one(SK_FIRE_READ, &d->fire_read, table);
    rc |= add_one(SK_FIRE_LIST, &d->fire_list, table);
    rc |= add_one(SK_FIRE_PRUNE, &d->fire_prune, table);
    rc |= add_one(SK_FIRE_DONE, &d->fire_done, table);
    rc |= add_one(SK_DDL, &d->hold_create_table, table);
    rc |= add_one(SK_HOLD_START, &d->hold_start, table);
    rc |= add_one(SK_HOLD_EXPIRE, &d->hold_expire, table);
    rc |= add_one(SK_HOLD_END, &d->hold_end, table);
    rc |= add_one(SK_HOLD_FORCE, &d->hold_force, table);
    rc |= add_one(SK_HOLD_LIST, &d->hold_list, table);
    rc |= add_one(SK_HOLD_PRUNE, &d->hold_prune, table);
    rc |= add_one(SK_DDL, &d->add_handoff_to, table);
    rc |= add_one(SK_DDL, &d->add_priority, table);
    rc |= add_each(SK_RENEW_EACH, &d->renew_each, table);
    rc |= add_each(SK_STATUS_EACH, &d->status_each, table);
    rc |= add_each(SK_TAKE_EACH, &d->take_each, table);
    rc |= add_each(SK_RELEASE_EACH, &d->release_each, table);
    rc |= add_each(SK_SEED_EACH, &d->seed_each, table);
    rc |= add_each(SK_STATUS_EACH, &d->renewed_each, table);
    rc |= add_each(SK_HOLD_START_EACH, &d->hold_start_each, table);
    rc |= add_each(SK_HOLD_EXPIRE_EACH, &d->hold_expire_each, table);
    rc |= add_each(SK_HOLD_END_EACH, &d->hold_end_each, table);
    return rc != 0 ? -1 : 0;
}

/* The number of items of e in sql, or 0 if sql is not e. */
static size_t each_items(const each *e, const char *sql, size_t len)
{
    const char *p, *end;
    size_t k = 0;

    if (len < e->hl + e->il + e->tl || memcmp(sql, e->head, e->hl) != 0 ||
        memcmp(sql + len - e->tl, e->tail, e->tl) != 0)
        return 0;
    p = sql + e->hl;
    end = sql + len - e->tl;
    for (;;) {
        if ((size_t)(end - p) < e->il || memcmp(p, e->st->item.sql, e->il) != 0)
            return 0;
        p += e->il;
        k++;
        if (p == end)
            return k;
        if ((size_t)(end - p) < e->sl || memcmp(p, e->st->sep, e->sl) != 0)
            return 0;
        p += e->sl;
    }
}

static int is_take(sim_kind k)
{
    return k == SK_ACQUIRE || k == SK_TAKE_WATCHED || k == SK_TAKE_EACH;
}

/* Bind the markers of one part (params[0..n-1] from binds[*at..]) into
 * key (NULL: the statement's own fields). */
static void read_part(sim_stmt *out, sim_key *key, const unsigned char *params, size_t n,
                      const db_bind *binds, size_t nbinds, size_t *at)
{
    size_t i;

    for (i = 0; i < n && *at < nbinds; i++, (*at)++) {
        const db_bind *b = &binds[*at];
        switch (params[i]) {
        case SQLEASE_P_NAME:
            if (key != NULL)
                key->name = b->s;
            break;
        case SQLEASE_P_OWNER:
            /* A take's owner is the new one, not part of what it matches. */
            if (key != NULL && !is_take(out->kind))
                key->owner = b->s;
            else
                out->owner = b->s;
            break;
        case SQLEASE_P_TOKEN:
            if (key != NULL) {
                key->token = b->i;
                key->has_token = 1;
            }
            break;
        case SQLEASE_P_VERSION:
            if (key != NULL) {
                key->version = b->i;
                key->has_version = 1;
            }
            break;
        case SQLEASE_P_TTL_MS:
            out->ttl_ms = b->i;
            break;
        case SQLEASE_P_JOB:
            if (key != NULL)
                key->job = b->s;
            break;
        case SQLEASE_P_FIRE_AT_MS:
            if (key != NULL) {
                key->fire_at_ms = b->i;
                key->has_fire_at = 1;
            }
            break;
        case SQLEASE_P_ATTEMPT:
            if (key != NULL) {
                key->attempt = b->i;
                key->has_attempt = 1;
            }
            break;
        case SQLEASE_P_STATE:
            out->state = b->s;
            break;
        case SQLEASE_P_ENDED_AT_MS:
            out->ended_at_ms = b->i;
            break;
        case SQLEASE_P_SINCE_MS:
            out->since_ms = b->i;
            break;
        case SQLEASE_P_BEFORE_MS:
            out->before_ms = b->i;
            break;
        case SQLEASE_P_TARGET:
            out->target = b->s;
            break;
        default:
            break;
        }
    }
}

static sim_key *keys(size_t n)
{
    if (n > g_cap) {
        sim_key *k = realloc(g_keys, n * sizeof *k);
        if (k == NULL)
            return NULL;
        g_keys = k;
        g_cap = n;
    }
    memset(g_keys, 0, n * sizeof *g_keys);
    return g_keys;
}

void kinds_parse(const char *sql, const db_bind *binds, size_t nbinds, sim_stmt *out)
{
    size_t i, len = strlen(sql), at = 0;

    memset(out, 0, sizeof *out);
    out->ttl_ms = -1;
    out->ended_at_ms = -1;
    out->since_ms = out->before_ms = -1;
    for (i = 0; i < g_none; i++) {
        if (strcmp(sql, g_one[i].sql) != 0)
            continue;
        out->kind = g_one[i].kind;
        out->keys = keys(1);
        if (out->keys == NULL)
            return;
        out->nkeys = 1;
        read_part(out, out->keys, g_one[i].st->params, g_one[i].st->nparams, binds, nbinds,
                  &at);
        if (out->keys[0].name == NULL)
            out->nkeys = 0; /* names no row (now, a probe, DDL) */
        return;
    }
    for (i = 0; i < g_neach; i++) {
        const each *e = &g_each[i];
        size_t n = each_items(e, sql, len), k;
        if (n == 0)
            continue;
        out->kind = e->kind;
        out->keys = keys(n);
        if (out->keys == NULL)
            return;
        out->nkeys = n;
        read_part(out, NULL, e->st->head.params, e->st->head.nparams, binds, nbinds, &at);
        for (k = 0; k < n; k++)
            read_part(out, &out->keys[k], e->st->item.params, e->st->item.nparams, binds,
                      nbinds, &at);
        read_part(out, NULL, e->st->tail.params, e->st->tail.nparams, binds, nbinds, &at);
        return;
    }
}

char *kinds_swap(const char *sql, const char *from, const char *to)
{
    const char *at = strstr(sql, from);
    size_t fl = strlen(from), tl = strlen(to), n;
    char *s;

    if (at == NULL)
        return NULL;
    n = strlen(sql) - fl + tl;
    s = malloc(n + 1);
    if (s == NULL)
        return NULL;
    memcpy(s, sql, (size_t)(at - sql));
    memcpy(s + (at - sql), to, tl);
    strcpy(s + (at - sql) + tl, at + fl);
    return s;
}
