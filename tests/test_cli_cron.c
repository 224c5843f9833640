/*
 * test_cli_cron.c -- the scheduled commands of the tool, run as an
 * operator runs them: `sqlease cron FILE` (the crontab-format file, its
 * errors by line and column, --check, two daemons on one lease, a holder
 * killed, SIGHUP, SIGTERM), `run --every` / `run --schedule` (of many
 * runs fired for one fire exactly one runs; who ran it; the late limit;
 * the outcome's row) and `sqlease fires` (the ledger, as text and JSON).
 *
 * The real binary ($SQLEASE_BIN) runs as child processes against the
 * database under test (an SQLite file in the scratch directory, or
 * $SQLEASE_TEST_DSN), on a lease table and a fire table of each test's
 * own, dropped at the end.  Timings are short (--ttl 2s) so that a
 * takeover takes about two seconds.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include "platform.h"
#include "testutil.h"

#define WAIT_MS 60000
#define SEC 1000
/* What a loaded 2-core machine may add to a bound. */
#define SLACK 1500

static const char *g_bin;
static sqlease_db *g_db;
static char g_table[64], g_fire[64];
static int g_seq;

typedef struct proc {
    pid_t pid;
    int code;                 /* exit status, 128+N for signal N, -1 unknown */
    char out[1100], err[1100];
} proc;

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
        buf[n > 0 ? n : 0] = '\0';
    }
    fclose(f);
    return buf;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

static void path_of(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s.%d", tu_dir(), name, ++g_seq);
}

/* Start `sqlease --dsn D --table T --fire-table F ARGS...` in the scratch
 * directory: stdout and stderr to files of its own. */
static pid_t start(proc *p, char *const *args)
{
    char *argv[48];
    int n = 0;
    pid_t pid;

    path_of(p->out, sizeof p->out, "out");
    path_of(p->err, sizeof p->err, "err");
    p->code = -1;
    argv[n++] = (char *)g_bin;
    argv[n++] = "--dsn";
    argv[n++] = (char *)tu_dsn();
    argv[n++] = "--table";
    argv[n++] = g_table;
    argv[n++] = "--fire-table";
    argv[n++] = g_fire;
    for (; *args != NULL && n < 47; args++)
        argv[n++] = *args;
    argv[n] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int out = open(p->out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int err = open(p->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
            dup2(err, 2) < 0 || chdir(tu_dir()) != 0)
            _exit(125);
        execv(g_bin, argv);
        _exit(125);
    }
    p->pid = pid;
    return pid;
}

/* Wait for p until deadline (mono ms); kill it past that.  Its status. */
static int reap(proc *p, int64_t deadline)
{
    int st;

    if (p->pid <= 0)
        return p->code;
    for (;;) {
        pid_t r = waitpid(p->pid, &st, WNOHANG);
        if (r == p->pid) {
            p->code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            p->pid = 0;
            return p->code;
        }
        if ((r < 0 && errno != EINTR) || sqle_mono_ms() >= deadline) {
            kill(p->pid, SIGKILL);
            waitpid(p->pid, &st, 0);
            p->pid = 0;
            return -1;
        }
        sqle_sleep_ms(5);
    }
}

static int exited(void *arg)
{
    proc *p = arg;
    int st;

    if (p->pid <= 0)
        return 1;
    if (waitpid(p->pid, &st, WNOHANG) == p->pid) {
        p->code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        p->pid = 0;
        return 1;
    }
    return 0;
}

/* Run one sqlease to its end: its status, stdout and stderr (to free). */
static int run_cli(char **out, char **err, char *const *args)
{
    proc p;
    int code;

    if (start(&p, args) <= 0)
        return -1;
    code = reap(&p, sqle_mono_ms() + WAIT_MS);
    if (out != NULL)
        *out = slurp(p.out);
    if (err != NULL)
        *err = slurp(p.err);
    unlink(p.out);
    unlink(p.err);
    return code;
}

static int has(const char *text, const char *needle)
{
    return text != NULL && strstr(text, needle) != NULL;
}

static int count_of(const char *text, const char *needle)
{
    int n = 0;
    size_t len = strlen(needle);

    for (; text != NULL && (text = strstr(text, needle)) != NULL; text += len)
        n++;
    return n;
}

static void new_tables(void)
{
    char *args[] = {"migrate", NULL};
    char *err = NULL;
    int code;

    snprintf(g_table, sizeof g_table, "cc_%ld_%d", (long)getpid(), ++g_seq);
    snprintf(g_fire, sizeof g_fire, "cf_%ld_%d", (long)getpid(), g_seq);
    code = run_cli(NULL, &err, args);
    if (code != 0)
        fprintf(stderr, "\n  migrate exited %d: %s\n", code, err != NULL ? err : "");
    free(err);
    CU_ASSERT_EQUAL_FATAL(code, 0);
}

/* The lease row `name` too (migrate seeds the default one). */
static void seed(const char *name)
{
    char *args[] = {"--name", (char *)name, "migrate", NULL};
    char *err = NULL;
    int code = run_cli(NULL, &err, args);

    if (code != 0)
        fprintf(stderr, "\n  migrate --name %s exited %d: %s\n", name, code, err);
    free(err);
    CU_ASSERT_EQUAL_FATAL(code, 0);
}

static void drop_tables(void)
{
    tu_drop(g_db, g_fire);
    tu_drop(g_db, g_table);
}

