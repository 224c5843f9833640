/*
 * report.c -- the benchmark's output: a table for people and, with
 * --json, one JSON object per line for scripts.  The JSON is written by
 * hand (a few small functions below); a figure that was not measured, or that
 * this dialect cannot give, is null.
 */
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/* ---- the machine ---------------------------------------------------- */

typedef struct machine {
    long nproc;
    char cpu[128];
    long ram_mib;
} machine;

static void machine_read(machine *m)
{
    char line[256];
    FILE *f;

    memset(m, 0, sizeof *m);
    m->nproc = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(m->cpu, sizeof m->cpu, "unknown");
    f = fopen("/proc/cpuinfo", "r");
    if (f != NULL) {
        while (fgets(line, sizeof line, f) != NULL) {
            char *colon = strchr(line, ':');
            if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
                colon++;
                while (*colon == ' ' || *colon == '\t')
                    colon++;
                colon[strcspn(colon, "\n")] = '\0';
                snprintf(m->cpu, sizeof m->cpu, "%s", colon);
                break;
            }
        }
        fclose(f);
    }
    f = fopen("/proc/meminfo", "r");
    if (f != NULL) {
        while (fgets(line, sizeof line, f) != NULL) {
            long kib;
            if (sscanf(line, "MemTotal: %ld kB", &kib) == 1) {
                m->ram_mib = kib / 1024;
                break;
            }
        }
        fclose(f);
    }
}

/* ---- goals ---------------------------------------------------------- */

/* The goals the design sets; "met" and "MISSED" in the table, and the
 * JSON carries the figures only (a reader applies its own goals). */
static const char *verdict(int ok)
{
    return ok ? "met" : "MISSED";
}

/* ---- table ---------------------------------------------------------- */

