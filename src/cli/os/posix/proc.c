/*
 * proc.c -- the process table on POSIX (see os.h): Linux's
 * /proc/PID/stat, read through the one parser every user of the table
 * shares (../procstat.c).  Without /proc every call says the table cannot
 * be read.
 */
#include "os_posix.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* The first 511 bytes hold every field the parser reads: the command name
 * is at most 64 bytes, the numbers before the session at most 60. */
static int read_stat(const char *path, cli_os_proc *p)
{
    char buf[512];
    FILE *f = fopen(path, "r");
    size_t n;

    if (f == NULL)
        return -1;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return cli_os_proc_parse(buf, p) == 0 ? 0 : -2;
}

/* A missing entry in a readable table is a process that is gone (or was
 * never there); anything else (no /proc, an entry that cannot be read or
 * parsed) leaves the question open. */
int cli_os_proc_stat(long pid, cli_os_proc *p)
{
    char path[64];
    int r;

    memset(p, 0, sizeof *p);
    if (pid <= 0)
        return -1;
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    r = read_stat(path, p);
    if (r == -1)
        return (errno == ENOENT || errno == ESRCH) && access("/proc/self/stat", F_OK) == 0
                   ? -1 : -2;
    return r;
}

int cli_os_proc_scan(int (*fn)(void *userdata, const cli_os_proc *p), void *userdata)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int rc = 0;

    if (d == NULL)
        return -1;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        char path[300];
        const char *c;
        cli_os_proc p;

        for (c = e->d_name; *c >= '0' && *c <= '9'; c++)
            ;
        if (c == e->d_name || *c != '\0')
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        if (read_stat(path, &p) == 0)
            rc = fn(userdata, &p);
    }
    closedir(d);
    return rc;
}

typedef struct group_count {
    long pgid;
    int n;
} group_count;

static int count_member(void *ud, const cli_os_proc *p)
{
    group_count *g = ud;

    if (p->pgrp == g->pgid && p->state != 'Z' && p->state != 'X')
        g->n++;
    return 0;
}

/* A zombie does no work, and where PID 1 does not reap orphans (a bare
 * container) it never goes away: only live members count. */
int cli_os_group_members(long pgid)
{
    group_count g;

    if (pgid <= 0)
        return 0;
    g.pgid = pgid;
    g.n = 0;
    if (cli_os_proc_scan(count_member, &g) < 0)
        return -1;
    return g.n;
}

/* A zombie still answers kill(); its state letter says it is dead.  (A
 * killed job's parent died too, so it waits for init to reap it.) */
int cli_sys_pid_alive(long pid)
{
    cli_os_proc p;
    int r;

    if (pid <= 0)
        return 0;
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
        return 0;
    r = cli_os_proc_stat(pid, &p);
    if (r == -1)
        return 0;
    if (r < 0)
        return 1;
    return p.state != 'Z' && p.state != 'X';
}
