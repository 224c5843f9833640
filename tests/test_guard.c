/*
 * test_guard.c -- black-box tests of CMD's guard process: the real
 * `sqlease` binary ($SQLEASE_BIN) supervising `sleep`, with sqlease itself
 * frozen (SIGSTOP) or killed (SIGKILL), and a normal loss, which must
 * still go SIGTERM, grace, SIGKILL.
 *
 * The database is the one under test (tu_dsn(): an SQLite file in the
 * scratch directory, or $SQLEASE_TEST_DSN); every test uses its own table,
 * dropped at the end.  sqlease runs in a process group of its own, so the
 * end of every test can check that nothing it started is left: neither in
 * its group (the guard) nor in CMD's.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "platform.h"
#include "cli/os.h"
#include "testutil.h"

/* Short timings: the deadline is at most RD_MS after the last proof, and
 * at least RD_MS - HB_MS after the moment sqlease is frozen. */
#define TTL "3s"
#define HB "500ms"
#define RD "1500ms"
#define RETRY "250ms"
#define HB_MS 500
#define RD_MS 1500

static const char *g_bin;
static char g_table[64];
static int g_seq;
static pid_t g_pid;   /* the sqlease under test, 0 when none */
static char g_log[700];        /* the last started sqlease's stdout and stderr */
static const char *g_env;      /* "K=V" for the next start_sqlease, or NULL */
static const char *g_env2;     /* another one, or NULL */
static const char *g_stderr;   /* the next start_sqlease's stderr (a FIFO), or NULL:
                                  the log file */

static int await_gone(long pid, int64_t until)
{
    while (sqle_mono_ms() < until) {
        if (tu_pid_gone(pid))
            return 1;
        sqle_sleep_ms(5);
    }
    return tu_pid_gone(pid);
}

/* Live (non-zombie) processes whose process group is pgid. */
static int group_members(long pgid)
{
    int n = cli_os_group_members(pgid);

    return n < 0 ? 0 : n;
}

typedef struct guard_search {
    long parent;
    long found;
} guard_search;

static int is_guard(void *ud, const cli_os_proc *p)
{
    guard_search *g = ud;

    if (strcmp(p->comm, "sqlease") == 0 && p->ppid == g->parent && p->pgrp == p->pid &&
        p->state != 'Z')
        g->found = p->pid;
    return g->found != 0;
}

/* The guard of the sqlease process `parent`: its child that runs the
 * sqlease program itself (forked, not exec'd) and leads a process group
 * of its own.  Waits up to timeout_ms; 0 if there is none. */
static long guard_of(long parent, int64_t timeout_ms)
{
    int64_t until = sqle_mono_ms() + timeout_ms;

    do {
        guard_search g = {parent, 0};

        (void)cli_os_proc_scan(is_guard, &g);
        if (g.found != 0)
            return g.found;
        sqle_sleep_ms(5);
    } while (sqle_mono_ms() < until);
    return 0;
}

/* The first number in a file a CMD wrote (waits for a complete line). */
static long read_pid(const char *path, int64_t timeout_ms)
{
    int64_t until = sqle_mono_ms() + timeout_ms;

    while (sqle_mono_ms() < until) {
        FILE *f = fopen(path, "r");
        char line[64] = "";
        int whole = 0;

        if (f != NULL) {
            whole = fgets(line, sizeof line, f) != NULL && strchr(line, '\n') != NULL;
            fclose(f);
        }
        if (whole && atol(line) > 0)
            return atol(line);
        sqle_sleep_ms(10);
    }
    return 0;
}

/* Start `sqlease --dsn .. --table .. <timing> ARGS...` in a process group
 * of its own, output to a log file in the scratch directory. */
static pid_t start_sqlease(const char *first, ...)
{
    char *argv[40];
    char log[700];
    const char *a;
    int n = 0;
    va_list ap;
    pid_t pid;

    argv[n++] = (char *)g_bin;
    argv[n++] = "--dsn";
    argv[n++] = (char *)tu_dsn();
    argv[n++] = "--table";
    argv[n++] = g_table;
    argv[n++] = "--ttl=" TTL;
    argv[n++] = "--heartbeat=" HB;
    argv[n++] = "--renew-deadline=" RD;
    argv[n++] = "--retry=" RETRY;
    argv[n++] = "-v";
    va_start(ap, first);
    for (a = first; a != NULL && n < 39; a = va_arg(ap, const char *))
        argv[n++] = (char *)a;
    va_end(ap);
    argv[n] = NULL;
    snprintf(log, sizeof log, "%s/sqlease.%d.log", tu_dir(), ++g_seq);
    snprintf(g_log, sizeof g_log, "%s", log);
    pid = fork();
    if (pid == 0) {
        int out = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int in = open("/dev/null", O_RDONLY);

        setpgid(0, 0);
        int err = g_stderr != NULL ? open(g_stderr, O_WRONLY) : out;

        if (out < 0 || in < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
            dup2(err, 2) < 0)
            _exit(126);
        if (g_env != NULL)
            putenv((char *)g_env);
        if (g_env2 != NULL)
            putenv((char *)g_env2);
        execv(argv[0], argv);
        _exit(127);
    }
    if (pid > 0)
        setpgid(pid, pid);
    g_pid = pid;
    return pid;
}

/* Wait for sqlease up to timeout_ms; SIGKILL its group after that.
 * Returns its exit status (128+N for a signal), -1 on timeout. */
static int reap_sqlease(int64_t timeout_ms)
{
    int64_t until = sqle_mono_ms() + timeout_ms;
    int st, code = -1;

    if (g_pid <= 0)
        return -1;
    for (;;) {
        pid_t r = waitpid(g_pid, &st, WNOHANG);
        if (r == g_pid) {
            code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            break;
        }
        if (sqle_mono_ms() >= until) {
            kill(-g_pid, SIGKILL);
            waitpid(g_pid, &st, 0);
            break;
        }
        sqle_sleep_ms(5);
    }
    g_pid = 0;
    return code;
}

static void setup_table(void)
{
    sqlease_db *db = tu_open();

    snprintf(g_table, sizeof g_table, "guard_t_%ld_%d", (long)getpid(), ++g_seq);
    if (db != NULL) {
        CU_ASSERT_EQUAL(tu_migrate(db, g_table, "scheduler"), SQLEASE_OK);
        sqlease_db_close(db);
    }
}

