/*
 * sim.c -- sqlease-sim: the library's own engine, supervisor, group,
 * lease and statement code, run on the simulated platform
 * (src/platform/sim/) and the simulated database (simdb.c), under a seed.
 *
 *   sqlease-sim --seeds N [--from S] [--processes P] [--leases L]
 *               [--scenario mix|plain|same-ttl|mixed|group|sched|handoff]
 *               [--table made|hand]
 *               [--clock-steps [--by-expiry]] [--plant NAME] [--first]
 *   sqlease-sim --replay SEED [the same options]
 *   sqlease-sim --list-plants
 *
 * Each seed is one history: P processes (each its own handle) start at
 * random moments and contend for L leases of one table for 30 s of
 * virtual time while the seed injects faults, then the faults stop and
 * run their course (the calm), then every process stops.  The scenario
 * is the seed's (--scenario forces one), by its last digit:
 *   0-3  plain: a supervisor per lease, the leases' ttls differ;
 *   4    sched: every process runs a scheduler (sqle_sched) of four
 *        jobs over one lease, each job's missed, abandoned and overlap
 *        policy drawn, its fires' work ending, failing, overrunning its
 *        next fires and stopped with the hold; the operator prunes the
 *        ledger now and then;
 *   5-6  same-ttl: every lease one ttl, so that renews, takes and
 *        releases go batched (renew_each, take_each, release_each);
 *   7-8  mixed: each process runs each lease with a timing of its own
 *        (ttl 2, 3, 5 or 12 s, heartbeat a fifth to a third of it,
 *        renew deadline a half to two thirds), holders and followers of
 *        one lease differing;
 *   9    group: every process joins one group over 8 leases
 *        (sqlease_group_start, slack 0 or 1 by the seed's tens).
 * and, only when asked (--scenario handoff; ci/sim.sh runs it apart):
 *        handoff: as same-ttl, every supervisor a ready follower
 *        (sqlease_options.handoff) of its process's priority (0, 1 or 2),
 *        preempt_after 4 s; besides the faults, a holder is asked to hand
 *        over (sqlease_supervisor_handoff) to the best ready follower, to
 *        another process or to an owner id no process has, an operator's
 *        request is withdrawn (`transfer --timeout`), a graceful stop
 *        hands over, and in the calm lease 0's holder hands it to a dead
 *        target.
 * The holder history is on but in a seventh of the seeds (its table
 * missing in a few of the others), the operator reading and pruning it;
 * the hand-over's seeds too (a hold handed over ends 'handed_over').
 * Even seeds start and stop a process's supervisors with start_each and
 * stop_each; a seed divisible by 3 runs on a table made by hand without
 * NOT NULL, as an older installation may have (--table made|hand forces
 * one).
 *
 * The faults: latency and slow answers (a row lock waited for, an answer
 * past the query timeout), connections lost before a statement or after
 * it committed, refused connects, a process cut off from the database
 * for up to 7.5 s, processes that crash (replaced, half the time by one
 * with the same owner id: a restarted host) or stop gracefully
 * (replaced), freeze for less than ttl - renew_deadline, or start with a
 * live process's owner id (two overlapping runs of one host; not in a
 * group, whose workers are told apart by owner id), callbacks that take
 * long (on_started up to 6 s, on_holder up to 8 s, on_stopped mostly
 * within its ttl - renew_deadline margin, now and then past it), and an
 * operator who forces a release (sqlease_lease_release_force), deletes a
 * row and migrates it back (a new token from the clock; not with clock
 * steps), migrates while the fleet runs, and on a table made by hand
 * sets an owner, token (not with clock steps), version or expiry to
 * NULL; with --clock-steps
 * the database's clock steps 1 to 30 s forward or back, about twice a
 * seed (with --by-expiry, the followers' old rule of taking by the
 * database's expiry alone, which such steps catch).  Beside the leases,
 * each process makes a public call now and then on its handle.
 *
 * Checked at every statement: what it is (kinds.c: the text against the
 * sqlite row's generated statements) and every row it changed (rows.c:
 * the table before and after):
 *   - a renew or release changes only rows whose (name, owner, token)
 *     was one it bound; a take only rows whose (name, token) it bound
 *     (take_watched and take_each: and version), the expiry take only a
 *     row free or expired by the database's clock; a forced release only
 *     from the operator; a seed only inserts; fill_nulls only rows with
 *     a NULL, a follower's repair only the row it names, with a NULL; a
 *     text the simulator does not know changes nothing; a request, its
 *     withdrawal and a hand-over only the hold they bind;
 *   - no take takes a row a hand-over reserved for another owner before
 *     the reservation's end, by the database's clock;
 *   - a ready follower asks another's hold to hand over only at a
 *     strictly higher priority, and only once that hold has lasted
 *     preempt_after by the database's clock;
 *   - every statement that changes a row changes its version (as a
 *     follower reads it, a NULL as 0), and no token goes back;
 *   - no release of a hold is sent while that hold's work runs (before
 *     or during its on_stopped);
 *   - no handle has more calls in the database at once than the 4 stuck
 *     connections it may keep (DB_MAX_ABANDONED);
 *   - a statement of the fire ledger or the holder history changes only
 *     rows it is entitled to (ledger.c: the rows it names, before and
 *     after; the database's count of rows changed says it touched no
 *     other): a claim or a record inserts a fire's first row only under a
 *     live hold it names, once the fire is due; a rerun takes back an
 *     abandoned attempt it names; an end ends the running attempt it
 *     names; an abandon marks older tokens' running rows; a prune deletes
 *     ended rows of its window but each job's latest; a hold's row is
 *     written by its take, its end once and saying what happened to it
 *     (released, deadline, lost, expired by its taker, forced), never
 *     after the next hold's start.
 * Checked at every callback:
 *   - one lease's work never runs in two processes at once (work runs
 *     from on_started to the return of on_stopped, or to a crash); an
 *     on_stopped that overran its margin excuses the overlap it caused,
 *     and so does a hold whose row the operator took away (before or
 *     after it started) until its next renew says it is gone;
 *   - work runs only within its proof + renew_deadline: on_started comes,
 *     and on_stopped is called, by the time the latest statement that
 *     wrote the row for that process's owner id and that token was sent
 *     + renew_deadline (+ POOL_STALL_MS for a stop, + the time the
 *     process was frozen); proofs are kept per process, lease and token;
 *   - a hold a renew's answer said was gone (0 rows: expired, taken,
 *     forced, deleted) has its on_stopped called at once once that answer
 *     reached the library (within its call's bound: a lone renew's call
 *     goes on with a read and maybe a take, by its bound; a batched
 *     renew's misses are read once more, as the lone renew's are, to
 *     tell a hold asked to hand over from a lost one, by that read's
 *     bound), + POOL_STALL_MS;
 *   - on_started and on_stopped alternate per supervisor, and each
 *     start's token is above every earlier start's of that lease;
 *   - every public call returns within its documented bound (the query
 *     timeout + 500 ms, with the login timeout when it connects; stop,
 *     free, stop_each and group_stop as sqlease.h says), plus what the
 *     lease's callbacks took meanwhile and the time the process was
 *     frozen;
 *   - a scheduler's fire starts at most once (at least once: once more
 *     per abandoned attempt, up to max_attempts), never while another
 *     hold's work still runs (as for a lease), with its ledger row running
 *     under its own claim; a 'once' catch-up runs one fire, a 'skip' none.
 * Checked in the calm:
 *   - every lease is held again within the ttl of its last holder as
 *     that holder ran it (a watching follower's wait; none for a row left
 *     free) + 2 x retry + query timeout + 500 ms + login timeout of the
 *     later of the faults' end and the row's last change (a group's, a
 *     ttl and two retries more: a dead worker's presence is watched out;
 *     with clock steps, + what the clock stepped back: a follower that
 *     first read a dead holder's row after a step back waits for its
 *     expiry, which the step pushed out; after a hand-over, + its
 *     reservation: a row handed to a dead target is free again, and
 *     taken by a live process, within that);
 *   - every live supervisor (a group: its reads of the table) keeps
 *     sending statements, at least every heartbeat or retry + a call's
 *     bound;
 *   - a group's shares settle: after GROUP_SETTLE_MS each live worker
 *     holds within one of its fair share, floor(N / W) - 1 to
 *     ceil(N / W) + 1;
 *   - every fire due while a scheduler held (from each job's first row
 *     to a takeover's time before the end) has a row in the ledger, but
 *     those the scheduler logged it left (a failed read at takeover, a
 *     failed record).
 * At the end: no ledger row is left running but one whose holder died
 * with it or whose end failed, and no two holds' intervals in the
 * history overlap (by the database's clock, less its steps back).
 * And every seed has a budget of scheduling points and virtual time: one
 * that runs away is a violation, not a hang.  Prints one line per
 * violation (with its seed), then what ran by kind (statements by what
 * they are, and events: 0-row answers, stops after a gone hold, clock
 * steps, migrations, reseeds, forced releases, NULLs set and repaired,
 * twins, owner ids reused, group starts and moves, ...; ci/sim.sh fails
 * when one is 0), then a summary; exits 1 if any violation.  --replay
 * SEED prints that seed's trace: the same bytes every time.  --first
 * stops after the first seed with a violation.
 *
 * Planted bugs: --plant NAME runs the library with one bug put back
 * (SQLE_PLANTED(NAME), src/internal.h: true only then and only in this
 * build), to show that the simulator finds it; --list-plants lists them,
 * and ci/sim.sh checks that each is found within its seed budget.  A new
 * concurrent capability comes with its plant: one line where its bug
 * would be, `if (SQLE_PLANTED(name_of_the_bug)) ...` or `... ||
 * SQLE_PLANTED(name)`, named for what goes wrong, and nothing else
 * (the list is made from the uses).  A template's bug is planted here,
 * in plant_text, into the text the database runs.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cronexpr.h"
#include "db.h"
#include "engine.h"
#include "fire.h"
#include "history.h"
#include "internal.h"
#include "kinds.h"
#include "ledger.h"
#include "platform.h"
#include "rows.h"
#include "scheduler.h"
#include "sim.h"
#include "simdb.h"
#include "sqlease.h"

#define MAX_P 48
#define MAX_L 8
#define GROUP_N 8        /* a group's leases */
#define TABLE "sim_lease"
#define FIRE_TABLE "sim_fire"
#define HOLD_TABLE "sim_hold"
#define MAX_PROOFS 8

/* The handles' timeouts, and the bound a call that sends statements is
 * given (include/sqlease.h: query timeout + 500 ms, plus the login
 * timeout when it must connect first). */
#define QT_MS 1000
#define LOGIN_MS 1000
#define CALL_BOUND (QT_MS + DB_SLACK_MS + LOGIN_MS)
#define RETRY_MS 300
/* The handoff scenario's: a ready follower of higher priority asks a
 * holder that has held this long (the database's clock); a hand-over
 * reserves the row for 3 retries (the default). */
#define PREEMPT_MS 4000
#define RESERVE_MS (3 * RETRY_MS)

/* How long a group's shares take to settle once the faults have ended:
 * a dead worker's presence is watched out (a ttl and a read), a share
 * above target + slack is given back on the second read above it, and
 * what it gives back is taken at the next read. */
#define GROUP_SETTLE_MS 9000
/* How long a scheduler's seed stays calm at least: a takeover (a ttl and
 * a read), its catch-up, and fires after it, which must all be claimed. */
#define SCHED_CALM_MS 12000

typedef struct timing {
    int64_t ttl, hb, rd;
} timing;

typedef struct proof {
    int64_t token, at;
} proof;

typedef struct slot {
    int proc, lease;
    timing t;            /* this process's timing of the lease */
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
    /* Its proofs of holding, per token (a re-take's must not replace the
     * one an earlier hold's on_stopped is still checked against): when
     * the latest statement that wrote the row with this process's owner
     * id and that token was sent. */
    proof proofs[MAX_PROOFS];
    int next_proof;
    int64_t revoked;     /* an operator took the row of this hold away (a
                            forced release, a row deleted, a NULL owner):
                            its token, or -1 */
    int64_t last_sent;   /* its process's latest statement naming the lease */
    /* A renew's answer that reached the library said the hold with
     * gone_token is gone: on_stopped is due by gone_by (+ the pool's
     * stall), at once. */
    int64_t gone_token;
    int64_t gone_by;
} slot;

typedef struct proc {
    int id;
    int live;            /* started and not crashed */
    int crashed;
    sqlease_db *db;
    sqlease_supervisor *sup[MAX_L];
    sqlease_group *grp;
    slot slots[MAX_L];
    char owner[16];
    int64_t priority;    /* its supervisors' (the handoff scenario) */
    int64_t freeze_from[64], freeze_until[64];  /* its freezes */
    int nfreeze;
    int64_t last_list;   /* a group's latest read of the table */
    sqle_mutex m;        /* the prober's wait */
    sqle_cond cv;
    int stopping;        /* the prober ends */
    sqle_thread prober;
    int has_prober;
    int stopping_gracefully; /* inside proc_stop */
    /* A scheduler's process (--scenario sched): the scheduler, the
     * thread that ends its fires' work and reports each (sqle_sched_done,
     * never from on_fire), and the stop of its hold's work as the harness
     * saw it begin: the hold (token), when its first on_stop came, how
     * late that was past the hold's deadline, and whether the stops ran
     * past the ttl - renew_deadline margin. */
    sqle_sched *sched;
    sqle_thread worker;
    int has_worker;
    int worker_stop;
    sqle_cond wcv;
    int64_t hstop_token, hstop_began, hstop_late;
    int hstop_overran;
} proc;

typedef struct lease_state {
    int64_t last_token;
    int64_t written_at;  /* the row's last change */
    int64_t writer_ttl;  /* the ttl of the row's holder, as the process whose
                            take wrote it ran it; 0 when the row is free */
    int last_starter;    /* process of the latest on_started, -1 none */
    int not_held_reported;
    int64_t revoked[8];  /* tokens of holds an operator took the row from */
    int next_revoked;
    /* The row's last change was a hand-over that reserved it (the
     * reservation's length, ms; 0: it was not) for `reserved_for`, whom
     * no live process was when it was written (dead_target). */
    int64_t reserve_ms;
    char reserved_for[16];
    int dead_target;
} lease_state;

enum scenario {
    SC_MIX = -1, SC_PLAIN, SC_SAME_TTL, SC_MIXED, SC_GROUP, SC_SCHED, SC_HANDOFF, SC_COUNT
};
static const char *const g_scenario_names[SC_COUNT] = {"plain", "same-ttl", "mixed", "group",
                                                       "sched", "handoff"};

/* What a history did, beside its statements: the summary counts each,
 * so that a path that never ran shows 0 (ci/sim.sh fails on one). */
enum event {
    EV_ZERO_ROW, EV_GONE_STOP, EV_CLOCK_STEP, EV_MIGRATE, EV_RESEED, EV_FORCE, EV_NULL_SET,
    EV_NULL_REPAIR, EV_TWIN, EV_OWNER_REUSE, EV_GROUP_START, EV_GROUP_MOVE, EV_CRASH,
    EV_FREEZE, EV_CUT, EV_STOP, EV_MIXED_FLEET,
    /* a scheduler's fires: started, run again (attempt 2 or more), run late
     * by a takeover's catch-up, stopped by a newer fire (overlap replace),
     * stopped with the hold or a shutdown; ledger rows recorded skipped
     * and missed, marked abandoned */
    EV_FIRE_RUN, EV_FIRE_RERUN, EV_FIRE_CATCH_UP, EV_FIRE_REPLACED, EV_FIRE_STOPPED,
    EV_FIRE_SKIPPED, EV_FIRE_MISSED, EV_FIRE_ABANDONED,
    /* the holder history's ends, by how, as written */
    EV_END_RELEASED, EV_END_EXPIRED, EV_END_LOST, EV_END_DEADLINE, EV_END_FORCED,
    EV_END_HANDED_OVER,
    /* the hand-over's: a holder asked, a hold handed over, one to a dead
     * target, a preemption asked */
    EV_HANDOFF_ASK, EV_HANDED, EV_DEAD_TARGET, EV_PREEMPT,
    EV_COUNT
};
static const char *const g_event_names[EV_COUNT] = {
    "zero_row", "gone_stop", "clock_step", "migrate", "reseed", "force_release", "null_set",
    "null_repair", "twin", "owner_reuse", "group_start", "group_move", "crash", "freeze",
    "cut", "graceful_stop", "mixed_fleet",
    "fire_run", "fire_rerun", "fire_catch_up", "fire_replaced", "fire_stopped",
    "fire_skipped", "fire_missed", "fire_abandoned",
    "end_released", "end_expired", "end_lost", "end_deadline", "end_forced",
    "end_handed_over",
    "handoff_ask", "handed", "dead_target", "preempt",
};

static int g_procs = 3, g_leases = 2, g_clock_steps = 0, g_trace = 0, g_by_expiry = 0;
static int g_force_scenario = SC_MIX;
static int g_force_table = -1;      /* --table: 0 made by migrate, 1 by hand */
static int g_scenario, g_nl, g_hand_table, g_slack;
/* Even seeds: every process starts its supervisors with
 * sqlease_supervisor_start_each and stops them with
 * sqlease_supervisor_stop_each (the batched takes and releases); odd
 * seeds: each started and stopped on its own. */
static int g_batched;
static proc g_p[MAX_P];
static int g_np;
static lease_state g_l[MAX_L];
static int g_violations, g_seed_violated;
static uint64_t g_seed;
static int64_t g_slowest_recovery;
static uint64_t g_faults;
static uint64_t g_calls;            /* public calls timed against their bound */
static uint64_t g_slow_holder_pct;  /* this seed's share of slow on_holder calls */
static int g_calm;                  /* the faults have ended: callbacks are quick */
static int64_t g_stepped_back;      /* the database's clock's steps back, summed */
static int64_t g_stepped_fwd;       /* and forward */
static sqlease_db *g_admin;         /* the operator's handle, in process 0 */
static uint64_t g_kinds[SK_COUNT], g_events[EV_COUNT];
static char g_names[MAX_L][24]; /* "lease-%d" of any int */

