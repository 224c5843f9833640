/*
 * scale.c -- what supervisors cost the process that runs them.
 *
 *  - leases: N leases (distinct names in one table, migrated in one
 *    sqlease_migrate call) held by N supervisors sharing ONE sqlease_db
 *    (one connection), heartbeat 1 s, for a while: deadlines missed
 *    (while holding, and separately while starting and stopping them),
 *    threads, CPU, resident memory.
 *  - idle: one supervisor at the default timings, doing what a holder
 *    does almost all of the time: waiting.  Its CPU over the window.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "internal.h"

#define MANY_TTL 10000
#define MANY_HEARTBEAT 1000
#define MANY_DEADLINE 5000
#define MANY_RETRY 1000
#define STOPPERS 16

/* A slice of the supervisors for one stopping thread. */
typedef struct stop_slice {
    sqlease_supervisor **sups;
    int from, to;
} stop_slice;

static void *stop_main(void *arg)
{
    stop_slice *sl = arg;
    int i;
    for (i = sl->to - 1; i >= sl->from; i--)
        sqlease_supervisor_free(sl->sups[i]);
    return NULL;
}

/*
 * Stop and free the first n supervisors, STOPPERS at a time.  One after
 * the other, each stop waits for its heartbeat's statement in flight, and
 * on a saturated connection that statement queues behind the other
 * supervisors' (the handle's mutex is not first-come first-served): with
 * 1000 leases on one SQLite connection that took 13 minutes.  The library
 * allows stopping supervisors from several threads at once.
 */
static void stop_all(sqlease_supervisor **sups, int n)
{
    pthread_t th[STOPPERS];
    stop_slice sl[STOPPERS];
    int k, started = 0;

    for (k = 0; k < STOPPERS; k++) {
        sl[k].sups = sups;
        sl[k].from = (int)((long long)n * k / STOPPERS);
        sl[k].to = (int)((long long)n * (k + 1) / STOPPERS);
        if (pthread_create(&th[k], NULL, stop_main, &sl[k]) != 0)
            stop_main(&sl[k]);
        else
            started |= 1 << k;
    }
    for (k = 0; k < STOPPERS; k++)
        if (started & (1 << k))
            pthread_join(th[k], NULL);
}

/*
 * Memory is read before the first supervisor starts and at the end of the
 * window; CPU and statements over the window only, after the start-up
 * burst (two statements per take) has settled into one renew per lease
 * per heartbeat.  Deadline misses are counted apart for the start, the
 * hold and the stop, because a saturated connection misses them in all
 * three for different reasons.
 */
int bench_leases(const bench_cfg *cfg, bench_results *res)
{
    int n = cfg->leases;
    sqlease_db *db = NULL;
    sqlease_supervisor **sups = NULL;
    bench_watch *watches = NULL;
    bench_member *members = NULL;
    char (*names)[32] = NULL;
    const char **name_ptrs = NULL;
    sqlease_error err;
    int started = 0, inited = 0, missed0 = 0, i, rc;
    long rss0, rss1;
    double t0, t1, cpu0, cpu1, wall0, wall1;
    uint64_t st0, st1;

    sups = calloc((size_t)n, sizeof *sups);
    watches = calloc((size_t)n, sizeof *watches);
    members = calloc((size_t)n, sizeof *members);
    names = calloc((size_t)n, sizeof *names);
    name_ptrs = calloc((size_t)n, sizeof *name_ptrs);
    if (sups == NULL || watches == NULL || members == NULL || names == NULL ||
        name_ptrs == NULL) {
        rc = sqle_fail(&err, SQLEASE_ENOMEM, "out of memory");
        goto out;
    }
    for (i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "bench-%05d", i);
        name_ptrs[i] = names[i];
        bench_watch_init(&watches[i], names[i]);
        bench_member_init(&members[i], &watches[i], names[i]);
        inited++;
    }
    rc = bench_open(&db, cfg, &err);
    if (rc != SQLEASE_OK)
        goto out;
    t0 = bench_now_us();
    rc = sqlease_migrate(db, BENCH_TABLE_MANY, name_ptrs, (size_t)n, &err);
    if (rc != SQLEASE_OK)
        goto out;
    res->migrate_s = (bench_now_us() - t0) / 1e6;

    rss0 = bench_proc_status("VmRSS");
    missed0 = bench_missed_total();
    res->leases_requested = n;
    t0 = bench_now_us();
    for (i = 0; i < n && !bench_interrupted; i++) {
        sqlease_options o;

        /* A connection that cannot keep up (each start's first acquire
         * queues behind every running heartbeat) would take many minutes
         * to start them all: hold what started within the budget and say
         * how many that was. */
        if (bench_now_us() - t0 > cfg->leases_start_budget_s * 1e6) {
            bench_msg("only %d of %d supervisors started within %.0f s: the connection is "
                      "saturated", i, n, cfg->leases_start_budget_s);
            break;
        }
        bench_options(&o, BENCH_TABLE_MANY, names[i], "bench-many", MANY_TTL, MANY_HEARTBEAT,
                      MANY_DEADLINE, MANY_RETRY, &members[i]);
        rc = sqlease_supervisor_start(&sups[i], db, &o, &err);
        if (rc != SQLEASE_OK)
            goto out;
        started++;
    }
    t1 = bench_now_us();
    res->start_s = (t1 - t0) / 1e6;
    n = started;
    res->leases = n;

    res->missed_during_start = bench_missed_total() - missed0;
    missed0 = bench_missed_total();
    bench_msg("%d supervisors started in %.1f s; holding for %.0f s...", n, res->start_s,
              cfg->leases_s);

    /* Let the heartbeats spread out before measuring. */
    bench_sleep_ms(MANY_HEARTBEAT);
    cpu0 = bench_cpu_s();
    wall0 = bench_now_us();
    st0 = sqlease_db_statements(db);
    bench_sleep_ms(cfg->leases_s * 1e3);
    cpu1 = bench_cpu_s();
    wall1 = bench_now_us();
    st1 = sqlease_db_statements(db);
    rss1 = bench_proc_status("VmRSS");

    res->leases_s = (wall1 - wall0) / 1e6;
    res->threads = (int)bench_proc_status("Threads");
    res->rss_kib = rss1;
    res->rss_before_kib = rss0;
    res->bytes_per_lease = n > 0 ? (double)(rss1 - rss0) * 1024.0 / n : 0;
    res->cpu_pct = (cpu1 - cpu0) / ((wall1 - wall0) / 1e6) * 100.0;
    res->stmts_per_s = (double)(st1 - st0) / ((wall1 - wall0) / 1e6);
    res->missed_deadlines = bench_missed_total() - missed0;
    res->not_holding = 0;
    for (i = 0; i < n; i++) {
        sqlease_state st;
        sqlease_supervisor_state(sups[i], &st);
        if (!st.holding)
            res->not_holding++;
    }
    res->have_leases = !bench_interrupted;
    rc = SQLEASE_OK;

