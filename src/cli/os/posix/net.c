/*
 * net.c -- socket addresses on POSIX (see os.h): a numeric IPv4 or IPv6
 * address and a port as the struct sockaddr a server listens on.
 */
#include "os_posix.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

int cli_os_sockaddr_make(const char *host, unsigned port, cli_os_sockaddr *sa, size_t *len)
{
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;

    if (port > 65535)
        return -1;
    memset(&v4, 0, sizeof v4);
    memset(&v6, 0, sizeof v6);
    /* inet_pton takes only the dotted quad (no "127.1", no octal), and
     * only a plain IPv6 address (no "%eth0" zone): the forms the flag
     * documents. */
    if (inet_pton(AF_INET, host, &v4.sin_addr) == 1) {
        v4.sin_family = AF_INET;
        v4.sin_port = htons((uint16_t)port);
        memset(sa, 0, sizeof *sa);
        memcpy(sa->bytes, &v4, sizeof v4);
        *len = sizeof v4;
        return 4;
    }
    if (inet_pton(AF_INET6, host, &v6.sin6_addr) == 1) {
        v6.sin6_family = AF_INET6;
        v6.sin6_port = htons((uint16_t)port);
        memset(sa, 0, sizeof *sa);
        memcpy(sa->bytes, &v6, sizeof v6);
        *len = sizeof v6;
        return 6;
    }
    return -1;
}
