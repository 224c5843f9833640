/*
 * test_cli_holder.c -- the tool's commands for what a lease's users build
 * on, black-box: `list`, the holder's data (`--data`, `status`),
 * SQLEASE_FENCE_SQL handed to each database's own command-line client
 * (sqlite3, psql, mariadb) by `run`, and `status --watch` following the
 * holder through a kill and a graceful hand-over.
 *
 * The binary is $SQLEASE_BIN, run as a child process with its output in
 * files of the test's scratch directory; the database is the one under
 * test ($SQLEASE_TEST_DSN, else an SQLite file in that directory), each
 * test on a table of its own.  Every process started is waited for, or
 * killed by its pid.
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

#include "internal.h"
#include "odbc.h"
#include "platform.h"
#include "testutil.h"

#define MAX_ARGS 48
#define MAX_BG 8

static sqlease_db *db;
static const char *g_bin;
static char g_table[64];
static pid_t g_bg[MAX_BG];
static int g_seq;

/* The lease timings every command here runs with: short, valid, and with
 * room on a loaded machine. */
#define TIMING "--ttl", "3s", "--heartbeat", "500ms", "--renew-deadline", "1500ms", \
               "--retry", "250ms"

/* ---- processes ------------------------------------------------------ */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    if (f == NULL)
        return strdup("");
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)(n > 0 ? n : 0) + 1);
    if (buf == NULL) {
        fclose(f);
        return NULL;
    }
    n = (long)fread(buf, 1, (size_t)(n > 0 ? n : 0), f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void path_in(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", tu_dir(), name);
}

/* fork + exec argv in the scratch directory, stdout to out_path, stderr
 * to err_path, with "K=V" entries of env added. */
static pid_t spawn(char *const *argv, const char *const *env, const char *out_path,
                   const char *err_path)
{
    pid_t pid = fork();

    if (pid != 0)
        return pid;
    {
        int in = open("/dev/null", O_RDONLY);
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int err = open(err_path, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
            dup2(err, 2) < 0 || chdir(tu_dir()) != 0)
            _exit(126);
        for (; env != NULL && *env != NULL; env++)
            putenv((char *)*env);
        execv(argv[0], argv);
        _exit(127);
    }
}

static int wait_pid(pid_t pid, int64_t timeout_ms)
{
    int64_t deadline = sqle_mono_ms() + timeout_ms;
    int st;

    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (r < 0 && errno != EINTR)
            return -1;
        if (sqle_mono_ms() >= deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        sqle_sleep_ms(5);
    }
}

/* argv: the binary, --dsn and --table of this test, then the arguments. */
static void build_argv(char **argv, va_list ap)
{
    int n = 0;
    const char *a;

    argv[n++] = (char *)g_bin;
    argv[n++] = "--dsn";
    argv[n++] = (char *)tu_dsn();
    argv[n++] = "--table";
    argv[n++] = g_table;
    while ((a = va_arg(ap, const char *)) != NULL && n < MAX_ARGS - 1)
        argv[n++] = (char *)a;
    argv[n] = NULL;
}

typedef struct result {
    int code;
    char *out, *err;
} result;

static void result_free(result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

/* Run sqlease to its end (at most 60 s) with extra environment entries. */
static void run_env(result *r, const char *const *env, ...)
{
    char *argv[MAX_ARGS];
    char out[1100], err[1100];
    va_list ap;
    pid_t pid;

    va_start(ap, env);
    build_argv(argv, ap);
    va_end(ap);
    snprintf(out, sizeof out, "%s/out.%d", tu_dir(), ++g_seq);
    snprintf(err, sizeof err, "%s/err.%d", tu_dir(), g_seq);
    pid = spawn(argv, env, out, err);
    r->code = pid > 0 ? wait_pid(pid, 60000) : -1;
    r->out = slurp(out);
    r->err = slurp(err);
    unlink(out);
    unlink(err);
}

/* Start sqlease in the background, stdout to out_path (stderr beside it,
 * with ".err"); the pid is remembered for the clean-up. */
static pid_t start_bg(const char *out_path, ...)
{
    char *argv[MAX_ARGS];
    char err[1200];
    va_list ap;
    pid_t pid;

    va_start(ap, out_path);
    build_argv(argv, ap);
    va_end(ap);
    snprintf(err, sizeof err, "%s.err", out_path);
    pid = spawn(argv, NULL, out_path, err);
    for (int i = 0; i < MAX_BG && pid > 0; i++)
        if (g_bg[i] == 0) {
            g_bg[i] = pid;
            break;
        }
    return pid;
}

static int stop_bg(pid_t pid, int sig)
{
    int code;

    if (pid <= 0)
        return -1;
    kill(pid, sig);
    code = wait_pid(pid, 30000);
    for (int i = 0; i < MAX_BG; i++)
        if (g_bg[i] == pid)
            g_bg[i] = 0;
    return code;
}

static void kill_all_bg(void)
{
    for (int i = 0; i < MAX_BG; i++)
        if (g_bg[i] > 0) {
            kill(g_bg[i], SIGKILL);
            waitpid(g_bg[i], NULL, 0);
            g_bg[i] = 0;
        }
}

/* Wait until the file contains `needle` at least `times` times. */
static int await_text(const char *path, const char *needle, int times, int64_t timeout_ms)
{
    int64_t deadline = sqle_mono_ms() + timeout_ms;

    for (;;) {
        char *s = slurp(path);
        int n = 0;
        const char *p = s;
        while (p != NULL && (p = strstr(p, needle)) != NULL) {
            n++;
            p += strlen(needle);
        }
        free(s);
        if (n >= times)
            return 1;
        if (sqle_mono_ms() >= deadline)
            return 0;
        sqle_sleep_ms(20);
    }
}

#define ASSERT_CONTAINS(hay, needle)                                                     \
    do {                                                                                 \
        int found_ = (hay) != NULL && strstr((hay), (needle)) != NULL;                   \
        if (!found_)                                                                     \
            fprintf(stderr, "\n  expected '%s' in: %s\n", (needle), (hay) ? (hay) : "(null)"); \
        CU_ASSERT(found_);                                                               \
    } while (0)

#define ASSERT_CODE(r, want)                                                             \
    do {                                                                                 \
        if ((r).code != (want))                                                          \
            fprintf(stderr, "\n  exit %d, want %d; stdout: %s stderr: %s\n", (r).code,    \
                    (want), (r).out, (r).err);                                           \
        CU_ASSERT_EQUAL((r).code, (want));                                               \
    } while (0)

static void new_table(void)
{
    snprintf(g_table, sizeof g_table, "%s", tu_table());
}

static void migrate_names(const char *const *names, size_t n)
{
    sqlease_error err;
    int rc = sqlease_migrate(db, g_table, names, n, &err);
    if (rc != SQLEASE_OK)
        fprintf(stderr, "migrate: %s\n", err.message);
    CU_ASSERT_EQUAL_FATAL(rc, SQLEASE_OK);
}

/* A lease handle on this test's table, holding the lease when `take`. */
static sqlease_lease *hold(const char *name, const char *owner, const char *data, int take)
{
    sqlease_options o;
    sqlease_lease *l = NULL;
    sqlease_error err;

    tu_options(&o, g_table, name, owner, 60000, 15000, 30000, 2000);
    o.data = data;
    CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&l, db, &o, &err), SQLEASE_OK);
    if (take)
        CU_ASSERT_EQUAL_FATAL(sqlease_lease_acquire(l, NULL, &err), SQLEASE_OK);
    return l;
}

