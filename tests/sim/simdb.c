/*
 * simdb.c -- the simulator's database: a second implementation of the
 * port (src/port.h, beside src/odbc.c) that runs the sqlite row's
 * real generated statements on one in-memory SQLite database through its
 * C API, shared by every simulated process, with the database's clock
 * read from the simulated one (a VFS whose current time is virtual time
 * plus a step the harness may change) and faults drawn from the seed.
 *
 * A statement runs atomically between two scheduling points, as a
 * serialisable database would commit it; what the faults add is around
 * it: latency before and after (a slow network, a row lock waited for),
 * a connection lost before it ran or after it committed (the caller
 * cannot tell which), a connect that fails.  The caller's deadline is the
 * library's business (db.c abandons the call), as with a real driver.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "port.h"
#include "dialect.h"
#include "internal.h"
#include "platform.h"
#include "simdb.h"
#include "sim.h"

#define EPOCH_MS INT64_C(1767225600000) /* 2026-01-01, so times look like times */

simdb_faults simdb_cfg;
simdb_counts simdb_count;
int64_t simdb_clock_step_ms;
void (*simdb_before_hook)(simdb_call *c);
void (*simdb_after_hook)(simdb_call *c);
void (*simdb_answer_hook)(simdb_call *c, int lost, int64_t at);
void (*simdb_unsent_hook)(simdb_call *c);
void (*simdb_driver_hook)(int family, int in_driver);
int64_t simdb_cut_until[SIMDB_MAX_PROCS];

static sqlite3 *g_db;
static sqlite3_vfs g_vfs;
static sqlite3_vfs *g_base;

/* What the instances of one handle share (refcounted: the prototype
 * and each clone hold one). */
typedef struct family {
    int id;
    int in_driver;       /* calls of its instances inside the database now */
    int refs;
} family;

typedef struct conn {
    int connected;
    const sqle_dialect *d;
    family *f;
    int64_t last_end;    /* virtual ms its last call ended; 0: none yet */
} conn;

static int g_families;

int64_t simdb_now_ms(void)
{
    return EPOCH_MS + sim_now() + simdb_clock_step_ms;
}

/* SQLite's 'now' comes from the VFS: the simulated database clock. */
static int vfs_now64(sqlite3_vfs *v, sqlite3_int64 *out)
{
    (void)v;
    *out = (sqlite3_int64)(simdb_now_ms() + INT64_C(210866760000000));
    return SQLITE_OK;
}

static int vfs_now(sqlite3_vfs *v, double *out)
{
    sqlite3_int64 t;
    vfs_now64(v, &t);
    *out = (double)t / 86400000.0;
    return SQLITE_OK;
}

int simdb_open(void)
{
    g_families = 0;
    memset(simdb_cut_until, 0, sizeof simdb_cut_until);
    if (g_db != NULL) {
        sqlite3_close(g_db);
        g_db = NULL;
    }
    if (g_base == NULL) {
        g_base = sqlite3_vfs_find(NULL);
        if (g_base == NULL)
            return -1;
        g_vfs = *g_base;
        g_vfs.zName = "sqlease-sim";
        g_vfs.xCurrentTime = vfs_now;
        g_vfs.xCurrentTimeInt64 = vfs_now64;
        if (sqlite3_vfs_register(&g_vfs, 0) != SQLITE_OK)
            return -1;
    }
    if (sqlite3_open_v2(":memory:", &g_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                        "sqlease-sim") != SQLITE_OK)
        return -1;
    return 0;
}

void simdb_close(void)
{
    if (g_db != NULL)
        sqlite3_close(g_db);
    g_db = NULL;
}

int64_t simdb_total_changes(void)
{
    return sqlite3_total_changes(g_db);
}

