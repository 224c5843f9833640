/*
 * lease.c -- the lease protocol: acquire, release, status.
 *
 * The database decides who holds the lease.  A hold is an owner id and a
 * fencing token; one UPDATE either renews the hold this handle proved
 * (bound to its token) or, for a follower, takes a row that is free or
 * expired with a new token.  The number of rows it affects is the whole
 * answer (1: held, 0: not held, anything else: an error, never "held").
 * Every time in the row is read from the database's clock inside that
 * statement, so no two hosts' clocks are ever compared.
 *
 * A follower's take never joins a live hold, not even one written under
 * the same owner id: two processes given one owner id (or a process and
 * its restarted self) are two holds, told apart by the token, and only
 * the one that took the row with its own statement knows its token.  The
 * handle keeps that token for two purposes: to renew (one statement, and
 * a 1-row answer proves the token is unchanged), and to release, which is
 * scoped to the hold so that it can never clear a successor's row.  A take
 * reads the new token back with one SELECT: that happens once per take.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "internal.h"
#include "lease.h"

struct sqlease_lease {
    sqlease_db *db;
    const sqlease_dialect *d;
    char *table;
    char *name;
    char *owner;
    int64_t ttl_ms;
    int64_t min_hold_ms;  /* what sqlease_lease_release keeps the row for */
    /* {table} already substituted, built once. */
    char *sql_acquire;
    char *sql_renew;
    char *sql_release;
    char *sql_release_force;
    char *sql_status;
    /* Token of the hold this handle believes it has (what it renews), or
     * -1. */
    int64_t held_token;
    /* Token of the hold this handle last proved, kept after a failed
     * renew or lease_forget, so that a release can still give that hold
     * up; -1 if it never held.  A release is scoped to it. */
    int64_t proven_token;
    /* A follower's cached view of the other holder, so that a 0-row answer
     * does not need a SELECT every tick to tell "held by someone else"
     * from "row missing".  Valid until other_until_mono. */
    int other_known;
    int64_t other_until_mono;
    sqlease_lease_info other;
    /* Set by the supervisor: once the row is known to exist, a miss is
     * "not held" without a SELECT (it does not report who holds it). */
    int poll_only;
    int row_seen;
    /* The deadline (sqlease_mono_ms) shared by every statement of the
     * call in progress: a public call answers within one bound, however
     * many statements it sends. */
    int64_t deadline;
    sqlease_atomic_u64 statements;
};

static int nomem(sqlease_error *err)
{
    return sqlease_fail(err, SQLEASE_ENOMEM, "out of memory");
}

int lease_new_resolved(sqlease_lease **out, sqlease_db *db, const sqlease_resolved *r,
                       sqlease_error *err)
{
    sqlease_lease *l;
    char owner[SQLEASE_MAX_OWNER + 1];
    int rc;

    l = calloc(1, sizeof *l);
    if (l == NULL)
        return nomem(err);
    if (r->owner == NULL) {
        rc = sqlease_owner_id(owner, sizeof owner, err);
        if (rc != SQLEASE_OK) {
            free(l);
            return rc;
        }
    }
    l->db = db;
    l->d = db_dialect(db);
    l->ttl_ms = r->ttl_ms;
    l->min_hold_ms = r->min_hold_ms;
    l->held_token = -1;
    l->proven_token = -1;
    l->table = sqlease_strdup(r->table);
    l->name = sqlease_strdup(r->name);
    l->owner = sqlease_strdup(r->owner != NULL ? r->owner : owner);
    if (l->table != NULL) {
        l->sql_acquire = sqlease_sql_for_table(l->d->acquire.sql, l->table);
        l->sql_renew = sqlease_sql_for_table(l->d->renew.sql, l->table);
        l->sql_release = sqlease_sql_for_table(l->d->release.sql, l->table);
        l->sql_release_force = sqlease_sql_for_table(l->d->release_force.sql, l->table);
        l->sql_status = sqlease_sql_for_table(l->d->status.sql, l->table);
    }
    if (l->table == NULL || l->name == NULL || l->owner == NULL || l->sql_acquire == NULL ||
        l->sql_renew == NULL ||
        l->sql_release == NULL || l->sql_release_force == NULL || l->sql_status == NULL) {
        sqlease_lease_free(l);
        return nomem(err);
    }
    *out = l;
    return SQLEASE_OK;
}

