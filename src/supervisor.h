/*
 * supervisor.h -- what supervisor.c (the state machine and the public
 * calls) and engine.c (the threads every supervisor of one sqlease_db
 * shares) both see.
 *
 * A process may run thousands of supervisors.  They do not get threads of
 * their own: each sqlease_db that has supervisors gets one engine, whose
 * threads serve all of them --
 *
 *   the runner    sends their statements: gathers the renews that are due
 *                 (or nearly: a renew may be early, never late) into one
 *                 batched statement per table and ttl, the followers'
 *                 polls into one batched read per table, and the few
 *                 single statements (a take, a release);
 *   the watchdog  stops the work of every holder whose last proof is
 *                 renew_deadline old, and shares no blocking call with the
 *                 runner, so a statement that hangs in the driver cannot
 *                 keep any work running past its deadline;
 *   callbacks     run on a small pool: a supervisor's callbacks are queued
 *                 and run one at a time in order, so on_started and
 *                 on_stopped strictly alternate.  When callbacks have
 *                 waited POOL_STALL_MS with every pool thread inside a
 *                 callback, the watchdog starts a thread for each waiting
 *                 supervisor, so a slow on_stopped of one lease delays
 *                 another lease's stop by at most that, while a burst of
 *                 quick callbacks (a thousand deadline stops at once) is
 *                 served by the threads there are.  Threads beyond the
 *                 first leave after a second idle.
 *
 * So a process has, per sqlease_db with supervisors: the db's statement
 * worker (db.c), a runner, a watchdog and one callback thread, plus one
 * more per callback running at the same moment beyond the first.
 *
 * Locks, in the only order they are ever taken (a thread holding one may
 * take those after it, never those before):
 *
 *   1. sqlease_supervisor.stop_lock   one sqlease_supervisor_stop at a time
 *   2. sqlease_db.m                   db->engine, the engine's users count
 *   3. sqle_engine.m                  everything of the engine and of each
 *                                     supervisor's schedule and state
 *
 * No statement is sent and no callback is called while engine.m is held:
 * statements may hang until their deadline and callbacks may take their
 * margin, and neither may block the other threads.  Debug builds assert
 * that engine.m is held where a function needs it (ENGINE_HELD).
 */
#ifndef SQLEASE_SUPERVISOR_H
#define SQLEASE_SUPERVISOR_H

#include <assert.h>
#include <stdint.h>

#include "sqlease.h"
#include "internal.h"
#include "options.h"
#include "platform.h"

/* The supervisor's states (supervisor.c, step()). */
enum sup_state {
    SUP_NEW,       /* inside sqlease_supervisor_start, before its first answer:
                      the runner leaves it alone */
    SUP_FOLLOWER,  /* not holding: polls every retry */
    SUP_HOLDER,    /* holding: the work was started (or its on_started is
                      queued), renews every heartbeat */
    SUP_STALE,     /* the work was stopped at its deadline while the row may
                      still be that hold: release it (scoped to its token)
                      once on_stopped has returned, before any take */
    SUP_STOPPED    /* sqlease_supervisor_stop began: nothing more is sent
                      by the runner and nothing more starts */
};

/* What happened to a supervisor: the inputs of step(). */
enum sup_event {
    EV_TAKEN,      /* a take answered 1 row: a new hold (token, proof) */
    EV_RENEWED,    /* the renew answered 1 row (proof) */
    EV_LOST,       /* the renew answered 0 rows: the hold is gone */
    EV_NOT_HELD,   /* a follower's poll: someone else holds it (row) */
    EV_FAILED,     /* a statement failed: not known either way */
    EV_DEADLINE,   /* the watchdog: proof + renew_deadline has passed */
    EV_RELEASED,   /* the stale hold was released (or was no longer the row's) */
    EV_SHUTDOWN    /* sqlease_supervisor_stop */
};

/* A queued callback. */
enum cb_kind { CB_STARTED, CB_STOPPED, CB_HOLDER };

typedef struct sup_cb {
    struct sup_cb *next;
    int kind;
    int64_t token;                   /* CB_STARTED, CB_HOLDER */
    int reason;                      /* CB_STOPPED */
    char owner[SQLEASE_MAX_OWNER + 1]; /* CB_HOLDER; "" free */
    char *data;                      /* CB_HOLDER; NULL none (owned) */
} sup_cb;

typedef struct sqle_engine sqle_engine;

struct sqlease_supervisor {
    /* Fixed after start. */
    sqlease_db *db;
    sqle_engine *e;
    sqlease_lease *lease;
    sqle_resolved r;
    void (*on_started)(void *, int64_t);
    void (*on_stopped)(void *, int);
    void (*on_holder)(void *, const char *, int64_t, const char *);
    void *userdata;
    sqlease_log_fn log;
    void *log_userdata;
    int log_level;
    sqle_mutex stop_lock;

    /* Guarded by e->m. */
    struct sqlease_supervisor *next, *prev;   /* the engine's list */
    enum sup_state state;
    int running;             /* on_started queued, on_stopped not yet */
    int work_up;             /* running, and on_started has returned */
    int busy;                /* the runner has a statement of it in flight */
    int stopped;             /* stop finished; stop_rc is its answer */
    int stop_rc;
    int started_any;         /* on_started was queued at least once */
    int64_t token;           /* of the current or last hold started */
    int64_t deadline;        /* mono ms: stop the work; while running */
    int64_t next_due;        /* mono ms of the next statement */
    int64_t last_contact;    /* mono ms of the last answer, -1 none */
    int64_t started_at;
    uint64_t acquires, takes, renew_failures, losses;

