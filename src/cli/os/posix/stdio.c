/*
 * stdio.c -- the standard descriptors on POSIX (see os.h): none left
 * closed for a database socket to take, and whether stderr is the
 * systemd journal.
 */
#include "os_posix.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

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
