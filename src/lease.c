/*
 * lease.c -- the lease protocol: acquire, release, status, the fence
 * predicate, and listing every lease of a table.
 *
 * The database decides who holds the lease.  A hold is an owner id and a
 * fencing token.  A holder renews the hold it proved with one UPDATE
 * bound to its token; a follower reads the row and the database clock
 * (one SELECT) and, only when that read shows the row free or expired,
 * takes it with one UPDATE bound to the token it read.  The number of
 * rows an UPDATE affects is the whole answer (1: held, 0: not held,
 * anything else: an error, never "held"), and the UPDATE's WHERE decides:
 * the read only saves a follower the UPDATE while someone else holds the
 * lease, and tells it who.  Every time in the row comes from the
 * database's clock inside the statement, so no two hosts' clocks are ever
 * compared.
 *
 * Why the follower polls with a read: measured side by side (bench/,
 * poll_take_ratio and poll_read_ratio), the read costs a third of the
 * take UPDATE on SQLite (which takes the file's write lock even for an
 * UPDATE that changes nothing), a little less on PostgreSQL, and 7-15 %
 * more on MariaDB; and the read is what tells a follower who holds the
 * lease (on_holder, the status a follower reports) without a second
 * statement.
 *
 * A follower's take never joins a live hold, not even one written under
 * the same owner id: two processes given one owner id (or a process and
 * its restarted self) are two holds, told apart by the token, and only
 * the one that took the row with its own statement knows its token.  The
 * take is bound to the token its read saw and adds one to it, so a 1-row
 * answer says exactly which token it made: no SELECT reads it back.  The
 * handle keeps that token for two purposes: to renew (one statement, and
 * a 1-row answer proves the token is unchanged), and to release, which is
 * scoped to the hold so that it can never clear a successor's row.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "cronexpr.h"
#include "db.h"
#include "fire.h"
#include "history.h"
#include "internal.h"
#include "lease.h"
#include "lease_impl.h"

static int nomem(sqlease_error *err)
{
    return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
}

int sqle_lease_new_resolved(sqlease_lease **out, sqlease_db *db, const sqle_resolved *r,
                            sqlease_error *err)
{
    sqlease_lease *l;
    char owner[SQLEASE_MAX_OWNER + 1];
    const sqle_table_sql *sql;
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
    l->d = sqle_db_dialect(db);
    l->ttl_ms = r->ttl_ms;
    l->min_hold_ms = r->min_hold_ms;
    l->retry_ms = r->retry_ms;
    l->held_token = -1;
    l->proven_token = -1;
    l->hist_lost = -1;
    sqle_atomic_add(&l->priority, (uint64_t)r->priority);
    l->name = sqle_strdup(r->name);
    l->owner = sqle_strdup(r->owner != NULL ? r->owner : owner);
    l->data = r->data != NULL ? sqle_strdup(r->data) : NULL;
    sql = sqle_db_table_sql(db, l->d, r->table);
    if (sql != NULL) {
        l->table = sql->table;
        l->sql_acquire = sql->acquire;
        l->sql_take_watched = sql->take_watched;
        l->sql_renew = sql->renew;
        l->sql_release = sql->release;
        l->sql_release_force = sql->release_force;
        l->sql_repair = sql->repair;
        l->sql_status = sql->status;
        l->sql_fence = sql->fence;
        l->sql_take_fire = sql->take_fire;
        l->sql_seed = sql->seed;
        l->sql_handoff_request = sql->handoff_request;
        l->sql_handoff_cancel = sql->handoff_cancel;
        l->sql_handoff = sql->handoff;
        l->sql_ready_list = sql->ready_list;
    }
    if (sql == NULL || l->name == NULL || l->owner == NULL ||
        (r->data != NULL && l->data == NULL)) {
        sqlease_lease_free(l);
        return nomem(err);
    }
    if (r->schedule != NULL) {
        sqle_cron_error ce;
        rc = sqle_cron_parse(r->schedule, r->schedule_tz, &l->schedule, &ce);
        if (rc != SQLEASE_OK) {
            sqlease_lease_free(l);
            return sqle_fail(err, rc, "schedule '%s': %s", r->schedule, ce.message);
        }
        l->late_limit_ms = r->late_limit_ms > 0 ? r->late_limit_ms
                                                : sqle_cron_period_ms(l->schedule);
        l->fire_table = sqle_strdup(r->fire_table != NULL ? r->fire_table
                                                          : SQLEASE_DEFAULT_FIRE_TABLE);
        if (l->fire_table == NULL) {
            sqlease_lease_free(l);
            return nomem(err);
        }
    }
    /* The host its history rows (and a scheduled take's ledger rows)
     * record: the options', else this host's name. */
    if (r->host != NULL) {
        l->host = sqle_strdup(r->host);
    } else {
        char host[SQLEASE_MAX_HOST + 1];
        sqle_hostname(host, sizeof host);
        l->host = sqle_strdup(host);
    }
    if (l->host == NULL) {
        sqlease_lease_free(l);
        return nomem(err);
    }
    l->hist.db = db;
    l->hist.name = l->name;
    l->hist.owner = l->owner;
    l->hist.host = l->host;
    l->hist.pid = sqle_pid();
    if (r->history) {
        l->hist.sql = sqle_db_hist_sql(db, l->d, l->table,
                                       r->history_table != NULL ? r->history_table
                                                                : SQLEASE_DEFAULT_HISTORY_TABLE);
        if (l->hist.sql == NULL) {
            sqlease_lease_free(l);
            return nomem(err);
        }
    }
    *out = l;
    return SQLEASE_OK;
}

