/*
 * supervisor.h -- what the supervisor's two files share: the state
 * machine and what it tells the engine (sup_machine.c), and the public
 * calls (supervisor.c).
 *
 * Each supervisor is a node of its sqlease_db's engine (engine.h), which
 * owns the threads: the runner asks the machine what is due and hands it
 * the answers, the watchdog asks it for its deadline, the callback pool
 * delivers what it queued.  The machine calls down into the engine (its
 * lock, its queue, its wake-ups) and the engine calls up only through
 * sqle_sup_engine_ops.  engine.h gives the order of the locks.
 */
#ifndef SQLEASE_SUPERVISOR_H
#define SQLEASE_SUPERVISOR_H

#include <stddef.h>
#include <stdint.h>

#include "sqlease.h"
#include "engine.h"
#include "internal.h"
#include "options.h"
#include "platform.h"

/* The supervisor's states (sup_machine.c, sqle_sup_step()). */
enum sup_state {
    SUP_NEW,       /* inside sqlease_supervisor_start, before its first answer:
                      the runner leaves it alone */
    SUP_FOLLOWER,  /* not holding: polls every retry */
    SUP_HOLDER,    /* holding: the work was started (or its on_started is
                      queued), renews every heartbeat */
    SUP_STALE,     /* the work was stopped at its deadline while the row may
                      still be that hold: release it (scoped to its token)
                      once on_stopped has returned, before any take */
    SUP_HANDOFF,   /* the hold is being handed over (a request on its row,
                      or sqlease_supervisor_handoff): the work was stopped,
                      and once on_stopped has returned the hand-over
                      (scoped to its token) is sent, before any take */
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
    EV_SHUTDOWN,   /* sqlease_supervisor_stop */
    EV_REQUESTED,  /* the renew answered 0 rows and the read after it shows
                      this hold asked to hand over (row) */
    EV_HANDED,     /* the hand-over answered (arg: HANDED_*) */
    EV_ASKED,      /* a follower's request to a holder answered (arg: 1 if
                      written; row NULL) */
    EV_HANDOFF     /* sqlease_supervisor_handoff, or a stop with hand-over
                      on, asked this hold to hand over (row: its
                      handoff_to is the target) */
};

/* How often a follower reads a row that carries a request for it (the
 * reservation comes once the holder's work has stopped): this, or its
 * retry when that is shorter. */
#define SQLE_HANDOFF_POLL_MS 50

/* With hand-over on (sqlease_options.handoff), a holder renews and a
 * ready follower reads the row at least this often (or every heartbeat,
 * every retry, when those are shorter): a request is then seen within
 * this, and a hand-over's lead is this and a fast read, so that a
 * transfer completes within about a second at any ttl.  The price is a
 * statement every 250 ms per instance (a renew is an UPDATE of one row),
 * which is what --handoff asks for. */
#define SQLE_HANDOFF_WATCH_MS 250

/* Before its deadline, a hand-over's lead leaves this much for the work
 * to stop at its end rather than at the deadline (a stale hold, released
 * instead of handed over). */
#define SQLE_HANDOFF_LEAD_MARGIN_MS 100

/* What a hand-over did (EV_HANDED's arg). */
enum { HANDED_GONE = 0,       /* nothing: the hold was gone already */
       HANDED_TO_TARGET = 1,  /* reserved for its target */
       HANDED_RELEASED = 2 }; /* released: no ready follower for "*" */

/* A queued callback. */
enum cb_kind { CB_STARTED, CB_STOPPED, CB_HOLDER };

typedef struct sup_cb {
    sqle_engine_cb link;             /* first: the engine's queue */
    int kind;
    int64_t token;                   /* CB_STARTED, CB_HOLDER */
    int reason;                      /* CB_STOPPED */
    char owner[SQLEASE_MAX_OWNER + 1]; /* CB_HOLDER; "" free */
    char *data;                      /* CB_HOLDER; NULL none (owned) */
} sup_cb;

struct sqlease_supervisor {
    /* The engine's part (engine.h): its ops and lease are set at start,
     * the rest is the engine's. */
    sqle_engine_node node;

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
    /* The fire ledger's table and the host its claims record (fire.c):
     * copies, since the resolved options borrowed the caller's. */
    char fire_table[SQLEASE_MAX_TABLE + 1];
    char host[SQLEASE_MAX_HOST + 1];

    /* Guarded by e->m. */
    enum sup_state state;
    int running;             /* on_started queued, on_stopped not yet */
    int work_up;             /* running, and on_started has returned */
    int stopped;             /* stop finished; stop_rc is its answer */
    int release_at_once;     /* the stop's release ignores min_hold_ms */
    int stop_rc;
    int started_any;         /* on_started was queued at least once */
    int64_t token;           /* of the current or last hold started */
    int64_t fire_at;         /* the fire its take claimed (a schedule), 0 none */
    int64_t deadline;        /* mono ms: stop the work; while running */
    int64_t next_due;        /* mono ms of the next statement */
    int64_t last_contact;    /* mono ms of the last answer, -1 none */
    int64_t started_at;
    uint64_t acquires, takes, renew_failures, losses;
    /* The holder history's pruning while holding (sup_machine.c): the mono
     * ms it is next due (0: none since the last take), the database's
     * clock minus sqle_mono_ms as the take's read gave it, and where the
     * next window starts (database clock; 0: not started). */
    int64_t prune_at, clock_ref, prune_cursor;

