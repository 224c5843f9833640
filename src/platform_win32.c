/*
 * platform_win32.c -- the Win32 implementation of platform.h.
 *
 * OS contract relied on (Windows 8 / Server 2012 or later):
 *  - SRWLOCK and CONDITION_VARIABLE, each one pointer in size, stored in
 *    the opaque storage of platform.h; a timed wait is computed from the
 *    monotonic clock, so the wall clock never moves a deadline;
 *  - QueryPerformanceCounter is one clock for the whole host, so
 *    readings from different processes compare;
 *  - UuidCreate (rpcrt4) for random UUIDs;
 *  - children run in a new process group (so CTRL_BREAK reaches them and
 *    not us) and in a job object with KILL_ON_JOB_CLOSE: when this
 *    process dies, for any reason, the system closes the job handle and
 *    kills everything in the job.  Nested jobs need Windows 8.
 *  - console control events stand in for signals.
 *
 * Link with rpcrt4 (UuidCreate).
 */
#ifndef _WIN32_WINNT
#define _WIN32_WINNT 0x0602
#endif
#ifndef _CRT_SECURE_NO_WARNINGS
#define _CRT_SECURE_NO_WARNINGS
#endif
#define WIN32_LEAN_AND_MEAN

#include "platform.h"

#include <windows.h>
#include <process.h>
#include <rpc.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(SRWLOCK) == sizeof(void *), "SRWLOCK must fit sqlease_mutex");
_Static_assert(sizeof(CONDITION_VARIABLE) == sizeof(void *),
               "CONDITION_VARIABLE must fit sqlease_cond");

#define SRW(m) ((PSRWLOCK)(void *)&(m)->p)
#define CV(c) ((PCONDITION_VARIABLE)(void *)&(c)->p)

/* ---- mutexes and condition variables ------------------------------- */

int sqlease_mutex_init(sqlease_mutex *m)
{
    InitializeSRWLock(SRW(m));
    return 0;
}

void sqlease_mutex_destroy(sqlease_mutex *m)
{
    (void)m; /* an SRWLOCK holds no resources */
}

void sqlease_mutex_lock(sqlease_mutex *m)
{
    AcquireSRWLockExclusive(SRW(m));
}

void sqlease_mutex_unlock(sqlease_mutex *m)
{
    ReleaseSRWLockExclusive(SRW(m));
}

int sqlease_cond_init(sqlease_cond *c)
{
    InitializeConditionVariable(CV(c));
    return 0;
}

void sqlease_cond_destroy(sqlease_cond *c)
{
    (void)c;
}

void sqlease_cond_signal(sqlease_cond *c)
{
    WakeConditionVariable(CV(c));
}

void sqlease_cond_broadcast(sqlease_cond *c)
{
    WakeAllConditionVariable(CV(c));
}

/* Windows waits take a relative timeout and may end up to a timer tick
 * early, so a timeout is reported only once the monotonic clock has
 * really reached the deadline; an early one counts as spurious (0) and
 * the caller's loop waits again for the rest. */
int sqlease_cond_wait_until(sqlease_cond *c, sqlease_mutex *m, int64_t deadline_mono_ms)
{
    int64_t left;
    DWORD ms;

    if (deadline_mono_ms < 0) {
        SleepConditionVariableSRW(CV(c), SRW(m), INFINITE, 0);
        return 0;
    }
    left = deadline_mono_ms - sqlease_mono_ms();
    if (left <= 0)
        return 1;
    ms = left > 0x7FFFFFFF ? (DWORD)0x7FFFFFFF : (DWORD)left;
    if (!SleepConditionVariableSRW(CV(c), SRW(m), ms, 0) && GetLastError() == ERROR_TIMEOUT)
        return sqlease_mono_ms() >= deadline_mono_ms ? 1 : 0;
    return 0;
}

/* ---- threads ------------------------------------------------------- */

/* A lease costs up to two threads and a process may hold a thousand
 * leases: reserve a small stack instead of the 1 MiB default. */
#define SQLEASE_STACK_SIZE (256u * 1024u)

