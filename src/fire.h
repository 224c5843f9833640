/*
 * fire.h -- the fire ledger (fire.c): one row per scheduled fire of a job
 * under a lease, so that a fleet's scheduler runs each fire once.  What
 * the scheduler (and the public sqlease_fire_* calls) build on.
 *
 * Every call validates what it binds before it sends anything (a NULL,
 * empty, overlong or malformed job, name, owner, host or note, or a table
 * that is not an identifier, is SQLEASE_EINVAL with nothing sent), and
 * answers by `deadline` (a sqle_mono_ms value shared by every statement
 * of the call; 0: the handle's usual bound from now).  Thread-safe: they
 * share nothing but the handle, which is.
 */
#ifndef SQLEASE_FIRE_H
#define SQLEASE_FIRE_H

#include <stddef.h>
#include <stdint.h>

#include "sqlease.h"

/* What the fire statements of one lease bind.  The strings are the
 * caller's, read during a call only.  lease_table and fire_table: NULL
 * means SQLEASE_DEFAULT_TABLE and SQLEASE_DEFAULT_FIRE_TABLE (not the
 * DSN's settings: resolve those with the options); name: the lease name;
 * owner: the holder's owner id (the calls fenced by a hold); host: what
 * a claimed row records (the calls that write one). */
typedef struct sqle_fire_ctx {
    sqlease_db *db;
    const char *lease_table, *fire_table;
    const char *name, *owner, *host;
} sqle_fire_ctx;

/* Create the fire table `fire_table` if it is missing (NULL: the DSN's
 * SqleaseFireTable, else SQLEASE_DEFAULT_FIRE_TABLE).  Idempotent.  A
 * privilege the connection lacks is named, as sqlease_migrate names it.
 * Returns SQLEASE_OK, SQLEASE_EINVAL, or a connection or statement
 * status. */
int sqle_fire_migrate(sqlease_db *db, const char *fire_table, sqlease_error *err);

/*
 * Claim the fire (job, fire_at_ms) of lease c->name for the hold (c->owner,
 * token): one statement that inserts its row (state 'running', attempt 1,
 * c->owner, c->host, token, started_at_ms the database clock) only while
 * that hold of the lease row is live by the database's clock and that
 * clock has reached fire_at_ms, and only if the fire has no row.
 *  SQLEASE_OK        claimed: run it.  *seen (may be NULL) gets the row
 *                    as written, but started_at_ms (0: not read back).
 *  SQLEASE_CLAIMED   the fire has a row (claimed by this hold or another,
 *                    running, finished, skipped, abandoned...): *seen is
 *                    that row and the clock.  A 'running' row under a
 *                    token below this hold's is a run whose hold is gone
 *                    (a claim that raced the take of the lease):
 *                    sqle_fire_abandon marks it, sqle_fire_reclaim reruns.
 *  SQLEASE_NOT_HELD  the hold is not live (taken since, expired,
 *                    released): nothing written.
 *  SQLEASE_NOT_DUE   the hold is live but the fire was not due by the
 *                    database's clock when the claim ran: nothing written;
 *                    claim it again once it is (the message gives that
 *                    clock).
 * The last three cost one more statement (sqle_fire_read's), only then.
 * Or SQLEASE_EINVAL (fire_at_ms must be positive), SQLEASE_ENOTABLE, a
 * connection or statement status (not known either way).
 */
int sqle_fire_claim(const sqle_fire_ctx *c, int64_t token, const char *job, int64_t fire_at_ms,
                    int64_t deadline, sqlease_fire_info *seen, sqlease_error *err);

/* Rerun an abandoned fire, at least once: the row read as 'abandoned'
 * with attempt `attempt_seen` becomes 'running', attempt + 1, under the
 * hold (c->owner, token) and c->host, started now, with its end, exit,
 * duration and note cleared, while that hold is live.  SQLEASE_OK (run
 * it, as attempt attempt_seen + 1); else one read says why: SQLEASE_CLAIMED
 * (the row is no longer that abandoned attempt: another holder reran it;
 * *seen, may be NULL, gets it), SQLEASE_NOT_HELD, SQLEASE_ENOROW (the fire
 * has no row), or as sqle_fire_claim. */
int sqle_fire_reclaim(const sqle_fire_ctx *c, int64_t token, const char *job, int64_t fire_at_ms,
                      int attempt_seen, int64_t deadline, sqlease_fire_info *seen,
                      sqlease_error *err);

/* Record how the run of a claim ended: `state` "done" or "failed",
 * ended_at_ms and duration_ms from the database clock, exit_status
 * (SQLEASE_FIRE_NO_EXIT: none, NULL), note (NULL: none; at most
 * SQLEASE_MAX_NOTE bytes).  Matches the row of that claim (token,
 * attempt) only while it is 'running'.  Not fenced by the lease: a run
 * that lost its lease midway still records how it ended, unless a new
 * holder marked it abandoned.  One statement: SQLEASE_OK; else one read
 * says why: SQLEASE_NOT_HELD (the row is no longer that running claim:
 * abandoned, rerun, ended already), SQLEASE_ENOROW (no row). */
