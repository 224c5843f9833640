/*
 * test_cli.c -- black-box tests of the `sqlease` tool: the real binary
 * ($SQLEASE_BIN) run as a child process, its stdout and stderr captured
 * to files, in a fresh temporary directory.
 *
 * The database is an SQLite file in that directory, or $SQLEASE_TEST_DSN
 * when set; every test uses its own table (cli_t_<pid>_<n>) so runs never
 * collide, and tables made on a shared server are dropped at the end.
 * Every process a test starts is waited for or killed by its pid.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "sqlease.h"
#include "dialect.h"
#include "platform.h"
#include "testutil.h"

#define RUN_TIMEOUT_MS 60000
#define MAX_ARGS 64
#define MAX_BG 8
#define MAX_TABLES 64

static const char *g_bin;           /* $SQLEASE_BIN */
static const char *g_ext_dsn;       /* $SQLEASE_TEST_DSN, or NULL */
static char g_dir[1024];            /* this run's temporary directory */
static char g_dsn[1200];            /* the DSN under test */
static char g_table[64];            /* the current test's table */
static char g_tables[MAX_TABLES][64];
static int g_ntables;
static int g_seq;                   /* for unique file and table names */
static pid_t g_bg[MAX_BG];          /* background processes still running */
static void (*g_pre_exec)(void);    /* run in the child just before exec */

typedef struct result {
    int code;      /* exit status, 128+N for signal N, -1 if not run */
    char *out;     /* captured stdout (malloc'd) */
    char *err;     /* captured stderr (malloc'd) */
    int64_t ms;    /* how long it ran */
} result;

/* ---- helpers ------------------------------------------------------- */

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

static void result_free(result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

/* A fresh table name for the current test (remembered for clean-up). */
static void new_table(void)
{
    snprintf(g_table, sizeof g_table, "cli_t_%ld_%d", (long)getpid(), ++g_seq);
    if (g_ntables < MAX_TABLES)
        snprintf(g_tables[g_ntables++], sizeof g_tables[0], "%s", g_table);
}

/* fork + exec the binary in the temporary directory with stdout and
 * stderr going to the given files and "K=V" strings from env added to
 * its environment.  Returns the pid, or -1. */
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
            dup2(err, 2) < 0 || chdir(g_dir) != 0)
            _exit(126);
        for (; env != NULL && *env != NULL; env++)
            putenv((char *)*env);
        if (g_pre_exec != NULL)
            g_pre_exec();
        execv(argv[0], argv);
        _exit(127);
    }
}

/* Wait for pid up to timeout_ms; SIGKILL it if it is still running then.
 * Returns its status (128+N for a signal), or -1 on timeout. */
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

/* Build argv: the binary, optionally --dsn/--table of this test, then the
 * NULL-terminated list. */
static int build_argv(char **argv, int with_db, va_list ap)
{
    int n = 0;
    const char *a;

    argv[n++] = (char *)g_bin;
    if (with_db) {
        argv[n++] = "--dsn";
        argv[n++] = g_dsn;
        argv[n++] = "--table";
        argv[n++] = g_table;
    }
    while ((a = va_arg(ap, const char *)) != NULL && n < MAX_ARGS - 1)
        argv[n++] = (char *)a;
    argv[n] = NULL;
    return n;
}

static void run_argv(result *r, char *const *argv, const char *const *env)
{
    char out[1100], err[1100];
    int64_t t0 = sqle_mono_ms();
    pid_t pid;

    snprintf(out, sizeof out, "%s/out.%d", g_dir, ++g_seq);
    snprintf(err, sizeof err, "%s/err.%d", g_dir, g_seq);
    pid = spawn(argv, env, out, err);
    r->code = pid > 0 ? wait_pid(pid, RUN_TIMEOUT_MS) : -1;
    r->ms = sqle_mono_ms() - t0;
    r->out = slurp(out);
    r->err = slurp(err);
    unlink(out);
    unlink(err);
}

/* Run sqlease with the given arguments (no database flags added). */
static void run_raw(result *r, ...)
{
    char *argv[MAX_ARGS];
    va_list ap;

    va_start(ap, r);
    build_argv(argv, 0, ap);
    va_end(ap);
    run_argv(r, argv, NULL);
}

/* Run sqlease against the test's database and table. */
static void run_db(result *r, ...)
{
    char *argv[MAX_ARGS];
    va_list ap;

    va_start(ap, r);
    build_argv(argv, 1, ap);
    va_end(ap);
    run_argv(r, argv, NULL);
}

/* The same with extra environment entries ("K=V", NULL-terminated). */
static void run_db_env(result *r, const char *const *env, ...)
{
    char *argv[MAX_ARGS];
    va_list ap;

    va_start(ap, env);
    build_argv(argv, 1, ap);
    va_end(ap);
    run_argv(r, argv, env);
}

/* Start argv in the background, output to log_path, with env entries
 * added.  Returns the pid (remembered for the clean-up). */
static pid_t start_bg_argv(const char *log_path, char *const *argv, const char *const *env)
{
    pid_t pid = spawn(argv, env, log_path, log_path);

    for (int i = 0; i < MAX_BG && pid > 0; i++)
        if (g_bg[i] == 0) {
            g_bg[i] = pid;
            break;
        }
    return pid;
}

/* Start sqlease in the background against the test's table, output to
 * log_path.  Returns the pid (remembered for the clean-up). */
static pid_t start_bg(const char *log_path, ...)
{
    char *argv[MAX_ARGS];
    va_list ap;

    va_start(ap, log_path);
    build_argv(argv, 1, ap);
    va_end(ap);
    return start_bg_argv(log_path, argv, NULL);
}

/* The same with extra environment entries. */
static pid_t start_bg_env(const char *log_path, const char *const *env, ...)
{
    char *argv[MAX_ARGS];
    va_list ap;

    va_start(ap, env);
    build_argv(argv, 1, ap);
    va_end(ap);
    return start_bg_argv(log_path, argv, env);
}

/* The same without the test's --dsn and --table. */
static pid_t start_bg_raw_env(const char *log_path, const char *const *env, ...)
{
    char *argv[MAX_ARGS];
    va_list ap;

    va_start(ap, env);
    build_argv(argv, 0, ap);
    va_end(ap);
    return start_bg_argv(log_path, argv, env);
}

static void forget_bg(pid_t pid)
{
    for (int i = 0; i < MAX_BG; i++)
        if (g_bg[i] == pid)
            g_bg[i] = 0;
}

/* Signal a background process and wait for it; returns its status. */
static int stop_bg(pid_t pid, int sig, int64_t timeout_ms)
{
    int code;

    if (pid <= 0)
        return -1;
    kill(pid, sig);
    code = wait_pid(pid, timeout_ms);
    forget_bg(pid);
    return code;
}

/* Whatever a failed test left running: SIGKILL by pid (its CMD dies with
 * it through the death signal). */
static void kill_all_bg(void)
{
    for (int i = 0; i < MAX_BG; i++)
        if (g_bg[i] > 0) {
            kill(g_bg[i], SIGKILL);
            waitpid(g_bg[i], NULL, 0);
            g_bg[i] = 0;
        }
}

static int migrate_ok(void)
{
    result r;
    int ok;

    run_db(&r, "migrate", NULL);
    ok = r.code == 0;
    CU_ASSERT_EQUAL(r.code, 0);
    if (!ok)
        fprintf(stderr, "migrate failed: %s\n", r.err);
    result_free(&r);
    return ok;
}

/* 1 if `status --json` says the lease is held by `owner`. */
static int held_by(const char *owner)
{
    result r;
    char want[300];
    int yes;

    run_db(&r, "status", "--json", NULL);
    snprintf(want, sizeof want, "\"owner\":\"%s\",\"held\":true", owner);
    yes = r.code == 0 && strstr(r.out, want) != NULL;
    result_free(&r);
    return yes;
}

static int await_held_by(const char *owner, int64_t timeout_ms)
{
    int64_t deadline = sqle_mono_ms() + timeout_ms;

    while (sqle_mono_ms() < deadline) {
        if (held_by(owner))
            return 1;
        sqle_sleep_ms(50);
    }
    return 0;
}

/* Wait until `status --json` says nobody holds the lease. */
static int await_free(int64_t timeout_ms)
{
    int64_t deadline = sqle_mono_ms() + timeout_ms;

    while (sqle_mono_ms() < deadline) {
        result r;
        int yes;
        run_db(&r, "status", "--json", NULL);
        yes = r.code == 0 && strstr(r.out, "\"held\":false") != NULL;
        result_free(&r);
        if (yes)
            return 1;
        sqle_sleep_ms(50);
    }
    return 0;
}

/* The JSON integer after "key": in a one-line object, or LLONG_MIN. */
static long long json_int(const char *json, const char *key)
{
    char pat[80];
    const char *p;

    snprintf(pat, sizeof pat, "\"%s\":", key);
    p = strstr(json, pat);
    return p != NULL ? strtoll(p + strlen(pat), NULL, 10) : (-9223372036854775807LL - 1);
}

/* A number of the row as `status --json` reports it now, -1 when status
 * fails. */
static long long status_int(const char *key)
{
    result r;
    long long v;

    run_db(&r, "status", "--json", NULL);
    v = r.code == 0 ? json_int(r.out, key) : -1;
    result_free(&r);
    return v;
}

/* The row's token (a free row's is the seed migrate gave it, from the
 * database clock). */
static long long token_now(void)
{
    return status_int("token");
}

/* "\"token\":N," for a JSON assertion. */
static const char *token_json(char *buf, size_t cap, long long token)
{
    snprintf(buf, cap, "\"token\":%lld,", token);
    return buf;
}

/* The pid a CMD wrote to a file (waits for it to appear). */
static long read_pid_file(const char *path, int64_t timeout_ms)
{
    int64_t deadline = sqle_mono_ms() + timeout_ms;

    while (sqle_mono_ms() < deadline) {
        char *s = slurp(path);
        long pid = s != NULL ? strtol(s, NULL, 10) : 0;
        int complete = s != NULL && strchr(s, '\n') != NULL;
        free(s);
        if (pid > 0 && complete)
            return pid;
        sqle_sleep_ms(20);
    }
    return 0;
}

static int await_pid_gone(long pid, int64_t timeout_ms)
{
    int64_t deadline = sqle_mono_ms() + timeout_ms;

    while (sqle_mono_ms() < deadline) {
        if (tu_pid_gone(pid))
            return 1;
        sqle_sleep_ms(20);
    }
    return tu_pid_gone(pid);
}

