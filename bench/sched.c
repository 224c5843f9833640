/*
 * sched.c -- what scheduled jobs cost (--only sched): the statements a
 * holder sends per fire while it fires 1,000 jobs a minute, the memory
 * one holder takes for 10,000 jobs in its schedule, and what a scheduled
 * run (`run --schedule`: a take that claims its fire, and the outcome's
 * row) sends beside a plain one.  Each figure is measured on the same
 * handle and table as its comparison, in this run.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "fire.h"
#include "scheduler.h"

#define SCHED_TABLE "sqlease_bench_sched"
#define SCHED_FIRE_TABLE "sqlease_bench_fire"

/* The fires the scheduler started, handed to a thread that reports each
 * one done (on_fire may not call the scheduler itself). */
typedef struct done_queue {
    pthread_mutex_t m;
    pthread_cond_t cv;
    uint64_t *ids;
    size_t n, cap;
    int stop;
    uint64_t fired;
    int64_t max_wall_late_ms;  /* measured only in the window */
    int measuring;
    sqle_sched *s;
} done_queue;

/* This host's wall clock, which is the database's too when the database
 * runs here (SQLite, or a server on loopback): a check on the
 * scheduler's own estimate of how late each fire started. */
static int64_t wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void q_on_fire(void *ud, const sqle_fire *f)
{
    done_queue *q = ud;

    pthread_mutex_lock(&q->m);
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 256;
        uint64_t *v = realloc(q->ids, cap * sizeof *v);
        if (v != NULL) {
            q->ids = v;
            q->cap = cap;
        }
    }
    if (q->n < q->cap)
        q->ids[q->n++] = f->id;
    q->fired++;
    if (q->measuring && wall_ms() - f->fire_at_ms > q->max_wall_late_ms)
        q->max_wall_late_ms = wall_ms() - f->fire_at_ms;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->m);
}

static void q_on_stop(void *ud, const sqle_fire *f, int reason)
{
    (void)ud;
    (void)f;
    (void)reason;
}

static void *q_thread(void *arg)
{
    done_queue *q = arg;

    pthread_mutex_lock(&q->m);
    while (!q->stop || q->n > 0) {
        if (q->n == 0) {
            pthread_cond_wait(&q->cv, &q->m);
            continue;
        }
        uint64_t id = q->ids[--q->n];
        pthread_mutex_unlock(&q->m);
        sqlease_error err;
        (void)sqle_sched_done(q->s, id, 0, 0, &err);
        pthread_mutex_lock(&q->m);
    }
    pthread_mutex_unlock(&q->m);
    return NULL;
}

static void drop_sched_tables(sqlease_db *db)
{
    sqlease_error err;

    (void)bench_exec(db, "DROP TABLE IF EXISTS " SCHED_TABLE, &err);
    (void)bench_exec(db, "DROP TABLE IF EXISTS " SCHED_FIRE_TABLE, &err);
}

/* 1,000 jobs, each firing once a minute at its own second (i % 60):
 * about 17 fires a second.  Statements per fire over the window: the
 * fires' own (every statement on the handle less the lease's renews,
 * which the holder sends whether or not anything fires), with the total
 * beside them. */
