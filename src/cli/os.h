/*
 * os.h -- the operating-system services of the sqlease tool.
 *
 * The library's platform layer (src/platform.h: threads, locks, the
 * monotonic clock, identity) is all libsqlease needs from the OS.  The
 * tool needs more: it runs CMD as a child in a process group of its own,
 * routes signals, hands the terminal over, forks a guard process, reads
 * the process table, writes files and prints the wall clock.  That is
 * declared here and implemented once per OS, a file per concern, built
 * into the tool (and the test programs) and never into libsqlease:
 *
 *   src/cli/os/posix/   src/cli/os/win32/
 *     process.c           child processes: spawn, wait, stop, groups
 *     term.c              the terminal and job control
 *     signal.c            signal routing, what a parent left behind
 *     guard.c             the guard process (POSIX; none on Windows)
 *     proc.c              the process table (/proc/PID/stat)
 *     file.c              files and directories the tool writes
 *     stdio.c             standard descriptors; stderr as the journal
 *     notify.c            the service manager's notification socket
 *     net.c               socket addresses (--http's ADDR)
 *     clock.c             the wall clock
 *   src/cli/os/procstat.c     the /proc/PID/stat parser (text only: every OS)
 *   src/cli/os/stamp.c        the log's time stamp (text only: every OS)
 *
 * A port to a new OS implements every group below; where the OS has no
 * such thing (job control, a guard, a process table on Windows) the
 * group says what the calls answer instead.  Functions moved here from
 * the library's platform layer keep their sqlease_ names; cli_sys_ are
 * the demo's helpers; cli_os_ the rest.  Functions returning int give 0
 * on success, -1 on failure, unless they say otherwise.
 */
#ifndef SQLEASE_CLI_OS_H
#define SQLEASE_CLI_OS_H

#include <stddef.h>
#include <stdint.h>

#include "platform.h"

/* ---- the wall clock (clock.c) ------------------------------------- */

/* The host's wall clock in epoch milliseconds, used only to report skew
 * against the database and to stamp log lines, never for a lease. */
int64_t sqle_wall_ms(void);

/* ---- the log's time stamp (stamp.c: every OS) --------------------- */

/* wall_ms as RFC 3339 UTC with milliseconds (2026-12-01T05:03:07.123Z),
 * NUL-terminated in buf (cut short if cap is too small).  Arithmetic
 * only: async-signal-safe, for the guard process.  Returns the length. */
size_t cli_os_format_stamp(int64_t wall_ms, char *buf, size_t cap);

/* ---- files and directories (file.c) ------------------------------- */

/* Replace the file `to` by the file `from` (same directory) in one step,
 * so that a reader sees the old file or the new one, never a mix and
 * never none: rename() on POSIX, MoveFileEx with REPLACE_EXISTING on
 * Windows.  Returns 0/-1. */
int sqle_file_replace(const char *from, const char *to);

/* For the demo (on Windows each of these fails, and the demo says it is
 * not supported there): */

/* Create a fresh private directory under $TMPDIR (else /tmp) named
 * prefix-XXXXXX.  Returns 0 with its path in buf, or -1. */
int cli_sys_make_temp_dir(const char *prefix, char *buf, size_t cap);

/* Remove every file in dir, then dir itself.  Returns 0 or -1. */
int cli_sys_remove_dir(const char *dir);

/* Append `line` to path (created if missing) with one write() on an
 * O_APPEND descriptor, so lines written by several processes never
 * interleave.  Returns 0 or -1. */
int cli_sys_append_line(const char *path, const char *line);

/* The whole of a small file, malloc'd and NUL-terminated; "" (still
 * malloc'd) if it does not exist; NULL on another error. */
char *cli_sys_read_file(const char *path);

/* The connection string kept in a private file (--dsn-file): the file's
 * first line, without its line end, in buf.  It may hold a password, and
 * its Driver= names a library this process loads, so on POSIX the file
 * must be a regular file owned by the effective user or root that neither
 * its group nor others may read, write or execute (checked on the opened
 * descriptor, so that the file read is the file checked); a symbolic link
 * is followed only if it is owned by the effective user or root.  On
 * Windows neither the owner nor the ACL is checked.  It must hold one
 * non-empty line (blank lines may follow).  Returns 0, or -1 with what is
 * wrong and what to run in err ("group can read it (mode 0640); run:
 * chmod 600 /etc/dsn"); the file's contents are never in err. */
