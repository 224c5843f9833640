/*
 * scheduler.c -- the scheduler (see scheduler.h): a supervisor of one lease, and
 * a thread that, while it holds, claims each job's fires in the ledger
 * (fire.h) at their times on the database's clock and starts the work of
 * each fire it claimed.
 *
 * The database's clock decides everything that must agree across the
 * fleet: which instants are fires (every host computes the same ones from
 * the same expression, cronexpr.h), and when a fire may be claimed (the
 * claim itself requires the clock to have reached it).  This process's
 * own clock only says when to send the claim: an offset between the two,
 * measured at each takeover and once a minute after, turns a fire's
 * instant into a moment to wake; a claim that arrives early answers so,
 * and is sent again.
 *
 * The lock (s->m) is what makes "claimed, then started" safe against a
 * lease that ends in between: a claim's answer is acted on under the
 * lock, and only if the hold it was sent under (its generation, s->gen)
 * is still the one running; the supervisor's on_stopped takes the same
 * lock to end the generation before it stops any work.  So a fire whose
 * claim was answered after the hold ended is never started (its row is
 * ended as failed, "not started"), and every fire started under a hold is
 * stopped by that hold's on_stopped.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cronexpr.h"
#include "db.h"
#include "fire.h"
#include "internal.h"
#include "platform.h"
#include "scheduler.h"
#include "tz.h"

/* How often the offset between this process's clock and the database's
 * is measured again while holding, and rows are pruned. */
#define CLOCK_REFRESH_MS 60000
#define PRUNE_PERIOD_MS (10 * 60000)
/* Clock reads per measurement, the shortest round trip's kept. */
#define CLOCK_SAMPLES 3
/* Pruning: a window of the ledger per statement, a few per round. */
#define PRUNE_WINDOW_MS (3600 * INT64_C(1000))
#define PRUNE_WINDOWS 12
/* A claim is sent this long after its instant by this process's
 * estimate of the database's clock, so that a small error in the
 * estimate seldom makes it early. */
#define CLAIM_LAG_MS 5

typedef struct sjob {
    sqle_job j;               /* strings below are owned */
    sqle_cron *cron;
    int64_t next_ms;          /* the next fire to claim, database clock; -1 none */
    int64_t *queue;           /* catch-up fires to run (SQLE_MISSED_ALL), oldest first */
    size_t nq, qhead, qcap;
} sjob;

typedef struct srun {
    struct srun *next;
    uint64_t id;
    char job[SQLEASE_MAX_JOB + 1];
    void *job_userdata;
    int64_t fire_at_ms;
    int attempt;
    int64_t token;
    uint64_t gen;             /* the hold it was started under */
    int catch_up;
    int stop_reason;          /* 0: running; else why it was stopped */
} srun;

struct sqle_sched {
    sqlease_db *db;
    char *table, *fire_table, *name, *owner, *host;
    sqle_fire_ctx fctx;
    sqlease_supervisor *sup;
    sqle_sched_callbacks cb;
    int64_t keep_ms;
    int64_t retry_ms;

    sqle_mutex m;
    sqle_cond c;
    sqle_thread thread;
    int thread_started;
    int stopping;

    /* The hold (under m): holding, its token, and a generation that
     * changes at every start and stop of the work. */
    int holding;
    int64_t token;
    uint64_t gen;
    int takeover;             /* the new hold's takeover is still to run */

    sjob *jobs;
    size_t njobs;
    srun *runs;
    uint64_t next_id;

    int clock_valid;
    int64_t clock_off;        /* database clock - sqle_mono_ms */
    int64_t clock_at;         /* sqle_mono_ms of that measure */
    int64_t prune_at;         /* sqle_mono_ms of the next pruning */
    int64_t prune_cursor;     /* database clock: where pruning goes on */

    /* The last claim whose statement failed, not known either way (it may
     * have committed, its answer lost): its job, fire and hold.  Its next
     * try that finds the fire claimed by this very hold, running at
     * attempt 1, starts it (under m). */
    char unsure_job[SQLEASE_MAX_JOB + 1];
    int64_t unsure_fire;
    uint64_t unsure_gen;

    sqle_sched_stats st;
};

/* ---- small things --------------------------------------------------- */

static void slog(sqle_sched *s, int level, const char *fmt, ...) SQLEASE_PRINTF(3, 4);

