/*
 * group.c -- the group measurement (--only group, not in the default
 * run): N leases (1000, or the first --leases count) shared by worker
 * processes started one after another, one killed (SIGKILL), one added.
 *
 * Each worker is this program again (--group-worker), running
 * sqlease_group_start on a handle of its own.  The parent reads the
 * table (sqlease_list) every 250 ms and counts the held leases per owner,
 * so the shares are what the database says.  Each worker appends its
 * on_started / on_stopped and its statement count, with the system-wide
 * monotonic clock, to one file (O_APPEND, a line per write), from which
 * the parent counts overlaps (two workers running one lease's work at
 * once; a killed worker's work ends when it is killed), moves and the
 * statements per second of each worker once balanced.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define GROUP_WORKERS_MAX 5
#define GROUP_TTL_MS 3000

static int g_events_fd = -1;
static int g_worker_idx;

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* One event line, written with a single write() so lines of different
 * processes never interleave. */
static void event(char kind, const char *name, int64_t value)
{
    char line[160];
    int n = snprintf(line, sizeof line, "%c %d %s %lld %lld\n", kind, g_worker_idx, name,
                     (long long)mono_us(), (long long)value);
    if (n > 0 && write(g_events_fd, line, (size_t)n) < 0)
        bench_violation("group worker: cannot write the event file");
}

static void w_started(void *ud, const char *name, int64_t token)
{
    (void)ud;
    event('S', name, token);
}

static void w_stopped(void *ud, const char *name, int reason)
{
    (void)ud;
    event('T', name, reason);
}

static volatile sig_atomic_t g_term;

static void on_term(int sig)
{
    (void)sig;
    g_term = 1;
}

static void lease_name(char *buf, size_t cap, int i)
{
    snprintf(buf, cap, "g%05d", i);
}

/* The worker: join the group and report until SIGTERM (then leave it
 * gracefully) or SIGKILL.  argv: conn dialect table n idx ttl events. */
int bench_group_worker(int argc, char **argv)
{
    if (argc != 9)
        return 2;
    bench_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.conn = argv[2];
    cfg.dialect = argv[3][0] ? argv[3] : NULL;
    const char *table = argv[4];
    int n = atoi(argv[5]);
    g_worker_idx = atoi(argv[6]);
    int64_t ttl = atoll(argv[7]);
    g_events_fd = open(argv[8], O_WRONLY | O_APPEND);
    if (n <= 0 || g_events_fd < 0)
        return 2;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);

    char (*names)[16] = calloc((size_t)n, sizeof *names);
    const char **ptrs = calloc((size_t)n, sizeof *ptrs);
    if (!names || !ptrs)
        return 2;
    for (int i = 0; i < n; i++) {
        lease_name(names[i], sizeof names[i], i);
        ptrs[i] = names[i];
    }
    sqlease_db *db = NULL;
    sqlease_error err;
    if (bench_open(&db, &cfg, &err) != SQLEASE_OK) {
        fprintf(stderr, "group worker %d: %s\n", g_worker_idx, err.message);
        return 2;
    }
    sqlease_options o;
    char owner[32];
    snprintf(owner, sizeof owner, "bench-w%d", g_worker_idx);
    sqlease_options_init(&o);
    o.table = table;
    o.owner = owner;
    o.ttl_ms = ttl;
    sqlease_group_callbacks cb = {w_started, w_stopped, NULL};
    sqlease_group *g = NULL;
    if (sqlease_group_start(&g, db, &o, "bench", ptrs, (size_t)n, 1, &cb, &err) != SQLEASE_OK) {
        fprintf(stderr, "group worker %d: %s\n", g_worker_idx, err.message);
        return 2;
    }
    while (!g_term) {
        event('C', "-", (int64_t)sqlease_db_statements(db));
        bench_sleep_ms(250);
    }
    sqlease_group_stop(g, NULL);
    sqlease_group_free(g);
    sqlease_db_close(db);
    free(names);
    free(ptrs);
    return 0;
}

/* ---- the parent ---------------------------------------------------- */

typedef struct share_count {
    int n;
    int per[GROUP_WORKERS_MAX];
    int other;  /* held by an owner that is not a bench worker */
    int held;
} share_count;

