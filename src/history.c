/*
 * history.c -- the holder history: one row per hold of a lease (its
 * name, owner id, host, process id, token, start and end on the
 * database's clock, and how it ended), for whoever later asks who held
 * the lease at a given moment and why that hold ended.
 *
 * The lease row says who holds now; this table says who held before.
 * It is written by the lease calls (lease.c, lease_each.c) right after
 * the statement that made what it records: a take's row after the take
 * (read from the lease row while it shows the new hold, so a hold that
 * ended before the row was written gets none), the end after a release,
 * after a renew that found the hold gone, after a forced release.  A
 * renew writes nothing: a holder's heartbeat costs what it always did.
 * The dead do not write their own end: a take of a row some holder had
 * closes that hold as 'expired', at the expiry its read showed.  Every
 * end is written only where the row has none, so whoever knows first
 * writes it and nobody writes over it.
 *
 * The history must never break the lease: nothing here is asked before
 * a lease statement, and a statement that fails is logged and skipped.
 * A history table that does not exist (a deployment that has not run the
 * new migrate) is said once per handle and then left alone for an hour,
 * so a fleet that never migrates pays one failed statement per handle
 * per hour.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "db.h"
#include "history.h"
#include "internal.h"
#include "lease.h"
#include "platform.h"

/* How long a handle leaves a missing history table alone before it tries
 * it again (a migrate run meanwhile is then picked up). */
#define MISSING_QUIET_MS (3600 * INT64_C(1000))

/* Rows per statement of a listing. */
#define LIST_PAGE 100

/* hold_list's columns: name, token, owner, host, pid, started_at_ms,
 * ended_at_ms, ended, and the end of the hold before. */
#define LIST_COLUMNS 9

const char *sqle_hold_end_name(int how)
{
    switch ((sqle_hold_end)how) {
    case SQLE_END_RELEASED: return "released";
    case SQLE_END_EXPIRED: return "expired";
    case SQLE_END_LOST: return "lost";
    case SQLE_END_DEADLINE: return "deadline";
    case SQLE_END_FORCED: return "forced";
    case SQLE_END_HANDED_OVER: return "handed_over";
    }
    return "";
}

/* ------------------------------------------------------------------ */
/* Failures: logged and skipped                                         */
/* ------------------------------------------------------------------ */

static void hist_log(const sqle_hist *h, int level, const char *fmt, ...) SQLEASE_PRINTF(3, 4);

static void hist_log(const sqle_hist *h, int level, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    sqle_vlog(h->db->log, h->db->log_userdata, h->db->log_level, level, fmt, ap);
    va_end(ap);
}

/* Whether h's history table is known missing on this handle now: its
 * statements are not sent until the quiet hour is over. */
static int quiet(const sqle_hist *h)
{
    int q;

    if (h->sql == NULL)
        return 1;
    sqle_mutex_lock(&h->db->m);
    q = h->sql->quiet_until > 0 && sqle_mono_ms() < h->sql->quiet_until;
    sqle_mutex_unlock(&h->db->m);
    return q;
}

/*
 * A history statement failed: a missing table, or one the connection's
 * role may not write (the deployment has not run this version's migrate,
 * or has not granted the hosts' role its four privileges), is said once
 * per handle and table, as a warning, and the table is left alone for an
 * hour; anything else is a warning each time, naming the lease and what
 * was not recorded.  The lease is not touched either way.
 */
