/*
 * clock.c -- the wall clock on Win32 (see os.h).
 */
#include "os_win32.h"

#include <string.h>

typedef VOID(WINAPI *precise_time_fn)(LPFILETIME);

/* GetSystemTimePreciseAsFileTime is looked up at run time so the file
 * also builds (and runs, less precisely) with an older _WIN32_WINNT. */
int64_t sqle_wall_ms(void)
{
    FILETIME ft;
    ULARGE_INTEGER u;
    HMODULE k32 = GetModuleHandleA("kernel32.dll");
    precise_time_fn precise = NULL;
    FARPROC proc = k32 != NULL ? GetProcAddress(k32, "GetSystemTimePreciseAsFileTime") : NULL;

    if (proc != NULL)
        memcpy(&precise, &proc, sizeof precise);
    if (precise != NULL)
        precise(&ft);
    else
        GetSystemTimeAsFileTime(&ft);
    u.LowPart = ft.dwLowDateTime;
    u.HighPart = ft.dwHighDateTime;
    /* 100 ns ticks since 1601-01-01 to ms since 1970-01-01. */
    return (int64_t)((u.QuadPart - 116444736000000000ULL) / 10000ULL);
}