int sqlease_lease_new(sqlease_lease **out, sqlease_db *db, const sqlease_options *opt,
                      sqlease_error *err)
{
    sqlease_resolved r;
    int rc;

    sqlease_err_clear(err);
    if (out == NULL || db == NULL)
        return sqlease_fail(err, SQLEASE_EINVAL, "sqlease_lease_new: out and db must not be NULL");
    *out = NULL;
    rc = sqlease_options_resolve(opt, &db->ini, 1, &r, err);
    if (rc != SQLEASE_OK)
        return rc;
    return lease_new_resolved(out, db, &r, err);
}

void sqlease_lease_free(sqlease_lease *l)
{
    if (l == NULL)
        return;
    free(l->table);
    free(l->name);
    free(l->owner);
    free(l->sql_acquire);
    free(l->sql_renew);
    free(l->sql_release);
    free(l->sql_release_force);
    free(l->sql_status);
    free(l);
}

const char *sqlease_lease_owner(const sqlease_lease *l)
{
    return l != NULL ? l->owner : NULL;
}

const char *sqlease_lease_name(const sqlease_lease *l)
{
    return l != NULL ? l->name : NULL;
}

uint64_t lease_statements(const sqlease_lease *l)
{
    return sqlease_atomic_load(&l->statements);
}

void lease_poll_only(sqlease_lease *l)
{
    l->poll_only = 1;
}

void lease_forget(sqlease_lease *l)
{
    l->held_token = -1;
    l->other_known = 0;
}

/*
 * A missing table is a broken installation, not a transient error: say
 * which table and what to run, keeping the driver's words after it.
 */
static int explain_missing_table(sqlease_lease *l, int rc, sqlease_error *err)
{
    if (rc == SQLEASE_ENOTABLE && err != NULL) {
        char driver[sizeof err->message];
        memcpy(driver, err->message, sizeof driver);
        sqlease_err(err, rc, err->sqlstate, err->native_error,
                    "lease table '%s' does not exist; run `sqlease migrate` (%s)", l->table,
                    driver);
    }
    return rc;
}

static int run_held(sqlease_lease *l, const sqlease_stmt *st, const char *sql, int64_t token,
                    int64_t min_hold_ms, db_out *out, size_t nout, int *has_row, int64_t *rows,
                    sqlease_error *err)
{
    db_params p;
    int rc;

    p.name = l->name;
    p.owner = l->owner;
    p.ttl_ms = l->ttl_ms;
    p.token = token;
    p.min_hold_ms = min_hold_ms;
    sqlease_atomic_add(&l->statements, 1);
    rc = db_run_by(l->db, l->deadline, st, sql, &p, out, nout, has_row, rows, err);
    return explain_missing_table(l, rc, err);
}

static int run(sqlease_lease *l, const sqlease_stmt *st, const char *sql, int64_t token,
               db_out *out, size_t nout, int *has_row, int64_t *rows, sqlease_error *err)
{
    return run_held(l, st, sql, token, 0, out, nout, has_row, rows, err);
}

/* One SELECT of the row and the database clock.  `mine` is set for the
 * hold this handle proved: same owner id and same token. */
