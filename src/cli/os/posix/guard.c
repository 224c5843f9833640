/*
 * guard.c -- the guard process on POSIX (see os.h, and guard.h for what
 * it is for).
 *
 * The guard runs in a process group of its own, so that no stop aimed at
 * sqlease's job or at CMD's group freezes it.  A second pipe, back to
 * sqlease, carries one byte for each deadline stop the guard made.
 *
 * The pipe to the guard carries fixed-size records, each written with
 * one write() of fewer than PIPE_BUF bytes, so the guard never sees half
 * a record:
 *
 *   { term_at, kill_at }   mono ms: SIGTERM the group at term_at (NEVER:
 *                          never), SIGKILL it at kill_at;
 *   { -1, -1 }             disarm: exit without signalling anything.
 *
 * End-of-file (every copy of the write end closed: sqlease is gone) makes
 * the guard SIGKILL the group at once.  The guard is forked, not exec'd,
 * from a process that has other threads (the supervisor's, a driver's),
 * so between fork and _exit it calls only async-signal-safe functions: no
 * stdio, no malloc, no locks.
 */
#define _GNU_SOURCE

#include "os_posix.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct guard_msg {
    int64_t term_at;
    int64_t kill_at;
} guard_msg;

#define NEVER CLI_OS_GUARD_NEVER

/* The library's lease clock (src/platform/posix/clock.c), read the same
 * way here: the deadlines sqlease sends are its values.  CLOCK_BOOTTIME
 * counts a suspend, as a lease's expiry on the database does. */
