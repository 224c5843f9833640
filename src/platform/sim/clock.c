/*
 * clock.c -- the simulated platform's clock (src/platform.h's contract;
 * see sim.h): virtual milliseconds, which move only when every coroutine
 * waits.  Reading it is a scheduling point; a sleep is a timed wait.
 */
#include "platform.h"
#include "simco.h"

int64_t sqle_mono_ms(void)
{
    sim_yield();
    return sim_now();
}

void sqle_sleep_ms(int64_t ms)
{
    if (ms < 0)
        ms = 0;
    sim_block(NULL, sim_now() + ms);
}