static int fires_per_minute(const bench_cfg *cfg, bench_results *res)
{
    enum { JOBS = 1000 };
    sqlease_db *db = NULL;
    sqlease_options o;
    sqlease_error err;
    sqle_sched_callbacks cb;
    sqle_job *jobs = calloc(JOBS, sizeof *jobs);
    char (*names)[16] = calloc(JOBS, sizeof *names), (*specs)[32] = calloc(JOBS, sizeof *specs);
    const char *lease = "sched";
    done_queue q;
    pthread_t th;
    sqle_sched_stats st;
    uint64_t s0 = 0, f0 = 0, l0 = 0;
    sqlease_state ls;
    double window = cfg->short_run ? 10.0 : 30.0, t0;
    int i, rc = -1;

    memset(&q, 0, sizeof q);
    pthread_mutex_init(&q.m, NULL);
    pthread_cond_init(&q.cv, NULL);
    if (jobs == NULL || names == NULL || specs == NULL || bench_open(&db, cfg, &err) != 0)
        goto out;
    drop_sched_tables(db);
    if (sqlease_migrate(db, SCHED_TABLE, &lease, 1, &err) != SQLEASE_OK ||
        sqlease_fire_migrate(db, SCHED_FIRE_TABLE, &err) != SQLEASE_OK) {
        bench_msg("sched: migrate: %s", err.message);
        goto out;
    }
    for (i = 0; i < JOBS; i++) {
        snprintf(names[i], sizeof names[i], "job-%04d", i);
        snprintf(specs[i], sizeof specs[i], "%d * * * * *", i % 60);
        jobs[i].name = names[i];
        jobs[i].schedule = specs[i];
    }
    sqlease_options_init(&o);
    o.table = SCHED_TABLE;
    o.fire_table = SCHED_FIRE_TABLE;
    o.name = lease;
    o.ttl_ms = 10000;
    o.log = bench_log_sink;
    memset(&cb, 0, sizeof cb);
    cb.userdata = &q;
    cb.on_fire = q_on_fire;
    cb.on_stop = q_on_stop;
    if (sqle_sched_start(&q.s, db, &o, NULL, "bench", jobs, JOBS, 0, &cb, &err) != SQLEASE_OK) {
        bench_msg("sched: start: %s", err.message);
        goto out;
    }
    pthread_create(&th, NULL, q_thread, &q);
    /* Past the takeover and the first fires, then the window. */
    bench_sleep_ms(3000);
    pthread_mutex_lock(&q.m);
    f0 = q.fired;
    q.measuring = 1;
    pthread_mutex_unlock(&q.m);
    s0 = sqlease_db_statements(db);
    sqlease_supervisor_state(sqle_sched_supervisor(q.s), &ls);
    l0 = ls.statements;
    t0 = bench_now_us();
    bench_sleep_ms(window * 1000);
    pthread_mutex_lock(&q.m);
    res->sched_fires = q.fired - f0;
    res->sched_wall_late_ms = q.max_wall_late_ms;
    pthread_mutex_unlock(&q.m);
    res->sched_stmts = sqlease_db_statements(db) - s0;
    sqlease_supervisor_state(sqle_sched_supervisor(q.s), &ls);
    res->sched_lease_stmts = ls.statements - l0;
    res->sched_window_s = (bench_now_us() - t0) / 1e6;
    sqle_sched_stats_get(q.s, &st);
    res->sched_max_late_ms = st.max_fire_late_ms;
    (void)sqle_sched_stop(q.s, &err);
    pthread_mutex_lock(&q.m);
    q.stop = 1;
    pthread_cond_signal(&q.cv);
    pthread_mutex_unlock(&q.m);
    pthread_join(th, NULL);
    sqle_sched_free(q.s);
    rc = 0;
out:
    if (db != NULL)
        drop_sched_tables(db);
    sqlease_db_close(db);
    free(jobs);
    free(names);
    free(specs);
    free(q.ids);
    return rc;
}

/* The resident memory of 10,000 jobs in one holder's schedule: RSS
 * after the start less RSS before it, on a fresh handle (half the jobs
 * in UTC, half in a zone read from the tz database). */