/* How many times needle occurs in hay. */
static int count_of(const char *hay, const char *needle)
{
    int n = 0;

    for (const char *p = hay; p != NULL && (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* Wait until the file at path contains needle. */
static int await_file_has(const char *path, const char *needle, int64_t timeout_ms)
{
    int64_t deadline = sqle_mono_ms() + timeout_ms;

    for (;;) {
        char *s = slurp(path);
        int yes = s != NULL && strstr(s, needle) != NULL;
        free(s);
        if (yes)
            return 1;
        if (sqle_mono_ms() >= deadline)
            return 0;
        sqle_sleep_ms(20);
    }
}

/* Print a background process's log (for a failure message). */
static void show_log(const char *what, const char *path)
{
    char *text = slurp(path);
    fprintf(stderr, "\n  %s log:\n%s\n", what, text ? text : "(none)");
    free(text);
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

/* ---- usage ---------------------------------------------------------- */

static void test_version(void)
{
    result r;

    run_raw(&r, "--version", NULL);
    ASSERT_CODE(r, 0);
    CU_ASSERT_STRING_EQUAL(r.out, "sqlease " SQLEASE_VERSION "\n");
    result_free(&r);
}

static void test_help(void)
{
    static const char *const words[] = {
        "migrate", "status", "--json", "run", "--no-wait", "--min-hold", "--kill-grace",
        "supervise", "release", "--force", "demo", "--version", "--help", "--dsn",
        "--table", "--name", "--ttl", "--heartbeat", "--renew-deadline", "--retry",
        "--owner", "--dialect", "-v", "-q", "64", "69", "75", "sys_job_lease", "scheduler",
        "30s", "10s", "20s", "2s", "SQLEASE_DSN", "--timeout", "--conflict-exit-code",
        "--metrics-file", "--crash-limit", "--crash-window", "--crash-pause", "73",
        "NOTIFY_SOCKET", "JOURNAL_STREAM"};
    result r;

    run_raw(&r, "--help", NULL);
    ASSERT_CODE(r, 0);
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        ASSERT_CONTAINS(r.out, words[i]);
    /* --dialect names every row of the table, and each alias. */
    for (size_t i = 0; i < sqle_dialect_count; i++) {
        ASSERT_CONTAINS(r.out, sqle_dialects[i].key);
        for (size_t j = 0; j < sqle_dialects[i].naliases; j++)
            ASSERT_CONTAINS(r.out, sqle_dialects[i].aliases[j]);
    }
    CU_ASSERT_PTR_NULL(strstr(r.out, "__demo"));
    CU_ASSERT_STRING_EQUAL(r.err, "");
    result_free(&r);
}

/* The manual as the build installs it (build/gen/sqlease.1, with the
 * dialect table's rows filled in), malloc'd; NULL outside `scons test`. */
static char *man_page(void)
{
    const char *path = getenv("SQLEASE_MAN_PAGE");

    return path != NULL && path[0] != '\0' ? slurp(path) : NULL;
}

/* The man page lists every flag and every exit code --help does (in
 * roff, a '-' is written '\-'), and every dialect the table has. */
static void test_man_page_complete(void)
{
    char *man;
    const char *p, *codes;
    result r;

    if (getenv("SQLEASE_MAN_PAGE") == NULL)
        return; /* run outside `scons test` */
    man = man_page();
    CU_ASSERT_FATAL(man != NULL && man[0] != '\0');
    CU_ASSERT_PTR_NULL(strstr(man, "@DIALECTS@"));
    for (size_t i = 0; i < sqle_dialect_count; i++) {
        char want[128];

        snprintf(want, sizeof want, "\\fB%s\\fR", sqle_dialects[i].key);
        if (strstr(man, want) == NULL) {
            fprintf(stderr, "\n  the man page lacks dialect %s\n", sqle_dialects[i].key);
            CU_FAIL("a dialect of the table is missing from the man page");
        }
        for (size_t j = 0; j < sqle_dialects[i].naliases; j++) {
            snprintf(want, sizeof want, "\\fB%s\\fR", sqle_dialects[i].aliases[j]);
            CU_ASSERT_PTR_NOT_NULL(strstr(man, want));
        }
    }
    run_raw(&r, "--help", NULL);
    ASSERT_CODE(r, 0);
    for (p = r.out; (p = strstr(p, "--")) != NULL;) {
        char flag[64], roff[140];
        size_t n = 2, k = 0;

        while (p[n] == '-' || (p[n] >= 'a' && p[n] <= 'z'))
            n++;
        if (n > 2 && n < sizeof flag) {
            memcpy(flag, p, n);
            flag[n] = '\0';
            for (size_t i = 0; i < n && k + 3 < sizeof roff; i++) {
                if (flag[i] == '-')
                    roff[k++] = '\\';
                roff[k++] = flag[i];
            }
            roff[k] = '\0';
            if (strstr(man, roff) == NULL) {
                fprintf(stderr, "\n  the man page lacks %s\n", flag);
                CU_FAIL("a flag of --help is missing from the man page");
            }
        }
        p += n;
    }
    codes = strstr(r.out, "Exit codes:");
    CU_ASSERT_FATAL(codes != NULL);
    for (p = codes; (p = strchr(p, '\n')) != NULL;) {
        char want[32];
        int code;

        p++;
        if (sscanf(p, "  %d", &code) != 1)
            continue;
        snprintf(want, sizeof want, "\n.B %d\n", code);
        if (strstr(man, want) == NULL)
            snprintf(want, sizeof want, "\n.BR %d ", code); /* 130, 143 */
        if (strstr(man, want) == NULL) {
            fprintf(stderr, "\n  the man page lacks exit code %d\n", code);
            CU_FAIL("an exit code of --help is missing from the man page");
        }
    }
    result_free(&r);
    free(man);
}

/* The part of --help that documents `command`: its line under
 * "Commands:" ("  status [--json] ...") and the lines indented below it,
 * up to the next command; for "global", the "Global flags" paragraph.
 * A malloc'd copy, or NULL if there is none. */
static char *help_section(const char *help, const char *command)
{
    const char *start = NULL, *end, *p;

    if (strcmp(command, "global") == 0) {
        start = strstr(help, "\nGlobal flags");
        if (start == NULL)
            return NULL;
        end = strstr(start + 1, "\n\n");
    } else {
        const char *cmds = strstr(help, "\nCommands:\n");
        size_t n = strlen(command);

        if (cmds == NULL)
            return NULL;
        for (p = cmds + 1; (p = strchr(p, '\n')) != NULL && p[1] != '\n';) {
            p++;
            if (strncmp(p, "  ", 2) == 0 && strncmp(p + 2, command, n) == 0 &&
                (p[2 + n] == ' ' || p[2 + n] == '\n')) {
                start = p;
                break;
            }
        }
        if (start == NULL)
            return NULL;
        /* The next command: a line indented by exactly two spaces. */
        for (end = start; (end = strchr(end + 1, '\n')) != NULL;)
            if (end[1] == '\n' || (end[1] == ' ' && end[2] == ' ' && end[3] != ' '))
                break;
    }
    if (end == NULL)
        end = start + strlen(start);
    return strndup(start, (size_t)(end - start));
}

/* Every "\-\-flag" of a roff line, as "--flag", into flags (at most max);
 * the bare "\-\-" before CMD is not a flag.  Returns how many. */
static int roff_flags(const char *line, size_t len, char flags[][48], int max)
{
    int n = 0;

    for (const char *p = line; p < line + len && n < max; p++) {
        size_t k = 0;

        if (strncmp(p, "\\-\\-", 4) != 0)
            continue;
        p += 4;
        flags[n][k++] = '-';
        flags[n][k++] = '-';
        while (p < line + len && k + 1 < sizeof flags[0]) {
            if (*p >= 'a' && *p <= 'z')
                flags[n][k++] = *p++;
            else if (strncmp(p, "\\-", 2) == 0 && p[2] >= 'a' && p[2] <= 'z') {
                flags[n][k++] = '-';
                p += 2;
            } else
                break;
        }
        flags[n][k] = '\0';
        if (k > 2)
            n++;
        p--;
    }
    return n;
}

/* `flag` appears in `section` as a whole flag (not as the start of a
 * longer one: "--timeout" is not found in "--query-timeout" alone). */
static int has_flag(const char *section, const char *flag)
{
    size_t n = strlen(flag);

    for (const char *p = section; (p = strstr(p, flag)) != NULL; p += n) {
        char before = p == section ? ' ' : p[-1];
        char after = p[n];
        if (before != '-' && !(before >= 'a' && before <= 'z') && after != '-' &&
            !(after >= 'a' && after <= 'z'))
            return 1;
    }
    return 0;
}

/* Check that the --help of `command` (`sqlease COMMAND --help`; for
 * "global", `sqlease --help`) documents `flag` in that command's part.
 * Returns 1 if it does. */
static int help_documents(const char *command, const char *flag, const char *why)
{
    result r;
    char *section;
    int ok;

    if (strcmp(command, "global") == 0)
        run_raw(&r, "--help", NULL);
    else
        run_raw(&r, command, "--help", NULL);
    ASSERT_CODE(r, 0);
    section = help_section(r.out, command);
    ok = section != NULL && has_flag(section, flag);
    if (!ok)
        fprintf(stderr, "\n  the man page documents %s %s (%s), `sqlease %s --help` does"
                " not\n", command, flag, why, strcmp(command, "global") == 0 ? "" : command);
    free(section);
    result_free(&r);
    return ok;
}

/* Which commands a flag of RUN AND SUPERVISE FLAGS is for: the commands
 * its description opens with in parentheses ("(\fBsupervise\fR,
 * \fBcron\fR; implies ...)"), else run and supervise. */
static void flag_scope(const char *body, int *run, int *sup, int *cron)
{
    const char *end = body[0] == '(' ? strchr(body, ')') : NULL;
    char head[200];

    *run = *sup = 1;
    *cron = 0;
    if (end == NULL || (size_t)(end - body) >= sizeof head)
        return;
    memcpy(head, body, (size_t)(end - body));
    head[end - body] = '\0';
    *run = strstr(head, "\\fBrun\\fR") != NULL;
    *sup = strstr(head, "\\fBsupervise\\fR") != NULL;
    *cron = strstr(head, "\\fBcron\\fR") != NULL;
    if (!*run && !*sup && !*cron)
        *run = *sup = 1;
}

/* The other way round: every flag the man page documents is in --help,
 * in the part of its command (from the SYNOPSIS, whose line names the
 * command; from RUN AND SUPERVISE FLAGS, where "(run)" or "(supervise)"
 * limits a flag to one of them; from GLOBAL FLAGS), so that the two
 * cannot drift apart again. */
static void test_help_lists_man_flags(void)
{
    char flags[16][48];
    char *man;
    const char *p, *sec, *next;
    int checked = 0, missing = 0;

    if (getenv("SQLEASE_MAN_PAGE") == NULL)
        return; /* run outside `scons test` */
    man = man_page();
    CU_ASSERT_FATAL(man != NULL && man[0] != '\0');

    /* SYNOPSIS: "[\fIGLOBAL FLAGS\fR] \fBstatus\fR [\fB\-\-json\fR] ...". */
    sec = strstr(man, "\n.SH SYNOPSIS\n");
    next = sec != NULL ? strstr(sec + 1, "\n.SH ") : NULL;
    CU_ASSERT_FATAL(sec != NULL && next != NULL);
    for (p = sec; p < next && (p = strstr(p, "[\\fIGLOBAL FLAGS\\fR] \\fB")) != NULL && p < next;) {
        const char *eol = strchr(p, '\n');
        char command[32];
        size_t k = 0;
        int n;

        p += strlen("[\\fIGLOBAL FLAGS\\fR] \\fB");
        while (p[k] >= 'a' && p[k] <= 'z' && k + 1 < sizeof command) {
            command[k] = p[k];
            k++;
        }
        command[k] = '\0';
        n = roff_flags(p, eol != NULL ? (size_t)(eol - p) : strlen(p), flags, 16);
        for (int i = 0; i < n; i++, checked++)
            missing += !help_documents(command, flags[i], "SYNOPSIS");
        p = eol != NULL ? eol : p + strlen(p);
    }

    /* RUN AND SUPERVISE FLAGS: ".BI \-\-crash\-limit " N"" then, on the
     * next line, "(\fBsupervise\fR)" when it is not for both. */
    sec = strstr(man, "\n.SH RUN AND SUPERVISE FLAGS\n");
    next = sec != NULL ? strstr(sec + 1, "\n.SH ") : NULL;
    CU_ASSERT_FATAL(sec != NULL && next != NULL);
    for (p = sec; (p = strstr(p, "\n.BI \\-\\-")) != NULL && p < next;) {
        const char *eol = strchr(p + 1, '\n');
        const char *body = eol != NULL ? eol + 1 : "";
        int run, sup, cron;
        int n = roff_flags(p + 1, eol != NULL ? (size_t)(eol - p - 1) : strlen(p + 1), flags, 1);

        flag_scope(body, &run, &sup, &cron);
        if (n == 1) {
            if (run)
                missing += !help_documents("run", flags[0], "RUN AND SUPERVISE FLAGS");
            if (sup)
                missing += !help_documents("supervise", flags[0], "RUN AND SUPERVISE FLAGS");
            if (cron)
                missing += !help_documents("cron", flags[0], "RUN AND SUPERVISE FLAGS");
            checked++;
        }
        p = eol != NULL ? eol : p + strlen(p);
    }
    /* The same section's flags without ".BI": ".B \-\-no\-wait". */
    for (p = sec; (p = strstr(p, "\n.B \\-\\-")) != NULL && p < next;) {
        const char *eol = strchr(p + 1, '\n');
        const char *body = eol != NULL ? eol + 1 : "";
        int n = roff_flags(p + 1, eol != NULL ? (size_t)(eol - p - 1) : strlen(p + 1), flags, 1);

        if (n == 1) {
            int run, sup, cron;

            flag_scope(body, &run, &sup, &cron);
            if (run)
                missing += !help_documents("run", flags[0], "RUN AND SUPERVISE FLAGS");
            if (sup)
                missing += !help_documents("supervise", flags[0], "RUN AND SUPERVISE FLAGS");
            if (cron)
                missing += !help_documents("cron", flags[0], "RUN AND SUPERVISE FLAGS");
            checked++;
        }
        p = eol != NULL ? eol : p + strlen(p);
    }

    /* GLOBAL FLAGS: ".BI \-\-dsn " CONN"" and ".BR \-v " | " \-q". */
    sec = strstr(man, "\n.SH GLOBAL FLAGS\n");
    next = sec != NULL ? strstr(sec + 1, "\n.SH ") : NULL;
    CU_ASSERT_FATAL(sec != NULL && next != NULL);
    for (p = sec; (p = strstr(p, "\n.BI \\-\\-")) != NULL && p < next;) {
        const char *eol = strchr(p + 1, '\n');
        int n = roff_flags(p + 1, eol != NULL ? (size_t)(eol - p - 1) : strlen(p + 1), flags, 1);

        if (n == 1) {
            missing += !help_documents("global", flags[0], "GLOBAL FLAGS");
            checked++;
        }
        p = eol != NULL ? eol : p + strlen(p);
    }
    /* The one-dash flags: ".BR \-v " | " \-q". */
    if (strstr(sec, "\n.BR \\-v \" | \" \\-q\n") != NULL) {
        result r;
        char *g;

        run_raw(&r, "--help", NULL);
        g = help_section(r.out, "global");
        CU_ASSERT(g != NULL && strstr(g, "\n  -v ") != NULL && strstr(g, "\n  -q ") != NULL);
        free(g);
        result_free(&r);
        checked += 2;
    }
    /* Every command of the SYNOPSIS and the flags of the other sections:
     * the parse found them all (about 30 today). */
    CU_ASSERT(checked >= 25);
    if (checked < 25)
        fprintf(stderr, "\n  only %d flags found in the man page\n", checked);
    CU_ASSERT_EQUAL(missing, 0);
    free(man);
}

static void test_bare_duration(void)
{
    static const char *const env[] = {"SQLEASE_TTL=30", NULL};
    result r;

    new_table();
    run_db(&r, "--ttl", "30", "status", NULL);
    ASSERT_CODE(r, 64);
    ASSERT_CONTAINS(r.err, "unit");
    result_free(&r);
    /* The same from the environment, and --flag=value spelling. */
    run_db_env(&r, env, "status", NULL);
    ASSERT_CODE(r, 64);
    ASSERT_CONTAINS(r.err, "SQLEASE_TTL");
    result_free(&r);
    run_db(&r, "--retry=250", "status", NULL);
    ASSERT_CODE(r, 64);
    ASSERT_CONTAINS(r.err, "unit");
    result_free(&r);
}

static void test_usage_errors(void)
{
    static const char *const cases[][6] = {
        {"--bogus", "status", NULL},
        {"status", "--bogus", NULL},
        {"--name", "", "status", NULL},
        {"--name=", "status", NULL},
        {"--table", "x; DROP TABLE y", "status", NULL},
        {"-v", NULL},
        {"--ttl", NULL},
        {"frobnicate", NULL},
        {"run", NULL},
        {"run", "--", NULL},
        {"run", "echo", "hi", NULL},
        {"supervise", "--no-wait", "--", "true", NULL},
        {"run", "--kill-grace", "20s", "--", "true", NULL},
        {"release", NULL},
    };

    new_table();
    /* The kill grace is checked against the timing in force, which is
     * settled once connected (it may come from odbc.ini): the database
     * must be there for that case to reach its check. */
    if (!migrate_ok())
        return;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        result r;
        run_db(&r, cases[i][0], cases[i][1], cases[i][2], cases[i][3], cases[i][4],
               cases[i][5], NULL);
        if (r.code != 64)
            fprintf(stderr, "\n  case %zu (%s %s ...): exit %d, stderr: %s\n", i,
                    cases[i][0], cases[i][1] ? cases[i][1] : "", r.code, r.err);
        CU_ASSERT_EQUAL(r.code, 64);
        ASSERT_CONTAINS(r.err, "sqlease: ");
        ASSERT_CONTAINS(r.err, "--help");
        /* One line. */
        CU_ASSERT(strchr(r.err, '\n') == r.err + strlen(r.err) - 1);
        result_free(&r);
    }
}

static void test_missing_command(void)
{
    result r;

    run_raw(&r, NULL);
    ASSERT_CODE(r, 64);
    ASSERT_CONTAINS(r.err, "COMMAND");
    result_free(&r);
}

/* ---- database reachability ------------------------------------------ */

static void test_unreachable(void)
{
    result r;

    run_raw(&r, "--dsn", "Driver=SQLite3;Database=/nonexistent-dir/x.db", "status", NULL);
    ASSERT_CODE(r, 69);
    ASSERT_CONTAINS(r.err, "sqlease: ");
    result_free(&r);
    run_raw(&r, "--dsn", "sqlease-no-such-dsn", "migrate", NULL);
    ASSERT_CODE(r, 69);
    result_free(&r);
    run_raw(&r, "--dsn", "sqlease-no-such-dsn", "run", "--", "true", NULL);
    ASSERT_CODE(r, 69);
    result_free(&r);
}

static void test_password_never_printed(void)
{
    result r;

    run_raw(&r, "-v", "--dsn", "Driver=NoSuch;PWD=hunter2", "status", NULL);
    ASSERT_CODE(r, 69);
    CU_ASSERT_PTR_NULL(strstr(r.out, "hunter2"));
    CU_ASSERT_PTR_NULL(strstr(r.err, "hunter2"));
    result_free(&r);
    run_raw(&r, "--dsn", "Driver=NoSuch;Server=x;Password=hunter2;", "supervise", "--",
            "true", NULL);
    ASSERT_CODE(r, 69);
    CU_ASSERT_PTR_NULL(strstr(r.out, "hunter2"));
    CU_ASSERT_PTR_NULL(strstr(r.err, "hunter2"));
    result_free(&r);
}

/* What CMD leaves behind in its process group is CMD's work too: it is
 * stopped before the lease is released, even a member that ignores
 * SIGTERM (SIGKILL after the grace). */
static void test_run_stops_leftover_group(void)
{
    char pidfile[1100], script[1300];
    result r;
    long pid;

    new_table();
    run_db(&r, "migrate", NULL);
    ASSERT_CODE(r, 0);
    result_free(&r);
    snprintf(pidfile, sizeof pidfile, "%s/leftover.pid", g_dir);
    snprintf(script, sizeof script,
             "(trap '' TERM; exec sleep 1000) & echo $! > '%s'; exit 0", pidfile);
    run_db(&r, "--ttl", "3s", "--renew-deadline", "2s", "--heartbeat", "1s", "--retry",
           "500ms", "run", "--", "sh", "-c", script, NULL);
    ASSERT_CODE(r, 0);
    pid = read_pid_file(pidfile, 1000);
    CU_ASSERT(pid > 0);
    /* Gone by the time run returned: no waiting here. */
    CU_ASSERT(pid > 0 && tu_pid_gone(pid));
    if (pid > 0 && !tu_pid_gone(pid))
        kill((pid_t)pid, SIGKILL);
    ASSERT_CONTAINS(r.err, "left processes in its group");
    result_free(&r);
    run_db(&r, "status", "--json", NULL);
    ASSERT_CONTAINS(r.out, "\"held\":false");
    result_free(&r);
}

/* SQL Server has no server here, but its driver (FreeTDS) is installed:
 * a refused connection must be exit 69 with the driver's reason, quickly,
 * with the password redacted.  Skipped where the driver is not
 * registered. */
static void test_sqlserver_driver_closed_port(void)
{
    result r;

    run_raw(&r, "--dsn", "Driver=FreeTDS;Server=127.0.0.1;Port=1;Database=x;UID=sa;PWD=hunter2",
            "status", NULL);
    if (strstr(r.err, "IM002") != NULL) {
        result_free(&r);
        return; /* FreeTDS not installed */
    }
    ASSERT_CODE(r, 69);
    ASSERT_CONTAINS(r.err, "cannot connect");
    ASSERT_CONTAINS(r.err, "PWD=***");
    CU_ASSERT_PTR_NULL(strstr(r.err, "hunter2"));
    result_free(&r);
}

static void test_status_before_migrate(void)
{
    result r;

    new_table();
    run_db(&r, "status", NULL);
    ASSERT_CODE(r, 69);
    ASSERT_CONTAINS(r.err, "migrate");
    result_free(&r);
    run_db(&r, "run", "--", "true", NULL);
    ASSERT_CODE(r, 69);
    ASSERT_CONTAINS(r.err, "migrate");
    result_free(&r);
}

/* ---- history ---------------------------------------------------------- */

/* `history`: every hold of the lease, newest first, with its owner, host,
 * pid, token, times, how it ended and the gap before it; "holding" for the
 * live one; a holder killed and the next take: "expired"; --json one
 * object per line; --all-names; a missing table said with migrate. */
static void test_history(void)
{
    char hist[96], owner[64], log[1100];
    result r;
    pid_t bg;
    const char *p;
    int lines = 0;

    new_table();
    snprintf(hist, sizeof hist, "%.60s_h", g_table);
    if (g_ntables < MAX_TABLES)
        snprintf(g_tables[g_ntables++], sizeof g_tables[0], "%.60s_h", g_table);
    run_db(&r, "--history-table", hist, "history", NULL);
    ASSERT_CODE(r, 69);
    ASSERT_CONTAINS(r.err, "migrate");
    result_free(&r);
    run_db(&r, "--history-table", hist, "migrate", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, hist);
    result_free(&r);
    run_db(&r, "--history-table", hist, "history", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, "no hold of lease 'scheduler'");
    result_free(&r);
    run_db(&r, "--history-table", hist, "--owner", "first", "run", "--", "true",
           NULL);
    ASSERT_CODE(r, 0);
    result_free(&r);
    sqle_sleep_ms(50);
    /* A holder that dies (SIGKILL: no release) while the next waits. */
    snprintf(log, sizeof log, "%s/hist.log", g_dir);
    bg = start_bg(log, "--history-table", hist, "--owner", "killed", "--ttl",
                  "1s", "supervise", "--", "sleep", "60", NULL);
    CU_ASSERT_FATAL(await_held_by("killed", 10000));
    run_db(&r, "--history-table", hist, "history", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, "holding");
    result_free(&r);
    stop_bg(bg, SIGKILL, 5000);
    run_db(&r, "--history-table", hist, "--owner", "after", "--ttl", "1s", "run",
           "--", "true", NULL);
    ASSERT_CODE(r, 0);
    result_free(&r);
    run_db(&r, "--history-table", hist, "history", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, "STARTED");
    ASSERT_CONTAINS(r.out, "GAP BEFORE");
    ASSERT_CONTAINS(r.out, "released");
    ASSERT_CONTAINS(r.out, "expired");
    ASSERT_CONTAINS(r.out, "gap 0.");
    ASSERT_CONTAINS(r.out, "gap ?"); /* the first hold: none before it */
    /* Newest first: after, killed, first; the killed one's taker waited
     * out its ttl, a gap of a second or so. */
    p = strstr(r.out, "after (token");
    CU_ASSERT(p != NULL && strstr(r.out, "killed (token") > p &&
              strstr(r.out, "first (token") > strstr(r.out, "killed (token"));
    snprintf(owner, sizeof owner, " %ld ", (long)bg);
    ASSERT_CONTAINS(r.out, owner); /* the killed holder's pid */
    for (p = r.out; (p = strchr(p, '\n')) != NULL; p++)
        lines++;
    CU_ASSERT_EQUAL(lines, 4);
    result_free(&r);
    run_db(&r, "--history-table", hist, "history", "--json", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, "\"owner\":\"after\"");
    ASSERT_CONTAINS(r.out, "\"ended\":\"expired\"");
    ASSERT_CONTAINS(r.out, "\"ended\":\"released\"");
    ASSERT_CONTAINS(r.out, "\"gap_ms\":null");
    ASSERT_CONTAINS(r.out, "\"gap_ms\":");
    ASSERT_CONTAINS(r.out, "\"duration_ms\":");
    CU_ASSERT_PTR_NULL(strstr(r.out, "STARTED"));
    result_free(&r);
    run_db(&r, "--history-table", hist, "history", "--all-names", "--since", "1h", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, "NAME");
    ASSERT_CONTAINS(r.out, "scheduler ");
    result_free(&r);
    run_db(&r, "--history-table", hist, "history", "--since", "x", NULL);
    ASSERT_CODE(r, 64);
    result_free(&r);
    run_db(&r, "--history-table", hist, "history", "--bogus", NULL);
    ASSERT_CODE(r, 64);
    result_free(&r);
}

/* ---- migrate, status ------------------------------------------------- */

static void test_migrate_twice(void)
{
    result r;

    new_table();
    run_db(&r, "--name", "job1", "migrate", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, "migrated table");
    ASSERT_CONTAINS(r.out, g_table);
    ASSERT_CONTAINS(r.out, "'job1'");
    result_free(&r);
    run_db(&r, "--name", "job1", "migrate", NULL);
    ASSERT_CODE(r, 0);
    result_free(&r);
    /* Another name in the same table: its row is seeded too. */
    run_db(&r, "--name", "job2", "migrate", NULL);
    ASSERT_CODE(r, 0);
    result_free(&r);
    run_db(&r, "--name", "job2", "status", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, "free");
    result_free(&r);
    /* A name with no row: not migrated. */
    run_db(&r, "--name", "job3", "status", NULL);
    ASSERT_CODE(r, 69);
    ASSERT_CONTAINS(r.err, "migrate");
    result_free(&r);
}

static void test_status_json(void)
{
    static const char *const keys[] = {"\"name\":\"scheduler\"", "\"table\":", "\"owner\":\"\"",
                                       "\"held\":false", "\"token\":", "\"expires_in_ms\":0",
                                       "\"db_now_ms\":", "\"local_now_ms\":", "\"skew_ms\":",
                                       "\"dialect\":\""};
    struct timespec wall;
    long long db_now, local_now, skew, mine;
    result r;

    new_table();
    if (!migrate_ok())
        return;
    run_db(&r, "status", "--json", NULL);
    ASSERT_CODE(r, 0);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        ASSERT_CONTAINS(r.out, keys[i]);
    ASSERT_CONTAINS(r.out, g_table);
    /* One object on one line. */
    CU_ASSERT(r.out[0] == '{');
    CU_ASSERT(strchr(r.out, '\n') == r.out + strlen(r.out) - 1);
    CU_ASSERT(r.out[strlen(r.out) - 2] == '}');
    clock_gettime(CLOCK_REALTIME, &wall);
    mine = (long long)wall.tv_sec * 1000 + wall.tv_nsec / 1000000;
    db_now = json_int(r.out, "db_now_ms");
    local_now = json_int(r.out, "local_now_ms");
    skew = json_int(r.out, "skew_ms");
    CU_ASSERT(llabs(db_now - mine) < 5000);
    CU_ASSERT(llabs(local_now - mine) < 5000);
    CU_ASSERT_EQUAL(skew, db_now - local_now);
    /* A new row's token is seeded from the database clock. */
    CU_ASSERT(json_int(r.out, "token") > 1600000000000LL && json_int(r.out, "token") <= db_now);
    result_free(&r);

    run_db(&r, "status", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, "free");
    ASSERT_CONTAINS(r.out, "token:");
    ASSERT_CONTAINS(r.out, "skew:");
    result_free(&r);
}

/* ---- run ------------------------------------------------------------- */

static void test_run_cycle(void)
{
    result r;
    long long seed;
    char want[64];

    new_table();
    if (!migrate_ok())
        return;
    seed = token_now();
    run_db(&r, "--name=scheduler", "run", "--", "sh", "-c", "echo $SQLEASE_TOKEN $SQLEASE_NAME",
           NULL);
    ASSERT_CODE(r, 0);
    snprintf(want, sizeof want, "%lld scheduler\n", seed + 1);
    CU_ASSERT_STRING_EQUAL(r.out, want);
    result_free(&r);

    run_db(&r, "status", "--json", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, "\"held\":false");
    ASSERT_CONTAINS(r.out, token_json(want, sizeof want, seed + 1));
    result_free(&r);

    run_db(&r, "run", "--", "sh", "-c", "exit 7", NULL);
    ASSERT_CODE(r, 7);
    result_free(&r);

    run_db(&r, "status", "--json", NULL);
    ASSERT_CONTAINS(r.out, "\"held\":false");
    ASSERT_CONTAINS(r.out, token_json(want, sizeof want, seed + 2));
    result_free(&r);

    /* A CMD killed by a signal: 128 + N. */
    run_db(&r, "run", "--", "sh", "-c", "kill -KILL $$", NULL);
    ASSERT_CODE(r, 128 + SIGKILL);
    result_free(&r);

    /* A CMD that cannot be started. */
    run_db(&r, "run", "--", "/nonexistent/cmd", NULL);
    ASSERT_CODE(r, 127);
    result_free(&r);

    /* supervise does not sit on a lease it cannot use: it releases it
     * and exits 127 at once. */
    run_db(&r, "supervise", "--", "/nonexistent/daemon", NULL);
    ASSERT_CODE(r, 127);
    CU_ASSERT(r.ms < 5000);
    ASSERT_CONTAINS(r.err, "releasing the lease");
    result_free(&r);
    run_db(&r, "status", "--json", NULL);
    ASSERT_CONTAINS(r.out, "\"held\":false");
    result_free(&r);
}

static void test_run_env_precedence(void)
{
    static const char *const env[] = {"SQLEASE_NAME=envname", "SQLEASE_OWNER=env-owner", NULL};
    result r;

    new_table();
    run_db(&r, "--name", "envname", "migrate", NULL);
    ASSERT_CODE(r, 0);
    result_free(&r);
    run_db(&r, "--name", "flagname", "migrate", NULL);
    ASSERT_CODE(r, 0);
    result_free(&r);

    run_db_env(&r, env, "run", "--", "sh", "-c", "echo $SQLEASE_NAME $SQLEASE_OWNER", NULL);
    ASSERT_CODE(r, 0);
    CU_ASSERT_STRING_EQUAL(r.out, "envname env-owner\n");
    result_free(&r);

    run_db_env(&r, env, "--name", "flagname", "--owner=flag-owner", "run", "--", "sh", "-c",
               "echo $SQLEASE_NAME $SQLEASE_OWNER", NULL);
    ASSERT_CODE(r, 0);
    CU_ASSERT_STRING_EQUAL(r.out, "flagname flag-owner\n");
    result_free(&r);
}

/* While held, CMD sees the lease as held by its owner; a quote and a
 * backslash in the owner id come out escaped in the JSON.  CMD does not
 * inherit SQLEASE_DSN (it may hold a password): it finds the database
 * through SQLEASE_DSN_FILE, which it does inherit. */
static void test_status_while_held(void)
{
    char dsn_env[1300], table_env[100], path[1100];
    const char *env[3];
    result r;
    char want[128];
    long long seed;
    FILE *f;

    new_table();
    if (!migrate_ok())
        return;
    seed = token_now();
    snprintf(path, sizeof path, "%s/held.%d.conn", g_dir, ++g_seq);
    f = fopen(path, "w");
    CU_ASSERT_FATAL(f != NULL);
    fprintf(f, "%s\n", g_dsn);
    fclose(f);
    CU_ASSERT_FATAL(chmod(path, 0600) == 0);
    snprintf(dsn_env, sizeof dsn_env, "SQLEASE_DSN_FILE=%s", path);
    snprintf(table_env, sizeof table_env, "SQLEASE_TABLE=%s", g_table);
    env[0] = dsn_env;
    env[1] = table_env;
    env[2] = NULL;
    run_db_env(&r, env, "--owner", "q\"o\\x", "run", "--", g_bin, "status", "--json", NULL);
    ASSERT_CODE(r, 0);
    snprintf(want, sizeof want, "\"owner\":\"q\\\"o\\\\x\",\"held\":true,\"token\":%lld,",
             seed + 1);
    ASSERT_CONTAINS(r.out, want);
    CU_ASSERT(json_int(r.out, "expires_in_ms") > 0);
    result_free(&r);
}

static void test_no_wait_and_supervise(void)
{
    char log[1100], pidfile[1100], script[1300];
    long sleep_pid;
    pid_t sup;
    result r;
    int code;
    long long seed;
    char want[64];

    new_table();
    if (!migrate_ok())
        return;
    seed = token_now();
    snprintf(log, sizeof log, "%s/sup.%d.log", g_dir, ++g_seq);
    snprintf(pidfile, sizeof pidfile, "%s/sleep.%d.pid", g_dir, g_seq);
    snprintf(script, sizeof script, "echo $$ > '%s'; exec sleep 60", pidfile);
    sup = start_bg(log, "--owner", "other", "supervise", "--", "sh", "-c", script, NULL);
    CU_ASSERT_FATAL(sup > 0);
    if (!await_held_by("other", 15000)) {
        char *text = slurp(log);
        fprintf(stderr, "\n  supervise never held the lease; its log: %s\n", text);
        free(text);
        CU_FAIL("supervise did not take the lease");
        kill_all_bg();
        return;
    }
    sleep_pid = read_pid_file(pidfile, 5000);
    CU_ASSERT(sleep_pid > 0);

    run_db(&r, "run", "--no-wait", "--", "sh", "-c", "echo ran", NULL);
    ASSERT_CODE(r, 75);
    CU_ASSERT(r.ms < 5000);
    CU_ASSERT_STRING_EQUAL(r.out, "");
    ASSERT_CONTAINS(r.err, "other");
    result_free(&r);

    code = stop_bg(sup, SIGTERM, 15000);
    CU_ASSERT_EQUAL(code, 0);
    CU_ASSERT(sleep_pid > 0 && await_pid_gone(sleep_pid, 2000));

    run_db(&r, "status", "--json", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, "\"held\":false");
    ASSERT_CONTAINS(r.out, "\"owner\":\"\"");
    ASSERT_CONTAINS(r.out, token_json(want, sizeof want, seed + 1));
    result_free(&r);
    kill_all_bg();
}

static void test_release_force(void)
{
    char log[1100];
    pid_t sup;
    result r;
    long long seed;
    char want[64];

    new_table();
    if (!migrate_ok())
        return;
    seed = token_now();
    snprintf(log, sizeof log, "%s/sup.%d.log", g_dir, ++g_seq);
    /* A long heartbeat: the holder does not look again during the test. */
    sup = start_bg(log, "--owner", "other", "--ttl", "60s", "--heartbeat", "20s",
                   "--renew-deadline", "50s", "supervise", "--", "sleep", "60", NULL);
    CU_ASSERT_FATAL(sup > 0);
    CU_ASSERT(await_held_by("other", 15000));

    run_db(&r, "release", "--force", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, "released");
    ASSERT_CONTAINS(r.out, "other");
    result_free(&r);

    run_db(&r, "status", "--json", NULL);
    ASSERT_CONTAINS(r.out, "\"held\":false");
    ASSERT_CONTAINS(r.out, token_json(want, sizeof want, seed + 1));
    result_free(&r);

    CU_ASSERT_EQUAL(stop_bg(sup, SIGTERM, 15000), 0);
    kill_all_bg();
}

/* A holder whose lease is cleared under it loses it at its next renew:
 * `run` stops CMD and exits 75. */
static void test_run_lost(void)
{
    char log[1100], pidfile[1100], script[1300];
    long sleep_pid;
    pid_t holder;
    result r;
    int code;

    new_table();
    if (!migrate_ok())
        return;
    snprintf(log, sizeof log, "%s/run.%d.log", g_dir, ++g_seq);
    snprintf(pidfile, sizeof pidfile, "%s/sleep.%d.pid", g_dir, g_seq);
    snprintf(script, sizeof script, "echo $$ > '%s'; exec sleep 60", pidfile);
    holder = start_bg(log, "--owner", "victim", "--ttl", "4s", "--heartbeat", "500ms",
                      "--renew-deadline", "2s", "--retry", "500ms", "run", "--", "sh", "-c",
                      script, NULL);
    CU_ASSERT_FATAL(holder > 0);
    CU_ASSERT(await_held_by("victim", 15000));
    sleep_pid = read_pid_file(pidfile, 5000);
    CU_ASSERT(sleep_pid > 0);

    run_db(&r, "release", "--force", NULL);
    ASSERT_CODE(r, 0);
    result_free(&r);

    code = wait_pid(holder, 15000);
    forget_bg(holder);
    if (code != 75) {
        char *text = slurp(log);
        fprintf(stderr, "\n  run exited %d; its log: %s\n", code, text);
        free(text);
    }
    CU_ASSERT_EQUAL(code, 75);
    CU_ASSERT(sleep_pid > 0 && await_pid_gone(sleep_pid, 2000));
    kill_all_bg();
}

/* Without --no-wait, run waits for the holder and then runs CMD. */
static void test_run_waits(void)
{
    char log[1100], runlog[1100], want[64];
    pid_t sup, waiter;
    int code;
    long long seed;

    new_table();
    if (!migrate_ok())
        return;
    seed = token_now();
    snprintf(log, sizeof log, "%s/sup.%d.log", g_dir, ++g_seq);
    snprintf(runlog, sizeof runlog, "%s/run.%d.log", g_dir, g_seq);
    sup = start_bg(log, "--owner", "other", "supervise", "--", "sleep", "60", NULL);
    CU_ASSERT_FATAL(sup > 0);
    CU_ASSERT(await_held_by("other", 15000));
    waiter = start_bg(runlog, "--retry", "250ms", "--owner", "waiter", "run", "--", "sh", "-c",
                      "echo token=$SQLEASE_TOKEN", NULL);
    CU_ASSERT_FATAL(waiter > 0);
    sqle_sleep_ms(300);
    CU_ASSERT(held_by("other"));
    CU_ASSERT_EQUAL(stop_bg(sup, SIGTERM, 15000), 0);
    code = wait_pid(waiter, 15000);
    forget_bg(waiter);
    CU_ASSERT_EQUAL(code, 0);
    {
        char *out = slurp(runlog);
        snprintf(want, sizeof want, "token=%lld\n", seed + 2);
        ASSERT_CONTAINS(out, want);
        free(out);
    }
    kill_all_bg();
}

/* --min-hold lives in the row: after a quick CMD, `run` exits at once
 * with CMD's status and the row stays held by its hold until the take +
 * min-hold (database clock); meanwhile another `run --no-wait` exits 75,
 * after it the next take has a higher token.  A clean run logs no
 * warning.  SIGTERM to run stops CMD and exits 143. */
static void test_run_min_hold_and_sigterm(void)
{
    char log[1100], pidfile[1100], script[1300];
    long long token, acquired;
    long sleep_pid;
    pid_t holder;
    result r;

    new_table();
    if (!migrate_ok())
        return;
    run_db(&r, "--owner", "cron-a", "run", "--min-hold", "2s", "--", "true", NULL);
    ASSERT_CODE(r, 0);
    if (r.ms >= 1500)
        fprintf(stderr, "\n  run --min-hold 2s took %lld ms\n", (long long)r.ms);
    CU_ASSERT(r.ms < 1500);
    CU_ASSERT_PTR_NULL(strstr(r.err, "warn"));
    result_free(&r);
    run_db(&r, "status", "--json", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, "\"owner\":\"cron-a\",\"held\":true");
    token = json_int(r.out, "token");
    acquired = json_int(r.out, "acquired_at_ms");
    CU_ASSERT_EQUAL(json_int(r.out, "expires_at_ms"), acquired + 2000);
    result_free(&r);
    /* The human status uses the JSON's words. */
    run_db(&r, "status", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, "owner:      cron-a\n");
    CU_ASSERT_PTR_NULL(strstr(r.out, "holder"));
    result_free(&r);
    run_db(&r, "--owner", "cron-b", "run", "--no-wait", "--", "true", NULL);
    ASSERT_CODE(r, 75);
    ASSERT_CONTAINS(r.err, "cron-a");
    result_free(&r);
    /* Once the minimum hold has run out, the next run takes, with a
     * higher token. */
    CU_ASSERT(await_free(5000));
    run_db(&r, "--owner", "cron-b", "run", "--no-wait", "--", "sh", "-c",
           "echo \"token=$SQLEASE_TOKEN\"", NULL);
    ASSERT_CODE(r, 0);
    {
        const char *p = strstr(r.out, "token=");
        CU_ASSERT(p != NULL && strtoll(p + 6, NULL, 10) == token + 1);
    }
    result_free(&r);

    /* The crontab line of the README and docs/operating.md: a 5-minute minimum hold that is a
     * multiple of the heartbeat, and no warning at the end. */
    new_table();
    if (!migrate_ok())
        return;
    run_db(&r, "--name", "nightly", "migrate", NULL);
    ASSERT_CODE(r, 0);
    result_free(&r);
    run_db(&r, "--name", "nightly", "run", "--no-wait", "--min-hold", "5m", "--", "true", NULL);
    ASSERT_CODE(r, 0);
    CU_ASSERT(r.ms < 5000);
    if (strstr(r.err, "warn") != NULL)
        fprintf(stderr, "\n  stderr: %s\n", r.err);
    CU_ASSERT_PTR_NULL(strstr(r.err, "warn"));
    result_free(&r);
    run_db(&r, "--name", "nightly", "status", "--json", NULL);
    ASSERT_CONTAINS(r.out, "\"held\":true");
    CU_ASSERT_EQUAL(json_int(r.out, "expires_at_ms"), json_int(r.out, "acquired_at_ms") + 300000);
    result_free(&r);

    snprintf(log, sizeof log, "%s/run.%d.log", g_dir, ++g_seq);
    snprintf(pidfile, sizeof pidfile, "%s/sleep.%d.pid", g_dir, g_seq);
    snprintf(script, sizeof script, "echo $$ > '%s'; exec sleep 60", pidfile);
    holder = start_bg(log, "--owner", "holder", "run", "--", "sh", "-c", script, NULL);
    CU_ASSERT_FATAL(holder > 0);
    sleep_pid = read_pid_file(pidfile, 15000);
    CU_ASSERT(sleep_pid > 0);
    CU_ASSERT_EQUAL(stop_bg(holder, SIGTERM, 15000), 128 + SIGTERM);
    CU_ASSERT(sleep_pid > 0 && await_pid_gone(sleep_pid, 2000));
    run_db(&r, "status", "--json", NULL);
    ASSERT_CONTAINS(r.out, "\"held\":false");
    result_free(&r);
    kill_all_bg();
}

/* supervise restarts a CMD that exits while the lease is held, with a
 * backoff starting at 1 s. */
static void test_supervise_restarts(void)
{
    char log[1100], count[1100], script[1300];
    int64_t deadline;
    int lines = 0;
    pid_t sup;
    long long seed;
    char want[64];

    new_table();
    if (!migrate_ok())
        return;
    seed = token_now();
    snprintf(log, sizeof log, "%s/sup.%d.log", g_dir, ++g_seq);
    snprintf(count, sizeof count, "%s/count.%d", g_dir, g_seq);
    snprintf(script, sizeof script, "echo $SQLEASE_TOKEN >> '%s'", count);
    sup = start_bg(log, "supervise", "--", "sh", "-c", script, NULL);
    CU_ASSERT_FATAL(sup > 0);
    deadline = sqle_mono_ms() + 10000;
    while (sqle_mono_ms() < deadline && lines < 2) {
        char *s = slurp(count);
        lines = 0;
        for (char *p = s; p != NULL && *p; p++)
            lines += *p == '\n';
        free(s);
        sqle_sleep_ms(50);
    }
    CU_ASSERT(lines >= 2);
    CU_ASSERT_EQUAL(stop_bg(sup, SIGTERM, 15000), 0);
    {
        char *s = slurp(log);
        ASSERT_CONTAINS(s, "restarting in 1000 ms");
        snprintf(want, sizeof want, "token %lld)", seed + 1);
        ASSERT_CONTAINS(s, want);
        free(s);
    }
    kill_all_bg();
}

/* ---- input checks, descriptors, inherited signal state --------------- */

/* A lease name or owner the database would refuse or confuse, a table
 * that is a reserved word, an unknown dialect: usage errors (64) naming
 * the field, before anything is run. */
static void test_bad_input_exits_64(void)
{
    static const struct {
        const char *args[8];
        const char *want;
    } cases[] = {
        {{"--name", "job\xff", "run", "--no-wait", "--", "true"}, "lease name is not valid UTF-8"},
        {{"--name", "job ", "run", "--no-wait", "--", "true"}, "lease name 'job ' ends"},
        {{"--name", " job", "run", "--no-wait", "--", "true"}, "lease name ' job' starts"},
        {{"--owner", "\t", "run", "--no-wait", "--", "true"}, "owner id contains a control"},
        {{"--name", "   ", "status"}, "lease name is only white space"},
        {{"--owner", "h\xc3", "supervise", "--", "true"}, "owner id is not valid UTF-8"},
        {{"--table", "order", "migrate"}, "'order' is a reserved word"},
        {{"--table", "app.User", "status"}, "'User' is a reserved word"},
        {{"--table", "Select", "run", "--no-wait", "--", "true"}, "'Select' is a reserved word"},
        {{"--dialect", "bogus", "status"}, "unknown dialect 'bogus'"},
    };

    new_table();
    if (!migrate_ok())
        return;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *const *a = cases[i].args;
        result r;

        run_db(&r, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], NULL);
        if (r.code != 64)
            fprintf(stderr, "\n  case %zu (%s %s): exit %d, stderr: %s\n", i, a[0], a[2],
                    r.code, r.err);
        CU_ASSERT_EQUAL(r.code, 64);
        ASSERT_CONTAINS(r.err, cases[i].want);
        result_free(&r);
    }
    /* Nothing ran, nothing was taken. */
    {
        result r;
        run_db(&r, "status", "--json", NULL);
        ASSERT_CONTAINS(r.out, "\"held\":false");
        ASSERT_CONTAINS(r.out, "\"owner\":\"\"");
        result_free(&r);
    }
}

/* The descriptors open in a process: a bit set of 0..62 (bit 63 for any
 * higher one), -1 if they cannot be listed. */
static long long fds_of(long pid)
{
    char path[64];
    DIR *d;
    struct dirent *e;
    long long set = 0;

    snprintf(path, sizeof path, "/proc/%ld/fd", pid);
    d = opendir(path);
    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL) {
        long fd;

        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        fd = strtol(e->d_name, NULL, 10);
        set |= 1LL << (fd < 63 ? fd : 63);
    }
    closedir(d);
    return set;
}