static int read_row(sqlease_lease *l, sqlease_lease_info *info, sqlease_error *err)
{
    db_out out[5];
    int has_row = 0;
    int rc;

    memset(info, 0, sizeof *info);
    memset(out, 0, sizeof out);
    out[0].type = DB_TEXT;
    out[0].s = info->owner;
    out[0].cap = sizeof info->owner;
    out[1].type = DB_INT64;
    out[1].i = &info->token;
    out[2].type = DB_INT64;
    out[2].i = &info->acquired_at_ms;
    out[3].type = DB_INT64;
    out[3].i = &info->expires_at_ms;
    out[4].type = DB_INT64;
    out[4].i = &info->db_now_ms;
    rc = run(l, &l->d->status, l->sql_status, -1, out, 5, &has_row, NULL, err);
    if (rc != SQLEASE_OK)
        return rc;
    if (!has_row)
        return sqlease_fail(err, SQLEASE_ENOROW,
                            "lease row '%s' missing from table %s; run `sqlease migrate`",
                            l->name, l->table);
    if (out[4].is_null || info->db_now_ms <= 0)
        return sqlease_fail(err, SQLEASE_ECLOCK,
                            "the database clock read as %s from \"%s\"",
                            out[4].is_null ? "NULL" : info->db_now_ms == 0 ? "0" : "negative",
                            l->d->now_ms);
    if (out[0].is_null)
        info->owner[0] = '\0';
    info->held = info->owner[0] != '\0' && info->expires_at_ms > info->db_now_ms;
    info->mine = info->held && l->held_token >= 0 && info->token == l->held_token &&
                 strcmp(info->owner, l->owner) == 0;
    return SQLEASE_OK;
}

int sqlease_lease_status(sqlease_lease *l, sqlease_lease_info *info, sqlease_error *err)
{
    sqlease_lease_info tmp;
    sqlease_err_clear(err);
    if (l == NULL)
        return sqlease_fail(err, SQLEASE_EINVAL, "sqlease_lease_status: lease is NULL");
    l->deadline = db_deadline(l->db);
    return read_row(l, info != NULL ? info : &tmp, err);
}

/*
 * Whether a failed statement lost a race rather than met an outage: a
 * serialization failure or a deadlock (SQLSTATE 40001, PostgreSQL's
 * 40P01).  The connection runs at read committed, where two takes of one
 * row do not fail this way; a server or pooler that imposes a stricter
 * level anyway makes the slower of two concurrent takes fail instead of
 * matching 0 rows, and that is the same answer: someone else took it.
 */
static int lost_race(int rc, const sqlease_error *err)
{
    return rc == SQLEASE_EDB &&
           (strcmp(err->sqlstate, "40001") == 0 || strcmp(err->sqlstate, "40P01") == 0);
}

/* Send the holder's renew (token >= 0) or the follower's take (token -1).
 * Returns OK with *held set, or an error; a row count other than 0 or 1
 * is an error. */
static int send_acquire(sqlease_lease *l, int64_t token, int *held, sqlease_error *err)
{
    int64_t rows = -1;
    int rc = token >= 0 ? run(l, &l->d->renew, l->sql_renew, token, NULL, 0, NULL, &rows, err)
                        : run(l, &l->d->acquire, l->sql_acquire, -1, NULL, 0, NULL, &rows,
                              err);
    if (rc != SQLEASE_OK)
        return rc;
    if (rows != 0 && rows != 1)
        return sqlease_fail(err, SQLEASE_EROWCOUNT,
                            "acquire of lease '%s' reported %lld rows affected; expected 0 or 1 "
                            "(is NOCOUNT on, or the name not the primary key?)",
                            l->name, (long long)rows);
    *held = rows == 1;
    return SQLEASE_OK;
}

/*
 * The answer to a take that matched nothing: another hold is live, or
 * the row is missing.  Only a SELECT tells which, and a follower polling
 * a live holder would pay for it every tick; so the answer is cached for
 * as long as the hold it saw can last (its expiry, measured locally from
 * the moment of the SELECT), after which the next miss reads again.
 */