static void drop_table(void)
{
    sqlease_db *db = tu_open();

    if (db != NULL) {
        tu_drop(db, g_table);
        sqlease_db_close(db);
    }
}

/*
 * The guard's lines in a log file have the form of sqlease's own log
 * lines: "2026-12-01T05:03:07.123Z sqlease: warn: guard: ...", the time
 * (UTC) within a minute of now, or, with journal, "<4>sqlease: warn:
 * guard: ..." and no time.  Returns how many guard lines the log has.
 */
static int check_guard_lines(const char *path, int journal)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    int n = 0;

    CU_ASSERT_PTR_NOT_NULL(f);
    if (f == NULL)
        return 0;
    while (fgets(line, sizeof line, f) != NULL) {
        const char *g = strstr(line, "sqlease: warn: guard: ");
        int ok;

        if (g == NULL)
            continue;
        n++;
        if (journal) {
            ok = g == line + 3 && strncmp(line, "<4>", 3) == 0;
        } else {
            struct tm tm;
            int ms = -1, used = 0;
            time_t at, now = time(NULL);

            memset(&tm, 0, sizeof tm);
            ok = g == line + 25 &&
                 sscanf(line, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ %n", &tm.tm_year, &tm.tm_mon,
                        &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms, &used) == 7 &&
                 used == 25 && ms >= 0 && ms <= 999 && line[4] == '-' && line[10] == 'T';
            if (ok) {
                tm.tm_year -= 1900;
                tm.tm_mon -= 1;
                at = timegm(&tm);
                ok = at > now - 60 && at <= now + 1;
            }
        }
        if (!ok)
            fprintf(stderr, "\n  a guard line not in the log's form: %s", line);
        CU_ASSERT(ok);
    }
    fclose(f);
    return n;
}

/* sqlease frozen alone: CMD must be gone by the deadline (+ 500 ms), not
 * before the earliest the deadline can be; after SIGCONT and SIGTERM,
 * sqlease exits 0 and nothing it started is left. */
static void test_frozen_sqlease(void)
{
    char pidfile[600], script[800];
    long sleep_pid, sqle_pid, guard;
    int64_t t0;

    setup_table();
    snprintf(pidfile, sizeof pidfile, "%s/sleep.%d.pid", tu_dir(), ++g_seq);
    snprintf(script, sizeof script, "echo $$ > '%s'; exec sleep 60", pidfile);
    sqle_pid = start_sqlease("supervise", "--", "sh", "-c", script, NULL);
    CU_ASSERT_FATAL(sqle_pid > 0);
    sleep_pid = read_pid(pidfile, 10000);
    CU_ASSERT(sleep_pid > 0);
    if (sleep_pid <= 0) {
        kill(-sqle_pid, SIGKILL);
        reap_sqlease(5000);
        return;
    }
    guard = guard_of(sqle_pid, 5000);
    CU_ASSERT(guard > 0);
    sqle_sleep_ms(HB_MS + 200); /* a renew or two happened */
    kill((pid_t)sqle_pid, SIGSTOP);
    t0 = sqle_mono_ms();
    /* The last proof is less than a heartbeat old (plus scheduling). */
    sqle_sleep_ms(RD_MS - HB_MS - 250);
    CU_ASSERT(!tu_pid_gone(sleep_pid));
    CU_ASSERT(await_gone(sleep_pid, t0 + RD_MS + 500));
    if (!tu_pid_gone(sleep_pid))
        fprintf(stderr, "\n  CMD still running %lld ms after sqlease was frozen\n",
                (long long)(sqle_mono_ms() - t0));
    kill((pid_t)sqle_pid, SIGCONT);
    sqle_sleep_ms(500);
    kill((pid_t)sqle_pid, SIGTERM);
    CU_ASSERT_EQUAL(reap_sqlease(10000), 0);
    /* It said so: "lease deadline passed ...; SIGTERM to CMD's ...". */
    CU_ASSERT(check_guard_lines(g_log, 0) >= 1);
    CU_ASSERT(await_gone(sleep_pid, sqle_mono_ms() + 1000));
    CU_ASSERT_EQUAL(group_members(sqle_pid), 0);
    CU_ASSERT_EQUAL(group_members(sleep_pid), 0);
    CU_ASSERT(guard > 0 && await_gone(guard, sqle_mono_ms() + 1000));
    drop_table();
}

/* sqlease killed: CMD's own child, which the death signal does not reach,
 * is killed by the guard when its pipe reaches end-of-file. */
static void test_killed_sqlease(void)
{
    char pidfile[600], script[800];
    long child_pid, sqle_pid, guard;
    int64_t t0;

    setup_table();
    snprintf(pidfile, sizeof pidfile, "%s/grandchild.%d.pid", tu_dir(), ++g_seq);
    snprintf(script, sizeof script, "sleep 60 & echo $! > '%s'; wait", pidfile);
    sqle_pid = start_sqlease("supervise", "--", "sh", "-c", script, NULL);
    CU_ASSERT_FATAL(sqle_pid > 0);
    child_pid = read_pid(pidfile, 10000);
    CU_ASSERT(child_pid > 0);
    /* The guard is forked just after CMD starts, into a process group of
     * its own: wait until it is there, since a kill in the instant between
     * the two is not what this test is about. */
    guard = guard_of(sqle_pid, 5000);
    CU_ASSERT(guard > 0);
    kill((pid_t)sqle_pid, SIGKILL);
    t0 = sqle_mono_ms();
    CU_ASSERT_EQUAL(reap_sqlease(5000), 128 + SIGKILL);
    CU_ASSERT(child_pid > 0 && await_gone(child_pid, t0 + 1000));
    CU_ASSERT(await_gone(child_pid, t0 + 1000) && group_members(sqle_pid) == 0);
    CU_ASSERT(guard > 0 && await_gone(guard, t0 + 1000));
    /* "sqlease is gone; SIGKILL to CMD's process group N", stamped. */
    CU_ASSERT_EQUAL(check_guard_lines(g_log, 0), 1);
    if (child_pid > 0 && !tu_pid_gone(child_pid)) {
        kill((pid_t)child_pid, SIGKILL);
        fprintf(stderr, "\n  CMD's child outlived sqlease\n");
    }
    drop_table();
}

/* A normal loss (the row cleared under the holder): SIGTERM first, and
 * SIGKILL only after the kill grace, from sqlease and not earlier from the
 * guard. */
