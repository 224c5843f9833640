/*
 * stdio.c -- the standard descriptors on POSIX (see os.h): none left
 * closed for a database socket to take, whether stderr is the systemd
 * journal, and writing a line to stderr without ever blocking.
 */
#include "os_posix.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0
#endif

/* open() returns the lowest free number, so each closed one of 0..2 is
 * filled in turn. */
void sqle_stdio_ensure(void)
{
    int fd;

    for (fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
            int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);

            if (n > 2)
                (void)close(n); /* cannot happen: fd was free */
        }
    }
}

/* systemd's own test (sd_journal_stream_fd's counterpart): the variable
 * alone is not enough, since a child whose stderr was redirected still
 * inherits it. */
int cli_sys_stderr_is_journal(void)
{
    const char *v = getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;
    char *end;

    if (v == NULL || v[0] == '\0')
        return 0;
    errno = 0;
    dev = strtoull(v, &end, 10);
    if (errno != 0 || end == v || *end != ':')
        return 0;
    v = end + 1;
    ino = strtoull(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0')
        return 0;
    if (fstat(2, &st) != 0)
        return 0;
    return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

/* Asking for no events still reports POLLERR (Linux: a pipe's write end
 * with no reader left) and POLLHUP (a socket or terminal hung up);
 * neither is ever reported for a regular file. */
int cli_os_stdout_gone(void)
{
    struct pollfd pfd;

    pfd.fd = 1;
    pfd.events = 0;
    pfd.revents = 0;
    if (poll(&pfd, 1, 0) != 1)
        return 0;
    return (pfd.revents & (POLLERR | POLLHUP)) != 0;
}

/* Lines cli_os_stderr_write dropped since the last cli_os_stderr_dropped
 * (this process's; a forked guard counts its own from the count it was
 * forked with). */
static atomic_ulong g_dropped;

/* One write() that does not block: 1 written whole, 0 it would have
 * blocked (or wrote only part, which is then all of it there is). */
static int write_once(int fd, const char *buf, size_t n)
{
    ssize_t w;

    do
        w = write(fd, buf, n);
    while (w < 0 && errno == EINTR);
    return w == (ssize_t)n;
}

/*
 * The descriptor may be shared with whoever else writes to the same
 * stream (CMD, sqlease's parent), so its own flags are never changed:
 * setting O_NONBLOCK on it would change it for all of them.  Instead:
 *
 *  - a regular file never blocks for long: written as it is (a private
 *    descriptor would have an offset of its own and overwrite the others');
 *  - a socket (the journal's stream): send() with MSG_DONTWAIT;
 *  - a pipe, a FIFO or a terminal: a description of its own, opened
 *    through /proc/self/fd with O_NONBLOCK, written once and closed; a
 *    line of at most PIPE_BUF bytes goes into a pipe whole or not at
 *    all;
 *  - else (no /proc): written only if poll() says it would not block
 *    now, which a writer racing for the same pipe can still make wrong.
 *
 * Every call here is async-signal-safe (open, fstat, send, poll, write,
 * close, and a lock-free atomic counter), so the guard process, forked
 * from a threaded one, may use it.
 */
int cli_os_stderr_write(const char *buf, size_t n)
{
    struct stat st;
    int ok = 0;

    if (n == 0)
        return 0;
    if (fstat(2, &st) != 0)
        return -1;
    if (S_ISREG(st.st_mode)) {
        ok = write_once(2, buf, n);
    } else if (S_ISSOCK(st.st_mode)) {
        ssize_t w;

        do
            w = send(2, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
        while (w < 0 && errno == EINTR);
        ok = w == (ssize_t)n;
    } else {
        int fd = open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

        if (fd >= 0) {
            ok = write_once(fd, buf, n);
            (void)close(fd);
        } else if (errno != ENXIO) {
            /* ENXIO: a FIFO with no reader, where the line would go
             * nowhere anyway. */
            struct pollfd pfd;

            pfd.fd = 2;
            pfd.events = POLLOUT;
            pfd.revents = 0;
            if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLOUT) != 0)
                ok = write_once(2, buf, n);
        }
    }
    if (!ok) {
        atomic_fetch_add(&g_dropped, 1);
        return -1;
    }
    return 0;
}

unsigned long cli_os_stderr_dropped(void)
{
    return atomic_exchange(&g_dropped, 0);
}
