/*
 * clock.c -- the wall clock on POSIX (see os.h).
 */
#include "os_posix.h"

#include <time.h>

int64_t sqle_wall_ms(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000 + (int64_t)(ts.tv_nsec / 1000000L);
}
