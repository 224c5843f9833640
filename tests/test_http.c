/*
 * test_http.c -- `--http`, black-box: the real binary ($SQLEASE_BIN) runs
 * `supervise --http 127.0.0.1:0` (a free port, which its log names),
 * `status --watch --http` or `cron --http`, and a plain socket client
 * here asks its
 * endpoints with HTTP/1.0 requests and reads the status line, the headers
 * and the body: /metrics, /health, /leader, /holder, 404 and 405;
 * /leader 200 on exactly one of two instances across a SIGKILL and a
 * SIGTERM of the holder; /health 503 while the database does not answer
 * and 200 again once it does; the flag's usage errors and a port in use;
 * `cron --http`: /leader 200 on the daemon that holds, with the row's
 * token, 503 on a second one that stands by, /holder naming the first,
 * the fires claimed counted up in /metrics as an @every 1s job fires, and
 * the hand-over after a SIGTERM.
 *
 * The database is the one under test ($SQLEASE_TEST_DSN, else an SQLite
 * file in the scratch directory), each test on a table of its own.  Every
 * process started is waited for, or killed by its pid.  A build without
 * HTTP support (no libmicrohttpd) answers --http with a usage error: the
 * suite then checks that message and skips the rest (a failure under
 * CI=true, where the package is installed).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "platform.h"
#include "testutil.h"

#define MAX_ARGS 48
#define MAX_BG 8

static sqlease_db *db;
static const char *g_bin;
static char g_table[64];
static pid_t g_bg[MAX_BG];
static int g_seq;
static int g_http; /* the binary serves HTTP */

/* Short, valid timings with room on a loaded machine (a watch before a
 * take waits a ttl: a hand-over after a SIGKILL takes up to about two). */
#define TIMING "--ttl", "3s", "--heartbeat", "500ms", "--renew-deadline", "1500ms", \
               "--retry", "250ms"

