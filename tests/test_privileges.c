/*
 * test_privileges.c -- least privilege, on a real server: every lease
 * command (run, supervise, status, list, release) as a role that may
 * only SELECT and UPDATE its lease table, and migrate as that role,
 * which must fail naming the privilege it lacks; every call of the fire
 * ledger as that role with SELECT, INSERT, UPDATE and DELETE on the fire
 * table; the holder history those commands write with the same four on
 * the history table, and the leases held without them.
 *
 * The role comes from the server scripts (ci/postgres.sh, ci/mariadb.sh):
 * SQLEASE_TEST_LEASE_DSN connects as a role that may log in and nothing
 * more, SQLEASE_TEST_LEASE_ROLE names it as GRANT does.  The owner
 * (SQLEASE_TEST_DSN) migrates a table of the test's own (and a fire
 * table) and grants the role SELECT and UPDATE on it (SELECT, INSERT,
 * UPDATE and DELETE on the fire table) with the statements
 * docs/security.md shows
 * (read from the document by tests/docblocks.py, so the document's GRANT
 * is the one tested).  SQLite has no grants: without those variables the
 * program says so and registers no test.
 *
 * The tool is $SQLEASE_BIN, run as a child process; every process
 * started is waited for, or killed by its pid.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "classify.h"
#include "fire.h"
#include "internal.h"
#include "lease.h"
#include "platform.h"
#include "testutil.h"

#define MAX_ARGS 40

static const char *g_bin;
static const char *g_lease_dsn;   /* the role with only the grants given here */
static const char *g_role;        /* that role, as GRANT names it */
static const char *g_dialect;     /* SQLEASE_TEST_DIALECT: postgres or mysql */
static sqlease_db *g_owner;       /* the owner's connection */
static char g_table[64];
static char g_fire[64];           /* the fire table */
static char g_hist[64];           /* the history table */
static int g_seq;

typedef struct result {
    int code;
    char out[8192];
    char err[8192];
} result;

/* ---- processes ------------------------------------------------------ */

static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n = 0;

    if (f != NULL) {
        n = fread(buf, 1, cap - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
    unlink(path);
}

/* fork + exec sqlease as the limited role on the test's table, output to
 * files; returns the pid. */
static pid_t spawn(const char *out, const char *err, va_list ap)
{
    char *argv[MAX_ARGS];
    const char *a;
    int n = 0;
    pid_t pid;

    argv[n++] = (char *)g_bin;
    argv[n++] = "--dsn";
    argv[n++] = (char *)g_lease_dsn;
    argv[n++] = "--table";
    argv[n++] = g_table;
    argv[n++] = "--history-table";
    argv[n++] = g_hist;
    argv[n++] = "--name";
    argv[n++] = "lp_job";
    while ((a = va_arg(ap, const char *)) != NULL && n < MAX_ARGS - 1)
        argv[n++] = (char *)a;
    argv[n] = NULL;
    pid = fork();
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || o < 0 || e < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 ||
            chdir(tu_dir()) != 0)
            _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

/* Wait up to timeout_ms (then SIGKILL): the exit status, 128+N for a
 * signal, -1 on timeout. */
static int wait_pid(pid_t pid, int64_t timeout_ms)
{
    int64_t end = sqle_mono_ms() + timeout_ms;
    int st;

    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (r < 0 && errno != EINTR)
            return -1;
        if (sqle_mono_ms() >= end) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            return -1;
        }
        sqle_sleep_ms(5);
    }
}

/* Run sqlease as the limited role with the arguments given (NULL-ended). */
static void run(result *r, ...)
{
    char out[700], err[700];
    va_list ap;
    pid_t pid;

    snprintf(out, sizeof out, "%s/out.%d", tu_dir(), ++g_seq);
    snprintf(err, sizeof err, "%s/err.%d", tu_dir(), g_seq);
    va_start(ap, r);
    pid = spawn(out, err, ap);
    va_end(ap);
    r->code = pid > 0 ? wait_pid(pid, 60000) : -1;
    slurp(out, r->out, sizeof r->out);
    slurp(err, r->err, sizeof r->err);
}

/* The same in the background, output to files the caller reads later. */
static pid_t start(const char *out, const char *err, ...)
{
    va_list ap;
    pid_t pid;

    va_start(ap, err);
    pid = spawn(out, err, ap);
    va_end(ap);
    return pid;
}