/* Print what each descriptor of pid above 2 is (for a failure message). */
static void show_fds(long pid)
{
    char path[64], target[256];

    for (int fd = 3; fd < 64; fd++) {
        ssize_t n;
        snprintf(path, sizeof path, "/proc/%ld/fd/%d", pid, fd);
        n = readlink(path, target, sizeof target - 1);
        if (n > 0) {
            target[n] = '\0';
            fprintf(stderr, "  fd %d -> %s\n", fd, target);
        }
    }
}

static int comm_is(long pid, const char *name)
{
    char path[64], buf[64];
    FILE *f;
    size_t n = 0;

    snprintf(path, sizeof path, "/proc/%ld/comm", pid);
    f = fopen(path, "r");
    if (f != NULL) {
        n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
    if (n > 0 && buf[n - 1] == '\n')
        buf[n - 1] = '\0';
    return strcmp(buf, name) == 0;
}

/* CMD gets none of sqlease's descriptors: not its database connection
 * (Connector/ODBC opens its socket without close-on-exec; run this under
 * ci/mariadb.sh too), not one sqlease itself inherited. */
static void test_cmd_inherits_no_fd(void)
{
    char log[1100], pidfile[1100], script[1300], leak_path[1100];
    long cmd_pid = 0;
    long long cmd_fds = -1, own_fds;
    int64_t until;
    int leaked;
    pid_t holder;

    new_table();
    if (!migrate_ok())
        return;
    snprintf(log, sizeof log, "%s/run.%d.log", g_dir, ++g_seq);
    snprintf(pidfile, sizeof pidfile, "%s/cmd.%d.pid", g_dir, g_seq);
    snprintf(leak_path, sizeof leak_path, "%s/leak.%d", g_dir, g_seq);
    snprintf(script, sizeof script, "echo $$ > '%s'; exec sleep 60", pidfile);
    leaked = open(leak_path, O_WRONLY | O_CREAT, 0600); /* no O_CLOEXEC, on purpose */
    CU_ASSERT_FATAL(leaked > 2 && leaked < 63);
    holder = start_bg(log, "run", "--", "sh", "-c", script, NULL);
    close(leaked);
    CU_ASSERT_FATAL(holder > 0);
    cmd_pid = read_pid_file(pidfile, 15000);
    CU_ASSERT(cmd_pid > 0);
    /* After the exec, only what the exec kept is open. The kernel renames
     * the process before it closes the close-on-exec descriptors of the
     * shell, so a read just after the rename can still see one of those:
     * read until the set is the expected one or a second has passed. A
     * descriptor that leaked through the exec stays open in sleep, and
     * still fails the test. */
    until = sqle_mono_ms() + 5000;
    while (cmd_pid > 0 && !comm_is(cmd_pid, "sleep") && sqle_mono_ms() < until)
        sqle_sleep_ms(5);
    until = sqle_mono_ms() + 1000;
    while (cmd_pid > 0) {
        cmd_fds = fds_of(cmd_pid);
        if (cmd_fds == 0x7 || sqle_mono_ms() >= until)
            break;
        sqle_sleep_ms(5);
    }
    own_fds = fds_of((long)holder);
    /* The test means something only if sqlease itself has the leaked
     * descriptor (and, on a server, its connection) open. */
    CU_ASSERT(own_fds > 0 && (own_fds & (1LL << leaked)) != 0);
    if (cmd_fds != 0x7) {
        fprintf(stderr, "\n  CMD's descriptors: %#llx (want 0x7); sqlease's: %#llx\n", cmd_fds,
                own_fds);
        if (cmd_pid > 0)
            show_fds(cmd_pid);
    }
    CU_ASSERT_EQUAL(cmd_fds, 0x7);
    CU_ASSERT_EQUAL(stop_bg(holder, SIGTERM, 15000), 128 + SIGTERM);
    CU_ASSERT(cmd_pid > 0 && await_pid_gone(cmd_pid, 2000));
    kill_all_bg();
}

static void close_stdin(void)
{
    close(0);
}

/* Started with stdin closed, sqlease must not let the next thing it opens
 * (its database) become CMD's stdin: CMD gets /dev/null there. */
static void test_closed_stdin(void)
{
    char log[1100], pidfile[1100], script[1300], path[64], target[256] = "";
    long cmd_pid;
    pid_t holder;
    ssize_t n;

    new_table();
    if (!migrate_ok())
        return;
    snprintf(log, sizeof log, "%s/run.%d.log", g_dir, ++g_seq);
    snprintf(pidfile, sizeof pidfile, "%s/cmd.%d.pid", g_dir, g_seq);
    snprintf(script, sizeof script, "echo $$ > '%s'; exec sleep 60", pidfile);
    g_pre_exec = close_stdin;
    holder = start_bg(log, "run", "--", "sh", "-c", script, NULL);
    g_pre_exec = NULL;
    CU_ASSERT_FATAL(holder > 0);
    cmd_pid = read_pid_file(pidfile, 15000);
    CU_ASSERT(cmd_pid > 0);
    snprintf(path, sizeof path, "/proc/%ld/fd/0", cmd_pid);
    n = readlink(path, target, sizeof target - 1);
    if (n > 0)
        target[n] = '\0';
    if (strcmp(target, "/dev/null") != 0)
        fprintf(stderr, "\n  CMD's stdin is '%s'\n", target);
    CU_ASSERT_STRING_EQUAL(target, "/dev/null");
    CU_ASSERT_EQUAL(stop_bg(holder, SIGTERM, 15000), 128 + SIGTERM);
    kill_all_bg();
}

/* What a careless parent leaves across exec: SIGCHLD ignored (the kernel
 * then discards CMD's exit status) and every signal blocked (SIGTERM
 * would never reach sqlease's handler). */
static void careless_parent(void)
{
    sigset_t all;

    signal(SIGCHLD, SIG_IGN);
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
}

static void test_inherited_signal_state(void)
{
    char log[1100], pidfile[1100], script[1300];
    long cmd_pid;
    pid_t holder;
    result r;

    new_table();
    if (!migrate_ok())
        return;
    g_pre_exec = careless_parent;
    run_db(&r, "run", "--", "sh", "-c", "exit 3", NULL);
    g_pre_exec = NULL;
    ASSERT_CODE(r, 3);
    result_free(&r);

    snprintf(log, sizeof log, "%s/run.%d.log", g_dir, ++g_seq);
    snprintf(pidfile, sizeof pidfile, "%s/cmd.%d.pid", g_dir, g_seq);
    snprintf(script, sizeof script, "echo $$ > '%s'; exec sleep 60", pidfile);
    g_pre_exec = careless_parent;
    holder = start_bg(log, "run", "--", "sh", "-c", script, NULL);
    g_pre_exec = NULL;
    CU_ASSERT_FATAL(holder > 0);
    cmd_pid = read_pid_file(pidfile, 15000);
    CU_ASSERT(cmd_pid > 0);
    CU_ASSERT_EQUAL(stop_bg(holder, SIGTERM, 15000), 128 + SIGTERM);
    CU_ASSERT(cmd_pid > 0 && await_pid_gone(cmd_pid, 2000));
    run_db(&r, "status", "--json", NULL);
    ASSERT_CONTAINS(r.out, "\"held\":false");
    result_free(&r);
    kill_all_bg();
}

/* ---- waiting, giving up, quiet losers ------------------------------ */

/* A holder for the tests below: supervise with the default timing
 * (nothing expires during a test) as `owner`.  Returns its pid once it
 * holds the lease, or -1. */
static pid_t start_holder(char *log, size_t cap, const char *owner)
{
    pid_t pid;

    snprintf(log, cap, "%s/holder.%d.log", g_dir, ++g_seq);
    pid = start_bg(log, "--owner", owner, "supervise", "--", "sleep", "60", NULL);
    if (pid > 0 && !await_held_by(owner, 15000)) {
        show_log("holder", log);
        return -1;
    }
    return pid;
}

/* run --timeout D waits at most D from its start, then gives up with the
 * conflict code; a holder that lets go during the wait lets CMD run. */
static void test_run_timeout(void)
{
    char log[1100], runlog[1100];
    pid_t holder, waiter;
    result r;
    int code;

    new_table();
    if (!migrate_ok())
        return;
    holder = start_holder(log, sizeof log, "other");
    CU_ASSERT_FATAL(holder > 0);

    run_db(&r, "--retry", "250ms", "run", "--timeout", "1s", "--", "sh", "-c", "echo ran",
           NULL);
    ASSERT_CODE(r, 75);
    if (r.ms < 1000 || r.ms >= 1000 + 250 + 1000)
        fprintf(stderr, "\n  run --timeout 1s took %lld ms\n", (long long)r.ms);
    CU_ASSERT(r.ms >= 1000);
    CU_ASSERT(r.ms < 1000 + 250 + 1000);
    CU_ASSERT_STRING_EQUAL(r.out, "");
    ASSERT_CONTAINS(r.err, "held by other");
    ASSERT_CONTAINS(r.err, "gave up after");
    CU_ASSERT_EQUAL(count_of(r.err, "\n"), 1);
    result_free(&r);

    /* --timeout 0s is --no-wait; the two together are a usage error. */
    run_db(&r, "run", "--timeout", "0s", "--", "true", NULL);
    ASSERT_CODE(r, 75);
    CU_ASSERT(r.ms < 5000);
    result_free(&r);
    run_db(&r, "run", "--no-wait", "--timeout", "1s", "--", "true", NULL);
    ASSERT_CODE(r, 64);
    ASSERT_CONTAINS(r.err, "--timeout");
    result_free(&r);

    snprintf(runlog, sizeof runlog, "%s/run.%d.log", g_dir, ++g_seq);
    waiter = start_bg(runlog, "-v", "--retry", "250ms", "--owner", "waiter", "run", "--timeout",
                      "30s", "--", "sh", "-c", "echo token=$SQLEASE_TOKEN", NULL);
    CU_ASSERT_FATAL(waiter > 0);
    CU_ASSERT(await_file_has(runlog, "held by another owner; waiting", 15000));
    CU_ASSERT_EQUAL(stop_bg(holder, SIGTERM, 15000), 0);
    code = wait_pid(waiter, 15000);
    forget_bg(waiter);
    CU_ASSERT_EQUAL(code, 0);
    if (code != 0)
        show_log("waiting run", runlog);
    CU_ASSERT(await_file_has(runlog, "token=", 1000));
    kill_all_bg();
}

/* --conflict-exit-code N is the exit code when the lease is not
 * obtained; a lease lost while CMD ran is still 75. */
static void test_conflict_exit_code(void)
{
    static const char *const bad[] = {"256", "-1", "x", "", "7 ", "1e2"};
    char log[1100], pidfile[1100], script[1300];
    pid_t holder, victim;
    long sleep_pid;
    result r;
    int code;

    new_table();
    if (!migrate_ok())
        return;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run_db(&r, "run", "--no-wait", "--conflict-exit-code", bad[i], "--", "true", NULL);
        ASSERT_CODE(r, 64);
        ASSERT_CONTAINS(r.err, "--conflict-exit-code");
        result_free(&r);
    }
    holder = start_holder(log, sizeof log, "other");
    CU_ASSERT_FATAL(holder > 0);
    run_db(&r, "run", "--no-wait", "--conflict-exit-code", "3", "--", "true", NULL);
    ASSERT_CODE(r, 3);
    result_free(&r);
    run_db(&r, "--retry", "250ms", "run", "--timeout", "500ms", "--conflict-exit-code=0", "--",
           "true", NULL);
    ASSERT_CODE(r, 0);
    CU_ASSERT(r.ms >= 500);
    result_free(&r);
    CU_ASSERT_EQUAL(stop_bg(holder, SIGTERM, 15000), 0);

    snprintf(log, sizeof log, "%s/run.%d.log", g_dir, ++g_seq);
    snprintf(pidfile, sizeof pidfile, "%s/sleep.%d.pid", g_dir, g_seq);
    snprintf(script, sizeof script, "echo $$ > '%s'; exec sleep 60", pidfile);
    victim = start_bg(log, "--owner", "victim", "--ttl", "4s", "--heartbeat", "500ms",
                      "--renew-deadline", "2s", "--retry", "500ms", "run",
                      "--conflict-exit-code", "3", "--", "sh", "-c", script, NULL);
    CU_ASSERT_FATAL(victim > 0);
    CU_ASSERT(await_held_by("victim", 15000));
    sleep_pid = read_pid_file(pidfile, 5000);
    CU_ASSERT(sleep_pid > 0);
    run_db(&r, "release", "--force", NULL);
    ASSERT_CODE(r, 0);
    result_free(&r);
    code = wait_pid(victim, 15000);
    forget_bg(victim);
    CU_ASSERT_EQUAL(code, 75);
    CU_ASSERT(sleep_pid > 0 && await_pid_gone(sleep_pid, 2000));
    kill_all_bg();
}

