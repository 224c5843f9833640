/*
 * clock.c -- the lease clock and sleeping on POSIX (see platform.h).
 *
 * OS contract relied on: the clock is one clock for the whole host, so
 * readings taken in different processes compare, and it never goes back.
 * On Linux it is CLOCK_BOOTTIME, which also counts the time the machine
 * was suspended: CLOCK_MONOTONIC stops during a suspend, so a holder
 * whose machine slept through its ttl would wake believing its hold had
 * time left, and run on beside the follower that took the lease
 * meanwhile, until its next renew failed.  Every deadline of the library
 * (a hold's proof + renew_deadline, a watch's ttl, a statement's bound)
 * is on this clock.  Elsewhere (no CLOCK_BOOTTIME) it is CLOCK_MONOTONIC.
 */
#include "platform.h"

#include <errno.h>
#include <time.h>

#ifdef CLOCK_BOOTTIME
#define SQLE_LEASE_CLOCK CLOCK_BOOTTIME
#else
#define SQLE_LEASE_CLOCK CLOCK_MONOTONIC
#endif

int64_t sqle_mono_ms(void)
{
    struct timespec ts;

    if (clock_gettime(SQLE_LEASE_CLOCK, &ts) != 0 &&
        clock_gettime(CLOCK_MONOTONIC, &ts) != 0) /* a kernel before 2.6.39 */
        return 0;
    return (int64_t)ts.tv_sec * 1000 + (int64_t)(ts.tv_nsec / 1000000L);
}

/* nanosleep stops early when a signal handler runs (the tool installs
 * them without SA_RESTART); the remainder is slept so the call lasts as
 * long as asked.  Time the machine spends suspended does not count
 * toward it (nanosleep's clock is CLOCK_MONOTONIC): a sleep only ever
 * ends late after a suspend, and no deadline rests on a sleep. */
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
