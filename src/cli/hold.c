/*
 * hold.c -- the callback bridge between the supervisor and the main
 * thread (see hold.h for the protocol).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "child.h"
#include "cli.h"
#include "hold.h"

static void on_started(void *userdata, int64_t token)
{
    cli_hold *h = userdata;

    sqle_mutex_lock(&h->mu);
    h->held = 1;
    h->token = token;
    h->taken_mono_ms = sqle_mono_ms();
    h->starts++;
    h->version++;
    sqle_cond_broadcast(&h->cv);
    sqle_mutex_unlock(&h->mu);
}

/* Runs on a library thread, which must not return until CMD is gone: the
 * lease may pass to another owner ttl - renew_deadline after the loss,
 * and the grace plus this wait fit inside that.  The main thread does the
 * stopping (it forked CMD); this only waits for its word. */
static void on_stopped(void *userdata, int reason)
{
    cli_hold *h = userdata;
    int64_t deadline;

    sqle_mutex_lock(&h->mu);
    h->held = 0;
    h->stop_reason = reason;
    h->version++;
    sqle_cond_broadcast(&h->cv);
    deadline = sqle_mono_ms() + h->stop_wait_ms;
    while (h->child_running) {
        if (sqle_cond_wait_until(&h->cv, &h->mu, deadline) == 1 && h->child_running) {
            sqle_child_kill(&h->child);
            cli_log(SQLEASE_LOG_ERROR, "CMD not confirmed stopped %" PRId64
                    " ms after the lease ended; killed its process group",
                    h->stop_wait_ms);
            break;
        }
    }
    sqle_mutex_unlock(&h->mu);
}

int cli_hold_init(cli_hold *h, int64_t stop_wait_ms)
{
    memset(h, 0, sizeof *h);
    h->stop_wait_ms = stop_wait_ms;
    if (sqle_mutex_init(&h->mu) != 0)
        return -1;
    if (sqle_cond_init(&h->cv) != 0) {
        sqle_mutex_destroy(&h->mu);
        return -1;
    }
    return 0;
}

void cli_hold_destroy(cli_hold *h)
{
    sqle_cond_destroy(&h->cv);
    sqle_mutex_destroy(&h->mu);
}

/* The supervisor reports each change of holder while it does not hold:
 * kept for `supervise`'s status line ("standby, held by ..."), which then
 * costs no statement of its own. */
static void on_holder(void *userdata, const char *owner, int64_t token, const char *data)
{
    cli_hold *h = userdata;

    (void)data;
    sqle_mutex_lock(&h->mu);
    h->holder_known = 1;
    snprintf(h->holder, sizeof h->holder, "%s", owner != NULL ? owner : "");
    h->holder_token = token;
    h->version++;
    sqle_cond_broadcast(&h->cv);
    sqle_mutex_unlock(&h->mu);
}

int cli_hold_holder(cli_hold *h, char *owner, size_t cap, int64_t *token)
{
    int r;

    sqle_mutex_lock(&h->mu);
    r = !h->holder_known ? -1 : h->holder[0] != '\0';
    if (r > 0) {
        snprintf(owner, cap, "%s", h->holder);
        if (token != NULL)
            *token = h->holder_token;
    }
    sqle_mutex_unlock(&h->mu);
    return r;
}

void cli_hold_attach(cli_hold *h, sqlease_options *o)
{
    o->on_started = on_started;
    o->on_stopped = on_stopped;
    o->on_holder = on_holder;
    o->userdata = h;
}

void cli_hold_view_get(cli_hold *h, cli_hold_view *v)
{
    sqle_mutex_lock(&h->mu);
    v->version = h->version;
    v->starts = h->starts;
    v->held = h->held;
    v->token = h->token;
    v->taken_mono_ms = h->taken_mono_ms;
    v->stop_reason = h->stop_reason;
    sqle_mutex_unlock(&h->mu);
}

void cli_hold_wait(cli_hold *h, uint64_t seen, int64_t deadline_mono_ms)
{
    sqle_mutex_lock(&h->mu);
    if (h->version == seen)
        (void)sqle_cond_wait_until(&h->cv, &h->mu, deadline_mono_ms);
    sqle_mutex_unlock(&h->mu);
}

/*
 * Whether the hold this bridge was told of (h->token) is still proven,
 * asked of the supervisor itself (h->mu held).  h->held alone is not
 * enough: it changes only when on_stopped runs, and a process that was
 * frozen (SIGSTOP, a debugger) past the hold's deadline resumes all its
 * threads at once, so the main thread may look before the watchdog and
 * the callback pool have said anything.  A CMD started then would run
 * under a token whose row may already be another owner's.  So the
 * supervisor must still run the work under that very token, with its
 * last proof younger than the renew deadline (deadline_in_ms, which is
 * also how the guard is told the deadline; see session.c).
 */
static int hold_proven(cli_hold *h)
{
    sqlease_state st;

    if (!h->held || h->sup == NULL)
        return 0;
    memset(&st, 0, sizeof st);
    if (sqlease_supervisor_state(h->sup, &st) != SQLEASE_OK)
        return 0;
    return st.holding && st.token == h->token && st.deadline_in_ms > 0;
}

/* What the gate between CMD's fork and its exec does. */
typedef struct hold_gate_ctx {
    cli_hold *h;
    void (*armed)(void *ud, long pid);
    void *ud;
} hold_gate_ctx;

/* CMD exists and runs nothing yet: let the caller arm what watches it
 * (the guard), then look at the hold once more, since arming took time
 * in which this process may have been frozen past the deadline (h->mu
 * held). */
static int hold_gate(void *arg, long pid)
{
    hold_gate_ctx *g = arg;

    if (g->armed != NULL)
        g->armed(g->ud, pid);
    return hold_proven(g->h) ? 0 : 1;
}

int cli_hold_start_child(cli_hold *h, sqle_child *c, char *const *argv, const char *name,
                         const char *owner, int foreground, void (*armed)(void *ud, long pid),
                         void *ud, int64_t *token, char *err, size_t cap)
{
    hold_gate_ctx g;
    int r = 0;

    g.h = h;
    g.armed = armed;
    g.ud = ud;
    sqle_mutex_lock(&h->mu);
    if (hold_proven(h)) {
        char fence[SQLEASE_FENCE_LITERAL_MAX];
        int st;

        *token = h->token;
        st = cli_child_start(c, argv, name, owner, h->token,
                             cli_child_fence_sql(h->sup, h->token, fence, sizeof fence),
                             h->extra_env, h->nextra_env, foreground, hold_gate, &g, err, cap);
        if (st == 0) {
            h->child_running = 1;
            h->child = *c;
            r = 1;
        } else {
            r = st == 1 ? 0 : -1;
        }
    }
    sqle_mutex_unlock(&h->mu);
    return r;
}

void cli_hold_child_gone(cli_hold *h)
{
    sqle_mutex_lock(&h->mu);
    h->child_running = 0;
    memset(&h->child, 0, sizeof h->child);
    sqle_cond_broadcast(&h->cv);
    sqle_mutex_unlock(&h->mu);
}

/* No default: a stop reason added to sqlease.h without words here fails
 * the build under -Wswitch. */
const char *cli_stop_reason(int reason)
{
    switch ((sqlease_stop_reason)reason) {
    case SQLEASE_STOP_LOST: return "lost (held by another owner, expired or cleared)";
    case SQLEASE_STOP_DEADLINE: return "not renewed before the renew deadline";
    case SQLEASE_STOP_SHUTDOWN: return "released at shutdown";
    case SQLEASE_STOP_HANDOFF: return "handed over to another instance";
    }
    return "stopped";
}