int cli_os_read_private_file(const char *path, char *buf, size_t cap, char *err,
                             size_t errcap);

/* The path of the running executable (/proc/self/exe on Linux, else
 * argv0).  Returns 0 or -1. */
int cli_sys_self_exe(const char *argv0, char *buf, size_t cap);

/* ---- standard descriptors (stdio.c) ------------------------------- */

/* POSIX: open /dev/null on whichever of descriptors 0, 1 and 2 is closed,
 * so that nothing opened later (a database socket) takes that number and
 * is handed to a child as its standard input or output.  Call first thing
 * in main.  Windows: nothing. */
void sqle_stdio_ensure(void);
/* 1 if stderr is connected to the systemd journal: $JOURNAL_STREAM names
 * the device and inode ("DEV:INO", decimal) of the stream systemd gave
 * the service, and stderr is that very file (systemd's documented test:
 * a variable inherited by a process whose stderr was redirected no longer
 * matches).  0 otherwise, and always on Windows. */
int cli_sys_stderr_is_journal(void);
/* Write one line (buf, n bytes, its newline included) to stderr without
 * ever blocking: all of it if it fits now, else none of it, counted as
 * dropped.  For what writes on a path that must not wait (stopping CMD
 * at a deadline): stderr may be a pipe nobody drains (a stalled log
 * collector, CMD's own chatter filling it).  The descriptor's own flags
 * are left alone (it is shared with CMD).  Async-signal-safe on POSIX
 * (the guard process uses it).  Returns 0 written, -1 dropped.  Windows:
 * written as it is. */
int cli_os_stderr_write(const char *buf, size_t n);
/* Lines cli_os_stderr_write dropped since the last call (and resets the
 * count). */
unsigned long cli_os_stderr_dropped(void);
/* 1 if nobody can read standard output any more: it is a pipe or socket
 * whose reader has closed its end (poll's POLLERR/POLLHUP), so that a
 * command that prints only now and then (status --watch) ends when its
 * reader does rather than at its next line.  0 otherwise (a file, a
 * terminal, a live reader), and always on Windows. */
int cli_os_stdout_gone(void);

/* ---- signals (signal.c) ------------------------------------------- */

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
void sqle_signal_defaults(void);
/* Ignore SIGPIPE for the whole process, so that a write to a pipe or
 * socket whose reader is gone (`sqlease list | head -0`) fails with
 * EPIPE, which the tool reports (exit 74), instead of killing it without
 * a word.  CMD still starts with every signal at its default (the spawn
 * resets them).  Call in main right after sqle_signal_defaults.  Windows:
 * nothing (there is no SIGPIPE; the write fails). */
void cli_os_ignore_sigpipe(void);
/* Route SIGTERM/SIGINT/SIGHUP (Windows: console control events: Ctrl-C
 * as SIGINT, Ctrl-Break/close/logoff/shutdown as SIGTERM) to a flag that
 * sqle_signal_received() reads, and ignore SIGPIPE.  POSIX handlers
 * are installed without SA_RESTART, so blocking calls return EINTR.
 * Returns 0/-1. */
int sqle_signal_setup(void);
/* The signal number last received (SIGTERM, SIGINT, SIGHUP), or 0. */
int sqle_signal_received(void);
/* The same, and forget it (0 until the next one arrives): for a loop
 * that acts on SIGHUP (reload) and goes on.  A signal that arrives in
 * between is the one returned next. */
int cli_os_signal_take(void);
/* The number of the signal that asks a daemon to read its configuration
 * again (SIGHUP), or -1 where there is none (Windows). */
int cli_os_sighup(void);
/* supervise --handoff's drain (POSIX): route SIGUSR1 (drain: this host
 * goes to the lowest priority and hands the lease over) and SIGUSR2 (back
 * to its own priority) to a flag of their own, apart from the signals
 * that end the process.  Returns 0/-1.  Windows: nothing to route, 0. */
int cli_os_drain_setup(void);
/* Which of them came last since the previous call: 1 SIGUSR1, 2 SIGUSR2,
 * 0 none; and forget it. */
