/*
 * file.c -- the file-system questions the library asks on POSIX (see
 * platform.h): whether a path exists and the current directory, for the
 * message that names an embedded database's missing file.
 */
#include "platform.h"

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
