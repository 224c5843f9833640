/*
 * test_scheduler.c -- the scheduler (src/scheduler.h) as a fleet runs it:
 * two or three schedulers in this process, each on its own handle and
 * owner id, under one lease, firing `@every 1s` jobs through the fire
 * ledger of the database under test ($SQLEASE_TEST_DSN, SQLite by
 * default).  What is checked is the promise: every fire started once
 * (on_fire is counted across the schedulers), near its instant while a
 * holder is healthy; a holder cut off from the database is replaced
 * within ttl + retry, and the fires due in the gap, the fires of an
 * outage of the whole fleet, and the runs a dead holder left running are
 * dealt with by each job's policy; overlap forbid, allow and replace;
 * reload; a claim answered after the hold ended starts nothing; and the
 * job lists the start refuses.
 *
 * A fire's "work" is a record of this file: on_fire notes it, and a
 * thread of the test ends it after RUN_MS (or never, on a node that
 * hangs its runs) with sqle_sched_done, as `sqlease cron` does when its
 * command exits; on_stop ends it at once.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cronexpr.h"
#include "fire.h"
#include "platform.h"
#include "scheduler.h"
#include "testutil.h"

#define TTL 1200
#define HB 300
#define DEADLINE 800
#define RETRY 100
/* What a loaded 2-core machine may add to any bound. */
#define SLACK 800
#define RUN_MS 50
#define NAME "sched"
#define MAXN 3
#define MAXEV 2048
#define SEC 1000

/* ---- what the callbacks saw ---------------------------------------- */

enum { EV_FIRE = 1, EV_STOP = 2 };

typedef struct ev {
    int kind, node;
    char job[SQLEASE_MAX_JOB + 1];
    uint64_t id;
    int64_t fire, token, wall;
    int attempt, catch_up, reason;
} ev;

/* A fire's work, until the test's thread ends it. */
typedef struct work {
    struct work *next;
    int node;
    char job[SQLEASE_MAX_JOB + 1];
    uint64_t id;
    int64_t end_at;           /* mono ms; -1: runs until stopped */
    int stopped;
} work;

typedef struct node {
    int id;
    char owner[32], host[32];
    sqlease_db *db;
    tu_faulty *f;
    sqle_sched *s;            /* NULL once stopping: no more done */
    int hang;                 /* its runs end only when stopped */
    int busy;                 /* done calls in flight */
    int64_t run_ms;
} node;

static sqle_mutex g_m;
static ev g_ev[MAXEV];
static int g_nev;
static work *g_work;
static node g_nodes[MAXN];
static int g_quit;
static sqle_thread g_ender;
static sqlease_db *g_admin;
static char g_lease[64], g_fire[64];
static uint64_t g_done_ok, g_done_failed;
/* A statement a faulty node's handle fails from its start (NULL: none). */
static const char *g_fail_exact;
/* A run started while a run of its job went on on the same node, for a
 * job that does not allow overlap. */
static int g_overlaps;

/* What a job's userdata says of its runs (NULL: a quick one, no overlap):
 * whether they may overlap, and how long they last (0: the node's). */
typedef struct jobcfg {
    int may_overlap;
    int64_t run_ms;
} jobcfg;

static const jobcfg k_allow = {1, 0};
static const jobcfg k_long = {0, 2500};
static const jobcfg k_long_allow = {1, 2500};
static const jobcfg k_mid = {0, 1500};
static const jobcfg k_mid_allow = {1, 1500};

/* This host's clock, epoch ms: the database's on the servers the tests
 * start here (and SQLite's own), to measure how late a fire started. */
