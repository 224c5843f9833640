/*
 * process.c -- child processes on POSIX (see os.h): CMD started with
 * fork and execve in a process group of its own, waited for without
 * SIGCHLD, and stopped group-wide.
 *
 * OS contract relied on: fork/execve; on Linux PR_SET_PDEATHSIG so a
 * child gets SIGKILL when the thread that spawned it dies, pidfd_open
 * (5.3+) to wait for a child without polling (else a polling fallback),
 * and close_range (5.11+) or /proc/self/fd to mark descriptors
 * close-on-exec.
 *
 * Nothing in here allocates or calls a non-async-signal-safe function
 * between fork() and execve(): the process has other threads (the
 * heartbeat, the watchdog, a driver's) when the tool spawns a command.
 */
#define _GNU_SOURCE

#include "os_posix.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#if defined(__linux__) && defined(SYS_pidfd_open) && !defined(SQLEASE_NO_PIDFD)
#define SQLEASE_HAVE_PIDFD 1
#endif

extern char **environ;

/* Everything the child needs after fork, prepared by the parent because
 * the child may only call async-signal-safe functions. */
typedef struct {
    char **envp;        /* environ with the extras applied */
    char **paths;       /* execve candidates in PATH order */
    size_t npaths;
    char **shargv;      /* "/bin/sh", <slot for the path>, argv[1..] */
} spawn_plan;

static void plan_free(spawn_plan *p)
{
    size_t i;

    free(p->envp);
    if (p->paths != NULL) {
        for (i = 0; i < p->npaths; i++)
            free(p->paths[i]);
        free(p->paths);
    }
    free(p->shargv);
    memset(p, 0, sizeof *p);
}

/* Length of the KEY part of "KEY=VALUE" (the whole string without '='). */
static size_t env_key_len(const char *kv)
{
    const char *eq = strchr(kv, '=');

    return eq != NULL ? (size_t)(eq - kv) : strlen(kv);
}

static int env_same_key(const char *a, const char *b)
{
    size_t la = env_key_len(a), lb = env_key_len(b);

    return la == lb && memcmp(a, b, la) == 0;
}

/* The child's environment: ours minus every key an extra redefines, then
 * the extras (a later extra wins over an earlier one with the same key);
 * an extra without '=' only removes its key.  The strings are shared, not
 * copied: the child execs before ours change. */
static int plan_env(spawn_plan *p, const char *const *env, size_t nenv, char *errbuf,
                    size_t errcap)
{
    size_t n = 0, i, j, k = 0;

    for (i = 0; i < nenv; i++) {
        if (env[i] == NULL || env[i][0] == '=' || env[i][0] == '\0') {
            snprintf(errbuf, errcap, "invalid environment entry '%s' (want KEY=VALUE or KEY)",
                     env[i] != NULL ? env[i] : "(null)");
            return -1;
        }
    }
    if (environ != NULL)
        while (environ[n] != NULL)
            n++;
    p->envp = malloc((n + nenv + 1) * sizeof *p->envp);
    if (p->envp == NULL) {
        snprintf(errbuf, errcap, "out of memory");
        return -1;
    }
    for (i = 0; i < n; i++) {
        int overridden = 0;

        for (j = 0; j < nenv && !overridden; j++)
            overridden = env_same_key(environ[i], env[j]);
        if (!overridden)
            p->envp[k++] = environ[i];
    }
    for (i = 0; i < nenv; i++) {
        int later = 0;

        for (j = i + 1; j < nenv && !later; j++)
            later = env_same_key(env[i], env[j]);
        if (!later && strchr(env[i], '=') != NULL)
            p->envp[k++] = (char *)env[i];
    }
    p->envp[k] = NULL;
    return 0;
}

/* execvp's search, done in the parent: a name with a '/' is used as is,
 * otherwise each PATH entry (empty = current directory) is a candidate.
 * PATH is read from the child's environment, like a shell would. */
