/*
 * sync.c -- mutexes, condition variables and atomic counters on Win32
 * (see platform.h).
 *
 * OS contract relied on: SRWLOCK and CONDITION_VARIABLE, each one pointer
 * in size, stored in the opaque storage of platform.h; a timed wait is
 * computed from the monotonic clock (clock.c), so the wall clock never
 * moves a deadline.
 */
#include "win32.h"

_Static_assert(sizeof(SRWLOCK) == sizeof(void *), "SRWLOCK must fit sqle_mutex");
_Static_assert(sizeof(CONDITION_VARIABLE) == sizeof(void *),
               "CONDITION_VARIABLE must fit sqle_cond");

#define SRW(m) ((PSRWLOCK)(void *)&(m)->p)
#define CV(c) ((PCONDITION_VARIABLE)(void *)&(c)->p)

/* ---- mutexes and condition variables ------------------------------- */

int sqle_mutex_init(sqle_mutex *m)
{
    InitializeSRWLock(SRW(m));
    return 0;
}

void sqle_mutex_destroy(sqle_mutex *m)
{
    (void)m; /* an SRWLOCK holds no resources */
}

void sqle_mutex_lock(sqle_mutex *m)
{
    AcquireSRWLockExclusive(SRW(m));
}

void sqle_mutex_unlock(sqle_mutex *m)
{
    ReleaseSRWLockExclusive(SRW(m));
}

int sqle_cond_init(sqle_cond *c)
{
    InitializeConditionVariable(CV(c));
    return 0;
}

void sqle_cond_destroy(sqle_cond *c)
{
    (void)c;
}

void sqle_cond_signal(sqle_cond *c)
{
    WakeConditionVariable(CV(c));
}

void sqle_cond_broadcast(sqle_cond *c)
{
    WakeAllConditionVariable(CV(c));
}

/* Windows waits take a relative timeout and may end up to a timer tick
 * early, so a timeout is reported only once the monotonic clock has
 * really reached the deadline; an early one counts as spurious (0) and
 * the caller's loop waits again for the rest. */
int sqle_cond_wait_until(sqle_cond *c, sqle_mutex *m, int64_t deadline_mono_ms)
{
    int64_t left;
    DWORD ms;

    if (deadline_mono_ms < 0) {
        SleepConditionVariableSRW(CV(c), SRW(m), INFINITE, 0);
        return 0;
    }
    left = deadline_mono_ms - sqle_mono_ms();
    if (left <= 0)
        return 1;
    /* A wait's timeout does not count a sleep of the system (Windows 8
     * on), the lease clock does: in pieces of at most 250 ms, the
     * deadline is seen soon after a resume (platform.h). */
    ms = left > 250 ? (DWORD)250 : (DWORD)left;
    if (!SleepConditionVariableSRW(CV(c), SRW(m), ms, 0) && GetLastError() == ERROR_TIMEOUT)
        return sqle_mono_ms() >= deadline_mono_ms ? 1 : 0;
    return 0;
}

/* ---- atomics ------------------------------------------------------- */

uint64_t sqle_atomic_load(const sqle_atomic_u64 *a)
{
#if defined(__GNUC__) || defined(__clang__)
    return __atomic_load_n(&a->v, __ATOMIC_SEQ_CST);
#else
    /* A compare-exchange that never changes the value is a full-barrier
     * 64-bit read, also on 32-bit x86. */
    return (uint64_t)InterlockedCompareExchange64((volatile LONG64 *)&a->v, 0, 0);
#endif
}

void sqle_atomic_add(sqle_atomic_u64 *a, uint64_t n)
{
#if defined(__GNUC__) || defined(__clang__)
    (void)__atomic_fetch_add(&a->v, n, __ATOMIC_SEQ_CST);
#else
    (void)InterlockedExchangeAdd64((volatile LONG64 *)&a->v, (LONG64)n);
#endif
}