/* ---- processes ------------------------------------------------------ */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    if (f == NULL)
        return strdup("");
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)(n > 0 ? n : 0) + 1);
    if (buf == NULL) {
        fclose(f);
        return NULL;
    }
    n = (long)fread(buf, 1, (size_t)(n > 0 ? n : 0), f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void path_in(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", tu_dir(), name);
}

/* fork + exec argv in the scratch directory, stdout to out_path, stderr
 * to err_path. */
static pid_t spawn(char *const *argv, const char *out_path, const char *err_path)
{
    pid_t pid = fork();

    if (pid != 0)
        return pid;
    {
        int in = open("/dev/null", O_RDONLY);
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int err = open(err_path, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
            dup2(err, 2) < 0 || chdir(tu_dir()) != 0)
            _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
}

static int wait_pid(pid_t pid, int64_t timeout_ms)
{
    int64_t deadline = sqle_mono_ms() + timeout_ms;
    int st;

    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (r < 0 && errno != EINTR)
            return -1;
        if (sqle_mono_ms() >= deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        sqle_sleep_ms(5);
    }
}

/* argv: the binary, --dsn (dsn, or the one under test) and --table of
 * this test, then the arguments. */
static void build_argv(char **argv, const char *dsn, va_list ap)
{
    int n = 0;
    const char *a;

    argv[n++] = (char *)g_bin;
    argv[n++] = "--dsn";
    argv[n++] = (char *)(dsn != NULL ? dsn : tu_dsn());
    argv[n++] = "--table";
    argv[n++] = g_table;
    while ((a = va_arg(ap, const char *)) != NULL && n < MAX_ARGS - 1)
        argv[n++] = (char *)a;
    argv[n] = NULL;
}

typedef struct result {
    int code;
    char *out, *err;
} result;

static void result_free(result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

/* Run sqlease to its end (at most 60 s). */
static void run(result *r, ...)
{
    char *argv[MAX_ARGS];
    char out[1100], err[1100];
    va_list ap;
    pid_t pid;

    va_start(ap, r);
    build_argv(argv, NULL, ap);
    va_end(ap);
    snprintf(out, sizeof out, "%s/out.%d", tu_dir(), ++g_seq);
    snprintf(err, sizeof err, "%s/err.%d", tu_dir(), g_seq);
    pid = spawn(argv, out, err);
    r->code = pid > 0 ? wait_pid(pid, 60000) : -1;
    r->out = slurp(out);
    r->err = slurp(err);
    unlink(out);
    unlink(err);
}

/* Start sqlease in the background with its stderr in err_path (stdout
 * beside it, ".out"); the pid is remembered for the clean-up. */
static pid_t start_bg_dsn(const char *err_path, const char *dsn, ...)
{
    char *argv[MAX_ARGS];
    char out[1200];
    va_list ap;
    pid_t pid;

    va_start(ap, dsn);
    build_argv(argv, dsn, ap);
    va_end(ap);
    snprintf(out, sizeof out, "%s.out", err_path);
    pid = spawn(argv, out, err_path);
    for (int i = 0; i < MAX_BG && pid > 0; i++)
        if (g_bg[i] == 0) {
            g_bg[i] = pid;
            break;
        }
    return pid;
}

#define start_bg(err_path, ...) start_bg_dsn((err_path), NULL, __VA_ARGS__)

static int stop_bg(pid_t pid, int sig)
{
    int code;

    if (pid <= 0)
        return -1;
    kill(pid, sig);
    code = wait_pid(pid, 30000);
    for (int i = 0; i < MAX_BG; i++)
        if (g_bg[i] == pid)
            g_bg[i] = 0;
    return code;
}

static void kill_all_bg(void)
{
    for (int i = 0; i < MAX_BG; i++)
        if (g_bg[i] > 0) {
            kill(g_bg[i], SIGKILL);
            waitpid(g_bg[i], NULL, 0);
            g_bg[i] = 0;
        }
}

/* Wait until the file contains needle. */
static int await_text(const char *path, const char *needle, int64_t timeout_ms)
{
    int64_t deadline = sqle_mono_ms() + timeout_ms;

    for (;;) {
        char *s = slurp(path);
        int found = s != NULL && strstr(s, needle) != NULL;
        free(s);
        if (found)
            return 1;
        if (sqle_mono_ms() >= deadline)
            return 0;
        sqle_sleep_ms(20);
    }
}

/* The port a process started with --http 127.0.0.1:0 got, from the line
 * its log says it on; 0 if it has not said it within 15 s. */
static int await_port(const char *err_path)
{
    static const char mark[] = "and /holder on http://127.0.0.1:";
    char *s, *p;
    int port = 0;

    if (!await_text(err_path, mark, 15000))
        return 0;
    s = slurp(err_path);
    p = s != NULL ? strstr(s, mark) : NULL;
    if (p != NULL)
        port = atoi(p + strlen(mark));
    free(s);
    return port;
}

#define ASSERT_CONTAINS(hay, needle)                                                     \
    do {                                                                                 \
        int found_ = (hay) != NULL && strstr((hay), (needle)) != NULL;                   \
        if (!found_)                                                                     \
            fprintf(stderr, "\n  expected '%s' in: %s\n", (needle), (hay) ? (hay) : "(null)"); \
        CU_ASSERT(found_);                                                               \
    } while (0)

#define ASSERT_CODE(r, want)                                                             \
    do {                                                                                 \
        if ((r).code != (want))                                                          \
            fprintf(stderr, "\n  exit %d, want %d; stdout: %s stderr: %s\n", (r).code,    \
                    (want), (r).out, (r).err);                                           \
        CU_ASSERT_EQUAL((r).code, (want));                                               \
    } while (0)

static void new_table(const char *name)
{
    snprintf(g_table, sizeof g_table, "%s", tu_table());
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, g_table, name), SQLEASE_OK);
}

/* ---- the client ------------------------------------------------------ */

typedef struct reply {
    int status;     /* the status line's code; -1 no answer (refused, cut) */
    char *head;     /* the status line and headers */
    char *body;
} reply;

static void reply_free(reply *r)
{
    free(r->head);
    free(r->body);
    r->head = r->body = NULL;
}

/*
 * One HTTP/1.0 request to 127.0.0.1:port, read to the end of the
 * connection (HTTP/1.0: the server closes it after the answer), within
 * 10 s.  body: sent after the headers, with its Content-Length ("" none).
 */
static void http_body(reply *r, int port, const char *method, const char *path,
                      const char *body)
{
    struct sockaddr_in sa;
    struct timeval tv = {10, 0};
    char req[1024], *buf = NULL, *sep;
    size_t len = 0, cap = 0;
    int fd;

    memset(r, 0, sizeof *r);
    r->status = -1;
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return;
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (body[0] != '\0')
        snprintf(req, sizeof req, "%s %s HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Length: %zu"
                 "\r\n\r\n%s", method, path, strlen(body), body);
    else
        snprintf(req, sizeof req, "%s %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", method, path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req)) {
        close(fd);
        return;
    }
    for (;;) {
        ssize_t n;
        if (len + 4096 + 1 > cap) {
            char *p = realloc(buf, cap = len + 8192);
            if (p == NULL)
                break;
            buf = p;
        }
        n = recv(fd, buf + len, cap - len - 1, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    if (buf == NULL)
        return;
    buf[len] = '\0';
    sep = strstr(buf, "\r\n\r\n");
    if (sep != NULL && strncmp(buf, "HTTP/1.", 7) == 0 && strlen(buf) > 12) {
        *sep = '\0';
        r->status = atoi(buf + 9);
        r->head = strdup(buf);
        r->body = strdup(sep + 4);
    }
    free(buf);
    if (r->head == NULL)
        r->head = strdup("");
    if (r->body == NULL)
        r->body = strdup("");
}

static void http(reply *r, int port, const char *method, const char *path)
{
    http_body(r, port, method, path, "");
}

#define ASSERT_STATUS(r, want, what)                                                     \
    do {                                                                                 \
        if ((r).status != (want))                                                        \
            fprintf(stderr, "\n  %s: status %d, want %d; head: %s body: %s\n", (what),     \
                    (r).status, (want), (r).head, (r).body);                             \
        CU_ASSERT_EQUAL((r).status, (want));                                             \
    } while (0)

/* The status of GET path, or -1. */
static int status_of(int port, const char *path)
{
    reply r;
    int st;

    http(&r, port, "GET", path);
    st = r.status;
    reply_free(&r);
    return st;
}

/* Poll GET path every 50 ms until it answers `want` (at most timeout_ms). */
static int await_status(int port, const char *path, int want, int64_t timeout_ms)
{
    int64_t deadline = sqle_mono_ms() + timeout_ms;

    for (;;) {
        if (status_of(port, path) == want)
            return 1;
        if (sqle_mono_ms() >= deadline)
            return 0;
        sqle_sleep_ms(50);
    }
}

/* A JSON member `"key":value` as /holder writes it (no spaces). */
static void member(char *buf, size_t cap, const char *key, const char *value)
{
    snprintf(buf, cap, "\"%s\":%s", key, value);
}

/* ---- the flag ---------------------------------------------------------- */

static void test_flag(void)
{
    static const char *const bad[][2] = {
        {"127.0.0.1:65536", "the port must be a number from 0 to 65535"},
        {"127.0.0.1:", "the port must be a number"},
        {"0.0.0.0:80x", "the port must be a number"},
        {":8080", "the address before the port is missing"},
        {"localhost:8080", "'localhost' is not a numeric IPv4 address"},
        {"10.0.0:8080", "'10.0.0' is not a numeric IPv4 address"},
        {"::1:8080", "an IPv6 address goes in brackets"},
        {"[::1]8080", "the port after the ']'"},
        {"[127.0.0.1]:8080", "brackets are for an IPv6 address"},
        {"", "--http: empty"},
    };
    result res;
    char want[200];

    new_table("job");
    if (!g_http) {
        run(&res, "--name", "job", TIMING, "supervise", "--http", "127.0.0.1:0", "--", "true",
            NULL);
        ASSERT_CODE(res, 64);
        ASSERT_CONTAINS(res.err, "has no HTTP support");
        result_free(&res);
        tu_skip("this sqlease is built without HTTP support (libmicrohttpd-dev)");
        tu_drop(db, g_table);
        return;
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run(&res, "--name", "job", TIMING, "supervise", "--http", bad[i][0], "--", "true", NULL);
        ASSERT_CODE(res, 64);
        snprintf(want, sizeof want, "sqlease: --http%s%s%s", bad[i][0][0] ? " '" : "",
                 bad[i][0], bad[i][0][0] ? "'" : "");
        ASSERT_CONTAINS(res.err, want);
        ASSERT_CONTAINS(res.err, bad[i][1]);
        /* A usage error, before the database: the row was never taken. */
        CU_ASSERT_PTR_NULL(strstr(res.err, "held"));
        result_free(&res);
    }
    run(&res, "--name", "job", "status", "--http", "127.0.0.1:0", NULL);
    ASSERT_CODE(res, 64);
    ASSERT_CONTAINS(res.err, "it needs --watch");
    result_free(&res);
    run(&res, "--name", "job", TIMING, "run", "--http", "127.0.0.1:0", "--", "true", NULL);
    ASSERT_CODE(res, 64);
    ASSERT_CONTAINS(res.err, "--http");
    result_free(&res);
    tu_drop(db, g_table);
}

/* A port another socket listens on: exit 71 naming it, before the
 * database is touched. */
static void test_port_in_use(void)
{
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    char addr[64], want[160];
    result res;
    int fd;

    if (!g_http)
        return;
    new_table("job");
    fd = socket(AF_INET, SOCK_STREAM, 0);
    CU_ASSERT_FATAL(fd >= 0);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CU_ASSERT_FATAL(bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(fd, 4) == 0 &&
                    getsockname(fd, (struct sockaddr *)&sa, &sl) == 0);
    snprintf(addr, sizeof addr, "127.0.0.1:%d", ntohs(sa.sin_port));
    run(&res, "--name", "job", TIMING, "supervise", "--http", addr, "--", "true", NULL);
    ASSERT_CODE(res, 71);
    snprintf(want, sizeof want, "sqlease: --http %s: cannot listen: ", addr);
    ASSERT_CONTAINS(res.err, want);
    ASSERT_CONTAINS(res.err, "in use");
    snprintf(want, sizeof want, "%d", ntohs(sa.sin_port));
    ASSERT_CONTAINS(res.err, want);
    result_free(&res);
    close(fd);
    /* The row is as migrate left it. */
    run(&res, "--name", "job", "status", "--json", NULL);
    ASSERT_CONTAINS(res.out, "\"held\":false");
    result_free(&res);
    tu_drop(db, g_table);
}

/* An IPv6 address in brackets: [::1]:0 serves on ::1, and says so with
 * the brackets.  Where this host has no IPv6 loopback (some containers)
 * there is nothing to check: not a missing package, so no skip either. */
static void test_ipv6(void)
{
    static const char mark[] = "and /holder on http://[::1]:";
    struct sockaddr_in6 sa;
    struct timeval tv = {10, 0};
    char err_path[1024], buf[512], *said, *p;
    const char req[] = "GET /health HTTP/1.0\r\n\r\n";
    ssize_t n;
    size_t len = 0;
    pid_t pid;
    int fd, port = 0;

    if (!g_http)
        return;
    fd = socket(AF_INET6, SOCK_STREAM, 0);
    memset(&sa, 0, sizeof sa);
    sa.sin6_family = AF_INET6;
    sa.sin6_addr = in6addr_loopback;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        fprintf(stderr, "\n  no IPv6 loopback here: [::1] not checked\n");
        if (fd >= 0)
            close(fd);
        return;
    }
    close(fd);
    new_table("job");
    path_in(err_path, sizeof err_path, "v6.err");
    pid = start_bg(err_path, "--name", "job", TIMING, "supervise", "--http", "[::1]:0", "--",
                   "sleep", "60", NULL);
    CU_ASSERT_FATAL(await_text(err_path, mark, 15000));
    said = slurp(err_path);
    p = said != NULL ? strstr(said, mark) : NULL;
    if (p != NULL)
        port = atoi(p + strlen(mark));
    free(said);
    CU_ASSERT_FATAL(port > 0);
    CU_ASSERT_FATAL(await_text(err_path, "started CMD", 15000));
    sa.sin6_port = htons((uint16_t)port);
    fd = socket(AF_INET6, SOCK_STREAM, 0);
    CU_ASSERT_FATAL(fd >= 0);
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    CU_ASSERT_FATAL(connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    CU_ASSERT(send(fd, req, strlen(req), MSG_NOSIGNAL) == (ssize_t)strlen(req));
    while (len + 1 < sizeof buf && (n = recv(fd, buf + len, sizeof buf - len - 1, 0)) > 0)
        len += (size_t)n;
    buf[len] = '\0';
    close(fd);
    said = buf;
    ASSERT_CONTAINS(said, " 200 OK\r\n");
    ASSERT_CONTAINS(said, "\r\n\r\nok: holding lease 'job'");
    CU_ASSERT_EQUAL(stop_bg(pid, SIGTERM), 0);
    tu_drop(db, g_table);
}

/* ---- one holder --------------------------------------------------------- */

/* Every endpoint of a holder, and what no endpoint does. */
static void test_holder_endpoints(void)
{
    char err_path[1024], tok_path[1024], want[512], script[1200];
    char *tok;
    long long token;
    reply r;
    pid_t pid;
    int port;

    if (!g_http)
        return;
    new_table("job");
    path_in(err_path, sizeof err_path, "holder.err");
    path_in(tok_path, sizeof tok_path, "holder.token");
    snprintf(script, sizeof script, "echo \"$SQLEASE_TOKEN\" > '%s'; exec sleep 60", tok_path);
    pid = start_bg(err_path, "--name", "job", "--owner", "http-a", TIMING, "supervise",
                   "--http", "127.0.0.1:0", "--data", "at \"10.0.0.7\"", "--", "sh", "-c",
                   script, NULL);
    port = await_port(err_path);
    CU_ASSERT_FATAL(port > 0);
    CU_ASSERT_FATAL(await_text(tok_path, "\n", 15000));
    tok = slurp(tok_path);
    token = atoll(tok);
    free(tok);
    CU_ASSERT_FATAL(token > 0);

    http(&r, port, "GET", "/health");
    ASSERT_STATUS(r, 200, "GET /health");
    snprintf(want, sizeof want, "ok: holding lease 'job', token %lld; the database answered ",
             token);
    CU_ASSERT(strncmp(r.body, want, strlen(want)) == 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, " ms ago\n"));
    ASSERT_CONTAINS(r.head, "Content-Type: text/plain; charset=utf-8");
    ASSERT_CONTAINS(r.head, "Cache-Control: no-store");
    reply_free(&r);

    http(&r, port, "GET", "/leader");
    ASSERT_STATUS(r, 200, "GET /leader");
    snprintf(want, sizeof want, "leader: holding lease 'job', token %lld; CMD runs\n", token);
    CU_ASSERT_STRING_EQUAL(r.body, want);
    reply_free(&r);

    http(&r, port, "GET", "/holder");
    ASSERT_STATUS(r, 200, "GET /holder");
    ASSERT_CONTAINS(r.head, "Content-Type: application/json");
    {
        static const char head[] = "{\"name\":\"job\",\"held\":true,\"owner\":\"http-a\","
                                   "\"this_instance\":true,";
        CU_ASSERT(strncmp(r.body, head, strlen(head)) == 0);
    }
    snprintf(want, sizeof want, "%lld", token);
    member(script, sizeof script, "token", want);
    ASSERT_CONTAINS(r.body, script);
    ASSERT_CONTAINS(r.body, "\"ttl_ms\":3000,");
    ASSERT_CONTAINS(r.body, "\"data\":\"at \\\"10.0.0.7\\\"\",");
    ASSERT_CONTAINS(r.body, "\"last_owner\":null,");
    ASSERT_CONTAINS(r.body, "\"acquired_at\":\"20");
    ASSERT_CONTAINS(r.body, "Z\",\"ttl_ms\"");
    {
        /* acquired_at_ms is the take on the database's clock, before it
         * read its clock for this answer; expires_in_ms within the ttl. */
        const char *p = strstr(r.body, "\"acquired_at_ms\":");
        const char *q = strstr(r.body, "\"db_now_ms\":");
        const char *e = strstr(r.body, "\"expires_in_ms\":");
        CU_ASSERT_FATAL(p != NULL && q != NULL && e != NULL);
        CU_ASSERT(atoll(p + 17) > 0 && atoll(p + 17) <= atoll(q + 12));
        CU_ASSERT(atoll(e + 16) > 0 && atoll(e + 16) <= 3000);
    }
    CU_ASSERT(strlen(r.body) > 2 && strcmp(r.body + strlen(r.body) - 2, "}\n") == 0);
    reply_free(&r);

    http(&r, port, "GET", "/metrics");
    ASSERT_STATUS(r, 200, "GET /metrics");
    ASSERT_CONTAINS(r.head, "Content-Type: text/plain; version=0.0.4; charset=utf-8");
    ASSERT_CONTAINS(r.body, "# TYPE sqlease_lease_held gauge\n"
                            "sqlease_lease_held{name=\"job\",owner=\"http-a\"} 1\n");
    snprintf(want, sizeof want, "sqlease_lease_token{name=\"job\",owner=\"http-a\"} %lld\n",
             token);
    ASSERT_CONTAINS(r.body, want);
    ASSERT_CONTAINS(r.body, "# TYPE sqlease_takes_total counter\n"
                            "sqlease_takes_total{name=\"job\",owner=\"http-a\"} 1\n");
    reply_free(&r);

    /* A query string is not part of the path. */
    CU_ASSERT_EQUAL(status_of(port, "/metrics?debug=1"), 200);

    /* HEAD: the same status and headers, no body. */
    http(&r, port, "HEAD", "/leader");
    ASSERT_STATUS(r, 200, "HEAD /leader");
    CU_ASSERT_STRING_EQUAL(r.body, "");
    reply_free(&r);

    /* Anything else: 404 for a path, 405 (with Allow) for a method. */
    {
        static const char *const paths[] = {"/", "/nope", "/metrics/", "/Health", "/leader/x"};
        for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
            http(&r, port, "GET", paths[i]);
            ASSERT_STATUS(r, 404, paths[i]);
            ASSERT_CONTAINS(r.body, "not found");
            reply_free(&r);
        }
    }
    {
        static const char *const methods[] = {"POST", "PUT", "DELETE", "PATCH"};
        static const char *const paths[] = {"/leader", "/holder", "/health", "/metrics"};
        for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
            http_body(&r, port, methods[i], paths[i], "release");
            ASSERT_STATUS(r, 405, methods[i]);
            ASSERT_CONTAINS(r.head, "Allow: GET, HEAD");
            reply_free(&r);
        }
    }

    /* None of it changed the lease: the same hold, still renewed. */
    http(&r, port, "GET", "/holder");
    ASSERT_STATUS(r, 200, "GET /holder after the 405s");
    ASSERT_CONTAINS(r.body, script);
    ASSERT_CONTAINS(r.body, "\"this_instance\":true");
    reply_free(&r);

    CU_ASSERT_EQUAL(stop_bg(pid, SIGTERM), 0);
    /* Gone with the process. */
    CU_ASSERT_EQUAL(status_of(port, "/health"), -1);
    tu_drop(db, g_table);
}