#define ASSERT_RUN(r, want)                                                            \
    do {                                                                               \
        if ((r).code != (want))                                                        \
            fprintf(stderr, "\n  exit %d, wanted %d; stderr: %s\n", (r).code, (want),  \
                    (r).err);                                                          \
        CU_ASSERT_EQUAL((r).code, (want));                                             \
    } while (0)

#define ASSERT_HAS(text, needle)                                                       \
    do {                                                                               \
        if (strstr((text), (needle)) == NULL)                                          \
            fprintf(stderr, "\n  '%s' not in: %s\n", (needle), (text));                \
        CU_ASSERT_PTR_NOT_NULL(strstr((text), (needle)));                              \
    } while (0)

/* The JSON integer after "key":, or -1. */
static long long json_int(const char *json, const char *key)
{
    char pat[64];
    const char *p;

    snprintf(pat, sizeof pat, "\"%s\":", key);
    p = strstr(json, pat);
    return p != NULL ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

/* ---- the document's statements --------------------------------------- */

/* A block of docs/security.md, as tests/docblocks.py gives it. */
static int doc_block(const char *name, char *buf, size_t cap)
{
    const char *src = getenv("SQLEASE_SRCDIR");
    char cmd[1200];
    FILE *p;
    size_t n;

    snprintf(cmd, sizeof cmd, "python3 '%s/tests/docblocks.py' '%s'", src ? src : ".", name);
    p = popen(cmd, "r");
    if (p == NULL)
        return -1;
    n = fread(buf, 1, cap - 1, p);
    buf[n] = '\0';
    return pclose(p) == 0 && n > 0 ? 0 : -1;
}

/* Replace every `from` in s (in place, cap bytes) by `to`. */
static void replace_all(char *s, size_t cap, const char *from, const char *to)
{
    char out[4096];
    size_t k = 0, fl = strlen(from), tl = strlen(to);
    const char *p = s;

    while (*p != '\0' && k + tl + 1 < sizeof out) {
        if (strncmp(p, from, fl) == 0) {
            memcpy(out + k, to, tl);
            k += tl;
            p += fl;
        } else {
            out[k++] = *p++;
        }
    }
    out[k] = '\0';
    snprintf(s, cap, "%s", out);
}

/* Run the document's GRANT for this dialect, for the test's table and
 * role (its CREATE of the role is the server script's: skipped). */
static int grant_as_documented(void)
{
    char block[4096], *line, *save = NULL;
    int mysql = strcmp(g_dialect, "mysql") == 0;
    int granted = 0;

    if (doc_block(mysql ? "security-grant-mariadb" : "security-grant-postgres", block,
                  sizeof block) != 0)
        return -1;
    replace_all(block, sizeof block, "app.sys_job_lease", g_table);
    replace_all(block, sizeof block, "sys_job_lease", g_table);
    replace_all(block, sizeof block, "app.sys_job_fire", g_fire);
    replace_all(block, sizeof block, "sys_job_fire", g_fire);
    replace_all(block, sizeof block, "app.sys_job_hold", g_hist);
    replace_all(block, sizeof block, "sys_job_hold", g_hist);
    replace_all(block, sizeof block, mysql ? "'sqlease_lease'@'%'" : "sqlease_lease", g_role);
    for (line = strtok_r(block, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        size_t n = strlen(line);
        if (strncmp(line, "GRANT ", 6) != 0)
            continue;
        if (n > 0 && line[n - 1] == ';')
            line[n - 1] = '\0';
        if (tu_sql(g_owner, line, NULL) != SQLEASE_OK)
            return -1;
        granted++;
    }
    return granted == 3 ? 0 : -1;
}

/* ---- tests ---------------------------------------------------------- */

/* The holds the history lists, by how they ended. */
typedef struct hist_seen {
    int rows, released, forced;
} hist_seen;

static int on_hold(void *ud, const sqlease_hold_info *h)
{
    hist_seen *s = ud;
    s->rows++;
    s->released += strcmp(h->ended, "released") == 0;
    s->forced += strcmp(h->ended, "forced") == 0;
    return 0;
}

/* With SELECT and UPDATE only: status, list, run (with and without a
 * minimum hold), release --force and supervise all work, tokens grow. */
static void test_lease_commands_with_select_and_update(void)
{
    char out[700], err[700], text[8192];
    long long seed, token;
    pid_t sup;
    result r;

    run(&r, "status", "--json", NULL);
    ASSERT_RUN(r, 0);
    ASSERT_HAS(r.out, "\"held\":false");
    seed = json_int(r.out, "token");
    CU_ASSERT(seed > 0);
    run(&r, "list", "--json", NULL);
    ASSERT_RUN(r, 0);
    ASSERT_HAS(r.out, "\"name\":\"lp_job\"");
    run(&r, "run", "--no-wait", "--", "sh", "-c", "echo token=$SQLEASE_TOKEN", NULL);
    ASSERT_RUN(r, 0);
    token = strstr(r.out, "token=") ? strtoll(strstr(r.out, "token=") + 6, NULL, 10) : -1;
    CU_ASSERT_EQUAL(token, seed + 1);
    /* A minimum hold leaves the row held; release --force clears it. */
    run(&r, "--owner", "lp-cron", "run", "--no-wait", "--min-hold", "1m", "--", "true", NULL);
    ASSERT_RUN(r, 0);
    run(&r, "status", "--json", NULL);
    ASSERT_HAS(r.out, "\"owner\":\"lp-cron\",\"held\":true");
    run(&r, "release", "--force", NULL);
    ASSERT_RUN(r, 0);
    ASSERT_HAS(r.out, "held by lp-cron");
    /* supervise: holds, runs CMD, and releases on SIGTERM. */
    snprintf(out, sizeof out, "%s/sup.out", tu_dir());
    snprintf(err, sizeof err, "%s/sup.err", tu_dir());
    sup = start(out, err, "--owner", "lp-sup", "--ttl", "3s", "supervise", "--", "sleep", "60",
                NULL);
    CU_ASSERT_FATAL(sup > 0);
    {
        int64_t end = sqle_mono_ms() + 15000;
        int held = 0;
        while (!held && sqle_mono_ms() < end) {
            run(&r, "status", "--json", NULL);
            held = strstr(r.out, "\"owner\":\"lp-sup\",\"held\":true") != NULL;
            if (!held)
                sqle_sleep_ms(100);
        }
        CU_ASSERT(held);
    }
    kill(sup, SIGTERM);
    CU_ASSERT_EQUAL(wait_pid(sup, 20000), 0);
    slurp(err, text, sizeof text);
    unlink(out);
    run(&r, "status", "--json", NULL);
    ASSERT_HAS(r.out, "\"held\":false");
    CU_ASSERT(json_int(r.out, "token") > token);
    CU_ASSERT_PTR_NULL(strstr(text, "denied"));
    CU_ASSERT_PTR_NULL(strstr(text, "history"));
    /* The history those commands wrote as that role: each hold, and how
     * it ended. */
    {
        sqlease_error e;
        hist_seen h;
        memset(&h, 0, sizeof h);
        CU_ASSERT_EQUAL(sqlease_history_list(g_owner, g_hist, "lp_job", 0, on_hold, &h, &e),
                        SQLEASE_OK);
        /* Three holds, each released by its holder (the minimum hold's
         * too: its release came before the forced one, which then found
         * its end written). */
        CU_ASSERT_EQUAL(h.rows, 3);
        CU_ASSERT_EQUAL(h.released, 3);
        CU_ASSERT_EQUAL(h.forced, 0);
    }
}

/* Without any privilege on the history table the lease commands hold
 * leases as before, and say once why nothing is recorded. */
static void test_history_without_grants(void)
{
    char sql[256];
    result r;

    snprintf(sql, sizeof sql, "REVOKE SELECT, INSERT, UPDATE, DELETE ON %s FROM %s", g_hist,
             g_role);
    CU_ASSERT_FATAL(tu_sql(g_owner, sql, NULL) == SQLEASE_OK);
    run(&r, "run", "--no-wait", "--", "true", NULL);
    ASSERT_RUN(r, 0);
    ASSERT_HAS(r.err, "may not write it");
    CU_ASSERT_PTR_NULL(strstr(strstr(r.err, "may not write it") + 1, "may not write it"));
    run(&r, "history", NULL);
    ASSERT_RUN(r, 69);
    snprintf(sql, sizeof sql, "GRANT SELECT, INSERT, UPDATE, DELETE ON %s TO %s", g_hist,
             g_role);
    CU_ASSERT(tu_sql(g_owner, sql, NULL) == SQLEASE_OK);
    run(&r, "history", NULL);
    ASSERT_RUN(r, 0);
    ASSERT_HAS(r.out, "released");
}

/* migrate as that role: exit 69, naming the privilege migrate needs for
 * the step that failed (creating the table), whether the table exists or
 * not; on PostgreSQL, the line docs/security.md shows. */
static void test_migrate_names_the_missing_privilege(void)
{
    char want[1024];
    result r;

    run(&r, "migrate", NULL);
    ASSERT_RUN(r, 69);
    ASSERT_HAS(r.err, "creating table");
    ASSERT_HAS(r.err, "needs CREATE on the table's schema (database on MySQL/MariaDB), which the"
                      " connection lacks: run migrate as the table's owner, or grant it: ");
    if (strcmp(g_dialect, "postgres") == 0) {
        CU_ASSERT_FATAL(doc_block("security-migrate-denied", want, sizeof want) == 0);
        replace_all(want, sizeof want, "sys_job_lease", g_table);
        CU_ASSERT_STRING_EQUAL(r.err, want);
    }
    run(&r, "--table", "lp_never_made", "migrate", NULL);
    ASSERT_RUN(r, 69);
    ASSERT_HAS(r.err, "needs CREATE on the table's schema");
    /* The owner still migrates a second name: nothing was broken. */
    CU_ASSERT_EQUAL(tu_migrate(g_owner, g_table, "lp_second"), SQLEASE_OK);
}

/* Without UPDATE, a take fails with exit 69 and says what the lease
 * commands need; status (SELECT) still works. */
static void test_without_update(void)
{
    char sql[256];
    result r;

    snprintf(sql, sizeof sql, "REVOKE UPDATE ON %s FROM %s", g_table, g_role);
    CU_ASSERT_FATAL(tu_sql(g_owner, sql, NULL) == SQLEASE_OK);
    run(&r, "status", NULL);
    ASSERT_RUN(r, 0);
    run(&r, "run", "--no-wait", "--", "true", NULL);
    ASSERT_RUN(r, 69);
    ASSERT_HAS(r.err, "lease 'lp_job': acquire failed: ");
    ASSERT_HAS(r.err, "(the connection's role lacks a privilege: status and list need SELECT on"
                      " the lease table, run, supervise and release SELECT and UPDATE)");
    snprintf(sql, sizeof sql, "GRANT UPDATE ON %s TO %s", g_table, g_role);
    CU_ASSERT(tu_sql(g_owner, sql, NULL) == SQLEASE_OK);
}

/* The fire ledger as the limited role: its lease's connection. */
typedef struct fire_seen {
    int jobs, rows;
} fire_seen;

static int on_last(void *ud, const char *job, int64_t last)
{
    (void)job;
    (void)last;
    ((fire_seen *)ud)->jobs++;
    return 0;
}

static int on_fire(void *ud, const sqlease_fire_info *f)
{
    (void)f;
    ((fire_seen *)ud)->rows++;
    return 0;
}

/* Take the lease lp_fire with `l`; its token. */
static int64_t fire_hold(sqlease_lease *l)
{
    sqlease_lease_info info;
    sqlease_error err;
    int rc = sqlease_lease_acquire(l, &info, &err);

    if (rc != SQLEASE_OK)
        fprintf(stderr, "\n  acquire as the limited role: %s\n", err.message);
    CU_ASSERT_EQUAL_FATAL(rc, SQLEASE_OK);
    return info.token;
}

#define ASSERT_OK(call)                                                                \
    do {                                                                               \
        int rc_ = (call);                                                              \
        if (rc_ != SQLEASE_OK)                                                         \
            fprintf(stderr, "\n  %s: %s\n", #call, err.message);                       \
        CU_ASSERT_EQUAL(rc_, SQLEASE_OK);                                              \
    } while (0)

/* SELECT, INSERT, UPDATE and DELETE on the fire table and SELECT and
 * UPDATE on the lease table are all the ledger needs: every call works as
 * that role (the take of a fire too), and creating a fire table fails
 * naming CREATE.  Without DELETE, the prune is refused as a privilege. */
static void test_fire_ledger_with_its_grants(void)
{
    sqlease_db_options dbo;
    sqlease_options o;
    sqlease_db *d = NULL;
    sqlease_lease *l = NULL;
    sqlease_lease_info seen, info;
    sqlease_fire_info f;
    sqle_fire_ctx c;
    sqlease_error err;
    fire_seen s;
    char sql[256];
    int64_t t1, t2, now = 0, rows = -1;
    int taken = 0;

    sqlease_db_options_init(&dbo);
    dbo.conn = g_lease_dsn;
    dbo.log = tu_log_sink;
    dbo.log_level = SQLEASE_LOG_DEBUG;
    CU_ASSERT_EQUAL_FATAL(sqlease_db_open(&d, &dbo, &err), SQLEASE_OK);
    tu_options(&o, g_table, "lp_fire", "lp-fire", 30000, 10000, 20000, 2000);
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&l, d, &o, &err), SQLEASE_OK);
    c.db = d;
    c.lease_table = g_table;
    c.fire_table = g_fire;
    c.name = "lp_fire";
    c.owner = "lp-fire";
    c.host = "lp-host";
    t1 = fire_hold(l);
    CU_ASSERT_EQUAL_FATAL(sqlease_db_now_ms(d, &now, &err), SQLEASE_OK);
    ASSERT_OK(sqle_fire_claim(&c, t1, "j1", now - 50, 0, &f, &err));
    CU_ASSERT_EQUAL(sqle_fire_claim(&c, t1, "j1", now - 50, 0, &f, &err), SQLEASE_CLAIMED);
    ASSERT_OK(sqle_fire_end(&c, t1, "j1", now - 50, 1, "done", 0, NULL, 0, &err));
    ASSERT_OK(sqle_fire_record(&c, t1, "j2", now - 40, "skipped", "overlap", 0, NULL, &err));
    ASSERT_OK(sqle_fire_claim(&c, t1, "j3", now - 30, 0, NULL, &err));
    /* A new hold abandons the old one's run and reruns it. */
    ASSERT_OK(sqlease_lease_release(l, NULL, &err));
    t2 = fire_hold(l);
    ASSERT_OK(sqle_fire_abandon(&c, t2, &rows, 0, &err));
    CU_ASSERT_EQUAL(rows, 1);
    ASSERT_OK(sqle_fire_reclaim(&c, t2, "j3", now - 30, 1, 0, NULL, &err));
    ASSERT_OK(sqle_fire_read(&c, "j3", now - 30, &f, NULL, 0, &err));
    CU_ASSERT_EQUAL(f.attempt, 2);
    memset(&s, 0, sizeof s);
    ASSERT_OK(sqle_fire_last(&c, on_last, &s, 0, &err));
    CU_ASSERT_EQUAL(s.jobs, 3);
    ASSERT_OK(sqlease_fire_list(d, g_fire, "lp_fire", NULL, 0, on_fire, &s, &err));
    CU_ASSERT_EQUAL(s.rows, 3);
    /* Pruning keeps each job's latest row: two older ones to delete. */
    ASSERT_OK(sqle_fire_record(&c, t2, "j1", now - 60, "skipped", "overlap", 0, NULL, &err));
    ASSERT_OK(sqle_fire_record(&c, t2, "j2", now - 45, "skipped", "overlap", 0, NULL, &err));
    ASSERT_OK(sqle_fire_prune(&c, 0, now - 35, &rows, 0, &err));
    CU_ASSERT_EQUAL(rows, 2);
    /* run --schedule: the take of a fire, and its outcome row. */
    ASSERT_OK(sqlease_lease_release(l, NULL, &err));
    ASSERT_OK(sqlease_lease_status(l, &seen, &err));
    ASSERT_OK(sqle_lease_take_fire(l, &seen, now - 20, &info, &taken, &err));
    CU_ASSERT_EQUAL(taken, 1);
    ASSERT_OK(sqle_fire_done(&c, info.token, "cron", now - 20, "done", 0, 0, &err));
    ASSERT_OK(sqlease_lease_release(l, NULL, &err));
    /* Not the fire table's creator. */
    CU_ASSERT_EQUAL(sqlease_fire_migrate(d, "lp_fire_never_made", &err), SQLEASE_EDB);
    if (strstr(err.message, "creating fire table lp_fire_never_made needs CREATE") == NULL)
        fprintf(stderr, "\n  fire migrate as the limited role: %s\n", err.message);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "creating fire table lp_fire_never_made needs "
                                               "CREATE"));
    /* Without DELETE the prune is refused, as a privilege. */
    snprintf(sql, sizeof sql, "REVOKE DELETE ON %s FROM %s", g_fire, g_role);
    CU_ASSERT_FATAL(tu_sql(g_owner, sql, NULL) == SQLEASE_OK);
    CU_ASSERT_EQUAL(sqle_fire_prune(&c, 0, now, &rows, 0, &err), SQLEASE_EDB);
    CU_ASSERT_EQUAL(sqle_classify_error(&err, sqle_db_dialect(d), SQLEASE_AT_STATEMENT),
                    SQLEASE_FAIL_PRIVILEGE);
    snprintf(sql, sizeof sql, "GRANT DELETE ON %s TO %s", g_fire, g_role);
    CU_ASSERT(tu_sql(g_owner, sql, NULL) == SQLEASE_OK);
    sqlease_lease_free(l);
    sqlease_db_close(d);
}

