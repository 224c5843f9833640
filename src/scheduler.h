/*
 * scheduler.h -- the scheduler: every fire of a list of jobs run once, by
 * whichever process of a fleet holds one lease (`sqlease cron`, and the
 * simulator, which runs this very code).
 *
 * A scheduler is a supervisor of one lease plus a thread.  While the
 * supervisor holds the lease (token T), the thread fires each job at its
 * times on the database's clock: it claims the fire in the ledger with
 * one statement fenced by the hold (fire.h: the row is inserted only
 * while the lease is held with T, only once the database's clock has
 * reached the fire, and only if the fire has no row yet), and only a
 * claim that answered "claimed" starts the work (on_fire).  When the
 * supervisor stops (the lease lost, its deadline passed, a shutdown) the
 * work of every fire it started is stopped (on_stop) before anything else
 * may start; the next holder, with a token above T, marks the fires still
 * "running" under an older token as abandoned (their holder's work was
 * stopped by its deadline, which the lease guarantees comes before a
 * newer token exists), then looks at what the ledger says ran last and
 * deals with the fires nobody claimed (missed) by each job's policy.
 *
 * One fire is started at most once, whatever the faults: its claim is
 * the row's insertion, which succeeds once.  In at-least-once mode an
 * abandoned fire is started once more per abandonment, by a reclaim that
 * succeeds once per attempt (fenced in the same way).
 *
 * Threads: the scheduler's own thread sends the claims and the records;
 * on_fire runs on it, with the scheduler's lock held, so that no fire
 * starts after the supervisor's on_stopped has begun; on_stop runs on the
 * supervisor's callback thread (or on the caller's, inside stop and
 * reload), without the lock.  sqle_sched_done may be called from any
 * thread, but never from on_fire.
 */
#ifndef SQLEASE_SCHEDULER_H
#define SQLEASE_SCHEDULER_H

#include <stddef.h>
#include <stdint.h>

#include "sqlease.h"

/* What a holder does with the fires nobody claimed while no process held
 * the lease (every host down, a holder that died before a fire). */
enum {
    SQLE_MISSED_ONCE = 0, /* run the latest once, record the others missed */
    SQLE_MISSED_SKIP = 1, /* run none, record them missed */
    SQLE_MISSED_ALL = 2   /* run each, oldest first */
};

/* What a holder does with a fire whose holder died while it ran. */
enum {
    SQLE_ABANDONED_AT_MOST_ONCE = 0, /* record it abandoned, do not run it again */
    SQLE_ABANDONED_AT_LEAST_ONCE = 1 /* run it again, attempt + 1 */
};

/* What a fire does when the previous run of its job still runs here. */
enum {
    SQLE_OVERLAP_FORBID = 0,  /* do not run it: record it skipped */
    SQLE_OVERLAP_ALLOW = 1,   /* run it beside the previous one */
    SQLE_OVERLAP_REPLACE = 2  /* stop the previous one, then run it */
};

/* Why on_stop was called. */
enum {
    SQLE_STOP_LEASE = 1,     /* the supervisor stopped the work: the lease
                                was lost, or its deadline passed */
    SQLE_STOP_REPLACED = 2,  /* a newer fire of the job replaces it */
    SQLE_STOP_SHUTDOWN = 3,  /* sqle_sched_stop */
    SQLE_STOP_HANDOFF = 4    /* the lease is being handed over (a stop with
                                sqlease_options.handoff, a request, a
                                follower of higher priority) */
};

/* Defaults of a job's limits. */
#define SQLE_SCHED_MAX_AGE_MS (24 * 3600 * INT64_C(1000))
#define SQLE_SCHED_MAX_ATTEMPTS 3
/* Missed fires recorded one by one per job and takeover, at most; older
 * ones are left unrecorded and counted in the note of the oldest. */
#define SQLE_SCHED_MISSED_ROWS 1000

/* One job, as the caller describes it (copied by sqle_sched_start). */
typedef struct sqle_job {
    const char *name;        /* 1..SQLEASE_MAX_JOB bytes, unique in the list */
    const char *schedule;    /* a cron expression, @macro or @every D (cronexpr.h) */
    const char *tz;          /* the zone of the expression; NULL or "": UTC */
    int missed;              /* SQLE_MISSED_* */
    int abandoned;           /* SQLE_ABANDONED_* */
    int overlap;             /* SQLE_OVERLAP_* */
    int64_t max_age_ms;      /* missed fires older than this are not run
                                (recorded missed); 0: SQLE_SCHED_MAX_AGE_MS */
    int max_attempts;        /* at-least-once: runs per fire at most; 0: default */
    void *userdata;          /* handed back in every sqle_fire of this job */
} sqle_job;