int cli_os_drain_take(void);
/* Send a signal to a pid (used by the demo): 9 kill, 15 terminate. */
int sqle_process_signal(long pid, int sig);

/* ---- the process table (proc.c) ----------------------------------- */

/* A process as the table shows it (Linux: the first fields of
 * /proc/PID/stat). */
typedef struct cli_os_proc {
    long pid;
    char comm[64];  /* its command name, without the parentheses (Linux
                       keeps 15 bytes); may hold spaces and ')' */
    char state;     /* 'R', 'S', 'D', 'T', ...; 'Z' zombie, 'X' dead */
    long ppid;      /* parent */
    long pgrp;      /* process group */
    long session;   /* session */
} cli_os_proc;

/* Parse the text of one /proc/PID/stat ("pid (comm) state ppid pgrp
 * session ..."; comm is found by the last ')', since a command name may
 * contain both spaces and parentheses).  Returns 0, or -1 if the text
 * does not have that form.  The one parser of that file: everything that
 * looks at the table (the tool, the tests, the chaos harness) goes
 * through it. */
int cli_os_proc_parse(const char *text, cli_os_proc *p);

/* Read the entry of process `pid`.  Returns 0; -1 if there is no such
 * process (the table is readable, the entry is not); -2 if the process
 * table cannot be read at all (no /proc; Windows). */
int cli_os_proc_stat(long pid, cli_os_proc *p);

/* Call fn once per process in the table, until it returns non-zero (which
 * is then returned).  Returns 0 after the last one, or -1 if the table
 * cannot be read.  Processes that end during the scan may be missed. */
int cli_os_proc_scan(int (*fn)(void *userdata, const cli_os_proc *p), void *userdata);

/* The live processes (neither zombie nor dead) whose process group is
 * pgid; -1 if the table cannot be read. */
int cli_os_group_members(long pgid);

/* 1 if a process with this pid exists and is not a zombie, else 0 (where
 * no table can be read, a process that kill(pid, 0) finds counts as
 * alive; on Windows always 0). */
int cli_sys_pid_alive(long pid);

/* ---- child processes (process.c) ---------------------------------- */

typedef struct sqle_child {
#ifdef _WIN32
    void *process;  /* HANDLE */
    void *job;      /* HANDLE of a kill-on-close job object */
#else
    long pid;       /* also the child's process group id */
    int tty;        /* SQLEASE_CHILD_FOREGROUND: the terminal's fd (0), else -1 */
    int stop_sig;   /* a stop seen by a wait and not yet reported, or 0 */
#endif
    int running;
} sqle_child;

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
int sqle_child_spawn(sqle_child *c, char *const argv[], const char *const *env,
                     size_t nenv, char *errbuf, size_t errcap);
/* Flags for sqle_child_spawn_ex. */
enum {
    /* POSIX: if standard input is the session's controlling terminal
     * and its foreground process group is the caller's, make the child's
     * new group the terminal's foreground (done by both parent and child
     * before exec, SIGTTOU blocked), so that it reads the terminal and
     * gets its Ctrl-C and Ctrl-Z; sqle_child_close (or
     * sqle_child_terminal) gives it back.  Stops of such a child are
     * reported (sqle_child_stopped below).  Ignored without such a
     * terminal, and on Windows (the child shares the console). */
    SQLEASE_CHILD_FOREGROUND = 1
};
/* sqle_child_spawn with flags. */
int sqle_child_spawn_ex(sqle_child *c, char *const argv[], const char *const *env,
                        size_t nenv, int flags, char *errbuf, size_t errcap);
/* Called by sqle_child_spawn_gated in the parent once the child exists
 * (pid; POSIX: it leads its process group already) and before it runs
 * anything of its own.  Returns 0 to let it run, anything else to end it
 * unrun. */
typedef int (*sqle_child_gate_fn)(void *userdata, long pid);
/* sqle_child_spawn_ex with the child held at a gate until gate(gate_ud,
 * pid) has returned, so that whatever must watch it (CMD's guard) exists
 * before it runs.  POSIX: it waits between fork and exec on a pipe, and
 * ends unrun at the pipe's end-of-file (this process held it back, or
 * died); Windows: it is created suspended and resumed after.  gate NULL:
 * sqle_child_spawn_ex.  Returns 0 (running), 1 (held back by gate: it
 * ended unrun and was waited for; c is not running), or -1 with a
 * message in errbuf. */
