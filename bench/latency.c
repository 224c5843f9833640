/*
 * latency.c -- what an acquire costs next to the cheapest useful write.
 *
 * On one connection, round-robin: a raw prepared single-row UPDATE
 * (UPDATE bench_raw SET v = v + 1 WHERE id = ?), a holder's renew
 * (sqlease_lease_acquire on a lease it holds), the raw UPDATE again, and
 * a follower's acquire (on the same lease, held by the other handle).
 * Interleaving them puts every kind under the same server load, cache
 * state and background noise; the figures are each kind's median
 * divided by the raw UPDATE's median.
 *
 * The two statements a follower could poll with are also timed side by
 * side in the same rounds, whatever the library sends: the take UPDATE
 * (matching no row, since the lease is held) and the read of the row and
 * the database clock (the status SELECT).  Their ratio is what decides
 * which of the two a follower's tick should be.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "internal.h"
#include "db.h"

#define LATENCY_NAME "bench-latency"
#define WARMUP_ROUNDS 20

/* Columns of the status SELECT: owner, token, acquired_at_ms,
 * expires_at_ms, the clock, data. */
#define READ_COLUMNS 6

/* The dialect's take and read statements with {table} filled in. */
typedef struct poll_stmts {
    char *take;
    char *read;
} poll_stmts;

/* One of the follower's candidate statements, sent directly: the take
 * must match no row (the lease is held by the other handle). */
static int poll_stmt(sqlease_db *db, const sqle_stmt *st, const char *sql, int is_read,
                     sqlease_error *err)
{
    db_params p;
    db_out out[8];
    int64_t ints[8];
    char text[3][1100];
    int64_t rows = -1;
    int has_row = 0;
    size_t i;
    int rc;

    memset(&p, 0, sizeof p);
    p.name = LATENCY_NAME;
    p.owner = "bench-latency-follower";
    p.ttl_ms = 30000;
    p.token = 1; /* not the row's: the take matches nothing either way */
    memset(out, 0, sizeof out);
    for (i = 0; i < 8; i++) {
        /* Text for the columns a read returns as text, ints for the rest:
         * owner first, data (if any) last. */
        if (i == 0 || i >= 5) {
            out[i].type = DB_TEXT;
            out[i].s = text[i == 0 ? 0 : i == 5 ? 1 : 2];
            out[i].cap = sizeof text[0];
        } else {
            out[i].type = DB_INT64;
            out[i].i = &ints[i];
        }
    }
    rc = sqle_db_run(db, st, sql, &p, is_read ? out : NULL, is_read ? READ_COLUMNS : 0,
                     is_read ? &has_row : NULL, is_read ? NULL : &rows, err);
    if (rc == SQLEASE_OK && !is_read && rows != 0)
        rc = sqle_fail(err, SQLEASE_EROWCOUNT, "a take of a held lease reported %lld rows",
                       (long long)rows);
    if (rc == SQLEASE_OK && is_read && !has_row)
        rc = sqle_fail(err, SQLEASE_ENOROW, "the read of the lease row found none");
    return rc;
}

static int raw_update(sqlease_db *db, sqlease_error *err)
{
    db_bind b;
    int64_t rows = -1;
    int rc;

    memset(&b, 0, sizeof b);
    b.type = DB_INT64;
    b.i = 1;
    rc = sqle_db_exec(db, "UPDATE " BENCH_RAW_TABLE " SET v = v + 1 WHERE id = ?", &b, 1, NULL, 0,
                      NULL, &rows, err);
    if (rc == SQLEASE_OK && rows != 1)
        rc = sqle_fail(err, SQLEASE_EROWCOUNT, "raw UPDATE reported %lld rows",
                       (long long)rows);
    return rc;
}

