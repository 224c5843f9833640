/*
 * process.c -- child processes on Win32 (see os.h).
 *
 * OS contract relied on (Windows 8 / Server 2012 or later): children run
 * in a new process group (so CTRL_BREAK reaches them and not us) and in a
 * job object with KILL_ON_JOB_CLOSE: when this process dies, for any
 * reason, the system closes the job handle and kills everything in the
 * job.  Nested jobs need Windows 8.  Inheritance is narrowed to the
 * standard handles with PROC_THREAD_ATTRIBUTE_HANDLE_LIST.
 */
#include "os_win32.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
int sqle_child_spawn(sqle_child *c, char *const argv[], const char *const *env,
                     size_t nenv, char *errbuf, size_t errcap)
{
    return sqle_child_spawn_ex(c, argv, env, nenv, 0, errbuf, errcap);
}

int sqle_child_spawn_ex(sqle_child *c, char *const argv[], const char *const *env,
                        size_t nenv, int flags, char *errbuf, size_t errcap)
{
    return sqle_child_spawn_gated(c, argv, env, nenv, flags, NULL, NULL, errbuf, errcap);
}

/* The child shares our console, so SQLEASE_CHILD_FOREGROUND has nothing
 * to do here.  It is created suspended anyway (see above): the gate
 * runs before it is resumed. */
int sqle_child_spawn_gated(sqle_child *c, char *const argv[], const char *const *env,
                           size_t nenv, int flags, sqle_child_gate_fn gate, void *gate_ud,
                           char *errbuf, size_t errcap)
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
    if (gate != NULL && gate(gate_ud, (long)GetProcessId(pi.hProcess)) != 0) {
        TerminateProcess(pi.hProcess, 127);
        WaitForSingleObject(pi.hProcess, INFINITE);
        CloseHandle(pi.hThread);
        CloseHandle(pi.hProcess);
        rc = 1;
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
int sqle_child_wait(sqle_child *c, int64_t timeout_ms, int *exit_code)
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
    if (cli_os_signal_event() != NULL && timeout_ms != 0)
        hs[n++] = cli_os_signal_event();
    {
        LONG seen = cli_os_signal_count();
        int64_t until = timeout_ms >= 0 ? sqle_mono_ms() + timeout_ms : -1;

        for (;;) {
            r = WaitForMultipleObjects(n, hs, FALSE, ms);
            if (!(n == 2 && r == WAIT_OBJECT_0 + 1) || cli_os_signal_count() != seen)
                break;
            /* The event a signal before this wait left set: wait on. */
            if (until >= 0) {
                int64_t left = until - sqle_mono_ms();
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
void sqle_child_terminate(sqle_child *c)
{
    DWORD pid;

    if (c == NULL || c->process == NULL)
        return;
    pid = GetProcessId((HANDLE)c->process);
    if (pid != 0)
        GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, pid);
}


/* No job control: nothing here is ever stopped, so nothing to continue. */
void sqle_child_continue(sqle_child *c)
{
    (void)c;
}

void sqle_child_kill(sqle_child *c)
{
    if (c == NULL)
        return;
    if (c->job != NULL)
        TerminateJobObject((HANDLE)c->job, 137);
    else if (c->process != NULL)
        TerminateProcess((HANDLE)c->process, 137);
}

void sqle_child_close(sqle_child *c)
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

int sqle_child_group_alive(const sqle_child *c)
{
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION info;

    if (c == NULL || c->job == NULL)
        return 0;
    if (!QueryInformationJobObject((HANDLE)c->job, JobObjectBasicAccountingInformation, &info,
                                   sizeof info, NULL))
        return 0;
    return info.ActiveProcesses > 0;
}

long sqle_child_pid(const sqle_child *c)
{
    if (c == NULL || c->process == NULL)
        return 0;
    return (long)GetProcessId((HANDLE)c->process);
}

int cli_os_unsetenv(const char *name)
{
    char entry[256];
    int n = snprintf(entry, sizeof entry, "%s=", name);

    if (n < 0 || (size_t)n >= sizeof entry)
        return -1;
    return _putenv(entry) == 0 ? 0 : -1;
}

/* A crontab's command is a command line for the system's shell. */
void cli_os_shell_argv(const char *line, char *argv[4])
{
    argv[0] = (char *)"cmd.exe";
    argv[1] = (char *)"/c";
    argv[2] = (char *)line;
    argv[3] = NULL;
}