int sqle_child_spawn_gated(sqle_child *c, char *const argv[], const char *const *env,
                           size_t nenv, int flags, sqle_child_gate_fn gate, void *gate_ud,
                           char *errbuf, size_t errcap);
/* The argv that runs a command line through the system's shell (POSIX:
 * /bin/sh -c LINE; Windows: cmd.exe /c LINE), in argv[0..3], NULL-
 * terminated, pointing at `line` and static strings. */
void cli_os_shell_argv(const char *line, char *argv[4]);
/* Wait up to timeout_ms (-1: forever) for the child to exit.  Returns 1
 * and sets *exit_code (128+signal for a signal) if it exited, 0 if it is
 * still running, -1 on error (including a child already waited for).  A
 * signal routed by sqle_signal_setup() may end the wait early with 0,
 * so that the caller can look at sqle_signal_received(); callers that
 * must react to signals still wait in bounded slices, since the signal
 * may be delivered to another thread. */
int sqle_child_wait(sqle_child *c, int64_t timeout_ms, int *exit_code);
/* Continue the child's whole process group (SIGCONT; Windows: nothing). */
void sqle_child_continue(sqle_child *c);
/* Ask the child's whole process group to stop (SIGTERM;
 * Windows: CTRL_BREAK to the group; the caller escalates to kill).  Both
 * this and kill keep reaching members the leader left behind after it
 * was waited for, until sqle_child_close(). */
void sqle_child_terminate(sqle_child *c);
/* Kill the whole process group (SIGKILL; Windows: TerminateJobObject,
 * exit code 137). */
void sqle_child_kill(sqle_child *c);
/* Release handles of a child that has been waited for, giving the
 * terminal back if the child's group has it.  Windows: closing the job
 * kills whatever is still in it. */
void sqle_child_close(sqle_child *c);
/* The child's process id (for messages, and sqle_process_signal), or
 * 0 once it has been closed. */
long sqle_child_pid(const sqle_child *c);
/* 1 while any process of the child's group (POSIX: its process group,
 * zombies included; Windows: its job object) is still there, also after
 * the leader has been waited for, until sqle_child_close. */
int sqle_child_group_alive(const sqle_child *c);

/* Remove `name` from this process's environment (for variables meant for
 * sqlease alone, which CMD must not inherit).  Returns 0/-1. */
int cli_os_unsetenv(const char *name);

/* ---- the terminal and job control (term.c) ----------------------- */

/* Job control for a child started with SQLEASE_CHILD_FOREGROUND while
 * standard input was the session's controlling terminal (POSIX; on
 * Windows, and for other children, nothing is ever reported stopped).
 *
 * sqle_child_stopped: 1 if the child has been stopped since the last
 * call (*sig gets the signal: SIGTSTP for Ctrl-Z, SIGTTIN/SIGTTOU for
 * terminal access from the background, SIGSTOP), else 0.  Stops are
 * seen by sqle_child_wait, which goes on waiting for an exit.
 *
 * sqle_child_terminal: to_child 1 makes the child's group the
 * terminal's foreground, but only while the caller's group is (after a
 * shell's `fg`; not after `bg`); to_child 0 gives the foreground back to
 * the caller's group if the child's group has it.  Returns 1 if the
 * child's group has the terminal afterwards.
 *
 * sqle_job_suspend: stop this whole process (every thread) and the
 * rest of its process group -- the job, as the shell sees it -- the way
 * the terminal's Ctrl-Z would have if the child had not had the terminal,
 * and return once the job is continued (at once if the kernel discards
 * the stop, as it does for an orphaned group).  Take the terminal back
 * first.
 *
 * sqle_child_resume: after that, continue the child's group (SIGCONT),
 * giving it the terminal if our group is the foreground again.  A child
 * stopped for terminal access (sig SIGTTIN/SIGTTOU) would stop again at
 * once without the terminal: it is left stopped and 0 returned; call
 * again later (after the shell's `fg`).  Returns 1 once continued.
 *
 * While a child started this way has the terminal, SIGTTOU is ignored in
 * this process, so that its own messages do not stop it when the
 * terminal's `tostop` is set. */