int simdb_sql(const char *sql)
{
    return sqlite3_exec(g_db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

int simdb_rows(const char *sql, int (*fn)(void *ud, int ncol, char **vals, char **names),
               void *ud)
{
    return sqlite3_exec(g_db, sql, fn, ud, NULL) == SQLITE_OK ? 0 : -1;
}

/* A latency drawn from the seed: mostly small, now and then long enough
 * to pass a query timeout. */
static void latency(void)
{
    uint64_t r = sim_below(1000);

    if (r < (uint64_t)simdb_cfg.slow_permille) {
        simdb_count.slow++;
        sqle_sleep_ms((int64_t)sim_below((uint64_t)simdb_cfg.slow_max_ms + 1));
    } else {
        sqle_sleep_ms((int64_t)sim_below((uint64_t)simdb_cfg.latency_max_ms + 1));
    }
}

static int lost(sqlease_error *err, conn *c, const char *when)
{
    simdb_count.lost++;
    c->connected = 0;
    return sqle_err(err, SQLEASE_ECONNECT, "08S01", 0, "simulated: connection lost %s", when);
}

static int do_connect(conn *c, sqlease_error *err)
{
    latency();
    if (sim_below(1000) < (uint64_t)simdb_cfg.connect_fail_permille) {
        simdb_count.connect_failed++;
        return sqle_err(err, SQLEASE_ECONNECT, "08001", 0, "simulated: connect refused");
    }
    c->connected = 1;
    return SQLEASE_OK;
}

/* Bind, step every row, copy the first `keep` rows' columns. */
static int run(const char *sql, const db_bind *binds, size_t nbinds, db_out *out, size_t nout,
               size_t keep, size_t *nrows, int64_t *rows, sqlease_error *err)
{
    sqlite3_stmt *st = NULL;
    size_t i, r = 0;
    int rc;

    if (sqlite3_prepare_v2(g_db, sql, -1, &st, NULL) != SQLITE_OK)
        return sqle_err(err, SQLEASE_EDB, "HY000", sqlite3_errcode(g_db), "%s (in: %.200s)",
                        sqlite3_errmsg(g_db), sql);
    for (i = 0; i < nbinds; i++) {
        if (binds[i].type == DB_INT64)
            sqlite3_bind_int64(st, (int)i + 1, binds[i].i);
        else if (binds[i].s == NULL)
            sqlite3_bind_null(st, (int)i + 1);
        else
            sqlite3_bind_text(st, (int)i + 1, binds[i].s, -1, SQLITE_TRANSIENT);
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (r < keep) {
            for (i = 0; i < nout && (int)i < sqlite3_column_count(st); i++) {
                db_out *o = &out[r * nout + i];
                o->is_null = sqlite3_column_type(st, (int)i) == SQLITE_NULL;
                if (o->type == DB_INT64) {
                    if (o->i != NULL)
                        *o->i = o->is_null ? 0 : sqlite3_column_int64(st, (int)i);
                } else if (o->s != NULL && o->cap > 0) {
                    const unsigned char *t = sqlite3_column_text(st, (int)i);
                    snprintf(o->s, o->cap, "%s", t != NULL ? (const char *)t : "");
                }
            }
        }
        r++;
    }
    if (rc != SQLITE_DONE) {
        sqle_err(err, SQLEASE_EDB, "HY000", rc, "%s", sqlite3_errmsg(g_db));
        sqlite3_finalize(st);
        return err->status;
    }
    if (nrows != NULL)
        *nrows = r < keep ? r : keep;
    if (rows != NULL)
        *rows = sqlite3_stmt_readonly(st) ? -1 : sqlite3_changes(g_db);
    sqlite3_finalize(st);
    simdb_count.statements++;
    return SQLEASE_OK;
}

typedef struct call {
    simdb_call c;
    const char *sql;
    const db_bind *binds;
    size_t nbinds;
    db_out *out;
    size_t nout, keep;
    size_t *nrows;
    int *has_row;
    int64_t *rows;
    sqlease_error *err;
} call;

/* A call of this process while it is cut off waits until the cut ends;
 * returns 1 if it did (the caller then loses its connection half the
 * time, as a TCP connection may not survive a partition). */
static int cut_wait(void)
{
    int p = sim_process();

    if (p < 0 || p >= SIMDB_MAX_PROCS || sim_now() >= simdb_cut_until[p])
        return 0;
    simdb_count.partitioned++;
    while (sim_now() < simdb_cut_until[p])
        sqle_sleep_ms(simdb_cut_until[p] - sim_now());
    return 1;
}

/* A call enters or leaves the database: the family's count, seen by the
 * driver hook on entry. */
static void enter(conn *c)
{
    c->f->in_driver++;
    if (simdb_driver_hook != NULL)
        simdb_driver_hook(c->f->id, c->f->in_driver);
}

static void leave(conn *c)
{
    c->f->in_driver--;
}

static int connect_in(conn *c, sqlease_error *err)
{
    int rc;

    enter(c);
    rc = do_connect(c, err);
    if (rc == SQLEASE_OK && cut_wait() && sim_below(2) == 0) {
        c->connected = 0;
        simdb_count.connect_failed++;
        rc = sqle_err(err, SQLEASE_ECONNECT, "08001", 0, "simulated: connect timed out");
    }
    leave(c);
    return rc;
}

/* The faults around one statement; `body` is the statement itself. */
static int around(conn *c, sqlease_error *err, int (*body)(void *), void *arg)
{
    call *k = arg;
    int rc, was_lost;
    int64_t total;

    k->c.sql = k->c.run_sql = k->sql;
    k->c.binds = k->binds;
    k->c.nbinds = k->nbinds;
    k->c.proc = sim_process();
    k->c.began = sim_now();
    k->c.idle_before = c->last_end > 0 && c->last_end < k->c.began;
    if (!c->connected && (rc = connect_in(c, err)) != SQLEASE_OK) {
        c->last_end = sim_now();
        if (simdb_unsent_hook != NULL)
            simdb_unsent_hook(&k->c);
        return rc;
    }
    enter(c);
    latency();
    if (cut_wait() && sim_below(2) == 0)
        c->connected = 0;
    if (!c->connected || sim_below(1000) < (uint64_t)simdb_cfg.lost_before_permille) {
        rc = lost(err, c, "before the statement");
        leave(c);
        c->last_end = sim_now();
        if (simdb_unsent_hook != NULL)
            simdb_unsent_hook(&k->c);
        return rc;
    }
    if (simdb_before_hook != NULL)
        simdb_before_hook(&k->c);
    k->sql = k->c.run_sql;
    total = sqlite3_total_changes(g_db);
    rc = body(arg);
    k->c.changed = sqlite3_total_changes(g_db) - total;
    k->c.rc = rc;
    if (k->c.run_sql != k->c.sql) {
        free((char *)k->c.run_sql);
        k->sql = k->c.run_sql = k->c.sql;
    }
    if (simdb_after_hook != NULL)
        simdb_after_hook(&k->c);
    latency();
    was_lost = (cut_wait() && sim_below(2) == 0) ||
               sim_below(1000) < (uint64_t)simdb_cfg.lost_after_permille;
    if (was_lost)
        rc = lost(err, c, "after the statement committed");
    if (simdb_answer_hook != NULL)
        simdb_answer_hook(&k->c, was_lost, sim_now());
    leave(c);
    c->last_end = sim_now();
    return rc;
}


static int body_exec(void *arg)
{
    call *k = arg;
    size_t n = 0;
    int rc = run(k->sql, k->binds, k->nbinds, k->out, k->nout, k->nout > 0 ? 1 : 0, &n,
                 k->rows, k->err);
    if (rc == SQLEASE_OK && k->has_row != NULL)
        *k->has_row = n > 0;
    return rc;
}

static int body_rows(void *arg)
{
    call *k = arg;
    return run(k->sql, k->binds, k->nbinds, k->out, k->nout, k->keep, k->nrows, NULL, k->err);
}

static int p_exec(void *self, const char *sql, const db_bind *binds, size_t nbinds, db_out *out,
                  size_t nout, int *has_row, int64_t *rows, sqlease_error *err)
{
    call k;

    memset(&k, 0, sizeof k);
    k.sql = sql;
    k.binds = binds;
    k.nbinds = nbinds;
    k.out = out;
    k.nout = nout;
    k.has_row = has_row;
    k.rows = rows;
    k.err = err;
    if (has_row != NULL)
        *has_row = 0;
    return around(self, err, body_exec, &k);
}

static int p_exec_rows(void *self, const char *sql, const db_bind *binds, size_t nbinds,
                       db_out *out, size_t nout, size_t max_rows, size_t *nrows,
                       sqlease_error *err)
{
    call k;

    memset(&k, 0, sizeof k);
    k.sql = sql;
    k.binds = binds;
    k.nbinds = nbinds;
    k.out = out;
    k.nout = nout;
    k.keep = max_rows;
    k.nrows = nrows;
    k.err = err;
    *nrows = 0;
    return around(self, err, body_rows, &k);
}

static int p_connect(void *self, sqlease_error *err)
{
    conn *c = self;
    c->connected = 0;
    return connect_in(c, err);
}

static int p_connected(void *self)
{
    return ((conn *)self)->connected;
}

static const sqle_dialect *p_dialect(void *self)
{
    return ((conn *)self)->d;
}

static void *p_clone(void *self, const sqle_dialect *d, sqlease_error *err)
{
    conn *c = calloc(1, sizeof *c);

    (void)err;
    if (c == NULL)
        return NULL;
    c->d = d != NULL ? d : ((conn *)self)->d;
    c->f = ((conn *)self)->f;
    c->f->refs++;
    return c;
}

static void p_close(void *self)
{
    conn *c = self;

    if (c == NULL)
        return;
    if (--c->f->refs == 0)
        free(c->f);
    free(c);
}

const db_ops simdb_ops = {
    p_exec, p_connect, p_connected, p_dialect, p_clone, p_close, p_exec_rows,
};

void *simdb_proto(void)
{
    conn *c = calloc(1, sizeof *c);

    if (c == NULL)
        return NULL;
    c->f = calloc(1, sizeof *c->f);
    if (c->f == NULL) {
        free(c);
        return NULL;
    }
    c->f->id = ++g_families;
    c->f->refs = 1;
    c->d = sqle_dialect_find("sqlite");
    return c;
}
