/*
 * lease.h -- what the supervisor needs from the lease beyond the public
 * calls: whether an acquire started a new hold, the counters, and the
 * fence of a given hold.
 */
#ifndef SQLEASE_LEASE_H
#define SQLEASE_LEASE_H

#include "sqlease.h"
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

/* sqlease_lease_release answering by `deadline` (sqle_mono_ms; 0: the
 * handle's usual bound from now), for a shutdown that has a budget. */
int sqle_lease_release_by(sqlease_lease *l, int64_t deadline, int *released, sqlease_error *err);

/* The same with a minimum hold of its own instead of the handle's: 0
 * frees the row at once (a hold whose work did not finish). */
int sqle_lease_release_for(sqlease_lease *l, int64_t deadline, int64_t min_hold_ms, int *released,
                           sqlease_error *err);

/* The handle's minimum hold in ms (0: none). */
int64_t sqle_lease_min_hold(const sqlease_lease *l);

/* Lease statements this handle has sent. */
uint64_t sqle_lease_statements(const sqlease_lease *l);

/* Make a lease from already-resolved options. */
int sqle_lease_new_resolved(sqlease_lease **out, sqlease_db *db, const sqle_resolved *r,
                            sqlease_error *err);

#endif