typedef struct {
    void (*fn)(void *);
    void *arg;
} thread_start_ctx;

static unsigned __stdcall thread_trampoline(void *p)
{
    thread_start_ctx ctx = *(thread_start_ctx *)p;

    free(p);
    ctx.fn(ctx.arg);
    return 0;
}

int sqlease_thread_start(sqlease_thread *t, void (*fn)(void *), void *arg)
{
    thread_start_ctx *ctx = malloc(sizeof *ctx);
    uintptr_t h;

    if (ctx == NULL)
        return -1;
    ctx->fn = fn;
    ctx->arg = arg;
    h = _beginthreadex(NULL, SQLEASE_STACK_SIZE, thread_trampoline, ctx,
                       STACK_SIZE_PARAM_IS_A_RESERVATION, NULL);
    if (h == 0) {
        free(ctx);
        return -1;
    }
    t->handle = (void *)h;
    return 0;
}

void sqlease_thread_join(sqlease_thread *t)
{
    WaitForSingleObject((HANDLE)t->handle, INFINITE);
    CloseHandle((HANDLE)t->handle);
    t->handle = NULL;
}

/* The thread runs on and its resources go when it ends: closing the
 * handle does not stop it. */
void sqlease_thread_detach(sqlease_thread *t)
{
    if (t->handle != NULL)
        CloseHandle((HANDLE)t->handle);
    t->handle = NULL;
}

uint64_t sqlease_thread_self(void)
{
    return (uint64_t)GetCurrentThreadId();
}

/* ---- atomics ------------------------------------------------------- */

uint64_t sqlease_atomic_load(const sqlease_atomic_u64 *a)
{
#if defined(__GNUC__) || defined(__clang__)
    return __atomic_load_n(&a->v, __ATOMIC_SEQ_CST);
#else
    /* A compare-exchange that never changes the value is a full-barrier
     * 64-bit read, also on 32-bit x86. */
    return (uint64_t)InterlockedCompareExchange64((volatile LONG64 *)&a->v, 0, 0);
#endif
}

void sqlease_atomic_add(sqlease_atomic_u64 *a, uint64_t n)
{
#if defined(__GNUC__) || defined(__clang__)
    (void)__atomic_fetch_add(&a->v, n, __ATOMIC_SEQ_CST);
#else
    (void)InterlockedExchangeAdd64((volatile LONG64 *)&a->v, (LONG64)n);
#endif
}

/* ---- clocks -------------------------------------------------------- */

/* counter * 1000 would overflow 63 bits after about a month of uptime
 * where the frequency is in the GHz range (some systems expose the TSC),
 * so whole seconds and the remainder are scaled separately. */
int64_t sqlease_mono_ms(void)
{
    LARGE_INTEGER f, c;

    QueryPerformanceFrequency(&f);
    QueryPerformanceCounter(&c);
    return (int64_t)((c.QuadPart / f.QuadPart) * 1000
                     + (c.QuadPart % f.QuadPart) * 1000 / f.QuadPart);
}

typedef VOID(WINAPI *precise_time_fn)(LPFILETIME);

/* GetSystemTimePreciseAsFileTime is looked up at run time so the file
 * also builds (and runs, less precisely) with an older _WIN32_WINNT. */
int64_t sqlease_wall_ms(void)
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

/* Sleep() may end a tick early; sleeping again for the rest keeps the
 * promise of "at least ms". */
void sqlease_sleep_ms(int64_t ms)
{
    int64_t end, left;

    if (ms <= 0)
        return;
    end = sqlease_mono_ms() + ms;
    while ((left = end - sqlease_mono_ms()) > 0)
        Sleep(left > 0x7FFFFFFF ? (DWORD)0x7FFFFFFF : (DWORD)left);
}

/* ---- host, process, identity --------------------------------------- */

/* The DNS host name, like gethostname() on POSIX; the NetBIOS name if
 * that is not available. */
