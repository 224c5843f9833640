/*
 * file.c -- the file-system questions the library asks on Win32 (see
 * platform.h): whether a path exists and the current directory, for the
 * message that names an embedded database's missing file; and reading a
 * small file whole, for the time zones of the cron module (from $TZDIR
 * only: Windows has no tz database of TZif files).
 */
#include "win32.h"

#include <stdlib.h>

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

/* The size is the open handle's, as on POSIX: a file replaced between
 * the open and the read is read as one file, never half of each. */
int sqle_file_read(const char *path, size_t max, unsigned char **data, size_t *len)
{
    HANDLE h;
    LARGE_INTEGER size;
    unsigned char *buf;
    size_t n, got = 0;
    DWORD e;

    if (path == NULL || data == NULL || len == NULL)
        return -2;
    *data = NULL;
    *len = 0;
    h = CreateFileA(path, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                    NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
    if (h == INVALID_HANDLE_VALUE) {
        e = GetLastError();
        return e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND ? -1 : -2;
    }
    if (GetFileType(h) != FILE_TYPE_DISK || !GetFileSizeEx(h, &size) || size.QuadPart < 0
        || (unsigned long long)size.QuadPart > (unsigned long long)max) {
        CloseHandle(h);
        return -2;
    }
    n = (size_t)size.QuadPart;
    buf = malloc(n + 1);
    if (buf == NULL) {
        CloseHandle(h);
        return -2;
    }
    while (got < n) {
        DWORD want = (DWORD)(n - got > 0x10000000 ? 0x10000000 : n - got), r = 0;
        if (!ReadFile(h, buf + got, want, &r, NULL) || r == 0) {
            free(buf);
            CloseHandle(h);
            return -2;
        }
        got += r;
    }
    CloseHandle(h);
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}

const char *sqle_tzdir_default(void)
{
    return NULL;
}
