/*
 * scale.c -- what supervisors cost the process that runs them.
 *
 *  - leases_N: N leases (distinct names in one table, migrated in one
 *    sqlease_migrate call) held by N supervisors sharing ONE sqlease_db
 *    (one connection), heartbeat 1 s, for a while: deadlines missed
 *    (while holding, and separately while starting and stopping them),
 *    threads, statements per second, CPU, resident memory, and how long
 *    starting (sqlease_supervisor_start_each, BENCH_START_EACH per call)
 *    and stopping (one sqlease_supervisor_stop_each) all of them takes.  Run once per N of
 *    --leases, each on a fresh handle and table.
 *  - idle: one supervisor at the default timings, doing what a holder
 *    does almost all of the time: waiting.  Its CPU over the window.
 */
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "bench.h"
#include "internal.h"

#define MANY_TTL 10000
#define MANY_HEARTBEAT 1000
#define MANY_DEADLINE 5000
#define MANY_RETRY 1000
/* Resident memory with what earlier measurements freed given back, so
 * that one N's growth is not hidden by the heap another N left behind. */
static long rss_now(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    return bench_proc_status("VmRSS");
}

/*
 * Memory is read before the first supervisor starts and at the end of the
 * window; CPU and statements over the window only, after the start-up
 * burst (two statements per take) has settled into the batched renews.
 * Deadline misses are counted apart for the start, the hold and the stop,
 * because a saturated connection misses them in all three for different
 * reasons.  The table is dropped first, so each N starts from fresh rows.
 */
int bench_leases(const bench_cfg *cfg, int n, bench_results *res)
{
    bench_many m;
    sqlease_db *db = NULL;
    sqlease_supervisor **sups = NULL;
    bench_watch *watches = NULL;
    bench_member *members = NULL;
    char (*names)[32] = NULL;
    const char **name_ptrs = NULL;
    sqlease_options *opts = NULL;
    const sqlease_options **opt_ptrs = NULL;
    sqlease_error err;
    int started = 0, inited = 0, have = 0, missed0 = 0, i, rc;
    long rss1;
    double t0, t1, cpu0, cpu1, wall0, wall1;
    uint64_t st0, st1;

    memset(&m, 0, sizeof m);
    m.requested = n;
    sups = calloc((size_t)n, sizeof *sups);
    watches = calloc((size_t)n, sizeof *watches);
    members = calloc((size_t)n, sizeof *members);
    names = calloc((size_t)n, sizeof *names);
    name_ptrs = calloc((size_t)n, sizeof *name_ptrs);
    opts = calloc((size_t)n, sizeof *opts);
    opt_ptrs = calloc((size_t)n, sizeof *opt_ptrs);
    if (sups == NULL || watches == NULL || members == NULL || names == NULL ||
        name_ptrs == NULL || opts == NULL || opt_ptrs == NULL) {
        rc = sqle_fail(&err, SQLEASE_ENOMEM, "out of memory");
        goto out;
    }
    for (i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "bench-%06d", i);
        name_ptrs[i] = names[i];
        bench_watch_init(&watches[i], names[i]);
        bench_member_init(&members[i], &watches[i], names[i]);
        inited++;
    }
    rc = bench_open(&db, cfg, &err);
    if (rc == SQLEASE_OK)
        rc = bench_exec(db, "DROP TABLE IF EXISTS " BENCH_TABLE_MANY, &err);
    if (rc != SQLEASE_OK)
        goto out;
    t0 = bench_now_us();
    rc = sqlease_migrate(db, BENCH_TABLE_MANY, name_ptrs, (size_t)n, &err);
    if (rc != SQLEASE_OK)
        goto out;
    m.migrate_s = (bench_now_us() - t0) / 1e6;
    bench_msg("migrated %d names in %.1f s; starting the supervisors...", n, m.migrate_s);

    m.rss_before_kib = rss_now();
    missed0 = bench_missed_total();
    t0 = bench_now_us();
    for (i = 0; i < n; i++)
        bench_options(&opts[i], BENCH_TABLE_MANY, names[i], "bench-many", MANY_TTL,
                      MANY_HEARTBEAT, MANY_DEADLINE, MANY_RETRY, &members[i]);
    for (i = 0; i < n; i++)
        opt_ptrs[i] = &opts[i];
    for (i = 0; i < n && !bench_interrupted; i += BENCH_START_EACH) {
        size_t k = n - i < BENCH_START_EACH ? (size_t)(n - i) : BENCH_START_EACH;

        /* A connection that cannot keep up would take many minutes to
         * start them all: hold what started within the budget and say
         * how many that was. */
        if (bench_now_us() - t0 > cfg->leases_start_budget_s * 1e6) {
            bench_msg("only %d of %d supervisors started within %.0f s: the connection is "
                      "saturated", i, n, cfg->leases_start_budget_s);
            break;
        }
        rc = sqlease_supervisor_start_each(sups + i, k, db, opt_ptrs + i, NULL, &err);
        if (rc != SQLEASE_OK)
            goto out;
        started += (int)k;
    }
    t1 = bench_now_us();
    m.start_s = (t1 - t0) / 1e6;
    m.leases = started;

    m.missed_during_start = bench_missed_total() - missed0;
    missed0 = bench_missed_total();
    bench_msg("%d supervisors started in %.1f s; holding for %.0f s...", started, m.start_s,
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
    rss1 = rss_now();

    m.seconds = (wall1 - wall0) / 1e6;
    m.threads = (int)bench_proc_status("Threads");
    m.rss_kib = rss1;
    m.bytes_per_lease =
        started > 0 ? (double)(rss1 - m.rss_before_kib) * 1024.0 / started : 0;
    m.cpu_pct = (cpu1 - cpu0) / m.seconds * 100.0;
    m.stmts_per_s = (double)(st1 - st0) / m.seconds;
    m.missed_deadlines = bench_missed_total() - missed0;
    for (i = 0; i < started; i++) {
        sqlease_state st;
        sqlease_supervisor_state(sups[i], &st);
        if (!st.holding)
            m.not_holding++;
    }
    have = !bench_interrupted;
    rc = SQLEASE_OK;

out:
    /* One call stops them all (every on_stopped, then the releases in
     * batches); freeing them after it sends nothing more. */
    missed0 = bench_missed_total();
    t0 = bench_now_us();
    if (started > 0 && sqlease_supervisor_stop_each(sups, (size_t)started, NULL, &err) !=
                           SQLEASE_OK)
        bench_msg("leases_%d: stop_each: %s", n, err.message);
    t1 = bench_now_us();
    for (i = 0; i < started; i++)
        sqlease_supervisor_free(sups[i]);
    m.stop_each_s = (t1 - t0) / 1e6;
    m.free_s = (bench_now_us() - t1) / 1e6;
    m.stop_s = (bench_now_us() - t0) / 1e6;
    m.missed_during_stop = bench_missed_total() - missed0;
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
    free(opts);
    free(opt_ptrs);
    if (rc != SQLEASE_OK) {
        bench_msg("leases_%d: %s (%s)", n, err.message, sqlease_strerror(rc));
        res->failed = 1;
        return -1;
    }
    if (have && res->n_many < BENCH_LEASES_MAX)
        res->many[res->n_many++] = m;
    bench_msg("leases_%d: stopped in %.1f s", n, m.stop_s);
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