void sqlease_hostname(char *buf, size_t cap)
{
    char name[256];
    DWORD n = (DWORD)sizeof name;
    size_t len;

    if (buf == NULL || cap == 0)
        return;
    memset(name, 0, sizeof name);
    if (!GetComputerNameExA(ComputerNameDnsHostname, name, &n) || name[0] == '\0') {
        n = (DWORD)sizeof name;
        memset(name, 0, sizeof name);
        if (!GetComputerNameA(name, &n) || name[0] == '\0')
            strcpy(name, "unknown");
    }
    name[sizeof name - 1] = '\0';
    len = strlen(name);
    if (len >= cap)
        len = cap - 1;
    memcpy(buf, name, len);
    buf[len] = '\0';
}

long sqlease_pid(void)
{
    return (long)GetCurrentProcessId();
}

/* UUID's first three fields are little-endian integers in memory; they
 * are written big-endian so the bytes read like the RFC 4122 text form
 * (version nibble in the high half of byte 6), as libuuid gives them. */
int sqlease_uuid_random(unsigned char out[16])
{
    UUID u;
    RPC_STATUS st = UuidCreate(&u);

    if (st != RPC_S_OK && st != RPC_S_UUID_LOCAL_ONLY)
        return -1;
    out[0] = (unsigned char)(u.Data1 >> 24);
    out[1] = (unsigned char)(u.Data1 >> 16);
    out[2] = (unsigned char)(u.Data1 >> 8);
    out[3] = (unsigned char)u.Data1;
    out[4] = (unsigned char)(u.Data2 >> 8);
    out[5] = (unsigned char)u.Data2;
    out[6] = (unsigned char)(u.Data3 >> 8);
    out[7] = (unsigned char)u.Data3;
    memcpy(out + 8, u.Data4, 8);
    return 0;
}

const char *sqlease_getenv(const char *name)
{
    return getenv(name);
}

/* rename() on Windows refuses an existing target. */
int sqlease_file_replace(const char *from, const char *to)
{
    return MoveFileExA(from, to, MOVEFILE_REPLACE_EXISTING) ? 0 : -1;
}

int sqlease_path_exists(const char *path)
{
    return path != NULL && GetFileAttributesA(path) != INVALID_FILE_ATTRIBUTES;
}

void sqlease_cwd(char *buf, size_t cap)
{
    DWORD n;

    if (cap == 0)
        return;
    n = GetCurrentDirectoryA((DWORD)cap, buf);
    if (n == 0 || n >= cap)
        buf[0] = '\0';
}

/* ---- signals ------------------------------------------------------- */

static volatile LONG g_signal_received;
/* Signals so far: a wait that began after the last one is not ended by
 * the event that one left set (POSIX's EINTR ends only a wait that is
 * under way when the signal comes). */
static volatile LONG g_signal_count;
/* Auto-reset event set by the control handler so that an unbounded child
 * wait can end when a signal comes (the handler runs on its own thread
 * and interrupts nothing). */
static HANDLE g_signal_event;

/* Runs on a thread the system creates.  For close, logoff and shutdown
 * the system ends the process as soon as the handler returns, so the
 * handler blocks instead: the main thread gets until the system's own
 * timeout (about 5 s) to stop the command and release the lease, and
 * its exit ends this thread too. */
static BOOL WINAPI ctrl_handler(DWORD type)
{
    LONG sig;

    switch (type) {
    case CTRL_C_EVENT:
        sig = SIGINT;
        break;
    case CTRL_BREAK_EVENT:
    case CTRL_CLOSE_EVENT:
    case CTRL_LOGOFF_EVENT:
    case CTRL_SHUTDOWN_EVENT:
        sig = SIGTERM;
        break;
    default:
        return FALSE;
    }
    InterlockedExchange(&g_signal_received, sig);
    InterlockedIncrement(&g_signal_count);
    if (g_signal_event != NULL)
        SetEvent(g_signal_event);
    if (type == CTRL_CLOSE_EVENT || type == CTRL_LOGOFF_EVENT || type == CTRL_SHUTDOWN_EVENT)
        Sleep(INFINITE);
    return TRUE;
}

void sqlease_stdio_ensure(void)
{
}

