/*
 * testutil.c -- fixtures shared by the CUnit suites (see testutil.h).
 */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "odbc.h"
#include "platform.h"
#include "cli/os.h"
#include "testresult.h"
#include "testutil.h"

static char dir[512];
static char dsn[1024];
static char table[64];
static int table_seq;

static sqle_mutex log_lock;
static int log_lock_ready;
static char log_buf[65536];
static size_t log_len;

/* First called from the main thread (tu_open, tu_main) before any
 * library thread exists. */
static void log_init(void)
{
    if (!log_lock_ready) {
        sqle_mutex_init(&log_lock);
        log_lock_ready = 1;
    }
}

void tu_log_sink(void *userdata, int level, const char *line)
{
    size_t n = strlen(line);
    (void)userdata;
    log_init();
    if (getenv("SQLEASE_TEST_LOG") != NULL)
        fprintf(stderr, "%lld log %d: %s\n", (long long)sqle_mono_ms(), level, line);
    sqle_mutex_lock(&log_lock);
    if (log_len + n + 2 >= sizeof log_buf)
        log_len = 0; /* keep the newest lines */
    memcpy(log_buf + log_len, line, n);
    log_buf[log_len + n] = '\n';
    log_len += n + 1;
    log_buf[log_len] = '\0';
    sqle_mutex_unlock(&log_lock);
}

int tu_log_has(const char *needle)
{
    int found;
    log_init();
    sqle_mutex_lock(&log_lock);
    found = strstr(log_buf, needle) != NULL;
    sqle_mutex_unlock(&log_lock);
    return found;
}

static int log_has_cond(void *needle)
{
    return tu_log_has(needle);
}

int tu_await_log(const char *needle, int64_t timeout_ms)
{
    return tu_await(log_has_cond, (void *)needle, timeout_ms);
}

void tu_log_clear(void)
{
    log_init();
    sqle_mutex_lock(&log_lock);
    log_len = 0;
    log_buf[0] = '\0';
    sqle_mutex_unlock(&log_lock);
}

const char *tu_dir(void)
{
    if (dir[0] == '\0') {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/sqlease-test-XXXXXX", tmp != NULL && *tmp ? tmp : "/tmp");
        if (mkdtemp(dir) == NULL) {
            perror("mkdtemp");
            exit(2);
        }
    }
    return dir;
}

const char *tu_dsn(void)
{
    const char *env = getenv("SQLEASE_TEST_DSN");
    if (env != NULL && *env)
        return env;
    if (dsn[0] == '\0')
        snprintf(dsn, sizeof dsn, "Driver=SQLite3;Database=%s/test.db;Timeout=5000", tu_dir());
    return dsn;
}

const char *tu_table(void)
{
    snprintf(table, sizeof table, "tu_%ld_%d", (long)getpid(), ++table_seq);
    return table;
}

sqlease_db *tu_open(void)
{
    sqlease_db_options o;
    sqlease_error err;
    sqlease_db *db = NULL;
    int rc;

    log_init();
    sqlease_db_options_init(&o);
    o.conn = tu_dsn();
    o.log = tu_log_sink;
    o.log_level = SQLEASE_LOG_DEBUG;
    rc = sqlease_db_open(&db, &o, &err);
    if (rc != SQLEASE_OK) {
        fprintf(stderr, "cannot open %s: %s\n", tu_dsn(), err.message);
        CU_FAIL("tu_open");
        return NULL;
    }
    return db;
}

int tu_migrate(sqlease_db *db, const char *t, const char *name)
{
    sqlease_error err;
    const char *names[1];
    int rc;

    names[0] = name;
    rc = sqlease_migrate(db, t, names, name != NULL ? 1 : 0, &err);
    if (rc != SQLEASE_OK)
        fprintf(stderr, "migrate %s: %s\n", t, err.message);
    return rc;
}

