/*
 * sys.c -- POSIX implementations of the demo's operating-system helpers
 * (see sys.h).  Kept apart so that everything else in the tool needs
 * only the C library and platform.h.
 */
#if !defined(_WIN32)
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys.h"

#if defined(_WIN32)

int cli_sys_make_temp_dir(const char *prefix, char *buf, size_t cap)
{
    (void)prefix; (void)buf; (void)cap;
    return -1;
}

int cli_sys_remove_dir(const char *dir)
{
    (void)dir;
    return -1;
}

int cli_sys_append_line(const char *path, const char *line)
{
    (void)path; (void)line;
    return -1;
}

char *cli_sys_read_file(const char *path)
{
    (void)path;
    return NULL;
}

int cli_sys_self_exe(const char *argv0, char *buf, size_t cap)
{
    (void)argv0; (void)buf; (void)cap;
    return -1;
}

int cli_sys_pid_alive(long pid)
{
    (void)pid;
    return 0;
}

int cli_sys_stderr_is_journal(void)
{
    return 0;
}

#else

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

int cli_sys_make_temp_dir(const char *prefix, char *buf, size_t cap)
{
    const char *tmp = getenv("TMPDIR");
    int n;

    /* The directory ends up inside an ODBC connection string: a TMPDIR
     * with ';', '{' or '}' would change its meaning. */
    if (tmp == NULL || tmp[0] == '\0' || strpbrk(tmp, ";{}") != NULL)
        tmp = "/tmp";
    n = snprintf(buf, cap, "%s/%s-XXXXXX", tmp, prefix);
    if (n < 0 || (size_t)n >= cap)
        return -1;
    return mkdtemp(buf) != NULL ? 0 : -1;
}

int cli_sys_remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4096];
    int rc = 0;

    if (d == NULL)
        return errno == ENOENT ? 0 : -1;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) != 0)
            rc = -1;
    }
    closedir(d);
    if (rmdir(dir) != 0)
        rc = -1;
    return rc;
}

int cli_sys_append_line(const char *path, const char *line)
{
    size_t len = strlen(line);
    ssize_t w;
    int fd;

    do
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return -1;
    do
        w = write(fd, line, len);
    while (w < 0 && errno == EINTR);
    close(fd);
    return w == (ssize_t)len ? 0 : -1;
}

char *cli_sys_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0;

    if (f == NULL)
        return errno == ENOENT ? calloc(1, 1) : NULL;
    for (;;) {
        size_t n;
        if (cap - len < 4096) {
            char *nb = realloc(buf, cap + 65536);
            if (nb == NULL) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
            cap += 65536;
        }
        n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0)
            break;
    }
    fclose(f);
    buf[len] = '\0';
    return buf;
}

int cli_sys_self_exe(const char *argv0, char *buf, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);

    if (n > 0) {
        buf[n] = '\0';
        return 0;
    }
    if (argv0 == NULL || strlen(argv0) >= cap)
        return -1;
    /* Without /proc: argv0 as given, made absolute if it names a path. */
    if (strchr(argv0, '/') != NULL && realpath(argv0, buf) != NULL)
        return 0;
    snprintf(buf, cap, "%s", argv0);
    return 0;
}

int cli_sys_pid_alive(long pid)
{
    char path[64], stat[512];
    FILE *f;
    size_t n;
    const char *paren;

    if (pid <= 0)
        return 0;
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
        return 0;
    /* A zombie still answers kill(); on Linux its state letter says so.
     * (A killed job's parent died too, so it waits for init to reap it.) */
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    f = fopen(path, "r");
    if (f == NULL)
        return (errno == ENOENT && access("/proc/self/stat", F_OK) == 0) ? 0 : 1;
    n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = '\0';
    paren = strrchr(stat, ')');
    if (paren != NULL && (paren[2] == 'Z' || paren[2] == 'X'))
        return 0;
    return 1;
}

int cli_sys_stderr_is_journal(void)
{
    const char *v = getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;
    char *end;

    if (v == NULL || v[0] == '\0')
        return 0;
    errno = 0;
    dev = strtoull(v, &end, 10);
    if (errno != 0 || end == v || *end != ':')
        return 0;
    v = end + 1;
    ino = strtoull(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0')
        return 0;
    if (fstat(2, &st) != 0)
        return 0;
    return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

#endif
