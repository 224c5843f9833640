/*
 * notify.c -- the sd_notify datagram protocol (see notify.h).  POSIX
 * only; the Windows build gets calls that do nothing.
 */
#if !defined(_WIN32)
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif
#endif

#include <string.h>

#include "cli.h"
#include "notify.h"

#if defined(_WIN32)

int cli_notify_init(void)
{
    return 0;
}

int cli_notify_enabled(void)
{
    return 0;
}

void cli_notify_send(const char *msg)
{
    (void)msg;
}

void cli_notify_close(void)
{
}

#else

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

static int g_fd = -1;
static struct sockaddr_un g_addr;
static socklen_t g_addr_len;

/*
 * An absolute path, or '@' and a name in the abstract namespace (the
 * '@' becomes the leading NUL, and the length, not a terminator, ends
 * the name).  systemd also knows "vsock:" addresses for virtual
 * machines; those are refused here with a log line.
 */
int cli_notify_init(void)
{
    const char *v = getenv("NOTIFY_SOCKET");
    size_t n;

    if (v == NULL || v[0] == '\0')
        return 0;
    n = strlen(v);
    memset(&g_addr, 0, sizeof g_addr);
    g_addr.sun_family = AF_UNIX;
    if ((v[0] != '/' && v[0] != '@') || n >= sizeof g_addr.sun_path) {
        cli_log(SQLEASE_LOG_WARN, "NOTIFY_SOCKET '%s' is not an AF_UNIX socket path; not"
                " notifying the service manager", v);
        unsetenv("NOTIFY_SOCKET");
        return 0;
    }
    memcpy(g_addr.sun_path, v, n);
    if (v[0] == '@')
        g_addr.sun_path[0] = '\0';
    g_addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (v[0] == '/'));
    g_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    unsetenv("NOTIFY_SOCKET");
    if (g_fd < 0) {
        cli_log(SQLEASE_LOG_WARN, "cannot create a socket to notify the service manager: %s",
                strerror(errno));
        return 0;
    }
    return 1;
}

int cli_notify_enabled(void)
{
    return g_fd >= 0;
}

void cli_notify_send(const char *msg)
{
    ssize_t w;

    if (g_fd < 0)
        return;
    do
        w = sendto(g_fd, msg, strlen(msg), MSG_NOSIGNAL, (const struct sockaddr *)&g_addr,
                   g_addr_len);
    while (w < 0 && errno == EINTR);
    if (w < 0)
        cli_log(SQLEASE_LOG_DEBUG, "notifying the service manager (%s) failed: %s", msg,
                strerror(errno));
}

void cli_notify_close(void)
{
    if (g_fd >= 0)
        close(g_fd);
    g_fd = -1;
}

#endif