/* The C runtime's handlers are per process and start at their defaults;
 * what a parent can leave us is the console's "ignore Ctrl-C" flag (set
 * for a process created in a new process group), which would keep
 * Ctrl-C from reaching sqlease_signal_setup's handler. */
void sqlease_signal_defaults(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGABRT, SIGFPE, SIGILL, SIGSEGV, SIGBREAK};
    size_t i;

    for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        (void)signal(sigs[i], SIG_DFL);
    (void)SetConsoleCtrlHandler(NULL, FALSE);
}

int sqlease_signal_setup(void)
{
    if (g_signal_event == NULL) {
        g_signal_event = CreateEventA(NULL, FALSE, FALSE, NULL);
        if (g_signal_event == NULL)
            return -1;
    }
    return SetConsoleCtrlHandler(ctrl_handler, TRUE) ? 0 : -1;
}

int sqlease_signal_received(void)
{
    return (int)g_signal_received;
}

/* Windows has no signals to send: both stop the process at once, with
 * the exit code a POSIX shell would show for that signal. */
int sqlease_process_signal(long pid, int sig)
{
    HANDLE h;
    BOOL ok;

    if (pid <= 0 || (sig != 9 && sig != 15))
        return -1;
    h = OpenProcess(PROCESS_TERMINATE, FALSE, (DWORD)pid);
    if (h == NULL)
        return -1;
    ok = TerminateProcess(h, (UINT)(128 + sig));
    CloseHandle(h);
    return ok ? 0 : -1;
}

/* ---- child processes ----------------------------------------------- */

/* A growable string. */
typedef struct {
    char *s;
    size_t len, cap;
} strbuf;

static int sb_reserve(strbuf *b, size_t more)
{
    char *n;
    size_t cap;

    if (b->len + more + 1 <= b->cap)
        return 0;
    cap = b->cap ? b->cap : 256;
    while (cap < b->len + more + 1)
        cap *= 2;
    n = realloc(b->s, cap);
    if (n == NULL)
        return -1;
    b->s = n;
    b->cap = cap;
    return 0;
}

static int sb_putc(strbuf *b, char ch, size_t count)
{
    if (sb_reserve(b, count) != 0)
        return -1;
    memset(b->s + b->len, ch, count);
    b->len += count;
    b->s[b->len] = '\0';
    return 0;
}

static int sb_puts(strbuf *b, const char *s)
{
    size_t n = strlen(s);

    if (sb_reserve(b, n) != 0)
        return -1;
    memcpy(b->s + b->len, s, n + 1);
    b->len += n;
    return 0;
}

/* One argument, quoted so that the Microsoft C runtime's parser gives it
 * back unchanged: quotes only when needed (empty, blank or quote inside);
 * inside quotes, backslashes are literal except in a run that ends at a
 * quote (doubled, plus one to escape the quote) or at the closing quote
 * (doubled). */
static int append_quoted_arg(strbuf *b, const char *a)
{
    const char *p;

    if (a[0] != '\0' && strpbrk(a, " \t\n\v\"") == NULL)
        return sb_puts(b, a);
    if (sb_putc(b, '"', 1) != 0)
        return -1;
    for (p = a;; p++) {
        size_t nbs = 0;

        while (*p == '\\') {
            p++;
            nbs++;
        }
        if (*p == '\0') {
            if (sb_putc(b, '\\', nbs * 2) != 0)
                return -1;
            break;
        }
        if (*p == '"') {
            if (sb_putc(b, '\\', nbs * 2 + 1) != 0 || sb_putc(b, '"', 1) != 0)
                return -1;
        } else if (sb_putc(b, '\\', nbs) != 0 || sb_putc(b, *p, 1) != 0) {
            return -1;
        }
    }
    return sb_putc(b, '"', 1);
}

/* The program name (argv[0]) is parsed by a different rule: everything
 * up to the next quote, no escapes.  So it is quoted whole when it has a
 * blank, and a quote in it cannot be represented (nor can it be in a
 * Windows file name). */