static void iso_utc(long long ms, char *buf, size_t cap)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;

    gmtime_r(&t, &tm);
    strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static long long wall_ms(void)
{
    struct timespec ts;

    timespec_get(&ts, TIME_UTC);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- a JSON line's fields (what `fires --json` prints, a row a line) */

static long long jint(const char *line, const char *key)
{
    char k[64];
    const char *p;

    snprintf(k, sizeof k, "\"%s\":", key);
    p = strstr(line, k);
    return p != NULL ? strtoll(p + strlen(k), NULL, 10) : -999;
}

static void jstr(const char *line, const char *key, char *out, size_t cap)
{
    char k[64];
    const char *p;
    size_t n;

    snprintf(k, sizeof k, "\"%s\":\"", key);
    out[0] = '\0';
    p = strstr(line, k);
    if (p == NULL)
        return;
    p += strlen(k);
    n = strcspn(p, "\"");
    if (n >= cap)
        n = cap - 1;
    memcpy(out, p, n);
    out[n] = '\0';
}

#define MAXROWS 256

typedef struct frow {
    char name[64], job[80], state[20], owner[64], note[300];
    long long fire, attempt, exit_status, duration, token;
    int has_exit;
} frow;

/* `sqlease [--name NAME] fires --json [EXTRA...]`: its rows (newest
 * first). */
static int fires_json(frow *rows, int cap, const char *name, char *const *extra)
{
    char *args[16], *out = NULL, *err = NULL, *line;
    int n = 0, k = 0, code;

    if (name != NULL) {
        args[k++] = "--name";
        args[k++] = (char *)name;
    }
    args[k++] = "fires";
    args[k++] = "--json";
    for (; extra != NULL && *extra != NULL && k < 15; extra++)
        args[k++] = *extra;
    args[k] = NULL;
    code = run_cli(&out, &err, args);
    CU_ASSERT_EQUAL(code, 0);
    if (code != 0)
        fprintf(stderr, "\n  fires exited %d: %s", code, err);
    for (line = out; line != NULL && *line != '\0' && n < cap;) {
        char *nl = strchr(line, '\n');
        frow *r = &rows[n];
        if (nl != NULL)
            *nl = '\0';
        if (line[0] == '{') {
            memset(r, 0, sizeof *r);
            jstr(line, "name", r->name, sizeof r->name);
            jstr(line, "job", r->job, sizeof r->job);
            jstr(line, "state", r->state, sizeof r->state);
            jstr(line, "owner", r->owner, sizeof r->owner);
            jstr(line, "note", r->note, sizeof r->note);
            r->fire = jint(line, "fire_at_ms");
            r->attempt = jint(line, "attempt");
            r->token = jint(line, "token");
            r->has_exit = strstr(line, "\"exit_status\":null") == NULL;
            r->exit_status = jint(line, "exit_status");
            r->duration = jint(line, "duration_ms");
            n++;
        }
        line = nl != NULL ? nl + 1 : NULL;
    }
    free(out);
    free(err);
    return n;
}

static const frow *row_of(const frow *rows, int n, const char *job, long long fire)
{
    int i;

    for (i = 0; i < n; i++)
        if (rows[i].fire == fire && (job == NULL || strcmp(rows[i].job, job) == 0))
            return &rows[i];
    return NULL;
}

/* ---- the crontab's errors ------------------------------------------ */

/*
 * Every way a line can be wrong: exit 64, and one line on stderr saying
 * FILE:LINE:COL: what, LINE and COL where the fault is.
 */
static void test_crontab_errors(void)
{
    static const struct {
        const char *text, *where, *what;
    } cases[] = {
        {"# a comment\nX=1\n\n*/5 * 32 * * echo hi\n", ":4:7: ", "day of month"},
        {"  0 0 * * MON-XYZ echo hi\n", ":1:15: ", "day of week"},
        {"* * * *\n", ":1:8: ", "five time fields"},
        {"* * * * *\n", ":1:10: ", "no command"},
        {"SQLEASE_JITTER=5s\n", ":1:1: ", "unknown setting SQLEASE_JITTER"},
        {"CRON_TZ=Nowhere/Atlantis\n* * * * * echo\n", ":1:9: ", "Nowhere/Atlantis"},
        {"SQLEASE_JOB=a\n* * * * * echo\nSQLEASE_JOB=a\n  @hourly echo 2\n", ":3:13: ",
         "job 'a' is named twice (line 2 names it first)"},
        {"* * * * * echo\nX=\"abc\n", ":2:3: ", "unclosed quote in the value of X"},
        {"* * * * * echo\nSQLEASE_JOB=last\n", ":2:13: ", "SQLEASE_JOB=last names no job"},
        {"SQLEASE_JOB=a\nSQLEASE_JOB=b\n* * * * * echo\n", ":1:13: ",
         "SQLEASE_JOB=a names no job"},
        {"SQLEASE_MISSED=sometimes\n", ":1:16: ", "once, skip or all"},
        {"SQLEASE_OVERLAP=queue\n", ":1:17: ", "forbid, allow or replace"},
        {"SQLEASE_ABANDONED=twice\n", ":1:19: ", "at-most-once or at-least-once"},
        {"SQLEASE_MAX_ATTEMPTS=0\n", ":1:22: ", "1 to 1000"},
        {"SQLEASE_MAX_AGE=0s\n", ":1:17: ", "above 0"},
        {"@every 5x echo\n", ":1:8: ", "unknown unit"},
        {"@reboot echo\n", ":1:1: ", "@reboot"},
    };
    char path[1100], where[1200], *err = NULL;
    char *args[] = {"cron", path, "--check", NULL};
    size_t i;

    new_tables();
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int code;
        path_of(path, sizeof path, "crontab");
        write_file(path, cases[i].text);
        code = run_cli(NULL, &err, args);
        snprintf(where, sizeof where, "%s%s", path, cases[i].where);
        CU_ASSERT_EQUAL(code, 64);
        CU_ASSERT(has(err, where));
        CU_ASSERT(has(err, cases[i].what));
        CU_ASSERT_EQUAL(count_of(err, "\n"), 1);
        if (code != 64 || !has(err, where) || !has(err, cases[i].what))
            fprintf(stderr, "\n  case %zu: exit %d, wanted %s%s: %s", i, code, where,
                    cases[i].what, err);
        free(err);
        err = NULL;
    }
    drop_tables();
}

