/*
 * lease.h -- what the supervisor needs from the lease beyond the public
 * calls: whether an acquire started a new hold, the counters, and the
 * fence of a given hold.
 */
#ifndef SQLEASE_LEASE_H
#define SQLEASE_LEASE_H

#include "sqlease.h"
#include "db.h"
#include "options.h"

/* Like sqlease_lease_acquire; *taken is 1 when the answer is a new hold
 * (a take, with a new token) rather than a renew of the hold it already
 * had.  *lost is 1 when the renew found the hold gone (0 rows): a loss
 * whatever the status, which is then the answer of the take attempted
 * after it in the same call (OK with *taken, NOT_HELD, or an error). */
int sqle_lease_acquire(sqlease_lease *l, sqlease_lease_info *info, int *taken, int *lost,
                       sqlease_error *err);

/* Forget the hold this handle believes it has (after the supervisor
 * stopped the work for it), so that the next acquire asks as a follower
 * (which never resumes a live hold).  Its token is kept for
 * sqlease_lease_release, which gives that hold up. */
void sqle_lease_forget(sqlease_lease *l);

/* Fill `f` (its size checked) with the fence of the hold with `token`:
 * the predicate, the values to bind, the name, owner and dialect, all
 * pointing into `l` or static storage. */
int sqle_lease_fence(sqlease_lease *l, int64_t token, sqlease_fence *f, sqlease_error *err);

/* Release the hold this handle last proved, as sqle_lease_release_for,
 * recording in the holder history that it ended `how` (sqle_hold_end,
 * history.h: SQLE_END_RELEASED for a release, SQLE_END_DEADLINE for the
 * supervisor's giving up of a hold whose work passed its deadline,
 * SQLE_END_HANDED_OVER for a hand-over).  The end is written only when
 * the release changed the row (else the hold had ended otherwise, and
 * whoever ended it writes that). */
int sqle_lease_release_as(sqlease_lease *l, int64_t deadline, int64_t min_hold_ms, int how,
                          int *released, sqlease_error *err);

/* The holder history of l's holds, for a statement of another file that
 * starts or ends one (a hand-over): the hold `token` ended `how`, now;
 * or the hold `token` began by a take after the read `prev` (whose hold,
 * if it had a holder, ended 'expired').  Best effort (history.h); on the
 * thread that makes l's calls, bounded by `deadline` (0: the handle's
 * usual bound from now). */
void sqle_lease_history_end(sqlease_lease *l, int64_t token, int how, int64_t deadline);
void sqle_lease_history_taken(sqlease_lease *l, int64_t token, const sqlease_lease_info *prev,
                              int64_t deadline);
/* The history's end of a hold that a renew of l's found gone ('lost'),
 * which sqle_lease_acquire leaves for after its caller has acted on the
 * loss; nothing when there is none.  sqle_lease_history_flush_each: of
 * the leases of a sqle_lease_renew_each, one statement per chunk.  On
 * the thread that makes l's calls. */
void sqle_lease_history_flush(sqlease_lease *l);
/* The renew that found l's hold gone was refused because the row carries
 * a request to hand that hold over (the read after it says so): the hold
 * is not lost, and the pending 'lost' is dropped; its end is the
 * hand-over's to record (or a release's, or the next taker's 'expired').
 * Before the flush, on the thread that makes l's calls. */
void sqle_lease_history_keep(sqlease_lease *l);
/* l's history (its sql NULL when off): the supervisor prunes with it. */
const struct sqle_hist *sqle_lease_hist(const sqlease_lease *l);

/* sqlease_lease_release answering by `deadline` (sqle_mono_ms; 0: the
 * handle's usual bound from now), for a shutdown that has a budget. */
int sqle_lease_release_by(sqlease_lease *l, int64_t deadline, int *released, sqlease_error *err);

/* The same with a minimum hold of its own instead of the handle's: 0
 * frees the row at once (a hold whose work did not finish). */
int sqle_lease_release_for(sqlease_lease *l, int64_t deadline, int64_t min_hold_ms, int *released,
                           sqlease_error *err);

/* The handle's minimum hold in ms (0: none). */
int64_t sqle_lease_min_hold(const sqlease_lease *l);

