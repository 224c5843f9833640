/*
 * sched.c -- the simulated platform's scheduler (see sim.h): coroutines on
 * ucontext, a seeded choice at every scheduling point, virtual time.
 *
 * Every coroutine is on one list in creation order, so that "the runnable
 * ones" is the same list for the same history, and the seeded choice among
 * them is the same schedule.  Blocked coroutines say what they wait on
 * (an object's address, or nothing for a sleep) and until when (a virtual
 * time, or -1); whoever changes that object wakes its waiters.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "simco.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

#define STACK_BYTES (256 * 1024)
#define MAX_PROCS 64

static sim_co *g_all, *g_last;
static sim_co *g_cur;
/* Switching: a coroutine's first run goes through setcontext (its own
 * stack); after that, _setjmp/_longjmp, which unlike swapcontext make
 * no system call (no signal mask is saved: the library's threads never
 * change theirs).  The scheduler's own place is g_sched_jb. */
static jmp_buf g_sched_jb;
/* AddressSanitizer is told of every switch between stacks, or it takes a
 * coroutine's stack for an overflow of the scheduler's (and keeps fake
 * stacks for the wrong one).  The scheduler's stack, learnt from the
 * first switch away from it. */
static const void *g_sched_bottom;
static size_t g_sched_size;
#if defined(__SANITIZE_ADDRESS__)
static void *g_sched_fake;
#endif
static int64_t g_now = SIM_T0;   /* not 0: a zero time means "never" here and there */
static uint64_t g_rng = 0x9e3779b97f4a7c15ULL;
static uint64_t g_steps;
static uint64_t g_max_steps;     /* 0: no limit (sim_budget) */
static int64_t g_max_now;
static int g_next_id = 1;
static int g_main_done;
static unsigned char g_crashed[MAX_PROCS];
static int64_t g_frozen_until[MAX_PROCS];
/* Stacks of ended coroutines, kept for the next ones: a history starts
 * and ends thousands of threads, and a fresh 256 KiB each time is a
 * system call each time. */
static void *g_stacks[256];
static int g_nstacks;

static void *stack_get(void)
{
    return g_nstacks > 0 ? g_stacks[--g_nstacks] : malloc(STACK_BYTES);
}

static void stack_put(void *p)
{
    if (g_nstacks < (int)(sizeof g_stacks / sizeof g_stacks[0]))
        g_stacks[g_nstacks++] = p;
    else
        free(p);
}

void sim_reset(void)
{
    sim_co *c, *next;

    for (c = g_all; c != NULL; c = next) {
        next = c->all_next;
        stack_put(c->stack);
        free(c);
    }
    g_all = g_last = g_cur = NULL;
    g_now = SIM_T0;
    g_steps = 0;
    g_next_id = 1;
    memset(g_crashed, 0, sizeof g_crashed);
    memset(g_frozen_until, 0, sizeof g_frozen_until);
}

void sim_seed(uint64_t seed)
{
    g_rng = seed * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL;
    if (g_rng == 0)
        g_rng = 1;
}

/* xorshift64*: small, fast, and the same on every machine. */
uint64_t sim_rand(void)
{
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return g_rng * 0x2545f4914f6cdd1dULL;
}

uint64_t sim_below(uint64_t n)
{
    return n == 0 ? 0 : sim_rand() % n;
}

int64_t sim_now(void)
{
    return g_now;
}

uint64_t sim_steps(void)
{
    return g_steps;
}

void sim_budget(uint64_t steps, int64_t until)
{
    g_max_steps = steps;
    g_max_now = until;
}

sim_co *sim_current(void)
{
    return g_cur;
}

void sim_set_process(int p)
{
    if (g_cur != NULL && p >= 0 && p < MAX_PROCS)
        g_cur->proc = p;
}

int sim_process(void)
{
    return g_cur != NULL ? g_cur->proc : 0;
}

void sim_crash(int p)
{
    if (p >= 0 && p < MAX_PROCS)
        g_crashed[p] = 1;
}

void sim_freeze(int p, int64_t until)
{
    if (p >= 0 && p < MAX_PROCS)
        g_frozen_until[p] = until;
}