static void test_loss_keeps_grace(void)
{
    char pidfile[600], termfile[600], script[1600], force[800];
    long cmd_pid, sqle_pid;
    int64_t t0, gone_after;
    FILE *f;
    char line[64] = "";

    setup_table();
    snprintf(pidfile, sizeof pidfile, "%s/trap.%d.pid", tu_dir(), ++g_seq);
    snprintf(termfile, sizeof termfile, "%s/trap.%d.term", tu_dir(), g_seq);
    snprintf(script, sizeof script,
             "trap 'echo term > \"%s\"' TERM; echo $$ > '%s'; "
             "while :; do sleep 0.05; done", termfile, pidfile);
    sqle_pid = start_sqlease("supervise", "--kill-grace", "1s", "--", "sh", "-c", script,
                             NULL);
    CU_ASSERT_FATAL(sqle_pid > 0);
    cmd_pid = read_pid(pidfile, 10000);
    CU_ASSERT(cmd_pid > 0);
    snprintf(force, sizeof force, "'%s' --dsn '%s' --table %s release --force >/dev/null 2>&1",
             g_bin, tu_dsn(), g_table);
    t0 = sqle_mono_ms();
    CU_ASSERT_EQUAL(system(force), 0);
    CU_ASSERT(await_gone(cmd_pid, t0 + HB_MS + 3000));
    gone_after = sqle_mono_ms() - t0;
    f = fopen(termfile, "r");
    CU_ASSERT(f != NULL);
    if (f != NULL) {
        CU_ASSERT(fgets(line, sizeof line, f) != NULL);
        fclose(f);
    }
    CU_ASSERT(strncmp(line, "term", 4) == 0);
    /* The renew that finds the row cleared comes within a heartbeat; the
     * SIGKILL a full grace after the SIGTERM. */
    CU_ASSERT(gone_after >= 900);
    if (gone_after < 900)
        fprintf(stderr, "\n  CMD gone %lld ms after the loss: grace cut short\n",
                (long long)gone_after);
    kill((pid_t)sqle_pid, SIGTERM);
    CU_ASSERT_EQUAL(reap_sqlease(10000), 0);
    CU_ASSERT_EQUAL(group_members(sqle_pid), 0);
    CU_ASSERT_EQUAL(group_members(cmd_pid), 0);
    drop_table();
}

/* ---- a stderr nobody reads ------------------------------------------ */

/* A FIFO whose read end this process holds open and never reads (a
 * stalled log collector): the read end's descriptor, or -1. */
static int stalled_reader(char *path, size_t cap)
{
    snprintf(path, cap, "%s/stderr.%d.fifo", tu_dir(), ++g_seq);
    if (mkfifo(path, 0600) != 0)
        return -1;
    return open(path, O_RDONLY | O_NONBLOCK);
}

/* Fill the FIFO to the brim through a description of this process's own
 * (O_NONBLOCK there leaves sqlease's blocking one alone).  Returns the
 * bytes written. */
static long fill_fifo(const char *path)
{
    char chunk[4096];
    long total = 0;
    ssize_t w;
    int fd = open(path, O_WRONLY | O_NONBLOCK);

    if (fd < 0)
        return -1;
    memset(chunk, 'x', sizeof chunk);
    chunk[sizeof chunk - 1] = '\n';
    for (;;) {
        w = write(fd, chunk, sizeof chunk);
        if (w <= 0) {
            /* The last bytes that fit, until not even one does. */
            w = write(fd, chunk, 1);
            if (w <= 0)
                break;
        }
        total += w;
    }
    close(fd);
    return total;
}

/* A supervise whose CMD (`sleep`, which dies at SIGTERM) runs, with its
 * guard, and whose stderr is then a full pipe that nobody drains.
 * Returns CMD's pid, or 0 (then sqlease is killed and reaped). */
static long start_with_stalled_stderr(const char *fifo, long *sqle_pid, long *guard)
{
    char pidfile[600], script[800];
    long cmd_pid;
    long filled;

    snprintf(pidfile, sizeof pidfile, "%s/sleep.%d.pid", tu_dir(), ++g_seq);
    snprintf(script, sizeof script, "echo $$ > '%s'; exec sleep 60", pidfile);
    g_stderr = fifo;
    *sqle_pid = start_sqlease("supervise", "--", "sh", "-c", script, NULL);
    g_stderr = NULL;
    CU_ASSERT_FATAL(*sqle_pid > 0);
    cmd_pid = read_pid(pidfile, 10000);
    *guard = cmd_pid > 0 ? guard_of(*sqle_pid, 5000) : 0;
    CU_ASSERT(cmd_pid > 0);
    CU_ASSERT(*guard > 0);
    if (cmd_pid <= 0) {
        kill(-(pid_t)*sqle_pid, SIGKILL);
        reap_sqlease(5000);
        return 0;
    }
    filled = fill_fifo(fifo);
    CU_ASSERT(filled > 0);
    return cmd_pid;
}

/*
 * sqlease frozen while its stderr is a pipe nobody drains: its guard must
 * still stop CMD by the deadline (+ 500 ms).  A guard that wrote its line
 * before signalling would block in write() and stop nothing.
 */
static void test_frozen_with_stalled_stderr(void)
{
    char fifo[600];
    long cmd_pid, sqle_pid, guard;
    int64_t t0;
    int rfd, gone;

    setup_table();
    rfd = stalled_reader(fifo, sizeof fifo);
    CU_ASSERT_FATAL(rfd >= 0);
    cmd_pid = start_with_stalled_stderr(fifo, &sqle_pid, &guard);
    if (cmd_pid <= 0) {
        close(rfd);
        drop_table();
        return;
    }
    sqle_sleep_ms(HB_MS + 200); /* a renew or two happened */
    kill((pid_t)sqle_pid, SIGSTOP);
    t0 = sqle_mono_ms();
    gone = await_gone(cmd_pid, t0 + RD_MS + 500);
    fprintf(stderr, "\n  sqlease frozen, its stderr full: CMD %s %lld ms after the freeze\n",
            gone ? "gone" : "still running", (long long)(sqle_mono_ms() - t0));
    CU_ASSERT(gone);
    /* The reader goes away: nothing can block on the pipe any more. */
    close(rfd);
    kill((pid_t)sqle_pid, SIGCONT);
    sqle_sleep_ms(500);
    kill((pid_t)sqle_pid, SIGTERM);
    CU_ASSERT_EQUAL(reap_sqlease(10000), 0);
    CU_ASSERT(await_gone(cmd_pid, sqle_mono_ms() + 1000));
    CU_ASSERT_EQUAL(group_members(sqle_pid), 0);
    CU_ASSERT_EQUAL(group_members(cmd_pid), 0);
    CU_ASSERT(guard > 0 && await_gone(guard, sqle_mono_ms() + 1000));
    unlink(fifo);
    drop_table();
}