/* With -q, a run that did not get the lease prints nothing at all (cron
 * mails whatever a job prints); errors still print. */
static void test_quiet_loser(void)
{
    char log[1100];
    pid_t holder;
    result r;

    new_table();
    if (!migrate_ok())
        return;
    holder = start_holder(log, sizeof log, "other");
    CU_ASSERT_FATAL(holder > 0);
    run_db(&r, "-q", "run", "--no-wait", "--", "echo", "ran", NULL);
    ASSERT_CODE(r, 75);
    CU_ASSERT_STRING_EQUAL(r.out, "");
    CU_ASSERT_STRING_EQUAL(r.err, "");
    result_free(&r);
    run_db(&r, "-q", "--retry", "250ms", "run", "--timeout", "500ms", "--conflict-exit-code",
           "0", "--", "echo", "ran", NULL);
    ASSERT_CODE(r, 0);
    CU_ASSERT_STRING_EQUAL(r.out, "");
    CU_ASSERT_STRING_EQUAL(r.err, "");
    result_free(&r);
    /* Errors are not a lost race: they print. */
    run_raw(&r, "-q", "--dsn", "Driver=SQLite3;Database=/nonexistent-dir/x.db", "run",
            "--no-wait", "--", "true", NULL);
    ASSERT_CODE(r, 69);
    ASSERT_CONTAINS(r.err, "cannot connect");
    result_free(&r);
    run_db(&r, "-q", "run", "--bogus", "--", "true", NULL);
    ASSERT_CODE(r, 64);
    ASSERT_CONTAINS(r.err, "--bogus");
    result_free(&r);
    CU_ASSERT_EQUAL(stop_bg(holder, SIGTERM, 15000), 0);
    run_db(&r, "-q", "run", "--no-wait", "--", "/nonexistent/cmd", NULL);
    ASSERT_CODE(r, 127);
    ASSERT_CONTAINS(r.err, "/nonexistent/cmd");
    result_free(&r);
    kill_all_bg();
}

/* ---- the metrics file ---------------------------------------------- */

static const char *const metric_names[8] = {
    "sqlease_lease_held", "sqlease_lease_token", "sqlease_lease_deadline_seconds",
    "sqlease_last_contact_seconds", "sqlease_statements_total", "sqlease_takes_total",
    "sqlease_losses_total", "sqlease_renew_failures_total"};
enum { M_HELD, M_TOKEN, M_DEADLINE, M_CONTACT, M_STATEMENTS, M_TAKES, M_LOSSES, M_RENEW_FAIL };

/* Parse a metrics file: every metric with its HELP line, its TYPE
 * (counter for *_total, else gauge) and one sample carrying `labels`,
 * whose value goes to values[i].  Returns 1 if all of it is there, 0 if
 * not (a partial or missing file). */
static int parse_metrics(const char *text, const char *labels, double values[8])
{
    size_t n = text != NULL ? strlen(text) : 0;

    if (n == 0 || text[n - 1] != '\n')
        return 0;
    for (int i = 0; i < 8; i++) {
        const char *name = metric_names[i];
        size_t len = strlen(name);
        int counter = len > 6 && strcmp(name + len - 6, "_total") == 0;
        char want[1400];
        const char *p;
        char *end;

        snprintf(want, sizeof want, "# HELP %s ", name);
        p = strstr(text, want);
        if (p == NULL || (p != text && p[-1] != '\n'))
            return 0;
        snprintf(want, sizeof want, "\n# TYPE %s %s\n", name, counter ? "counter" : "gauge");
        if (strstr(text, want) == NULL)
            return 0;
        snprintf(want, sizeof want, "\n%s{%s} ", name, labels);
        p = strstr(text, want);
        if (p == NULL)
            return 0;
        values[i] = strtod(p + strlen(want), &end);
        if (end == p + strlen(want) || *end != '\n')
            return 0;
    }
    return 1;
}

/* Wait until the metrics file parses and cond(values) holds. */
static int await_metrics(const char *path, const char *labels, double values[8],
                         int (*cond)(const double *), int64_t timeout_ms)
{
    int64_t deadline = sqle_mono_ms() + timeout_ms;

    for (;;) {
        char *text = slurp(path);
        int ok = parse_metrics(text, labels, values) && cond(values);
        free(text);
        if (ok)
            return 1;
        if (sqle_mono_ms() >= deadline)
            return 0;
        sqle_sleep_ms(20);
    }
}

static int m_held(const double *v) { return v[M_HELD] == 1; }
static int m_lost(const double *v) { return v[M_LOSSES] >= 1; }
static int m_retaken(const double *v) { return v[M_HELD] == 1 && v[M_TAKES] >= 2; }

static void test_metrics_file(void)
{
    static const char labels[] = "name=\"scheduler\",owner=\"m\\\"e\\\\t\"";
    char log[1100], path[1100], base[64];
    double v[8];
    int64_t until;
    int reads = 0, partial = 0, changes = 0;
    char *prev = NULL;
    pid_t sup;
    result r;
    DIR *d;
    struct dirent *e;

    new_table();
    if (!migrate_ok())
        return;
    snprintf(log, sizeof log, "%s/sup.%d.log", g_dir, ++g_seq);
    snprintf(base, sizeof base, "lease.%d.prom", g_seq);
    snprintf(path, sizeof path, "%s/%s", g_dir, base);
    /* The owner has a quote and a backslash: the labels escape them. */
    sup = start_bg(log, "--owner", "m\"e\\t", "--ttl", "2s", "--heartbeat", "100ms",
                   "--renew-deadline", "1s", "--retry", "100ms", "supervise", "--metrics-file",
                   path, "--", "sleep", "60", NULL);
    CU_ASSERT_FATAL(sup > 0);
    if (!await_metrics(path, labels, v, m_held, 15000)) {
        char *text = slurp(path);
        fprintf(stderr, "\n  metrics file: %s\n", text);
        free(text);
        show_log("supervise", log);
        CU_FAIL("the metrics file never said held");
        kill_all_bg();
        return;
    }
    run_db(&r, "status", "--json", NULL);
    CU_ASSERT_EQUAL((long long)v[M_TOKEN], json_int(r.out, "token"));
    result_free(&r);
    CU_ASSERT(v[M_TOKEN] > 0);
    CU_ASSERT_EQUAL(v[M_TAKES], 1);
    CU_ASSERT_EQUAL(v[M_LOSSES], 0);
    CU_ASSERT_EQUAL(v[M_RENEW_FAIL], 0);
    CU_ASSERT(v[M_STATEMENTS] >= 1);
    CU_ASSERT(v[M_DEADLINE] > 0 && v[M_DEADLINE] <= 1.0);
    CU_ASSERT(v[M_CONTACT] >= 0 && v[M_CONTACT] < 1.0);

    /* Read it as fast as we can while it is rewritten: never a partial
     * file, and it does change. */
    until = sqle_mono_ms() + 1500;
    while (sqle_mono_ms() < until) {
        char *text = slurp(path);
        reads++;
        if (!parse_metrics(text, labels, v)) {
            if (partial++ == 0)
                fprintf(stderr, "\n  partial metrics file: '%s'\n", text ? text : "(null)");
        }
        if (text != NULL && (prev == NULL || strcmp(prev, text) != 0))
            changes++;
        free(prev);
        prev = text;
    }
    free(prev);
    CU_ASSERT_EQUAL(partial, 0);
    CU_ASSERT(reads > 100);
    CU_ASSERT(changes >= 3);

    /* A loss: counted, then the lease is taken again (nobody else wants
     * it), with a new token. */
    run_db(&r, "release", "--force", NULL);
    ASSERT_CODE(r, 0);
    result_free(&r);
    CU_ASSERT(await_metrics(path, labels, v, m_lost, 15000));
    CU_ASSERT_EQUAL(v[M_LOSSES], 1);
    CU_ASSERT(await_metrics(path, labels, v, m_retaken, 15000));
    CU_ASSERT_EQUAL(v[M_TAKES], 2);

    /* Gone once supervise has exited, and no temporary file left. */
    CU_ASSERT_EQUAL(stop_bg(sup, SIGTERM, 15000), 0);
    CU_ASSERT(access(path, F_OK) != 0 && errno == ENOENT);
    d = opendir(g_dir);
    while (d != NULL && (e = readdir(d)) != NULL)
        if (strncmp(e->d_name, base, strlen(base)) == 0) {
            fprintf(stderr, "\n  left behind: %s\n", e->d_name);
            CU_FAIL("a metrics file was left behind");
        }
    if (d != NULL)
        closedir(d);

    /* run: the file exists while CMD runs (CMD reads it), not after. */
    run_db(&r, "--owner", "runner", "run", "--metrics-file", path, "--", "cat", path, NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, "sqlease_lease_held{name=\"scheduler\",owner=\"runner\"} 1\n");
    CU_ASSERT(access(path, F_OK) != 0);
    result_free(&r);
    /* A name the textfile collector would not read; a directory that is
     * not there. */
    run_db(&r, "run", "--metrics-file", "lease.txt", "--", "true", NULL);
    ASSERT_CODE(r, 64);
    ASSERT_CONTAINS(r.err, ".prom");
    result_free(&r);
    run_db(&r, "supervise", "--metrics-file", "/nonexistent-dir/x.prom", "--", "true", NULL);
    ASSERT_CODE(r, 73);
    ASSERT_CONTAINS(r.err, "/nonexistent-dir/x.prom");
    result_free(&r);
    kill_all_bg();
}

