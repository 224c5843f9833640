/*
 * test_cron.c -- the crontab recipe as a fleet runs it: every host's cron
 * fires `sqlease run --no-wait [--min-hold D] -- CMD` at the same moment.
 *
 * The real binary ($SQLEASE_BIN) is run as 60 child processes at once,
 * each with an owner id of its own, against the database under test (an
 * SQLite file in a temporary directory, or $SQLEASE_TEST_DSN), on a table
 * of the test's own that is dropped at the end.  What is checked is what
 * an operator reads: exactly one CMD ran, every other host exited 75 and
 * named the one that ran; and a host whose CMD cannot be started does not
 * keep the lease for --min-hold, so the next run takes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "platform.h"
#include "testutil.h"

#define HERD 60
#define WAIT_MS 90000

static const char *g_bin;
static sqlease_db *g_db;
static char g_table[64];
static int g_seq;

typedef struct host {
    pid_t pid;
    int code;          /* exit status, 128+N for signal N, -1 unknown */
    char owner[32];
    char err_path[1100];
} host;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    if (f == NULL)
        return calloc(1, 1);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)(n > 0 ? n : 0) + 1);
    if (buf != NULL) {
        n = (long)fread(buf, 1, (size_t)(n > 0 ? n : 0), f);
        buf[n] = '\0';
    }
    fclose(f);
    return buf;
}

static int lines_of(const char *s)
{
    int n = 0;

    for (; s != NULL && *s != '\0'; s++)
        n += *s == '\n';
    return n;
}

/* Start `sqlease --dsn D --table T --owner OWNER ARGS...` in the scratch
 * directory, stdout to /dev/null, stderr to h->err_path. */
static pid_t start(host *h, const char *owner, char *const *args)
{
    char *argv[32];
    int n = 0;
    pid_t pid;

    snprintf(h->owner, sizeof h->owner, "%s", owner);
    snprintf(h->err_path, sizeof h->err_path, "%s/err.%d", tu_dir(), ++g_seq);
    h->code = -1;
    argv[n++] = (char *)g_bin;
    argv[n++] = "--dsn";
    argv[n++] = (char *)tu_dsn();
    argv[n++] = "--table";
    argv[n++] = g_table;
    argv[n++] = "--owner";
    argv[n++] = h->owner;
    for (; *args != NULL && n < 31; args++)
        argv[n++] = *args;
    argv[n] = NULL;
    pid = fork();
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int out = open("/dev/null", O_WRONLY);
        int err = open(h->err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
            dup2(err, 2) < 0 || chdir(tu_dir()) != 0)
            _exit(125);
        execv(g_bin, argv);
        _exit(125);
    }
    h->pid = pid;
    return pid;
}

/* Wait for one host (by pid) at most until deadline; kill it past that. */
static int reap(host *h, int64_t deadline)
{
    int st;

    for (;;) {
        pid_t r = waitpid(h->pid, &st, WNOHANG);
        if (r == h->pid) {
            h->code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            h->pid = 0;
            return h->code;
        }
        if ((r < 0 && errno != EINTR) || sqle_mono_ms() >= deadline) {
            kill(h->pid, SIGKILL);
            waitpid(h->pid, &st, 0);
            h->pid = 0;
            return -1;
        }
        sqle_sleep_ms(5);
    }
}

/* Run one sqlease to its end; returns its exit status, stderr in *err. */
static int run1(const char *owner, char **err, char *const *args)
{
    host h;
    int code;

    if (start(&h, owner, args) <= 0)
        return -1;
    code = reap(&h, sqle_mono_ms() + WAIT_MS);
    if (err != NULL)
        *err = slurp(h.err_path);
    unlink(h.err_path);
    return code;
}

