/*
 * ident.c -- who and where this process is, on POSIX (see platform.h):
 * the host name, the process id, random UUIDs (libuuid) and the
 * environment.
 */
#include "platform.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uuid/uuid.h>

void sqle_hostname(char *buf, size_t cap)
{
    char name[256];
    size_t n;

    if (buf == NULL || cap == 0)
        return;
    memset(name, 0, sizeof name);
    if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0')
        strcpy(name, "unknown");
    name[sizeof name - 1] = '\0';
    n = strlen(name);
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, name, n);
    buf[n] = '\0';
}

long sqle_pid(void)
{
    return (long)getpid();
}

int sqle_uuid_random(unsigned char out[16])
{
    uuid_t u;

    uuid_generate_random(u);
    memcpy(out, u, 16);
    return 0;
}

const char *sqle_getenv(const char *name)
{
    return getenv(name);
}
