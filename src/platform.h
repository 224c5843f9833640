/*
 * platform.h -- the contract between sqlease and the operating system.
 *
 * Everything that differs between POSIX and Win32 is declared here and
 * implemented once per OS: platform_posix.c and platform_win32.c.  No
 * other library file includes an OS header beyond the C standard
 * library.  The contract, per group:
 *
 *  - Mutexes are non-recursive.  Condition variables wait on the
 *    monotonic clock, so a wall-clock step never shortens or stretches a
 *    lease deadline.  Waits may wake spuriously; callers loop.
 *  - sqlease_mono_ms() is milliseconds on a clock that never goes back
 *    and is shared by every process of the host (CLOCK_MONOTONIC,
 *    QueryPerformanceCounter), so two processes' readings compare.
 *  - sqlease_wall_ms() is the host's wall clock in epoch milliseconds,
 *    used only to report skew against the database, never for a lease.
 *  - Functions returning int give 0 on success, -1 on failure.
 */
#ifndef SQLEASE_PLATFORM_H
#define SQLEASE_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#ifdef _WIN32
/* Opaque storage big enough for SRWLOCK / CONDITION_VARIABLE / HANDLE
 * without including windows.h here. */
typedef struct { void *p; } sqlease_mutex;
typedef struct { void *p; } sqlease_cond;
typedef struct { void *handle; } sqlease_thread;
#else
#include <pthread.h>
typedef struct { pthread_mutex_t m; } sqlease_mutex;
typedef struct { pthread_cond_t c; } sqlease_cond;
typedef struct { pthread_t t; } sqlease_thread;
#endif

typedef struct { volatile uint64_t v; } sqlease_atomic_u64;

int sqlease_mutex_init(sqlease_mutex *m);
void sqlease_mutex_destroy(sqlease_mutex *m);
void sqlease_mutex_lock(sqlease_mutex *m);
void sqlease_mutex_unlock(sqlease_mutex *m);

int sqlease_cond_init(sqlease_cond *c);
void sqlease_cond_destroy(sqlease_cond *c);
void sqlease_cond_signal(sqlease_cond *c);
void sqlease_cond_broadcast(sqlease_cond *c);
/* Wait until signalled or until the monotonic clock reaches
 * deadline_mono_ms (a value of sqlease_mono_ms()).  deadline < 0 waits
 * without a bound.  Returns 0 if signalled (or spurious), 1 on timeout. */
int sqlease_cond_wait_until(sqlease_cond *c, sqlease_mutex *m, int64_t deadline_mono_ms);

/* Start fn(arg) on a new thread with a small stack. */
int sqlease_thread_start(sqlease_thread *t, void (*fn)(void *), void *arg);
void sqlease_thread_join(sqlease_thread *t);
/* Let a started thread finish on its own, never to be joined: its
 * resources are freed when it returns.  Any thread may call it, once. */
void sqlease_thread_detach(sqlease_thread *t);
/* An id for the calling thread, to detect re-entry from a callback. */
uint64_t sqlease_thread_self(void);

uint64_t sqlease_atomic_load(const sqlease_atomic_u64 *a);
void sqlease_atomic_add(sqlease_atomic_u64 *a, uint64_t n);

int64_t sqlease_mono_ms(void);
int64_t sqlease_wall_ms(void);
void sqlease_sleep_ms(int64_t ms);

/* Host name into buf (NUL-terminated, truncated to cap); "unknown" if it
 * cannot be read. */
void sqlease_hostname(char *buf, size_t cap);
long sqlease_pid(void);
/* 16 random bytes from a new random (version 4) UUID: libuuid on POSIX,
 * UuidCreate on Windows. */
int sqlease_uuid_random(unsigned char out[16]);

/* Environment variable, or NULL. */
const char *sqlease_getenv(const char *name);

/* Replace the file `to` by the file `from` (same directory) in one step,
 * so that a reader sees the old file or the new one, never a mix and
 * never none: rename() on POSIX, MoveFileEx with REPLACE_EXISTING on
 * Windows.  Returns 0/-1. */
int sqlease_file_replace(const char *from, const char *to);
/* 1 if `path` names an existing file or directory, 0 if it does not (or
 * cannot be looked at). */
