/*
 * platform.h -- the contract between libsqlease and the operating system.
 *
 * Everything the library needs from the OS, and nothing more, is declared
 * here and implemented once per OS, a file per concern:
 *
 *   src/platform/posix/   src/platform/win32/
 *     sync.c                mutexes, condition variables, atomics
 *     thread.c              threads
 *     clock.c               the monotonic clock, sleeping
 *     ident.c               host name, pid, random UUIDs, environment
 *     file.c                path checks and the current directory
 *
 * A third implementation, src/platform/sim/, runs the library on
 * coroutines under a seeded scheduler for the simulator (tests/sim/); it
 * keeps the POSIX types below as plain storage.
 *
 * No other library file includes an OS header beyond the C standard
 * library.  What the sqlease tool alone needs (child processes, signals,
 * the terminal, the wall clock, files it writes) is not here: it is the
 * tool's own OS layer, src/cli/os.h, built into the tool and never into
 * libsqlease.  A port to a new OS implements each group below:
 *
 *  - Mutexes are non-recursive.  Condition variables wait on the
 *    monotonic clock, so a wall-clock step never shortens or stretches a
 *    lease deadline.  Waits may wake spuriously; callers loop.
 *  - Threads start with a small stack (a process may run two per lease,
 *    thousands in all), may be joined or detached once, and have an id
 *    that tells the calling thread apart from every other live one.
 *  - Atomic counters are 64-bit and sequentially consistent on every
 *    architecture (statement counts read from any thread).
 *  - sqle_mono_ms() is milliseconds on a clock that never goes back,
 *    is shared by every process of the host (so two processes' readings
 *    compare) and counts the time the machine was suspended, as the
 *    database's clock, which decides every expiry, does: CLOCK_BOOTTIME
 *    on Linux (CLOCK_MONOTONIC stops during a suspend), CLOCK_MONOTONIC
 *    where there is none, QueryInterruptTime's count on Windows.  A
 *    timed wait whose own clock a suspend stops ends at least every 250
 *    ms as a spurious wake-up, so that its deadline is seen soon after a
 *    resume.
 *    sqle_sleep_ms() sleeps at least as long as asked, also when a
 *    signal interrupts it.
 *  - Host name, process id, 16 random bytes and the environment make the
 *    default owner id and find $SQLEASE_DSN.
 *  - Path checks name a missing embedded database file or directory.
 *  - Functions returning int give 0 on success, -1 on failure.
 */
#ifndef SQLEASE_PLATFORM_H
#define SQLEASE_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#ifdef _WIN32
/* Opaque storage big enough for SRWLOCK / CONDITION_VARIABLE / HANDLE
 * without including windows.h here. */
typedef struct { void *p; } sqle_mutex;
typedef struct { void *p; } sqle_cond;
typedef struct { void *handle; } sqle_thread;
#else
#include <pthread.h>
typedef struct { pthread_mutex_t m; } sqle_mutex;
typedef struct { pthread_cond_t c; } sqle_cond;
typedef struct { pthread_t t; } sqle_thread;
#endif

typedef struct { volatile uint64_t v; } sqle_atomic_u64;

/* ---- mutexes, condition variables, atomics (sync.c) --------------- */

int sqle_mutex_init(sqle_mutex *m);
void sqle_mutex_destroy(sqle_mutex *m);
void sqle_mutex_lock(sqle_mutex *m);
void sqle_mutex_unlock(sqle_mutex *m);

int sqle_cond_init(sqle_cond *c);
void sqle_cond_destroy(sqle_cond *c);
void sqle_cond_signal(sqle_cond *c);
void sqle_cond_broadcast(sqle_cond *c);
/* Wait until signalled or until the lease clock reaches
 * deadline_mono_ms (a value of sqle_mono_ms()).  deadline < 0 waits
 * without a bound.  Returns 0 if signalled (or spurious), 1 on timeout,
 * and then sqle_mono_ms() >= deadline_mono_ms holds. */
int sqle_cond_wait_until(sqle_cond *c, sqle_mutex *m, int64_t deadline_mono_ms);

uint64_t sqle_atomic_load(const sqle_atomic_u64 *a);
void sqle_atomic_add(sqle_atomic_u64 *a, uint64_t n);

/* ---- threads (thread.c) ------------------------------------------ */

/* Start fn(arg) on a new thread with a small stack. */
int sqle_thread_start(sqle_thread *t, void (*fn)(void *), void *arg);
void sqle_thread_join(sqle_thread *t);
/* Let a started thread finish on its own, never to be joined: its
 * resources are freed when it returns.  Any thread may call it, once. */
void sqle_thread_detach(sqle_thread *t);
/* An id for the calling thread, to detect re-entry from a callback. */
uint64_t sqle_thread_self(void);

/* ---- clocks (clock.c) --------------------------------------------- */

int64_t sqle_mono_ms(void);
void sqle_sleep_ms(int64_t ms);

/* ---- identity and environment (ident.c) -------------------------- */

/* Host name into buf (NUL-terminated, truncated to cap); "unknown" if it
 * cannot be read. */
void sqle_hostname(char *buf, size_t cap);
long sqle_pid(void);
/* 16 random bytes from a new random (version 4) UUID: libuuid on POSIX,
 * UuidCreate on Windows. */
int sqle_uuid_random(unsigned char out[16]);

/* Environment variable, or NULL. */
const char *sqle_getenv(const char *name);

/* ---- files (file.c) ---------------------------------------------- */

/* 1 if `path` names an existing file or directory, 0 if it does not (or
 * cannot be looked at). */
int sqle_path_exists(const char *path);
/* The current directory into buf (NUL-terminated); "" if it cannot be
 * read or does not fit. */
void sqle_cwd(char *buf, size_t cap);

#endif