/* --check lists each job: name, schedule (and zone), next fire, line. */
static void test_check_lists(void)
{
    char path[1100], *out = NULL, *err = NULL, want[200], when[40];
    char *args[] = {"cron", path, "--check", NULL};
    long long now = wall_ms(), next;
    char *line;

    new_tables();
    path_of(path, sizeof path, "crontab");
    write_file(path, "# every host runs this file\n"
                     "SQLEASE_JOB=backup\n"
                     "30 2 * * * /usr/local/bin/backup --full\n"
                     "CRON_TZ=Europe/Paris\n"
                     "@every 90s echo ping\n"
                     "*/10 * * * * * echo six\n");
    CU_ASSERT_EQUAL(run_cli(&out, &err, args), 0);
    CU_ASSERT_STRING_EQUAL(err, "");
    CU_ASSERT_EQUAL(count_of(out, "\n"), 3);
    CU_ASSERT(has(out, "backup\t30 2 * * *\tnext "));
    CU_ASSERT(has(out, "T02:30:00Z\tline 3\n"));
    /* @every: the next multiple of 90 s since the epoch. */
    next = (now / 90000 + 1) * 90000;
    iso_utc(next, when, sizeof when);
    line = strstr(out, "@every 90s CRON_TZ=Europe/Paris\tnext ");
    CU_ASSERT_PTR_NOT_NULL(line);
    CU_ASSERT(line != NULL && strncmp(line - strlen("echo-00000000\t"), "echo-", 5) == 0);
    snprintf(want, sizeof want, "next %s\tline 5\n", when);
    /* Unless a multiple of 90 s passed between the two clocks' reads. */
    CU_ASSERT(has(out, want) || wall_ms() / 90000 != now / 90000);
    CU_ASSERT(has(out, "*/10 * * * * * CRON_TZ=Europe/Paris\tnext "));
    CU_ASSERT(has(out, "0Z\tline 6\n"));
    free(out);
    free(err);
    drop_tables();
}

typedef struct file_has {
    const char *path, *needle;
} file_has;

static int file_has_it(void *arg)
{
    file_has *f = arg;
    char *text = slurp(f->path);
    int r = has(text, f->needle);

    free(text);
    return r;
}

/* ---- sqlease cron: two daemons, one lease -------------------------- */

typedef struct line {
    char job[80], owner[64], fire_iso[40], greeting[40];
    long long fire;
    int attempt;
} line;

