/*
 * main.c -- sqlease-bench: measure the library against one database.
 *
 *   sqlease-bench [--dsn CONN] [--short] [--json] [--only LIST] ...
 *
 * Without --dsn it makes a fresh temporary directory, benchmarks the
 * embedded SQLite driver on a file there, and removes the directory.
 * With --dsn it uses that database and creates (and drops again) the
 * tables sqlease_bench, sqlease_bench_many and bench_raw in it.
 *
 * Exit status: 0 when every measurement ran, whatever the figures (a
 * slow machine is not a failure); 1 when a lease invariant broke during
 * the run (two holders at once, a token that did not grow, on_started
 * twice); 2 on a usage error or when a measurement could not run;
 * 130 when interrupted.
 */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "dialect.h"

static void usage(FILE *out)
{
    fputs("usage: sqlease-bench [--dsn CONN] [--dialect X] [--short] [--json] [--only LIST]\n"
          "                     [--leases N[,N...]] [--samples N] [--trials N]\n"
          "                     [--pooler LABEL=CONN]... [-v]\n"
          "  --dsn CONN    DSN name or connection string (default: SQLite in a fresh\n"
          "                temporary directory, removed afterwards); the benchmark creates\n"
          "                and drops the tables sqlease_bench, sqlease_bench_many, bench_raw\n",
          out);
    /* The rows of the generated dialect table, whatever it holds. */
    fprintf(out, "  --dialect X   force the dialect (%s)\n", sqle_dialect_keys());
    fputs("  --short       a quick run (about 40 s): fewer samples, trials and leases\n"
          "  --json        one JSON object on stdout (the table goes to stderr)\n"
          "  --only LIST   comma-separated subset of: stmts,latency,pooler,graceful,crash,\n"
          "                idle,leases, or group (not in the default run: N leases, 1000\n"
          "                or the first --leases count, shared by 4 worker processes),\n"
          "                or sched (not in the default run: scheduled jobs' cost)\n"
          "  --leases N[,N...]  leases held at once in the leases measurement, measured\n"
          "                for each N in turn, each on a fresh handle and table (default\n"
          "                1000,10000; --short 200)\n"
          "  --samples N   latency samples of each kind (default 2000; --short 300)\n"
          "  --trials N    trials of each hand-over gap (default 20 graceful, 10 crash)\n"
          "  --pooler LABEL=CONN  another path to the same database (PgBouncer, say):\n"
          "                the pooler measurement times a renew and a poll through it next\n"
          "                to --dsn's direct connection, in the same rounds (at most 4)\n"
          "  -v            show the library's log\n"
          "Exit status: 0 ran (whatever the figures), 1 a lease invariant broke,\n"
          "2 usage error or a measurement could not run, 130 interrupted.\n",
          out);
}

static unsigned parse_only(const char *list)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {
        { "stmts", PH_STMTS }, { "latency", PH_LATENCY }, { "graceful", PH_GRACEFUL },
        { "crash", PH_CRASH }, { "idle", PH_IDLE },       { "leases", PH_LEASES },
        { "pooler", PH_POOLER }, { "group", PH_GROUP }, { "sched", PH_SCHED },
    };
    unsigned mask = 0;
    const char *p = list;

    while (*p) {
        size_t len = strcspn(p, ",");
        size_t i;
        int found = 0;
        for (i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i].name) == len && strncmp(p, names[i].name, len) == 0) {
                mask |= names[i].bit;
                found = 1;
            }
        if (!found && len > 0)
            return 0;
        p += len;
        if (*p == ',')
            p++;
    }
    return mask;
}

static int positive(const char *s, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v <= 0 || v > 1000000)
        return 0;
    *out = (int)v;
    return 1;
}

/* A comma-separated list of at most BENCH_LEASES_MAX positive counts. */
static int parse_counts(const char *list, int *out, int *n)
{
    char buf[16];

    *n = 0;
    for (;;) {
        size_t len = strcspn(list, ",");
        if (len == 0 || len >= sizeof buf || *n == BENCH_LEASES_MAX)
            return 0;
        memcpy(buf, list, len);
        buf[len] = '\0';
        if (!positive(buf, &out[*n]))
            return 0;
        (*n)++;
        list += len;
        if (*list == '\0')
            return 1;
        list++;
    }
}