/* ---- two instances ------------------------------------------------------ */

/* Sample both /leader until `until` (mono ms): never both 200.  Returns
 * which answered 200 last (0 or 1), or -1 if neither ever did. */
static int sample_leaders(const int *ports, int64_t until, int *both)
{
    int last = -1;

    do {
        int a = status_of(ports[0], "/leader"), b = status_of(ports[1], "/leader");
        if (a == 200 && b == 200)
            (*both)++;
        if (a == 200)
            last = 0;
        else if (b == 200)
            last = 1;
        sqle_sleep_ms(20);
    } while (sqle_mono_ms() < until);
    return last;
}

/*
 * /leader is 200 on exactly one of two instances, across a SIGKILL of the
 * holder (the other takes over once the dead hold's ttl has run out) and
 * a SIGTERM (at once, after the release).  The follower's /holder names
 * the holder; its /health is 200.
 */
static void test_leader_hand_over(void)
{
    char err_a[1024], err_b[1024], err_c[1024], want[256];
    const char *owners[2] = {"http-a", "http-b"};
    int ports[2], both = 0, leader, follower, ok;
    pid_t pids[2];
    reply r;

    if (!g_http)
        return;
    new_table("job");
    path_in(err_a, sizeof err_a, "hand-a.err");
    path_in(err_b, sizeof err_b, "hand-b.err");
    path_in(err_c, sizeof err_c, "hand-c.err");
    pids[0] = start_bg(err_a, "--name", "job", "--owner", owners[0], TIMING, "supervise",
                       "--http", "127.0.0.1:0", "--", "sleep", "60", NULL);
    pids[1] = start_bg(err_b, "--name", "job", "--owner", owners[1], TIMING, "supervise",
                       "--http", "127.0.0.1:0", "--", "sleep", "60", NULL);
    ports[0] = await_port(err_a);
    ports[1] = await_port(err_b);
    CU_ASSERT_FATAL(ports[0] > 0 && ports[1] > 0);
    leader = -1;
    for (int64_t until = sqle_mono_ms() + 15000; leader < 0 && sqle_mono_ms() < until;)
        leader = sample_leaders(ports, sqle_mono_ms() + 100, &both);
    CU_ASSERT_FATAL(leader >= 0);
    CU_ASSERT_EQUAL(sample_leaders(ports, sqle_mono_ms() + 1500, &both), leader);
    CU_ASSERT_FATAL(leader >= 0);
    follower = 1 - leader;
    CU_ASSERT_EQUAL(status_of(ports[follower], "/leader"), 503);

    http(&r, ports[follower], "GET", "/leader");
    snprintf(want, sizeof want, "not the leader: lease 'job' is held by %s\n", owners[leader]);
    CU_ASSERT_STRING_EQUAL(r.body, want);
    reply_free(&r);
    http(&r, ports[follower], "GET", "/health");
    ASSERT_STATUS(r, 200, "the follower's /health");
    ASSERT_CONTAINS(r.body, "ok: standby for lease 'job'");
    reply_free(&r);
    http(&r, ports[follower], "GET", "/holder");
    ASSERT_STATUS(r, 200, "the follower's /holder");
    snprintf(want, sizeof want, "\"held\":true,\"owner\":\"%s\",\"this_instance\":false,",
             owners[leader]);
    ASSERT_CONTAINS(r.body, want);
    reply_free(&r);
    http(&r, ports[follower], "GET", "/metrics");
    snprintf(want, sizeof want, "sqlease_lease_held{name=\"job\",owner=\"%s\"} 0\n",
             owners[follower]);
    ASSERT_CONTAINS(r.body, want);
    reply_free(&r);

    /* SIGKILL the holder: its port goes with it, and the follower answers
     * 200 once it has taken the dead hold (a ttl of watching, and a
     * retry), never before the holder is gone. */
    stop_bg(pids[leader], SIGKILL);
    pids[leader] = 0;
    CU_ASSERT_EQUAL(status_of(ports[leader], "/leader"), -1);
    ok = await_status(ports[follower], "/leader", 200, 15000);
    CU_ASSERT_FATAL(ok);
    http(&r, ports[follower], "GET", "/holder");
    snprintf(want, sizeof want, "\"held\":true,\"owner\":\"%s\",\"this_instance\":true,",
             owners[follower]);
    ASSERT_CONTAINS(r.body, want);
    reply_free(&r);

    /* A third instance joins as a follower; a SIGTERM of the holder
     * hands over at once; exactly one 200 throughout. */
    pids[leader] = start_bg(err_c, "--name", "job", "--owner", "http-c", TIMING, "supervise",
                            "--http", "127.0.0.1:0", "--", "sleep", "60", NULL);
    ports[leader] = await_port(err_c);
    CU_ASSERT_FATAL(ports[leader] > 0);
    CU_ASSERT(await_status(ports[leader], "/health", 200, 15000));
    CU_ASSERT_EQUAL(sample_leaders(ports, sqle_mono_ms() + 1000, &both), follower);
    kill(pids[follower], SIGTERM);
    {
        int64_t until = sqle_mono_ms() + 15000;
        int got = -1;
        while (sqle_mono_ms() < until && got != leader)
            got = sample_leaders(ports, sqle_mono_ms() + 100, &both);
        CU_ASSERT_EQUAL(got, leader);
    }
    CU_ASSERT_EQUAL(wait_pid(pids[follower], 30000), 0);
    for (int i = 0; i < MAX_BG; i++)
        if (g_bg[i] == pids[follower])
            g_bg[i] = 0;
    http(&r, ports[leader], "GET", "/holder");
    ASSERT_CONTAINS(r.body, "\"owner\":\"http-c\",\"this_instance\":true,");
    reply_free(&r);
    if (both > 0)
        fprintf(stderr, "\n  /leader answered 200 on both instances in %d samples\n", both);
    CU_ASSERT_EQUAL(both, 0);
    CU_ASSERT_EQUAL(stop_bg(pids[leader], SIGTERM), 0);
    tu_drop(db, g_table);
}

