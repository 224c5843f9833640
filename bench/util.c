/*
 * util.c -- the benchmark's common code: clock, sleeping, statistics,
 * process figures, messages, opening connections, and the callbacks that
 * check the lease invariants while supervisors run.
 */
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench.h"
#include "seam.h"

volatile sig_atomic_t bench_interrupted = 0;

static atomic_int log_errors;
static atomic_int violations;
static atomic_int missed_total;
static int verbose_log;

double bench_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Sleeps in one-second slices so that Ctrl-C ends a long measurement
 * promptly (the signal may land on a library thread and not interrupt
 * this one), while waking the process rarely enough not to show in the
 * idle CPU figure. */
int bench_sleep_ms(double ms)
{
    double end = bench_now_us() + ms * 1e3;
    for (;;) {
        double left = end - bench_now_us();
        struct timespec ts;
        if (bench_interrupted)
            return 1;
        if (left <= 0)
            return 0;
        if (left > 1e6)
            left = 1e6;
        ts.tv_sec = (time_t)(left / 1e6);
        ts.tv_nsec = (long)((left - (double)ts.tv_sec * 1e6) * 1e3);
        nanosleep(&ts, NULL);
    }
}

unsigned bench_rand(unsigned n)
{
    static unsigned long long x = 0x9E3779B97F4A7C15ull;
    if (n == 0)
        return 0;
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)((x >> 33) % n);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void bench_sort(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
}

double bench_pct(const double *sorted, size_t n, double p)
{
    size_t k;
    if (n == 0)
        return 0;
    k = (size_t)ceil(p / 100.0 * (double)n);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return sorted[k - 1];
}

bench_spread bench_spread_of(double *v, int n)
{
    bench_spread s = { 0, 0, 0, n };
    if (n <= 0)
        return s;
    bench_sort(v, (size_t)n);
    s.min = v[0];
    s.max = v[n - 1];
    s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return s;
}

long bench_proc_status(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    size_t klen = strlen(key);
    long v = -1;

    if (f == NULL)
        return -1;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
            v = strtol(line + klen + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return v;
}

double bench_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

void bench_msg(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "sqlease-bench: %s\n", buf);
}

/*
 * The library logs through this sink.  An error during a benchmark is
 * worth seeing even without -v (it usually explains a bad figure), but a
 * struggling database can produce thousands, so only the first few are
 * shown and the rest counted.
 */
void bench_log_sink(void *ud, int level, const char *line)
{
    (void)ud;
    if (level <= SQLEASE_LOG_ERROR) {
        int n = atomic_fetch_add(&log_errors, 1);
        if (!verbose_log && n < 5)
            fprintf(stderr, "sqlease-bench: library error: %s\n", line);
        else if (!verbose_log && n == 5)
            fprintf(stderr, "sqlease-bench: (further library errors counted, not shown)\n");
    }
    if (verbose_log)
        fprintf(stderr, "sqlease-bench: [lib %d] %s\n", level, line);
}

int bench_log_errors(void)
{
    return atomic_load(&log_errors);
}

void bench_violation(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    atomic_fetch_add(&violations, 1);
    fprintf(stderr, "sqlease-bench: LEASE INVARIANT VIOLATED: %s\n", buf);
}

int bench_violations(void)
{
    return atomic_load(&violations);
}

int bench_missed_total(void)
{
    return atomic_load(&missed_total);
}

int bench_open(sqlease_db **db, const bench_cfg *cfg, sqlease_error *err)
{
    sqlease_db_options o;
    sqlease_db_options_init(&o);
    o.conn = cfg->conn;
    o.dialect = cfg->dialect;
    o.log = bench_log_sink;
    o.log_level = cfg->verbose ? SQLEASE_LOG_DEBUG : SQLEASE_LOG_ERROR;
    verbose_log = cfg->verbose;
    return sqlease_db_open(db, &o, err);
}

int bench_exec(sqlease_db *db, const char *sql, sqlease_error *err)
{
    return sqle_db_query_text(db, sql, NULL, 0, 0, NULL, err);
}

int bench_drop_tables(sqlease_db *db, sqlease_error *err)
{
    static const char *const drops[] = {
        "DROP TABLE IF EXISTS " BENCH_TABLE,
        "DROP TABLE IF EXISTS " BENCH_TABLE_MANY,
        "DROP TABLE IF EXISTS " BENCH_RAW_TABLE,
        "DROP TABLE IF EXISTS " BENCH_TABLE_GROUP,
    };
    size_t i;
    for (i = 0; i < sizeof drops / sizeof drops[0]; i++) {
        int rc = bench_exec(db, drops[i], err);
        if (rc != SQLEASE_OK)
            return rc;
    }
    return SQLEASE_OK;
}

/* ---- invariant bookkeeping ------------------------------------------ */

