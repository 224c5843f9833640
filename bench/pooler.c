/*
 * pooler.c -- what a connection pooler in front of the database costs a
 * lease, next to a direct connection, measured side by side.
 *
 * Paths to one database, each with a handle of its own (one connection),
 * a holder and a follower on a lease name of its own:
 *
 *   direct              the connection string as given, with the dialect
 *                       table's driver settings (on PostgreSQL:
 *                       psqlODBC's UseServerSidePrepare=0, the values put
 *                       into the text and sent as one simple query)
 *   direct-prepared     (PostgreSQL only) the same with
 *                       UseServerSidePrepare=1: named server-side
 *                       statements, parsed and planned once per
 *                       connection, which no transaction or statement
 *                       pooler can carry; what the setting costs
 *   LABEL               each --pooler LABEL=CONN (PgBouncer in transaction
 *                       or statement pooling, say)
 *
 * Each round times, on every path in turn (the order rotating from round
 * to round), a holder's renew (sqlease_lease_acquire on the lease it
 * holds) and a follower's poll (on the same lease, held): interleaving
 * the paths puts them under the same load, and the figures are each
 * path's median next to the direct path's.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "internal.h"

#define WARMUP_ROUNDS 20

typedef struct path {
    sqlease_db *db;
    sqlease_lease *holder, *follower;
    int64_t token;
    char name[48];
    double *renew, *follow;
} path;

static void path_free(path *p)
{
    sqlease_lease_free(p->holder);
    sqlease_lease_free(p->follower);
    sqlease_db_close(p->db);
    free(p->renew);
    free(p->follow);
    memset(p, 0, sizeof *p);
}

/* Open a path's handle on `conn`, take its lease with the holder, and
 * make room for n samples of each kind. */
static int path_open(path *p, const bench_cfg *cfg, const char *conn, int index, int n,
                     sqlease_error *err)
{
    bench_cfg c = *cfg;
    sqlease_options o;
    sqlease_lease_info info;
    char owner[64];
    int rc;

    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "bench-pooler-%d", index);
    p->renew = calloc((size_t)n, sizeof *p->renew);
    p->follow = calloc((size_t)n, sizeof *p->follow);
    if (p->renew == NULL || p->follow == NULL)
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    c.conn = conn;
    rc = bench_open(&p->db, &c, err);
    if (rc != SQLEASE_OK)
        return rc;
    /* Long TTL: the holder renews every round anyway. */
    snprintf(owner, sizeof owner, "bench-pooler-holder-%d", index);
    bench_options(&o, BENCH_TABLE, p->name, owner, 30000, 10000, 20000, 2000, NULL);
    rc = sqlease_lease_new(&p->holder, p->db, &o, err);
    if (rc != SQLEASE_OK)
        return rc;
    snprintf(owner, sizeof owner, "bench-pooler-follower-%d", index);
    o.owner = owner;
    rc = sqlease_lease_new(&p->follower, p->db, &o, err);
    if (rc != SQLEASE_OK)
        return rc;
    rc = sqlease_lease_acquire(p->holder, &info, err);
    if (rc == SQLEASE_OK)
        p->token = info.token;
    return rc;
}

/* One renew and one poll on a path; the sample pointers are NULL during
 * the warm-up. */
static int path_round(path *p, double *renew, double *follow, sqlease_error *err)
{
    sqlease_lease_info info;
    double t0;
    int rc;

    t0 = bench_now_us();
    rc = sqlease_lease_acquire(p->holder, &info, err);
    if (renew != NULL)
        *renew = bench_now_us() - t0;
    if (rc == SQLEASE_NOT_HELD) {
        bench_violation("lease %s: the holder lost a lease it renews every few ms (%s)",
                        p->name, err->message);
        return rc;
    }
    if (rc != SQLEASE_OK)
        return rc;
    if (info.token != p->token) {
        bench_violation("lease %s: a renew changed the token from %lld to %lld", p->name,
                        (long long)p->token, (long long)info.token);
        return SQLEASE_ESTATE;
    }
    t0 = bench_now_us();
    rc = sqlease_lease_acquire(p->follower, &info, err);
    if (follow != NULL)
        *follow = bench_now_us() - t0;
    if (rc == SQLEASE_OK) {
        bench_violation("lease %s: a follower acquired a lease held by another owner",
                        p->name);
        return SQLEASE_ESTATE;
    }
    return rc == SQLEASE_NOT_HELD ? SQLEASE_OK : rc;
}

/*
 * The lease rows are made on the direct path (a pooler may not carry
 * DDL in every mode); each path's rows are its own, so no path waits on
 * another's row lock.
 */