static void failed(const sqle_hist *h, const char *name, const char *what, int rc,
                   const sqlease_error *err)
{
    int privilege = rc == SQLEASE_EDB &&
                    sqle_classify_error(err, h->sql->d, SQLEASE_AT_STATEMENT) ==
                        SQLEASE_FAIL_PRIVILEGE;

    if (rc == SQLEASE_ENOTABLE || privilege) {
        int first;

        sqle_mutex_lock(&h->db->m);
        h->sql->quiet_until = sqle_mono_ms() + MISSING_QUIET_MS;
        first = !h->sql->warned;
        h->sql->warned = 1;
        sqle_mutex_unlock(&h->db->m);
        if (privilege)
            hist_log(h, first ? SQLEASE_LOG_WARN : SQLEASE_LOG_DEBUG,
                     "history table '%s': the connection's role may not write it (it needs "
                     "SELECT, INSERT, UPDATE and DELETE): holds are not recorded; tried again "
                     "in an hour (%s)", h->sql->history_table, err->message);
        else
            hist_log(h, first ? SQLEASE_LOG_WARN : SQLEASE_LOG_DEBUG,
                     "history table '%s' does not exist: holds are not recorded (run `sqlease "
                     "migrate` to create it; tried again in an hour)", h->sql->history_table);
        return;
    }
    hist_log(h, SQLEASE_LOG_WARN, "lease %s: %s was not recorded in history table '%s' (the "
             "lease is not affected): %s", name, what, h->sql->history_table,
             err->message[0] != '\0' ? err->message : sqlease_strerror(rc));
}

/* Run one of h's statements; a failure is said (see failed). */
static int run(const sqle_hist *h, const sqle_stmt *st, const char *sql, const db_params *p,
               int64_t deadline, const char *what, int64_t *rows)
{
    sqlease_error err;
    int rc;

    sqle_err_clear(&err);
    rc = sqle_db_run_by(h->db, deadline, st, sql, p, NULL, 0, NULL, rows, &err);
    if (rc != SQLEASE_OK)
        failed(h, p->name, what, rc, &err);
    return rc;
}

/* The values every statement of h binds. */
static void params(const sqle_hist *h, db_params *p)
{
    memset(p, 0, sizeof *p);
    p->name = h->name;
    p->owner = h->owner;
    p->host = h->host;
    p->pid = h->pid;
}

/* A dialect whose hold_start binds :ended_at_ms closes the hold before
 * the new one in the same statement (templates/dialects.toml). */
