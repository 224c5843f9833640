/*
 * thread.c -- threads of the simulated platform (src/platform.h's
 * contract; see sim.h): each is a coroutine of the scheduler, in the
 * process of the thread that started it.
 */
#include <stdint.h>
#include <string.h>

#include "platform.h"
#include "simco.h"

_Static_assert(sizeof(sim_co *) <= sizeof(sqle_thread), "a coroutine pointer fits sqle_thread");

static sim_co *co(const sqle_thread *t)
{
    sim_co *c;
    memcpy(&c, t, sizeof c);
    return c;
}

int sqle_thread_start(sqle_thread *t, void (*fn)(void *), void *arg)
{
    sim_co *c = sim_spawn(fn, arg);

    if (c == NULL)
        return -1;
    memset(t, 0, sizeof *t);
    memcpy(t, &c, sizeof c);
    sim_yield();
    return 0;
}

/* Wait for it to end; it is then freed when the scheduler next reaps. */
void sqle_thread_join(sqle_thread *t)
{
    sim_co *c = co(t);

    while (c->state != SIM_DONE)
        sim_block(c, -1);
    c->detached = 1;
}

void sqle_thread_detach(sqle_thread *t)
{
    co(t)->detached = 1;
}

uint64_t sqle_thread_self(void)
{
    sim_co *c = sim_current();
    return c != NULL ? (uint64_t)c->id : 0;
}
