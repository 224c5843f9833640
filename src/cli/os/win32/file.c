/*
 * file.c -- files and directories the tool writes, on Win32 (see os.h):
 * the metrics file replaced in one step.  The demo's helpers are not
 * there (the demo needs POSIX) and fail.
 */
#include "os_win32.h"

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

int cli_sys_self_exe(const char *argv0, char *buf, size_t cap)
{
    (void)argv0; (void)buf; (void)cap;
    return -1;
}