int tu_sql(sqlease_db *db, const char *sql, int64_t *rows)
{
    sqlease_error err;
    int rc = sqle_db_exec(db, sql, NULL, 0, NULL, 0, NULL, rows, &err);
    if (rc != SQLEASE_OK)
        fprintf(stderr, "sql '%s': %s\n", sql, err.message);
    return rc;
}

void tu_drop(sqlease_db *db, const char *t)
{
    char sql[256];
    sqlease_error err;
    snprintf(sql, sizeof sql, "DROP TABLE %s", t);
    sqle_db_exec(db, sql, NULL, 0, NULL, 0, NULL, NULL, &err);
}

/* Each dialect's way to open a transaction through the library's
 * autocommit connection; the row lock is an UPDATE that changes nothing
 * (every dialect locks the rows an UPDATE matched, changed or not). */
int tu_lock_begin(sqlease_db *locker, const char *t, const char *name)
{
    const char *d = sqlease_db_dialect(locker);
    char sql[256];
    int rc;

    if (d != NULL && strcmp(d, "sqlite") == 0)
        return tu_sql(locker, "BEGIN EXCLUSIVE", NULL);
    rc = tu_sql(locker, d != NULL && strcmp(d, "mysql") == 0       ? "START TRANSACTION"
                        : d != NULL && strcmp(d, "sqlserver") == 0 ? "BEGIN TRANSACTION"
                                                                   : "BEGIN", NULL);
    if (rc != SQLEASE_OK)
        return rc;
    snprintf(sql, sizeof sql, "UPDATE %s SET version = version WHERE name = '%s'", t, name);
    rc = tu_sql(locker, sql, NULL);
    if (rc != SQLEASE_OK)
        (void)tu_sql(locker, "ROLLBACK", NULL);
    return rc;
}

int tu_lock_end(sqlease_db *locker)
{
    return tu_sql(locker, "ROLLBACK", NULL);
}

void tu_options(sqlease_options *o, const char *t, const char *name, const char *owner,
                int64_t ttl, int64_t heartbeat, int64_t deadline, int64_t retry)
{
    sqlease_options_init(o);
    o->table = t;
    o->name = name;
    o->owner = owner;
    o->ttl_ms = ttl;
    o->heartbeat_ms = heartbeat;
    o->renew_deadline_ms = deadline;
    o->retry_ms = retry;
    o->log = tu_log_sink;
    o->log_level = SQLEASE_LOG_DEBUG;
    /* The suites count statements and read logs as the lease alone makes
     * them; the holder history's statements are tests/test_history.c's,
     * which turns it on. */
    o->history = SQLEASE_HISTORY_OFF;
}

int tu_await(int (*cond)(void *), void *arg, int64_t timeout_ms)
{
    int64_t end = sqle_mono_ms() + timeout_ms;
    for (;;) {
        if (cond(arg))
            return 1;
        if (sqle_mono_ms() >= end)
            return 0;
        sqle_sleep_ms(5);
    }
}

/* ---- fault injection -------------------------------------------- */

/*
 * The fault injector is a port of its own around the real ODBC one.  The
 * handle clones its port for every worker it starts (a fresh connection
 * after an abandoned one), so the fault mode lives in one shared control
 * block that every clone points at, and that outlives them all: a clone
 * abandoned while hung may return long after the test closed its handle.
 */
typedef struct faulty_ctl {
    sqle_mutex m;
    sqle_cond cv;
    int mode;
    int64_t delay_ms;
    int hung;
    int once_taken; /* TU_FAULT_HANG_ONCE: the one exec that hangs has come */
    char needle[128];       /* "" when no statement is singled out */
    int exact;              /* the statement must be the needle, not contain it */
    int match_mode;
    int matched;
    int64_t matched_at;
    int refs;     /* the test's tu_faulty, plus one per port instance */
} faulty_ctl;

struct tu_faulty {
    faulty_ctl *ctl;
};

typedef struct faulty_port {
    faulty_ctl *ctl;
    void *inner; /* the real ODBC port instance */
} faulty_port;