/* Remove the temporary directory and whatever the SQLite driver left in
 * it (the database, a journal). */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4096];

    if (d != NULL) {
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

static void on_signal(int sig)
{
    (void)sig;
    bench_interrupted = 1;
}

/*
 * Tables are dropped before and after the run so that every figure starts
 * from a fresh row (and PostgreSQL's per-table counters from zero), and the
 * measurements run in an order that lets the crash test fork while no
 * other thread of this process exists.
 */
int main(int argc, char **argv)
{
    bench_cfg cfg;
    bench_results res;
    sqlease_db *setup = NULL;
    sqlease_error err;
    char tmpdir[4096] = "";
    char conn[4200];
    int leases[BENCH_LEASES_MAX], n_leases = 0, samples = 0, trials = 0;
    char *pooler_args[BENCH_POOLERS_MAX] = { NULL };
    struct sigaction sa;
    FILE *table_out;
    double t_run;
    int i, rc;

    if (argc > 1 && strcmp(argv[1], "--group-worker") == 0)
        return bench_group_worker(argc, argv);
    memset(&cfg, 0, sizeof cfg);
    memset(&res, 0, sizeof res);
    cfg.phases = PH_ALL;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--dsn") == 0 && next != NULL) {
            cfg.conn = next;
            i++;
        } else if (strcmp(a, "--dialect") == 0 && next != NULL) {
            cfg.dialect = next;
            i++;
        } else if (strcmp(a, "--short") == 0) {
            cfg.short_run = 1;
        } else if (strcmp(a, "--json") == 0) {
            cfg.json = 1;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            cfg.verbose = 1;
        } else if (strcmp(a, "--only") == 0 && next != NULL) {
            cfg.phases = parse_only(next);
            i++;
            if (cfg.phases == 0) {
                fprintf(stderr, "sqlease-bench: --only: unknown measurement in '%s'\n", next);
                return 2;
            }
        } else if (strcmp(a, "--leases") == 0 && next != NULL &&
                   parse_counts(next, leases, &n_leases)) {
            i++;
        } else if (strcmp(a, "--pooler") == 0 && next != NULL) {
            const char *eq = strchr(next, '=');
            size_t len = eq != NULL ? (size_t)(eq - next) : 0;
            if (len == 0 || len >= sizeof res.paths[0].label || eq[1] == '\0' ||
                cfg.n_poolers == BENCH_POOLERS_MAX || strcmp(next, "direct=") == 0) {
                fprintf(stderr, "sqlease-bench: --pooler takes LABEL=CONN (at most %d, a "
                        "label of 1..%d bytes)\n", BENCH_POOLERS_MAX,
                        (int)sizeof res.paths[0].label - 1);
                return 2;
            }
            pooler_args[cfg.n_poolers] = strdup(next);
            if (pooler_args[cfg.n_poolers] == NULL) {
                fprintf(stderr, "sqlease-bench: out of memory\n");
                return 2;
            }
            pooler_args[cfg.n_poolers][len] = '\0';
            cfg.pooler_labels[cfg.n_poolers] = pooler_args[cfg.n_poolers];
            cfg.pooler_conns[cfg.n_poolers] = pooler_args[cfg.n_poolers] + len + 1;
            cfg.n_poolers++;
            i++;
        } else if (strcmp(a, "--samples") == 0 && next != NULL && positive(next, &samples)) {
            i++;
        } else if (strcmp(a, "--trials") == 0 && next != NULL && positive(next, &trials)) {
            i++;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            printf("sqlease-bench %s\n", sqlease_version());
            return 0;
        } else {
            fprintf(stderr, "sqlease-bench: bad argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    cfg.stmts_s = cfg.short_run ? 3 : 10;
    cfg.samples = samples ? samples : cfg.short_run ? 300 : 2000;
    cfg.min_samples = cfg.short_run ? 100 : 1000;
    if (cfg.min_samples > cfg.samples)
        cfg.min_samples = cfg.samples;
    cfg.latency_budget_s = cfg.short_run ? 6 : 90;
    cfg.graceful_trials = trials ? trials : cfg.short_run ? 5 : 20;
    cfg.crash_trials = trials ? trials : cfg.short_run ? 3 : 10;
    cfg.idle_s = cfg.short_run ? 5 : 30;
    if (n_leases > 0) {
        memcpy(cfg.leases, leases, sizeof leases);
        cfg.n_leases = n_leases;
    } else if (cfg.short_run) {
        cfg.leases[0] = 200;
        cfg.n_leases = 1;
    } else {
        cfg.leases[0] = 1000;
        cfg.leases[1] = 10000;
        cfg.n_leases = 2;
    }
    cfg.leases_s = cfg.short_run ? 10 : 60;
    cfg.leases_start_budget_s = cfg.short_run ? 15 : 60;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    if (cfg.conn == NULL) {
        const char *base = getenv("TMPDIR");
        snprintf(tmpdir, sizeof tmpdir, "%s/sqlease-bench-XXXXXX",
                 base != NULL && base[0] != '\0' ? base : "/tmp");
        if (mkdtemp(tmpdir) == NULL) {
            perror("sqlease-bench: mkdtemp");
            return 2;
        }
        /* Timeout= as in the library's own SQLite default (a 2 s busy
         * timeout instead of the driver's 100 s). */
        snprintf(conn, sizeof conn, "Driver=SQLite3;Database=%s/bench.db;Timeout=2000", tmpdir);
        cfg.conn = conn;
    }

    rc = bench_open(&setup, &cfg, &err);
    if (rc == SQLEASE_OK)
        rc = bench_drop_tables(setup, &err);
    if (rc != SQLEASE_OK) {
        fprintf(stderr, "sqlease-bench: cannot set up the database: %s\n", err.message);
        sqlease_db_close(setup);
        if (tmpdir[0])
            remove_dir(tmpdir);
        return 2;
    }
    snprintf(res.dialect, sizeof res.dialect, "%s", sqlease_db_dialect(setup));
    snprintf(res.conn, sizeof res.conn, "%s", sqlease_db_conn_redacted(setup));
    sqlease_db_close(setup);
    setup = NULL;
    bench_msg("%s (%s), %s run", res.dialect, res.conn, cfg.short_run ? "short" : "full");

    /* The crash measurement forks: it runs while this process has no
     * other thread, i.e. before the idle and leases measurements and
     * after every supervisor of the earlier ones has been freed. */
    t_run = bench_now_us();
    if ((cfg.phases & PH_STMTS) && !bench_interrupted) {
        bench_msg("statements per tick (%.0f s)...", cfg.stmts_s);
        bench_stmts(&cfg, &res);
    }
    if ((cfg.phases & PH_LATENCY) && !bench_interrupted) {
        bench_msg("latency (%d samples of each kind)...", cfg.samples);
        bench_latency(&cfg, &res);
    }
    if ((cfg.phases & PH_POOLER) && !bench_interrupted) {
        bench_msg("pooler (%d rounds, %d path%s besides the direct one)...", cfg.samples,
                  cfg.n_poolers, cfg.n_poolers == 1 ? "" : "s");
        bench_pooler(&cfg, &res);
    }
    if ((cfg.phases & PH_GRACEFUL) && !bench_interrupted) {
        bench_msg("graceful hand-over (%d trials)...", cfg.graceful_trials);
        bench_graceful(&cfg, &res);
    }
    if ((cfg.phases & PH_CRASH) && !bench_interrupted) {
        bench_msg("crash hand-over (%d trials)...", cfg.crash_trials);
        bench_crash(&cfg, &res);
    }
    if ((cfg.phases & PH_IDLE) && !bench_interrupted) {
        bench_msg("idle supervisor (%.0f s)...", cfg.idle_s);
        bench_idle(&cfg, &res);
    }
    for (i = 0; i < cfg.n_leases && (cfg.phases & PH_LEASES) && !bench_interrupted; i++) {
        bench_msg("%d leases on one connection (%.0f s)...", cfg.leases[i], cfg.leases_s);
        bench_leases(&cfg, cfg.leases[i], &res);
    }

    if ((cfg.phases & PH_GROUP) && !bench_interrupted) {
        bench_msg("group of %d leases over 4 worker processes...",
                  n_leases > 0 ? cfg.leases[0] : 1000);
        if (bench_group(&cfg, n_leases > 0 ? cfg.leases[0] : 1000, &res) != 0)
            res.failed = 1;
    }
    if ((cfg.phases & PH_SCHED) && !bench_interrupted) {
        bench_msg("scheduled jobs: 1,000 a minute, 10,000 in a schedule, a scheduled run...");
        if (bench_sched(&cfg, &res) != 0)
            res.failed = 1;
    }
    bench_msg("measured in %.1f s", (bench_now_us() - t_run) / 1e6);
    if (bench_open(&setup, &cfg, &err) == SQLEASE_OK)
        bench_drop_tables(setup, &err);
    sqlease_db_close(setup);
    if (tmpdir[0])
        remove_dir(tmpdir);

    table_out = cfg.json ? stderr : stdout;
    bench_print_table(table_out, &cfg, &res);
    if (cfg.json)
        bench_print_json(stdout, &cfg, &res);

    for (i = 0; i < cfg.n_poolers; i++)
        free(pooler_args[i]);
    if (bench_interrupted)
        return 130;
    if (bench_violations() > 0)
        return 1;
    return res.failed ? 2 : 0;
}
