/*
 * test_cli_win.c -- sqlease.exe on Windows, used as a user uses it:
 * started with CreateProcess, its exit status and output checked.
 * ci/windows.sh runs it under Wine, with sqlease.exe and lease_child.exe
 * (the CMD, tests/win/lease_child.c) beside it and nothing else: no
 * sqlease.dll, so the .exe is shown to run on its own.
 *
 * The database is an SQLite file in the work directory, named relative to
 * it (under Wine the host's driver opens it relative to the same
 * directory).  The checks follow one lease row through its life, in
 * order: migrate seeds its token from the database clock (T0), and every
 * take adds one, so the run is T0+1, `cmd /c` T0+2, the killed run T0+3
 * and supervise T0+4.
 *
 * Each sqlease.exe run writes NAME.out and NAME.err in the work
 * directory; a failed check prints them.  The program runs itself as a
 * CMD with "--child write-handle HANDLE".  Prints one PASS or FAIL line
 * per check and leaves its counts in a result file (wintest.h).
 *
 * Under Wine, the DSN of the registry check is defined for the host's
 * unixODBC, which Wine's odbc32 hands connections to: in the odbc.ini
 * file named by ODBCINI, which this program writes.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "platform.h"
#include "sqlease.h"
#include "wintest.h"

#define DSN "Driver=SQLite3;Database=w.db"
#define RUN_TIMEOUT_MS 30000
#define START_TIMEOUT_MS 20000

static char g_self[MAX_PATH];
static char g_exe[MAX_PATH + 16]; /* sqlease.exe, beside this program */
static int64_t g_token0;          /* the row's token after migrate; -1 if unknown */

/* The last run's output, carriage returns removed. */
static char g_out[65536];
static char g_err[65536];

/* ---- running sqlease.exe ----------------------------------------------- */

static HANDLE open_inheritable(const char *path, int write)
{
    SECURITY_ATTRIBUTES sa;

    memset(&sa, 0, sizeof sa);
    sa.nLength = sizeof sa;
    sa.bInheritHandle = TRUE;
    return CreateFileA(path, write ? GENERIC_WRITE : GENERIC_READ,
                       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, &sa,
                       write ? CREATE_ALWAYS : OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
}

/* Start `sqlease.exe ARGS` with stdin from NUL and stdout, stderr to
 * NAME.out, NAME.err; every inheritable handle of ours goes to it, as
 * from any parent.  It shares our console.  Returns 0, or -1 after
 * failing the current check. */
static int start(const char *name, const char *args, PROCESS_INFORMATION *pi)
{
    char cmdline[4096], path[MAX_PATH];
    STARTUPINFOA si;
    HANDLE in, out, err;
    BOOL ok;

    snprintf(cmdline, sizeof cmdline, "\"%s\" %s", g_exe, args);
    snprintf(path, sizeof path, "%s.out", name);
    out = open_inheritable(path, 1);
    snprintf(path, sizeof path, "%s.err", name);
    err = open_inheritable(path, 1);
    in = open_inheritable("NUL", 0);
    memset(&si, 0, sizeof si);
    si.cb = sizeof si;
    si.dwFlags = STARTF_USESTDHANDLES;
    si.hStdInput = in;
    si.hStdOutput = out;
    si.hStdError = err;
    ok = out != INVALID_HANDLE_VALUE && err != INVALID_HANDLE_VALUE &&
         in != INVALID_HANDLE_VALUE &&
         CreateProcessA(NULL, cmdline, NULL, NULL, TRUE, 0, NULL, NULL, &si, pi);
    WT_CHECKF(ok, "cannot start %s (error %lu)", cmdline, (unsigned long)GetLastError());
    if (out != INVALID_HANDLE_VALUE)
        CloseHandle(out);
    if (err != INVALID_HANDLE_VALUE)
        CloseHandle(err);
    if (in != INVALID_HANDLE_VALUE)
        CloseHandle(in);
    return ok ? 0 : -1;
}

/* The file's text without carriage returns ("" if it cannot be read). */
static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n = 0, i, j;

    if (f != NULL) {
        n = fread(buf, 1, cap - 1, f);
        fclose(f);
    }
    for (i = j = 0; i < n; i++)
        if (buf[i] != '\r')
            buf[j++] = buf[i];
    buf[j] = '\0';
}

