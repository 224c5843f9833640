/*
 * signal.c -- signals on Win32 (see os.h): console control events stand
 * in for them.  Ctrl-C is SIGINT; Ctrl-Break, closing the console,
 * logoff and shutdown are SIGTERM; a "signal" to another process stops
 * it at once.
 */
#include "os_win32.h"

#include <signal.h>

static volatile LONG g_signal_received;
/* Signals so far: a wait that began after the last one is not ended by
 * the event that one left set (POSIX's EINTR ends only a wait that is
 * under way when the signal comes). */
static volatile LONG g_signal_count;
/* Auto-reset event set by the control handler so that an unbounded child
 * wait can end when a signal comes (the handler runs on its own thread
 * and interrupts nothing). */
static HANDLE g_signal_event;

/* Runs on a thread the system creates.  For close, logoff and shutdown
 * the system ends the process as soon as the handler returns, so the
 * handler blocks instead: the main thread gets until the system's own
 * timeout (about 5 s) to stop the command and release the lease, and
 * its exit ends this thread too. */
static BOOL WINAPI ctrl_handler(DWORD type)
{
    LONG sig;

    switch (type) {
    case CTRL_C_EVENT:
        sig = SIGINT;
        break;
    case CTRL_BREAK_EVENT:
    case CTRL_CLOSE_EVENT:
    case CTRL_LOGOFF_EVENT:
    case CTRL_SHUTDOWN_EVENT:
        sig = SIGTERM;
        break;
    default:
        return FALSE;
    }
    InterlockedExchange(&g_signal_received, sig);
    InterlockedIncrement(&g_signal_count);
    if (g_signal_event != NULL)
        SetEvent(g_signal_event);
    if (type == CTRL_CLOSE_EVENT || type == CTRL_LOGOFF_EVENT || type == CTRL_SHUTDOWN_EVENT)
        Sleep(INFINITE);
    return TRUE;
}

/* The C runtime's handlers are per process and start at their defaults;
 * what a parent can leave us is the console's "ignore Ctrl-C" flag (set
 * for a process created in a new process group), which would keep
 * Ctrl-C from reaching sqle_signal_setup's handler. */
void sqle_signal_defaults(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGABRT, SIGFPE, SIGILL, SIGSEGV, SIGBREAK};
    size_t i;

    for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        (void)signal(sigs[i], SIG_DFL);
    (void)SetConsoleCtrlHandler(NULL, FALSE);
}

/* No SIGPIPE on Windows: a write to a closed pipe fails, and that is
 * reported already. */
void cli_os_ignore_sigpipe(void)
{
}

int sqle_signal_setup(void)
{
    if (g_signal_event == NULL) {
        g_signal_event = CreateEventA(NULL, FALSE, FALSE, NULL);
        if (g_signal_event == NULL)
            return -1;
    }
    return SetConsoleCtrlHandler(ctrl_handler, TRUE) ? 0 : -1;
}

int sqle_signal_received(void)
{
    return (int)g_signal_received;
}

int cli_os_signal_take(void)
{
    return (int)InterlockedExchange(&g_signal_received, 0);
}

/* Windows has no signals to send: both stop the process at once, with
 * the exit code a POSIX shell would show for that signal. */
int sqle_process_signal(long pid, int sig)
{
    HANDLE h;
    BOOL ok;

    if (pid <= 0 || (sig != 9 && sig != 15))
        return -1;
    h = OpenProcess(PROCESS_TERMINATE, FALSE, (DWORD)pid);
    if (h == NULL)
        return -1;
    ok = TerminateProcess(h, (UINT)(128 + sig));
    CloseHandle(h);
    return ok ? 0 : -1;
}

HANDLE cli_os_signal_event(void)
{
    return g_signal_event;
}

LONG cli_os_signal_count(void)
{
    return InterlockedCompareExchange(&g_signal_count, 0, 0);
}

/* No signal asks a Windows process to reload. */
int cli_os_sighup(void)
{
    return -1;
}

/* No SIGUSR1/SIGUSR2: a drain is asked for by `sqlease transfer`. */
int cli_os_drain_setup(void)
{
    return 0;
}

int cli_os_drain_take(void)
{
    return 0;
}