int sqlease_path_exists(const char *path);
/* The current directory into buf (NUL-terminated); "" if it cannot be
 * read or does not fit. */
void sqlease_cwd(char *buf, size_t cap);

/* ---- child processes (used by the CLI) ---------------------------- */

typedef struct sqlease_child {
#ifdef _WIN32
    void *process;  /* HANDLE */
    void *job;      /* HANDLE of a kill-on-close job object */
#else
    long pid;       /* also the child's process group id */
    int tty;        /* SQLEASE_CHILD_FOREGROUND: the terminal's fd (0), else -1 */
    int stop_sig;   /* a stop seen by a wait and not yet reported, or 0 */
#endif
    int running;
} sqlease_child;

/* Start argv[0] (searched on PATH) with argv, the current environment plus
 * the `nenv` "KEY=VALUE" strings in `env` (a "KEY" alone, without '=',
 * removes KEY, so that a variable this process inherited does not reach
 * the child).  POSIX: the child leads a new
 * process group and gets SIGKILL if this process dies (PR_SET_PDEATHSIG
 * on Linux).  Windows: the child runs in a job object that is killed
 * when this process's handle to it closes.  Returns 0, or -1 with a
 * message in errbuf ("cannot run 'cmd': No such file or directory").
 * Spawn from the process's main thread: PR_SET_PDEATHSIG fires when the
 * *thread* that forked exits, not the process, so a child spawned from a
 * worker thread would be killed when that thread ends.  (It is also
 * cleared when the child execs a set-uid/set-gid program.)  The child
 * starts with default signal dispositions and an empty signal mask, and
 * with no descriptor of ours but 0, 1 and 2 (POSIX: every other one is
 * closed at exec, whatever its flags).  Being in its own process group it
 * is not the terminal's foreground job unless spawned with
 * SQLEASE_CHILD_FOREGROUND: it does not get the terminal's Ctrl-C, and
 * reading the terminal stops it. */
int sqlease_child_spawn(sqlease_child *c, char *const argv[], const char *const *env,
                        size_t nenv, char *errbuf, size_t errcap);
/* Flags for sqlease_child_spawn_ex. */
enum {
    /* POSIX: if standard input is the session's controlling terminal
     * and its foreground process group is the caller's, make the child's
     * new group the terminal's foreground (done by both parent and child
     * before exec, SIGTTOU blocked), so that it reads the terminal and
     * gets its Ctrl-C and Ctrl-Z; sqlease_child_close (or
     * sqlease_child_terminal) gives it back.  Stops of such a child are
     * reported (sqlease_child_stopped below).  Ignored without such a
     * terminal, and on Windows (the child shares the console). */
    SQLEASE_CHILD_FOREGROUND = 1
};
/* sqlease_child_spawn with flags. */
int sqlease_child_spawn_ex(sqlease_child *c, char *const argv[], const char *const *env,
                           size_t nenv, int flags, char *errbuf, size_t errcap);
/* Wait up to timeout_ms (-1: forever) for the child to exit.  Returns 1
 * and sets *exit_code (128+signal for a signal) if it exited, 0 if it is
 * still running, -1 on error (including a child already waited for).  A
 * signal routed by sqlease_signal_setup() may end the wait early with 0,
 * so that the caller can look at sqlease_signal_received(); callers that
 * must react to signals still wait in bounded slices, since the signal
 * may be delivered to another thread. */