/* The lines the fleet's job appended: "JOB FIRE_MS ATTEMPT OWNER FIRE G1 G2". */
static int read_lines(const char *path, line *v, int cap)
{
    char *text = slurp(path), *p = text;
    int n = 0;

    while (p != NULL && *p != '\0' && n < cap) {
        char g1[20] = "", g2[20] = "";
        if (sscanf(p, "%79s %lld %d %63s %39s %19s %19s", v[n].job, &v[n].fire, &v[n].attempt,
                   v[n].owner, v[n].fire_iso, g1, g2) >= 5) {
            snprintf(v[n].greeting, sizeof v[n].greeting, "%s %s", g1, g2);
            n++;
        }
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    free(text);
    return n;
}

static int count_lines(const char *path)
{
    line v[256];

    return read_lines(path, v, 256);
}

typedef struct lines_want {
    const char *path, *owner;
    int want;
} lines_want;

static int enough_lines(void *arg)
{
    lines_want *w = arg;
    line v[256];
    int i, n = read_lines(w->path, v, 256), k = 0;

    for (i = 0; i < n; i++)
        k += w->owner == NULL || strcmp(v[i].owner, w->owner) == 0;
    return k >= w->want;
}

/*
 * Two `sqlease cron` on one lease, a job every second that appends its
 * environment to a file: each fire's line appears once, from the holder,
 * with SQLEASE_FIRE the ISO form of SQLEASE_FIRE_MS and the file's
 * variable; the holder killed with SIGKILL, the other goes on within a
 * ttl and a retry, with no fire twice, and the ledger accounts for every
 * second: the fires run, the gap's latest caught up, the others missed.
 */
static void test_cron_fleet(void)
{
    char tab[1100], ran[1100], text[2400];
    char *a0[] = {"--owner", "cron-a", "--ttl", "2s", "cron", tab, NULL};
    char *a1[] = {"--owner", "cron-b", "--ttl", "2s", "cron", tab, NULL};
    proc p[2];
    line v[256];
    frow rows[MAXROWS];
    int n, i, k, h, nr, caught = 0, missed = 0;
    long long killed_at, first_other = 0, last_holder = 0;
    lines_want w;
    char *err;

    new_tables();
    path_of(tab, sizeof tab, "crontab");
    path_of(ran, sizeof ran, "ran");
    snprintf(text, sizeof text,
             "GREETING=\"hello world\"\n"
             "SQLEASE_JOB=tick\n"
             "@every 1s echo \"$SQLEASE_JOB $SQLEASE_FIRE_MS $SQLEASE_ATTEMPT $SQLEASE_OWNER "
             "$SQLEASE_FIRE $GREETING\" >> '%s'\n", ran);
    write_file(tab, text);
    CU_ASSERT_FATAL(start(&p[0], a0) > 0);
    CU_ASSERT_FATAL(start(&p[1], a1) > 0);
    w.path = ran;
    w.owner = NULL;
    w.want = 5;
    CU_ASSERT(tu_await(enough_lines, &w, 5 * SEC + 2 * SEC + SLACK));
    n = read_lines(ran, v, 256);
    CU_ASSERT_FATAL(n >= 5);
    h = strcmp(v[0].owner, "cron-a") == 0 ? 0 : 1;
    for (i = 0; i < n; i++) {
        char iso[40];
        CU_ASSERT_STRING_EQUAL(v[i].job, "tick");
        CU_ASSERT_STRING_EQUAL(v[i].owner, h == 0 ? "cron-a" : "cron-b");
        CU_ASSERT_EQUAL(v[i].attempt, 1);
        CU_ASSERT_EQUAL(v[i].fire % SEC, 0);
        iso_utc(v[i].fire, iso, sizeof iso);
        CU_ASSERT_STRING_EQUAL(v[i].fire_iso, iso);
        CU_ASSERT_STRING_EQUAL(v[i].greeting, "hello world");
        if (i > 0)
            CU_ASSERT_EQUAL(v[i].fire - v[i - 1].fire, SEC);
    }
    /* The holder dies without a word. */
    kill(p[h].pid, SIGKILL);
    killed_at = wall_ms();
    reap(&p[h], sqle_mono_ms() + WAIT_MS);
    w.owner = h == 0 ? "cron-b" : "cron-a";
    w.want = 3;
    CU_ASSERT(tu_await(enough_lines, &w, 2 * SEC + 3 * SEC + SLACK));
    kill(p[1 - h].pid, SIGTERM);
    CU_ASSERT_EQUAL(reap(&p[1 - h], sqle_mono_ms() + WAIT_MS), 0);

    n = read_lines(ran, v, 256);
    for (i = 0; i < n; i++) {
        for (k = i + 1; k < n; k++)
            CU_ASSERT(v[i].fire != v[k].fire);
        if (strcmp(v[i].owner, w.owner) == 0) {
            if (first_other == 0)
                first_other = v[i].fire;
        } else {
            CU_ASSERT_EQUAL(first_other, 0); /* the dead one's lines first */
            last_holder = v[i].fire;
        }
    }
    CU_ASSERT(first_other > last_holder);
    /* Taken over within ttl + retry of the kill (and the gap caught up). */
    CU_ASSERT(first_other - killed_at < 2 * SEC + SLACK);
    nr = fires_json(rows, MAXROWS, NULL, NULL);
    for (i = 0; i < nr; i++) {
        CU_ASSERT_STRING_EQUAL(rows[i].job, "tick");
        if (i > 0)
            CU_ASSERT_EQUAL(rows[i - 1].fire - rows[i].fire, SEC); /* every second */
        if (rows[i].fire > last_holder && rows[i].fire < first_other) {
            CU_ASSERT_STRING_EQUAL(rows[i].state, "missed");
            CU_ASSERT_STRING_EQUAL(rows[i].owner, w.owner);
            missed++;
        }
        if (rows[i].fire == first_other) {
            caught++;
            CU_ASSERT_STRING_EQUAL(rows[i].state, "done");
            CU_ASSERT_EQUAL(rows[i].has_exit, 1);
            CU_ASSERT_EQUAL(rows[i].exit_status, 0);
        }
    }
    CU_ASSERT_EQUAL(caught, 1);
    CU_ASSERT(missed >= 0 && missed <= 3);
    for (i = 0; i < n; i++) {
        const frow *r = row_of(rows, nr, "tick", v[i].fire);
        CU_ASSERT_PTR_NOT_NULL(r);
        if (r != NULL)
            CU_ASSERT_STRING_EQUAL(r->owner, v[i].owner);
    }
    err = slurp(p[1 - h].err);
    CU_ASSERT(has(err, "holding the lease with token"));
    free(err);
    unlink(p[0].err);
    unlink(p[1].err);
    drop_tables();
}

/*
 * One daemon and its signals: SIGHUP with a file that does not read
 * keeps the schedule (the log says where the fault is); SIGHUP with a
 * good file adds its new job; SIGTERM stops the command still running
 * (a sleep of a minute) and exits 0 within the kill grace.
 */
static void test_cron_signals(void)
{
    char tab[1100], ran[1100], slow[1100], text[2400];
    char *a0[] = {"--owner", "sig", "--ttl", "6s", "cron", tab, "--kill-grace", "1500ms", NULL};
    proc p;
    lines_want w;
    file_has fh;
    char *err, *pidtext;
    long pid;
    int64_t t0;

    new_tables();
    path_of(tab, sizeof tab, "crontab");
    path_of(ran, sizeof ran, "ran");
    path_of(slow, sizeof slow, "slow");
    snprintf(text, sizeof text,
             "SQLEASE_JOB=tick\n@every 1s echo \"$SQLEASE_JOB $SQLEASE_FIRE_MS $SQLEASE_ATTEMPT "
             "$SQLEASE_OWNER $SQLEASE_FIRE\" >> '%s'\n", ran);
    write_file(tab, text);
    CU_ASSERT_FATAL(start(&p, a0) > 0);
    w.path = ran;
    w.owner = "sig";
    w.want = 1;
    CU_ASSERT_FATAL(tu_await(enough_lines, &w, 2 * SEC + SLACK));

    /* A broken file: it keeps firing, and says line:col. */
    write_file(tab, "SQLEASE_JOB=tick\n@every 1s true\n0 0 31 2 * echo never\n");
    kill(p.pid, SIGHUP);
    fh.path = p.err;
    fh.needle = "keeping the schedule read before";
    CU_ASSERT(tu_await(file_has_it, &fh, 2 * SEC));
    /* And it fires on. */
    w.want = count_lines(ran) + 2;
    CU_ASSERT(tu_await(enough_lines, &w, 2 * SEC + SLACK));
    err = slurp(p.err);
    CU_ASSERT(has(err, "SIGHUP: "));
    CU_ASSERT(has(err, ":3:5: field 3 (day of month): never fires"));
    if (!has(err, ":3:5: field 3 (day of month): never fires"))
        fprintf(stderr, "\n  %s", err != NULL ? err : "");
    CU_ASSERT(has(err, "keeping the schedule read before"));
    free(err);
    CU_ASSERT_EQUAL(p.pid > 0 && !exited(&p), 1);

    /* A good one: its new job runs (and tick, unchanged, goes on). */
    snprintf(text, sizeof text,
             "SQLEASE_JOB=tick\n@every 1s echo \"$SQLEASE_JOB $SQLEASE_FIRE_MS $SQLEASE_ATTEMPT "
             "$SQLEASE_OWNER $SQLEASE_FIRE\" >> '%s'\n"
             "SQLEASE_JOB=slow\n@every 1s echo $$ > '%s'; exec sleep 60\n", ran, slow);
    write_file(tab, text);
    kill(p.pid, SIGHUP);
    for (t0 = sqle_mono_ms(); sqle_mono_ms() - t0 < 3 * SEC + SLACK; sqle_sleep_ms(20)) {
        struct stat st;
        if (stat(slow, &st) == 0 && st.st_size > 0)
            break;
    }
    pidtext = slurp(slow);
    pid = strtol(pidtext, NULL, 10);
    free(pidtext);
    CU_ASSERT_FATAL(pid > 1);
    CU_ASSERT_EQUAL(kill((pid_t)pid, 0), 0);
    err = slurp(p.err);
    CU_ASSERT(has(err, "read again: 2 job(s)"));
    free(err);

    /* SIGTERM: the sleep is stopped, the daemon exits 0, in the grace. */
    t0 = sqle_mono_ms();
    kill(p.pid, SIGTERM);
    CU_ASSERT(tu_await(exited, &p, 2 * SEC + SLACK));
    CU_ASSERT_EQUAL(reap(&p, sqle_mono_ms() + WAIT_MS), 0);
    CU_ASSERT(sqle_mono_ms() - t0 < 2 * SEC + SLACK);
    CU_ASSERT(tu_pid_gone(pid));
    err = slurp(p.err);
    CU_ASSERT(has(err, "job slow: stopping its command"));
    CU_ASSERT(has(err, "shutting down"));
    free(err);
    unlink(p.err);
    drop_tables();
}

/* Whether `status --json` lists `owner` among the ready followers. */
static int ready_listed(void *owner)
{
    char *args[] = {"status", "--json", NULL};
    char want[120], *out = NULL;
    int yes;

    snprintf(want, sizeof want, "{\"owner\":\"%s\",", (const char *)owner);
    yes = run_cli(&out, NULL, args) == 0 && has(out, want);
    free(out);
    return yes;
}

/*
 * Two `sqlease cron` with the hand-over: at the default ttl (30 s) the
 * holder's SIGTERM hands the lease to the other, which fires the next
 * second's job (not a retry of 2 s, let alone a ttl, later), no fire
 * twice.  cron-b says only --priority 0: that alone makes it a ready
 * follower.
 */
static void test_cron_handoff(void)
{
    char tab[1100], ran[1100], text[2400];
    char *a0[] = {"--owner", "cron-a", "cron", "--handoff", tab, NULL};
    char *a1[] = {"--owner", "cron-b", "cron", "--priority", "0", tab, NULL};
    proc p[2];
    line v[256];
    lines_want w;
    int n, i, k;
    long long termed_at, first_b = 0, last_a = 0;
    char *err;

    new_tables();
    path_of(tab, sizeof tab, "crontab");
    path_of(ran, sizeof ran, "ran");
    snprintf(text, sizeof text,
             "SQLEASE_JOB=tick\n@every 1s echo \"$SQLEASE_JOB $SQLEASE_FIRE_MS $SQLEASE_ATTEMPT "
             "$SQLEASE_OWNER $SQLEASE_FIRE\" >> '%s'\n", ran);
    write_file(tab, text);
    CU_ASSERT_FATAL(start(&p[0], a0) > 0);
    w.path = ran;
    w.owner = "cron-a";
    w.want = 2;
    CU_ASSERT_FATAL(tu_await(enough_lines, &w, 3 * SEC + SLACK));
    CU_ASSERT_FATAL(start(&p[1], a1) > 0);
    CU_ASSERT_FATAL(tu_await(ready_listed, "cron-b", 5 * SEC));

    kill(p[0].pid, SIGTERM);
    termed_at = wall_ms();
    CU_ASSERT_EQUAL(reap(&p[0], sqle_mono_ms() + WAIT_MS), 0);
    w.owner = "cron-b";
    w.want = 2;
    CU_ASSERT(tu_await(enough_lines, &w, 3 * SEC + SLACK));
    kill(p[1].pid, SIGTERM);
    CU_ASSERT_EQUAL(reap(&p[1], sqle_mono_ms() + WAIT_MS), 0);

    n = read_lines(ran, v, 256);
    for (i = 0; i < n; i++) {
        for (k = i + 1; k < n; k++)
            CU_ASSERT(v[i].fire != v[k].fire);
        if (strcmp(v[i].owner, "cron-b") == 0) {
            if (first_b == 0)
                first_b = v[i].fire;
        } else {
            CU_ASSERT_EQUAL(first_b, 0); /* a's lines, then b's */
            last_a = v[i].fire;
        }
    }
    CU_ASSERT(first_b > last_a);
    /* The next whole second after the hand-over (about 0.3 s after the
     * SIGTERM), not the follower's next poll. */
    CU_ASSERT(first_b - termed_at < 2 * SEC + SLACK);
    err = slurp(p[0].err);
    CU_ASSERT(has(err, "handed the lease over to cron-b"));
    if (!has(err, "handed the lease over to cron-b"))
        fprintf(stderr, "\n  %s", err != NULL ? err : "");
    free(err);
    unlink(p[0].err);
    unlink(p[1].err);
    drop_tables();
}

/* How many lines of `path` contain `needle`. */
static int lines_with(const char *path, const char *needle)
{
    char *text = slurp(path);
    int n = count_of(text, needle);

    free(text);
    return n;
}

typedef struct lines_with_want {
    const char *path, *needle;
    int want;
} lines_with_want;

static int enough_with(void *arg)
{
    lines_with_want *w = arg;
    return lines_with(w->path, w->needle) >= w->want;
}

/*
 * When the hold ends, every running job gets its SIGTERM at once: two
 * jobs whose cleanup takes 700 ms each end together, not one after the
 * other (two kill graces, while the next holder may already fire), and
 * the daemon is gone within one grace.  A --kill-grace that does not fit
 * inside ttl - renew-deadline is refused.
 */
static void test_cron_stops_jobs_at_once(void)
{
    char tab[1100], ran[1100], job[1100], text[2600];
    char *a0[] = {"--owner", "stop", "--ttl", "6s", "cron", tab, NULL};
    char *bad[] = {"--owner", "stop", "--ttl", "6s", "cron", "--kill-grace", "2s", tab, NULL};
    proc p;
    lines_with_want w;
    char *text2, *q;
    long long t1 = 0, t2 = 0;
    int64_t t0;
    char *err = NULL;

    new_tables();
    path_of(tab, sizeof tab, "crontab");
    path_of(ran, sizeof ran, "ran");
    path_of(job, sizeof job, "job.sh");
    /* A script: a crontab line's % is not the shell's. */
    snprintf(text, sizeof text,
             "trap 'sleep 0.7; echo \"term $SQLEASE_JOB $(date +%%s%%3N)\" >> \"%s\"; exit 0' TERM\n"
             "echo \"up $SQLEASE_JOB\" >> \"%s\"\n"
             "while :; do sleep 0.05; done\n", ran, ran);
    write_file(job, text);
    snprintf(text, sizeof text, "SQLEASE_JOB=one\n@every 1s sh '%s'\n"
             "SQLEASE_JOB=two\n@every 1s sh '%s'\n", job, job);
    write_file(tab, text);
    CU_ASSERT_EQUAL(run_cli(NULL, &err, bad), 64);
    CU_ASSERT(has(err, "--kill-grace 2000ms does not fit inside ttl - renew-deadline (2000ms)"));
    free(err);

    CU_ASSERT_FATAL(start(&p, a0) > 0);
    w.path = ran;
    w.needle = "up ";
    w.want = 2;
    CU_ASSERT_FATAL(tu_await(enough_with, &w, 4 * SEC + SLACK));
    t0 = sqle_mono_ms();
    kill(p.pid, SIGTERM);
    CU_ASSERT_EQUAL(reap(&p, sqle_mono_ms() + WAIT_MS), 0);
    /* One grace (1 s: half of 6 s - 4 s) and the release, not two. */
    CU_ASSERT(sqle_mono_ms() - t0 < 1 * SEC + SLACK);
    text2 = slurp(ran);
    q = text2;
    while (q != NULL && (q = strstr(q, "term ")) != NULL) {
        long long t;
        char job[80];
        if (sscanf(q, "term %79s %lld", job, &t) == 2) {
            if (t1 == 0)
                t1 = t;
            else
                t2 = t;
        }
        q += 5;
    }
    free(text2);
    CU_ASSERT(t1 > 0 && t2 > 0);
    /* Both cleanups ran side by side. */
    CU_ASSERT(llabs(t1 - t2) < 400);
    if (llabs(t1 - t2) >= 400)
        fprintf(stderr, "\n  the two jobs ended %lld ms apart\n", llabs(t1 - t2));
    unlink(p.err);
    drop_tables();
}

/* ---- run --every / --schedule ------------------------------------- */

/* Wait until this host's clock is `lo`..`hi` ms into a period. */
static void align(long long period, long long lo, long long hi)
{
    for (;;) {
        long long in = wall_ms() % period;
        if (in >= lo && in <= hi)
            return;
        sqle_sleep_ms(10);
    }
}

/*
 * Five runs fired at once for one fire of `--every 2s`: one runs (exit
 * 0), four exit 75 naming it.  And with `--every 1m`: a run after the
 * one that ran the fire, in the same minute, exits 75 "was run by";
 * -q says nothing; --conflict-exit-code 0 exits 0.
 */
static void test_run_every_herd(void)
{
    char cmd[1200], ran[1100], *text;
    char *args[5][16];
    proc p[5];
    int i, winners = 0, w = -1, named = 0;
    char owners[5][16];
    char *err = NULL;

    new_tables();
    seed("every2");
    path_of(ran, sizeof ran, "ran");
    snprintf(cmd, sizeof cmd, "echo \"$SQLEASE_OWNER $SQLEASE_JOB $SQLEASE_FIRE_MS\" >> '%s';"
             " sleep 0.3", ran);
    align(2 * SEC, 50, 400);
    for (i = 0; i < 5; i++) {
        int k = 0;
        snprintf(owners[i], sizeof owners[i], "herd-%d", i);
        args[i][k++] = "--owner";
        args[i][k++] = owners[i];
        args[i][k++] = "--name";
        args[i][k++] = "every2";
        args[i][k++] = "run";
        args[i][k++] = "--every";
        args[i][k++] = "2s";
        args[i][k++] = "--";
        args[i][k++] = "sh";
        args[i][k++] = "-c";
        args[i][k++] = cmd;
        args[i][k] = NULL;
        CU_ASSERT_FATAL(start(&p[i], args[i]) > 0);
    }
    for (i = 0; i < 5; i++) {
        reap(&p[i], sqle_mono_ms() + WAIT_MS);
        if (p[i].code == 0) {
            winners++;
            w = i;
        }
    }
    CU_ASSERT_EQUAL(winners, 1);
    CU_ASSERT_FATAL(w >= 0);
    text = slurp(ran);
    CU_ASSERT_EQUAL(count_of(text, "\n"), 1);
    CU_ASSERT(has(text, owners[w]));
    CU_ASSERT(has(text, " every2 "));
    free(text);
    for (i = 0; i < 5; i++) {
        char *e = slurp(p[i].err);
        if (i != w) {
            char is[64], was[64];
            snprintf(is, sizeof is, "is run by %s", owners[w]);
            snprintf(was, sizeof was, "was run by %s", owners[w]);
            CU_ASSERT_EQUAL(p[i].code, 75);
            named += has(e, is) || has(e, was);
            if (!has(e, is) && !has(e, was))
                fprintf(stderr, "\n  %s exited %d: %s", owners[i], p[i].code, e);
        }
        free(e);
        unlink(p[i].err);
        unlink(p[i].out);
    }
    CU_ASSERT_EQUAL(named, 4);

    /* After the run: a fire of --every 1m, run by "first"; the runs
     * after it in the same minute find it run. */
    seed("every1m");
    align(60 * SEC, 50, 56 * SEC);
    {
        char *first[] = {"--owner", "first", "--name", "every1m", "run", "--every", "1m",
                         "--", "true", NULL};
        char *late[] = {"--owner", "late", "--name", "every1m", "run", "--every", "1m", "--",
                        "true", NULL};
        char *quiet[] = {"-q", "--owner", "quiet", "--name", "every1m", "run", "--every",
                         "1m", "--", "true", NULL};
        char *zero[] = {"--owner", "zero", "--name", "every1m", "run", "--every", "1m",
                        "--conflict-exit-code", "0", "--", "true", NULL};
        CU_ASSERT_EQUAL(run_cli(NULL, NULL, first), 0);
        CU_ASSERT_EQUAL(run_cli(NULL, &err, late), 75);
        CU_ASSERT(has(err, "was run by first"));
        free(err);
        CU_ASSERT_EQUAL(run_cli(NULL, &err, quiet), 75);
        CU_ASSERT_STRING_EQUAL(err, "");
        free(err);
        CU_ASSERT_EQUAL(run_cli(NULL, &err, zero), 0);
        CU_ASSERT(has(err, "was run by first"));
        free(err);
    }
    drop_tables();
}

/*
 * The late limit: a fire older than --late-limit is not run (exit 75,
 * "past the late limit"); and the flags that do not go with a schedule.
 */
static void test_run_schedule_flags(void)
{
    static const struct {
        const char *args[12];
        int code;
        const char *what;
    } cases[] = {
        {{"run", "--schedule", "* * * * *", "--timeout", "1s", "--", "true"}, 64,
         "--timeout does not go with a schedule"},
        {{"run", "--every", "1m", "--min-hold", "1s", "--", "true"}, 64,
         "--min-hold does not go with a schedule"},
        {{"run", "--tz", "Europe/Paris", "--", "true"}, 64, "--tz is for --schedule"},
        {{"run", "--late-limit", "1s", "--", "true"}, 64, "--late-limit is for --schedule"},
        {{"run", "--schedule", "0 61 * * *", "--", "true"}, 64,
         "column 3: field 2 (hour)"},
        {{"run", "--schedule", "@every 1s", "--every", "1s", "--", "true"}, 64, "give one"},
        {{"run", "--every", "5x", "--", "true"}, 64, "--every"},
        {{"run", "--schedule", "0 0 * * *", "--tz", "Nowhere/Atlantis", "--", "true"}, 64,
         "Nowhere/Atlantis"},
        {{"--name", "limit", "run", "--every", "1h", "--late-limit", "1ms", "--", "true"}, 75,
         "past the late limit of 1 ms"},
    };
    size_t i;

    new_tables();
    seed("limit");
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *err = NULL;
        int code = run_cli(NULL, &err, (char *const *)cases[i].args);
        CU_ASSERT_EQUAL(code, cases[i].code);
        CU_ASSERT(has(err, cases[i].what));
        if (code != cases[i].code || !has(err, cases[i].what))
            fprintf(stderr, "\n  case %zu: exit %d: %s", i, code, err);
        free(err);
    }
    drop_tables();
}