static void ctl_unref(faulty_ctl *c)
{
    int last;

    sqle_mutex_lock(&c->m);
    last = --c->refs == 0;
    sqle_mutex_unlock(&c->m);
    if (last) {
        sqle_cond_destroy(&c->cv);
        sqle_mutex_destroy(&c->m);
        free(c);
    }
}

/* Whether the singled-out statements include `sql` (f->m held). */
static int singled_out(const faulty_ctl *f, const char *sql)
{
    if (f->needle[0] == '\0')
        return 0;
    return f->exact ? strcmp(sql, f->needle) == 0 : strstr(sql, f->needle) != NULL;
}

static int faulty_exec(void *self, const char *sql, const db_bind *binds, size_t nbinds,
                       db_out *out, size_t nout, int *has_row, int64_t *rows,
                       sqlease_error *err)
{
    faulty_port *p = self;
    faulty_ctl *f = p->ctl;
    int mode;
    int64_t delay;
    int rc;
    size_t i;

    sqle_mutex_lock(&f->m);
    if (singled_out(f, sql)) {
        f->matched++;
        f->matched_at = sqle_mono_ms();
        while (singled_out(f, sql) && f->match_mode == TU_FAULT_HANG) {
            f->hung++;
            sqle_cond_wait_until(&f->cv, &f->m, -1);
            f->hung--;
        }
        if (singled_out(f, sql)) {
            mode = f->match_mode;
            sqle_mutex_unlock(&f->m);
            if (mode == TU_FAULT_CONNECT)
                return sqle_err(err, SQLEASE_ECONNECT, "08S01", 0,
                                "injected: connection lost");
            return sqle_odbc_ops.exec(p->inner, sql, binds, nbinds, out, nout, has_row, rows, err);
        }
    }
    if (f->mode == TU_FAULT_HANG_ONCE && !f->once_taken) {
        f->once_taken = 1;
        f->hung++;
        while (f->mode == TU_FAULT_HANG_ONCE)
            sqle_cond_wait_until(&f->cv, &f->m, -1);
        f->hung--;
    }
    while (f->mode == TU_FAULT_HANG) {
        f->hung++;
        sqle_cond_wait_until(&f->cv, &f->m, -1);
        f->hung--;
    }
    mode = f->mode;
    delay = f->delay_ms;
    sqle_mutex_unlock(&f->m);

    if (mode == TU_FAULT_CONNECT)
        return sqle_err(err, SQLEASE_ECONNECT, "08S01", 0, "injected: connection lost");
    if (mode == TU_FAULT_DELAY)
        sqle_sleep_ms(delay);
    rc = sqle_odbc_ops.exec(p->inner, sql, binds, nbinds, out, nout, has_row, rows, err);
    if (rc == SQLEASE_OK && mode == TU_FAULT_ZERO_CLOCK)
        for (i = 0; i < nout; i++)
            if (out[i].type == DB_INT64 && out[i].i != NULL)
                *out[i].i = 0;
    return rc;
}

static int faulty_connect(void *self, sqlease_error *err)
{
    faulty_port *p = self;
    faulty_ctl *f = p->ctl;

    sqle_mutex_lock(&f->m);
    while (f->mode == TU_FAULT_HANG_CONNECT) {
        f->hung++;
        sqle_cond_wait_until(&f->cv, &f->m, -1);
        f->hung--;
    }
    sqle_mutex_unlock(&f->m);
    return sqle_odbc_ops.connect(p->inner, err);
}

/* An injected connection failure reads as a dropped connection. */
static int faulty_connected(void *self)
{
    faulty_port *p = self;
    int mode;

    sqle_mutex_lock(&p->ctl->m);
    mode = p->ctl->mode;
    sqle_mutex_unlock(&p->ctl->m);
    return mode != TU_FAULT_CONNECT && mode != TU_FAULT_HANG_CONNECT &&
           sqle_odbc_ops.connected(p->inner);
}