/* The status statement's columns: owner, token, acquired_at_ms,
 * expires_at_ms, the clock, data, version, ttl_ms, last_owner, fire_at_ms,
 * handoff_to, priority
 * (status_each and list read the name before them). */
#define SQLE_ROW_COLUMNS 12

/* Point out[0..SQLE_ROW_COLUMNS-1] at the fields of `info`. */
void sqle_lease_row_out(db_out *out, sqlease_lease_info *info);

/* After a row was fetched through sqle_lease_row_out: NULL text reads as
 * "", a clock that is not a positive time is an error (now_expr names it),
 * `held` says whether some owner holds an unexpired lease, and has_nulls
 * whether a column the library writes was NULL. */
int sqle_lease_row_finish(const db_out *out, sqlease_lease_info *info, const char *now_expr,
                          sqlease_error *err);

/*
 * run --schedule's take: the follower's take after `seen` (its read of
 * the row, sqlease_lease_status or sqle_lease_status_each), by the
 * database's expiry and bound to the token read, that also claims the
 * fire `fire_at_ms` for the new hold (templates/dialects.toml,
 * take_fire): the row's fire_at_ms must be before it, and becomes it.
 * Sends nothing when the read shows the fire (or a later one) claimed
 * already: SQLEASE_CLAIMED, `info` the row as read (the holder, or
 * last_owner once released, acquired_at_ms when it was taken), the
 * message naming who ran it and when.  A live hold: SQLEASE_NOT_HELD
 * with the holder.  A row with NULLs is repaired and read again first,
 * as acquire does.  Taken: SQLEASE_OK, *taken 1, the lease holds token
 * seen->token + 1 (renew and release it as after sqlease_lease_acquire),
 * `info` the new hold with fire_at_ms.  A take that another beat (0
 * rows): one more read says who, SQLEASE_CLAIMED if the winner claimed
 * this fire, else SQLEASE_NOT_HELD.  fire_at_ms must be positive.  Not
 * thread-safe for one lease, as every lease call.
 */
/* The fire the hold this handle took claimed (its schedule's), 0 none.
 * The calling thread must be the one that makes the lease's calls. */
int64_t sqle_lease_held_fire(const sqlease_lease *l);

int sqle_lease_take_fire(sqlease_lease *l, const sqlease_lease_info *seen, int64_t fire_at_ms,
                         sqlease_lease_info *info, int *taken, sqlease_error *err);

/* ---- the hand-over (lease.c; see "Handing the lease over" in sqlease.h
 * and templates/dialects.toml) ---------------------------------------- */

/* The priority the lease's takes write, and a change of it: thread-safe
 * to read; one thread at a time may set it. */
int64_t sqle_lease_priority(const sqlease_lease *l);
void sqle_lease_set_priority(sqlease_lease *l, int64_t priority);

/* Make a take that finds no row seed it first (a ready row of the
 * lease's supervisor).  Before the lease's first call. */
void sqle_lease_set_seed_missing(sqlease_lease *l, int on);
int sqle_lease_seeds(const sqlease_lease *l);

/* 1 if `row` (a read of l's row) is reserved by a hand-over for an owner
 * other than l's, and the database's clock has not passed it: no take of
 * l's can match it yet. */
int sqle_lease_reserved_for_other(const sqlease_lease *l, const sqlease_lease_info *row);

/* Take no row but one reserved for l until sqle_mono_ms `until` (a
 * holder that has just handed over leaves the row to the other
 * followers, should its target not take it).  The thread that makes l's
 * calls only. */
void sqle_lease_defer_takes(sqlease_lease *l, int64_t until);

/* A lease name's key in its ready rows' names is the name itself up to
 * this many bytes (else a hash): "~ready/" + key + "/" + 16 hex digits
 * fits SQLEASE_MAX_NAME. */
#define SQLE_READY_KEY_MAX 40

/* "~ready/<key>/" of lease `name` into buf (cap >= SQLEASE_MAX_NAME + 1). */
void sqle_ready_prefix(const char *name, char *buf, size_t cap);

/* One live ready row: its owner id, the priority it publishes and how
 * long ago (database clock) it was last renewed, -1 unknown. */