/* ---- the database away ---------------------------------------------------- */

/*
 * While the database does not answer (another connection holds the
 * SQLite file's write lock, or the row's lock on a server), /health goes
 * 503 once the renew deadline has passed without an answer, saying why;
 * the holder stops CMD and /leader goes 503 too.  Both are 200 again once
 * the database answers and the lease is taken again.
 */
static void test_health_database_away(void)
{
    char err_path[1024];
    sqlease_db *locker;
    reply r;
    pid_t pid;
    int port;

    if (!g_http)
        return;
    new_table("job");
    path_in(err_path, sizeof err_path, "away.err");
    pid = start_bg(err_path, "--name", "job", "--owner", "http-a", TIMING, "--query-timeout",
                   "1s", "supervise", "--http", "127.0.0.1:0", "--", "sleep", "60", NULL);
    port = await_port(err_path);
    CU_ASSERT_FATAL(port > 0);
    CU_ASSERT_FATAL(await_status(port, "/leader", 200, 15000));
    CU_ASSERT_EQUAL(status_of(port, "/health"), 200);
    locker = tu_open();
    CU_ASSERT_PTR_NOT_NULL_FATAL(locker);
    CU_ASSERT_EQUAL_FATAL(tu_lock_begin(locker, g_table, "job"), SQLEASE_OK);
    CU_ASSERT(await_status(port, "/health", 503, 15000));
    http(&r, port, "GET", "/health");
    ASSERT_STATUS(r, 503, "GET /health, the database locked");
    ASSERT_CONTAINS(r.body, "the database has not answered for ");
    reply_free(&r);
    CU_ASSERT(await_status(port, "/leader", 503, 15000));
    CU_ASSERT_EQUAL(tu_lock_end(locker), SQLEASE_OK);
    sqlease_db_close(locker);
    CU_ASSERT(await_status(port, "/leader", 200, 20000));
    CU_ASSERT(await_status(port, "/health", 200, 5000));
    CU_ASSERT_EQUAL(stop_bg(pid, SIGTERM), 0);
    tu_drop(db, g_table);
}

