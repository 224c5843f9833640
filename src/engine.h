/*
 * engine.h -- the threads every supervisor of one sqlease_db shares, as a
 * service that knows nothing of what a supervisor is.
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
 *   the watchdog  asks each of them for its deadline and wakes at the
 *                 earliest, sharing no blocking call with the runner, so
 *                 that a statement that hangs in the driver cannot keep
 *                 any work running past its deadline;
 *   callbacks     run on a small pool: a node's callbacks are queued and
 *                 run one at a time in order.  When callbacks have waited
 *                 POOL_STALL_MS with every pool thread inside a callback,
 *                 the watchdog starts a thread for each waiting node, so
 *                 a slow callback of one lease delays another lease's by
 *                 at most that, while a burst of quick callbacks (a
 *                 thousand deadline stops at once) is served by the
 *                 threads there are.  Threads beyond the first leave after
 *                 a second idle.
 *
 * So a process has, per sqlease_db with supervisors: the db's statement
 * worker (db.c), a runner, a watchdog and one callback thread, plus one
 * more per callback running at the same moment beyond the first.
 *
 * The dependency runs one way.  A client (supervisor.c) registers a node
 * per lease, with the operations the engine calls back through
 * (sqle_engine_ops): what the node wants sent now (due), what an answer
 * means (answer), when its deadline is and what happens when it passes
 * (watch), and how to deliver one of its queued callbacks (deliver).  The
 * engine decides nothing about holds, tokens or states: it gathers,
 * batches, sends, wakes and calls.  The client calls down into the
 * functions below and never reaches into the engine's fields.
 *
 * Locks, in the only order they are ever taken (a thread holding one may
 * take those after it, never those before):
 *
 *   1. sqlease_supervisor.stop_lock   one sqlease_supervisor_stop at a time
 *                                     (sqlease_supervisor_stop_each takes
 *                                     several, in address order)
 *   2. sqlease_db.m                   db->engine, the engine's users count
 *   3. sqle_engine.m                  everything of the engine, and what a
 *                                     client keeps under it (its state)
 *
 * No statement is sent and no callback is called while engine.m is held:
 * statements may hang until their deadline and callbacks may take their
 * margin, and neither may block the other threads.  Debug builds assert
 * that engine.m is held where a function needs it (ENGINE_HELD).
 */
#ifndef SQLEASE_ENGINE_H
#define SQLEASE_ENGINE_H

#include <assert.h>
#include <stdint.h>

#include "sqlease.h"
#include "platform.h"

typedef struct sqle_engine sqle_engine;
typedef struct sqle_engine_node sqle_engine_node;

/* A queued callback: the client's own struct begins with this. */
typedef struct sqle_engine_cb {
    struct sqle_engine_cb *next;
} sqle_engine_cb;

/* What a node wants sent. */
enum sqle_send {
    SQLE_SEND_NONE,     /* nothing now, nor on a timer: it says when (a kick) */
    SQLE_SEND_RENEW,    /* renew its hold: batched per table and ttl */
    SQLE_SEND_POLL,     /* a follower's read, and the take if the row is free:
                           batched per table */
    SQLE_SEND_RELEASE,  /* give up the hold its lease has, freeing the row at
                           once (never with a minimum hold) */
    SQLE_SEND_HANDOFF,  /* hand the hold its lease has over: to `arg` (an
                           owner id, or "*": the best ready follower),
                           reserving the row for it for `arg_ms` */
    SQLE_SEND_REQUEST   /* ask the hold (`arg`: its owner id, `token`) of
                           its lease's row to hand over to this lease's
                           owner, if it has lasted `arg_ms` (0: any) */
};

typedef struct sqle_due {
    int what;           /* SQLE_SEND_* */
    int64_t at;         /* mono ms it is due */
    int64_t early;      /* how much earlier it may go, to share a round */
    /* SQLE_SEND_HANDOFF and SQLE_SEND_REQUEST: what they are about,
     * copied out of the client while e->m is held. */
    char arg[SQLEASE_MAX_OWNER + 1];
    int64_t token;
    int64_t arg_ms;
} sqle_due;