static int64_t mono_now(void)
{
    struct timespec ts;

#ifdef CLOCK_BOOTTIME
    if (clock_gettime(CLOCK_BOOTTIME, &ts) != 0)
#endif
        clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* poll() times out on CLOCK_MONOTONIC, which a suspend stops: a poll
 * until the deadline would end that suspend late.  Cut into pieces this
 * long, the deadline is seen within one of them after a resume. */
#define GUARD_SUSPEND_CHECK_MS 250

/* Set in the guard before its loop: stderr is the systemd journal. */
static int g_journal;

static void put_str(char *buf, size_t cap, size_t *n, const char *s)
{
    for (; *s != '\0' && *n < cap - 1; s++)
        buf[(*n)++] = *s;
}

static void put_num(char *buf, size_t cap, size_t *n, unsigned long v)
{
    char num[24];
    size_t k = 0;

    do
        num[k++] = (char)('0' + v % 10);
    while ((v /= 10) != 0 && k < sizeof num);
    while (k > 0 && *n < cap - 1)
        buf[(*n)++] = num[--k];
}

/*
 * One line on stderr from the guard, built without stdio, in the form of
 * sqlease's own log lines (common.c: cli_log_emit): the time stamp, or
 * the journal's priority prefix, then "sqlease: warn: ", so that a reader
 * of the log finds when the guard acted.  Always after the signal it
 * reports, and never blocking: stderr may be a pipe nobody drains, and a
 * guard stuck in write() stops nothing.  A line that does not fit now is
 * dropped, and the next one that goes out says how many were.
 */
static void guard_say(const char *what, long pgid)
{
    static unsigned long dropped;
    char buf[400];
    size_t n = 0;

    if (g_journal) {
        put_str(buf, sizeof buf, &n, "<4>");
    } else {
        n = cli_os_format_stamp(sqle_wall_ms(), buf, sizeof buf - 1);
        put_str(buf, sizeof buf, &n, " ");
    }
    put_str(buf, sizeof buf, &n, "sqlease: warn: guard: ");
    put_str(buf, sizeof buf, &n, what);
    put_str(buf, sizeof buf, &n, " CMD's process group ");
    put_num(buf, sizeof buf, &n, (unsigned long)pgid);
    if (dropped > 0) {
        put_str(buf, sizeof buf, &n, " (");
        put_num(buf, sizeof buf, &n, dropped);
        put_str(buf, sizeof buf, &n, " earlier guard line(s) dropped: stderr was full)");
    }
    buf[n++] = '\n';
    if (cli_os_stderr_write(buf, n) == 0)
        dropped = 0;
    else
        dropped++;
}

/* Close descriptors lo..hi (hi -1: to the end). */
static void close_between(long lo, long hi)
{
    struct rlimit rl;
    long max = 65536, fd;

    if (hi >= 0 && hi < lo)
        return;
#if defined(SYS_close_range)
    if (syscall(SYS_close_range, (unsigned)lo, hi < 0 ? ~0u : (unsigned)hi, 0u) == 0)
        return;
#endif
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        max = rl.rlim_cur < (rlim_t)(1L << 20) ? (long)rl.rlim_cur : 1L << 20;
    if (hi >= 0 && hi + 1 < max)
        max = hi + 1;
    for (fd = lo; fd < max; fd++)
        (void)close((int)fd);
}

/* Close every descriptor the guard inherited except its two pipes and
 * stderr (database sockets above all: the guard must not keep them
 * open).  stdin and stdout go to /dev/null so that a reader of sqlease's
 * output is not kept waiting by the guard. */
static void guard_close_fds(int a, int b)
{
    int null = open("/dev/null", O_RDWR);
    int lo = a < b ? a : b, hi = a < b ? b : a;

    if (null >= 0) {
        (void)dup2(null, 0);
        (void)dup2(null, 1);
        if (null > 2 && null != a && null != b)
            (void)close(null);
    }
    close_between(3, lo - 1);
    close_between(lo + 1, hi - 1);
    close_between(hi + 1, -1);
}

/* Tell sqlease that the guard, not sqlease, stopped CMD at the deadline:
 * when sqlease sees CMD's exit it must report the lease as lost (75), not
 * the exit status the guard's signal caused. */
static void guard_report(int wfd)
{
    char c = 'T';

    if (write(wfd, &c, 1) < 0) {
        /* sqlease is gone or not reading: the pipe's end is enough */
    }
}

/*
 * The guard's whole life.  It sleeps in poll() until the next action is
 * due or a record arrives.  Once it has sent SIGTERM it no longer takes a
 * later deadline: a CMD that was told to stop stays stopped (sqlease will
 * start a fresh one if it still holds the lease).
 */
static _Noreturn void guard_main(int rfd, int wfd, pid_t pgid, int64_t term_at,
                                 int64_t kill_at, int64_t grace_ms, int journal)
{
    struct sigaction sa;
    sigset_t none;
    unsigned char buf[16 * sizeof(guard_msg)];
    size_t have = 0;
    int termed = 0, sig;

    g_journal = journal;
    (void)cli_os_stderr_dropped(); /* sqlease's count, not the guard's */
    /* A group of its own: a stop aimed at sqlease's job (Ctrl-Z, SIGSTOP
     * to its group) or at CMD's must not freeze the guard too. */
    (void)setpgid(0, 0);
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    for (sig = 1; sig < NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP)
            continue;
        /* Stops from the terminal too: a background group that writes to
         * a terminal with `tostop` set would get SIGTTOU for its warning. */
        sa.sa_handler = (sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGPIPE ||
                         sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
                            ? SIG_IGN : SIG_DFL;
        (void)sigaction(sig, &sa, NULL);
    }
    sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, NULL);
    guard_close_fds(rfd, wfd);

    for (;;) {
        int64_t now = mono_now();
        int64_t next;
        struct pollfd pfd;
        int timeout, pr;
        ssize_t r;

        /* Each signal goes out before the line that reports it; the
         * report to sqlease (a non-blocking pipe) before the signal, so
         * that sqlease knows who stopped CMD when it reaps it. */
        if (!termed && term_at != NEVER && now >= term_at) {
            guard_report(wfd);
            (void)kill(-pgid, SIGTERM);
            /* A stopped group (Ctrl-Z, SIGSTOP) acts on it only once
             * continued; SIGKILL follows after the grace either way. */
            (void)kill(-pgid, SIGCONT);
            termed = 1;
            if (kill_at > term_at + grace_ms)
                kill_at = term_at + grace_ms;
            guard_say("lease deadline passed and sqlease has not stopped CMD; sent SIGTERM to",
                      pgid);
        }
        if (now >= kill_at) {
            (void)kill(-pgid, SIGKILL);
            /* Done; stay until sqlease disarms (or dies), so that it does
             * not take this guard for a lost one. */
            kill_at = NEVER;
            termed = 1;
            guard_say("sent SIGKILL to", pgid);
        }
        next = kill_at;
        if (!termed && term_at < next)
            next = term_at;
        timeout = next == NEVER ? -1
                  : next - now > GUARD_SUSPEND_CHECK_MS ? GUARD_SUSPEND_CHECK_MS
                                                         : (int)(next - now);
        pfd.fd = rfd;
        pfd.events = POLLIN;
        pfd.revents = 0;
        pr = poll(&pfd, 1, timeout);
        if (pr < 0 && errno != EINTR)
            break;
        if (pr <= 0)
            continue;
        r = read(rfd, buf + have, sizeof buf - have);
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r <= 0)
            break; /* end-of-file: sqlease is gone */
        have += (size_t)r;
        while (have >= sizeof(guard_msg)) {
            guard_msg m;

            memcpy(&m, buf, sizeof m);
            memmove(buf, buf + sizeof m, have - sizeof m);
            have -= sizeof m;
            if (m.term_at == -1 && m.kill_at == -1)
                _exit(0); /* disarmed: CMD is gone */
            if (!termed) {
                term_at = m.term_at;
                kill_at = m.kill_at;
            }
        }
    }
    (void)kill(-pgid, SIGKILL);
    guard_say("sqlease is gone; sent SIGKILL to", pgid);
    _exit(0);
}