/*
 * A supervise whose database is not there yet (an SQLite file in a
 * directory that does not exist: retried, as a server that is down)
 * answers already: /health and /leader 503 saying so, /holder 503 with
 * the reason as JSON, /metrics 200 (never contacted: -1).  Once the
 * database is there it holds, and both are 200.  SQLite only.
 */
static void test_health_before_database(void)
{
    char err_path[1024], dir[1024], dsn[1200];
    result res;
    reply r;
    pid_t pid;
    int port;

    if (!g_http)
        return;
    if (getenv("SQLEASE_TEST_DSN") != NULL && getenv("SQLEASE_TEST_DSN")[0] != '\0')
        return; /* a server's absence is the dialect matrix's business */
    snprintf(g_table, sizeof g_table, "%s", tu_table());
    path_in(err_path, sizeof err_path, "before.err");
    path_in(dir, sizeof dir, "later");
    snprintf(dsn, sizeof dsn, "Driver=SQLite3;Database=%s/jobs.db", dir);
    pid = start_bg_dsn(err_path, dsn, "--name", "job", "--owner", "http-a", TIMING,
                       "supervise", "--http", "127.0.0.1:0", "--", "sleep", "60", NULL);
    port = await_port(err_path);
    CU_ASSERT_FATAL(port > 0);
    CU_ASSERT(await_text(err_path, "trying again every", 15000));
    http(&r, port, "GET", "/health");
    ASSERT_STATUS(r, 503, "GET /health before the database");
    ASSERT_CONTAINS(r.body, "database unreachable: ");
    ASSERT_CONTAINS(r.body, "does not exist");
    reply_free(&r);
    http(&r, port, "GET", "/leader");
    ASSERT_STATUS(r, 503, "GET /leader before the database");
    CU_ASSERT_STRING_EQUAL(r.body, "not the leader: connecting to the database\n");
    reply_free(&r);
    http(&r, port, "GET", "/holder");
    ASSERT_STATUS(r, 503, "GET /holder before the database");
    CU_ASSERT_STRING_EQUAL(r.body, "{\"error\":\"not connected to the database yet\"}\n");
    reply_free(&r);
    http(&r, port, "GET", "/metrics");
    ASSERT_STATUS(r, 200, "GET /metrics before the database");
    ASSERT_CONTAINS(r.body, "sqlease_last_contact_seconds{name=\"job\",owner=\"http-a\"} -1\n");
    reply_free(&r);

    CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0700), 0);
    {
        char *argv[] = {(char *)g_bin, "--dsn", dsn, "--table", g_table, "--name", "job",
                        "migrate", NULL};
        char out[1100], err[1100];
        snprintf(out, sizeof out, "%s/migrate.out", tu_dir());
        snprintf(err, sizeof err, "%s/migrate.err", tu_dir());
        res.code = wait_pid(spawn(argv, out, err), 60000);
        CU_ASSERT_EQUAL(res.code, 0);
    }
    CU_ASSERT(await_status(port, "/leader", 200, 15000));
    CU_ASSERT_EQUAL(status_of(port, "/health"), 200);
    CU_ASSERT_EQUAL(status_of(port, "/holder"), 200);
    CU_ASSERT_EQUAL(stop_bg(pid, SIGTERM), 0);
}

