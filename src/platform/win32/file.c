/*
 * file.c -- the file-system questions the library asks on Win32 (see
 * platform.h): whether a path exists and the current directory, for the
 * message that names an embedded database's missing file.
 */
#include "win32.h"

int sqle_path_exists(const char *path)
{
    return path != NULL && GetFileAttributesA(path) != INVALID_FILE_ATTRIBUTES;
}

void sqle_cwd(char *buf, size_t cap)
{
    DWORD n;

    if (cap == 0)
        return;
    n = GetCurrentDirectoryA((DWORD)cap, buf);
    if (n == 0 || n >= cap)
        buf[0] = '\0';
}