typedef struct sqle_ready {
    char owner[SQLEASE_MAX_OWNER + 1];
    int64_t priority;
    int64_t seen_ago_ms;
} sqle_ready;

/* Read l's lease's ready rows (one statement by `deadline`, sqle_mono_ms;
 * 0: the handle's usual bound): the live ones, best first (the highest
 * priority, then the one seen most recently), at most cap into out, *n
 * how many.  Uses only what is fixed in l and the deadline it sets: the
 * thread that makes l's calls, or one that owns it while they are not
 * made. */
int sqle_lease_ready_read(sqlease_lease *l, int64_t deadline, sqle_ready *out, size_t cap,
                          size_t *n, sqlease_error *err);

/* A free ready row of l's lease (one its follower left when it stopped),
 * chosen at random from `seed`: *found 1 with its name in name, or 0.
 * Thread rules as sqle_lease_ready_read. */
int sqle_lease_ready_free(sqlease_lease *l, int64_t deadline, unsigned seed, char *name,
                          size_t cap, int *found, sqlease_error *err);

/* The best ready follower but `exclude` (may be NULL): *found 1 with its
 * owner id in owner, or 0. */
int sqle_lease_ready_best(sqlease_lease *l, const char *exclude, int64_t deadline, char *owner,
                          size_t cap, int *found, sqlease_error *err);

/* Ask the live hold (holder, token) of l's row, with no request yet, to
 * hand over to `target` ("*": its best ready follower): one statement;
 * *done 1 if it was written.  min_hold_ms > 0 (a preemption's
 * preempt_after): only a hold that has lasted that long by the database's
 * clock; 0 (an operator's or the holder's own request): any.  Thread
 * rules as sqle_lease_ready_read. */
int sqle_lease_request(sqlease_lease *l, const char *holder, int64_t token, const char *target,
                       int64_t min_hold_ms, int64_t deadline, int *done, sqlease_error *err);

/* The hand-over of the hold l last proved, once its work has stopped, to
 * `target`, or ("*" or "") to the best ready follower but l's owner (a
 * release when there is none).  `resolved` (cap bytes) gets the owner id
 * it was handed to, "" for a release; *handed 1 if the row was changed
 * (0: the hold was gone already).  Forgets the hold either way.  The end
 * of a hold by a hand-over. */
int sqle_lease_handoff(sqlease_lease *l, const char *target, int64_t reserve_ms,
                       int64_t deadline, char *resolved, size_t cap, int *handed,
                       sqlease_error *err);

/* Lease statements this handle has sent. */
uint64_t sqle_lease_statements(const sqlease_lease *l);

/* Make a lease from already-resolved options. */
int sqle_lease_new_resolved(sqlease_lease **out, sqlease_db *db, const sqle_resolved *r,
                            sqlease_error *err);

/*
 * Batched statements (lease_each.c): many leases of one sqlease_db and one
 * table answered by one statement per chunk instead of one each.  The
 * supervisor's tick runner gathers the renews that are due (and the
 * followers' reads) of all its supervisors into these.
 */

/*
 * The text and the bound values of batched statement `st` for the items
 * ps[0..n-1] (n >= 1), padded to `padded` items with the last one; the
 * head and the tail bind from ps[0].  *sql (malloc'd, {table} replaced by
 * `table`) and *binds (malloc'd; text values point into ps) are the
 * caller's to free.  Returns SQLEASE_OK, SQLEASE_ENOMEM or SQLEASE_EINVAL
 * (a parameter the binder does not know).
 */
int sqle_each_build(const sqle_each_stmt *st, const char *table, const db_params *ps, size_t n,
                    size_t padded, char **sql, db_bind **binds, size_t *nbinds,
                    sqlease_error *err);
/* The same for a statement that also names {history_table}. */
int sqle_each_build_in(const sqle_each_stmt *st, const char *table, const char *history_table,
                       const db_params *ps, size_t n, size_t padded, char **sql,
                       db_bind **binds, size_t *nbinds, sqlease_error *err);

/* How many items one statement of `st` carries at most in dialect d:
 * batch_max, or `max` when smaller (0: no limit of the caller's), and
 * never more than max_params allows. */
size_t sqle_each_chunk_max(const sqle_dialect *d, const sqle_each_stmt *st, size_t max);