/* One fire, as the callbacks see it (valid during the call only). */
typedef struct sqle_fire {
    uint64_t id;             /* this run's id, for sqle_sched_done */
    const char *job;
    void *job_userdata;
    int64_t fire_at_ms;      /* its scheduled instant, database clock, epoch ms */
    int attempt;             /* 1, or more for a rerun of an abandoned fire */
    int64_t token;           /* the lease token it was claimed under */
    int catch_up;            /* 1: a missed or abandoned fire, run late */
} sqle_fire;

typedef struct sqle_sched_callbacks {
    void *userdata;
    /* Start the fire's work.  Called on the scheduler's thread with its
     * lock held: be quick (start a process, queue a task) and call no
     * sqle_sched_ function. */
    void (*on_fire)(void *ud, const sqle_fire *f);
    /* Stop the fire's work, and return only once it has stopped (the
     * supervisor's margin, ttl - renew_deadline, is what it has when the
     * lease is lost).  Its outcome is then reported with sqle_sched_done
     * as usual. */
    void (*on_stop)(void *ud, const sqle_fire *f, int reason);
    /* A line for the log (may be NULL): what was claimed, skipped,
     * missed, abandoned, and why a statement failed. */
    void (*on_log)(void *ud, int level, const char *line);
    /* The holder as this process sees it while it does not hold (may be
     * NULL): the supervisor's on_holder (sqlease.h), once per change of
     * holder or token, owner "" when free.  Called on the supervisor's
     * callback thread (or on the caller's, inside sqle_sched_start),
     * without the lock. */
    void (*on_holder)(void *ud, const char *owner, int64_t token);
} sqle_sched_callbacks;

typedef struct sqle_sched_stats {
    int holding;
    int64_t token;
    uint64_t claimed, reruns, skipped, missed, abandoned, lost_claims, failures;
    uint64_t running;
    int64_t last_fire_late_ms;   /* the last fire's start after its time */
    int64_t max_fire_late_ms;    /* the most since the scheduler held */
} sqle_sched_stats;

typedef struct sqle_sched sqle_sched;

/* Start a scheduler of `jobs` (n of them, copied) under the lease that
 * `opt` describes (its table, name, owner, timing; its callbacks are the
 * scheduler's own and ignored), with the ledger `fire_table` (NULL: the
 * default) and this `host`'s name in each row (NULL: the host name).
 * Rows older than keep_ms (0: 30 days) are deleted by the holder, a
 * window at a time.  Every expression is parsed first: a bad one fails
 * the start with SQLEASE_EINVAL naming the job and the column.  Returns
 * SQLEASE_OK, SQLEASE_EINVAL, SQLEASE_ENOMEM, SQLEASE_EPLATFORM, or the
 * supervisor's start status. */
int sqle_sched_start(sqle_sched **out, sqlease_db *db, const sqlease_options *opt,
                     const char *fire_table, const char *host, const sqle_job *jobs, size_t n,
                     int64_t keep_ms, const sqle_sched_callbacks *cb, sqlease_error *err);

/* The fire `id` ended (its process exited with `exit_status`; `failed`
 * when the status says it failed): its row records how.  Sends one
 * statement (the outcome), outside any lock.  Returns SQLEASE_OK,
 * SQLEASE_ENOROW (no such running fire), or the statement's status. */
int sqle_sched_done(sqle_sched *s, uint64_t id, int exit_status, int failed,
                    sqlease_error *err);

/* Replace the jobs (SIGHUP): a list that does not parse changes nothing
 * (SQLEASE_EINVAL naming the job and column).  Fires running go on; a
 * job that is gone fires no more; a new job fires from its next time. */
int sqle_sched_reload(sqle_sched *s, const sqle_job *jobs, size_t n, sqlease_error *err);

/* Stop: no fire starts any more, the work of every fire running is
 * stopped (on_stop, SQLE_STOP_SHUTDOWN, on this thread), the lease is
 * released.  Returns the supervisor's stop status. */
int sqle_sched_stop(sqle_sched *s, sqlease_error *err);

/* Stop (if not stopped) and free.  NULL is harmless. */
void sqle_sched_free(sqle_sched *s);

/* A snapshot of the counters.  Thread-safe. */
void sqle_sched_stats_get(sqle_sched *s, sqle_sched_stats *st);

/* The supervisor of the scheduler's lease (for its state, fence and
 * health), owned by the scheduler. */
sqlease_supervisor *sqle_sched_supervisor(sqle_sched *s);

#endif