static int start_closes(const sqle_dialect *d)
{
    size_t i;

    for (i = 0; i < d->hold_start.nparams; i++)
        if (d->hold_start.params[i] == SQLEASE_P_ENDED_AT_MS)
            return 1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* One hold                                                             */
/* ------------------------------------------------------------------ */

int64_t sqle_hist_expired_at(const sqlease_lease_info *prev)
{
    int64_t at;

    if (prev == NULL || prev->owner[0] == '\0')
        return 0;
    at = prev->expires_at_ms;
    if (at <= 0 || (prev->db_now_ms > 0 && at > prev->db_now_ms))
        at = prev->db_now_ms;
    return at > 0 ? at : 0;
}

void sqle_hist_taken(const sqle_hist *h, int64_t token, const sqlease_lease_info *prev,
                     int64_t deadline)
{
    const sqle_dialect *d;
    db_params p;
    int64_t over = sqle_hist_expired_at(prev);

    if (quiet(h))
        return;
    d = h->sql->d;
    params(h, &p);
    p.token = token;
    p.ended_at_ms = over;
    if (run(h, &d->hold_start, h->sql->start, &p, deadline, "the start of its hold", NULL) !=
            SQLEASE_OK ||
        over <= 0 || start_closes(d))
        return;
    p.token = prev->token;
    (void)run(h, &d->hold_expire, h->sql->expire, &p, deadline,
              "the end of the hold it took over", NULL);
}

void sqle_hist_ended(const sqle_hist *h, int64_t token, int how, int64_t deadline)
{
    db_params p;
    char what[64];

    if (token < 0 || quiet(h))
        return;
    params(h, &p);
    p.token = token;
    p.state = sqle_hold_end_name(SQLE_PLANTED(hold_end_says_released) ? SQLE_END_RELEASED : how);
    snprintf(what, sizeof what, "the end of its hold (%s)", p.state);
    (void)run(h, &h->sql->d->hold_end, h->sql->end, &p, deadline, what, NULL);
}

int sqle_hist_on(const sqle_hist *h)
{
    return !quiet(h);
}

void sqle_hist_forced(const sqle_hist *h, int64_t token, int64_t deadline)
{
    db_params p;

    if (token < 0 || quiet(h))
        return;
    params(h, &p);
    p.token = token;
    (void)run(h, &h->sql->d->hold_force, h->sql->force, &p, deadline,
              "the end of the hold it forced", NULL);
}

int sqle_hist_prune(const sqle_hist *h, int64_t since_ms, int64_t before_ms, int64_t *deleted,
                    sqlease_error *err)
{
    db_params p;
    int64_t n = -1;
    int rc;

    sqle_err_clear(err);
    if (deleted != NULL)
        *deleted = 0;
    if (quiet(h))
        return SQLEASE_OK;
    params(h, &p);
    p.since_ms = since_ms;
    p.before_ms = before_ms;
    rc = sqle_db_run_by(h->db, 0, &h->sql->d->hold_prune, h->sql->prune, &p, NULL, 0, NULL, &n,
                        err);
    if (rc != SQLEASE_OK)
        failed(h, p.name, "the pruning of old holds", rc, err);
    else if (deleted != NULL)
        *deleted = n > 0 ? n : 0;
    return rc;
}

/* ------------------------------------------------------------------ */
/* Many holds: one statement per chunk                                  */
/* ------------------------------------------------------------------ */

/* Send batched statement `st` for holds[0..n-1], chunk by chunk, each
 * item a hold (name, owner, token) and the head binding `head` (the
 * host and pid, the end, or the state).  Stops at the first failure,
 * which is said. */
static void run_each(const sqle_hist *h, const sqle_each_stmt *st, const db_params *head,
                     const sqle_hist_hold *holds, size_t n, int64_t deadline, const char *what)
{
    size_t cmax = sqle_each_chunk_max(h->sql->d, st, 0), i;
    db_params *ps;

    if (n == 0 || st->head.sql == NULL)
        return;
    ps = calloc(n, sizeof *ps);
    if (ps == NULL) {
        hist_log(h, SQLEASE_LOG_WARN, "%s of %zu holds was not recorded: out of memory", what,
                 n);
        return;
    }
    for (i = 0; i < n; i++) {
        ps[i] = *head;
        ps[i].name = holds[i].name;
        ps[i].owner = holds[i].owner;
        ps[i].token = holds[i].token;
    }
    for (i = 0; i < n; i += cmax) {
        size_t k = n - i < cmax ? n - i : cmax;
        db_bind *binds = NULL;
        size_t nb = 0;
        char *sql = NULL;
        sqlease_error err;
        int rc;

        sqle_err_clear(&err);
        rc = sqle_each_build_in(st, h->sql->table, h->sql->history_table, ps + i, k,
                                sqle_each_padded(k, cmax), &sql, &binds, &nb, &err);
        if (rc == SQLEASE_OK)
            rc = sqle_db_exec_by(h->db, deadline, sql, binds, nb, NULL, 0, NULL, NULL, &err);
        free(sql);
        free(binds);
        if (rc != SQLEASE_OK) {
            char holds_said[96];
            snprintf(holds_said, sizeof holds_said, "%s of %zu holds", what, n - i);
            failed(h, holds[i].name, holds_said, rc, &err);
            break;
        }
    }
    free(ps);
}

static int cmp_ended_at(const void *a, const void *b)
{
    const sqle_hist_hold *x = a, *y = b;
    return x->ended_at_ms < y->ended_at_ms ? -1 : x->ended_at_ms > y->ended_at_ms;
}

void sqle_hist_taken_each(const sqle_hist *h, const sqle_hist_hold *took, size_t n,
                          const sqle_hist_hold *over, size_t nover, int64_t deadline)
{
    sqle_hist_hold *sorted;
    db_params head;
    size_t i, j;

    if (n == 0 || quiet(h))
        return;
    params(h, &head);
    run_each(h, &h->sql->d->hold_start_each, &head, took, n, deadline, "the start");
    if (nover == 0 || quiet(h))
        return;
    /* One :ended_at_ms per statement: the holds taken over, grouped by
     * it (a dead holder's leases, renewed together, expire together). */
    sorted = malloc(nover * sizeof *sorted);
    if (sorted == NULL)
        return;
    memcpy(sorted, over, nover * sizeof *sorted);
    qsort(sorted, nover, sizeof *sorted, cmp_ended_at);
    for (i = 0; i < nover; i = j) {
        for (j = i + 1; j < nover && sorted[j].ended_at_ms == sorted[i].ended_at_ms; j++)
            ;
        head.ended_at_ms = sorted[i].ended_at_ms;
        run_each(h, &h->sql->d->hold_expire_each, &head, sorted + i, j - i, deadline,
                 "the end of the holds it took over");
        if (quiet(h))
            break;
    }
    free(sorted);
}

void sqle_hist_ended_each(const sqle_hist *h, const sqle_hist_hold *holds, size_t n, int how,
                          int64_t deadline)
{
    db_params head;
    char what[64];

    if (n == 0 || quiet(h))
        return;
    params(h, &head);
    head.state = sqle_hold_end_name(how);
    snprintf(what, sizeof what, "the end (%s)", head.state);
    run_each(h, &h->sql->d->hold_end_each, &head, holds, n, deadline, what);
}

/* ------------------------------------------------------------------ */
/* Listing                                                              */
/* ------------------------------------------------------------------ */

typedef struct hold_row {
    sqlease_hold_info info;
} hold_row;

/* Point out[0..LIST_COLUMNS-1] at r's fields. */
static void list_cells(db_out *out, hold_row *r)
{
    sqlease_hold_info *f = &r->info;

    memset(out, 0, LIST_COLUMNS * sizeof *out);
    out[0].type = DB_TEXT;
    out[0].s = f->name;
    out[0].cap = sizeof f->name;
    out[1].type = DB_INT64;
    out[1].i = &f->token;
    out[2].type = DB_TEXT;
    out[2].s = f->owner;
    out[2].cap = sizeof f->owner;
    out[3].type = DB_TEXT;
    out[3].s = f->host;
    out[3].cap = sizeof f->host;
    out[4].type = DB_INT64;
    out[4].i = &f->pid;
    out[5].type = DB_INT64;
    out[5].i = &f->started_at_ms;
    out[6].type = DB_INT64;
    out[6].i = &f->ended_at_ms;
    out[7].type = DB_TEXT;
    out[7].s = f->ended;
    out[7].cap = sizeof f->ended;
    out[8].type = DB_INT64;
    out[8].i = &f->prev_ended_at_ms;
}

/* After a fetch: NULLs as the info says them, and the gap before the
 * hold (known when the hold before it has a row and has ended). */
static void list_finish(const db_out *out, hold_row *r)
{
    sqlease_hold_info *f = &r->info;

    f->size = sizeof *f;
    if (out[0].is_null)
        f->name[0] = '\0';
    if (out[1].is_null)
        f->token = 0;
    if (out[2].is_null)
        f->owner[0] = '\0';
    if (out[3].is_null)
        f->host[0] = '\0';
    if (out[4].is_null)
        f->pid = 0;
    if (out[5].is_null)
        f->started_at_ms = 0;
    if (out[6].is_null)
        f->ended_at_ms = 0;
    if (out[7].is_null)
        f->ended[0] = '\0';
    if (out[8].is_null || f->prev_ended_at_ms < 0)
        f->prev_ended_at_ms = 0;
    f->gap_ms = f->prev_ended_at_ms > 0 && f->started_at_ms >= f->prev_ended_at_ms
                    ? f->started_at_ms - f->prev_ended_at_ms
                    : f->prev_ended_at_ms > 0 ? 0 : -1;
}

/*
 * Newest first, a window at a time, as the fire ledger's listing: each
 * statement reads the rows with started_at_ms in [since, hi) in order,
 * and the next window ends just past the last started_at_ms given,
 * skipping the rows of that instant given already (they come first, in
 * the same order).  A page that gives nothing new (more holds started in
 * one millisecond than a page holds) is read again twice as large.
 */
int sqle_history_list(sqlease_db *db, const char *history_table, const char *name,
                      int64_t since_ms, int64_t before_ms, size_t page, sqlease_history_fn fn,
                      void *ud, sqlease_error *err)
{
    const sqle_dialect *d;
    sqle_hist_sql *hs;
    db_params p;
    hold_row *rows = NULL;
    db_out *out = NULL;
    int64_t hi = before_ms, boundary = 0;
    size_t given = 0, i, n;
    int have_boundary = 0;
    int rc = SQLEASE_OK;

    sqle_err_clear(err);
    if (db == NULL || fn == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_history_list: db and fn must not be NULL");
    if (history_table == NULL)
        history_table = SQLEASE_DEFAULT_HISTORY_TABLE;
    if (sqle_check_table("history table", history_table, err) != SQLEASE_OK ||
        (name != NULL &&
         sqle_check_text("lease name", name, SQLEASE_MAX_NAME, 0, err) != SQLEASE_OK))
        return SQLEASE_EINVAL;
    d = sqle_db_dialect(db);
    /* The lease table is not named by the list: the default stands in. */
    hs = sqle_db_hist_sql(db, d, SQLEASE_DEFAULT_TABLE, history_table);
    if (hs == NULL)
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    if (page == 0)
        page = LIST_PAGE;
    while (since_ms < hi) {
        size_t prior = have_boundary ? given : 0, skipped = 0;

        free(rows);
        free(out);
        rows = calloc(page, sizeof *rows);
        out = calloc(page * LIST_COLUMNS, sizeof *out);
        if (rows == NULL || out == NULL) {
            rc = sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
            goto done;
        }
        for (i = 0; i < page; i++)
            list_cells(out + i * LIST_COLUMNS, &rows[i]);
        memset(&p, 0, sizeof p);
        p.name = name != NULL ? name : "";
        p.since_ms = since_ms;
        p.before_ms = hi;
        n = 0;
        rc = sqle_db_run_rows_by(db, 0, &d->hold_list, hs->list, &p, out, LIST_COLUMNS, page, &n,
                                 err);
        if (rc == SQLEASE_ENOTABLE && err != NULL) {
            char driver[sizeof err->message];
            memcpy(driver, err->message, sizeof driver);
            sqle_err(err, rc, err->sqlstate, err->native_error,
                     "history table '%s' does not exist; run `sqlease migrate` (%s)",
                     history_table, driver);
        }
        if (rc != SQLEASE_OK)
            goto done;
        for (i = 0; i < n; i++) {
            hold_row *r = &rows[i];

            list_finish(out + i * LIST_COLUMNS, r);
            if (have_boundary && r->info.started_at_ms == boundary && skipped < prior) {
                skipped++;
                continue;
            }
            if (fn(ud, &r->info) != 0)
                goto done;
            if (have_boundary && r->info.started_at_ms == boundary) {
                given++;
            } else {
                boundary = r->info.started_at_ms;
                given = 1;
                have_boundary = 1;
            }
        }
        if (n < page)
            break;
        if (skipped == n) {
            page *= 2;
            continue;
        }
        hi = boundary + 1;
    }
done:
    free(rows);
    free(out);
    return rc;
}

int sqlease_history_list(sqlease_db *db, const char *history_table, const char *name,
                         int64_t since_ms, sqlease_history_fn fn, void *userdata,
                         sqlease_error *err)
{
    if (db != NULL && history_table == NULL)
        history_table = db->ini.history_table;
    return sqle_history_list(db, history_table, name, since_ms, INT64_MAX, 0, fn, userdata,
                             err);
}
