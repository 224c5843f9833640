/*
 * bench.h -- what the parts of sqlease-bench share: the run's settings,
 * the figures it collects, and small utilities (a microsecond clock,
 * statistics, process figures, opening connections, and the bookkeeping
 * that checks the lease invariants while the benchmark runs).
 *
 * sqlease-bench is POSIX-only (fork, getrusage, /proc): it measures the
 * library, it is not part of it.
 */
#ifndef SQLEASE_BENCH_H
#define SQLEASE_BENCH_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "sqlease.h"

/* Tables the benchmark creates (and drops before and after a run). */
#define BENCH_TABLE "sqlease_bench"
#define BENCH_TABLE_MANY "sqlease_bench_many"
#define BENCH_RAW_TABLE "bench_raw"
#define BENCH_TABLE_GROUP "sqlease_bench_group"

/* Measurements, selectable with --only. */
enum {
    PH_STMTS = 1,
    PH_LATENCY = 2,
    PH_GRACEFUL = 4,
    PH_CRASH = 8,
    PH_IDLE = 16,
    PH_LEASES = 32,
    PH_POOLER = 64,
    PH_ALL = 127,
    /* Not in the default run (about 40 s): --only group. */
    PH_GROUP = 128,
    /* Not in the default run (about 45 s): --only sched. */
    PH_SCHED = 256
};

/* --leases: how many counts one run may measure. */
#define BENCH_LEASES_MAX 8

/* The pooler measurement: paths to the database compared side by side
 * (direct, direct-prepared, and at most BENCH_POOLERS_MAX --pooler). */
#define BENCH_POOLERS_MAX 4
#define BENCH_PATHS_MAX (2 + BENCH_POOLERS_MAX)

typedef struct bench_cfg {
    const char *conn;       /* connection string or DSN */
    const char *dialect;    /* forced dialect, or NULL to detect */
    int short_run;
    int json;
    int verbose;
    unsigned phases;        /* PH_* bits */
    int leases[BENCH_LEASES_MAX]; /* leases_N: each N measured in turn */
    int n_leases;
    double leases_s;        /* leases_N: measured seconds */
    double leases_start_budget_s; /* stop starting more after this long */
    int samples;            /* latency: samples of each kind */
    int min_samples;        /* latency: ... at least, however long they take */
    double latency_budget_s;/* latency: stop after this long once min_samples are in */
    int graceful_trials;
    int crash_trials;
    double stmts_s;         /* statements per tick: measured seconds */
    double idle_s;          /* idle CPU: measured seconds */
    const char *pooler_labels[BENCH_POOLERS_MAX]; /* --pooler LABEL=CONN */
    const char *pooler_conns[BENCH_POOLERS_MAX];
    int n_poolers;
} bench_cfg;

/* One many-leases measurement (leases_N): N supervisors on one handle. */
/* Supervisors started per sqlease_supervisor_start_each call. */
#define BENCH_START_EACH 1000

typedef struct bench_many {
    int requested;            /* N */
    int leases;               /* started within the start budget */
    int missed_deadlines;     /* in the hold window */
    int missed_during_start;  /* deadline/lost stops while the others were being started */
    int missed_during_stop;   /* ... while they were being stopped */
    int not_holding;          /* at the end of the hold window */
    int threads;              /* the process's, in the hold window */
    double seconds, start_s, stop_s, migrate_s, cpu_pct, bytes_per_lease, stmts_per_s;
    /* The stop, in two halves: one supervisor after another on one
     * thread, then the rest from STOPPERS threads at once. */
    /* stop_s = stop_each_s (sqlease_supervisor_stop_each of all: every
     * on_stopped, then the batched releases) + free_s (freeing them). */
    double stop_each_s, free_s;
    long rss_kib, rss_before_kib;
} bench_many;

/* One path of the pooler measurement (microseconds; ratios to the
 * direct path's medians). */