static const sqle_dialect *faulty_dialect(void *self)
{
    faulty_port *p = self;
    return sqle_odbc_ops.dialect(p->inner);
}

static void *faulty_clone(void *self, const sqle_dialect *d, sqlease_error *err)
{
    faulty_port *p = self;
    faulty_port *n = calloc(1, sizeof *n);

    if (n == NULL)
        return NULL;
    n->inner = sqle_odbc_ops.clone(p->inner, d, err);
    if (n->inner == NULL) {
        free(n);
        return NULL;
    }
    n->ctl = p->ctl;
    sqle_mutex_lock(&n->ctl->m);
    n->ctl->refs++;
    sqle_mutex_unlock(&n->ctl->m);
    return n;
}

static void faulty_close(void *self)
{
    faulty_port *p = self;
    sqle_odbc_ops.close(p->inner);
    ctl_unref(p->ctl);
    free(p);
}

/* A listing gets the injected connection failure and delay; a hang is
 * for single statements only. */
static int faulty_exec_rows(void *self, const char *sql, const db_bind *binds, size_t nbinds,
                            db_out *out, size_t nout, size_t max_rows, size_t *nrows,
                            sqlease_error *err)
{
    faulty_port *p = self;
    int mode;
    int64_t delay;

    sqle_mutex_lock(&p->ctl->m);
    mode = p->ctl->mode;
    delay = p->ctl->delay_ms;
    sqle_mutex_unlock(&p->ctl->m);
    if (mode == TU_FAULT_CONNECT)
        return sqle_err(err, SQLEASE_ECONNECT, "08S01", 0, "injected: connection lost");
    if (mode == TU_FAULT_DELAY)
        sqle_sleep_ms(delay);
    return sqle_odbc_ops.exec_rows(p->inner, sql, binds, nbinds, out, nout, max_rows, nrows, err);
}

static const db_ops faulty_ops = { faulty_exec, faulty_connect, faulty_connected,
                                   faulty_dialect, faulty_clone, faulty_close,
                                   faulty_exec_rows };

tu_faulty *tu_faulty_open(sqlease_db **db)
{
    return tu_faulty_open_qt(db, TU_FAULTY_QUERY_TIMEOUT_MS);
}

tu_faulty *tu_faulty_open_qt(sqlease_db **db, int64_t qt_ms)
{
    sqlease_db_options o;
    sqlease_error err;
    tu_faulty *f = calloc(1, sizeof *f);
    faulty_port *proto = calloc(1, sizeof *proto);
    faulty_ctl *c = calloc(1, sizeof *c);
    int rc;

    *db = NULL;
    if (f == NULL || proto == NULL || c == NULL) {
        free(f);
        free(proto);
        free(c);
        return NULL;
    }
    rc = sqle_odbc_new(&proto->inner, tu_dsn(), NULL, 5000, 5000, &err);
    if (rc != SQLEASE_OK) {
        fprintf(stderr, "cannot open %s: %s\n", tu_dsn(), err.message);
        free(f);
        free(proto);
        free(c);
        return NULL;
    }
    sqle_mutex_init(&c->m);
    sqle_cond_init(&c->cv);
    c->refs = 2; /* the test's handle and the prototype */
    c->matched_at = -1;
    proto->ctl = c;
    f->ctl = c;
    sqlease_db_options_init(&o);
    o.log = tu_log_sink;
    o.log_level = SQLEASE_LOG_DEBUG;
    o.query_timeout_ms = qt_ms;
    o.login_timeout_ms = qt_ms;
    if (sqle_db_wrap(db, &faulty_ops, proto, "faulty", &o, &err) != SQLEASE_OK) {
        fprintf(stderr, "cannot open %s behind the fault injector: %s\n", tu_dsn(), err.message);
        ctl_unref(c);
        free(f);
        return NULL;
    }
    return f;
}