    /* Callbacks (guarded by e->m; queued on the engine's node, run one
     * at a time in order). */
    int drop_stop;           /* a start was dropped undelivered (it waited
                                past its hold): drop the stop that ends it */
    uint64_t cb_thread;      /* thread inside a callback now, 0 none */

    /* The holder last reported to on_holder (guarded by e->m). */
    int holder_reported;
    char holder_owner[SQLEASE_MAX_OWNER + 1];
    int64_t holder_token;

    /* The hand-over (guarded by e->m; see "Handing the lease over" in
     * sqlease.h). */
    int64_t priority;        /* what its takes write (the lease's too) */
    char handoff_to[SQLEASE_MAX_OWNER + 1]; /* SUP_HANDOFF: the target,
                                "*" the best ready follower */
    int64_t handoff_at;      /* SUP_HOLDER: mono ms at which the work stops
                                for a hand-over asked of it with a lead
                                (sqlease_supervisor_handoff), 0 none */
    int handoff_pending;     /* a hand-over of the last hold is owed: sent
                                by the runner, or by the stop instead of
                                the release */
    int handed;              /* the last hold was handed over (or found
                                gone by its hand-over): nothing to release */
    uint64_t handoffs;
    int want_request;        /* a follower's request to the holder is due */
    char req_owner[SQLEASE_MAX_OWNER + 1]; /* ... to the hold of this owner */
    int64_t req_token;       /*     and token */
    int64_t requested_token; /* the last hold it asked (not again) */
    int64_t fast_token;      /* the hold whose request for this supervisor */
    int64_t fast_since;      /*   it first saw at this mono ms: it polls
                                  fast while that request stands, for at
                                  most the holder's ttl */
    /* Its ready row (sqlease_options.handoff): a supervisor of its own,
     * started and stopped under stop_lock. */
    sqlease_supervisor *ready;
    int ready_up;            /* it exists (guarded by e->m: what the machine
                                reads to know it is a ready follower) */
};

/* A line step() wants logged, written once e->m is let go (the caller's
 * log function may call back into the library). */
typedef struct sup_note {
    int set;                 /* 0: nothing to log */
    int level;               /* SQLEASE_LOG_* */
    char msg[320];
} sup_note;

/* s's ready row is up (e->m held): from now on s reads the row as a
 * ready follower does, every SQLE_HANDOFF_WATCH_MS at most. */
void sqle_sup_ready_up(sqlease_supervisor *s);

/* Let the work of a holder asked to hand over to `target` run on for a
 * lead of a follower's read interval (its retry, at most
 * SQLE_HANDOFF_WATCH_MS with hand-over on) and a fast read
 * (SQLE_HANDOFF_POLL_MS) before it stops, so that the target, which
 * reads the row that often, has seen the
 * request and reads it fast by the time the row is reserved for it: the
 * watchdog stops the work at handoff_at, and no renew goes meanwhile.
 * Returns 1 if the lead was set (or one runs already), 0 if it does not
 * fit before the deadline (SQLE_HANDOFF_LEAD_MARGIN_MS before it): stop
 * at once then (e->m held). */
int sqle_sup_lead(sqlease_supervisor *s, const char *target, int64_t now);

/* The state machine (sup_machine.c): apply ev to s, e->m held.  `proof`
 * is the mono ms the answering statement was sent; `arg` is the hold's
 * token for EV_TAKEN and EV_RENEWED, the status for EV_FAILED; `row` the
 * follower's read for EV_NOT_HELD and EV_FAILED (may be NULL).  `note`
 * (may be NULL) gets what to log. */
void sqle_sup_step(sqlease_supervisor *s, enum sup_event ev, int64_t proof, int64_t arg,
                   const sqlease_lease_info *row, sup_note *note);

/* Log a line about s (e->m not held); sqle_sup_note logs a note. */
void sqle_sup_log(sqlease_supervisor *s, int level, const char *fmt, ...) SQLEASE_PRINTF(3, 4);
void sqle_sup_note(sqlease_supervisor *s, const sup_note *note);

/* What the engine calls a supervisor's node through (sup_machine.c). */
extern const sqle_engine_ops sqle_sup_engine_ops;

/* The supervisor a node of the engine is. */
#define SQLE_SUP_OF(n) \
    ((sqlease_supervisor *)(void *)((char *)(n) - offsetof(sqlease_supervisor, node)))

#endif