static int explain_miss(sqlease_lease *l, sqlease_lease_info *info, sqlease_error *err)
{
    int64_t now = sqlease_mono_ms();
    int rc;

    if ((l->other_known && now < l->other_until_mono) || (l->poll_only && l->row_seen)) {
        if (info != NULL)
            *info = l->other;
        return sqlease_fail(err, SQLEASE_NOT_HELD, "lease '%s' is held by %s", l->name,
                            l->other.owner);
    }
    rc = read_row(l, &l->other, err);
    if (rc != SQLEASE_OK) {
        l->other_known = 0;
        return rc;
    }
    l->row_seen = 1;
    if (info != NULL)
        *info = l->other;
    if (l->other.held) {
        /* Held, possibly under this very owner id by another process (or
         * a hold of this handle's own that it no longer knows the token
         * of): either way not this handle's to join. */
        l->other_known = 1;
        l->other_until_mono = now + (l->other.expires_at_ms - l->other.db_now_ms);
        return sqlease_fail(err, SQLEASE_NOT_HELD, "lease '%s' is held by %s (token %lld)",
                            l->name, l->other.owner, (long long)l->other.token);
    }
    /* Free by the time we looked: the next acquire will say. */
    l->other_known = 0;
    return sqlease_fail(err, SQLEASE_NOT_HELD, "lease '%s' was not free when asked", l->name);
}

/*
 * A follower's take: one UPDATE that matches only a free or expired row,
 * then one SELECT for the new token.  The SELECT is trusted only if it
 * answered within the ttl of the moment the take was sent: the hold the
 * take made lasts at least that long and nobody else can take or renew it
 * meanwhile (a follower's take never matches a live row, and a renew needs
 * its token), so a live row with this owner id is that hold.  Past the ttl
 * it could be another process's hold under the same owner id.
 */
static int take(sqlease_lease *l, sqlease_lease_info *info, int *taken, sqlease_error *err)
{
    sqlease_lease_info row;
    int64_t sent = sqlease_mono_ms();
    int held = 0;
    int rc;

    rc = send_acquire(l, -1, &held, err);
    if (lost_race(rc, err)) {
        /* Whoever won holds it now: say so, with the holder in `info` when
         * the SELECT can tell (its own failure does not change the
         * answer). */
        char why[sizeof err->message];
        snprintf(why, sizeof why, "%s", err->message);
        (void)explain_miss(l, info, err);
        return sqlease_fail(err, SQLEASE_NOT_HELD,
                            "lease '%s' was taken by a concurrent acquire (%s)", l->name, why);
    }
    if (rc != SQLEASE_OK)
        return rc;
    if (!held)
        return explain_miss(l, info, err);

    l->other_known = 0;
    rc = read_row(l, &row, err);
    if (rc != SQLEASE_OK)
        return rc;
    if (sqlease_mono_ms() - sent >= l->ttl_ms || !row.held || strcmp(row.owner, l->owner) != 0)
        return sqlease_fail(err, SQLEASE_NOT_HELD,
                            "lease '%s' taken, but its token could not be read back within the "
                            "ttl of %lld ms (now %s)", l->name, (long long)l->ttl_ms,
                            row.held ? row.owner : "free");
    l->held_token = l->proven_token = row.token;
    row.mine = 1;
    if (info != NULL)
        *info = row;
    *taken = 1;
    return SQLEASE_OK;
}

int lease_acquire(sqlease_lease *l, sqlease_lease_info *info, int *taken, int *lost,
                  sqlease_error *err_in)
{
    sqlease_error local;
    sqlease_error *err = err_in != NULL ? err_in : &local;
    int held = 0;
    int rc;

    sqlease_err_clear(err);
    *taken = 0;
    *lost = 0;
    if (info != NULL)
        memset(info, 0, sizeof *info);
    l->deadline = db_deadline(l->db);

    if (l->held_token >= 0) {
        rc = send_acquire(l, l->held_token, &held, err);
        if (rc != SQLEASE_OK)
            return rc; /* not known either way: an error, not a loss */
        if (held) {
            l->proven_token = l->held_token;
            if (info != NULL) {
                snprintf(info->owner, sizeof info->owner, "%s", l->owner);
                info->token = l->held_token;
                info->held = info->mine = 1;
            }
            return SQLEASE_OK;
        }
        /* The hold we knew is gone (expired, or cleared by an admin):
         * that is a loss whatever the take below answers.  Whatever comes
         * next is a new hold with a new token. */
        l->held_token = -1;
        *lost = 1;
    }
    return take(l, info, taken, err);
}