/* The lease row `name`, read from the database: 1 if read. */
static int lease_read(const char *name, sqlease_lease_info *info)
{
    sqlease_options o;
    sqlease_lease *l = NULL;
    sqlease_error err;
    int ok;

    sqlease_options_init(&o);
    o.table = g_table;
    o.name = name;
    o.owner = "observer";
    ok = sqlease_lease_new(&l, g_db, &o, &err) == SQLEASE_OK &&
         sqlease_lease_status(l, info, &err) == SQLEASE_OK;
    sqlease_lease_free(l);
    return ok;
}

/* 1 when the lease row `name` (a char *) is held by someone. */
static int lease_held(void *name)
{
    sqlease_lease_info info;
    return lease_read(name, &info) && info.held;
}

/* 1 when it is no longer held by the database's clock. */
static int lease_free(void *name)
{
    sqlease_lease_info info;
    return lease_read(name, &info) && !info.held;
}

/*
 * The outcome's row: a run that ends well is 'done' with status 0 and
 * its duration; one that fails is 'failed' with its status; one killed
 * with SIGKILL mid-CMD leaves no row, and the next fire's run records
 * it 'abandoned'.
 */
static void test_run_outcome_rows(void)
{
    char *ok[] = {"--owner", "ok", "--ttl", "1s", "--name", "job-ok", "run", "--every", "2s",
                  "--", "sleep", "0.2", NULL};
    char *bad[] = {"--owner", "bad", "--ttl", "1s", "--name", "job-bad", "run", "--every", "2s",
                   "--", "sh", "-c", "exit 3", NULL};
    char *killed[] = {"--owner", "doomed", "--ttl", "1s", "--name", "job-kill", "run",
                      "--every", "2s", "--", "sleep", "30", NULL};
    char *next[] = {"--owner", "next", "--ttl", "1s", "--name", "job-kill", "run", "--every",
                    "2s", "--", "true", NULL};
    frow rows[MAXROWS];
    proc p;
    int n;
    long long fire_killed;

    new_tables();
    seed("job-ok");
    seed("job-bad");
    seed("job-kill");
    align(2 * SEC, 50, 600);
    CU_ASSERT_EQUAL(run_cli(NULL, NULL, ok), 0);
    CU_ASSERT_EQUAL(run_cli(NULL, NULL, bad), 3);
    n = fires_json(rows, MAXROWS, "job-ok", NULL);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_STRING_EQUAL(rows[0].name, "job-ok");
    CU_ASSERT_STRING_EQUAL(rows[0].job, "job-ok");
    CU_ASSERT_STRING_EQUAL(rows[0].state, "done");
    CU_ASSERT_STRING_EQUAL(rows[0].owner, "ok");
    CU_ASSERT_EQUAL(rows[0].has_exit, 1);
    CU_ASSERT_EQUAL(rows[0].exit_status, 0);
    CU_ASSERT_EQUAL(rows[0].attempt, 1);
    CU_ASSERT(rows[0].duration >= 200 && rows[0].duration < 200 + SLACK);
    CU_ASSERT_EQUAL(rows[0].fire % (2 * SEC), 0);
    n = fires_json(rows, MAXROWS, "job-bad", NULL);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_STRING_EQUAL(rows[0].state, "failed");
    CU_ASSERT_EQUAL(rows[0].has_exit, 1);
    CU_ASSERT_EQUAL(rows[0].exit_status, 3);

    /* Killed mid-CMD: fires shows the fire running, from the lease row. */
    align(2 * SEC, 50, 600);
    CU_ASSERT_FATAL(start(&p, killed) > 0);
    CU_ASSERT_FATAL(tu_await(lease_held, "job-kill", WAIT_MS));
    n = fires_json(rows, MAXROWS, "job-kill", NULL);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_STRING_EQUAL(rows[0].state, "running");
    CU_ASSERT_STRING_EQUAL(rows[0].owner, "doomed");
    fire_killed = rows[0].fire;
    kill(p.pid, SIGKILL);
    reap(&p, sqle_mono_ms() + WAIT_MS);
    /* The next fire, once the dead hold's ttl is over: its last renew
     * may be a moment before the kill, so its row can still be held at
     * the next period's start (and that run would exit 75). */
    CU_ASSERT_FATAL(tu_await(lease_free, "job-kill", 1 * SEC + SLACK));
    align(2 * SEC, 50, 600);
    CU_ASSERT_EQUAL(run_cli(NULL, NULL, next), 0);
    n = fires_json(rows, MAXROWS, "job-kill", NULL);
    CU_ASSERT_EQUAL(n, 2);
    if (n == 2) {
        CU_ASSERT_STRING_EQUAL(rows[0].state, "done");
        CU_ASSERT_STRING_EQUAL(rows[0].owner, "next");
        CU_ASSERT(rows[0].fire > fire_killed);
        CU_ASSERT_EQUAL(rows[1].fire, fire_killed);
        CU_ASSERT_STRING_EQUAL(rows[1].state, "abandoned");
        /* Recorded by the take of the next fire, under its hold; the
         * note names the hold that died. */
        CU_ASSERT_STRING_EQUAL(rows[1].owner, "next");
        CU_ASSERT(has(rows[1].note, "abandoned: doomed (token "));
        CU_ASSERT_EQUAL(rows[1].has_exit, 0);
    }
    unlink(p.err);
    unlink(p.out);
    drop_tables();
}

