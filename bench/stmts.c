/*
 * stmts.c -- statements per heartbeat/retry tick: a holder supervisor and
 * a follower supervisor on one lease, each on its own connection, with
 * short timings, counted by the library and, where the server can say,
 * by the server.
 *
 * Each connection is opened through a thin counting wrapper around the
 * ODBC port (db.h allows interposing one): it counts the tick
 * statements (the holder's renew, the follower's read of the row), one
 * per tick in steady state, and notes when the
 * last one was sent, so that the two snapshots can be taken half-way
 * between ticks and no statement straddles them.  The server counters are
 * read with the connection's own lock held and through the wrapped port,
 * so the reads themselves are neither counted by the library nor raced
 * by a tick.
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
#include "db.h"
#include "internal.h"

#define STMTS_TTL 2000
#define STMTS_HEARTBEAT 100
#define STMTS_DEADLINE 1000
#define STMTS_RETRY 100

/* The counting wrapper: an ODBC port instance plus counters shared by
 * every clone the handle makes of it (one per worker connection). */
typedef struct counting_shared {
    char *watch_sql;            /* the follower's read (status statement) */
    char *watch_renew;          /* the holder's renew statement's text */
    atomic_uint_least64_t watched;
    _Atomic double last_watched_us;
    atomic_int refs;
} counting_shared;

typedef struct counting_port {
    counting_shared *c;
    void *inner;                /* sqle_odbc_ops instance */
} counting_port;

static int cp_exec(void *self, const char *sql, const db_bind *binds, size_t nbinds,
                   db_out *out, size_t nout, int *has_row, int64_t *rows, sqlease_error *err)
{
    counting_port *p = self;
    /* A tick is one read (follower) or renew (holder) statement. */
    if ((p->c->watch_sql != NULL && strcmp(sql, p->c->watch_sql) == 0) ||
        (p->c->watch_renew != NULL && strcmp(sql, p->c->watch_renew) == 0)) {
        atomic_fetch_add(&p->c->watched, 1);
        atomic_store(&p->c->last_watched_us, bench_now_us());
    }
    return sqle_odbc_ops.exec(p->inner, sql, binds, nbinds, out, nout, has_row, rows, err);
}

static int cp_connect(void *self, sqlease_error *err)
{
    return sqle_odbc_ops.connect(((counting_port *)self)->inner, err);
}

static int cp_connected(void *self)
{
    return sqle_odbc_ops.connected(((counting_port *)self)->inner);
}

static const sqle_dialect *cp_dialect(void *self)
{
    return sqle_odbc_ops.dialect(((counting_port *)self)->inner);
}

static void shared_unref(counting_shared *c)
{
    if (atomic_fetch_sub(&c->refs, 1) == 1) {
        free(c->watch_sql);
        free(c->watch_renew);
        free(c);
    }
}

static void cp_close(void *self)
{
    counting_port *p = self;
    sqle_odbc_ops.close(p->inner);
    shared_unref(p->c);
    free(p);
}

static void *cp_clone(void *self, const sqle_dialect *d, sqlease_error *err)
{
    counting_port *p = self;
    counting_port *n = calloc(1, sizeof *n);

    if (n == NULL)
        return NULL;
    n->inner = sqle_odbc_ops.clone(p->inner, d, err);
    if (n->inner == NULL) {
        free(n);
        return NULL;
    }
    n->c = p->c;
    atomic_fetch_add(&n->c->refs, 1);
    return n;
}

static int cp_exec_rows(void *self, const char *sql, const db_bind *binds, size_t nbinds,
                        db_out *out, size_t nout, size_t max_rows, size_t *nrows,
                        sqlease_error *err)
{
    counting_port *p = self;
    return sqle_odbc_ops.exec_rows(p->inner, sql, binds, nbinds, out, nout, max_rows, nrows, err);
}

static const db_ops counting_ops = { cp_exec, cp_connect, cp_connected, cp_dialect, cp_clone,
                                     cp_close, cp_exec_rows };

/* Open a connection wrapped in a counting port that watches the read and
 * renew statements of BENCH_TABLE.  The dialect is learnt from a
 * plain connection first, since the statements to watch depend on it. */
