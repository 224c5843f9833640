/*
 * clock.c -- the monotonic clock and sleeping on POSIX (see platform.h).
 *
 * OS contract relied on: CLOCK_MONOTONIC is one clock for the whole host,
 * so readings taken in different processes compare.
 */
#include "platform.h"

#include <errno.h>
#include <time.h>

int64_t sqle_mono_ms(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000 + (int64_t)(ts.tv_nsec / 1000000L);
}

/* nanosleep stops early when a signal handler runs (the tool installs
 * them without SA_RESTART); the remainder is slept so the call lasts as
 * long as asked. */
void sqle_sleep_ms(int64_t ms)
{
    struct timespec req, rem;

    if (ms <= 0)
        return;
    req.tv_sec = (time_t)(ms / 1000);
    req.tv_nsec = (long)(ms % 1000) * 1000000L;
    while (nanosleep(&req, &rem) != 0 && errno == EINTR)
        req = rem;
}
