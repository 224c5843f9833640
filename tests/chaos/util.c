/*
 * util.c -- small utilities of the chaos harness: the monotonic clock every
 * process of the host shares (event times from different processes
 * compare), process liveness (the tool's OS layer reads the process
 * table), the append-only event file and a seeded random generator.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "chaos.h"
#include "cli/os.h"

int64_t ch_mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void ch_nap_ms(int64_t ms)
{
    struct timespec ts;

    if (ms <= 0)
        return;
    ts.tv_sec = (time_t)(ms / 1000);
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* The tool's OS layer reads the process table (one parser for it): a
 * zombie still answers kill(pid, 0) but does no work. */
int ch_pid_gone(long pid)
{
    return !cli_sys_pid_alive(pid);
}

int ch_group_members(long pgid)
{
    int n = cli_os_group_members(pgid);

    return n < 0 ? 0 : n;
}

int ch_append(const char *path, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    int n, fd;
    ssize_t w;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    if ((size_t)n > sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    do
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return -1;
    do
        w = write(fd, line, (size_t)n);
    while (w < 0 && errno == EINTR);
    close(fd);
    return w == n ? 0 : -1;
}

static uint64_t rng_state;

void ch_rng_seed(uint64_t seed)
{
    rng_state = seed;
}

uint64_t ch_rng(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

int64_t ch_rng_range(int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo;
    return lo + (int64_t)(ch_rng() % (uint64_t)(hi - lo + 1));
}