int bench_pooler(const bench_cfg *cfg, bench_results *res)
{
    path paths[BENCH_PATHS_MAX];
    const char *labels[BENCH_PATHS_MAX];
    char names[BENCH_PATHS_MAX][48];
    const char *name_ptrs[BENCH_PATHS_MAX];
    char prepared_conn[4200];
    sqlease_db *setup = NULL;
    sqlease_error err;
    int npaths = 0, n = cfg->samples, i, k, r, rc;
    int is_pg;
    double end;

    memset(paths, 0, sizeof paths);
    rc = bench_open(&setup, cfg, &err);
    if (rc != SQLEASE_OK)
        goto fail;
    is_pg = strcmp(sqlease_db_dialect(setup), "postgres") == 0;
    if (!is_pg && cfg->n_poolers == 0) {
        sqlease_db_close(setup);
        return 0; /* nothing to compare the direct path with */
    }
    labels[npaths++] = "direct";
    if (is_pg)
        labels[npaths++] = "direct-prepared";
    for (i = 0; i < cfg->n_poolers && npaths < BENCH_PATHS_MAX; i++)
        labels[npaths++] = cfg->pooler_labels[i];
    for (i = 0; i < npaths; i++) {
        snprintf(names[i], sizeof names[i], "bench-pooler-%d", i);
        name_ptrs[i] = names[i];
    }
    rc = sqlease_migrate(setup, BENCH_TABLE, name_ptrs, (size_t)npaths, &err);
    sqlease_db_close(setup);
    setup = NULL;
    if (rc != SQLEASE_OK)
        goto fail;

    snprintf(prepared_conn, sizeof prepared_conn, "%s%sUseServerSidePrepare=1", cfg->conn,
             cfg->conn[0] != '\0' && cfg->conn[strlen(cfg->conn) - 1] != ';' &&
                     strchr(cfg->conn, '=') != NULL ? ";" : "");
    for (i = 0; i < npaths && rc == SQLEASE_OK; i++) {
        const char *conn = cfg->conn;
        if (strcmp(labels[i], "direct-prepared") == 0)
            conn = prepared_conn;
        else if (i >= (is_pg ? 2 : 1))
            conn = cfg->pooler_conns[i - (is_pg ? 2 : 1)];
        rc = path_open(&paths[i], cfg, conn, i, n, &err);
        if (rc != SQLEASE_OK)
            bench_msg("pooler: path %s: %s", labels[i], err.message);
    }
    if (rc != SQLEASE_OK)
        goto fail;

    for (r = 0; r < WARMUP_ROUNDS && rc == SQLEASE_OK; r++)
        for (i = 0; i < npaths && rc == SQLEASE_OK; i++)
            rc = path_round(&paths[i], NULL, NULL, &err);
    end = bench_now_us() + cfg->latency_budget_s * 1e6;
    for (r = 0; r < n && rc == SQLEASE_OK && !bench_interrupted; r++) {
        if (r >= cfg->min_samples && bench_now_us() > end)
            break;
        for (k = 0; k < npaths && rc == SQLEASE_OK; k++) {
            i = (r + k) % npaths;
            rc = path_round(&paths[i], &paths[i].renew[r], &paths[i].follow[r], &err);
        }
    }
    if (rc != SQLEASE_OK)
        goto fail;
    n = r;

    res->n_paths = npaths;
    res->path_samples = n;
    for (i = 0; i < npaths; i++) {
        bench_path *bp = &res->paths[i];
        snprintf(bp->label, sizeof bp->label, "%s", labels[i]);
        bench_sort(paths[i].renew, (size_t)n);
        bench_sort(paths[i].follow, (size_t)n);
        bp->renew_p50 = bench_pct(paths[i].renew, (size_t)n, 50);
        bp->renew_p99 = bench_pct(paths[i].renew, (size_t)n, 99);
        bp->follow_p50 = bench_pct(paths[i].follow, (size_t)n, 50);
        bp->follow_p99 = bench_pct(paths[i].follow, (size_t)n, 99);
        snprintf(bp->conn, sizeof bp->conn, "%s", sqlease_db_conn_redacted(paths[i].db));
    }
    for (i = 0; i < npaths; i++) {
        res->paths[i].renew_ratio = res->paths[i].renew_p50 / res->paths[0].renew_p50;
        res->paths[i].follow_ratio = res->paths[i].follow_p50 / res->paths[0].follow_p50;
        sqlease_lease_release(paths[i].holder, NULL, NULL);
        path_free(&paths[i]);
    }
    return 0;

fail:
    bench_msg("pooler: %s (%s)", err.message, sqlease_strerror(rc));
    sqlease_db_close(setup);
    for (i = 0; i < BENCH_PATHS_MAX; i++)
        path_free(&paths[i]);
    res->failed = 1;
    return -1;
}
