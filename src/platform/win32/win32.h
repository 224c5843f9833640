/*
 * win32.h -- the start of every Win32 file of the library's platform
 * layer: the oldest Windows it targets (Windows 8 / Server 2012, unless
 * the build sets _WIN32_WINNT) and <windows.h> without its rarely used
 * parts.  Include it before any other header.
 */
#ifndef SQLEASE_PLATFORM_WIN32_H
#define SQLEASE_PLATFORM_WIN32_H

#ifndef _WIN32_WINNT
#define _WIN32_WINNT 0x0602
#endif
#ifndef _CRT_SECURE_NO_WARNINGS
#define _CRT_SECURE_NO_WARNINGS
#endif
#define WIN32_LEAN_AND_MEAN

#include <windows.h>

#include "platform.h"

#endif
