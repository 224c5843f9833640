/*
 * procstat.c -- the parser of Linux's /proc/PID/stat (see os.h), the one
 * every reader of the process table shares: the tool's OS layer, the
 * tests and the chaos harness.  Plain text in, fields out, so it is built
 * on every OS (only POSIX systems have the file to read: proc.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/os.h"

/*
 * "pid (comm) state ppid pgrp session ...".  The command name is whatever
 * the process called itself, spaces and parentheses included, so it ends
 * at the *last* ')': every field after it is a number or a state letter.
 */
int cli_os_proc_parse(const char *text, cli_os_proc *p)
{
    const char *open_paren, *close_paren;
    char *end;
    size_t n;

    memset(p, 0, sizeof *p);
    if (text == NULL)
        return -1;
    errno = 0;
    p->pid = strtol(text, &end, 10);
    if (end == text || errno != 0 || p->pid <= 0 || end[0] != ' ' || end[1] != '(')
        return -1;
    open_paren = end + 1;
    close_paren = strrchr(open_paren, ')');
    if (close_paren == NULL ||
        sscanf(close_paren + 1, " %c %ld %ld %ld", &p->state, &p->ppid, &p->pgrp,
               &p->session) != 4) {
        memset(p, 0, sizeof *p);
        return -1;
    }
    n = (size_t)(close_paren - open_paren - 1);
    if (n >= sizeof p->comm)
        n = sizeof p->comm - 1;
    memcpy(p->comm, open_paren + 1, n);
    p->comm[n] = '\0';
    return 0;
}
