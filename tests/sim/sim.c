/*
 * sim.c -- sqlease-sim: the library's own engine, supervisor, lease and
 * statement code, run on the simulated platform (src/platform/sim/) and
 * the simulated database (simdb.c), under a seed.
 *
 *   sqlease-sim --seeds N [--from S] [--processes P] [--leases L]
 *               [--clock-steps [--by-expiry]] [--first]
 *   sqlease-sim --replay SEED
 *
 * Each seed is one history: P processes (each its own handle and L
 * supervisors, one per lease, on one table; two renew groups, since the
 * leases' ttls differ) start at random moments and contend for the same
 * rows for 30 s of virtual time while the seed injects faults: latency
 * and slow answers (a row lock waited for, an answer past the query
 * timeout), connections lost before a statement or after it committed,
 * refused connects, a process cut off from the database for up to 7.5 s
 * (its calls wait, then answer late or find the connection gone),
 * processes that crash or stop gracefully (and are replaced) or freeze
 * for less than ttl - renew_deadline, callbacks that take long
 * (on_started up to 6 s, on_holder up to 8 s; on_stopped mostly within
 * its ttl - renew_deadline margin, now and then past it), and with
 * --clock-steps the database's clock stepping forward and back (which,
 * with --by-expiry, the followers' old rule of taking by the database's
 * expiry alone, hands live holds over: the check that finds it).  Beside
 * the supervisors, each process makes a public call now and then on its
 * handle.  Then the faults stop and run their course, and every lease
 * must be held again.
 *
 * Checked at every callback and statement:
 *   - one lease's work never runs in two processes at once (work runs
 *     from on_started to the return of on_stopped, or to a crash); an
 *     on_stopped that overran its margin, or a step of the database's
 *     clock, excuses the overlap it caused (the documented assumptions);
 *   - work runs only within its proof + renew_deadline: on_started comes,
 *     and on_stopped is called, by the time the latest statement that
 *     wrote the row for that owner and token was sent + renew_deadline
 *     (+ POOL_STALL_MS for a stop, + the time the process was frozen);
 *   - on_started and on_stopped alternate per supervisor;
 *   - each start's token is above every earlier start's of that lease;
 *   - no release of a hold is sent while that hold's work runs (before
 *     or during its on_stopped);
 *   - no handle has more calls in the database at once than the 4 stuck
 *     connections it may keep (DB_MAX_ABANDONED);
 *   - every public call returns within its documented bound:
 *     sqlease_db_now_ms within query timeout + 500 ms + login timeout,
 *     sqlease_supervisor_stop within query timeout + 500 ms (and free
 *     within twice that after a stop that timed out), plus what the
 *     lease's callbacks took meanwhile and the time the process was
 *     frozen (sqlease_supervisor_stop_each, on even seeds: one such
 *     bound per supervisor and one for the releases);
 *   - after the faults end, every lease is held again within
 *     ttl + 2 x retry + query timeout + 500 ms + login timeout.
 * Prints one line per violation (with its seed) and a summary; exits 1
 * if any.  --replay SEED prints that seed's trace: the same bytes every
 * time.  --first stops after the first seed with a violation.
 *
 * --plant NAME runs the library with one bug planted back
 * (SQLE_PLANTED(NAME) in src/internal.h, true only then and only in this
 * build), to show that the simulator finds it; --list-plants lists them.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "engine.h"
#include "internal.h"
#include "platform.h"
#include "sim.h"
#include "simdb.h"
#include "sqlease.h"

#define MAX_P 48
#define MAX_L 8
#define TABLE "sim_lease"

typedef struct slot {
    int proc, lease;
    int running;
    int64_t token;
    int stopping;        /* inside on_stopped */
    int64_t stop_began;  /* virtual ms on_stopped was called */
    int64_t stop_late;   /* how long after its deadline it was called: the
                            time a callback of its own ran past it, which
                            comes out of on_stopped's margin (documented) */
    int64_t frozen_ms;   /* freezes while this hold's work ran: a frozen
                            process's stop comes that much later, out of
                            its on_stopped's margin (documented) */
    int starting;        /* inside on_started */
    int64_t start_began;
    int overran;         /* its last on_stopped passed its margin */
    int64_t cb_began;    /* virtual ms the callback running now began; -1 none */
    int64_t cb_ms;       /* time its callbacks took, the ended ones */
    int64_t cb_ended;    /* virtual ms its last callback returned */
    int64_t proof_at;    /* when its latest proof of holding was sent: a
                            statement that wrote the row with this owner */
    int64_t proof_token; /* the token that proof was for */
} slot;