    /* Callback queue (guarded by e->m): events in order; in_cb is set
     * while a thread runs them (a pool thread, or the caller inside start
     * or stop); ready_next links it into the engine's ready list. */
    sup_cb *cbq_head, *cbq_tail;
    int in_cb, on_ready;
    int drop_stop;           /* a start was dropped undelivered (it waited
                                past its hold): drop the stop that ends it */
    struct sqlease_supervisor *ready_next;
    uint64_t cb_thread;      /* thread inside a callback now, 0 none */

    /* The holder last reported to on_holder (guarded by e->m). */
    int holder_reported;
    char holder_owner[SQLEASE_MAX_OWNER + 1];
    int64_t holder_token;
};

struct sqle_engine {
    sqlease_db *db;
    /* The clock the state machine reads (sqle_mono_ms; a test's own, to
     * drive sqle_sup_step through deadlines without waiting for them). */
    int64_t (*now_ms)(void);
    sqle_mutex m;
#ifndef NDEBUG
    uint64_t m_owner;        /* thread holding m, for ENGINE_HELD */
#endif
    sqle_cond run_cv;        /* wakes the runner */
    sqle_cond wd_cv;         /* wakes the watchdog */
    sqle_cond cb_cv;         /* wakes an idle pool thread */
    sqle_cond change_cv;     /* stop, await: a supervisor's state moved */
    sqlease_supervisor *head;    /* every registered supervisor */
    size_t count;
    sqlease_supervisor *ready_head, *ready_tail; /* callbacks waiting */
    size_t ready_count;
    int64_t ready_since;     /* mono ms the pool last took from a non-empty
                                ready list (or it became non-empty); 0: empty */
    int cb_threads, cb_idle; /* pool threads alive; waiting for work */
    int cb_woken;            /* idle ones signalled, not yet awake */
    int closing;
    int users;               /* supervisors that hold the engine (db->m) */
    sqle_thread runner, watchdog;
    int runner_up, watchdog_up;
};

void sqle_engine_lock(sqle_engine *e);
void sqle_engine_unlock(sqle_engine *e);
/* Wait on cv (one of e's) until `until` (mono ms, -1: no bound); every
 * wait on e->m goes through here, so that ENGINE_HELD stays true. */
void sqle_engine_wait(sqle_engine *e, sqle_cond *cv, int64_t until);
/* How long queued callbacks may wait while every pool thread is busy
 * before the pool grows (engine.c). */
#define POOL_STALL_MS 50

#ifndef NDEBUG
#define ENGINE_HELD(e) assert((e)->m_owner == sqle_thread_self())
#else
#define ENGINE_HELD(e) ((void)0)
#endif

/* Get db's engine, starting it for the first supervisor (db->m). */
int sqle_engine_acquire(sqlease_db *db, sqle_engine **out, sqlease_error *err);
/* Let go of it; the last user stops its threads and frees it. */
void sqle_engine_release(sqle_engine *e);
/* Add or remove a supervisor (takes e->m). */
void sqle_engine_add(sqle_engine *e, sqlease_supervisor *s);
void sqle_engine_remove(sqle_engine *e, sqlease_supervisor *s);

/* Queue a callback for s and see that a thread runs it (e->m held). */
void sqle_engine_queue_cb(sqle_engine *e, sqlease_supervisor *s, sup_cb *cb);
/* Run s's queued callbacks on this thread, if no other thread is (e->m
 * held; released around each callback).  Returns 1 if it ran them. */
int sqle_engine_run_cbs(sqle_engine *e, sqlease_supervisor *s);

/* A line step() wants logged, written once e->m is let go (the caller's
 * log function may call back into the library). */
typedef struct sup_note {
    int set;                 /* 0: nothing to log */
    int level;               /* SQLEASE_LOG_* */
    char msg[320];
} sup_note;

/* The state machine (supervisor.c): apply ev to s, e->m held.  `proof`
 * is the mono ms the answering statement was sent; `arg` is the hold's
 * token for EV_TAKEN and EV_RENEWED, the status for EV_FAILED; `row` the
 * follower's read for EV_NOT_HELD and EV_FAILED (may be NULL).  `note` (may be NULL)
 * gets what to log. */
void sqle_sup_step(sqlease_supervisor *s, enum sup_event ev, int64_t proof, int64_t arg,
                   const sqlease_lease_info *row, sup_note *note);

/* Log a line about s (e->m not held); sqle_sup_note logs a note. */
void sqle_sup_log(sqlease_supervisor *s, int level, const char *fmt, ...) SQLEASE_PRINTF(3, 4);
void sqle_sup_note(sqlease_supervisor *s, const sup_note *note);

/* One statement for s alone (engine.c): the renew, or the follower's
 * read and take, through sqle_lease_acquire, or the release of a stale
 * hold; its answer is stepped and logged.  Returns the statement's
 * status.  s must not be on the runner's list of due supervisors (busy,
 * or SUP_NEW). */
int sqle_engine_tick_one(sqle_engine *e, sqlease_supervisor *s, sqlease_error *err);

#endif