static int plan_paths(spawn_plan *p, const char *file, char *errbuf, size_t errcap)
{
    const char *path = NULL, *s, *e;
    size_t i, n = 1, flen = strlen(file);

    if (strchr(file, '/') != NULL || flen == 0) {
        p->paths = malloc(sizeof *p->paths);
        if (p->paths == NULL || (p->paths[0] = malloc(flen + 1)) == NULL)
            goto oom;
        memcpy(p->paths[0], file, flen + 1);
        p->npaths = 1;
        return 0;
    }
    for (i = 0; p->envp[i] != NULL; i++)
        if (strncmp(p->envp[i], "PATH=", 5) == 0)
            path = p->envp[i] + 5;
    if (path == NULL)
        path = "/bin:/usr/bin";
    for (s = path; *s != '\0'; s++)
        if (*s == ':')
            n++;
    p->paths = calloc(n, sizeof *p->paths);
    if (p->paths == NULL)
        goto oom;
    for (s = path;; s = e + 1) {
        size_t dlen;
        char *c;

        e = strchr(s, ':');
        if (e == NULL)
            e = s + strlen(s);
        dlen = (size_t)(e - s);
        c = malloc(dlen + flen + 2);
        if (c == NULL)
            goto oom;
        if (dlen == 0) {
            memcpy(c, file, flen + 1);
        } else {
            memcpy(c, s, dlen);
            c[dlen] = '/';
            memcpy(c + dlen + 1, file, flen + 1);
        }
        p->paths[p->npaths++] = c;
        if (*e == '\0')
            break;
    }
    return 0;
oom:
    snprintf(errbuf, errcap, "out of memory");
    return -1;
}

/* A file that is executable but has no "#!" line is run by /bin/sh, as
 * execvp does; the argv for that is prepared here, its slot 1 filled in
 * by the child. */
static int plan_shargv(spawn_plan *p, char *const argv[], char *errbuf, size_t errcap)
{
    size_t argc = 0, i;

    while (argv[argc] != NULL)
        argc++;
    p->shargv = malloc((argc + 2) * sizeof *p->shargv);
    if (p->shargv == NULL) {
        snprintf(errbuf, errcap, "out of memory");
        return -1;
    }
    p->shargv[0] = (char *)"/bin/sh";
    p->shargv[1] = NULL;
    for (i = 1; i < argc; i++)
        p->shargv[i + 1] = argv[i];
    p->shargv[argc + 1] = NULL;
    return 0;
}

static int cloexec_pipe(int fds[2])
{
#ifdef __linux__
    return pipe2(fds, O_CLOEXEC);
#else
    if (pipe(fds) != 0)
        return -1;
    (void)fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    return 0;
#endif
}

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

#ifdef __linux__
/* The kernel's record for getdents64 (glibc declares no type for it). */
struct fd_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};
#endif

/*
 * Mark every descriptor above stderr close-on-exec, in the child between
 * fork and exec (async-signal-safe calls only).  The parent's descriptors
 * are not the command's business: a database socket that a driver opened
 * without O_CLOEXEC (Connector/ODBC does), or one a caller leaked, would
 * otherwise stay open in the command, and in everything it starts, for
 * as long as they run.  Marking rather than closing keeps the exec-error
 * pipe working until the exec succeeds.  close_range (Linux 5.11) does it
 * in one call; else the list in /proc/self/fd; else every number up to
 * the descriptor limit.
 */
static void cloexec_above_stderr(void)
{
    struct rlimit rl;
    long max = 65536, fd;
#ifdef __linux__
    int dfd;
#endif

#if defined(__linux__) && defined(SYS_close_range)
    if (syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC) == 0)
        return;
#endif
#if defined(__linux__) && defined(SYS_getdents64)
    dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        char buf[4096] __attribute__((aligned(8)));
        long n;

        while ((n = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0) {
            long off = 0;

            while (off < n) {
                const struct fd_dirent64 *d = (const struct fd_dirent64 *)(void *)(buf + off);
                const char *c = d->d_name;
                long v = 0;

                for (; *c >= '0' && *c <= '9'; c++)
                    v = v * 10 + (*c - '0');
                if (*c == '\0' && c != d->d_name && v > 2 && v != dfd)
                    (void)fcntl((int)v, F_SETFD, FD_CLOEXEC);
                off += d->d_reclen;
            }
        }
        (void)close(dfd);
        if (n == 0)
            return;
    }
#endif
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        max = rl.rlim_cur < (rlim_t)(1L << 20) ? (long)rl.rlim_cur : 1L << 20;
    for (fd = 3; fd < max; fd++)
        (void)fcntl((int)fd, F_SETFD, FD_CLOEXEC);
}

/* The child between fork and exec: own process group (the terminal's
 * foreground when asked and the parent has it), every descriptor above
 * stderr close-on-exec, default signal dispositions (an ignored SIGPIPE
 * would otherwise survive exec) and an empty mask, death signal tied to
 * the parent, then the PATH candidates in order.  Only async-signal-safe
 * calls; every signal is blocked until the mask is reset.  On failure the
 * errno goes up the CLOEXEC pipe and the child exits 127. */