/* One timed round; a sample array is NULL during warm-up. */
static int round_once(sqlease_db *db, sqlease_lease *holder, sqlease_lease *follower,
                      const poll_stmts *ps, int64_t token, double *raw1, double *raw2,
                      double *renew, double *follow, double *take, double *read,
                      sqlease_error *err)
{
    const sqle_dialect *d = sqle_db_dialect(db);
    sqlease_lease_info info;
    double t0;
    int rc;

    t0 = bench_now_us();
    rc = raw_update(db, err);
    if (raw1 != NULL)
        *raw1 = bench_now_us() - t0;
    if (rc != SQLEASE_OK)
        return rc;

    t0 = bench_now_us();
    rc = sqlease_lease_acquire(holder, &info, err);
    if (renew != NULL)
        *renew = bench_now_us() - t0;
    if (rc == SQLEASE_NOT_HELD) {
        bench_violation("lease %s: the holder lost a lease it renews every few ms (%s)",
                        LATENCY_NAME, err->message);
        return rc;
    }
    if (rc != SQLEASE_OK)
        return rc;
    if (info.token != token) {
        bench_violation("lease %s: a renew changed the token from %lld to %lld", LATENCY_NAME,
                        (long long)token, (long long)info.token);
        return SQLEASE_ESTATE;
    }

    t0 = bench_now_us();
    rc = raw_update(db, err);
    if (raw2 != NULL)
        *raw2 = bench_now_us() - t0;
    if (rc != SQLEASE_OK)
        return rc;

    t0 = bench_now_us();
    rc = sqlease_lease_acquire(follower, &info, err);
    if (follow != NULL)
        *follow = bench_now_us() - t0;
    if (rc == SQLEASE_OK) {
        bench_violation("lease %s: a follower acquired a lease held by another owner",
                        LATENCY_NAME);
        return SQLEASE_ESTATE;
    }
    if (rc != SQLEASE_NOT_HELD)
        return rc;

    t0 = bench_now_us();
    rc = poll_stmt(db, &d->acquire, ps->take, 0, err);
    if (take != NULL)
        *take = bench_now_us() - t0;
    if (rc != SQLEASE_OK)
        return rc;

    t0 = bench_now_us();
    rc = poll_stmt(db, &d->status, ps->read, 1, err);
    if (read != NULL)
        *read = bench_now_us() - t0;
    return rc;
}

/*
 * Both lease handles live on the connection that runs the raw UPDATE, so
 * every kind of statement pays the same round trip; the warm-up rounds
 * prepare every statement before anything is timed.
 */