static int64_t token_of(const char *name)
{
    sqlease_lease *l = hold(name, "probe", NULL, 0);
    sqlease_lease_info st;
    sqlease_error err;

    CU_ASSERT_EQUAL(sqlease_lease_status(l, &st, &err), SQLEASE_OK);
    sqlease_lease_free(l);
    return st.token;
}

/* ---- list ----------------------------------------------------------- */

static void test_list(void)
{
    static const char *const names[] = { "nightly", "backup", "report", "cleanup" };
    static const char *const status_keys[] = {
        "\"name\":", "\"table\":", "\"owner\":", "\"held\":", "\"token\":",
        "\"expires_in_ms\":", "\"data\":", "\"acquired_at_ms\":", "\"expires_at_ms\":",
        "\"db_now_ms\":", "\"local_now_ms\":", "\"skew_ms\":", "\"dialect\":"};
    sqlease_lease *b, *r;
    char want[512];
    result res;
    int64_t tb, tr, tc, tn;
    const char *p1, *p2, *p3, *p4;

    new_table();
    migrate_names(names, 4);
    tc = token_of("cleanup");
    tn = token_of("nightly");
    b = hold("backup", "host-b", "10.0.0.2:9000", 1);
    r = hold("report", "host-r", NULL, 1);
    tb = token_of("backup");
    tr = token_of("report");

    run_env(&res, NULL, "list", NULL);
    ASSERT_CODE(res, 0);
    ASSERT_CONTAINS(res.out, "NAME");
    ASSERT_CONTAINS(res.out, "OWNER");
    ASSERT_CONTAINS(res.out, "EXPIRES_IN_MS");
    ASSERT_CONTAINS(res.out, "DATA");
    /* One line per lease, in name order, each with its values. */
    p1 = strstr(res.out, "\nbackup ");
    p2 = strstr(res.out, "\ncleanup ");
    p3 = strstr(res.out, "\nnightly ");
    p4 = strstr(res.out, "\nreport ");
    CU_ASSERT_FATAL(p1 != NULL && p2 != NULL && p3 != NULL && p4 != NULL);
    CU_ASSERT(p1 < p2 && p2 < p3 && p3 < p4);
    {
        /* Five lines: the header and four leases. */
        int lines = 0;
        for (const char *p = res.out; *p; p++)
            lines += *p == '\n';
        CU_ASSERT_EQUAL(lines, 5);
    }
    snprintf(want, sizeof want, "%lld", (long long)tb);
    CU_ASSERT_PTR_NOT_NULL(strstr(p1, want));
    CU_ASSERT(strstr(p1, "host-b") != NULL && strstr(p1, "host-b") < p2);
    CU_ASSERT(strstr(p1, " yes ") != NULL && strstr(p1, " yes ") < p2);
    CU_ASSERT(strstr(p1, "10.0.0.2:9000\n") != NULL && strstr(p1, "10.0.0.2:9000\n") < p2);
    CU_ASSERT(strstr(p2, " no ") != NULL && strstr(p2, " no ") < p3);
    snprintf(want, sizeof want, "%lld", (long long)tc);
    CU_ASSERT(strstr(p2, want) != NULL && strstr(p2, want) < p3);
    snprintf(want, sizeof want, "%lld", (long long)tr);
    CU_ASSERT_PTR_NOT_NULL(strstr(p4, want));
    CU_ASSERT_PTR_NOT_NULL(strstr(p4, "host-r"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p4, " -\n"));
    result_free(&res);

    run_env(&res, NULL, "list", "--json", NULL);
    ASSERT_CODE(res, 0);
    CU_ASSERT_EQUAL(res.out[0], '[');
    CU_ASSERT_PTR_NOT_NULL(strstr(res.out, "}]\n"));
    snprintf(want, sizeof want, "{\"name\":\"backup\",\"table\":\"%s\",\"owner\":\"host-b\","
             "\"held\":true,\"token\":%lld,\"expires_in_ms\":", g_table, (long long)tb);
    ASSERT_CONTAINS(res.out, want);
    ASSERT_CONTAINS(res.out, "\"data\":\"10.0.0.2:9000\"");
    snprintf(want, sizeof want, "{\"name\":\"cleanup\",\"table\":\"%s\",\"owner\":\"\","
             "\"held\":false,\"token\":%lld,\"expires_in_ms\":0,\"data\":null,", g_table,
             (long long)tc);
    ASSERT_CONTAINS(res.out, want);
    snprintf(want, sizeof want, "{\"name\":\"nightly\",\"table\":\"%s\",\"owner\":\"\","
             "\"held\":false,\"token\":%lld,", g_table, (long long)tn);
    ASSERT_CONTAINS(res.out, want);
    snprintf(want, sizeof want, "{\"name\":\"report\",\"table\":\"%s\",\"owner\":\"host-r\","
             "\"held\":true,\"token\":%lld,", g_table, (long long)tr);
    ASSERT_CONTAINS(res.out, want);
    CU_ASSERT(strstr(res.out, "\"name\":\"backup\"") < strstr(res.out, "\"name\":\"cleanup\""));
    CU_ASSERT(strstr(res.out, "\"name\":\"nightly\"") < strstr(res.out, "\"name\":\"report\""));
    /* The same keys as status --json, in every object. */
    for (size_t k = 0; k < sizeof status_keys / sizeof status_keys[0]; k++) {
        int n = 0;
        for (const char *p = res.out; (p = strstr(p, status_keys[k])) != NULL; p++)
            n++;
        CU_ASSERT_EQUAL(n, 4);
    }
    result_free(&res);

    /* --by-owner: one line per owner with its count, then the free rows. */
    run_env(&res, NULL, "list", "--by-owner", NULL);
    ASSERT_CODE(res, 0);
    ASSERT_CONTAINS(res.out, "OWNER");
    ASSERT_CONTAINS(res.out, "\nhost-b                          1  no\n");
    ASSERT_CONTAINS(res.out, "\nhost-r                          1  no\n");
    ASSERT_CONTAINS(res.out, "\n-                               2\n");
    result_free(&res);
    run_env(&res, NULL, "list", "--by-owner", "--json", NULL);
    ASSERT_CODE(res, 0);
    ASSERT_CONTAINS(res.out, "[{\"owner\":\"host-b\",\"leases\":1,\"group_member\":false},\n"
                             "{\"owner\":\"host-r\",\"leases\":1,\"group_member\":false}]\n");
    result_free(&res);

    run_env(&res, NULL, "list", "--nope", NULL);
    ASSERT_CODE(res, 64);
    result_free(&res);
    sqlease_lease_free(b);
    sqlease_lease_free(r);
    tu_drop(db, g_table);

    /* No table: exit 69 with the migrate hint. */
    run_env(&res, NULL, "list", NULL);
    ASSERT_CODE(res, 69);
    ASSERT_CONTAINS(res.err, "sqlease migrate");
    result_free(&res);
}

