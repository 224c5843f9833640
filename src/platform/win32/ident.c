/*
 * ident.c -- who and where this process is, on Win32 (see platform.h):
 * the host name, the process id, random UUIDs (UuidCreate, from rpcrt4:
 * link with it) and the environment.
 */
#include "win32.h"

#include <rpc.h>
#include <stdlib.h>
#include <string.h>

/* The DNS host name, like gethostname() on POSIX; the NetBIOS name if
 * that is not available. */
void sqle_hostname(char *buf, size_t cap)
{
    char name[256];
    DWORD n = (DWORD)sizeof name;
    size_t len;

    if (buf == NULL || cap == 0)
        return;
    memset(name, 0, sizeof name);
    if (!GetComputerNameExA(ComputerNameDnsHostname, name, &n) || name[0] == '\0') {
        n = (DWORD)sizeof name;
        memset(name, 0, sizeof name);
        if (!GetComputerNameA(name, &n) || name[0] == '\0')
            strcpy(name, "unknown");
    }
    name[sizeof name - 1] = '\0';
    len = strlen(name);
    if (len >= cap)
        len = cap - 1;
    memcpy(buf, name, len);
    buf[len] = '\0';
}

long sqle_pid(void)
{
    return (long)GetCurrentProcessId();
}

/* UUID's first three fields are little-endian integers in memory; they
 * are written big-endian so the bytes read like the RFC 4122 text form
 * (version nibble in the high half of byte 6), as libuuid gives them. */
int sqle_uuid_random(unsigned char out[16])
{
    UUID u;
    RPC_STATUS st = UuidCreate(&u);

    if (st != RPC_S_OK && st != RPC_S_UUID_LOCAL_ONLY)
        return -1;
    out[0] = (unsigned char)(u.Data1 >> 24);
    out[1] = (unsigned char)(u.Data1 >> 16);
    out[2] = (unsigned char)(u.Data1 >> 8);
    out[3] = (unsigned char)u.Data1;
    out[4] = (unsigned char)(u.Data2 >> 8);
    out[5] = (unsigned char)u.Data2;
    out[6] = (unsigned char)(u.Data3 >> 8);
    out[7] = (unsigned char)u.Data3;
    memcpy(out + 8, u.Data4, 8);
    return 0;
}

const char *sqle_getenv(const char *name)
{
    return getenv(name);
}
