/*
 * notify.c -- the service manager's notification socket on Win32 (see
 * os.h): there is no systemd, so there is nothing to open.
 */
#include "os_win32.h"

int cli_os_notify_open(const char *addr, char *why, size_t cap)
{
    (void)addr;
    if (cap > 0)
        why[0] = '\0';
    return -2;
}

int cli_os_notify_send(const char *msg, char *why, size_t cap)
{
    (void)msg;
    if (cap > 0)
        why[0] = '\0';
    return -1;
}

int cli_os_notify_is_open(void)
{
    return 0;
}

void cli_os_notify_close(void)
{
}