int sqlease_lease_acquire(sqlease_lease *l, sqlease_lease_info *info, sqlease_error *err)
{
    int taken, lost;
    int rc;

    if (l == NULL) {
        sqlease_err_clear(err);
        return sqlease_fail(err, SQLEASE_EINVAL, "sqlease_lease_acquire: lease is NULL");
    }
    rc = lease_acquire(l, info, &taken, &lost, err);
    if (lost && rc != SQLEASE_OK && rc != SQLEASE_NOT_HELD && err != NULL) {
        /* The renew proved the hold gone; a failed take after it does not
         * make the answer "unknown". */
        char why[sizeof err->message];
        snprintf(why, sizeof why, "%s", err->message);
        return sqlease_err(err, SQLEASE_NOT_HELD, err->sqlstate, err->native_error,
                           "lease '%s': the hold is gone; taking it again failed: %s", l->name,
                           why);
    }
    if (lost && rc != SQLEASE_OK)
        return SQLEASE_NOT_HELD;
    return rc;
}

/*
 * Release the hold this handle last proved.  Scoped to (name, owner,
 * token): a handle that lost the lease, or another process that shares
 * its owner id, cannot clear a successor's row.  A handle that never held
 * has nothing to release and sends nothing.  `deadline` bounds it
 * (sqlease_mono_ms; 0: the handle's usual bound from now).  With a
 * minimum hold the database keeps the row held until acquired_at +
 * min_hold_ms (its own clock decides, in the statement); the handle
 * forgets the hold either way, so it never renews a row it gave up.
 */
int lease_release_for(sqlease_lease *l, int64_t deadline, int64_t min_hold_ms, int *released,
                      sqlease_error *err)
{
    int64_t rows = -1;
    int rc;

    sqlease_err_clear(err);
    if (released != NULL)
        *released = 0;
    if (l == NULL)
        return sqlease_fail(err, SQLEASE_EINVAL, "release: lease is NULL");
    l->held_token = -1;
    l->other_known = 0;
    if (l->proven_token < 0)
        return SQLEASE_OK;
    l->deadline = deadline > 0 ? deadline : db_deadline(l->db);
    rc = run_held(l, &l->d->release, l->sql_release, l->proven_token, min_hold_ms, NULL, 0,
                  NULL, &rows, err);
    if (rc == SQLEASE_OK && released != NULL)
        *released = rows > 0;
    return rc;
}

int lease_release_by(sqlease_lease *l, int64_t deadline, int *released, sqlease_error *err)
{
    return lease_release_for(l, deadline, l != NULL ? l->min_hold_ms : 0, released, err);
}

int64_t lease_min_hold(const sqlease_lease *l)
{
    return l->min_hold_ms;
}

int sqlease_lease_release(sqlease_lease *l, int *released, sqlease_error *err)
{
    return lease_release_by(l, 0, released, err);
}

int sqlease_lease_release_force(sqlease_lease *l, int *released, sqlease_error *err)
{
    int64_t rows = -1;
    int rc;

    sqlease_err_clear(err);
    if (released != NULL)
        *released = 0;
    if (l == NULL)
        return sqlease_fail(err, SQLEASE_EINVAL, "release: lease is NULL");
    l->held_token = -1;
    l->other_known = 0;
    l->deadline = db_deadline(l->db);
    rc = run(l, &l->d->release_force, l->sql_release_force, -1, NULL, 0, NULL, &rows, err);
    if (rc == SQLEASE_OK && released != NULL)
        *released = rows > 0;
    return rc;
}