/* ---- systemd ------------------------------------------------------- */

/* A datagram socket where a service manager's would be: a path, or
 * "@name" in the abstract namespace.  Returns the descriptor, or -1. */
static int notify_socket(const char *addr)
{
    struct sockaddr_un sa;
    size_t n = strlen(addr);
    int fd;

    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    if (n >= sizeof sa.sun_path)
        return -1;
    memcpy(sa.sun_path, addr, n);
    if (addr[0] == '@')
        sa.sun_path[0] = '\0';
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (bind(fd, (struct sockaddr *)&sa,
             (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (addr[0] == '/'))) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Read messages into buf (each followed by "|") until one contains
 * needle (or one already did). */
static int notify_await(int fd, char *buf, size_t cap, const char *needle, int64_t timeout_ms)
{
    int64_t deadline = sqle_mono_ms() + timeout_ms;

    for (;;) {
        char msg[1024];
        struct pollfd p;
        int64_t left;
        ssize_t n;

        if (strstr(buf, needle) != NULL)
            return 1;
        left = deadline - sqle_mono_ms();
        if (left <= 0)
            return 0;
        p.fd = fd;
        p.events = POLLIN;
        if (poll(&p, 1, (int)left) <= 0)
            continue;
        n = recv(fd, msg, sizeof msg - 1, 0);
        if (n < 0)
            continue;
        msg[n] = '\0';
        if (strlen(buf) + (size_t)n + 2 < cap) {
            strcat(buf, msg);
            strcat(buf, "|");
        }
    }
}

/* Under systemd (Type=notify), supervise says READY=1 once contending,
 * which instance holds (STATUS=), and STOPPING=1; CMD does not inherit
 * NOTIFY_SOCKET. */
static void test_systemd_notify(void)
{
    char sock_a[1100], sock_b[128], env_a[1200], env_b[200], log_a[1100], log_b[1100];
    char nsfile[1100], script[1300], want[128];
    char buf_a[8192] = "", buf_b[8192] = "";
    const char *ea[2] = {env_a, NULL}, *eb[2] = {env_b, NULL};
    pid_t a, b;
    int fa, fb, code;
    result r;
    long long token;

    new_table();
    if (!migrate_ok())
        return;
    snprintf(sock_a, sizeof sock_a, "%s/notify.%d", g_dir, ++g_seq);
    snprintf(sock_b, sizeof sock_b, "@sqlease-test-%ld-%d", (long)getpid(), g_seq);
    fa = notify_socket(sock_a);
    fb = notify_socket(sock_b);
    CU_ASSERT_FATAL(fa >= 0 && fb >= 0);
    snprintf(env_a, sizeof env_a, "NOTIFY_SOCKET=%s", sock_a);
    snprintf(env_b, sizeof env_b, "NOTIFY_SOCKET=%s", sock_b);
    snprintf(log_a, sizeof log_a, "%s/sup-a.%d.log", g_dir, g_seq);
    snprintf(log_b, sizeof log_b, "%s/sup-b.%d.log", g_dir, g_seq);
    snprintf(nsfile, sizeof nsfile, "%s/ns.%d", g_dir, g_seq);
    snprintf(script, sizeof script, "echo ns=${NOTIFY_SOCKET-unset} > '%s'; exec sleep 60",
             nsfile);

    a = start_bg_env(log_a, ea, "--owner", "host-a", "supervise", "--", "sh", "-c", script,
                     NULL);
    CU_ASSERT_FATAL(a > 0);
    CU_ASSERT(notify_await(fa, buf_a, sizeof buf_a, "READY=1", 15000));
    run_db(&r, "status", "--json", NULL);
    token = json_int(r.out, "token");
    result_free(&r);
    snprintf(want, sizeof want, "STATUS=holding, token %lld|", token);
    CU_ASSERT(notify_await(fa, buf_a, sizeof buf_a, want, 5000));
    CU_ASSERT(await_file_has(nsfile, "ns=unset\n", 5000));

    b = start_bg_env(log_b, eb, "--owner", "host-b", "--retry", "250ms", "supervise", "--",
                     "sleep", "60", NULL);
    CU_ASSERT_FATAL(b > 0);
    CU_ASSERT(notify_await(fb, buf_b, sizeof buf_b, "READY=1", 15000));
    CU_ASSERT(notify_await(fb, buf_b, sizeof buf_b, "STATUS=standby, held by host-a|", 5000));

    code = stop_bg(a, SIGTERM, 15000);
    CU_ASSERT_EQUAL(code, 0);
    if (code != 0) {
        fprintf(stderr, "\n  supervise a exited %d\n", code);
        show_log("supervise a", log_a);
    }
    CU_ASSERT(notify_await(fa, buf_a, sizeof buf_a, "STOPPING=1", 1000));
    snprintf(want, sizeof want, "STATUS=holding, token %lld|", token + 1);
    CU_ASSERT(notify_await(fb, buf_b, sizeof buf_b, want, 15000));
    code = stop_bg(b, SIGTERM, 15000);
    CU_ASSERT_EQUAL(code, 0);
    if (code != 0) {
        fprintf(stderr, "\n  supervise b exited %d\n", code);
        show_log("supervise b", log_b);
    }
    CU_ASSERT(notify_await(fb, buf_b, sizeof buf_b, "STOPPING=1", 1000));
    if (strstr(buf_b, "STOPPING=1") == NULL || strstr(buf_a, "READY=1") == NULL)
        fprintf(stderr, "\n  a got: %s\n  b got: %s\n", buf_a, buf_b);
    close(fa);
    close(fb);
    unlink(sock_a);
    kill_all_bg();
}

/* supervise started while its database is away keeps trying (each
 * failure logged once), and contends once it answers; migrate and run
 * still fail at once, and a missing table ends supervise at once. */
static void test_supervise_waits_for_database(void)
{
    char dir[1100], tmpdir[1200], db[1200], dsn[1300], tmpdsn[1300], sock[1100], env[1200];
    char log[1100], buf[8192] = "", path[1300];
    const char *envv[2] = {env, NULL};
    char *text;
    pid_t sup;
    result r;
    int fd, code;

    new_table();
    snprintf(dir, sizeof dir, "%s/later.%d", g_dir, ++g_seq);
    snprintf(tmpdir, sizeof tmpdir, "%s.tmp", dir);
    snprintf(db, sizeof db, "%s/t.db", dir);
    snprintf(dsn, sizeof dsn, "Driver=SQLite3;Database=%s", db);
    snprintf(tmpdsn, sizeof tmpdsn, "Driver=SQLite3;Database=%s/t.db", tmpdir);
    snprintf(sock, sizeof sock, "%s/notify.%d", g_dir, g_seq);
    snprintf(env, sizeof env, "NOTIFY_SOCKET=%s", sock);
    snprintf(log, sizeof log, "%s/sup.%d.log", g_dir, g_seq);
    fd = notify_socket(sock);
    CU_ASSERT_FATAL(fd >= 0);

    run_raw(&r, "--dsn", dsn, "--table", g_table, "migrate", NULL);
    ASSERT_CODE(r, 69);
    CU_ASSERT(r.ms < 10000);
    result_free(&r);

    sup = start_bg_raw_env(log, envv, "-v", "--dsn", dsn, "--table", g_table, "--retry",
                           "200ms", "--login-timeout", "1s", "supervise", "--", "sleep", "60",
                           NULL);
    CU_ASSERT_FATAL(sup > 0);
    CU_ASSERT(notify_await(fd, buf, sizeof buf, "STATUS=database unreachable: cannot connect",
                           15000));
    /* Tried again (the repeat is logged at debug level only). */
    CU_ASSERT(await_file_has(log, "debug: cannot connect", 15000));
    CU_ASSERT(!tu_pid_gone(sup));
    CU_ASSERT_PTR_NULL(strstr(buf, "READY=1"));

    /* The database appears, already migrated (renamed into place, so that
     * supervise never sees it half made). */
    CU_ASSERT_FATAL(mkdir(tmpdir, 0700) == 0);
    run_raw(&r, "--dsn", tmpdsn, "--table", g_table, "migrate", NULL);
    ASSERT_CODE(r, 0);
    result_free(&r);
    CU_ASSERT_FATAL(rename(tmpdir, dir) == 0);
    CU_ASSERT(notify_await(fd, buf, sizeof buf, "READY=1", 15000));
    CU_ASSERT(notify_await(fd, buf, sizeof buf, "STATUS=holding, token ", 5000));
    code = stop_bg(sup, SIGTERM, 15000);
    CU_ASSERT_EQUAL(code, 0);
    if (code != 0) {
        fprintf(stderr, "\n  supervise exited %d\n", code);
        show_log("supervise", log);
    }
    text = slurp(log);
    CU_ASSERT_EQUAL(count_of(text, "error: cannot connect"), 1);
    ASSERT_CONTAINS(text, "connected to '");
    free(text);

    /* A missing table is a broken installation: exit at once. */
    new_table();
    run_raw(&r, "--dsn", dsn, "--table", g_table, "supervise", "--", "true", NULL);
    ASSERT_CODE(r, 69);
    CU_ASSERT(r.ms < 10000);
    ASSERT_CONTAINS(r.err, "migrate");
    result_free(&r);

    close(fd);
    unlink(sock);
    unlink(db);
    snprintf(path, sizeof path, "%s-journal", db);
    unlink(path);
    rmdir(dir);
    kill_all_bg();
}

/* The times (ms of the day, from the log's stamps) of the lines of text
 * that contain needle, into at (at most max).  Returns how many. */
static int stamps_of(const char *text, const char *needle, int64_t *at, int max)
{
    int n = 0;

    for (const char *p = text; p != NULL && *p != '\0' && n < max;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
        char line[2048];
        int h, m, sec, ms;

        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line - 1 ? len : sizeof line - 1),
                 p);
        if (strstr(line, needle) != NULL &&
            sscanf(line, "%*4d-%*2d-%*2dT%2d:%2d:%2d.%3dZ", &h, &m, &sec, &ms) == 4) {
            at[n] = (((int64_t)h * 60 + m) * 60 + sec) * 1000 + ms;
            if (n > 0 && at[n] < at[n - 1])
                at[n] += 86400000; /* past midnight */
            n++;
        }
        p = nl != NULL ? nl + 1 : NULL;
    }
    return n;
}

/* supervise with a database that cannot be reached at start, `ttl` alone
 * given: it tries again every min(2 s, ttl/10), not every 2 s.  Runs it
 * for run_ms and checks the attempts' spacing from the log.  Returns 0
 * if the driver is not installed (nothing checked), else 1. */
static int check_start_retry(const char *dsn, const char *ttl, int64_t want_retry,
                             int64_t run_ms)
{
    char log[1100], want[80];
    int64_t at[64], gap = 0;
    char *text;
    pid_t sup;
    int n, code;

    snprintf(log, sizeof log, "%s/away.%d.log", g_dir, ++g_seq);
    sup = start_bg_raw_env(log, NULL, "-v", "--dsn", dsn, "--table", g_table, "--ttl", ttl,
                           "--login-timeout", "1s", "supervise", "--", "sleep", "60", NULL);
    CU_ASSERT_FATAL(sup > 0);
    sqle_sleep_ms(run_ms);
    code = stop_bg(sup, SIGTERM, 15000);
    text = slurp(log);
    /* The driver is not registered (IM002) or its library is not there
     * (unixODBC: 01000 "Can't open lib"), as under a private odbcinst.ini
     * that lists other drivers only. */
    if (text != NULL && (strstr(text, "IM002") != NULL || strstr(text, "Can't open lib") != NULL)) {
        free(text);
        return 0;
    }
    CU_ASSERT_EQUAL(code, 0);
    snprintf(want, sizeof want, "trying again every %lld ms", (long long)want_retry);
    ASSERT_CONTAINS(text, want);
    n = stamps_of(text, "cannot connect", at, 64);
    for (int i = 1; i < n; i++)
        if (at[i] - at[i - 1] > gap)
            gap = at[i] - at[i - 1];
    /* One attempt at the start, then one per retry (each a few ms). */
    if (n < (int)(run_ms / want_retry) - 2 || gap > want_retry + 250) {
        fprintf(stderr, "\n  %s: %d attempts in %lld ms, longest gap %lld ms (retry %lld)\n",
                dsn, n, (long long)run_ms, (long long)gap, (long long)want_retry);
        show_log("supervise", log);
    }
    CU_ASSERT(n >= (int)(run_ms / want_retry) - 2);
    CU_ASSERT(gap <= want_retry + 250);
    CU_ASSERT(gap >= want_retry - 10);
    free(text);
    return 1;
}

/* A database away at start is tried again at the retry in force: the
 * derived min(2 s, ttl/10) when only the ttl is given, not a fixed 2 s.
 * An SQLite file whose directory is missing, and (if its driver is
 * installed) PostgreSQL on a port where nothing listens. */
static void test_supervise_start_retry_follows_ttl(void)
{
    char dsn[1300];
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    int fd, port = 0;

    new_table();
    snprintf(dsn, sizeof dsn, "Driver=SQLite3;Database=%s/away.%d/t.db", g_dir, ++g_seq);
    CU_ASSERT(check_start_retry(dsn, "3s", 300, 2500) == 1);

    /* A port that was free a moment ago: bound, then closed. */
    fd = socket(AF_INET, SOCK_STREAM, 0);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
        port = ntohs(sa.sin_port);
    if (fd >= 0)
        close(fd);
    CU_ASSERT_FATAL(port > 0);
    snprintf(dsn, sizeof dsn, "Driver=PostgreSQL Unicode;Servername=127.0.0.1;Port=%d;"
             "Database=x;Username=x;Password=x", port);
    (void)check_start_retry(dsn, "4s", 400, 2500);
    kill_all_bg();
}

/* ---- a reader that has gone ---------------------------------------- */

/* Run sqlease with stdout the write end of a pipe (out_fd) and stderr a
 * file; waits up to timeout_ms.  Fills r (r->out is ""). */
static void run_to_fd(result *r, int out_fd, int64_t timeout_ms, ...)
{
    char *argv[MAX_ARGS], err[1100];
    int64_t t0 = sqle_mono_ms();
    va_list ap;
    pid_t pid;

    va_start(ap, timeout_ms);
    build_argv(argv, 1, ap);
    va_end(ap);
    snprintf(err, sizeof err, "%s/err.%d", g_dir, ++g_seq);
    pid = fork();
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || e < 0 || dup2(in, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(e, 2) < 0 ||
            chdir(g_dir) != 0)
            _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    r->code = pid > 0 ? wait_pid(pid, timeout_ms) : -1;
    r->ms = sqle_mono_ms() - t0;
    r->out = strdup("");
    r->err = slurp(err);
    unlink(err);
}

/* stdout a pipe whose reader has gone (`sqlease list | head -0`): every
 * command says "cannot write to standard output" and exits 74, rather
 * than dying by SIGPIPE; status --watch also when its reader goes away
 * while it waits for a change. */
static void test_closed_stdout_pipe(void)
{
    static const char *const cases[][3] = {
        {"list", NULL}, {"list", "--json", NULL}, {"status", NULL},
        {"status", "--json", NULL}, {"status", "--watch", NULL}, {"migrate", NULL},
        {"--help", NULL}, {"status", "--help", NULL},
    };
    int fds[2];
    result r;

    new_table();
    if (!migrate_ok())
        return;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CU_ASSERT_FATAL(pipe(fds) == 0);
        close(fds[0]); /* the reader is gone before sqlease writes */
        run_to_fd(&r, fds[1], 20000, "--retry", "200ms", cases[i][0], cases[i][1], NULL);
        close(fds[1]);
        if (r.code != 74)
            fprintf(stderr, "\n  %s %s: exit %d (128+13: SIGPIPE), stderr: %s\n", cases[i][0],
                    cases[i][1] ? cases[i][1] : "", r.code, r.err);
        CU_ASSERT_EQUAL(r.code, 74);
        ASSERT_CONTAINS(r.err, "sqlease: cannot write to standard output\n");
        CU_ASSERT_EQUAL(count_of(r.err, "cannot write"), 1);
        result_free(&r);
    }

    /* status --watch | head -1: the first line is read, then the reader
     * goes; nothing changes on the lease, yet the watch ends within a
     * retry or so. */
    {
        char line[512];
        ssize_t n;
        pid_t pid;
        int64_t t0;
        int st, code = -1;
        char err[1100];
        char *argv[MAX_ARGS] = {(char *)g_bin, "--dsn", g_dsn, "--table", g_table,
                                "--retry", "200ms", "status", "--watch", NULL};

        snprintf(err, sizeof err, "%s/watch-err.%d", g_dir, ++g_seq);
        CU_ASSERT_FATAL(pipe(fds) == 0);
        pid = fork();
        if (pid == 0) {
            int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            close(fds[0]);
            if (e < 0 || dup2(fds[1], 1) < 0 || dup2(e, 2) < 0)
                _exit(126);
            execv(argv[0], argv);
            _exit(127);
        }
        CU_ASSERT_FATAL(pid > 0);
        close(fds[1]);
        n = read(fds[0], line, sizeof line - 1);
        CU_ASSERT(n > 0);
        if (n > 0) {
            line[n] = '\0';
            CU_ASSERT_PTR_NOT_NULL(strstr(line, "owner:"));
        }
        close(fds[0]);
        t0 = sqle_mono_ms();
        while (sqle_mono_ms() - t0 < 5000) {
            if (waitpid(pid, &st, WNOHANG) == pid) {
                code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                break;
            }
            sqle_sleep_ms(10);
        }
        if (code == -1) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
        }
        CU_ASSERT_EQUAL(code, 74);
        CU_ASSERT(sqle_mono_ms() - t0 < 1500);
        {
            char *text = slurp(err);
            ASSERT_CONTAINS(text, "sqlease: cannot write to standard output\n");
            free(text);
        }
        unlink(err);
    }
}

/* ---- a crash-looping CMD ------------------------------------------- */

/* A host whose CMD fails at once, again and again, gives the lease up
 * and stays out for --crash-pause: a healthy host gets it. */