/* `status --json` of the test's lease: held, owner (into owner), token. */
static int status(int *held, char *owner, size_t cap, long long *token)
{
    char *args[] = { "status", "--json", NULL };
    char out_path[1100], *out, *p;
    host h;
    int code, fd, saved;

    snprintf(out_path, sizeof out_path, "%s/status.%d", tu_dir(), ++g_seq);
    /* status prints to stdout: point this process's stdout at a file for
     * the fork, then restore it. */
    fflush(stdout);
    saved = dup(1);
    fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (saved < 0 || fd < 0)
        return -1;
    dup2(fd, 1);
    close(fd);
    {
        char *argv[16];
        int n = 0;
        pid_t pid;
        argv[n++] = (char *)g_bin;
        argv[n++] = "--dsn";
        argv[n++] = (char *)tu_dsn();
        argv[n++] = "--table";
        argv[n++] = g_table;
        argv[n++] = args[0];
        argv[n++] = args[1];
        argv[n] = NULL;
        pid = fork();
        if (pid == 0) {
            execv(g_bin, argv);
            _exit(125);
        }
        h.pid = pid;
    }
    dup2(saved, 1);
    close(saved);
    code = h.pid > 0 ? reap(&h, sqle_mono_ms() + WAIT_MS) : -1;
    out = slurp(out_path);
    unlink(out_path);
    if (out == NULL)
        return -1;
    *held = strstr(out, "\"held\":true") != NULL;
    owner[0] = '\0';
    if ((p = strstr(out, "\"owner\":\"")) != NULL) {
        size_t n = strcspn(p + 9, "\"");
        if (n >= cap)
            n = cap - 1;
        memcpy(owner, p + 9, n);
        owner[n] = '\0';
    }
    *token = (p = strstr(out, "\"token\":")) != NULL ? strtoll(p + 8, NULL, 10) : -1;
    free(out);
    return code;
}

static void new_table(void)
{
    snprintf(g_table, sizeof g_table, "cron_%ld_%d", (long)getpid(), ++g_seq);
}

static int migrate_ok(void)
{
    char *args[] = { "migrate", NULL };
    char *err = NULL;
    int code = run1("migrate", &err, args);

    if (code != 0)
        fprintf(stderr, "\n  migrate exited %d: %s\n", code, err != NULL ? err : "");
    free(err);
    return code == 0;
}

/* How the herd's CMD behaves. */
enum herd_mode {
    HERD_LONG,      /* no --min-hold; CMD lasts until the herd is done */
    HERD_MIN_HOLD,  /* --min-hold 1m; CMD ends at once */
    HERD_QUICK      /* no --min-hold; CMD ends at once */
};

/* The owner on line `i` (0-based) of the ran file's "OWNER TOKEN" lines,
 * and its token; 0 when there is no such line. */
static int ran_line(const char *text, int i, char *owner, size_t cap, long long *token)
{
    char fmt[32];

    for (; text != NULL && i > 0; i--) {
        text = strchr(text, '\n');
        if (text != NULL)
            text++;
    }
    snprintf(fmt, sizeof fmt, "%%%zus %%lld", cap - 1);
    return text != NULL && sscanf(text, fmt, owner, token) == 2;
}

/*
 * One cron fire: HERD hosts start `run --no-wait [--min-hold 1m] -- sh -c
 * SCRIPT` at once.  SCRIPT appends "OWNER TOKEN" to ran.N; with HERD_LONG
 * it then waits for go.N, which is created once every other host has
 * exited: the CMD runs for as long as the herd contends, as a real job
 * would, without guessing how long that is.  Then, with HERD_LONG and
 * HERD_MIN_HOLD: exactly one line in ran.N, that host exited 0, and every
 * other host exited 75 naming it.  With HERD_QUICK, hosts that fire after
 * the winner's CMD ended may run it again (that is what --min-hold is
 * for): the tokens of those that ran increase line by line, and every
 * host that gave up names one that ran, even when the row it lost was
 * free again by the time it gave up.
 */