static _Noreturn void child_after_fork(const spawn_plan *p, char *const argv[], pid_t parent,
                                       int errfd, int tty, int gatefd)
{
    struct sigaction sa;
    sigset_t none;
    int sig, err = ENOENT, saw_eacces = 0;
    size_t i;

    (void)setpgid(0, 0);
    if (tty >= 0)
        (void)tcsetpgrp(tty, getpid());
    cloexec_above_stderr();
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    for (sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            (void)sigaction(sig, &sa, NULL);
    sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, NULL);
#ifdef __linux__
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
        _exit(127);
#else
    (void)parent;
#endif
    if (gatefd >= 0) {
        /* Held until the parent says go (one byte); end-of-file (the
         * parent held it back, or is gone) ends the child unrun. */
        char go = 0;
        ssize_t r;

        do
            r = read(gatefd, &go, 1);
        while (r < 0 && errno == EINTR);
        if (r != 1)
            _exit(127);
        (void)close(gatefd);
    }
    for (i = 0; i < p->npaths; i++) {
        execve(p->paths[i], argv, p->envp);
        err = errno;
        if (err == ENOEXEC) {
            p->shargv[1] = p->paths[i];
            execve("/bin/sh", p->shargv, p->envp);
            err = errno;
            break;
        }
        if (err == EACCES) {
            saw_eacces = 1;
            continue;
        }
        if (err == ENOENT || err == ENOTDIR || err == ESTALE || err == ENODEV
            || err == ETIMEDOUT || err == ELOOP || err == ENAMETOOLONG)
            continue;
        break;
    }
    if (saw_eacces && (err == ENOENT || err == ENOTDIR))
        err = EACCES;
    if (write(errfd, &err, sizeof err) < 0) {
        /* nothing more can be done: the exit status says it all */
    }
    _exit(127);
}

/* fork + execve with all the preparation in the parent, all signals
 * blocked across fork (so no handler of ours runs in the child before its
 * dispositions are reset), and exec failure reported through a CLOEXEC
 * pipe: EOF on it means the exec happened. */
int sqle_child_spawn(sqle_child *c, char *const argv[], const char *const *env,
                     size_t nenv, char *errbuf, size_t errcap)
{
    return sqle_child_spawn_ex(c, argv, env, nenv, 0, errbuf, errcap);
}

int sqle_child_spawn_ex(sqle_child *c, char *const argv[], const char *const *env,
                        size_t nenv, int flags, char *errbuf, size_t errcap)
{
    return sqle_child_spawn_gated(c, argv, env, nenv, flags, NULL, NULL, errbuf, errcap);
}

/* Open the child's gate (go) or close it unopened; with it closed, wait
 * for the child, which then ends without running anything. */
static int gate_pass(int gate_w, pid_t pid, int go)
{
    ssize_t w = 0;
    int st;

    if (go) {
        do
            w = write(gate_w, "g", 1);
        while (w < 0 && errno == EINTR);
    }
    close(gate_w);
    if (go && w == 1)
        return 1;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return 0;
}

/*
 * With a gate, the child waits between fork and exec, on a pipe, until
 * the gate function has run in the parent: what must watch CMD (its
 * guard) exists before CMD runs a single instruction of its own.  A
 * parent that dies or is frozen before it opens the gate leaves nothing
 * running unwatched: the child dies with it (the death signal, or the
 * pipe's end-of-file), or waits doing nothing.
 */