int sim_crashed(int p)
{
    return p >= 0 && p < MAX_PROCS && g_crashed[p];
}

/* A switch of stacks begins (to `bottom`, `size` bytes; `save` keeps
 * what the stack left behind needs, NULL when it is never resumed) or
 * has ended on the new stack (`save` is its own; the old one's bounds
 * are learnt when asked).  Nothing without AddressSanitizer. */
static void switch_begin(void **save, const void *bottom, size_t size)
{
#if defined(__SANITIZE_ADDRESS__)
    __sanitizer_start_switch_fiber(save, bottom, size);
#else
    (void)save;
    (void)bottom;
    (void)size;
#endif
}

static void switch_end(void *save, const void **old_bottom, size_t *old_size)
{
#if defined(__SANITIZE_ADDRESS__)
    __sanitizer_finish_switch_fiber(save, old_bottom, old_size);
#else
    (void)save;
    (void)old_bottom;
    (void)old_size;
#endif
}

static int can_run(const sim_co *c)
{
    return !g_crashed[c->proc] && g_frozen_until[c->proc] <= g_now;
}

/* The coroutine's body: run its function, then wake who joins it. */
static void trampoline(void)
{
    sim_co *c = g_cur;

    switch_end(NULL, &g_sched_bottom, &g_sched_size);
    c->fn(c->arg);
    c->state = SIM_DONE;
    sim_wake_all(c);
    switch_begin(NULL, g_sched_bottom, g_sched_size);
    _longjmp(g_sched_jb, 1);
}

/* The context a new coroutine starts in (getcontext's second return
 * never comes here: makecontext redirects it to the trampoline). */
static void make_context(sim_co *c, size_t bytes)
{
    getcontext(&c->ctx);
    c->ctx.uc_stack.ss_sp = c->stack;
    c->ctx.uc_stack.ss_size = bytes;
    c->ctx.uc_link = NULL;
    makecontext(&c->ctx, trampoline, 0);
}

sim_co *sim_spawn(void (*fn)(void *), void *arg)
{
    sim_co *c = calloc(1, sizeof *c);

    if (c == NULL)
        return NULL;
    c->stack = stack_get();
    if (c->stack == NULL) {
        free(c);
        return NULL;
    }
    c->fn = fn;
    c->arg = arg;
    c->id = g_next_id++;
    c->proc = g_cur != NULL ? g_cur->proc : 0;
    c->state = SIM_RUNNABLE;
    c->wake_at = -1;
    make_context(c, STACK_BYTES);
    if (g_last != NULL)
        g_last->all_next = c;
    else
        g_all = c;
    g_last = c;
    return c;
}

/* Back to the scheduler; returns when this coroutine is chosen again. */
static void to_scheduler(void)
{
    sim_co *c = g_cur;

    if (_setjmp(c->jb) == 0) {
        switch_begin(&c->fake_stack, g_sched_bottom, g_sched_size);
        _longjmp(g_sched_jb, 1);
    }
    switch_end(c->fake_stack, NULL, NULL);
}

void sim_yield(void)
{
    if (g_cur == NULL)
        return;
    to_scheduler();
}

int sim_block(const void *on, int64_t until)
{
    sim_co *c = g_cur;

    c->state = SIM_BLOCKED;
    c->waiting_on = on;
    c->wake_at = until;
    c->timed_out = 0;
    to_scheduler();
    return c->timed_out;
}

void sim_wake_all(const void *on)
{
    sim_co *c;

    for (c = g_all; c != NULL; c = c->all_next)
        if (c->state == SIM_BLOCKED && c->waiting_on == on && on != NULL) {
            c->state = SIM_RUNNABLE;
            c->waiting_on = NULL;
        }
}

int sim_wake_one(const void *on)
{
    sim_co *c, *pick = NULL;
    int n = 0;

    for (c = g_all; c != NULL; c = c->all_next)
        if (c->state == SIM_BLOCKED && c->waiting_on == on && on != NULL)
            n++;
    if (n == 0)
        return 0;
    n = (int)sim_below((uint64_t)n);
    for (c = g_all; c != NULL; c = c->all_next)
        if (c->state == SIM_BLOCKED && c->waiting_on == on && on != NULL && n-- == 0) {
            pick = c;
            break;
        }
    pick->state = SIM_RUNNABLE;
    pick->waiting_on = NULL;
    return 1;
}