int sqlease_child_wait(sqlease_child *c, int64_t timeout_ms, int *exit_code);
/* Job control for a child started with SQLEASE_CHILD_FOREGROUND while
 * standard input was the session's controlling terminal (POSIX; on
 * Windows, and for other children, nothing is ever reported stopped).
 *
 * sqlease_child_stopped: 1 if the child has been stopped since the last
 * call (*sig gets the signal: SIGTSTP for Ctrl-Z, SIGTTIN/SIGTTOU for
 * terminal access from the background, SIGSTOP), else 0.  Stops are
 * seen by sqlease_child_wait, which goes on waiting for an exit.
 *
 * sqlease_child_terminal: to_child 1 makes the child's group the
 * terminal's foreground, but only while the caller's group is (after a
 * shell's `fg`; not after `bg`); to_child 0 gives the foreground back to
 * the caller's group if the child's group has it.  Returns 1 if the
 * child's group has the terminal afterwards.
 *
 * sqlease_job_suspend: stop this whole process (every thread) and the
 * rest of its process group -- the job, as the shell sees it -- the way
 * the terminal's Ctrl-Z would have if the child had not had the terminal,
 * and return once the job is continued (at once if the kernel discards
 * the stop, as it does for an orphaned group).  Take the terminal back
 * first.
 *
 * sqlease_child_resume: after that, continue the child's group (SIGCONT),
 * giving it the terminal if our group is the foreground again.  A child
 * stopped for terminal access (sig SIGTTIN/SIGTTOU) would stop again at
 * once without the terminal: it is left stopped and 0 returned; call
 * again later (after the shell's `fg`).  Returns 1 once continued.
 *
 * While a child started this way has the terminal, SIGTTOU is ignored in
 * this process, so that its own messages do not stop it when the
 * terminal's `tostop` is set. */
int sqlease_child_stopped(sqlease_child *c, int *sig);
int sqlease_child_terminal(sqlease_child *c, int to_child);
void sqlease_job_suspend(int sig);
int sqlease_child_resume(sqlease_child *c, int sig);
/* Continue the child's whole process group (SIGCONT; Windows: nothing). */
void sqlease_child_continue(sqlease_child *c);
/* Ask the child's whole process group to stop (SIGTERM;
 * Windows: CTRL_BREAK to the group; the caller escalates to kill).  Both
 * this and kill keep reaching members the leader left behind after it
 * was waited for, until sqlease_child_close(). */
void sqlease_child_terminate(sqlease_child *c);
/* Kill the whole process group (SIGKILL; Windows: TerminateJobObject,
 * exit code 137). */
void sqlease_child_kill(sqlease_child *c);
/* Release handles of a child that has been waited for, giving the
 * terminal back if the child's group has it.  Windows: closing the job
 * kills whatever is still in it. */
void sqlease_child_close(sqlease_child *c);
/* The child's process id (for messages, and sqlease_process_signal), or
 * 0 once it has been closed. */
long sqlease_child_pid(const sqlease_child *c);
/* 1 while any process of the child's group (POSIX: its process group,
 * zombies included; Windows: its job object) is still there, also after
 * the leader has been waited for, until sqlease_child_close. */
int sqlease_child_group_alive(const sqlease_child *c);

/* ---- signals (used by the CLI) ------------------------------------ */

/* Undo what a parent may leave to a process across exec: signals it set
 * to be ignored are put back to their default action, and every signal
 * is unblocked in the calling thread (POSIX).  An ignored SIGCHLD makes
 * the kernel discard a child's exit status; a blocked SIGTERM never
 * reaches its handler.  Handlers are not inherited across exec, so any
 * that is installed already belongs to this process (a sanitizer's) and
 * is kept.  Call first thing in main, before any thread starts, so that
 * every thread inherits the clean mask.  Windows: the C runtime's
 * handlers go back to their defaults and Ctrl-C handling is re-enabled
 * (a parent that created us in a new process group disabled it). */
void sqlease_signal_defaults(void);
/* POSIX: open /dev/null on whichever of descriptors 0, 1 and 2 is closed,
 * so that nothing opened later (a database socket) takes that number and
 * is handed to a child as its standard input or output.  Call first thing
 * in main.  Windows: nothing. */
void sqlease_stdio_ensure(void);
/* Route SIGTERM/SIGINT/SIGHUP (Windows: console control events: Ctrl-C
 * as SIGINT, Ctrl-Break/close/logoff/shutdown as SIGTERM) to a flag that
 * sqlease_signal_received() reads, and ignore SIGPIPE.  POSIX handlers
 * are installed without SA_RESTART, so blocking calls return EINTR.
 * Returns 0/-1. */
int sqlease_signal_setup(void);
/* The signal number last received (SIGTERM, SIGINT, SIGHUP), or 0. */
int sqlease_signal_received(void);
/* Send a signal to a pid (used by the demo): 9 kill, 15 terminate. */
int sqlease_process_signal(long pid, int sig);

#endif
