/*
 * fire.c -- the fire ledger: one row per scheduled fire of a job under a
 * lease, which makes each fire run once however many hosts schedule it.
 *
 * The lease says who may run jobs now; the ledger says which fires have
 * run.  A holder claims a fire with one INSERT ... SELECT from the lease
 * row (templates/dialects.toml, fire_claim): the row is written only
 * while the claimant's hold (owner and token) is live by the database's
 * clock, only once that clock has reached the fire, and only if the fire
 * has no row, all decided by the database in that one statement.  One
 * affected row is the whole answer for the claimant; 0 rows is followed
 * by one read (fire_read) that says why, so that the common case costs a
 * single statement and a scheduler that misses a fire learns who ran it.
 * The other statements keep the row's state (how the run ended; a new
 * holder's marking of older holds' runs as abandoned; the rerun of one)
 * and read and trim the table.
 *
 * Nothing a caller gives is sent unchecked: tables are validated
 * identifiers (pasted into the SQL), and every text value is checked as
 * lease names and owner ids are, before the first statement, so a bad
 * argument costs no round trip.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "db.h"
#include "fire.h"
#include "internal.h"
#include "lease.h"
#include "supervisor.h"

/* The columns every read of a fire's row has, in the statements' order:
 * state, attempt, owner, host, token, started_at_ms, ended_at_ms,
 * exit_status, duration_ms, note. */
#define FIRE_COLUMNS 10
/* fire_read's: those, whether the hold is live, the clock. */
#define READ_COLUMNS (FIRE_COLUMNS + 2)
/* fire_list's: name, job, fire_at_ms, then those. */
#define LIST_COLUMNS (3 + FIRE_COLUMNS)

/* Rows per statement of a listing, and jobs per page of fire_last. */
#define FIRE_PAGE 100

/* What a call needs of its context beyond the fire table and the name. */
enum { NEED_HOLD = 1, NEED_HOST = 2 };

/* One call: its context, its handle's statements for the two tables, and
 * the deadline every statement of the call shares. */
typedef struct fire_call {
    const sqle_fire_ctx *c;
    const sqle_dialect *d;
    const sqle_fire_sql *sql;
    const char *lease_table, *fire_table;
    int64_t deadline;
} fire_call;

/* A fire's row as read: its two INTEGER columns are read as int64. */
typedef struct fire_row {
    sqlease_fire_info info;
    int64_t attempt, exit_status;
} fire_row;

/* ------------------------------------------------------------------ */
/* Checks                                                              */
/* ------------------------------------------------------------------ */

static int check_job(const char *job, sqlease_error *err)
{
    return sqle_check_text("job", job, SQLEASE_MAX_JOB, 0, err);
}

static int check_note(const char *note, sqlease_error *err)
{
    return note == NULL ? SQLEASE_OK : sqle_check_text("note", note, SQLEASE_MAX_NOTE, 1, err);
}

static int check_fire_at(int64_t fire_at_ms, sqlease_error *err)
{
    if (fire_at_ms <= 0)
        return sqle_fail(err, SQLEASE_EINVAL,
                         "fire_at_ms %lld is not a time (epoch ms on the database clock)",
                         (long long)fire_at_ms);
    return SQLEASE_OK;
}

/* A state the caller writes, among the `n` it may. */
static int check_state(const char *state, const char *const *ok, size_t n, sqlease_error *err)
{
    size_t i;

    for (i = 0; state != NULL && i < n; i++)
        if (strcmp(state, ok[i]) == 0)
            return SQLEASE_OK;
    return sqle_fail(err, SQLEASE_EINVAL, "fire state '%s' is not one this call writes (%s%s%s%s%s)",
                     state != NULL ? state : "(null)", ok[0], n > 1 ? ", " : "",
                     n > 1 ? ok[1] : "", n > 2 ? ", " : "", n > 2 ? ok[2] : "");
}

/*
 * Begin a call: check the context (the tables as identifiers, the name,
 * and the owner id and host where `need` says), find the handle's
 * statements for its tables, and fix the deadline.  Sends nothing.
 */