/* The earliest virtual time something can happen: a timer of a coroutine
 * that may run then, or a thaw. */
static int64_t next_event(void)
{
    int64_t t = -1;
    sim_co *c;
    int p;

    for (c = g_all; c != NULL; c = c->all_next) {
        int64_t w;
        if (c->state != SIM_BLOCKED || c->wake_at < 0 || g_crashed[c->proc])
            continue;
        w = c->wake_at;
        if (g_frozen_until[c->proc] > w)
            w = g_frozen_until[c->proc];
        if (t < 0 || w < t)
            t = w;
    }
    for (p = 0; p < MAX_PROCS; p++) {
        if (g_crashed[p] || g_frozen_until[p] <= g_now)
            continue;
        for (c = g_all; c != NULL; c = c->all_next)
            if (c->proc == p && c->state == SIM_RUNNABLE) {
                if (t < 0 || g_frozen_until[p] < t)
                    t = g_frozen_until[p];
                break;
            }
    }
    return t;
}

/* Free the coroutines that ended and that nobody will join. */
static void reap(void)
{
    sim_co **pp = &g_all, *c;

    g_last = NULL;
    while ((c = *pp) != NULL) {
        if (c->state == SIM_DONE && c->detached) {
            *pp = c->all_next;
            stack_put(c->stack);
            free(c);
            continue;
        }
        g_last = c;
        pp = &c->all_next;
    }
}

/* Run `pick` until its next scheduling point; back here then. */
static void switch_to(sim_co *pick)
{
    g_cur = pick;
    if (_setjmp(g_sched_jb) == 0) {
#if defined(__SANITIZE_ADDRESS__)
        switch_begin(&g_sched_fake, pick->stack, STACK_BYTES);
#endif
        if (pick->started) {
            _longjmp(pick->jb, 1);
        } else {
            pick->started = 1;
            setcontext(&pick->ctx);
        }
    }
#if defined(__SANITIZE_ADDRESS__)
    switch_end(g_sched_fake, NULL, NULL);
#endif
    g_cur = NULL;
}

static void main_body(void *arg)
{
    void **a = arg;
    void (*fn)(void *) = (void (*)(void *))a[0];

    fn(a[1]);
    g_main_done = 1;
}

int sim_run(void (*fn)(void *), void *arg)
{
    void *a[2];
    sim_co *main_co;
    int rc = 0;

    a[0] = (void *)fn;
    a[1] = arg;
    g_main_done = 0;
    main_co = sim_spawn(main_body, a);
    if (main_co == NULL)
        return -1;
    main_co->detached = 1;
    while (!g_main_done) {
        sim_co *c, *pick = NULL;
        int n = 0, k;

        if ((g_max_steps > 0 && g_steps >= g_max_steps) || (g_max_now > 0 && g_now > g_max_now)) {
            rc = -2; /* ran away: what is left is abandoned (sim_reset) */
            break;
        }

        for (c = g_all; c != NULL; c = c->all_next) {
            if (c->state == SIM_BLOCKED && c->wake_at >= 0 && c->wake_at <= g_now) {
                c->state = SIM_RUNNABLE;
                c->timed_out = 1;
                c->waiting_on = NULL;
            }
            if (c->state == SIM_RUNNABLE && can_run(c))
                n++;
        }
        if (n == 0) {
            int64_t t = next_event();
            if (t < 0) {
                rc = -1;
                break;
            }
            if (t > g_now)
                g_now = t;
            continue;
        }
        k = (int)sim_below((uint64_t)n);
        for (c = g_all; c != NULL; c = c->all_next)
            if (c->state == SIM_RUNNABLE && can_run(c) && k-- == 0) {
                pick = c;
                break;
            }
        g_steps++;
        pick->wake_at = -1;
        switch_to(pick);
        if ((g_steps & 1023) == 0)
            reap();
    }
    return rc;
}