/*
 * The same stderr, sqlease running and the database slow past the
 * renew deadline (another connection holds the lease row, or the SQLite
 * file): sqlease's own stop path must stop CMD by the deadline (+ 500
 * ms), signalling before it says so; neither it nor the guard may wait
 * on the pipe first.
 */
static void test_deadline_with_stalled_stderr(void)
{
    char fifo[600];
    long cmd_pid, sqle_pid, guard;
    sqlease_db *locker;
    int64_t t0;
    int rfd, gone, locked;

    setup_table();
    locker = tu_open();
    CU_ASSERT_FATAL(locker != NULL);
    rfd = stalled_reader(fifo, sizeof fifo);
    CU_ASSERT_FATAL(rfd >= 0);
    cmd_pid = start_with_stalled_stderr(fifo, &sqle_pid, &guard);
    if (cmd_pid <= 0) {
        close(rfd);
        sqlease_db_close(locker);
        drop_table();
        return;
    }
    locked = tu_lock_begin(locker, g_table, "scheduler") == SQLEASE_OK;
    t0 = sqle_mono_ms();
    CU_ASSERT(locked);
    gone = locked && await_gone(cmd_pid, t0 + RD_MS + 500);
    fprintf(stderr, "\n  database slow, stderr full: CMD %s %lld ms after the lock\n",
            gone ? "gone" : "still running", (long long)(sqle_mono_ms() - t0));
    CU_ASSERT(gone);
    if (locked)
        CU_ASSERT_EQUAL(tu_lock_end(locker), SQLEASE_OK);
    sqlease_db_close(locker);
    close(rfd);
    kill((pid_t)sqle_pid, SIGTERM);
    CU_ASSERT_EQUAL(reap_sqlease(15000), 0);
    CU_ASSERT(await_gone(cmd_pid, sqle_mono_ms() + 1000));
    CU_ASSERT_EQUAL(group_members(sqle_pid), 0);
    CU_ASSERT_EQUAL(group_members(cmd_pid), 0);
    unlink(fifo);
    drop_table();
}

/* ---- a stop between starting CMD and starting its guard ------------- */

typedef struct state_search {
    long pid;
    char state;
} state_search;

static int find_state(void *ud, const cli_os_proc *p)
{
    state_search *st = ud;

    if (p->pid != st->pid)
        return 0;
    st->state = p->state;
    return 1;
}

/* Wait until process pid is stopped ('T'); 1 if it was by timeout_ms. */
static int await_stopped(long pid, int64_t timeout_ms)
{
    int64_t until = sqle_mono_ms() + timeout_ms;

    do {
        state_search st = {pid, 0};

        (void)cli_os_proc_scan(find_state, &st);
        if (st.state == 'T')
            return 1;
        sqle_sleep_ms(2);
    } while (sqle_mono_ms() < until);
    return 0;
}

/* The preload that stops a process right after its first fork
 * (tests/preload/stop_after_fork.c), beside this program. */
static int preload_path(char *buf, size_t cap)
{
    char self[512];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    char *slash;

    if (n <= 0)
        return -1;
    self[n] = '\0';
    slash = strrchr(self, '/');
    if (slash == NULL)
        return -1;
    *slash = '\0';
    snprintf(buf, cap, "%s/stop_after_fork.so", self);
    return access(buf, R_OK);
}

/*
 * sqlease stopped (SIGSTOP) right after it forked CMD, before anything
 * else: CMD must not run unguarded meanwhile.  Either CMD waits for its
 * guard and so has not run at all, or its guard stops it by the hold's
 * deadline (+ the guard's slack, + 500 ms) while sqlease is stopped.  A
 * guard forked only after CMD has exec'd is never forked: sqlease is
 * stopped first.
 */
static void test_stop_between_cmd_and_guard(void)
{
    static char preload_env[700];
    char pidfile[600], script[800], preload[600];
    long cmd_pid = 0, sqle_pid;
    int64_t t0, bound;
    int stopped, unguarded = 0;

    setup_table();
    CU_ASSERT_FATAL(preload_path(preload, sizeof preload) == 0);
    snprintf(preload_env, sizeof preload_env, "LD_PRELOAD=%s", preload);
    snprintf(pidfile, sizeof pidfile, "%s/gate.%d.pid", tu_dir(), ++g_seq);
    snprintf(script, sizeof script, "echo $$ > '%s'; exec sleep 60", pidfile);
    g_env = preload_env;
    /* An ASan build's runtime wants to be loaded first; the preload has
     * no sanitizer of its own. */
    g_env2 = "ASAN_OPTIONS=verify_asan_link_order=0";
    sqle_pid = start_sqlease("run", "--", "sh", "-c", script, NULL);
    g_env = g_env2 = NULL;
    CU_ASSERT_FATAL(sqle_pid > 0);
    stopped = await_stopped(sqle_pid, 10000);
    CU_ASSERT(stopped);
    /* The hold was proven before the fork: its deadline is at most RD_MS
     * after this. */
    t0 = sqle_mono_ms();
    bound = t0 + RD_MS + 100 + 500;
    if (stopped) {
        cmd_pid = read_pid(pidfile, bound - sqle_mono_ms());
        if (cmd_pid > 0)
            unguarded = !await_gone(cmd_pid, bound);
        sqle_sleep_ms(bound - sqle_mono_ms());
        if (cmd_pid <= 0)
            cmd_pid = read_pid(pidfile, 1);
        if (cmd_pid > 0 && !tu_pid_gone(cmd_pid))
            unguarded = 1;
        fprintf(stderr, "\n  sqlease stopped right after forking CMD: %s\n",
                cmd_pid <= 0 ? "CMD has not run"
                : unguarded  ? "CMD runs past its hold's deadline, unguarded"
                             : "CMD ran and its guard stopped it");
        if (unguarded)
            fprintf(stderr, "  CMD (pid %ld) still running %lld ms after sqlease was stopped\n",
                    cmd_pid, (long long)(sqle_mono_ms() - t0));
    }
    CU_ASSERT(!unguarded);
    if (cmd_pid > 0)
        kill(-(pid_t)cmd_pid, SIGKILL);
    kill((pid_t)sqle_pid, SIGCONT);
    sqle_sleep_ms(200);
    kill((pid_t)sqle_pid, SIGTERM);
    reap_sqlease(10000);
    CU_ASSERT_EQUAL(group_members(sqle_pid), 0);
    if (cmd_pid > 0)
        CU_ASSERT_EQUAL(group_members(cmd_pid), 0);
    drop_table();
}