static int64_t wall_ms(void)
{
    struct timespec ts;

    timespec_get(&ts, TIME_UTC);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* on_fire: note it, and give it its end (quick: the lock is held). */
static void on_fire(void *ud, const sqle_fire *f)
{
    node *n = ud;
    work *w = calloc(1, sizeof *w);

    sqle_mutex_lock(&g_m);
    if (g_nev < MAXEV) {
        ev *e = &g_ev[g_nev++];
        memset(e, 0, sizeof *e);
        e->kind = EV_FIRE;
        e->node = n->id;
        snprintf(e->job, sizeof e->job, "%s", f->job);
        e->id = f->id;
        e->fire = f->fire_at_ms;
        e->token = f->token;
        e->wall = wall_ms();
        e->attempt = f->attempt;
        e->catch_up = f->catch_up;
    }
    const jobcfg *cfg = f->job_userdata;
    int64_t run_ms = cfg != NULL && cfg->run_ms > 0 ? cfg->run_ms : n->run_ms;

    if (cfg == NULL || !cfg->may_overlap) {
        work *o;
        for (o = g_work; o != NULL; o = o->next)
            if (o->node == n->id && !o->stopped && strcmp(o->job, f->job) == 0) {
                fprintf(stderr, "\n  %s: fire %lld started on node %d beside a run of it",
                        f->job, (long long)f->fire_at_ms, n->id);
                g_overlaps++;
            }
    }
    if (w != NULL) {
        w->node = n->id;
        snprintf(w->job, sizeof w->job, "%s", f->job);
        w->id = f->id;
        w->end_at = n->hang ? -1 : sqle_mono_ms() + run_ms;
        w->next = g_work;
        g_work = w;
    }
    sqle_mutex_unlock(&g_m);
}

/* on_stop: the work stops at once (the ender reports it). */
static void on_stop(void *ud, const sqle_fire *f, int reason)
{
    node *n = ud;
    work *w;

    sqle_mutex_lock(&g_m);
    if (g_nev < MAXEV) {
        ev *e = &g_ev[g_nev++];
        memset(e, 0, sizeof *e);
        e->kind = EV_STOP;
        e->node = n->id;
        snprintf(e->job, sizeof e->job, "%s", f->job);
        e->id = f->id;
        e->fire = f->fire_at_ms;
        e->token = f->token;
        e->wall = wall_ms();
        e->attempt = f->attempt;
        e->reason = reason;
    }
    for (w = g_work; w != NULL; w = w->next)
        if (w->node == n->id && w->id == f->id) {
            w->stopped = 1;
            w->end_at = sqle_mono_ms();
        }
    sqle_mutex_unlock(&g_m);
}

static void on_log(void *ud, int level, const char *line)
{
    (void)ud;
    tu_log_sink(NULL, level, line);
}

/* The thread that ends the works whose time came, with sqle_sched_done
 * (outside g_m: done takes the scheduler's lock, which on_fire holds
 * when it takes g_m). */
static void ender(void *arg)
{
    (void)arg;
    sqle_mutex_lock(&g_m);
    while (!g_quit) {
        work **pp, *w = NULL;
        int64_t now = sqle_mono_ms();

        for (pp = &g_work; *pp != NULL; pp = &(*pp)->next)
            if ((*pp)->end_at >= 0 && (*pp)->end_at <= now && g_nodes[(*pp)->node].s != NULL) {
                w = *pp;
                *pp = w->next;
                break;
            }
        if (w == NULL) {
            sqle_mutex_unlock(&g_m);
            sqle_sleep_ms(5);
            sqle_mutex_lock(&g_m);
            continue;
        }
        {
            node *n = &g_nodes[w->node];
            sqle_sched *s = n->s;
            sqlease_error err;
            int rc;

            n->busy++;
            sqle_mutex_unlock(&g_m);
            rc = sqle_sched_done(s, w->id, w->stopped ? 143 : 0, w->stopped, &err);
            sqle_mutex_lock(&g_m);
            n->busy--;
            if (rc == SQLEASE_OK)
                g_done_ok++;
            else
                g_done_failed++;
            free(w);
        }
    }
    sqle_mutex_unlock(&g_m);
}

/* ---- the fleet ------------------------------------------------------ */

static sqle_job job(const char *name, const char *schedule, int missed, int abandoned,
                    int overlap)
{
    sqle_job j;

    memset(&j, 0, sizeof j);
    j.name = name;
    j.schedule = schedule;
    j.missed = missed;
    j.abandoned = abandoned;
    j.overlap = overlap;
    j.userdata = overlap == SQLE_OVERLAP_ALLOW ? (void *)&k_allow : NULL;
    return j;
}

/* faulty: 0 a plain handle; else behind a fault injector, whose
 * statements are bounded by `faulty` ms (1: TU_FAULTY_QUERY_TIMEOUT_MS). */
static void node_start_t(int id, const sqle_job *jobs, size_t nj, int faulty, int64_t ttl)
{
    node *n = &g_nodes[id];
    sqlease_options o;
    sqle_sched_callbacks cb;
    sqlease_error err;
    sqlease_db *db = NULL;
    tu_faulty *f = NULL;
    int rc;

    if (faulty > 1)
        f = tu_faulty_open_qt(&db, faulty);
    else if (faulty)
        f = tu_faulty_open(&db);
    else
        db = tu_open();
    CU_ASSERT_PTR_NOT_NULL_FATAL(db);
    if (f != NULL && g_fail_exact != NULL)
        tu_fault_match_exact(f, g_fail_exact, TU_FAULT_CONNECT);
    sqle_mutex_lock(&g_m);
    n->id = id;
    snprintf(n->owner, sizeof n->owner, "node-%d", id);
    snprintf(n->host, sizeof n->host, "host-%d", id);
    n->db = db;
    n->f = f;
    if (n->run_ms == 0)
        n->run_ms = RUN_MS;
    sqle_mutex_unlock(&g_m);
    tu_options(&o, g_lease, NAME, n->owner, ttl, HB, DEADLINE, RETRY);
    memset(&cb, 0, sizeof cb);
    cb.userdata = n;
    cb.on_fire = on_fire;
    cb.on_stop = on_stop;
    cb.on_log = on_log;
    {
        sqle_sched *s = NULL;
        rc = sqle_sched_start(&s, db, &o, g_fire, n->host, jobs, nj, 0, &cb, &err);
        if (rc != SQLEASE_OK)
            fprintf(stderr, "\n  sqle_sched_start: %s\n", err.message);
        CU_ASSERT_EQUAL_FATAL(rc, SQLEASE_OK);
        sqle_mutex_lock(&g_m);
        n->s = s;
        sqle_mutex_unlock(&g_m);
    }
}

static void node_start(int id, const sqle_job *jobs, size_t nj, int faulty)
{
    node_start_t(id, jobs, nj, faulty, TTL);
}

static int node_idle(void *arg)
{
    node *n = arg;
    work *w;
    int left = 0;

    sqle_mutex_lock(&g_m);
    for (w = g_work; w != NULL; w = w->next)
        if (w->node == n->id && w->end_at >= 0)
            left++;
    left += n->busy;
    sqle_mutex_unlock(&g_m);
    return left == 0;
}

/* Stop a node (its works end through the ender), then free it. */
static void node_stop(int id)
{
    node *n = &g_nodes[id];
    sqlease_error err;
    sqle_sched *s;
    work **pp;

    if (n->s == NULL)
        return;
    (void)sqle_sched_stop(n->s, &err);
    /* The stop's on_stop ended every work; wait for their done. */
    CU_ASSERT(tu_await(node_idle, n, 10000));
    sqle_mutex_lock(&g_m);
    s = n->s;
    n->s = NULL;
    for (pp = &g_work; *pp != NULL;) {
        if ((*pp)->node == id) {
            work *w = *pp;
            *pp = w->next;
            free(w);
        } else {
            pp = &(*pp)->next;
        }
    }
    sqle_mutex_unlock(&g_m);
    CU_ASSERT(tu_await(node_idle, n, 10000));
    sqle_sched_free(s);
    sqlease_db_close(n->db);
    tu_faulty_free(n->f);
    n->db = NULL;
    n->f = NULL;
}

static void fleet_begin(void)
{
    sqlease_error err;

    snprintf(g_lease, sizeof g_lease, "%s", tu_table());
    snprintf(g_fire, sizeof g_fire, "%s", tu_table());
    CU_ASSERT_EQUAL_FATAL(tu_migrate(g_admin, g_lease, NAME), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(sqle_fire_migrate(g_admin, g_fire, &err), SQLEASE_OK);
    sqle_mutex_lock(&g_m);
    g_nev = 0;
    g_quit = 0;
    g_done_ok = g_done_failed = 0;
    g_overlaps = 0;
    memset(g_nodes, 0, sizeof g_nodes);
    sqle_mutex_unlock(&g_m);
    tu_log_clear();
    CU_ASSERT_EQUAL_FATAL(sqle_thread_start(&g_ender, ender, NULL), 0);
}

static void fleet_end(void)
{
    int i;

    for (i = 0; i < MAXN; i++)
        node_stop(i);
    sqle_mutex_lock(&g_m);
    g_quit = 1;
    sqle_mutex_unlock(&g_m);
    sqle_thread_join(&g_ender);
    CU_ASSERT_EQUAL(g_overlaps, 0);
    while (g_work != NULL) {
        work *w = g_work;
        g_work = w->next;
        free(w);
    }
    tu_drop(g_admin, g_fire);
    tu_drop(g_admin, g_lease);
}

static void stats_of(int id, sqle_sched_stats *st)
{
    memset(st, 0, sizeof *st);
    sqle_sched_stats_get(g_nodes[id].s, st);
}

static int holding(void *arg)
{
    int id = (int)(intptr_t)arg;
    sqle_sched_stats st;

    stats_of(id, &st);
    return st.holding;
}

static int not_holding(void *arg)
{
    return !holding(arg);
}

/* Which node holds (-1: none). */
static int holder(void)
{
    int i;

    for (i = 0; i < MAXN; i++)
        if (g_nodes[i].s != NULL && holding((void *)(intptr_t)i))
            return i;
    return -1;
}

static int someone_holds(void *arg)
{
    (void)arg;
    return holder() >= 0;
}

/* ---- reading what happened ----------------------------------------- */

/* The events of `kind` of `job` (NULL: any), in the order they came. */
static int events(int kind, const char *job, ev *out, int cap)
{
    int i, n = 0;

    sqle_mutex_lock(&g_m);
    for (i = 0; i < g_nev && n < cap; i++)
        if (g_ev[i].kind == kind && (job == NULL || strcmp(g_ev[i].job, job) == 0))
            out[n++] = g_ev[i];
    sqle_mutex_unlock(&g_m);
    return n;
}

typedef struct count_arg {
    const char *job;
    int node;                 /* -1: any */
    int min_catch_up;         /* 1: only catch-ups count; 0: any; -1: only on time */
    int attempt;              /* 0: any */
    int want;
} count_arg;

static int fires_counted(const count_arg *c)
{
    int i, n = 0;

    sqle_mutex_lock(&g_m);
    for (i = 0; i < g_nev; i++) {
        const ev *e = &g_ev[i];
        if (e->kind != EV_FIRE || strcmp(e->job, c->job) != 0)
            continue;
        if (c->node >= 0 && e->node != c->node)
            continue;
        if (c->min_catch_up > 0 && !e->catch_up)
            continue;
        if (c->min_catch_up < 0 && e->catch_up)
            continue;
        if (c->attempt > 0 && e->attempt != c->attempt)
            continue;
        n++;
    }
    sqle_mutex_unlock(&g_m);
    return n;
}

static int enough_fires(void *arg)
{
    count_arg *c = arg;
    return fires_counted(c) >= c->want;
}

/* Await `want` fires of job by node (-1 any); on time only if on_time. */
static int await_fires(const char *job, int nd, int on_time, int attempt, int want,
                       int64_t timeout)
{
    count_arg c = {job, nd, on_time ? -1 : 0, attempt, want};
    return tu_await(enough_fires, &c, timeout);
}

#define MAXROWS 512

typedef struct rows {
    sqlease_fire_info v[MAXROWS];
    int n;
} rows;

static int on_row(void *ud, const sqlease_fire_info *fi)
{
    rows *r = ud;

    if (r->n < MAXROWS)
        r->v[r->n++] = *fi;
    return 0;
}

/* The ledger's rows of `job`, oldest first. */
static void ledger(const char *job, rows *r)
{
    sqlease_error err;
    int i;

    r->n = 0;
    CU_ASSERT_EQUAL(sqle_fire_list(g_admin, g_fire, NAME, job, 0, INT64_MAX, 0, on_row, r, &err),
                    SQLEASE_OK);
    for (i = 0; i < r->n / 2; i++) {
        sqlease_fire_info t = r->v[i];
        r->v[i] = r->v[r->n - 1 - i];
        r->v[r->n - 1 - i] = t;
    }
}

static const sqlease_fire_info *row_at(const rows *r, int64_t fire)
{
    int i;

    for (i = 0; i < r->n; i++)
        if (r->v[i].fire_at_ms == fire)
            return &r->v[i];
    return NULL;
}

/* Each (job, fire, attempt) started at most once across the fleet. */
static int duplicates(void)
{
    int i, k, d = 0;

    sqle_mutex_lock(&g_m);
    for (i = 0; i < g_nev; i++)
        for (k = i + 1; k < g_nev; k++)
            if (g_ev[i].kind == EV_FIRE && g_ev[k].kind == EV_FIRE &&
                strcmp(g_ev[i].job, g_ev[k].job) == 0 && g_ev[i].fire == g_ev[k].fire &&
                g_ev[i].attempt == g_ev[k].attempt) {
                fprintf(stderr, "\n  %s fire %lld attempt %d started twice (nodes %d, %d)",
                        g_ev[i].job, (long long)g_ev[i].fire, g_ev[i].attempt, g_ev[i].node,
                        g_ev[k].node);
                d++;
            }
    sqle_mutex_unlock(&g_m);
    return d;
}

/* Rows of the ledger for every second from first to last, none missing. */
static int contiguous(const rows *r, int64_t period)
{
    int i;

    for (i = 1; i < r->n; i++)
        if (r->v[i].fire_at_ms - r->v[i - 1].fire_at_ms != period) {
            fprintf(stderr, "\n  ledger: %s fire %lld then %lld (period %lld)", r->v[i].job,
                    (long long)r->v[i - 1].fire_at_ms, (long long)r->v[i].fire_at_ms,
                    (long long)period);
            return 0;
        }
    return 1;
}

/* ---- the tests ------------------------------------------------------ */

/*
 * Three schedulers on one lease, a job every second and one every two
 * (six fields): each fire is started once, by the holder, near its
 * instant, and the ledger has a 'done' row per fire with the holder's
 * owner, host and token.  And overlap, with runs of 2.5 s every second:
 * forbid records the fires whose previous run still runs 'skipped'
 * (naming it); allow runs every fire beside the previous; replace stops
 * the previous run (on_stop, SQLE_STOP_REPLACED) before it starts the
 * new one.
 */
static void test_fleet_once_each(void)
{
    sqle_job jobs[5];
    ev f[64], all[MAXEV];
    rows r;
    sqle_sched_stats st;
    int i, n, h, k, na;
    int64_t first_tick = 0, first;

    fleet_begin();
    jobs[0] = job("tick", "@every 1s", SQLE_MISSED_ONCE, 0, 0);
    jobs[1] = job("even", "*/2 * * * * *", SQLE_MISSED_ONCE, 0, 0);
    jobs[2] = job("forbid", "@every 1s", SQLE_MISSED_ONCE, 0, SQLE_OVERLAP_FORBID);
    jobs[2].userdata = (void *)&k_long;
    jobs[3] = job("allow", "@every 1s", SQLE_MISSED_ONCE, 0, SQLE_OVERLAP_ALLOW);
    jobs[3].userdata = (void *)&k_long_allow;
    jobs[4] = job("replace", "@every 1s", SQLE_MISSED_ONCE, 0, SQLE_OVERLAP_REPLACE);
    jobs[4].userdata = (void *)&k_long;
    for (i = 0; i < 3; i++)
        node_start(i, jobs, 5, 0);
    CU_ASSERT_FATAL(tu_await(someone_holds, NULL, 2 * TTL + SLACK));
    h = holder();
    /* Six seconds of firing. */
    CU_ASSERT(await_fires("tick", -1, 1, 0, 6, 6 * SEC + TTL + SLACK));
    for (i = 0; i < 3; i++) {
        stats_of(i, &st);
        CU_ASSERT_EQUAL(st.holding, i == h);
        if (i == h) {
            CU_ASSERT(st.claimed >= 6 + 1 + 2 + 5 + 5); /* tick, even, forbid, allow, replace */
            CU_ASSERT(st.skipped >= 3);
            CU_ASSERT_EQUAL(st.failures, 0);
            CU_ASSERT_EQUAL(st.lost_claims, 0);
            /* Healthy: no fire later than a claim's round trip or so. */
            CU_ASSERT(st.max_fire_late_ms >= 0 && st.max_fire_late_ms < RETRY + SLACK);
        } else {
            CU_ASSERT_EQUAL(st.claimed, 0);
        }
    }
    /* The others first: the holder's stop would hand them the lease. */
    for (i = 0; i < 3; i++)
        if (i != h)
            node_stop(i);
    node_stop(h);
    CU_ASSERT_EQUAL(duplicates(), 0);

    n = events(EV_FIRE, "tick", f, 64);
    CU_ASSERT(n >= 6);
    for (i = 0; i < n; i++) {
        int64_t late = f[i].wall - f[i].fire;
        CU_ASSERT_EQUAL(f[i].node, h);
        CU_ASSERT_EQUAL(f[i].attempt, 1);
        CU_ASSERT_EQUAL(f[i].catch_up, 0);
        CU_ASSERT_EQUAL(f[i].fire % SEC, 0);
        CU_ASSERT(late >= -50 && late < RETRY + SLACK);
        if (i > 0)
            CU_ASSERT_EQUAL(f[i].fire - f[i - 1].fire, SEC);
        if (i == 0)
            first_tick = f[i].fire;
    }
    ledger("tick", &r);
    CU_ASSERT(contiguous(&r, SEC));
    CU_ASSERT(r.n >= n);
    for (i = 0; i < n; i++) {
        const sqlease_fire_info *row = row_at(&r, f[i].fire);
        CU_ASSERT_PTR_NOT_NULL_FATAL(row);
        /* The last may have been stopped by the shutdown. */
        if (i < n - 1 || strcmp(row->state, "done") == 0) {
            CU_ASSERT_STRING_EQUAL(row->state, "done");
            CU_ASSERT_EQUAL(row->has_exit, 1);
            CU_ASSERT_EQUAL(row->exit_status, 0);
            CU_ASSERT(row->duration_ms >= 0 && row->duration_ms < RUN_MS + SLACK);
        }
        CU_ASSERT_STRING_EQUAL(row->owner, g_nodes[h].owner);
        CU_ASSERT_STRING_EQUAL(row->host, g_nodes[h].host);
        CU_ASSERT_EQUAL(row->token, f[i].token);
        CU_ASSERT_EQUAL(row->attempt, 1);
    }
    /* No row before the first fire: a new job starts at its next fire. */
    CU_ASSERT(r.n > 0 && r.v[0].fire_at_ms == first_tick);

    n = events(EV_FIRE, "even", f, 64);
    CU_ASSERT(n >= 2);
    for (k = 0; k < n; k++) {
        CU_ASSERT_EQUAL(f[k].fire % (2 * SEC), 0);
        if (k > 0)
            CU_ASSERT_EQUAL(f[k].fire - f[k - 1].fire, 2 * SEC);
    }
    ledger("even", &r);
    CU_ASSERT(contiguous(&r, 2 * SEC));

    /* forbid: a run every third second, the two between skipped. */
    n = events(EV_FIRE, "forbid", f, 64);
    CU_ASSERT(n >= 2);
    for (i = 1; i < n; i++)
        CU_ASSERT_EQUAL(f[i].fire - f[i - 1].fire, 3 * SEC);
    ledger("forbid", &r);
    CU_ASSERT(contiguous(&r, SEC));
    first = n > 0 ? f[0].fire : 0;
    for (i = 0; i < r.n; i++) {
        int64_t since = r.v[i].fire_at_ms - first;
        if (since < 0)
            continue;
        if (since % (3 * SEC) == 0) {
            CU_ASSERT(strcmp(r.v[i].state, "skipped") != 0);
        } else {
            char when[40];
            sqle_cron_format_utc(r.v[i].fire_at_ms - since % (3 * SEC), when, sizeof when);
            CU_ASSERT_STRING_EQUAL(r.v[i].state, "skipped");
            CU_ASSERT_PTR_NOT_NULL(strstr(r.v[i].note, when));
            CU_ASSERT_PTR_NOT_NULL(strstr(r.v[i].note, "overlap forbid"));
        }
    }

    /* allow: every fire, with runs side by side. */
    n = events(EV_FIRE, "allow", f, 64);
    CU_ASSERT(n >= 5);
    for (i = 1; i < n; i++)
        CU_ASSERT_EQUAL(f[i].fire - f[i - 1].fire, SEC);
    n = events(EV_STOP, "allow", f, 64);
    for (i = 0; i < n; i++)
        CU_ASSERT_EQUAL(f[i].reason, SQLE_STOP_SHUTDOWN);
    ledger("allow", &r);
    for (i = 0; i + 3 < r.n; i++)
        CU_ASSERT_STRING_EQUAL(r.v[i].state, "done");

    /* replace: each fire stops the one before it first. */
    n = events(EV_FIRE, "replace", f, 64);
    CU_ASSERT(n >= 5);
    for (i = 1; i < n; i++)
        CU_ASSERT_EQUAL(f[i].fire - f[i - 1].fire, SEC);
    sqle_mutex_lock(&g_m);
    na = g_nev;
    memcpy(all, g_ev, (size_t)na * sizeof *all);
    sqle_mutex_unlock(&g_m);
    for (i = 1; i < n; i++) {
        int stop_at = -1, fire_at = -1;
        for (k = 0; k < na; k++) {
            if (strcmp(all[k].job, "replace") != 0)
                continue;
            if (all[k].kind == EV_STOP && all[k].fire == f[i - 1].fire)
                stop_at = k;
            if (all[k].kind == EV_FIRE && all[k].fire == f[i].fire)
                fire_at = k;
        }
        CU_ASSERT(stop_at >= 0 && stop_at < fire_at);
        if (stop_at >= 0)
            CU_ASSERT_EQUAL(all[stop_at].reason, SQLE_STOP_REPLACED);
    }
    ledger("replace", &r);
    for (i = 0; i + 1 < r.n; i++) {
        CU_ASSERT_STRING_EQUAL(r.v[i].state, "failed");
        CU_ASSERT_PTR_NOT_NULL(strstr(r.v[i].note, "replaced"));
    }
    fleet_end();
}

/*
 * The holder cut off from the database: the other takes over within
 * ttl + retry, no fire is started twice, and of the fires due in the
 * gap (a ttl of 2.5 s makes it two or more) the latest is run late and
 * the older ones are recorded missed (policy once).
 */
static void test_failover(void)
{
    sqle_job jobs[1];
    ev f[64];
    rows r;
    sqle_sched_stats st;
    int64_t cut_at, took_at, last_a = 0, first_b = 0, catch_fire = 0;
    int i, n, catch_ups = 0, missed = 0;
    const int64_t ttl = 2500;

    fleet_begin();
    jobs[0] = job("tick", "@every 1s", SQLE_MISSED_ONCE, 0, 0);
    node_start_t(0, jobs, 1, 1, ttl);
    CU_ASSERT_FATAL(tu_await(holding, (void *)(intptr_t)0, 2 * ttl + SLACK));
    node_start_t(1, jobs, 1, 0, ttl);
    CU_ASSERT(await_fires("tick", 0, 1, 0, 1, 2 * SEC + SLACK));
    /* Cut it off right after a fire, so that the gap holds whole fires. */
    n = fires_counted(&(count_arg){"tick", 0, 0, 0, 0});
    CU_ASSERT(await_fires("tick", 0, 1, 0, n + 1, 2 * SEC));
    tu_fault_set(g_nodes[0].f, TU_FAULT_CONNECT, 0);
    cut_at = sqle_mono_ms();
    CU_ASSERT_FATAL(tu_await(holding, (void *)(intptr_t)1, ttl + RETRY + SLACK));
    took_at = sqle_mono_ms();
    CU_ASSERT(took_at - cut_at <= ttl + RETRY + SLACK);
    CU_ASSERT(tu_await(not_holding, (void *)(intptr_t)0, 10));
    CU_ASSERT(await_fires("tick", 1, 1, 0, 1, 2 * SEC + SLACK));
    stats_of(1, &st);
    CU_ASSERT(st.token > 0);
    node_stop(1);
    node_stop(0);
    CU_ASSERT_EQUAL(duplicates(), 0);

    n = events(EV_FIRE, "tick", f, 64);
    for (i = 0; i < n; i++) {
        if (f[i].node == 0 && f[i].fire > last_a)
            last_a = f[i].fire;
        if (f[i].node == 1 && f[i].catch_up) {
            catch_ups++;
            catch_fire = f[i].fire;
            CU_ASSERT_EQUAL(f[i].token, st.token);
            /* Run at the takeover, within ttl + retry of the gap's end. */
            CU_ASSERT(f[i].wall - f[i].fire < ttl + RETRY + SLACK);
        }
        if (f[i].node == 1 && !f[i].catch_up && (first_b == 0 || f[i].fire < first_b))
            first_b = f[i].fire;
    }
    CU_ASSERT_EQUAL(catch_ups, 1);
    CU_ASSERT(last_a > 0 && first_b > last_a);
    CU_ASSERT_EQUAL(catch_fire, first_b - SEC);
    ledger("tick", &r);
    CU_ASSERT(contiguous(&r, SEC));
    for (i = 0; i < r.n; i++) {
        const sqlease_fire_info *row = &r.v[i];
        if (row->fire_at_ms > last_a && row->fire_at_ms < catch_fire) {
            missed++;
            CU_ASSERT_STRING_EQUAL(row->state, "missed");
            CU_ASSERT_PTR_NOT_NULL(strstr(row->note, "policy once"));
            CU_ASSERT_STRING_EQUAL(row->owner, g_nodes[1].owner);
        } else if (row->fire_at_ms <= last_a) {
            CU_ASSERT_STRING_EQUAL(row->owner, g_nodes[0].owner);
        } else {
            CU_ASSERT_STRING_EQUAL(row->owner, g_nodes[1].owner);
            CU_ASSERT_EQUAL(row->token, st.token);
        }
    }
    /* Two or more fires were due in the gap: one ran, the rest missed. */
    CU_ASSERT(missed >= 1);
    CU_ASSERT_EQUAL(missed, (catch_fire - last_a) / SEC - 1);
    fleet_end();
}

/*
 * The whole fleet down for a few periods, then one scheduler: by policy,
 * once runs the latest of the fires nobody claimed and records the
 * others missed; all runs each, oldest first; skip runs none and records
 * each missed; and a max age leaves the older fires unrun, the newest of
 * them recorded missed with a note, the ones before it unwritten.
 */
static void test_outage(void)
{
    static const char *names[4] = {"once", "all", "skip", "aged"};
    sqle_job jobs[4];
    int64_t last[4] = {0}, gap_end[4] = {0};
    ev f[64];
    rows r;
    int k, i, n;
    const int outage_s = 4;

    fleet_begin();
    jobs[0] = job("once", "@every 1s", SQLE_MISSED_ONCE, 0, 0);
    jobs[1] = job("all", "@every 1s", SQLE_MISSED_ALL, 0, 0);
    jobs[2] = job("skip", "@every 1s", SQLE_MISSED_SKIP, 0, 0);
    jobs[3] = job("aged", "@every 1s", SQLE_MISSED_ALL, 0, 0);
    jobs[3].max_age_ms = 1500;
    node_start(0, jobs, 4, 0);
    CU_ASSERT_FATAL(tu_await(holding, (void *)(intptr_t)0, 2 * TTL + SLACK));
    for (k = 0; k < 4; k++)
        CU_ASSERT(await_fires(names[k], 0, 1, 0, 1, 2 * SEC + SLACK));
    node_stop(0);
    for (k = 0; k < 4; k++) {
        ledger(names[k], &r);
        CU_ASSERT_FATAL(r.n >= 1);
        last[k] = r.v[r.n - 1].fire_at_ms;
    }
    /* The outage: nobody holds for outage_s periods. */
    sqle_sleep_ms(outage_s * SEC);
    node_start(1, jobs, 4, 0);
    CU_ASSERT_FATAL(tu_await(holding, (void *)(intptr_t)1, 2 * TTL + SLACK));
    for (k = 0; k < 4; k++)
        CU_ASSERT(await_fires(names[k], 1, 1, 0, 1, 2 * SEC + SLACK));
    node_stop(1);
    CU_ASSERT_EQUAL(duplicates(), 0);

    for (k = 0; k < 4; k++) {
        int64_t catch[16], first_on_time = 0;
        int nc = 0, missed = 0, gap;

        n = events(EV_FIRE, names[k], f, 64);
        for (i = 0; i < n; i++) {
            if (f[i].node != 1)
                continue;
            if (f[i].catch_up && nc < 16)
                catch[nc++] = f[i].fire;
            else if (!f[i].catch_up && first_on_time == 0)
                first_on_time = f[i].fire;
        }
        CU_ASSERT_FATAL(first_on_time > last[k]);
        gap_end[k] = first_on_time;
        gap = (int)((first_on_time - last[k]) / SEC) - 1; /* fires nobody claimed */
        CU_ASSERT(gap >= outage_s - 1 && gap <= outage_s + 3);
        ledger(names[k], &r);
        for (i = 0; i < r.n; i++)
            if (r.v[i].fire_at_ms > last[k] && r.v[i].fire_at_ms < first_on_time &&
                strcmp(r.v[i].state, "missed") == 0)
                missed++;
        switch (k) {
        case 0: /* once */
            CU_ASSERT_EQUAL(nc, 1);
            CU_ASSERT_EQUAL(catch[0], first_on_time - SEC);
            CU_ASSERT_EQUAL(missed, gap - 1);
            CU_ASSERT(contiguous(&r, SEC));
            break;
        case 1: /* all, oldest first */
            CU_ASSERT_EQUAL(nc, gap);
            for (i = 0; i < nc; i++)
                CU_ASSERT_EQUAL(catch[i], last[k] + (i + 1) * SEC);
            CU_ASSERT_EQUAL(missed, 0);
            CU_ASSERT(contiguous(&r, SEC));
            break;
        case 2: /* skip */
            CU_ASSERT_EQUAL(nc, 0);
            CU_ASSERT_EQUAL(missed, gap);
            CU_ASSERT(contiguous(&r, SEC));
            break;
        case 3: { /* all, within 1.5 s of the takeover */
            const sqlease_fire_info *old;
            int below = 0;
            CU_ASSERT(nc >= 1 && nc <= 2);
            for (i = 0; i < nc; i++)
                CU_ASSERT_EQUAL(catch[i], first_on_time - (nc - i) * SEC);
            CU_ASSERT_EQUAL(missed, 1);
            old = nc > 0 ? row_at(&r, catch[0] - SEC) : NULL;
            CU_ASSERT_PTR_NOT_NULL(old);
            if (old != NULL) {
                CU_ASSERT_STRING_EQUAL(old->state, "missed");
                CU_ASSERT_PTR_NOT_NULL(strstr(old->note, "max age (1500 ms)"));
            }
            for (i = 0; i < r.n; i++)
                if (r.v[i].fire_at_ms > last[k] && nc > 0 && r.v[i].fire_at_ms < catch[0] - SEC)
                    below++;
            CU_ASSERT_EQUAL(below, 0);
            break;
        }
        }
    }
    (void)gap_end;
    fleet_end();
}

/*
 * Runs left running by a holder that died: A holds, every run hangs, and
 * it is cut off (its on_stop's done cannot write: the rows stay
 * 'running'); B takes over, marks them abandoned and reruns the
 * at-least-once jobs' (attempt 2), not the at-most-once one; B hangs and
 * is cut off in turn; C reruns the job allowed three attempts (attempt 3)
 * but not the one allowed two.
 */
static void test_abandoned(void)
{
    sqle_job jobs[3];
    int64_t fl = 0, fl2 = 0, fm = 0;
    ev f[256];
    rows r;
    sqle_sched_stats st;
    int i, n, per[3][4];
    const sqlease_fire_info *row;

    fleet_begin();
    jobs[0] = job("least", "@every 1s", SQLE_MISSED_ONCE, SQLE_ABANDONED_AT_LEAST_ONCE, 0);
    jobs[0].max_attempts = 3;
    jobs[1] = job("least2", "@every 1s", SQLE_MISSED_SKIP, SQLE_ABANDONED_AT_LEAST_ONCE, 0);
    jobs[1].max_attempts = 2;
    jobs[2] = job("most", "@every 1s", SQLE_MISSED_SKIP, SQLE_ABANDONED_AT_MOST_ONCE, 0);
    g_nodes[0].hang = g_nodes[1].hang = 1;
    node_start(0, jobs, 3, 1);
    CU_ASSERT_FATAL(tu_await(holding, (void *)(intptr_t)0, 2 * TTL + SLACK));
    CU_ASSERT_FATAL(await_fires("least", 0, 1, 1, 1, 2 * SEC + SLACK));
    CU_ASSERT_FATAL(await_fires("least2", 0, 1, 1, 1, 2 * SEC + SLACK));
    CU_ASSERT_FATAL(await_fires("most", 0, 1, 1, 1, 2 * SEC + SLACK));
    n = events(EV_FIRE, NULL, f, 256);
    for (i = 0; i < n; i++) {
        if (strcmp(f[i].job, "least") == 0 && fl == 0)
            fl = f[i].fire;
        if (strcmp(f[i].job, "least2") == 0 && fl2 == 0)
            fl2 = f[i].fire;
        if (strcmp(f[i].job, "most") == 0 && fm == 0)
            fm = f[i].fire;
    }
    /* B comes 1.5 s after A's end: a fire or two nobody claimed, whose
     * latest "least" (policy once) would run beside its rerun. */
    tu_fault_set(g_nodes[0].f, TU_FAULT_CONNECT, 0);
    sqle_sleep_ms(1500);
    node_start(1, jobs, 3, 1);
    CU_ASSERT_FATAL(tu_await(holding, (void *)(intptr_t)1, TTL + RETRY + SLACK));
    CU_ASSERT(await_fires("least", 1, 0, 2, 1, 2 * SEC));
    CU_ASSERT(await_fires("least2", 1, 0, 2, 1, 2 * SEC));
    /* B runs on: its own fire of "most" hangs too. */
    CU_ASSERT(await_fires("most", 1, 1, 1, 1, 2 * SEC + SLACK));
    stats_of(1, &st);
    CU_ASSERT_EQUAL(st.reruns, 2);
    CU_ASSERT(st.abandoned >= 3);
    node_start(2, jobs, 3, 0);
    tu_fault_set(g_nodes[1].f, TU_FAULT_CONNECT, 0);
    CU_ASSERT_FATAL(tu_await(holding, (void *)(intptr_t)2, TTL + RETRY + SLACK));
    CU_ASSERT(await_fires("least", 2, 0, 3, 1, 2 * SEC));
    /* C ran two on-time fires of each: whatever it reran, it did first. */
    CU_ASSERT(await_fires("most", 2, 1, 1, 2, 3 * SEC + SLACK));
    CU_ASSERT(await_fires("least2", 2, 1, 1, 1, 2 * SEC + SLACK));
    stats_of(2, &st);
    CU_ASSERT_EQUAL(st.reruns, 1);
    node_stop(2);
    node_stop(1);
    node_stop(0);
    CU_ASSERT_EQUAL(duplicates(), 0);

    /* Who started the first fire of each job, by attempt. */
    memset(per, 0, sizeof per);
    n = events(EV_FIRE, NULL, f, 256);
    for (i = 0; i < n; i++) {
        int j = strcmp(f[i].job, "least") == 0    ? 0
                : strcmp(f[i].job, "least2") == 0 ? 1
                                                  : 2;
        int64_t first = j == 0 ? fl : j == 1 ? fl2 : fm;
        if (f[i].fire != first)
            continue;
        CU_ASSERT(f[i].attempt >= 1 && f[i].attempt <= 3);
        if (f[i].attempt >= 1 && f[i].attempt <= 3) {
            per[j][f[i].attempt]++;
            /* Attempt k on node k - 1; a rerun is a catch-up. */
            CU_ASSERT_EQUAL(f[i].node, f[i].attempt - 1);
            CU_ASSERT_EQUAL(f[i].catch_up, f[i].attempt > 1);
        }
    }
    CU_ASSERT(per[0][1] == 1 && per[0][2] == 1 && per[0][3] == 1);
    CU_ASSERT(per[1][1] == 1 && per[1][2] == 1 && per[1][3] == 0);
    CU_ASSERT(per[2][1] == 1 && per[2][2] == 0 && per[2][3] == 0);

    ledger("least", &r);
    row = row_at(&r, fl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    CU_ASSERT_STRING_EQUAL(row->state, "done");
    CU_ASSERT_EQUAL(row->attempt, 3);
    CU_ASSERT_STRING_EQUAL(row->owner, g_nodes[2].owner);
    ledger("least2", &r);
    row = row_at(&r, fl2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    CU_ASSERT_STRING_EQUAL(row->state, "abandoned");
    CU_ASSERT_EQUAL(row->attempt, 2);
    CU_ASSERT_STRING_EQUAL(row->owner, g_nodes[1].owner);
    ledger("most", &r);
    row = row_at(&r, fm);
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    CU_ASSERT_STRING_EQUAL(row->state, "abandoned");
    CU_ASSERT_EQUAL(row->attempt, 1);
    CU_ASSERT_STRING_EQUAL(row->owner, g_nodes[0].owner);
    CU_ASSERT(row->ended_at_ms > 0);
    fleet_end();
}

/*
 * A takeover whose read of the database's clock fails, in a process
 * that never read it before (no offset to go by): nothing is claimed
 * on a guessed clock, and once the clock reads, the job fires at its
 * times from then on.
 */
static void test_takeover_without_clock(void)
{
    sqle_job jobs[1];
    ev f[64];
    rows r;
    int i, n;
    int64_t t0 = wall_ms();

    fleet_begin();
    jobs[0] = job("tick", "@every 1s", SQLE_MISSED_ONCE, 0, 0);
    g_fail_exact = sqle_db_dialect(g_admin)->now.sql;
    node_start(0, jobs, 1, 1);
    g_fail_exact = NULL;
    CU_ASSERT_FATAL(tu_await(holding, (void *)(intptr_t)0, 2 * TTL + SLACK));
    /* Holding, without a clock, for a second. */
    sqle_sleep_ms(SEC);
    CU_ASSERT(tu_fault_matched(g_nodes[0].f, NULL) >= 2);
    CU_ASSERT_EQUAL(fires_counted(&(count_arg){"tick", 0, 0, 0, 0}), 0);
    tu_fault_match(g_nodes[0].f, NULL, TU_FAULT_NONE);
    CU_ASSERT(await_fires("tick", 0, 1, 0, 2, 3 * SEC + SLACK));
    node_stop(0);
    n = events(EV_FIRE, "tick", f, 64);
    for (i = 0; i < n; i++) {
        CU_ASSERT(f[i].fire >= t0);
        CU_ASSERT(f[i].wall - f[i].fire < RETRY + SLACK);
        if (i > 0)
            CU_ASSERT_EQUAL(f[i].fire - f[i - 1].fire, SEC);
    }
    ledger("tick", &r);
    CU_ASSERT(r.n >= 2 && r.v[0].fire_at_ms >= t0);
    fleet_end();
}

/*
 * Reloads while it fires (the same list again and again, as a SIGHUP
 * storm would): every job keeps its place, each fire is started once
 * and none is lost.  (Under ASan: a claim or a record that goes on
 * across a reload uses no job the reload freed.)  Then a list that does
 * not parse changes nothing (the message names the job and the column),
 * and a good one keeps r0 in its place, drops the others, and adds a
 * job that fires from its next time, with no catch-up.
 */
static void test_reload(void)
{
    sqle_job jobs[4], bad[2], good[2];
    sqlease_error err;
    ev f[64];
    rows r;
    int k, i, n, reloads = 0, before[4];
    int64_t until, reload_wall;
    static const char *names[4] = {"r0", "r1", "r2", "r3"};

    fleet_begin();
    for (k = 0; k < 4; k++)
        jobs[k] = job(names[k], "@every 1s", SQLE_MISSED_ONCE, 0,
                      k == 3 ? SQLE_OVERLAP_FORBID : SQLE_OVERLAP_ALLOW);
    /* Runs of 1.5 s: r3's odd fires are skipped. */
    for (k = 0; k < 4; k++)
        jobs[k].userdata = (void *)(k == 3 ? &k_mid : &k_mid_allow);
    node_start(0, jobs, 4, 0);
    CU_ASSERT_FATAL(tu_await(holding, (void *)(intptr_t)0, 2 * TTL + SLACK));
    CU_ASSERT(await_fires("r0", 0, 1, 0, 1, 2 * SEC + SLACK));
    until = sqle_mono_ms() + 2 * SEC;
    while (sqle_mono_ms() < until) {
        CU_ASSERT_EQUAL(sqle_sched_reload(g_nodes[0].s, jobs, 4, &err), SQLEASE_OK);
        reloads++;
        sqle_sleep_ms(1); /* a storm, but one that lets the scheduler's thread in */
    }
    CU_ASSERT(reloads > 100);

    bad[0] = jobs[0];
    bad[1] = job("c", "*/5 * 32 * *", 0, 0, 0);
    CU_ASSERT_EQUAL(sqle_sched_reload(g_nodes[0].s, bad, 2, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "job 'c'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "column 7"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "day of month"));

    good[0] = jobs[0];
    good[1] = job("c", "*/2 * * * * *", 0, 0, 0);
    reload_wall = wall_ms();
    CU_ASSERT_EQUAL(sqle_sched_reload(g_nodes[0].s, good, 2, &err), SQLEASE_OK);
    for (k = 0; k < 4; k++)
        before[k] = fires_counted(&(count_arg){names[k], 0, 0, 0, 0});
    CU_ASSERT(await_fires("c", 0, 1, 0, 1, 3 * SEC));
    CU_ASSERT(await_fires("r0", 0, 1, 0, before[0] + 2, 3 * SEC));
    node_stop(0);
    CU_ASSERT_EQUAL(duplicates(), 0);
    for (k = 0; k < 4; k++) {
        n = events(EV_FIRE, names[k], f, 64);
        ledger(names[k], &r);
        CU_ASSERT(contiguous(&r, SEC));
        CU_ASSERT(n >= (k == 0 ? 3 : k < 3 ? 2 : 1)); /* r3 runs every other second */
        for (i = 1; i < n && k < 3; i++)
            CU_ASSERT_EQUAL(f[i].fire - f[i - 1].fire, SEC);
        /* The dropped ones fired no more (but at the very moment of the
         * reload). */
        if (k > 0) {
            CU_ASSERT(n <= before[k] + 1);
            for (i = 0; i < n; i++)
                CU_ASSERT(f[i].fire <= reload_wall + 50);
        }
    }
    /* c from its next time after the reload, no catch-up. */
    n = events(EV_FIRE, "c", f, 64);
    CU_ASSERT(n >= 1);
    for (i = 0; i < n; i++) {
        CU_ASSERT(f[i].fire > reload_wall - 50);
        CU_ASSERT_EQUAL(f[i].fire % (2 * SEC), 0);
        CU_ASSERT_EQUAL(f[i].catch_up, 0);
    }
    fleet_end();
}

/* The ledger of "tick" has more rows than *arg. */
static int ledger_grew(void *arg)
{
    static rows r;

    ledger("tick", &r);
    return r.n > *(int *)arg;
}

/*
 * A claim whose answer comes after the hold ended starts nothing: the
 * claim statement is held back, the lease is lost meanwhile (every other
 * statement hangs past the renew deadline), and then the claim runs and
 * inserts its row (the lease row's expiry is a ttl of 3 s away): the
 * scheduler ends that row as not started, and on_fire is never called
 * for it.
 */
static void test_claimed_then_lost(void)
{
    sqle_job jobs[1];
    rows r;
    int i, n, started_after = 0;
    ev f[64];
    int64_t held_fire = 0;
    const sqlease_fire_info *row;
    tu_faulty *fy;
    int rows_before;

    fleet_begin();
    jobs[0] = job("tick", "@every 1s", SQLE_MISSED_SKIP, 0, 0);
    /* Statements bounded by 5 s: the claim's caller waits for its answer
     * through the whole hang. */
    node_start_t(0, jobs, 1, 5000, 3000);
    fy = g_nodes[0].f;
    CU_ASSERT_FATAL(tu_await(holding, (void *)(intptr_t)0, 2 * TTL + SLACK));
    CU_ASSERT_FATAL(await_fires("tick", 0, 1, 0, 1, 2 * SEC + SLACK));
    tu_fault_match(fy, "'running', 1, owner", TU_FAULT_HANG);
    /* The next claim hangs; then every other statement does too. */
    for (i = 0; i < 300 && tu_fault_hung(fy) < 1; i++)
        sqle_sleep_ms(10);
    CU_ASSERT_FATAL(tu_fault_hung(fy) >= 1);
    n = fires_counted(&(count_arg){"tick", 0, 0, 0, 0});
    tu_fault_set(fy, TU_FAULT_HANG, 0);
    CU_ASSERT_FATAL(tu_await(not_holding, (void *)(intptr_t)0, DEADLINE + SLACK));
    /* The hold is over here; the claim goes through, then the rest. */
    ledger("tick", &r);
    rows_before = r.n;
    tu_fault_match(fy, "'running', 1, owner", TU_FAULT_NONE);
    CU_ASSERT(tu_await(ledger_grew, &rows_before, 5000));
    tu_fault_match(fy, NULL, TU_FAULT_NONE);
    tu_fault_set(fy, TU_FAULT_NONE, 0);
    /* Nothing started while it did not hold. */
    CU_ASSERT_EQUAL(fires_counted(&(count_arg){"tick", 0, 0, 0, 0}), n);
    /* It takes the lease again and fires on. */
    CU_ASSERT(tu_await(holding, (void *)(intptr_t)0, 2 * 3000 + SLACK));
    CU_ASSERT(await_fires("tick", 0, 1, 0, n + 1, 3 * SEC + SLACK));
    node_stop(0);
    CU_ASSERT_EQUAL(duplicates(), 0);
    ledger("tick", &r);
    n = events(EV_FIRE, "tick", f, 64);
    for (i = 0; i < r.n; i++) {
        int k, started = 0;
        for (k = 0; k < n; k++)
            started += f[k].fire == r.v[i].fire_at_ms;
        if (strstr(r.v[i].note, "not started") != NULL) {
            held_fire = r.v[i].fire_at_ms;
            started_after += started;
        }
    }
    CU_ASSERT(held_fire > 0);
    CU_ASSERT_EQUAL(started_after, 0);
    row = row_at(&r, held_fire);
    if (row != NULL) {
        CU_ASSERT_STRING_EQUAL(row->state, "failed");
        CU_ASSERT_PTR_NOT_NULL(strstr(row->note, "the lease ended as it was claimed"));
    }
    fleet_end();
}

/* What sqle_sched_start and reload refuse, with nothing started. */
static void test_bad_input(void)
{
    sqle_job j[2];
    sqlease_options o;
    sqlease_error err;
    sqle_sched *s = (sqle_sched *)1;
    sqle_sched_callbacks cb;
    struct {
        sqle_job a, b;
        int n;
        const char *want1, *want2;
    } cases[] = {
        {{.name = NULL, .schedule = "@every 1s"}, {0}, 1, "job name", NULL},
        {{.name = "", .schedule = "@every 1s"}, {0}, 1, "job name", NULL},
        {{.name = "x", .schedule = "@every 1s"}, {.name = "x", .schedule = "@daily"}, 2,
         "job 'x' is given twice", NULL},
        {{.name = "x", .schedule = NULL}, {0}, 1, "job 'x'", "no schedule"},
        {{.name = "x", .schedule = "0 25 * * *"}, {0}, 1, "job 'x'", "column 3"},
        {{.name = "y", .schedule = "@every 1s"}, {.name = "x", .schedule = "* * * *"}, 2,
         "job 'x'", NULL},
        {{.name = "x", .schedule = "@every 1s", .tz = "Nowhere/Atlantis"}, {0}, 1, "job 'x'",
         "Nowhere/Atlantis"},
        {{.name = "x", .schedule = "@every 1s", .missed = 3}, {0}, 1, "job 'x'", "policy"},
        {{.name = "x", .schedule = "@every 1s", .abandoned = 2}, {0}, 1, "job 'x'", "policy"},
        {{.name = "x", .schedule = "@every 1s", .overlap = -1}, {0}, 1, "job 'x'", "policy"},
        {{.name = "x", .schedule = "@every 1s", .max_age_ms = -1}, {0}, 1, "job 'x'", "limit"},
        {{.name = "x", .schedule = "@every 1s", .max_attempts = -1}, {0}, 1, "job 'x'", "limit"},
    };
    size_t i;

    fleet_begin();
    tu_options(&o, g_lease, NAME, "bad", TTL, HB, DEADLINE, RETRY);
    memset(&cb, 0, sizeof cb);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        j[0] = cases[i].a;
        j[1] = cases[i].b;
        s = (sqle_sched *)1;
        memset(&err, 0, sizeof err);
        CU_ASSERT_EQUAL(sqle_sched_start(&s, g_admin, &o, g_fire, NULL, j, (size_t)cases[i].n,
                                         0, &cb, &err), SQLEASE_EINVAL);
        CU_ASSERT_PTR_NULL(s);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.message, cases[i].want1));
        if (cases[i].want2 != NULL)
            CU_ASSERT_PTR_NOT_NULL(strstr(err.message, cases[i].want2));
        if (strstr(err.message, cases[i].want1) == NULL ||
            (cases[i].want2 != NULL && strstr(err.message, cases[i].want2) == NULL))
            fprintf(stderr, "\n  case %zu: %s", i, err.message);
    }
    CU_ASSERT_EQUAL(sqle_sched_start(&s, g_admin, &o, g_fire, NULL, NULL, 1, 0, &cb, &err),
                    SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqle_sched_start(&s, NULL, &o, g_fire, NULL, j, 1, 0, &cb, &err),
                    SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqle_sched_start(&s, g_admin, &o, "no such table!", NULL, j, 0, 0, &cb,
                                     &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqle_sched_start(&s, g_admin, &o, g_fire, NULL, j, 0, -1, &cb, &err),
                    SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqle_sched_done(NULL, 1, 0, 0, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqle_sched_reload(NULL, j, 0, &err), SQLEASE_EINVAL);
    CU_ASSERT_EQUAL(sqle_sched_stop(NULL, &err), SQLEASE_EINVAL);
    sqle_sched_free(NULL);

    /* A started one: no such fire; a bad reload names the job. */
    j[0] = job("ok", "@every 1s", 0, 0, 0);
    node_start(0, j, 1, 0);
    CU_ASSERT_EQUAL(sqle_sched_done(g_nodes[0].s, 999999, 0, 0, &err), SQLEASE_ENOROW);
    j[1] = job("ok", "@hourly", 0, 0, 0);
    CU_ASSERT_EQUAL(sqle_sched_reload(g_nodes[0].s, j, 2, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "job 'ok' is given twice"));
    fleet_end();
}

static void add(void)
{
    CU_pSuite s = CU_add_suite("scheduler", NULL, NULL);
    CU_add_test(s, "bad jobs, policies and calls are refused, naming the job and column",
                test_bad_input);
    CU_add_test(s, "three schedulers: each fire started once, on time, its row done; "
                "overlap forbid, allow, replace", test_fleet_once_each);
    CU_add_test(s, "failover: taken over within ttl + retry, the gap's latest run, the rest "
                "missed", test_failover);
    CU_add_test(s, "an outage of the fleet: missed fires by policy once, all, skip, max age",
                test_outage);
    CU_add_test(s, "abandoned runs: rerun at least once up to max attempts, never at most once",
                test_abandoned);
    CU_add_test(s, "a takeover that cannot read the clock claims nothing until it can",
                test_takeover_without_clock);
    CU_add_test(s, "reload: a storm keeps every job in place; a bad list changes nothing, a "
                "good one adds and drops jobs", test_reload);
    CU_add_test(s, "a claim answered after the hold ended starts nothing",
                test_claimed_then_lost);
}

int main(void)
{
    int rc;

    sqle_mutex_init(&g_m);
    g_admin = tu_open();
    if (g_admin == NULL)
        return 2;
    rc = tu_main(add);
    sqlease_db_close(g_admin);
    tu_cleanup();
    sqle_mutex_destroy(&g_m);
    return rc;
}
