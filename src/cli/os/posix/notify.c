/*
 * notify.c -- the service manager's notification socket on POSIX (see
 * os.h): one AF_UNIX datagram socket, opened once, that sd_notify
 * messages are sent on (the protocol itself is src/cli/notify.c).
 */
#include "os_posix.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
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
 * machines; those are refused here.
 */
int cli_os_notify_open(const char *addr, char *why, size_t cap)
{
    size_t n = strlen(addr);

    if (cap > 0)
        why[0] = '\0';
    memset(&g_addr, 0, sizeof g_addr);
    g_addr.sun_family = AF_UNIX;
    if ((addr[0] != '/' && addr[0] != '@') || n >= sizeof g_addr.sun_path) {
        snprintf(why, cap, "not an AF_UNIX socket path");
        return 0;
    }
    memcpy(g_addr.sun_path, addr, n);
    if (addr[0] == '@')
        g_addr.sun_path[0] = '\0';
    g_addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (addr[0] == '/'));
    g_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (g_fd < 0) {
        snprintf(why, cap, "%s", strerror(errno));
        return -1;
    }
    return 1;
}

int cli_os_notify_send(const char *msg, char *why, size_t cap)
{
    ssize_t w;

    if (cap > 0)
        why[0] = '\0';
    if (g_fd < 0) {
        snprintf(why, cap, "the socket is not open");
        return -1;
    }
    do
        w = sendto(g_fd, msg, strlen(msg), MSG_NOSIGNAL, (const struct sockaddr *)&g_addr,
                   g_addr_len);
    while (w < 0 && errno == EINTR);
    if (w < 0) {
        snprintf(why, cap, "%s", strerror(errno));
        return -1;
    }
    return 0;
}

int cli_os_notify_is_open(void)
{
    return g_fd >= 0;
}

void cli_os_notify_close(void)
{
    if (g_fd >= 0)
        close(g_fd);
    g_fd = -1;
}