static void load_output(const char *name)
{
    char path[MAX_PATH];

    snprintf(path, sizeof path, "%s.out", name);
    slurp(path, g_out, sizeof g_out);
    snprintf(path, sizeof path, "%s.err", name);
    slurp(path, g_err, sizeof g_err);
}

/* Wait for a started process (killing it after timeout_ms), load its
 * output and return its exit status, or -1 if it had to be killed. */
static int finish(const char *name, PROCESS_INFORMATION *pi, DWORD timeout_ms)
{
    DWORD code = (DWORD)-1;
    int timed_out = WaitForSingleObject(pi->hProcess, timeout_ms) != WAIT_OBJECT_0;

    if (timed_out) {
        TerminateProcess(pi->hProcess, 1);
        WaitForSingleObject(pi->hProcess, 5000);
    } else {
        GetExitCodeProcess(pi->hProcess, &code);
    }
    CloseHandle(pi->hProcess);
    CloseHandle(pi->hThread);
    load_output(name);
    WT_CHECKF(!timed_out, "sqlease.exe (%s) still running after %lu ms: killed", name,
              (unsigned long)timeout_ms);
    return timed_out ? -1 : (int)code;
}

/* Run `sqlease.exe ARGS` to its end; its exit status, or -1. */
static int run(const char *name, const char *args)
{
    PROCESS_INFORMATION pi;

    g_out[0] = g_err[0] = '\0';
    if (start(name, args, &pi) != 0)
        return -1;
    return finish(name, &pi, RUN_TIMEOUT_MS);
}

/* Print a run's output, for a failed check. */
static void show(const char *name)
{
    static const char *const ext[] = {"out", "err"};
    char path[MAX_PATH], line[1024];
    int i, n;
    FILE *f;

    for (i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s.%s", name, ext[i]);
        f = fopen(path, "r");
        if (f == NULL)
            continue;
        printf("  ---- %s\n", path);
        for (n = 0; n < 40 && fgets(line, sizeof line, f) != NULL; n++)
            printf("    %s%s", line, strchr(line, '\n') != NULL ? "" : "\n");
        fclose(f);
    }
    fflush(stdout);
}

/* ---- status --json ----------------------------------------------------- */

/* The number after "key": in a one-line JSON object (the keys of
 * `status --json` are unique and not nested). */
static int json_int(const char *json, const char *key, int64_t *v)
{
    char pat[64], *end;
    const char *p;

    snprintf(pat, sizeof pat, "\"%s\":", key);
    p = strstr(json, pat);
    if (p == NULL)
        return 0;
    p += strlen(pat);
    *v = strtoll(p, &end, 10);
    return end != p;
}

/* `status --json` into NAME; 1 if it exits 0 and every fixed string is
 * in its output and the token is want_token (any token when want_token
 * is negative).  Fails the current check otherwise, and shows why. */
static int status_is(const char *name, int64_t want_token, const char *const *has, size_t n)
{
    int64_t token = -1;
    int code = run(name, "--dsn " DSN " status --json");
    int ok = WT_CHECKF(code == 0, "status --json exited %d, want 0", code);
    size_t i;

    for (i = 0; ok && i < n; i++)
        ok = WT_CHECKF(strstr(g_out, has[i]) != NULL, "status --json lacks %s", has[i]);
    if (ok && want_token >= 0)
        ok = WT_CHECKF(json_int(g_out, "token", &token) && token == want_token,
                       "status --json token %" PRId64 ", want %" PRId64, token, want_token);
    if (!ok)
        show(name);
    return ok;
}