static int count_row(void *ud, const char *name, const sqlease_lease_info *info)
{
    share_count *c = ud;
    int w;
    if (strncmp(name, SQLEASE_GROUP_PRESENCE_PREFIX, strlen(SQLEASE_GROUP_PRESENCE_PREFIX)) == 0)
        return 0;
    if (!info->held)
        return 0;
    c->held++;
    if (sscanf(info->owner, "bench-w%d", &w) == 1 && w >= 0 && w < GROUP_WORKERS_MAX)
        c->per[w]++;
    else
        c->other++;
    return 0;
}

/* Every lease held, and each live worker within +-2 of N / live. */
static int balanced(const share_count *c, const int *live, int n, int *spread_lo,
                    int *spread_hi)
{
    int nlive = 0, lo = 1 << 30, hi = -1;
    for (int k = 0; k < GROUP_WORKERS_MAX; k++)
        if (live[k]) {
            nlive++;
            if (c->per[k] < lo)
                lo = c->per[k];
            if (c->per[k] > hi)
                hi = c->per[k];
        }
    *spread_lo = lo;
    *spread_hi = hi;
    if (nlive == 0 || c->held != n || c->other)
        return 0;
    double mean = (double)n / nlive;
    return lo >= mean - 2 && hi <= mean + 2;
}

/* Poll the table until balanced or timeout; ms taken, -1 on timeout. */
static double await_balance(sqlease_db *db, const char *table, int n, const int *live,
                            double timeout_ms, share_count *last)
{
    double t0 = bench_now_us();
    for (;;) {
        share_count c;
        sqlease_error err;
        int lo, hi;
        memset(&c, 0, sizeof c);
        if (sqlease_list(db, table, count_row, &c, &err) == SQLEASE_OK) {
            *last = c;
            if (balanced(&c, live, n, &lo, &hi))
                return (bench_now_us() - t0) / 1000;
        }
        if ((bench_now_us() - t0) / 1000 > timeout_ms || bench_interrupted)
            return -1;
        bench_sleep_ms(100);
    }
}