void tu_fault_set(tu_faulty *f, int mode, int64_t delay_ms)
{
    sqle_mutex_lock(&f->ctl->m);
    f->ctl->mode = mode;
    f->ctl->delay_ms = delay_ms;
    f->ctl->once_taken = 0;
    sqle_cond_broadcast(&f->ctl->cv);
    sqle_mutex_unlock(&f->ctl->m);
}

static void fault_match(tu_faulty *f, const char *needle, int exact, int mode)
{
    faulty_ctl *c = f->ctl;

    sqle_mutex_lock(&c->m);
    snprintf(c->needle, sizeof c->needle, "%s", needle != NULL ? needle : "");
    c->exact = exact;
    c->match_mode = mode;
    c->matched = 0;
    c->matched_at = -1;
    sqle_cond_broadcast(&c->cv);
    sqle_mutex_unlock(&c->m);
}

void tu_fault_match(tu_faulty *f, const char *needle, int mode)
{
    fault_match(f, needle, 0, mode);
}

void tu_fault_match_exact(tu_faulty *f, const char *sql, int mode)
{
    fault_match(f, sql, 1, mode);
}

int tu_fault_matched(tu_faulty *f, int64_t *last_at)
{
    int n;
    sqle_mutex_lock(&f->ctl->m);
    n = f->ctl->matched;
    if (last_at != NULL)
        *last_at = f->ctl->matched_at;
    sqle_mutex_unlock(&f->ctl->m);
    return n;
}

int tu_fault_hung(tu_faulty *f)
{
    int n;
    sqle_mutex_lock(&f->ctl->m);
    n = f->ctl->hung;
    sqle_mutex_unlock(&f->ctl->m);
    return n;
}

void tu_faulty_free(tu_faulty *f)
{
    if (f == NULL)
        return;
    ctl_unref(f->ctl);
    free(f);
}

/* The tool's OS layer reads the process table (one parser for it). */
int tu_pid_gone(long pid)
{
    return !cli_sys_pid_alive(pid);
}

/* ---- runner --------------------------------------------------------- */

void tu_cleanup(void)
{
    char cmd[600];
    if (dir[0] == '\0')
        return;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

int tu_main(void (*add)(void))
{
    unsigned failures;

    log_init();
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    add();
    if (CU_get_error() != CUE_SUCCESS) {
        fprintf(stderr, "CUnit: %s\n", CU_get_error_msg());
        CU_cleanup_registry();
        return 2;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    /* A suite whose init or cleanup failed fails the program too. */
    failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed()
               + CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return failures != 0 ? 1 : 0;
}

/*
 * Every CUnit program reports its counts to the test runner in a result
 * file (tests/testresult.h), whether it runs through tu_main or has a
 * main() of its own: the test programs are linked with
 * -Wl,--wrap=CU_basic_run_tests (SConstruct), which sends their calls
 * here.  A test passed when it ran without failing; a failed test, and a
 * suite whose init or cleanup failed (its tests did not run), count as
 * failures.  Should a program run its registry more than once, the file
 * holds the sum.
 */
CU_ErrorCode __real_CU_basic_run_tests(void);
CU_ErrorCode __wrap_CU_basic_run_tests(void);

CU_ErrorCode __wrap_CU_basic_run_tests(void)
{
    static unsigned long passed, failed;
    CU_ErrorCode rc = __real_CU_basic_run_tests();
    const CU_RunSummary *s = CU_get_run_summary();

    passed += s->nTestsRun - s->nTestsFailed;
    failed += s->nTestsFailed + s->nSuitesFailed;
    (void)test_result_write("cunit", passed, failed);
    return rc;
}

/*
 * A skip is honest on a developer's machine that lacks a client; on CI,
 * which installs every package the suite names, it means the package list
 * is wrong, and a green run would hide that.
 */
void tu_skip(const char *why)
{
    const char *ci = getenv("CI");

    fprintf(stderr, "\n  skipped: %s\n", why);
    if (ci != NULL && strcmp(ci, "true") == 0)
        CU_assertImplementation(CU_FALSE, __LINE__, why, __FILE__, "", CU_FALSE);
}