static int suite_init(void)
{
    sqlease_error err;

    g_owner = tu_open();
    if (g_owner == NULL)
        return 1;
    snprintf(g_table, sizeof g_table, "%s", tu_table());
    snprintf(g_fire, sizeof g_fire, "%s", tu_table());
    snprintf(g_hist, sizeof g_hist, "%s", tu_table());
    if (tu_migrate(g_owner, g_table, "lp_job") != SQLEASE_OK ||
        tu_migrate(g_owner, g_table, "lp_fire") != SQLEASE_OK ||
        sqlease_fire_migrate(g_owner, g_fire, &err) != SQLEASE_OK ||
        sqlease_history_migrate(g_owner, g_hist, &err) != SQLEASE_OK)
        return 1;
    if (grant_as_documented() != 0) {
        fprintf(stderr, "test_privileges: the GRANT of docs/security.md failed\n");
        return 1;
    }
    return 0;
}

static int suite_cleanup(void)
{
    if (g_owner != NULL) {
        tu_drop(g_owner, g_fire);
        tu_drop(g_owner, g_hist);
        tu_drop(g_owner, g_table);
        sqlease_db_close(g_owner);
    }
    return 0;
}

static void add(void)
{
    CU_pSuite s;

    if (g_lease_dsn == NULL) {
        printf("test_privileges: no SQLEASE_TEST_LEASE_DSN (a server script sets it):"
               " nothing to run on this database\n");
        return;
    }
    s = CU_add_suite("least privilege", suite_init, suite_cleanup);
    CU_add_test(s, "run, supervise, status, list, release with SELECT and UPDATE only",
                test_lease_commands_with_select_and_update);
    CU_add_test(s, "migrate without CREATE names the privilege",
                test_migrate_names_the_missing_privilege);
    CU_add_test(s, "without UPDATE a take says what the lease commands need",
                test_without_update);
    CU_add_test(s, "the history without its grants: leases held, said once",
                test_history_without_grants);
    CU_add_test(s, "the fire ledger with SELECT, INSERT, UPDATE, DELETE on its table",
                test_fire_ledger_with_its_grants);
}

int main(void)
{
    int rc;

    g_bin = getenv("SQLEASE_BIN");
    g_lease_dsn = getenv("SQLEASE_TEST_LEASE_DSN");
    g_role = getenv("SQLEASE_TEST_LEASE_ROLE");
    g_dialect = getenv("SQLEASE_TEST_DIALECT");
    if (g_lease_dsn != NULL && (g_lease_dsn[0] == '\0' || getenv("SQLEASE_TEST_DSN") == NULL))
        g_lease_dsn = NULL;
    if (g_lease_dsn != NULL && (g_bin == NULL || g_role == NULL || g_dialect == NULL)) {
        fprintf(stderr, "test_privileges: set SQLEASE_BIN, SQLEASE_TEST_LEASE_ROLE and"
                        " SQLEASE_TEST_DIALECT with SQLEASE_TEST_LEASE_DSN\n");
        return 1;
    }
    unsetenv("SQLEASE_DSN");
    unsetenv("SQLEASE_DSN_FILE");
    unsetenv("SQLEASE_TOKEN");
    rc = tu_main(add);
    tu_cleanup();
    return rc;
}