/* What the statements of one node answered. */
enum sqle_answer_kind {
    SQLE_ANS_ACQUIRE,   /* sqle_lease_acquire: the renew, or the read and the
                           take; taken, lost, row */
    SQLE_ANS_RENEW,     /* its part of a batched renew */
    SQLE_ANS_READ,      /* its part of a batched read that showed the row held
                           (row), or failed (row NULL) */
    SQLE_ANS_TAKE,      /* the take after a batched read showed the row free
                           (row: that read; token: the new hold's) */
    SQLE_ANS_RELEASE,   /* the release of its hold; released */
    SQLE_ANS_HANDOFF,   /* the hand-over of its hold; released (the row was
                           changed), target (whom it went to; "": released,
                           no ready follower) */
    SQLE_ANS_REQUEST    /* its request to a holder; taken (it was written),
                           token (the hold it was for) */
};

typedef struct sqle_answer {
    int kind;                       /* SQLE_ANS_* */
    int64_t sent;                   /* mono ms the statement was sent */
    int rc;                         /* its status */
    int taken, lost, released;
    int64_t token;
    const sqlease_lease_info *row;  /* may be NULL; SQLE_ANS_RENEW: the read
                                       after a renew that found the hold
                                       gone, when it answered */
    const char *target;             /* SQLE_ANS_HANDOFF */
    const sqlease_error *err;       /* what failed, when rc says so */
} sqle_answer;

/* What the engine calls a node's client through. */
typedef struct sqle_engine_ops {
    /* What n wants sent, and when (e->m held; n is not busy). */
    void (*due)(sqle_engine_node *n, sqle_due *out);
    /* What n's statement answered (e->m not held). */
    void (*answer)(sqle_engine_node *n, const sqle_answer *a);
    /* The watchdog's look at n at mono ms `now` (e->m held): act on a
     * deadline that has passed; return the next one to wake for, or -1. */
    int64_t (*watch)(sqle_engine_node *n, int64_t now);
    /* Deliver one of n's queued callbacks, taken off its queue (e->m
     * held; it may be let go around a call into the caller's code, and
     * must be held again on return).  Frees cb. */
    void (*deliver)(sqle_engine_node *n, sqle_engine_cb *cb);
} sqle_engine_ops;

/* The engine's part of a registered client (one per lease).  The client
 * fills ops and lease before sqle_engine_add; the rest is the engine's,
 * guarded by e->m, read by the client only through the calls below. */
struct sqle_engine_node {
    const sqle_engine_ops *ops;
    sqlease_lease *lease;           /* what its statements are about */
    sqle_engine_node *next, *prev;  /* the engine's list */
    int busy;                       /* the runner has a statement of it in flight */
    sqle_engine_cb *cbq_head, *cbq_tail;  /* callbacks, in order */
    int in_cb;                      /* a thread runs its callbacks now */
    int on_ready;                   /* on the ready list */
    sqle_engine_node *ready_next;
    int64_t ready_at;               /* mono ms it joined the ready list */
};

struct sqle_engine {
    sqlease_db *db;
    /* The clock a client's state machine reads (sqle_mono_ms; a test's
     * own, to drive a state machine through deadlines without waiting
     * for them). */
    int64_t (*now_ms)(void);
    sqle_mutex m;
#ifndef NDEBUG
    uint64_t m_owner;        /* thread holding m, for ENGINE_HELD */
#endif
    sqle_cond run_cv;        /* wakes the runner */
    sqle_cond wd_cv;         /* wakes the watchdog */
    sqle_cond cb_cv;         /* wakes an idle pool thread */
    sqle_cond change_cv;     /* a node's state, queue or flight moved */
    sqle_engine_node *head;  /* every registered node */
    size_t count;
    sqle_engine_node *ready_head, *ready_tail; /* callbacks waiting */
    size_t ready_count;
    int64_t ready_since;     /* mono ms the first node in line was queued (or
                                the pool last grew, if later); 0: empty */
    int64_t grown_at;        /* mono ms the pool last grew for a stall */
    int cb_threads, cb_idle; /* pool threads alive; waiting for work */
    int cb_woken;            /* idle ones signalled, not yet awake */
    int closing;
    int users;               /* nodes that hold the engine (db->m) */
    sqle_thread runner, watchdog;
    int runner_up, watchdog_up;
};