/* The items a chunk of k is sent as: the next power of two, at most
 * max (so that a connection prepares few distinct texts). */
size_t sqle_each_padded(size_t k, size_t max);

/* One lease's part in a batched statement. */
typedef struct sqle_each {
    sqlease_lease *lease;      /* in: one db and one table for the whole
                                  array (renew: also one ttl) */
    int rc;                    /* out: this lease's answer */
    sqlease_lease_info info;   /* out (status_each): the row, as
                                  sqlease_lease_status fills it; in
                                  (take_each): the read that showed the
                                  row free; out: the new hold or the row */
    int hit;                   /* out: take_each: taken; release_each:
                                  released (a row was changed) */
} sqle_each;

/* Renew the hold of every lease in each[0..n-1] (each has a held token:
 * it renews what sqle_lease_acquire would), answering by `deadline`
 * (sqle_mono_ms; 0: the db's usual bound from now).  Each lease's outcome
 * is exact: rc SQLEASE_OK (renewed: the token is unchanged) or
 * SQLEASE_NOT_HELD (the hold is gone: the lease forgets its held token,
 * as a renew that matched 0 rows does in sqle_lease_acquire).  When a
 * statement fails, every lease it (or a later, unsent chunk) carried gets
 * that status: not known either way, an error, not a loss.  Returns
 * SQLEASE_OK when every statement answered, else the first failure (err
 * filled). */
int sqle_lease_renew_each(sqle_each *each, size_t n, int64_t deadline, sqlease_error *err);
void sqle_lease_history_flush_each(sqle_each *each, size_t n);

/* Read the rows of every lease in each[0..n-1] with the database clock,
 * one statement per chunk: each info as sqlease_lease_status gives it
 * (held, mine), rc SQLEASE_OK, or SQLEASE_ENOROW for a name with no row.
 * Failures as in sqle_lease_renew_each. */
int sqle_lease_status_each(sqle_each *each, size_t n, int64_t deadline, sqlease_error *err);

/* The follower's take after a read (`seen`, from sqle_lease_status_each)
 * showed the row free or expired: the take UPDATE bound to the token it
 * saw, as sqle_lease_acquire's follower branch sends after its own read.
 * OK with *taken = 1 and `info` describing the new hold; SQLEASE_NOT_HELD
 * when another take won in between (or the read showed a live hold); or
 * an error. */
/* Whether a follower that has just read `row` (its own read or a
 * status_each answer) should send the take: 1 for a free row, or one
 * expired by the database's clock (and, when it watches, seen unchanged
 * for a ttl), else 0.  Records what it saw for the watch (lease_impl.h).
 * Same thread rules as the lease's other calls. */
int sqle_lease_wants_take(sqlease_lease *l, const sqlease_lease_info *row);

/* Make `l` a waiting follower that watches (on) or one that takes by the
 * database's expiry (off, a new lease's default); forgets what it saw. */
void sqle_lease_set_watch(sqlease_lease *l, int on);

/* A row as another read of it first showed it (the group's, group.c):
 * its owner's sqle_hash_text, token, version, expiry and database clock,
 * `since`, the sqle_mono_ms at which that read's answer was in hand, and
 * the holder's ttl as the row gives it (0: not written). */
typedef struct sqle_watch_seed {
    int valid;
    uint64_t owner_hash;
    int64_t token, version, expires_at_ms, db_now_ms, since;
    int64_t ttl_ms;
} sqle_watch_seed;

/* How long a watching follower of `l` waits, unchanged, before it takes
 * a row whose holder wrote `row_ttl_ms` (sqlease_lease_info.ttl_ms): the
 * holder's ttl, or l's own when the row has none (0).  Every wait that
 * protects a holder is the holder's own. */
int64_t sqle_lease_holder_ttl(const sqlease_lease *l, int64_t row_ttl_ms);

/* Begin a watching follower's watch from `seed` (see lease_impl.h).  Does
 * nothing if `l` does not watch or the seed is not valid.  For a lease no
 * call is using yet (before its first poll). */
void sqle_lease_seed_watch(sqlease_lease *l, const sqle_watch_seed *seed);

