/*
 * ident.c -- who and where a simulated process is (src/platform.h's
 * identity part; see sim.h): its random UUIDs come from the seed, so
 * that a group's presence names, and where its workers start looking
 * for free rows, are the same in every replay of a seed.
 */
#include <stdlib.h>
#include <string.h>

#include "platform.h"
#include "simco.h"

void sqle_hostname(char *buf, size_t cap)
{
    if (buf == NULL || cap == 0)
        return;
    strncpy(buf, "sim", cap - 1);
    buf[cap - 1] = '\0';
}

long sqle_pid(void)
{
    return 1000 + sim_process();
}

int sqle_uuid_random(unsigned char out[16])
{
    int i;

    for (i = 0; i < 16; i += 8) {
        uint64_t r = sim_rand();
        memcpy(out + i, &r, 8);
    }
    out[6] = (unsigned char)((out[6] & 0x0f) | 0x40); /* version 4 */
    out[8] = (unsigned char)((out[8] & 0x3f) | 0x80); /* variant 1 */
    return 0;
}

const char *sqle_getenv(const char *name)
{
    return getenv(name);
}