static void slog(sqle_sched *s, int level, const char *fmt, ...)
{
    char line[600];
    va_list ap;

    if (s->cb.on_log == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    s->cb.on_log(s->cb.userdata, level, line);
}

static void fire_text(int64_t ms, char *buf, size_t cap)
{
    sqle_cron_format_utc(ms, buf, cap);
}

static void job_clear(sjob *j)
{
    free((char *)j->j.name);
    free((char *)j->j.schedule);
    free((char *)j->j.tz);
    sqle_cron_free(j->cron);
    free(j->queue);
    memset(j, 0, sizeof *j);
}

static void jobs_free(sjob *jobs, size_t n)
{
    size_t i;

    for (i = 0; jobs != NULL && i < n; i++)
        job_clear(&jobs[i]);
    free(jobs);
}

/* The zones a list's expressions are read in, each opened once and
 * shared by every job of that zone: a zone's rules through 2200 take
 * kilobytes, and ten thousand jobs in one zone would otherwise hold ten
 * thousand copies. */
typedef struct zone_cache {
    sqle_tz **z;
    size_t n, cap;
} zone_cache;

static int zone_get(zone_cache *zc, const char *name, sqle_tz **out, sqlease_error *err)
{
    size_t i;
    int rc;

    *out = NULL;
    if (name == NULL)
        return SQLEASE_OK; /* UTC */
    for (i = 0; i < zc->n; i++)
        if (strcmp(sqle_tz_name(zc->z[i]), name) == 0) {
            *out = zc->z[i];
            return SQLEASE_OK;
        }
    if (zc->n == zc->cap) {
        size_t cap = zc->cap ? 2 * zc->cap : 4;
        sqle_tz **v = realloc(zc->z, cap * sizeof *v);
        if (v == NULL)
            return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
        zc->z = v;
        zc->cap = cap;
    }
    rc = sqle_tz_open(name, &zc->z[zc->n], err);
    if (rc != SQLEASE_OK)
        return rc;
    *out = zc->z[zc->n++];
    return SQLEASE_OK;
}

static void zone_cache_free(zone_cache *zc)
{
    size_t i;

    for (i = 0; i < zc->n; i++)
        sqle_tz_release(zc->z[i]);
    free(zc->z);
}

/*
 * Copy and parse the caller's jobs.  Every expression must parse and
 * every name be valid and unique, else nothing is kept: a bad list at a
 * reload must leave the old one running.
 */
static int jobs_make(const sqle_job *in, size_t n, sjob **out, sqlease_error *err)
{
    zone_cache zc = {NULL, 0, 0};
    sjob *jobs;
    size_t i, k;

    *out = NULL;
    if (n > 0 && in == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "scheduler: jobs is NULL");
    jobs = calloc(n > 0 ? n : 1, sizeof *jobs);
    if (jobs == NULL)
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    for (i = 0; i < n; i++) {
        sqle_cron_error ce;
        sjob *j = &jobs[i];
        int rc = sqle_check_text("job name", in[i].name, SQLEASE_MAX_JOB, 0, err);

        if (rc != SQLEASE_OK) {
            jobs_free(jobs, n);
            return rc;
        }
        for (k = 0; k < i; k++)
            if (strcmp(jobs[k].j.name, in[i].name) == 0) {
                jobs_free(jobs, n);
                return sqle_fail(err, SQLEASE_EINVAL, "job '%s' is given twice", in[i].name);
            }
        if (in[i].missed < SQLE_MISSED_ONCE || in[i].missed > SQLE_MISSED_ALL ||
            in[i].abandoned < SQLE_ABANDONED_AT_MOST_ONCE ||
            in[i].abandoned > SQLE_ABANDONED_AT_LEAST_ONCE ||
            in[i].overlap < SQLE_OVERLAP_FORBID || in[i].overlap > SQLE_OVERLAP_REPLACE ||
            in[i].max_age_ms < 0 || in[i].max_attempts < 0) {
            jobs_free(jobs, n);
            return sqle_fail(err, SQLEASE_EINVAL, "job '%s': a policy or limit out of range",
                             in[i].name);
        }
        j->j = in[i];
        j->j.name = sqle_strdup(in[i].name);
        j->j.schedule = in[i].schedule != NULL ? sqle_strdup(in[i].schedule) : NULL;
        j->j.tz = in[i].tz != NULL && in[i].tz[0] != '\0' ? sqle_strdup(in[i].tz) : NULL;
        if (j->j.max_age_ms == 0)
            j->j.max_age_ms = SQLE_SCHED_MAX_AGE_MS;
        if (j->j.max_attempts == 0)
            j->j.max_attempts = SQLE_SCHED_MAX_ATTEMPTS;
        j->next_ms = -1;
        if (j->j.name == NULL || (in[i].schedule != NULL && j->j.schedule == NULL) ||
            (in[i].tz != NULL && in[i].tz[0] != '\0' && j->j.tz == NULL)) {
            jobs_free(jobs, n);
            return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
        }
        {
            sqle_tz *zone = NULL;
            sqlease_error ze;

            if (j->j.schedule != NULL && zone_get(&zc, j->j.tz, &zone, &ze) != SQLEASE_OK) {
                rc = sqle_fail(err, ze.status == SQLEASE_ENOMEM ? SQLEASE_ENOMEM : SQLEASE_EINVAL,
                               "job '%s': %s", in[i].name, ze.message);
                jobs_free(jobs, n);
                zone_cache_free(&zc);
                return rc;
            }
            if (j->j.schedule == NULL ||
                sqle_cron_parse_in(j->j.schedule, zone, &j->cron, &ce) != SQLEASE_OK) {
                if (j->j.schedule != NULL && ce.column > 0)
                    rc = sqle_fail(err, SQLEASE_EINVAL, "job '%s': column %d: %s", in[i].name,
                                   ce.column, ce.message);
                else
                    rc = sqle_fail(err, SQLEASE_EINVAL, "job '%s': %s", in[i].name,
                                   j->j.schedule == NULL ? "no schedule" : ce.message);
                jobs_free(jobs, n);
                zone_cache_free(&zc);
                return rc;
            }
        }
    }
    zone_cache_free(&zc); /* each expression keeps a reference of its own */
    *out = jobs;
    return SQLEASE_OK;
}

static sjob *job_find(sqle_sched *s, const char *name)
{
    size_t i;

    for (i = 0; i < s->njobs; i++)
        if (strcmp(s->jobs[i].j.name, name) == 0)
            return &s->jobs[i];
    return NULL;
}

/* A run of `job` still going here (s->m held), or NULL. */
static srun *running_of(sqle_sched *s, const char *job)
{
    srun *r;

    for (r = s->runs; r != NULL; r = r->next)
        if (r->stop_reason == 0 && strcmp(r->job, job) == 0)
            return r;
    return NULL;
}

static void fire_of(const srun *r, sqle_fire *f)
{
    memset(f, 0, sizeof *f);
    f->id = r->id;
    f->job = r->job;
    f->job_userdata = r->job_userdata;
    f->fire_at_ms = r->fire_at_ms;
    f->attempt = r->attempt;
    f->token = r->token;
    f->catch_up = r->catch_up;
}

/* ---- the clock ------------------------------------------------------ */

/* Measure the offset between the database's clock and this process's.
 * Each answer was read somewhere between sending and receiving, taken
 * as the middle, so a sample is off by at most half its round trip; of
 * CLOCK_SAMPLES the one with the shortest round trip is kept (the first
 * statement on a cold connection can take tens of ms, and an estimate
 * that early starts every fire that much late).  s->m not held. */
static int clock_measure(sqle_sched *s)
{
    sqlease_error err;
    int64_t best_rtt = INT64_MAX, off = 0, at = 0;
    int i, rc = SQLEASE_OK;

    for (i = 0; i < CLOCK_SAMPLES; i++) {
        int64_t t0 = sqle_mono_ms(), db_now = 0, t1;

        rc = sqlease_db_now_ms(s->db, &db_now, &err);
        t1 = sqle_mono_ms();
        if (rc != SQLEASE_OK)
            break;
        if (t1 - t0 < best_rtt) {
            best_rtt = t1 - t0;
            off = db_now - (t0 + t1) / 2;
            at = t1;
        }
    }
    if (best_rtt == INT64_MAX) {
        slog(s, SQLEASE_LOG_WARN, "reading the database's clock failed: %s", err.message);
        return rc;
    }
    sqle_mutex_lock(&s->m);
    s->clock_off = off;
    s->clock_at = at;
    s->clock_valid = 1;
    sqle_mutex_unlock(&s->m);
    return SQLEASE_OK;
}

/* This process's estimate of the database's clock now (s->m held). */
static int64_t db_now_est(const sqle_sched *s)
{
    return sqle_mono_ms() + s->clock_off;
}

/* ---- starting and stopping fires ------------------------------------ */

/*
 * A claim answered "claimed" (s->m held): start the work if the hold it
 * was sent under is still the running one (and a reload has not removed
 * the job meanwhile), else end its row at once as not started.  `job` is
 * the caller's copy of the name: the sjob it claimed for may have been
 * freed by a reload while the claim ran.  Returns 1 if it started.
 */
static int start_run(sqle_sched *s, const char *job, int64_t fire_at_ms, int attempt,
                     int64_t token, uint64_t gen, int catch_up)
{
    sjob *j = job_find(s, job);
    sqle_fire f;
    srun *r;
    int64_t late;

    if (((!s->holding || s->gen != gen) && !SQLE_PLANTED(start_run_trusts_claim_gen)) ||
        s->stopping || j == NULL || (r = calloc(1, sizeof *r)) == NULL) {
        sqlease_error err;
        int held = s->holding && s->gen == gen && !s->stopping;
        char name[SQLEASE_MAX_JOB + 1];

        snprintf(name, sizeof name, "%s", job);
        sqle_mutex_unlock(&s->m);
        (void)sqle_fire_end(&s->fctx, token, name, fire_at_ms, attempt, "failed",
                            SQLEASE_FIRE_NO_EXIT,
                            !held ? "not started: the lease ended as it was claimed"
                            : j == NULL ? "not started: the job was removed by a reload"
                                        : "not started: out of memory",
                            0, &err);
        sqle_mutex_lock(&s->m);
        return 0;
    }
    r->id = ++s->next_id;
    snprintf(r->job, sizeof r->job, "%s", j->j.name);
    r->job_userdata = j->j.userdata;
    r->fire_at_ms = fire_at_ms;
    r->attempt = attempt;
    r->token = token;
    r->gen = gen;
    r->catch_up = catch_up;
    r->next = s->runs;
    s->runs = r;
    s->st.running++;
    late = db_now_est(s) - fire_at_ms;
    s->st.last_fire_late_ms = late;
    if (late > s->st.max_fire_late_ms)
        s->st.max_fire_late_ms = late;
    fire_of(r, &f);
    if (s->cb.on_fire != NULL)
        s->cb.on_fire(s->cb.userdata, &f);
    return 1;
}

/* Stop runs (s->m held on entry and on return, let go around on_stop):
 * those of generation `gen` (0: every run), each marked with `reason`
 * first so that nothing stops one twice. */
static void stop_runs(sqle_sched *s, uint64_t gen, const srun *only, int reason)
{
    for (;;) {
        srun *r;
        sqle_fire f;
        char job[SQLEASE_MAX_JOB + 1];

        for (r = s->runs; r != NULL; r = r->next)
            if (r->stop_reason == 0 && (only == NULL || r == only) && (gen == 0 || r->gen == gen))
                break;
        if (r == NULL)
            return;
        r->stop_reason = reason;
        fire_of(r, &f);
        snprintf(job, sizeof job, "%s", r->job);
        f.job = job; /* the run may be done and freed while on_stop runs */
        sqle_mutex_unlock(&s->m);
        if (s->cb.on_stop != NULL)
            s->cb.on_stop(s->cb.userdata, &f, reason);
        sqle_mutex_lock(&s->m);
        if (only != NULL)
            return;
    }
}

/* The supervisor's callbacks: the hold starts, the hold ends. */
static void sched_started(void *ud, int64_t token)
{
    sqle_sched *s = ud;

    sqle_mutex_lock(&s->m);
    s->holding = 1;
    s->token = token;
    s->gen++;
    s->takeover = 1;
    s->st.holding = 1;
    s->st.token = token;
    s->st.max_fire_late_ms = 0;
    sqle_cond_broadcast(&s->c);
    sqle_mutex_unlock(&s->m);
    slog(s, SQLEASE_LOG_INFO, "holding the lease with token %lld: firing the jobs",
         (long long)token);
}

static void sched_stopped(void *ud, int reason)
{
    sqle_sched *s = ud;
    uint64_t gen;

    sqle_mutex_lock(&s->m);
    gen = s->gen;
    s->holding = 0;
    s->gen++;
    s->st.holding = 0;
    sqle_cond_broadcast(&s->c);
    stop_runs(s, gen, NULL,
              reason == SQLEASE_STOP_SHUTDOWN  ? SQLE_STOP_SHUTDOWN
              : reason == SQLEASE_STOP_HANDOFF ? SQLE_STOP_HANDOFF
                                               : SQLE_STOP_LEASE);
    sqle_mutex_unlock(&s->m);
    slog(s, reason == SQLEASE_STOP_SHUTDOWN ? SQLEASE_LOG_INFO : SQLEASE_LOG_WARN,
         "no longer holding the lease (%s): no fire starts here",
         sqlease_stop_reason_str(reason));
}

static void sched_holder(void *ud, const char *owner, int64_t token, const char *data)
{
    sqle_sched *s = ud;

    (void)data;
    if (s->cb.on_holder != NULL)
        s->cb.on_holder(s->cb.userdata, owner, token);
}

/* ---- claiming -------------------------------------------------------- */

enum { CLAIM_DONE, CLAIM_RETRY, CLAIM_EARLY };

/*
 * Claim fire `f` of job `j` under hold (token, gen), then start it
 * (s->m held on entry and return; let go around the statement).
 * CLAIM_DONE when the fire is dealt with (started, or found claimed by
 * someone, or the lease is gone: the next holder deals with it);
 * CLAIM_EARLY when the database's clock has not reached it yet;
 * CLAIM_RETRY when the statement failed (not known: sent again).
 */
static int claim_and_start(sqle_sched *s, const char *job, int64_t fire_at_ms, int64_t token,
                           uint64_t gen, int catch_up)
{
    sqlease_fire_info seen;
    sqlease_error err;
    char when[40], name[SQLEASE_MAX_JOB + 1];
    int rc;

    /* The name is copied: the job may be freed by a reload meanwhile. */
    snprintf(name, sizeof name, "%s", job);
    sqle_mutex_unlock(&s->m);
    memset(&seen, 0, sizeof seen);
    rc = sqle_fire_claim(&s->fctx, token, name, fire_at_ms, 0, &seen, &err);
    sqle_mutex_lock(&s->m);
    fire_text(fire_at_ms, when, sizeof when);
    if (rc != SQLEASE_CLAIMED && rc != SQLEASE_NOT_DUE && rc != SQLEASE_NOT_HELD &&
        rc != SQLEASE_OK) {
        /* Not known either way: the claim may have committed. */
        snprintf(s->unsure_job, sizeof s->unsure_job, "%s", name);
        s->unsure_fire = fire_at_ms;
        s->unsure_gen = gen;
    } else if (s->unsure_gen == gen && s->unsure_fire == fire_at_ms &&
               strcmp(s->unsure_job, name) == 0) {
        s->unsure_gen = 0;
        if (rc == SQLEASE_CLAIMED && seen.token == token && seen.attempt == 1 &&
            strcmp(seen.owner, s->owner) == 0 && strcmp(seen.state, "running") == 0) {
            /* The claim before this one committed and its answer was lost:
             * the row is this hold's claim, which nothing here has started
             * (a claim not known either way starts nothing) and nobody
             * else may start.  Started now, as its answer would have. */
            rc = SQLEASE_OK;
        }
    }
    switch (rc) {
    case SQLEASE_OK:
        s->st.claimed++;
        if (start_run(s, name, fire_at_ms, 1, token, gen, catch_up))
            slog(s, SQLEASE_LOG_INFO, "job %s: fire %s claimed with token %lld; started%s",
                 name, when, (long long)token, catch_up ? " (late: a missed fire)" : "");
        return CLAIM_DONE;
    case SQLEASE_CLAIMED:
        s->st.lost_claims++;
        slog(s, SQLEASE_LOG_WARN, "job %s: fire %s has a row already (%s by %s, token %lld);"
             " not run here", name, when, seen.state, seen.owner, (long long)seen.token);
        return CLAIM_DONE;
    case SQLEASE_NOT_DUE:
        return CLAIM_EARLY;
    case SQLEASE_NOT_HELD:
        slog(s, SQLEASE_LOG_WARN, "job %s: fire %s not claimed: %s", name, when,
             err.message);
        return CLAIM_DONE;
    default:
        s->st.failures++;
        slog(s, SQLEASE_LOG_ERROR, "job %s: claiming fire %s failed (%s): %s; trying again",
             name, when, sqlease_strerror(rc), err.message);
        return CLAIM_RETRY;
    }
}

/* Record a fire that is not run (skipped, missed) under the hold (s->m
 * held; let go around the statement). */
static void record(sqle_sched *s, const char *job, int64_t fire_at_ms, int64_t token,
                   const char *state, const char *note)
{
    sqlease_error err;
    char when[40], name[SQLEASE_MAX_JOB + 1];
    int rc;

    snprintf(name, sizeof name, "%s", job); /* a reload may free the job meanwhile */
    sqle_mutex_unlock(&s->m);
    rc = sqle_fire_record(&s->fctx, token, name, fire_at_ms, state, note, 0, NULL, &err);
    sqle_mutex_lock(&s->m);
    fire_text(fire_at_ms, when, sizeof when);
    if (rc == SQLEASE_OK) {
        if (strcmp(state, "skipped") == 0)
            s->st.skipped++;
        else
            s->st.missed++;
        slog(s, SQLEASE_LOG_INFO, "job %s: fire %s recorded %s (%s)", name, when, state,
             note);
    } else if (rc != SQLEASE_CLAIMED) {
        slog(s, SQLEASE_LOG_WARN, "job %s: recording fire %s as %s failed: %s", name,
             when, state, err.message);
    }
}

/* ---- the takeover ---------------------------------------------------- */

/* The jobs' names as a takeover began, and the latest fire the ledger
 * has of each: the takeover lets go of the lock around its statements,
 * and a reload may replace the jobs meanwhile, so it works by name. */
typedef struct last_seen {
    size_t n;
    struct {
        char name[SQLEASE_MAX_JOB + 1];
        int64_t last;         /* -1: none */
    } *v;
} last_seen;

static int on_last(void *ud, const char *job, int64_t last_fire_ms)
{
    last_seen *ls = ud;
    size_t i;

    for (i = 0; i < ls->n; i++)
        if (strcmp(ls->v[i].name, job) == 0 && last_fire_ms > ls->v[i].last)
            ls->v[i].last = last_fire_ms;
    return 0;
}

typedef struct abandoned_row {
    char job[SQLEASE_MAX_JOB + 1];
    int64_t fire_at_ms;
    int attempt;
} abandoned_row;

typedef struct abandoned_list {
    abandoned_row *v;
    size_t n, cap;
} abandoned_list;

static int on_abandoned(void *ud, const sqlease_fire_info *fi)
{
    abandoned_list *al = ud;

    if (strcmp(fi->state, "abandoned") != 0)
        return 0;
    if (al->n == al->cap) {
        size_t cap = al->cap ? 2 * al->cap : 16;
        abandoned_row *v = realloc(al->v, cap * sizeof *v);
        if (v == NULL)
            return 1;
        al->v = v;
        al->cap = cap;
    }
    snprintf(al->v[al->n].job, sizeof al->v[al->n].job, "%s", fi->job);
    al->v[al->n].fire_at_ms = fi->fire_at_ms;
    al->v[al->n].attempt = fi->attempt;
    al->n++;
    return 0;
}

static int queue_push(sjob *j, int64_t ms)
{
    if (j->nq == j->qcap && j->qhead > 0) {
        /* What was run is dropped from the front first. */
        memmove(j->queue, j->queue + j->qhead, (j->nq - j->qhead) * sizeof *j->queue);
        j->nq -= j->qhead;
        j->qhead = 0;
    }
    if (j->nq == j->qcap) {
        size_t cap = j->qcap ? 2 * j->qcap : 8;
        int64_t *q = realloc(j->queue, cap * sizeof *q);
        if (q == NULL)
            return -1;
        j->queue = q;
        j->qcap = cap;
    }
    j->queue[j->nq++] = ms;
    return 0;
}

/*
 * The fires of job `name` that nobody claimed, after the latest the
 * ledger has (`last`) and up to `now` (both database clock), dealt with
 * by the job's policy (s->m held; let go around statements, so the job
 * is found by name again after each).  For all, the fires go to the
 * job's catch-up queue (run oldest first, each once no run of the job
 * goes on here, unless it allows overlap); for once, the latest is run
 * now under the job's overlap rule, as an on-time fire would be: an
 * abandoned fire of the job run again just before is a run that still
 * runs.  Fires older than the job's max age are never run: the newest
 * of them is recorded missed with a note that says so, the older ones
 * are not written one by one.
 */
static void catch_up_job(sqle_sched *s, const char *name, int64_t last, int64_t now,
                         int64_t token, uint64_t gen)
{
    sjob *j = job_find(s, name);
    int64_t f, from, newest_old = -1, *fires = NULL;
    size_t n = 0, cap = 0, dropped = 0, i;
    int missed;
    char note[160], job[SQLEASE_MAX_JOB + 1];

    if (j == NULL)
        return;
    snprintf(job, sizeof job, "%s", name);
    missed = j->j.missed;
    from = now - j->j.max_age_ms;
    /* The fires in (last, from]: too old to run; only the newest noted. */
    if (last < from && sqle_cron_prev(j->cron, from, &f) == 1 && f > last)
        newest_old = f;
    f = last > from ? last : from;
    while (sqle_cron_next(j->cron, f, &f) == 1 && f <= now) {
        if (n == cap) {
            int64_t *v;
            if (cap >= 4 * SQLE_SCHED_MISSED_ROWS) {
                /* Keep the newest: slide the window. */
                memmove(fires, fires + SQLE_SCHED_MISSED_ROWS,
                        (n - SQLE_SCHED_MISSED_ROWS) * sizeof *fires);
                n -= SQLE_SCHED_MISSED_ROWS;
                dropped += SQLE_SCHED_MISSED_ROWS;
            } else {
                cap = cap ? 2 * cap : 16;
                v = realloc(fires, cap * sizeof *v);
                if (v == NULL)
                    break;
                fires = v;
            }
        }
        fires[n++] = f;
    }
    if (newest_old >= 0) {
        snprintf(note, sizeof note, "missed: older than the job's max age (%lld ms) when a "
                 "holder took over", (long long)j->j.max_age_ms);
        record(s, job, newest_old, token, "missed", note);
    }
    if (n > SQLE_SCHED_MISSED_ROWS) {
        dropped += n - SQLE_SCHED_MISSED_ROWS;
        memmove(fires, fires + (n - SQLE_SCHED_MISSED_ROWS),
                SQLE_SCHED_MISSED_ROWS * sizeof *fires);
        n = SQLE_SCHED_MISSED_ROWS;
    }
    for (i = 0; i < n && s->holding && s->gen == gen; i++) {
        int run = missed == SQLE_MISSED_ALL ||
                  (missed == SQLE_MISSED_ONCE && (i == n - 1 || SQLE_PLANTED(once_catches_up_all)));

        j = job_find(s, job);
        if (j == NULL)
            break;
        if (run && missed == SQLE_MISSED_ALL) {
            if (queue_push(j, fires[i]) != 0)
                record(s, job, fires[i], token, "missed", "missed: out of memory to queue it");
            continue;
        }
        if (run) {
            srun *prev = running_of(s, job);
            if (prev != NULL && j->j.overlap == SQLE_OVERLAP_FORBID) {
                char when[40];
                fire_text(prev->fire_at_ms, when, sizeof when);
                snprintf(note, sizeof note, "skipped: the run of fire %s was still running "
                         "(overlap forbid)", when);
                record(s, job, fires[i], token, "skipped", note);
                continue;
            }
            if (prev != NULL && j->j.overlap == SQLE_OVERLAP_REPLACE)
                stop_runs(s, 0, prev, SQLE_STOP_REPLACED);
            while (s->holding && s->gen == gen && !s->stopping &&
                   claim_and_start(s, job, fires[i], token, gen, 1) != CLAIM_DONE) {
                sqle_mutex_unlock(&s->m);
                sqle_sleep_ms(s->retry_ms);
                sqle_mutex_lock(&s->m);
            }
            continue;
        }
        if (i == 0 && dropped > 0)
            snprintf(note, sizeof note, "missed: no holder ran it (policy %s; %zu earlier "
                     "fires not recorded)", missed == SQLE_MISSED_SKIP ? "skip" : "once",
                     dropped);
        else
            snprintf(note, sizeof note, "missed: no holder ran it (policy %s)",
                     missed == SQLE_MISSED_SKIP ? "skip" : "once");
        record(s, job, fires[i], token, "missed", note);
    }
    free(fires);
}

/*
 * What a new hold does first (s->m held on entry and return): measure the
 * clock, mark the fires older holds left running as abandoned, run again
 * those of at-least-once jobs, deal with the fires nobody claimed, and
 * set each job's next fire.
 */
static void takeover(sqle_sched *s, int64_t token, uint64_t gen)
{
    sqlease_error err;
    int64_t rows = 0, now, max_age = 0;
    last_seen ls = {0, NULL};
    abandoned_list al = {NULL, 0, 0};
    size_t i;
    int rc, any_least = 0;

    sqle_mutex_unlock(&s->m);
    if (clock_measure(s) != SQLEASE_OK) {
        /* Every fire is worked out from the database's clock: without a
         * measure of it (the first of this process has no offset to go
         * by: this process's own clock read as epoch ms from 1970), a
         * takeover would claim fires long past.  Again after a retry. */
        int64_t until = sqle_mono_ms() + s->retry_ms;
        sqle_mutex_lock(&s->m);
        if (s->holding && s->gen == gen)
            s->takeover = 1;
        while (!s->stopping && s->holding && s->gen == gen && sqle_mono_ms() < until)
            sqle_cond_wait_until(&s->c, &s->m, until);
        return;
    }
    rc = sqle_fire_abandon(&s->fctx, token, &rows, 0, &err);
    if (rc != SQLEASE_OK)
        slog(s, SQLEASE_LOG_WARN, "marking older holds' running fires abandoned failed: %s",
             err.message);
    else if (rows > 0)
        slog(s, SQLEASE_LOG_WARN, "%lld fire(s) that an older hold left running marked "
             "abandoned", (long long)rows);
    sqle_mutex_lock(&s->m);
    if (rc == SQLEASE_OK)
        s->st.abandoned += (uint64_t)rows;
    if (!s->holding || s->gen != gen) {
        return;
    }
    ls.v = calloc(s->njobs ? s->njobs : 1, sizeof *ls.v);
    if (ls.v == NULL) {
        slog(s, SQLEASE_LOG_ERROR, "takeover: out of memory");
        return;
    }
    ls.n = s->njobs;
    for (i = 0; i < s->njobs; i++) {
        snprintf(ls.v[i].name, sizeof ls.v[i].name, "%s", s->jobs[i].j.name);
        ls.v[i].last = -1;
        if (s->jobs[i].j.abandoned == SQLE_ABANDONED_AT_LEAST_ONCE)
            any_least = 1;
        if (s->jobs[i].j.max_age_ms > max_age)
            max_age = s->jobs[i].j.max_age_ms;
        s->jobs[i].nq = s->jobs[i].qhead = 0;
    }
    now = db_now_est(s);
    sqle_mutex_unlock(&s->m);
    rc = sqle_fire_last(&s->fctx, on_last, &ls, 0, &err);
    if (rc == SQLEASE_OK && any_least)
        rc = sqlease_fire_list(s->db, s->fire_table, s->name, NULL, now - max_age,
                               on_abandoned, &al, &err);
    sqle_mutex_lock(&s->m);
    if (rc != SQLEASE_OK) {
        /* Without the ledger's word nothing is caught up: the fires
         * from now on are fired, and the next takeover looks again. */
        slog(s, SQLEASE_LOG_ERROR, "reading the ledger at takeover failed (%s); missed and "
             "abandoned fires are left as they are", err.message);
        for (i = 0; i < ls.n; i++)
            ls.v[i].last = -1;
        al.n = 0;
    }
    /* At-least-once: each abandoned fire once more, while attempts last. */
    for (i = 0; i < al.n && s->holding && s->gen == gen; i++) {
        sjob *j = job_find(s, al.v[i].job);
        sqlease_error e2;
        char when[40];

        if (j == NULL || j->j.abandoned != SQLE_ABANDONED_AT_LEAST_ONCE ||
            al.v[i].attempt >= j->j.max_attempts)
            continue;
        sqle_mutex_unlock(&s->m);
        rc = sqle_fire_reclaim(&s->fctx, token, al.v[i].job, al.v[i].fire_at_ms,
                               al.v[i].attempt, 0, NULL, &e2);
        sqle_mutex_lock(&s->m);
        fire_text(al.v[i].fire_at_ms, when, sizeof when);
        if (rc == SQLEASE_OK) {
            s->st.reruns++;
            if (start_run(s, al.v[i].job, al.v[i].fire_at_ms, al.v[i].attempt + 1, token, gen,
                          1))
                slog(s, SQLEASE_LOG_WARN, "job %s: fire %s abandoned by its holder; run "
                     "again (attempt %d)", al.v[i].job, when, al.v[i].attempt + 1);
        } else {
            slog(s, SQLEASE_LOG_WARN, "job %s: running abandoned fire %s again failed: %s",
                 al.v[i].job, when, e2.message);
        }
    }
    free(al.v);
    now = db_now_est(s);
    for (i = 0; i < ls.n && s->holding && s->gen == gen; i++)
        if (ls.v[i].last >= 0)
            catch_up_job(s, ls.v[i].name, ls.v[i].last, now, token, gen);
    free(ls.v);
    /* The jobs as they are now (a reload may have come): each from its
     * next fire after the takeover's now. */
    for (i = 0; i < s->njobs && s->holding && s->gen == gen; i++)
        if (sqle_cron_next(s->jobs[i].cron, now, &s->jobs[i].next_ms) != 1)
            s->jobs[i].next_ms = -1;
    s->prune_at = sqle_mono_ms() + PRUNE_PERIOD_MS / 10;
    /* The first window reaches back to the start of time, in case the
     * whole fleet was down while rows aged past the keep; the windows
     * after it are an hour each. */
    s->prune_cursor = INT64_MIN;
}

/* ---- pruning --------------------------------------------------------- */

/* Delete the ledger's rows older than keep_ms, a window at a time, from
 * where the last round stopped (s->m held; let go around statements). */
static void prune(sqle_sched *s, int64_t token, uint64_t gen)
{
    int64_t until = db_now_est(s) - s->keep_ms, deleted = 0, total = 0;
    int k;

    (void)token;
    for (k = 0; k < PRUNE_WINDOWS && s->prune_cursor < until && s->holding && s->gen == gen;
         k++) {
        int64_t from = s->prune_cursor, to;
        sqlease_error err;
        int rc;

        if (from == INT64_MIN) {
            from = 0;
            to = until - 2 * 24 * 3600 * INT64_C(1000);
        } else {
            to = from + PRUNE_WINDOW_MS;
        }
        if (to > until)
            to = until;
        if (to < from)
            to = from;
        sqle_mutex_unlock(&s->m);
        rc = sqle_fire_prune(&s->fctx, from, to, &deleted, 0, &err);
        sqle_mutex_lock(&s->m);
        if (rc != SQLEASE_OK) {
            slog(s, SQLEASE_LOG_WARN, "pruning the ledger failed: %s", err.message);
            break;
        }
        total += deleted;
        s->prune_cursor = to;
    }
    if (total > 0)
        slog(s, SQLEASE_LOG_INFO, "pruned %lld ledger row(s) older than %lld ms",
             (long long)total, (long long)s->keep_ms);
    s->prune_at = sqle_mono_ms() + PRUNE_PERIOD_MS;
}

/* ---- the thread ------------------------------------------------------ */

/* The job whose next fire (or catch-up) is due first, and when (s->m
 * held).  A catch-up waits while an earlier run of its job goes on,
 * unless the job allows overlap. */
static sjob *next_due(sqle_sched *s, int64_t *due, int *is_queue)
{
    sjob *best = NULL;
    size_t i;

    *due = INT64_MAX;
    *is_queue = 0;
    for (i = 0; i < s->njobs; i++) {
        sjob *j = &s->jobs[i];
        if (j->qhead < j->nq &&
            (j->j.overlap == SQLE_OVERLAP_ALLOW || running_of(s, j->j.name) == NULL) &&
            j->queue[j->qhead] < *due) {
            best = j;
            *due = j->queue[j->qhead];
            *is_queue = 1;
        }
        if (j->next_ms >= 0 && j->next_ms < *due) {
            best = j;
            *due = j->next_ms;
            *is_queue = 0;
        }
    }
    return best;
}

/* One fire that is due (s->m held): the overlap rule, the claim, and the
 * job's next fire.  The lock is let go around statements and on_stop,
 * and a reload may free `j` meanwhile: after each, it is found again by
 * name. */
static void fire_due(sqle_sched *s, sjob *j, int64_t f, int is_queue, int64_t token, uint64_t gen)
{
    srun *prev = running_of(s, j->j.name);
    char note[200], when[40], name[SQLEASE_MAX_JOB + 1];
    int r;

    snprintf(name, sizeof name, "%s", j->j.name);
    if (!is_queue && j->qhead < j->nq) {
        /* The job's catch-up (missed: all) still has fires to run: this
         * one joins the back of its queue rather than overtake them, so
         * that the job's fires reach the ledger in their order.  A fire
         * that overtook the queue would be the ledger's latest, where
         * the next holder's catch-up starts, and the fires still queued
         * when this hold ended would be neither run nor recorded.  The
         * queue holds SQLE_SCHED_MISSED_ROWS fires at most: past that its
         * oldest is recorded missed (no fire older than it is left
         * without a row). */
        int64_t oldest = -1;
        int pushed;

        if (sqle_cron_next(j->cron, f, &j->next_ms) != 1)
            j->next_ms = -1;
        if (j->nq - j->qhead >= SQLE_SCHED_MISSED_ROWS)
            oldest = j->queue[j->qhead++];
        pushed = queue_push(j, f) == 0;
        if (oldest >= 0)
            record(s, name, oldest, token, "missed",
                   "missed: the job's catch-up queue was full");
        if (!pushed)
            record(s, name, f, token, "missed", "missed: out of memory to queue it");
        return;
    }
    if (!is_queue && prev != NULL && j->j.overlap == SQLE_OVERLAP_FORBID) {
        fire_text(prev->fire_at_ms, when, sizeof when);
        snprintf(note, sizeof note, "skipped: the run of fire %s was still running (overlap "
                 "forbid)", when);
        if (sqle_cron_next(j->cron, f, &j->next_ms) != 1)
            j->next_ms = -1;
        record(s, name, f, token, "skipped", note);
        return;
    }
    if (!is_queue && prev != NULL && j->j.overlap == SQLE_OVERLAP_REPLACE) {
        stop_runs(s, 0, prev, SQLE_STOP_REPLACED);
        if (job_find(s, name) == NULL)
            return;
    }
    if (!s->holding || s->gen != gen)
        return;
    r = claim_and_start(s, name, f, token, gen, is_queue);
    if (r == CLAIM_EARLY) {
        /* The estimate of the clock was early: measure it again. */
        sqle_mutex_unlock(&s->m);
        (void)clock_measure(s);
        sqle_mutex_lock(&s->m);
        return;
    }
    if (r == CLAIM_RETRY) {
        int64_t until = sqle_mono_ms() + s->retry_ms;
        while (!s->stopping && s->holding && s->gen == gen && sqle_mono_ms() < until)
            sqle_cond_wait_until(&s->c, &s->m, until);
        return;
    }
    /* Dealt with: on to the next one (the job may have been reloaded). */
    j = job_find(s, name);
    if (j == NULL)
        return;
    if (is_queue) {
        if (j->qhead < j->nq && j->queue[j->qhead] == f)
            j->qhead++;
    } else if (j->next_ms == f && sqle_cron_next(j->cron, f, &j->next_ms) != 1) {
        j->next_ms = -1;
    }
}

static void sched_thread(void *arg)
{
    sqle_sched *s = arg;

    sqle_mutex_lock(&s->m);
    while (!s->stopping) {
        int64_t token = s->token, due, wake;
        uint64_t gen = s->gen;
        int is_queue;
        sjob *j;

        if (!s->holding) {
            sqle_cond_wait_until(&s->c, &s->m, -1);
            continue;
        }
        if (s->takeover) {
            s->takeover = 0;
            takeover(s, token, gen);
            continue;
        }
        if (!s->clock_valid || sqle_mono_ms() - s->clock_at >= CLOCK_REFRESH_MS) {
            sqle_mutex_unlock(&s->m);
            if (clock_measure(s) != SQLEASE_OK)
                sqle_sleep_ms(s->retry_ms);
            sqle_mutex_lock(&s->m);
            continue;
        }
        if (sqle_mono_ms() >= s->prune_at) {
            prune(s, token, gen);
            continue;
        }
        j = next_due(s, &due, &is_queue);
        wake = s->clock_at + CLOCK_REFRESH_MS;
        if (s->prune_at < wake)
            wake = s->prune_at;
        if (j != NULL && due - s->clock_off + CLAIM_LAG_MS < wake)
            wake = due - s->clock_off + CLAIM_LAG_MS;
        if (j == NULL || sqle_mono_ms() < wake) {
            sqle_cond_wait_until(&s->c, &s->m, wake);
            continue;
        }
        fire_due(s, j, due, is_queue, token, gen);
    }
    sqle_mutex_unlock(&s->m);
}

/* ---- the calls ------------------------------------------------------- */

static void sched_destroy(sqle_sched *s)
{
    srun *r, *next;

    if (s == NULL)
        return;
    for (r = s->runs; r != NULL; r = next) {
        next = r->next;
        free(r);
    }
    jobs_free(s->jobs, s->njobs);
    free(s->table);
    free(s->fire_table);
    free(s->name);
    free(s->owner);
    free(s->host);
    sqle_cond_destroy(&s->c);
    sqle_mutex_destroy(&s->m);
    free(s);
}

int sqle_sched_start(sqle_sched **out, sqlease_db *db, const sqlease_options *opt,
                     const char *fire_table, const char *host, const sqle_job *jobs, size_t n,
                     int64_t keep_ms, const sqle_sched_callbacks *cb, sqlease_error *err)
{
    sqlease_options eff;
    sqle_sched *s;
    char owner[SQLEASE_MAX_OWNER + 1], hostname[256];
    int rc;

    sqle_err_clear(err);
    if (out == NULL || db == NULL || opt == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "scheduler: out, db and opt must not be NULL");
    *out = NULL;
    if (keep_ms < 0)
        return sqle_fail(err, SQLEASE_EINVAL, "scheduler: keep %lld ms is negative",
                         (long long)keep_ms);
    rc = sqlease_options_effective(db, opt, &eff, err);
    if (rc != SQLEASE_OK)
        return rc;
    if (fire_table == NULL)
        fire_table = eff.fire_table != NULL ? eff.fire_table : SQLEASE_DEFAULT_FIRE_TABLE;
    if (host == NULL)
        host = eff.host;
    if (sqle_check_table("fire table", fire_table, err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    s = calloc(1, sizeof *s);
    if (s == NULL)
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    if (sqle_mutex_init(&s->m) != 0 || sqle_cond_init(&s->c) != 0) {
        free(s);
        return sqle_fail(err, SQLEASE_EPLATFORM, "scheduler: mutex or condition variable");
    }
    rc = jobs_make(jobs, n, &s->jobs, err);
    if (rc != SQLEASE_OK) {
        sqle_cond_destroy(&s->c);
        sqle_mutex_destroy(&s->m);
        free(s);
        return rc;
    }
    s->njobs = n;
    if (eff.owner == NULL) {
        rc = sqlease_owner_id(owner, sizeof owner, err);
        if (rc != SQLEASE_OK) {
            sched_destroy(s);
            return rc;
        }
    }
    if (host == NULL) {
        sqle_hostname(hostname, sizeof hostname);
        host = hostname;
    }
    s->db = db;
    s->table = sqle_strdup(eff.table);
    s->fire_table = sqle_strdup(fire_table);
    s->name = sqle_strdup(eff.name);
    s->owner = sqle_strdup(eff.owner != NULL ? eff.owner : owner);
    s->host = sqle_strdup(host);
    if (s->table == NULL || s->fire_table == NULL || s->name == NULL || s->owner == NULL ||
        s->host == NULL) {
        sched_destroy(s);
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    s->keep_ms = keep_ms > 0 ? keep_ms : 30 * 24 * 3600 * INT64_C(1000);
    s->retry_ms = eff.retry_ms;
    if (cb != NULL)
        s->cb = *cb;
    s->fctx.db = db;
    s->fctx.lease_table = s->table;
    s->fctx.fire_table = s->fire_table;
    s->fctx.name = s->name;
    s->fctx.owner = s->owner;
    s->fctx.host = s->host;
    if (sqle_thread_start(&s->thread, sched_thread, s) != 0) {
        sched_destroy(s);
        return sqle_fail(err, SQLEASE_EPLATFORM, "scheduler: cannot start its thread");
    }
    s->thread_started = 1;
    eff.table = s->table;
    eff.name = s->name;
    eff.owner = s->owner;
    eff.on_started = sched_started;
    eff.on_stopped = sched_stopped;
    eff.on_holder = s->cb.on_holder != NULL ? sched_holder : NULL;
    eff.userdata = s;
    rc = sqlease_supervisor_start(&s->sup, db, &eff, err);
    if (rc != SQLEASE_OK) {
        sqle_mutex_lock(&s->m);
        s->stopping = 1;
        sqle_cond_broadcast(&s->c);
        sqle_mutex_unlock(&s->m);
        sqle_thread_join(&s->thread);
        sched_destroy(s);
        return rc;
    }
    *out = s;
    return SQLEASE_OK;
}

int sqle_sched_done(sqle_sched *s, uint64_t id, int exit_status, int failed, sqlease_error *err)
{
    srun **pp, *r;
    const char *note = NULL;
    char when[40];
    int rc;

    sqle_err_clear(err);
    if (s == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "scheduler is NULL");
    sqle_mutex_lock(&s->m);
    for (pp = &s->runs; *pp != NULL && (*pp)->id != id; pp = &(*pp)->next)
        ;
    r = *pp;
    if (r != NULL) {
        *pp = r->next;
        s->st.running--;
        sqle_cond_broadcast(&s->c); /* a catch-up may wait for it */
    }
    sqle_mutex_unlock(&s->m);
    if (r == NULL)
        return sqle_fail(err, SQLEASE_ENOROW, "no running fire with id %llu",
                         (unsigned long long)id);
    switch (r->stop_reason) {
    case SQLE_STOP_LEASE: note = "stopped: the lease was lost"; break;
    case SQLE_STOP_REPLACED: note = "stopped: replaced by a newer fire (overlap replace)"; break;
    case SQLE_STOP_SHUTDOWN: note = "stopped: shutdown"; break;
    case SQLE_STOP_HANDOFF: note = "stopped: the lease was handed over"; break;
    }
    rc = sqle_fire_end(&s->fctx, r->token, r->job, r->fire_at_ms, r->attempt,
                       failed || r->stop_reason != 0 ? "failed" : "done", exit_status, note, 0,
                       err);
    fire_text(r->fire_at_ms, when, sizeof when);
    if (rc == SQLEASE_OK)
        slog(s, failed || r->stop_reason ? SQLEASE_LOG_WARN : SQLEASE_LOG_INFO,
             "job %s: fire %s ended (%s, exit status %d)", r->job, when,
             failed || r->stop_reason ? "failed" : "done", exit_status);
    else
        slog(s, SQLEASE_LOG_WARN, "job %s: recording the end of fire %s failed: %s", r->job,
             when, err != NULL ? err->message : sqlease_strerror(rc));
    free(r);
    return rc;
}

int sqle_sched_reload(sqle_sched *s, const sqle_job *jobs, size_t n, sqlease_error *err)
{
    sjob *nj, *old;
    size_t i, oldn;
    int rc;

    sqle_err_clear(err);
    if (s == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "scheduler is NULL");
    rc = jobs_make(jobs, n, &nj, err);
    if (rc != SQLEASE_OK)
        return rc;
    sqle_mutex_lock(&s->m);
    for (i = 0; i < n; i++) {
        sjob *prev = job_find(s, nj[i].j.name);
        int64_t from = s->clock_valid ? db_now_est(s) : 0;
        /* A job that stays as it was keeps its place; any other starts
         * from its next fire after now. */
        if (prev != NULL && strcmp(prev->j.schedule, nj[i].j.schedule) == 0 &&
            ((prev->j.tz == NULL && nj[i].j.tz == NULL) ||
             (prev->j.tz != NULL && nj[i].j.tz != NULL && strcmp(prev->j.tz, nj[i].j.tz) == 0))) {
            /* With its catch-ups still to run: dropped, those fires
             * would have no row and never run. */
            int64_t *q = nj[i].queue;
            nj[i].next_ms = prev->next_ms;
            nj[i].queue = prev->queue;
            nj[i].nq = prev->nq;
            nj[i].qhead = prev->qhead;
            nj[i].qcap = prev->qcap;
            prev->queue = q;
            prev->nq = prev->qhead = prev->qcap = 0;
        } else if (s->holding && s->clock_valid &&
                   sqle_cron_next(nj[i].cron, from, &nj[i].next_ms) != 1) {
            nj[i].next_ms = -1;
        } else if (!s->holding) {
            nj[i].next_ms = -1;
        }
    }
    old = s->jobs;
    oldn = s->njobs;
    s->jobs = nj;
    s->njobs = n;
    sqle_cond_broadcast(&s->c);
    sqle_mutex_unlock(&s->m);
    jobs_free(old, oldn);
    slog(s, SQLEASE_LOG_INFO, "reloaded: %zu job(s)", n);
    return SQLEASE_OK;
}

int sqle_sched_stop(sqle_sched *s, sqlease_error *err)
{
    int rc;

    sqle_err_clear(err);
    if (s == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "scheduler is NULL");
    sqle_mutex_lock(&s->m);
    s->stopping = 1;
    sqle_cond_broadcast(&s->c);
    sqle_mutex_unlock(&s->m);
    /* The supervisor first: its on_stopped stops the work of every fire
     * (no fire starts once stopping is set), and only then does the
     * thread that started them end (a child may be tied to the thread
     * that forked it, and must not die of that before its stop). */
    rc = s->sup != NULL ? sqlease_supervisor_stop(s->sup, err) : SQLEASE_OK;
    if (s->thread_started) {
        sqle_thread_join(&s->thread);
        s->thread_started = 0;
    }
    /* Whatever still runs (a fire whose claim was answered as the stop
     * began) stops too. */
    sqle_mutex_lock(&s->m);
    stop_runs(s, 0, NULL, SQLE_STOP_SHUTDOWN);
    sqle_mutex_unlock(&s->m);
    return rc;
}

void sqle_sched_free(sqle_sched *s)
{
    if (s == NULL)
        return;
    (void)sqle_sched_stop(s, NULL);
    sqlease_supervisor_free(s->sup);
    s->sup = NULL;
    sched_destroy(s);
}

void sqle_sched_stats_get(sqle_sched *s, sqle_sched_stats *st)
{
    if (s == NULL || st == NULL)
        return;
    sqle_mutex_lock(&s->m);
    *st = s->st;
    sqle_mutex_unlock(&s->m);
}

sqlease_supervisor *sqle_sched_supervisor(sqle_sched *s)
{
    return s != NULL ? s->sup : NULL;
}