static void test_crash_loop_gives_up(void)
{
    char bad_log[1100], good_log[1100];
    pid_t bad, good;
    char *text;

    new_table();
    if (!migrate_ok())
        return;
    snprintf(bad_log, sizeof bad_log, "%s/bad.%d.log", g_dir, ++g_seq);
    snprintf(good_log, sizeof good_log, "%s/good.%d.log", g_dir, g_seq);
    bad = start_bg(bad_log, "--owner", "bad", "--ttl", "2s", "--heartbeat", "500ms",
                   "--renew-deadline", "1s", "--retry", "200ms", "supervise", "--crash-limit",
                   "3", "--crash-window", "10s", "--", "false", NULL);
    CU_ASSERT_FATAL(bad > 0);
    CU_ASSERT(await_held_by("bad", 15000));
    good = start_bg(good_log, "--owner", "good", "--ttl", "2s", "--heartbeat", "500ms",
                    "--renew-deadline", "1s", "--retry", "200ms", "supervise", "--", "sleep",
                    "60", NULL);
    CU_ASSERT_FATAL(good > 0);
    /* Three failures (restarts after 1 s and 2 s), then the lease is
     * free within a retry: well inside 15 s. */
    if (!await_held_by("good", 15000)) {
        show_log("crashing supervise", bad_log);
        CU_FAIL("the healthy instance never got the lease");
    }
    CU_ASSERT(await_file_has(bad_log, "staying out of contention for 4000 ms", 1000));
    text = slurp(bad_log);
    ASSERT_CONTAINS(text, "CMD failed 3 times in a row");
    free(text);
    /* After the pause it contends again, as a standby. */
    CU_ASSERT(await_file_has(bad_log, "contending for lease", 15000));
    CU_ASSERT(held_by("good"));
    CU_ASSERT_EQUAL(stop_bg(bad, SIGTERM, 15000), 0);
    CU_ASSERT_EQUAL(stop_bg(good, SIGTERM, 15000), 0);
    kill_all_bg();
}

/* The token CMD run number `run` saw, from "RUN TOKEN" lines; -1 if it
 * has not run. */
static long long token_of_run(const char *text, int run)
{
    char want[32];
    const char *p;

    snprintf(want, sizeof want, "%d ", run);
    for (p = text; p != NULL && *p != '\0'; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, want, strlen(want)) == 0)
            return strtoll(p + strlen(want), NULL, 10);
    return -1;
}

/* After a crash pause, supervise contends again with a new supervisor;
 * when it takes the lease, the next CMD must start under that hold: a
 * new, larger token, and the new hold's fence in SQLEASE_FENCE_SQL (the
 * fence once came from the supervisor the pause had freed).  CMD fails
 * at once twice (--crash-limit 2), then keeps running; supervise exits 0
 * on SIGTERM, not by a signal. */
static void test_crash_pause_then_retake(void)
{
    char log[1100], count[1100], tokens[1100], fences[1100], script[6000], want[64];
    long long t1, t2, t3;
    char *text, *fence;
    pid_t sup;
    int code;

    new_table();
    if (!migrate_ok())
        return;
    snprintf(log, sizeof log, "%s/pause.%d.log", g_dir, ++g_seq);
    snprintf(count, sizeof count, "%s/pause.%d.count", g_dir, g_seq);
    snprintf(tokens, sizeof tokens, "%s/pause.%d.tokens", g_dir, g_seq);
    snprintf(fences, sizeof fences, "%s/pause.%d.fences", g_dir, g_seq);
    snprintf(script, sizeof script,
             "n=$(( $(cat '%s' 2>/dev/null || echo 0) + 1 )); echo $n > '%s'; "
             "echo \"$n $SQLEASE_FENCE_SQL\" >> '%s'; echo \"$n $SQLEASE_TOKEN\" >> '%s'; "
             "[ $n -le 2 ] && exit 3; exec sleep 60",
             count, count, fences, tokens);
    sup = start_bg(log, "--owner", "pauser", "--ttl", "2s", "--heartbeat", "500ms",
                   "--renew-deadline", "1s", "--retry", "200ms", "supervise", "--crash-limit",
                   "2", "--crash-window", "10s", "--crash-pause", "500ms", "--", "sh", "-c",
                   script, NULL);
    CU_ASSERT_FATAL(sup > 0);
    /* Runs 1 and 2 a second apart (the restart backoff), the pause, a
     * take within a retry, run 3: well inside 15 s. */
    if (!await_file_has(tokens, "\n3 ", 15000)) {
        show_log("supervise", log);
        CU_FAIL("no third CMD after the crash pause");
    }
    CU_ASSERT(!tu_pid_gone(sup));
    CU_ASSERT(await_held_by("pauser", 5000));
    text = slurp(tokens);
    t1 = token_of_run(text, 1);
    t2 = token_of_run(text, 2);
    t3 = token_of_run(text, 3);
    free(text);
    CU_ASSERT(t1 > 0);
    CU_ASSERT_EQUAL(t2, t1);   /* restarted under the same hold */
    CU_ASSERT(t3 > t2);        /* a new take after the pause */
    CU_ASSERT_EQUAL(token_now(), t3);
    /* The third CMD's fence is the new hold's. */
    text = slurp(fences);
    fence = text != NULL ? strstr(text, "\n3 ") : NULL;
    CU_ASSERT_PTR_NOT_NULL(fence);
    snprintf(want, sizeof want, "%lld", t3);
    if (fence != NULL) {
        char *eol = strchr(fence + 1, '\n');
        if (eol != NULL)
            *eol = '\0';
        ASSERT_CONTAINS(fence, want);
        ASSERT_CONTAINS(fence, "pauser");
    }
    free(text);
    text = slurp(log);
    ASSERT_CONTAINS(text, "CMD failed 2 times in a row");
    ASSERT_CONTAINS(text, "contending for lease");
    free(text);
    code = stop_bg(sup, SIGTERM, 15000);
    if (code != 0)
        show_log("supervise", log);
    CU_ASSERT_EQUAL(code, 0);
    CU_ASSERT(await_free(5000));
    kill_all_bg();
}

/* ---- log lines ----------------------------------------------------- */

/* Run sqlease with stderr going to a file that exists beforehand, with
 * JOURNAL_STREAM set to that file's device:inode (journal 1) or to
 * something else (journal 0), or unset (journal -1). */
static void run_stderr_journal(result *r, int journal, ...)
{
    char *argv[MAX_ARGS], out[1100], err[1100], env_js[100];
    const char *env[2] = {NULL, NULL};
    struct stat st;
    int64_t t0;
    va_list ap;
    pid_t pid;
    int fd;

    va_start(ap, journal);
    build_argv(argv, 1, ap);
    va_end(ap);
    snprintf(out, sizeof out, "%s/out.%d", g_dir, ++g_seq);
    snprintf(err, sizeof err, "%s/err.%d", g_dir, g_seq);
    fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0 && fstat(fd, &st) == 0) {
        snprintf(env_js, sizeof env_js, "JOURNAL_STREAM=%llu:%llu",
                 (unsigned long long)st.st_dev,
                 (unsigned long long)st.st_ino + (journal == 0 ? 1 : 0));
        if (journal >= 0)
            env[0] = env_js;
    }
    if (fd >= 0)
        close(fd);
    t0 = sqle_mono_ms();
    pid = spawn(argv, env, out, err);
    r->code = pid > 0 ? wait_pid(pid, RUN_TIMEOUT_MS) : -1;
    r->ms = sqle_mono_ms() - t0;
    r->out = slurp(out);
    r->err = slurp(err);
    unlink(out);
    unlink(err);
}

/* Every line of text matches the pattern; returns the number of lines,
 * or -1 at the first that does not. */
static int lines_match(const char *text, const char *pattern)
{
    regex_t re;
    int n = 0;

    if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
        return -1;
    for (const char *p = text; *p != '\0';) {
        const char *nl = strchr(p, '\n');
        size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
        char line[2048];

        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line - 1 ? len : sizeof line - 1),
                 p);
        if (regexec(&re, line, 0, NULL, 0) != 0) {
            fprintf(stderr, "\n  line does not match %s: %s\n", pattern, line);
            n = -1;
            break;
        }
        n++;
        p += len + (nl != NULL);
    }
    regfree(&re);
    return n;
}

/* Log lines start with an RFC 3339 UTC time with milliseconds, except
 * when stderr is the journal (which stamps them; a priority prefix says
 * the level instead). */
static void test_log_timestamps(void)
{
    static const char stamped[] =
        "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z sqlease: "
        "(error|warn|info|debug): ";
    char before[32], after[32];
    struct timespec ts;
    struct tm tm;
    result r;

    new_table();
    if (!migrate_ok())
        return;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(before, sizeof before, "%Y-%m-%dT%H:%M", &tm);
    run_stderr_journal(&r, -1, "-v", "run", "--", "true", NULL);
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(after, sizeof after, "%Y-%m-%dT%H:%M", &tm);
    ASSERT_CODE(r, 0);
    CU_ASSERT(lines_match(r.err, stamped) >= 3);
    /* The time is now (to the minute), in UTC. */
    CU_ASSERT(strncmp(r.err, before, strlen(before)) == 0 ||
              strncmp(r.err, after, strlen(after)) == 0);
    result_free(&r);

    /* JOURNAL_STREAM naming another file: still stamped. */
    run_stderr_journal(&r, 0, "-v", "run", "--", "true", NULL);
    ASSERT_CODE(r, 0);
    CU_ASSERT(lines_match(r.err, stamped) >= 3);
    result_free(&r);

    /* stderr is the journal: no stamp, a syslog priority instead. */
    run_stderr_journal(&r, 1, "-v", "run", "--", "true", NULL);
    ASSERT_CODE(r, 0);
    CU_ASSERT(lines_match(r.err, "^<(3|4|6|7)>sqlease: (error|warn|info|debug): ") >= 3);
    ASSERT_CONTAINS(r.err, "<6>sqlease: info: ");
    ASSERT_CONTAINS(r.err, "<7>sqlease: debug: ");
    result_free(&r);
}

/* ---- saying what happened, once ------------------------------------ */

/* A missing table is said once; an SQLite file locked by another
 * connection is "database is locked", not "did not answer"; a run that
 * never held the lease says nothing about releasing it. */
static void test_messages_said_once(void)
{
    sqlease_db_options o;
    sqlease_db *db = NULL;
    result r;

    new_table();
    run_db(&r, "run", "--", "true", NULL);
    ASSERT_CODE(r, 69);
    ASSERT_CONTAINS(r.err, "does not exist");
    CU_ASSERT_EQUAL(count_of(r.err, "\n"), 1);
    result_free(&r);
    run_db(&r, "supervise", "--", "true", NULL);
    ASSERT_CODE(r, 69);
    ASSERT_CONTAINS(r.err, "does not exist");
    CU_ASSERT_EQUAL(count_of(r.err, "\n"), 1);
    result_free(&r);

    if (g_ext_dsn != NULL)
        return; /* the lock below is SQLite's */
    if (!migrate_ok())
        return;
    sqlease_db_options_init(&o);
    o.conn = g_dsn;
    o.log_level = SQLEASE_LOG_ERROR;
    CU_ASSERT_FATAL(sqlease_db_open(&db, &o, NULL) == SQLEASE_OK);
    CU_ASSERT_FATAL(tu_sql(db, "BEGIN EXCLUSIVE", NULL) == SQLEASE_OK);

    run_db(&r, "--query-timeout", "1s", "run", "--no-wait", "--", "true", NULL);
    ASSERT_CODE(r, 69);
    ASSERT_CONTAINS(r.err, "database is locked");
    ASSERT_CONTAINS(r.err, "holds the SQLite file's write lock");
    CU_ASSERT_PTR_NULL(strstr(r.err, "did not answer"));
    CU_ASSERT_PTR_NULL(strstr(r.err, "release failed"));
    CU_ASSERT_PTR_NULL(strstr(r.err, "expires by itself"));
    CU_ASSERT_EQUAL(count_of(r.err, "\n"), 1);
    result_free(&r);

    /* Waiting: the failure is logged once, however many retries fail. */
    run_db(&r, "--query-timeout", "1s", "--retry", "250ms", "run", "--timeout", "3s", "--",
           "true", NULL);
    ASSERT_CODE(r, 69);
    CU_ASSERT_EQUAL(count_of(r.err, "database is locked"), 1);
    CU_ASSERT_PTR_NULL(strstr(r.err, "release failed"));
    CU_ASSERT_EQUAL(count_of(r.err, "\n"), 2);
    result_free(&r);

    CU_ASSERT(tu_sql(db, "COMMIT", NULL) == SQLEASE_OK);
    sqlease_db_close(db);
    run_db(&r, "run", "--no-wait", "--", "true", NULL);
    ASSERT_CODE(r, 0);
    CU_ASSERT_STRING_EQUAL(r.err, "");
    result_free(&r);
}

/* ---- suite --------------------------------------------------------- */

/* Only flat files are made in the directory: remove each, then it. */
/* ---- the default connection: an SQLite file ------------------------- */

/* 1 if `name` exists in this run's directory. */
static int in_dir(const char *name)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    return access(path, F_OK) == 0;
}

/* Every command but migrate, on an SQLite file that does not exist, says
 * which file (absolute) and exits 69 without creating it; a missing
 * directory is named; migrate creates the file; a NoCreat= of the user's
 * own wins. */
static void test_missing_sqlite_file(void)
{
    static const char *const conn = "--dsn=Driver=SQLite3;Database=missing.db";
    char want[1200], dirconn[1300], want_dir[1200];
    result r;

    snprintf(want, sizeof want, "database file '%s/missing.db' does not exist", g_dir);
    run_raw(&r, conn, "status", NULL);
    ASSERT_CODE(r, 69);
    ASSERT_CONTAINS(r.err, want);
    ASSERT_CONTAINS(r.err, "sqlease migrate");
    result_free(&r);
    CU_ASSERT(!in_dir("missing.db"));
    run_raw(&r, conn, "status", "--json", NULL);
    ASSERT_CODE(r, 69);
    result_free(&r);
    run_raw(&r, conn, "release", "--force", NULL);
    ASSERT_CODE(r, 69);
    ASSERT_CONTAINS(r.err, want);
    result_free(&r);
    run_raw(&r, conn, "run", "--", "true", NULL);
    ASSERT_CODE(r, 69);
    ASSERT_CONTAINS(r.err, want);
    result_free(&r);
    run_raw(&r, conn, "supervise", "--", "true", NULL);
    ASSERT_CODE(r, 69);
    ASSERT_CONTAINS(r.err, want);
    result_free(&r);
    CU_ASSERT(!in_dir("missing.db"));
    /* The default connection: sqlease.db in the current directory. */
    if (!in_dir("sqlease.db")) {
        run_raw(&r, "status", NULL);
        ASSERT_CODE(r, 69);
        snprintf(want, sizeof want, "database file '%s/sqlease.db' does not exist", g_dir);
        ASSERT_CONTAINS(r.err, want);
        result_free(&r);
        CU_ASSERT(!in_dir("sqlease.db"));
    }
    /* A missing directory is named, for migrate too. */
    snprintf(dirconn, sizeof dirconn, "--dsn=Driver=SQLite3;Database=%s/no/such/dir/x.db",
             g_dir);
    snprintf(want_dir, sizeof want_dir, "directory '%s/no/such/dir' does not exist", g_dir);
    run_raw(&r, dirconn, "status", NULL);
    ASSERT_CODE(r, 69);
    ASSERT_CONTAINS(r.err, want_dir);
    result_free(&r);
    run_raw(&r, dirconn, "migrate", NULL);
    ASSERT_CODE(r, 69);
    ASSERT_CONTAINS(r.err, want_dir);
    result_free(&r);
    /* migrate creates the file; then status reads it. */
    run_raw(&r, conn, "migrate", NULL);
    ASSERT_CODE(r, 0);
    result_free(&r);
    CU_ASSERT(in_dir("missing.db"));
    run_raw(&r, conn, "status", "--json", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, "\"held\":false");
    result_free(&r);
    run_raw(&r, conn, "status", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, "owner:      free\n");
    result_free(&r);
    /* The user's own NoCreat= wins: with NoCreat=0 the driver creates the
     * file (empty: no lease table in it). */
    run_raw(&r, "--dsn=Driver=SQLite3;Database=made.db;NoCreat=0", "status", NULL);
    ASSERT_CODE(r, 69);
    ASSERT_CONTAINS(r.err, "migrate");
    result_free(&r);
    CU_ASSERT(in_dir("made.db"));
}

/* Start `sqlite3 FILE` holding an exclusive lock on FILE until killed;
 * returns its pid once the lock is in place (a marker file says so), or
 * -1. */
static pid_t lock_sqlite_file(const char *file)
{
    char marker[1100], shell[1300];
    int64_t deadline;
    pid_t pid;

    snprintf(marker, sizeof marker, "%s/locked.%d", g_dir, ++g_seq);
    snprintf(shell, sizeof shell, ".shell touch '%s' && sleep 30", marker);
    pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
        }
        execlp("sqlite3", "sqlite3", file, "BEGIN EXCLUSIVE;",
               "UPDATE sys_job_lease SET version = version;", shell, "COMMIT;", (char *)NULL);
        fprintf(stderr, "test_cli: cannot run sqlite3 (package sqlite3): %s\n",
                strerror(errno));
        _exit(127);
    }
    if (pid < 0)
        return -1;
    deadline = sqle_mono_ms() + 10000;
    while (access(marker, F_OK) != 0) {
        if (sqle_mono_ms() >= deadline || waitpid(pid, NULL, WNOHANG) == pid) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            return -1;
        }
        sqle_sleep_ms(10);
    }
    return pid;
}

/* The default connection string sets no Timeout=, so SQLite's busy wait
 * follows the query timeout: with another connection holding a write
 * lock on the file, `status` gives up within the query timeout (plus a
 * second), rather than after the driver's own busy timeout, twice. */
static void test_default_conn_bounded_by_query_timeout(void)
{
    result r;
    pid_t locker;

    if (g_ext_dsn != NULL)
        return; /* the default connection is SQLite's */
    run_raw(&r, "migrate", NULL);
    ASSERT_CODE(r, 0);
    result_free(&r);
    {
        char file[1100];
        snprintf(file, sizeof file, "%s/sqlease.db", g_dir);
        locker = lock_sqlite_file(file);
    }
    CU_ASSERT_FATAL(locker > 0);
    run_raw(&r, "--query-timeout", "1s", "status", NULL);
    ASSERT_CODE(r, 69);
    ASSERT_CONTAINS(r.err, "locked");
    /* The message names the lease, and says the lock is another writer's. */
    ASSERT_CONTAINS(r.err, "lease 'scheduler': status failed: ");
    ASSERT_CONTAINS(r.err, "another connection holds the SQLite file's write lock");
    if (r.ms > 2000)
        fprintf(stderr, "\n  status on a locked file took %lld ms\n", (long long)r.ms);
    CU_ASSERT(r.ms <= 2000);
    result_free(&r);
    run_raw(&r, "--query-timeout", "1s", "release", "--force", NULL);
    ASSERT_CODE(r, 69);
    ASSERT_CONTAINS(r.err, "lease 'scheduler': release failed: ");
    result_free(&r);
    run_raw(&r, "--query-timeout", "1s", "list", NULL);
    ASSERT_CODE(r, 69);
    ASSERT_CONTAINS(r.err, "table sys_job_lease: list failed: ");
    ASSERT_CONTAINS(r.err, "write lock");
    result_free(&r);
    run_raw(&r, "--query-timeout", "1s", "--name", "nightly", "run", "--no-wait", "--", "true",
            NULL);
    ASSERT_CODE(r, 69);
    ASSERT_CONTAINS(r.err, "lease 'nightly': acquire failed: ");
    result_free(&r);
    kill(locker, SIGKILL);
    waitpid(locker, NULL, 0);
    /* Unlocked, the same status answers. */
    run_raw(&r, "--query-timeout", "1s", "status", NULL);
    ASSERT_CODE(r, 0);
    result_free(&r);
    /* The help names the default, with no Timeout= in it. */
    run_raw(&r, "--help", NULL);
    ASSERT_CONTAINS(r.out, "\"Driver=SQLite3;Database=sqlease.db\"");
    result_free(&r);
}