/* ---- data ----------------------------------------------------------- */

static void test_data_flag_and_status(void)
{
    static const char *const names[] = { "job" };
    char script[4096], path[1024];
    result res;
    char *st;

    new_table();
    migrate_names(names, 1);
    path_in(path, sizeof path, "inside.json");
    /* CMD asks the tool itself what the row says while it runs. */
    snprintf(script, sizeof script, "'%s' --dsn '%s' --table %s --name job status --json > '%s'",
             g_bin, tu_dsn(), g_table, path);
    run_env(&res, NULL, "--name", "job", "--owner", "w1", TIMING, "run", "--data",
            "http://10.0.0.7:8080/ h\xc3\xb4te", "--", "sh", "-c", script, NULL);
    ASSERT_CODE(res, 0);
    result_free(&res);
    st = slurp(path);
    ASSERT_CONTAINS(st, "\"owner\":\"w1\",\"held\":true");
    ASSERT_CONTAINS(st, "\"data\":\"http://10.0.0.7:8080/ h\xc3\xb4te\"");
    free(st);
    /* Released: no data any more. */
    run_env(&res, NULL, "--name", "job", "status", "--json", NULL);
    ASSERT_CODE(res, 0);
    ASSERT_CONTAINS(res.out, "\"held\":false");
    ASSERT_CONTAINS(res.out, "\"data\":null");
    result_free(&res);
    run_env(&res, NULL, "--name", "job", "status", NULL);
    ASSERT_CODE(res, 0);
    ASSERT_CONTAINS(res.out, "\ndata:       -\n");
    result_free(&res);

    /* A holder's data in the human status. */
    {
        sqlease_lease *l = hold("job", "w2", "addr two", 1);
        run_env(&res, NULL, "--name", "job", "status", NULL);
        ASSERT_CODE(res, 0);
        ASSERT_CONTAINS(res.out, "owner:      w2\ndata:       addr two\n");
        result_free(&res);
        /* A follower that gives up says who holds it, and where. */
        run_env(&res, NULL, "--name", "job", TIMING, "run", "--no-wait", "--", "true", NULL);
        ASSERT_CODE(res, 75);
        ASSERT_CONTAINS(res.err, "is held by w2 (token ");
        ASSERT_CONTAINS(res.err, " ms, data addr two)");
        result_free(&res);
        sqlease_lease_free(l);
    }

    /* Bad data: a usage error naming it, before anything runs. */
    path_in(path, sizeof path, "never");
    snprintf(script, sizeof script, "touch '%s'", path);
    run_env(&res, NULL, "--name", "job", TIMING, "run", "--data", "two\nlines", "--", "sh", "-c",
            script, NULL);
    ASSERT_CODE(res, 64);
    ASSERT_CONTAINS(res.err, "--data: data contains a control character");
    result_free(&res);
    run_env(&res, NULL, "--name", "job", TIMING, "supervise", "--data", "", "--", "true", NULL);
    ASSERT_CODE(res, 64);
    ASSERT_CONTAINS(res.err, "--data: data is empty");
    result_free(&res);
    run_env(&res, NULL, "--name", "job", TIMING, "run", "--data", NULL);
    ASSERT_CODE(res, 64);
    result_free(&res);
    CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);
    tu_drop(db, g_table);
}

/* ---- the fence through each database's own client -------------------- */

typedef struct client {
    char sh[1024];          /* shell words that run one statement, given last */
    const char *env[8];     /* for sqlease (CMD inherits them) */
    char envbuf[6][300];
    const char *jobs_sql;   /* CREATE TABLE for the jobs table */
} client;

