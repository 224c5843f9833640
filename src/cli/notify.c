/*
 * notify.c -- the sd_notify datagram protocol (see notify.h).  The socket
 * itself is the OS layer's (os.h); on Windows there is none, and every
 * call here does nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "notify.h"
#include "os.h"

/* The variable is taken out of the environment whatever its value, once
 * it has been read (and quoted in a message, if it is unusable). */
int cli_notify_init(void)
{
    const char *v = getenv("NOTIFY_SOCKET");
    char why[256];
    int r;

    if (v == NULL || v[0] == '\0')
        return 0;
    r = cli_os_notify_open(v, why, sizeof why);
    if (r == -2)
        return 0;
    if (r == 0)
        cli_log(SQLEASE_LOG_WARN, "NOTIFY_SOCKET '%s' is not an AF_UNIX socket path; not"
                " notifying the service manager", v);
    (void)cli_os_unsetenv("NOTIFY_SOCKET");
    if (r < 0) {
        cli_log(SQLEASE_LOG_WARN, "cannot create a socket to notify the service manager: %s",
                why);
        return 0;
    }
    return r;
}

int cli_notify_enabled(void)
{
    return cli_os_notify_is_open();
}

void cli_notify_send(const char *msg)
{
    char why[256];

    if (!cli_os_notify_is_open())
        return;
    if (cli_os_notify_send(msg, why, sizeof why) != 0)
        cli_log(SQLEASE_LOG_DEBUG, "notifying the service manager (%s) failed: %s", msg, why);
}

void cli_notify_close(void)
{
    cli_os_notify_close();
}