static void herd(enum herd_mode mode)
{
    static host hosts[HERD];
    char ran[1100], go[1100], script[2600], owner[32];
    char *args[16], *text;
    char names[HERD][64];
    long long tokens[HERD];
    int n = 0, i, k, ran_hosts = 0, code75 = 0, named = 0, other = 0, runners_ok = 0;
    int64_t deadline;

    new_table();
    if (!migrate_ok())
        return;
    snprintf(ran, sizeof ran, "%s/ran.%d", tu_dir(), ++g_seq);
    snprintf(go, sizeof go, "%s/go.%d", tu_dir(), g_seq);
    if (mode != HERD_LONG)
        snprintf(script, sizeof script, "echo \"$SQLEASE_OWNER $SQLEASE_TOKEN\" >> '%s'", ran);
    else
        /* Bounded: 90 s at most, whatever happens to the test. */
        snprintf(script, sizeof script,
                 "echo \"$SQLEASE_OWNER $SQLEASE_TOKEN\" >> '%s'; i=0; "
                 "while [ ! -e '%s' ] && [ $i -lt 1800 ]; do sleep 0.05; i=$((i+1)); done",
                 ran, go);
    /* Sixty hosts' connects on one small machine, all at once: a server
     * with password hashing may take seconds to let them all in, which
     * sixty real hosts would not see.  The lease's answer is what is
     * tested, not the login. */
    args[n++] = "--login-timeout";
    args[n++] = "60s";
    args[n++] = "run";
    args[n++] = "--no-wait";
    if (mode == HERD_MIN_HOLD) {
        args[n++] = "--min-hold";
        args[n++] = "1m";
    }
    args[n++] = "--";
    args[n++] = "sh";
    args[n++] = "-c";
    args[n++] = script;
    args[n] = NULL;
    for (i = 0; i < HERD; i++) {
        snprintf(owner, sizeof owner, "host-%02d", i);
        CU_ASSERT_FATAL(start(&hosts[i], owner, args) > 0);
    }
    /* Reap every host that ends; with HERD_LONG, once all but one have
     * (and a CMD has started), the one left is the one whose CMD waits
     * for go. */
    deadline = sqle_mono_ms() + WAIT_MS;
    while (sqle_mono_ms() < deadline) {
        int left = 0, started;
        for (i = 0; i < HERD; i++) {
            int st;
            if (hosts[i].pid <= 0)
                continue;
            if (waitpid(hosts[i].pid, &st, WNOHANG) == hosts[i].pid) {
                hosts[i].code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                hosts[i].pid = 0;
            } else {
                left++;
            }
        }
        if (left == 0)
            break;
        text = slurp(ran);
        started = lines_of(text);
        free(text);
        if (mode == HERD_LONG && left == 1 && started >= 1)
            break;
        sqle_sleep_ms(10);
    }
    if (mode == HERD_LONG) {
        FILE *f = fopen(go, "w");
        if (f != NULL)
            fclose(f);
    }
    for (i = 0; i < HERD; i++)
        if (hosts[i].pid > 0)
            reap(&hosts[i], sqle_mono_ms() + WAIT_MS);

    text = slurp(ran);
    while (ran_hosts < HERD &&
           ran_line(text, ran_hosts, names[ran_hosts], sizeof names[0], &tokens[ran_hosts]))
        ran_hosts++;
    if (mode != HERD_QUICK) {
        CU_ASSERT_EQUAL(ran_hosts, 1);
    } else {
        CU_ASSERT(ran_hosts >= 1);
        for (k = 1; k < ran_hosts; k++)
            CU_ASSERT(tokens[k] > tokens[k - 1]);
    }
    if (ran_hosts != 1 && mode != HERD_QUICK)
        fprintf(stderr, "\n  %d CMDs ran:\n%s", ran_hosts, text != NULL ? text : "");
    free(text);
    for (i = 0; i < HERD; i++) {
        char *err = slurp(hosts[i].err_path);
        int runner = 0, names_one = 0;

        for (k = 0; k < ran_hosts; k++) {
            if (strcmp(hosts[i].owner, names[k]) == 0)
                runner = 1;
            if (err != NULL && strstr(err, names[k]) != NULL)
                names_one = 1;
        }
        if (runner) {
            runners_ok += hosts[i].code == 0;
        } else if (hosts[i].code == 75) {
            code75++;
            named += names_one;
            if (!names_one)
                fprintf(stderr, "\n  %s exited 75 without naming a host that ran: %s",
                        hosts[i].owner, err != NULL ? err : "");
        } else {
            other++;
            fprintf(stderr, "\n  %s exited %d: %s", hosts[i].owner, hosts[i].code,
                    err != NULL ? err : "");
        }
        free(err);
        unlink(hosts[i].err_path);
    }
    CU_ASSERT_EQUAL(runners_ok, ran_hosts);
    CU_ASSERT_EQUAL(code75, HERD - ran_hosts);
    CU_ASSERT_EQUAL(named, HERD - ran_hosts);
    CU_ASSERT_EQUAL(other, 0);
    if (mode == HERD_MIN_HOLD && ran_hosts == 1) {
        /* The winner's run has exited, and the row is still its own. */
        int held = 0;
        long long token = 0;
        char who[300];
        CU_ASSERT_EQUAL(status(&held, who, sizeof who, &token), 0);
        CU_ASSERT_EQUAL(held, 1);
        CU_ASSERT_STRING_EQUAL(who, names[0]);
        CU_ASSERT_EQUAL(token, tokens[0]);
    }
    tu_drop(g_db, g_table);
}

static void test_herd(void)
{
    herd(HERD_LONG);
}