/* The DSN name in "DSN=name;..." (the servers ci/ starts), or "". */
static void dsn_name(char *buf, size_t cap)
{
    const char *d = tu_dsn(), *p = strstr(d, "DSN=");
    size_t n;

    buf[0] = '\0';
    if (p == NULL || (p != d && p[-1] != ';'))
        return;
    p += 4;
    n = strcspn(p, ";");
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
}

static int on_path(const char *prog)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", prog);
    return system(cmd) == 0;
}

/* How to run a statement with the dialect's own client, from the
 * connection details of the DSN under test (odbc.ini, as ci/ writes it).
 * Returns 0 (and says why) when there is none here. */
static int find_client(client *c)
{
    const char *d = sqlease_db_dialect(db);
    char dsn[128], host[128], port[32], dbname[128], user[128], pw[128];

    memset(c, 0, sizeof *c);
    if (strcmp(d, "sqlite") == 0) {
        const char *file = strstr(tu_dsn(), "Database=");
        size_t n;
        char path[512];
        if (!on_path("sqlite3")) {
            tu_skip("sqlite3 is not installed: client part of the test not run");
            return 0;
        }
        if (file == NULL)
            return 0;
        file += strlen("Database=");
        n = strcspn(file, ";");
        snprintf(path, sizeof path, "%.*s", (int)n, file);
        snprintf(c->sh, sizeof c->sh, "sqlite3 -bail -cmd '.timeout 5000' '%s'", path);
        return 1;
    }
    dsn_name(dsn, sizeof dsn);
    if (dsn[0] == '\0') {
        fprintf(stderr, "\n  the DSN under test is not a DSN name: client part skipped\n");
        return 0;
    }
    if (strcmp(d, "postgres") == 0) {
        if (!on_path("psql")) {
            tu_skip("psql is not installed: client part of the test not run");
            return 0;
        }
        if (!sqle_odbc_dsn_setting(dsn, "Servername", host, sizeof host) ||
            !sqle_odbc_dsn_setting(dsn, "Port", port, sizeof port) ||
            !sqle_odbc_dsn_setting(dsn, "Database", dbname, sizeof dbname) ||
            !sqle_odbc_dsn_setting(dsn, "Username", user, sizeof user) ||
            !sqle_odbc_dsn_setting(dsn, "Password", pw, sizeof pw))
            return 0;
        snprintf(c->envbuf[0], sizeof c->envbuf[0], "PGHOST=%s", host);
        snprintf(c->envbuf[1], sizeof c->envbuf[1], "PGPORT=%s", port);
        snprintf(c->envbuf[2], sizeof c->envbuf[2], "PGDATABASE=%s", dbname);
        snprintf(c->envbuf[3], sizeof c->envbuf[3], "PGUSER=%s", user);
        snprintf(c->envbuf[4], sizeof c->envbuf[4], "PGPASSWORD=%s", pw);
        for (int i = 0; i < 5; i++)
            c->env[i] = c->envbuf[i];
        snprintf(c->sh, sizeof c->sh, "psql -X -q -v ON_ERROR_STOP=1 -c");
        return 1;
    }
    if (strcmp(d, "mysql") == 0) {
        const char *prog = on_path("mariadb") ? "mariadb" : on_path("mysql") ? "mysql" : NULL;
        if (prog == NULL) {
            fprintf(stderr, "\n  neither mariadb nor mysql is installed: client part "
                            "skipped\n");
            return 0;
        }
        if (!sqle_odbc_dsn_setting(dsn, "Server", host, sizeof host) ||
            !sqle_odbc_dsn_setting(dsn, "Port", port, sizeof port) ||
            !sqle_odbc_dsn_setting(dsn, "Database", dbname, sizeof dbname) ||
            !sqle_odbc_dsn_setting(dsn, "User", user, sizeof user) ||
            !sqle_odbc_dsn_setting(dsn, "Password", pw, sizeof pw))
            return 0;
        snprintf(c->envbuf[0], sizeof c->envbuf[0], "MYSQL_PWD=%s", pw);
        c->env[0] = c->envbuf[0];
        snprintf(c->sh, sizeof c->sh, "%s --no-defaults -h '%s' -P '%s' -u '%s' -D '%s' -e", prog,
                 host, port, user, dbname);
        return 1;
    }
    fprintf(stderr, "\n  no command-line client known for dialect %s: skipped\n", d);
    return 0;
}

static int64_t jobs_value(const char *jobs)
{
    char sql[128];
    int64_t v = -1;
    db_out out;
    int has_row = 0;
    sqlease_error err;

    memset(&out, 0, sizeof out);
    out.type = DB_INT64;
    out.i = &v;
    snprintf(sql, sizeof sql, "SELECT v FROM %s WHERE id = 1", jobs);
    if (sqle_db_exec(db, sql, NULL, 0, &out, 1, &has_row, NULL, &err) != SQLEASE_OK || !has_row)
        return -1;
    return v;
}

/*
 * CMD writes through the client with the fence in its statement: the
 * write lands while the lease is held; the same statement, kept and run
 * again after `run` released the lease (and again after another holder
 * took it), changes nothing.
 */