static int call_begin(fire_call *k, const sqle_fire_ctx *c, int need, int64_t deadline,
                      sqlease_error *err)
{
    memset(k, 0, sizeof *k);
    if (c == NULL || c->db == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "fire ledger: the context or its db is NULL");
    k->c = c;
    k->lease_table = c->lease_table != NULL ? c->lease_table : SQLEASE_DEFAULT_TABLE;
    k->fire_table = c->fire_table != NULL ? c->fire_table : SQLEASE_DEFAULT_FIRE_TABLE;
    if (sqle_check_table("fire table", k->fire_table, err) != SQLEASE_OK ||
        sqle_check_table("table", k->lease_table, err) != SQLEASE_OK ||
        sqle_check_text("lease name", c->name, SQLEASE_MAX_NAME, 0, err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    if ((need & NEED_HOLD) &&
        sqle_check_text("owner id", c->owner, SQLEASE_MAX_OWNER, 1, err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    if ((need & NEED_HOST) &&
        sqle_check_text("host", c->host, SQLEASE_MAX_HOST, 1, err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    k->d = sqle_db_dialect(c->db);
    k->sql = sqle_db_fire_sql(c->db, k->d, k->lease_table, k->fire_table);
    if (k->sql == NULL)
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    k->deadline = deadline > 0 ? deadline : sqle_db_deadline(c->db);
    return SQLEASE_OK;
}

/* The values every statement of the context binds from it. */
static void ctx_params(const fire_call *k, db_params *p)
{
    memset(p, 0, sizeof *p);
    p->name = k->c->name;
    p->owner = k->c->owner != NULL ? k->c->owner : "";
    p->host = k->c->host;
}

/* A missing table is a broken installation: say which, and what to run,
 * before the driver's words.  A statement fenced by the lease names both
 * tables, and the driver does not always say which one is missing. */
static int explain(const fire_call *k, int both, int rc, sqlease_error *err)
{
    if (rc == SQLEASE_ENOTABLE && err != NULL) {
        char driver[sizeof err->message];
        memcpy(driver, err->message, sizeof driver);
        if (both)
            sqle_err(err, rc, err->sqlstate, err->native_error,
                     "fire table '%s' or lease table '%s' does not exist; run `sqlease "
                     "migrate` (%s)", k->fire_table, k->lease_table, driver);
        else
            sqle_err(err, rc, err->sqlstate, err->native_error,
                     "fire table '%s' does not exist; run `sqlease migrate` (%s)",
                     k->fire_table, driver);
    }
    return rc;
}

/* Run one statement of the call.  `both`: it names the lease table too. */
static int run(const fire_call *k, const sqle_stmt *st, const char *sql, int both,
               const db_params *p, db_out *out, size_t nout, int *has_row, int64_t *rows,
               sqlease_error *err)
{
    int rc = sqle_db_run_by(k->c->db, k->deadline, st, sql, p, out, nout, has_row, rows, err);
    return explain(k, both, rc, err);
}

/* A statement that writes at most one fire's row answered `rows`: 1 or 0,
 * or a count no such statement can give (SQLEASE_EROWCOUNT). */
static int one_or_none(const fire_call *k, const char *what, int64_t rows, sqlease_error *err)
{
    if (rows == 0 || rows == 1)
        return SQLEASE_OK;
    return sqle_fail(err, SQLEASE_EROWCOUNT, "%s of a fire of lease '%s' reported %lld rows "
                     "affected; expected 0 or 1", what, k->c->name, (long long)rows);
}

/* Whether a statement lost a race rather than met an outage (a
 * serialization failure or a deadlock, under an isolation stricter than
 * the connection's own): it changed nothing, as 0 rows would say. */
static int lost_race(const fire_call *k, int rc, const sqlease_error *err)
{
    return rc == SQLEASE_EDB &&
           sqle_classify_error(err, k->d, SQLEASE_AT_STATEMENT) == SQLEASE_FAIL_SERIALIZATION;
}

/* ------------------------------------------------------------------ */
/* Rows                                                                */
/* ------------------------------------------------------------------ */

/* Point out[0..FIRE_COLUMNS-1] at r's fields. */
static void fire_cols(db_out *out, fire_row *r)
{
    sqlease_fire_info *f = &r->info;

    memset(out, 0, FIRE_COLUMNS * sizeof *out);
    out[0].type = DB_TEXT;
    out[0].s = f->state;
    out[0].cap = sizeof f->state;
    out[1].type = DB_INT64;
    out[1].i = &r->attempt;
    out[2].type = DB_TEXT;
    out[2].s = f->owner;
    out[2].cap = sizeof f->owner;
    out[3].type = DB_TEXT;
    out[3].s = f->host;
    out[3].cap = sizeof f->host;
    out[4].type = DB_INT64;
    out[4].i = &f->token;
    out[5].type = DB_INT64;
    out[5].i = &f->started_at_ms;
    out[6].type = DB_INT64;
    out[6].i = &f->ended_at_ms;
    out[7].type = DB_INT64;
    out[7].i = &r->exit_status;
    out[8].type = DB_INT64;
    out[8].i = &f->duration_ms;
    out[9].type = DB_TEXT;
    out[9].s = f->note;
    out[9].cap = sizeof f->note;
}

/* After a fetch through fire_cols: NULLs as the info says them (no exit
 * status, no duration: -1, no note: ""), and whether there was a row at
 * all (state is never NULL in one).  Returns 1 for a row. */
static int fire_finish(const db_out *out, fire_row *r)
{
    sqlease_fire_info *f = &r->info;

    f->size = sizeof *f;
    if (out[0].is_null) {
        memset(f, 0, sizeof *f);
        f->size = sizeof *f;
        f->duration_ms = -1;
        return 0;
    }
    f->attempt = out[1].is_null ? 0 : (int)r->attempt;
    if (out[2].is_null)
        f->owner[0] = '\0';
    if (out[3].is_null)
        f->host[0] = '\0';
    if (out[4].is_null)
        f->token = 0;
    if (out[5].is_null)
        f->started_at_ms = 0;
    if (out[6].is_null)
        f->ended_at_ms = 0;
    f->has_exit = !out[7].is_null;
    f->exit_status = f->has_exit ? (int)r->exit_status : 0;
    if (out[8].is_null)
        f->duration_ms = -1;
    if (out[9].is_null)
        f->note[0] = '\0';
    return 1;
}

/* The row a claim (or a record) writes, as the caller knows it without
 * reading it back. */
static void fill_written(const fire_call *k, int64_t token, const char *job, int64_t fire_at_ms,
                         const char *state, int attempt, const char *note,
                         sqlease_fire_info *out)
{
    memset(out, 0, sizeof *out);
    out->size = sizeof *out;
    snprintf(out->name, sizeof out->name, "%s", k->c->name);
    snprintf(out->job, sizeof out->job, "%s", job);
    out->fire_at_ms = fire_at_ms;
    snprintf(out->state, sizeof out->state, "%s", state);
    out->attempt = attempt;
    snprintf(out->owner, sizeof out->owner, "%s", k->c->owner);
    snprintf(out->host, sizeof out->host, "%s", k->c->host);
    out->token = token;
    out->duration_ms = -1;
    snprintf(out->note, sizeof out->note, "%s", note != NULL ? note : "");
}

/*
 * fire_read: one fire's row (if it has one: *exists), whether the hold
 * (p->owner, p->token) of the lease row is live (*held), and the clock,
 * all from one statement that always answers one row.  A clock that is
 * not a positive time is an error, as every read of it.
 */
static int read_fire(const fire_call *k, const db_params *p, fire_row *r, int *exists,
                     int *held, sqlease_error *err)
{
    db_out out[READ_COLUMNS];
    int64_t live = 0;
    int has_row = 0;
    int rc;

    memset(r, 0, sizeof *r);
    fire_cols(out, r);
    memset(out + FIRE_COLUMNS, 0, 2 * sizeof *out);
    out[FIRE_COLUMNS].type = DB_INT64;
    out[FIRE_COLUMNS].i = &live;
    out[FIRE_COLUMNS + 1].type = DB_INT64;
    out[FIRE_COLUMNS + 1].i = &r->info.db_now_ms;
    rc = run(k, &k->d->fire_read, k->sql->read, 1, p, out, READ_COLUMNS, &has_row, NULL, err);
    if (rc != SQLEASE_OK)
        return rc;
    if (!has_row || out[FIRE_COLUMNS + 1].is_null || r->info.db_now_ms <= 0)
        return sqle_fail(err, SQLEASE_ECLOCK, "the database clock read as %s from \"%s\"",
                         !has_row ? "no row" : out[FIRE_COLUMNS + 1].is_null ? "NULL"
                         : r->info.db_now_ms == 0 ? "0" : "negative", k->d->now_ms);
    {
        int64_t now = r->info.db_now_ms;
        *exists = fire_finish(out, r);
        r->info.db_now_ms = now;
    }
    snprintf(r->info.name, sizeof r->info.name, "%s", p->name);
    snprintf(r->info.job, sizeof r->info.job, "%s", p->job);
    r->info.fire_at_ms = p->fire_at_ms;
    *held = !out[FIRE_COLUMNS].is_null && live > 0;
    return SQLEASE_OK;
}

/* "state by owner on host (token T, attempt A)" of a row, for messages. */
static const char *row_said(const sqlease_fire_info *f, char *buf, size_t cap)
{
    char who[SQLE_QUOTED_ID_MAX], host[SQLE_SHOWN_MAX(SQLEASE_MAX_HOST)];

    snprintf(buf, cap, "%s by %s on %s (token %lld, attempt %d, started at %lld)", f->state,
             sqle_quote_id(f->owner, who, sizeof who),
             sqle_show_text(f->host, host, sizeof host), (long long)f->token, f->attempt,
             (long long)f->started_at_ms);
    return buf;
}

/*
 * A claim (or a record) that wrote nothing: one read says why.  The fire
 * has a row (SQLEASE_CLAIMED, *seen that row); else the hold is not live
 * (SQLEASE_NOT_HELD); else the fire was not due by the database's clock
 * when the statement ran (SQLEASE_NOT_DUE: the read comes after it, so a
 * clock that has reached the fire since still means it had not then).
 */
static int why_not_written(const fire_call *k, const db_params *p, const char *what,
                           sqlease_fire_info *seen, sqlease_error *err)
{
    fire_row r;
    char job[SQLE_SHOWN_MAX(SQLEASE_MAX_JOB)], said[1200], who[SQLE_QUOTED_ID_MAX];
    int exists = 0, held = 0;
    int rc = read_fire(k, p, &r, &exists, &held, err);

    if (rc != SQLEASE_OK)
        return rc;
    sqle_show_text(p->job, job, sizeof job);
    if (exists) {
        if (seen != NULL)
            *seen = r.info;
        return sqle_fail(err, SQLEASE_CLAIMED, "lease '%s': fire %s at %lld was claimed "
                         "already: %s", p->name, job, (long long)p->fire_at_ms,
                         row_said(&r.info, said, sizeof said));
    }
    if (!held)
        return sqle_fail(err, SQLEASE_NOT_HELD, "lease '%s': %s of fire %s at %lld: %s does not "
                         "hold the lease with token %lld (the hold is gone); nothing written",
                         p->name, what, job, (long long)p->fire_at_ms,
                         sqle_quote_id(p->owner, who, sizeof who), (long long)p->token);
    if (p->fire_at_ms > r.info.db_now_ms)
        return sqle_fail(err, SQLEASE_NOT_DUE, "lease '%s': fire %s at %lld is not due: the "
                         "database's clock is %lld ms before it; nothing written", p->name,
                         job, (long long)p->fire_at_ms,
                         (long long)(p->fire_at_ms - r.info.db_now_ms));
    return sqle_fail(err, SQLEASE_NOT_DUE, "lease '%s': fire %s at %lld was not due by the "
                     "database's clock when the %s ran (it is now, by %lld ms: try again); "
                     "nothing written", p->name, job, (long long)p->fire_at_ms, what,
                     (long long)(r.info.db_now_ms - p->fire_at_ms));
}

/* ------------------------------------------------------------------ */
/* The calls                                                           */
/* ------------------------------------------------------------------ */

/* An insert of a fire's row under the claim's guards (the claim and the
 * record): one statement, then, only if it wrote nothing, the read that
 * says why. */
static int insert_row(const fire_call *k, const sqle_stmt *st, const char *sql,
                      const db_params *p, const char *what, sqlease_fire_info *seen,
                      sqlease_error *err)
{
    int64_t rows = -1;
    int rc = run(k, st, sql, 1, p, NULL, 0, NULL, &rows, err);

    if (rc == SQLEASE_OK)
        rc = one_or_none(k, what, rows, err);
    else if (lost_race(k, rc, err))
        rows = 0, rc = SQLEASE_OK;
    if (rc != SQLEASE_OK)
        return rc;
    if (rows == 1)
        return SQLEASE_OK;
    return why_not_written(k, p, what, seen, err);
}

int sqle_fire_claim(const sqle_fire_ctx *c, int64_t token, const char *job, int64_t fire_at_ms,
                    int64_t deadline, sqlease_fire_info *seen, sqlease_error *err)
{
    fire_call k;
    db_params p;
    int rc;

    sqle_err_clear(err);
    if (seen != NULL)
        memset(seen, 0, sizeof *seen);
    rc = call_begin(&k, c, NEED_HOLD | NEED_HOST, deadline, err);
    if (rc != SQLEASE_OK)
        return rc;
    if (check_job(job, err) != SQLEASE_OK || check_fire_at(fire_at_ms, err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    ctx_params(&k, &p);
    p.token = token;
    p.job = job;
    p.fire_at_ms = fire_at_ms;
    rc = insert_row(&k, &k.d->fire_claim, k.sql->claim, &p, "claim", seen, err);
    if (rc == SQLEASE_OK && seen != NULL)
        fill_written(&k, token, job, fire_at_ms, "running", 1, NULL, seen);
    return rc;
}

int sqle_fire_record(const sqle_fire_ctx *c, int64_t token, const char *job, int64_t fire_at_ms,
                     const char *state, const char *note, int64_t deadline,
                     sqlease_fire_info *seen, sqlease_error *err)
{
    static const char *const states[] = { "skipped", "missed", "abandoned" };
    fire_call k;
    db_params p;
    int rc;

    sqle_err_clear(err);
    if (seen != NULL)
        memset(seen, 0, sizeof *seen);
    rc = call_begin(&k, c, NEED_HOLD | NEED_HOST, deadline, err);
    if (rc != SQLEASE_OK)
        return rc;
    if (check_job(job, err) != SQLEASE_OK || check_fire_at(fire_at_ms, err) != SQLEASE_OK ||
        check_state(state, states, 3, err) != SQLEASE_OK || check_note(note, err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    ctx_params(&k, &p);
    p.token = token;
    p.job = job;
    p.fire_at_ms = fire_at_ms;
    p.state = state;
    p.note = note;
    rc = insert_row(&k, &k.d->fire_record, k.sql->record, &p, "record", seen, err);
    if (rc == SQLEASE_OK && seen != NULL)
        fill_written(&k, token, job, fire_at_ms, state, 1, note, seen);
    return rc;
}

int sqle_fire_reclaim(const sqle_fire_ctx *c, int64_t token, const char *job, int64_t fire_at_ms,
                      int attempt_seen, int64_t deadline, sqlease_fire_info *seen,
                      sqlease_error *err)
{
    fire_call k;
    db_params p;
    fire_row r;
    int64_t rows = -1;
    int exists = 0, held = 0;
    char said[1200], jobs[SQLE_SHOWN_MAX(SQLEASE_MAX_JOB)];
    int rc;

    sqle_err_clear(err);
    if (seen != NULL)
        memset(seen, 0, sizeof *seen);
    rc = call_begin(&k, c, NEED_HOLD | NEED_HOST, deadline, err);
    if (rc != SQLEASE_OK)
        return rc;
    if (check_job(job, err) != SQLEASE_OK || check_fire_at(fire_at_ms, err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    if (attempt_seen < 1)
        return sqle_fail(err, SQLEASE_EINVAL, "attempt %d: a fire's attempts start at 1",
                         attempt_seen);
    ctx_params(&k, &p);
    p.token = token;
    p.job = job;
    p.fire_at_ms = fire_at_ms;
    p.attempt = attempt_seen;
    rc = run(&k, &k.d->fire_reclaim, k.sql->reclaim, 1, &p, NULL, 0, NULL, &rows, err);
    if (rc == SQLEASE_OK)
        rc = one_or_none(&k, "rerun", rows, err);
    else if (lost_race(&k, rc, err))
        rows = 0, rc = SQLEASE_OK;
    if (rc != SQLEASE_OK)
        return rc;
    if (rows == 1) {
        if (seen != NULL)
            fill_written(&k, token, job, fire_at_ms, "running", attempt_seen + 1, NULL, seen);
        return SQLEASE_OK;
    }
    rc = read_fire(&k, &p, &r, &exists, &held, err);
    if (rc != SQLEASE_OK)
        return rc;
    sqle_show_text(job, jobs, sizeof jobs);
    if (!exists)
        return sqle_fail(err, SQLEASE_ENOROW, "lease '%s': fire %s at %lld has no row to rerun",
                         c->name, jobs, (long long)fire_at_ms);
    if (seen != NULL)
        *seen = r.info;
    if (!held)
        return sqle_fail(err, SQLEASE_NOT_HELD, "lease '%s': rerun of fire %s at %lld: the "
                         "hold with token %lld is gone; nothing written", c->name, jobs,
                         (long long)fire_at_ms, (long long)token);
    return sqle_fail(err, SQLEASE_CLAIMED, "lease '%s': fire %s at %lld is no longer abandoned "
                     "attempt %d: %s", c->name, jobs, (long long)fire_at_ms, attempt_seen,
                     row_said(&r.info, said, sizeof said));
}

/* Why an update of one claim's row (the end, fire_done) matched nothing:
 * the row as it is now, into *r (*exists 0 when the fire has none). */
static int read_now(const fire_call *k, const db_params *p, fire_row *r, int *exists,
                    sqlease_error *err)
{
    int held = 0;
    return read_fire(k, p, r, exists, &held, err);
}

int sqle_fire_end(const sqle_fire_ctx *c, int64_t token, const char *job, int64_t fire_at_ms,
                  int attempt, const char *state, int exit_status, const char *note,
                  int64_t deadline, sqlease_error *err)
{
    static const char *const states[] = { "done", "failed" };
    fire_call k;
    db_params p;
    fire_row r;
    int64_t rows = -1;
    int exists = 0;
    char said[1200], jobs[SQLE_SHOWN_MAX(SQLEASE_MAX_JOB)];
    int rc;

    sqle_err_clear(err);
    rc = call_begin(&k, c, 0, deadline, err);
    if (rc != SQLEASE_OK)
        return rc;
    if (check_job(job, err) != SQLEASE_OK || check_fire_at(fire_at_ms, err) != SQLEASE_OK ||
        check_state(state, states, 2, err) != SQLEASE_OK || check_note(note, err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    ctx_params(&k, &p);
    p.token = token;
    p.job = job;
    p.fire_at_ms = fire_at_ms;
    p.attempt = attempt;
    p.state = state;
    p.has_exit = exit_status != SQLEASE_FIRE_NO_EXIT;
    p.exit_status = p.has_exit ? exit_status : 0;
    p.note = note;
    rc = run(&k, &k.d->fire_end, k.sql->end, 0, &p, NULL, 0, NULL, &rows, err);
    if (rc == SQLEASE_OK)
        rc = one_or_none(&k, "end", rows, err);
    if (rc != SQLEASE_OK || rows == 1)
        return rc;
    rc = read_now(&k, &p, &r, &exists, err);
    if (rc != SQLEASE_OK)
        return rc;
    sqle_show_text(job, jobs, sizeof jobs);
    if (!exists)
        return sqle_fail(err, SQLEASE_ENOROW, "lease '%s': fire %s at %lld has no row; its end "
                         "is not recorded", c->name, jobs, (long long)fire_at_ms);
    return sqle_fail(err, SQLEASE_NOT_HELD, "lease '%s': fire %s at %lld is no longer the "
                     "running claim of token %lld, attempt %d (it is %s): its end is not "
                     "recorded", c->name, jobs, (long long)fire_at_ms, (long long)token, attempt,
                     row_said(&r.info, said, sizeof said));
}

int sqle_fire_abandon(const sqle_fire_ctx *c, int64_t token, int64_t *rows, int64_t deadline,
                      sqlease_error *err)
{
    fire_call k;
    db_params p;
    char note[SQLEASE_MAX_NOTE + 1];
    int64_t n = -1;
    int rc;

    sqle_err_clear(err);
    if (rows != NULL)
        *rows = 0;
    rc = call_begin(&k, c, NEED_HOLD, deadline, err);
    if (rc != SQLEASE_OK)
        return rc;
    snprintf(note, sizeof note, "its hold ended while it ran: the lease was taken with token %lld",
             (long long)token);
    ctx_params(&k, &p);
    p.token = token;
    p.note = note;
    rc = run(&k, &k.d->fire_abandon, k.sql->abandon, 1, &p, NULL, 0, NULL, &n, err);
    if (rc == SQLEASE_OK && rows != NULL)
        *rows = n > 0 ? n : 0;
    return rc;
}

int sqle_fire_last(const sqle_fire_ctx *c, int (*fn)(void *ud, const char *job,
                                                      int64_t last_fire_ms),
                   void *ud, int64_t deadline, sqlease_error *err)
{
    typedef struct last_row {
        char job[SQLEASE_MAX_JOB + 1];
        int64_t last;
    } last_row;
    fire_call k;
    db_params p;
    char after[SQLEASE_MAX_JOB + 1] = "";
    last_row *page = NULL;
    db_out *out = NULL;
    size_t i, n;
    int rc;

    sqle_err_clear(err);
    if (fn == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "fire ledger: fn is NULL");
    rc = call_begin(&k, c, 0, deadline, err);
    if (rc != SQLEASE_OK)
        return rc;
    page = calloc(FIRE_PAGE, sizeof *page);
    out = calloc(FIRE_PAGE * 2, sizeof *out);
    if (page == NULL || out == NULL) {
        rc = sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
        goto done;
    }
    ctx_params(&k, &p);
    for (;;) {
        p.job = after;
        memset(page, 0, FIRE_PAGE * sizeof *page);
        for (i = 0; i < FIRE_PAGE; i++) {
            db_out *o = out + 2 * i;
            memset(o, 0, 2 * sizeof *o);
            o[0].type = DB_TEXT;
            o[0].s = page[i].job;
            o[0].cap = sizeof page[i].job;
            o[1].type = DB_INT64;
            o[1].i = &page[i].last;
        }
        n = 0;
        rc = sqle_db_run_rows_by(c->db, deadline > 0 ? k.deadline : 0, &k.d->fire_last,
                                 k.sql->last, &p, out, 2, FIRE_PAGE, &n, err);
        rc = explain(&k, 0, rc, err);
        if (rc != SQLEASE_OK)
            goto done;
        for (i = 0; i < n; i++)
            if (fn(ud, out[2 * i].is_null ? "" : page[i].job,
                   out[2 * i + 1].is_null ? 0 : page[i].last) != 0)
                goto done;
        if (n < FIRE_PAGE)
            break;
        /* The next page starts after this one's last job; a statement
         * that did not move on would repeat it forever. */
        if (strcmp(page[n - 1].job, after) == 0) {
            rc = sqle_fail(err, SQLEASE_EDB, "fire ledger: the page of jobs after '%s' starts "
                           "with it again", after);
            goto done;
        }
        memcpy(after, page[n - 1].job, sizeof after);
    }
done:
    free(page);
    free(out);
    return rc;
}

int sqle_fire_read(const sqle_fire_ctx *c, const char *job, int64_t fire_at_ms,
                   sqlease_fire_info *out, int64_t *db_now_ms, int64_t deadline,
                   sqlease_error *err)
{
    fire_call k;
    db_params p;
    fire_row r;
    int exists = 0, held = 0;
    char jobs[SQLE_SHOWN_MAX(SQLEASE_MAX_JOB)];
    int rc;

    sqle_err_clear(err);
    if (out != NULL)
        memset(out, 0, sizeof *out);
    if (db_now_ms != NULL)
        *db_now_ms = 0;
    rc = call_begin(&k, c, 0, deadline, err);
    if (rc != SQLEASE_OK)
        return rc;
    if (check_job(job, err) != SQLEASE_OK || check_fire_at(fire_at_ms, err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    ctx_params(&k, &p);
    p.token = -1; /* no hold asked about: the read's "held" is 0 */
    p.job = job;
    p.fire_at_ms = fire_at_ms;
    rc = read_fire(&k, &p, &r, &exists, &held, err);
    if (rc != SQLEASE_OK)
        return rc;
    if (db_now_ms != NULL)
        *db_now_ms = r.info.db_now_ms;
    if (!exists)
        return sqle_fail(err, SQLEASE_ENOROW, "lease '%s': fire %s at %lld has no row", c->name,
                         sqle_show_text(job, jobs, sizeof jobs), (long long)fire_at_ms);
    if (out != NULL)
        *out = r.info;
    return SQLEASE_OK;
}

int sqle_fire_prune(const sqle_fire_ctx *c, int64_t since_ms, int64_t before_ms,
                    int64_t *deleted, int64_t deadline, sqlease_error *err)
{
    fire_call k;
    db_params p;
    int64_t n = -1;
    int rc;

    sqle_err_clear(err);
    if (deleted != NULL)
        *deleted = 0;
    rc = call_begin(&k, c, 0, deadline, err);
    if (rc != SQLEASE_OK)
        return rc;
    if (since_ms > before_ms)
        return sqle_fail(err, SQLEASE_EINVAL, "fire ledger: the window [%lld, %lld) ends "
                         "before it begins", (long long)since_ms, (long long)before_ms);
    ctx_params(&k, &p);
    p.since_ms = since_ms;
    p.before_ms = before_ms;
    rc = run(&k, &k.d->fire_prune, k.sql->prune, 0, &p, NULL, 0, NULL, &n, err);
    if (rc == SQLEASE_OK && deleted != NULL)
        *deleted = n > 0 ? n : 0;
    return rc;
}

int sqle_fire_done(const sqle_fire_ctx *c, int64_t token, const char *job, int64_t fire_at_ms,
                   const char *state, int exit_status, int64_t deadline, sqlease_error *err)
{
    static const char *const states[] = { "done", "failed" };
    fire_call k;
    db_params p;
    fire_row r;
    int64_t rows = -1;
    int exists = 0;
    char said[1200], jobs[SQLE_SHOWN_MAX(SQLEASE_MAX_JOB)];
    int rc;

    sqle_err_clear(err);
    rc = call_begin(&k, c, NEED_HOST, deadline, err);
    if (rc != SQLEASE_OK)
        return rc;
    if (check_job(job, err) != SQLEASE_OK || check_fire_at(fire_at_ms, err) != SQLEASE_OK ||
        check_state(state, states, 2, err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    ctx_params(&k, &p);
    p.token = token;
    p.job = job;
    p.fire_at_ms = fire_at_ms;
    p.state = state;
    p.has_exit = exit_status != SQLEASE_FIRE_NO_EXIT;
    p.exit_status = p.has_exit ? exit_status : 0;
    rc = run(&k, &k.d->fire_done, k.sql->done, 1, &p, NULL, 0, NULL, &rows, err);
    if (rc == SQLEASE_OK)
        rc = one_or_none(&k, "outcome", rows, err);
    else if (lost_race(&k, rc, err))
        rows = 0, rc = SQLEASE_OK;
    if (rc != SQLEASE_OK || rows == 1)
        return rc;
    /* Sent again (its first answer lost, say): the row is there already. */
    rc = read_now(&k, &p, &r, &exists, err);
    if (rc != SQLEASE_OK)
        return rc;
    sqle_show_text(job, jobs, sizeof jobs);
    if (exists && r.info.token == token)
        return SQLEASE_OK;
    if (exists)
        return sqle_fail(err, SQLEASE_CLAIMED, "lease '%s': fire %s at %lld has a row of "
                         "another hold: %s", c->name, jobs, (long long)fire_at_ms,
                         row_said(&r.info, said, sizeof said));
    return sqle_fail(err, SQLEASE_NOT_HELD, "lease '%s': the lease row no longer has the take "
                     "with token %lld of the fire at %lld (taken again since, or not that "
                     "take's fire): the outcome of fire %s is not recorded", c->name,
                     (long long)token, (long long)fire_at_ms, jobs);
}

/* ------------------------------------------------------------------ */
/* Listing                                                             */
/* ------------------------------------------------------------------ */

/* One row of a listing: the fire's key, then the columns every read has. */
static void list_cells(db_out *out, fire_row *r)
{
    memset(out, 0, 3 * sizeof *out);
    out[0].type = DB_TEXT;
    out[0].s = r->info.name;
    out[0].cap = sizeof r->info.name;
    out[1].type = DB_TEXT;
    out[1].s = r->info.job;
    out[1].cap = sizeof r->info.job;
    out[2].type = DB_INT64;
    out[2].i = &r->info.fire_at_ms;
    fire_cols(out + 3, r);
}

/*
 * Newest first, a window at a time: each statement reads the rows with
 * fire_at_ms in [since, hi) in order (fire_at_ms DESC, name, job), and
 * the next window ends just past the last fire_at_ms given, skipping the
 * rows of that instant already given (they come first, in the same
 * order).  A page that gives nothing new (more rows share one instant
 * than a page holds) is read again twice as large.
 */
int sqle_fire_list(sqlease_db *db, const char *fire_table, const char *name, const char *job,
                   int64_t since_ms, int64_t before_ms, size_t page, sqlease_fire_fn fn,
                   void *ud, sqlease_error *err)
{
    sqle_fire_ctx c;
    fire_call k;
    db_params p;
    fire_row *rows = NULL;
    db_out *out = NULL;
    int64_t hi = before_ms, boundary = 0;
    size_t given = 0, i, n; /* rows of the boundary instant given so far */
    int have_boundary = 0;
    int rc;

    sqle_err_clear(err);
    if (db == NULL || fn == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_fire_list: db and fn must not be NULL");
    if ((name != NULL && sqle_check_text("lease name", name, SQLEASE_MAX_NAME, 0, err) !=
                             SQLEASE_OK) ||
        (job != NULL && check_job(job, err) != SQLEASE_OK))
        return SQLEASE_EINVAL;
    memset(&c, 0, sizeof c);
    c.db = db;
    c.fire_table = fire_table;
    c.name = name != NULL ? name : SQLEASE_DEFAULT_NAME; /* bound as "" below */
    rc = call_begin(&k, &c, 0, 0, err);
    if (rc != SQLEASE_OK)
        return rc;
    if (page == 0)
        page = FIRE_PAGE;
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
        p.job = job != NULL ? job : "";
        p.since_ms = since_ms;
        p.before_ms = hi;
        n = 0;
        rc = sqle_db_run_rows_by(db, 0, &k.d->fire_list, k.sql->list, &p, out, LIST_COLUMNS,
                                 page, &n, err);
        rc = explain(&k, 0, rc, err);
        if (rc != SQLEASE_OK)
            goto done;
        for (i = 0; i < n; i++) {
            fire_row *r = &rows[i];
            db_out *o = out + i * LIST_COLUMNS;

            fire_finish(o + 3, r);
            if (o[0].is_null)
                r->info.name[0] = '\0';
            if (o[1].is_null)
                r->info.job[0] = '\0';
            if (o[2].is_null)
                r->info.fire_at_ms = 0;
            /* The boundary instant's rows given by an earlier window
             * come first in this one, in the same order. */
            if (have_boundary && r->info.fire_at_ms == boundary && skipped < prior) {
                skipped++;
                continue;
            }
            if (fn(ud, &r->info) != 0)
                goto done;
            if (have_boundary && r->info.fire_at_ms == boundary) {
                given++;
            } else {
                boundary = r->info.fire_at_ms;
                given = 1;
                have_boundary = 1;
            }
        }
        if (n < page)
            break;
        if (skipped == n) {
            /* Nothing new: more rows share one instant than a page holds. */
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

/* ------------------------------------------------------------------ */
/* The public calls: a supervisor's hold, the DSN's table               */
/* ------------------------------------------------------------------ */

/* The context of a supervisor's lease: its tables, name, owner id and
 * host are fixed at its start, and read without the engine's lock. */
static void sup_ctx(const sqlease_supervisor *s, sqle_fire_ctx *c)
{
    memset(c, 0, sizeof *c);
    c->db = s->db;
    c->lease_table = sqle_lease_table(s->lease);
    c->fire_table = s->fire_table;
    c->name = s->r.name;
    c->owner = s->r.owner;
    c->host = s->host;
}

/* The claim goes through the library's own full info, copied out as far
 * as the caller's reaches (see "Structs that grow"), whatever the answer. */
int sqlease_fire_claim_(sqlease_supervisor *s, const char *job, int64_t fire_at_ms,
                        sqlease_fire_info *info, size_t info_size, sqlease_error *err)
{
    sqlease_fire_info full;
    sqle_fire_ctx c;
    int64_t token;
    int running, rc;

    sqle_err_clear(err);
    memset(&full, 0, sizeof full);
    full.size = sizeof full;
    if (s == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_fire_claim: sup is NULL");
    if (info != NULL && info_size < sizeof(size_t))
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_fire_claim: info size %zu is too small",
                         info_size);
    sqle_engine_lock(s->e);
    running = s->running;
    token = s->token;
    sqle_engine_unlock(s->e);
    if (!running)
        rc = sqle_fail(err, SQLEASE_NOT_HELD, "lease '%s': the work is not running (not "
                       "holding the lease): no fire is claimed", s->r.name);
    else {
        sup_ctx(s, &c);
        rc = sqle_fire_claim(&c, token, job, fire_at_ms, 0, &full, err);
    }
    if (rc != SQLEASE_OK && rc != SQLEASE_CLAIMED) {
        memset(&full, 0, sizeof full);
        full.size = sizeof full;
    }
    if (info != NULL)
        sqle_struct_out(info, info_size, &full, sizeof full);
    return rc;
}

int sqlease_fire_end(sqlease_supervisor *s, const char *job, int64_t fire_at_ms, int attempt,
                     int ok, int exit_status, sqlease_error *err)
{
    sqle_fire_ctx c;
    int64_t token;
    int started;

    sqle_err_clear(err);
    if (s == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_fire_end: sup is NULL");
    sqle_engine_lock(s->e);
    started = s->started_any;
    token = s->token;
    sqle_engine_unlock(s->e);
    if (!started)
        return sqle_fail(err, SQLEASE_NOT_HELD, "lease '%s': this supervisor never held the "
                         "lease: it claimed no fire", s->r.name);
    sup_ctx(s, &c);
    return sqle_fire_end(&c, token, job, fire_at_ms, attempt, ok ? "done" : "failed",
                         exit_status, NULL, 0, err);
}

int sqlease_fire_list(sqlease_db *db, const char *fire_table, const char *name, const char *job,
                      int64_t since_ms, sqlease_fire_fn fn, void *userdata, sqlease_error *err)
{
    if (db != NULL && fire_table == NULL)
        fire_table = db->ini.fire_table;
    return sqle_fire_list(db, fire_table, name, job, since_ms, INT64_MAX, 0, fn, userdata, err);
}