static int build_command_line(strbuf *b, char *const argv[], char *errbuf, size_t errcap)
{
    size_t i;

    if (strchr(argv[0], '"') != NULL) {
        snprintf(errbuf, errcap, "cannot run '%s': a program name cannot contain '\"'",
                 argv[0]);
        return -1;
    }
    if (argv[0][0] == '\0' || strpbrk(argv[0], " \t") != NULL) {
        if (sb_putc(b, '"', 1) != 0 || sb_puts(b, argv[0]) != 0 || sb_putc(b, '"', 1) != 0)
            goto oom;
    } else if (sb_puts(b, argv[0]) != 0) {
        goto oom;
    }
    for (i = 1; argv[i] != NULL; i++)
        if (sb_putc(b, ' ', 1) != 0 || append_quoted_arg(b, argv[i]) != 0)
            goto oom;
    if (b->len >= 32767) {
        snprintf(errbuf, errcap, "cannot run '%s': command line too long (%lu characters)",
                 argv[0], (unsigned long)b->len);
        return -1;
    }
    return 0;
oom:
    snprintf(errbuf, errcap, "out of memory");
    return -1;
}

/* Length of an entry's name.  Names may start with '=' (the hidden
 * per-drive current directories, "=C:=C:\dir"), so the search for the
 * separator starts at the second character. */
static size_t env_key_len(const char *kv)
{
    const char *eq = kv[0] != '\0' ? strchr(kv + 1, '=') : NULL;

    return eq != NULL ? (size_t)(eq - kv) : strlen(kv);
}

static int key_char(int ch)
{
    return ch >= 'a' && ch <= 'z' ? ch - 'a' + 'A' : ch;
}

/* Environment names are case-insensitive on Windows. */
static int env_key_cmp(const char *a, const char *b)
{
    size_t la = env_key_len(a), lb = env_key_len(b), i;

    for (i = 0; i < la && i < lb; i++) {
        int ca = key_char((unsigned char)a[i]), cb = key_char((unsigned char)b[i]);

        if (ca != cb)
            return ca < cb ? -1 : 1;
    }
    return la == lb ? 0 : (la < lb ? -1 : 1);
}

static int env_sort_cmp(const void *x, const void *y)
{
    return env_key_cmp(*(const char *const *)x, *(const char *const *)y);
}

/* The child's environment block: ours minus every name an extra
 * redefines, plus the extras (a later one wins; one without '=' only
 * removes its name), sorted by name as
 * CreateProcess documents it wants, each NUL-terminated, then one more
 * NUL. */
static char *build_env_block(const char *const *env, size_t nenv, char *errbuf, size_t errcap)
{
    char *cur = GetEnvironmentStringsA(), *block = NULL, *w;
    const char **list = NULL;
    size_t n = 0, k = 0, i, j, total = 1;
    const char *p;

    for (i = 0; i < nenv; i++) {
        if (env[i] == NULL || env[i][0] == '=' || env[i][0] == '\0') {
            snprintf(errbuf, errcap, "invalid environment entry '%s' (want KEY=VALUE or KEY)",
                     env[i] != NULL ? env[i] : "(null)");
            goto out;
        }
    }
    if (cur != NULL)
        for (p = cur; *p != '\0'; p += strlen(p) + 1)
            n++;
    list = malloc((n + nenv + 1) * sizeof *list);
    if (list == NULL)
        goto oom;
    if (cur != NULL) {
        for (p = cur; *p != '\0'; p += strlen(p) + 1) {
            int overridden = 0;

            for (j = 0; j < nenv && !overridden; j++)
                overridden = env_key_cmp(p, env[j]) == 0;
            if (!overridden)
                list[k++] = p;
        }
    }
    for (i = 0; i < nenv; i++) {
        int later = 0;

        for (j = i + 1; j < nenv && !later; j++)
            later = env_key_cmp(env[i], env[j]) == 0;
        if (!later && strchr(env[i], '=') != NULL)
            list[k++] = env[i];
    }
    qsort(list, k, sizeof *list, env_sort_cmp);
    for (i = 0; i < k; i++)
        total += strlen(list[i]) + 1;
    if (k == 0)
        total++;
    block = malloc(total);
    if (block == NULL)
        goto oom;
    w = block;
    for (i = 0; i < k; i++) {
        size_t len = strlen(list[i]) + 1;

        memcpy(w, list[i], len);
        w += len;
    }
    if (k == 0)
        *w++ = '\0';
    *w = '\0';
    goto out;
oom:
    snprintf(errbuf, errcap, "out of memory");
out:
    free(list);
    if (cur != NULL)
        FreeEnvironmentStringsA(cur);
    return block;
}