typedef struct bench_path {
    char label[32];
    char conn[256];         /* redacted */
    double renew_p50, renew_p99, follow_p50, follow_p99;
    double renew_ratio, follow_ratio;
} bench_path;

/* A median with its spread. */
typedef struct bench_spread {
    double median, min, max;
    int n;
} bench_spread;

typedef struct bench_results {
    char dialect[32];
    char conn[512];         /* redacted */
    int failed;             /* a measurement could not run (not a timing) */

    /* statements per tick */
    int have_stmts;
    double stmts_holder, stmts_follower;       /* sqlease_state.statements */
    double db_stmts_holder, db_stmts_follower; /* sqlease_db_statements */
    uint64_t ticks_holder, ticks_follower;
    uint64_t holder_losses;  /* in the window: a stalled database, not a figure */
    double stmts_window_s;
    int have_server;
    double server_holder, server_follower;
    char server_source[160];

    /* latency ratios (microseconds) */
    int have_latency;
    int latency_samples;
    double renew_ratio, follower_ratio;
    double raw_p50, raw_p99, renew_p50, renew_p99, follower_p50, follower_p99;
    /* A follower's two candidate polls, sent directly: the take UPDATE that
     * matches nothing, and the read of the row and the clock. */
    double poll_take_ratio, poll_read_ratio;
    double poll_take_p50, poll_take_p99, poll_read_p50, poll_read_p99;

    /* hand-over gaps (milliseconds) */
    int have_graceful;
    bench_spread graceful;
    bench_spread graceful_stop; /* how long sqlease_supervisor_stop took */
    int have_crash;
    bench_spread crash;        /* the default follower, which watches */
    int have_crash_expiry;
    bench_spread crash_expiry; /* a follower that takes by expiry (full runs) */

    /* many leases on one connection: one entry per measured N */
    int n_many;
    bench_many many[BENCH_LEASES_MAX];

    /* idle supervisor */
    int have_idle;
    double idle_cpu_pct, idle_s;
    int idle_threads;

    /* the same lease's renew and poll through each path; paths[0] is
     * the direct one (n_paths 0: not measured) */
    int n_paths;
    int path_samples;
    bench_path paths[BENCH_PATHS_MAX];

    /* a group shared by worker processes (--only group); milliseconds,
     * -1 when the shares did not settle within the wait */
    int have_group;
    int group_leases, group_ttl_ms;
    double group_start_ms, group_kill_ms, group_join_ms;
    int group_starts, group_moves, group_overlaps;
    double group_stmts_min, group_stmts_max;  /* per worker once balanced */
    /* scheduled jobs (--only sched): a holder firing 1,000 jobs a minute
     * (statements and fires in the window), 10,000 jobs' resident memory,
     * and a plain run's statements beside a scheduled one's */
    int have_sched;
    uint64_t sched_fires, sched_stmts, sched_lease_stmts;
    double sched_window_s;
    int64_t sched_max_late_ms, sched_wall_late_ms;
    int sched_jobs;
    long sched_rss_kib;
    double sched_run_plain, sched_run_scheduled;
} bench_results;

/* ---- clock, sleeping, interruption -------------------------------- */

extern volatile sig_atomic_t bench_interrupted;

/* CLOCK_MONOTONIC in microseconds (shared by every process of the host). */
double bench_now_us(void);
/* Sleep; returns 1 early if SIGINT/SIGTERM arrived. */
int bench_sleep_ms(double ms);
/* A pseudo-random integer in [0, n): only to vary the phase of trials. */
unsigned bench_rand(unsigned n);

/* ---- statistics --------------------------------------------------- */

/* Sort ascending (in place). */
void bench_sort(double *v, size_t n);
/* Nearest-rank percentile p (0..100] of sorted v; 0 if n == 0. */
double bench_pct(const double *sorted, size_t n, double p);
/* Median, min, max of v (sorted in place). */
bench_spread bench_spread_of(double *v, int n);

/* ---- process figures ---------------------------------------------- */

