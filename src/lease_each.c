/*
 * lease_each.c -- many leases of one table answered by one statement per
 * chunk: the holders' renews, and the followers' reads.
 *
 * A process that holds a thousand leases on one connection would
 * otherwise send a thousand renews per heartbeat, each a round trip and
 * (on SQLite) a durable commit.  These statements carry up to the
 * dialect's batch_max leases each, built from the dialect table's
 * batched statements ({each: ...}, see templates/dialects.toml), and
 * still give every lease its own exact answer:
 *
 *   - A renew returns the name, owner and token of each row it renewed
 *     (RETURNING, OUTPUT), and a hold is renewed exactly when its triple
 *     comes back.  A dialect whose UPDATE cannot return rows
 *     (MySQL/MariaDB) answers with the count; a count equal to the number
 *     of distinct holds means all were renewed, and only a count short of
 *     it costs a second statement, the read of which holds are live now
 *     (a hold the renew missed cannot come back: a take changes the
 *     token).
 *   - A read returns each row with the name first; a name without a row
 *     is the lease's ENOROW.
 *
 * The number of leases a statement carries is padded up to a power of
 * two (at most batch_max) by repeating the last one: the ODBC layer
 * keeps a prepared statement per distinct text, and this bounds the
 * texts to a handful per table.  A hold or a name listed twice matches
 * its row once.
 *
 * Each lease's own statement counter counts every statement that carried
 * it, so sqlease_state.statements still says what the lease cost; the
 * handle's counter (sqlease_db_statements) counts each statement once.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "internal.h"
#include "lease.h"
#include "history.h"
#include "lease_impl.h"

/* ------------------------------------------------------------------ */
/* The holder history of a batch                                        */
/* ------------------------------------------------------------------ */

/* A lease of a batch whose hold the history records, and the read that
 * preceded its take (a take's: who held the row, which token, and when
 * that hold ended). */
typedef struct hist_mark {
    sqlease_lease *lease;
    int64_t token;
    char prev_owner[SQLEASE_MAX_OWNER + 1];
    int64_t prev_token, prev_ended_at;
} hist_mark;

/*
 * The history of marks[0..n-1] (leases of one handle and lease table),
 * one batched statement per chunk for each history table among them: the
 * starts of the holds taken (take), with the 'expired' ends of the holds
 * they took over, or the ends `how` of the holds given.  Best effort, as
 * every history write (history.c).
 */
static void hist_batch(const hist_mark *marks, size_t n, int take, int how, int64_t deadline)
{
    sqle_hist_hold *holds, *over;
    int *done;
    size_t i, j;

    if (n == 0)
        return;
    holds = malloc(n * sizeof *holds);
    over = malloc(n * sizeof *over);
    done = calloc(n, sizeof *done);
    if (holds == NULL || over == NULL || done == NULL)
        goto out;
    for (i = 0; i < n; i++) {
        const sqle_hist *h = &marks[i].lease->hist;
        size_t k = 0, ko = 0;

        if (done[i] || h->sql == NULL)
            continue;
        /* Every lease of this history table, from here on. */
        for (j = i; j < n; j++) {
            const hist_mark *m = &marks[j];
            if (done[j] || m->lease->hist.sql != h->sql)
                continue;
            done[j] = 1;
            holds[k].name = m->lease->name;
            holds[k].owner = m->lease->owner;
            holds[k].token = m->token;
            holds[k].ended_at_ms = 0;
            k++;
            if (take && m->prev_ended_at > 0) {
                over[ko].name = m->lease->name;
                over[ko].owner = m->prev_owner;
                over[ko].token = m->prev_token;
                over[ko].ended_at_ms = m->prev_ended_at;
                ko++;
            }
        }
        if (take)
            sqle_hist_taken_each(h, holds, k, over, ko, deadline);
        else
            sqle_hist_ended_each(h, holds, k, how, deadline);
    }
out:
    free(holds);
    free(over);
    free(done);
}

const char *sqle_lease_table(const sqlease_lease *l)
{
    return l->table;
}

int64_t sqle_lease_ttl(const sqlease_lease *l)
{
    return l->ttl_ms;
}

const char *sqle_lease_data(const sqlease_lease *l)
{
    return l->data;
}

/* ------------------------------------------------------------------ */
/* Building a batched statement                                         */
/* ------------------------------------------------------------------ */

/* Which token a lease's item binds: the hold it renews, the one its
 * read saw (a take), or the one it last proved (a release). */
enum { TOK_HELD, TOK_SEEN, TOK_PROVEN };

/* A lease's part in a statement: the values its item binds. */
static void lease_params(const sqle_each *e, int tok, int64_t min_hold_ms, db_params *p)
{
    const sqlease_lease *l = e->lease;

    memset(p, 0, sizeof *p);
    p->name = l->name;
    p->owner = l->owner;
    p->ttl_ms = l->ttl_ms;
    p->token = tok == TOK_SEEN ? e->info.token : tok == TOK_PROVEN ? l->proven_token
                                                                    : l->held_token;
    p->version = e->info.version; /* a take's: the version its read saw */
    p->min_hold_ms = min_hold_ms;
    p->data = l->data;
    p->priority = sqle_lease_priority(l); /* a take's, bound once */
}

/* Bind one part's markers from `p`, appending to binds[*nb]. */
static int bind_part(const sqle_stmt *part, const db_params *p, db_bind *binds, size_t *nb,
                     sqlease_error *err)
{
    size_t i;

    for (i = 0; i < part->nparams; i++) {
        if (sqle_db_param_bind(p, part->params[i], &binds[*nb]) != 0)
            return sqle_fail(err, SQLEASE_EINVAL, "batched statement: unknown parameter %d",
                             (int)part->params[i]);
        (*nb)++;
    }
    return SQLEASE_OK;
}

int sqle_each_build(const sqle_each_stmt *st, const char *table, const db_params *ps, size_t n,
                    size_t padded, char **sql, db_bind **binds, size_t *nbinds,
                    sqlease_error *err)
{
    return sqle_each_build_in(st, table, NULL, ps, n, padded, sql, binds, nbinds, err);
}

