/*
 * clock.c -- the lease clock and sleeping on Win32 (see platform.h).
 *
 * OS contract relied on: GetTickCount64 is one clock for the whole host,
 * so readings from different processes compare, never goes back, and
 * includes the time the system spent in sleep or hibernation (its
 * documentation points to QueryUnbiasedInterruptTime for the count
 * without): a holder whose machine slept through its ttl must see its
 * deadline passed when it wakes, as the database's clock does.  Its
 * resolution is the system timer's (10 to 16 ms), which is fine for
 * deadlines of seconds.
 */
#include "win32.h"

int64_t sqle_mono_ms(void)
{
    return (int64_t)GetTickCount64();
}

/* Sleep() may end a tick early; sleeping again for the rest keeps the
 * promise of "at least ms". */
void sqle_sleep_ms(int64_t ms)
{
    int64_t end, left;

    if (ms <= 0)
        return;
    end = sqle_mono_ms() + ms;
    while ((left = end - sqle_mono_ms()) > 0)
        Sleep(left > 0x7FFFFFFF ? (DWORD)0x7FFFFFFF : (DWORD)left);
}