/* ---- sqlease fires ---------------------------------------------------- */

/*
 * The listing: text with a header and a row per fire, --json, --job,
 * --since, --all-names, an empty ledger, and a fire table that is not
 * there (69, and what to run).
 */
static void test_fires_listing(void)
{
    char *a[] = {"--owner", "h1", "--name", "alpha", "run", "--every", "1h", "--", "true",
                 NULL};
    char *b[] = {"--owner", "h2", "--name", "beta", "run", "--every", "1h", "--", "false",
                 NULL};
    char *text_args[] = {"--name", "alpha", "fires", NULL};
    char *empty_args[] = {"--name", "gamma", "fires", NULL};
    char *since_args[] = {"--name", "alpha", "fires", "--since", "1ms", NULL};
    char *job_args[] = {"--name", "alpha", "fires", "--job", "nope", NULL};
    char *missing[] = {"--fire-table", "no_such_fire_table", "fires", NULL};
    char *all[] = {"--all-names", NULL};
    char *bad_flag[] = {"fires", "--since", "soon", NULL};
    frow rows[MAXROWS];
    char *out = NULL, *err = NULL, iso[40];
    int n;
    long long fire = wall_ms() / 3600000 * 3600000;

    new_tables();
    seed("alpha");
    seed("beta");
    /* Empty: says so. */
    CU_ASSERT_EQUAL(run_cli(&out, &err, empty_args), 0);
    CU_ASSERT(has(out, "no fire of lease 'gamma'"));
    free(out);
    free(err);
    CU_ASSERT_EQUAL(run_cli(NULL, NULL, a), 0);
    CU_ASSERT_EQUAL(run_cli(NULL, NULL, b), 1);
    CU_ASSERT_EQUAL(run_cli(&out, &err, text_args), 0);
    iso_utc(fire, iso, sizeof iso);
    CU_ASSERT(has(out, "FIRE"));
    CU_ASSERT(has(out, "STATE"));
    CU_ASSERT(has(out, iso));
    CU_ASSERT(has(out, "done"));
    CU_ASSERT(has(out, "h1 (token "));
    CU_ASSERT(!has(out, "beta"));
    CU_ASSERT_EQUAL(count_of(out, "\n"), 2);
    free(out);
    free(err);
    CU_ASSERT_EQUAL(run_cli(&out, &err, since_args), 0);
    CU_ASSERT(has(out, "no fire of lease 'alpha' in the last 1 ms"));
    free(out);
    free(err);
    CU_ASSERT_EQUAL(run_cli(&out, &err, job_args), 0);
    CU_ASSERT(has(out, "no fire of job nope of lease 'alpha'"));
    free(out);
    free(err);
    n = fires_json(rows, MAXROWS, NULL, all);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_PTR_NOT_NULL(row_of(rows, n, "alpha", fire));
    CU_ASSERT_PTR_NOT_NULL(row_of(rows, n, "beta", fire));
    if (row_of(rows, n, "beta", fire) != NULL) {
        CU_ASSERT_STRING_EQUAL(row_of(rows, n, "beta", fire)->state, "failed");
        CU_ASSERT_EQUAL(row_of(rows, n, "beta", fire)->exit_status, 1);
    }
    CU_ASSERT_EQUAL(run_cli(&out, &err, missing), 69);
    CU_ASSERT(has(err, "no_such_fire_table"));
    CU_ASSERT(has(err, "run `sqlease migrate`"));
    free(out);
    free(err);
    CU_ASSERT_EQUAL(run_cli(&out, &err, bad_flag), 64);
    free(out);
    free(err);
    drop_tables();
}