/* run: CMD's status still comes back through sqlease, and no guard is
 * left behind. */
static void test_run_status(void)
{
    pid_t pid;

    setup_table();
    pid = start_sqlease("run", "--", "sh", "-c", "sleep 0.2; exit 7", NULL);
    CU_ASSERT_FATAL(pid > 0);
    CU_ASSERT_EQUAL(reap_sqlease(20000), 7);
    CU_ASSERT_EQUAL(group_members(pid), 0);
    pid = start_sqlease("run", "--", "sh", "-c", "kill -TERM $$", NULL);
    CU_ASSERT_FATAL(pid > 0);
    CU_ASSERT_EQUAL(reap_sqlease(20000), 128 + SIGTERM);
    CU_ASSERT_EQUAL(group_members(pid), 0);
    drop_table();
}

/* Wait for one sqlease process (not g_pid) up to timeout_ms; SIGKILL its
 * group after that.  Its exit status, or -1. */
static int reap_other(pid_t pid, int64_t timeout_ms)
{
    int64_t until = sqle_mono_ms() + timeout_ms;
    int st;

    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (r < 0 || sqle_mono_ms() >= until) {
            kill(-pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        sqle_sleep_ms(5);
    }
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = calloc(1, 1 << 20);
    size_t n;

    if (f == NULL || buf == NULL) {
        if (f != NULL)
            fclose(f);
        return buf;
    }
    n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Ctrl-Z in a shell (or SIGSTOP to the job's process group) stops
 * sqlease's whole group.  Its guard, in a group of its own, still stops
 * CMD by the deadline + grace + slack; a successor's CMD starts only after
 * the last thing the old CMD wrote; the resumed sqlease exits 75. */
static void test_job_stopped(void)
{
    char pidfile[600], script[1400], logfile[600], script2[800];
    long cmd_pid, holder, guard;
    pid_t successor;
    int64_t t0;
    char *text, *succ;

    setup_table();
    snprintf(pidfile, sizeof pidfile, "%s/holder.%d.pid", tu_dir(), ++g_seq);
    snprintf(logfile, sizeof logfile, "%s/writes.%d.log", tu_dir(), g_seq);
    snprintf(script, sizeof script,
             "echo $$ > '%s'; while :; do echo holder >> '%s'; sleep 0.02; done", pidfile,
             logfile);
    snprintf(script2, sizeof script2, "echo successor >> '%s'", logfile);
    holder = start_sqlease("run", "--kill-grace", "500ms", "--", "sh", "-c", script, NULL);
    CU_ASSERT_FATAL(holder > 0);
    cmd_pid = read_pid(pidfile, 10000);
    CU_ASSERT(cmd_pid > 0);
    guard = guard_of(holder, 5000);
    CU_ASSERT(guard > 0);
    if (cmd_pid <= 0) {
        reap_sqlease(0);
        drop_table();
        return;
    }
    kill(-(pid_t)holder, SIGSTOP);
    t0 = sqle_mono_ms();
    g_pid = 0; /* the holder is reaped below, by reap_other */
    successor = start_sqlease("run", "--", "sh", "-c", script2, NULL);
    CU_ASSERT(successor > 0);
    /* The last proof is before t0: the deadline is at most RD_MS after
     * it, then the guard's slack (at most 100 ms) and the 500 ms grace;
     * a second more for a loaded machine. */
    CU_ASSERT(await_gone(cmd_pid, t0 + RD_MS + 100 + 500 + 1000));
    if (!tu_pid_gone(cmd_pid))
        fprintf(stderr, "\n  CMD still running %lld ms after its job was stopped\n",
                (long long)(sqle_mono_ms() - t0));
    CU_ASSERT_EQUAL(reap_sqlease(20000), 0); /* the successor ran and released */
    text = slurp(logfile);
    succ = text != NULL ? strstr(text, "successor") : NULL;
    CU_ASSERT_PTR_NOT_NULL(succ);
    if (succ != NULL) {
        CU_ASSERT(succ > text && strstr(text, "holder") < succ);
        CU_ASSERT_PTR_NULL(strstr(succ, "holder"));
        if (strstr(succ, "holder") != NULL)
            fprintf(stderr, "\n  the old CMD wrote after its successor started\n");
    }
    free(text);
    kill(-(pid_t)holder, SIGCONT);
    CU_ASSERT_EQUAL(reap_other((pid_t)holder, 10000), 75);
    CU_ASSERT_EQUAL(group_members(holder), 0);
    CU_ASSERT_EQUAL(group_members(cmd_pid), 0);
    CU_ASSERT(guard > 0 && await_gone(guard, sqle_mono_ms() + 1000));
    drop_table();
}

/* sqlease frozen past the deadline while its guard stops CMD with SIGTERM:
 * once it runs again, `run` reports the lease lost (75), not CMD's 143. */
static void test_run_frozen_exits_75(void)
{
    char pidfile[600], script[800];
    long cmd_pid, sqle_pid;
    int64_t t0;
    char log[700];
    char *text;

    setup_table();
    snprintf(pidfile, sizeof pidfile, "%s/sleep.%d.pid", tu_dir(), ++g_seq);
    snprintf(script, sizeof script, "echo $$ > '%s'; exec sleep 60", pidfile);
    sqle_pid = start_sqlease("run", "--", "sh", "-c", script, NULL);
    snprintf(log, sizeof log, "%s/sqlease.%d.log", tu_dir(), g_seq);
    CU_ASSERT_FATAL(sqle_pid > 0);
    cmd_pid = read_pid(pidfile, 10000);
    CU_ASSERT(cmd_pid > 0);
    kill((pid_t)sqle_pid, SIGSTOP);
    t0 = sqle_mono_ms();
    CU_ASSERT(cmd_pid > 0 && await_gone(cmd_pid, t0 + RD_MS + 100 + 750 + 1000));
    kill((pid_t)sqle_pid, SIGCONT);
    CU_ASSERT_EQUAL(reap_sqlease(10000), 75);
    CU_ASSERT(check_guard_lines(log, 0) >= 1);
    text = slurp(log);
    CU_ASSERT(text != NULL && strstr(text, "its guard stopped CMD") != NULL);
    free(text);
    CU_ASSERT_EQUAL(group_members(sqle_pid), 0);
    drop_table();
}

/* With stderr the systemd journal (JOURNAL_STREAM names it), the guard's
 * lines carry the journal's priority prefix and no time, as sqlease's
 * own do. */
static void test_guard_lines_in_journal(void)
{
    char pidfile[600], script[800], log[700], env[100];
    struct stat st;
    long child_pid, sqle_pid, guard;
    int fd;

    setup_table();
    snprintf(pidfile, sizeof pidfile, "%s/journal.%d.pid", tu_dir(), ++g_seq);
    snprintf(script, sizeof script, "sleep 60 & echo $! > '%s'; wait", pidfile);
    /* The file start_sqlease will open (O_TRUNC keeps its inode). */
    snprintf(log, sizeof log, "%s/sqlease.%d.log", tu_dir(), g_seq + 1);
    fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CU_ASSERT_FATAL(fd >= 0 && fstat(fd, &st) == 0);
    close(fd);
    snprintf(env, sizeof env, "JOURNAL_STREAM=%llu:%llu", (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino);
    g_env = env;
    sqle_pid = start_sqlease("supervise", "--", "sh", "-c", script, NULL);
    g_env = NULL;
    CU_ASSERT_FATAL(sqle_pid > 0);
    CU_ASSERT_STRING_EQUAL(g_log, log);
    child_pid = read_pid(pidfile, 10000);
    CU_ASSERT(child_pid > 0);
    guard = guard_of(sqle_pid, 5000);
    CU_ASSERT(guard > 0);
    kill((pid_t)sqle_pid, SIGKILL);
    CU_ASSERT_EQUAL(reap_sqlease(5000), 128 + SIGKILL);
    CU_ASSERT(guard > 0 && await_gone(guard, sqle_mono_ms() + 1000));
    CU_ASSERT(child_pid > 0 && await_gone(child_pid, sqle_mono_ms() + 1000));
    CU_ASSERT_EQUAL(check_guard_lines(log, 1), 1);
    drop_table();
}

/* The tokens a CMD appended to `path`, one a line, into toks[0..cap-1];
 * how many lines are complete. */
static int read_tokens(const char *path, long long *toks, int cap)
{
    char *text = slurp(path);
    char *p = text;
    int n = 0;

    while (p != NULL && *p != '\0' && n < cap) {
        char *nl = strchr(p, '\n');
        if (nl == NULL)
            break;
        toks[n++] = atoll(p);
        p = nl + 1;
    }
    free(text);
    return n;
}

/* The tokens of the CMD starts sqlease logged ("held (token N): started
 * CMD"), in order, into toks[0..cap-1]; how many.  A CMD stopped at once
 * may never write anything itself: the log has every start. */
static int logged_starts(const char *log, long long *toks, int cap)
{
    static const char mark[] = "held (token ";
    char *text = slurp(log);
    const char *p = text;
    int n = 0;

    while (p != NULL && (p = strstr(p, mark)) != NULL && n < cap) {
        const char *end;
        p += sizeof mark - 1;
        end = strchr(p, '\n');
        if (end != NULL && strstr(p, "): started CMD") != NULL &&
            strstr(p, "): started CMD") < end)
            toks[n++] = atoll(p);
    }
    free(text);
    return n;
}

/* supervise frozen while CMD is not running (it exited, and supervise
 * waits out its restart backoff), resumed past the hold's deadline: the
 * restart that falls due must not start CMD under the old token, whose
 * hold is no longer proven (another owner may hold the lease by then).
 * CMD appends its token and exits at once, so each hold starts it twice
 * (at once, and 1 s later) and then waits 2 s: the freeze comes then.
 * After each freeze the old token never starts again (neither in what
 * CMD wrote nor in sqlease's log of its starts, which also has a CMD
 * stopped before it could write), and the next start has a larger one.
 * Which thread of the resumed sqlease runs first is the scheduler's
 * choice, so the freeze is repeated. */
#define STALE_ROUNDS 3
static void test_no_restart_on_stale_hold(void)
{
    char tokfile[600], script[800], log[700];
    long long toks[64], starts[64], frozen[STALE_ROUNDS], prev = 0;
    int n = 0, i, r, nstarts, ok = 1;
    pid_t pid;
    int64_t until;
    char *text;

    setup_table();
    snprintf(tokfile, sizeof tokfile, "%s/tokens.%d", tu_dir(), ++g_seq);
    snprintf(script, sizeof script, "echo \"$SQLEASE_TOKEN\" >> '%s'", tokfile);
    pid = start_sqlease("supervise", "--", "sh", "-c", script, NULL);
    snprintf(log, sizeof log, "%s", g_log);
    CU_ASSERT_FATAL(pid > 0);
    for (r = 0; r < STALE_ROUNDS && ok; r++) {
        /* A new hold's two starts: its token twice, above the last one. */
        until = sqle_mono_ms() + 15000;
        do {
            n = read_tokens(tokfile, toks, 64);
            ok = n >= 2 && toks[n - 1] == toks[n - 2] && toks[n - 1] > prev;
            if (!ok)
                sqle_sleep_ms(10);
        } while (!ok && sqle_mono_ms() < until);
        CU_ASSERT(ok);
        if (!ok)
            break;
        frozen[r] = prev = toks[n - 1];
        /* Freeze once the restarted CMD has been reaped, for a second
         * past the deadline (the last proof is at most a heartbeat old)
         * and past the restart due 2 s after the last start. */
        sqle_sleep_ms(250);
        kill(pid, SIGSTOP);
        CU_ASSERT_EQUAL(read_tokens(tokfile, toks, 64), n);
        sqle_sleep_ms(RD_MS + 1000);
        kill(pid, SIGCONT);
    }
    /* The start after the last freeze. */
    if (ok) {
        until = sqle_mono_ms() + 10000;
        while ((n = read_tokens(tokfile, toks, 64)) > 0 && toks[n - 1] <= prev &&
               sqle_mono_ms() < until)
            sqle_sleep_ms(10);
        CU_ASSERT(n > 0 && toks[n - 1] > prev);
    }
    kill(pid, SIGTERM);
    CU_ASSERT_EQUAL(reap_sqlease(10000), 0);
    CU_ASSERT_EQUAL(group_members(pid), 0);
    /* Tokens only grow, and each frozen hold started CMD exactly twice. */
    n = read_tokens(tokfile, toks, 64);
    nstarts = logged_starts(log, starts, 64);
    for (i = 1; i < n; i++)
        CU_ASSERT(toks[i] >= toks[i - 1]);
    for (i = 1; i < nstarts; i++)
        CU_ASSERT(starts[i] >= starts[i - 1]);
    for (i = 0; i < r && i < STALE_ROUNDS; i++) {
        int k, in_file = 0, in_log = 0;
        for (k = 0; k < n; k++)
            in_file += toks[k] == frozen[i];
        for (k = 0; k < nstarts; k++)
            in_log += starts[k] == frozen[i];
        CU_ASSERT_EQUAL(in_file, 2);
        CU_ASSERT_EQUAL(in_log, 2);
        if (in_log != 2) {
            ok = 0;
            fprintf(stderr, "\n  freeze %d: CMD started %d times under token %lld\n", i + 1,
                    in_log, frozen[i]);
        }
    }
    text = slurp(log);
    if (!ok && text != NULL)
        fprintf(stderr, "\n  sqlease's log:\n%s\n", text);
    free(text);
    drop_table();
}

/* supervise --crash-limit 1 pauses after one quick failure of CMD.  With
 * sqlease frozen past the hold's deadline, its guard stops CMD (SIGTERM:
 * status 143, soon after CMD's start).  That is a lost hold, not CMD
 * failing: supervise must take the lease again and start CMD with a new
 * token, not stay out of contention for --crash-pause.  Repeated, since
 * which thread of the resumed sqlease runs first is the scheduler's
 * choice. */
#define GUARD_ROUNDS 3
static void test_guard_stop_is_no_crash(void)
{
    char file[600], script[800], log[700];
    long long prev = 0;
    int r, lines = 0;
    pid_t pid;
    int64_t t0, until;
    char *text;

    setup_table();
    snprintf(file, sizeof file, "%s/starts.%d", tu_dir(), ++g_seq);
    snprintf(script, sizeof script, "echo \"$$ $SQLEASE_TOKEN\" >> '%s'; exec sleep 60", file);
    pid = start_sqlease("supervise", "--crash-limit", "1", "--crash-pause", "60s", "--", "sh",
                        "-c", script, NULL);
    snprintf(log, sizeof log, "%s", g_log);
    CU_ASSERT_FATAL(pid > 0);
    for (r = 0; r <= GUARD_ROUNDS; r++) {
        long cmd_pid = 0;
        long long token = 0;
        int ok = 0;

        /* The start of a new hold: one more line, with a larger token. */
        until = sqle_mono_ms() + 10000;
        do {
            char *t = slurp(file), *last = NULL, *p;
            int n = 0;

            for (p = t; p != NULL && *p != '\0';) {
                char *nl = strchr(p, '\n');
                if (nl == NULL)
                    break;
                n++;
                last = p;
                p = nl + 1;
            }
            if (n > lines && last != NULL &&
                sscanf(last, "%ld %lld", &cmd_pid, &token) == 2 && token > prev) {
                ok = 1;
                lines = n;
            }
            free(t);
            if (!ok)
                sqle_sleep_ms(10);
        } while (!ok && sqle_mono_ms() < until);
        CU_ASSERT(ok);
        if (!ok) {
            fprintf(stderr, "\n  no new start of CMD after freeze %d\n", r);
            break;
        }
        if (r == GUARD_ROUNDS)
            break;
        prev = token;
        sqle_sleep_ms(HB_MS + 200); /* a renew or two */
        kill(pid, SIGSTOP);
        t0 = sqle_mono_ms();
        /* The deadline, the guard's slack, the grace (750 ms) and a
         * second for a loaded machine. */
        CU_ASSERT(await_gone(cmd_pid, t0 + RD_MS + 100 + 750 + 1000));
        kill(pid, SIGCONT);
    }
    kill(pid, SIGTERM);
    CU_ASSERT_EQUAL(reap_sqlease(10000), 0);
    CU_ASSERT_EQUAL(group_members(pid), 0);
    text = slurp(log);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NULL(strstr(text, "staying out of contention"));
    {
        int acted = 0;
        const char *p;

        for (p = text; (p = strstr(p, "its guard stopped CMD")) != NULL; p++)
            acted++;
        CU_ASSERT_EQUAL(acted, GUARD_ROUNDS);
    }
    if (strstr(text, "staying out of contention") != NULL)
        fprintf(stderr, "\n  sqlease's log:\n%s\n", text);
    free(text);
    drop_table();
}

/* ---- an interactive shell: `script` gives it a terminal ------------- */

typedef struct tty_session {
    pid_t pid;      /* script(1) */
    int in;         /* what we type */
    int out;        /* what the terminal shows */
    char buf[16384];
    size_t len;
} tty_session;

/* Read what the terminal showed until it contains `want` (1) or
 * timeout_ms passes (0). */
static int tty_await(tty_session *t, const char *want, int64_t timeout_ms)
{
    int64_t until = sqle_mono_ms() + timeout_ms;

    for (;;) {
        struct pollfd pfd;
        int64_t left = until - sqle_mono_ms();
        ssize_t n;

        if (strstr(t->buf, want) != NULL)
            return 1;
        if (left <= 0 || t->len + 1 >= sizeof t->buf)
            return 0;
        pfd.fd = t->out;
        pfd.events = POLLIN;
        if (poll(&pfd, 1, (int)left) <= 0)
            continue;
        n = read(t->out, t->buf + t->len, sizeof t->buf - 1 - t->len);
        if (n <= 0)
            return strstr(t->buf, want) != NULL;
        t->len += (size_t)n;
        t->buf[t->len] = '\0';
    }
}

static void tty_type(tty_session *t, const char *keys)
{
    if (write(t->in, keys, strlen(keys)) < 0)
        CU_FAIL("cannot type into script(1)");
}

static int kill_in_session(void *ud, const cli_os_proc *p)
{
    if (p->session == *(const long *)ud)
        kill((pid_t)p->pid, SIGKILL);
    return 0;
}

/* Everything in the terminal's session (the shell, sqlease, CMD, the
 * guard is in the session too), by pid. */
static void kill_session(long sid)
{
    (void)cli_os_proc_scan(kill_in_session, &sid);
}

/* In a shell with job control on a terminal, `run` hands CMD the
 * terminal (CMD reads a line typed at it), and Ctrl-Z suspends the whole
 * job: the shell gets control back, `fg` gives the terminal to CMD again
 * and it reads the next line; `run` exits with CMD's status. */
static void test_interactive_run(void)
{
    char job[700], cmd[1200];
    const char *shell = access("/bin/bash", X_OK) == 0 ? "/bin/bash" : NULL;
    tty_session t;
    int in[2], out[2];
    long sid = 0;
    FILE *f;

    if (shell == NULL || access("/usr/bin/script", X_OK) != 0) {
        tu_skip("needs /bin/bash and script(1)");
        return;
    }
    setup_table();
    snprintf(job, sizeof job, "%s/job.%d.sh", tu_dir(), ++g_seq);
    f = fopen(job, "w");
    CU_ASSERT_FATAL(f != NULL);
    fprintf(f,
            "set -m\n"
            "echo \"sid=$(cut -d' ' -f6 /proc/$$/stat)\"\n"
            "'%s' --dsn '%s' --table %s run -- sh -c "
            "'echo ready; read a; echo \"got:$a\"; echo ready2; read b; echo \"got2:$b\"; exit 4'\n"
            "echo \"suspended=$?\"\n"
            "fg\n"
            "echo \"final=$?\"\n",
            g_bin, tu_dsn(), g_table);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s --norc --noprofile %s", shell, job);
    CU_ASSERT_FATAL(pipe(in) == 0 && pipe(out) == 0);
    memset(&t, 0, sizeof t);
    t.pid = fork();
    if (t.pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(out[1], 2);
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        execlp("script", "script", "-qec", cmd, "/dev/null", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    t.in = in[1];
    t.out = out[0];
    CU_ASSERT_FATAL(t.pid > 0);

    CU_ASSERT(tty_await(&t, "sid=", 10000) && tty_await(&t, "\n", 1000));
    {
        const char *p = strstr(t.buf, "sid=");
        sid = p != NULL ? atol(p + 4) : 0;
    }
    CU_ASSERT(tty_await(&t, "ready", 15000));
    tty_type(&t, "hello\n");
    CU_ASSERT(tty_await(&t, "got:hello", 10000));
    CU_ASSERT(tty_await(&t, "ready2", 5000));
    tty_type(&t, "\x1a"); /* Ctrl-Z */
    CU_ASSERT(tty_await(&t, "suspended=148", 10000)); /* 128 + SIGTSTP */
    tty_type(&t, "second\n");
    CU_ASSERT(tty_await(&t, "got2:second", 10000));
    CU_ASSERT(tty_await(&t, "final=4", 10000));
    if (strstr(t.buf, "final=4") == NULL)
        fprintf(stderr, "\n  the terminal showed:\n%s\n", t.buf);
    close(t.in);
    /* The shell exits by itself after "final"; only what is left of the
     * session after script has exited (or a hung one) is killed. */
    CU_ASSERT_EQUAL(reap_other(t.pid, 10000), 0);
    if (sid > 0)
        kill_session(sid);
    close(t.out);
    drop_table();
}

static void add_tests(void)
{
    CU_pSuite s = CU_add_suite("CMD guard", NULL, NULL);

    CU_add_test(s, "a frozen sqlease's CMD is stopped by its deadline", test_frozen_sqlease);
    CU_add_test(s, "a killed sqlease takes CMD's children with it", test_killed_sqlease);
    CU_add_test(s, "a normal loss still gives CMD its kill grace", test_loss_keeps_grace);
    CU_add_test(s, "a frozen sqlease whose stderr nobody reads: CMD stopped by its deadline",
                test_frozen_with_stalled_stderr);
    CU_add_test(s, "a deadline while stderr is a full pipe: CMD stopped by it",
                test_deadline_with_stalled_stderr);
    CU_add_test(s, "sqlease stopped between forking CMD and its guard: CMD never unguarded",
                test_stop_between_cmd_and_guard);
    CU_add_test(s, "run passes CMD's status through and leaves nothing",
                test_run_status);
    CU_add_test(s, "a stopped job's CMD is stopped by the guard before a successor runs",
                test_job_stopped);
    CU_add_test(s, "run exits 75 after its guard stopped CMD", test_run_frozen_exits_75);
    CU_add_test(s, "the guard's lines in the journal carry its priority prefix",
                test_guard_lines_in_journal);
    CU_add_test(s, "supervise frozen in its restart backoff: no CMD under the old token",
                test_no_restart_on_stale_hold);
    CU_add_test(s, "a CMD its guard stopped is not a quick crash for --crash-limit",
                test_guard_stop_is_no_crash);
    CU_add_test(s, "interactive run: CMD reads the terminal; Ctrl-Z suspends the job",
                test_interactive_run);
}

int main(void)
{
    static const char *const vars[] = {"SQLEASE_DSN", "SQLEASE_TABLE", "SQLEASE_NAME",
                                       "SQLEASE_TTL", "SQLEASE_HEARTBEAT",
                                       "SQLEASE_RENEW_DEADLINE", "SQLEASE_RETRY",
                                       "SQLEASE_OWNER", "SQLEASE_TOKEN",
                                       "SQLEASE_QUERY_TIMEOUT", "SQLEASE_LOGIN_TIMEOUT"};
    int rc;

    g_bin = getenv("SQLEASE_BIN");
    if (g_bin == NULL || g_bin[0] == '\0' || access(g_bin, X_OK) != 0) {
        fprintf(stderr, "test_guard: set SQLEASE_BIN to the sqlease binary to test "
                        "(e.g. build/bin/sqlease); got '%s'\n", g_bin ? g_bin : "(unset)");
        return 1;
    }
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    signal(SIGPIPE, SIG_IGN);
    rc = tu_main(add_tests);
    if (g_pid > 0) {
        kill(-g_pid, SIGKILL);
        waitpid(g_pid, NULL, 0);
    }
    if (rc == 0)
        tu_cleanup();
    return rc;
}