/* ---- what a new user's first mistakes get ---------------------------- */

/* The help's paragraph on CMD names every variable CMD gets, the fence's
 * included, and `run --help` prints the same help. */
static void test_help_cmd_environment(void)
{
    static const char want[] = "SQLEASE_TOKEN (the fencing token) and SQLEASE_FENCE_SQL";
    result r;

    run_raw(&r, "--help", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, want);
    ASSERT_CONTAINS(r.out, "SQLEASE_NAME, SQLEASE_OWNER,");
    result_free(&r);
    run_raw(&r, "run", "--help", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, want);
    result_free(&r);
}

/* A zero gets the right answer at once: "must be more than 0" where zero
 * is not allowed (never "write 0ms, 0s or 0m" first), and accepted as it
 * is where zero means something (a minimum hold of 0 is the default, a
 * timeout of 0 is --no-wait). */
static void test_zero_durations(void)
{
    static const char *const env[] = {"SQLEASE_TTL=0", NULL};
    result r;

    new_table();
    if (!migrate_ok())
        return;
    run_db(&r, "--ttl", "0", "status", NULL);
    ASSERT_CODE(r, 64);
    ASSERT_CONTAINS(r.err, "--ttl: must be more than 0");
    CU_ASSERT_PTR_NULL(strstr(r.err, "unit"));
    result_free(&r);
    run_db(&r, "--ttl", "0s", "status", NULL);
    ASSERT_CODE(r, 64);
    ASSERT_CONTAINS(r.err, "--ttl: must be more than 0");
    result_free(&r);
    run_db_env(&r, env, "status", NULL);
    ASSERT_CODE(r, 64);
    ASSERT_CONTAINS(r.err, "SQLEASE_TTL: must be more than 0");
    result_free(&r);
    run_db(&r, "supervise", "--crash-window", "0", "--", "true", NULL);
    ASSERT_CODE(r, 64);
    ASSERT_CONTAINS(r.err, "--crash-window: must be more than 0");
    result_free(&r);
    /* Still a bare number other than 0 needs its unit. */
    run_db(&r, "run", "--min-hold", "5", "--", "true", NULL);
    ASSERT_CODE(r, 64);
    ASSERT_CONTAINS(r.err, "'5' has no unit");
    result_free(&r);
    run_db(&r, "run", "--min-hold", "0", "--", "sh", "-c", "echo ran", NULL);
    ASSERT_CODE(r, 0);
    CU_ASSERT_STRING_EQUAL(r.out, "ran\n");
    result_free(&r);
    CU_ASSERT(await_free(5000)); /* no minimum hold: released at once */
    run_db(&r, "run", "--timeout", "0", "--", "true", NULL);
    ASSERT_CODE(r, 0);
    result_free(&r);
}

/* A command's flag given before the command says where it goes. */
static void test_command_flag_before_command(void)
{
    static const struct {
        const char *args[6];
        const char *want;
    } cases[] = {
        {{"--data", "x", "run", "--", "true"}, "'--data' is a flag of run: put it after run"},
        {{"--min-hold=5m", "run", "--", "true"}, "'--min-hold' is a flag of run: put it after run"},
        {{"--crash-limit", "3", "supervise", "--", "true"},
         "'--crash-limit' is a flag of supervise: put it after supervise"},
        {{"--json", "status"}, "'--json' is a flag of status: put it after status"},
        {{"--json", "run", "--", "true"}, "'--json' is a flag of status and list, not of run"},
        {{"--force"}, "'--force' is a flag of release: put it after release"},
        {{"--kill-grace", "1s"}, "'--kill-grace' is a flag of run, supervise and cron: put it "
                                 "after the command"},
        {{"--priority", "5", "cron", "jobs"}, "'--priority' is a flag of cron: put it after cron"},
        {{"--handoff", "run", "--", "true"},
         "'--handoff' is a flag of supervise and cron, not of run"},
        {{"--bogus", "run", "--", "true"}, "unknown flag '--bogus'"},
    };

    new_table();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *argv[MAX_ARGS];
        const char *const *in = cases[i].args;
        int n = 0;
        result r;

        argv[n++] = (char *)g_bin;
        for (int k = 0; k < 6 && in[k] != NULL; k++)
            argv[n++] = (char *)in[k];
        argv[n] = NULL;
        run_argv(&r, argv, NULL);
        ASSERT_CODE(r, 64);
        ASSERT_CONTAINS(r.err, cases[i].want);
        result_free(&r);
    }
}

/* An owner id with white space at an end is quoted wherever a human reads
 * it ("held by 'edge '"), so the space shows; a plain one is not. */
static void test_owner_quoted_when_needed(void)
{
    char log[1100];
    pid_t holder;
    result r;

    new_table();
    if (!migrate_ok())
        return;
    snprintf(log, sizeof log, "%s/edge.%d.log", g_dir, ++g_seq);
    holder = start_bg(log, "--owner", "edge ", "run", "--", "sleep", "60", NULL);
    CU_ASSERT_FATAL(holder > 0);
    if (!await_held_by("edge ", 15000)) {
        CU_FAIL("the holder did not take the lease");
        kill_all_bg();
        return;
    }
    run_db(&r, "run", "--no-wait", "--", "true", NULL);
    ASSERT_CODE(r, 75);
    ASSERT_CONTAINS(r.err, "is held by 'edge ' (token ");
    result_free(&r);
    run_db(&r, "status", NULL);
    ASSERT_CONTAINS(r.out, "owner:      'edge '\n");
    result_free(&r);
    run_db(&r, "list", NULL);
    ASSERT_CONTAINS(r.out, " 'edge '  ");
    result_free(&r);
    run_db(&r, "release", "--force", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, "held by 'edge ' (token ");
    result_free(&r);
    stop_bg(holder, SIGTERM, 15000);
    /* A plain owner id reads as it is. */
    holder = start_bg(log, "--owner", "plain-owner", "run", "--", "sleep", "60", NULL);
    CU_ASSERT_FATAL(holder > 0);
    CU_ASSERT(await_held_by("plain-owner", 15000));
    run_db(&r, "run", "--no-wait", "--", "true", NULL);
    ASSERT_CODE(r, 75);
    ASSERT_CONTAINS(r.err, "is held by plain-owner (token ");
    result_free(&r);
    stop_bg(holder, SIGTERM, 15000);
}

/* Run sqlease with the test's table but no --dsn: the connection comes
 * from the arguments given (--dsn-file) or the environment. */
static void run_table_env(result *r, const char *const *env, ...)
{
    char *argv[MAX_ARGS];
    const char *arg;
    va_list ap;
    int n = 0;

    argv[n++] = (char *)g_bin;
    argv[n++] = "--table";
    argv[n++] = g_table;
    va_start(ap, env);
    while ((arg = va_arg(ap, const char *)) != NULL && n < MAX_ARGS - 1)
        argv[n++] = (char *)arg;
    va_end(ap);
    argv[n] = NULL;
    run_argv(r, argv, env);
}

/* Write text to a file of the test's directory with the given mode. */
static void write_mode_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");

    CU_ASSERT_FATAL(f != NULL);
    fputs(text, f);
    fclose(f);
    CU_ASSERT_FATAL(chmod(path, mode) == 0);
}

/* The one line `sqlease --dsn-file PATH status` (or, with env, the
 * variable) prints when it refuses the file: exit 64, "sqlease: SOURCE
 * PATH: WHY", and never the password the file holds. */
static void expect_refused(const char *const *env, const char *path, const char *why)
{
    char want[3000];
    result r;

    if (env != NULL)
        run_table_env(&r, env, "status", NULL);
    else
        run_table_env(&r, NULL, "--dsn-file", path, "status", NULL);
    ASSERT_CODE(r, 64);
    snprintf(want, sizeof want, "sqlease: %s %s: %s\n",
             env != NULL ? "SQLEASE_DSN_FILE" : "--dsn-file", path, why);
    if (strcmp(r.err, want) != 0)
        fprintf(stderr, "\n  stderr: %s  want:   %s", r.err, want);
    CU_ASSERT_STRING_EQUAL(r.err, want);
    CU_ASSERT_PTR_NULL(strstr(r.err, "s3cr3t"));
    CU_ASSERT_STRING_EQUAL(r.out, "");
    result_free(&r);
}

/* "uid 65534 (nobody)", as the tool names a uid. */
static void uid_named(uid_t uid, char *buf, size_t cap)
{
    struct passwd *pw = getpwuid(uid);

    if (pw != NULL)
        snprintf(buf, cap, "uid %lu (%s)", (unsigned long)uid, pw->pw_name);
    else
        snprintf(buf, cap, "uid %lu", (unsigned long)uid);
}

/* --dsn-file / SQLEASE_DSN_FILE: the connection string from a private
 * file (no password in argv or the environment).  Refused with exit 64
 * and one line saying what is wrong and the command that fixes it, never
 * the file's password: when its group or others may read, write or
 * execute it, when it is owned by another user (root may own it), when it
 * is reached through another user's symbolic link, when it is not a
 * regular file, does not exist, is empty or not one line.  With --dsn (or
 * the two variables) together a usage error; a flag outranks a variable. */
static void test_dsn_file(void)
{
    static const struct {
        mode_t mode;
        const char *why; /* "%s": the path */
    } modes[] = {
        {0644, "group and others can read it (mode 0644); run: chmod 600 %s"},
        {0640, "group can read it (mode 0640); run: chmod 600 %s"},
        {0604, "others can read it (mode 0604); run: chmod 600 %s"},
        {0620, "group can write it (mode 0620); run: chmod 600 %s"},
        {0602, "others can write it (mode 0602); run: chmod 600 %s"},
        {0660, "group can read and write it (mode 0660); run: chmod 600 %s"},
        {0610, "group can execute it (mode 0610); run: chmod 600 %s"},
        {0444, "group and others can read it (mode 0444); run: chmod 400 %s"},
    };
    char path[1100], link[1100], other[1100], env_file[1200], env_dsn[1400], line[1300];
    char why[2600], nobody[300];
    const char *env_both[3], *env_one[2], *env_dsn_only[2];
    result r;

    new_table();
    snprintf(path, sizeof path, "%s/conn.%d", g_dir, ++g_seq);
    snprintf(line, sizeof line, "%s\n", g_dsn);
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        write_mode_file(path, "Driver=SQLite3;Database=x.db;PWD=s3cr3t-in-file\n",
                        modes[i].mode);
        snprintf(why, sizeof why, modes[i].why, path);
        expect_refused(NULL, path, why);
    }
    write_mode_file(path, line, 0600);
    run_table_env(&r, NULL, "--dsn-file", path, "migrate", NULL);
    ASSERT_CODE(r, 0);
    result_free(&r);
    CU_ASSERT_FATAL(chmod(path, 0400) == 0); /* read-only to its owner: fine */
    snprintf(line, sizeof line, "--dsn-file=%s", path); /* the = spelling */
    run_table_env(&r, NULL, line, "status", "--json", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, "\"held\":false");
    result_free(&r);
    CU_ASSERT_FATAL(chmod(path, 0600) == 0);

    /* The variable, and a flag outranking the other variable. */
    snprintf(env_file, sizeof env_file, "SQLEASE_DSN_FILE=%s", path);
    snprintf(env_dsn, sizeof env_dsn, "SQLEASE_DSN=%s", g_dsn);
    env_one[0] = env_file;
    env_one[1] = NULL;
    run_table_env(&r, env_one, "status", "--json", NULL);
    ASSERT_CODE(r, 0);
    result_free(&r);
    env_dsn_only[0] = "SQLEASE_DSN=Driver=NoSuchDriver";
    env_dsn_only[1] = NULL;
    run_table_env(&r, env_dsn_only, "--dsn-file", path, "status", "--json", NULL);
    ASSERT_CODE(r, 0);
    result_free(&r);
    env_both[0] = env_file;
    env_both[1] = env_dsn;
    env_both[2] = NULL;
    run_table_env(&r, env_both, "status", NULL);
    ASSERT_CODE(r, 64);
    ASSERT_CONTAINS(r.err, "SQLEASE_DSN and SQLEASE_DSN_FILE both given");
    result_free(&r);
    run_table_env(&r, env_both, "--dsn", g_dsn, "status", "--json", NULL);
    ASSERT_CODE(r, 0); /* the flag settles it */
    result_free(&r);
    run_table_env(&r, NULL, "--dsn", g_dsn, "--dsn-file", path, "status", NULL);
    ASSERT_CODE(r, 64);
    ASSERT_CONTAINS(r.err, "--dsn and --dsn-file both given");
    result_free(&r);

    /* A symbolic link of one's own is followed, to a file that must pass
     * the same checks (the message names the link: chmod follows it). */
    snprintf(link, sizeof link, "%s/link.%d", g_dir, ++g_seq);
    CU_ASSERT_FATAL(symlink(path, link) == 0);
    run_table_env(&r, NULL, "--dsn-file", link, "status", "--json", NULL);
    ASSERT_CODE(r, 0);
    result_free(&r);
    CU_ASSERT_FATAL(chmod(path, 0640) == 0);
    snprintf(why, sizeof why, "group can read it (mode 0640); run: chmod 600 %s", link);
    expect_refused(NULL, link, why);
    snprintf(line, sizeof line, "%s/gone.%d", g_dir, ++g_seq);
    snprintf(other, sizeof other, "%s/dangling.%d", g_dir, ++g_seq);
    CU_ASSERT_FATAL(symlink(line, other) == 0);
    expect_refused(NULL, other, "is a symbolic link to a file that does not exist");

    /* Files that cannot be a connection string. */
    write_mode_file(path, "", 0600);
    expect_refused(NULL, path, "is empty: write the connection string (or a DSN name) on"
                               " its first line");
    write_mode_file(path, "DSN=a\nPWD=s3cr3t\n", 0600);
    expect_refused(NULL, path, "holds more than one line: write the connection string on"
                               " one line");
    expect_refused(NULL, g_dir, "is a directory, not a file: name the file that holds the"
                                " connection string");
    snprintf(other, sizeof other, "%s/fifo.%d", g_dir, ++g_seq);
    CU_ASSERT_FATAL(mkfifo(other, 0600) == 0);
    expect_refused(NULL, other, "is a named pipe, not a file: name the file that holds the"
                                " connection string");
    snprintf(other, sizeof other, "%s/none.%d", g_dir, ++g_seq);
    expect_refused(NULL, other, "does not exist");
    snprintf(env_file, sizeof env_file, "SQLEASE_DSN_FILE=%s", other);
    expect_refused(env_one, other, "does not exist");

    /* A file another user could have written: its Driver= would be
     * loaded into this process.  Root may own it. */
    if (geteuid() != 0) {
        tu_skip("not root: cannot give a file to another user, so the owner checks of"
                " --dsn-file were not run");
    } else {
        const uid_t them = 65534;
        write_mode_file(path, "Driver=SQLite3;Database=x.db;PWD=s3cr3t-in-file\n", 0600);
        CU_ASSERT_FATAL(chown(path, them, (gid_t)-1) == 0);
        uid_named(them, nobody, sizeof nobody);
        snprintf(why, sizeof why, "owned by %s, not by you (uid 0, root); run: chown root %s",
                 nobody, path);
        expect_refused(NULL, path, why);
        CU_ASSERT_FATAL(chmod(path, 0640) == 0);
        snprintf(why, sizeof why, "owned by %s, not by you (uid 0, root), and group can read"
                 " it (mode 0640); run: chown root %s && chmod 600 %s", nobody, path, path);
        expect_refused(NULL, path, why);
        /* Through a link of one's own: the file is still another's. */
        snprintf(why, sizeof why, "owned by %s, not by you (uid 0, root), and group can read"
                 " it (mode 0640); run: chown root %s && chmod 600 %s", nobody, link, link);
        expect_refused(NULL, link, why);
        /* Another user's link to a file of one's own. */
        CU_ASSERT_FATAL(chown(path, 0, (gid_t)-1) == 0);
        snprintf(line, sizeof line, "%s\n", g_dsn);
        write_mode_file(path, line, 0600);
        CU_ASSERT_FATAL(lchown(link, them, (gid_t)-1) == 0);
        snprintf(why, sizeof why, "is a symbolic link owned by %s, not by you (uid 0, root): its"
                 " owner chooses the file read; name the file itself", nobody);
        expect_refused(NULL, link, why);
        run_table_env(&r, NULL, "--dsn-file", path, "status", "--json", NULL);
        ASSERT_CODE(r, 0); /* the file itself is fine */
        result_free(&r);
    }

    /* A password in an accepted file is never printed, whatever fails. */
    write_mode_file(path, "Driver=NoSuchDriver;UID=u;PWD=s3cr3t-in-file\n", 0600);
    run_table_env(&r, NULL, "--dsn-file", path, "status", NULL);
    ASSERT_CODE(r, 69);
    CU_ASSERT_PTR_NULL(strstr(r.err, "s3cr3t-in-file"));
    result_free(&r);
}

/* CMD does not inherit the connection string ($SQLEASE_DSN may hold a
 * password); the path of a DSN file it keeps. */
static void test_cmd_gets_no_dsn(void)
{
    char env_dsn[1400], env_file[1200], path[1100], line[1300];
    const char *env[2];
    result r;

    new_table();
    if (!migrate_ok())
        return;
    snprintf(env_dsn, sizeof env_dsn, "SQLEASE_DSN=%s", g_dsn);
    env[0] = env_dsn;
    env[1] = NULL;
    run_table_env(&r, env, "run", "--", "sh", "-c", "env | grep '^SQLEASE_' | sort", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, "SQLEASE_TOKEN=");
    CU_ASSERT_PTR_NULL(strstr(r.out, "SQLEASE_DSN"));
    result_free(&r);
    snprintf(path, sizeof path, "%s/conn.%d", g_dir, ++g_seq);
    snprintf(line, sizeof line, "%s\n", g_dsn);
    write_mode_file(path, line, 0600);
    snprintf(env_file, sizeof env_file, "SQLEASE_DSN_FILE=%s", path);
    env[0] = env_file;
    run_table_env(&r, env, "run", "--", "sh", "-c", "env | grep '^SQLEASE_DSN'", NULL);
    ASSERT_CODE(r, 0);
    snprintf(line, sizeof line, "%s\n", env_file);
    CU_ASSERT_STRING_EQUAL(r.out, line);
    result_free(&r);
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[1400];

    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    if (rmdir(dir) != 0)
        fprintf(stderr, "test_cli: could not remove %s\n", dir);
}

/* Drop the tables this run made on a shared server (the SQLite file goes
 * with the directory). */
static void drop_tables(void)
{
    sqlease_db_options o;
    sqlease_db *db = NULL;

    if (g_ext_dsn == NULL || g_ntables == 0)
        return;
    sqlease_db_options_init(&o);
    o.conn = g_ext_dsn;
    o.log_level = SQLEASE_LOG_ERROR;
    if (sqlease_db_open(&db, &o, NULL) != SQLEASE_OK)
        return;
    for (int i = 0; i < g_ntables; i++)
        tu_drop(db, g_tables[i]);
    sqlease_db_close(db);
}