int sqle_child_spawn_gated(sqle_child *c, char *const argv[], const char *const *env,
                           size_t nenv, int flags, sqle_child_gate_fn gate, void *gate_ud,
                           char *errbuf, size_t errcap)
{
    spawn_plan plan;
    sigset_t all, old;
    pid_t parent, pid;
    int fds[2], gatefd[2] = {-1, -1}, err = 0, tty = -1, give = 0;
    ssize_t r;
    char dummy[1];

    if (errbuf == NULL || errcap == 0) {
        errbuf = dummy;
        errcap = sizeof dummy;
    }
    errbuf[0] = '\0';
    c->pid = 0;
    c->running = 0;
    c->tty = -1;
    c->stop_sig = 0;
    if (argv == NULL || argv[0] == NULL) {
        snprintf(errbuf, errcap, "no command to run");
        return -1;
    }
    memset(&plan, 0, sizeof plan);
    if (plan_env(&plan, env, nenv, errbuf, errcap) != 0
        || plan_paths(&plan, argv[0], errbuf, errcap) != 0
        || plan_shargv(&plan, argv, errbuf, errcap) != 0) {
        plan_free(&plan);
        return -1;
    }
    if (cloexec_pipe(fds) != 0) {
        snprintf(errbuf, errcap, "cannot run '%s': pipe: %s", argv[0], strerror(errno));
        plan_free(&plan);
        return -1;
    }
    if (gate != NULL && cloexec_pipe(gatefd) != 0) {
        snprintf(errbuf, errcap, "cannot run '%s': pipe: %s", argv[0], strerror(errno));
        close(fds[0]);
        close(fds[1]);
        plan_free(&plan);
        return -1;
    }
    parent = getpid();
    if (flags & SQLEASE_CHILD_FOREGROUND) {
        tty = cli_os_controlling_tty();
        give = tty >= 0 && tcgetpgrp(tty) == getpgrp();
        /* While the child has the terminal we are a background group: with
         * the terminal's `tostop` set, our own log lines would stop us. */
        if (tty >= 0)
            (void)signal(SIGTTOU, SIG_IGN);
    }
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid = fork();
    if (pid == 0) {
        close(fds[0]);
        if (gatefd[1] >= 0)
            close(gatefd[1]);
        child_after_fork(&plan, argv, parent, fds[1], give ? tty : -1, gatefd[0]);
    }
    err = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close(fds[1]);
    if (gatefd[0] >= 0)
        close(gatefd[0]);
    plan_free(&plan);
    if (pid < 0) {
        close(fds[0]);
        if (gatefd[1] >= 0)
            close(gatefd[1]);
        snprintf(errbuf, errcap, "cannot run '%s': fork: %s", argv[0], strerror(err));
        return -1;
    }
    /* Also from this side, so that the group exists (and has the terminal)
     * when we return even if the child has not been scheduled yet
     * (EACCES: it already exec'd). */
    (void)setpgid(pid, pid);
    if (give)
        cli_os_set_foreground(tty, pid);
    if (gate != NULL && !gate_pass(gatefd[1], pid, gate(gate_ud, (long)pid) == 0)) {
        close(fds[0]);
        if (give)
            cli_os_set_foreground(tty, getpgrp());
        return 1;
    }
    do
        r = read(fds[0], &err, sizeof err);
    while (r < 0 && errno == EINTR);
    close(fds[0]);
    if (r == (ssize_t)sizeof err) {
        int st;

        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        if (give)
            cli_os_set_foreground(tty, getpgrp());
        snprintf(errbuf, errcap, "cannot run '%s': %s", argv[0], strerror(err));
        return -1;
    }
    c->pid = (long)pid;
    c->tty = tty;
    c->running = 1;
    return 0;
}

static int decode_status(int st)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return 255;
}

/* One non-blocking look: 1 reaped (code set), 0 still running, -1 error.
 * A stop is kept for sqle_child_stopped and counts as running. */
static int reap_nohang(sqle_child *c, int *exit_code)
{
    int st;
    pid_t r;

    do
        r = waitpid((pid_t)c->pid, &st, WNOHANG | WUNTRACED);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        return -1;
    if (r == 0)
        return 0;
    if (WIFSTOPPED(st)) {
        c->stop_sig = WSTOPSIG(st);
        return 0;
    }
    c->running = 0;
    if (exit_code != NULL)
        *exit_code = decode_status(st);
    return 1;
}

/* Waiting without SIGCHLD (a library must not own that signal): on Linux
 * a pidfd becomes readable when the child exits, so poll() on it sleeps
 * exactly as long as needed; elsewhere (or on kernels before 5.3) the
 * child is polled with short, growing sleeps.  A routed signal that
 * interrupts the wait ends it with 0 so the caller can react. */
