/*
 * test_platform.c -- CUnit tests for the POSIX side of the library's
 * platform layer (platform.h: condition-variable deadlines on the
 * monotonic clock, threads and atomics, clocks, host identity) and of the
 * tool's OS layer (cli/os.h: child processes -- exit codes, process
 * groups, environment, exec failures, death signal --, signals, the wall
 * clock).
 *
 * Temporary files live in one mkdtemp directory removed at the end.
 * Processes are watched with bounded polls; a process that is a zombie
 * (its parent gone, nobody reaping it) counts as gone.
 */
#define _GNU_SOURCE

#include "platform.h"
#include "cli/os.h"

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static char g_tmpdir[256];

/* ---- helpers ------------------------------------------------------- */

static void tmp_path(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", g_tmpdir, name);
}

static int make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");

    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    snprintf(g_tmpdir, sizeof g_tmpdir, "%s/sqlease-platform-XXXXXX", base);
    return mkdtemp(g_tmpdir) != NULL ? 0 : -1;
}

static void remove_tmpdir(void)
{
    DIR *d;
    struct dirent *e;
    char p[512];

    if (g_tmpdir[0] == '\0')
        return;
    d = opendir(g_tmpdir);
    if (d != NULL) {
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(p, sizeof p, "%s/%s", g_tmpdir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(g_tmpdir);
}

static int str_is(const char *s, const char *want)
{
    return s != NULL && strcmp(s, want) == 0;
}

/* A file's content as a pid once a full line is there; 0 if not (yet). */
static long read_pid_file(const char *path)
{
    char buf[64];
    FILE *f = fopen(path, "r");
    size_t n;

    if (f == NULL)
        return 0;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (strchr(buf, '\n') == NULL)
        return 0;
    return strtol(buf, NULL, 10);
}

static long wait_pid_file(const char *path, int64_t timeout_ms)
{
    int64_t end = sqle_mono_ms() + timeout_ms;
    long pid;

    while ((pid = read_pid_file(path)) == 0 && sqle_mono_ms() < end)
        sqle_sleep_ms(10);
    return pid;
}

/* Gone: no such process, or a zombie (dead, waiting to be reaped by
 * whoever inherited it). */
static int pid_gone(long pid)
{
    return !cli_sys_pid_alive(pid);
}

static int wait_pid_gone(long pid, int64_t timeout_ms)
{
    int64_t end = sqle_mono_ms() + timeout_ms;

    while (!pid_gone(pid)) {
        if (sqle_mono_ms() >= end)
            return 0;
        sqle_sleep_ms(10);
    }
    return 1;
}

/* Spawn argv, wait for it without bound; the exit code, or -1000 on
 * spawn/wait failure. */
static int run_child(char *const argv[], const char *const *env, size_t nenv)
{
    sqle_child c;
    char err[256];
    int code = -1000;

    if (sqle_child_spawn(&c, argv, env, nenv, err, sizeof err) != 0)
        return -1000;
    if (sqle_child_wait(&c, -1, &code) != 1)
        code = -1000;
    sqle_child_close(&c);
    return code;
}

/* ---- condition variables ------------------------------------------- */

static void test_cond_timeout(void)
{
    sqle_mutex m;
    sqle_cond c;
    int64_t deadline, after;
    int rc = 0;

    CU_ASSERT_FATAL(sqle_mutex_init(&m) == 0);
    CU_ASSERT_FATAL(sqle_cond_init(&c) == 0);
    sqle_mutex_lock(&m);
    deadline = sqle_mono_ms() + 200;
    while (rc == 0)
        rc = sqle_cond_wait_until(&c, &m, deadline);
    after = sqle_mono_ms();
    sqle_mutex_unlock(&m);
    CU_ASSERT_EQUAL(rc, 1);
    CU_ASSERT(after >= deadline);
    CU_ASSERT(after <= deadline + 500);

    /* A deadline in the past times out at once. */
    sqle_mutex_lock(&m);
    deadline = sqle_mono_ms() - 10;
    CU_ASSERT_EQUAL(sqle_cond_wait_until(&c, &m, deadline), 1);
    CU_ASSERT(sqle_mono_ms() - deadline < 500);
    sqle_mutex_unlock(&m);

    sqle_cond_destroy(&c);
    sqle_mutex_destroy(&m);
}

typedef struct {
    sqle_mutex m;
    sqle_cond c;
    int flag;
    int64_t delay_ms;
} wake_ctx;

static void waker(void *p)
{
    wake_ctx *w = p;

    sqle_sleep_ms(w->delay_ms);
    sqle_mutex_lock(&w->m);
    w->flag = 1;
    sqle_cond_signal(&w->c);
    sqle_mutex_unlock(&w->m);
}

static void check_wake(int64_t timeout_ms)
{
    wake_ctx w;
    sqle_thread t;
    int64_t start, deadline, elapsed;
    int timed_out = 0;

    memset(&w, 0, sizeof w);
    w.delay_ms = 50;
    CU_ASSERT_FATAL(sqle_mutex_init(&w.m) == 0);
    CU_ASSERT_FATAL(sqle_cond_init(&w.c) == 0);
    start = sqle_mono_ms();
    deadline = timeout_ms < 0 ? -1 : start + timeout_ms;
    CU_ASSERT_FATAL(sqle_thread_start(&t, waker, &w) == 0);
    sqle_mutex_lock(&w.m);
    while (!w.flag && !timed_out)
        timed_out = sqle_cond_wait_until(&w.c, &w.m, deadline) == 1;
    sqle_mutex_unlock(&w.m);
    elapsed = sqle_mono_ms() - start;
    sqle_thread_join(&t);
    CU_ASSERT_FALSE(timed_out);
    CU_ASSERT_EQUAL(w.flag, 1);
    CU_ASSERT(elapsed >= 50);
    CU_ASSERT(elapsed < 2000);
    sqle_cond_destroy(&w.c);
    sqle_mutex_destroy(&w.m);
}

static void test_cond_signal_wakes(void)
{
    check_wake(5000);
}

static void test_cond_unbounded_wait(void)
{
    check_wake(-1);
}

/* ---- threads and atomics ------------------------------------------- */

#define N_THREADS 8
#define N_ITERS 20000

typedef struct {
    sqle_mutex m;
    long counter;
    sqle_atomic_u64 atomic;
    uint64_t ids[N_THREADS];
    int same_id_twice[N_THREADS];
} count_ctx;

typedef struct {
    count_ctx *ctx;
    int index;
} count_arg;

static void counter_thread(void *p)
{
    count_arg *a = p;
    int i;

    a->ctx->ids[a->index] = sqle_thread_self();
    for (i = 0; i < N_ITERS; i++) {
        sqle_mutex_lock(&a->ctx->m);
        a->ctx->counter++;
        sqle_mutex_unlock(&a->ctx->m);
        sqle_atomic_add(&a->ctx->atomic, 2);
    }
    a->ctx->same_id_twice[a->index] = a->ctx->ids[a->index] == sqle_thread_self();
}

static void test_threads_counter(void)
{
    static count_ctx ctx;
    count_arg args[N_THREADS];
    sqle_thread t[N_THREADS];
    int i, j, started = 0;

    memset(&ctx, 0, sizeof ctx);
    CU_ASSERT_FATAL(sqle_mutex_init(&ctx.m) == 0);
    for (i = 0; i < N_THREADS; i++) {
        args[i].ctx = &ctx;
        args[i].index = i;
        if (sqle_thread_start(&t[i], counter_thread, &args[i]) == 0)
            started++;
    }
    CU_ASSERT_EQUAL_FATAL(started, N_THREADS);
    for (i = 0; i < N_THREADS; i++)
        sqle_thread_join(&t[i]);
    CU_ASSERT_EQUAL(ctx.counter, (long)N_THREADS * N_ITERS);
    CU_ASSERT_EQUAL(sqle_atomic_load(&ctx.atomic), (uint64_t)N_THREADS * N_ITERS * 2);
    for (i = 0; i < N_THREADS; i++) {
        CU_ASSERT(ctx.same_id_twice[i]);
        CU_ASSERT(ctx.ids[i] != sqle_thread_self());
        for (j = 0; j < i; j++)
            CU_ASSERT(ctx.ids[i] != ctx.ids[j]);
    }
    CU_ASSERT_EQUAL(sqle_thread_self(), sqle_thread_self());
    sqle_mutex_destroy(&ctx.m);
}

/* Many small-stack threads at once: what 1000 leases look like. */
#define N_MANY 400

typedef struct {
    sqle_mutex m;
    sqle_cond c;
    int arrived;
    int release;
} gate_ctx;

static void gate_thread(void *p)
{
    gate_ctx *g = p;
    char scratch[16 * 1024];

    memset(scratch, 1, sizeof scratch); /* the stack really is usable */
    sqle_mutex_lock(&g->m);
    g->arrived += scratch[100];
    sqle_cond_broadcast(&g->c);
    while (!g->release)
        sqle_cond_wait_until(&g->c, &g->m, -1);
    sqle_mutex_unlock(&g->m);
}

static void test_many_threads(void)
{
    static sqle_thread t[N_MANY];
    gate_ctx g;
    int i, started = 0, all;
    int64_t deadline;

    memset(&g, 0, sizeof g);
    CU_ASSERT_FATAL(sqle_mutex_init(&g.m) == 0);
    CU_ASSERT_FATAL(sqle_cond_init(&g.c) == 0);
    for (i = 0; i < N_MANY; i++) {
        if (sqle_thread_start(&t[i], gate_thread, &g) != 0)
            break;
        started++;
    }
    CU_ASSERT_EQUAL(started, N_MANY);
    deadline = sqle_mono_ms() + 10000;
    sqle_mutex_lock(&g.m);
    while (g.arrived < started && sqle_cond_wait_until(&g.c, &g.m, deadline) == 0)
        ;
    all = g.arrived == started;
    g.release = 1;
    sqle_cond_broadcast(&g.c);
    sqle_mutex_unlock(&g.m);
    CU_ASSERT(all);
    for (i = 0; i < started; i++)
        sqle_thread_join(&t[i]);
    sqle_cond_destroy(&g.c);
    sqle_mutex_destroy(&g.m);
}

/* ---- clocks -------------------------------------------------------- */

static void test_clocks(void)
{
    int64_t prev = sqle_mono_ms(), now, start;
    int i, backwards = 0;

    CU_ASSERT(prev > 0);
    for (i = 0; i < 100000; i++) {
        now = sqle_mono_ms();
        if (now < prev)
            backwards = 1;
        prev = now;
    }
    CU_ASSERT_FALSE(backwards);
    start = sqle_mono_ms();
    sqle_sleep_ms(60);
    now = sqle_mono_ms();
    CU_ASSERT(now - start >= 60);
    CU_ASSERT(now - start < 1000);
    sqle_sleep_ms(0);
    sqle_sleep_ms(-5);
    /* 2020-01-01 .. 2200-01-01 in epoch ms. */
    CU_ASSERT(sqle_wall_ms() > INT64_C(1577836800000));
    CU_ASSERT(sqle_wall_ms() < INT64_C(7258118400000));
}

/*
 * The lease clock counts the time the machine was suspended (Linux:
 * CLOCK_BOOTTIME, which a suspend does not stop; CLOCK_MONOTONIC does):
 * a holder whose machine slept through its ttl wakes with its deadline
 * passed.  No test here can suspend the machine, so it checks what that
 * rests on: the clock is CLOCK_BOOTTIME's reading, and a timed wait,
 * which runs on CLOCK_MONOTONIC, comes back at least every quarter
 * second to look at it (as a spurious wake-up), whatever its deadline.
 */
static void test_clock_counts_suspend(void)
{
#ifdef CLOCK_BOOTTIME
    struct timespec ts;
    sqle_mutex m;
    sqle_cond c;
    int64_t boot, mono, t0, took;
    int rc;

    CU_ASSERT_FATAL(clock_gettime(CLOCK_BOOTTIME, &ts) == 0);
    boot = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    mono = sqle_mono_ms();
    CU_ASSERT(mono >= boot && mono - boot < 50);

    CU_ASSERT_FATAL(sqle_mutex_init(&m) == 0);
    CU_ASSERT_FATAL(sqle_cond_init(&c) == 0);
    sqle_mutex_lock(&m);
    t0 = sqle_mono_ms();
    rc = sqle_cond_wait_until(&c, &m, t0 + 5000);
    took = sqle_mono_ms() - t0;
    sqle_mutex_unlock(&m);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(took >= 200);
    CU_ASSERT(took < 1500); /* 250 ms, and a busy machine's delay */
    sqle_cond_destroy(&c);
    sqle_mutex_destroy(&m);
#else
    CU_PASS("no CLOCK_BOOTTIME on this system: the lease clock is CLOCK_MONOTONIC");
#endif
}

/* ---- host, identity ------------------------------------------------ */

static void test_uuid(void)
{
    unsigned char a[16], b[16];

    CU_ASSERT_EQUAL(sqle_uuid_random(a), 0);
    CU_ASSERT_EQUAL(sqle_uuid_random(b), 0);
    CU_ASSERT_EQUAL(a[6] >> 4, 4);
    CU_ASSERT_EQUAL(b[6] >> 4, 4);
    CU_ASSERT_EQUAL(a[8] & 0xC0, 0x80);
    CU_ASSERT(memcmp(a, b, 16) != 0);
}

static void test_host_pid_env(void)
{
    char buf[300], small[2];

    memset(buf, 'x', sizeof buf);
    sqle_hostname(buf, sizeof buf);
    CU_ASSERT(buf[0] != '\0');
    CU_ASSERT(strlen(buf) < sizeof buf);
    sqle_hostname(small, sizeof small);
    CU_ASSERT(small[0] != '\0');
    CU_ASSERT_EQUAL(small[1], '\0');
    CU_ASSERT_EQUAL(sqle_pid(), (long)getpid());

    CU_ASSERT_EQUAL(setenv("SQLEASE_PLATFORM_TEST_VAR", "v1", 1), 0);
    CU_ASSERT(str_is(sqle_getenv("SQLEASE_PLATFORM_TEST_VAR"), "v1"));
    unsetenv("SQLEASE_PLATFORM_TEST_VAR");
    CU_ASSERT_PTR_NULL(sqle_getenv("SQLEASE_PLATFORM_TEST_VAR"));
}

/* ---- children ------------------------------------------------------ */

static void test_child_exit_codes(void)
{
    char *exit3[] = {"sh", "-c", "exit 3", NULL};
    char *selfterm[] = {"sh", "-c", "kill -TERM $$", NULL};
    char *selfkill[] = {"sh", "-c", "kill -KILL $$", NULL};
    char *truecmd[] = {"true", NULL};

    CU_ASSERT_EQUAL(run_child(exit3, NULL, 0), 3);
    CU_ASSERT_EQUAL(run_child(selfterm, NULL, 0), 143);
    CU_ASSERT_EQUAL(run_child(selfkill, NULL, 0), 137);
    CU_ASSERT_EQUAL(run_child(truecmd, NULL, 0), 0);
}

static void test_child_waited_twice(void)
{
    char *exit7[] = {"sh", "-c", "exit 7", NULL};
    sqle_child c;
    char err[256];
    int code = -1;

    CU_ASSERT_FATAL(sqle_child_spawn(&c, exit7, NULL, 0, err, sizeof err) == 0);
    CU_ASSERT_EQUAL(sqle_child_wait(&c, 5000, &code), 1);
    CU_ASSERT_EQUAL(code, 7);
    CU_ASSERT_EQUAL(c.running, 0);
    CU_ASSERT_EQUAL(sqle_child_wait(&c, 0, &code), -1);
    sqle_child_close(&c);
}

typedef struct gate_seen {
    const char *marker;   /* the file the child writes first thing */
    long pid;
    int marker_at_gate;   /* the marker existed while the gate ran */
    int answer;           /* what the gate returns */
} gate_seen;

/* The gate: the child exists and has run nothing of its own yet, however
 * long this takes. */
static int gate_look(void *ud, long pid)
{
    gate_seen *g = ud;

    g->pid = pid;
    sqle_sleep_ms(200);
    g->marker_at_gate = access(g->marker, F_OK) == 0;
    return g->answer;
}

/* A gated child runs nothing until its gate has returned 0, and nothing
 * at all when the gate says no (it is ended unrun and reaped). */
static void test_child_gated(void)
{
    char marker[600], script[700];
    char *argv[] = {"sh", "-c", script, NULL};
    gate_seen g;
    sqle_child c;
    char err[256];
    int code = -1;

    tmp_path(marker, sizeof marker, "gate.marker");
    snprintf(script, sizeof script, "echo ran > '%s'", marker);
    (void)unlink(marker);

    memset(&g, 0, sizeof g);
    g.marker = marker;
    g.answer = 1;
    CU_ASSERT_EQUAL(sqle_child_spawn_gated(&c, argv, NULL, 0, 0, gate_look, &g, err,
                                           sizeof err), 1);
    CU_ASSERT(g.pid > 0);
    CU_ASSERT_EQUAL(g.marker_at_gate, 0);
    CU_ASSERT_EQUAL(c.running, 0);
    CU_ASSERT_EQUAL(access(marker, F_OK), -1);
    CU_ASSERT_EQUAL(waitpid(-1, NULL, WNOHANG), -1); /* reaped */

    memset(&g, 0, sizeof g);
    g.marker = marker;
    g.answer = 0;
    CU_ASSERT_FATAL(sqle_child_spawn_gated(&c, argv, NULL, 0, 0, gate_look, &g, err,
                                           sizeof err) == 0);
    CU_ASSERT_EQUAL(g.marker_at_gate, 0);
    CU_ASSERT_EQUAL(g.pid, c.pid);
    CU_ASSERT_EQUAL(sqle_child_wait(&c, 5000, &code), 1);
    CU_ASSERT_EQUAL(code, 0);
    CU_ASSERT_EQUAL(access(marker, F_OK), 0);
    sqle_child_close(&c);
    (void)unlink(marker);
}

static void test_child_not_found(void)
{
    char *argv[] = {"sqlease-no-such-command-xyz", "arg", NULL};
    char *argv_path[] = {"/nonexistent/dir/sqlease-nope", NULL};
    char *empty[] = {NULL};
    sqle_child c;
    char err[256];

    err[0] = '\0';
    CU_ASSERT_EQUAL(sqle_child_spawn(&c, argv, NULL, 0, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "sqlease-no-such-command-xyz"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "No such file or directory"));
    CU_ASSERT_EQUAL(c.running, 0);

    err[0] = '\0';
    CU_ASSERT_EQUAL(sqle_child_spawn(&c, argv_path, NULL, 0, err, sizeof err), -1);
    CU_ASSERT_STRING_EQUAL(err, "cannot run '/nonexistent/dir/sqlease-nope': No such file or directory");

    err[0] = '\0';
    CU_ASSERT_EQUAL(sqle_child_spawn(&c, empty, NULL, 0, err, sizeof err), -1);
    CU_ASSERT(err[0] != '\0');

    /* The failed spawns were reaped: no child of ours is left. */
    CU_ASSERT_EQUAL(waitpid(-1, NULL, WNOHANG), -1);
    CU_ASSERT_EQUAL(errno, ECHILD);
}

static int write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");

    if (f == NULL)
        return -1;
    fputs(text, f);
    fclose(f);
    return chmod(path, mode);
}

static void test_child_exec_errors(void)
{
    char noexec[512], noshebang[512], err[256];
    char *argv1[2], *argv2[3];
    sqle_child c;

    tmp_path(noexec, sizeof noexec, "noexec.sh");
    tmp_path(noshebang, sizeof noshebang, "noshebang");
    CU_ASSERT_FATAL(write_file(noexec, "#!/bin/sh\nexit 0\n", 0644) == 0);
    CU_ASSERT_FATAL(write_file(noshebang, "exit $1\n", 0755) == 0);

    argv1[0] = noexec;
    argv1[1] = NULL;
    err[0] = '\0';
    /* No x bit: not runnable, not even by root. */
    CU_ASSERT_EQUAL(sqle_child_spawn(&c, argv1, NULL, 0, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "Permission denied"));

    /* An executable without "#!" is run by /bin/sh, with its arguments. */
    argv2[0] = noshebang;
    argv2[1] = "5";
    argv2[2] = NULL;
    CU_ASSERT_EQUAL(run_child(argv2, NULL, 0), 5);
}

static void test_child_env(void)
{
    char *check_foo[] = {"sh", "-c", "test \"$FOO\" = bar && test \"$BAZ\" = 'q=1 2'", NULL};
    char *check_over[] = {"sh", "-c", "test \"$SQLEASE_T_OVER\" = new", NULL};
    char *check_inherit[] = {"sh", "-c", "test \"$SQLEASE_T_KEEP\" = kept", NULL};
    const char *env[] = {"FOO=bar", "BAZ=q=1 2"};
    const char *over[] = {"SQLEASE_T_OVER=mid", "SQLEASE_T_OVER=new"};
    char *check_gone[] = {"sh", "-c", "test \"${SQLEASE_T_GONE-unset}\" = unset", NULL};
    const char *gone[] = {"SQLEASE_T_GONE"};
    const char *bad[] = {"=NOKEY"};
    sqle_child c;
    char err[256];

    CU_ASSERT_EQUAL(run_child(check_foo, env, 2), 0);
    CU_ASSERT_EQUAL(run_child(check_foo, NULL, 0), 1);

    setenv("SQLEASE_T_OVER", "old", 1);
    setenv("SQLEASE_T_KEEP", "kept", 1);
    CU_ASSERT_EQUAL(run_child(check_over, over, 2), 0);
    CU_ASSERT_EQUAL(run_child(check_inherit, over, 2), 0);
    CU_ASSERT(str_is(getenv("SQLEASE_T_OVER"), "old"));
    unsetenv("SQLEASE_T_OVER");
    unsetenv("SQLEASE_T_KEEP");

    /* A name alone removes what this process would have passed on. */
    setenv("SQLEASE_T_GONE", "inherited", 1);
    CU_ASSERT_EQUAL(run_child(check_gone, NULL, 0), 1);
    CU_ASSERT_EQUAL(run_child(check_gone, gone, 1), 0);
    CU_ASSERT(str_is(getenv("SQLEASE_T_GONE"), "inherited"));
    unsetenv("SQLEASE_T_GONE");

    err[0] = '\0';
    CU_ASSERT_EQUAL(sqle_child_spawn(&c, check_foo, bad, 1, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "=NOKEY"));
}

static void test_child_terminate(void)
{
    char *sleep5[] = {"sleep", "5", NULL};
    sqle_child c;
    char err[256];
    int code = -1, r;
    int64_t start;

    CU_ASSERT_FATAL(sqle_child_spawn(&c, sleep5, NULL, 0, err, sizeof err) == 0);
    CU_ASSERT(c.pid > 0);
    CU_ASSERT_EQUAL(c.running, 1);
    /* It leads its own process group. */
    CU_ASSERT_EQUAL((long)getpgid((pid_t)c.pid), c.pid);
    CU_ASSERT((long)getpgid((pid_t)c.pid) != (long)getpgrp());
    CU_ASSERT_EQUAL(sqle_child_wait(&c, 0, &code), 0);
    start = sqle_mono_ms();
    CU_ASSERT_EQUAL(sqle_child_wait(&c, 100, &code), 0);
    CU_ASSERT(sqle_mono_ms() - start >= 100);
    sqle_child_terminate(&c);
    start = sqle_mono_ms();
    r = sqle_child_wait(&c, 2000, &code);
    CU_ASSERT_EQUAL(r, 1);
    CU_ASSERT_EQUAL(code, 143);
    CU_ASSERT(sqle_mono_ms() - start < 2000);
    if (r != 1) {
        sqle_child_kill(&c);
        sqle_child_wait(&c, -1, &code);
    }
    sqle_child_close(&c);
}

static void test_child_kill(void)
{
    char *ignore_term[] = {"sh", "-c", "trap '' TERM; sleep 30", NULL};
    sqle_child c;
    char err[256];
    int code = -1;

    CU_ASSERT_FATAL(sqle_child_spawn(&c, ignore_term, NULL, 0, err, sizeof err) == 0);
    sqle_sleep_ms(100); /* let the shell install its trap */
    sqle_child_kill(&c);
    CU_ASSERT_EQUAL(sqle_child_wait(&c, 2000, &code), 1);
    CU_ASSERT_EQUAL(code, 137);
    sqle_child_close(&c);
}

static void test_child_group_terminate(void)
{
    char pidfile[512], err[256];
    char *argv[] = {"sh", "-c", "sleep 30 & echo $! > \"$1\"; wait", "sh", pidfile, NULL};
    sqle_child c;
    long grandchild;
    int code = -1, r;

    tmp_path(pidfile, sizeof pidfile, "grandchild.pid");
    CU_ASSERT_FATAL(sqle_child_spawn(&c, argv, NULL, 0, err, sizeof err) == 0);
    grandchild = wait_pid_file(pidfile, 5000);
    CU_ASSERT(grandchild > 0);
    if (grandchild > 0)
        CU_ASSERT_EQUAL((long)getpgid((pid_t)grandchild), c.pid);
    sqle_child_terminate(&c);
    r = sqle_child_wait(&c, 2000, &code);
    CU_ASSERT_EQUAL(r, 1);
    CU_ASSERT_EQUAL(code, 143);
    if (grandchild > 0) {
        CU_ASSERT(wait_pid_gone(grandchild, 2000));
        if (!pid_gone(grandchild))
            kill((pid_t)grandchild, SIGKILL);
    }
    if (r != 1) {
        sqle_child_kill(&c);
        sqle_child_wait(&c, -1, &code);
    }
    sqle_child_close(&c);
}

/* The intermediate process spawns `sleep 30`, publishes its pid and waits
 * to be killed; its child must die with it. */
static void test_child_parent_death(void)
{
    char pidfile[512], tmpfile[512];
    long sleeper;
    pid_t mid;
    int st;

    tmp_path(pidfile, sizeof pidfile, "sleeper.pid");
    tmp_path(tmpfile, sizeof tmpfile, "sleeper.pid.tmp");
    fflush(NULL);
    mid = fork();
    CU_ASSERT_FATAL(mid >= 0);
    if (mid == 0) {
        char *argv[] = {"sleep", "30", NULL};
        sqle_child c;
        char err[256];
        FILE *f;

        if (sqle_child_spawn(&c, argv, NULL, 0, err, sizeof err) != 0)
            _exit(1);
        f = fopen(tmpfile, "w");
        if (f == NULL)
            _exit(2);
        fprintf(f, "%ld\n", c.pid);
        fclose(f);
        rename(tmpfile, pidfile);
        for (;;)
            pause();
    }
    sleeper = wait_pid_file(pidfile, 5000);
    CU_ASSERT(sleeper > 0);
    kill(mid, SIGKILL);
    while (waitpid(mid, &st, 0) < 0 && errno == EINTR)
        ;
    if (sleeper > 0) {
        CU_ASSERT(wait_pid_gone(sleeper, 2000));
        if (!pid_gone(sleeper))
            kill((pid_t)sleeper, SIGKILL);
    }
}

static void test_process_signal(void)
{
    char *sleep30[] = {"sleep", "30", NULL};
    sqle_child c;
    char err[256];
    int code = -1;

    CU_ASSERT_FATAL(sqle_child_spawn(&c, sleep30, NULL, 0, err, sizeof err) == 0);
    CU_ASSERT_EQUAL(sqle_process_signal(c.pid, 9), 0);
    CU_ASSERT_EQUAL(sqle_child_wait(&c, 2000, &code), 1);
    CU_ASSERT_EQUAL(code, 137);
    sqle_child_close(&c);
    CU_ASSERT_EQUAL(sqle_process_signal(0, 15), -1);
}

/* Runs last: it leaves the handlers installed. */
static void test_signals(void)
{
    char *selfpipe[] = {"sh", "-c", "kill -PIPE $$", NULL};
    char *selfterm[] = {"sh", "-c", "kill -TERM $$", NULL};
    struct sigaction cur;
    sigset_t set, old;

    CU_ASSERT_EQUAL(sqle_signal_setup(), 0);
    CU_ASSERT_EQUAL(sqle_signal_received(), 0);
    CU_ASSERT_EQUAL(sigaction(SIGPIPE, NULL, &cur), 0);
    CU_ASSERT(cur.sa_handler == SIG_IGN);
    CU_ASSERT_EQUAL(sigaction(SIGTERM, NULL, &cur), 0);
    CU_ASSERT_EQUAL(cur.sa_flags & SA_RESTART, 0);

    /* A child gets default dispositions and an empty mask, whatever ours. */
    CU_ASSERT_EQUAL(run_child(selfpipe, NULL, 0), 128 + SIGPIPE);
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    CU_ASSERT_EQUAL(run_child(selfterm, NULL, 0), 143);
    pthread_sigmask(SIG_SETMASK, &old, NULL);

    raise(SIGHUP);
    CU_ASSERT_EQUAL(sqle_signal_received(), SIGHUP);
    raise(SIGTERM);
    CU_ASSERT_EQUAL(sqle_signal_received(), SIGTERM);
}

/* A routed signal ends an unbounded child wait with 0. */
static void test_signal_interrupts_wait(void)
{
    char *sleep30[] = {"sleep", "30", NULL};
    sqle_child c;
    char err[256];
    int code = -1;
    pid_t helper;
    int64_t start;

    CU_ASSERT_FATAL(sqle_child_spawn(&c, sleep30, NULL, 0, err, sizeof err) == 0);
    fflush(NULL);
    helper = fork();
    CU_ASSERT_FATAL(helper >= 0);
    if (helper == 0) {
        usleep(200 * 1000);
        kill(getppid(), SIGINT);
        _exit(0);
    }
    start = sqle_mono_ms();
    CU_ASSERT_EQUAL(sqle_child_wait(&c, -1, &code), 0);
    CU_ASSERT(sqle_mono_ms() - start < 5000);
    CU_ASSERT_EQUAL(sqle_signal_received(), SIGINT);
    waitpid(helper, NULL, 0);
    sqle_child_kill(&c);
    CU_ASSERT_EQUAL(sqle_child_wait(&c, 2000, &code), 1);
    CU_ASSERT_EQUAL(code, 137);
    sqle_child_close(&c);
}

/* ---- what a child inherits ----------------------------------------- */

/* 1 once /proc/<pid>/comm reads `name` (the child has exec'd it). */
static int await_comm(long pid, const char *name, int64_t timeout_ms)
{
    int64_t until = sqle_mono_ms() + timeout_ms;
    char path[64], buf[64];

    snprintf(path, sizeof path, "/proc/%ld/comm", pid);
    while (sqle_mono_ms() < until) {
        FILE *f = fopen(path, "r");
        size_t n = 0;

        if (f != NULL) {
            n = fread(buf, 1, sizeof buf - 1, f);
            fclose(f);
        }
        buf[n] = '\0';
        if (n > 0 && buf[n - 1] == '\n')
            buf[n - 1] = '\0';
        if (strcmp(buf, name) == 0)
            return 1;
        sqle_sleep_ms(5);
    }
    return 0;
}

/* The descriptors open in a process, as a bit set of 0..63 (-1 if its
 * fd directory cannot be read; bit 63 for any number above 62). */
static long long open_fds(long pid)
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

/* A descriptor this process leaked (no O_CLOEXEC, as Connector/ODBC opens
 * its socket) must not reach the command: only 0, 1 and 2 are open in it. */
static void test_child_no_inherited_fds(void)
{
    char *argv[] = {"sleep", "30", NULL};
    sqle_child c;
    char err[256];
    int leaked = open("/dev/null", O_RDONLY);
    int pfd[2] = {-1, -1};
    long long fds;
    int code = -1;

    CU_ASSERT_FATAL(leaked >= 0);
    CU_ASSERT_FATAL(pipe(pfd) == 0);
    CU_ASSERT_FATAL(sqle_child_spawn(&c, argv, NULL, 0, err, sizeof err) == 0);
    CU_ASSERT(await_comm(c.pid, "sleep", 5000));
    /* sleep itself opens its locale files on descriptor 3, one after the
     * other, as it starts: look until that is over (a leaked descriptor
     * stays open for good). */
    {
        int64_t until = sqle_mono_ms() + 3000;
        while ((fds = open_fds(c.pid)) != 0x7 && sqle_mono_ms() < until)
            sqle_sleep_ms(20);
    }
    if (fds != 0x7)
        fprintf(stderr, "\n  open in the child: %#llx (leaked fds %d, %d, %d)\n", fds, leaked,
                pfd[0], pfd[1]);
    CU_ASSERT_EQUAL(fds, 0x7);
    sqle_child_kill(&c);
    CU_ASSERT_EQUAL(sqle_child_wait(&c, 2000, &code), 1);
    sqle_child_close(&c);
    close(leaked);
    close(pfd[0]);
    close(pfd[1]);
}

/* A group someone stopped (SIGSTOP, Ctrl-Z) still gets its SIGTERM: the
 * terminate continues it, so it exits through its handler, not by the
 * SIGKILL after the grace. */
static void test_child_terminate_stopped(void)
{
    char *argv[] = {"sh", "-c", "exec 2>/dev/null; trap 'exit 7' TERM; echo $$ > \"$1\"; "
                    "while :; do sleep 0.05; done", "sh", NULL, NULL};
    char pidfile[512], err[256];
    sqle_child c;
    int code = -1, r;

    tmp_path(pidfile, sizeof pidfile, "stopped.pid");
    argv[4] = pidfile;
    CU_ASSERT_FATAL(sqle_child_spawn(&c, argv, NULL, 0, err, sizeof err) == 0);
    CU_ASSERT(wait_pid_file(pidfile, 5000) == c.pid);
    CU_ASSERT_EQUAL(kill(-(pid_t)c.pid, SIGSTOP), 0);
    sqle_child_terminate(&c);
    r = sqle_child_wait(&c, 3000, &code);
    CU_ASSERT_EQUAL(r, 1);
    CU_ASSERT_EQUAL(code, 7);
    if (r != 1) {
        sqle_child_kill(&c);
        sqle_child_wait(&c, -1, &code);
    }
    sqle_child_close(&c);
}

static void on_usr1(int sig)
{
    (void)sig;
}

/* The one /proc/PID/stat parser: a command name may hold spaces and
 * parentheses, so it ends at the last ')'; then our own entry, and a
 * child's process group counted while it lives and after it is gone. */
static void test_proc_table(void)
{
    char *sleeper[] = {"sleep", "30", NULL};
    cli_os_proc p;
    sqle_child c;
    char err[256];
    long pid;
    int code = -1;

    CU_ASSERT_EQUAL(cli_os_proc_parse("4242 (a) b (c)) S 1 4240 77 34816 4240 0", &p), 0);
    CU_ASSERT_EQUAL(p.pid, 4242);
    CU_ASSERT(str_is(p.comm, "a) b (c)"));
    CU_ASSERT_EQUAL(p.state, 'S');
    CU_ASSERT_EQUAL(p.ppid, 1);
    CU_ASSERT_EQUAL(p.pgrp, 4240);
    CU_ASSERT_EQUAL(p.session, 77);
    CU_ASSERT_EQUAL(cli_os_proc_parse("4242 (x) Z 1 2", &p), -1);
    CU_ASSERT_EQUAL(cli_os_proc_parse("4242 x S 1 2 3", &p), -1);
    CU_ASSERT_EQUAL(cli_os_proc_parse("(x) S 1 2 3", &p), -1);
    CU_ASSERT_EQUAL(cli_os_proc_parse("", &p), -1);
    CU_ASSERT_EQUAL(p.pid, 0);

    CU_ASSERT_EQUAL_FATAL(cli_os_proc_stat(sqle_pid(), &p), 0);
    CU_ASSERT_EQUAL(p.pid, (long)getpid());
    CU_ASSERT_EQUAL(p.ppid, (long)getppid());
    CU_ASSERT_EQUAL(p.pgrp, (long)getpgrp());
    CU_ASSERT_EQUAL(p.session, (long)getsid(0));
    CU_ASSERT_EQUAL(p.state, 'R'); /* running: it is reading its own entry */
    CU_ASSERT(str_is(p.comm, "test_platform"));
    CU_ASSERT(cli_sys_pid_alive(sqle_pid()));

    CU_ASSERT_FATAL(sqle_child_spawn(&c, sleeper, NULL, 0, err, sizeof err) == 0);
    pid = sqle_child_pid(&c);
    CU_ASSERT_EQUAL(cli_os_group_members(pid), 1);
    CU_ASSERT(cli_sys_pid_alive(pid));
    CU_ASSERT_EQUAL(cli_os_proc_stat(pid, &p), 0);
    CU_ASSERT_EQUAL(p.ppid, (long)getpid());
    CU_ASSERT_EQUAL(p.pgrp, pid);
    sqle_child_kill(&c);
    CU_ASSERT_EQUAL(sqle_child_wait(&c, 2000, &code), 1);
    CU_ASSERT_EQUAL(code, 137);
    sqle_child_close(&c);
    CU_ASSERT_EQUAL(cli_os_group_members(pid), 0);
    CU_ASSERT(!cli_sys_pid_alive(pid));
    CU_ASSERT_EQUAL(cli_os_proc_stat(pid, &p), -1);
}

/* What a parent leaves across exec: ignored signals go back to their
 * default and the mask is emptied; a handler of our own stays. */
static void test_signal_defaults(void)
{
    struct sigaction sa, got;
    sigset_t block, now;

    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = SIG_IGN;
    CU_ASSERT_FATAL(sigaction(SIGCHLD, &sa, NULL) == 0);
    CU_ASSERT_FATAL(sigaction(SIGUSR2, &sa, NULL) == 0);
    sa.sa_handler = on_usr1;
    CU_ASSERT_FATAL(sigaction(SIGUSR1, &sa, NULL) == 0);
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGCHLD);
    CU_ASSERT_FATAL(pthread_sigmask(SIG_BLOCK, &block, NULL) == 0);

    sqle_signal_defaults();

    CU_ASSERT(sigaction(SIGCHLD, NULL, &got) == 0 && got.sa_handler == SIG_DFL);
    CU_ASSERT(sigaction(SIGUSR2, NULL, &got) == 0 && got.sa_handler == SIG_DFL);
    CU_ASSERT(sigaction(SIGUSR1, NULL, &got) == 0 && got.sa_handler == on_usr1);
    CU_ASSERT(pthread_sigmask(SIG_SETMASK, NULL, &now) == 0);
    CU_ASSERT(!sigismember(&now, SIGTERM));
    CU_ASSERT(!sigismember(&now, SIGCHLD));
    sa.sa_handler = SIG_DFL;
    sigaction(SIGUSR1, &sa, NULL);
}