static void test_fence_sql_through_client(void)
{
    static const char *const names[] = { "job" };
    char jobs[64], sql[256], script[4096], fence_path[1024];
    client c;
    result res;
    int64_t rows = -1;

    if (!find_client(&c))
        return;
    new_table();
    migrate_names(names, 1);
    snprintf(jobs, sizeof jobs, "%s", tu_table());
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (id INTEGER NOT NULL PRIMARY KEY, v BIGINT NOT NULL)", jobs);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, NULL), SQLEASE_OK);
    snprintf(sql, sizeof sql, "INSERT INTO %s (id, v) VALUES (1, 0)", jobs);
    CU_ASSERT_EQUAL_FATAL(tu_sql(db, sql, &rows), SQLEASE_OK);
    path_in(fence_path, sizeof fence_path, "fence.sql");

    /* Held: the fenced write lands; the fence is kept for later. */
    snprintf(script, sizeof script,
             "test -n \"$SQLEASE_FENCE_SQL\" || exit 3; "
             "printf '%%s' \"$SQLEASE_FENCE_SQL\" > '%s'; "
             "%s \"UPDATE %s SET v = v + 1 WHERE id = 1 AND $SQLEASE_FENCE_SQL\"",
             fence_path, c.sh, jobs);
    run_env(&res, c.env, "--name", "job", "--owner", "o'hara \"x\"", TIMING, "run", "--", "sh",
            "-c", script, NULL);
    ASSERT_CODE(res, 0);
    result_free(&res);
    CU_ASSERT_EQUAL(jobs_value(jobs), 1);

    /* Released by run: the same statement through the same client. */
    snprintf(script, sizeof script,
             "%s \"UPDATE %s SET v = v + 1 WHERE id = 1 AND $(cat '%s')\"", c.sh, jobs,
             fence_path);
    {
        char *argv[] = { "/bin/sh", "-c", script, NULL };
        char out[1100], err[1100];
        pid_t pid;
        path_in(out, sizeof out, "client.out");
        path_in(err, sizeof err, "client.err");
        pid = spawn(argv, c.env, out, err);
        CU_ASSERT_EQUAL(wait_pid(pid, 30000), 0);
        CU_ASSERT_EQUAL(jobs_value(jobs), 1);

        /* Another hold (a new token): its own fenced write lands, the old
         * fence still changes nothing. */
        {
            sqlease_lease *other = hold("job", "other-host", NULL, 1);
            pid = spawn(argv, c.env, out, err);
            CU_ASSERT_EQUAL(wait_pid(pid, 30000), 0);
            CU_ASSERT_EQUAL(jobs_value(jobs), 1);
            sqlease_lease_free(other);
        }
    }

    /* Every run has its own token: a second run's write lands. */
    snprintf(script, sizeof script,
             "%s \"UPDATE %s SET v = v + 10 WHERE id = 1 AND $SQLEASE_FENCE_SQL\"", c.sh, jobs);
    {
        sqlease_lease *admin = hold("job", "admin", NULL, 0);
        sqlease_error err;
        CU_ASSERT_EQUAL(sqlease_lease_release_force(admin, NULL, &err), SQLEASE_OK);
        sqlease_lease_free(admin);
    }
    run_env(&res, c.env, "--name", "job", TIMING, "run", "--", "sh", "-c", script, NULL);
    ASSERT_CODE(res, 0);
    result_free(&res);
    CU_ASSERT_EQUAL(jobs_value(jobs), 11);
    tu_drop(db, jobs);
    tu_drop(db, g_table);
}

/* SQLEASE_FENCE_SQL is what the library renders; where it cannot be
 * written safely (MySQL/MariaDB: a backslash in the owner id) CMD does
 * not get one, not even one its own parent had, and the log says why. */
static void test_fence_sql_unset_when_unsafe(void)
{
    static const char *const names[] = { "job" };
    static const char *const env[] = { "SQLEASE_FENCE_SQL=inherited", NULL };
    char script[4096], path[1024];
    result res;
    char *seen;
    int mysql = strcmp(sqlease_db_dialect(db), "mysql") == 0;

    new_table();
    migrate_names(names, 1);
    path_in(path, sizeof path, "fence.seen");
    snprintf(script, sizeof script, "printf '%%s' \"${SQLEASE_FENCE_SQL-unset}\" > '%s'", path);
    run_env(&res, env, "--name", "job", "--owner", "dom\\user", TIMING, "run", "--", "sh", "-c",
            script, NULL);
    ASSERT_CODE(res, 0);
    seen = slurp(path);
    if (mysql) {
        CU_ASSERT_STRING_EQUAL(seen, "unset");
        ASSERT_CONTAINS(res.err, "SQLEASE_FENCE_SQL is not set for CMD");
        ASSERT_CONTAINS(res.err, "backslash");
    } else {
        CU_ASSERT_EQUAL(strncmp(seen, "EXISTS (", 8), 0);
        CU_ASSERT_PTR_NULL(strstr(res.err, "SQLEASE_FENCE_SQL"));
    }
    free(seen);
    result_free(&res);
    tu_drop(db, g_table);
}

/* ---- status --watch --------------------------------------------------- */

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/*
 * A watcher follows the holder through a SIGKILL of a `supervise` holder
 * (its hold expires: "free (expired ...)"), the next holder, a graceful
 * stop (released: "free"), and a `run` that takes and releases: every
 * change once, in order, and exit 0 on SIGINT / SIGTERM.
 */