int sqle_each_build_in(const sqle_each_stmt *st, const char *table, const char *history_table,
                       const db_params *ps, size_t n, size_t padded, char **sql,
                       db_bind **binds, size_t *nbinds, sqlease_error *err)
{
    size_t hl = strlen(st->head.sql), il = strlen(st->item.sql), sl = strlen(st->sep);
    size_t tl = strlen(st->tail.sql);
    size_t len = hl + padded * il + (padded - 1) * sl + tl + 1;
    size_t nb = st->head.nparams + padded * st->item.nparams + st->tail.nparams;
    char *text, *q;
    size_t i;
    int rc;

    *sql = NULL;
    *binds = NULL;
    *nbinds = 0;
    text = malloc(len);
    *binds = malloc((nb > 0 ? nb : 1) * sizeof **binds);
    if (text == NULL || *binds == NULL) {
        free(text);
        free(*binds);
        *binds = NULL;
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    q = text;
    memcpy(q, st->head.sql, hl);
    q += hl;
    for (i = 0; i < padded; i++) {
        if (i > 0) {
            memcpy(q, st->sep, sl);
            q += sl;
        }
        memcpy(q, st->item.sql, il);
        q += il;
    }
    memcpy(q, st->tail.sql, tl + 1);

    /* The head and the tail bind what is the same for every item (the
     * ttl): from the first. */
    rc = bind_part(&st->head, &ps[0], *binds, nbinds, err);
    for (i = 0; i < padded && rc == SQLEASE_OK; i++)
        rc = bind_part(&st->item, &ps[i < n ? i : n - 1], *binds, nbinds, err);
    if (rc == SQLEASE_OK)
        rc = bind_part(&st->tail, &ps[0], *binds, nbinds, err);
    if (rc == SQLEASE_OK) {
        *sql = sqle_sql_for_all(text, table, NULL, history_table);
        if (*sql == NULL)
            rc = sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    free(text);
    if (rc != SQLEASE_OK) {
        free(*binds);
        *binds = NULL;
        *nbinds = 0;
    }
    return rc;
}

/* sqle_each_build for the leases ls[0..n-1], each item bound from its
 * lease (text values point into the leases). */
static int build_tok(const sqle_each_stmt *st, const char *table, sqle_each *const *ls,
                     size_t n, size_t padded, int tok, int64_t min_hold_ms, char **sql,
                     db_bind **binds, size_t *nbinds, sqlease_error *err)
{
    db_params *ps = malloc(n * sizeof *ps);
    size_t i;
    int rc;

    *sql = NULL;
    *binds = NULL;
    *nbinds = 0;
    if (ps == NULL)
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    for (i = 0; i < n; i++)
        lease_params(ls[i], tok, min_hold_ms, &ps[i]);
    rc = sqle_each_build(st, table, ps, n, padded, sql, binds, nbinds, err);
    free(ps);
    return rc;
}

/* build_tok for the holds the leases have (renew, status). */
static int build(const sqle_each_stmt *st, const char *table, sqle_each *const *ls, size_t n,
                 size_t padded, char **sql, db_bind **binds, size_t *nbinds, sqlease_error *err)
{
    return build_tok(st, table, ls, n, padded, TOK_HELD, 0, sql, binds, nbinds, err);
}

/* Leases a chunk of k is sent as: the next power of two, at most max. */
size_t sqle_each_padded(size_t k, size_t max)
{
    size_t p = 1;

    while (p < k)
        p *= 2;
    return p < max ? p : max;
}

/* The chunk size: the dialect's batch_max, or less when asked (`max`,
 * 0: no limit of the caller's), and never more than its max_params
 * allows for this statement. */
size_t sqle_each_chunk_max(const sqle_dialect *d, const sqle_each_stmt *st, size_t max)
{
    size_t c = d->batch_max > 0 ? d->batch_max : 1;
    size_t fixed = st->head.nparams + st->tail.nparams;

    if (max > 0 && max < c)
        c = max;
    if (st->item.nparams > 0 && d->max_params > fixed &&
        c > (d->max_params - fixed) / st->item.nparams)
        c = (d->max_params - fixed) / st->item.nparams;
    return c > 0 ? c : 1;
}

/*
 * Every lease of a batch must share the handle and the table (and, for a
 * renew, the ttl, bound once): one statement cannot span two.  A batch
 * that mixes them is the caller's mistake, answered with EINVAL for every
 * lease before anything is sent.
 */
static int check_batch(sqle_each *each, size_t n, int same_ttl, const char *fn,
                       sqlease_error *err)
{
    const sqlease_lease *first;
    size_t i;

    if (each == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "%s: each is NULL", fn);
    first = each[0].lease;
    for (i = 0; i < n; i++) {
        const sqlease_lease *l = each[i].lease;
        if (l == NULL || first == NULL || l->db != first->db ||
            strcmp(l->table, first->table) != 0 || (same_ttl && l->ttl_ms != first->ttl_ms)) {
            size_t j;
            for (j = 0; j < n; j++)
                each[j].rc = SQLEASE_EINVAL;
            return sqle_fail(err, SQLEASE_EINVAL,
                             "%s: lease %zu is NULL or not of the first one's handle, table%s",
                             fn, i, same_ttl ? " and ttl" : "");
        }
    }
    return SQLEASE_OK;
}

/* A failed statement: the leases it carried and the ones not sent yet
 * get its status, with the lease that names the table explaining it. */
static int fail_rest(sqle_each **ls, size_t from, size_t n, int rc, sqlease_error *err)
{
    size_t i;

    if (from < n)
        rc = sqle_lease_explain(ls[from]->lease, rc, err);
    for (i = from; i < n; i++)
        ls[i]->rc = rc;
    return rc;
}

/* ------------------------------------------------------------------ */
/* The renew                                                            */
/* ------------------------------------------------------------------ */

/* A renewed row as the renew (or the follow-up read) returns it. */
typedef struct hold_row {
    char name[SQLEASE_MAX_NAME + 1];
    char owner[SQLEASE_MAX_OWNER + 1];
    int64_t token;
} hold_row;

static int cmp_hold(const char *name_a, const char *owner_a, int64_t token_a,
                    const char *name_b, const char *owner_b, int64_t token_b)
{
    int c = strcmp(name_a, name_b);

    if (c == 0)
        c = strcmp(owner_a, owner_b);
    if (c == 0)
        c = token_a < token_b ? -1 : token_a > token_b;
    return c;
}

static int cmp_hold_rows(const void *a, const void *b)
{
    const hold_row *x = a, *y = b;
    return cmp_hold(x->name, x->owner, x->token, y->name, y->owner, y->token);
}

/* Holds in (name, owner, token) order: equal holds are neighbours. */
static int cmp_each_hold(const void *a, const void *b)
{
    const sqlease_lease *x = (*(sqle_each *const *)a)->lease;
    const sqlease_lease *y = (*(sqle_each *const *)b)->lease;
    return cmp_hold(x->name, x->owner, x->held_token, y->name, y->owner, y->held_token);
}

/* Send `st` for ls[0..n-1] and fetch the holds it returns into rows
 * (room for `padded`); *nrows gets how many came. */
static int fetch_holds(const sqle_each_stmt *st, sqle_each **ls, size_t n, size_t padded,
                       int tok, int64_t min_hold_ms, int64_t deadline, hold_row *rows,
                       size_t *nrows, sqlease_error *err)
{
    sqlease_lease *l = ls[0]->lease;
    db_out *out;
    db_bind *binds = NULL;
    size_t nb = 0, i;
    char *sql = NULL;
    int rc;

    *nrows = 0;
    out = calloc(padded * 3, sizeof *out);
    if (out == NULL)
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    for (i = 0; i < padded; i++) {
        out[i * 3].type = DB_TEXT;
        out[i * 3].s = rows[i].name;
        out[i * 3].cap = sizeof rows[i].name;
        out[i * 3 + 1].type = DB_TEXT;
        out[i * 3 + 1].s = rows[i].owner;
        out[i * 3 + 1].cap = sizeof rows[i].owner;
        out[i * 3 + 2].type = DB_INT64;
        out[i * 3 + 2].i = &rows[i].token;
    }
    rc = build_tok(st, l->table, ls, n, padded, tok, min_hold_ms, &sql, &binds, &nb, err);
    if (rc == SQLEASE_OK) {
        for (i = 0; i < n; i++)
            sqle_atomic_add(&ls[i]->lease->statements, 1);
        rc = sqle_db_exec_rows_by(l->db, deadline, sql, binds, nb, out, 3, padded, nrows, err);
    }
    free(sql);
    free(binds);
    free(out);
    return rc;
}

/* Send `st` for ls[0..n-1]; *rows gets the count it reports. */
static int count_holds(const sqle_each_stmt *st, sqle_each **ls, size_t n, size_t padded,
                       int tok, int64_t min_hold_ms, int64_t deadline, int64_t *rows,
                       sqlease_error *err)
{
    sqlease_lease *l = ls[0]->lease;
    db_bind *binds = NULL;
    size_t nb = 0, i;
    char *sql = NULL;
    int rc;

    rc = build_tok(st, l->table, ls, n, padded, tok, min_hold_ms, &sql, &binds, &nb, err);
    if (rc == SQLEASE_OK) {
        for (i = 0; i < n; i++)
            sqle_atomic_add(&ls[i]->lease->statements, 1);
        rc = sqle_db_exec_by(l->db, deadline, sql, binds, nb, NULL, 0, NULL, rows, err);
    }
    free(sql);
    free(binds);
    return rc;
}

/* Each lease of the chunk: renewed if its hold is among rows[0..nrows-1]. */
static void mark_renewed(sqle_each **ls, size_t n, hold_row *rows, size_t nrows)
{
    size_t i;

    qsort(rows, nrows, sizeof *rows, cmp_hold_rows);
    for (i = 0; i < n; i++) {
        const sqlease_lease *l = ls[i]->lease;
        hold_row key;
        snprintf(key.name, sizeof key.name, "%s", l->name);
        snprintf(key.owner, sizeof key.owner, "%s", l->owner);
        key.token = l->held_token;
        ls[i]->rc = bsearch(&key, rows, nrows, sizeof *rows, cmp_hold_rows) != NULL ||
                            (nrows > 0 && SQLE_PLANTED(renew_each_marks_all))
                        ? SQLEASE_OK
                        : SQLE_PLANTED(renew_lost_is_error) ? SQLEASE_EDB : SQLEASE_NOT_HELD;
    }
}

/* Distinct holds among ls[0..n-1] (sorted: equal ones are neighbours). */
static size_t distinct_holds(sqle_each **ls, size_t n)
{
    size_t i, distinct = 0;

    for (i = 0; i < n; i++)
        if (i == 0 || cmp_each_hold(&ls[i - 1], &ls[i]) != 0)
            distinct++;
    return distinct;
}

/* How many rounds of "renew the holds still live" a short count gets
 * before the holds left are answered as not known (an error). */
#define RENEW_ROUNDS 3

/*
 * One chunk of holds (sorted, so equal ones are neighbours): the renew,
 * and on a dialect that only counts, what a count short of the distinct
 * holds means.  The read of the holds live now (renewed_each) tells the
 * ones that are gone, which are lost whatever the renew did: a renew
 * never brings a hold back.  It does not tell that the others were
 * renewed: a hold the renew missed because the database's clock called
 * it expired, and that reads as live again because the clock then
 * stepped back, looks the same as one it renewed, and would be taken
 * for a proof its holder never got (a watching follower sees its version
 * unchanged and takes it a ttl later, while its holder works on).  So
 * the live ones are renewed again, by themselves, until a count comes
 * back whole (RENEW_ROUNDS at most; what is left then is an error, not a
 * proof).  The proof is the first statement's sending, which is earlier
 * than any of them.  Sets each lease's rc, or returns a failure (rcs
 * then untouched).
 */
static int renew_chunk(const sqle_dialect *d, sqle_each **ls, size_t n, size_t padded,
                       int64_t deadline, sqlease_error *err)
{
    hold_row *rows;
    sqle_each **live = NULL;
    size_t nrows = 0, distinct, i, m = n, round;
    int64_t count = -1;
    int rc;

    rows = calloc(padded, sizeof *rows);
    if (rows == NULL)
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    if (d->renew_each_returns) {
        rc = fetch_holds(&d->renew_each, ls, n, padded, TOK_HELD, 0, deadline, rows, &nrows, err);
        if (rc == SQLEASE_OK)
            mark_renewed(ls, n, rows, nrows);
        free(rows);
        return rc;
    }
    live = malloc(n * sizeof *live);
    if (live == NULL) {
        free(rows);
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    memcpy(live, ls, n * sizeof *live);
    for (round = 0;; round++) {
        size_t pad = round == 0 ? padded : sqle_each_padded(m, padded);

        rc = count_holds(&d->renew_each, live, m, pad, TOK_HELD, 0, deadline, &count, err);
        if (rc != SQLEASE_OK)
            break;
        distinct = distinct_holds(live, m);
        if (count == (int64_t)distinct) {
            for (i = 0; i < m; i++)
                live[i]->rc = SQLEASE_OK;
            break;
        }
        if (count > (int64_t)distinct) {
            rc = sqle_fail(err, SQLEASE_EROWCOUNT,
                           "the renew of %zu leases reported %lld rows affected; expected at "
                           "most %zu (is the name not the primary key?)",
                           distinct, (long long)count, distinct);
            break;
        }
        /* Some hold is gone (or the driver did not count): which? */
        rc = fetch_holds(&d->renewed_each, live, m, pad, TOK_HELD, 0, deadline, rows, &nrows,
                         err);
        if (rc != SQLEASE_OK)
            break;
        mark_renewed(live, m, rows, nrows);
        {
            size_t w = 0;
            for (i = 0; i < m; i++)
                if (live[i]->rc == SQLEASE_OK)
                    live[w++] = live[i]; /* live, not proven: again */
            m = w;
        }
        if (m == 0)
            break;
        if (round + 1 == RENEW_ROUNDS) {
            for (i = 0; i < m; i++)
                live[i]->rc = SQLEASE_EROWCOUNT;
            sqle_fail(err, SQLEASE_EROWCOUNT, "the renew of %zu leases came back short %d "
                      "times; not known whether %zu of them were renewed", n, RENEW_ROUNDS, m);
            break;
        }
    }
    free(live);
    free(rows);
    return rc;
}

int sqle_lease_renew_each_max(sqle_each *each, size_t n, int64_t deadline, size_t max,
                              sqlease_error *err_in)
{
    sqlease_error local;
    sqlease_error *err = err_in != NULL ? err_in : &local;
    const sqle_dialect *d;
    sqle_each **ls;
    size_t i, m = 0, cmax;
    int rc = SQLEASE_OK;

    sqle_err_clear(err);
    if (n == 0)
        return SQLEASE_OK;
    rc = check_batch(each, n, 1, "renew_each", err);
    if (rc != SQLEASE_OK)
        return rc;
    d = each[0].lease->d;
    if (d->renew_each.head.sql == NULL ||
        (!d->renew_each_returns && d->renewed_each.head.sql == NULL)) {
        for (i = 0; i < n; i++)
            each[i].rc = SQLEASE_EDIALECT;
        return sqle_fail(err, SQLEASE_EDIALECT, "dialect %s has no batched renew", d->key);
    }
    ls = malloc(n * sizeof *ls);
    if (ls == NULL) {
        for (i = 0; i < n; i++)
            each[i].rc = SQLEASE_ENOMEM;
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    /* A lease with no hold has nothing to renew: not held, and nothing
     * sent for it. */
    for (i = 0; i < n; i++) {
        memset(&each[i].info, 0, sizeof each[i].info);
        if (each[i].lease->held_token < 0)
            each[i].rc = SQLEASE_NOT_HELD;
        else
            ls[m++] = &each[i];
    }
    if (deadline <= 0)
        deadline = sqle_db_deadline(each[0].lease->db);
    qsort(ls, m, sizeof *ls, cmp_each_hold);
    cmax = sqle_each_chunk_max(d, &d->renew_each, max);
    if (!d->renew_each_returns && sqle_each_chunk_max(d, &d->renewed_each, max) < cmax)
        cmax = sqle_each_chunk_max(d, &d->renewed_each, max);
    for (i = 0; i < m; i += cmax) {
        size_t k = m - i < cmax ? m - i : cmax;
        rc = renew_chunk(d, ls + i, k, sqle_each_padded(k, cmax), deadline, err);
        if (rc != SQLEASE_OK) {
            /* Not known either way: an error, not a loss; the holds are
             * kept for the next try. */
            rc = fail_rest(ls, i, m, rc, err);
            break;
        }
    }
    /* The holds found gone are lost: the history says so, unless a
     * taker or an operator said first how they ended, once the caller has
     * acted on the losses (sqle_lease_history_flush_each). */
    for (i = 0; i < m; i++)
        if (ls[i]->rc == SQLEASE_NOT_HELD && ls[i]->lease->hist.sql != NULL)
            ls[i]->lease->hist_lost = ls[i]->lease->held_token;
    /* What sqle_lease_acquire's renew does with its answer. */
    for (i = 0; i < n; i++) {
        sqlease_lease *l = each[i].lease;
        sqlease_lease_info *info = &each[i].info;
        if (each[i].rc == SQLEASE_OK) {
            l->proven_token = l->held_token;
            info->size = sizeof *info;
            snprintf(info->owner, sizeof info->owner, "%s", l->owner);
            snprintf(info->data, sizeof info->data, "%s", l->data != NULL ? l->data : "");
            info->token = l->held_token;
            info->held = info->mine = 1;
        } else if (each[i].rc == SQLEASE_NOT_HELD) {
            l->held_token = -1;
        }
    }
    free(ls);
    return rc;
}

void sqle_lease_history_flush_each(sqle_each *each, size_t n)
{
    hist_mark *lost;
    size_t i, nl = 0;

    for (i = 0; i < n; i++)
        if (each[i].lease->hist_lost >= 0)
            nl++;
    if (nl == 0)
        return;
    /* One statement per chunk, as the renew was. */
    lost = calloc(nl, sizeof *lost);
    nl = 0;
    for (i = 0; i < n; i++) {
        sqlease_lease *l = each[i].lease;
        if (l->hist_lost < 0)
            continue;
        if (lost != NULL) {
            lost[nl].lease = l;
            lost[nl].token = l->hist_lost;
            nl++;
        }
        l->hist_lost = -1;
    }
    if (lost != NULL) {
        hist_batch(lost, nl, 0, SQLE_END_LOST, sqle_db_deadline(each[0].lease->db));
        free(lost);
    }
}

int sqle_lease_renew_each(sqle_each *each, size_t n, int64_t deadline, sqlease_error *err)
{
    return sqle_lease_renew_each_max(each, n, deadline, 0, err);
}

/* ------------------------------------------------------------------ */
/* The read                                                             */
/* ------------------------------------------------------------------ */

/* status_each's columns: the name, then status's. */
#define EACH_COLUMNS (1 + SQLE_ROW_COLUMNS)

typedef struct name_row {
    char name[SQLEASE_MAX_NAME + 1];
    sqlease_lease_info info;
} name_row;

static int cmp_name_rows(const void *a, const void *b)
{
    return strcmp(((const name_row *)a)->name, ((const name_row *)b)->name);
}

static int cmp_name_key(const void *key, const void *row)
{
    return strcmp(key, ((const name_row *)row)->name);
}

static int cmp_each_name(const void *a, const void *b)
{
    return strcmp((*(sqle_each *const *)a)->lease->name, (*(sqle_each *const *)b)->lease->name);
}

/* One chunk of names: one read, every lease's info and rc from it. */
static int status_chunk(const sqle_dialect *d, sqle_each **ls, size_t n, size_t padded,
                        int64_t deadline, sqlease_error *err)
{
    sqlease_lease *first = ls[0]->lease;
    name_row *rows;
    db_out *out;
    db_bind *binds = NULL;
    size_t nb = 0, nrows = 0, i;
    char *sql = NULL;
    int rc;

    rows = calloc(padded, sizeof *rows);
    out = calloc(padded * EACH_COLUMNS, sizeof *out);
    if (rows == NULL || out == NULL) {
        free(rows);
        free(out);
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    for (i = 0; i < padded; i++) {
        db_out *o = out + i * EACH_COLUMNS;
        o[0].type = DB_TEXT;
        o[0].s = rows[i].name;
        o[0].cap = sizeof rows[i].name;
        sqle_lease_row_out(o + 1, &rows[i].info);
    }
    rc = build(&d->status_each, first->table, ls, n, padded, &sql, &binds, &nb, err);
    if (rc == SQLEASE_OK) {
        for (i = 0; i < n; i++)
            sqle_atomic_add(&ls[i]->lease->statements, 1);
        rc = sqle_db_exec_rows_by(first->db, deadline, sql, binds, nb, out, EACH_COLUMNS, padded,
                                  &nrows, err);
    }
    for (i = 0; i < nrows && rc == SQLEASE_OK; i++) {
        db_out *o = out + i * EACH_COLUMNS;
        rows[i].info.size = sizeof rows[i].info;
        if (o[0].is_null)
            rows[i].name[0] = '\0';
        rc = sqle_lease_row_finish(o + 1, &rows[i].info, d->now_ms, err);
    }
    if (rc == SQLEASE_OK) {
        qsort(rows, nrows, sizeof *rows, cmp_name_rows);
        for (i = 0; i < n; i++) {
            sqlease_lease *l = ls[i]->lease;
            sqlease_lease_info *info = &ls[i]->info;
            const name_row *r = bsearch(l->name, rows, nrows, sizeof *rows, cmp_name_key);
            if (r == NULL) {
                memset(info, 0, sizeof *info);
                ls[i]->rc = SQLEASE_ENOROW;
                continue;
            }
            *info = r->info;
            info->mine = info->held && l->held_token >= 0 && info->token == l->held_token &&
                         strcmp(info->owner, l->owner) == 0;
            ls[i]->rc = SQLEASE_OK;
        }
    }
    free(sql);
    free(binds);
    free(out);
    free(rows);
    return rc;
}

int sqle_lease_status_each_max(sqle_each *each, size_t n, int64_t deadline, size_t max,
                               sqlease_error *err_in)
{
    sqlease_error local;
    sqlease_error *err = err_in != NULL ? err_in : &local;
    const sqle_dialect *d;
    sqle_each **ls;
    size_t i, cmax;
    int rc = SQLEASE_OK;

    sqle_err_clear(err);
    if (n == 0)
        return SQLEASE_OK;
    rc = check_batch(each, n, 0, "status_each", err);
    if (rc != SQLEASE_OK)
        return rc;
    d = each[0].lease->d;
    for (i = 0; i < n; i++)
        memset(&each[i].info, 0, sizeof each[i].info);
    if (d->status_each.head.sql == NULL) {
        for (i = 0; i < n; i++)
            each[i].rc = SQLEASE_EDIALECT;
        return sqle_fail(err, SQLEASE_EDIALECT, "dialect %s has no batched read", d->key);
    }
    ls = malloc(n * sizeof *ls);
    if (ls == NULL) {
        for (i = 0; i < n; i++)
            each[i].rc = SQLEASE_ENOMEM;
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    for (i = 0; i < n; i++)
        ls[i] = &each[i];
    if (deadline <= 0)
        deadline = sqle_db_deadline(each[0].lease->db);
    qsort(ls, n, sizeof *ls, cmp_each_name);
    cmax = sqle_each_chunk_max(d, &d->status_each, max);
    for (i = 0; i < n; i += cmax) {
        size_t k = n - i < cmax ? n - i : cmax;
        rc = status_chunk(d, ls + i, k, sqle_each_padded(k, cmax), deadline, err);
        if (rc != SQLEASE_OK) {
            rc = fail_rest(ls, i, n, rc, err);
            break;
        }
    }
    free(ls);
    return rc;
}

int sqle_lease_status_each(sqle_each *each, size_t n, int64_t deadline, sqlease_error *err)
{
    return sqle_lease_status_each_max(each, n, deadline, 0, err);
}

/* ------------------------------------------------------------------ */
/* The take of rows as their read saw them, and the release           */
/* ------------------------------------------------------------------ */

static int same_str(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* A take binds the owner, the ttl, the data and the priority once: every
 * lease of the batch must have the first one's. */
static int check_take_batch(sqle_each *each, size_t n, sqlease_error *err)
{
    const sqlease_lease *first = each[0].lease;
    size_t i, j;

    for (i = 0; i < n; i++) {
        const sqlease_lease *l = each[i].lease;
        if (strcmp(l->owner, first->owner) != 0 || !same_str(l->data, first->data) ||
            sqle_lease_priority(l) != sqle_lease_priority(first)) {
            for (j = 0; j < n; j++)
                each[j].rc = SQLEASE_EINVAL;
            return sqle_fail(err, SQLEASE_EINVAL, "take_each: lease %zu has not the first "
                             "one's owner, data and priority", i);
        }
    }
    return SQLEASE_OK;
}

/* Whether a row the take (or the release) returned names lease e's hold:
 * for a take, its name, its owner and the read's token + 1; for a
 * release, its name and the token it proved (the owner may be "" now).
 * rows[0..nrows-1] sorted by name. */
static int row_names(const hold_row *rows, size_t nrows, const sqle_each *e, int take)
{
    const sqlease_lease *l = e->lease;
    size_t lo = 0, hi = nrows, i;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(rows[mid].name, l->name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (i = lo; i < nrows && strcmp(rows[i].name, l->name) == 0; i++) {
        if (take && rows[i].token == e->info.token + 1 && strcmp(rows[i].owner, l->owner) == 0)
            return 1;
        if (!take && rows[i].token == l->proven_token)
            return 1;
    }
    return 0;
}

/* What take_after_read does with a take that matched its row. */
static void took(sqle_each *e)
{
    sqlease_lease *l = e->lease;
    sqlease_lease_info *info = &e->info;
    int64_t db_now = info->db_now_ms;

    l->held_token = l->proven_token = info->token + 1;
    snprintf(info->owner, sizeof info->owner, "%s", l->owner);
    snprintf(info->data, sizeof info->data, "%s", l->data != NULL ? l->data : "");
    info->token = l->held_token;
    info->acquired_at_ms = db_now;
    info->expires_at_ms = db_now + l->ttl_ms;
    info->ttl_ms = l->ttl_ms;
    info->version++;
    info->handoff_to[0] = '\0';
    info->priority = sqle_lease_priority(l);
    info->reserved = 0;
    info->held = info->mine = 1;
    e->hit = 1;
    e->rc = SQLEASE_OK;
}

/* Rows the statement returned, sorted by name for row_names. */
static int cmp_row_name(const void *a, const void *b)
{
    return strcmp(((const hold_row *)a)->name, ((const hold_row *)b)->name);
}

/* Released holds in (name, owner, proved token) order: equal holds are
 * neighbours. */
static int cmp_each_proven(const void *a, const void *b)
{
    const sqlease_lease *x = (*(sqle_each *const *)a)->lease;
    const sqlease_lease *y = (*(sqle_each *const *)b)->lease;
    return cmp_hold(x->name, x->owner, x->proven_token, y->name, y->owner, y->proven_token);
}

/* What the read after a short take says of one row (which_by_read). */
enum {
    ROW_NOT_TAKEN,   /* no take of this statement changed it: its token is
                        the one read, or another owner's take of it stands
                        untouched */
    ROW_TAKEN,       /* a take under this owner id from the same read, and
                        nothing since (token and version one past the read,
                        live): this statement's, or a twin's */
    ROW_UNKNOWN      /* taken and changed again since (released, renewed,
                        expired, taken once more): it may be a row this
                        statement took */
};

static int take_row_kind(const sqle_each *e, int64_t seen_token, int64_t seen_version)
{
    const sqlease_lease_info *row = &e->info;

    if (e->rc != SQLEASE_OK || row->token == seen_token)
        return ROW_NOT_TAKEN; /* no row, or no take at all */
    if (row->token == seen_token + 1 && row->version == seen_version + 1) {
        if (row->owner[0] != '\0' && strcmp(row->owner, e->lease->owner) != 0)
            return ROW_NOT_TAKEN;
        if (row->held && !row->has_nulls && row->owner[0] != '\0')
            return ROW_TAKEN;
    }
    return ROW_UNKNOWN;
}

/*
 * On a dialect whose UPDATE only counts: which leases of the chunk the
 * statement changed, told by a read of their rows (status_each) after a
 * count short of the leases.
 *
 * A take: a row taken under this owner id from the row as read, and left
 * alone since, shows this owner, the read's token + 1 and the read's
 * version + 1 (ROW_TAKEN).  Another process given the same owner id that
 * took a row of the chunk from the same read leaves exactly the same
 * row, so the rows that show so are this statement's only when nothing
 * else can account for the count: when they are as many as it, and no
 * row of the chunk was taken and then changed again (ROW_UNKNOWN: a row
 * this statement took and someone then force-released, say, which would
 * let a twin's take stand in for it in the count and be taken for this
 * one's, two holders of one token).  Otherwise every lease of the chunk
 * is a miss: safe, since a row taken but not used is held by nobody's
 * work and moves to a watching follower a ttl later.
 *
 * A release changed a row that shows its proved token with this owner,
 * or free (""): that only says whether it was released, which decides
 * nothing.
 */
static int which_by_read(const sqle_dialect *d, sqle_each **ls, size_t k, size_t padded,
                         int64_t count, int take, int64_t deadline, sqlease_error *err)
{
    int64_t *seen = malloc(2 * k * sizeof *seen);
    size_t i, matched = 0, unknown = 0;
    int rc;

    if (seen == NULL)
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    for (i = 0; i < k; i++) {
        seen[2 * i] = take ? ls[i]->info.token : ls[i]->lease->proven_token;
        seen[2 * i + 1] = ls[i]->info.version;
    }
    rc = status_chunk(d, ls, k, padded, deadline, err);
    if (rc != SQLEASE_OK) {
        free(seen);
        return rc;
    }
    for (i = 0; i < k; i++) {
        const sqlease_lease_info *row = &ls[i]->info;
        const sqlease_lease *l = ls[i]->lease;
        int hit;

        if (take) {
            int kind = take_row_kind(ls[i], seen[2 * i], seen[2 * i + 1]);
            hit = kind == ROW_TAKEN;
            unknown += kind == ROW_UNKNOWN;
        } else {
            hit = ls[i]->rc == SQLEASE_OK && row->token == seen[2 * i] &&
                  (row->owner[0] == '\0' || strcmp(row->owner, l->owner) == 0);
        }
        ls[i]->hit = hit;
        matched += (size_t)hit;
    }
    for (i = 0; i < k; i++) {
        if (take && ((int64_t)matched != count || unknown > 0))
            ls[i]->hit = 0;
        if (take && ls[i]->hit) {
            ls[i]->info.token = seen[2 * i];
            ls[i]->info.version = seen[2 * i + 1];
            took(ls[i]);
        } else {
            ls[i]->rc = take ? SQLEASE_NOT_HELD : SQLEASE_OK;
        }
    }
    free(seen);
    return SQLEASE_OK;
}

/* One chunk of a take or a release (distinct rows: one lease per name
 * for a take, one per hold for a release).  Sets each lease's rc and hit,
 * or returns a failure. */
static int change_chunk(const sqle_dialect *d, const sqle_each_stmt *st, sqle_each **ls,
                        size_t k, size_t padded, int take, int64_t min_hold_ms,
                        int64_t deadline, sqlease_error *err)
{
    int tok = take ? TOK_SEEN : TOK_PROVEN;
    int64_t count = -1;
    size_t i, distinct = 0;
    int rc;

    if (d->renew_each_returns) {
        hold_row *rows = calloc(padded, sizeof *rows);
        size_t nrows = 0;
        if (rows == NULL)
            return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
        rc = fetch_holds(st, ls, k, padded, tok, min_hold_ms, deadline, rows, &nrows, err);
        if (rc == SQLEASE_OK) {
            qsort(rows, nrows, sizeof *rows, cmp_row_name);
            for (i = 0; i < k; i++) {
                int hit = row_names(rows, nrows, ls[i], take);
                if (take && hit) {
                    took(ls[i]);
                } else {
                    ls[i]->hit = hit;
                    ls[i]->rc = take ? SQLEASE_NOT_HELD : SQLEASE_OK;
                }
            }
        }
        free(rows);
        return rc;
    }
    rc = count_holds(st, ls, k, padded, tok, min_hold_ms, deadline, &count, err);
    if (rc != SQLEASE_OK)
        return rc;
    for (i = 0; i < k; i++)
        if (take || i == 0 || cmp_each_proven(&ls[i - 1], &ls[i]) != 0)
            distinct++;
    if (count == (int64_t)distinct) {
        for (i = 0; i < k; i++) {
            if (take) {
                took(ls[i]);
            } else {
                ls[i]->hit = 1;
                ls[i]->rc = SQLEASE_OK;
            }
        }
        return SQLEASE_OK;
    }
    if (count > (int64_t)distinct)
        return sqle_fail(err, SQLEASE_EROWCOUNT,
                         "the %s of %zu leases reported %lld rows affected; expected at most "
                         "%zu (is the name not the primary key?)", take ? "take" : "release",
                         distinct, (long long)count, distinct);
    return which_by_read(d, ls, k, padded, count, take, deadline, err);
}

/* The take and the release: each lease's rc and hit, chunk by chunk. */
static int change_each(sqle_each *each, size_t n, int64_t deadline, size_t max, int take,
                       int64_t min_hold_ms, sqlease_error *err_in)
{
    sqlease_error local;
    sqlease_error *err = err_in != NULL ? err_in : &local;
    const char *fn = take ? "take_each" : "release_each";
    const sqle_dialect *d;
    const sqle_each_stmt *st;
    sqle_each **ls;
    hist_mark *marks;
    size_t i, m = 0, cmax;
    int rc;

    sqle_err_clear(err);
    if (n == 0)
        return SQLEASE_OK;
    rc = check_batch(each, n, take, fn, err);
    if (rc == SQLEASE_OK && take)
        rc = check_take_batch(each, n, err);
    if (rc != SQLEASE_OK)
        return rc;
    d = each[0].lease->d;
    st = take ? &d->take_each : &d->release_each;
    if (st->head.sql == NULL || (!d->renew_each_returns && d->status_each.head.sql == NULL)) {
        for (i = 0; i < n; i++)
            each[i].rc = SQLEASE_EDIALECT;
        return sqle_fail(err, SQLEASE_EDIALECT, "dialect %s has no batched %s", d->key,
                         take ? "take" : "release");
    }
    ls = malloc(n * sizeof *ls);
    if (ls == NULL) {
        for (i = 0; i < n; i++)
            each[i].rc = SQLEASE_ENOMEM;
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    for (i = 0; i < n; i++) {
        sqlease_lease *l = each[i].lease;
        each[i].hit = 0;
        each[i].rc = take ? SQLEASE_NOT_HELD : SQLEASE_OK;
        if (take) {
            /* Only a row read free or watched out, and only by a lease
             * that holds nothing. */
            if (l->held_token < 0 && sqle_lease_take_bound(l, &each[i].info))
                ls[m++] = &each[i];
        } else {
            l->held_token = -1;
            if (l->proven_token >= 0)
                ls[m++] = &each[i];
        }
    }
    if (!take)
        for (i = 0; i < n; i++)
            memset(&each[i].info, 0, sizeof each[i].info);
    qsort(ls, m, sizeof *ls, take ? cmp_each_name : cmp_each_proven);
    if (take) {
        /* Two leases of one name would both match the row's one take:
         * only the first is sent, the others keep their own path. */
        size_t w = 0;
        for (i = 0; i < m; i++)
            if (w == 0 || strcmp(ls[w - 1]->lease->name, ls[i]->lease->name) != 0)
                ls[w++] = ls[i];
        m = w;
    }
    if (deadline <= 0)
        deadline = sqle_db_deadline(each[0].lease->db);
    /* What the history needs of each lease before the statement changes
     * its info: a take's read (who held the row, and when that ended). */
    marks = m > 0 ? calloc(m, sizeof *marks) : NULL;
    for (i = 0; marks != NULL && i < m; i++) {
        const sqlease_lease_info *row = &ls[i]->info;
        marks[i].lease = ls[i]->lease;
        if (take) {
            snprintf(marks[i].prev_owner, sizeof marks[i].prev_owner, "%s", row->owner);
            marks[i].prev_token = row->token;
            marks[i].prev_ended_at = sqle_hist_expired_at(row);
        } else {
            marks[i].token = ls[i]->lease->proven_token;
        }
    }
    cmax = sqle_each_chunk_max(d, st, max);
    if (!d->renew_each_returns && sqle_each_chunk_max(d, &d->status_each, max) < cmax)
        cmax = sqle_each_chunk_max(d, &d->status_each, max);
    for (i = 0; i < m; i += cmax) {
        size_t k = m - i < cmax ? m - i : cmax;
        rc = change_chunk(d, st, ls + i, k, sqle_each_padded(k, cmax), take, min_hold_ms,
                          deadline, err);
        if (rc != SQLEASE_OK) {
            rc = fail_rest(ls, i, m, rc, err);
            break;
        }
    }
    /* The history of the rows taken or released (after the statements:
     * it decides nothing), one statement per chunk. */
    if (marks != NULL) {
        size_t w = 0;
        for (i = 0; i < m; i++) {
            if (ls[i]->rc != SQLEASE_OK || !ls[i]->hit || ls[i]->lease->hist.sql == NULL)
                continue;
            marks[w] = marks[i];
            if (take)
                marks[w].token = ls[i]->lease->held_token;
            w++;
        }
        hist_batch(marks, w, take, SQLE_END_RELEASED, deadline);
        free(marks);
    }
    free(ls);
    return rc;
}

int sqle_lease_take_each_max(sqle_each *each, size_t n, int64_t deadline, size_t max,
                             sqlease_error *err)
{
    return change_each(each, n, deadline, max, 1, 0, err);
}

int sqle_lease_take_each(sqle_each *each, size_t n, int64_t deadline, sqlease_error *err)
{
    return change_each(each, n, deadline, 0, 1, 0, err);
}

int sqle_lease_cmp_take(const sqlease_lease *x, const sqlease_lease *y)
{
    int c = strcmp(x->table, y->table);

    if (c == 0)
        c = x->ttl_ms < y->ttl_ms ? -1 : x->ttl_ms > y->ttl_ms;
    if (c == 0)
        c = strcmp(x->owner, y->owner);
    if (c == 0)
        c = x->data == NULL ? (y->data == NULL ? 0 : -1)
                            : y->data == NULL ? 1 : strcmp(x->data, y->data);
    if (c == 0) {
        int64_t px = sqle_lease_priority(x), py = sqle_lease_priority(y);
        c = px < py ? -1 : px > py;
    }
    return c;
}

static int cmp_each_take(const void *a, const void *b)
{
    const sqle_each *x = *(const sqle_each *const *)a, *y = *(const sqle_each *const *)b;
    int c = sqle_lease_cmp_take(x->lease, y->lease);
    /* Then by place, so that the order within a run is the caller's. */
    return c != 0 ? c : x < y ? -1 : x > y;
}

/* By name, then by place: the first of a name is the one in each[]
 * first. */
static int cmp_each_name_place(const void *a, const void *b)
{
    const sqle_each *x = *(const sqle_each *const *)a, *y = *(const sqle_each *const *)b;
    int c = strcmp(x->lease->name, y->lease->name);
    return c != 0 ? c : x < y ? -1 : x > y;
}

/*
 * The runner's followers of one table may differ in ttl, owner, data or priority,
 * which a take binds once: one sqle_lease_take_each per run of equal
 * ones, each run copied out and back so that each[] keeps its order.
 * Two leases of one name in different runs would send two takes of one
 * row, and the later one matches nothing (the first bumped the version);
 * on a dialect that only counts, its shortfall makes a read decide the
 * whole chunk, which shows that row under the same owner id with the
 * read's token + 1, so every take of the chunk is called a miss (rows
 * taken and held by nobody until they expire).  So, as within a run,
 * only the first lease of a name is sent.
 */
int sqle_lease_take_each_mixed(sqle_each *each, size_t n, int64_t deadline,
                               sqlease_error *err)
{
    sqlease_error later; /* a later run's failure: err keeps the first */
    sqle_each **ord;
    sqle_each *run;
    size_t i, j, k;
    int rc = SQLEASE_OK, r;

    sqle_err_clear(err);
    if (n == 0)
        return SQLEASE_OK;
    for (i = 1; i < n && sqle_lease_cmp_take(each[0].lease, each[i].lease) == 0; i++)
        ;
    if (i == n) /* one run, the usual case: no copy */
        return change_each(each, n, deadline, 0, 1, 0, err);
    if (deadline <= 0)
        deadline = sqle_db_deadline(each[0].lease->db); /* one bound for every run */
    ord = malloc(n * sizeof *ord);
    run = malloc(n * sizeof *run);
    if (ord == NULL || run == NULL) {
        free(ord);
        free(run);
        for (i = 0; i < n; i++)
            each[i].rc = SQLEASE_ENOMEM;
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    for (i = 0; i < n; i++)
        ord[i] = &each[i];
    /* A later lease of a name: not sent (NOT_HELD, hit 0); its rc marks
     * it below (every other starts as SQLEASE_OK here). */
    qsort(ord, n, sizeof *ord, cmp_each_name_place);
    for (i = 0; i < n; i++) {
        ord[i]->hit = 0;
        ord[i]->rc = i > 0 && strcmp(ord[i - 1]->lease->name, ord[i]->lease->name) == 0
                         ? SQLEASE_NOT_HELD
                         : SQLEASE_OK;
    }
    qsort(ord, n, sizeof *ord, cmp_each_take);
    for (i = 0; i < n; i = j) {
        size_t m = 0;
        for (j = i + 1; j < n && sqle_lease_cmp_take(ord[i]->lease, ord[j]->lease) == 0; j++)
            ;
        for (k = i; k < j; k++)
            if (ord[k]->rc == SQLEASE_OK)
                run[m++] = *ord[k];
        if (m == 0)
            continue;
        r = change_each(run, m, deadline, 0, 1, 0, rc == SQLEASE_OK ? err : &later);
        if (r != SQLEASE_OK && rc == SQLEASE_OK)
            rc = r;
        m = 0;
        for (k = i; k < j; k++)
            if (ord[k]->rc == SQLEASE_OK)
                *ord[k] = run[m++];
    }
    free(ord);
    free(run);
    return rc;
}

int sqle_lease_release_each_max(sqle_each *each, size_t n, int64_t deadline, int64_t min_hold_ms,
                                size_t max, sqlease_error *err)
{
    return change_each(each, n, deadline, max, 0, min_hold_ms, err);
}

int sqle_lease_release_each(sqle_each *each, size_t n, int64_t deadline, int64_t min_hold_ms,
                            sqlease_error *err)
{
    return change_each(each, n, deadline, 0, 0, min_hold_ms, err);
}
