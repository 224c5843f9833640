/*
 * guard.h -- a watchdog process for CMD that does not depend on sqlease.
 *
 * The supervisor's watchdog thread stops the work at its deadline, but it
 * lives inside the sqlease process: if that process is frozen (SIGSTOP, a
 * debugger, a swapped-out page it faults on), CMD keeps running past the
 * point where another owner may take the lease.  The guard is a small
 * process forked by sqlease (no exec) next to CMD.  sqlease keeps telling
 * it, through a pipe, the deadline of the hold CMD runs under; the guard
 * stops CMD's process group on its own when its clock passes that
 * deadline (SIGTERM, then SIGKILL after the kill grace), and kills the
 * group at once when the pipe reaches end-of-file, which happens when
 * sqlease dies however it dies (and also catches CMD's own children, which
 * PR_SET_PDEATHSIG does not reach).
 *
 * sqlease stays CMD's parent and reaps it.  The guard leads a process
 * group of its own: a stop aimed at sqlease's job (the shell's Ctrl-Z,
 * SIGSTOP to its group, a suspended `run`) or at CMD's group does not
 * stop the guard, which is the point of having it.  It ignores SIGTERM,
 * SIGINT, SIGHUP and the terminal's stop signals, so a signal meant for
 * sqlease is handled by sqlease (which stops CMD with its grace and then
 * disarms the guard).  When the guard stops CMD at the deadline it says
 * so through a second pipe, so that sqlease reports the lease as lost
 * rather than the status the guard's SIGTERM gave CMD.  All times are
 * sqle_mono_ms() values (CLOCK_BOOTTIME on Linux, shared by every
 * process of the host and counting a suspend).  POSIX only (the process is the OS layer's, os.h): on Windows
 * these calls do nothing and the job object that CMD runs in is what ties
 * it to sqlease.
 */
#ifndef SQLEASE_CLI_GUARD_H
#define SQLEASE_CLI_GUARD_H

#include <stdint.h>

#include "os.h"

typedef struct cli_guard {
    cli_os_guard os;       /* the process and its pipes (os.h) */
    int acted;             /* it reported a deadline stop of CMD */
    int64_t deadline;      /* the last deadline told */
    int64_t slack_ms;      /* the guard acts this long after the deadline */
    int64_t grace_ms;      /* SIGTERM to SIGKILL */
} cli_guard;

/* A guard that is not running (safe to pass to every call below). */
void cli_guard_init(cli_guard *g);

/* Fork a guard for the process group `pgid` (CMD's), which it will stop at
 * deadline_mono + slack_ms (SIGTERM) and deadline_mono + slack_ms +
 * grace_ms (SIGKILL) unless told a later deadline.  Call from the main
 * thread while CMD waits between its fork and its exec (see
 * cli_hold_start_child): a guard forked after CMD has started leaves a
 * window in which a stop of sqlease leaves CMD unguarded.  Returns 0, or
 * -1 (logged; CMD then runs with the supervisor's watchdog and the death
 * signal only). */
int cli_guard_start(cli_guard *g, long pgid, int64_t deadline_mono, int64_t grace_ms,
                    int64_t slack_ms);

/* The hold's deadline is now deadline_mono (written only when it moved). */
void cli_guard_deadline(cli_guard *g, int64_t deadline_mono);

/* sqlease is stopping CMD itself now (its SIGTERM is on the way): the guard
 * only SIGKILLs the group if it is still there after grace + slack. */
void cli_guard_stopping(cli_guard *g);

/* 1 if the guard has stopped CMD at the hold's deadline (sqlease was
 * frozen or suspended past it).  Call before cli_guard_disarm. */
int cli_guard_acted(cli_guard *g);

/* CMD has been reaped: the guard exits without signalling anything; wait
 * for it.  No-op when there is no guard. */
void cli_guard_disarm(cli_guard *g);

#endif
