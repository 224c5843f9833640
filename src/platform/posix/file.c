/*
 * file.c -- the file-system questions the library asks on POSIX (see
 * platform.h): whether a path exists and the current directory, for the
 * message that names an embedded database's missing file; and reading a
 * small file whole, for the time zones of the cron module.
 */
#include "platform.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int sqle_path_exists(const char *path)
{
    struct stat st;
    return path != NULL && stat(path, &st) == 0;
}

void sqle_cwd(char *buf, size_t cap)
{
    if (cap > 0 && getcwd(buf, cap) == NULL)
        buf[0] = '\0';
}

/*
 * The size comes from fstat on the open descriptor, not from a stat of
 * the path before it, so a file replaced in between (tzdata upgrading
 * under a running daemon) is read as one file or the other, never half of
 * each.  A file that grows while it is read is cut at its size then; one
 * that shrinks is an error (the reader would see a short file).
 */
int sqle_file_read(const char *path, size_t max, unsigned char **data, size_t *len)
{
    struct stat st;
    unsigned char *buf;
    size_t size, got = 0;
    int fd;

    if (path == NULL || data == NULL || len == NULL)
        return -2;
    *data = NULL;
    *len = 0;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR ? -1 : -2;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0
        || (unsigned long long)st.st_size > (unsigned long long)max) {
        close(fd);
        return -2;
    }
    size = (size_t)st.st_size;
    buf = malloc(size + 1);
    if (buf == NULL) {
        close(fd);
        return -2;
    }
    while (got < size) {
        ssize_t n = read(fd, buf + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            free(buf);
            close(fd);
            return -2;
        }
        got += (size_t)n;
    }
    close(fd);
    buf[size] = '\0';
    *data = buf;
    *len = size;
    return 0;
}

const char *sqle_tzdir_default(void)
{
    return "/usr/share/zoneinfo";
}
