/*
 * sys.h -- the few operating-system services the tool needs that
 * platform.h does not offer.  For the demo: a private temporary
 * directory, appending a line atomically, reading a small file, this
 * program's own path, and whether a process (not our child) still lives
 * (on other systems they fail and the demo says it is not supported).
 * For logging: whether stderr is the systemd journal's stream.  POSIX
 * only.
 */
#ifndef SQLEASE_CLI_SYS_H
#define SQLEASE_CLI_SYS_H

#include <stddef.h>

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

/* The path of the running executable (/proc/self/exe on Linux, else
 * argv0).  Returns 0 or -1. */
int cli_sys_self_exe(const char *argv0, char *buf, size_t cap);

/* 1 if a process with this pid exists and is not a zombie, else 0. */
int cli_sys_pid_alive(long pid);

/* 1 if stderr is connected to the systemd journal: $JOURNAL_STREAM names
 * the device and inode ("DEV:INO", decimal) of the stream systemd gave
 * the service, and stderr is that very file (systemd's documented test:
 * a variable inherited by a process whose stderr was redirected no longer
 * matches).  0 otherwise, and always on Windows. */
int cli_sys_stderr_is_journal(void);

#endif
