/*
 * os_win32.h -- the start of every Win32 file of the tool's OS layer (the
 * Windows version it targets and <windows.h>, as in the library's
 * platform layer), and what those files share among themselves: the
 * event that a console control event sets and their count, so that a
 * child wait ends when one comes during it.
 */
#ifndef SQLEASE_CLI_OS_WIN32_H
#define SQLEASE_CLI_OS_WIN32_H

#ifndef _WIN32_WINNT
#define _WIN32_WINNT 0x0602
#endif
#ifndef _CRT_SECURE_NO_WARNINGS
#define _CRT_SECURE_NO_WARNINGS
#endif
#define WIN32_LEAN_AND_MEAN

#include <windows.h>

#include "cli/os.h"

/* The auto-reset event sqle_signal_setup() created and the control
 * handler sets, or NULL before that. */
HANDLE cli_os_signal_event(void);

/* How many console control events have come so far: a child wait that
 * the event wakes goes on waiting unless one came during it. */
LONG cli_os_signal_count(void);

#endif
