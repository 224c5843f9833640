/*
 * sim.h -- the simulated platform's scheduler, for the simulator's harness
 * (tests/sim/).  The library's own code runs on it unchanged: its threads
 * are coroutines that run one at a time, and at every lock, unlock, wait,
 * signal, sleep and clock read (src/platform.h) a seeded random choice
 * says which runs next.  Time is virtual: it moves only when every
 * coroutine waits, straight to the earliest timed wake-up.  Same seed,
 * same schedule, same result.
 *
 * Coroutines belong to simulated processes (numbered from 0; a thread is
 * in its creator's process).  A crashed process never runs again; a
 * frozen one does not run until it thaws, while time goes on.  Not a
 * general-purpose platform: one OS thread, POSIX ucontext.
 */
#ifndef SQLEASE_SIM_H
#define SQLEASE_SIM_H

#include <stddef.h>
#include <stdint.h>

/* Seed the scheduler's choices (and sim_rand). */
void sim_seed(uint64_t seed);

/* Run fn(arg) as the first coroutine, in process 0, and schedule until it
 * returns or nothing can run any more.  Returns 0 when fn returned, -1
 * when every coroutine left waits for ever (a deadlock), -2 when the
 * budget ran out (sim_budget). */
int sim_run(void (*fn)(void *), void *arg);

/* Forget every coroutine (of a history that ended, or was abandoned with
 * crashed processes' coroutines still waiting) and start virtual time
 * again at SIM_T0: between two seeds. */
#define SIM_T0 INT64_C(1000000)
void sim_reset(void);

/* Virtual now, ms.  Reads it without a scheduling point. */
int64_t sim_now(void);

/* The next seeded random number, and one in [0, n). */
uint64_t sim_rand(void);
uint64_t sim_below(uint64_t n);

/* Put the calling coroutine in process p from now on (the threads it
 * starts inherit it); its current process. */
void sim_set_process(int p);
int sim_process(void);

/* Crash process p: its coroutines never run again (their memory is
 * leaked, as a killed process's would be gone).  Freeze it until
 * virtual time `until` (its timers fire late). */
void sim_crash(int p);
void sim_freeze(int p, int64_t until);
int sim_crashed(int p);

/* Scheduling points taken so far. */
uint64_t sim_steps(void);

/* Make sim_run give up (returning -2) once it has taken `steps`
 * scheduling points or virtual time reaches `until` (0: no limit): a
 * history that runs away is reported, not waited for. */
void sim_budget(uint64_t steps, int64_t until);

/* The planted bugs compiled in (SQLE_PLANTED, src/internal.h): up to cap
 * names, sorted, each once, into out; returns how many there are.  How
 * often this run's plant (sqle_plant) was reached. */
size_t sim_plants(const char **out, size_t cap);
uint64_t sim_plant_reached(void);

#endif