int sqle_lease_take_seen(sqlease_lease *l, const sqlease_lease_info *seen, int64_t deadline,
                         sqlease_lease_info *info, int *taken, sqlease_error *err);

/* Whether the take that `row` (a read sqle_lease_wants_take has just
 * answered 1 for) calls for may go in a batched take bound to the row's
 * token and version: 1 for a row read free (owner ""), or one whose
 * watch has run on exactly its owner, token and version; 0 for a row
 * only the database's clock calls expired (a lease that does not watch:
 * acquire's per-lease take).  Sends nothing, changes nothing. */
int sqle_lease_take_bound(const sqlease_lease *l, const sqlease_lease_info *row);

/*
 * The take of many rows, each as its read saw it: each[i].info is the
 * read (sqle_lease_status_each) of lease i's row, which showed it free or
 * one sqle_lease_take_bound accepts, and the take is bound to the token
 * and version it saw (take_watched's rule: a row written since matches
 * nothing).  Every lease must share the handle, table, ttl, owner and
 * data (bound once); a lease whose read sqle_lease_take_bound refuses,
 * that holds already, or whose name an earlier lease of the batch has, is
 * not sent (rc SQLEASE_NOT_HELD, hit 0).  Each lease's answer is
 * its own: rc SQLEASE_OK with hit 1 (taken: held token = the read's + 1,
 * info the new hold), rc SQLEASE_NOT_HELD (another take won: a miss for
 * this lease alone; on a dialect that only counts, a shortfall that the
 * read after it cannot attribute exactly is a miss for every lease of
 * the chunk: the rows it did take stay held, unused, until they expire),
 * or a statement's failure (not known either way).  Returns SQLEASE_OK
 * when every statement answered, SQLEASE_EINVAL (a mixed batch),
 * SQLEASE_EDIALECT, SQLEASE_ENOMEM, or the first failure.
 */
int sqle_lease_take_each(sqle_each *each, size_t n, int64_t deadline, sqlease_error *err);

/* Order of leases whose takes can share one statement: table, ttl,
 * owner, data, priority (what sqle_lease_take_each binds once); 0 when
 * they can. */
int sqle_lease_cmp_take(const sqlease_lease *x, const sqlease_lease *y);

/* sqle_lease_take_each over leases of one handle and table whose ttl,
 * owner or data may differ: one batch per run of equal ones (the
 * statuses and answers of sqle_lease_take_each, each[] in its order;
 * returns the first failure). */
int sqle_lease_take_each_mixed(sqle_each *each, size_t n, int64_t deadline,
                               sqlease_error *err);

/*
 * Release the hold each lease last proved, one statement per chunk, with
 * minimum hold `min_hold_ms` (0: free the rows at once) for all of them:
 * sqle_lease_release_for for many leases of one handle and table.  Every
 * lease forgets its held token; one that never held sends nothing (rc
 * OK, hit 0).  rc SQLEASE_OK with hit 1 when its row was changed (freed,
 * or kept to the minimum hold), hit 0 when its hold was already gone; or
 * the statement's failure.  Returns as sqle_lease_take_each.
 */
int sqle_lease_release_each(sqle_each *each, size_t n, int64_t deadline, int64_t min_hold_ms,
                            sqlease_error *err);

/* The same four with chunks of at most `max` leases (0: the dialect's
 * batch_max), so that tests can split a batch without a thousand rows. */
int sqle_lease_renew_each_max(sqle_each *each, size_t n, int64_t deadline, size_t max,
                              sqlease_error *err);
int sqle_lease_status_each_max(sqle_each *each, size_t n, int64_t deadline, size_t max,
                               sqlease_error *err);
int sqle_lease_take_each_max(sqle_each *each, size_t n, int64_t deadline, size_t max,
                             sqlease_error *err);
int sqle_lease_release_each_max(sqle_each *each, size_t n, int64_t deadline, int64_t min_hold_ms,
                                size_t max, sqlease_error *err);

/* What groups leases into one batch: the table (validated identifier)
 * and the ttl in ms. */
const char *sqle_lease_table(const sqlease_lease *l);
int64_t sqle_lease_ttl(const sqlease_lease *l);
/* What its take publishes (NULL: nothing): a batched take binds it once. */
const char *sqle_lease_data(const sqlease_lease *l);

#endif
