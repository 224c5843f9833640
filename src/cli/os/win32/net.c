/*
 * net.c -- socket addresses on Win32 (see os.h): a numeric IPv4 or IPv6
 * address and a port as the SOCKADDR a server listens on.  The Windows
 * build has no HTTP server (there is no libmicrohttpd for MinGW), so
 * nothing calls this yet; it is here so that the contract holds on every
 * OS.  inet_pton is Winsock's (ws2_32), linked by whatever calls it.
 */
#include "os_win32.h"

#include <string.h>
#include <winsock2.h>
#include <ws2tcpip.h>

int cli_os_sockaddr_make(const char *host, unsigned port, cli_os_sockaddr *sa, size_t *len)
{
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;

    if (port > 65535)
        return -1;
    memset(&v4, 0, sizeof v4);
    memset(&v6, 0, sizeof v6);
    if (inet_pton(AF_INET, host, &v4.sin_addr) == 1) {
        v4.sin_family = AF_INET;
        v4.sin_port = htons((u_short)port);
        memset(sa, 0, sizeof *sa);
        memcpy(sa->bytes, &v4, sizeof v4);
        *len = sizeof v4;
        return 4;
    }
    if (inet_pton(AF_INET6, host, &v6.sin6_addr) == 1) {
        v6.sin6_family = AF_INET6;
        v6.sin6_port = htons((u_short)port);
        memset(sa, 0, sizeof *sa);
        memcpy(sa->bytes, &v6, sizeof v6);
        *len = sizeof v6;
        return 6;
    }
    return -1;
}
