/*
 * sync.c -- mutexes, condition variables and atomics of the simulated
 * platform (src/platform.h's contract; see sim.h).  The storage is
 * platform.h's POSIX types, reused as plain memory: a mutex holds its
 * owner, a condition variable nothing (its waiters name its address).
 * Every call is a scheduling point, so the seed decides who gets a lock
 * and in which order a signal's waiters run.
 */
#include <string.h>

#include "platform.h"
#include "simco.h"

typedef struct { sim_co *owner; } sim_mutex;

_Static_assert(sizeof(sim_mutex) <= sizeof(sqle_mutex), "sim_mutex fits sqle_mutex");

static sim_mutex *mx(sqle_mutex *m)
{
    return (sim_mutex *)(void *)m;
}

int sqle_mutex_init(sqle_mutex *m)
{
    memset(m, 0, sizeof *m);
    return 0;
}

void sqle_mutex_destroy(sqle_mutex *m)
{
    (void)m;
}

void sqle_mutex_lock(sqle_mutex *m)
{
    sim_yield();
    while (mx(m)->owner != NULL)
        sim_block(m, -1);
    mx(m)->owner = sim_current();
}

void sqle_mutex_unlock(sqle_mutex *m)
{
    mx(m)->owner = NULL;
    sim_wake_all(m);
    sim_yield();
}

int sqle_cond_init(sqle_cond *c)
{
    memset(c, 0, sizeof *c);
    return 0;
}

void sqle_cond_destroy(sqle_cond *c)
{
    (void)c;
}

void sqle_cond_signal(sqle_cond *c)
{
    sim_wake_one(c);
    sim_yield();
}

void sqle_cond_broadcast(sqle_cond *c)
{
    sim_wake_all(c);
    sim_yield();
}

/* Release the mutex, wait for a signal or the deadline, take it again.
 * Returns 1 on the deadline, as the POSIX one does. */
int sqle_cond_wait_until(sqle_cond *c, sqle_mutex *m, int64_t deadline_mono_ms)
{
    int timed_out;

    mx(m)->owner = NULL;
    sim_wake_all(m);
    timed_out = sim_block(c, deadline_mono_ms < 0 ? -1 : deadline_mono_ms);
    while (mx(m)->owner != NULL)
        sim_block(m, -1);
    mx(m)->owner = sim_current();
    return timed_out;
}

uint64_t sqle_atomic_load(const sqle_atomic_u64 *a)
{
    return a->v;
}

void sqle_atomic_add(sqle_atomic_u64 *a, uint64_t n)
{
    a->v += n;
}
