/*
 * hold.h -- the bridge between the supervisor's callbacks (library
 * threads) and the tool's main thread, which alone starts and stops CMD.
 *
 * on_started only records the token and wakes the main thread.
 * on_stopped records the loss, wakes the main thread, and then waits --
 * bounded -- until the main thread says CMD is gone, so that the library's
 * promise "when on_stopped returns the work has stopped" holds for CMD.
 * If the main thread has not confirmed in time, on_stopped kills CMD's
 * process group itself as a last resort.
 */
#ifndef SQLEASE_CLI_HOLD_H
#define SQLEASE_CLI_HOLD_H

#include <stdint.h>

#include "platform.h"
#include "sqlease.h"

typedef struct cli_hold {
    sqle_mutex mu;
    sqle_cond cv;
    uint64_t version;       /* bumped by every callback: "something changed" */
    uint64_t starts;        /* on_started calls so far */
    int held;               /* between on_started and on_stopped */
    int64_t token;          /* of the current or last hold */
    int64_t taken_mono_ms;  /* sqle_mono_ms() at on_started */
    int stop_reason;        /* of the last on_stopped */
    int child_running;      /* main thread: CMD is running */
    sqle_child child;    /* a copy taken at start, valid while
                               child_running: the main thread may close
                               its own handle while on_stopped still
                               needs to reach the process group */
    int64_t stop_wait_ms;   /* how long on_stopped waits for CMD to go */
    sqlease_supervisor *sup; /* the supervisor in force, NULL while there
                                is none (a crash pause): CMD's fence and
                                the proof a start checks (hold_proven);
                                set and read under mu (session.c) */
    /* The holder as this supervisor last saw it while not holding
     * (on_holder): "" when free; holder_known 0 until the first report. */
    int holder_known;
    char holder[SQLEASE_MAX_OWNER + 1];
    int64_t holder_token;
    /* More of CMD's environment ("NAME=value"), set by the main thread
     * before it starts CMD (run --schedule: the fire); NULL: none. */
    const char *const *extra_env;
    size_t nextra_env;
} cli_hold;

/* What the main thread looks at, copied under the lock. */
typedef struct cli_hold_view {
    uint64_t version;
    uint64_t starts;
    int held;
    int64_t token;
    int64_t taken_mono_ms;
    int stop_reason;
} cli_hold_view;

int cli_hold_init(cli_hold *h, int64_t stop_wait_ms);
void cli_hold_destroy(cli_hold *h);

/* The holder as last reported to this bridge (on_holder): returns 1 with
 * owner and *token set when some owner holds the lease, 0 when it is
 * free, -1 before the first report. */
int cli_hold_holder(cli_hold *h, char *owner, size_t cap, int64_t *token);

/* Point the options' callbacks at this bridge. */
void cli_hold_attach(cli_hold *h, sqlease_options *o);

void cli_hold_view_get(cli_hold *h, cli_hold_view *v);

/* Wait until a callback changes something after `seen` (a view's
 * version) or until deadline_mono_ms. */
void cli_hold_wait(cli_hold *h, uint64_t seen, int64_t deadline_mono_ms);

/* Start CMD if and only if the lease is held right now: on_started said
 * so, and the supervisor (sup) still holds that token with its proof
 * younger than the renew deadline (a process frozen past the deadline
 * may look before on_stopped has run).  The check and the start happen
 * under the lock, so on_stopped either sees no CMD or waits for this one
 * to be stopped.  CMD is held between fork and exec while armed(ud, pid)
 * runs (may be NULL: the guard is started there, so that CMD never runs
 * unguarded), and runs only if the hold is still proven after it.
 * Returns 1 (started; *token set), 0 (not held, or no longer proven:
 * nothing runs; a guard armed() started must be disarmed), -1 (CMD could
 * not be started; err set).  foreground as for cli_child_start. */
int cli_hold_start_child(cli_hold *h, sqle_child *c, char *const *argv, const char *name,
                         const char *owner, int foreground, void (*armed)(void *ud, long pid),
                         void *ud, int64_t *token, char *err, size_t cap);

/* The main thread has reaped CMD (or it was never started). */
void cli_hold_child_gone(cli_hold *h);

/* Human words for an sqlease_stop_reason. */
const char *cli_stop_reason(int reason);

#endif