/* ---- status --watch --http -------------------------------------------- */

/* A watch serves what it reads: the holder (never itself), the row as
 * metrics, /leader always 503; then the row free after the holder's
 * SIGTERM. */
static void test_watch(void)
{
    char err_sup[1024], err_w[1024], want[256];
    reply r;
    pid_t sup, w;
    int port;

    if (!g_http)
        return;
    new_table("job");
    path_in(err_sup, sizeof err_sup, "watch-sup.err");
    path_in(err_w, sizeof err_w, "watch.err");
    sup = start_bg(err_sup, "--name", "job", "--owner", "http-a", TIMING, "supervise", "--",
                   "sleep", "60", NULL);
    CU_ASSERT_FATAL(await_text(err_sup, "started CMD", 15000));
    w = start_bg(err_w, "-v", "--name", "job", "--retry", "100ms", "status", "--watch",
                 "--http", "127.0.0.1:0", NULL);
    port = await_port(err_w);
    CU_ASSERT_FATAL(port > 0);
    CU_ASSERT(await_status(port, "/health", 200, 15000));

    http(&r, port, "GET", "/health");
    ASSERT_CONTAINS(r.body, "ok: watching lease 'job'; the database answered ");
    reply_free(&r);
    http(&r, port, "GET", "/leader");
    ASSERT_STATUS(r, 503, "the watch's /leader");
    CU_ASSERT_STRING_EQUAL(r.body, "not the leader: status --watch holds no lease\n");
    reply_free(&r);
    http(&r, port, "GET", "/holder");
    ASSERT_STATUS(r, 200, "the watch's /holder");
    ASSERT_CONTAINS(r.body, "{\"name\":\"job\",\"held\":true,\"owner\":\"http-a\","
                            "\"this_instance\":false,");
    reply_free(&r);
    http(&r, port, "GET", "/metrics");
    ASSERT_STATUS(r, 200, "the watch's /metrics");
    ASSERT_CONTAINS(r.body, "# TYPE sqlease_row_held gauge\nsqlease_row_held{name=\"job\"} 1\n");
    ASSERT_CONTAINS(r.body, "sqlease_row_changes_total{name=\"job\"} 0\n");
    reply_free(&r);

    CU_ASSERT_EQUAL(stop_bg(sup, SIGTERM), 0);
    {
        int64_t until = sqle_mono_ms() + 15000;
        int freed = 0;
        while (!freed && sqle_mono_ms() < until) {
            http(&r, port, "GET", "/holder");
            freed = r.body != NULL && strstr(r.body, "\"held\":false") != NULL;
            if (freed) {
                snprintf(want, sizeof want, "\"owner\":null,\"this_instance\":false,");
                ASSERT_CONTAINS(r.body, want);
                ASSERT_CONTAINS(r.body, "\"last_owner\":\"http-a\",");
            }
            reply_free(&r);
            sqle_sleep_ms(50);
        }
        CU_ASSERT(freed);
    }
    http(&r, port, "GET", "/metrics");
    ASSERT_CONTAINS(r.body, "sqlease_row_held{name=\"job\"} 0\n");
    ASSERT_CONTAINS(r.body, "sqlease_row_changes_total{name=\"job\"} 1\n");
    reply_free(&r);
    CU_ASSERT_EQUAL(stop_bg(w, SIGTERM), 0);
    tu_drop(db, g_table);
}

/* ---- cron --http ------------------------------------------------------- */

/* The fire table of this test (beside g_table), and the crontab file. */
static char g_fire[80];

/* g_table and its fire table, migrated by the binary (which makes both),
 * and a crontab whose one job fires every second, appending a line to
 * ticks_path. */
static void new_cron(char *cron_path, size_t cap, const char *ticks_path)
{
    result res;
    FILE *f;

    snprintf(g_table, sizeof g_table, "%s", tu_table());
    snprintf(g_fire, sizeof g_fire, "%s_fire", g_table);
    run(&res, "--fire-table", g_fire, "--name", "job", "migrate", NULL);
    ASSERT_CODE(res, 0);
    result_free(&res);
    path_in(cron_path, cap, "jobs.cron");
    f = fopen(cron_path, "w");
    CU_ASSERT_FATAL(f != NULL);
    fprintf(f, "SQLEASE_JOB=tick\n@every 1s echo \"$SQLEASE_TOKEN\" >> '%s'\n", ticks_path);
    fclose(f);
}

static void drop_cron(void)
{
    tu_drop(db, g_fire);
    tu_drop(db, g_table);
}

/* The number after `prefix` at the start of a line of text; -1 none. */
static long long line_value(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);

    for (const char *p = text; p != NULL && *p != '\0';) {
        if (strncmp(p, prefix, n) == 0)
            return atoll(p + n);
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    return -1;
}

/* The value of a sample of `name` with this test's labels in GET
 * /metrics; -1 when it is not there. */
static long long metric_of(int port, const char *name, const char *owner)
{
    char prefix[256];
    long long v;
    reply r;

    http(&r, port, "GET", "/metrics");
    snprintf(prefix, sizeof prefix, "%s{name=\"job\",owner=\"%s\"} ", name, owner);
    v = r.status == 200 ? line_value(r.body, prefix) : -1;
    reply_free(&r);
    return v;
}

/* Poll GET path every 50 ms until its body contains needle. */
static int await_body(int port, const char *path, const char *needle, int64_t timeout_ms)
{
    int64_t deadline = sqle_mono_ms() + timeout_ms;

    for (;;) {
        reply r;
        int found;

        http(&r, port, "GET", path);
        found = r.body != NULL && strstr(r.body, needle) != NULL;
        reply_free(&r);
        if (found)
            return 1;
        if (sqle_mono_ms() >= deadline)
            return 0;
        sqle_sleep_ms(50);
    }
}