static void test_status_watch(void)
{
    static const char *const names[] = { "job" };
    char watch_out[1024], json_out[1024], sup_out[1024], want[512], script[3072];
    pid_t w, wj, a, b;
    result res;
    int64_t t0;
    char *out, *js;
    const char *p;

    new_table();
    migrate_names(names, 1);
    t0 = token_of("job");
    path_in(watch_out, sizeof watch_out, "watch.out");
    path_in(json_out, sizeof json_out, "watch.json");
    path_in(sup_out, sizeof sup_out, "sup.out");
    w = start_bg(watch_out, "--name", "job", "--retry", "100ms", "status", "--watch", NULL);
    wj = start_bg(json_out, "--name", "job", "--retry", "100ms", "status", "--watch", "--json",
                  NULL);
    CU_ASSERT_FATAL(await_text(watch_out, "skew:", 1, 15000));
    CU_ASSERT_FATAL(await_text(json_out, "\"held\":false", 1, 15000));

    /* A supervise holder, then SIGKILL: its row stays until it expires. */
    a = start_bg(sup_out, "--name", "job", "--owner", "holder-a", TIMING, "supervise", "--data",
                 "a:1", "--", "sleep", "300", NULL);
    snprintf(want, sizeof want, "holder holder-a token %lld expires in", (long long)(t0 + 1));
    CU_ASSERT_FATAL(await_text(watch_out, want, 1, 15000));
    /* The JSON watcher too, before the hold ends: each polls on its own
     * schedule, and one that looked just before the take and next after
     * the end would rightly never show this hold. */
    snprintf(want, sizeof want, "\"owner\":\"holder-a\",\"held\":true,\"token\":%lld,",
             (long long)(t0 + 1));
    CU_ASSERT_FATAL(await_text(json_out, want, 1, 15000));
    CU_ASSERT_EQUAL(stop_bg(a, SIGKILL), 128 + SIGKILL);
    snprintf(want, sizeof want, "free (expired; last holder holder-a) token %lld\n",
             (long long)(t0 + 1));
    CU_ASSERT_FATAL(await_text(watch_out, want, 1, 15000));
    CU_ASSERT_FATAL(await_text(json_out, "\"held\":false", 2, 15000));

    /* The next holder; then a graceful stop releases the row. */
    b = start_bg(sup_out, "--name", "job", "--owner", "holder-b", TIMING, "supervise", "--",
                 "sleep", "300", NULL);
    snprintf(want, sizeof want, "holder holder-b token %lld expires in", (long long)(t0 + 2));
    CU_ASSERT_FATAL(await_text(watch_out, want, 1, 15000));
    snprintf(want, sizeof want, "\"owner\":\"holder-b\",\"held\":true,\"token\":%lld,",
             (long long)(t0 + 2));
    CU_ASSERT_FATAL(await_text(json_out, want, 1, 15000));
    CU_ASSERT_EQUAL(stop_bg(b, SIGTERM), 0);
    snprintf(want, sizeof want, "free token %lld\n", (long long)(t0 + 2));
    CU_ASSERT_FATAL(await_text(watch_out, want, 1, 15000));
    /* Both watchers must have seen the row free before the next take, or
     * one polling just before the release and just after the take would
     * rightly never show this free spell: the initial read, the expiry,
     * this release. */
    CU_ASSERT_FATAL(await_text(json_out, "\"held\":false", 3, 15000));

    /* A run takes it and lets go once both watchers have shown it (CMD
     * waits for that, for up to 15 s, and fails if it never comes). */
    snprintf(script, sizeof script,
             "i=0; while [ $i -lt 300 ]; do"
             " grep -q 'holder holder-c token %lld' '%s' &&"
             " grep -q '\"owner\":\"holder-c\",\"held\":true,\"token\":%lld,' '%s' && exit 0;"
             " sleep 0.05; i=$((i+1)); done; exit 1",
             (long long)(t0 + 3), watch_out, (long long)(t0 + 3), json_out);
    run_env(&res, NULL, "--name", "job", "--owner", "holder-c", TIMING, "run", "--data", "c",
            "--", "sh", "-c", script, NULL);
    ASSERT_CODE(res, 0);
    result_free(&res);
    snprintf(want, sizeof want, "free token %lld\n", (long long)(t0 + 3));
    CU_ASSERT_FATAL(await_text(watch_out, want, 1, 15000));
    CU_ASSERT_FATAL(await_text(json_out, "\"held\":false", 4, 15000));
    sqle_sleep_ms(300); /* a few more polls: nothing new to say */

    CU_ASSERT_EQUAL(stop_bg(w, SIGINT), 0);
    CU_ASSERT_EQUAL(stop_bg(wj, SIGTERM), 0);

    /* The human watch: the status block, then exactly these, in order. */
    out = slurp(watch_out);
    p = strstr(out, "skew:");
    CU_ASSERT_FATAL(p != NULL);
    p = strchr(p, '\n') + 1;
    {
        char l1[160], l2[160], l3[160], l4[160], l5[160], l6[160];
        const char *q[6];
        snprintf(l1, sizeof l1, " holder holder-a token %lld expires in", (long long)(t0 + 1));
        snprintf(l2, sizeof l2, " free (expired; last holder holder-a) token %lld\n",
                 (long long)(t0 + 1));
        snprintf(l3, sizeof l3, " holder holder-b token %lld expires in", (long long)(t0 + 2));
        snprintf(l4, sizeof l4, " free token %lld\n", (long long)(t0 + 2));
        snprintf(l5, sizeof l5, " holder holder-c token %lld expires in", (long long)(t0 + 3));
        snprintf(l6, sizeof l6, " free token %lld\n", (long long)(t0 + 3));
        q[0] = strstr(p, l1);
        q[1] = strstr(p, l2);
        q[2] = strstr(p, l3);
        q[3] = strstr(p, l4);
        q[4] = strstr(p, l5);
        q[5] = strstr(p, l6);
        for (int i = 0; i < 6; i++)
            CU_ASSERT_PTR_NOT_NULL(q[i]);
        for (int i = 0; i + 1 < 6; i++)
            CU_ASSERT(q[i] != NULL && q[i + 1] != NULL && q[i] < q[i + 1]);
        CU_ASSERT_EQUAL(count_lines(p), 6);
        CU_ASSERT_PTR_NOT_NULL(strstr(p, "data a:1\n"));
        CU_ASSERT_PTR_NOT_NULL(strstr(p, "data -\n"));
        CU_ASSERT_PTR_NOT_NULL(strstr(p, "data c\n"));
    }
    if (count_lines(p) != 6)
        fprintf(stderr, "\n  watch printed:\n%s\n", out);
    free(out);

    /* The JSON watch: one object per line, the same changes. */
    js = slurp(json_out);
    CU_ASSERT_EQUAL(count_lines(js), 7);
    {
        char w1[200], w3[200], w5[200];
        snprintf(w1, sizeof w1, "\"owner\":\"holder-a\",\"held\":true,\"token\":%lld,",
                 (long long)(t0 + 1));
        snprintf(w3, sizeof w3, "\"owner\":\"holder-b\",\"held\":true,\"token\":%lld,",
                 (long long)(t0 + 2));
        snprintf(w5, sizeof w5, "\"owner\":\"holder-c\",\"held\":true,\"token\":%lld,",
                 (long long)(t0 + 3));
        ASSERT_CONTAINS(js, w1);
        ASSERT_CONTAINS(js, "\"owner\":\"holder-a\",\"held\":false");
        ASSERT_CONTAINS(js, w3);
        ASSERT_CONTAINS(js, w5);
        ASSERT_CONTAINS(js, "\"data\":\"a:1\"");
        CU_ASSERT(strstr(js, w1) < strstr(js, w3) && strstr(js, w3) < strstr(js, w5));
    }
    free(js);
    tu_drop(db, g_table);
}