static void row(FILE *out, const char *figure, const char *value, const char *goal,
                const char *verdict_text, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static void row(FILE *out, const char *figure, const char *value, const char *goal,
                const char *verdict_text, const char *fmt, ...)
{
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    fprintf(out, "  %-31s %-10s %-9s %-7s %s\n", figure, value, goal, verdict_text, detail);
}

static const char *num(char *buf, size_t cap, const char *fmt, double v)
{
    snprintf(buf, cap, fmt, v);
    return buf;
}

/* The goals of leases_N: the supervisors share the handle's threads and
 * their renews go in batches, so neither threads nor statements grow
 * with N. */
#define MANY_MAX_THREADS 8
#define MANY_MAX_STMTS_PER_S 100
#define MANY_MAX_BYTES_PER_LEASE 4096
/* Batched start and stop (sqlease_supervisor_start_each, _stop_each):
 * 10,000 leases in under 2 s each on every dialect. */
#define MANY_MAX_START_S 2
#define MANY_MAX_STOP_S 2

static void many_rows(FILE *out, const bench_many *x)
{
    char f[48], v[64], g[32];
    int all = x->leases >= x->requested;

#define FIG(name) (snprintf(f, sizeof f, "leases_%d.%s", x->requested, name), f)
    row(out, FIG("missed_deadlines"), num(v, sizeof v, "%.0f", x->missed_deadlines), "0",
        verdict(x->missed_deadlines == 0),
        "%d%s leases on one connection held %.0f s, heartbeat 1 s; %d not holding at the "
        "end; also %d missed while starting them, %d while stopping them",
        x->leases, all ? "" : " (NOT ALL) of the requested", x->seconds, x->not_holding,
        x->missed_during_start, x->missed_during_stop);
    if (!all)
        row(out, FIG("leases"), num(v, sizeof v, "%.0f", x->leases),
            num(g, sizeof g, "%.0f", x->requested), verdict(0),
            "only these started within the start budget: the connection is saturated");
    row(out, FIG("threads"), num(v, sizeof v, "%.0f", x->threads),
        num(g, sizeof g, "<= %.0f", (double)MANY_MAX_THREADS),
        verdict(x->threads <= MANY_MAX_THREADS), "the whole process, in the hold window");
    row(out, FIG("stmts_per_s"), num(v, sizeof v, "%.1f", x->stmts_per_s),
        num(g, sizeof g, "<= %.0f", (double)MANY_MAX_STMTS_PER_S),
        verdict(x->stmts_per_s <= MANY_MAX_STMTS_PER_S),
        "on the connection (sqlease_db_statements), heartbeat 1 s: %.4f per lease",
        x->leases > 0 ? x->stmts_per_s / x->leases : 0);
    row(out, FIG("bytes_per_lease"), num(v, sizeof v, "%.0f", x->bytes_per_lease),
        num(g, sizeof g, "<= %.0f", (double)MANY_MAX_BYTES_PER_LEASE),
        verdict(x->bytes_per_lease <= MANY_MAX_BYTES_PER_LEASE),
        "resident growth from before the first start to the end of the hold, per lease");
    row(out, FIG("start_s"), num(v, sizeof v, "%.2f", x->start_s),
        num(g, sizeof g, "< %.0f", (double)MANY_MAX_START_S),
        verdict(all && x->start_s < MANY_MAX_START_S),
        "to start %d supervisors with sqlease_supervisor_start_each, %d per call (%.3f ms "
        "each)", x->leases, BENCH_START_EACH, x->leases > 0 ? x->start_s * 1e3 / x->leases : 0);
    row(out, FIG("stop_s"), num(v, sizeof v, "%.2f", x->stop_s),
        num(g, sizeof g, "< %.0f", (double)MANY_MAX_STOP_S),
        verdict(all && x->stop_s < MANY_MAX_STOP_S),
        "to stop all with one sqlease_supervisor_stop_each (%.2f s: every on_stopped, then "
        "the batched releases) and free them (%.2f s)", x->stop_each_s, x->free_s);
    row(out, FIG("migrate_s"), num(v, sizeof v, "%.2f", x->migrate_s),
        num(g, sizeof g, "< %.0f", (double)MANY_MAX_START_S),
        verdict(x->migrate_s < MANY_MAX_START_S), "to migrate all %d names in one "
        "sqlease_migrate call (batched seeds)", x->requested);
    row(out, FIG("cpu_pct"), num(v, sizeof v, "%.2f", x->cpu_pct), "-", "-",
        "of one core, in the hold window");
    row(out, FIG("rss_kib"), num(v, sizeof v, "%.0f", (double)x->rss_kib), "-", "-",
        "%ld KiB before the supervisors started", x->rss_before_kib);
#undef FIG
}

/* The goals of a group (balanced within 3 ttl of the
 * last start, a killed worker's leases held by the others within ttl +
 * retry, a joined worker's share within 2 ttl, no overlap); the retry is
 * the default one of the ttl, ttl / 10. */
static void group_rows(FILE *out, const bench_results *r)
{
    char v[64], g[32];
    double ttl = r->group_ttl_ms;

    row(out, "group.balanced_start_ms", num(v, sizeof v, "%.0f", r->group_start_ms),
        num(g, sizeof g, "<= %.0f", 3 * ttl),
        verdict(r->group_start_ms >= 0 && r->group_start_ms <= 3 * ttl),
        "%d leases, 4 worker processes started 1 s apart, ttl %.0f ms: each holds its "
        "share +- 2, after the last start", r->group_leases, ttl);
    row(out, "group.balanced_kill_ms", num(v, sizeof v, "%.0f", r->group_kill_ms),
        num(g, sizeof g, "<= %.0f", ttl + ttl / 10),
        verdict(r->group_kill_ms >= 0 && r->group_kill_ms <= ttl + ttl / 10),
        "one worker killed (SIGKILL): its leases held by the 3 others, share +- 2");
    row(out, "group.balanced_join_ms", num(v, sizeof v, "%.0f", r->group_join_ms),
        num(g, sizeof g, "<= %.0f", 2 * ttl),
        verdict(r->group_join_ms >= 0 && r->group_join_ms <= 2 * ttl),
        "one worker added: 4 shares +- 2 again");
    row(out, "group.overlaps", num(v, sizeof v, "%.0f", r->group_overlaps), "0",
        verdict(r->group_overlaps == 0),
        "a lease's work on two workers at once, from the callbacks; %d starts, %d moves; "
        "%.1f-%.1f statements/s per worker once balanced", r->group_starts, r->group_moves,
        r->group_stmts_min, r->group_stmts_max);
}

void bench_print_table(FILE *out, const bench_cfg *cfg, const bench_results *r)
{
    machine m;
    char v[64], g[32];
    int viol = bench_violations();
    int i;

    machine_read(&m);
    fprintf(out, "\nsqlease-bench %s: dialect %s, %s run\n", sqlease_version(),
            r->dialect[0] ? r->dialect : "?", cfg->short_run ? "short" : "full");
    fprintf(out, "  connection: %s\n", r->conn);
    fprintf(out, "  machine: %ld CPUs, %s, %ld MiB RAM\n\n", m.nproc, m.cpu, m.ram_mib);
    fprintf(out, "  %-31s %-10s %-9s %-7s %s\n", "figure", "value", "goal", "verdict", "detail");

    if (r->have_stmts) {
        row(out, "stmts_per_tick_holder", num(v, sizeof v, "%.3f", r->stmts_holder), "1",
            verdict(r->stmts_holder <= 1.0005),
            "%llu ticks of %d ms in %.1f s; sqlease_db_statements %.3f%s",
            (unsigned long long)r->ticks_holder, 100, r->stmts_window_s, r->db_stmts_holder,
            r->holder_losses ? "; the holder lost its deadline in the window (stall)" : "");
        row(out, "stmts_per_tick_follower", num(v, sizeof v, "%.3f", r->stmts_follower), "1",
            verdict(r->stmts_follower <= 1.0005),
            "%llu ticks of %d ms; sqlease_db_statements %.3f; 1 read of the row per tick "
            "(a take adds its UPDATE)",
            (unsigned long long)r->ticks_follower, 100, r->db_stmts_follower);
        if (r->have_server) {
            row(out, "server_stmts_per_tick_holder", num(v, sizeof v, "%.3f", r->server_holder),
                "1", verdict(r->server_holder <= 1.0005), "%s", r->server_source);
            row(out, "server_stmts_per_tick_follower",
                num(v, sizeof v, "%.3f", r->server_follower), "1",
                verdict(r->server_follower <= 1.0005), "(same source)");
        } else {
            row(out, "server_stmts_per_tick_*", "n/a", "-", "-",
                "no server-side statement counter for this dialect");
        }
    }
    if (r->have_latency) {
        row(out, "renew_ratio", num(v, sizeof v, "%.3f", r->renew_ratio), "<= 1.10",
            verdict(r->renew_ratio <= 1.10),
            "renew p50 %.0f us p99 %.0f us; raw UPDATE p50 %.0f us p99 %.0f us; %d samples",
            r->renew_p50, r->renew_p99, r->raw_p50, r->raw_p99, r->latency_samples);
        row(out, "follower_ratio", num(v, sizeof v, "%.3f", r->follower_ratio), "<= 1.10",
            verdict(r->follower_ratio <= 1.10), "follower p50 %.0f us p99 %.0f us; %d samples",
            r->follower_p50, r->follower_p99, r->latency_samples);
        row(out, "poll_take_ratio", num(v, sizeof v, "%.3f", r->poll_take_ratio), "-", "-",
            "a follower's take UPDATE matching no row: p50 %.0f us p99 %.0f us",
            r->poll_take_p50, r->poll_take_p99);
        row(out, "poll_read_ratio", num(v, sizeof v, "%.3f", r->poll_read_ratio), "-", "-",
            "a follower's read of the row and the clock: p50 %.0f us p99 %.0f us",
            r->poll_read_p50, r->poll_read_p99);
    }
    for (i = 0; i < r->n_paths; i++) {
        const bench_path *x = &r->paths[i];
        char fig[64];

        snprintf(fig, sizeof fig, "renew_via_%s", x->label);
        row(out, fig, num(v, sizeof v, "%.3f", x->renew_ratio), "-", "-",
            "x direct; renew p50 %.0f us p99 %.0f us, poll p50 %.0f us (x%.3f) p99 %.0f us; "
            "%d rounds; %s", x->renew_p50, x->renew_p99, x->follow_p50, x->follow_ratio,
            x->follow_p99, r->path_samples, x->conn);
    }
    if (r->have_graceful)
        row(out, "graceful_gap_ms", num(v, sizeof v, "%.1f", r->graceful.median), "<= 300",
            verdict(r->graceful.median <= 300),
            "min %.1f max %.1f, %d trials, retry 200 ms; stop() took %.1f ms (median)",
            r->graceful.min, r->graceful.max, r->graceful.n, r->graceful_stop.median);
    if (r->have_crash)
        row(out, "crash_gap_ms", num(v, sizeof v, "%.0f", r->crash.median), "<= 2300",
            verdict(r->crash.median <= 2300),
            "min %.0f max %.0f, %d trials; ttl 2 s, heartbeat 500 ms, retry 200 ms",
            r->crash.min, r->crash.max, r->crash.n);
    if (r->have_crash_expiry)
        row(out, "crash_gap_expiry_ms", num(v, sizeof v, "%.0f", r->crash_expiry.median),
            "-", "-",
            "min %.0f max %.0f, %d trials; the same, a follower taking by expiry "
            "(take_by_expiry: no watch, no protection from a clock step)",
            r->crash_expiry.min, r->crash_expiry.max, r->crash_expiry.n);
    for (i = 0; i < r->n_many; i++)
        many_rows(out, &r->many[i]);
    if (r->have_group)
        group_rows(out, r);
    if (r->have_sched) {
        uint64_t own = r->sched_stmts - r->sched_lease_stmts;
        double per = r->sched_fires > 0 ? (double)own / (double)r->sched_fires : 0;
        row(out, "sched_stmts_per_fire", num(v, sizeof v, "%.2f", per), "<= 2",
            verdict(r->sched_fires > 0 && per <= 2.0),
            "a holder firing 1,000 jobs a minute: %llu fires, %llu statements of theirs in "
            "%.1f s (%llu in all with the lease's own renews)",
            (unsigned long long)r->sched_fires, (unsigned long long)own,
            r->sched_window_s, (unsigned long long)r->sched_stmts);
        row(out, "sched_fire_late_ms", num(v, sizeof v, "%.0f", (double)r->sched_max_late_ms),
            "<= 100", verdict(r->sched_fires > 0 && r->sched_max_late_ms <= 100),
            "the latest start after its fire's time in that window, about 17 fires due "
            "each second at once (%lld ms by this host's wall clock)",
            (long long)r->sched_wall_late_ms);
        row(out, "sched_rss_mib", num(v, sizeof v, "%.1f", r->sched_rss_kib / 1024.0), "< 10",
            verdict(r->sched_rss_kib < 10 * 1024), "%d jobs in one holder's schedule "
            "(resident memory added by its start)", r->sched_jobs);
        row(out, "sched_run_extra_stmts",
            num(v, sizeof v, "%.1f", r->sched_run_scheduled - r->sched_run_plain), "<= 1",
            verdict(r->sched_run_scheduled - r->sched_run_plain <= 1.0),
            "run --schedule's take, outcome and release (%.1f) beside a plain run's take and "
            "release (%.1f)", r->sched_run_scheduled, r->sched_run_plain);
    }
    if (r->have_idle) {
        snprintf(g, sizeof g, "< 0.1");
        row(out, "idle_cpu_pct", num(v, sizeof v, "%.4f", r->idle_cpu_pct), g,
            verdict(r->idle_cpu_pct < 0.1), "one supervisor at default timings, %.0f s, %d threads",
            r->idle_s, r->idle_threads);
    }
    row(out, "invariant violations", num(v, sizeof v, "%.0f", viol), "0", verdict(viol == 0),
        "%d library error lines", bench_log_errors());
    if (r->failed)
        fprintf(out, "  (a measurement failed to run; see the messages above)\n");
    fputc('\n', out);
}

/* ---- JSON ----------------------------------------------------------- */

typedef struct jw {
    FILE *out;
    int first;
} jw;

static void jw_key(jw *j, const char *key)
{
    fprintf(j->out, "%s\"%s\":", j->first ? "" : ",", key);
    j->first = 0;
}

static void jw_str(jw *j, const char *key, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    jw_key(j, key);
    fputc('"', j->out);
    for (; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(j->out, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7F)
            fprintf(j->out, "\\u%04x", *p);
        else
            fputc(*p, j->out);
    }
    fputc('"', j->out);
}

/* A number, or null when `have` is 0 or the value is not finite. */
static void jw_num(jw *j, const char *key, int have, double v, int decimals)
{
    jw_key(j, key);
    if (!have || !isfinite(v))
        fputs("null", j->out);
    else
        fprintf(j->out, "%.*f", decimals, v);
}

static void jw_bool(jw *j, const char *key, int v)
{
    jw_key(j, key);
    fputs(v ? "true" : "false", j->out);
}

static void jw_open(jw *j, const char *key)
{
    if (key != NULL)
        jw_key(j, key);
    fputc('{', j->out);
    j->first = 1;
}

static void jw_close(jw *j)
{
    fputc('}', j->out);
    j->first = 0;
}

void bench_print_json(FILE *out, const bench_cfg *cfg, const bench_results *r)
{
    jw j = { out, 1 };
    machine m;
    int i;

    machine_read(&m);
    jw_open(&j, NULL);
    jw_str(&j, "dialect", r->dialect);
    jw_str(&j, "conn", r->conn);
    jw_str(&j, "version", sqlease_version());
    jw_bool(&j, "short", cfg->short_run);
    jw_num(&j, "nproc", 1, (double)m.nproc, 0);
    jw_str(&j, "cpu", m.cpu);
    jw_num(&j, "ram_mib", 1, (double)m.ram_mib, 0);

    jw_num(&j, "stmts_per_tick_holder", r->have_stmts, r->stmts_holder, 3);
    jw_num(&j, "stmts_per_tick_follower", r->have_stmts, r->stmts_follower, 3);
    jw_num(&j, "db_stmts_per_tick_holder", r->have_stmts, r->db_stmts_holder, 3);
    jw_num(&j, "db_stmts_per_tick_follower", r->have_stmts, r->db_stmts_follower, 3);
    jw_num(&j, "ticks_holder", r->have_stmts, (double)r->ticks_holder, 0);
    jw_num(&j, "ticks_follower", r->have_stmts, (double)r->ticks_follower, 0);
    jw_num(&j, "stmts_window_s", r->have_stmts, r->stmts_window_s, 1);
    jw_num(&j, "stmts_holder_losses", r->have_stmts, (double)r->holder_losses, 0);
    jw_num(&j, "server_stmts_per_tick_holder", r->have_server, r->server_holder, 3);
    jw_num(&j, "server_stmts_per_tick_follower", r->have_server, r->server_follower, 3);
    if (r->have_server)
        jw_str(&j, "server_stmts_source", r->server_source);
    else
        jw_num(&j, "server_stmts_source", 0, 0, 0);

    jw_num(&j, "renew_ratio", r->have_latency, r->renew_ratio, 3);
    jw_num(&j, "follower_ratio", r->have_latency, r->follower_ratio, 3);
    jw_num(&j, "latency_samples", r->have_latency, r->latency_samples, 0);
    jw_num(&j, "raw_p50_us", r->have_latency, r->raw_p50, 1);
    jw_num(&j, "raw_p99_us", r->have_latency, r->raw_p99, 1);
    jw_num(&j, "renew_p50_us", r->have_latency, r->renew_p50, 1);
    jw_num(&j, "renew_p99_us", r->have_latency, r->renew_p99, 1);
    jw_num(&j, "follower_p50_us", r->have_latency, r->follower_p50, 1);
    jw_num(&j, "follower_p99_us", r->have_latency, r->follower_p99, 1);
    jw_num(&j, "poll_take_ratio", r->have_latency, r->poll_take_ratio, 3);
    jw_num(&j, "poll_read_ratio", r->have_latency, r->poll_read_ratio, 3);
    jw_num(&j, "poll_take_p50_us", r->have_latency, r->poll_take_p50, 1);
    jw_num(&j, "poll_take_p99_us", r->have_latency, r->poll_take_p99, 1);
    jw_num(&j, "poll_read_p50_us", r->have_latency, r->poll_read_p50, 1);
    jw_num(&j, "poll_read_p99_us", r->have_latency, r->poll_read_p99, 1);

    /* One object per path of the pooler measurement, keyed via_LABEL. */
    for (i = 0; i < r->n_paths; i++) {
        const bench_path *x = &r->paths[i];
        char key[48];

        snprintf(key, sizeof key, "via_%s", x->label);
        jw_open(&j, key);
        jw_str(&j, "conn", x->conn);
        jw_num(&j, "rounds", 1, r->path_samples, 0);
        jw_num(&j, "renew_p50_us", 1, x->renew_p50, 1);
        jw_num(&j, "renew_p99_us", 1, x->renew_p99, 1);
        jw_num(&j, "renew_ratio", 1, x->renew_ratio, 3);
        jw_num(&j, "poll_p50_us", 1, x->follow_p50, 1);
        jw_num(&j, "poll_p99_us", 1, x->follow_p99, 1);
        jw_num(&j, "poll_ratio", 1, x->follow_ratio, 3);
        jw_close(&j);
    }
    jw_num(&j, "graceful_gap_ms", r->have_graceful, r->graceful.median, 1);
    jw_num(&j, "graceful_gap_min_ms", r->have_graceful, r->graceful.min, 1);
    jw_num(&j, "graceful_gap_max_ms", r->have_graceful, r->graceful.max, 1);
    jw_num(&j, "graceful_trials", r->have_graceful, r->graceful.n, 0);
    jw_num(&j, "graceful_stop_ms", r->have_graceful, r->graceful_stop.median, 1);
    jw_num(&j, "crash_gap_ms", r->have_crash, r->crash.median, 1);
    jw_num(&j, "crash_gap_min_ms", r->have_crash, r->crash.min, 1);
    jw_num(&j, "crash_gap_max_ms", r->have_crash, r->crash.max, 1);
    jw_num(&j, "crash_trials", r->have_crash, r->crash.n, 0);
    jw_num(&j, "crash_gap_expiry_ms", r->have_crash_expiry, r->crash_expiry.median, 1);
    jw_num(&j, "crash_gap_expiry_min_ms", r->have_crash_expiry, r->crash_expiry.min, 1);
    jw_num(&j, "crash_gap_expiry_max_ms", r->have_crash_expiry, r->crash_expiry.max, 1);

    /* One object per measured N, keyed leases_N; none when the leases
     * measurement did not run. */
    for (i = 0; i < r->n_many; i++) {
        const bench_many *x = &r->many[i];
        char key[32];

        snprintf(key, sizeof key, "leases_%d", x->requested);
        jw_open(&j, key);
        jw_num(&j, "leases", 1, x->leases, 0);
        jw_num(&j, "leases_requested", 1, x->requested, 0);
        jw_num(&j, "seconds", 1, x->seconds, 1);
        jw_num(&j, "missed_deadlines", 1, x->missed_deadlines, 0);
        jw_num(&j, "not_holding", 1, x->not_holding, 0);
        jw_num(&j, "missed_during_start", 1, x->missed_during_start, 0);
        jw_num(&j, "missed_during_stop", 1, x->missed_during_stop, 0);
        jw_num(&j, "threads", 1, x->threads, 0);
        jw_num(&j, "stmts_per_s", 1, x->stmts_per_s, 1);
        jw_num(&j, "cpu_pct", 1, x->cpu_pct, 2);
        jw_num(&j, "rss_kib", 1, (double)x->rss_kib, 0);
        jw_num(&j, "rss_before_kib", 1, (double)x->rss_before_kib, 0);
        jw_num(&j, "bytes_per_lease", 1, x->bytes_per_lease, 0);
        jw_num(&j, "start_s", 1, x->start_s, 2);
        jw_num(&j, "stop_s", 1, x->stop_s, 2);
        jw_num(&j, "stop_each_s", 1, x->stop_each_s, 2);
        jw_num(&j, "free_s", 1, x->free_s, 2);
        jw_num(&j, "migrate_s", 1, x->migrate_s, 2);
        jw_close(&j);
    }
    if (r->have_group) {
        jw_open(&j, "group");
        jw_num(&j, "leases", 1, r->group_leases, 0);
        jw_num(&j, "ttl_ms", 1, r->group_ttl_ms, 0);
        jw_num(&j, "balanced_start_ms", r->group_start_ms >= 0, r->group_start_ms, 0);
        jw_num(&j, "balanced_kill_ms", r->group_kill_ms >= 0, r->group_kill_ms, 0);
        jw_num(&j, "balanced_join_ms", r->group_join_ms >= 0, r->group_join_ms, 0);
        jw_num(&j, "starts", 1, r->group_starts, 0);
        jw_num(&j, "moves", 1, r->group_moves, 0);
        jw_num(&j, "overlaps", 1, r->group_overlaps, 0);
        jw_num(&j, "stmts_per_s_min", r->group_stmts_min >= 0, r->group_stmts_min, 1);
        jw_num(&j, "stmts_per_s_max", r->group_stmts_max >= 0, r->group_stmts_max, 1);
        jw_close(&j);
    }
    if (r->have_sched) {
        jw_open(&j, "sched");
        jw_num(&j, "fires", 1, (double)r->sched_fires, 0);
        jw_num(&j, "statements", 1, (double)r->sched_stmts, 0);
        jw_num(&j, "lease_statements", 1, (double)r->sched_lease_stmts, 0);
        jw_num(&j, "window_s", 1, r->sched_window_s, 1);
        jw_num(&j, "max_late_ms", 1, (double)r->sched_max_late_ms, 0);
        jw_num(&j, "max_wall_late_ms", 1, (double)r->sched_wall_late_ms, 0);
        jw_num(&j, "jobs", 1, r->sched_jobs, 0);
        jw_num(&j, "rss_kib", 1, (double)r->sched_rss_kib, 0);
        jw_num(&j, "run_plain_statements", 1, r->sched_run_plain, 1);
        jw_num(&j, "run_scheduled_statements", 1, r->sched_run_scheduled, 1);
        jw_close(&j);
    }
    jw_num(&j, "idle_cpu_pct", r->have_idle, r->idle_cpu_pct, 4);
    jw_num(&j, "idle_seconds", r->have_idle, r->idle_s, 1);
    jw_num(&j, "idle_threads", r->have_idle, r->idle_threads, 0);

    jw_num(&j, "violations", 1, bench_violations(), 0);
    jw_num(&j, "library_errors", 1, bench_log_errors(), 0);
    jw_bool(&j, "failed", r->failed);
    jw_close(&j);
    fputc('\n', out);
    fflush(out);
}