/* ---- main ---------------------------------------------------------- */

static int suite_init(void)
{
    return make_tmpdir();
}

static int suite_clean(void)
{
    remove_tmpdir();
    return 0;
}

int main(void)
{
    CU_pSuite s;
    unsigned fails;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    s = CU_add_suite("platform", suite_init, suite_clean);
    if (s == NULL
        || !CU_add_test(s, "cond wait times out at the deadline", test_cond_timeout)
        || !CU_add_test(s, "cond wait wakes on signal", test_cond_signal_wakes)
        || !CU_add_test(s, "cond wait without bound", test_cond_unbounded_wait)
        || !CU_add_test(s, "threads and mutex counter", test_threads_counter)
        || !CU_add_test(s, "many small-stack threads", test_many_threads)
        || !CU_add_test(s, "clocks", test_clocks)
        || !CU_add_test(s, "the lease clock counts a suspend; timed waits look at it",
                        test_clock_counts_suspend)
        || !CU_add_test(s, "uuid v4", test_uuid)
        || !CU_add_test(s, "hostname, pid, getenv", test_host_pid_env)
        || !CU_add_test(s, "child exit codes", test_child_exit_codes)
        || !CU_add_test(s, "child waited twice", test_child_waited_twice)
        || !CU_add_test(s, "child command not found", test_child_not_found)
        || !CU_add_test(s, "child held at its gate", test_child_gated)
        || !CU_add_test(s, "child exec errors and sh fallback", test_child_exec_errors)
        || !CU_add_test(s, "child environment", test_child_env)
        || !CU_add_test(s, "child terminate", test_child_terminate)
        || !CU_add_test(s, "child kill", test_child_kill)
        || !CU_add_test(s, "child group terminate reaches grandchild",
                        test_child_group_terminate)
        || !CU_add_test(s, "child dies with its parent", test_child_parent_death)
        || !CU_add_test(s, "process signal", test_process_signal)
        || !CU_add_test(s, "signal handlers", test_signals)
        || !CU_add_test(s, "signal interrupts child wait", test_signal_interrupts_wait)
        || !CU_add_test(s, "child inherits no descriptor above stderr",
                        test_child_no_inherited_fds)
        || !CU_add_test(s, "terminate reaches a stopped child group",
                        test_child_terminate_stopped)
        || !CU_add_test(s, "signal state left by a parent is reset", test_signal_defaults)
        || !CU_add_test(s, "process table: /proc/PID/stat, groups, liveness",
                        test_proc_table)) {
        CU_cleanup_registry();
        return 2;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    fails = CU_get_number_of_failures() + CU_get_number_of_suites_failed()
            + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return fails ? 1 : 0;
}
