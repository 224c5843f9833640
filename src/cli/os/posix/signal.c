/*
 * signal.c -- signals on POSIX (see os.h): undoing what a parent left
 * ignored or blocked, routing SIGTERM/SIGINT/SIGHUP to a flag the main
 * loop reads (and SIGUSR1/SIGUSR2, supervise's drain, to another), and
 * sending a signal to a process.
 */
#include "os_posix.h"

#include <signal.h>
#include <string.h>
#include <sys/types.h>

/* Only an ignored signal survives exec, so that is all a parent can have
 * left us; a handler present now was installed by this process (a
 * sanitizer's runtime, before main) and stays. */
void sqle_signal_defaults(void)
{
    struct sigaction old, dfl;
    sigset_t none;
    int sig;

    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (sig = 1; sig < NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP)
            continue;
        /* Fails for the C library's own real-time signals: fine. */
        if (sigaction(sig, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
            old.sa_handler == SIG_IGN)
            (void)sigaction(sig, &dfl, NULL);
    }
    sigemptyset(&none);
    (void)pthread_sigmask(SIG_SETMASK, &none, NULL);
}

/* SIG_IGN survives exec, but the spawn puts every signal back to its
 * default in the child before its exec (process.c), so CMD does not
 * inherit this. */
void cli_os_ignore_sigpipe(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    (void)sigaction(SIGPIPE, &sa, NULL);
}

/* The handler runs on whichever thread the kernel picks (a database
 * worker, the heartbeat), not only on the thread that reads the flag: a
 * volatile sig_atomic_t is only promised to the handler's own thread, so
 * the flag is an atomic (lock-free for int, so safe in a handler). */
static int g_signal_received;

static void on_signal(int sig)
{
    __atomic_store_n(&g_signal_received, sig, __ATOMIC_SEQ_CST);
}

/* No SA_RESTART: a blocking call returns EINTR, so a loop waiting on it
 * gets the chance to look at the flag. */
int sqle_signal_setup(void)
{
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
    struct sigaction sa;
    size_t i;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        if (sigaction(sigs[i], &sa, NULL) != 0)
            return -1;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGPIPE, &sa, NULL) != 0)
        return -1;
    return 0;
}

int sqle_signal_received(void)
{
    return __atomic_load_n(&g_signal_received, __ATOMIC_SEQ_CST);
}

int cli_os_signal_take(void)
{
    return __atomic_exchange_n(&g_signal_received, 0, __ATOMIC_SEQ_CST);
}

/* The drain signals (supervise --handoff), apart from the ones that end
 * the process: 1 SIGUSR1, 2 SIGUSR2. */
static int g_drain;

static void on_drain(int sig)
{
    __atomic_store_n(&g_drain, sig == SIGUSR1 ? 1 : 2, __ATOMIC_SEQ_CST);
}

int cli_os_drain_setup(void)
{
    static const int sigs[] = {SIGUSR1, SIGUSR2};
    struct sigaction sa;
    size_t i;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_drain;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        if (sigaction(sigs[i], &sa, NULL) != 0)
            return -1;
    return 0;
}

int cli_os_drain_take(void)
{
    return __atomic_exchange_n(&g_drain, 0, __ATOMIC_SEQ_CST);
}

int sqle_process_signal(long pid, int sig)
{
    if (pid <= 0)
        return -1;
    return kill((pid_t)pid, sig) == 0 ? 0 : -1;
}

int cli_os_sighup(void)
{
    return SIGHUP;
}