/* ---- text from the table, shown escaped ------------------------------ */

/* 0 if s holds no control character but '\n', no C1 code point and no
 * byte that is not UTF-8, else -1 with where in why. */
static int shown_clean(const char *s, char *why, size_t cap)
{
    const unsigned char *u = (const unsigned char *)(s != NULL ? s : "");
    size_t i = 0, len, k;

    while (u[i] != '\0') {
        unsigned c = u[i];
        if (c == '\n' || (c >= 0x20 && c < 0x7f)) {
            i++;
            continue;
        }
        if (c < 0x20 || c == 0x7f) {
            snprintf(why, cap, "control byte 0x%02x at %zu", c, i);
            return -1;
        }
        len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        for (k = 1; k < len; k++)
            if ((u[i + k] & 0xc0) != 0x80)
                len = 0;
        if (len == 0) {
            snprintf(why, cap, "byte 0x%02x at %zu is not UTF-8", c, i);
            return -1;
        }
        if (c == 0xc2 && u[i + 1] < 0xa0) {
            snprintf(why, cap, "C1 code point U+%04X at %zu", u[i + 1], i);
            return -1;
        }
        i += len;
    }
    return 0;
}

#define ASSERT_SHOWN_CLEAN(what, s)                                                      \
    do {                                                                                 \
        char why_[128];                                                                  \
        int clean_ = shown_clean((s), why_, sizeof why_) == 0;                           \
        if (!clean_)                                                                     \
            fprintf(stderr, "\n  %s: %s\n", (what), why_);                               \
        CU_ASSERT(clean_);                                                               \
    } while (0)

/* Write the row `name` as another process (or anyone with UPDATE on the
 * table) could: any bytes in owner and data, held far into the future,
 * with the next token. */