int sqlease_lease_new(sqlease_lease **out, sqlease_db *db, const sqlease_options *opt,
                      sqlease_error *err)
{
    sqlease_options full;
    sqle_resolved r;
    int rc;

    sqle_err_clear(err);
    if (out == NULL || db == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_lease_new: out and db must not be NULL");
    *out = NULL;
    rc = sqle_options_import(opt, &full, err);
    if (rc != SQLEASE_OK)
        return rc;
    rc = sqle_options_resolve(&full, &db->ini, 1, &r, err);
    if (rc != SQLEASE_OK)
        return rc;
    return sqle_lease_new_resolved(out, db, &r, err);
}

void sqlease_lease_free(sqlease_lease *l)
{
    if (l == NULL)
        return;
    free(l->name);
    free(l->owner);
    free(l->data);
    sqle_cron_free(l->schedule);
    free(l->fire_table);
    free(l->host);
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

uint64_t sqle_lease_statements(const sqlease_lease *l)
{
    return sqle_atomic_load(&l->statements);
}

void sqle_lease_forget(sqlease_lease *l)
{
    l->held_token = -1;
}

/*
 * A missing table is a broken installation, not a transient error: say
 * which table and what to run, keeping the driver's words after it.
 */
static int explain_missing_table(const sqlease_lease *l, int rc, sqlease_error *err)
{
    if (rc == SQLEASE_ENOTABLE && err != NULL) {
        char driver[sizeof err->message];
        memcpy(driver, err->message, sizeof driver);
        sqle_err(err, rc, err->sqlstate, err->native_error,
                 "lease table '%s' does not exist; run `sqlease migrate` (%s)", l->table,
                 driver);
    }
    return rc;
}

int sqle_lease_explain(const sqlease_lease *l, int rc, sqlease_error *err)
{
    return explain_missing_table(l, rc, err);
}

static int run_held(sqlease_lease *l, const sqle_stmt *st, const char *sql, int64_t token,
                    int64_t min_hold_ms, db_out *out, size_t nout, int *has_row, int64_t *rows,
                    sqlease_error *err)
{
    db_params p;
    int rc;

    memset(&p, 0, sizeof p);
    p.name = l->name;
    p.owner = l->owner;
    p.ttl_ms = l->ttl_ms;
    p.token = token;
    p.min_hold_ms = min_hold_ms;
    p.data = l->data;
    p.version = l->take_version;
    p.fire_at_ms = l->take_fire_at;
    p.priority = sqle_lease_priority(l);
    sqle_atomic_add(&l->statements, 1);
    rc = sqle_db_run_by(l->db, l->deadline, st, sql, &p, out, nout, has_row, rows, err);
    return explain_missing_table(l, rc, err);
}

static int run(sqlease_lease *l, const sqle_stmt *st, const char *sql, int64_t token,
               db_out *out, size_t nout, int *has_row, int64_t *rows, sqlease_error *err)
{
    return run_held(l, st, sql, token, 0, out, nout, has_row, rows, err);
}

/* The status and list statements' columns after the name (lease_impl.h). */
#define ROW_COLUMNS SQLE_ROW_COLUMNS

/* Point out[0..ROW_COLUMNS-1] at the fields of `info`. */
static void row_out(db_out *out, sqlease_lease_info *info)
{
    memset(out, 0, ROW_COLUMNS * sizeof *out);
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
    out[5].type = DB_TEXT;
    out[5].s = info->data;
    out[5].cap = sizeof info->data;
    out[6].type = DB_INT64;
    out[6].i = &info->version;
    out[7].type = DB_INT64;
    out[7].i = &info->ttl_ms;
    out[8].type = DB_TEXT;
    out[8].s = info->last_owner;
    out[8].cap = sizeof info->last_owner;
    out[9].type = DB_INT64;
    out[9].i = &info->fire_at_ms;
    out[10].type = DB_TEXT;
    out[10].s = info->handoff_to;
    out[10].cap = sizeof info->handoff_to;
    out[11].type = DB_INT64;
    out[11].i = &info->priority;
}

/*
 * After a row was fetched through row_out: NULL text reads as "", a clock
 * that is not a positive time is an error, and `held` says whether some
 * owner holds an unexpired lease.  A NULL where the library writes a
 * value (has_nulls) reads as "" or 0 but is never taken for one: a NULL
 * version would look unchanged to a watching follower while its holder
 * renews (NULL + 1 is NULL in every dialect the row may have been written
 * by), and a NULL token matches no take bound to what was read, so such
 * a row is repaired first (lease.c, repair) and read again.
 */
static int row_finish(const db_out *out, sqlease_lease_info *info, const char *now_expr,
                      sqlease_error *err)
{
    if (out[4].is_null || info->db_now_ms <= 0)
        return sqle_fail(err, SQLEASE_ECLOCK,
                         "the database clock read as %s from \"%s\"",
                         out[4].is_null ? "NULL" : info->db_now_ms == 0 ? "0" : "negative",
                         now_expr);
    info->has_nulls = out[0].is_null || out[1].is_null || out[2].is_null || out[3].is_null ||
                      out[6].is_null;
    if (out[0].is_null)
        info->owner[0] = '\0';
    if (out[5].is_null)
        info->data[0] = '\0';
    if (out[1].is_null)
        info->token = 0;
    if (out[2].is_null)
        info->acquired_at_ms = 0;
    if (out[3].is_null)
        info->expires_at_ms = 0;
    if (out[6].is_null)
        info->version = 0;
    if (out[7].is_null || info->ttl_ms < 0)
        info->ttl_ms = 0;
    if (out[8].is_null)
        info->last_owner[0] = '\0';
    /* A NULL fire_at_ms (a table made by hand) claims no fire: the take
     * of a fire reads it as 0 too (COALESCE). */
    if (out[9].is_null)
        info->fire_at_ms = 0;
    /* A NULL handoff_to or priority (a table made by hand) is none: the
     * statements read it so too (COALESCE), and it stops nothing. */
    if (out[10].is_null)
        info->handoff_to[0] = '\0';
    if (out[11].is_null)
        info->priority = 0;
    info->size = sizeof *info;
    info->held = info->owner[0] != '\0' && info->expires_at_ms > info->db_now_ms;
    info->reserved = info->owner[0] == '\0' && info->handoff_to[0] != '\0' &&
                     info->expires_at_ms > info->db_now_ms;
    return SQLEASE_OK;
}

void sqle_lease_row_out(db_out *out, sqlease_lease_info *info)
{
    row_out(out, info);
}

int sqle_lease_row_finish(const db_out *out, sqlease_lease_info *info, const char *now_expr,
                          sqlease_error *err)
{
    return row_finish(out, info, now_expr, err);
}

/* One SELECT of the row and the database clock.  `mine` is set for the
 * hold this handle proved: same owner id and same token. */
static int read_row(sqlease_lease *l, sqlease_lease_info *info, sqlease_error *err)
{
    db_out out[ROW_COLUMNS];
    int has_row = 0;
    int rc;

    memset(info, 0, sizeof *info);
    row_out(out, info);
    rc = run(l, &l->d->status, l->sql_status, -1, out, ROW_COLUMNS, &has_row, NULL, err);
    if (rc != SQLEASE_OK)
        return rc;
    if (!has_row) {
        memset(info, 0, sizeof *info);
        return sqle_fail(err, SQLEASE_ENOROW,
                         "lease row '%s' missing from table %s; run `sqlease migrate`",
                         l->name, l->table);
    }
    rc = row_finish(out, info, l->d->now_ms, err);
    if (rc != SQLEASE_OK)
        return rc;
    info->mine = info->held && l->held_token >= 0 && info->token == l->held_token &&
                 strcmp(info->owner, l->owner) == 0;
    return SQLEASE_OK;
}

/* A caller's info smaller than the `size` member itself cannot say how
 * much was filled. */
static int info_size_ok(const sqlease_lease_info *info, size_t size, const char *fn,
                        sqlease_error *err)
{
    if (info != NULL && size < sizeof(size_t))
        return sqle_fail(err, SQLEASE_EINVAL, "%s: info size %zu is too small", fn, size);
    return SQLEASE_OK;
}

/* The row is read into the library's own full info, then copied out as
 * far as the caller's reaches (see "Structs that grow"), whatever the
 * answer: a failed read leaves it zeroed, as it always did. */
int sqlease_lease_status_(sqlease_lease *l, sqlease_lease_info *info, size_t info_size,
                          sqlease_error *err)
{
    sqlease_lease_info full;
    int rc;

    sqle_err_clear(err);
    if (l == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_lease_status: lease is NULL");
    if (info_size_ok(info, info_size, "sqlease_lease_status", err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    l->deadline = sqle_db_deadline(l->db);
    rc = read_row(l, &full, err);
    if (info != NULL)
        sqle_struct_out(info, info_size, &full, sizeof full);
    return rc;
}

/*
 * Whether a failed statement lost a race rather than met an outage: a
 * serialization failure or a deadlock (the classifier's rules: SQLSTATE
 * 40001, PostgreSQL's 40P01).  The connection runs at read committed,
 * where two takes of one row do not fail this way; a server or pooler
 * that imposes a stricter level anyway makes the slower of two concurrent
 * takes fail instead of matching 0 rows, and that is the same answer:
 * someone else took it.
 */
static int lost_race(const sqlease_lease *l, int rc, const sqlease_error *err)
{
    return rc == SQLEASE_EDB &&
           sqle_classify_error(err, l->d, SQLEASE_AT_STATEMENT) ==
               SQLEASE_FAIL_SERIALIZATION;
}

/*
 * A take that another acquire beat, after a read that showed the row
 * free: the read's answer (owner "") would tell the caller nobody holds
 * it, and `run --no-wait` would then name nobody.  Read the row again
 * (one more statement, only after a lost race) so that `info` and the
 * message name the winner.  A winner whose work was quick may have let
 * go already: the row is free again, but a release keeps who held it
 * (last_owner) and the token it held, so a row free with the token after
 * the one this take was bound to (`seen_token`) names the take that beat
 * it.  If that read fails, the first read's answer stands.  `why` is the
 * serialization failure that lost the race, if that is how it was lost.
 */
static int lost_take(sqlease_lease *l, sqlease_lease_info *info, int64_t seen_token,
                     const char *why, sqlease_error *err)
{
    sqlease_lease_info now;
    sqlease_error ignored;
    char who[SQLE_QUOTED_ID_MAX];
    int rc = read_row(l, &now, &ignored);

    if (rc == SQLEASE_OK && !now.held && now.token == seen_token + 1 &&
        now.last_owner[0] != '\0') {
        if (info != NULL)
            *info = now;
        return sqle_fail(err, SQLEASE_NOT_HELD, "lease '%s' was taken by %s (token %lld) "
                         "between its read and its take%s%s%s, and released since", l->name,
                         sqle_quote_id(now.last_owner, who, sizeof who), (long long)now.token,
                         why != NULL ? " (" : "", why != NULL ? why : "",
                         why != NULL ? ")" : "");
    }
    if (rc == SQLEASE_OK && now.held && !now.mine) {
        if (info != NULL)
            *info = now;
        if (why != NULL)
            return sqle_fail(err, SQLEASE_NOT_HELD, "lease '%s' was taken by a concurrent "
                             "acquire of %s (token %lld) (%s)", l->name,
                             sqle_quote_id(now.owner, who, sizeof who), (long long)now.token,
                             why);
        return sqle_fail(err, SQLEASE_NOT_HELD, "lease '%s' was taken by %s (token %lld) "
                         "between its read and its take", l->name,
                         sqle_quote_id(now.owner, who, sizeof who), (long long)now.token);
    }
    if (why != NULL)
        return sqle_fail(err, SQLEASE_NOT_HELD, "lease '%s' was taken by a concurrent acquire "
                         "(%s)", l->name, why);
    return sqle_fail(err, SQLEASE_NOT_HELD,
                     "lease '%s' was taken by another acquire between its read and its take",
                     l->name);
}

static int deferred(const sqlease_lease *l, const sqlease_lease_info *row);

/* What a follower sends after a read (take_kind): nothing, the take by
 * the database's expiry, the watched take bound to the version, or the
 * repair of a row that holds NULLs (which it reads again after). */
enum { TAKE_NONE = 0, TAKE_BY_EXPIRY = 1, TAKE_WATCHED = 2, TAKE_REPAIR = 3 };

/*
 * A read showed a NULL where the library writes a value (a table made by
 * hand, or a row another tool wrote): give the NULLs a new row's values
 * with one UPDATE that also changes the version (templates/dialects.toml,
 * repair), then read the row again into *row.  The repair leaves a live
 * owner and expiry as they are, so a hold stays that hold; a watch of the
 * row starts over from the second read.  A row that still holds a NULL
 * after it (another writer puts them back) is an error rather than a
 * loop.
 */
static int repair_row(sqlease_lease *l, sqlease_lease_info *row, sqlease_error *err)
{
    int64_t rows = -1;
    int rc = run(l, &l->d->repair, l->sql_repair, -1, NULL, 0, NULL, &rows, err);

    if (rc != SQLEASE_OK)
        return rc;
    rc = read_row(l, row, err);
    if (rc == SQLEASE_OK && row->has_nulls)
        return sqle_fail(err, SQLEASE_EDB, "lease '%s': its row in %s still holds a NULL "
                         "after it was repaired (does another writer put NULLs in owner, "
                         "token, version, acquired_at_ms or expires_at_ms?)", l->name,
                         l->table);
    return rc;
}

/* Send the holder's renew of the hold with `token`, or (is_take) the
 * follower's take of a row whose token its read saw as `token`
 * (TAKE_WATCHED: and whose version it saw as l->take_version).  Returns
 * OK with *held set, or an error; a row count other than 0 or 1 is an
 * error. */
static int send_acquire(sqlease_lease *l, int is_take, int64_t token, int *held,
                        sqlease_error *err)
{
    int64_t rows = -1;
    int rc;

    if (is_take == TAKE_WATCHED)
        rc = run(l, &l->d->take_watched, l->sql_take_watched, token, NULL, 0, NULL, &rows, err);
    else if (is_take)
        rc = run(l, &l->d->acquire, l->sql_acquire, token, NULL, 0, NULL, &rows, err);
    else
        rc = run(l, &l->d->renew, l->sql_renew, token, NULL, 0, NULL, &rows, err);
    if (rc != SQLEASE_OK)
        return rc;
    if (rows != 0 && rows != 1)
        return sqle_fail(err, SQLEASE_EROWCOUNT,
                         "acquire of lease '%s' reported %lld rows affected; expected 0 or 1 "
                         "(is NOCOUNT on, or the name not the primary key?)",
                         l->name, (long long)rows);
    *held = rows == 1;
    return SQLEASE_OK;
}

/*
 * How long a row must stay unchanged before a watching follower may take
 * it: the ttl of the HOLDER, as its take wrote it in the row, never the
 * follower's own.  The holder's work stops by its last renew's sending +
 * its renew_deadline, which is below its ttl; a follower with a shorter
 * ttl than the holder's, in a fleet whose members differ, would
 * otherwise take a row whose holder merely renews less often than the
 * follower's ttl (a live hold, on a database clock stepped forward).  A
 * row whose take did not write it (0: taken by a release before this
 * column existed) gets the follower's own, as before.
 */
int64_t sqle_lease_holder_ttl(const sqlease_lease *l, int64_t row_ttl_ms)
{
    return row_ttl_ms > 0 ? row_ttl_ms : l->ttl_ms;
}

/*
 * The watch of a waiting follower (see lease_impl.h): remember the row's
 * (owner, token, version) and when a read first showed it.  Dated when
 * the answer is in hand: later than the answer itself, so a wait timed
 * from it only errs long.
 */
static void watch_from(sqlease_lease *l, uint64_t owner, int64_t token, int64_t version,
                       int64_t expires_at_ms, int64_t holder_ttl_ms, int64_t since)
{
    l->seen_valid = 1;
    l->seen_token = token;
    l->seen_version = version;
    l->seen_owner = owner;
    l->seen_since = since;
    /* A release with a minimum hold keeps its owner until its expiry:
     * what is left of it is waited on this follower's clock too.  Left
     * as the database's clock read before any step back this follower
     * saw (clock_ref, take_kind), so a step back just before the first
     * read of a dead holder's last version does not add itself. */
    l->seen_wait = sqle_lease_holder_ttl(l, holder_ttl_ms);
    if (expires_at_ms - (since + l->clock_ref) > l->seen_wait ||
        SQLE_PLANTED(watch_ends_at_expiry))
        l->seen_wait = expires_at_ms - (since + l->clock_ref);
}

static void watch_row(sqlease_lease *l, const sqlease_lease_info *row)
{
    uint64_t owner = sqle_hash_text(row->owner);

    if (l->seen_valid && l->seen_token == row->token &&
        (l->seen_version == row->version || SQLE_PLANTED(watch_ignores_version)) &&
        l->seen_owner == owner)
        return;
    watch_from(l, owner, row->token, row->version, row->expires_at_ms, row->ttl_ms,
               sqle_mono_ms());
}

/*
 * A watch begun by another read of the same process (the group's read of
 * the whole table, group.c): the row's (owner, token, version) as that
 * read first showed it, its clocks, and when its answer was in hand.  The
 * rule is the one watch_row keeps (the holder's last renew was sent
 * before that answer), whoever asked; the lease's own next read goes on
 * with the watch if it shows the same version and starts it over if not.
 * Nothing for a lease that does not watch.
 */
void sqle_lease_seed_watch(sqlease_lease *l, const sqle_watch_seed *seed)
{
    if (l == NULL || seed == NULL || !seed->valid || !l->watch)
        return;
    l->clock_ref = seed->db_now_ms - seed->since;
    l->clock_ref_valid = 1;
    watch_from(l, seed->owner_hash, seed->token, seed->version, seed->expires_at_ms,
               seed->ttl_ms, seed->since);
}

/*
 * What a follower that has just read `row` sends.  A free row (no owner:
 * released, or never taken) is taken at once, by the expiry take (whose
 * WHERE accepts a free row): its holder let go after its work stopped.
 * A follower that cannot watch (the one-shot acquire, run --no-wait)
 * takes a row some owner has once the database's clock says it expired.
 * A follower that watches takes such a row only once it has seen it
 * unchanged (owner, token, version) for a ttl on its own monotonic clock
 * (or for what was left of a minimum hold, watch_row), and then whatever
 * the database's clock says of its expiry, bound to that token and
 * version: the holder's last renew was sent before the answer that first
 * showed its version, so its work has stopped (renew deadline < ttl)
 * before the take.  A step forward of the database's clock, which
 * expires every hold at once, then hands no live hold over; a step back,
 * which pushes every expiry out, keeps no dead hold past the watch.
 */
static int take_kind(sqlease_lease *l, const sqlease_lease_info *row)
{
    if (row->has_nulls) {
        /* Whatever the NULLs stand for, the row is first made one the
         * statements can match, and its watch starts over. */
        l->seen_valid = 0;
        return TAKE_REPAIR;
    }
    /* A row reserved for another owner by a hand-over: no take would
     * match it before the reservation's deadline (the takes' WHERE says
     * so too), so none is sent; once the database's clock has passed it,
     * the row is as free as a released one.  A handle that has just
     * handed over takes nothing but a row reserved for it for a while. */
    if (sqle_lease_reserved_for_other(l, row) || deferred(l, row))
        return TAKE_NONE;
    if (row->owner[0] == '\0')
        return TAKE_BY_EXPIRY;
    if (!l->watch || SQLE_PLANTED(take_by_expiry))
        return row->held ? TAKE_NONE : TAKE_BY_EXPIRY;
    {
        /* The database's clock against this follower's, the largest seen
         * while it watches: a step back lowers the offset, which is then
         * ignored (a step forward raises it, and is taken). */
        int64_t off = row->db_now_ms - sqle_mono_ms();
        if (!l->clock_ref_valid || off > l->clock_ref)
            l->clock_ref = off;
        l->clock_ref_valid = 1;
    }
    watch_row(l, row);
    if (sqle_mono_ms() - l->seen_since < l->seen_wait)
        return TAKE_NONE;
    l->take_version = row->version;
    return TAKE_WATCHED;
}

int sqle_lease_wants_take(sqlease_lease *l, const sqlease_lease_info *row)
{
    return take_kind(l, row) != TAKE_NONE;
}

int sqle_lease_reserved_for_other(const sqlease_lease *l, const sqlease_lease_info *row)
{
    return row->reserved && strcmp(row->handoff_to, l->owner) != 0;
}

/* Whether l leaves `row` to the others now (sqle_lease_defer_takes). */
static int deferred(const sqlease_lease *l, const sqlease_lease_info *row)
{
    return l->defer_until != 0 && sqle_mono_ms() < l->defer_until &&
           !(row->reserved && strcmp(row->handoff_to, l->owner) == 0);
}

void sqle_lease_defer_takes(sqlease_lease *l, int64_t until)
{
    l->defer_until = until;
}

int sqle_lease_take_bound(const sqlease_lease *l, const sqlease_lease_info *row)
{
    if (row->has_nulls || l->schedule != NULL)
        return 0; /* repaired first; a scheduled take claims its fire on its own */
    if (sqle_lease_reserved_for_other(l, row) || deferred(l, row))
        return 0;
    if (row->owner[0] == '\0')
        return 1;
    return l->watch && l->seen_valid && l->seen_token == row->token &&
           l->seen_version == row->version && l->seen_owner == sqle_hash_text(row->owner) &&
           sqle_mono_ms() - l->seen_since >= l->seen_wait;
}

void sqle_lease_set_watch(sqlease_lease *l, int on)
{
    l->watch = on != 0;
    l->seen_valid = 0;
    l->clock_ref_valid = 0;
}

/*
 * A follower's take after a read (`row`) of the row and the clock: if
 * some hold is live (another process's, or one under this owner id that
 * this handle does not know the token of), that is the answer, with the
 * holder in `info`.  If the row is free or expired, take it with one
 * UPDATE bound to the token the read saw: one affected row means this
 * handle now holds the token after it, and 0 means the row changed in
 * between (another take won).  The UPDATE's WHERE decides; the read only
 * spares the UPDATE while the lease is held.  After a take `info`
 * describes the new hold, with the times of the read (acquired_at_ms and
 * expires_at_ms are lower bounds: the take ran a moment later).  The read
 * may be this handle's own (take) or one statement's answer for many
 * leases (sqle_lease_status_each).
 */
static int take_after_read(sqlease_lease *l, const sqlease_lease_info *row,
                           sqlease_lease_info *info, int *taken, sqlease_error *err)
{
    int held = 0;
    int kind;
    int rc;

    if (info != NULL)
        *info = *row;
    kind = take_kind(l, row);
    if (kind == TAKE_REPAIR) {
        sqlease_lease_info again;

        rc = repair_row(l, &again, err);
        if (rc != SQLEASE_OK)
            return rc;
        return take_after_read(l, &again, info, taken, err);
    }
    if (kind == TAKE_NONE) {
        char who[SQLE_QUOTED_ID_MAX];
        if (row->reserved && strcmp(row->handoff_to, l->owner) != 0)
            return sqle_fail(err, SQLEASE_NOT_HELD,
                             "lease '%s' is reserved for %s by a hand-over for %lld ms more",
                             l->name, sqle_quote_id(row->handoff_to, who, sizeof who),
                             (long long)(row->expires_at_ms - row->db_now_ms));
        if (deferred(l, row))
            return sqle_fail(err, SQLEASE_NOT_HELD, "lease '%s' was handed over by this "
                             "handle: left to the others for %lld ms more", l->name,
                             (long long)(l->defer_until - sqle_mono_ms()));
        if (!row->held)
            return sqle_fail(err, SQLEASE_NOT_HELD,
                             "lease '%s' is held by %s (token %lld), expired by the database's "
                             "clock; taken once this follower has seen it unchanged for "
                             "%lld ms",
                             l->name, sqle_quote_id(row->owner, who, sizeof who),
                             (long long)row->token, (long long)l->seen_wait);
        return sqle_fail(err, SQLEASE_NOT_HELD, "lease '%s' is held by %s (token %lld)",
                         l->name, sqle_quote_id(row->owner, who, sizeof who),
                         (long long)row->token);
    }
    rc = send_acquire(l, kind, row->token, &held, err);
    if (lost_race(l, rc, err)) {
        char why[sizeof err->message];
        snprintf(why, sizeof why, "%s", err->message);
        return lost_take(l, info, row->token, why, err);
    }
    if (rc != SQLEASE_OK)
        return rc;
    if (!held)
        return lost_take(l, info, row->token, NULL, err);
    l->held_token = l->proven_token = row->token + 1;
    /* The new hold's row in the history, and the end of the one it took
     * over (after the take: it decides nothing, and costs the take no
     * time). */
    sqle_hist_taken(&l->hist, l->held_token, row, l->deadline);
    if (info != NULL) {
        snprintf(info->owner, sizeof info->owner, "%s", l->owner);
        snprintf(info->data, sizeof info->data, "%s", l->data != NULL ? l->data : "");
        info->token = row->token + 1;
        info->acquired_at_ms = row->db_now_ms;
        info->expires_at_ms = row->db_now_ms + l->ttl_ms;
        info->ttl_ms = l->ttl_ms;
        info->version = row->version + 1;
        info->handoff_to[0] = '\0';
        info->priority = sqle_lease_priority(l);
        info->reserved = 0;
        info->held = info->mine = 1;
    }
    *taken = 1;
    return SQLEASE_OK;
}

/* A follower's try: read the row and the clock, then take it if the read
 * shows it free or expired. */
static int take_scheduled(sqlease_lease *l, const sqlease_lease_info *row,
                          sqlease_lease_info *info, int *taken, sqlease_error *err);

static int take(sqlease_lease *l, sqlease_lease_info *info, int *taken, sqlease_error *err)
{
    sqlease_lease_info row;
    int rc;

    rc = read_row(l, &row, err);
    if (rc == SQLEASE_ENOROW && l->seed_missing) {
        /* A ready row (supervisor.c) is this process's own to make: made
         * as migrate makes a row (an insert that leaves one that exists
         * alone), then read again. */
        rc = run(l, &l->d->seed, l->sql_seed, -1, NULL, 0, NULL, NULL, err);
        if (rc == SQLEASE_OK)
            rc = read_row(l, &row, err);
    }
    if (rc != SQLEASE_OK)
        return rc;
    if (l->schedule != NULL)
        return take_scheduled(l, &row, info, taken, err);
    return take_after_read(l, &row, info, taken, err);
}

/* The tick runner reads many rows with one statement and takes only the
 * ones it found free, through the same take a lone follower sends. */
int sqle_lease_take_seen(sqlease_lease *l, const sqlease_lease_info *seen, int64_t deadline,
                         sqlease_lease_info *info, int *taken, sqlease_error *err_in)
{
    sqlease_error local;
    sqlease_error *err = err_in != NULL ? err_in : &local;

    sqle_err_clear(err);
    if (taken != NULL)
        *taken = 0;
    if (l == NULL || seen == NULL || taken == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "take: lease, seen and taken must not be NULL");
    l->deadline = deadline > 0 ? deadline : sqle_db_deadline(l->db);
    if (l->schedule != NULL)
        return take_scheduled(l, seen, info, taken, err);
    return take_after_read(l, seen, info, taken, err);
}

/* ------------------------------------------------------------------ */
/* The take that claims a fire (run --schedule)                         */
/* ------------------------------------------------------------------ */

/*
 * A read showed the fire taken already: the row's fire_at_ms is the fire
 * or a later one.  Every take of a lease that `run --schedule` uses
 * claims a fire, so the row's holder (or, once it released, last_owner)
 * and acquired_at_ms are the hold that took it, and when.
 */
static int fire_taken(const sqlease_lease *l, const sqlease_lease_info *row, int64_t fire_at_ms,
                      sqlease_error *err)
{
    char who[SQLE_QUOTED_ID_MAX];
    const char *by = row->owner[0] != '\0' ? row->owner : row->last_owner;

    sqle_quote_id(by, who, sizeof who);
    if (row->fire_at_ms > fire_at_ms)
        return sqle_fail(err, SQLEASE_CLAIMED,
                         "lease '%s': a later fire (at %lld) was taken already, by %s "
                         "(token %lld, at %lld): the fire at %lld is not run", l->name,
                         (long long)row->fire_at_ms, who, (long long)row->token,
                         (long long)row->acquired_at_ms, (long long)fire_at_ms);
    return sqle_fail(err, SQLEASE_CLAIMED,
                     "lease '%s': the fire at %lld was taken by %s (token %lld, at %lld)%s",
                     l->name, (long long)fire_at_ms, who, (long long)row->token,
                     (long long)row->acquired_at_ms,
                     row->held ? "" : row->owner[0] != '\0' ? ", whose hold has expired"
                                                            : ", which has released it");
}

static int take_fire_after_read(sqlease_lease *l, const sqlease_lease_info *row,
                                int64_t fire_at_ms, sqlease_lease_info *info, int *taken,
                                sqlease_error *err)
{
    int64_t rows = -1;
    int rc;

    if (info != NULL)
        *info = *row;
    if (row->fire_at_ms >= fire_at_ms)
        return fire_taken(l, row, fire_at_ms, err);
    if (row->has_nulls) {
        sqlease_lease_info again;

        rc = repair_row(l, &again, err);
        if (rc != SQLEASE_OK)
            return rc;
        return take_fire_after_read(l, &again, fire_at_ms, info, taken, err);
    }
    if (row->owner[0] != '\0' && row->held) {
        char who[SQLE_QUOTED_ID_MAX];
        return sqle_fail(err, SQLEASE_NOT_HELD, "lease '%s' is held by %s (token %lld)",
                         l->name, sqle_quote_id(row->owner, who, sizeof who),
                         (long long)row->token);
    }
    l->take_fire_at = fire_at_ms;
    rc = run(l, &l->d->take_fire, l->sql_take_fire, row->token, NULL, 0, NULL, &rows, err);
    l->take_fire_at = 0;
    if (rc == SQLEASE_OK && rows != 0 && rows != 1)
        return sqle_fail(err, SQLEASE_EROWCOUNT,
                         "take of lease '%s' for the fire at %lld reported %lld rows affected; "
                         "expected 0 or 1", l->name, (long long)fire_at_ms, (long long)rows);
    if ((rc == SQLEASE_OK && rows == 0) || lost_race(l, rc, err)) {
        /* Another take won: one more read says whether it took this fire. */
        sqlease_lease_info now;
        sqlease_error ignored;
        char why[sizeof err->message];

        snprintf(why, sizeof why, "%s", rc == SQLEASE_OK ? "" : err->message);
        if (read_row(l, &now, &ignored) == SQLEASE_OK && now.fire_at_ms >= fire_at_ms) {
            if (info != NULL)
                *info = now;
            return fire_taken(l, &now, fire_at_ms, err);
        }
        return lost_take(l, info, row->token, why[0] != '\0' ? why : NULL, err);
    }
    if (rc != SQLEASE_OK)
        return rc;
    l->held_token = l->proven_token = row->token + 1;
    sqle_hist_taken(&l->hist, l->held_token, row, l->deadline);
    if (info != NULL) {
        snprintf(info->owner, sizeof info->owner, "%s", l->owner);
        snprintf(info->data, sizeof info->data, "%s", l->data != NULL ? l->data : "");
        info->token = row->token + 1;
        info->acquired_at_ms = row->db_now_ms;
        info->expires_at_ms = row->db_now_ms + l->ttl_ms;
        info->ttl_ms = l->ttl_ms;
        info->version = row->version + 1;
        info->handoff_to[0] = '\0';
        info->priority = sqle_lease_priority(l);
        info->reserved = 0;
        info->fire_at_ms = fire_at_ms;
        info->held = info->mine = 1;
    }
    *taken = 1;
    return SQLEASE_OK;
}

/*
 * A take that claims its schedule's fire (sqlease_options.schedule): the
 * latest fire at or before the database's clock as this very read gave
 * it, so that every host agrees which fire it is whatever its own clock
 * says, within the late limit (a host whose cron fired later than that
 * has no fire to run: the next is not due yet).  The take then claims
 * that fire as take_fire_after_read does; a fire claimed already is
 * SQLEASE_CLAIMED, naming who took it, from this read alone.
 */
static void record_abandoned(sqlease_lease *l, const sqlease_lease_info *prev)
{
    char host[256], note[SQLEASE_MAX_NOTE + 1], who[SQLE_QUOTED_ID_MAX];
    sqle_fire_ctx c;
    sqlease_error ignored;

    if (l->host == NULL)
        sqle_hostname(host, sizeof host);
    memset(&c, 0, sizeof c);
    c.db = l->db;
    c.lease_table = l->table;
    c.fire_table = l->fire_table;
    c.name = l->name;
    c.owner = l->owner;
    c.host = l->host != NULL ? l->host : host;
    snprintf(note, sizeof note, "abandoned: %s (token %lld) stopped renewing before its run "
             "ended", sqle_quote_id(prev->owner, who, sizeof who), (long long)prev->token);
    (void)sqle_fire_record(&c, l->held_token, l->name, prev->fire_at_ms, "abandoned", note,
                           l->deadline, NULL, &ignored);
}

static int take_scheduled(sqlease_lease *l, const sqlease_lease_info *row,
                          sqlease_lease_info *info, int *taken, sqlease_error *err)
{
    int64_t fire = 0;
    char when[40];
    int rc;

    if (info != NULL)
        *info = *row;
    if (sqle_cron_prev(l->schedule, row->db_now_ms, &fire) != 1)
        return sqle_fail(err, SQLEASE_NOT_DUE, "lease '%s': its schedule has no fire at or "
                         "before the database's clock", l->name);
    if (row->db_now_ms - fire > l->late_limit_ms) {
        sqle_cron_format_utc(fire, when, sizeof when);
        return sqle_fail(err, SQLEASE_NOT_DUE, "lease '%s': the schedule's latest fire, %s, "
                         "is %lld ms old by the database's clock, past the late limit of "
                         "%lld ms: no fire to run now", l->name, when,
                         (long long)(row->db_now_ms - fire), (long long)l->late_limit_ms);
    }
    rc = take_fire_after_read(l, row, fire, info, taken, err);
    if (rc == SQLEASE_OK) {
        l->held_fire_at = fire;
        /* The hold before ours claimed an earlier fire and was never
         * released: its run was cut short (a crash, a kill, a lost
         * lease), and wrote no outcome.  Its fire is recorded abandoned,
         * under our hold, unless it has a row (its outcome was written
         * and only the release was lost).  One statement, only then. */
        if (row->owner[0] != '\0' && !row->held && row->fire_at_ms > 0 && row->fire_at_ms < fire)
            record_abandoned(l, row);
    }
    return rc;
}

int64_t sqle_lease_held_fire(const sqlease_lease *l)
{
    return l != NULL ? l->held_fire_at : 0;
}

int sqle_lease_take_fire(sqlease_lease *l, const sqlease_lease_info *seen, int64_t fire_at_ms,
                         sqlease_lease_info *info, int *taken, sqlease_error *err_in)
{
    sqlease_error local;
    sqlease_error *err = err_in != NULL ? err_in : &local;

    sqle_err_clear(err);
    if (taken != NULL)
        *taken = 0;
    if (l == NULL || seen == NULL || taken == NULL)
        return sqle_fail(err, SQLEASE_EINVAL,
                         "take of a fire: lease, seen and taken must not be NULL");
    if (fire_at_ms <= 0)
        return sqle_fail(err, SQLEASE_EINVAL, "take of lease '%s': fire_at_ms %lld is not a "
                         "time (epoch ms)", l->name, (long long)fire_at_ms);
    l->deadline = sqle_db_deadline(l->db);
    return take_fire_after_read(l, seen, fire_at_ms, info, taken, err);
}

/* sqle_lease_acquire; with end_first, a loss's end in the history is
 * written before the take rather than left for the caller's flush (a
 * public call has no work to stop first, and the take's own history
 * would otherwise end that hold 'expired' before the holder said 'lost'). */
static int acquire(sqlease_lease *l, sqlease_lease_info *info, int *taken, int *lost,
                   int end_first, sqlease_error *err_in)
{
    sqlease_error local;
    sqlease_error *err = err_in != NULL ? err_in : &local;
    int held = 0;
    int rc;

    sqle_err_clear(err);
    *taken = 0;
    *lost = 0;
    if (info != NULL)
        memset(info, 0, sizeof *info);
    l->deadline = sqle_db_deadline(l->db);

    if (l->held_token >= 0) {
        rc = send_acquire(l, 0, l->held_token, &held, err);
        if (rc != SQLEASE_OK)
            return rc; /* not known either way: an error, not a loss */
        if (held) {
            l->proven_token = l->held_token;
            if (info != NULL) {
                snprintf(info->owner, sizeof info->owner, "%s", l->owner);
                snprintf(info->data, sizeof info->data, "%s", l->data != NULL ? l->data : "");
                info->token = l->held_token;
                info->held = info->mine = 1;
            }
            return SQLEASE_OK;
        }
        /* The hold we knew is gone (expired, or cleared by an admin):
         * that is a loss whatever the take below answers.  Whatever comes
         * next is a new hold with a new token.  The history says so,
         * unless a taker or an operator said first how it ended: once
         * the caller has acted on the loss (sqle_lease_history_flush),
         * so that no statement of the history comes before the work's
         * stop. */
        if (SQLE_PLANTED(renew_lost_is_error))
            return sqle_fail(err, SQLEASE_EDB, "the renew of '%s' matched no row", l->name);
        if (l->hist.sql != NULL)
            l->hist_lost = l->held_token;
        l->held_token = -1;
        *lost = 1;
        if (end_first)
            sqle_lease_history_flush(l);
    }
    return take(l, info, taken, err);
}

int sqle_lease_acquire(sqlease_lease *l, sqlease_lease_info *info, int *taken, int *lost,
                       sqlease_error *err)
{
    return acquire(l, info, taken, lost, 0, err);
}

/* As sqlease_lease_status, the answer goes through a full info of the
 * library's own. */
int sqlease_lease_acquire_(sqlease_lease *l, sqlease_lease_info *info, size_t info_size,
                           sqlease_error *err)
{
    sqlease_lease_info full;
    int taken, lost;
    int rc;

    if (l == NULL) {
        sqle_err_clear(err);
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_lease_acquire: lease is NULL");
    }
    if (info_size_ok(info, info_size, "sqlease_lease_acquire", err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    rc = acquire(l, info != NULL ? &full : NULL, &taken, &lost, 1, err);
    if (info != NULL)
        sqle_struct_out(info, info_size, &full, sizeof full);
    if (lost && rc != SQLEASE_OK && rc != SQLEASE_NOT_HELD && err != NULL) {
        /* The renew proved the hold gone; a failed take after it does not
         * make the answer "unknown". */
        char why[sizeof err->message];
        snprintf(why, sizeof why, "%s", err->message);
        return sqle_err(err, SQLEASE_NOT_HELD, err->sqlstate, err->native_error,
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
 * (sqle_mono_ms; 0: the handle's usual bound from now).  With a
 * minimum hold the database keeps the row held until acquired_at +
 * min_hold_ms (its own clock decides, in the statement); the handle
 * forgets the hold either way, so it never renews a row it gave up.
 */
int sqle_lease_release_for(sqlease_lease *l, int64_t deadline, int64_t min_hold_ms, int *released,
                           sqlease_error *err)
{
    return sqle_lease_release_as(l, deadline, min_hold_ms, SQLE_END_RELEASED, released, err);
}

int sqle_lease_release_as(sqlease_lease *l, int64_t deadline, int64_t min_hold_ms, int how,
                          int *released, sqlease_error *err)
{
    int64_t rows = -1;
    int rc;

    sqle_err_clear(err);
    if (released != NULL)
        *released = 0;
    if (l == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "release: lease is NULL");
    l->held_token = -1;
    if (l->proven_token < 0)
        return SQLEASE_OK;
    l->deadline = deadline > 0 ? deadline : sqle_db_deadline(l->db);
    if (SQLE_PLANTED(release_unscoped))
        rc = run(l, &l->d->release_force, l->sql_release_force, -1, NULL, 0, NULL, &rows, err);
    else
        rc = run_held(l, &l->d->release, l->sql_release, l->proven_token, min_hold_ms, NULL, 0,
                      NULL, &rows, err);
    if (rc == SQLEASE_OK && released != NULL)
        *released = rows > 0;
    if (rc == SQLEASE_OK && rows > 0)
        sqle_hist_ended(&l->hist, l->proven_token, how, l->deadline);
    return rc;
}

int sqle_lease_release_by(sqlease_lease *l, int64_t deadline, int *released, sqlease_error *err)
{
    return sqle_lease_release_for(l, deadline, l != NULL ? l->min_hold_ms : 0, released, err);
}

int64_t sqle_lease_min_hold(const sqlease_lease *l)
{
    return l->min_hold_ms;
}

void sqle_lease_history_flush(sqlease_lease *l)
{
    int64_t token = l->hist_lost;

    if (token < 0)
        return;
    l->hist_lost = -1;
    sqle_hist_ended(&l->hist, token, SQLE_END_LOST, sqle_db_deadline(l->db));
}

void sqle_lease_history_keep(sqlease_lease *l)
{
    l->hist_lost = -1;
}

void sqle_lease_history_end(sqlease_lease *l, int64_t token, int how, int64_t deadline)
{
    sqle_hist_ended(&l->hist, token, how, deadline > 0 ? deadline : sqle_db_deadline(l->db));
}

void sqle_lease_history_taken(sqlease_lease *l, int64_t token, const sqlease_lease_info *prev,
                              int64_t deadline)
{
    sqle_hist_taken(&l->hist, token, prev, deadline > 0 ? deadline : sqle_db_deadline(l->db));
}

const sqle_hist *sqle_lease_hist(const sqlease_lease *l)
{
    return &l->hist;
}

int sqlease_lease_release(sqlease_lease *l, int *released, sqlease_error *err)
{
    return sqle_lease_release_by(l, 0, released, err);
}

/*
 * The force frees whatever hold the row has, unscoped (that is its job).
 * With a history table, which hold that was is read first: the record
 * of the force must name that hold and no other, and the row alone
 * cannot say it afterwards (a hold taken and released between the force
 * and its record leaves the row free with its own token, and was once
 * recorded 'forced' in place of its own end: the simulator's clock-step
 * seed 17574).  A read that fails leaves the force unrecorded: the
 * holder's own end is recorded instead.
 */
int sqlease_lease_release_force(sqlease_lease *l, int *released, sqlease_error *err)
{
    int64_t rows = -1, forced = -1;
    int rc;

    sqle_err_clear(err);
    if (released != NULL)
        *released = 0;
    if (l == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "release: lease is NULL");
    l->held_token = -1;
    if (sqle_hist_on(&l->hist)) {
        sqlease_lease_info info;
        sqlease_error e1;

        memset(&info, 0, sizeof info);
        if (sqlease_lease_status(l, &info, &e1) == SQLEASE_OK && info.owner[0] != '\0')
            forced = info.token;
    }
    l->deadline = sqle_db_deadline(l->db);
    rc = run(l, &l->d->release_force, l->sql_release_force, -1, NULL, 0, NULL, &rows, err);
    if (rc == SQLEASE_OK && released != NULL)
        *released = rows > 0;
    if (rc == SQLEASE_OK && rows > 0)
        sqle_hist_forced(&l->hist, forced, l->deadline);
    return rc;
}

/* ------------------------------------------------------------------ */
/* The fence: the hold as a predicate for the caller's own statements   */
/* ------------------------------------------------------------------ */

/* The first version of sqlease_fence ends with `dialect`: a caller built
 * against it passes at least this size. */
#define FENCE_MIN_SIZE (offsetof(sqlease_fence, dialect) + sizeof(const char *))

int sqle_lease_fence(sqlease_lease *l, int64_t token, sqlease_fence *f, sqlease_error *err)
{
    const sqle_stmt *st = &l->d->fence;
    db_params p;
    size_t i;

    if (f->size < FENCE_MIN_SIZE)
        return sqle_fail(err, SQLEASE_EINVAL,
                         "sqlease_fence: size %zu is too small (initialise it with "
                         "SQLEASE_FENCE_INIT)", f->size);
    if (st->nparams > SQLEASE_FENCE_MAX_VALUES)
        return sqle_fail(err, SQLEASE_EINVAL, "the fence of dialect %s has %zu markers; "
                         "at most %d", l->d->key, st->nparams, SQLEASE_FENCE_MAX_VALUES);
    f->sql = l->sql_fence;
    f->nvalues = st->nparams;
    memset(f->values, 0, sizeof f->values);
    memset(&p, 0, sizeof p);
    p.name = l->name;
    p.owner = l->owner;
    p.token = token;
    for (i = 0; i < st->nparams; i++) {
        sqlease_value *v = &f->values[i];
        db_bind b;
        if (sqle_db_param_bind(&p, st->params[i], &b) != 0)
            return sqle_fail(err, SQLEASE_EINVAL, "the fence binds parameter %d, which "
                             "the table does not have", (int)st->params[i]);
        if (b.type == DB_INT64) {
            v->type = SQLEASE_VALUE_INT64;
            v->int64 = b.i;
        } else {
            v->type = SQLEASE_VALUE_TEXT;
            v->text = b.s;
        }
    }
    f->name = l->name;
    f->owner = l->owner;
    f->token = token;
    f->dialect = l->d->key;
    return SQLEASE_OK;
}

int sqlease_lease_fence(sqlease_lease *l, sqlease_fence *f, sqlease_error *err)
{
    sqle_err_clear(err);
    if (l == NULL || f == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_lease_fence: NULL argument");
    if (l->held_token < 0)
        return sqle_fail(err, SQLEASE_NOT_HELD, "lease '%s' is not held by this handle",
                         l->name);
    return sqle_lease_fence(l, l->held_token, f, err);
}

/* ------------------------------------------------------------------ */
/* Waiting for the lease                                                */
/* ------------------------------------------------------------------ */

/*
 * Try at once, then every retry, until held or until `timeout_ms` has
 * passed.  A status that no retry can change (a broken installation, a
 * bad argument) is returned at once; an outage is retried like "held by
 * another", and at the timeout the answer is SQLEASE_NOT_HELD with the
 * last reason in the message.  No try starts after the timeout, but one
 * that started before it runs to its own bound.
 */
int sqlease_lease_acquire_wait_(sqlease_lease *l, int64_t timeout_ms, sqlease_lease_info *info,
                                size_t info_size, sqlease_error *err_in)
{
    sqlease_error local;
    sqlease_error *err = err_in != NULL ? err_in : &local;
    int64_t until;
    int rc;

    sqle_err_clear(err);
    if (l == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_lease_acquire_wait: lease is NULL");
    if (timeout_ms < 0 || timeout_ms > SQLEASE_MAX_DURATION_MS)
        return sqle_fail(err, SQLEASE_EINVAL,
                         "sqlease_lease_acquire_wait: timeout %lld ms is not within 0..30 "
                         "days", (long long)timeout_ms);
    until = sqle_mono_ms() + timeout_ms;
    /* A wait of at least a ttl can watch a row that has an owner for one
     * (lease_impl.h) instead of asking the database's clock; a shorter
     * one cannot, and takes by the expiry as the one-shot acquire does. */
    sqle_lease_set_watch(l, timeout_ms >= l->ttl_ms);
    for (;;) {
        int64_t now, next;

        rc = sqlease_lease_acquire_(l, info, info_size, err);
        if (rc == SQLEASE_OK || rc == SQLEASE_EINVAL || rc == SQLEASE_ENOMEM ||
            rc == SQLEASE_ENOTABLE || rc == SQLEASE_ENOROW || rc == SQLEASE_EDIALECT ||
            rc == SQLEASE_EPLATFORM) {
            sqle_lease_set_watch(l, 0);
            return rc;
        }
        now = sqle_mono_ms();
        if (now >= until)
            break;
        next = now + l->retry_ms;
        sqle_sleep_ms(next < until ? l->retry_ms : until - now);
        if (sqle_mono_ms() >= until)
            break;
    }
    sqle_lease_set_watch(l, 0);
    {
        char why[sizeof err->message];
        snprintf(why, sizeof why, "%s", err->message);
        return sqle_err(err, SQLEASE_NOT_HELD, err->sqlstate, err->native_error,
                        "lease '%s' not held after waiting %lld ms (%s)", l->name,
                        (long long)timeout_ms, why);
    }
}

/* ------------------------------------------------------------------ */
/* Handing the lease over                                               */
/* ------------------------------------------------------------------ */

int64_t sqle_lease_priority(const sqlease_lease *l)
{
    return (int64_t)sqle_atomic_load(&l->priority);
}

/* The atomic has a load and an add: one writer at a time (the supervisor
 * sets it under its stop lock) makes the difference a store. */
void sqle_lease_set_priority(sqlease_lease *l, int64_t priority)
{
    sqle_atomic_add(&l->priority, (uint64_t)priority - sqle_atomic_load(&l->priority));
}

void sqle_lease_set_seed_missing(sqlease_lease *l, int on)
{
    l->seed_missing = on != 0;
}

int sqle_lease_seeds(const sqlease_lease *l)
{
    return l->seed_missing;
}

/*
 * The ready rows of a lease are named SQLEASE_READY_PREFIX + key + "/" +
 * 16 hex digits, where the key is the lease's name when it leaves room
 * for the rest in a name's 64 bytes, and otherwise "#" and 16 hex digits
 * of a hash of it (a name that long and one of 17 bytes that looks like
 * that hash would share their ready rows: nothing else would go wrong,
 * and nobody names leases so).
 */
void sqle_ready_prefix(const char *name, char *buf, size_t cap)
{
    if (strlen(name) <= SQLE_READY_KEY_MAX)
        snprintf(buf, cap, "%s%s/", SQLEASE_READY_PREFIX, name);
    else
        snprintf(buf, cap, "%s#%016llx/", SQLEASE_READY_PREFIX,
                 (unsigned long long)sqle_hash_text(name));
}

/* A statement of l's with the values given (not the handle's hold), by
 * `deadline`: it touches nothing of l but its statement count, so a
 * thread other than the one that makes l's calls may send it. */
static int run_params(sqlease_lease *l, int64_t deadline, const sqle_stmt *st, const char *sql,
                      db_params *p, int64_t *rows, sqlease_error *err)
{
    int rc;

    sqle_atomic_add(&l->statements, 1);
    rc = sqle_db_run_by(l->db, deadline, st, sql, p, NULL, 0, NULL, rows, err);
    return explain_missing_table(l, rc, err);
}

/* The priority a ready row publishes ("priority=N", the data its
 * supervisor writes); 0 if it says nothing we read. */
static int64_t ready_priority(const char *data)
{
    long long v = 0;

    if (strncmp(data, "priority=", 9) != 0 || sscanf(data + 9, "%lld", &v) != 1)
        return 0;
    return (int64_t)v;
}

/* Best first: the highest priority, then the one seen most recently
 * (one whose last renew is unknown last), then by owner id, so that
 * every reader picks the same one. */
static int cmp_ready(const void *a, const void *b)
{
    const sqle_ready *x = a, *y = b;

    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    if ((x->seen_ago_ms < 0) != (y->seen_ago_ms < 0))
        return x->seen_ago_ms < 0 ? 1 : -1;
    if (x->seen_ago_ms != y->seen_ago_ms)
        return x->seen_ago_ms < y->seen_ago_ms ? -1 : 1;
    return strcmp(x->owner, y->owner);
}

/* The ready rows a read keeps, at most: rows of followers that died
 * without stopping stay in the table (expired) until a start reuses
 * them, and are read with the live ones. */
#define READY_ROWS_MAX 128

/* name, then the status statement's columns. */
#define READY_COLUMNS (1 + SQLE_ROW_COLUMNS)

/* Every row of l's lease's ready rows, live or not, as fn(ud, name,
 * info): one statement by `deadline` (0: the handle's usual bound), and
 * the prefix compared here again (a name that merely sorts near it is
 * not one).  Touches nothing of l but its statement count (run_params). */
static int ready_rows(sqlease_lease *l, int64_t deadline,
                      void (*fn)(void *ud, const char *name, const sqlease_lease_info *info),
                      void *ud, sqlease_error *err)
{
    char prefix[SQLEASE_MAX_NAME + 1];
    struct ready_row {
        char name[SQLEASE_MAX_NAME + 1];
        sqlease_lease_info info;
    } *rows;
    db_out *cells;
    db_params p;
    size_t nrows = 0, i;
    int rc;

    rows = calloc(READY_ROWS_MAX, sizeof *rows);
    cells = calloc(READY_ROWS_MAX * READY_COLUMNS, sizeof *cells);
    if (rows == NULL || cells == NULL) {
        free(rows);
        free(cells);
        return nomem(err);
    }
    for (i = 0; i < READY_ROWS_MAX; i++) {
        db_out *o = cells + i * READY_COLUMNS;
        o[0].type = DB_TEXT;
        o[0].s = rows[i].name;
        o[0].cap = sizeof rows[i].name;
        row_out(o + 1, &rows[i].info);
    }
    sqle_ready_prefix(l->name, prefix, sizeof prefix);
    memset(&p, 0, sizeof p);
    p.prefix = prefix;
    if (deadline <= 0)
        deadline = sqle_db_deadline(l->db);
    sqle_atomic_add(&l->statements, 1);
    rc = sqle_db_run_rows_by(l->db, deadline, &l->d->ready_list, l->sql_ready_list, &p, cells,
                             READY_COLUMNS, READY_ROWS_MAX, &nrows, err);
    rc = explain_missing_table(l, rc, err);
    for (i = 0; i < nrows && rc == SQLEASE_OK; i++) {
        rc = row_finish(cells + i * READY_COLUMNS + 1, &rows[i].info, l->d->now_ms, err);
        if (rc == SQLEASE_OK && strncmp(rows[i].name, prefix, strlen(prefix)) == 0)
            fn(ud, rows[i].name, &rows[i].info);
    }
    free(rows);
    free(cells);
    return rc;
}

typedef struct ready_acc {
    sqle_ready *out;
    size_t cap, n;
} ready_acc;

/* A live ready row, kept (ready_rows' fn for sqle_lease_ready_read). */
static void keep_live(void *ud, const char *name, const sqlease_lease_info *in)
{
    ready_acc *a = ud;
    sqle_ready *r;

    (void)name;
    if (!in->held || a->n >= a->cap)
        return;
    r = &a->out[a->n++];
    snprintf(r->owner, sizeof r->owner, "%s", in->owner);
    r->priority = ready_priority(in->data);
    r->seen_ago_ms = in->ttl_ms > 0 ? in->db_now_ms - (in->expires_at_ms - in->ttl_ms) : -1;
    if (r->seen_ago_ms < -1)
        r->seen_ago_ms = 0;
}

int sqle_lease_ready_read(sqlease_lease *l, int64_t deadline, sqle_ready *out, size_t cap,
                          size_t *n, sqlease_error *err)
{
    ready_acc a;
    int rc;

    a.out = out;
    a.cap = cap;
    a.n = 0;
    *n = 0;
    rc = ready_rows(l, deadline, keep_live, &a, err);
    if (rc != SQLEASE_OK)
        return rc;
    qsort(out, a.n, sizeof *out, cmp_ready);
    *n = a.n;
    return SQLEASE_OK;
}

typedef struct ready_pick {
    char *name;
    size_t cap;
    size_t seen;
    unsigned rng;
} ready_pick;

/* A free ready row, one of them at random (reservoir sampling), so that
 * followers starting at once try different ones. */
static void pick_free(void *ud, const char *name, const sqlease_lease_info *in)
{
    ready_pick *p = ud;

    if (in->owner[0] != '\0' || in->has_nulls)
        return;
    p->seen++;
    p->rng = p->rng * 1103515245u + 12345u;
    if ((p->rng >> 8) % p->seen == 0)
        snprintf(p->name, p->cap, "%s", name);
}

int sqle_lease_ready_free(sqlease_lease *l, int64_t deadline, unsigned seed, char *name,
                          size_t cap, int *found, sqlease_error *err)
{
    ready_pick p;
    int rc;

    name[0] = '\0';
    p.name = name;
    p.cap = cap;
    p.seen = 0;
    p.rng = seed;
    rc = ready_rows(l, deadline, pick_free, &p, err);
    *found = rc == SQLEASE_OK && name[0] != '\0';
    return rc;
}

int sqle_lease_ready_best(sqlease_lease *l, const char *exclude, int64_t deadline, char *owner,
                          size_t cap, int *found, sqlease_error *err)
{
    sqle_ready *r = calloc(READY_ROWS_MAX, sizeof *r);
    size_t n = 0, i;
    int rc;

    *found = 0;
    owner[0] = '\0';
    if (r == NULL)
        return nomem(err);
    rc = sqle_lease_ready_read(l, deadline, r, READY_ROWS_MAX, &n, err);
    for (i = 0; i < n && rc == SQLEASE_OK; i++) {
        if (exclude != NULL && strcmp(r[i].owner, exclude) == 0)
            continue;
        snprintf(owner, cap, "%s", r[i].owner);
        *found = 1;
        break;
    }
    free(r);
    return rc;
}

int sqle_lease_request(sqlease_lease *l, const char *holder, int64_t token, const char *target,
                       int64_t min_hold_ms, int64_t deadline, int *done, sqlease_error *err)
{
    db_params p;
    int64_t rows = -1;
    int rc;

    *done = 0;
    memset(&p, 0, sizeof p);
    p.name = l->name;
    p.owner = holder;
    p.token = token;
    p.target = target;
    p.min_hold_ms = min_hold_ms;
    rc = run_params(l, deadline > 0 ? deadline : sqle_db_deadline(l->db), &l->d->handoff_request,
                    l->sql_handoff_request, &p, &rows, err);
    if (rc == SQLEASE_OK)
        *done = rows > 0;
    return rc;
}

/*
 * The hand-over of the hold this handle last proved, sent once its work
 * has stopped: to `target`, or ("*" or "") to the best ready follower
 * but this handle's owner, read first; a "*" that finds none releases the
 * row (no minimum hold: the work was moved, not finished).  Scoped to
 * the hold as a release is, whatever its expiry: a row some take has
 * changed since matches nothing.  The handle forgets its hold either way.
 *
 * The holder history records the hold's end here, after the statement
 * (it decides nothing, and the target's take does not wait for it):
 * 'handed_over' when the row was reserved for a target, 'released' when
 * no ready follower was found and the row was freed.  The target's take
 * starts its own hold's row, and closes none: its read showed the row
 * free.
 */
int sqle_lease_handoff(sqlease_lease *l, const char *target, int64_t reserve_ms,
                       int64_t deadline, char *resolved, size_t cap, int *handed,
                       sqlease_error *err)
{
    char best[SQLEASE_MAX_OWNER + 1];
    db_params p;
    int64_t rows = -1;
    int found = 0, rc;

    sqle_err_clear(err);
    *handed = 0;
    resolved[0] = '\0';
    l->held_token = -1;
    if (l->proven_token < 0)
        return SQLEASE_OK;
    l->deadline = deadline > 0 ? deadline : sqle_db_deadline(l->db);
    if (target == NULL || target[0] == '\0' || strcmp(target, "*") == 0) {
        rc = sqle_lease_ready_best(l, l->owner, l->deadline, best, sizeof best, &found, err);
        if (rc != SQLEASE_OK)
            return rc;
        if (!found) {
            rc = run_held(l, &l->d->release, l->sql_release, l->proven_token, 0, NULL, 0, NULL,
                          &rows, err);
            if (rc == SQLEASE_OK)
                *handed = rows > 0;
            if (rc == SQLEASE_OK && rows > 0)
                sqle_hist_ended(&l->hist, l->proven_token, SQLE_END_RELEASED, l->deadline);
            return rc;
        }
        target = best;
    }
    memset(&p, 0, sizeof p);
    p.name = l->name;
    p.owner = l->owner;
    p.token = l->proven_token;
    p.target = target;
    p.reserve_ms = reserve_ms;
    rc = run_params(l, l->deadline, &l->d->handoff, l->sql_handoff, &p, &rows, err);
    if (rc != SQLEASE_OK)
        return rc;
    if (rows != 0 && rows != 1)
        return sqle_fail(err, SQLEASE_EROWCOUNT, "the hand-over of lease '%s' reported %lld "
                         "rows affected; expected 0 or 1", l->name, (long long)rows);
    *handed = rows == 1;
    snprintf(resolved, cap, "%s", target);
    if (*handed)
        sqle_hist_ended(&l->hist, l->proven_token, SQLE_END_HANDED_OVER, l->deadline);
    return SQLEASE_OK;
}

/* The owner id a request names: "*" for NULL or "*", else checked as an
 * owner id is. */
static int request_target(const char *to, const char **target, sqlease_error *err)
{
    if (to == NULL || strcmp(to, "*") == 0) {
        *target = "*";
        return SQLEASE_OK;
    }
    if (to[0] == '\0')
        return sqle_fail(err, SQLEASE_EINVAL, "hand-over target is empty (an empty owner marks "
                         "a free lease)");
    if (sqle_check_text("hand-over target", to, SQLEASE_MAX_OWNER, 1, err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    *target = to;
    return SQLEASE_OK;
}

/* What a read says of asking for a hand-over now: OK (a live hold with
 * no request), or the status and message that tell why not. */
static int requestable(sqlease_lease *l, const sqlease_lease_info *row, sqlease_error *err)
{
    char who[SQLE_QUOTED_ID_MAX];

    if (row->reserved)
        return sqle_fail(err, SQLEASE_PENDING, "lease '%s' is reserved for %s by a hand-over "
                         "for %lld ms more", l->name,
                         sqle_quote_id(row->handoff_to, who, sizeof who),
                         (long long)(row->expires_at_ms - row->db_now_ms));
    if (!row->held)
        return sqle_fail(err, SQLEASE_NOT_HELD, "lease '%s' is not held", l->name);
    if (row->handoff_to[0] != '\0')
        return sqle_fail(err, SQLEASE_PENDING, "lease '%s': its holder has been asked to hand "
                         "it over to %s already", l->name,
                         sqle_quote_id(row->handoff_to, who, sizeof who));
    return SQLEASE_OK;
}

int sqlease_lease_request_handoff_(sqlease_lease *l, const char *to, sqlease_lease_info *info,
                                   size_t info_size, sqlease_error *err)
{
    sqlease_lease_info row;
    const char *target = NULL;
    int tries, done = 0, rc;

    sqle_err_clear(err);
    memset(&row, 0, sizeof row);
    if (l == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_lease_request_handoff: lease is NULL");
    if (info_size_ok(info, info_size, "sqlease_lease_request_handoff", err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    rc = request_target(to, &target, err);
    /* A request that another change beat (a renew does not: it changes
     * neither owner nor token) is read and tried again, a few times. */
    for (tries = 0; rc == SQLEASE_OK && tries < 3; tries++) {
        l->deadline = sqle_db_deadline(l->db);
        rc = read_row(l, &row, err);
        if (rc == SQLEASE_OK)
            rc = requestable(l, &row, err);
        if (rc == SQLEASE_OK)
            rc = sqle_lease_request(l, row.owner, row.token, target, 0, l->deadline, &done, err);
        if (rc == SQLEASE_OK && done) {
            snprintf(row.handoff_to, sizeof row.handoff_to, "%s", target);
            row.version++;
            break;
        }
    }
    if (rc == SQLEASE_OK && !done)
        rc = sqle_fail(err, SQLEASE_NOT_HELD, "lease '%s' changed under each of three requests",
                       l->name);
    if (info != NULL)
        sqle_struct_out(info, info_size, &row, sizeof row);
    return rc;
}

int sqlease_lease_cancel_handoff(sqlease_lease *l, const sqlease_lease_info *req,
                                 int *cancelled, sqlease_error *err)
{
    db_params p;
    int64_t rows = -1;
    int rc;

    sqle_err_clear(err);
    if (cancelled != NULL)
        *cancelled = 0;
    if (l == NULL || req == NULL || req->owner[0] == '\0' || req->handoff_to[0] == '\0')
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_lease_cancel_handoff: lease is NULL, or "
                         "`requested` names no request");
    memset(&p, 0, sizeof p);
    p.name = l->name;
    p.owner = req->owner;
    p.token = req->token;
    p.target = req->handoff_to;
    rc = run_params(l, sqle_db_deadline(l->db), &l->d->handoff_cancel, l->sql_handoff_cancel, &p,
                    &rows, err);
    if (rc == SQLEASE_OK && cancelled != NULL)
        *cancelled = rows > 0;
    return rc;
}

int sqlease_lease_ready(sqlease_lease *l, sqlease_ready_fn fn, void *userdata,
                        sqlease_error *err)
{
    sqle_ready *r;
    size_t n = 0, i;
    int rc;

    sqle_err_clear(err);
    if (l == NULL || fn == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_lease_ready: lease and fn must not be "
                         "NULL");
    r = calloc(READY_ROWS_MAX, sizeof *r);
    if (r == NULL)
        return nomem(err);
    rc = sqle_lease_ready_read(l, 0, r, READY_ROWS_MAX, &n, err);
    for (i = 0; i < n && rc == SQLEASE_OK; i++)
        if (fn(userdata, r[i].owner, r[i].priority, r[i].seen_ago_ms) != 0)
            break;
    free(r);
    return rc;
}