void bench_watch_init(bench_watch *w, const char *name)
{
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->m, NULL);
    w->name = name;
}

void bench_watch_destroy(bench_watch *w)
{
    pthread_mutex_destroy(&w->m);
}

void bench_member_init(bench_member *mb, bench_watch *w, const char *label)
{
    memset(mb, 0, sizeof *mb);
    mb->w = w;
    mb->label = label;
    pthread_mutex_init(&mb->m, NULL);
    pthread_cond_init(&mb->cv, NULL);
}

void bench_member_destroy(bench_member *mb)
{
    pthread_mutex_destroy(&mb->m);
    pthread_cond_destroy(&mb->cv);
}

/*
 * on_started: within this process at most one supervisor may hold a
 * lease name at a time (a holder's on_stopped always runs before its
 * release, and a deadline stop before its row expires), and tokens never
 * go back: a take by anyone gives a higher token than any before it.  The
 * one equal token allowed is a restart by the same supervisor after a
 * deadline stop while its row had not expired: the database hold never
 * ended, so the library resumes it (same token, fresh on_started).  (A
 * holder in another process is checked by failover.c.)
 */
static void member_started(void *ud, int64_t token)
{
    bench_member *mb = ud;
    bench_watch *w = mb->w;
    double now = bench_now_us();

    pthread_mutex_lock(&w->m);
    if (w->holders > 0)
        bench_violation("lease %s: %s started while another supervisor of this process "
                        "holds it", w->name, mb->label);
    if (token < w->last_token || (token == w->last_token && w->last_member != mb))
        bench_violation("lease %s: %s started with token %lld after token %lld was given "
                        "to %s", w->name, mb->label, (long long)token,
                        (long long)w->last_token,
                        w->last_member != NULL ? w->last_member->label : "another process");
    w->last_token = token;
    w->last_member = mb;
    w->holders++;
    pthread_mutex_unlock(&w->m);

    pthread_mutex_lock(&mb->m);
    if (mb->running)
        bench_violation("lease %s: %s got on_started twice without on_stopped", w->name,
                        mb->label);
    mb->running = 1;
    mb->starts++;
    mb->token = token;
    mb->started_us = now;
    pthread_cond_broadcast(&mb->cv);
    pthread_mutex_unlock(&mb->m);
}

/* on_stopped must follow an on_started of the same supervisor; a stop
 * for a deadline or a loss is what leases_N counts as missed. */
static void member_stopped(void *ud, int reason)
{
    bench_member *mb = ud;
    bench_watch *w = mb->w;
    double now = bench_now_us();
    int was_running;

    pthread_mutex_lock(&mb->m);
    was_running = mb->running;
    mb->running = 0;
    mb->stops++;
    mb->stopped_us = now;
    if (reason == SQLEASE_STOP_LOST)
        mb->stops_lost++;
    else if (reason == SQLEASE_STOP_DEADLINE)
        mb->stops_deadline++;
    else
        mb->stops_shutdown++;
    pthread_cond_broadcast(&mb->cv);
    pthread_mutex_unlock(&mb->m);
    if (reason == SQLEASE_STOP_LOST || reason == SQLEASE_STOP_DEADLINE)
        atomic_fetch_add(&missed_total, 1);

    if (!was_running) {
        bench_violation("lease %s: %s got on_stopped without on_started", w->name, mb->label);
        return;
    }
    pthread_mutex_lock(&w->m);
    w->holders--;
    pthread_mutex_unlock(&w->m);
}

int bench_member_wait_start(bench_member *mb, int starts, double timeout_ms)
{
    double end = bench_now_us() + timeout_ms * 1e3;
    int ok;

    pthread_mutex_lock(&mb->m);
    while (mb->starts < starts && !bench_interrupted) {
        double left = end - bench_now_us();
        struct timespec ts;
        if (left <= 0)
            break;
        if (left > 100e3)
            left = 100e3; /* wake now and then to notice Ctrl-C */
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += (time_t)(left / 1e6);
        ts.tv_nsec += (long)(fmod(left, 1e6) * 1e3);
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&mb->cv, &mb->m, &ts);
    }
    ok = mb->starts >= starts;
    pthread_mutex_unlock(&mb->m);
    return ok;
}

void bench_options(sqlease_options *o, const char *table, const char *name, const char *owner,
                   int64_t ttl, int64_t heartbeat, int64_t renew_deadline, int64_t retry,
                   bench_member *mb)
{
    sqlease_options_init(o);
    o->table = table;
    o->name = name;
    o->owner = owner;
    o->ttl_ms = ttl;
    o->heartbeat_ms = heartbeat;
    o->renew_deadline_ms = renew_deadline;
    o->retry_ms = retry;
    if (mb != NULL) {
        o->on_started = member_started;
        o->on_stopped = member_stopped;
        o->userdata = mb;
    }
}