/* A Windows error code as text, with POSIX wording for the common ones
 * so that messages read the same on both systems. */
static void format_win_error(DWORD code, char *buf, size_t cap)
{
    size_t n;

    if (code == ERROR_FILE_NOT_FOUND || code == ERROR_PATH_NOT_FOUND
        || code == ERROR_INVALID_NAME) {
        snprintf(buf, cap, "No such file or directory");
        return;
    }
    if (code == ERROR_ACCESS_DENIED) {
        snprintf(buf, cap, "Permission denied");
        return;
    }
    if (cap == 0)
        return;
    if (FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, code,
                       0, buf, (DWORD)(cap > 0xFFFF ? 0xFFFF : cap), NULL)
        == 0) {
        snprintf(buf, cap, "error %lu", (unsigned long)code);
        return;
    }
    n = strlen(buf);
    while (n > 0 && (buf[n - 1] == '\r' || buf[n - 1] == '\n' || buf[n - 1] == ' '
                     || buf[n - 1] == '.'))
        buf[--n] = '\0';
}

/*
 * The handles a child may inherit: our standard handles, and nothing else.
 * With bInheritHandles alone every inheritable handle of ours would go to
 * the child, a driver's socket among them (Winsock creates them
 * inheritable).  PROC_THREAD_ATTRIBUTE_HANDLE_LIST narrows inheritance to
 * the listed handles, which must themselves be inheritable: a standard
 * handle that is not (or is a pseudo-handle of an old console) is left
 * out, as are duplicates.  Returns the number listed; with none (no
 * standard handle can be inherited) the child inherits as before.
 */
static size_t std_handles(HANDLE out[3])
{
    static const DWORD ids[3] = {STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE};
    size_t n = 0, i, j;

    for (i = 0; i < 3; i++) {
        HANDLE h = GetStdHandle(ids[i]);
        DWORD flags = 0;
        int dup = 0;

        if (h == NULL || h == INVALID_HANDLE_VALUE || !GetHandleInformation(h, &flags) ||
            !(flags & HANDLE_FLAG_INHERIT))
            continue;
        for (j = 0; j < n; j++)
            dup = dup || out[j] == h;
        if (!dup)
            out[n++] = h;
    }
    return n;
}

/* CreateProcessA with inheritance limited to std_handles(); where the
 * attribute list cannot be built, plain inheritance (as before). */
static BOOL create_process(char *cmdline, void *envblock, PROCESS_INFORMATION *pi)
{
    STARTUPINFOEXA six;
    HANDLE list[3];
    size_t n = std_handles(list);
    SIZE_T size = 0;
    LPPROC_THREAD_ATTRIBUTE_LIST attrs = NULL;
    DWORD flags = CREATE_NEW_PROCESS_GROUP | CREATE_SUSPENDED;
    BOOL ok;

    memset(&six, 0, sizeof six);
    six.StartupInfo.cb = sizeof six.StartupInfo;
    if (n > 0) {
        (void)InitializeProcThreadAttributeList(NULL, 1, 0, &size);
        attrs = size > 0 ? (LPPROC_THREAD_ATTRIBUTE_LIST)malloc(size) : NULL;
        if (attrs != NULL && InitializeProcThreadAttributeList(attrs, 1, 0, &size)) {
            if (UpdateProcThreadAttribute(attrs, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, list,
                                          n * sizeof list[0], NULL, NULL)) {
                six.StartupInfo.cb = sizeof six;
                six.lpAttributeList = attrs;
                flags |= EXTENDED_STARTUPINFO_PRESENT;
            }
        } else {
            free(attrs);
            attrs = NULL;
        }
    }
    ok = CreateProcessA(NULL, cmdline, NULL, NULL, TRUE, flags, envblock, NULL,
                        &six.StartupInfo, pi);
    if (!ok && six.lpAttributeList != NULL && GetLastError() == ERROR_INVALID_PARAMETER) {
        /* A handle the system would not list after all: inherit as before. */
        six.StartupInfo.cb = sizeof six.StartupInfo;
        ok = CreateProcessA(NULL, cmdline, NULL, NULL, TRUE,
                            CREATE_NEW_PROCESS_GROUP | CREATE_SUSPENDED, envblock, NULL,
                            &six.StartupInfo, pi);
    }
    if (attrs != NULL) {
        DeleteProcThreadAttributeList(attrs);
        free(attrs);
    }
    return ok;
}

