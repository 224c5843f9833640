/*
 * stmts.c -- statements per heartbeat/retry tick: a holder supervisor and
 * a follower supervisor on one lease, each on its own connection, with
 * short timings, counted by the library and, where the server can say,
 * by the server.
 *
 * Each connection is opened through the API and watched through the
 * test-only seam (src/seam.h): an observer counts the tick statements
 * (the holder's renew, the follower's read of the row), one per tick in
 * steady state, and notes when the last one was sent, so that the two
 * snapshots can be taken half-way between ticks and no statement
 * straddles them.  The server counters are read through the same
 * handles, on the connections the ticks use; those reads are counted by
 * sqlease_db_statements and subtracted (snap_statements), and not taken
 * for ticks.
 *
 * Server counters:
 *  - PostgreSQL: pg_stat_user_tables for the bench's own lease table,
 *    read on a third connection.  Every statement on the table scans it
 *    once (seq_scan + idx_scan), and in steady state only the holder's
 *    renews update a row (n_tup_upd), so holder = n_tup_upd and follower
 *    = scans - n_tup_upd (its reads).  A backend publishes its counters at most once
 *    a second (PostgreSQL 15 batches them), so each of the two bench
 *    connections runs SELECT pg_stat_force_next_flush() just before a
 *    snapshot: that backend then flushes before it answers.
 *  - MariaDB/MySQL: SHOW STATUS LIKE 'Com_update' / 'Com_select' on each
 *    bench connection itself (without GLOBAL it counts only that
 *    connection's statements).  What the SHOW statements add themselves
 *    is measured once beforehand and subtracted.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "internal.h"
#include "seam.h"

#define STMTS_TTL 2000
#define STMTS_HEARTBEAT 100
#define STMTS_DEADLINE 1000
#define STMTS_RETRY 100

/* What one handle's observer counts (it lives as long as the handle). */
typedef struct counting_shared {
    const char *watch_sql;      /* the follower's read (status statement) */
    const char *watch_renew;    /* the holder's renew statement's text */
    atomic_uint_least64_t watched;
    _Atomic double last_watched_us;
} counting_shared;

/* The observer, on the handle's statement thread: a tick is one read
 * (follower) or renew (holder) statement. */
static void count_tick(void *ud, const char *sql)
{
    counting_shared *c = ud;

    if ((c->watch_sql != NULL && strcmp(sql, c->watch_sql) == 0) ||
        (c->watch_renew != NULL && strcmp(sql, c->watch_renew) == 0)) {
        atomic_fetch_add(&c->watched, 1);
        atomic_store(&c->last_watched_us, bench_now_us());
    }
}

/* Open a handle through the API and watch its read and renew statements
 * of BENCH_TABLE (their texts known once the handle knows its dialect,
 * which the open's connect settles).  *counters is the caller's to free
 * after the handle is closed. */