int sqle_child_stopped(sqle_child *c, int *sig);
int sqle_child_terminal(sqle_child *c, int to_child);
void sqle_job_suspend(int sig);
int sqle_child_resume(sqle_child *c, int sig);

/* ---- the guard process (guard.c) ---------------------------------- */

/* See src/cli/guard.h for what the guard is for; this is its OS half.
 * POSIX: a process forked (not exec'd) into a process group of its own,
 * with two pipes: sqlease writes deadlines into one, the guard writes a
 * byte into the other each time it stops CMD's group at a deadline.
 * Windows has none: CMD's job object ties it to sqlease instead. */

/* A deadline that never comes. */
#define CLI_OS_GUARD_NEVER INT64_MAX

typedef struct cli_os_guard {
    long pid;       /* the guard process, 0 when there is none */
    int fd;         /* write end of its pipe, -1 when none */
    int report_fd;  /* read end of its report pipe, -1 when none */
    int broken;     /* a write failed: the guard is gone */
} cli_os_guard;

/* A guard that is not running (safe to pass to every call below). */
void cli_os_guard_init(cli_os_guard *g);

/* Fork a guard for the process group `pgid`: SIGTERM (and SIGCONT) to
 * the group at term_at, SIGKILL at kill_at (sqle_mono_ms() values),
 * unless told otherwise; after a SIGTERM, SIGKILL at most grace_ms later;
 * when the pipe reaches end-of-file (sqlease is gone), SIGKILL at once.
 * The guard's own lines on stderr have the form of sqlease's log lines:
 * a time stamp first, or with `journal` (stderr is the systemd journal)
 * a priority prefix instead.
 * Call from the main thread.  Returns 0 (started); 1 when this OS has no
 * guard (nothing started, nothing to report); -1 when it could not be
 * started, with why ("pipe: ...", "fork: ...", or "" for a pgid that is
 * not one). */
int cli_os_guard_start(cli_os_guard *g, long pgid, int64_t term_at, int64_t kill_at,
                       int64_t grace_ms, int journal, char *why, size_t cap);

/* Tell the guard new times (term_at CLI_OS_GUARD_NEVER: no SIGTERM, only
 * the SIGKILL at kill_at).  Never blocks: a record the pipe has no room
 * for is dropped.  Returns 0, or -1 the first time a write fails (the
 * guard is gone; later calls do nothing and return 0). */
int cli_os_guard_send(cli_os_guard *g, int64_t term_at, int64_t kill_at);

/* 1 if the guard has reported a deadline stop of CMD's group (a report
 * that arrived since the last call is read), else 0. */
int cli_os_guard_reported(cli_os_guard *g);

/* Disarm: the guard exits without signalling anything.  Waits for it at
 * most wait_ms (a guard that someone stopped is then killed), and leaves
 * g not running. */
void cli_os_guard_end(cli_os_guard *g, int64_t wait_ms);

/* ---- socket addresses (net.c) -------------------------------------- */

/* A socket address (struct sockaddr_in or sockaddr_in6), in storage
 * large and aligned enough for either. */
typedef union cli_os_sockaddr {
    unsigned char bytes[128];
    int64_t align_;
    void *align_p_;
} cli_os_sockaddr;

/* The numeric address host (IPv4 "127.0.0.1", or IPv6 "::1" without its
 * brackets) with port, for a server to listen on (--http): no name is
 * looked up.  Returns 4 or 6 (the family) with *sa and *len set, or -1
 * when host is not such an address. */
int cli_os_sockaddr_make(const char *host, unsigned port, cli_os_sockaddr *sa, size_t *len);

/* ---- the service manager's notification socket (notify.c) -------- */

/* Open a datagram socket to the AF_UNIX address `addr` ($NOTIFY_SOCKET:
 * an absolute path, or '@' and a name in Linux's abstract namespace).
 * Returns 1 (open); 0 if the address cannot be used (why says so); -1 if
 * no socket could be made (why); -2 on a system without such sockets
 * (Windows: nothing is done). */
int cli_os_notify_open(const char *addr, char *why, size_t cap);

/* Send one datagram on the open socket.  Returns 0, -1 with why. */
int cli_os_notify_send(const char *msg, char *why, size_t cap);

/* 1 while the socket is open. */
int cli_os_notify_is_open(void);

/* Close the socket (if open). */
void cli_os_notify_close(void);

#endif