/* The child starts suspended and runs only once it is in the job, so
 * neither it nor anything it starts can escape the job's kill-on-close.
 * The job exists before the process so that no failure can leave a
 * suspended process behind unaccounted for. */
int sqlease_child_spawn(sqlease_child *c, char *const argv[], const char *const *env,
                        size_t nenv, char *errbuf, size_t errcap)
{
    return sqlease_child_spawn_ex(c, argv, env, nenv, 0, errbuf, errcap);
}

/* The child shares our console, so SQLEASE_CHILD_FOREGROUND has nothing
 * to do here. */
int sqlease_child_spawn_ex(sqlease_child *c, char *const argv[], const char *const *env,
                           size_t nenv, int flags, char *errbuf, size_t errcap)
{
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits;
    PROCESS_INFORMATION pi;
    strbuf cmd = {NULL, 0, 0};
    char *envblock = NULL, why[256], dummy[1];
    HANDLE job = NULL;
    int rc = -1;

    (void)flags;
    if (errbuf == NULL || errcap == 0) {
        errbuf = dummy;
        errcap = sizeof dummy;
    }
    errbuf[0] = '\0';
    c->process = NULL;
    c->job = NULL;
    c->running = 0;
    if (argv == NULL || argv[0] == NULL) {
        snprintf(errbuf, errcap, "no command to run");
        return -1;
    }
    if (build_command_line(&cmd, argv, errbuf, errcap) != 0)
        goto out;
    envblock = build_env_block(env, nenv, errbuf, errcap);
    if (envblock == NULL)
        goto out;
    job = CreateJobObjectA(NULL, NULL);
    memset(&limits, 0, sizeof limits);
    limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    if (job == NULL
        || !SetInformationJobObject(job, JobObjectExtendedLimitInformation, &limits,
                                    sizeof limits)) {
        format_win_error(GetLastError(), why, sizeof why);
        snprintf(errbuf, errcap, "cannot run '%s': job object: %s", argv[0], why);
        goto out;
    }
    memset(&pi, 0, sizeof pi);
    if (!create_process(cmd.s, envblock, &pi)) {
        format_win_error(GetLastError(), why, sizeof why);
        snprintf(errbuf, errcap, "cannot run '%s': %s", argv[0], why);
        goto out;
    }
    if (!AssignProcessToJobObject(job, pi.hProcess)) {
        format_win_error(GetLastError(), why, sizeof why);
        TerminateProcess(pi.hProcess, 127);
        WaitForSingleObject(pi.hProcess, INFINITE);
        CloseHandle(pi.hThread);
        CloseHandle(pi.hProcess);
        snprintf(errbuf, errcap, "cannot run '%s': job object: %s", argv[0], why);
        goto out;
    }
    ResumeThread(pi.hThread);
    CloseHandle(pi.hThread);
    c->process = pi.hProcess;
    c->job = job;
    c->running = 1;
    job = NULL;
    rc = 0;
out:
    if (job != NULL)
        CloseHandle(job);
    free(envblock);
    free(cmd.s);
    return rc;
}

/* One wait on the process and, when signals are routed, on the signal
 * event, so that a console control event ends an unbounded wait. */