static int open_counting(sqlease_db **db, counting_shared **counters, const bench_cfg *cfg,
                         sqlease_error *err)
{
    counting_shared *c;
    int rc;

    *counters = NULL;
    c = calloc(1, sizeof *c);
    if (c == NULL)
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    rc = bench_open(db, cfg, err);
    if (rc != SQLEASE_OK) {
        free(c);
        return rc;
    }
    c->watch_sql = sqle_db_lease_sql(*db, BENCH_TABLE, "status");
    c->watch_renew = sqle_db_lease_sql(*db, BENCH_TABLE, "renew");
    if (c->watch_sql == NULL || c->watch_renew == NULL) {
        sqlease_db_close(*db);
        *db = NULL;
        free(c);
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    sqle_db_observe(*db, count_tick, c);
    *counters = c;
    return SQLEASE_OK;
}

enum server_kind { SRV_NONE, SRV_PG, SRV_MY };

/* One snapshot of every counter. */
typedef struct snap {
    uint64_t lib_h, lib_f;      /* sqlease_state.statements */
    uint64_t db_h, db_f;        /* sqlease_db_statements */
    uint64_t ticks_h, ticks_f;  /* acquire statements */
    int server_ok;
    int64_t pg_upd, pg_scans;
    int64_t my_h, my_f;         /* Com_update + Com_select */
} snap;

/* Run one statement on the handle's connection, the one its lease
 * statements use (a handle has one worker, one connection at a time),
 * through the seam; up to two text columns of its first row. */
static int raw_exec(sqlease_db *db, const char *sql, char *c0, char *c1, size_t cap,
                    int *has_row, sqlease_error *err)
{
    char *cols[2];

    cols[0] = c0;
    cols[1] = c1;
    return sqle_db_query_text(db, sql, cols, c0 == NULL ? 0 : c1 == NULL ? 1 : 2, cap, has_row,
                              err);
}

static int my_counter(sqlease_db *p, const char *name, int64_t *v, sqlease_error *err)
{
    char sql[96], var[64], val[64];
    int has_row = 0;
    int rc;

    snprintf(sql, sizeof sql, "SHOW STATUS LIKE '%s'", name);
    rc = raw_exec(p, sql, var, val, sizeof val, &has_row, err);
    if (rc != SQLEASE_OK)
        return rc;
    if (!has_row || val[0] == '\0')
        return sqle_fail(err, SQLEASE_EDB, "%s: no value", sql);
    *v = strtoll(val, NULL, 10);
    return SQLEASE_OK;
}

/* Com_update + Com_select of the connection behind p. */
static int my_stmts(sqlease_db *p, int64_t *v, sqlease_error *err)
{
    int64_t u = 0, s = 0;
    int rc = my_counter(p, "Com_update", &u, err);
    if (rc == SQLEASE_OK)
        rc = my_counter(p, "Com_select", &s, err);
    *v = u + s;
    return rc;
}

static int pg_read(sqlease_db *reader, int64_t *upd, int64_t *scans, sqlease_error *err)
{
    char a[32], b[32];
    int has_row = 0;
    int rc;

    rc = raw_exec(reader,
                  "SELECT COALESCE(n_tup_upd, 0), COALESCE(seq_scan, 0) + COALESCE(idx_scan, 0) "
                  "FROM pg_stat_user_tables WHERE relid = to_regclass('" BENCH_TABLE "')",
                  a, b, sizeof a, &has_row, err);
    if (rc == SQLEASE_OK && !has_row)
        rc = sqle_fail(err, SQLEASE_EDB, "no pg_stat_user_tables row for " BENCH_TABLE);
    if (rc == SQLEASE_OK) {
        *upd = strtoll(a, NULL, 10);
        *scans = strtoll(b, NULL, 10);
    }
    return rc;
}

/* Statements one snapshot sends on each bench connection, which the
 * handle's own counter (sqlease_db_statements) includes. */
static uint64_t snap_statements(enum server_kind kind)
{
    return kind == SRV_PG ? 1 : kind == SRV_MY ? 2 : 0;
}

/*
 * The caller times the snapshot half-way between ticks, so no tick runs
 * between the server's counters and the library's.  The snapshot's own
 * statements go through the handles (on the connections the ticks use)
 * after the library counters are read, and are subtracted from the next
 * snapshot's difference.
 */
static void take_snap(snap *s, enum server_kind kind, sqlease_db *h, counting_shared *hp,
                      sqlease_supervisor *hs, sqlease_db *f, counting_shared *fp,
                      sqlease_supervisor *fs, sqlease_db *reader)
{
    sqlease_state st;
    sqlease_error err;
    int rc = SQLEASE_OK;

    memset(s, 0, sizeof *s);
    sqlease_supervisor_state(hs, &st);
    s->lib_h = st.statements;
    sqlease_supervisor_state(fs, &st);
    s->lib_f = st.statements;
    s->db_h = sqlease_db_statements(h);
    s->db_f = sqlease_db_statements(f);
    s->ticks_h = atomic_load(&hp->watched);
    s->ticks_f = atomic_load(&fp->watched);
    if (kind == SRV_PG) {
        rc = raw_exec(h, "SELECT pg_stat_force_next_flush()", NULL, NULL, 0, NULL, &err);
        if (rc == SQLEASE_OK)
            rc = raw_exec(f, "SELECT pg_stat_force_next_flush()", NULL, NULL, 0, NULL, &err);
        if (rc == SQLEASE_OK)
            rc = pg_read(reader, &s->pg_upd, &s->pg_scans, &err);
    } else if (kind == SRV_MY) {
        rc = my_stmts(h, &s->my_h, &err);
        if (rc == SQLEASE_OK)
            rc = my_stmts(f, &s->my_f, &err);
    }
    s->server_ok = kind != SRV_NONE && rc == SQLEASE_OK;
    if (kind != SRV_NONE && rc != SQLEASE_OK)
        bench_msg("server counters unavailable: %s", err.message);
}

/*
 * Sleep until a moment as far as possible from both supervisors' next
 * ticks.  Both tick every STMTS_HEARTBEAT (= STMTS_RETRY) ms; their
 * phases drift by the wake-up latency each tick, so they are read afresh
 * from the last acquire each one sent.
 */
static void sleep_to_quiet_phase(counting_shared *hp, counting_shared *fp)
{
    const double period = STMTS_HEARTBEAT * 1e3;
    double now = bench_now_us();
    double a = fmod(atomic_load(&hp->last_watched_us), period);
    double b = fmod(atomic_load(&fp->last_watched_us), period);
    double lo = a < b ? a : b, hi = a < b ? b : a;
    double target, t;

    if (hi - lo >= period - (hi - lo))
        target = lo + (hi - lo) / 2;
    else
        target = fmod(hi + (period - (hi - lo)) / 2, period);
    t = now - fmod(now, period) + target;
    while (t < now + 2e3)
        t += period;
    bench_sleep_ms((t - now) / 1e3);
}

/*
 * The window starts after the holder's take and the follower's first
 * miss, so the figures are the steady state the fleet runs in; both
 * snapshots are taken between ticks, which makes the counts exact.
 */
int bench_stmts(const bench_cfg *cfg, bench_results *res)
{
    sqlease_db *h = NULL, *f = NULL, *reader = NULL;
    counting_shared *hp = NULL, *fp = NULL;
    sqlease_supervisor *hs = NULL, *fs = NULL;
    bench_watch w;
    bench_member mh, mf;
    sqlease_options o;
    sqlease_error err;
    const char *names[] = { "bench-stmts" };
    enum server_kind kind = SRV_NONE;
    snap s0, s1;
    sqlease_state st;
    int rc;

    bench_watch_init(&w, names[0]);
    bench_member_init(&mh, &w, "holder");
    bench_member_init(&mf, &w, "follower");

    rc = open_counting(&h, &hp, cfg, &err);
    if (rc == SQLEASE_OK)
        rc = open_counting(&f, &fp, cfg, &err);
    if (rc == SQLEASE_OK)
        rc = sqlease_migrate(h, BENCH_TABLE, names, 1, &err);
    if (rc != SQLEASE_OK)
        goto fail;
    if (strcmp(sqlease_db_dialect(h), "postgres") == 0) {
        kind = SRV_PG;
        rc = bench_open(&reader, cfg, &err);
        if (rc != SQLEASE_OK)
            goto fail;
    } else if (strcmp(sqlease_db_dialect(h), "mysql") == 0) {
        kind = SRV_MY;
    }

    bench_options(&o, BENCH_TABLE, names[0], "bench-stmts-holder", STMTS_TTL, STMTS_HEARTBEAT,
                  STMTS_DEADLINE, STMTS_RETRY, &mh);
    rc = sqlease_supervisor_start(&hs, h, &o, &err);
    if (rc != SQLEASE_OK)
        goto fail;
    if (mh.starts != 1) {
        rc = sqle_fail(&err, SQLEASE_ESTATE, "the holder did not take the free lease");
        goto fail;
    }
    bench_options(&o, BENCH_TABLE, names[0], "bench-stmts-follower", STMTS_TTL,
                  STMTS_HEARTBEAT, STMTS_DEADLINE, STMTS_RETRY, &mf);
    rc = sqlease_supervisor_start(&fs, f, &o, &err);
    if (rc != SQLEASE_OK)
        goto fail;

    /* Past the holder's take and the follower's first read. */
    bench_sleep_ms(3.5 * STMTS_HEARTBEAT);
    {
        /* What the SHOW statements add to the connection's own counters. */
        int64_t a = 0, b = 0;
        int64_t self_h = 0, self_f = 0;
        if (kind == SRV_MY) {
            sleep_to_quiet_phase(hp, fp);
            if (my_stmts(h, &a, &err) == SQLEASE_OK && my_stmts(h, &b, &err) == SQLEASE_OK)
                self_h = b - a;
            if (my_stmts(f, &a, &err) == SQLEASE_OK && my_stmts(f, &b, &err) == SQLEASE_OK)
                self_f = b - a;
        }
        sleep_to_quiet_phase(hp, fp);
        take_snap(&s0, kind, h, hp, hs, f, fp, fs, reader);
        bench_sleep_ms(cfg->stmts_s * 1e3 - STMTS_HEARTBEAT);
        sleep_to_quiet_phase(hp, fp);
        take_snap(&s1, kind, h, hp, hs, f, fp, fs, reader);
        res->stmts_window_s = cfg->stmts_s;

        res->ticks_holder = s1.ticks_h - s0.ticks_h;
        res->ticks_follower = s1.ticks_f - s0.ticks_f;
        if (res->ticks_holder == 0 || res->ticks_follower == 0) {
            rc = sqle_fail(&err, SQLEASE_ESTATE, "no ticks were counted");
            goto fail;
        }
        res->stmts_holder = (double)(s1.lib_h - s0.lib_h) / (double)res->ticks_holder;
        res->stmts_follower = (double)(s1.lib_f - s0.lib_f) / (double)res->ticks_follower;
        res->db_stmts_holder = (double)(s1.db_h - s0.db_h - snap_statements(kind)) /
                               (double)res->ticks_holder;
        res->db_stmts_follower = (double)(s1.db_f - s0.db_f - snap_statements(kind)) /
                                 (double)res->ticks_follower;
        res->have_stmts = 1;
        if (s0.server_ok && s1.server_ok && kind == SRV_PG) {
            int64_t upd = s1.pg_upd - s0.pg_upd, scans = s1.pg_scans - s0.pg_scans;
            res->server_holder = (double)upd / (double)res->ticks_holder;
            res->server_follower = (double)(scans - upd) / (double)res->ticks_follower;
            res->have_server = 1;
            snprintf(res->server_source, sizeof res->server_source,
                     "pg_stat_user_tables: holder n_tup_upd, follower seq_scan+idx_scan-n_tup_upd "
                     "(flushed with pg_stat_force_next_flush)");
        } else if (s0.server_ok && s1.server_ok && kind == SRV_MY) {
            res->server_holder =
                (double)(s1.my_h - s0.my_h - self_h) / (double)res->ticks_holder;
            res->server_follower =
                (double)(s1.my_f - s0.my_f - self_f) / (double)res->ticks_follower;
            res->have_server = 1;
            snprintf(res->server_source, sizeof res->server_source,
                     "SHOW STATUS Com_update+Com_select per connection (the SHOWs' "
                     "own %lld/%lld subtracted)", (long long)self_h, (long long)self_f);
        }
    }

    /* Steady state means no renew failed and nobody lost anything. */
    sqlease_supervisor_state(hs, &st);
    res->holder_losses = st.losses;
    if (st.renew_failures != 0 || st.losses != 0)
        bench_msg("statements per tick: the holder had %llu renew failures and %llu losses "
                  "during the window; the figure includes them",
                  (unsigned long long)st.renew_failures, (unsigned long long)st.losses);
    /* Stop the follower first, so that it does not take the released lease. */
    sqlease_supervisor_free(fs);
    sqlease_supervisor_free(hs);
    sqlease_db_close(reader);
    sqlease_db_close(f);
    sqlease_db_close(h);
    free(hp); /* the observers' counters, once their handles are closed */
    free(fp);
    bench_member_destroy(&mh);
    bench_member_destroy(&mf);
    bench_watch_destroy(&w);
    return 0;

fail:
    bench_msg("statements per tick: %s (%s)", err.message, sqlease_strerror(rc));
    sqlease_supervisor_free(fs);
    sqlease_supervisor_free(hs);
    sqlease_db_close(reader);
    sqlease_db_close(f);
    sqlease_db_close(h);
    free(hp); /* the observers' counters, once their handles are closed */
    free(fp);
    bench_member_destroy(&mh);
    bench_member_destroy(&mf);
    bench_watch_destroy(&w);
    res->failed = 1;
    return -1;
}