static void add(void)
{
    CU_pSuite s = CU_add_suite("cron and scheduled runs", NULL, NULL);
    CU_add_test(s, "a crontab's errors: exit 64, FILE:LINE:COL: what", test_crontab_errors);
    CU_add_test(s, "cron --check lists the jobs and their next fires", test_check_lists);
    CU_add_test(s, "two cron daemons: each fire once; the holder killed, the other goes on",
                test_cron_fleet);
    CU_add_test(s, "cron and its signals: SIGHUP bad and good, SIGTERM in the kill grace",
                test_cron_signals);
    CU_add_test(s, "cron --handoff: SIGTERM hands the lease to the ready cron",
                test_cron_handoff);
    CU_add_test(s, "cron: at a stop every job gets its SIGTERM at once; --kill-grace fits",
                test_cron_stops_jobs_at_once);
    CU_add_test(s, "run --every: of five runs for one fire one runs, four name it",
                test_run_every_herd);
    CU_add_test(s, "run --schedule: the late limit, and the flags it refuses",
                test_run_schedule_flags);
    CU_add_test(s, "run --every: the outcome's row, done, failed, abandoned",
                test_run_outcome_rows);
    CU_add_test(s, "sqlease fires: text, JSON, --job, --since, --all-names, no table",
                test_fires_listing);
}

int main(void)
{
    int rc;

    g_bin = getenv("SQLEASE_BIN");
    if (g_bin == NULL || g_bin[0] == '\0') {
        fprintf(stderr, "test_cli_cron: SQLEASE_BIN is not set (run it through `scons test`)\n");
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