/* A numeric field of /proc/self/status ("Threads", "VmRSS" in kB), or -1. */
long bench_proc_status(const char *key);
/* User + system CPU seconds of this process so far. */
double bench_cpu_s(void);

/* ---- messages, log sink, violations -------------------------------- */

void bench_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The library's log sink: errors are counted (and the first few shown),
 * everything is shown with -v. */
void bench_log_sink(void *ud, int level, const char *line);
int bench_log_errors(void);
/* A lease invariant broke: say so now, and make the run exit non-zero. */
void bench_violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int bench_violations(void);

/* ---- connections --------------------------------------------------- */

int bench_open(sqlease_db **db, const bench_cfg *cfg, sqlease_error *err);
/* Run one statement without parameters or results (DDL, set-up). */
int bench_exec(sqlease_db *db, const char *sql, sqlease_error *err);
/* DROP TABLE IF EXISTS for the benchmark's tables. */
int bench_drop_tables(sqlease_db *db, sqlease_error *err);

/* ---- invariant bookkeeping ------------------------------------------ */

/* One lease name, seen from this process: who holds it here, and the
 * highest token any holder has been given. */
typedef struct bench_member bench_member;

typedef struct bench_watch {
    pthread_mutex_t m;
    const char *name;
    int holders;        /* supervisors between on_started and on_stopped */
    int64_t last_token;
    bench_member *last_member; /* who started with last_token; NULL: another process */
} bench_watch;

/* One supervisor's callbacks. */
struct bench_member {
    bench_watch *w;
    const char *label;
    pthread_mutex_t m;
    pthread_cond_t cv;
    int running;
    int starts, stops;
    int stops_lost, stops_deadline, stops_shutdown;
    int64_t token;
    double started_us, stopped_us;  /* the last on_started / on_stopped */
};

void bench_watch_init(bench_watch *w, const char *name);
void bench_watch_destroy(bench_watch *w);
void bench_member_init(bench_member *mb, bench_watch *w, const char *label);
void bench_member_destroy(bench_member *mb);
/* Wait until the member has started `starts` times; 1 if it did within
 * timeout_ms. */
int bench_member_wait_start(bench_member *mb, int starts, double timeout_ms);

/* Lease options for one supervisor with bench_member callbacks. */
void bench_options(sqlease_options *o, const char *table, const char *name, const char *owner,
                   int64_t ttl, int64_t heartbeat, int64_t renew_deadline, int64_t retry,
                   bench_member *mb);

/* Missed deadlines (on_stopped with LOST or DEADLINE) over all members. */
int bench_missed_total(void);

/* ---- the measurements (each fills its part of res) ------------------ */

int bench_stmts(const bench_cfg *cfg, bench_results *res);
int bench_latency(const bench_cfg *cfg, bench_results *res);
int bench_graceful(const bench_cfg *cfg, bench_results *res);
int bench_crash(const bench_cfg *cfg, bench_results *res);
int bench_idle(const bench_cfg *cfg, bench_results *res);
/* Skipped (returns 0, n_paths stays 0) on a dialect other than PostgreSQL
 * when no --pooler is given: there is nothing to compare with. */
int bench_pooler(const bench_cfg *cfg, bench_results *res);
/* n leases on a fresh handle and table; on success appends to res->many. */
int bench_leases(const bench_cfg *cfg, int n, bench_results *res);
/* The group measurement (bench/group.c): n leases shared by worker
 * processes; prints its figures on stdout.  bench_group_worker is the
 * worker, run as `sqlease-bench --group-worker ...`. */
int bench_group(const bench_cfg *cfg, int n, bench_results *res);
int bench_group_worker(int argc, char **argv);
/* Scheduled jobs (bench/sched.c). */
int bench_sched(const bench_cfg *cfg, bench_results *res);

/* ---- output ------------------------------------------------------- */

void bench_print_table(FILE *out, const bench_cfg *cfg, const bench_results *res);
void bench_print_json(FILE *out, const bench_cfg *cfg, const bench_results *res);

#endif