int sqle_child_wait(sqle_child *c, int64_t timeout_ms, int *exit_code)
{
    int64_t deadline = timeout_ms >= 0 ? sqle_mono_ms() + timeout_ms : -1;
    int64_t step = 1;
    int r;
#ifdef SQLEASE_HAVE_PIDFD
    int pidfd;
#endif

    if (c == NULL || !c->running || c->pid <= 0)
        return -1;
    r = reap_nohang(c, exit_code);
    if (r != 0 || timeout_ms == 0)
        return r;
#ifdef SQLEASE_HAVE_PIDFD
    pidfd = (int)syscall(SYS_pidfd_open, (pid_t)c->pid, 0);
    if (pidfd >= 0) {
        for (;;) {
            struct pollfd pfd;
            int wait_ms = -1, pr;

            if (deadline >= 0) {
                int64_t left = deadline - sqle_mono_ms();

                if (left < 0)
                    left = 0;
                wait_ms = left > INT_MAX ? INT_MAX : (int)left;
            }
            pfd.fd = pidfd;
            pfd.events = POLLIN;
            pfd.revents = 0;
            pr = poll(&pfd, 1, wait_ms);
            if (pr < 0 && errno == EINTR && sqle_signal_received() != 0) {
                r = reap_nohang(c, exit_code);
                break;
            }
            if (pr < 0 && errno != EINTR) {
                r = -1;
                break;
            }
            r = reap_nohang(c, exit_code);
            if (r != 0)
                break;
            if (deadline >= 0 && sqle_mono_ms() >= deadline)
                break;
        }
        close(pidfd);
        return r;
    }
#endif
    if (deadline < 0) {
        int st;
        pid_t w;

        for (;;) {
            w = waitpid((pid_t)c->pid, &st, 0);
            if (w == (pid_t)c->pid) {
                c->running = 0;
                if (exit_code != NULL)
                    *exit_code = decode_status(st);
                return 1;
            }
            if (w < 0 && errno != EINTR)
                return -1;
            if (sqle_signal_received() != 0)
                return 0;
        }
    }
    for (;;) {
        int64_t left = deadline - sqle_mono_ms();
        struct timespec ts;

        if (left <= 0)
            return 0;
        if (step > left)
            step = left;
        ts.tv_sec = 0;
        ts.tv_nsec = (long)step * 1000000L;
        if (nanosleep(&ts, NULL) != 0 && errno == EINTR && sqle_signal_received() != 0)
            return reap_nohang(c, exit_code);
        r = reap_nohang(c, exit_code);
        if (r != 0)
            return r;
        if (step < 10)
            step *= 2;
    }
}

/* Both signal the whole group (negative pid), so the command's own
 * children stop too.  They keep working after the leader was reaped, for
 * members it left behind: the group id cannot be reused while it has a
 * member.  A stopped process acts on SIGTERM only once continued, so the
 * SIGTERM is followed by a SIGCONT: a group someone stopped (Ctrl-Z, a
 * SIGSTOP) still gets its grace to exit cleanly. */
/* The pid is read once: kill(-0, ...) would signal our own group. */
void sqle_child_terminate(sqle_child *c)
{
    long pid = c != NULL ? c->pid : 0;
    if (pid > 0) {
        (void)kill(-(pid_t)pid, SIGTERM);
        (void)kill(-(pid_t)pid, SIGCONT);
    }
}

void sqle_child_continue(sqle_child *c)
{
    long pid = c != NULL ? c->pid : 0;
    if (pid > 0)
        (void)kill(-(pid_t)pid, SIGCONT);
}

void sqle_child_kill(sqle_child *c)
{
    long pid = c != NULL ? c->pid : 0;
    if (pid > 0)
        (void)kill(-(pid_t)pid, SIGKILL);
}

void sqle_child_close(sqle_child *c)
{
    if (c == NULL)
        return;
    (void)sqle_child_terminal(c, 0);
    c->pid = 0;
    c->running = 0;
    c->tty = -1;
    c->stop_sig = 0;
}

/*
 * Whether any process of the group still runs.  A zombie does not: it
 * does no work, and where PID 1 does not reap orphans (a bare container)
 * it never goes away.  kill(-pgid, 0) counts zombies, so the group is
 * looked for in the process table where there is one.
 */
int sqle_child_group_alive(const sqle_child *c)
{
    long pgid = c != NULL ? c->pid : 0;
    int n;

    if (pgid <= 0 || kill(-(pid_t)pgid, 0) != 0)
        return 0;
    n = cli_os_group_members(pgid);
    return n != 0; /* -1: no table to look in; kill() found the group */
}

long sqle_child_pid(const sqle_child *c)
{
    return c != NULL ? c->pid : 0;
}

int cli_os_unsetenv(const char *name)
{
    return unsetenv(name) == 0 ? 0 : -1;
}

/* A crontab's command is a shell command line, as cron(8) runs it. */
void cli_os_shell_argv(const char *line, char *argv[4])
{
    argv[0] = (char *)"/bin/sh";
    argv[1] = (char *)"-c";
    argv[2] = (char *)line;
    argv[3] = NULL;
}