int sqlease_child_wait(sqlease_child *c, int64_t timeout_ms, int *exit_code)
{
    HANDLE hs[2];
    DWORD n = 1, ms, r, code;

    if (c == NULL || !c->running || c->process == NULL)
        return -1;
    if (timeout_ms < 0)
        ms = INFINITE;
    else
        ms = timeout_ms >= (int64_t)INFINITE ? INFINITE - 1 : (DWORD)timeout_ms;
    hs[0] = (HANDLE)c->process;
    if (g_signal_event != NULL && timeout_ms != 0)
        hs[n++] = g_signal_event;
    {
        LONG seen = InterlockedCompareExchange(&g_signal_count, 0, 0);
        int64_t until = timeout_ms >= 0 ? sqlease_mono_ms() + timeout_ms : -1;

        for (;;) {
            r = WaitForMultipleObjects(n, hs, FALSE, ms);
            if (!(n == 2 && r == WAIT_OBJECT_0 + 1) ||
                InterlockedCompareExchange(&g_signal_count, 0, 0) != seen)
                break;
            /* The event a signal before this wait left set: wait on. */
            if (until >= 0) {
                int64_t left = until - sqlease_mono_ms();
                if (left <= 0) {
                    r = WAIT_TIMEOUT;
                    break;
                }
                ms = (DWORD)left;
            }
        }
    }
    if (r == WAIT_OBJECT_0) {
        if (!GetExitCodeProcess((HANDLE)c->process, &code))
            return -1;
        c->running = 0;
        if (exit_code != NULL)
            *exit_code = (int)code;
        return 1;
    }
    if (r == WAIT_TIMEOUT || (n == 2 && r == WAIT_OBJECT_0 + 1))
        return 0;
    return -1;
}

/* CTRL_BREAK goes to the child's process group (its id is the child's
 * pid, thanks to CREATE_NEW_PROCESS_GROUP); it reaches only processes
 * sharing our console, which is why the caller escalates to kill. */
void sqlease_child_terminate(sqlease_child *c)
{
    DWORD pid;

    if (c == NULL || c->process == NULL)
        return;
    pid = GetProcessId((HANDLE)c->process);
    if (pid != 0)
        GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, pid);
}

/* No job control on Windows: nothing is ever stopped, and the console
 * is shared rather than handed over. */
int sqlease_child_stopped(sqlease_child *c, int *sig)
{
    (void)c;
    (void)sig;
    return 0;
}

void sqlease_child_continue(sqlease_child *c)
{
    (void)c;
}

int sqlease_child_terminal(sqlease_child *c, int to_child)
{
    (void)c;
    (void)to_child;
    return 0;
}

void sqlease_job_suspend(int sig)
{
    (void)sig;
}

int sqlease_child_resume(sqlease_child *c, int sig)
{
    (void)c;
    (void)sig;
    return 1;
}

void sqlease_child_kill(sqlease_child *c)
{
    if (c == NULL)
        return;
    if (c->job != NULL)
        TerminateJobObject((HANDLE)c->job, 137);
    else if (c->process != NULL)
        TerminateProcess((HANDLE)c->process, 137);
}

void sqlease_child_close(sqlease_child *c)
{
    if (c == NULL)
        return;
    if (c->process != NULL)
        CloseHandle((HANDLE)c->process);
    if (c->job != NULL)
        CloseHandle((HANDLE)c->job);
    c->process = NULL;
    c->job = NULL;
    c->running = 0;
}

int sqlease_child_group_alive(const sqlease_child *c)
{
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION info;

    if (c == NULL || c->job == NULL)
        return 0;
    if (!QueryInformationJobObject((HANDLE)c->job, JobObjectBasicAccountingInformation, &info,
                                   sizeof info, NULL))
        return 0;
    return info.ActiveProcesses > 0;
}

long sqlease_child_pid(const sqlease_child *c)
{
    if (c == NULL || c->process == NULL)
        return 0;
    return (long)GetProcessId((HANDLE)c->process);
}
