/*
 * term.c -- the terminal and job control on POSIX (see os.h): which
 * process group has the terminal, reporting and resuming a stopped
 * foreground CMD, and suspending sqlease's own job.
 */
#include "os_posix.h"

#include <signal.h>
#include <termios.h>
#include <unistd.h>

/* Only a controlling terminal answers tcgetpgrp, so this also tells a
 * terminal of another session (or none) apart. */
int cli_os_controlling_tty(void)
{
    return isatty(0) && tcgetpgrp(0) > 0 ? 0 : -1;
}

/* (Between fork and exec every signal is blocked already.) */
void cli_os_set_foreground(int tty, pid_t pgrp)
{
    sigset_t ttou, old;

    sigemptyset(&ttou);
    sigaddset(&ttou, SIGTTOU);
    (void)pthread_sigmask(SIG_BLOCK, &ttou, &old);
    (void)tcsetpgrp(tty, pgrp);
    (void)pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int sqle_child_stopped(sqle_child *c, int *sig)
{
    int s = c != NULL && c->tty >= 0 ? c->stop_sig : 0;

    if (s == 0)
        return 0;
    c->stop_sig = 0;
    if (sig != NULL)
        *sig = s;
    return 1;
}

/* The terminal moves only between our group and the child's: never away
 * from a group the shell made foreground in the meantime (after `bg`, or
 * when another job runs in the foreground). */
int sqle_child_terminal(sqle_child *c, int to_child)
{
    pid_t fg;

    if (c == NULL || c->tty < 0 || c->pid <= 0)
        return 0;
    fg = tcgetpgrp(c->tty);
    if (to_child && fg == getpgrp())
        cli_os_set_foreground(c->tty, (pid_t)c->pid);
    else if (!to_child && fg == (pid_t)c->pid)
        cli_os_set_foreground(c->tty, getpgrp());
    return tcgetpgrp(c->tty) == (pid_t)c->pid;
}

/* kill(0, ...) stops every thread of this process and the rest of its
 * process group (the job, as the shell sees it), exactly as the
 * terminal's Ctrl-Z would have if the child had not had the terminal.
 * A stop signal sent to oneself is acted on before kill returns, so the
 * call returns once the job is continued.  The kernel discards SIGTSTP,
 * SIGTTIN and SIGTTOU aimed at an orphaned group: then this returns at
 * once. */
void sqle_job_suspend(int sig)
{
    /* SIGTTOU is ignored while a child has the terminal (see spawn). */
    if (sig == SIGTTOU)
        sig = SIGTSTP;
    else if (sig != SIGTSTP && sig != SIGTTIN)
        sig = SIGSTOP;
    (void)kill(0, sig);
}

/* After a stop for terminal access (SIGTTIN, SIGTTOU) the child would stop
 * again at once unless it has the terminal: it stays stopped until our
 * group is the foreground again (the shell's `fg`). */
int sqle_child_resume(sqle_child *c, int sig)
{
    if (c == NULL || c->pid <= 0)
        return 0;
    if (!sqle_child_terminal(c, 1) && (sig == SIGTTIN || sig == SIGTTOU))
        return 0;
    sqle_child_continue(c);
    return 1;
}