/* The holder history this seed (most seeds: on), and whether its table
 * is there (a few seeds: the fleet has not migrated it; every history
 * statement fails, once per handle, and the leases go on). */
static int g_history, g_history_table;

/* What the harness saw of one hold, a lease's token, from the lease
 * table's changes and the callbacks: what the history's row of it must
 * say. */
typedef struct hold_seen {
    int64_t token;
    char owner[16];
    int proc;               /* the process whose take made it */
    int64_t acquired_at;    /* the take's database clock (acquired_at_ms) */
    int64_t took_at;        /* virtual ms of the take */
    int64_t next_start;     /* the database clock of the next take of the row; 0 none yet */
    int64_t next_took_at;   /* and its virtual ms */
    int next_proc;          /* and its process */
    int64_t expires_taken;  /* the row's expiry when that take found it held */
    int taken_over;         /* that take found the row with this hold's owner */
    int released;           /* its holder's release freed the row (single or batched) */
    int released_single;    /* ... by a single release (the supervisor's give-up) */
    int released_stopping;  /* ... while its process stopped gracefully */
    int released_calm;      /* ... in the calm, the faults over */
    int forced;             /* the operator forced a release of the row from it */
    int handed;             /* its holder's hand-over reserved the row for another */
    int lost;               /* its holder's renew found it gone */
    int refused;            /* ... because the row, still this hold's, carried a
                               request to hand it over */
    int request_read;       /* and its process then read the row and saw that
                               request: not lost, whatever the renew said */
    int stop_reason;        /* its work's on_stopped reason; 0 none, -1 unknown
                               (a scheduler's hold: its callbacks are the scheduler's) */
    int row;                /* the history has written a row of it */
    int64_t end_written;    /* virtual ms its end was written; 0 none */
} hold_seen;

/* The database clock's steps back: when (virtual ms) and how far. */
#define MAX_STEPS 256
static int64_t g_step_at[MAX_STEPS], g_step_ms[MAX_STEPS];
static int g_nsteps;
/* ... and its steps forward. */
static int64_t g_fstep_at[MAX_STEPS], g_fstep_ms[MAX_STEPS];
static int g_nfsteps;

/* A scheduler's jobs (--scenario sched): the fleet's one list, drawn per
 * seed, and the harness's own reading of each expression. */
#define MAX_JOBS 4
typedef struct job_cfg {
    char name[16];
    const char *schedule;
    int missed, abandoned, overlap, max_attempts;
    sqle_cron *cron;
    int64_t *seen;          /* every fire_at_ms the ledger ever had a row of */
    size_t nseen, cap;
    /* The job's latest row when the database's clock last stepped back:
     * the fires up to it that come due again are behind the ledger's
     * latest, where a takeover's catch-up starts, and a holder that dies
     * before it reaches them leaves them without a row (the catch-up
     * runs forward from the latest row, never back). */
    int64_t back_hw;
} job_cfg;
static job_cfg g_jobs[MAX_JOBS];
static int g_njobs;

/* One start of a fire's work, as on_fire gave it, and what became of it. */
typedef struct run_rec {
    int proc, job;
    uint64_t id;
    int64_t fire_at, token;
    int attempt, catch_up;
    int64_t started, ends_at;  /* virtual ms: on_fire, and when its work ends by itself */
    int running;               /* from on_fire to its end, its on_stop's return or a crash */
    int stopping;              /* inside on_stop */
    int stop_reason;
    int failed;                /* its work's exit status says it failed */
    int reported;              /* sqle_sched_done was called for it */
    int crashed;
} run_rec;
static run_rec *g_runs;
static size_t g_nruns, g_cap_runs;

/* Fires the scheduler said it left without a row: a takeover whose read
 * of the ledger failed ("missed and abandoned fires are left as they
 * are") leaves those due up to then; a record of a fire that failed
 * leaves that one (its job, its instant as the log writes it). */
static int64_t g_left_before;
#define MAX_LEFT 256
static char g_left[MAX_LEFT][96];
static int g_nleft;
/* Ends of fires that did not reach the ledger (their statement never
 * ran, or matched nothing): a running row of one is no inconsistency. */
#define MAX_UNENDED 512
static struct { int job; int64_t fire_at, token, attempt; } g_unended[MAX_UNENDED];
static int g_nunended;
/* The database's clock when the calm began (the fires due from then on
 * are claimed on time). */
static int64_t g_calm_db;
/* And when the processes began to stop (fires due after it may wait for
 * a holder that is not stopping). */
static int64_t g_stop_db;

static void trace(const char *fmt, ...) SQLEASE_PRINTF(1, 2);
static void unended(const sim_stmt *st);
static void violation(const char *fmt, ...) SQLEASE_PRINTF(1, 2);

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

static int lease_of(const char *name)
{
    int l;

    if (name == NULL || sscanf(name, "lease-%d", &l) != 1 || l < 0 || l >= g_nl)
        return -1;
    return l;
}

/* The harness's process of a simulated one (process 0 is the history's
 * and the operator's): -1 for the operator. */
static int proc_of(int simproc)
{
    return simproc >= 1 && simproc <= g_np ? simproc - 1 : -1;
}

static int64_t max_ttl(int l)
{
    int64_t t = 0;
    int i;

    for (i = 0; i < g_np; i++)
        if (g_p[i].slots[l].t.ttl > t)
            t = g_p[i].slots[l].t.ttl;
    return t > 0 ? t : 3000;
}

/* ------------------------------------------------------------------ */
/* Holds, as the harness saw them                                       */
/* ------------------------------------------------------------------ */

/* Every lease name the history may have rows of: the leases (lease-N,
 * their index), then the others as they come (a group's presence rows). */
#define MAX_NAMES 64
static char g_xnames[MAX_NAMES][72];
static int g_nxnames;

static int name_index(const char *name)
{
    int l = lease_of(name), i;

    if (l >= 0)
        return l;
    if (name == NULL)
        return -1;
    for (i = MAX_L; i < MAX_L + g_nxnames; i++)
        if (strcmp(g_xnames[i - MAX_L], name) == 0)
            return i;
    if (MAX_L + g_nxnames >= MAX_NAMES)
        return -1;
    snprintf(g_xnames[g_nxnames], sizeof g_xnames[g_nxnames], "%s", name);
    return MAX_L + g_nxnames++;
}

static hold_seen *g_hholds[MAX_NAMES];
static size_t g_hn[MAX_NAMES], g_hcap[MAX_NAMES];

static hold_seen *hold_find(int x, int64_t token)
{
    size_t i;

    if (x < 0 || x >= MAX_NAMES)
        return NULL;
    for (i = g_hn[x]; i-- > 0;)
        if (g_hholds[x][i].token == token)
            return &g_hholds[x][i];
    return NULL;
}

/* The record of hold (x, token), made if new.  Invalidates the pointers
 * hold_find gave before. */
static hold_seen *hold_add(int x, int64_t token)
{
    hold_seen *h = hold_find(x, token);

    if (h != NULL || x < 0 || x >= MAX_NAMES)
        return h;
    if (g_hn[x] == g_hcap[x]) {
        size_t cap = g_hcap[x] ? 2 * g_hcap[x] : 32;
        hold_seen *v = realloc(g_hholds[x], cap * sizeof *v);
        if (v == NULL)
            return NULL;
        g_hholds[x] = v;
        g_hcap[x] = cap;
    }
    h = &g_hholds[x][g_hn[x]++];
    memset(h, 0, sizeof *h);
    h->token = token;
    h->proc = -1;
    return h;
}

/* When the operator deleted lease l's row or set its token NULL
 * (virtual ms): a holder's end written after that cannot read the next
 * hold's start from it (no row, or no token one above the hold's). */
#define MAX_DELETES 16
static int64_t g_deleted_at[MAX_L][MAX_DELETES];
static int g_ndeleted[MAX_L];

static int deleted_between(int x, int64_t t0, int64_t t1)
{
    int k;

    for (k = 0; x >= 0 && x < MAX_L && k < g_ndeleted[x]; k++)
        if (g_deleted_at[x][k] >= t0 && g_deleted_at[x][k] <= t1)
            return 1;
    return 0;
}

/* The sum of the steps (at[k], ms[k]) made between virtual times t0 and
 * t1. */
static int64_t steps_between(const int64_t *at, const int64_t *ms, int n, int64_t t0, int64_t t1)
{
    int64_t t = 0;
    int k;

    for (k = 0; k < n; k++)
        if (at[k] >= t0 && at[k] <= t1)
            t += ms[k];
    return t;
}

/* What the database's clock stepped back between virtual times t0 and
 * t1: a time it read at t1 may be that much below one it read at t0. */
static int64_t stepped_back_between(int64_t t0, int64_t t1)
{
    return steps_between(g_step_at, g_step_ms, g_nsteps, t0, t1);
}

/* What it stepped forward between t0 and t1: a hold live at t0 may have
 * expired by t1 sooner than its ttl. */
static int64_t stepped_fwd_between(int64_t t0, int64_t t1)
{
    return steps_between(g_fstep_at, g_fstep_ms, g_nfsteps, t0, t1);
}

/* ------------------------------------------------------------------ */
/* Proofs, callbacks' time, freezes                                    */
/* ------------------------------------------------------------------ */

static void proof_add(slot *s, int64_t token, int64_t at)
{
    int k;

    for (k = 0; k < MAX_PROOFS; k++)
        if (s->proofs[k].at > 0 && s->proofs[k].token == token) {
            /* A statement abandoned by its caller may run after a later
             * one of the same hold: the latest sent is the proof. */
            if (at > s->proofs[k].at)
                s->proofs[k].at = at;
            return;
        }
    s->proofs[s->next_proof].token = token;
    s->proofs[s->next_proof].at = at;
    s->next_proof = (s->next_proof + 1) % MAX_PROOFS;
}

