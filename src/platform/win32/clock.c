/*
 * clock.c -- the monotonic clock and sleeping on Win32 (see platform.h).
 *
 * OS contract relied on: QueryPerformanceCounter is one clock for the
 * whole host, so readings from different processes compare.
 */
#include "win32.h"

/* counter * 1000 would overflow 63 bits after about a month of uptime
 * where the frequency is in the GHz range (some systems expose the TSC),
 * so whole seconds and the remainder are scaled separately. */
int64_t sqle_mono_ms(void)
{
    LARGE_INTEGER f, c;

    QueryPerformanceFrequency(&f);
    QueryPerformanceCounter(&c);
    return (int64_t)((c.QuadPart / f.QuadPart) * 1000
                     + (c.QuadPart % f.QuadPart) * 1000 / f.QuadPart);
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