static void test_herd_min_hold(void)
{
    herd(HERD_MIN_HOLD);
}

static void test_herd_quick(void)
{
    herd(HERD_QUICK);
}

/*
 * A CMD that cannot be started, three ways: sqlease cannot exec it
 * (exit 127), or CMD is a shell that cannot find (127) or cannot execute
 * (126) what it was given.  With --min-hold 1m each releases the row at
 * once, and the next run takes it with the next token; a CMD that did
 * run keeps it.
 */
static void test_unstartable_releases_at_once(void)
{
    char notexec[1100], shell_missing[1200], shell_notexec[1200];
    char *missing[] = { "run", "--no-wait", "--min-hold", "1m", "--", "./no-such-job", NULL };
    char *not_exec[] = { "run", "--no-wait", "--min-hold", "1m", "--", notexec, NULL };
    char *sh_missing[] = { "run", "--no-wait", "--min-hold", "1m", "--", "sh", "-c",
                           shell_missing, NULL };
    char *sh_notexec[] = { "run", "--no-wait", "--min-hold", "1m", "--", "sh", "-c",
                           shell_notexec, NULL };
    char *ok[] = { "run", "--no-wait", "--min-hold", "1m", "--", "true", NULL };
    struct {
        char **args;
        int code;
    } cases[] = { { missing, 127 }, { not_exec, 127 }, { sh_missing, 127 },
                  { sh_notexec, 126 } };
    long long token = -1, seed = -1;
    char who[300], owner[32];
    char *err = NULL;
    int held = -1;
    size_t i;
    FILE *f;

    new_table();
    if (!migrate_ok())
        return;
    snprintf(notexec, sizeof notexec, "%s/not-executable.sh", tu_dir());
    f = fopen(notexec, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("#!/bin/sh\nexit 0\n", f);
    fclose(f);
    chmod(notexec, 0644);
    snprintf(shell_missing, sizeof shell_missing, "exec ./no-such-job");
    snprintf(shell_notexec, sizeof shell_notexec, "'%s'", notexec);
    CU_ASSERT_EQUAL(status(&held, who, sizeof who, &seed), 0);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(owner, sizeof owner, "broken-%zu", i);
        CU_ASSERT_EQUAL(run1(owner, &err, cases[i].args), cases[i].code);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "releasing the lease at once"));
        free(err);
        err = NULL;
        /* Released before the run exited: free now, not in a minute. */
        CU_ASSERT_EQUAL(status(&held, who, sizeof who, &token), 0);
        CU_ASSERT_EQUAL(held, 0);
        CU_ASSERT_EQUAL(token, seed + (long long)i + 1);
    }
    CU_ASSERT_EQUAL(run1("working", &err, ok), 0);
    free(err);
    CU_ASSERT_EQUAL(status(&held, who, sizeof who, &token), 0);
    CU_ASSERT_EQUAL(held, 1);
    CU_ASSERT_STRING_EQUAL(who, "working");
    CU_ASSERT_EQUAL(token, seed + (long long)(sizeof cases / sizeof cases[0]) + 1);
    /* And its minimum hold holds: the next fire gives up, naming it. */
    CU_ASSERT_EQUAL(run1("late", &err, ok), 75);
    CU_ASSERT_PTR_NOT_NULL(err != NULL ? strstr(err, "held by working") : NULL);
    free(err);
    tu_drop(g_db, g_table);
}

static void add(void)
{
    CU_pSuite s = CU_add_suite("cron fires", NULL, NULL);
    CU_add_test(s, "60 run --no-wait at once: one runs, 59 exit 75 naming it", test_herd);
    CU_add_test(s, "the same with --min-hold: one runs, 59 exit 75 naming it",
                test_herd_min_hold);
    CU_add_test(s, "60 run --no-wait, a quick CMD: every one that gives up names one that ran",
                test_herd_quick);
    CU_add_test(s, "a CMD that cannot be started releases at once despite --min-hold",
                test_unstartable_releases_at_once);
}

int main(void)
{
    int rc;

    g_bin = getenv("SQLEASE_BIN");
    if (g_bin == NULL || g_bin[0] == '\0') {
        fprintf(stderr, "test_cron: SQLEASE_BIN is not set (run it through `scons test`)\n");
        return 2;
    }
    g_db = tu_open();
    if (g_db == NULL)
        return 2;
    rc = tu_main(add);
    sqlease_db_close(g_db);
    tu_cleanup();
    return rc;
}