/* The token after "token" in a /leader line or `"token":` in JSON. */
static long long token_in(const char *text, const char *mark)
{
    const char *p = text != NULL ? strstr(text, mark) : NULL;

    return p != NULL ? atoll(p + strlen(mark)) : -1;
}

/* The row's token as `status --json` reads it. */
static long long row_token(void)
{
    result res;
    long long t;

    run(&res, "--name", "job", "status", "--json", NULL);
    t = res.code == 0 ? token_in(res.out, "\"token\":") : -1;
    result_free(&res);
    return t;
}

/* cron's --http value is checked as supervise's is: a usage error before
 * the file or the database is read; a port in use exits 71, the row
 * untouched. */
static void test_cron_flag(void)
{
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    char cron_path[1024], ticks[1024], addr[64], want[160];
    result res;
    int fd;

    path_in(ticks, sizeof ticks, "flag.ticks");
    new_cron(cron_path, sizeof cron_path, ticks);
    if (!g_http) {
        run(&res, "--fire-table", g_fire, "--name", "job", TIMING, "cron", "--http",
            "127.0.0.1:0", cron_path, NULL);
        ASSERT_CODE(res, 64);
        ASSERT_CONTAINS(res.err, "has no HTTP support");
        result_free(&res);
        drop_cron();
        return;
    }
    run(&res, "--fire-table", g_fire, "--name", "job", TIMING, "cron", "--http",
        "localhost:8080", cron_path, NULL);
    ASSERT_CODE(res, 64);
    ASSERT_CONTAINS(res.err, "sqlease: --http 'localhost:8080': 'localhost' is not a numeric"
                             " IPv4 address");
    result_free(&res);
    run(&res, "--fire-table", g_fire, "--name", "job", TIMING, "cron", "--http", "9090x",
        "no-such-file.cron", NULL);
    ASSERT_CODE(res, 64);
    ASSERT_CONTAINS(res.err, "sqlease: --http '9090x': want PORT, ADDR:PORT or [IPV6]:PORT");
    /* The flag before the file: the file was not read. */
    CU_ASSERT_PTR_NULL(strstr(res.err, "no-such-file"));
    result_free(&res);
    run(&res, "--fire-table", g_fire, "--name", "job", TIMING, "cron", cron_path, "--http",
        NULL);
    ASSERT_CODE(res, 64);
    ASSERT_CONTAINS(res.err, "--http");
    result_free(&res);

    fd = socket(AF_INET, SOCK_STREAM, 0);
    CU_ASSERT_FATAL(fd >= 0);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CU_ASSERT_FATAL(bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(fd, 4) == 0 &&
                    getsockname(fd, (struct sockaddr *)&sa, &sl) == 0);
    snprintf(addr, sizeof addr, "127.0.0.1:%d", ntohs(sa.sin_port));
    run(&res, "--fire-table", g_fire, "--name", "job", TIMING, "cron", "--http", addr,
        cron_path, NULL);
    ASSERT_CODE(res, 71);
    snprintf(want, sizeof want, "sqlease: --http %s: cannot listen: ", addr);
    ASSERT_CONTAINS(res.err, want);
    ASSERT_CONTAINS(res.err, "in use");
    result_free(&res);
    close(fd);
    run(&res, "--name", "job", "status", "--json", NULL);
    ASSERT_CONTAINS(res.out, "\"held\":false");
    result_free(&res);
    drop_cron();
}

/*
 * Two `cron --http` daemons on one table: the one that holds answers
 * /leader 200 with the row's token and claims the fires (its
 * sqlease_fires_claimed_total counting up as the @every 1s job fires);
 * the other answers /leader 503 naming the holder, /health 200, and its
 * /holder names the first.  After a SIGTERM of the first, the second
 * holds and says so.
 */
