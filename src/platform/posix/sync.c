/*
 * sync.c -- mutexes, condition variables and atomic counters on POSIX
 * (see platform.h).
 *
 * OS contract relied on: pthreads with pthread_condattr_setclock, so a
 * condition variable times out on CLOCK_MONOTONIC, the clock
 * sqle_mono_ms() reads (clock.c); the compiler's __atomic builtins.
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

/* The absolute deadline is the same number sqle_mono_ms() returns, so
 * when the wait times out, sqle_mono_ms() >= deadline already holds:
 * a caller re-reading the clock never sees a timeout "early". */
int sqle_cond_wait_until(sqle_cond *c, sqle_mutex *m, int64_t deadline_mono_ms)
{
    struct timespec ts;
    int rc;

    if (deadline_mono_ms < 0) {
        pthread_cond_wait(&c->c, &m->m);
        return 0;
    }
    ts.tv_sec = (time_t)(deadline_mono_ms / 1000);
    ts.tv_nsec = (long)(deadline_mono_ms % 1000) * 1000000L;
    rc = pthread_cond_timedwait(&c->c, &m->m, &ts);
    if (rc == ETIMEDOUT)
        return 1;
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