static int ten_thousand_jobs(const bench_cfg *cfg, bench_results *res)
{
    enum { JOBS = 10000 };
    sqlease_db *db = NULL;
    sqlease_options o;
    sqlease_error err;
    sqle_sched_callbacks cb;
    sqle_sched *s = NULL;
    sqle_job *jobs = calloc(JOBS, sizeof *jobs);
    char (*names)[16] = calloc(JOBS, sizeof *names);
    const char *lease = "sched-big";
    long before;
    int i, rc = -1;

    if (jobs == NULL || names == NULL || bench_open(&db, cfg, &err) != 0)
        goto out;
    drop_sched_tables(db);
    if (sqlease_migrate(db, SCHED_TABLE, &lease, 1, &err) != SQLEASE_OK ||
        sqlease_fire_migrate(db, SCHED_FIRE_TABLE, &err) != SQLEASE_OK)
        goto out;
    for (i = 0; i < JOBS; i++) {
        snprintf(names[i], sizeof names[i], "big-%05d", i);
        jobs[i].name = names[i];
        jobs[i].schedule = "0 3 * * *";
        jobs[i].tz = i % 2 ? "Europe/Berlin" : NULL;
    }
    sqlease_options_init(&o);
    o.table = SCHED_TABLE;
    o.fire_table = SCHED_FIRE_TABLE;
    o.name = lease;
    o.log = bench_log_sink;
    memset(&cb, 0, sizeof cb);
    cb.on_stop = q_on_stop;
    before = bench_proc_status("VmRSS");
    if (sqle_sched_start(&s, db, &o, NULL, "bench", jobs, JOBS, 0, &cb, &err) != SQLEASE_OK) {
        bench_msg("sched: start of %d jobs: %s", JOBS, err.message);
        goto out;
    }
    bench_sleep_ms(1500); /* its takeover: the ledger read, each job's next fire */
    res->sched_jobs = JOBS;
    res->sched_rss_kib = bench_proc_status("VmRSS") - before;
    sqle_sched_free(s);
    rc = 0;
out:
    if (db != NULL)
        drop_sched_tables(db);
    sqlease_db_close(db);
    free(jobs);
    free(names);
    return rc;
}

/* A plain run's statements (read, take, release) beside a scheduled
 * run's (read, the take that claims its fire, the outcome's row,
 * release), on one handle, several times each. */
static int scheduled_run(const bench_cfg *cfg, bench_results *res)
{
    sqlease_db *db = NULL;
    sqlease_error err;
    const char *lease = "sched-run";
    int i, rc = -1, trials = 5;
    uint64_t plain = 0, sched = 0;

    if (bench_open(&db, cfg, &err) != 0)
        return -1;
    drop_sched_tables(db);
    if (sqlease_migrate(db, SCHED_TABLE, &lease, 1, &err) != SQLEASE_OK ||
        sqlease_fire_migrate(db, SCHED_FIRE_TABLE, &err) != SQLEASE_OK)
        goto out;
    for (i = 0; i < trials; i++) {
        sqlease_options o;
        sqlease_lease *l = NULL;
        sqlease_lease_info info;
        uint64_t s0;
        int scheduled;

        for (scheduled = 0; scheduled < 2; scheduled++) {
            sqlease_options_init(&o);
            o.table = SCHED_TABLE;
            o.fire_table = SCHED_FIRE_TABLE;
            o.name = lease;
            o.owner = "bench";
            if (scheduled)
                o.schedule = "@every 1s";
            if (sqlease_lease_new(&l, db, &o, &err) != SQLEASE_OK)
                goto out;
            bench_sleep_ms(scheduled ? 1100 : 10); /* a fire not claimed yet */
            s0 = sqlease_db_statements(db);
            if (sqlease_lease_acquire(l, &info, &err) != SQLEASE_OK) {
                bench_msg("sched: a %s run's take: %s", scheduled ? "scheduled" : "plain",
                          err.message);
                sqlease_lease_free(l);
                goto out;
            }
            if (scheduled) {
                sqle_fire_ctx c = {db, SCHED_TABLE, SCHED_FIRE_TABLE, lease, "bench", "bench"};
                (void)sqle_fire_done(&c, info.token, lease, info.fire_at_ms, "done", 0, 0, &err);
            }
            (void)sqlease_lease_release(l, NULL, &err);
            (scheduled ? &sched : &plain)[0] += sqlease_db_statements(db) - s0;
            sqlease_lease_free(l);
        }
    }
    res->sched_run_plain = (double)plain / trials;
    res->sched_run_scheduled = (double)sched / trials;
    rc = 0;
out:
    drop_sched_tables(db);
    sqlease_db_close(db);
    return rc;
}

int bench_sched(const bench_cfg *cfg, bench_results *res)
{
    int rc = 0;

    if (fires_per_minute(cfg, res) != 0)
        rc = -1;
    if (!bench_interrupted && ten_thousand_jobs(cfg, res) != 0)
        rc = -1;
    if (!bench_interrupted && scheduled_run(cfg, res) != 0)
        rc = -1;
    res->have_sched = rc == 0;
    return rc;
}