#define STATUS_IS(name, token, ...)                                                    \
    status_is(name, token, (const char *const[]){__VA_ARGS__},                        \
              sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

/* ---- waiting for CMD --------------------------------------------------- */

/* The pid lease_child.exe wrote to path, once it has (0 after timeout_ms,
 * or as soon as the process that was to start it has ended). */
static long await_pidfile(const char *path, HANDLE starter, int64_t timeout_ms)
{
    int64_t end = sqle_mono_ms() + timeout_ms;
    long pid = 0;

    for (;;) {
        FILE *f = fopen(path, "r");
        if (f != NULL) {
            if (fscanf(f, "%ld", &pid) != 1)
                pid = 0;
            fclose(f);
        }
        if (pid > 0 || sqle_mono_ms() >= end ||
            WaitForSingleObject(starter, 0) == WAIT_OBJECT_0)
            return pid;
        sqle_sleep_ms(50);
    }
}

/* 1 once the process has ended within ms (or cannot be opened: gone). */
static int gone_within(HANDLE h, DWORD ms)
{
    return h == NULL || WaitForSingleObject(h, ms) == WAIT_OBJECT_0;
}

/* Stop a background sqlease.exe that a failed check left running. */
static void kill_started(PROCESS_INFORMATION *pi)
{
    TerminateProcess(pi->hProcess, 1);
    WaitForSingleObject(pi->hProcess, 5000);
    CloseHandle(pi->hProcess);
    CloseHandle(pi->hThread);
}

/* ---- checks ------------------------------------------------------------ */

static void test_version(void)
{
    int code = run("version", "--version");

    if (!WT_CHECKF(code == 0 && strcmp(g_out, "sqlease " SQLEASE_VERSION "\n") == 0,
                   "--version: exit %d, want 0 and 'sqlease %s'", code, SQLEASE_VERSION))
        show("version");
}

static void test_migrate(void)
{
    int code = run("migrate", "--dsn " DSN " migrate");

    if (!WT_CHECKF(code == 0 && strstr(g_out, "migrated table sys_job_lease") != NULL,
                   "migrate: exit %d, want 0 and 'migrated table sys_job_lease'", code))
        show("migrate");
}

/* The new row is free, and its token comes from the database clock:
 * above 0 and not after the status's own reading of that clock. */
static void test_status_after_migrate(void)
{
    int64_t now = -1;

    g_token0 = -1;
    if (!STATUS_IS("status0", -1, "\"held\":false", "\"name\":\"scheduler\"",
                   "\"dialect\":\"sqlite\""))
        return;
    WT_CHECK(json_int(g_out, "token", &g_token0));
    WT_CHECK(json_int(g_out, "db_now_ms", &now));
    if (!WT_CHECKF(g_token0 > 0 && g_token0 <= now,
                   "token %" PRId64 " is not seeded from the clock (db_now_ms %" PRId64 ")",
                   g_token0, now)) {
        show("status0");
        g_token0 = -1;
    }
}

/* CMD gets the token and the lease name in its environment, and its exit
 * status comes back. */
static void test_run_token(void)
{
    char want[64];
    int code;

    if (!WT_CHECKF(g_token0 > 0, "no token from the status after migrate"))
        return;
    code = run("run1", "--dsn " DSN " run -- lease_child.exe 3");
    snprintf(want, sizeof want, "SQLEASE_TOKEN=%" PRId64 "\n", g_token0 + 1);
    if (!WT_CHECKF(code == 3 && strstr(g_out, want) != NULL &&
                   strstr(g_out, "SQLEASE_NAME=scheduler\n") != NULL,
                   "run -- lease_child.exe 3: exit %d, want 3 and %.*s", code,
                   (int)strlen(want) - 1, want))
        show("run1");
}

/* Then the row is free again, with that token. */
static void test_status_after_run(void)
{
    if (WT_CHECKF(g_token0 > 0, "no token from the status after migrate"))
        (void)STATUS_IS("status1", g_token0 + 1, "\"held\":false", "\"owner\":\"\"");
}

static void test_run_cmd_exe(void)
{
    int code;

    if (!WT_CHECKF(g_token0 > 0, "no token from the status after migrate"))
        return;
    code = run("run2", "--dsn " DSN " run -- cmd /c exit 0");
    if (!WT_CHECKF(code == 0, "run -- cmd /c exit 0: exit %d, want 0", code))
        show("run2");
    (void)STATUS_IS("status2", g_token0 + 2, "\"held\":false");
}

static void test_unknown_driver(void)
{
    int code = run("baddsn", "--dsn Driver=NoSuchDriver;Database=x.db status");

    if (!WT_CHECKF(code == 69 && strstr(g_err, "NoSuchDriver") != NULL,
                   "status with an unknown ODBC driver: exit %d, want 69 naming the driver",
                   code))
        show("baddsn");
    else
        printf("  %.*s\n", (int)strcspn(g_err, "\n"), g_err);
}

/* sqlease killed outright while CMD runs: the job object takes CMD with
 * it.  The lease stays held by the dead owner until its ttl, which the
 * next check relies on. */
static void test_cmd_dies_with_sqlease(void)
{
    PROCESS_INFORMATION pi;
    HANDLE cmd;
    long pid;

    if (!WT_CHECKF(g_token0 > 0, "no token from the status after migrate"))
        return;
    remove("kill.pid");
    if (start("kill", "--dsn " DSN " run -- lease_child.exe 0 600000 kill.pid", &pi) != 0)
        return;
    pid = await_pidfile("kill.pid", pi.hProcess, START_TIMEOUT_MS);
    if (!WT_CHECKF(pid > 0, "CMD did not start within %d ms", START_TIMEOUT_MS)) {
        kill_started(&pi);
        show("kill");
        return;
    }
    cmd = OpenProcess(SYNCHRONIZE, FALSE, (DWORD)pid);
    WT_CHECKF(cmd != NULL, "cannot open CMD (pid %ld): error %lu", pid,
              (unsigned long)GetLastError());
    WT_CHECK(!gone_within(cmd, 0));
    (void)STATUS_IS("status-held", g_token0 + 3, "\"held\":true");
    WT_CHECK(TerminateProcess(pi.hProcess, 9));
    WT_CHECK(WaitForSingleObject(pi.hProcess, 5000) == WAIT_OBJECT_0);
    CloseHandle(pi.hProcess);
    CloseHandle(pi.hThread);
    WT_CHECKF(gone_within(cmd, 5000), "CMD still running 5 s after sqlease.exe was killed");
    if (cmd != NULL) {
        TerminateProcess(cmd, 1); /* a failed check leaves nothing behind */
        CloseHandle(cmd);
    }
}

static void test_no_wait_against_held(void)
{
    int code = run("nowait", "--dsn " DSN " run --no-wait -- lease_child.exe 0");

    if (!WT_CHECKF(code == 75 && strstr(g_out, "SQLEASE_TOKEN") == NULL,
                   "run --no-wait against a held lease: exit %d, want 75 and CMD not run",
                   code))
        show("nowait");
}

static void test_release_force(void)
{
    int code;

    if (!WT_CHECKF(g_token0 > 0, "no token from the status after migrate"))
        return;
    code = run("force", "--dsn " DSN " release --force");
    if (!WT_CHECKF(code == 0, "release --force: exit %d, want 0", code))
        show("force");
    (void)STATUS_IS("status3", g_token0 + 3, "\"held\":false");
}

/* Ctrl-C, as a console user sends it, reaches every process on the
 * console: sqlease stops CMD (killed after the 1 s grace, where the
 * CTRL_BREAK it sends cannot reach it), releases the lease and exits 0.
 * CMD, in a process group of its own, ignores the Ctrl-C itself. */
static void test_supervise_ctrl_c(void)
{
    PROCESS_INFORMATION pi;
    HANDLE cmd;
    int code;
    long pid;

    if (!WT_CHECKF(g_token0 > 0, "no token from the status after migrate"))
        return;
    remove("sup.pid");
    if (start("sup", "--dsn " DSN " supervise --kill-grace 1s -- lease_child.exe 0 600000 sup.pid",
              &pi) != 0)
        return;
    pid = await_pidfile("sup.pid", pi.hProcess, START_TIMEOUT_MS);
    if (!WT_CHECKF(pid > 0, "supervise did not start CMD within %d ms", START_TIMEOUT_MS)) {
        kill_started(&pi);
        show("sup");
        return;
    }
    cmd = OpenProcess(SYNCHRONIZE, FALSE, (DWORD)pid);
    WT_CHECKF(cmd != NULL, "cannot open CMD (pid %ld): error %lu", pid,
              (unsigned long)GetLastError());
    (void)STATUS_IS("status-sup", g_token0 + 4, "\"held\":true");
    WT_CHECKF(GenerateConsoleCtrlEvent(CTRL_C_EVENT, 0), "GenerateConsoleCtrlEvent: error %lu",
              (unsigned long)GetLastError());
    code = finish("sup", &pi, 10000);
    if (!WT_CHECKF(code == 0, "supervise after Ctrl-C: exit %d, want 0", code))
        show("sup");
    WT_CHECKF(gone_within(cmd, 5000), "CMD still running 5 s after supervise exited");
    if (cmd != NULL) {
        TerminateProcess(cmd, 1);
        CloseHandle(cmd);
    }
    (void)STATUS_IS("status4", g_token0 + 4, "\"held\":false");
}

/* A DSN's lease settings are values of its key under
 * Software\ODBC\ODBC.INI, where Windows keeps odbc.ini and where
 * SQLGetPrivateProfileString reads them. */
static void test_dsn_registry(void)
{
    static const char *const values[][2] = {{"SqleaseName", "from-registry"},
                                            {"SqleaseTTL", "45s"}};
    const char *key = "Software\\ODBC\\ODBC.INI\\sqlease-win";
    const char *ini = getenv("ODBCINI");
    HKEY k;
    size_t i;
    int code;
    FILE *f;

    /* The DSN itself, for the host's unixODBC under Wine. */
    if (!WT_CHECKF(ini != NULL && ini[0] != '\0',
                   "ODBCINI is not set: under Wine, the DSN sqlease-win is defined in the "
                   "odbc.ini it names"))
        return;
    f = fopen(ini, "w");
    if (!WT_CHECKF(f != NULL, "cannot write %s", ini))
        return;
    fprintf(f, "[sqlease-win]\nDriver = SQLite3\nDatabase = dsn.db\n");
    if (!WT_CHECKF(fclose(f) == 0, "cannot write %s", ini))
        return;

    if (!WT_CHECK(RegCreateKeyExA(HKEY_CURRENT_USER, key, 0, NULL, 0, KEY_SET_VALUE, NULL, &k,
                                  NULL) == ERROR_SUCCESS))
        return;
    for (i = 0; i < sizeof values / sizeof values[0]; i++)
        WT_CHECK(RegSetValueExA(k, values[i][0], 0, REG_SZ, (const BYTE *)values[i][1],
                                (DWORD)strlen(values[i][1]) + 1) == ERROR_SUCCESS);
    RegCloseKey(k);

    code = run("dsnmig", "--dsn sqlease-win migrate");
    if (!WT_CHECKF(code == 0, "--dsn sqlease-win migrate: exit %d, want 0", code))
        show("dsnmig");
    code = run("dsnrun", "--dsn sqlease-win -v run -- lease_child.exe 0");
    if (!WT_CHECKF(code == 0 && strstr(g_out, "SQLEASE_NAME=from-registry\n") != NULL &&
                   strstr(g_err, "ttl 45000ms") != NULL,
                   "--dsn sqlease-win run: exit %d, want 0, name from-registry, ttl 45000ms",
                   code))
        show("dsnrun");
    (void)RegDeleteKeyA(HKEY_CURRENT_USER, key);
}

static void test_demo_refused(void)
{
    int code = run("demo", "demo");

    if (!WT_CHECKF(code == 69 && strstr(g_err, "Windows") != NULL,
                   "demo: exit %d, want 69 and a message naming Windows", code))
        show("demo");
}

/* CMD inherits sqlease's standard handles and nothing else, not even a
 * handle sqlease itself inherited: the write end of our pipe goes to
 * sqlease.exe, and CMD (this program, "--child write-handle") tries to
 * write to it by its number.  With every write end closed, the pipe must
 * be empty. */
static void test_cmd_inherits_std_handles_only(void)
{
    SECURITY_ATTRIBUTES sa;
    HANDLE r = NULL, w = NULL;
    char args[MAX_PATH + 256];
    DWORD avail = 99;
    int code;

    memset(&sa, 0, sizeof sa);
    sa.nLength = sizeof sa;
    sa.bInheritHandle = TRUE;
    if (!WT_CHECK(CreatePipe(&r, &w, &sa, 0)))
        return;
    WT_CHECK(SetHandleInformation(r, HANDLE_FLAG_INHERIT, 0));
    snprintf(args, sizeof args, "--dsn " DSN " run -- \"%s\" --child write-handle %llx", g_self,
             (unsigned long long)(uintptr_t)w);
    code = run("handles", args);
    CloseHandle(w);
    if (!WT_CHECKF(code == 0, "run -- test_cli_win.exe --child write-handle: exit %d, want 0",
                   code))
        show("handles");
    if (!PeekNamedPipe(r, NULL, 0, NULL, &avail, NULL)) {
        WT_CHECK(GetLastError() == ERROR_BROKEN_PIPE);
        avail = 0;
    }
    WT_CHECKF(avail == 0, "CMD wrote %lu byte(s) to a handle it should not have inherited",
              (unsigned long)avail);
    CloseHandle(r);
}

/* ---- main -------------------------------------------------------------- */

/* As a CMD: write a byte to a handle by its number (it arrives only if
 * the handle was inherited).  Exits 0 either way. */
static int child_main(int argc, char **argv)
{
    if (argc > 3 && strcmp(argv[2], "write-handle") == 0) {
        HANDLE h = (HANDLE)(uintptr_t)strtoull(argv[3], NULL, 16);
        DWORD n = 0;

        (void)WriteFile(h, "x", 1, &n, NULL);
        return 0;
    }
    fprintf(stderr, "unknown child mode\n");
    return 99;
}

/* Our own Ctrl-C is the one the supervise check sends. */
static BOOL WINAPI ignore_ctrl_c(DWORD type)
{
    return type == CTRL_C_EVENT;
}

/* A console of our own, which the sqlease.exe processes we start share:
 * Ctrl-C reaches only processes on the sender's console, and a program
 * started without a terminal (as under Wine with its output in a pipe)
 * has none it can use.  Our standard handles stay where they were. */
static void own_console(void)
{
    HANDLE in = GetStdHandle(STD_INPUT_HANDLE);
    HANDLE out = GetStdHandle(STD_OUTPUT_HANDLE);
    HANDLE err = GetStdHandle(STD_ERROR_HANDLE);

    (void)FreeConsole();
    if (!AllocConsole())
        printf("INFO AllocConsole: error %lu\n", (unsigned long)GetLastError());
    SetStdHandle(STD_INPUT_HANDLE, in);
    SetStdHandle(STD_OUTPUT_HANDLE, out);
    SetStdHandle(STD_ERROR_HANDLE, err);
    SetConsoleCtrlHandler(ignore_ctrl_c, TRUE);
}

int main(int argc, char **argv)
{
    DWORD n = GetModuleFileNameA(NULL, g_self, sizeof g_self);
    char *slash;

    if (n == 0 || n >= sizeof g_self)
        snprintf(g_self, sizeof g_self, "%s", argv[0]);
    if (argc > 2 && strcmp(argv[1], "--child") == 0)
        return child_main(argc, argv);
    snprintf(g_exe, sizeof g_exe, "%s", g_self);
    slash = strrchr(g_exe, '\\');
    snprintf(slash != NULL ? slash + 1 : g_exe,
             sizeof g_exe - (size_t)(slash != NULL ? slash + 1 - g_exe : 0), "sqlease.exe");
    own_console();

    wt_run("sqlease.exe --version", test_version);
    wt_run("migrate", test_migrate);
    wt_run("status --json after migrate: free, token from the clock", test_status_after_migrate);
    wt_run("run -- lease_child.exe 3: exit 3, CMD saw the next token", test_run_token);
    wt_run("status --json after run: released, same token", test_status_after_run);
    wt_run("run -- cmd /c exit 0: exit 0, next token", test_run_cmd_exe);
    wt_run("an unknown ODBC driver: exit 69", test_unknown_driver);
    wt_run("CMD dies when sqlease.exe is killed (job object, kill on close)",
           test_cmd_dies_with_sqlease);
    wt_run("run --no-wait while another owner holds the lease: exit 75, CMD not run",
           test_no_wait_against_held);
    wt_run("release --force: free again, same token", test_release_force);
    wt_run("supervise: Ctrl-C stops CMD, releases the lease, exit 0", test_supervise_ctrl_c);
    wt_run("DSN lease settings from the registry's ODBC.INI (SqleaseName, SqleaseTTL)",
           test_dsn_registry);
    wt_run("demo: refused on Windows with a message, exit 69", test_demo_refused);
    wt_run("CMD inherits only the standard handles", test_cmd_inherits_std_handles_only);
    return wt_finish("test_cli_win");
}
