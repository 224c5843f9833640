/*
 * history.h -- the holder history (history.c): one row per hold of a
 * lease, written by the lease calls themselves (lease.c, lease_each.c)
 * next to the statements they send anyway, so that "who held the lease
 * at 03:02, and why did that end" has an answer.
 *
 * Nothing here decides anything about a hold: the hold is the lease
 * row's.  Every call below that writes is best effort: a statement that
 * fails is logged and skipped, and a missing history table is said once
 * per handle and then left alone for an hour.  They return nothing.
 */
#ifndef SQLEASE_HISTORY_H
#define SQLEASE_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "sqlease.h"
#include "db.h"

/* How a hold ended: the `ended` column's values (sqlease.h, "The holder
 * history").  Each is written by whoever knows it first, and an end
 * already written is never written over. */
typedef enum sqle_hold_end {
    SQLE_END_RELEASED = 1,   /* the holder released it */
    SQLE_END_EXPIRED = 2,    /* a later take found it expired (the taker writes) */
    SQLE_END_LOST = 3,       /* the holder's renew found it gone */
    SQLE_END_DEADLINE = 4,   /* the supervisor gave it up past its renew deadline */
    SQLE_END_FORCED = 5,     /* an operator's forced release */
    SQLE_END_HANDED_OVER = 6 /* the holder handed the lease to a successor */
} sqle_hold_end;

/* The stored word of an end ("released", ...); "" for another number. */
const char *sqle_hold_end_name(int how);

/* One lease's history: where its statements go and what they record of
 * the holder.  sql NULL: history off (the option, or out of memory). */
typedef struct sqle_hist {
    sqlease_db *db;
    sqle_hist_sql *sql;
    const char *name, *owner, *host;
    int64_t pid;
} sqle_hist;

/* A hold of the batched calls: a name, its holder's owner id and the
 * hold's token; ended_at_ms for the holds a take closes. */
typedef struct sqle_hist_hold {
    const char *name, *owner;
    int64_t token;
    int64_t ended_at_ms;
} sqle_hist_hold;

/* When the hold a take's read showed (`prev`) ended, for the taker to
 * write: its expiry as read, or the read's clock if that is earlier (a
 * row watched unchanged whose expiry is still ahead); 0 when the read
 * showed the row free (its holder ended the hold itself). */
int64_t sqle_hist_expired_at(const sqlease_lease_info *prev);

/* A take of h's lease gave the hold `token` (the read's + 1) after the
 * read `prev`: the new hold's row, and (when prev showed a holder) the end
 * of that hold, 'expired' at sqle_hist_expired_at(prev): one statement on
 * a dialect whose hold_start closes too, else two. */
void sqle_hist_taken(const sqle_hist *h, int64_t token, const sqlease_lease_info *prev,
                     int64_t deadline);

/* h's hold `token` ended `how` (sqle_hold_end), now. */
void sqle_hist_ended(const sqle_hist *h, int64_t token, int how, int64_t deadline);

/* Whether h records anything now (a history table, and not quiet after
 * finding it missing): a caller that must read to record skips the read
 * otherwise. */
int sqle_hist_on(const sqle_hist *h);

/* The lease row of h's name was just force-released, and `token` is the
 * hold a read found in it before: that hold ended 'forced', if the freed
 * row still keeps its token (not when another hold came and went
 * between: that one's end is its own).  token < 0: nothing. */
void sqle_hist_forced(const sqle_hist *h, int64_t token, int64_t deadline);

/* The batched forms, one statement per chunk, for holds of one handle,
 * lease table and history table (h gives those, the host and the pid;
 * its name and owner are not used): the rows of the holds a batched take
 * took, the 'expired' ends of the holds it took over (grouped by their
 * ended_at_ms, one statement per group and chunk), and the ends of holds
 * that ended `how`. */
void sqle_hist_taken_each(const sqle_hist *h, const sqle_hist_hold *took, size_t n,
                          const sqle_hist_hold *over, size_t nover, int64_t deadline);
void sqle_hist_ended_each(const sqle_hist *h, const sqle_hist_hold *holds, size_t n, int how,
                          int64_t deadline);

/* Delete h's name's ended holds that started in [since_ms, before_ms):
 * one DELETE.  *deleted (may be NULL) gets the count.  SQLEASE_OK, or the
 * statement's failure (also said in the log as every history failure),
 * SQLEASE_ENOTABLE included. */
int sqle_hist_prune(const sqle_hist *h, int64_t since_ms, int64_t before_ms, int64_t *deleted,
                    sqlease_error *err);

/* Create the history table (NULL: the DSN's SqleaseHistoryTable, else the
 * default); migrate.c. */
int sqle_history_migrate(sqlease_db *db, const char *history_table, sqlease_error *err);

/* sqlease_history_list with `page` rows per statement (0: 100) and the
 * window's end. */
int sqle_history_list(sqlease_db *db, const char *history_table, const char *name,
                      int64_t since_ms, int64_t before_ms, size_t page, sqlease_history_fn fn,
                      void *userdata, sqlease_error *err);

#endif