int bench_latency(const bench_cfg *cfg, bench_results *res)
{
    sqlease_db *db = NULL;
    sqlease_lease *holder = NULL, *follower = NULL;
    sqlease_lease_info info;
    sqlease_options o;
    sqlease_error err;
    const char *names[] = { LATENCY_NAME };
    int n = cfg->samples;
    double *raw = NULL, *renew = NULL, *follow = NULL, *take = NULL, *read = NULL;
    poll_stmts ps = { NULL, NULL };
    int64_t token;
    int rc, i;

    raw = calloc((size_t)n * 2, sizeof *raw);
    renew = calloc((size_t)n, sizeof *renew);
    follow = calloc((size_t)n, sizeof *follow);
    take = calloc((size_t)n, sizeof *take);
    read = calloc((size_t)n, sizeof *read);
    if (raw == NULL || renew == NULL || follow == NULL || take == NULL || read == NULL) {
        rc = sqle_fail(&err, SQLEASE_ENOMEM, "out of memory");
        goto fail;
    }
    rc = bench_open(&db, cfg, &err);
    if (rc == SQLEASE_OK)
        rc = bench_exec(db, "DROP TABLE IF EXISTS " BENCH_RAW_TABLE, &err);
    if (rc == SQLEASE_OK)
        rc = bench_exec(db, "CREATE TABLE " BENCH_RAW_TABLE
                            " (id INTEGER NOT NULL PRIMARY KEY, v BIGINT NOT NULL)", &err);
    if (rc == SQLEASE_OK)
        rc = bench_exec(db, "INSERT INTO " BENCH_RAW_TABLE " (id, v) VALUES (1, 0)", &err);
    if (rc == SQLEASE_OK)
        rc = sqlease_migrate(db, BENCH_TABLE, names, 1, &err);
    if (rc != SQLEASE_OK)
        goto fail;
    ps.take = sqle_sql_for_table(sqle_db_dialect(db)->acquire.sql, BENCH_TABLE);
    ps.read = sqle_sql_for_table(sqle_db_dialect(db)->status.sql, BENCH_TABLE);
    if (ps.take == NULL || ps.read == NULL) {
        rc = sqle_fail(&err, SQLEASE_ENOMEM, "out of memory");
        goto fail;
    }

    /* Long TTL: the holder renews every round anyway. */
    bench_options(&o, BENCH_TABLE, LATENCY_NAME, "bench-latency-holder", 30000, 10000, 20000,
                  2000, NULL);
    rc = sqlease_lease_new(&holder, db, &o, &err);
    if (rc != SQLEASE_OK)
        goto fail;
    o.owner = "bench-latency-follower";
    rc = sqlease_lease_new(&follower, db, &o, &err);
    if (rc != SQLEASE_OK)
        goto fail;
    rc = sqlease_lease_acquire(holder, &info, &err);
    if (rc != SQLEASE_OK)
        goto fail;
    token = info.token;

    for (i = 0; i < WARMUP_ROUNDS && rc == SQLEASE_OK; i++)
        rc = round_once(db, holder, follower, &ps, token, NULL, NULL, NULL, NULL, NULL, NULL,
                        &err);
    {
        /* A slow database (SQLite committing to a slow disk) gets fewer
         * samples rather than an endless run, but never fewer than
         * min_samples. */
        double end = bench_now_us() + cfg->latency_budget_s * 1e6;
        for (i = 0; i < n && rc == SQLEASE_OK && !bench_interrupted; i++) {
            if (i >= cfg->min_samples && bench_now_us() > end)
                break;
            rc = round_once(db, holder, follower, &ps, token, &raw[2 * i], &raw[2 * i + 1],
                            &renew[i], &follow[i], &take[i], &read[i], &err);
        }
    }
    if (rc != SQLEASE_OK)
        goto fail;
    n = i;
    sqlease_lease_release(holder, NULL, NULL);

    bench_sort(raw, (size_t)n * 2);
    bench_sort(renew, (size_t)n);
    bench_sort(follow, (size_t)n);
    bench_sort(take, (size_t)n);
    bench_sort(read, (size_t)n);
    res->latency_samples = n;
    res->raw_p50 = bench_pct(raw, (size_t)n * 2, 50);
    res->raw_p99 = bench_pct(raw, (size_t)n * 2, 99);
    res->renew_p50 = bench_pct(renew, (size_t)n, 50);
    res->renew_p99 = bench_pct(renew, (size_t)n, 99);
    res->follower_p50 = bench_pct(follow, (size_t)n, 50);
    res->follower_p99 = bench_pct(follow, (size_t)n, 99);
    res->renew_ratio = res->renew_p50 / res->raw_p50;
    res->follower_ratio = res->follower_p50 / res->raw_p50;
    res->poll_take_p50 = bench_pct(take, (size_t)n, 50);
    res->poll_take_p99 = bench_pct(take, (size_t)n, 99);
    res->poll_read_p50 = bench_pct(read, (size_t)n, 50);
    res->poll_read_p99 = bench_pct(read, (size_t)n, 99);
    res->poll_take_ratio = res->poll_take_p50 / res->raw_p50;
    res->poll_read_ratio = res->poll_read_p50 / res->raw_p50;
    res->have_latency = n > 0;

    sqlease_lease_free(holder);
    sqlease_lease_free(follower);
    sqlease_db_close(db);
    free(raw);
    free(renew);
    free(follow);
    free(take);
    free(read);
    free(ps.take);
    free(ps.read);
    return 0;

fail:
    bench_msg("latency: %s (%s)", err.message, sqlease_strerror(rc));
    sqlease_lease_free(holder);
    sqlease_lease_free(follower);
    sqlease_db_close(db);
    free(raw);
    free(renew);
    free(follow);
    free(take);
    free(read);
    free(ps.take);
    free(ps.read);
    res->failed = 1;
    return -1;
}
