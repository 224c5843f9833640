/*
 * sync.c -- mutexes, condition variables and atomic counters on POSIX
 * (see platform.h).
 *
 * OS contract relied on: pthreads with pthread_condattr_setclock, so a
 * condition variable times out on CLOCK_MONOTONIC, never on the wall
 * clock; the compiler's __atomic builtins.  The deadlines it is given
 * are on the lease clock (clock.c: CLOCK_BOOTTIME on Linux), which a
 * condition variable cannot wait on (glibc takes only CLOCK_REALTIME and
 * CLOCK_MONOTONIC), and which runs ahead of CLOCK_MONOTONIC by every
 * suspend: see sqle_cond_wait_until.
 */
#include "platform.h"

#include <errno.h>
#include <time.h>

/* ---- mutexes and condition variables ------------------------------- */

int sqle_mutex_init(sqle_mutex *m)
{
    return pthread_mutex_init(&m->m, NULL) == 0 ? 0 : -1;
}

void sqle_mutex_destroy(sqle_mutex *m)
{
    pthread_mutex_destroy(&m->m);
}

void sqle_mutex_lock(sqle_mutex *m)
{
    pthread_mutex_lock(&m->m);
}

void sqle_mutex_unlock(sqle_mutex *m)
{
    pthread_mutex_unlock(&m->m);
}

/* The condition variable runs on CLOCK_MONOTONIC: with the default
 * (CLOCK_REALTIME) a wall-clock step would move every lease deadline. */
int sqle_cond_init(sqle_cond *c)
{
    pthread_condattr_t attr;
    int rc;

    if (pthread_condattr_init(&attr) != 0)
        return -1;
#if !defined(__APPLE__)
    if (pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) != 0) {
        pthread_condattr_destroy(&attr);
        return -1;
    }
#endif
    rc = pthread_cond_init(&c->c, &attr);
    pthread_condattr_destroy(&attr);
    return rc == 0 ? 0 : -1;
}

void sqle_cond_destroy(sqle_cond *c)
{
    pthread_cond_destroy(&c->c);
}

void sqle_cond_signal(sqle_cond *c)
{
    pthread_cond_signal(&c->c);
}

void sqle_cond_broadcast(sqle_cond *c)
{
    pthread_cond_broadcast(&c->c);
}

/*
 * A timed wait ends at least every SQLE_SUSPEND_CHECK_MS, as a spurious
 * wake-up (callers loop): the deadline is on the lease clock, the wait
 * on CLOCK_MONOTONIC, and a suspend moves the first but not the second.
 * A watchdog asleep until a hold's deadline when the machine suspends
 * would otherwise wake that whole suspend late, with the hold long over
 * and another holder working; so the wait is cut into pieces short
 * enough that, after a resume, the deadline is seen within one of them.
 * Waits without a deadline are not cut: an idle process wakes for
 * nothing.
 */
#define SQLE_SUSPEND_CHECK_MS 250

/* Returns 1 only once sqle_mono_ms() >= deadline holds, so a caller
 * re-reading the clock never sees a timeout "early". */
int sqle_cond_wait_until(sqle_cond *c, sqle_mutex *m, int64_t deadline_mono_ms)
{
    struct timespec ts;
    int64_t left, until;

    if (deadline_mono_ms < 0) {
        pthread_cond_wait(&c->c, &m->m);
        return 0;
    }
    left = deadline_mono_ms - sqle_mono_ms();
    if (left <= 0)
        return 1;
    if (left > SQLE_SUSPEND_CHECK_MS)
        left = SQLE_SUSPEND_CHECK_MS;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0;
    until = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000L + left;
    ts.tv_sec = (time_t)(until / 1000);
    ts.tv_nsec = (long)(until % 1000) * 1000000L;
    if (pthread_cond_timedwait(&c->c, &m->m, &ts) == ETIMEDOUT)
        return sqle_mono_ms() >= deadline_mono_ms ? 1 : 0;
    return 0;
}

/* ---- atomics ------------------------------------------------------- */

uint64_t sqle_atomic_load(const sqle_atomic_u64 *a)
{
    return __atomic_load_n(&a->v, __ATOMIC_SEQ_CST);
}

void sqle_atomic_add(sqle_atomic_u64 *a, uint64_t n)
{
    (void)__atomic_fetch_add(&a->v, n, __ATOMIC_SEQ_CST);
}