static int suite_init(void)
{
    const char *tmp = getenv("TMPDIR");

    snprintf(g_dir, sizeof g_dir, "%s/sqlease-cli-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(g_dir) == NULL)
        return -1;
    if (g_ext_dsn != NULL)
        snprintf(g_dsn, sizeof g_dsn, "%s", g_ext_dsn);
    else
        snprintf(g_dsn, sizeof g_dsn, "Driver=SQLite3;Database=%s/t.db", g_dir);
    return 0;
}

static int suite_cleanup(void)
{
    kill_all_bg();
    drop_tables();
    remove_dir(g_dir);
    return 0;
}

/* Variables a user or CI may have set would change what the tool does. */
static void clear_environment(void)
{
    static const char *const vars[] = {"SQLEASE_DSN", "SQLEASE_DSN_FILE", "SQLEASE_TABLE",
                                       "SQLEASE_FIRE_TABLE", "SQLEASE_HISTORY_TABLE",
                                       "SQLEASE_NAME",
                                       "SQLEASE_TTL", "SQLEASE_HEARTBEAT",
                                       "SQLEASE_RENEW_DEADLINE", "SQLEASE_RETRY",
                                       "SQLEASE_OWNER", "SQLEASE_TOKEN", "NOTIFY_SOCKET",
                                       "JOURNAL_STREAM"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
}

/* ---- the hand-over ---------------------------------------------------- */

/* Timing short enough for hand-overs within a second. */
#define HO_TIMING "--ttl", "3s", "--heartbeat", "500ms", "--renew-deadline", "1500ms", \
                  "--retry", "250ms"

/* A CMD that writes "start <who> <token>" into `events` when it starts
 * and "stop <who>" when SIGTERM ends it. */
static void ho_script(char *buf, size_t cap, const char *events, const char *who)
{
    snprintf(buf, cap, "trap 'echo stop %s >> %s; exit 0' TERM; echo start %s $SQLEASE_TOKEN"
             " >> %s; while :; do sleep 0.05; done", who, events, who, events);
}

/* Start `owner`'s supervise --handoff with extra flags (NULL-terminated
 * list of up to 4), its CMD logging into `events`. */
static pid_t ho_start(const char *owner, const char *events, const char *extra1,
                      const char *extra2, const char *extra3, const char *extra4)
{
    char log[1100], script[2400];

    snprintf(log, sizeof log, "%s/ho-%s.%d.log", g_dir, owner, ++g_seq);
    ho_script(script, sizeof script, events, owner);
    if (extra1 == NULL)
        return start_bg(log, "--owner", owner, HO_TIMING, "supervise", "--handoff", "--", "sh",
                        "-c", script, NULL);
    if (extra3 == NULL)
        return start_bg(log, "--owner", owner, HO_TIMING, "supervise", "--handoff", extra1,
                        extra2, "--", "sh", "-c", script, NULL);
    return start_bg(log, "--owner", owner, HO_TIMING, "supervise", "--handoff", extra1, extra2,
                    extra3, extra4, "--", "sh", "-c", script, NULL);
}

/* The same without --handoff: the flags given must imply it. */
static pid_t ho_start_implied(const char *owner, const char *events, const char *extra1,
                              const char *extra2, const char *extra3, const char *extra4)
{
    char log[1100], script[2400];

    snprintf(log, sizeof log, "%s/ho-%s.%d.log", g_dir, owner, ++g_seq);
    ho_script(script, sizeof script, events, owner);
    return start_bg(log, "--owner", owner, HO_TIMING, "supervise", extra1, extra2, extra3,
                    extra4, "--", "sh", "-c", script, NULL);
}

/* Wait until `status` (with "--json", or NULL for the text) says
 * `needle`. */
static int await_status_has(const char *json, const char *needle, int64_t timeout_ms)
{
    int64_t deadline = sqle_mono_ms() + timeout_ms;

    while (sqle_mono_ms() < deadline) {
        result r;
        int yes;
        run_db(&r, "status", json, NULL);
        yes = r.code == 0 && strstr(r.out, needle) != NULL;
        result_free(&r);
        if (yes)
            return 1;
        sqle_sleep_ms(50);
    }
    return 0;
}

/* Wait until status lists `owner` among the ready followers. */
static int await_ready(const char *owner, int64_t timeout_ms)
{
    char want[300];

    snprintf(want, sizeof want, "{\"owner\":\"%s\",", owner);
    return await_status_has("--json", want, timeout_ms);
}

/* Usage: the hand-over's flags and transfer's. */
static void test_handoff_usage(void)
{
    result r;

    new_table();
    /* --min-hold is --preempt-after's other name for supervise and cron. */
    run_db(&r, "supervise", "--min-hold", "1s", "--preempt-after", "2s", "--", "true", NULL);
    ASSERT_CODE(r, 64);
    ASSERT_CONTAINS(r.err, "supervise: --min-hold and --preempt-after are the same setting");
    result_free(&r);
    run_db(&r, "supervise", "--min-hold", "5", "--", "true", NULL);
    ASSERT_CODE(r, 64);
    ASSERT_CONTAINS(r.err, "--min-hold");
    result_free(&r);
    run_db(&r, "cron", "--priority", "x", "jobs.cron", NULL);
    ASSERT_CODE(r, 64);
    ASSERT_CONTAINS(r.err, "--priority 'x'");
    result_free(&r);
    run_db(&r, "cron", "--preempt-after", "1s", "--min-hold", "1s", "jobs.cron", NULL);
    ASSERT_CODE(r, 64);
    ASSERT_CONTAINS(r.err, "cron: --min-hold and --preempt-after are the same setting");
    result_free(&r);
    run_db(&r, "supervise", "--handoff", "--priority", "x", "--", "true", NULL);
    ASSERT_CODE(r, 64);
    result_free(&r);
    run_db(&r, "supervise", "--handoff", "--priority", "2000000000", "--", "true", NULL);
    ASSERT_CODE(r, 64);
    result_free(&r);
    run_db(&r, "supervise", "--handoff", "--preempt-after", "5", "--", "true", NULL);
    ASSERT_CODE(r, 64);
    result_free(&r);
    run_db(&r, "transfer", "--to", "", NULL);
    ASSERT_CODE(r, 64);
    result_free(&r);
    run_db(&r, "transfer", "--timeout", "0s", NULL);
    ASSERT_CODE(r, 64);
    result_free(&r);
    run_db(&r, "transfer", "extra", NULL);
    ASSERT_CODE(r, 64);
    result_free(&r);
    run_db(&r, "--to", "x", "transfer", NULL);
    ASSERT_CODE(r, 64);
    ASSERT_CONTAINS(r.err, "transfer");
    result_free(&r);
}

/*
 * transfer --to a ready follower: the lease moves from one supervise to
 * the other within a second (the holder answers at its next renew), the
 * old CMD stopped before the new one started, with the next token; to
 * the holder itself: nothing to do; without --to: to the best ready
 * follower; on a free lease: 75.
 */
static void test_transfer_to(void)
{
    char events[1100], *ev;
    pid_t a, b;
    result r;
    long long token;

    new_table();
    if (!migrate_ok())
        return;
    snprintf(events, sizeof events, "%s/ho-events.%d", g_dir, ++g_seq);
    a = ho_start("host-a", events, NULL, NULL, NULL, NULL);
    CU_ASSERT_FATAL(a > 0);
    CU_ASSERT_FATAL(await_held_by("host-a", 15000));
    b = ho_start("host-b", events, NULL, NULL, NULL, NULL);
    CU_ASSERT_FATAL(b > 0);
    CU_ASSERT_FATAL(await_ready("host-b", 15000));
    token = token_now();
    run_db(&r, "status", NULL);
    ASSERT_CONTAINS(r.out, "ready:      host-b (priority 0, seen ");
    result_free(&r);

    run_db(&r, "transfer", "--to", "host-b", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, "moved from host-a (token ");
    ASSERT_CONTAINS(r.out, ") to host-b (token ");
    CU_ASSERT(r.ms < 3000);
    result_free(&r);
    CU_ASSERT(held_by("host-b"));
    CU_ASSERT_EQUAL(token_now(), token + 1);
    CU_ASSERT(await_file_has(events, "start host-b", 5000));
    ev = slurp(events);
    /* One CMD at a time: host-a's stopped before host-b's started. */
    CU_ASSERT(ev != NULL && strstr(ev, "stop host-a") != NULL &&
              strstr(ev, "stop host-a") < strstr(ev, "start host-b"));
    free(ev);

    run_db(&r, "transfer", "--to", "host-b", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, "held by host-b already");
    result_free(&r);
    /* Without --to: the best ready follower, host-a. */
    run_db(&r, "transfer", NULL);
    ASSERT_CODE(r, 0);
    ASSERT_CONTAINS(r.out, "to host-a (token ");
    result_free(&r);
    CU_ASSERT(held_by("host-a"));

    CU_ASSERT_EQUAL(stop_bg(b, SIGTERM, 15000), 0);
    CU_ASSERT_EQUAL(stop_bg(a, SIGTERM, 15000), 0);
    run_db(&r, "transfer", NULL);
    ASSERT_CODE(r, 75);
    ASSERT_CONTAINS(r.err, "not held");
    result_free(&r);
    kill_all_bg();
}

/* transfer --to a host that does not take it: the reservation passes and
 * a ready follower takes the lease; transfer says so and exits 75. */
static void test_transfer_to_dead_host(void)
{
    char events[1100];
    pid_t a, b;
    result r;

    new_table();
    if (!migrate_ok())
        return;
    snprintf(events, sizeof events, "%s/ho-events.%d", g_dir, ++g_seq);
    a = ho_start("host-a", events, NULL, NULL, NULL, NULL);
    CU_ASSERT_FATAL(a > 0 && await_held_by("host-a", 15000));
    b = ho_start("host-b", events, NULL, NULL, NULL, NULL);
    CU_ASSERT_FATAL(b > 0 && await_ready("host-b", 15000));
    run_db(&r, "transfer", "--to", "host-gone", "--timeout", "5s", NULL);
    ASSERT_CODE(r, 75);
    ASSERT_CONTAINS(r.err, "is not a ready follower");
    ASSERT_CONTAINS(r.err, "not to host-gone");
    /* Held again within a second and a half: a heartbeat, the
     * reservation (3 x retry), a read. */
    CU_ASSERT(r.ms < 2500);
    result_free(&r);
    CU_ASSERT(held_by("host-b") || held_by("host-a"));
    CU_ASSERT_EQUAL(stop_bg(b, SIGTERM, 15000), 0);
    CU_ASSERT_EQUAL(stop_bg(a, SIGTERM, 15000), 0);
    kill_all_bg();
}

/*
 * supervise --handoff on SIGTERM: the lease goes to the ready follower
 * at once (not at its next retry: it was told before CMD stopped), one
 * CMD at a time, and supervise exits 0.  SIGUSR1 drains a host: its
 * priority drops to the lowest and the lease goes to another ready host.
 */
static void test_supervise_handoff_sigterm(void)
{
    char events[1100], *ev;
    pid_t a, b, c;
    result r;
    int64_t t0;

    new_table();
    if (!migrate_ok())
        return;
    snprintf(events, sizeof events, "%s/ho-events.%d", g_dir, ++g_seq);
    a = ho_start("host-a", events, NULL, NULL, NULL, NULL);
    CU_ASSERT_FATAL(a > 0 && await_held_by("host-a", 15000));
    b = ho_start("host-b", events, NULL, NULL, NULL, NULL);
    CU_ASSERT_FATAL(b > 0 && await_ready("host-b", 15000));
    t0 = sqle_mono_ms();
    CU_ASSERT_EQUAL(stop_bg(a, SIGTERM, 15000), 0);
    CU_ASSERT(await_file_has(events, "start host-b", 5000));
    CU_ASSERT(sqle_mono_ms() - t0 < 1500);
    ev = slurp(events);
    CU_ASSERT(ev != NULL && strstr(ev, "stop host-a") != NULL &&
              strstr(ev, "stop host-a") < strstr(ev, "start host-b"));
    free(ev);
    CU_ASSERT(held_by("host-b"));

    /* SIGUSR1: host-b drains to host-c. */
    c = ho_start("host-c", events, NULL, NULL, NULL, NULL);
    CU_ASSERT_FATAL(c > 0 && await_ready("host-c", 15000));
    kill(b, SIGUSR1);
    CU_ASSERT(await_held_by("host-c", 5000));
    CU_ASSERT(await_ready("host-b", 5000));
    run_db(&r, "status", NULL);
    ASSERT_CONTAINS(r.out, "host-b (priority -1000000000, seen ");
    result_free(&r);
    /* SIGUSR2: back to its priority. */
    kill(b, SIGUSR2);
    /* The row says it once b's next read as a ready follower writes it,
     * which a loaded box may delay past any fixed wait. */
    CU_ASSERT(await_status_has(NULL, "host-b (priority 0, seen ", 10000));
    CU_ASSERT_EQUAL(stop_bg(c, SIGTERM, 15000), 0);
    CU_ASSERT(await_held_by("host-b", 5000));
    CU_ASSERT_EQUAL(stop_bg(b, SIGTERM, 15000), 0);
    kill_all_bg();
}

/* A ready follower of higher priority takes the lease once the holder
 * has held for --preempt-after (host-b says it as --min-hold, without
 * --handoff: --priority implies it); one of equal priority never does. */
static void test_supervise_priority(void)
{
    char events[1100];
    pid_t a, b, c;
    long long a_at, b_at;

    new_table();
    if (!migrate_ok())
        return;
    snprintf(events, sizeof events, "%s/ho-events.%d", g_dir, ++g_seq);
    a = ho_start("host-a", events, "--priority", "1", NULL, NULL);
    CU_ASSERT_FATAL(a > 0 && await_held_by("host-a", 15000));
    a_at = status_int("acquired_at_ms");
    c = ho_start("host-c", events, "--priority", "1", "--preempt-after", "500ms");
    b = ho_start_implied("host-b", events, "--priority", "5", "--min-hold", "2s");
    CU_ASSERT_FATAL(b > 0 && c > 0);
    CU_ASSERT(await_held_by("host-b", 6000));
    /* The hold's age on the database's clock, which preempt-after is
     * read on, from take to take: a time on this host would count from
     * whenever status first showed a's hold, which a loaded box delays. */
    b_at = status_int("acquired_at_ms");
    CU_ASSERT(a_at > 0 && b_at - a_at >= 2000);
    if (!(a_at > 0 && b_at - a_at >= 2000))
        fprintf(stderr, "\n  host-a took at %lld, host-b at %lld\n", a_at, b_at);
    CU_ASSERT(await_file_has(events, "start host-b", 3000));
    {
        char *ev = slurp(events);
        CU_ASSERT(ev != NULL && strstr(ev, "start host-c") == NULL);
        free(ev);
    }
    CU_ASSERT_EQUAL(stop_bg(c, SIGTERM, 15000), 0);
    CU_ASSERT_EQUAL(stop_bg(b, SIGTERM, 15000), 0);
    CU_ASSERT_EQUAL(stop_bg(a, SIGTERM, 15000), 0);
    kill_all_bg();
}

int main(void)
{
    static const struct {
        const char *name;
        void (*fn)(void);
        const char *fn_name; /* for SQLEASE_TEST_ONLY */
    } tests[] = {
#define T(name, fn) {name, fn, #fn}
        T("--version", test_version),
        T("--help lists every command and flag", test_help),
        T("history: holds newest first, their ends and the gaps", test_history),
        T("the man page lists every flag and exit code", test_man_page_complete),
        T("--help lists every flag the man page documents, under its command",
          test_help_lists_man_flags),
        T("a duration without a unit is a usage error", test_bare_duration),
        T("usage errors exit 64 with one line", test_usage_errors),
        T("a missing command exits 64", test_missing_command),
        T("an unreachable database exits 69", test_unreachable),
        T("a password is never printed", test_password_never_printed),
        T("SQL Server driver, closed port: exit 69", test_sqlserver_driver_closed_port),
        T("run stops what CMD left in its group before releasing",
          test_run_stops_leftover_group),
        T("status before migrate exits 69", test_status_before_migrate),
        T("migrate is idempotent", test_migrate_twice),
        T("status --json after migrate", test_status_json),
        T("run: token, name, exit status, release", test_run_cycle),
        T("flag > environment > default", test_run_env_precedence),
        T("status --json while held, escaped owner", test_status_while_held),
        T("run --no-wait against a holder; supervise SIGTERM", test_no_wait_and_supervise),
        T("release --force clears a held row", test_release_force),
        T("run exits 75 and stops CMD when the lease is lost", test_run_lost),
        T("run waits for the holder to release", test_run_waits),
        T("run --min-hold exits at once, the row stays held; SIGTERM exits 143",
          test_run_min_hold_and_sigterm),
        T("supervise restarts an exiting CMD", test_supervise_restarts),
        T("bad name, owner, table or dialect exits 64 naming it", test_bad_input_exits_64),
        T("CMD inherits no descriptor of sqlease's", test_cmd_inherits_no_fd),
        T("SIGCHLD ignored and signals blocked by the parent", test_inherited_signal_state),
        T("started with stdin closed, CMD's stdin is /dev/null", test_closed_stdin),
        T("run --timeout gives up after D, or runs CMD", test_run_timeout),
        T("run --conflict-exit-code; a loss is still 75", test_conflict_exit_code),
        T("run -q: a host that gives up prints nothing", test_quiet_loser),
        T("--metrics-file: values, atomic rewrites, removed", test_metrics_file),
        T("supervise: READY=1, STATUS=, STOPPING=1", test_systemd_notify),
        T("supervise waits for a database away at start", test_supervise_waits_for_database),
        T("supervise retries a database away at start every derived retry",
          test_supervise_start_retry_follows_ttl),
        T("stdout a pipe whose reader has gone: exit 74, no SIGPIPE",
          test_closed_stdout_pipe),
        T("a crash-looping CMD gives the lease up", test_crash_loop_gives_up),
        T("after a crash pause, a new take starts CMD with the new hold",
          test_crash_pause_then_retake),
        T("log lines carry a time stamp, except in the journal", test_log_timestamps),
        T("errors said once and as they are", test_messages_said_once),
        T("a missing SQLite file: 69 naming it, created only by migrate",
          test_missing_sqlite_file),
        T("default connection: a locked SQLite file is bounded by --query-timeout",
          test_default_conn_bounded_by_query_timeout),
        T("--help: CMD's environment includes SQLEASE_FENCE_SQL", test_help_cmd_environment),
        T("a zero duration: refused at once, or accepted where zero means something",
          test_zero_durations),
        T("a command's flag before the command says where it goes",
          test_command_flag_before_command),
        T("an owner id with white space is quoted where people read it",
          test_owner_quoted_when_needed),
        T("--dsn-file: a private file, refused when another user owns it or others may"
          " read or write it", test_dsn_file),
        T("CMD does not inherit the connection string", test_cmd_gets_no_dsn),
        T("the hand-over's flags and transfer's: usage errors", test_handoff_usage),
        T("transfer --to a ready follower; to the holder; without --to; not held",
          test_transfer_to),
        T("transfer --to a host that does not take it", test_transfer_to_dead_host),
        T("supervise --handoff: SIGTERM hands over at once; SIGUSR1 drains",
          test_supervise_handoff_sigterm),
        T("supervise --priority: preempted after --preempt-after, never by an equal",
          test_supervise_priority),
#undef T
    };
    CU_pSuite suite;
    unsigned failed;
    const char *only;

    g_bin = getenv("SQLEASE_BIN");
    if (g_bin == NULL || g_bin[0] == '\0' || access(g_bin, X_OK) != 0) {
        fprintf(stderr, "test_cli: set SQLEASE_BIN to the sqlease binary to test "
                        "(e.g. build/bin/sqlease); got '%s'\n", g_bin ? g_bin : "(unset)");
        return 1;
    }
    g_ext_dsn = getenv("SQLEASE_TEST_DSN");
    if (g_ext_dsn != NULL && g_ext_dsn[0] == '\0')
        g_ext_dsn = NULL;
    clear_environment();
    signal(SIGPIPE, SIG_IGN);

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    suite = CU_add_suite("sqlease CLI", suite_init, suite_cleanup);
    if (suite == NULL) {
        CU_cleanup_registry();
        return 1;
    }
    only = getenv("SQLEASE_TEST_ONLY");
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
        if (only != NULL && only[0] != '\0' && strstr(tests[i].name, only) == NULL &&
            strstr(tests[i].fn_name, only) == NULL)
            continue;
        else if (CU_add_test(suite, tests[i].name, tests[i].fn) == NULL) {
            CU_cleanup_registry();
            return 1;
        }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    failed = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return failed == 0 ? 0 : 1;
}
