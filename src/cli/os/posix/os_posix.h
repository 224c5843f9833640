/*
 * os_posix.h -- what the POSIX files of the tool's OS layer share among
 * themselves and with nobody else: the terminal hand-over that spawning
 * (process.c) and job control (term.c) both do.
 */
#ifndef SQLEASE_CLI_OS_POSIX_H
#define SQLEASE_CLI_OS_POSIX_H

#include <sys/types.h>

#include "cli/os.h"

/* The terminal a foreground child may use: standard input, if it is this
 * session's controlling terminal; -1 if there is none. */
int cli_os_controlling_tty(void);

/* Make pgrp the terminal's foreground process group, with SIGTTOU blocked
 * (from a background group the call would otherwise stop the caller). */
void cli_os_set_foreground(int tty, pid_t pgrp);

#endif