static int64_t proof_of(const slot *s, int64_t token)
{
    int k;

    for (k = 0; k < MAX_PROOFS; k++)
        if (s->proofs[k].at > 0 && s->proofs[k].token == token)
            return s->proofs[k].at;
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
           (s->stopping &&
            sim_now() - s->stop_began + s->frozen_ms + s->stop_late >= s->t.ttl - s->t.rd) ||
           (s->starting && sim_now() - s->start_began >= s->t.rd);
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

/* How long process p was frozen between t0 and t1. */
static int64_t frozen_between(const proc *p, int64_t t0, int64_t t1)
{
    int64_t t = 0;
    int k;

    for (k = 0; k < p->nfreeze; k++) {
        int64_t a = p->freeze_from[k] > t0 ? p->freeze_from[k] : t0;
        int64_t b = p->freeze_until[k] < t1 ? p->freeze_until[k] : t1;
        if (b > a)
            t += b - a;
    }
    return t;
}

static int64_t frozen_since(const proc *p, int64_t t0)
{
    return frozen_between(p, t0, sim_now());
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
    int64_t at = proof_of(s, token), by;

    if (at < 0) {
        violation("p%d lease-%d: %s with token %" PRId64 " that no statement proved", s->proc,
                  s->lease, what, token);
        return;
    }
    by = at + s->t.rd;
    /* A stop due while every thread of the callback pool is inside a slow
     * callback of another lease waits up to POOL_STALL_MS for the pool
     * to grow (engine.h). */
    if (is_stop)
        by += POOL_STALL_MS;
    if (is_stop && s->cb_ended > by)
        by = s->cb_ended; /* on_stopped waited for the lease's callback before it */
    by += frozen_since(p, at);
    if (sim_now() > by)
        violation("p%d lease-%d: %s (token %" PRId64 ") %" PRId64 " ms past its proof + "
                  "renew_deadline", s->proc, s->lease, what, token, sim_now() - by);
}

/* When a hold a renew's answer said was gone must have had on_stopped
 * called: at once, but for the pool's stall, a callback of the lease
 * ahead of it, and the time the process was frozen. */
static int64_t gone_due(const slot *s)
{
    int64_t by = s->gone_by + POOL_STALL_MS;

    if (s->cb_ended > by)
        by = s->cb_ended;
    return by + frozen_since(&g_p[s->proc], s->gone_by - CALL_BOUND);
}

/* The gone check, for every hold still running (between callbacks). */
static void sweep(void)
{
    int i, l;

    for (i = 0; i < g_np; i++) {
        if (!g_p[i].live)
            continue;
        for (l = 0; l < g_nl; l++) {
            slot *s = &g_p[i].slots[l];
            if (s->gone_token < 0 || !s->running || s->token != s->gone_token ||
                s->cb_began >= 0)
                continue;
            if (sim_now() > gone_due(s)) {
                violation("p%d lease-%d: the hold with token %" PRId64 " still runs %" PRId64
                          " ms after the answer that said it is gone", i, l, s->token,
                          sim_now() - s->gone_by);
                s->gone_token = -1;
            }
        }
    }
}

/* ------------------------------------------------------------------ */
/* What each statement may change                                      */
/* ------------------------------------------------------------------ */

/* The statement between its before and after hooks (it runs atomically
 * between them): what it is, and who sent it. */
static sim_stmt g_st;
static int g_st_proc;
static simdb_call *g_st_call;
static uint64_t g_st_changed;  /* leases whose rows it changed */
static uint64_t g_st_changed_n; /* names (name_index) whose rows it changed */
static int64_t g_st_rows;       /* rows of the lease table it changed */

static int same_text(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* Whether the statement binds the hold (name, owner, token) the row had. */
static int binds_hold(const sim_row *o)
{
    size_t i;

    for (i = 0; i < g_st.nkeys; i++) {
        const sim_key *k = &g_st.keys[i];
        if (same_text(k->name, o->name) && same_text(k->owner, o->owner) && k->has_token &&
            !o->token_null && k->token == o->token)
            return 1;
    }
    return 0;
}

/* Whether it binds the row as read: (name, token[, version]). */
static int binds_read(const sim_row *o, int with_version)
{
    size_t i;

    for (i = 0; i < g_st.nkeys; i++) {
        const sim_key *k = &g_st.keys[i];
        if (same_text(k->name, o->name) && k->has_token && !o->token_null &&
            k->token == o->token &&
            (!with_version || (k->has_version && !o->version_null && k->version == o->version)))
            return 1;
    }
    return 0;
}

static int binds_name(const char *name)
{
    size_t i;

    for (i = 0; i < g_st.nkeys; i++)
        if (same_text(g_st.keys[i].name, name))
            return 1;
    return 0;
}

static int row_free(const sim_row *r)
{
    return r->owner == NULL || r->owner[0] == '\0';
}

static const char *who(int p, char *buf, size_t cap)
{
    if (p < 0)
        snprintf(buf, cap, "the operator");
    else
        snprintf(buf, cap, "p%d", p);
    return buf;
}

/* An operator took lease l's row away from the hold with `token` (a
 * forced release, the row deleted, a NULL owner): its work stops at its
 * next renew's answer (the gone check), and a start that overlaps it
 * meanwhile is no overlap of the library's making, nor is its own start
 * if the take that proved it ran before the operator and its answer
 * after. */
static void revoke(int l, int64_t token)
{
    lease_state *ls = &g_l[l];
    int i;

    ls->revoked[ls->next_revoked] = token;
    ls->next_revoked = (ls->next_revoked + 1) % 8;
    for (i = 0; i < g_np; i++) {
        slot *s = &g_p[i].slots[l];
        if (s->running && s->token == token)
            s->revoked = s->token;
    }
}

static int revoked(int l, int64_t token)
{
    int k;

    for (k = 0; k < 8; k++)
        if (g_l[l].revoked[k] == token && token != 0)
            return 1;
    return 0;
}

/* Revoke whatever hold lease l's row has now, before an operator's
 * change by hand. */
static void revoke_row(int l)
{
    const sim_row *r = rows_get(g_names[l]);

    if (r != NULL && !r->token_null)
        revoke(l, r->token);
}

/* What the holder history must say of the holds a lease row's change
 * made and ended: a take's new hold (its owner, its start), the hold it
 * took over (when the next one started, and whether that take found it
 * held), a release by the holder, the operator's forced release. */
static void note_hold(int p, sim_kind k, const sim_row *o, const sim_row *n)
{
    int x = name_index(n->name);
    hold_seen *h;

    if (x < 0 || x >= 64)
        return;
    g_st_changed_n |= UINT64_C(1) << x;
    if ((k == SK_ACQUIRE || k == SK_TAKE_WATCHED || k == SK_TAKE_EACH) && p >= 0 &&
        !n->token_null && !row_free(n) && (o->token_null || n->token != o->token)) {
        if (!o->token_null && (h = hold_find(x, o->token)) != NULL) {
            h->next_start = n->acquired_at_ms;
            h->next_took_at = sim_now();
            h->next_proc = p;
            if (!row_free(o)) {
                h->taken_over = 1;
                h->expires_taken = o->expires_null ? 0 : o->expires_at_ms;
            }
        }
        h = hold_add(x, n->token);
        if (h != NULL) {
            snprintf(h->owner, sizeof h->owner, "%s", n->owner);
            h->proc = p;
            h->acquired_at = n->acquired_at_ms;
            h->took_at = sim_now();
            h->stop_reason = g_scenario == SC_SCHED && x == 0 ? -1 : 0;
        }
    } else if ((k == SK_RELEASE || k == SK_RELEASE_EACH) && p >= 0 && !o->token_null &&
               (h = hold_find(x, o->token)) != NULL) {
        h->released = 1;
        h->released_single |= k == SK_RELEASE;
        h->released_stopping |= g_p[p].stopping_gracefully;
        h->released_calm |= g_calm;
    } else if (k == SK_RELEASE_FORCE && !o->token_null && (h = hold_find(x, o->token)) != NULL) {
        h->forced = 1;
    } else if (k == SK_HANDOFF && p >= 0 && !o->token_null &&
               (h = hold_find(x, o->token)) != NULL) {
        h->handed = 1;
    }
}

/* Whether a live process has this owner id. */
static int live_owner(const char *owner)
{
    int i;

    for (i = 0; i < g_np; i++)
        if (g_p[i].live && same_text(g_p[i].owner, owner))
            return 1;
    return 0;
}

/* A request process p sent on lease l's row `o`: one for itself (its
 * own owner id the target) against another's hold is a preemption,
 * which only a ready follower of strictly higher priority sends, and
 * only once that hold has lasted PREEMPT_MS by the database's clock.
 * (A holder's request on its own hold is sqlease_supervisor_handoff's.) */
static void check_preempt(int p, int l, const sim_row *o)
{
    const char *me = g_p[p].owner;
    int64_t held;

    if (g_st.target == NULL || !same_text(g_st.target, me) || same_text(o->owner, me))
        return;
    g_events[EV_PREEMPT]++;
    held = o->acquired_null ? -1 : simdb_now_ms() - o->acquired_at_ms;
    if (g_p[p].priority <= o->priority)
        violation("p%d (priority %" PRId64 ") asked lease-%d's holder %s (priority %" PRId64
                  ") to hand over: only a higher priority may", p, g_p[p].priority, l,
                  o->owner != NULL ? o->owner : "NULL", o->priority);
    if (held < PREEMPT_MS - 1)
        violation("p%d asked lease-%d's holder %s to hand over after %" PRId64 " ms of its "
                  "hold, under preempt_after (%d ms)", p, l,
                  o->owner != NULL ? o->owner : "NULL", held, PREEMPT_MS);
}

/* One row the statement changed: may it, and what does it prove? */
static void on_change(void *ud, const sim_row *o, const sim_row *n)
{
    int p = g_st_proc, l;
    sim_kind k = g_st.kind;
    char by[24];
    const char *name = n != NULL ? n->name : o->name;
    int ok;

    (void)ud;
    g_st_rows++;
    l = lease_of(name);
    who(p, by, sizeof by);
    if (n == NULL) {
        violation("%s's %s deleted row %s", by, kinds_name(k), name);
        return;
    }
    if (o == NULL) {
        if ((k != SK_SEED && k != SK_SEED_EACH) || !binds_name(name))
            violation("%s's %s inserted row %s", by, kinds_name(k), name);
        if (l >= 0) {
            g_l[l].written_at = sim_now();
            g_l[l].writer_ttl = 0;
        }
        return;
    }
    /* A row a hand-over reserved is refused to every owner but its
     * target until the reservation's end, by the database's clock. */
    if ((k == SK_ACQUIRE || k == SK_TAKE_WATCHED || k == SK_TAKE_EACH) && row_free(o) &&
        o->handoff_to != NULL && o->handoff_to[0] != '\0' && !o->expires_null &&
        o->expires_at_ms > simdb_now_ms() + 1 && !same_text(n->owner, o->handoff_to))
        violation("%s's %s took row %s, reserved for %s for %" PRId64 " ms more", by,
                  kinds_name(k), name, o->handoff_to, o->expires_at_ms - simdb_now_ms());
    switch (k) {
    case SK_RENEW:
    case SK_RENEW_EACH:
    case SK_RELEASE:
    case SK_RELEASE_EACH:
    case SK_HANDOFF_CANCEL:
        ok = binds_hold(o);
        break;
    case SK_HANDOFF_REQUEST:
        ok = binds_hold(o);
        if (ok && p >= 0)
            check_preempt(p, l, o);
        break;
    case SK_HANDOFF:
        ok = binds_hold(o);
        if (ok && l >= 0) {
            g_events[EV_HANDED]++;
            g_l[l].reserve_ms = RESERVE_MS;
            snprintf(g_l[l].reserved_for, sizeof g_l[l].reserved_for, "%s",
                     n->handoff_to != NULL ? n->handoff_to : "");
            g_l[l].dead_target = !live_owner(g_l[l].reserved_for);
            if (g_l[l].dead_target)
                g_events[EV_DEAD_TARGET]++;
            trace("lease-%d handed over to %s%s", l, g_l[l].reserved_for,
                  g_l[l].dead_target ? " (no live process)" : "");
        }
        break;
    case SK_ACQUIRE:
        /* A NULL expiry or owner is free; the clock's expression rounds,
         * hence the millisecond. */
        ok = binds_read(o, 0) &&
             (row_free(o) || o->expires_null || o->expires_at_ms <= simdb_now_ms() + 1);
        break;
    case SK_TAKE_WATCHED:
    case SK_TAKE_EACH:
        ok = binds_read(o, 1);
        break;
    case SK_RELEASE_FORCE:
        ok = p < 0; /* only the operator forces a release here */
        if (ok && l >= 0 && !o->token_null)
            revoke(l, o->token);
        break;
    case SK_FILL_NULLS:
    case SK_REPAIR:
        /* Only a row with a NULL, and (a follower's repair) only the row
         * it names. */
        ok = (o->owner == NULL || o->token_null || o->version_null || o->expires_null ||
              o->acquired_null) &&
             (k == SK_FILL_NULLS || binds_name(o->name));
        g_events[EV_NULL_REPAIR]++;
        break;
    default:
        ok = 0; /* a seed that changed a row it found, a read, an unknown text */
        break;
    }
    if (!ok)
        violation("%s's %s changed row %s, which it is not entitled to (it was owner %s, "
                  "token %" PRId64 "%s, version %" PRId64 "%s, expires %" PRId64 "%s; the "
                  "database's clock %" PRId64 ")",
                  by, kinds_name(k), name, o->owner != NULL ? o->owner : "NULL", o->token,
                  o->token_null ? " (NULL)" : "", o->version, o->version_null ? " (NULL)" : "",
                  o->expires_at_ms, o->expires_null ? " (NULL)" : "", simdb_now_ms());
    /* Every write bumps the version, as a watching follower reads it (a
     * NULL reads as 0): a row changed under the same version looks
     * unchanged to the watch, which then takes a live hold. */
    if ((n->version_null ? 0 : n->version) == (o->version_null ? 0 : o->version))
        violation("%s's %s changed row %s without changing its version (%" PRId64 "%s)", by,
                  kinds_name(k), name, o->version, o->version_null ? ", NULL" : "");
    if (!o->token_null && (n->token_null || n->token < o->token))
        violation("%s's %s took row %s's token back from %" PRId64 " to %" PRId64 "%s", by,
                  kinds_name(k), name, o->token, n->token, n->token_null ? " (NULL)" : "");
    note_hold(p, k, o, n);
    if (l < 0)
        return;
    g_st_changed |= UINT64_C(1) << l;
    g_l[l].written_at = sim_now();
    if (k != SK_HANDOFF)
        g_l[l].reserve_ms = 0;
    /* A repair, a renew or migrate's filling in keeps the holder. */
    if (row_free(n))
        g_l[l].writer_ttl = 0;
    else if ((k == SK_ACQUIRE || k == SK_TAKE_WATCHED || k == SK_TAKE_EACH) && p >= 0)
        g_l[l].writer_ttl = g_p[p].slots[l].t.ttl;
    else if (g_l[l].writer_ttl == 0)
        g_l[l].writer_ttl = max_ttl(l);
    if (kinds_proves(k) && p >= 0 && !n->token_null && same_text(n->owner, g_p[p].owner)) {
        proof_add(&g_p[p].slots[l], n->token, g_st_call->began);
        trace("p%d lease-%d proof sent at %.3f", p, l, g_st_call->began / 1000.0);
    }
}

/* A template's bug planted into what the database runs (the dialect
 * table is data, not C: its plants are here, where the text is read). */
static char *plant_text(const char *sql, sim_kind k)
{
    char *s = NULL, *t;

    if (k == SK_RENEW && SQLE_PLANTED(renew_ignores_token))
        s = kinds_swap(sql, "AND token = ?", "AND ? IS NOT NULL");
    if (k == SK_RENEW_EACH && SQLE_PLANTED(renew_ignores_token))
        s = kinds_swap(sql, "(name, owner, token) IN (SELECT name, owner, token FROM h)",
                       "(name, owner) IN (SELECT name, owner FROM h)");
    if ((k == SK_RENEW || k == SK_RENEW_EACH) && SQLE_PLANTED(renew_keeps_version))
        s = kinds_swap(sql, "version = COALESCE(version, ", "version = COALESCE(version - 1, ");
    /* A claim of a fire fenced by the owner alone: an older hold of the
     * same owner (a process that lost its hold and took the row again)
     * claims under the newer one's token. */
    if (k == SK_FIRE_CLAIM && SQLE_PLANTED(fire_claim_unfenced))
        s = kinds_swap(sql, "AND token = ? AND expires_at_ms >",
                       "AND ? IS NOT NULL AND expires_at_ms >");
    /* A reservation that never ends: a row handed to a target that is
     * gone is refused to everyone for good. */
    if ((k == SK_ACQUIRE || k == SK_TAKE_WATCHED || k == SK_TAKE_EACH) &&
        SQLE_PLANTED(handoff_reservation_never_ends))
        s = kinds_swap(sql, "OR handoff_to = ? OR expires_at_ms <= ",
                       "OR handoff_to = ? OR 0 AND expires_at_ms <= ");
    if (k == SK_SEED_EACH && SQLE_PLANTED(seed_replaces_row) &&
        (t = kinds_swap(sql, "INSERT INTO", "INSERT OR REPLACE INTO")) != NULL) {
        s = kinds_swap(t, " ON CONFLICT (name) DO NOTHING", "");
        free(t);
    }
    return s;
}

/* ------------------------------------------------------------------ */
/* The fire ledger and the holder history: what each statement may change */
/* ------------------------------------------------------------------ */

/* An SQL literal of text s (quotes doubled) appended to b. */
static void lit(char *b, size_t cap, size_t *m, const char *v)
{
    size_t i;

    if (*m + 3 >= cap)
        return;
    b[(*m)++] = '\'';
    for (i = 0; v != NULL && v[i] != '\0' && *m + 3 < cap; i++) {
        if (v[i] == '\'')
            b[(*m)++] = '\'';
        b[(*m)++] = v[i];
    }
    b[(*m)++] = '\'';
    b[*m] = '\0';
}

static void put(char *b, size_t cap, size_t *m, const char *fmt, ...) SQLEASE_PRINTF(4, 5);

static void put(char *b, size_t cap, size_t *m, const char *fmt, ...)
{
    va_list ap;
    int k;

    if (*m >= cap)
        return;
    va_start(ap, fmt);
    k = vsnprintf(b + *m, cap - *m, fmt, ap);
    va_end(ap);
    if (k > 0)
        *m = *m + (size_t)k < cap ? *m + (size_t)k : cap - 1;
}

/* Before a statement of the ledger or the history: read the rows it
 * names (a fire, a hold, every hold of a batch; a lease name's rows for
 * the statements that match by more than a key: abandon, force, prune). */
static void side_before(void)
{
    sim_table t = kinds_table(g_st.kind);
    const sim_key *k = g_st.nkeys > 0 ? &g_st.keys[0] : NULL;
    size_t cap = 128 + 96 * (g_st.nkeys + 1), m = 0, i;
    char *w;

    if (t != ST_FIRE && t != ST_HOLD)
        return;
    w = malloc(cap);
    if (w == NULL)
        return;
    w[0] = '\0';
    if (k == NULL || k->name == NULL) {
        put(w, cap, &m, "0");
    } else if (g_st.kind == SK_FIRE_ABANDON || g_st.kind == SK_FIRE_PRUNE ||
               g_st.kind == SK_HOLD_FORCE || g_st.kind == SK_HOLD_PRUNE) {
        put(w, cap, &m, "name = ");
        lit(w, cap, &m, k->name);
    } else if (t == ST_FIRE) {
        put(w, cap, &m, "name = ");
        lit(w, cap, &m, k->name);
        put(w, cap, &m, " AND job = ");
        lit(w, cap, &m, k->job);
        put(w, cap, &m, " AND fire_at_ms = %" PRId64, k->fire_at_ms);
    } else {
        put(w, cap, &m, "(name, token) IN (VALUES ");
        for (i = 0; i < g_st.nkeys; i++) {
            put(w, cap, &m, "%s(", i > 0 ? ", " : "");
            lit(w, cap, &m, g_st.keys[i].name);
            put(w, cap, &m, ", %" PRId64 ")", g_st.keys[i].token);
        }
        put(w, cap, &m, ")");
    }
    ledger_before(t, w);
    free(w);
}

static int job_index(const char *name)
{
    int j;

    for (j = 0; j < g_njobs; j++)
        if (strcmp(g_jobs[j].name, name) == 0)
            return j;
    return -1;
}

static void seen_add(int j, int64_t f)
{
    job_cfg *jc = &g_jobs[j];

    if (jc->nseen == jc->cap) {
        size_t cap = jc->cap ? 2 * jc->cap : 64;
        int64_t *v = realloc(jc->seen, cap * sizeof *v);
        if (v == NULL)
            return;
        jc->seen = v;
        jc->cap = cap;
    }
    jc->seen[jc->nseen++] = f;
}

static int64_t seen_max(int j)
{
    int64_t mx = -1;
    size_t i;

    for (i = 0; i < g_jobs[j].nseen; i++)
        if (g_jobs[j].seen[i] > mx)
            mx = g_jobs[j].seen[i];
    return mx;
}

/* Whether the hold (owner, token) of lease row `name` is live by the
 * database's clock now (the statement's {now}, to the millisecond its
 * expression rounds). */
static int hold_live(const char *name, const char *owner, int64_t token)
{
    const sim_row *r = rows_get(name);

    return r != NULL && same_text(r->owner, owner) && !r->token_null && r->token == token &&
           !r->expires_null && r->expires_at_ms > simdb_now_ms() - 1;
}

/* A row of the fire ledger the statement changed: the claim and the
 * record insert a fire's first row only while the claimant's hold is
 * live and the fire is due; a rerun takes an abandoned attempt it names,
 * under a live hold; an end ends the running claim it names; an abandon
 * marks running rows of older tokens, under a live hold; a prune deletes
 * ended rows of its window but each job's latest.  No attempt above the
 * job's most. */
static void on_fire_change(const side_row *o, const side_row *n)
{
    const side_row *r = n != NULL ? n : o;
    const sim_key *key = g_st.nkeys > 0 ? &g_st.keys[0] : NULL;
    sim_kind k = g_st.kind;
    int j = job_index(r->job), ok = 0, live = 0;
    int64_t now = simdb_now_ms();
    char by[24];

    who(g_st_proc, by, sizeof by);
    if (key != NULL && key->owner != NULL)
        live = hold_live(r->name, key->owner, key->token);
    switch (k) {
    case SK_FIRE_CLAIM:
    case SK_FIRE_RECORD:
        ok = o == NULL && n != NULL && live && n->fire_at_ms <= now + 1 &&
             strcmp(n->owner, key->owner) == 0 && n->token == key->token && n->attempt == 1 &&
             (k == SK_FIRE_CLAIM ? strcmp(n->state, "running") == 0
                                 : g_st.state != NULL && strcmp(n->state, g_st.state) == 0 &&
                                       strcmp(n->state, "running") != 0);
        break;
    case SK_FIRE_RECLAIM:
        ok = o != NULL && n != NULL && live && strcmp(o->state, "abandoned") == 0 &&
             key->has_attempt && o->attempt == key->attempt && strcmp(n->state, "running") == 0 &&
             n->attempt == o->attempt + 1 && n->token == key->token &&
             strcmp(n->owner, key->owner) == 0;
        break;
    case SK_FIRE_END:
        ok = o != NULL && n != NULL && strcmp(o->state, "running") == 0 && key != NULL &&
             o->token == key->token && key->has_attempt && o->attempt == key->attempt &&
             (strcmp(n->state, "done") == 0 || strcmp(n->state, "failed") == 0) &&
             n->token == o->token && n->attempt == o->attempt;
        break;
    case SK_FIRE_ABANDON:
        ok = o != NULL && n != NULL && live && strcmp(o->state, "running") == 0 &&
             o->token < key->token && strcmp(n->state, "abandoned") == 0 &&
             n->token == o->token && n->attempt == o->attempt;
        if (ok)
            g_events[EV_FIRE_ABANDONED]++;
        break;
    case SK_FIRE_PRUNE:
        ok = o != NULL && n == NULL && strcmp(o->state, "running") != 0 &&
             o->fire_at_ms >= g_st.since_ms && o->fire_at_ms < g_st.before_ms &&
             (j < 0 || o->fire_at_ms < seen_max(j));
        break;
    default:
        break;
    }
    if (!ok)
        violation("%s's %s changed fire %s %s at %" PRId64 " (%s, attempt %" PRId64 ", token %"
                  PRId64 " -> %s, attempt %" PRId64 ", token %" PRId64 " of %s), which it is not "
                  "entitled to (the hold it names %s live; the database's clock %" PRId64 ")",
                  by, kinds_name(k), r->name, r->job, r->fire_at_ms,
                  o != NULL ? o->state : "no row", o != NULL ? o->attempt : 0,
                  o != NULL ? o->token : 0, n != NULL ? n->state : "no row",
                  n != NULL ? n->attempt : 0, n != NULL ? n->token : 0,
                  n != NULL ? n->owner : "-", live ? "is" : "is not", now);
    if (n != NULL && j >= 0 && n->attempt > g_jobs[j].max_attempts)
        violation("fire %s at %" PRId64 " is at attempt %" PRId64 ", above its job's most (%d)",
                  r->job, r->fire_at_ms, n->attempt, g_jobs[j].max_attempts);
    if (n != NULL && o == NULL && j >= 0) {
        seen_add(j, n->fire_at_ms);
        if (strcmp(n->state, "skipped") == 0)
            g_events[EV_FIRE_SKIPPED]++;
        else if (strcmp(n->state, "missed") == 0)
            g_events[EV_FIRE_MISSED]++;
    }
}

/* How a hold's end, as written, may say it ended: what the harness saw
 * happen to it. */
static void check_end(int x, hold_seen *h, const side_row *n)
{
    sim_kind k = g_st.kind;
    int p = g_st_proc, ok = 0;
    const char *how = n->state;
    char by[24];
    int64_t excuse;

    who(p, by, sizeof by);
    if (strcmp(how, "expired") == 0) {
        /* The taker writes it, after its take moved the row past the hold
         * (its read showed the holder; the holder may have released in
         * between, which the taker cannot tell), at the expiry its read
         * showed, or that read's clock if earlier: never after the expiry
         * the row had when it was taken (a step back of the clock may
         * have lowered that expiry since the read). */
        ok = (k == SK_HOLD_EXPIRE || k == SK_HOLD_EXPIRE_EACH) && h->next_start != 0 &&
             p == h->next_proc && n->ended_at_ms == g_st.ended_at_ms;
        /* (A row whose expiry was NULL, an operator's, has none to
         * compare with: expires_taken 0.) */
        if (ok && h->taken_over && h->expires_taken > 0 && n->ended_at_ms > h->expires_taken &&
            stepped_back_between(h->took_at, sim_now()) == 0)
            violation("%s: the hold of %s with token %" PRId64 " ended 'expired' at %" PRId64
                      ", %" PRId64 " ms after the expiry its row had when it was taken", by,
                      n->name, n->token, n->ended_at_ms, n->ended_at_ms - h->expires_taken);
        g_events[EV_END_EXPIRED]++;
    } else if (strcmp(how, "released") == 0) {
        /* Its holder released it (a supervisor's stop, a group giving a
         * lease back: whatever stopped its work before). */
        ok = (k == SK_HOLD_END || k == SK_HOLD_END_EACH) && p == h->proc && h->released;
        g_events[EV_END_RELEASED]++;
    } else if (strcmp(how, "deadline") == 0) {
        /* Its supervisor gave it up, by a release of its own, past the
         * renew deadline that stopped its work (or too late to start it). */
        ok = k == SK_HOLD_END && p == h->proc && h->released_single &&
             (h->stop_reason <= 0 || h->stop_reason == SQLEASE_STOP_DEADLINE);
        g_events[EV_END_DEADLINE]++;
    } else if (strcmp(how, "lost") == 0) {
        /* Not a hold whose request its holder read, unless its work had
         * stopped by its deadline first (a stale hold hands nothing over:
         * it gives the hold up), or the database's clock stepped forward
         * during the hold: the asked hold may then expire, on that clock,
         * before its holder reads the request or hands it over, and an
         * expired hold is lost (the library's read calls a request on an
         * expired row a loss). */
        ok = (k == SK_HOLD_END || k == SK_HOLD_END_EACH) && p == h->proc && h->lost &&
             (!h->request_read || h->stop_reason == SQLEASE_STOP_DEADLINE ||
              stepped_fwd_between(h->took_at, sim_now()) > 0);
        g_events[EV_END_LOST]++;
    } else if (strcmp(how, "forced") == 0) {
        ok = k == SK_HOLD_FORCE && p < 0 && h->forced;
        g_events[EV_END_FORCED]++;
    } else if (strcmp(how, "handed_over") == 0) {
        /* Its holder handed it over (sqle_lease_handoff), the row
         * reserved for the target. */
        ok = (k == SK_HOLD_END || k == SK_HOLD_END_EACH) && p == h->proc && h->handed;
        g_events[EV_END_HANDED_OVER]++;
    }
    if (!ok)
        violation("%s's %s ended the hold of %s with token %" PRId64 " (%s's, taken by p%d) as "
                  "'%s', which is not what happened to it (released by its holder %d, by a "
                  "single release %d, while stopping %d; taken over %d by p%d; forced %d; "
                  "found gone by a renew %d; handed over %d; its work's stop reason %d)",
                  by, kinds_name(k), n->name, n->token, h->owner, h->proc, how, h->released,
                  h->released_single, h->released_stopping, h->next_start != 0, h->next_proc,
                  h->forced, h->lost, h->handed, h->stop_reason);
    excuse = stepped_back_between(h->took_at, sim_now());
    if (n->ended_at_ms < n->started_at_ms - excuse)
        violation("%s's %s ended the hold of %s with token %" PRId64 " at %" PRId64 ", before "
                  "it started (%" PRId64 ")", by, kinds_name(k), n->name, n->token,
                  n->ended_at_ms, n->started_at_ms);
    if (h->next_start != 0 && !deleted_between(x, h->next_took_at, sim_now()) &&
        n->ended_at_ms > h->next_start + stepped_back_between(h->took_at, sim_now()))
        violation("%s's %s ended the hold of %s with token %" PRId64 " ('%s') at %" PRId64
                  ", %" PRId64 " ms after the next hold started (the database's clock)", by,
                  kinds_name(k), n->name, n->token, how, n->ended_at_ms,
                  n->ended_at_ms - h->next_start);
    h->end_written = sim_now();
}

/* A row of the holder history the statement changed: a take's start
 * inserts the row of a hold a take just made (its owner, its start), an
 * end is written once and says what happened, a prune deletes ended
 * rows of its window; nothing else changes. */
static void on_hold_change(const side_row *o, const side_row *n)
{
    const side_row *r = n != NULL ? n : o;
    sim_kind k = g_st.kind;
    int x = name_index(r->name);
    hold_seen *h = hold_find(x, r->token);
    char by[24];

    who(g_st_proc, by, sizeof by);
    if (o != NULL && n != NULL && o->ended_at_ms != 0) {
        violation("%s's %s changed the history row of %s token %" PRId64 " after its end was "
                  "written ('%s' at %" PRId64 " -> '%s' at %" PRId64 "): an end is written once",
                  by, kinds_name(k), r->name, r->token, o->state, o->ended_at_ms, n->state,
                  n->ended_at_ms);
        return;
    }
    if (n == NULL) {
        if (k != SK_HOLD_PRUNE || o->ended_at_ms == 0 || o->started_at_ms < g_st.since_ms ||
            o->started_at_ms >= g_st.before_ms)
            violation("%s's %s deleted the history row of %s token %" PRId64 " (ended '%s' at %"
                      PRId64 ", started %" PRId64 ")", by, kinds_name(k), r->name, r->token,
                      o->state, o->ended_at_ms, o->started_at_ms);
        return;
    }
    if (o != NULL && (strcmp(o->owner, n->owner) != 0 || o->started_at_ms != n->started_at_ms)) {
        violation("%s's %s changed the owner or start of the history row of %s token %" PRId64,
                  by, kinds_name(k), r->name, r->token);
        return;
    }
    switch (k) {
    case SK_HOLD_START:
    case SK_HOLD_START_EACH:
        if (o != NULL || h == NULL) {
            violation("%s's %s wrote a history row of %s token %" PRId64 ", %s", by,
                      kinds_name(k), r->name, r->token,
                      o != NULL ? "which had one" : "a hold no take made");
            break;
        }
        if (h->row)
            violation("%s's %s wrote a second history row of %s token %" PRId64, by,
                      kinds_name(k), r->name, r->token);
        h->row = 1;
        if (strcmp(n->owner, h->owner) != 0 || n->started_at_ms != h->acquired_at ||
            n->ended_at_ms != 0)
            violation("%s's %s wrote the history row of %s token %" PRId64 " as owner %s, "
                      "started %" PRId64 ", ended %" PRId64 "; its take was %s's, at %" PRId64,
                      by, kinds_name(k), r->name, r->token, n->owner, n->started_at_ms,
                      n->ended_at_ms, h->owner, h->acquired_at);
        break;
    case SK_HOLD_EXPIRE:
    case SK_HOLD_EXPIRE_EACH:
    case SK_HOLD_END:
    case SK_HOLD_END_EACH:
    case SK_HOLD_FORCE:
        if (o == NULL || h == NULL || n->ended_at_ms == 0) {
            violation("%s's %s %s the history row of %s token %" PRId64, by, kinds_name(k),
                      o == NULL ? "inserted" : h == NULL ? "ended a hold no take made in"
                                                         : "wrote no end in",
                      r->name, r->token);
            break;
        }
        check_end(x, h, n);
        break;
    default:
        violation("%s's %s changed the history row of %s token %" PRId64, by, kinds_name(k),
                  r->name, r->token);
        break;
    }
}

static void on_side_change(void *ud, const side_row *o, const side_row *n)
{
    (void)ud;
    if (kinds_table(g_st.kind) == ST_FIRE)
        on_fire_change(o, n);
    else if (kinds_table(g_st.kind) == ST_HOLD)
        on_hold_change(o, n);
    else
        violation("a %s changed a row of the fire ledger or the history", kinds_name(g_st.kind));
}

static void before_statement(simdb_call *c)
{
    int p = proc_of(c->proc);
    size_t i;
    char *planted;

    kinds_parse(c->sql, c->binds, c->nbinds, &g_st);
    g_st_proc = p;
    g_st_call = c;
    g_st_changed = 0;
    g_st_changed_n = 0;
    g_st_rows = 0;
    g_kinds[g_st.kind]++;
    side_before();
    c->marks = 0;
    c->mark_kind = g_st.kind;
    if (g_trace) {
        char b[200];
        size_t m = 0;
        b[0] = '\0';
        for (i = 0; i < c->nbinds && m < sizeof b - 40; i++) {
            if (c->binds[i].type == DB_INT64)
                m += (size_t)snprintf(b + m, sizeof b - m, " %" PRId64, c->binds[i].i);
            else
                m += (size_t)snprintf(b + m, sizeof b - m, " %.20s",
                                      c->binds[i].s != NULL ? c->binds[i].s : "NULL");
        }
        trace("[p%d] %s |%s", p, kinds_name(g_st.kind), b);
    }
    planted = plant_text(c->sql, g_st.kind);
    if (planted != NULL)
        c->run_sql = planted;
    if (p < 0)
        return;
    for (i = 0; i < g_st.nkeys; i++) {
        int l = lease_of(g_st.keys[i].name);
        slot *s;
        if (l < 0)
            continue;
        s = &g_p[p].slots[l];
        s->last_sent = sim_now();
        /* No release of a hold while its work runs (before or during its
         * on_stopped): the row must stay that hold until the work
         * stopped. */
        if ((g_st.kind == SK_RELEASE || g_st.kind == SK_RELEASE_EACH) && s->running &&
            g_st.keys[i].has_token && g_st.keys[i].token == s->token)
            violation("p%d lease-%d: release of token %" PRId64 " sent while its %s", p, l,
                      s->token,
                      s->stopping ? "on_stopped runs" : "work runs (before on_stopped)");
    }
    if (g_st.kind == SK_LIST)
        g_p[p].last_list = sim_now();
}

static void after_statement(simdb_call *c)
{
    int p = g_st_proc;
    size_t i;

    if (c->rc == SQLEASE_OK && !kinds_reads(g_st.kind) && c->changed == 0)
        g_events[EV_ZERO_ROW]++;
    if (c->changed == 0)
        unended(&g_st);
    if (g_st.kind == SK_DDL) {
        (void)rows_sync(TABLE); /* a column added: compared from now on */
    } else if (c->changed > 0) {
        sim_table t = kinds_table(g_st.kind);
        int64_t found;

        if (kinds_reads(g_st.kind))
            violation("a %s changed %" PRId64 " rows", kinds_name(g_st.kind), c->changed);
        if (t == ST_FIRE || t == ST_HOLD) {
            found = ledger_after(on_side_change, NULL);
        } else {
            (void)rows_diff(TABLE, on_change, NULL);
            found = g_st_rows;
        }
        /* The database's count of the rows it changed, in any table:
         * each must be one of those it names. */
        if (found < c->changed)
            violation("%s's %s changed %" PRId64 " rows, %" PRId64 " of them outside what it "
                      "names (%s)", p < 0 ? "the operator" : "a process", kinds_name(g_st.kind),
                      c->changed, c->changed - found,
                      t == ST_FIRE ? "a fire" : t == ST_HOLD ? "a hold" : "lease rows");
    }
    /* A renew that found its hold gone (its row not changed): the hold's
     * end may be 'lost'.  Not one refused because the row, still that
     * hold's, carries a request to hand it over: that hold is not lost,
     * and its end is the hand-over's (or a release's, or 'expired'). */
    if (c->rc == SQLEASE_OK && (g_st.kind == SK_RENEW || g_st.kind == SK_RENEW_EACH)) {
        for (i = 0; i < g_st.nkeys; i++) {
            const sim_key *k = &g_st.keys[i];
            int x = name_index(k->name);
            const sim_row *r;
            hold_seen *h;
            if (x < 0 || x >= 64 || (g_st_changed_n >> x & 1) || !k->has_token)
                continue;
            r = rows_get(k->name);
            if ((h = hold_find(x, k->token)) == NULL)
                continue;
            h->lost = 1;
            if (r != NULL && !row_free(r) && !r->token_null && r->token == k->token &&
                r->handoff_to != NULL && r->handoff_to[0] != '\0' &&
                r->expires_at_ms > simdb_now_ms())
                h->refused = 1;
        }
    }
    /* Its holder's read of a row that shows the request that refused
     * its renew: once that answer reaches the library (on_answer), it
     * knows the hold is asked, not lost, and must not record it 'lost' (a
     * read whose answer is lost leaves it a loss). */
    if (p >= 0 && c->rc == SQLEASE_OK && (g_st.kind == SK_STATUS || g_st.kind == SK_STATUS_EACH)) {
        for (i = 0; i < g_st.nkeys; i++) {
            const sim_key *k = &g_st.keys[i];
            int x = name_index(k->name);
            const sim_row *r = rows_get(k->name);
            hold_seen *h;
            if (x < 0 || x >= SIMDB_MARKS || r == NULL || r->token_null ||
                r->handoff_to == NULL || r->handoff_to[0] == '\0' ||
                (h = hold_find(x, r->token)) == NULL)
                continue;
            if (h->proc == p && h->refused && h->end_written == 0) {
                c->marks |= UINT64_C(1) << x;
                c->mark_values[x] = r->token;
            }
        }
    }
    /* A renew whose row it did not change found the hold gone: a loss,
     * which stops the work as soon as the answer is in hand. */
    if (p >= 0 && c->rc == SQLEASE_OK &&
        (g_st.kind == SK_RENEW || g_st.kind == SK_RENEW_EACH)) {
        for (i = 0; i < g_st.nkeys; i++) {
            const sim_key *k = &g_st.keys[i];
            int l = lease_of(k->name);
            const slot *s;
            if (l < 0 || l >= SIMDB_MARKS || (g_st_changed >> l & 1))
                continue;
            s = &g_p[p].slots[l];
            if (s->running && k->has_token && k->token == s->token &&
                same_text(k->owner, g_p[p].owner)) {
                c->marks |= UINT64_C(1) << l;
                c->mark_values[l] = s->token;
            }
        }
    }
}

/* An end of a fire that did not reach the ledger: its row may stay
 * 'running' with nothing running (a later holder marks it abandoned). */
static void unended(const sim_stmt *st)
{
    const sim_key *k = st->nkeys > 0 ? &st->keys[0] : NULL;
    int j;

    if (st->kind != SK_FIRE_END || k == NULL || k->job == NULL || g_nunended >= MAX_UNENDED ||
        (j = job_index(k->job)) < 0)
        return;
    g_unended[g_nunended].job = j;
    g_unended[g_nunended].fire_at = k->fire_at_ms;
    g_unended[g_nunended].token = k->token;
    g_unended[g_nunended++].attempt = k->attempt;
}

/* A statement that never reached the database (its connection lost or
 * refused first). */
static void on_unsent(simdb_call *c)
{
    sim_stmt st;

    kinds_parse(c->sql, c->binds, c->nbinds, &st);
    unended(&st);
}

/* A renew's answer on its way back to the library.  It reaches the
 * caller if its call's bound has not passed: the request was not queued
 * behind another (its connection was idle, so the bound counts from when
 * it entered the port), its process was not frozen meanwhile (a frozen
 * caller's timer fires late), and it came back within query timeout +
 * 500 ms.  A batched renew's answer is the supervisor's; a lone renew's
 * call goes on with a read of the row (and a take if it shows it free),
 * which may wait behind another statement of the handle: its answer is
 * the supervisor's by the call's bound (with the login timeout: the
 * connection may have had to be made again first). */
static void on_answer(simdb_call *c, int lost, int64_t at)
{
    int p = proc_of(c->proc), l;
    int64_t bound = c->began + QT_MS + DB_SLACK_MS;

    /* A claim or a rerun whose answer did not reach the scheduler (lost,
     * or past its call's bound) may have committed: its row may stay
     * 'running' with nothing started, until a later holder marks it
     * abandoned. */
    if ((c->mark_kind == SK_FIRE_CLAIM || c->mark_kind == SK_FIRE_RECLAIM) &&
        (lost || at >= bound)) {
        sim_stmt st;
        kinds_parse(c->sql, c->binds, c->nbinds, &st);
        if (st.nkeys > 0 && st.keys[0].job != NULL && g_nunended < MAX_UNENDED &&
            job_index(st.keys[0].job) >= 0) {
            g_unended[g_nunended].job = job_index(st.keys[0].job);
            g_unended[g_nunended].fire_at = st.keys[0].fire_at_ms;
            g_unended[g_nunended].token = st.keys[0].token;
            g_unended[g_nunended++].attempt =
                c->mark_kind == SK_FIRE_RECLAIM ? st.keys[0].attempt + 1 : 1;
        }
    }
    if (p >= 0 && c->marks != 0 && !g_p[p].crashed && !lost && at < bound &&
        (c->mark_kind == SK_STATUS || c->mark_kind == SK_STATUS_EACH) &&
        frozen_between(&g_p[p], c->began - CALL_BOUND, at) == 0) {
        /* A read that showed a refused hold's request reached the
         * library within its call's bound. */
        for (l = 0; l < SIMDB_MARKS; l++) {
            hold_seen *h = (c->marks >> l & 1) ? hold_find(l, c->mark_values[l]) : NULL;
            if (h != NULL)
                h->request_read = 1;
        }
        return;
    }
    if (p < 0 || c->marks == 0 || g_p[p].crashed || lost || !c->idle_before || at >= bound ||
        frozen_between(&g_p[p], c->began - CALL_BOUND, at) > 0)
        return;
    for (l = 0; l < g_nl && l < SIMDB_MARKS; l++) {
        slot *s = &g_p[p].slots[l];
        if (!(c->marks >> l & 1) || !s->running || s->token != c->mark_values[l])
            continue;
        s->gone_token = s->token;
        /* A batched renew's misses get one read of their rows right after
         * it, on the same connection (engine.c's lost_rows): the answer is
         * the supervisor's by that read's bound. */
        s->gone_by = c->mark_kind == SK_RENEW_EACH ? at + CALL_BOUND : c->began + CALL_BOUND;
        trace("p%d lease-%d: the answer says token %" PRId64 " is gone", p, l, s->token);
    }
}

/* ------------------------------------------------------------------ */
/* The callbacks                                                        */
/* ------------------------------------------------------------------ */

static void slot_started(slot *s, int64_t token)
{
    lease_state *ls = &g_l[s->lease];
    int i;
    int64_t d;

    cb_enter(s);
    trace("p%d lease-%d started token %" PRId64, s->proc, s->lease, token);
    if (s->running)
        violation("p%d lease-%d: on_started twice without on_stopped", s->proc, s->lease);
    for (i = 0; i < g_np && !revoked(s->lease, token); i++) {
        const slot *o = &g_p[i].slots[s->lease];
        if (i == s->proc || !o->running || overrunning(o) || o->revoked == o->token)
            continue;
        violation("lease-%d: p%d starts (token %" PRId64 ") while p%d's work runs (token %"
                  PRId64 ")", s->lease, s->proc, token, i, o->token);
    }
    if (token <= ls->last_token && !revoked(s->lease, token))
        violation("lease-%d: p%d starts with token %" PRId64 ", not above %" PRId64, s->lease,
                  s->proc, token, ls->last_token);
    if (token > ls->last_token)
        ls->last_token = token;
    if (g_scenario == SC_GROUP && ls->last_starter >= 0 && ls->last_starter != s->proc)
        g_events[EV_GROUP_MOVE]++;
    ls->last_starter = s->proc;
    check_proof(s, "on_started", token, 0);
    s->running = 1;
    s->overran = 0;
    s->frozen_ms = 0;
    s->token = token;
    s->revoked = revoked(s->lease, token) ? token : -1;
    /* The work's start: mostly quick, now and then slow (a connection to
     * what the holder published, say). */
    d = sim_below(100) < 5 && !g_calm ? (int64_t)sim_below(6000) : (int64_t)sim_below(100);
    s->starting = 1;
    s->start_began = sim_now();
    sqle_sleep_ms(d);
    s->starting = 0;
    if (sim_now() - s->start_began >= s->t.rd)
        s->overran = 1;
    cb_leave(s);
}

static void slot_stopped(slot *s, int reason)
{
    int64_t margin = s->t.ttl - s->t.rd, d, t0, at;
    uint64_t r = sim_below(100);

    cb_enter(s);
    trace("p%d lease-%d stopping (reason %d)", s->proc, s->lease, reason);
    if (!s->running)
        violation("p%d lease-%d: on_stopped without on_started", s->proc, s->lease);
    if (s->running) {
        hold_seen *h = hold_find(s->lease, s->token);
        check_proof(s, "on_stopped", s->token, 1);
        if (h != NULL)
            h->stop_reason = reason;
    }
    if (s->running && s->gone_token == s->token) {
        if (sim_now() > gone_due(s))
            violation("p%d lease-%d: on_stopped (token %" PRId64 ") %" PRId64 " ms after the "
                      "answer that said the hold is gone", s->proc, s->lease, s->token,
                      sim_now() - s->gone_by);
        g_events[EV_GONE_STOP]++;
        s->gone_token = -1;
    }
    s->stopping = 1;
    s->stop_began = sim_now();
    s->stop_late = 0;
    at = s->running ? proof_of(s, s->token) : -1;
    if (at > 0 && sim_now() > at + s->t.rd)
        s->stop_late = sim_now() - (at + s->t.rd);
    if (g_calm) {
        d = (int64_t)sim_below(100);
    } else if (r < 2) {
        /* Past its margin, which counts from the hold's deadline, a
         * little before this call: the user's work overruns from here. */
        d = margin + (int64_t)sim_below(2000);
        s->overran = 1;
    } else if (r < 15) {
        d = (int64_t)sim_below((uint64_t)margin * 9 / 10); /* slow, within it */
    } else {
        d = (int64_t)sim_below(100);
    }
    t0 = sim_now();
    sqle_sleep_ms(d);
    if (sim_now() - t0 >= margin)
        s->overran = 1;
    s->stopping = 0;
    s->running = 0;
    trace("p%d lease-%d stopped", s->proc, s->lease);
    cb_leave(s);
}

static void on_started(void *ud, int64_t token)
{
    slot_started(ud, token);
}

static void on_stopped(void *ud, int reason)
{
    slot_stopped(ud, reason);
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

/* A group's callbacks name the lease; the process is the userdata. */
static slot *group_slot(void *ud, const char *name)
{
    proc *p = ud;
    int l = lease_of(name);

    if (l < 0) {
        violation("p%d: a group callback for '%s', not one of the group's leases", p->id,
                  name != NULL ? name : "(null)");
        return NULL;
    }
    return &p->slots[l];
}

static void group_started(void *ud, const char *name, int64_t token)
{
    slot *s = group_slot(ud, name);

    if (s != NULL)
        slot_started(s, token);
}

static void group_stopped(void *ud, const char *name, int reason)
{
    slot *s = group_slot(ud, name);

    if (s != NULL)
        slot_stopped(s, reason);
}

/* ------------------------------------------------------------------ */
/* A scheduler's fires (--scenario sched)                              */
/* ------------------------------------------------------------------ */

/* The run process p's on_fire gave with id, or -1. */
static long run_find(int p, uint64_t id)
{
    size_t r;

    for (r = g_nruns; r-- > 0;)
        if (g_runs[r].proc == p && g_runs[r].id == id)
            return (long)r;
    return -1;
}

/* Whether the work of hold `token` of process q may still run as another
 * hold's starts: its stop (on_stop, one run after the other) began and
 * has run past the ttl - renew_deadline margin (less the time the stop
 * came late and the time q was frozen meanwhile), or an operator took
 * that hold's row away (its next renew says so). */
static int sched_hold_overran(int q, int64_t token)
{
    const proc *pq = &g_p[q];
    const slot *s = &pq->slots[0];

    if (revoked(0, token))
        return 1;
    if (pq->hstop_token != token)
        return 0;
    return pq->hstop_overran || sim_now() - pq->hstop_began + pq->hstop_late +
                                        frozen_since(pq, pq->hstop_began) >=
                                    s->t.ttl - s->t.rd;
}

static int first_row(void *ud, const side_row *r)
{
    *(side_row *)ud = *r;
    return 1;
}

/* A fire the scheduler claimed starts its work (on its thread, its lock
 * held).  Checked: the fire was not started before (at most once), or,
 * at least once, not at this attempt and within the job's attempts; no
 * attempt of it still runs; no work of another hold still runs (the
 * holds' work does not overlap, as for a lease); it starts within its
 * hold's proof + renew_deadline; its ledger row says it runs under this
 * claim; a takeover's catch-up of a job whose policy is once runs one
 * fire, of skip none. */
static void sched_on_fire(void *ud, const sqle_fire *f)
{
    proc *p = ud;
    slot *s = &p->slots[0];
    int j = job_index(f->job), catch_ups = 0;
    /* A hold whose row the operator took away (a forced release, a NULL
     * owner or token, a deleted row) runs on until its next renew says
     * so, as a lease's does: a claim it sent before may start its fire
     * beside the next holder's work, and find its row abandoned. */
    int rv = revoked(0, f->token);
    size_t r;
    run_rec *nr;
    uint64_t x;
    side_row row;
    char w[200];
    size_t m = 0;

    cb_enter(s);
    trace("p%d fire %s at %" PRId64 " starts (id %" PRIu64 ", token %" PRId64 ", attempt %d%s)",
          p->id, f->job, f->fire_at_ms, f->id, f->token, f->attempt,
          f->catch_up ? ", catch-up" : "");
    g_events[EV_FIRE_RUN]++;
    if (f->attempt > 1)
        g_events[EV_FIRE_RERUN]++;
    if (f->catch_up)
        g_events[EV_FIRE_CATCH_UP]++;
    if (j < 0) {
        violation("p%d: on_fire of job '%s', not one of the jobs", p->id, f->job);
        cb_leave(s);
        return;
    }
    check_proof(s, "on_fire", f->token, 1);
    for (r = 0; r < g_nruns; r++) {
        const run_rec *o = &g_runs[r];
        if (o->job == j && o->fire_at == f->fire_at_ms) {
            if (g_jobs[j].abandoned == SQLE_ABANDONED_AT_MOST_ONCE)
                violation("fire %s at %" PRId64 " starts again in p%d (token %" PRId64 ", attempt "
                          "%d): p%d started it before (token %" PRId64 ", attempt %d), and its "
                          "job runs at most once", f->job, f->fire_at_ms, p->id, f->token,
                          f->attempt, o->proc, o->token, o->attempt);
            else if (o->attempt == f->attempt)
                violation("fire %s at %" PRId64 " starts attempt %d again in p%d (token %" PRId64
                          "): p%d started that attempt before (token %" PRId64 ")", f->job,
                          f->fire_at_ms, f->attempt, p->id, f->token, o->proc, o->token);
            if (o->running && !rv && !sched_hold_overran(o->proc, o->token))
                violation("fire %s at %" PRId64 " starts attempt %d in p%d (token %" PRId64 ") "
                          "while its attempt %d still runs in p%d (token %" PRId64 ")", f->job,
                          f->fire_at_ms, f->attempt, p->id, f->token, o->attempt, o->proc,
                          o->token);
        }
        if (o->running && o->token != f->token && !rv && !sched_hold_overran(o->proc, o->token))
            violation("p%d starts fire %s at %" PRId64 " under token %" PRId64 " while p%d's "
                      "work of fire %s at %" PRId64 " under token %" PRId64 " still runs (%s)",
                      p->id, f->job, f->fire_at_ms, f->token, o->proc, g_jobs[o->job].name,
                      o->fire_at, o->token,
                      g_p[o->proc].hstop_token == o->token ? "its hold's stop has begun"
                                                           : "its hold's stop never began");
        if (o->job == j && o->proc == p->id && o->token == f->token && o->catch_up &&
            o->attempt == 1)
            catch_ups++;
    }
    if (f->attempt > g_jobs[j].max_attempts ||
        (f->attempt > 1 && g_jobs[j].abandoned != SQLE_ABANDONED_AT_LEAST_ONCE))
        violation("fire %s at %" PRId64 " starts attempt %d in p%d: its job runs %s", f->job,
                  f->fire_at_ms, f->attempt, p->id,
                  g_jobs[j].abandoned == SQLE_ABANDONED_AT_LEAST_ONCE ? "at most max_attempts"
                                                                      : "at most once");
    if (f->catch_up && f->attempt == 1 &&
        ((g_jobs[j].missed == SQLE_MISSED_ONCE && catch_ups >= 1) ||
         g_jobs[j].missed == SQLE_MISSED_SKIP))
        violation("p%d's catch-up of job %s (missed: %s) runs fire %" PRId64 ", its %s under "
                  "token %" PRId64 ": once runs the latest missed fire only, skip none", p->id,
                  f->job, g_jobs[j].missed == SQLE_MISSED_ONCE ? "once" : "skip", f->fire_at_ms,
                  catch_ups >= 1 ? "second" : "first", f->token);
    /* Its row says it runs, under this claim. */
    put(w, sizeof w, &m, "name = ");
    lit(w, sizeof w, &m, g_names[0]);
    put(w, sizeof w, &m, " AND job = ");
    lit(w, sizeof w, &m, f->job);
    put(w, sizeof w, &m, " AND fire_at_ms = %" PRId64, f->fire_at_ms);
    memset(&row, 0, sizeof row);
    (void)ledger_rows(ST_FIRE, w, first_row, &row);
    if (!rv && (strcmp(row.state, "running") != 0 || row.token != f->token ||
                row.attempt != f->attempt || strcmp(row.owner, p->owner) != 0))
        violation("p%d starts fire %s at %" PRId64 " (token %" PRId64 ", attempt %d) while its "
                  "ledger row says %s (token %" PRId64 ", attempt %" PRId64 ", owner %s)", p->id,
                  f->job, f->fire_at_ms, f->token, f->attempt,
                  row.state[0] != '\0' ? row.state : "no row", row.token, row.attempt, row.owner);
    if (p->hstop_token != f->token) {
        p->hstop_token = -1;
        p->hstop_overran = 0;
    }
    if (g_nruns == g_cap_runs) {
        size_t cap = g_cap_runs ? 2 * g_cap_runs : 256;
        run_rec *v = realloc(g_runs, cap * sizeof *v);
        if (v == NULL) {
            cb_leave(s);
            return;
        }
        g_runs = v;
        g_cap_runs = cap;
    }
    nr = &g_runs[g_nruns++];
    memset(nr, 0, sizeof *nr);
    nr->proc = p->id;
    nr->job = j;
    nr->id = f->id;
    nr->fire_at = f->fire_at_ms;
    nr->token = f->token;
    nr->attempt = f->attempt;
    nr->catch_up = f->catch_up;
    nr->started = sim_now();
    nr->running = 1;
    /* The work: mostly under a second, now and then seconds (past the
     * job's next fires: its overlap rule decides), now and then failing. */
    x = sim_below(100);
    nr->ends_at = sim_now() + (g_calm  ? 10 + (int64_t)sim_below(300)
                               : x < 70 ? 50 + (int64_t)sim_below(800)
                               : x < 90 ? 1000 + (int64_t)sim_below(2000)
                                        : 3000 + (int64_t)sim_below(5000));
    nr->failed = sim_below(10) == 0;
    sqle_mutex_lock(&p->m);
    sqle_cond_broadcast(&p->wcv);
    sqle_mutex_unlock(&p->m);
    cb_leave(s);
}

/* Stop a fire's work, and return once it stopped: mostly at once, now
 * and then slowly (within the margin), now and then past it. */
static void sched_on_stop(void *ud, const sqle_fire *f, int reason)
{
    proc *p = ud;
    slot *s = &p->slots[0];
    int64_t margin = s->t.ttl - s->t.rd, d;
    long r = run_find(p->id, f->id);
    uint64_t x = sim_below(100);

    cb_enter(s);
    trace("p%d stops fire %s at %" PRId64 " (id %" PRIu64 ", token %" PRId64 ", reason %d)",
          p->id, f->job, f->fire_at_ms, f->id, f->token, reason);
    g_events[reason == SQLE_STOP_REPLACED ? EV_FIRE_REPLACED : EV_FIRE_STOPPED]++;
    if (r < 0 || !g_runs[r].running) {
        cb_leave(s); /* its work ended by itself */
        return;
    }
    if (reason != SQLE_STOP_REPLACED && p->hstop_token != f->token) {
        int64_t at = proof_of(s, f->token);
        /* The first stop of this hold's work: by its deadline, as an
         * on_stopped (the pool's stall and the time frozen allowed). */
        if (reason == SQLE_STOP_LEASE)
            check_proof(s, "on_stop", f->token, 1);
        p->hstop_token = f->token;
        p->hstop_began = sim_now();
        p->hstop_late = at > 0 && sim_now() > at + s->t.rd ? sim_now() - (at + s->t.rd) : 0;
        p->hstop_overran = 0;
    }
    g_runs[r].stopping = 1;
    g_runs[r].stop_reason = reason;
    if (g_calm || reason == SQLE_STOP_REPLACED)
        d = (int64_t)sim_below(50);
    else if (x < 2)
        d = margin + (int64_t)sim_below(1000);
    else if (x < 12)
        d = (int64_t)sim_below((uint64_t)margin / 4);
    else
        d = (int64_t)sim_below(100);
    sqle_sleep_ms(d);
    r = run_find(p->id, f->id);
    g_runs[r].stopping = 0;
    g_runs[r].running = 0;
    if (reason != SQLE_STOP_REPLACED && p->hstop_token == f->token &&
        sim_now() - p->hstop_began + p->hstop_late + frozen_since(p, p->hstop_began) >= margin)
        p->hstop_overran = 1;
    trace("p%d stopped fire %s at %" PRId64, p->id, f->job, f->fire_at_ms);
    sqle_mutex_lock(&p->m);
    sqle_cond_broadcast(&p->wcv);
    sqle_mutex_unlock(&p->m);
    cb_leave(s);
}

/* The scheduler's log: what it says it left undone (the fires a failed
 * read of the ledger at a takeover left uncaught-up, a fire whose record
 * failed) is no hole of its making. */
static void sched_on_log(void *ud, int level, const char *line)
{
    proc *p = ud;
    const char *a, *b;

    if (g_trace)
        trace("p%d sched %d %s", p->id, level, line);
    if (strstr(line, "reading the ledger at takeover failed") != NULL) {
        /* Up to its estimate of the database's clock, which is off by
         * half a round trip and the steps since it was measured. */
        int64_t until = simdb_now_ms() + CALL_BOUND + g_stepped_back;
        if (until > g_left_before)
            g_left_before = until;
    } else if (strncmp(line, "job ", 4) == 0 && (a = strstr(line, ": recording fire ")) != NULL &&
               (b = strstr(a, " as ")) != NULL && g_nleft < MAX_LEFT) {
        snprintf(g_left[g_nleft++], sizeof g_left[0], "%.*s %.*s", (int)(a - line - 4), line + 4,
                 (int)(b - a - 17), a + 17);
    }
}

/* Each scheduler's other thread: it ends the fires' work when it is done
 * and reports every ended or stopped run (sqle_sched_done, as `sqlease
 * cron` reaps its children), until told to stop with nothing left. */
static void sched_worker(void *arg)
{
    proc *p = arg;

    sqle_mutex_lock(&p->m);
    for (;;) {
        int64_t wake = -1, now = sim_now();
        long idx = -1;
        size_t r;

        for (r = 0; r < g_nruns; r++) {
            run_rec *x = &g_runs[r];
            if (x->proc != p->id || x->reported || x->crashed || x->stopping)
                continue;
            if (x->running && x->ends_at <= now) {
                x->running = 0;
                trace("p%d fire %s at %" PRId64 " ended (attempt %d)", p->id,
                      g_jobs[x->job].name, x->fire_at, x->attempt);
            }
            if (!x->running) {
                idx = (long)r;
                break;
            }
            if (wake < 0 || x->ends_at < wake)
                wake = x->ends_at;
        }
        if (idx >= 0) {
            run_rec *x = &g_runs[idx];
            uint64_t id = x->id;
            int failed = x->failed || x->stop_reason != 0, job = x->job, rc;
            int64_t fire_at = x->fire_at, token = x->token, attempt = x->attempt;
            sqlease_error err;

            x->reported = 1;
            sqle_mutex_unlock(&p->m);
            rc = sqle_sched_done(p->sched, id, failed, failed, &err);
            trace("p%d reported fire %s at %" PRId64 " %s: %d", p->id, g_jobs[job].name, fire_at,
                  failed ? "failed" : "done", rc);
            if (rc != SQLEASE_OK && g_nunended < MAX_UNENDED) {
                g_unended[g_nunended].job = job;
                g_unended[g_nunended].fire_at = fire_at;
                g_unended[g_nunended].token = token;
                g_unended[g_nunended++].attempt = attempt;
            }
            sqle_mutex_lock(&p->m);
            continue;
        }
        if (p->worker_stop)
            break;
        sqle_cond_wait_until(&p->wcv, &p->m, wake);
    }
    sqle_mutex_unlock(&p->m);
}

/* The fleet's jobs for this seed: each policy of the catch-up, the
 * abandoned rule and the overlap rule, on @every and 6-field specs. */
static void draw_jobs(void)
{
    static const char *const specs[MAX_JOBS] = {"@every 1s", "*/2 * * * * *", "@every 3s",
                                                 "*/5 * * * * *"};
    static const int missed[MAX_JOBS] = {SQLE_MISSED_ONCE, SQLE_MISSED_ALL, SQLE_MISSED_SKIP,
                                         -1};
    sqle_cron_error ce;
    int j;

    g_njobs = MAX_JOBS;
    for (j = 0; j < g_njobs; j++) {
        job_cfg *jc = &g_jobs[j];
        snprintf(jc->name, sizeof jc->name, "job%d", j);
        jc->schedule = specs[j];
        jc->missed = missed[j] >= 0 ? missed[j] : (int)sim_below(3);
        jc->abandoned = (int)sim_below(2);
        jc->overlap = (int)sim_below(3);
        jc->max_attempts = 2 + (int)sim_below(2);
        jc->nseen = 0;
        jc->back_hw = -1;
        if (sqle_cron_parse(jc->schedule, NULL, &jc->cron, &ce) != SQLEASE_OK)
            violation("job %s: '%s' does not parse: %s", jc->name, jc->schedule, ce.message);
        trace("job %s: '%s', missed %d, abandoned %d, overlap %d, max attempts %d", jc->name,
              jc->schedule, jc->missed, jc->abandoned, jc->overlap, jc->max_attempts);
    }
}

static void jobs_clear(void)
{
    int j;

    for (j = 0; j < g_njobs; j++) {
        sqle_cron_free(g_jobs[j].cron);
        g_jobs[j].cron = NULL;
        g_jobs[j].nseen = 0;
    }
    g_njobs = 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Every fire that was due while a scheduler could claim it has a row in
 * the ledger (claimed, or recorded skipped or missed as its policy says),
 * from each job's first row (a job's first holder fires from its next
 * fire; catch-up starts from the ledger's latest) to what is due by now
 * less the time a takeover takes; those due in the calm are claimed on
 * time.  The fires the scheduler said it left (a read of the ledger or
 * a record that failed) are not held against it. */
static void check_fires_due(void)
{
    const slot *s = &g_p[0].slots[0];
    int64_t takeover = s->t.ttl + 2 * RETRY_MS + CALL_BOUND + 2000;
    int64_t horizon = simdb_now_ms() - takeover - g_stepped_fwd;
    int j, holes = 0;

    for (j = 0; j < g_njobs; j++) {
        job_cfg *jc = &g_jobs[j];
        int64_t f;
        if (jc->nseen == 0)
            continue;
        qsort(jc->seen, jc->nseen, sizeof *jc->seen, cmp_i64);
        for (f = jc->seen[0]; sqle_cron_next(jc->cron, f, &f) == 1 && f <= horizon;) {
            char when[40], said[96];
            int k, left = f <= g_left_before;
            if (f <= jc->back_hw ||
                bsearch(&f, jc->seen, jc->nseen, sizeof *jc->seen, cmp_i64) != NULL)
                continue;
            sqle_cron_format_utc(f, when, sizeof when);
            snprintf(said, sizeof said, "%.15s %.39s", jc->name, when);
            for (k = 0; k < g_nleft && !left; k++)
                left = strcmp(g_left[k], said) == 0;
            if (left)
                continue;
            if (holes++ < 3)
                violation("fire %s at %" PRId64 " (%s) has no row in the ledger, %" PRId64
                          " ms after it was due (its job's first row is of %" PRId64 ")",
                          jc->name, f, when, simdb_now_ms() - f, jc->seen[0]);
        }
    }
}

/* The ledger at the end, every process stopped: a row still 'running' is
 * one whose holder died with its work, or whose end did not reach the
 * ledger; anything else runs nowhere. */
static int check_final_fire(void *ud, const side_row *r)
{
    int j = job_index(r->job), k;
    size_t i;

    (void)ud;
    /* A fire due in the calm (no clock steps) is dealt with (claimed,
     * or recorded skipped or missed) within the holder's ttl and a
     * retry: a takeover's wait, then one try, beside a statement's bound.
     * Not a catch-up queue's (missed: all), which waits for the job's
     * run before it. */
    if (j >= 0 && g_nsteps == 0 && g_stepped_fwd == 0 && r->fire_at_ms >= g_calm_db &&
        r->fire_at_ms < g_stop_db && r->attempt == 1 &&
        r->started_at_ms - r->fire_at_ms > max_ttl(0) + RETRY_MS + CALL_BOUND) {
        int queued = 0;
        for (i = 0; i < g_nruns && !queued; i++)
            queued = g_runs[i].job == j && g_runs[i].fire_at == r->fire_at_ms &&
                     g_runs[i].catch_up && g_jobs[j].missed == SQLE_MISSED_ALL;
        if (!queued)
            violation("fire %s at %" PRId64 ", due in the calm, was %s %" PRId64 " ms after its "
                      "time, past the holder's ttl %" PRId64 " + a retry + a call's bound",
                      r->job, r->fire_at_ms, r->state, r->started_at_ms - r->fire_at_ms,
                      max_ttl(0));
    }
    if (strcmp(r->state, "running") != 0 || j < 0)
        return 0;
    for (i = 0; i < g_nruns; i++)
        if (g_runs[i].job == j && g_runs[i].fire_at == r->fire_at_ms &&
            g_runs[i].token == r->token && g_runs[i].attempt == r->attempt && g_runs[i].crashed)
            return 0;
    for (k = 0; k < g_nunended; k++)
        if (g_unended[k].job == j && g_unended[k].fire_at == r->fire_at_ms &&
            g_unended[k].token == r->token && g_unended[k].attempt == r->attempt)
            return 0;
    violation("fire %s at %" PRId64 " is 'running' in the ledger (token %" PRId64 ", attempt %"
              PRId64 ", %s) with every process stopped: no work of it runs, its holder did not "
              "die with it, and no end of it failed", r->job, r->fire_at_ms, r->token, r->attempt,
              r->owner);
    return 0;
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

static void quiet_log(void *ud, int level, const char *line)
{
    (void)ud;
    if (g_trace)
        trace("log %d %s", level, line);
}

/* ------------------------------------------------------------------ */
/* Processes                                                            */
/* ------------------------------------------------------------------ */

/* A mixed fleet's timings: a process runs each lease with one of them,
 * so that holders and followers of one lease differ in ttl, heartbeat
 * and renew deadline (a long heartbeat beside a short ttl: a follower's
 * watch of its own ttl is shorter than the holder's renews are apart; a
 * renew deadline shorter than a call's bound: a take answered after it
 * must not start the work). */
static const timing g_mixed[] = {
    {2000, 500, 1000},
    {3000, 750, 1500},
    {5000, 1000, 3000},
    {12000, 4000, 8000},
};

static timing timing_for(int l)
{
    timing t;

    switch (g_scenario) {
    case SC_PLAIN:
        t.ttl = 3000 + 1000 * l;
        break;
    case SC_MIXED:
        return g_mixed[sim_below(sizeof g_mixed / sizeof g_mixed[0])];
    default:
        t.ttl = 3000;
        break;
    }
    t.hb = t.ttl / 4;
    t.rd = t.ttl / 2;
    return t;
}

/* The holder history, as this seed has it. */
static void set_history(sqlease_options *o)
{
    o->history = g_history ? 0 : SQLEASE_HISTORY_OFF;
    o->history_table = HOLD_TABLE;
}

static void options_for(proc *p, int l, sqlease_options *o)
{
    sqlease_options_init(o);
    o->table = TABLE;
    o->name = g_names[l];
    o->owner = p->owner;
    o->ttl_ms = p->slots[l].t.ttl;
    o->heartbeat_ms = p->slots[l].t.hb;
    o->renew_deadline_ms = p->slots[l].t.rd;
    o->retry_ms = RETRY_MS;
    o->on_started = on_started;
    o->on_stopped = on_stopped;
    o->on_holder = on_holder;
    o->take_by_expiry = g_by_expiry;
    set_history(o);
    if (g_scenario == SC_HANDOFF) {
        o->handoff = 1;
        o->priority = p->priority;
        o->preempt_after_ms = PREEMPT_MS;
        o->handoff_reserve_ms = RESERVE_MS;
    }
    o->userdata = &p->slots[l];
}

static sqlease_db *open_db(int i)
{
    sqlease_db_options dbo;
    sqlease_error err;
    sqlease_db *db = NULL;

    sqlease_db_options_init(&dbo);
    dbo.query_timeout_ms = QT_MS;
    dbo.login_timeout_ms = LOGIN_MS;
    dbo.log = quiet_log;
    dbo.log_level = g_trace ? SQLEASE_LOG_DEBUG : SQLEASE_LOG_WARN;
    /* As `supervise` does, an open that fails is tried again. */
    while (sqle_db_wrap(&db, &simdb_ops, simdb_proto(), "sim", &dbo, &err) != SQLEASE_OK) {
        trace("p%d could not open: %s", i, err.message);
        sqle_sleep_ms(300);
    }
    return db;
}

/* Start process i, under `owner` (NULL: its own, p<i>): its handle, then
 * a supervisor per lease, or its group. */
static void proc_start(int i, const char *owner)
{
    proc *p = &g_p[i];
    sqlease_options opts[MAX_L];
    const sqlease_options *opt_ptrs[MAX_L];
    int rcs[MAX_L];
    sqlease_error err;
    int l, rc;

    sim_set_process(i + 1);
    memset(p, 0, sizeof *p);
    p->id = i;
    if (owner != NULL)
        snprintf(p->owner, sizeof p->owner, "%s", owner);
    else
        snprintf(p->owner, sizeof p->owner, "p%d", i);
    /* Three priorities, so that equal ones meet as often as unequal. */
    if (g_scenario == SC_HANDOFF)
        p->priority = (int64_t)sim_below(3);
    for (l = 0; l < g_nl; l++) {
        slot *s = &p->slots[l];
        s->proc = i;
        s->lease = l;
        s->t = timing_for(l);
        s->cb_began = -1;
        s->revoked = -1;
        s->gone_token = -1;
        s->last_sent = sim_now();
    }
    p->last_list = sim_now();
    p->hstop_token = -1;
    sqle_mutex_init(&p->m);
    sqle_cond_init(&p->cv);
    sqle_cond_init(&p->wcv);
    p->db = open_db(i);
    p->live = 1;
    if (g_scenario == SC_SCHED) {
        sqlease_options o;
        sqle_job jobs[MAX_JOBS];
        sqle_sched_callbacks cbs;
        int j;

        options_for(p, 0, &o);
        memset(jobs, 0, sizeof jobs);
        for (j = 0; j < g_njobs; j++) {
            jobs[j].name = g_jobs[j].name;
            jobs[j].schedule = g_jobs[j].schedule;
            jobs[j].missed = g_jobs[j].missed;
            jobs[j].abandoned = g_jobs[j].abandoned;
            jobs[j].overlap = g_jobs[j].overlap;
            jobs[j].max_attempts = g_jobs[j].max_attempts;
        }
        memset(&cbs, 0, sizeof cbs);
        cbs.userdata = p;
        cbs.on_fire = sched_on_fire;
        cbs.on_stop = sched_on_stop;
        cbs.on_log = sched_on_log;
        /* A start that fails under the faults is tried again, as a
         * daemon's supervisor would. */
        while ((rc = sqle_sched_start(&p->sched, p->db, &o, FIRE_TABLE, p->owner, jobs,
                                      (size_t)g_njobs, 0, &cbs, &err)) != SQLEASE_OK) {
            trace("p%d scheduler start: %s", i, err.message);
            sqle_sleep_ms(RETRY_MS);
        }
        p->has_worker = sqle_thread_start(&p->worker, sched_worker, p) == 0;
    } else if (g_scenario == SC_GROUP) {
        sqlease_options o;
        sqlease_group_callbacks cbs;
        const char *names[MAX_L];

        sqlease_options_init(&o);
        o.table = TABLE;
        o.owner = p->owner;
        o.ttl_ms = p->slots[0].t.ttl;
        o.heartbeat_ms = p->slots[0].t.hb;
        o.renew_deadline_ms = p->slots[0].t.rd;
        o.retry_ms = RETRY_MS;
        set_history(&o);
        memset(&cbs, 0, sizeof cbs);
        cbs.on_started = group_started;
        cbs.on_stopped = group_stopped;
        cbs.userdata = p;
        for (l = 0; l < g_nl; l++)
            names[l] = g_names[l];
        /* A start whose presence cannot be taken under the faults is
         * tried again, as a worker's supervisor would. */
        while ((rc = sqlease_group_start(&p->grp, p->db, &o, "g", names, (size_t)g_nl,
                                         g_slack, &cbs, &err)) != SQLEASE_OK) {
            trace("p%d group start: %s", i, err.message);
            sqle_sleep_ms(RETRY_MS);
        }
        g_events[EV_GROUP_START]++;
    } else {
        for (l = 0; l < g_nl; l++) {
            options_for(p, l, &opts[l]);
            opt_ptrs[l] = &opts[l];
            if (g_batched)
                continue;
            rc = sqlease_supervisor_start(&p->sup[l], p->db, &opts[l], &err);
            trace("p%d lease-%d supervisor start: %d %s", i, l, rc, rc ? err.message : "");
            if (rc != SQLEASE_OK)
                p->sup[l] = NULL;
        }
        if (g_batched) {
            (void)sqlease_supervisor_start_each(p->sup, (size_t)g_nl, p->db, opt_ptrs, rcs,
                                                &err);
            for (l = 0; l < g_nl; l++)
                trace("p%d lease-%d supervisor start_each: %d", i, l, rcs[l]);
        }
    }
    p->has_prober = sqle_thread_start(&p->prober, prober, p) == 0;
    sim_set_process(0);
}

/* A crash: the process is gone, and so is its work. */
static void proc_crash(int i)
{
    int l;
    size_t r;

    sim_crash(i + 1);
    g_p[i].live = 0;
    g_p[i].crashed = 1;
    for (l = 0; l < g_nl; l++) {
        g_p[i].slots[l].running = 0;
        g_p[i].slots[l].stopping = 0;
    }
    /* Its fires' work is gone with it, and so are their reports. */
    for (r = 0; r < g_nruns; r++)
        if (g_runs[r].proc == i && !g_runs[r].reported) {
            g_runs[r].running = 0;
            g_runs[r].stopping = 0;
            g_runs[r].crashed = 1;
        }
    g_faults++;
    g_events[EV_CRASH]++;
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
    p->stopping_gracefully = 1;
    if (p->sched != NULL) {
        /* The supervisor's stop (its on_stopped stops every fire's work,
         * one on_stop after the other), then the scheduler's thread, which
         * may be inside a statement, and one more it sends for a fire
         * whose claim was answered as the stop began. */
        slot *s = &p->slots[0];
        int64_t t0 = sim_now(), c0 = s->cb_ms, b0 = s->cb_began;
        int src = sqle_sched_stop(p->sched, &err);

        check_bound(p, "sqle_sched_stop", t0, QT_MS + DB_SLACK_MS + 2 * CALL_BOUND,
                    cb_overlap(s, t0, c0, b0));
        if (p->has_worker) {
            sqle_mutex_lock(&p->m);
            p->worker_stop = 1;
            sqle_cond_broadcast(&p->wcv);
            sqle_mutex_unlock(&p->m);
            sqle_thread_join(&p->worker);
            p->has_worker = 0;
        }
        t0 = sim_now();
        sqle_sched_free(p->sched);
        /* Its supervisor's free: after a stop that timed out, the release
         * once more (sqlease.h, sqlease_supervisor_free). */
        check_bound(p, "sqle_sched_free", t0,
                    src == SQLEASE_ETIMEOUT ? 2 * (QT_MS + DB_SLACK_MS) + LOGIN_MS
                                            : QT_MS + DB_SLACK_MS,
                    0);
        p->sched = NULL;
    }
    if (p->grp != NULL) {
        /* Each of the group's supervisors and its presence, one after
         * the other at worst. */
        int64_t t0 = sim_now(), c0[MAX_L], b0[MAX_L], excuse = 0;

        for (l = 0; l < g_nl; l++) {
            c0[l] = p->slots[l].cb_ms;
            b0[l] = p->slots[l].cb_began;
        }
        (void)sqlease_group_stop(p->grp, &err);
        for (l = 0; l < g_nl; l++)
            excuse += cb_overlap(&p->slots[l], t0, c0[l], b0[l]);
        check_bound(p, "sqlease_group_stop", t0, (g_nl + 1) * (QT_MS + DB_SLACK_MS) + LOGIN_MS,
                    excuse);
        sqlease_group_free(p->grp);
        p->grp = NULL;
    }
    if (g_batched) {
        /* One call stops them all: each stop's bound, one after the
         * other at worst (each waits for its own statement in flight),
         * then the releases within one more. */
        int64_t t0 = sim_now(), c0[MAX_L], b0[MAX_L], excuse = 0;
        int rcs[MAX_L];

        for (l = 0; l < g_nl; l++) {
            c0[l] = p->slots[l].cb_ms;
            b0[l] = p->slots[l].cb_began;
        }
        sqlease_supervisor_stop_each(p->sup, (size_t)g_nl, rcs, &err);
        for (l = 0; l < g_nl; l++)
            excuse += cb_overlap(&p->slots[l], t0, c0[l], b0[l]);
        check_bound(p, "sqlease_supervisor_stop_each", t0, (g_nl + 1) * (QT_MS + DB_SLACK_MS),
                    excuse);
        for (l = 0; l < g_nl; l++) {
            slot *s = &p->slots[l];
            int64_t c1, b1;
            if (p->sup[l] == NULL)
                continue;
            t0 = sim_now();
            c1 = s->cb_ms;
            b1 = s->cb_began;
            sqlease_supervisor_free(p->sup[l]);
            check_bound(p, "sqlease_supervisor_free", t0,
                        rcs[l] == SQLEASE_ETIMEOUT || g_scenario == SC_HANDOFF
                            ? 2 * (QT_MS + DB_SLACK_MS) + LOGIN_MS
                            : QT_MS + DB_SLACK_MS,
                        cb_overlap(s, t0, c1, b1));
            p->sup[l] = NULL;
        }
    }
    for (l = 0; l < g_nl; l++)
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
                        rc == SQLEASE_ETIMEOUT || g_scenario == SC_HANDOFF
                            ? 2 * (QT_MS + DB_SLACK_MS) + LOGIN_MS
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
    sqlease_db_close(p->db);
    p->db = NULL;
    p->live = 0;
    p->stopping_gracefully = 0;
    sim_set_process(0);
}

/* ------------------------------------------------------------------ */
/* The operator                                                         */
/* ------------------------------------------------------------------ */

/* Migrate the table (idempotent: it changes a row only to fill in its
 * NULLs), as an operator may while the fleet runs.  Tried `tries` times
 * under the faults. */
static int admin_migrate(int tries)
{
    if (g_np > 0)
        g_events[EV_MIGRATE]++; /* not the set-up's */
    const char *names[MAX_L];
    sqlease_error err;
    int l, rc = SQLEASE_OK;

    for (l = 0; l < g_nl; l++)
        names[l] = g_names[l];
    while (tries-- > 0) {
        rc = sqlease_migrate(g_admin, TABLE, names, (size_t)g_nl, &err);
        trace("operator: migrate: %d %s", rc, rc ? err.message : "");
        if (rc == SQLEASE_OK)
            break;
        sqle_sleep_ms(RETRY_MS);
    }
    return rc;
}

static void admin_sql(const char *fmt, ...) SQLEASE_PRINTF(1, 2);

/* A change by hand (an operator's SQL, a table made without sqlease):
 * not a statement of the library's, so not checked, only learnt. */
static void admin_sql(const char *fmt, ...)
{
    char sql[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(sql, sizeof sql, fmt, ap);
    va_end(ap);
    trace("operator: %s", sql);
    if (simdb_sql(sql) != 0)
        violation("the operator's SQL failed: %s", sql);
    (void)rows_sync(TABLE);
}

static void admin_force_release(int l)
{
    sqlease_options o;
    sqlease_lease *le = NULL;
    sqlease_error err;
    int released = 0, rc;

    sqlease_options_init(&o);
    o.table = TABLE;
    o.name = g_names[l];
    o.owner = "operator";
    set_history(&o);
    if (sqlease_lease_new(&le, g_admin, &o, &err) != SQLEASE_OK)
        return;
    rc = sqlease_lease_release_force(le, &released, &err);
    trace("operator: release --force lease-%d: %d %s", l, rc, rc ? err.message : "");
    sqlease_lease_free(le);
    g_events[EV_FORCE]++;
}

/* The operator's `sqlease transfer --timeout` that ran out: a request
 * on lease l's hold for the best ready follower, withdrawn at once (if
 * the holder has not answered yet). */
static void admin_transfer_withdrawn(int l)
{
    sqlease_options o;
    sqlease_lease *le = NULL;
    sqlease_lease_info req;
    sqlease_error err;
    int rc;

    sqlease_options_init(&o);
    o.table = TABLE;
    o.name = g_names[l];
    o.owner = "operator";
    o.history = SQLEASE_HISTORY_OFF;
    if (sqlease_lease_new(&le, g_admin, &o, &err) != SQLEASE_OK)
        return;
    rc = sqlease_lease_request_handoff(le, NULL, &req, &err);
    trace("operator: transfer lease-%d: %d %s", l, rc, rc ? err.message : "");
    if (rc == SQLEASE_OK) {
        int cancelled = 0;
        rc = sqlease_lease_cancel_handoff(le, &req, &cancelled, &err);
        trace("operator: transfer of lease-%d withdrawn: %d %d %s", l, rc, cancelled,
              rc ? err.message : "");
    }
    sqlease_lease_free(le);
    g_events[EV_HANDOFF_ASK]++;
}

/* The row deleted and seeded again: a new token from the database's
 * clock, above every one the old row gave out. */
static void admin_reseed(int l)
{
    revoke_row(l);
    admin_sql("DELETE FROM " TABLE " WHERE name = '%s'", g_names[l]);
    if (g_ndeleted[l] < MAX_DELETES)
        g_deleted_at[l][g_ndeleted[l]++] = sim_now();
    g_l[l].written_at = sim_now();
    g_l[l].writer_ttl = 0;
    if (admin_migrate(100) != SQLEASE_OK)
        violation("lease-%d: could not seed its row again", l);
    g_events[EV_RESEED]++;
}

/* A NULL where sqlease writes values, as a table made by hand may hold:
 * a NULL owner frees the row under its holder, and a NULL token takes
 * the row from its holder too (no renew of that token matches it again;
 * its repair gives the row a token of the clock's, which a forced
 * release may then free while the holder's work still runs).  Not a
 * NULL token with clock steps: its repair takes a new token from the
 * database's clock, which goes back after a step back (as a row seeded
 * again does). */
static void admin_null(int l)
{
    static const char *const cols[] = {"owner", "version", "expires_at_ms", "token"};
    const char *col = cols[sim_below(g_clock_steps ? 3 : 4)];

    if (strcmp(col, "owner") == 0 || strcmp(col, "token") == 0)
        revoke_row(l);
    admin_sql("UPDATE " TABLE " SET %s = NULL WHERE name = '%s'", col, g_names[l]);
    if (strcmp(col, "token") == 0 && g_ndeleted[l] < MAX_DELETES)
        g_deleted_at[l][g_ndeleted[l]++] = sim_now();
    g_l[l].written_at = sim_now();
    if (strcmp(col, "owner") == 0)
        g_l[l].writer_ttl = 0;
    else if (g_l[l].writer_ttl == 0 && rows_get(g_names[l]) != NULL &&
             !row_free(rows_get(g_names[l])))
        g_l[l].writer_ttl = max_ttl(l);
    g_events[EV_NULL_SET]++;
}

static int count_hold(void *ud, const sqlease_hold_info *h)
{
    (void)h;
    ++*(int *)ud;
    return 0;
}

/* The operator reads a lease's holder history (sqlease history) and
 * prunes its ended holds older than 10 s, as a holder prunes those older
 * than its keep (hold_prune: never a hold that has no end). */
static void admin_history(int l)
{
    sqle_hist h;
    sqlease_error err;
    int64_t deleted = 0;
    int n = 0, rc;

    if (!g_history_table)
        return;
    rc = sqlease_history_list(g_admin, HOLD_TABLE, g_names[l], simdb_now_ms() - 60000,
                              count_hold, &n, &err);
    trace("operator: history of lease-%d: %d, %d holds", l, rc, n);
    memset(&h, 0, sizeof h);
    h.db = g_admin;
    h.sql = sqle_db_hist_sql(g_admin, sqle_db_dialect(g_admin), TABLE, HOLD_TABLE);
    h.name = g_names[l];
    h.owner = "operator";
    h.host = "operator";
    if (h.sql == NULL)
        return;
    rc = sqle_hist_prune(&h, 0, simdb_now_ms() - 10000, &deleted, &err);
    trace("operator: prune the history of lease-%d: %d, %" PRId64 " rows", l, rc, deleted);
}

/* The operator prunes the scheduler's ledger of fires older than 5 s
 * (fire_prune: never a running row, nor a job's latest), as a holder
 * prunes those older than its keep. */
static void admin_prune_ledger(void)
{
    sqle_fire_ctx c;
    sqlease_error err;
    int64_t deleted = 0;
    int rc;

    memset(&c, 0, sizeof c);
    c.db = g_admin;
    c.lease_table = TABLE;
    c.fire_table = FIRE_TABLE;
    c.name = g_names[0];
    c.owner = "operator";
    c.host = "operator";
    rc = sqle_fire_prune(&c, 0, simdb_now_ms() - 5000, &deleted, 0, &err);
    trace("operator: prune the ledger: %d, %" PRId64 " rows", rc, deleted);
}

/* ------------------------------------------------------------------ */
/* The history                                                          */
/* ------------------------------------------------------------------ */

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
        for (l = 0; l < g_nl; l++)
            if (g_p[i].slots[l].cb_began >= 0)
                return 0;
    }
    return 1;
}

/* Whether lease l is held now: its work runs somewhere (a scheduler's
 * lease: its row has a live hold of a live process's, the harness seeing
 * no callback of the scheduler's supervisor). */
static int held_now(int l)
{
    const sim_row *r;
    int i;

    if (g_scenario != SC_SCHED)
        return other_running(l, -1) >= 0;
    r = rows_get(g_names[l]);
    if (r == NULL || row_free(r) || r->expires_null || r->expires_at_ms <= simdb_now_ms())
        return 0;
    for (i = 0; i < g_np; i++)
        if (g_p[i].live && strcmp(g_p[i].owner, r->owner) == 0)
            return 1;
    return 0;
}

static int all_held(void)
{
    int l;

    for (l = 0; l < g_nl; l++)
        if (!held_now(l))
            return 0;
    return 1;
}

/* Whether every lease not held now was found not held past its bound:
 * nothing more to wait for. */
static int all_reported(void)
{
    int l;

    for (l = 0; l < g_nl; l++)
        if (!held_now(l) && !g_l[l].not_held_reported)
            return 0;
    return 1;
}

/* A live supervisor that holds nothing keeps trying: once the faults
 * have ended, a lease is held again within the ttl its last holder ran
 * it with (a watching follower's wait; none for a row left free) + 2 x
 * retry (the read that starts the watch, the poll after it) + a call's
 * bound, from the later of the row's last change and the faults' end; a
 * group's, once a dead worker's presence is watched out too. */
static void check_liveness(int64_t t0)
{
    int l;

    for (l = 0; l < g_nl; l++) {
        lease_state *ls = &g_l[l];
        int64_t from = ls->written_at > t0 ? ls->written_at : t0;
        /* A follower that first read a dead holder's row after the
         * database's clock stepped back cannot tell: it waits for the
         * row's expiry, which the steps pushed out. */
        int64_t due = from + ls->writer_ttl + g_stepped_back + 2 * RETRY_MS + CALL_BOUND;
        if (g_scenario == SC_GROUP)
            due += 3000 + 2 * RETRY_MS;
        /* A row handed over is the target's alone for the reservation;
         * a dead target's then passes, and it is free to anyone. */
        due += ls->reserve_ms;
        if (ls->not_held_reported || held_now(l) || sim_now() <= due)
            continue;
        violation("lease-%d not held %" PRId64 " ms after the faults ended and %" PRId64
                  " ms after its row last changed (that hold's ttl %" PRId64 " ms%s%s%s)", l,
                  sim_now() - t0, sim_now() - ls->written_at, ls->writer_ttl,
                  ls->reserve_ms > 0 ? "; a hand-over to " : "",
                  ls->reserve_ms > 0 ? ls->reserved_for : "",
                  ls->reserve_ms > 0 && ls->dead_target ? ", which no live process is" : "");
        ls->not_held_reported = 1;
    }
}

/* How long a supervisor (or a group's reads) may go without a statement
 * once the faults have ended: a heartbeat or a retry, and a call's bound
 * (a statement stuck since the faults returns by then). */
static int64_t silence_bound(const slot *s)
{
    int64_t every = s != NULL && s->t.hb > RETRY_MS ? s->t.hb : RETRY_MS;

    return every + CALL_BOUND + 100;
}

/* A supervisor that stops sending statements for good, whatever state
 * it is in, is never noticed by the other checks while another process
 * holds the lease. */
static void check_silence(int64_t t0)
{
    int i, l;

    for (i = 0; i < g_np; i++) {
        proc *p = &g_p[i];
        if (!p->live)
            continue;
        if (p->grp != NULL) {
            int64_t last = p->last_list > t0 ? p->last_list : t0;
            if (sim_now() - last > silence_bound(NULL)) {
                violation("p%d: the group has not read the table for %" PRId64 " ms", i,
                          sim_now() - last);
                p->last_list = sim_now();
            }
            continue;
        }
        for (l = 0; l < g_nl; l++) {
            slot *s = &p->slots[l];
            int64_t last = s->last_sent > t0 ? s->last_sent : t0;
            if ((p->sup[l] == NULL && p->sched == NULL) || sim_now() - last <= silence_bound(s))
                continue;
            violation("p%d lease-%d: its supervisor has sent nothing for %" PRId64 " ms", i, l,
                      sim_now() - last);
            s->last_sent = sim_now();
        }
    }
}

/* After the shares settled: each live worker within one of its fair
 * share, floor(N / W) - 1 .. ceil(N / W) + 1 (a worker that fills up
 * last may be short by one, and slack keeps one above). */
static void check_shares(void)
{
    int i, w = 0;

    for (i = 0; i < g_np; i++)
        if (g_p[i].live && g_p[i].grp != NULL)
            w++;
    if (w == 0)
        return;
    for (i = 0; i < g_np; i++) {
        size_t held = 0;
        int lo = g_nl / w - 1, hi = (g_nl + w - 1) / w + 1;
        sqlease_error err;
        if (!g_p[i].live || g_p[i].grp == NULL)
            continue;
        (void)sqlease_group_held(g_p[i].grp, NULL, 0, &held, &err);
        trace("p%d holds %zu of the group's %d leases (%d workers)", i, held, g_nl, w);
        if ((int)held < lo || (int)held > hi)
            violation("p%d holds %zu of the group's %d leases with %d live workers, not "
                      "within %d..%d", i, held, g_nl, w, lo, hi);
    }
}

static void crash_and_replace(void)
{
    int v = (int)sim_below((uint64_t)g_np);
    char owner[16];

    if (!g_p[v].live || g_np >= MAX_P)
        return;
    snprintf(owner, sizeof owner, "%s", g_p[v].owner);
    proc_crash(v);
    sqle_sleep_ms((int64_t)sim_below(3000));
    /* Half the time the replacement is the same host restarted, with the
     * same owner id: the dead holder's row names it. */
    if (sim_below(2) == 0) {
        g_events[EV_OWNER_REUSE]++;
        proc_start(g_np++, owner);
    } else {
        proc_start(g_np++, NULL);
    }
}

static void handoff_ask(int v, int l, int how);

static void fault(void)
{
    uint64_t r = sim_below(100);
    int v = (int)sim_below((uint64_t)g_np), l = (int)sim_below((uint64_t)g_nl);

    if (r < 6) {
        crash_and_replace();
    } else if (r < 12) {
        /* The whole pause (with a freeze still in progress, from its
         * start) less than the smallest ttl - renew_deadline of the
         * process's leases (a mixed fleet's 2 s ttl leaves 1 s): a pause
         * past that margin is one the contract leaves to fencing
         * tokens. */
        int64_t margin = 900, now = sim_now(), d;
        int k, f = g_p[v].nfreeze - 1;
        for (k = 0; k < g_nl; k++)
            if (g_p[v].slots[k].t.ttl - g_p[v].slots[k].t.rd < margin)
                margin = g_p[v].slots[k].t.ttl - g_p[v].slots[k].t.rd;
        if (f >= 0 && g_p[v].freeze_until[f] > now)
            margin -= now - g_p[v].freeze_from[f];
        d = (int64_t)sim_below(900);
        if (margin <= 1)
            d = 0;
        else if (d >= margin)
            d = d % margin;
        if (g_p[v].live && d > 0) {
            /* A freeze during a freeze lengthens it: one pause, counted
             * once. */
            int64_t added = d;
            if (f >= 0 && g_p[v].freeze_until[f] > now) {
                added = now + d > g_p[v].freeze_until[f] ? now + d - g_p[v].freeze_until[f] : 0;
                if (added > 0)
                    g_p[v].freeze_until[f] = now + d;
            } else if (g_p[v].nfreeze < 64) {
                g_p[v].freeze_from[g_p[v].nfreeze] = now;
                g_p[v].freeze_until[g_p[v].nfreeze++] = now + d;
            }
            for (l = 0; l < g_nl; l++)
                if (g_p[v].slots[l].running)
                    g_p[v].slots[l].frozen_ms += added;
            sim_freeze(v + 1, g_p[v].freeze_until[g_p[v].nfreeze - 1] > now + d
                                  ? g_p[v].freeze_until[g_p[v].nfreeze - 1] : now + d);
            g_faults++;
            g_events[EV_FREEZE]++;
            trace("p%d frozen for %" PRId64 " ms", v, d);
        }
    } else if (r < 18) {
        /* A process cut off from the database for a while. */
        int64_t d = 500 + (int64_t)sim_below(7000);
        if (g_p[v].live) {
            simdb_cut_until[v + 1] = sim_now() + d;
            g_faults++;
            g_events[EV_CUT]++;
            trace("p%d cut off from the database for %" PRId64 " ms", v, d);
        }
    } else if (r < 20) {
        /* A graceful stop, and a replacement a little later. */
        if (g_p[v].live && g_np < MAX_P) {
            proc_stop(v);
            g_events[EV_STOP]++;
            sqle_sleep_ms((int64_t)sim_below(3000));
            proc_start(g_np++, NULL);
        }
    } else if (r < 22) {
        /* A second process given a live one's owner id (two overlapping
         * cron runs of one host): two holds, never one.  Not a group's
         * worker: a group tells its workers apart by their owner ids
         * (sqlease.h), so two live ones must not share one. */
        if (g_p[v].live && g_np < MAX_P && g_scenario != SC_GROUP) {
            char owner[16];
            snprintf(owner, sizeof owner, "%s", g_p[v].owner);
            g_events[EV_TWIN]++;
            trace("p%d starts with p%d's owner id %s", g_np, v, owner);
            proc_start(g_np++, owner);
        }
    } else if (r < 24) {
        admin_force_release(l);
    } else if (r < 25) {
        /* Tokens from the database's clock go back after a step back:
         * not with clock steps (an assumption of the guarantees). */
        if (!g_clock_steps)
            admin_reseed(l);
    } else if (r < 26) {
        (void)admin_migrate(1);
    } else if (r < 29) {
        if (g_hand_table)
            admin_null(l);
    } else if (r < 31) {
        admin_history(l);
    } else if (r < 33) {
        /* Not with clock steps: a step back would make fires due again
         * whose rows a keep of seconds had pruned (the library keeps days). */
        if (g_scenario == SC_SCHED && !g_clock_steps)
            admin_prune_ledger();
    } else if (r < 44 && g_scenario == SC_HANDOFF) {
        /* As often as before the history's and the ledger's four. */
        handoff_ask(v, l, (int)sim_below(3));
    } else if (r < 47 && g_scenario == SC_HANDOFF) {
        admin_transfer_withdrawn(l);
    }
    if (g_clock_steps && sim_below(100) < 15) {
        int64_t s = 1000 * (int64_t)(1 + sim_below(30));
        if (sim_below(2) == 0)
            s = -s;
        simdb_clock_step_ms += s;
        if (s < 0) {
            int j;
            for (j = 0; j < g_njobs; j++)
                if (seen_max(j) > g_jobs[j].back_hw)
                    g_jobs[j].back_hw = seen_max(j);
            g_stepped_back -= s;
            if (g_nsteps < MAX_STEPS) {
                g_step_at[g_nsteps] = sim_now();
                g_step_ms[g_nsteps++] = -s;
            }
        } else {
            g_stepped_fwd += s;
            if (g_nfsteps < MAX_STEPS) {
                g_fstep_at[g_nfsteps] = sim_now();
                g_fstep_ms[g_nfsteps++] = s;
            }
        }
        g_faults++;
        g_events[EV_CLOCK_STEP]++;
        trace("the database clock steps %" PRId64 " ms", s);
    }
}

typedef struct hold_rows {
    side_row *v;
    size_t n, cap;
} hold_rows;

static int collect(void *ud, const side_row *r)
{
    hold_rows *h = ud;

    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 64;
        side_row *v = realloc(h->v, cap * sizeof *v);
        if (v == NULL)
            return 1;
        h->v = v;
        h->cap = cap;
    }
    h->v[h->n++] = *r;
    return 0;
}

/* The holder history at the end: per lease name, no hold's interval
 * [started_at_ms, ended_at_ms) overlaps a later token's, by the
 * database's clock.  A step back of that clock between the earlier
 * hold's take and the later's (or the earlier's end, if written after)
 * lets a later time read lower by as much: what overlaps by no more than
 * the steps back between is told apart by token order, which the rows
 * are in (each take's token is its read's + 1). */
static void check_history(void)
{
    hold_rows all = {NULL, 0, 0};
    size_t i, j;

    (void)ledger_rows(ST_HOLD, "1 = 1", collect, &all);
    for (i = 0; i < all.n; i++) {
        const side_row *a = &all.v[i];
        const hold_seen *ha = hold_find(name_index(a->name), a->token);
        /* Every hold gets its end: one its holder released as it stopped
         * in the calm (no statement fails then) says so, unless two holds
         * after it began before its end was written (that end is left
         * unknown rather than wrong). */
        if (a->ended_at_ms == 0 && ha != NULL && ha->released_stopping && ha->released_calm &&
            hold_find(name_index(a->name), a->token + 2) == NULL)
            violation("lease %s's history: the hold with token %" PRId64 " (%s) has no end, "
                      "though its holder released it as it stopped, in the calm", a->name,
                      a->token, a->owner);
        if (a->ended_at_ms == 0)
            continue;
        for (j = i + 1; j < all.n && strcmp(all.v[j].name, a->name) == 0; j++) {
            const side_row *b = &all.v[j];
            const hold_seen *hb = hold_find(name_index(b->name), b->token);
            int64_t excuse = g_stepped_back;
            if (ha != NULL && hb != NULL) {
                int64_t until = hb->took_at > ha->end_written ? hb->took_at : ha->end_written;
                excuse = stepped_back_between(ha->took_at, until);
                if (deleted_between(name_index(a->name), hb->took_at, ha->end_written))
                    continue; /* the operator deleted the row the end reads */
            }
            if (a->ended_at_ms > b->started_at_ms + excuse) {
                violation("lease %s's history: the hold with token %" PRId64 " (%s, '%s') "
                          "ends at %" PRId64 ", %" PRId64 " ms after the hold with token %"
                          PRId64 " (%s) started", a->name, a->token, a->owner, a->state,
                          a->ended_at_ms, a->ended_at_ms - b->started_at_ms, b->token, b->owner);
                break;
            }
        }
    }
    free(all.v);
}

/* Process v's supervisor of lease l asked to hand its hold over
 * (sqlease_supervisor_handoff): to the best ready follower (how 0), to
 * an owner id no process has (1: a dead target, whose reservation must
 * run out), or to another process's owner id (2). */
static void handoff_ask(int v, int l, int how)
{
    sqlease_error err;
    const char *to = NULL;
    int rc;

    if (!g_p[v].live || g_p[v].sup[l] == NULL)
        return;
    if (how == 1)
        to = "gone";
    else if (how == 2)
        to = g_p[sim_below((uint64_t)g_np)].owner;
    sim_set_process(v + 1);
    rc = sqlease_supervisor_handoff(g_p[v].sup[l], to, &err);
    sim_set_process(0);
    g_events[EV_HANDOFF_ASK]++;
    trace("p%d lease-%d asked to hand over to %s: %d", v, l, to != NULL ? to : "*", rc);
}

/* One seed's history, as the first coroutine. */
static void history(void *arg)
{
    int64_t end, t0, window = 0, held_at = -1;
    int i, l;
    sqlease_error err;

    (void)arg;
    for (l = 0; l < g_nl; l++) {
        snprintf(g_names[l], sizeof g_names[l], "lease-%d", l);
        g_l[l].last_token = 0;
        g_l[l].last_starter = -1;
        g_l[l].written_at = sim_now();
    }
    /* The operator's handle, the table and its rows, before any fault;
     * a third of the seeds on a table made by hand without NOT NULL, as
     * an older installation may have (NULLs appear in it). */
    g_admin = open_db(-1);
    if (g_hand_table)
        admin_sql("CREATE TABLE " TABLE " (name VARCHAR(64) PRIMARY KEY, owner VARCHAR(255), "
                  "acquired_at_ms BIGINT, expires_at_ms BIGINT, token BIGINT, version BIGINT, "
                  "data VARCHAR(1024))");
    if (admin_migrate(1) != SQLEASE_OK ||
        (g_history_table && sqlease_history_migrate(g_admin, HOLD_TABLE, &err) != SQLEASE_OK) ||
        (g_scenario == SC_SCHED && sqlease_fire_migrate(g_admin, FIRE_TABLE, &err) != SQLEASE_OK)) {
        violation("set-up failed");
        return;
    }
    if (g_scenario == SC_SCHED)
        draw_jobs();
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
        proc_start(i, NULL);
    }
    if (g_scenario == SC_MIXED)
        g_events[EV_MIXED_FLEET]++;
    end = sim_now() + 30000;
    while (sim_now() < end) {
        sqle_sleep_ms(500 + (int64_t)sim_below(3000));
        sweep();
        fault();
    }
    /* Calm: no more faults.  They end as drawn (a cut, a freeze, a slow
     * callback already running); from then on every lease is held again
     * (check_liveness), every supervisor keeps sending (check_silence),
     * and a group's shares settle (check_shares). */
    memset(&simdb_cfg, 0, sizeof simdb_cfg);
    g_calm = 1;
    /* In the calm too, so that the liveness check sees one: whoever holds
     * lease 0 hands it to an owner id no process has. */
    if (g_scenario == SC_HANDOFF && (i = other_running(0, -1)) >= 0)
        handoff_ask(i, 0, 1);
    while (!faults_over()) {
        sweep();
        sqle_sleep_ms(10);
    }
    t0 = sim_now();
    g_calm_db = simdb_now_ms();
    for (i = 0; i < g_np; i++)
        for (l = 0; l < g_nl; l++)
            if (g_p[i].live && silence_bound(&g_p[i].slots[l]) + 1 > window)
                window = silence_bound(&g_p[i].slots[l]) + 1;
    if (g_scenario == SC_GROUP && window < GROUP_SETTLE_MS + g_stepped_back)
        window = GROUP_SETTLE_MS + g_stepped_back; /* a dead worker's presence too */
    if (g_scenario == SC_SCHED && window < SCHED_CALM_MS + g_stepped_back)
        window = SCHED_CALM_MS + g_stepped_back; /* a takeover, its catch-up, fires after */
    for (;;) {
        sweep();
        check_silence(t0);
        check_liveness(t0);
        if (held_at < 0 && all_held())
            held_at = sim_now();
        if (sim_now() - t0 >= window && (all_held() || all_reported()))
            break;
        sqle_sleep_ms(50);
    }
    if (held_at >= 0 && held_at - t0 > g_slowest_recovery)
        g_slowest_recovery = held_at - t0;
    trace("calm: held after %" PRId64 " ms", held_at >= 0 ? held_at - t0 : -1);
    if (g_scenario == SC_GROUP)
        check_shares();
    if (g_scenario == SC_SCHED)
        check_fires_due();
    g_stop_db = simdb_now_ms();
    for (i = 0; i < g_np; i++)
        proc_stop(i);
    if (g_scenario == SC_SCHED)
        (void)ledger_rows(ST_FIRE, "1 = 1", check_final_fire, NULL);
    if (g_history_table)
        check_history();
    sqlease_db_close(g_admin);
    g_admin = NULL;
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
    /* The scenario is the seed's: --replay SEED runs the same one. */
    if (g_force_scenario != SC_MIX) {
        g_scenario = g_force_scenario;
    } else {
        static const int mix[10] = {SC_PLAIN, SC_PLAIN, SC_PLAIN, SC_PLAIN, SC_SCHED,
                                    SC_SAME_TTL, SC_SAME_TTL, SC_MIXED, SC_MIXED, SC_GROUP};
        g_scenario = mix[seed % 10];
    }
    g_hand_table = g_force_table >= 0 ? g_force_table : seed % 3 == 0;
    g_nl = g_scenario == SC_GROUP ? GROUP_N : g_scenario == SC_SCHED ? 1 : g_leases;
    /* The holder history: on but for a seventh of the seeds (which run as
     * before it), its table missing in a few. */
    g_history = seed % 7 != 0;
    g_history_table = g_history && seed % 11 != 1;
    g_slack = (int)(seed / 10 % 2);
    g_seed_violated = 0;
    g_np = 0;
    g_calm = 0;
    memset(g_p, 0, sizeof g_p);
    memset(g_l, 0, sizeof g_l);
    memset(&simdb_cfg, 0, sizeof simdb_cfg);
    simdb_clock_step_ms = 0;
    g_stepped_back = 0;
    g_stepped_fwd = 0;
    g_nsteps = 0;
    g_nfsteps = 0;
    memset(g_ndeleted, 0, sizeof g_ndeleted);
    g_nxnames = 0;
    memset(g_hn, 0, sizeof g_hn);
    g_nruns = 0;
    jobs_clear();
    g_left_before = 0;
    g_nleft = 0;
    g_nunended = 0;
    g_calm_db = g_stop_db = 0;
    sim_reset();
    sim_seed(seed);
    rows_reset();
    if (simdb_open() != 0) {
        fprintf(stderr, "sqlease-sim: cannot open SQLite\n");
        exit(2);
    }
    trace("seed %" PRIu64 ": %s%s, %s, history %s", seed, g_scenario_names[g_scenario],
          g_hand_table ? " on a table made by hand" : "",
          g_batched ? "batched starts and stops" : "single starts and stops",
          !g_history ? "off" : g_history_table ? "on" : "on, its table missing");
    sim_budget(STEP_BUDGET, SIM_T0 + TIME_BUDGET_MS);
    rc = sim_run(history, NULL);
    if (rc == -2)
        violation("the history ran away: %" PRIu64 " scheduling points, %.3f s of virtual "
                  "time, past the budget of %d and %d s",
                  sim_steps(), (sim_now() - SIM_T0) / 1000.0, STEP_BUDGET,
                  TIME_BUDGET_MS / 1000);
    else if (rc != 0 && !g_seed_violated)
        violation("every coroutine waits for ever (a deadlock)");
    simdb_close();
    jobs_clear();
    return g_seed_violated;
}

static void usage(void)
{
    fprintf(stderr, "usage: sqlease-sim --seeds N [--from S] [--processes P] [--leases L] "
                    "[--scenario mix|plain|same-ttl|mixed|group|sched|handoff] [--table made|hand] "
                    "[--clock-steps [--by-expiry]] [--plant NAME] [--first] | --replay SEED "
                    "[options] | --list-plants\n");
    exit(64);
}

int main(int argc, char **argv)
{
    uint64_t from = 1, n = 100, s;
    int replay = 0, first = 0, list_plants = 0, i, k;
    int64_t sim_ms = 0;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc) {
            n = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--from") == 0 && i + 1 < argc) {
            from = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--processes") == 0 && i + 1 < argc) {
            g_procs = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--leases") == 0 && i + 1 < argc) {
            g_leases = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--clock-steps") == 0) {
            g_clock_steps = 1;
        } else if (strcmp(argv[i], "--first") == 0) {
            first = 1;
        } else if (strcmp(argv[i], "--by-expiry") == 0) {
            g_by_expiry = 1;
        } else if (strcmp(argv[i], "--same-ttl") == 0) {
            g_force_scenario = SC_SAME_TTL;
        } else if (strcmp(argv[i], "--scenario") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            g_force_scenario = -2;
            if (strcmp(v, "mix") == 0)
                g_force_scenario = SC_MIX;
            for (k = 0; k < SC_COUNT; k++)
                if (strcmp(v, g_scenario_names[k]) == 0)
                    g_force_scenario = k;
            if (g_force_scenario == -2)
                usage();
        } else if (strcmp(argv[i], "--table") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            g_force_table = strcmp(v, "made") == 0 ? 0 : strcmp(v, "hand") == 0 ? 1 : -2;
            if (g_force_table == -2)
                usage();
        } else if (strcmp(argv[i], "--plant") == 0 && i + 1 < argc) {
            sqle_plant = argv[++i];
        } else if (strcmp(argv[i], "--list-plants") == 0) {
            list_plants = 1;
        } else if (strcmp(argv[i], "--replay") == 0 && i + 1 < argc) {
            from = strtoull(argv[++i], NULL, 10);
            n = 1;
            replay = 1;
        } else {
            usage();
        }
    }
    if (g_procs < 1 || g_procs > 16 || g_leases < 1 || g_leases > MAX_L || n == 0)
        usage();
    {
        const char *names[256];
        size_t np = sim_plants(names, 256), j;
        int known = sqle_plant == NULL;

        for (j = 0; j < np && j < 256; j++) {
            if (list_plants)
                printf("%s\n", names[j]);
            if (sqle_plant != NULL && strcmp(names[j], sqle_plant) == 0)
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
    if (kinds_init(TABLE, FIRE_TABLE, HOLD_TABLE) != 0 ||
        ledger_init(FIRE_TABLE, HOLD_TABLE) != 0) {
        fprintf(stderr, "sqlease-sim: cannot read the sqlite row's statements\n");
        return 2;
    }
    simdb_before_hook = before_statement;
    simdb_after_hook = after_statement;
    simdb_answer_hook = on_answer;
    simdb_unsent_hook = on_unsent;
    simdb_driver_hook = on_driver;
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
    /* What ran, by kind: a path that never ran shows 0. */
    printf("kinds:");
    for (k = 1; k < SK_COUNT; k++)
        if (k == SK_SEED_EACH || !kinds_simulated((sim_kind)k))
            continue; /* the seed's count, below: migrate sends only it */
        else if (k == SK_SEED)
            printf(" seed=%" PRIu64, g_kinds[SK_SEED] + g_kinds[SK_SEED_EACH]);
        else
            printf(" %s=%" PRIu64, kinds_name((sim_kind)k), g_kinds[k]);
    for (k = 0; k < EV_COUNT; k++)
        printf(" %s=%" PRIu64, g_event_names[k], g_events[k]);
    printf(" other=%" PRIu64 "\n", g_kinds[SK_OTHER]);
    printf("%" PRIu64 " seeds (from %" PRIu64 "), %.0f simulated s, %" PRIu64 " statements, %"
           PRIu64 " faults, %d violations, slowest recovery %.1f s\n",
           n, from, sim_ms / 1000.0, simdb_count.statements,
           g_faults + simdb_count.slow + simdb_count.lost + simdb_count.connect_failed,
           g_violations, g_slowest_recovery / 1000.0);
    return g_violations > 0 ? 1 : 0;
}