static void test_cron_endpoints(void)
{
    char cron_path[1024], ticks[1024], err_a[1024], err_b[1024], want[512];
    long long token, claimed, later;
    int port_a, port_b;
    pid_t a, b;
    reply r;

    if (!g_http)
        return;
    path_in(ticks, sizeof ticks, "cron.ticks");
    new_cron(cron_path, sizeof cron_path, ticks);
    path_in(err_a, sizeof err_a, "cron-a.err");
    path_in(err_b, sizeof err_b, "cron-b.err");
    a = start_bg(err_a, "--fire-table", g_fire, "--name", "job", "--owner", "cron-a", TIMING,
                 "cron", "--http", "127.0.0.1:0", cron_path, NULL);
    port_a = await_port(err_a);
    CU_ASSERT_FATAL(port_a > 0);
    CU_ASSERT_FATAL(await_status(port_a, "/leader", 200, 15000));

    /* /leader: the scheduler's hold, whose token is the row's. */
    http(&r, port_a, "GET", "/leader");
    ASSERT_STATUS(r, 200, "the holder's /leader");
    ASSERT_CONTAINS(r.body, "holding lease 'job', token ");
    ASSERT_CONTAINS(r.body, " fire(s) running\n");
    token = token_in(r.body, ", token ");
    reply_free(&r);
    CU_ASSERT_FATAL(token > 0);
    CU_ASSERT_EQUAL(row_token(), token);

    http(&r, port_a, "GET", "/health");
    ASSERT_STATUS(r, 200, "the holder's /health");
    snprintf(want, sizeof want, "ok: holding lease 'job', token %lld; the database answered ",
             token);
    ASSERT_CONTAINS(r.body, want);
    reply_free(&r);

    http(&r, port_a, "GET", "/holder");
    ASSERT_STATUS(r, 200, "the holder's /holder");
    ASSERT_CONTAINS(r.head, "Content-Type: application/json");
    ASSERT_CONTAINS(r.body, "{\"name\":\"job\",\"held\":true,\"owner\":\"cron-a\","
                            "\"this_instance\":true,");
    CU_ASSERT_EQUAL(token_in(r.body, "\"token\":"), token);
    reply_free(&r);

    /* /metrics: the lease's figures and the scheduler's, each fire of
     * the job claimed here counted. */
    http(&r, port_a, "GET", "/metrics");
    ASSERT_STATUS(r, 200, "the holder's /metrics");
    ASSERT_CONTAINS(r.head, "Content-Type: text/plain; version=0.0.4; charset=utf-8");
    ASSERT_CONTAINS(r.body, "# TYPE sqlease_lease_held gauge\n"
                            "sqlease_lease_held{name=\"job\",owner=\"cron-a\"} 1\n");
    snprintf(want, sizeof want, "sqlease_lease_token{name=\"job\",owner=\"cron-a\"} %lld\n",
             token);
    ASSERT_CONTAINS(r.body, want);
    ASSERT_CONTAINS(r.body, "# TYPE sqlease_fires_claimed_total counter\n");
    ASSERT_CONTAINS(r.body, "# TYPE sqlease_fires_running gauge\n");
    ASSERT_CONTAINS(r.body, "# TYPE sqlease_fire_late_max_seconds gauge\n");
    reply_free(&r);
    claimed = metric_of(port_a, "sqlease_fires_claimed_total", "cron-a");
    CU_ASSERT_FATAL(claimed >= 0);
    {
        int64_t until = sqle_mono_ms() + 10000;
        do {
            sqle_sleep_ms(100);
            later = metric_of(port_a, "sqlease_fires_claimed_total", "cron-a");
        } while (later <= claimed && sqle_mono_ms() < until);
        if (later <= claimed)
            fprintf(stderr, "\n  sqlease_fires_claimed_total stayed at %lld\n", claimed);
        CU_ASSERT(later > claimed);
    }
    /* A fire counted was run: its command wrote the token it ran under. */
    snprintf(want, sizeof want, "%lld\n", token);
    CU_ASSERT(await_text(ticks, want, 5000));

    /* HEAD is GET without the body; nothing else is answered. */
    http(&r, port_a, "HEAD", "/leader");
    ASSERT_STATUS(r, 200, "HEAD /leader");
    CU_ASSERT_STRING_EQUAL(r.body, "");
    reply_free(&r);
    http_body(&r, port_a, "POST", "/leader", "release");
    ASSERT_STATUS(r, 405, "POST /leader");
    ASSERT_CONTAINS(r.head, "Allow: GET, HEAD");
    reply_free(&r);
    CU_ASSERT_EQUAL(status_of(port_a, "/nope"), 404);

    /* A second daemon stands by: healthy, not the leader. */
    b = start_bg(err_b, "--fire-table", g_fire, "--name", "job", "--owner", "cron-b", TIMING,
                 "cron", "--http", "127.0.0.1:0", cron_path, NULL);
    port_b = await_port(err_b);
    CU_ASSERT_FATAL(port_b > 0);
    CU_ASSERT(await_status(port_b, "/health", 200, 15000));
    http(&r, port_b, "GET", "/health");
    ASSERT_CONTAINS(r.body, "ok: standby for lease 'job'; the database answered ");
    reply_free(&r);
    snprintf(want, sizeof want, "standby: lease 'job' is held by cron-a, token %lld\n", token);
    CU_ASSERT(await_body(port_b, "/leader", want, 5000));
    http(&r, port_b, "GET", "/leader");
    ASSERT_STATUS(r, 503, "the standby's /leader");
    CU_ASSERT_STRING_EQUAL(r.body, want);
    reply_free(&r);
    http(&r, port_b, "GET", "/holder");
    ASSERT_STATUS(r, 200, "the standby's /holder");
    ASSERT_CONTAINS(r.body, "\"held\":true,\"owner\":\"cron-a\",\"this_instance\":false,");
    CU_ASSERT_EQUAL(token_in(r.body, "\"token\":"), token);
    reply_free(&r);
    CU_ASSERT_EQUAL(metric_of(port_b, "sqlease_lease_held", "cron-b"), 0);
    CU_ASSERT_EQUAL(metric_of(port_b, "sqlease_fires_claimed_total", "cron-b"), 0);
    CU_ASSERT_EQUAL(status_of(port_a, "/leader"), 200);

    /* SIGTERM: the first releases and is gone with its port; the second
     * takes the lease with a newer token. */
    CU_ASSERT_EQUAL(stop_bg(a, SIGTERM), 0);
    CU_ASSERT_EQUAL(status_of(port_a, "/health"), -1);
    CU_ASSERT_FATAL(await_status(port_b, "/leader", 200, 15000));
    http(&r, port_b, "GET", "/leader");
    CU_ASSERT(token_in(r.body, ", token ") > token);
    CU_ASSERT_EQUAL(token_in(r.body, ", token "), row_token());
    reply_free(&r);
    /* /holder answers from a read at most a retry old. */
    CU_ASSERT(await_body(port_b, "/holder", "\"owner\":\"cron-b\",\"this_instance\":true,",
                         5000));
    CU_ASSERT_EQUAL(stop_bg(b, SIGTERM), 0);
    drop_cron();
}

static void add(void)
{
    CU_pSuite s = CU_add_suite("cli: --http", NULL, NULL);
    CU_add_test(s, "--http: usage errors, exit 64", test_flag);
    CU_add_test(s, "--http: a port in use, exit 71", test_port_in_use);
    CU_add_test(s, "--http [::1]:0", test_ipv6);
    CU_add_test(s, "a holder's /metrics, /health, /leader, /holder; 404, 405",
                test_holder_endpoints);
    CU_add_test(s, "/leader 200 on exactly one instance across SIGKILL and SIGTERM",
                test_leader_hand_over);
    CU_add_test(s, "/health 503 while the database does not answer, 200 after",
                test_health_database_away);
    CU_add_test(s, "the endpoints answer before the database is there",
                test_health_before_database);
    CU_add_test(s, "status --watch --http", test_watch);
    CU_add_test(s, "cron --http: usage errors (64), a port in use (71)", test_cron_flag);
    CU_add_test(s, "cron --http: /leader, /health, /holder and /metrics of a holder and a"
                   " standby", test_cron_endpoints);
}

int main(void)
{
    static const char *const vars[] = {"SQLEASE_DSN", "SQLEASE_TABLE", "SQLEASE_NAME",
                                       "SQLEASE_TTL", "SQLEASE_HEARTBEAT",
                                       "SQLEASE_RENEW_DEADLINE", "SQLEASE_RETRY",
                                       "SQLEASE_OWNER", "SQLEASE_TOKEN", "SQLEASE_FENCE_SQL",
                                       "SQLEASE_FIRE_TABLE"};
    char *argv[] = {NULL, "supervise", "--http", "x:1", "--", "true", NULL};
    char out[1100], err[1100];
    char *said;
    int rc;

    g_bin = getenv("SQLEASE_BIN");
    if (g_bin == NULL || g_bin[0] == '\0' || access(g_bin, X_OK) != 0) {
        fprintf(stderr, "test_http: set SQLEASE_BIN to the sqlease binary to test\n");
        return 1;
    }
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    signal(SIGPIPE, SIG_IGN);
    db = tu_open();
    if (db == NULL)
        return 2;
    /* Whether the binary serves HTTP: a build without it refuses any
     * --http with that message, one with it this address. */
    argv[0] = (char *)g_bin;
    snprintf(out, sizeof out, "%s/probe.out", tu_dir());
    snprintf(err, sizeof err, "%s/probe.err", tu_dir());
    (void)wait_pid(spawn(argv, out, err), 60000);
    said = slurp(err);
    g_http = said != NULL && strstr(said, "has no HTTP support") == NULL;
    free(said);
    rc = tu_main(add);
    kill_all_bg();
    sqlease_db_close(db);
    tu_cleanup();
    return rc;
}
