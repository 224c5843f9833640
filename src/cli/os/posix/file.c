/*
 * file.c -- files and directories the tool writes, on POSIX (see os.h):
 * the metrics file replaced in one step, and the demo's private
 * directory, its event file and its own executable.
 */
#include "os_posix.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

int sqle_file_replace(const char *from, const char *to)
{
    return rename(from, to) == 0 ? 0 : -1;
}

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

/* One line is the connection string; only blank lines may follow it. */
static int one_line(char *buf, size_t len, char *err, size_t errcap)
{
    size_t n = strcspn(buf, "\r\n");

    for (size_t i = n; i < len; i++)
        if (buf[i] != '\r' && buf[i] != '\n' && buf[i] != ' ' && buf[i] != '\t') {
            snprintf(err, errcap, "holds more than one line: write the connection string"
                                  " on one line");
            return -1;
        }
    buf[n] = '\0';
    if (n == 0) {
        snprintf(err, errcap, "is empty");
        return -1;
    }
    return 0;
}

int cli_os_read_private_file(const char *path, char *buf, size_t cap, char *err,
                             size_t errcap)
{
    struct stat st;
    size_t len = 0;
    int fd;

    do
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        snprintf(err, errcap, "cannot open: %s", strerror(errno));
        return -1;
    }
    /* The mode of what was opened, not of a name someone may swap. */
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errcap, "is not a regular file");
        close(fd);
        return -1;
    }
    /* Readable by others is a password shown to them; writable, a
     * connection they can point elsewhere. */
    if ((st.st_mode & (S_IRGRP | S_IROTH | S_IWGRP | S_IWOTH)) != 0) {
        snprintf(err, errcap, "%s by group or others (mode %04o); it may hold a password:"
                              " chmod 600 it",
                 (st.st_mode & (S_IRGRP | S_IROTH)) != 0 ? "readable" : "writable",
                 (unsigned)(st.st_mode & 07777));
        close(fd);
        return -1;
    }
    while (len + 1 < cap) {
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errcap, "cannot read: %s", strerror(errno));
            close(fd);
            return -1;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    if (len + 1 >= cap) {
        snprintf(err, errcap, "is larger than %zu bytes", cap - 2);
        return -1;
    }
    buf[len] = '\0';
    return one_line(buf, len, err, errcap);
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