out:
    t0 = bench_now_us();
    if (started > 0)
        stop_all(sups, started);
    if (res->have_leases) {
        res->stop_s = (bench_now_us() - t0) / 1e6;
        res->missed_during_stop = bench_missed_total() - missed0 - res->missed_deadlines;
    }
    sqlease_db_close(db);
    for (i = 0; i < inited; i++) {
        bench_member_destroy(&members[i]);
        bench_watch_destroy(&watches[i]);
    }
    free(sups);
    free(watches);
    free(members);
    free(names);
    free(name_ptrs);
    if (rc != SQLEASE_OK) {
        bench_msg("leases: %s (%s)", err.message, sqlease_strerror(rc));
        res->failed = 1;
        return -1;
    }
    return 0;
}

/*
 * Only one supervisor runs, and this thread sleeps in one-second slices,
 * so the process's CPU over the window is the supervisor's (and its
 * driver's) alone.
 */
int bench_idle(const bench_cfg *cfg, bench_results *res)
{
    sqlease_db *db = NULL;
    sqlease_supervisor *s = NULL;
    bench_watch w;
    bench_member mb;
    sqlease_options o;
    sqlease_error err;
    const char *names[] = { "bench-idle" };
    double cpu0, cpu1, wall0, wall1;
    int rc;

    bench_watch_init(&w, names[0]);
    bench_member_init(&mb, &w, "idle holder");
    rc = bench_open(&db, cfg, &err);
    if (rc == SQLEASE_OK)
        rc = sqlease_migrate(db, BENCH_TABLE, names, 1, &err);
    if (rc == SQLEASE_OK) {
        /* Default timings: ttl 30 s, heartbeat 10 s, deadline 20 s, retry 2 s. */
        bench_options(&o, BENCH_TABLE, names[0], "bench-idle", 0, 0, 0, 0, &mb);
        rc = sqlease_supervisor_start(&s, db, &o, &err);
    }
    if (rc == SQLEASE_OK) {
        bench_sleep_ms(200);
        cpu0 = bench_cpu_s();
        wall0 = bench_now_us();
        bench_sleep_ms(cfg->idle_s * 1e3);
        cpu1 = bench_cpu_s();
        wall1 = bench_now_us();
        res->idle_threads = (int)bench_proc_status("Threads");
        res->idle_s = (wall1 - wall0) / 1e6;
        res->idle_cpu_pct = (cpu1 - cpu0) / res->idle_s * 100.0;
        res->have_idle = !bench_interrupted;
    }
    sqlease_supervisor_free(s);
    sqlease_db_close(db);
    bench_member_destroy(&mb);
    bench_watch_destroy(&w);
    if (rc != SQLEASE_OK) {
        bench_msg("idle: %s (%s)", err.message, sqlease_strerror(rc));
        res->failed = 1;
        return -1;
    }
    return 0;
}