static pid_t spawn(const char *self, const bench_cfg *cfg, const char *table, int n, int idx,
                   const char *events)
{
    char nbuf[16], ibuf[16], tbuf[32];
    snprintf(nbuf, sizeof nbuf, "%d", n);
    snprintf(ibuf, sizeof ibuf, "%d", idx);
    snprintf(tbuf, sizeof tbuf, "%d", GROUP_TTL_MS);
    pid_t pid = fork();
    if (pid == 0) {
        execl(self, self, "--group-worker", cfg->conn, cfg->dialect ? cfg->dialect : "", table,
              nbuf, ibuf, tbuf, events, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* The running account goes where the table goes: stderr under --json,
 * whose stdout is the JSON line alone. */
static FILE *g_out;

static void print_shares(const char *what, double ms, const share_count *c)
{
    fprintf(g_out, "group: %-34s %8.0f ms  shares", what, ms);
    for (int k = 0; k < GROUP_WORKERS_MAX; k++)
        fprintf(g_out, " %d", c->per[k]);
    fprintf(g_out, "  (held %d)\n", c->held);
}

/* Read the event file: overlaps, moves, and each worker's statements per
 * second between t_a and t_b (us). */
static void analyse(const char *events, int n, int64_t kill_us, int64_t join_us, int killed,
                    int64_t t_a, int64_t t_b, bench_results *res)
{
    FILE *f = fopen(events, "r");
    if (!f) {
        bench_violation("group: cannot read the event file");
        return;
    }
    int *holders = calloc((size_t)n, sizeof *holders);
    int *holder_of = calloc((size_t)n, sizeof *holder_of);
    int *taken = calloc((size_t)n, sizeof *taken);
    int64_t c_first[GROUP_WORKERS_MAX], c_last[GROUP_WORKERS_MAX];
    uint64_t s_first[GROUP_WORKERS_MAX], s_last[GROUP_WORKERS_MAX];
    int overlaps = 0, moves = 0, starts = 0;
    int64_t moved_first = -1, moved_last = -1; /* starts between the kill and the join */
    int64_t w_first[GROUP_WORKERS_MAX], w_last[GROUP_WORKERS_MAX];
    char kind, name[64];
    int w;
    long long at, value;

    /* Events sorted by time first: lines of different processes are in
     * write order, which is close to but not exactly time order. */
    typedef struct ev {
        char kind;
        int w, lease;
        int64_t at, value;
    } ev;
    size_t cap = 1024, m = 0;
    ev *v = malloc(cap * sizeof *v);
    if (!holders || !holder_of || !taken || !v) {
        bench_violation("group: out of memory");
        goto out;
    }
    for (int k = 0; k < GROUP_WORKERS_MAX; k++)
        c_first[k] = c_last[k] = w_first[k] = w_last[k] = -1;
    while (fscanf(f, " %c %d %63s %lld %lld", &kind, &w, name, &at, &value) == 5) {
        if (w < 0 || w >= GROUP_WORKERS_MAX)
            continue;
        if (kind == 'C') {
            if (at >= t_a && at <= t_b) {
                if (c_first[w] < 0) {
                    c_first[w] = at;
                    s_first[w] = (uint64_t)value;
                }
                c_last[w] = at;
                s_last[w] = (uint64_t)value;
            }
            continue;
        }
        if (m == cap) {
            ev *nv = realloc(v, 2 * cap * sizeof *v);
            if (!nv)
                break;
            v = nv;
            cap *= 2;
        }
        v[m].kind = kind;
        v[m].w = w;
        v[m].lease = atoi(name + 1);
        v[m].at = at;
        v[m].value = value;
        m++;
    }
    /* Insertion order is per process; a stable sort by time. */
    for (size_t i = 1; i < m; i++) {
        ev x = v[i];
        size_t j = i;
        while (j > 0 && v[j - 1].at > x.at) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
    int killed_ended = 0;
    for (size_t i = 0; i < m; i++) {
        if (killed >= 0 && !killed_ended && v[i].at >= kill_us) {
            /* The killed worker's work ended with it. */
            for (int l = 0; l < n; l++)
                if (holders[l] > 0 && holder_of[l] == killed) {
                    holders[l]--;
                    holder_of[l] = -1;
                }
            killed_ended = 1;
        }
        int l = v[i].lease;
        if (l < 0 || l >= n)
            continue;
        if (v[i].kind == 'S') {
            starts++;
            if (v[i].at >= kill_us && v[i].at < join_us) {
                if (moved_first < 0)
                    moved_first = v[i].at;
                moved_last = v[i].at;
                if (w_first[v[i].w] < 0)
                    w_first[v[i].w] = v[i].at;
                w_last[v[i].w] = v[i].at;
            }
            if (holders[l] > 0)
                overlaps++;
            holders[l]++;
            holder_of[l] = v[i].w;
            if (taken[l])
                moves++;
            taken[l] = 1;
        } else if (v[i].kind == 'T') {
            if (holders[l] > 0)
                holders[l]--;
        }
    }
    fprintf(g_out, "group: %d starts, %d moves (a release and a take each), %d overlaps\n",
            starts, moves, overlaps);
    if (moved_first >= 0)
        fprintf(g_out, "group: the killed worker's leases started elsewhere from %.0f ms to "
                       "%.0f ms after the kill (on_started)\n",
                (double)(moved_first - kill_us) / 1000, (double)(moved_last - kill_us) / 1000);
    if (moved_first >= 0) {
        fprintf(g_out, "group: each survivor's, first to last:");
        for (int k = 0; k < GROUP_WORKERS_MAX; k++)
            if (w_first[k] >= 0)
                fprintf(g_out, " w%d %.0f-%.0f ms", k, (double)(w_first[k] - kill_us) / 1000,
                        (double)(w_last[k] - kill_us) / 1000);
        fprintf(g_out, "\n");
    }
    res->group_starts = starts;
    res->group_moves = moves;
    res->group_overlaps = overlaps;
    if (overlaps > 0)
        bench_violation("group: %d leases ran on two workers at once", overlaps);
    fprintf(g_out, "group: statements/s per worker once balanced:");
    res->group_stmts_min = res->group_stmts_max = -1;
    for (int k = 0; k < GROUP_WORKERS_MAX; k++)
        if (c_first[k] >= 0 && c_last[k] > c_first[k]) {
            double r = (double)(s_last[k] - s_first[k]) * 1e6 / (double)(c_last[k] - c_first[k]);
            fprintf(g_out, " w%d %.1f", k, r);
            if (res->group_stmts_min < 0 || r < res->group_stmts_min)
                res->group_stmts_min = r;
            if (r > res->group_stmts_max)
                res->group_stmts_max = r;
        }
    fprintf(g_out, "\n");
out:
    free(v);
    free(holders);
    free(holder_of);
    free(taken);
    fclose(f);
}

int bench_group(const bench_cfg *cfg, int n, bench_results *res)
{
    g_out = cfg->json ? stderr : stdout;
    const char *table = BENCH_TABLE_GROUP;
    char self[4096], events[4200];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0)
        return 2;
    self[len] = '\0';
    const char *base = getenv("TMPDIR");
    snprintf(events, sizeof events, "%s/sqlease-bench-group-%ld.events",
             base && base[0] ? base : "/tmp", (long)getpid());
    int fd = open(events, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return 2;
    close(fd);

    sqlease_db *db = NULL;
    sqlease_error err;
    int rc = 0;
    char (*names)[16] = calloc((size_t)n, sizeof *names);
    const char **ptrs = calloc((size_t)n, sizeof *ptrs);
    pid_t pids[GROUP_WORKERS_MAX] = {0};
    int live[GROUP_WORKERS_MAX] = {0};
    share_count c;
    int64_t kill_us = 0, join_us = 0, t_a = 0, t_b = 0;
    double ms;
    memset(&c, 0, sizeof c);
    if (!names || !ptrs || bench_open(&db, cfg, &err) != SQLEASE_OK) {
        fprintf(stderr, "sqlease-bench: group: cannot open the database\n");
        rc = 2;
        goto out;
    }
    for (int i = 0; i < n; i++) {
        lease_name(names[i], sizeof names[i], i);
        ptrs[i] = names[i];
    }
    if (sqlease_migrate(db, table, ptrs, (size_t)n, &err) != SQLEASE_OK) {
        fprintf(stderr, "sqlease-bench: group: migrate: %s\n", err.message);
        rc = 2;
        goto out;
    }
    fprintf(g_out, "group: %d leases, ttl %d ms, 4 workers started one after another\n", n,
            GROUP_TTL_MS);
    res->have_group = 1;
    res->group_leases = n;
    res->group_ttl_ms = GROUP_TTL_MS;

    /* Four workers, a second apart. */
    for (int k = 0; k < 4; k++) {
        pids[k] = spawn(self, cfg, table, n, k, events);
        live[k] = pids[k] > 0;
        if (k < 3)
            bench_sleep_ms(1000);
    }
    ms = await_balance(db, table, n, live, 6.0 * GROUP_TTL_MS, &c);
    print_shares("balanced after the last start", ms, &c);
    res->group_start_ms = ms;
    if (ms < 0 || ms > 3.0 * GROUP_TTL_MS)
        bench_violation("group: not balanced within 3 ttl of the last start");

    /* A steady window for the statement rate. */
    t_a = mono_us();
    bench_sleep_ms(2 * GROUP_TTL_MS);
    t_b = mono_us();

    /* Kill one. */
    kill(pids[3], SIGKILL);
    kill_us = mono_us();
    waitpid(pids[3], NULL, 0);
    live[3] = 0;
    pids[3] = 0;
    ms = await_balance(db, table, n, live, 6.0 * GROUP_TTL_MS, &c);
    print_shares("balanced after a kill", ms, &c);
    res->group_kill_ms = ms;

    /* Add one. */
    join_us = mono_us();
    pids[4] = spawn(self, cfg, table, n, 4, events);
    live[4] = pids[4] > 0;
    ms = await_balance(db, table, n, live, 6.0 * GROUP_TTL_MS, &c);
    print_shares("balanced after a worker joined", ms, &c);
    res->group_join_ms = ms;
    if (ms < 0 || ms > 2.0 * GROUP_TTL_MS)
        bench_violation("group: not balanced within 2 ttl of a join");

out:
    for (int k = 0; k < GROUP_WORKERS_MAX; k++)
        if (pids[k] > 0)
            kill(pids[k], SIGTERM);
    for (int k = 0; k < GROUP_WORKERS_MAX; k++)
        if (pids[k] > 0)
            waitpid(pids[k], NULL, 0);
    if (rc == 0)
        analyse(events, n, kill_us, join_us, 3, t_a, t_b, res);
    unlink(events);
    sqlease_db_close(db);
    free(names);
    free(ptrs);
    return rc;
}
