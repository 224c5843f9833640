/*
 * stop_after_fork.c -- a test-only preload (LD_PRELOAD) that freezes the
 * process it is loaded into at one exact point: right after its first
 * fork() returns in the parent, the process stops itself with SIGSTOP,
 * the signal a debugger, an operator's `kill -STOP` or a frozen VM
 * amounts to.  test_guard uses it to stop sqlease between starting CMD
 * and starting CMD's guard, a window a signal from outside cannot hit on
 * purpose.  The preload takes itself out of the environment when it is
 * loaded, so that CMD and whatever it starts are not affected.
 *
 * Built without sanitizers (SConstruct), since it is loaded before them.
 */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

typedef pid_t (*fork_fn)(void);

static fork_fn real_fork;
static int stopped_once;

__attribute__((constructor)) static void preload_init(void)
{
    (void)unsetenv("LD_PRELOAD");
}

/* The next fork() in the search order (the C library's, or a
 * sanitizer's), with the stop after the first one.  A process that forks
 * from several threads at once is not what this is for. */
pid_t fork(void)
{
    pid_t pid;

    if (real_fork == NULL) {
        void *sym = dlsym(RTLD_NEXT, "fork");

        memcpy(&real_fork, &sym, sizeof real_fork);
        if (real_fork == NULL)
            abort();
    }
    pid = real_fork();
    if (pid > 0 && !stopped_once) {
        stopped_once = 1;
        (void)raise(SIGSTOP);
    }
    return pid;
}