static int open_counting(sqlease_db **db, counting_shared **counters, const bench_cfg *cfg,
                         sqlease_error *err)
{
    sqlease_db_options o;
    counting_port *p;
    counting_shared *c;
    const sqle_dialect *d;
    void *probe = NULL;
    char *redacted;
    int rc;

    rc = sqle_odbc_open(&probe, cfg->conn, cfg->dialect, 5000, 5000, err);
    if (rc != SQLEASE_OK)
        return rc;
    d = sqle_odbc_ops.dialect(probe);
    p = calloc(1, sizeof *p);
    c = calloc(1, sizeof *c);
    if (p == NULL || c == NULL) {
        sqle_odbc_ops.close(probe);
        free(p);
        free(c);
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    atomic_init(&c->refs, 1);
    p->c = c;
    p->inner = sqle_odbc_ops.clone(probe, d, err);
    sqle_odbc_ops.close(probe);
    if (p->inner == NULL) {
        free(p);
        shared_unref(c);
        return SQLEASE_ENOMEM;
    }
    c->watch_sql = sqle_sql_for_table(d->status.sql, BENCH_TABLE);
    c->watch_renew = sqle_sql_for_table(d->renew.sql, BENCH_TABLE);
    redacted = sqle_redact(cfg->conn);
    sqlease_db_options_init(&o);
    o.log = bench_log_sink;
    o.log_level = cfg->verbose ? SQLEASE_LOG_DEBUG : SQLEASE_LOG_ERROR;
    if (c->watch_sql == NULL || c->watch_renew == NULL || redacted == NULL) {
        cp_close(p);
        rc = sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    } else {
        atomic_fetch_add(&c->refs, 1); /* ours, for reading the counters */
        rc = sqle_db_wrap(db, &counting_ops, p, redacted, &o, err);
        if (rc != SQLEASE_OK)
            shared_unref(c);
        else
            *counters = c;
    }
    free(redacted);
    return rc;
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
 * statements use (a handle has one worker, one connection at a time). */
static int raw_exec(sqlease_db *db, const char *sql, db_out *out, size_t nout, int *has_row,
                    sqlease_error *err)
{
    return sqle_db_exec(db, sql, NULL, 0, out, nout, has_row, NULL, err);
}

static int my_counter(sqlease_db *p, const char *name, int64_t *v, sqlease_error *err)
{
    char sql[96], var[64], val[32];
    db_out out[2];
    int has_row = 0;
    int rc;

    snprintf(sql, sizeof sql, "SHOW STATUS LIKE '%s'", name);
    memset(out, 0, sizeof out);
    out[0].type = DB_TEXT;
    out[0].s = var;
    out[0].cap = sizeof var;
    out[1].type = DB_TEXT;
    out[1].s = val;
    out[1].cap = sizeof val;
    rc = raw_exec(p, sql, out, 2, &has_row, err);
    if (rc != SQLEASE_OK)
        return rc;
    if (!has_row || out[1].is_null)
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
    db_out out[2];
    int has_row = 0;
    int rc;

    memset(out, 0, sizeof out);
    out[0].type = DB_INT64;
    out[0].i = upd;
    out[1].type = DB_INT64;
    out[1].i = scans;
    rc = sqle_db_exec(reader,
                      "SELECT COALESCE(n_tup_upd, 0), COALESCE(seq_scan, 0) + COALESCE(idx_scan, 0) "
                      "FROM pg_stat_user_tables WHERE relid = to_regclass('" BENCH_TABLE "')",
                      NULL, 0, out, 2, &has_row, NULL, err);
    if (rc == SQLEASE_OK && !has_row)
        rc = sqle_fail(err, SQLEASE_EDB, "no pg_stat_user_tables row for " BENCH_TABLE);
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
        rc = raw_exec(h, "SELECT pg_stat_force_next_flush()", NULL, 0, NULL, &err);
        if (rc == SQLEASE_OK)
            rc = raw_exec(f, "SELECT pg_stat_force_next_flush()", NULL, 0, NULL, &err);
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
    if (hp != NULL)
        shared_unref(hp);
    if (fp != NULL)
        shared_unref(fp);
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
    if (hp != NULL)
        shared_unref(hp);
    if (fp != NULL)
        shared_unref(fp);
    bench_member_destroy(&mh);
    bench_member_destroy(&mf);
    bench_watch_destroy(&w);
    res->failed = 1;
    return -1;
}