void sqle_engine_lock(sqle_engine *e);
void sqle_engine_unlock(sqle_engine *e);
/* The engine's clock (its now_ms), for a client's state machine. */
int64_t sqle_engine_now(const sqle_engine *e);
/* Wait for a change (sqle_engine_changed) until `until` (mono ms, -1: no
 * bound); e->m held.  Every wait on e->m goes through the engine, so
 * that ENGINE_HELD stays true. */
void sqle_engine_wait_change(sqle_engine *e, int64_t until);
/* Something a waiter may be waiting for moved (e->m held). */
void sqle_engine_changed(sqle_engine *e);
/* A node may want something sent sooner than the runner thinks (e->m
 * held). */
void sqle_engine_kick(sqle_engine *e);
/* A node has a deadline sooner than the watchdog thinks (e->m held). */
void sqle_engine_watch_kick(sqle_engine *e);

/* How long queued callbacks may wait while every pool thread is busy
 * before the pool grows. */
#define POOL_STALL_MS 50

#ifndef NDEBUG
#define ENGINE_HELD(e) assert((e)->m_owner == sqle_thread_self())
#else
#define ENGINE_HELD(e) ((void)0)
#endif

/* Get db's engine, starting it for the first node (db->m). */
int sqle_engine_acquire(sqlease_db *db, sqle_engine **out, sqlease_error *err);
/* Let go of it; the last user stops its threads and frees it. */
void sqle_engine_release(sqle_engine *e);
/* Register a node (takes e->m).  hold_cbs: the caller will run n's first
 * callbacks itself (sqle_engine_run_held_cbs): until then they stay
 * queued, and no pool thread runs them. */
void sqle_engine_add(sqle_engine *e, sqle_engine_node *n, int hold_cbs);
/* Take a node off (takes e->m); its callbacks still queued are handed
 * back (the client frees them). */
sqle_engine_cb *sqle_engine_remove(sqle_engine *e, sqle_engine_node *n);

/* Queue a callback for n and see that a thread runs it (e->m held). */
void sqle_engine_queue_cb(sqle_engine *e, sqle_engine_node *n, sqle_engine_cb *cb);
/* Run n's queued callbacks on this thread, if no other thread is (e->m
 * held; let go around each callback).  Returns 1 if it ran them. */
int sqle_engine_run_cbs(sqle_engine *e, sqle_engine_node *n);
/* The caller that added n with hold_cbs runs its callbacks now, on its
 * own thread, and lets the pool run the later ones (e->m held). */
void sqle_engine_run_held_cbs(sqle_engine *e, sqle_engine_node *n);
/* The same caller drops them instead: nothing is delivered (e->m held). */
sqle_engine_cb *sqle_engine_drop_held_cbs(sqle_engine *e, sqle_engine_node *n);
/* 1 while a thread runs n's callbacks or some are queued (e->m held). */
int sqle_engine_cbs_pending(const sqle_engine_node *n);
/* 1 while the runner has a statement of n in flight (e->m held). */
int sqle_engine_busy(const sqle_engine_node *n);

/* Send what `what` (SQLE_SEND_*) asks for n now, on the calling thread,
 * and hand its answer to n's client (ops->answer).  n must not be on the
 * runner's list of due nodes (busy, or one the runner leaves alone).
 * Returns the statement's status; SQLE_SEND_NONE sends nothing and
 * returns SQLEASE_OK. */
int sqle_engine_send(sqle_engine *e, sqle_engine_node *n, int what, sqlease_error *err);
/* The same with the whole of what is due (its arguments: hand-overs and
 * requests). */
int sqle_engine_send_due(sqle_engine *e, sqle_engine_node *n, const sqle_due *d,
                         sqlease_error *err);

#endif