int sqle_fire_end(const sqle_fire_ctx *c, int64_t token, const char *job, int64_t fire_at_ms,
                  int attempt, const char *state, int exit_status, const char *note,
                  int64_t deadline, sqlease_error *err);

/* Record a fire that does not run: `state` "skipped", "missed" or
 * "abandoned", with `note` saying why (NULL: none), started and ended now,
 * under the claim's guards (the hold live, the fire due, no row yet).
 * Statuses as sqle_fire_claim's (*seen on SQLEASE_CLAIMED). */
int sqle_fire_record(const sqle_fire_ctx *c, int64_t token, const char *job, int64_t fire_at_ms,
                     const char *state, const char *note, int64_t deadline,
                     sqlease_fire_info *seen, sqlease_error *err);

/* A new holder (token) marks every 'running' row of its lease name
 * claimed under a lower token 'abandoned' (ended now, with a note naming
 * the token), while its own hold is live: the lease gives a token only
 * once every older hold's work has been stopped.  *rows (may be NULL)
 * gets how many; 0 also when the hold is not live (nothing is changed
 * then).  SQLEASE_OK or a failure. */
int sqle_fire_abandon(const sqle_fire_ctx *c, int64_t token, int64_t *rows, int64_t deadline,
                      sqlease_error *err);

/* Per job of lease c->name, in job order, the latest fire_at_ms the
 * ledger has (any state): fn(ud, job, last) for each, between statements
 * (pages of 100 jobs), on the caller's thread; a non-zero return stops.
 * SQLEASE_OK (all given, or stopped) or a failure. */
int sqle_fire_last(const sqle_fire_ctx *c, int (*fn)(void *ud, const char *job,
                                                      int64_t last_fire_ms),
                   void *ud, int64_t deadline, sqlease_error *err);

/* One fire's row, and the database clock (*db_now_ms, may be NULL, set
 * whether or not the row exists).  SQLEASE_OK with *out (may be NULL),
 * SQLEASE_ENOROW when the fire has none, or a failure.  c->owner may be
 * NULL. */
int sqle_fire_read(const sqle_fire_ctx *c, const char *job, int64_t fire_at_ms,
                   sqlease_fire_info *out, int64_t *db_now_ms, int64_t deadline,
                   sqlease_error *err);

/* Delete lease c->name's rows with fire_at_ms in [since_ms, before_ms),
 * but its running ones (their runs may still end) and each job's latest
 * (sqle_fire_last: where a new holder's catch-up starts, so a job that
 * fires less often than the keep period keeps its place): one DELETE,
 * so that a caller trims a long ledger window by window.  *deleted (may
 * be NULL) gets the count.  SQLEASE_OK, SQLEASE_EINVAL (since_ms >
 * before_ms), or a failure. */
int sqle_fire_prune(const sqle_fire_ctx *c, int64_t since_ms, int64_t before_ms,
                    int64_t *deleted, int64_t deadline, sqlease_error *err);

/* run --schedule's outcome row for the fire `fire_at_ms` that the take
 * with `token` claimed (sqle_lease_take_fire): `state` "done" or
 * "failed", started at the take (acquired_at_ms), ended and its duration
 * by the database clock, exit_status (SQLEASE_FIRE_NO_EXIT: none), owner
 * the hold's and c->host, fenced by the token and the fire (the lease row
 * still has them, released or not), not by the expiry.  One statement;
 * idempotent: a second call finds the row and answers SQLEASE_OK.  Else
 * one read: SQLEASE_CLAIMED (the fire has a row of another hold's),
 * SQLEASE_NOT_HELD (the lease row no longer has that token and fire). */
int sqle_fire_done(const sqle_fire_ctx *c, int64_t token, const char *job, int64_t fire_at_ms,
                   const char *state, int exit_status, int64_t deadline, sqlease_error *err);

/* The rows of the fire table `fire_table` (NULL: the default) of lease
 * `name` (NULL: every name) and `job` (NULL: every job) with fire_at_ms
 * in [since_ms, before_ms), newest first (then by name and job), to fn
 * between statements: each statement reads a window of at most `page`
 * rows (0: 100), the next the window before it.  As sqlease_fire_list
 * (which this is, with before_ms INT64_MAX and the DSN's table). */
int sqle_fire_list(sqlease_db *db, const char *fire_table, const char *name, const char *job,
                   int64_t since_ms, int64_t before_ms, size_t page, sqlease_fire_fn fn,
                   void *ud, sqlease_error *err);

#endif