void cli_os_guard_init(cli_os_guard *g)
{
    memset(g, 0, sizeof *g);
    g->fd = -1;
    g->report_fd = -1;
}

int cli_os_guard_start(cli_os_guard *g, long pgid, int64_t term_at, int64_t kill_at,
                       int64_t grace_ms, int journal, char *why, size_t cap)
{
    int fds[2], rep[2];
    sigset_t all, old;
    pid_t pid;
    int err;

    cli_os_guard_init(g);
    if (cap > 0)
        why[0] = '\0';
    if (pgid <= 0)
        return -1;
    if (pipe(fds) != 0) {
        snprintf(why, cap, "pipe: %s", strerror(errno));
        return -1;
    }
    if (pipe(rep) != 0) {
        snprintf(why, cap, "pipe: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    /* Only this process may hold the write end, or end-of-file would not
     * mean "sqlease is gone": CLOEXEC keeps it out of later CMDs. */
    (void)fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    (void)fcntl(fds[1], F_SETFL, O_NONBLOCK);
    (void)fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(rep[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(rep[0], F_SETFL, O_NONBLOCK);
    (void)fcntl(rep[1], F_SETFD, FD_CLOEXEC);
    (void)fcntl(rep[1], F_SETFL, O_NONBLOCK);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid = fork();
    if (pid == 0) {
        close(fds[1]);
        close(rep[0]);
        guard_main(fds[0], rep[1], (pid_t)pgid, term_at, kill_at, grace_ms, journal);
    }
    err = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close(fds[0]);
    close(rep[1]);
    if (pid < 0) {
        snprintf(why, cap, "fork: %s", strerror(err));
        close(fds[1]);
        close(rep[0]);
        return -1;
    }
    /* From this side too, so that it is out of our group when we return. */
    (void)setpgid(pid, pid);
    g->pid = (long)pid;
    g->fd = fds[1];
    g->report_fd = rep[0];
    return 0;
}

/* One record, never blocking: a guard that does not read (it cannot be
 * frozen without sqlease being frozen too, unless someone stopped it on
 * purpose) costs an update, not the main loop. */
int cli_os_guard_send(cli_os_guard *g, int64_t term_at, int64_t kill_at)
{
    guard_msg m;
    ssize_t w;

    if (g->fd < 0 || g->broken)
        return 0;
    m.term_at = term_at;
    m.kill_at = kill_at;
    do
        w = write(g->fd, &m, sizeof m);
    while (w < 0 && errno == EINTR);
    if (w != (ssize_t)sizeof m) {
        if (w < 0 && errno == EAGAIN)
            return 0;
        g->broken = 1;
        return -1;
    }
    return 0;
}

/* The report pipe holds a byte for each deadline stop the guard made. */
int cli_os_guard_reported(cli_os_guard *g)
{
    char buf[16];
    ssize_t r;

    while (g->report_fd >= 0) {
        r = read(g->report_fd, buf, sizeof buf);
        if (r > 0)
            return 1;
        if (!(r < 0 && errno == EINTR))
            break;
    }
    return 0;
}

void cli_os_guard_end(cli_os_guard *g, int64_t wait_ms)
{
    int st;

    if (g->fd >= 0) {
        (void)cli_os_guard_send(g, -1, -1);
        close(g->fd);
    }
    if (g->report_fd >= 0)
        close(g->report_fd);
    if (g->pid > 0) {
        /* It exits at once on the disarm record, or on the end-of-file
         * closing the pipe just caused; one that does not (someone stopped
         * it) is killed after wait_ms rather than waited for forever. */
        int64_t give_up = sqle_mono_ms() + wait_ms;
        pid_t r;

        for (;;) {
            r = waitpid((pid_t)g->pid, &st, WNOHANG);
            if (r != 0 && !(r < 0 && errno == EINTR))
                break;
            if (sqle_mono_ms() >= give_up) {
                (void)kill((pid_t)g->pid, SIGKILL);
                while (waitpid((pid_t)g->pid, &st, 0) < 0 && errno == EINTR)
                    ;
                break;
            }
            sqle_sleep_ms(2);
        }
    }
    cli_os_guard_init(g);
}
