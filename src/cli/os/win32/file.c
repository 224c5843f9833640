/*
 * file.c -- files and directories the tool writes or reads, on Win32
 * (see os.h): the metrics file replaced in one step, and the file
 * --dsn-file reads.  The demo's helpers are not there (the demo needs
 * POSIX) and fail.
 */
#include "os_win32.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* rename() on Windows refuses an existing target. */
int sqle_file_replace(const char *from, const char *to)
{
    return MoveFileExA(from, to, MOVEFILE_REPLACE_EXISTING) ? 0 : -1;
}

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

/* Neither the file's owner nor its ACL is checked here (POSIX checks the
 * owner and the mode bits): a file under the user's profile is private
 * by default (docs/windows.md).  The rest is as on POSIX: one line, not
 * empty, and the same words. */
int cli_os_read_private_file(const char *path, char *buf, size_t cap, char *err,
                             size_t errcap)
{
    FILE *f = fopen(path, "rb");
    size_t len, n;

    if (f == NULL) {
        if (errno == ENOENT)
            snprintf(err, errcap, "does not exist");
        else
            snprintf(err, errcap, "cannot open it: %s", strerror(errno));
        return -1;
    }
    len = fread(buf, 1, cap - 1, f);
    fclose(f);
    if (len + 1 >= cap) {
        snprintf(err, errcap, "is larger than %u bytes", (unsigned)(cap - 2));
        return -1;
    }
    buf[len] = '\0';
    n = strcspn(buf, "\r\n");
    for (size_t i = n; i < len; i++)
        if (buf[i] != '\r' && buf[i] != '\n' && buf[i] != ' ' && buf[i] != '\t') {
            snprintf(err, errcap, "holds more than one line: write the connection string"
                                  " on one line");
            return -1;
        }
    buf[n] = '\0';
    if (n == 0) {
        snprintf(err, errcap, "is empty: write the connection string (or a DSN name) on"
                              " its first line");
        return -1;
    }
    return 0;
}

int cli_sys_self_exe(const char *argv0, char *buf, size_t cap)
{
    (void)argv0; (void)buf; (void)cap;
    return -1;
}
