/*
 * lease_impl.h -- the lease handle itself, and what the one-lease
 * statements (lease.c) share with the batched ones (lease_each.c): both
 * read and write the same hold, and read rows the same way.  Only those
 * two files include it; everything else sees the handle through lease.h
 * and sqlease.h.
 */
#ifndef SQLEASE_LEASE_IMPL_H
#define SQLEASE_LEASE_IMPL_H

#include "db.h"
#include "lease.h"
#include "history.h"

struct sqlease_lease {
    sqlease_db *db;
    const sqle_dialect *d;
    const char *table;  /* the handle's copy (sql->table) */
    char *name;
    char *owner;
    char *data;      /* what the take publishes; NULL: nothing */
    int64_t ttl_ms;
    int64_t min_hold_ms;  /* what sqlease_lease_release keeps the row for */
    int64_t retry_ms; /* between tries of sqlease_lease_acquire_wait */
    /* {table} already substituted: the handle's texts for this table,
     * shared by all its leases (sqle_db_table_sql). */
    const char *sql_acquire;
    const char *sql_take_watched;
    const char *sql_renew;
    const char *sql_release;
    const char *sql_release_force;
    const char *sql_repair;
    const char *sql_status;
    const char *sql_fence;
    const char *sql_take_fire;
    const char *sql_seed;
    const char *sql_handoff_request;
    const char *sql_handoff_cancel;
    const char *sql_handoff;
    const char *sql_ready_list;
    /* Token of the hold this handle believes it has (what it renews), or
     * -1. */
    int64_t held_token;
    /* Token of the hold this handle last proved, kept after a failed
     * renew or sqle_lease_forget, so that a release can still give that hold
     * up; -1 if it never held.  A release is scoped to it. */
    int64_t proven_token;
    /* A hold a renew found gone whose end ('lost') the history has still
     * to write, or -1: written by sqle_lease_history_flush once the
     * caller has acted on the loss (its on_stopped is not delayed by a
     * statement of the history). */
    int64_t hist_lost;
    /* The deadline (sqle_mono_ms) shared by every statement of the
     * call in progress: a public call answers within one bound, however
     * many statements it sends. */
    int64_t deadline;
    sqle_atomic_u64 statements;
    /* A waiting follower (a supervisor's, sqlease_lease_acquire_wait's)
     * takes a row some owner has only once it has also seen that row's
     * (owner, token, version) unchanged for a ttl, timed on its own
     * monotonic clock from the answer of the first read that showed it:
     * the holder's last renew was sent before that answer, so its work
     * has stopped by then (renew_deadline < ttl), whatever the database's
     * clock did meanwhile.  watch: 1 for such a follower; 0 for the
     * one-shot acquire, which cannot watch and asks the database's
     * expiry alone.  Guarded as the rest of the handle: one call at a
     * time. */
    int watch;
    int seen_valid;
    uint64_t seen_owner;  /* sqle_hash_text of the owner: (token, version)
                             alone tell one state of the row from another,
                             so the hash only adds a check, and spares 256
                             bytes per lease */
    int64_t seen_token, seen_version;
    int64_t seen_since; /* sqle_mono_ms of the first answer that showed it */
    int64_t seen_wait;  /* how long to watch it (ms): the ttl, or more for a
                           minimum hold's remainder */
    int64_t take_version; /* what a watched take binds as :version */
    /* A schedule whose fires the takes claim (sqlease_options.schedule),
     * or NULL; how late a fire may still be taken; and the fire the hold
     * this handle has claimed (0: none). */
    struct sqle_cron *schedule;
    int64_t late_limit_ms;
    int64_t held_fire_at;
    char *fire_table;     /* where a scheduled take records an abandoned fire */
    char *host;           /* NULL: this host's name */
    int64_t take_fire_at; /* what a take of a fire binds as :fire_at_ms,
                             during that call only */
    int clock_ref_valid;
    int64_t clock_ref;    /* database clock - sqle_mono_ms, largest seen (ms) */
    /* The holder history of this lease's holds (history.c): hist.sql
     * NULL when it is off.  Its strings point into the lease. */
    sqle_hist hist;
    /* The priority every take writes (sqlease_options.priority), an
     * int64_t in the atomic's bits: a supervisor may change it on another
     * thread than the one that makes the lease's calls
     * (sqle_lease_set_priority, which is never called by two threads at
     * once for one lease). */
    sqle_atomic_u64 priority;
    /* 1 (a supervisor's ready row, supervisor.c): a take that finds no
     * row seeds it first, as migrate would, instead of answering ENOROW;
     * set before the lease's first call. */
    int seed_missing;
    /* sqle_mono_ms until which this handle takes no row but one reserved
     * for it (0: none): a holder that has just handed over leaves the row
     * to the others first (sqle_lease_defer_takes).  The thread that makes
     * the lease's calls only. */
    int64_t defer_until;
};

/* A missing table said as a broken installation: which table, and what to
 * run.  Returns rc. */
int sqle_lease_explain(const sqlease_lease *l, int rc, sqlease_error *err);

#endif