typedef struct proc {
    int id;
    int live;            /* started and not crashed */
    int crashed;
    sqlease_db *db;
    sqlease_supervisor *sup[MAX_L];
    slot slots[MAX_L];
    char owner[16];
    int64_t freeze_from[64], freeze_until[64];  /* its freezes */
    int nfreeze;
    sqle_mutex m;          /* the prober's wait */
    sqle_cond cv;
    int stopping;          /* the prober ends */
    sqle_thread prober;
    int has_prober;
} proc;

/* The handles' timeouts, and the bound a call that sends statements is
 * given (include/sqlease.h: query timeout + 500 ms, plus the login
 * timeout when it must connect first). */
#define QT_MS 1000
#define LOGIN_MS 1000
#define CALL_BOUND (QT_MS + DB_SLACK_MS + LOGIN_MS)
#define RETRY_MS 300

typedef struct lease_state {
    int64_t last_token;
    int64_t ttl, hb, rd;
    int64_t row_version;  /* the row's version when last looked at */
} lease_state;

static int g_procs = 3, g_leases = 2, g_clock_steps = 0, g_trace = 0, g_by_expiry = 0;
/* Even seeds: every process starts its supervisors with
 * sqlease_supervisor_start_each and stops them with
 * sqlease_supervisor_stop_each (the batched releases; the first takes
 * are batched for leases of one ttl only: --same-ttl); odd seeds: each
 * started and stopped on its own.  --same-ttl gives every lease one ttl,
 * so that start_each's batched take runs too; its seeds cost about four
 * times as much (their deadlines coincide, and the callback pool grows),
 * so CI runs without it. */
static int g_batched = 0, g_same_ttl = 0;
static proc g_p[MAX_P];
static int g_np;
static lease_state g_l[MAX_L];
static int g_violations, g_seed_violated;
static uint64_t g_seed;
static int64_t g_excused_until;  /* overlaps before this are a clock step's */
static int64_t g_slowest_recovery;
static uint64_t g_faults;
static uint64_t g_calls;  /* public calls timed against their bound */
static uint64_t g_slow_holder_pct;  /* this seed's share of slow on_holder calls */
static int g_calm;                  /* the faults have ended: callbacks are quick */

