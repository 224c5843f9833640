/*
 * kinds.h -- which of the sqlite row's generated statements a text the
 * library sent is, and what it binds (kinds.c): the simulator's checks
 * judge a statement by what it is, not by what it happens to change.
 */
#ifndef SQLEASE_SIM_KINDS_H
#define SQLEASE_SIM_KINDS_H

#include <stddef.h>
#include <stdint.h>

#include "port.h"

typedef enum sim_kind {
    SK_OTHER = 0,      /* none of the dialect's statements */
    /* reads */
    SK_NOW, SK_STATUS, SK_STATUS_EACH, SK_LIST, SK_PROBE, SK_READY_LIST,
    /* a holder's */
    SK_RENEW, SK_RENEW_EACH, SK_RELEASE, SK_RELEASE_EACH,
    /* the hand-over's: a request and its withdrawal (scoped to the hold
     * they name), the holder's hand-over of its own hold */
    SK_HANDOFF_REQUEST, SK_HANDOFF_CANCEL, SK_HANDOFF,
    /* a follower's */
    SK_ACQUIRE, SK_TAKE_WATCHED, SK_TAKE_EACH,
    /* a follower's repair of a row with NULLs */
    SK_REPAIR,
    /* an operator's */
    SK_RELEASE_FORCE, SK_SEED, SK_SEED_EACH, SK_FILL_NULLS, SK_DDL,
    /* the fire ledger's (a scheduler's; fire_done is run --schedule's):
     * reads, then writes */
    SK_FIRE_LAST, SK_FIRE_READ, SK_FIRE_LIST,
    SK_FIRE_CLAIM, SK_FIRE_RECLAIM, SK_FIRE_END, SK_FIRE_RECORD, SK_FIRE_ABANDON,
    SK_FIRE_PRUNE, SK_FIRE_DONE,
    /* the holder history's: a read, then writes */
    SK_HOLD_LIST,
    SK_HOLD_START, SK_HOLD_START_EACH, SK_HOLD_EXPIRE, SK_HOLD_EXPIRE_EACH, SK_HOLD_END,
    SK_HOLD_END_EACH, SK_HOLD_FORCE, SK_HOLD_PRUNE,
    SK_COUNT
} sim_kind;

/* The table a kind writes: the lease table, the fire ledger, the holder
 * history (or none: a read, DDL, a text of none of them). */
typedef enum sim_table { ST_NONE = 0, ST_LEASE, ST_FIRE, ST_HOLD } sim_table;

/* One row a statement names: a hold (name, owner, token), a row as read
 * (name, token, version), or a name; NULL/has_* 0 for what it does not
 * bind. */
typedef struct sim_key {
    const char *name, *owner;
    int64_t token, version;
    int has_token, has_version;
    /* a fire's: its job and instant, and the attempt a statement is bound to */
    const char *job;
    int64_t fire_at_ms, attempt;
    int has_fire_at, has_attempt;
} sim_key;

/* A statement as kinds_parse read it.  keys point into the binds. */
typedef struct sim_stmt {
    sim_kind kind;
    size_t nkeys;
    sim_key *keys;        /* kinds.c's own buffer: valid until the next parse */
    int64_t ttl_ms;       /* its :ttl_ms, or -1 */
    const char *owner;    /* a batched take's one :owner, or NULL */
    const char *state;    /* its :state (a fire's, an end's), or NULL */
    int64_t ended_at_ms;  /* its :ended_at_ms, or -1 */
    int64_t since_ms, before_ms; /* its window, or -1 */
    const char *target;   /* a hand-over's or request's :target, or NULL */
} sim_stmt;

/* Learn the sqlite row's statements for `table`, the fire ledger
 * `fire_table` and the holder history `history_table`.  0, or -1 (no
 * memory). */
int kinds_init(const char *table, const char *fire_table, const char *history_table);
/* What `sql` with these binds is.  SK_OTHER for a text that is none of
 * them (keys then empty). */
void kinds_parse(const char *sql, const db_bind *binds, size_t nbinds, sim_stmt *out);
/* A short name per kind, as the summary counts them ("renew_each"). */
const char *kinds_name(sim_kind k);
/* Whether a kind only reads, and whether it is a holder's renew or a
 * follower's take (the statements that prove a hold). */
int kinds_reads(sim_kind k);
int kinds_proves(sim_kind k);
/* The table a kind writes. */
sim_table kinds_table(sim_kind k);
/* Whether the simulator sends this kind at all (fire_done is run
 * --schedule's, which it does not run): the summary counts only those. */
int kinds_simulated(sim_kind k);

/* The text of a statement of this kind with the first `from` replaced
 * by `to` (malloc'd), or NULL if this kind's text has no `from`: a
 * template's bug, planted into what the database runs. */
char *kinds_swap(const char *sql, const char *from, const char *to);

#endif