static void write_row(const char *name, const char *owner, const char *data)
{
    char sql[256];
    db_bind b[3];
    sqlease_error err;
    int64_t rows = -1;

    memset(b, 0, sizeof b);
    b[0].type = DB_TEXT;
    b[0].s = owner;
    b[1].type = DB_TEXT;
    b[1].s = data;
    b[2].type = DB_TEXT;
    b[2].s = name;
    snprintf(sql, sizeof sql, "UPDATE %s SET owner = ?, data = ?, acquired_at_ms = 1,"
             " expires_at_ms = 4102444800000, token = token + 1, version = version + 1"
             " WHERE name = ?", g_table);
    CU_ASSERT_EQUAL_FATAL(sqle_db_exec(db, sql, b, 3, NULL, 0, NULL, &rows, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(rows, 1);
}

/*
 * An owner id, data and a lease name in the table with terminal escape
 * sequences (clear the screen, set the window's title, ring the bell), a
 * C1 code point, a newline and (SQLite: the servers refuse them) bytes
 * that are not UTF-8: every command that shows them (status, status
 * --watch, list, list --by-owner, run's message when it gives up, its
 * log, release) prints each escaped and never a raw control byte; the
 * JSON has them as JSON escapes.
 */
static void test_table_text_shown_escaped(void)
{
    static const char *const names[] = { "job" };
    const int sqlite = strcmp(sqlease_db_dialect(db), "sqlite") == 0;
    char owner[128], data[128], name[64], owner_shown[256], data_shown[256], want[1024];
    char watch_out[1024], watch_err[1100], sql[256];
    db_bind b[1];
    sqlease_error err;
    result res;
    pid_t w;
    char *out;

    new_table();
    migrate_names(names, 1);
    snprintf(owner, sizeof owner, "\x1b[2J\x1b]0;pwned\x07 c1\xc2\x85 nl\nx%s",
             sqlite ? "\xff" : "");
    snprintf(data, sizeof data, "\x1b[31mred\xc2\x9b\x7f tab\t%s", sqlite ? "\xc3" : "");
    snprintf(owner_shown, sizeof owner_shown,
             "'\\x1b[2J\\x1b]0;pwned\\x07 c1\\u0085 nl\\x0ax%s'", sqlite ? "\\xff" : "");
    snprintf(data_shown, sizeof data_shown, "\\x1b[31mred\\u009b\\x7f tab\\x09%s",
             sqlite ? "\\xc3" : "");

    /* status --watch, running when the row changes: its line for the new
     * holder. */
    path_in(watch_out, sizeof watch_out, "escaped.watch");
    w = start_bg(watch_out, "--name", "job", "--retry", "100ms", "status", "--watch", NULL);
    CU_ASSERT_FATAL(await_text(watch_out, "skew:", 1, 15000));
    write_row("job", owner, data);
    snprintf(want, sizeof want, " holder %s token ", owner_shown);
    CU_ASSERT(await_text(watch_out, want, 1, 15000));
    snprintf(want, sizeof want, " ms data %s\n", data_shown);
    CU_ASSERT(await_text(watch_out, want, 1, 15000));
    CU_ASSERT_EQUAL(stop_bg(w, SIGTERM), 0);
    out = slurp(watch_out);
    ASSERT_SHOWN_CLEAN("status --watch", out);
    CU_ASSERT_EQUAL(count_lines(out), 9); /* the status block, one change */
    free(out);
    snprintf(watch_err, sizeof watch_err, "%s.err", watch_out);
    out = slurp(watch_err);
    CU_ASSERT_STRING_EQUAL(out, "");
    free(out);

    /* A second row whose name is no lease name sqlease would write. */
    snprintf(name, sizeof name, "ev\x1b[2Jil\xc2\x85%s", sqlite ? "\xfe" : "");
    snprintf(sql, sizeof sql, "INSERT INTO %s (name, owner, acquired_at_ms, expires_at_ms,"
             " token, version) VALUES (?, '', 0, 0, 0, 0)", g_table);
    memset(b, 0, sizeof b);
    b[0].type = DB_TEXT;
    b[0].s = name;
    CU_ASSERT_EQUAL_FATAL(sqle_db_exec(db, sql, b, 1, NULL, 0, NULL, NULL, &err), SQLEASE_OK);

    run_env(&res, NULL, "--name", "job", "status", NULL);
    ASSERT_CODE(res, 0);
    snprintf(want, sizeof want, "\nowner:      %s\ndata:       %s\n", owner_shown, data_shown);
    ASSERT_CONTAINS(res.out, want);
    CU_ASSERT_EQUAL(count_lines(res.out), 8);
    ASSERT_SHOWN_CLEAN("status", res.out);
    result_free(&res);

    run_env(&res, NULL, "--name", "job", "status", "--json", NULL);
    ASSERT_CODE(res, 0);
    snprintf(want, sizeof want, "\"owner\":\"\\u001b[2J\\u001b]0;pwned\\u0007 c1\\u0085 nl\\nx%s\"",
             sqlite ? "\\ufffd" : "");
    ASSERT_CONTAINS(res.out, want);
    snprintf(want, sizeof want, "\"data\":\"\\u001b[31mred\\u009b\\u007f tab\\t%s\"",
             sqlite ? "\\ufffd" : "");
    ASSERT_CONTAINS(res.out, want);
    CU_ASSERT_EQUAL(count_lines(res.out), 1);
    ASSERT_SHOWN_CLEAN("status --json", res.out);
    result_free(&res);

    run_env(&res, NULL, "list", NULL);
    ASSERT_CODE(res, 0);
    snprintf(want, sizeof want, "\nev\\x1b[2Jil\\u0085%s  ", sqlite ? "\\xfe" : "");
    ASSERT_CONTAINS(res.out, want);
    {
        /* The job's line: its owner, and its data last. */
        const char *line = strstr(res.out, "\njob "), *end;
        CU_ASSERT_PTR_NOT_NULL_FATAL(line);
        end = strchr(line + 1, '\n');
        CU_ASSERT_PTR_NOT_NULL_FATAL(end);
        CU_ASSERT(strstr(line, owner_shown) != NULL && strstr(line, owner_shown) < end);
        snprintf(want, sizeof want, " %s\n", data_shown);
        CU_ASSERT(strstr(line, want) != NULL && strstr(line, want) + strlen(want) == end + 1);
    }
    CU_ASSERT_EQUAL(count_lines(res.out), 3);
    ASSERT_SHOWN_CLEAN("list", res.out);
    result_free(&res);

    run_env(&res, NULL, "list", "--json", NULL);
    ASSERT_CODE(res, 0);
    snprintf(want, sizeof want, "{\"name\":\"ev\\u001b[2Jil\\u0085%s\",",
             sqlite ? "\\ufffd" : "");
    ASSERT_CONTAINS(res.out, want);
    ASSERT_SHOWN_CLEAN("list --json", res.out);
    result_free(&res);

    run_env(&res, NULL, "list", "--by-owner", NULL);
    ASSERT_CODE(res, 0);
    snprintf(want, sizeof want, "\n%s ", owner_shown);
    ASSERT_CONTAINS(res.out, want);
    ASSERT_SHOWN_CLEAN("list --by-owner", res.out);
    result_free(&res);

    /* The loser's message, and its log with -v. */
    run_env(&res, NULL, "--name", "job", "-v", TIMING, "run", "--no-wait", "--", "true", NULL);
    ASSERT_CODE(res, 75);
    snprintf(want, sizeof want, "sqlease: lease 'job' is held by %s (token ", owner_shown);
    ASSERT_CONTAINS(res.err, want);
    snprintf(want, sizeof want, " ms, data %s)\n", data_shown);
    ASSERT_CONTAINS(res.err, want);
    ASSERT_SHOWN_CLEAN("run --no-wait, stderr", res.err);
    ASSERT_SHOWN_CLEAN("run --no-wait, stdout", res.out);
    result_free(&res);

    run_env(&res, NULL, "--name", "job", "release", "--force", NULL);
    ASSERT_CODE(res, 0);
    snprintf(want, sizeof want, "released lease 'job' held by %s (token ", owner_shown);
    ASSERT_CONTAINS(res.out, want);
    ASSERT_SHOWN_CLEAN("release --force", res.out);
    result_free(&res);
    tu_drop(db, g_table);
}

static void add(void)
{
    CU_pSuite s = CU_add_suite("cli: list, data, fence, watch", NULL, NULL);
    CU_add_test(s, "list [--json]: every lease, held and free, in order", test_list);
    CU_add_test(s, "--data in the row; status shows it", test_data_flag_and_status);
    CU_add_test(s, "SQLEASE_FENCE_SQL through the database's own client",
                test_fence_sql_through_client);
    CU_add_test(s, "SQLEASE_FENCE_SQL unset when it cannot be written safely",
                test_fence_sql_unset_when_unsafe);
    CU_add_test(s, "status --watch follows a kill and a graceful hand-over", test_status_watch);
    CU_add_test(s, "control characters from the table are shown escaped",
                test_table_text_shown_escaped);
}

int main(void)
{
    static const char *const vars[] = {"SQLEASE_DSN", "SQLEASE_TABLE", "SQLEASE_NAME",
                                       "SQLEASE_TTL", "SQLEASE_HEARTBEAT",
                                       "SQLEASE_RENEW_DEADLINE", "SQLEASE_RETRY",
                                       "SQLEASE_OWNER", "SQLEASE_TOKEN", "SQLEASE_FENCE_SQL"};
    int rc;

    g_bin = getenv("SQLEASE_BIN");
    if (g_bin == NULL || g_bin[0] == '\0' || access(g_bin, X_OK) != 0) {
        fprintf(stderr, "test_cli_holder: set SQLEASE_BIN to the sqlease binary to test\n");
        return 1;
    }
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    signal(SIGPIPE, SIG_IGN);
    db = tu_open();
    if (db == NULL)
        return 2;
    rc = tu_main(add);
    kill_all_bg();
    sqlease_db_close(db);
    tu_cleanup();
    return rc;
}