static void trace(const char *fmt, ...)
{
    va_list ap;

    if (!g_trace)
        return;
    printf("%10.3f ", sim_now() / 1000.0);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

static void violation(const char *fmt, ...)
{
    va_list ap;

    g_violations++;
    g_seed_violated = 1;
    printf("VIOLATION seed %" PRIu64 " at %.3f s: ", g_seed, sim_now() / 1000.0);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

/* Which process runs lease l's work, other than `except`; -1 none. */
static int other_running(int l, int except)
{
    int i;

    for (i = 0; i < g_np; i++)
        if (i != except && g_p[i].slots[l].running)
            return i;
    return -1;
}

/* A callback that overran what the contract gives it: an on_stopped past
 * its ttl - renew_deadline margin (now, or the last one), or an
 * on_started still running a renew deadline after it was called (the
 * on_stopped that the deadline brings waits for it to return).  A
 * successor may start meanwhile, by contract: the user's work did not
 * stop in time. */
static int overrunning(const slot *s)
{
    return s->overran ||
           (s->stopping && sim_now() - s->stop_began + s->frozen_ms + s->stop_late >=
                               g_l[s->lease].ttl - g_l[s->lease].rd) ||
           (s->starting && sim_now() - s->start_began >= g_l[s->lease].rd);
}

/* A callback of slot s begins or ends: its time is what a stop's bound
 * allows on top (a callback running on another thread). */
static void cb_enter(slot *s)
{
    s->cb_began = sim_now();
}

static void cb_leave(slot *s)
{
    s->cb_ms += sim_now() - s->cb_began;
    s->cb_began = -1;
    s->cb_ended = sim_now();
}

/* The part of [t0, now] that slot s spent in callbacks, from what was
 * noted at t0 (cb_ms0, cb_began0). */
static int64_t cb_overlap(const slot *s, int64_t t0, int64_t cb_ms0, int64_t cb_began0)
{
    int64_t now = sim_now(), t;

    if (cb_began0 >= 0 && s->cb_began == cb_began0)
        return now - t0; /* one callback the whole time */
    t = s->cb_ms - cb_ms0;
    if (cb_began0 >= 0)
        t -= t0 - cb_began0;
    if (s->cb_began >= 0)
        t += now - (s->cb_began > t0 ? s->cb_began : t0);
    return t;
}

/* How long process p was frozen between t0 and now. */
static int64_t frozen_since(const proc *p, int64_t t0)
{
    int64_t t = 0, now = sim_now();
    int k;

    for (k = 0; k < p->nfreeze; k++) {
        int64_t a = p->freeze_from[k] > t0 ? p->freeze_from[k] : t0;
        int64_t b = p->freeze_until[k] < now ? p->freeze_until[k] : now;
        if (b > a)
            t += b - a;
    }
    return t;
}

/* A public call of process p that began at t0 must have returned within
 * `bound` ms, plus `excuse` (callbacks it waited for, as documented) and
 * the time its process was frozen meanwhile. */
static void check_bound(const proc *p, const char *what, int64_t t0, int64_t bound,
                        int64_t excuse)
{
    int64_t frozen = frozen_since(p, t0);
    int64_t took = sim_now() - t0, allowed = bound + excuse + frozen;

    g_calls++;
    trace("p%d %s took %" PRId64 " ms", p->id, what, took);
    if (took > allowed)
        violation("p%d: %s took %" PRId64 " ms, past its bound of %" PRId64 " ms (%" PRId64
                  " + %" PRId64 " ms of callbacks + %" PRId64 " ms frozen)",
                  p->id, what, took, allowed, bound, excuse, frozen);
}

/* Work runs only within its proof + renew_deadline: an on_started must
 * come, and an on_stopped be called, by then (plus the time the process
 * was frozen since, and, for a stop, the callback of the lease it waited
 * behind: an on_started or on_holder that overran).  `what` names the
 * callback. */
static void check_proof(const slot *s, const char *what, int64_t token, int is_stop)
{
    const proc *p = &g_p[s->proc];
    int64_t rd = g_l[s->lease].rd, by;

    if (s->proof_token != token || s->proof_at <= 0) {
        violation("p%d lease-%d: %s with token %" PRId64 " that no statement proved", s->proc,
                  s->lease, what, token);
        return;
    }
    by = s->proof_at + rd;
    /* A stop due while every thread of the callback pool is inside a slow
     * callback of another lease waits up to POOL_STALL_MS for the pool
     * to grow (engine.h). */
    if (is_stop)
        by += POOL_STALL_MS;
    if (is_stop && s->cb_ended > by)
        by = s->cb_ended; /* on_stopped waited for the lease's callback before it */
    by += frozen_since(p, s->proof_at);
    if (sim_now() > by)
        violation("p%d lease-%d: %s (token %" PRId64 ") %" PRId64 " ms past its proof + "
                  "renew_deadline", s->proc, s->lease, what, token, sim_now() - by);
}

/* After every statement: a row whose version changed was written by it;
 * if it names a simulated process as owner, that statement, sent at
 * `sent_at`, is the owner's proof of holding with that token. */
static int row_seen(void *ud, int ncol, char **v, char **names)
{
    int64_t sent_at = *(const int64_t *)ud;
    int l, p;
    int64_t version;

    (void)names;
    if (ncol < 4 || v[0] == NULL || sscanf(v[0], "lease-%d", &l) != 1 || l < 0 || l >= g_leases)
        return 0;
    version = v[3] != NULL ? strtoll(v[3], NULL, 10) : 0;
    if (version == g_l[l].row_version)
        return 0;
    g_l[l].row_version = version;
    if (v[1] != NULL && sscanf(v[1], "p%d", &p) == 1 && p >= 0 && p < g_np) {
        slot *s = &g_p[p].slots[l];
        int64_t token = v[2] != NULL ? strtoll(v[2], NULL, 10) : 0;
        /* A statement abandoned by its caller may run after a later one
         * of the same hold: the latest sent is the proof. */
        if (token != s->proof_token || sent_at > s->proof_at)
            s->proof_at = sent_at;
        s->proof_token = token;
        trace("p%d lease-%d proof sent at %.3f", p, l, sent_at / 1000.0);
    }
    return 0;
}

static void after_statement(int64_t sent_at)
{
    simdb_rows("SELECT name, owner, token, version FROM " TABLE, row_seen, &sent_at);
}

static void on_started(void *ud, int64_t token)
{
    slot *s = ud;
    lease_state *ls = &g_l[s->lease];
    int o;
    int64_t d;

    cb_enter(s);
    trace("p%d lease-%d started token %" PRId64, s->proc, s->lease, token);
    if (s->running)
        violation("p%d lease-%d: on_started twice without on_stopped", s->proc, s->lease);
    o = other_running(s->lease, s->proc);
    if (o >= 0 && !overrunning(&g_p[o].slots[s->lease]) && sim_now() >= g_excused_until)
        violation("lease-%d: p%d starts (token %" PRId64 ") while p%d's work runs (token %"
                  PRId64 ")", s->lease, s->proc, token, o, g_p[o].slots[s->lease].token);
    if (token <= ls->last_token)
        violation("lease-%d: p%d starts with token %" PRId64 ", not above %" PRId64, s->lease,
                  s->proc, token, ls->last_token);
    ls->last_token = token;
    check_proof(s, "on_started", token, 0);
    s->running = 1;
    s->overran = 0;
    s->frozen_ms = 0;
    s->token = token;
    /* The work's start: mostly quick, now and then slow (a connection to
     * what the holder published, say). */
    d = sim_below(100) < 5 && !g_calm ? (int64_t)sim_below(6000) : (int64_t)sim_below(100);
    s->starting = 1;
    s->start_began = sim_now();
    sqle_sleep_ms(d);
    s->starting = 0;
    if (sim_now() - s->start_began >= ls->rd)
        s->overran = 1;
    cb_leave(s);
}

static void on_stopped(void *ud, int reason)
{
    slot *s = ud;
    lease_state *ls = &g_l[s->lease];
    int64_t margin = ls->ttl - ls->rd, d, t0;
    uint64_t r = sim_below(100);

    cb_enter(s);
    trace("p%d lease-%d stopping (reason %d)", s->proc, s->lease, reason);
    if (!s->running)
        violation("p%d lease-%d: on_stopped without on_started", s->proc, s->lease);
    if (s->running)
        check_proof(s, "on_stopped", s->token, 1);
    s->stopping = 1;
    s->stop_began = sim_now();
    s->stop_late = 0;
    if (s->running && s->proof_token == s->token && s->proof_at > 0 &&
        sim_now() > s->proof_at + ls->rd)
        s->stop_late = sim_now() - (s->proof_at + ls->rd);
    if (g_calm) {
        d = (int64_t)sim_below(100);
    } else if (r < 2) {
        /* Past its margin, which counts from the hold's deadline, a
         * little before this call: the user's work overruns from here. */
        d = margin + (int64_t)sim_below(2000);
        s->overran = 1;
    }
    else if (r < 15)
        d = (int64_t)sim_below((uint64_t)margin * 9 / 10); /* slow, within it */
    else
        d = (int64_t)sim_below(100);
    t0 = sim_now();
    sqle_sleep_ms(d);
    if (sim_now() - t0 >= margin)
        s->overran = 1;
    s->stopping = 0;
    s->running = 0;
    trace("p%d lease-%d stopped", s->proc, s->lease);
    cb_leave(s);
}

/* A follower's view of the holder: now and then slow (it connects to
 * the address the holder published, and that host just died). */
static void on_holder(void *ud, const char *owner, int64_t token, const char *data)
{
    slot *s = ud;

    (void)data;
    cb_enter(s);
    trace("p%d lease-%d sees holder '%s' token %" PRId64, s->proc, s->lease, owner, token);
    sqle_sleep_ms(sim_below(100) < g_slow_holder_pct && !g_calm ? (int64_t)sim_below(8000)
                                                                 : (int64_t)sim_below(20));
    cb_leave(s);
}

/* Whenever a call of a handle enters the database: a handle keeps at
 * most DB_MAX_ABANDONED connections stuck in the driver, and opens no
 * other while that many are (include/sqlease.h), so no more than that
 * many of its calls are ever in the database at once. */
static void on_driver(int family, int in_driver)
{
    if (in_driver > DB_MAX_ABANDONED)
        violation("p%d: %d calls of one handle (family %d) in the database at once, more "
                  "than the %d stuck connections a handle keeps", sim_process() - 1, in_driver,
                  family, DB_MAX_ABANDONED);
}

/* Each process's other caller of its handle, beside the supervisors'
 * runner: a public call now and then, timed against its bound (and
 * making the handle's queue hold more than one statement at times). */
static void prober(void *arg)
{
    proc *p = arg;
    sqlease_error err;
    int64_t now_ms, t0;

    sqle_mutex_lock(&p->m);
    while (!p->stopping) {
        sqle_cond_wait_until(&p->cv, &p->m, sqle_mono_ms() + 100 + (int64_t)sim_below(1500));
        if (p->stopping)
            break;
        sqle_mutex_unlock(&p->m);
        t0 = sim_now();
        (void)sqlease_db_now_ms(p->db, &now_ms, &err);
        check_bound(p, "sqlease_db_now_ms", t0, CALL_BOUND, 0);
        sqle_mutex_lock(&p->m);
    }
    sqle_mutex_unlock(&p->m);
}

/* Every statement, before it runs: a release of a hold whose on_stopped
 * still runs is a violation (the row must stay that hold until the work
 * stopped). */
static void on_statement(const char *sql, const db_bind *binds, size_t n)
{
    size_t i, j, k;

    if (g_trace) {
        char b[200];
        size_t m = 0;
        b[0] = '\0';
        for (i = 0; i < n && m < sizeof b - 40; i++) {
            if (binds[i].type == DB_INT64)
                m += (size_t)snprintf(b + m, sizeof b - m, " %" PRId64, binds[i].i);
            else
                m += (size_t)snprintf(b + m, sizeof b - m, " %.20s",
                                      binds[i].s != NULL ? binds[i].s : "NULL");
        }
        trace("[p%d] sql %.40s |%s", sim_process() - 1, sql, b);
    }
    if (strstr(sql, "min_hold") == NULL && strstr(sql, "acquired_at_ms + ?") == NULL)
        return;
    for (i = 0; i < n; i++) {
        int p, l;
        if (binds[i].type != DB_TEXT || binds[i].s == NULL || sscanf(binds[i].s, "p%d", &p) != 1)
            continue;
        for (j = 0; j < n; j++) {
            if (binds[j].type != DB_TEXT || binds[j].s == NULL ||
                sscanf(binds[j].s, "lease-%d", &l) != 1 || p < 0 || p >= g_np || l < 0 ||
                l >= g_leases)
                continue;
            for (k = 0; k < n; k++)
                if (binds[k].type == DB_INT64 && g_p[p].slots[l].running &&
                    binds[k].i == g_p[p].slots[l].token)
                    violation("p%d lease-%d: release of token %" PRId64 " sent while its "
                              "%s", p, l, binds[k].i,
                              g_p[p].slots[l].stopping ? "on_stopped runs"
                                                       : "work runs (before on_stopped)");
        }
    }
}

static void quiet_log(void *ud, int level, const char *line)
{
    (void)ud;
    if (g_trace)
        trace("log %d %s", level, line);
}

/* Start process i: its handle, then a supervisor per lease. */
static void proc_start(int i)
{
    proc *p = &g_p[i];
    sqlease_db_options dbo;
    sqlease_options opts[MAX_L];
    const sqlease_options *opt_ptrs[MAX_L];
    char names[MAX_L][16];
    int rcs[MAX_L];
    sqlease_error err;
    int l, rc;

    sim_set_process(i + 1);
    memset(p, 0, sizeof *p);
    p->id = i;
    snprintf(p->owner, sizeof p->owner, "p%d", i);
    sqlease_db_options_init(&dbo);
    dbo.query_timeout_ms = 1000;
    dbo.login_timeout_ms = 1000;
    dbo.log = quiet_log;
    dbo.log_level = g_trace ? SQLEASE_LOG_DEBUG : SQLEASE_LOG_WARN;
    /* As `supervise` does, an open that fails is tried again. */
    while ((rc = sqle_db_wrap(&p->db, &simdb_ops, simdb_proto(), "sim", &dbo, &err)) !=
           SQLEASE_OK) {
        trace("p%d could not open: %s", i, err.message);
        sqle_sleep_ms(300);
    }
    p->live = 1;
    for (l = 0; l < g_leases; l++)
        p->slots[l].cb_began = -1;
    for (l = 0; l < g_leases; l++) {
        sqlease_options o;
        char *name = names[l];

        snprintf(name, sizeof names[l], "lease-%d", l);
        sqlease_options_init(&o);
        o.table = TABLE;
        o.name = name;
        o.owner = p->owner;
        o.ttl_ms = g_l[l].ttl;
        o.heartbeat_ms = g_l[l].hb;
        o.renew_deadline_ms = g_l[l].rd;
        o.retry_ms = RETRY_MS;
        o.on_started = on_started;
        o.on_stopped = on_stopped;
        o.on_holder = on_holder;
        o.take_by_expiry = g_by_expiry;
        p->slots[l].proc = i;
        p->slots[l].lease = l;
        o.userdata = &p->slots[l];
        if (g_batched) {
            opts[l] = o;
            opt_ptrs[l] = &opts[l];
            continue;
        }
        rc = sqlease_supervisor_start(&p->sup[l], p->db, &o, &err);
        trace("p%d lease-%d supervisor start: %d %s", i, l, rc, rc ? err.message : "");
        if (rc != SQLEASE_OK)
            p->sup[l] = NULL;
    }
    if (g_batched) {
        rc = sqlease_supervisor_start_each(p->sup, (size_t)g_leases, p->db, opt_ptrs, rcs,
                                           &err);
        for (l = 0; l < g_leases; l++)
            trace("p%d lease-%d supervisor start_each: %d", i, l, rcs[l]);
    }
    sqle_mutex_init(&p->m);
    sqle_cond_init(&p->cv);
    p->has_prober = sqle_thread_start(&p->prober, prober, p) == 0;
    sim_set_process(0);
}

/* A crash: the process is gone, and so is its work. */
static void proc_crash(int i)
{
    int l;

    sim_crash(i + 1);
    g_p[i].live = 0;
    g_p[i].crashed = 1;
    for (l = 0; l < g_leases; l++) {
        g_p[i].slots[l].running = 0;
        g_p[i].slots[l].stopping = 0;
    }
    g_faults++;
    trace("p%d crashed", i);
}

/* A graceful stop (SIGTERM): each supervisor stopped, timed against the
 * stop's bound (the query timeout + 500 ms, plus what a callback running
 * on another thread takes), then freed (twice that after a stop that
 * timed out), then the handle closed. */
static void proc_stop(int i)
{
    proc *p = &g_p[i];
    int l;
    sqlease_error err;

    if (!p->live)
        return;
    sim_set_process(i + 1);
    trace("p%d stops", i);
    if (g_batched) {
        /* One call stops them all: each stop's bound, one after the
         * other at worst (each waits for its own statement in flight),
         * then the releases within one more. */
        int64_t t0 = sim_now(), c0[MAX_L], b0[MAX_L], excuse = 0;
        int rcs[MAX_L];

        for (l = 0; l < g_leases; l++) {
            c0[l] = p->slots[l].cb_ms;
            b0[l] = p->slots[l].cb_began;
        }
        sqlease_supervisor_stop_each(p->sup, (size_t)g_leases, rcs, &err);
        for (l = 0; l < g_leases; l++)
            excuse += cb_overlap(&p->slots[l], t0, c0[l], b0[l]);
        check_bound(p, "sqlease_supervisor_stop_each", t0,
                    (g_leases + 1) * (QT_MS + DB_SLACK_MS), excuse);
        for (l = 0; l < g_leases; l++) {
            slot *s = &p->slots[l];
            int64_t c1, b1;
            if (p->sup[l] == NULL)
                continue;
            t0 = sim_now();
            c1 = s->cb_ms;
            b1 = s->cb_began;
            sqlease_supervisor_free(p->sup[l]);
            check_bound(p, "sqlease_supervisor_free", t0,
                        rcs[l] == SQLEASE_ETIMEOUT ? 2 * (QT_MS + DB_SLACK_MS) + LOGIN_MS
                                                   : QT_MS + DB_SLACK_MS,
                        cb_overlap(s, t0, c1, b1));
            p->sup[l] = NULL;
        }
    }
    for (l = 0; l < g_leases; l++)
        if (p->sup[l] != NULL) {
            slot *s = &p->slots[l];
            int64_t t0 = sim_now(), c0 = s->cb_ms, b0 = s->cb_began;
            int rc = sqlease_supervisor_stop(p->sup[l], &err);

            check_bound(p, "sqlease_supervisor_stop", t0, QT_MS + DB_SLACK_MS,
                        cb_overlap(s, t0, c0, b0));
            t0 = sim_now();
            c0 = s->cb_ms;
            b0 = s->cb_began;
            sqlease_supervisor_free(p->sup[l]);
            check_bound(p, "sqlease_supervisor_free", t0,
                        rc == SQLEASE_ETIMEOUT ? 2 * (QT_MS + DB_SLACK_MS) + LOGIN_MS
                                               : QT_MS + DB_SLACK_MS,
                        cb_overlap(s, t0, c0, b0));
            p->sup[l] = NULL;
        }
    if (p->has_prober) {
        sqle_mutex_lock(&p->m);
        p->stopping = 1;
        sqle_cond_broadcast(&p->cv);
        sqle_mutex_unlock(&p->m);
        sqle_thread_join(&p->prober);
        p->has_prober = 0;
    }
    sqlease_db_close(g_p[i].db);
    g_p[i].db = NULL;
    g_p[i].live = 0;
    sim_set_process(0);
}

/* Whether every fault drawn has run its course: no process cut off or
 * frozen, no slow callback still running. */
static int faults_over(void)
{
    int i, l;

    for (i = 0; i < g_np; i++) {
        if (!g_p[i].live)
            continue;
        if (sim_now() < simdb_cut_until[i + 1])
            return 0;
        if (g_p[i].nfreeze > 0 && sim_now() < g_p[i].freeze_until[g_p[i].nfreeze - 1])
            return 0;
        for (l = 0; l < g_leases; l++)
            if (g_p[i].slots[l].cb_began >= 0)
                return 0;
    }
    return 1;
}

static int all_held(void)
{
    int l;

    for (l = 0; l < g_leases; l++)
        if (other_running(l, -1) < 0)
            return 0;
    return 1;
}

/* One seed's history, as the first coroutine. */
static void history(void *arg)
{
    int64_t end, calm_bound, t0;
    int i, l;

    (void)arg;
    for (l = 0; l < g_leases; l++) {
        g_l[l].ttl = g_same_ttl ? 3000 : 3000 + 1000 * l;
        g_l[l].hb = g_l[l].ttl / 4;
        g_l[l].rd = g_l[l].ttl / 2;
        g_l[l].last_token = 0;
        g_l[l].row_version = -1;
    }
    /* The table and its rows, before any fault. */
    {
        sqlease_db *db = NULL;
        sqlease_db_options dbo;
        sqlease_error err;
        const char *names[MAX_L];
        char nb[MAX_L][16];

        sqlease_db_options_init(&dbo);
        dbo.log = quiet_log;
        for (l = 0; l < g_leases; l++) {
            snprintf(nb[l], sizeof nb[l], "lease-%d", l);
            names[l] = nb[l];
        }
        if (sqle_db_wrap(&db, &simdb_ops, simdb_proto(), "sim", &dbo, &err) != SQLEASE_OK ||
            sqlease_migrate(db, TABLE, names, (size_t)g_leases, &err) != SQLEASE_OK) {
            violation("set-up failed: %s", err.message);
            sqlease_db_close(db);
            return;
        }
        sqlease_db_close(db);
    }
    g_slow_holder_pct = sim_below(16);
    simdb_cfg.latency_max_ms = 5;
    simdb_cfg.slow_permille = 20 + (int)sim_below(40);
    simdb_cfg.slow_max_ms = 2500;
    simdb_cfg.lost_before_permille = (int)sim_below(15);
    simdb_cfg.lost_after_permille = (int)sim_below(15);
    simdb_cfg.connect_fail_permille = (int)sim_below(100);

    g_np = g_procs;
    for (i = 0; i < g_procs; i++) {
        sqle_sleep_ms((int64_t)sim_below(2000));
        proc_start(i);
    }
    end = sim_now() + 30000;
    while (sim_now() < end) {
        uint64_t r;
        sqle_sleep_ms(500 + (int64_t)sim_below(3000));
        r = sim_below(100);
        if (r < 6 && g_np < MAX_P) {
            /* A crash, and a replacement a little later. */
            int v = (int)sim_below((uint64_t)g_np);
            if (g_p[v].live) {
                proc_crash(v);
                sqle_sleep_ms((int64_t)sim_below(3000));
                proc_start(g_np++);
            }
        } else if (r < 12) {
            int v = (int)sim_below((uint64_t)g_np);
            int64_t d = (int64_t)sim_below(900);
            if (g_p[v].live) {
                for (l = 0; l < g_leases; l++)
                    if (g_p[v].slots[l].running)
                        g_p[v].slots[l].frozen_ms += d;
                if (g_p[v].nfreeze < 64) {
                    g_p[v].freeze_from[g_p[v].nfreeze] = sim_now();
                    g_p[v].freeze_until[g_p[v].nfreeze++] = sim_now() + d;
                }
                sim_freeze(v + 1, sim_now() + d);
                g_faults++;
                trace("p%d frozen for %" PRId64 " ms", v, d);
            }
        } else if (r < 18) {
            /* A process cut off from the database for a while. */
            int v = (int)sim_below((uint64_t)g_np);
            int64_t d = 500 + (int64_t)sim_below(7000);
            if (g_p[v].live) {
                simdb_cut_until[v + 1] = sim_now() + d;
                g_faults++;
                trace("p%d cut off from the database for %" PRId64 " ms", v, d);
            }
        } else if (r < 20 && g_np < MAX_P) {
            /* A graceful stop, and a replacement a little later. */
            int v = (int)sim_below((uint64_t)g_np);
            if (g_p[v].live) {
                proc_stop(v);
                sqle_sleep_ms((int64_t)sim_below(3000));
                proc_start(g_np++);
            }
        } else if (r < 22 && g_clock_steps) {
            int64_t s = 1000 * (int64_t)(1 + sim_below(30));
            if (sim_below(2) == 0)
                s = -s;
            simdb_clock_step_ms += s;
            g_faults++;
            /* An overlap a forward step causes in who cannot watch is
             * documented; the followers here all watch, so none is
             * excused: this stays 0. */
            trace("the database clock steps %" PRId64 " ms", s);
        }
    }
    /* Calm: no more faults.  They end as drawn (a cut, a freeze, a slow
     * callback already running); from then on every lease is held again
     * within ttl + 2 x retry (a waiting follower watches the row for a
     * ttl from its first read of it) + a call's bound. */
    memset(&simdb_cfg, 0, sizeof simdb_cfg);
    g_calm = 1;
    while (!faults_over())
        sqle_sleep_ms(10);
    calm_bound = g_l[g_leases - 1].ttl + 2 * RETRY_MS + CALL_BOUND;
    t0 = sim_now();
    while (!all_held() && sim_now() - t0 < calm_bound)
        sqle_sleep_ms(50);
    if (!all_held())
        violation("not every lease held %" PRId64 " ms after the faults ended", calm_bound);
    else if (sim_now() - t0 > g_slowest_recovery)
        g_slowest_recovery = sim_now() - t0;
    trace("calm: held after %" PRId64 " ms", sim_now() - t0);
    for (i = 0; i < g_np; i++)
        proc_stop(i);
}

/* A seed's budget: far above what any history takes (a history of 30 s
 * of faults, its calm and its stops), so that only one that runs away
 * (a loop that never waits, a stop that never returns) reaches it. */
#define STEP_BUDGET 5000000
#define TIME_BUDGET_MS 300000

static int one_seed(uint64_t seed)
{
    int rc;

    g_seed = seed;
    g_batched = seed % 2 == 0;
    g_seed_violated = 0;
    g_np = 0;
    g_excused_until = 0;
    g_calm = 0;
    memset(g_p, 0, sizeof g_p);
    memset(&simdb_cfg, 0, sizeof simdb_cfg);
    simdb_clock_step_ms = 0;
    sim_reset();
    sim_seed(seed);
    if (simdb_open() != 0) {
        fprintf(stderr, "sqlease-sim: cannot open SQLite\n");
        exit(2);
    }
    sim_budget(STEP_BUDGET, SIM_T0 + TIME_BUDGET_MS);
    rc = sim_run(history, NULL);
    if (rc == -2)
        violation("the history ran away: %" PRIu64 " scheduling points, %.3f s of virtual "
                  "time, past the budget of %" PRIu64 " and %d s",
                  sim_steps(), (sim_now() - SIM_T0) / 1000.0, (uint64_t)STEP_BUDGET,
                  TIME_BUDGET_MS / 1000);
    else if (rc != 0 && !g_seed_violated)
        violation("every coroutine waits for ever (a deadlock)");
    simdb_close();
    return g_seed_violated;
}

static void usage(void)
{
    fprintf(stderr, "usage: sqlease-sim --seeds N [--from S] [--processes P] [--leases L] "
                    "[--clock-steps [--by-expiry]] [--same-ttl] [--plant NAME] [--first] | "
                    "--replay SEED | --list-plants\n");
    exit(64);
}

int main(int argc, char **argv)
{
    uint64_t from = 1, n = 100, s;
    int replay = 0, first = 0, list_plants = 0, i;
    int64_t sim_ms = 0;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc)
            n = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--from") == 0 && i + 1 < argc)
            from = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--processes") == 0 && i + 1 < argc)
            g_procs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--leases") == 0 && i + 1 < argc)
            g_leases = atoi(argv[++i]);
        else if (strcmp(argv[i], "--clock-steps") == 0)
            g_clock_steps = 1;
        else if (strcmp(argv[i], "--first") == 0)
            first = 1;
        else if (strcmp(argv[i], "--by-expiry") == 0)
            g_by_expiry = 1;
        else if (strcmp(argv[i], "--same-ttl") == 0)
            g_same_ttl = 1;
        else if (strcmp(argv[i], "--plant") == 0 && i + 1 < argc)
            sqle_plant = argv[++i];
        else if (strcmp(argv[i], "--list-plants") == 0)
            list_plants = 1;
        else if (strcmp(argv[i], "--replay") == 0 && i + 1 < argc) {
            from = strtoull(argv[++i], NULL, 10);
            n = 1;
            replay = 1;
        } else
            usage();
    }
    if (g_procs < 1 || g_procs > 16 || g_leases < 1 || g_leases > MAX_L || n == 0)
        usage();
    {
        const char *names[256];
        size_t k, np = sim_plants(names, 256);
        int known = sqle_plant == NULL;

        for (k = 0; k < np && k < 256; k++) {
            if (list_plants)
                printf("%s\n", names[k]);
            if (sqle_plant != NULL && strcmp(names[k], sqle_plant) == 0)
                known = 1;
        }
        if (list_plants)
            return 0;
        if (!known) {
            fprintf(stderr, "sqlease-sim: no plant '%s' (--list-plants lists them)\n",
                    sqle_plant);
            return 64;
        }
    }
    simdb_statement_hook = on_statement;
    simdb_driver_hook = on_driver;
    simdb_after_hook = after_statement;
    g_trace = replay;
    for (s = from; s < from + n; s++) {
        int bad = one_seed(s);
        sim_ms += sim_now() - SIM_T0;
        if (bad && first) {
            n = s - from + 1;
            break;
        }
    }
    if (sqle_plant != NULL)
        printf("plant %s reached %" PRIu64 " times\n", sqle_plant, sim_plant_reached());
    printf("%" PRIu64 " seeds (from %" PRIu64 "), %.0f simulated s, %" PRIu64 " statements, %"
           PRIu64 " faults, %d violations, slowest recovery %.1f s\n",
           n, from, sim_ms / 1000.0, simdb_count.statements,
           g_faults + simdb_count.slow + simdb_count.lost + simdb_count.connect_failed,
           g_violations, g_slowest_recovery / 1000.0);
    return g_violations > 0 ? 1 : 0;
}
