/*
 * simco.h -- what the simulated platform's files (sync.c, thread.c,
 * clock.c) share with its scheduler (sched.c).  See sim.h.
 */
#ifndef SQLEASE_SIM_SCHED_H
#define SQLEASE_SIM_SCHED_H

#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdint.h>
#include <ucontext.h>

#include "sim.h"

enum { SIM_RUNNABLE = 1, SIM_BLOCKED = 2, SIM_DONE = 3 };

typedef struct sim_co {
    ucontext_t ctx;           /* where it starts (makecontext) */
    jmp_buf jb;               /* where it was left, once started */
    int started;
    void *stack;
    void (*fn)(void *);
    void *arg;
    int id;
    int proc;
    int state;
    int detached;
    int timed_out;
    const void *waiting_on;   /* NULL: a sleep */
    int64_t wake_at;          /* virtual ms; -1: none */
    void *fake_stack;         /* AddressSanitizer's, while it is switched away */
    struct sim_co *all_next;
} sim_co;

sim_co *sim_current(void);
sim_co *sim_spawn(void (*fn)(void *), void *arg);
/* A scheduling point: the caller stays runnable. */
void sim_yield(void);
/* Wait on `on` (NULL: nothing but the timer) until woken or virtual time
 * `until` (-1: no timer).  Returns 1 when the timer ended the wait. */
int sim_block(const void *on, int64_t until);
void sim_wake_all(const void *on);
int sim_wake_one(const void *on);

#endif
