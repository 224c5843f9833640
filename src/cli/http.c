/*
 * http.c -- the HTTP server of `--http` (see http.h): the value's
 * parsing, /holder's JSON and shared read of the row, /health's rule,
 * and, in a build with libmicrohttpd
 * (SQLEASE_WITH_MHD, which SConstruct defines when pkg-config finds it),
 * the server itself.  HTTP is libmicrohttpd's business: this file only
 * routes a request to the provider's callback and hands its answer back.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "internal.h"
#include "json.h"
#include "os.h"

#ifdef SQLEASE_WITH_MHD
#include <microhttpd.h>
#endif

/* ---- /holder's JSON ---------------------------------------------------- */

void cli_http_holder_json(cli_text *out, const char *name, const sqlease_lease_info *in,
                          int this_instance, int64_t read_ago_ms)
{
    cli_json j;
    char when[64];

    cli_json_begin_text(&j, out);
    cli_json_string(&j, "name", name);
    cli_json_bool(&j, "held", in->held);
    if (in->held) {
        cli_json_string(&j, "owner", in->owner);
        cli_json_bool(&j, "this_instance", this_instance);
        cli_json_int(&j, "token", in->token);
        cli_json_int(&j, "acquired_at_ms", in->acquired_at_ms);
        cli_format_time(in->acquired_at_ms, when, sizeof when);
        cli_json_string(&j, "acquired_at", when);
        if (in->ttl_ms > 0)
            cli_json_int(&j, "ttl_ms", in->ttl_ms);
        else
            cli_json_null(&j, "ttl_ms"); /* taken by a release before 0.2.1 */
        cli_json_int(&j, "expires_in_ms", in->expires_at_ms - in->db_now_ms);
        cli_json_string_or_null(&j, "data", in->data[0] != '\0' ? in->data : NULL);
        cli_json_null(&j, "last_owner");
    } else {
        /* A hold that expired still names its owner in the row; a
         * release moved it to last_owner.  Either way nobody holds. */
        const char *last = in->owner[0] != '\0' ? in->owner : in->last_owner;

        cli_json_null(&j, "owner");
        cli_json_bool(&j, "this_instance", 0);
        cli_json_int(&j, "token", in->token);
        cli_json_null(&j, "acquired_at_ms");
        cli_json_null(&j, "acquired_at");
        cli_json_null(&j, "ttl_ms");
        cli_json_int(&j, "expires_in_ms", 0);
        cli_json_null(&j, "data");
        cli_json_string_or_null(&j, "last_owner", last[0] != '\0' ? last : NULL);
    }
    cli_json_int(&j, "db_now_ms", in->db_now_ms);
    cli_json_int(&j, "read_ago_ms", read_ago_ms);
    cli_json_end(&j);
}

void cli_http_error_json(cli_text *out, const char *message)
{
    cli_json j;

    cli_json_begin_text(&j, out);
    cli_json_string(&j, "error", message);
    cli_json_end(&j);
}

/* ---- /health ------------------------------------------------------------ */

int cli_http_health(sqlease_supervisor *sup, const char *name, int64_t renew_deadline_ms,
                    const char *why, cli_text *out)
{
    sqlease_error err;
    sqlease_state st;

    memset(&err, 0, sizeof err);
    memset(&st, 0, sizeof st);
    if (sqlease_supervisor_health(sup, &err) != SQLEASE_OK) {
        cli_text_printf(out, "lease '%s': %s", name, err.message);
        return 503;
    }
    if (sqlease_supervisor_state(sup, &st) != SQLEASE_OK) {
        cli_text_puts(out, "the supervisor's state cannot be read");
        return 503;
    }
    if (st.last_contact_ago_ms < 0 || st.last_contact_ago_ms > renew_deadline_ms) {
        if (st.last_contact_ago_ms < 0)
            cli_text_puts(out, "the database has not answered yet");
        else
            cli_text_printf(out, "the database has not answered for %" PRId64 " ms (renew"
                            " deadline %" PRId64 " ms)", st.last_contact_ago_ms,
                            renew_deadline_ms);
        if (why != NULL && why[0] != '\0')
            cli_text_printf(out, ": %s", why);
        return 503;
    }
    if (st.holding)
        cli_text_printf(out, "ok: holding lease '%s', token %" PRId64, name, st.token);
    else
        cli_text_printf(out, "ok: standby for lease '%s'", name);
    cli_text_printf(out, "; the database answered %" PRId64 " ms ago", st.last_contact_ago_ms);
    return 200;
}

/* ---- /holder's read of the row ------------------------------------------ */

int cli_http_row_init(cli_http_row *r, const cli_args *a, const char *owner)
{
    memset(r, 0, sizeof *r);
    if (sqle_mutex_init(&r->mu) != 0)
        return -1;
    r->args = a;
    snprintf(r->owner, sizeof r->owner, "%s", owner);
    r->read_mono = -1;
    return 0;
}

void cli_http_row_destroy(cli_http_row *r)
{
    sqle_mutex_destroy(&r->mu);
}

/* The read's own failures are in its answer; the log hears of them at
 * debug level only, since each client that asks would log one more. */
static void quiet_sink(void *userdata, int level, const char *line)
{
    (void)userdata;
    (void)level;
    cli_log(SQLEASE_LOG_DEBUG, "http /holder: %s", line);
}

/* Read the row, or keep the last read when it is younger than a retry.
 * Under r->mu. */
static void read_row(cli_http_row *r, sqlease_db *db, int64_t retry)
{
    sqlease_options o;
    sqlease_lease *lease = NULL;
    sqlease_error err;
    int st;

    if (r->read_mono >= 0 && sqle_mono_ms() - r->read_mono < retry)
        return;
    if (db == NULL) {
        r->read_ok = 0;
        snprintf(r->read_error, sizeof r->read_error, "not connected to the database yet");
        return; /* not a read: the next request looks again */
    }
    memset(&err, 0, sizeof err);
    memset(&r->info, 0, sizeof r->info);
    cli_lease_options(r->args, &o);
    o.owner = r->owner;
    o.log = quiet_sink;
    st = sqlease_lease_new(&lease, db, &o, &err);
    if (st == SQLEASE_OK)
        st = sqlease_lease_status(lease, &r->info, &err);
    sqlease_lease_free(lease);
    r->read_ok = st == SQLEASE_OK;
    if (!r->read_ok)
        snprintf(r->read_error, sizeof r->read_error, "%s",
                 err.message[0] != '\0' ? err.message : sqlease_strerror(st));
    r->read_mono = sqle_mono_ms();
}

int cli_http_row_holder(cli_http_row *r, sqlease_db *db, int64_t retry_ms, const char *name,
                        int (*mine)(void *ud, int64_t token), void *ud, cli_text *out)
{
    sqlease_lease_info info;
    char error[sizeof r->read_error];
    int ok, this_instance = 0;
    int64_t ago;

    sqle_mutex_lock(&r->mu);
    read_row(r, db, retry_ms > 0 ? retry_ms : SQLEASE_DEFAULT_RETRY_MS);
    ok = r->read_ok;
    info = r->info;
    memcpy(error, r->read_error, sizeof error);
    ago = sqle_mono_ms() - r->read_mono;
    sqle_mutex_unlock(&r->mu);
    if (!ok) {
        cli_http_error_json(out, error);
        return 503;
    }
    if (info.held && strcmp(info.owner, r->owner) == 0 && mine != NULL)
        this_instance = mine(ud, info.token) != 0;
    cli_http_holder_json(out, name, &info, this_instance, ago);
    return 200;
}

#ifndef SQLEASE_WITH_MHD

/* ---- a build without libmicrohttpd ------------------------------------ */

#define NOT_BUILT "--http: this build of sqlease has no HTTP support (it was built without" \
                  " libmicrohttpd; on Debian: apt-get install libmicrohttpd-dev, then rebuild)"

int cli_http_available(void)
{
    return 0;
}

int cli_http_check(const char *addr_port, char *err, size_t cap)
{
    (void)addr_port;
    snprintf(err, cap, NOT_BUILT);
    return CLI_EXIT_USAGE;
}

int cli_http_start(const char *addr_port, const cli_http_provider *p, cli_http **out,
                   char *err, size_t cap)
{
    (void)addr_port;
    (void)p;
    *out = NULL;
    snprintf(err, cap, NOT_BUILT);
    return CLI_EXIT_USAGE;
}

const char *cli_http_url(const cli_http *h)
{
    (void)h;
    return "";
}

void cli_http_stop(cli_http *h)
{
    (void)h;
}

#else

/* ---- the value of --http --------------------------------------------- */

typedef struct http_addr {
    char host[64];  /* numeric, without brackets */
    unsigned port;  /* 0: any free port */
    int bracketed;  /* it was written [host]:port */
} http_addr;

#define FORMS "PORT, ADDR:PORT or [IPV6]:PORT (9090, 0.0.0.0:9090, [::]:9090)"

/* 1..5 digits, at most 65535. */
static int parse_port(const char *s, unsigned *port)
{
    unsigned long v = 0;
    size_t n = 0;

    for (; s[n] != '\0'; n++) {
        if (s[n] < '0' || s[n] > '9' || n >= 5)
            return -1;
        v = v * 10 + (unsigned long)(s[n] - '0');
    }
    if (n == 0 || v > 65535)
        return -1;
    *port = (unsigned)v;
    return 0;
}

/* The form alone: which part is the address and which the port.  Whether
 * the address is one is the OS layer's answer (check_host). */
static int parse_addr(const char *in, http_addr *a, char *err, size_t cap)
{
    const char *host, *port, *colon;
    size_t hl;

    memset(a, 0, sizeof *a);
    if (in[0] == '\0') {
        snprintf(err, cap, "--http: empty; want " FORMS);
        return -1;
    }
    if (strspn(in, "0123456789") == strlen(in)) {
        snprintf(a->host, sizeof a->host, "%s", CLI_HTTP_DEFAULT_HOST);
        host = CLI_HTTP_DEFAULT_HOST;
        hl = strlen(host);
        port = in;
    } else if (in[0] == '[') {
        const char *close = strchr(in, ']');
        if (close == NULL || close[1] != ':') {
            snprintf(err, cap, "--http '%s': want [IPV6]:PORT, the port after the ']'", in);
            return -1;
        }
        host = in + 1;
        hl = (size_t)(close - host);
        port = close + 2;
        a->bracketed = 1;
    } else {
        colon = strrchr(in, ':');
        if (colon == NULL) {
            snprintf(err, cap, "--http '%s': want " FORMS, in);
            return -1;
        }
        if (strchr(in, ':') != colon) {
            snprintf(err, cap, "--http '%s': an IPv6 address goes in brackets: [::1]:9090", in);
            return -1;
        }
        host = in;
        hl = (size_t)(colon - in);
        port = colon + 1;
    }
    if (hl == 0) {
        snprintf(err, cap, "--http '%s': the address before the port is missing; want " FORMS,
                 in);
        return -1;
    }
    if (hl >= sizeof a->host) {
        snprintf(err, cap, "--http '%s': the address is not a numeric IPv4 address or an"
                 " IPv6 address in brackets", in);
        return -1;
    }
    memcpy(a->host, host, hl);
    a->host[hl] = '\0';
    if (parse_port(port, &a->port) != 0) {
        snprintf(err, cap, "--http '%s': the port must be a number from 0 to 65535 (0: any"
                 " free port)", in);
        return -1;
    }
    return 0;
}

/* The address as a socket address (libmicrohttpd reads its length from
 * its family).  Host names are not looked up: what a name resolves to
 * can change under a running server, and a port opened to the network
 * should say where in the command line. */
static int check_host(const char *in, const http_addr *a, cli_os_sockaddr *sa, char *err,
                      size_t cap)
{
    size_t len;
    int family = cli_os_sockaddr_make(a->host, a->port, sa, &len);

    if (family == 4 && a->bracketed) {
        snprintf(err, cap, "--http '%s': brackets are for an IPv6 address; an IPv4 address"
                 " goes without them: %s:%u", in, a->host, a->port);
        return -1;
    }
    if (family < 0) {
        snprintf(err, cap, "--http '%s': '%s' is not a numeric IPv4 address (127.0.0.1,"
                 " 0.0.0.0) or an IPv6 address in brackets ([::1], [::]); host names are not"
                 " looked up", in, a->host);
        return -1;
    }
    return family;
}

/* ---- the server ------------------------------------------------------- */

/* Connections served at once, each on its own thread: a handful of
 * probes and a scraper need few, and a client that opens many gets no
 * more.  One that sends nothing is dropped after the timeout. */
#define HTTP_CONNECTIONS 32
#define HTTP_IDLE_SECONDS 10

#define TYPE_TEXT "text/plain; charset=utf-8"
#define TYPE_METRICS "text/plain; version=0.0.4; charset=utf-8"
#define TYPE_JSON "application/json"

struct cli_http {
    struct MHD_Daemon *d;
    cli_http_provider p;
    /* libmicrohttpd logs from its own threads too, which already run
     * while MHD_start_daemon has not returned: until it has, what it says
     * is kept as the reason a start failed. */
    sqle_mutex mu;
    int started;
    char start_error[256];
    char url[96];
};

int cli_http_available(void)
{
    return 1;
}

int cli_http_check(const char *addr_port, char *err, size_t cap)
{
    http_addr a;
    cli_os_sockaddr sa;

    if (parse_addr(addr_port, &a, err, cap) != 0 ||
        check_host(addr_port, &a, &sa, err, cap) < 0)
        return CLI_EXIT_USAGE;
    return CLI_CONTINUE;
}

static void on_log(void *cls, const char *fmt, va_list ap)
{
    cli_http *h = cls;
    char line[512];
    size_t n;
    int started;

    vsnprintf(line, sizeof line, fmt, ap);
    n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' '))
        line[--n] = '\0';
    sqle_mutex_lock(&h->mu);
    started = h->started;
    if (!started)
        snprintf(h->start_error, sizeof h->start_error, "%s", line);
    sqle_mutex_unlock(&h->mu);
    /* A client's malformed request or a dropped connection is not the
     * operator's business; the debug log has it. */
    if (started)
        cli_log(SQLEASE_LOG_DEBUG, "http: %s", line);
}

static enum MHD_Result respond(struct MHD_Connection *c, unsigned status, const char *type,
                               const char *body, size_t len, int allow)
{
    struct MHD_Response *r;
    enum MHD_Result ok;

    r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (r == NULL)
        return MHD_NO;
    /* Probes and scrapers want the state now, never a cached one. */
    if (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type) != MHD_YES ||
        MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store") != MHD_YES ||
        (allow && MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD") != MHD_YES)) {
        MHD_destroy_response(r);
        return MHD_NO;
    }
    ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result respond_text(struct MHD_Connection *c, unsigned status, const char *text,
                                    int allow)
{
    return respond(c, status, TYPE_TEXT, text, strlen(text), allow);
}

/* A one-line answer (health, leader): what the provider wrote, control
 * characters escaped (it may quote an owner id or a driver's words),
 * cut at its first line, ended by a newline. */
static enum MHD_Result respond_line(struct MHD_Connection *c, unsigned status,
                                    const cli_text *body)
{
    const char *s = cli_text_str(body);
    size_t n = strcspn(s, "\r\n"), cap = SQLE_SHOWN_MAX(n) + 1;
    char *line = malloc(n + 1), *shown = malloc(cap);
    enum MHD_Result ok;

    if (line == NULL || shown == NULL) {
        free(line);
        free(shown);
        return MHD_NO;
    }
    memcpy(line, s, n);
    line[n] = '\0';
    sqle_show_text(line, shown, cap - 1);
    strcat(shown, "\n");
    ok = respond(c, status, TYPE_TEXT, shown, strlen(shown), 0);
    free(line);
    free(shown);
    return ok;
}

/*
 * Every request comes here once, when its headers are in.  The answer
 * is queued at once, whatever the method: a body that came with the
 * request is never read (libmicrohttpd then closes the connection).
 */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    cli_http *h = cls;
    int (*fn)(void *, cli_text *);
    const char *type = TYPE_TEXT;
    int line = 0, status;
    cli_text body;
    enum MHD_Result ok;

    (void)version;
    (void)upload_data;
    (void)upload_data_size;
    (void)con_cls;
    if (strcmp(url, "/metrics") == 0) {
        fn = h->p.metrics;
        type = TYPE_METRICS;
    } else if (strcmp(url, "/health") == 0) {
        fn = h->p.health;
        line = 1;
    } else if (strcmp(url, "/leader") == 0) {
        fn = h->p.leader;
        line = 1;
    } else if (strcmp(url, "/holder") == 0) {
        fn = h->p.holder;
        type = TYPE_JSON;
    } else {
        return respond_text(c, MHD_HTTP_NOT_FOUND,
                            "not found: the paths are /metrics, /health, /leader and /holder\n",
                            0);
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return respond_text(c, MHD_HTTP_METHOD_NOT_ALLOWED,
                            "method not allowed: only GET and HEAD; nothing here changes the"
                            " lease\n", 1);
    if (fn == NULL)
        return respond_text(c, MHD_HTTP_NOT_FOUND, "not found: this command has no such"
                            " endpoint\n", 0);
    cli_text_init(&body);
    status = fn(h->p.ud, &body);
    if (body.failed)
        ok = respond_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n", 0);
    else if (line)
        ok = respond_line(c, (unsigned)status, &body);
    else
        ok = respond(c, (unsigned)status, type, cli_text_str(&body), body.len, 0);
    cli_text_free(&body);
    return ok;
}

int cli_http_start(const char *addr_port, const cli_http_provider *p, cli_http **out,
                   char *err, size_t cap)
{
    http_addr a;
    cli_os_sockaddr sa;
    int family;
    unsigned flags, port;
    cli_http *h;
    const union MHD_DaemonInfo *info;

    *out = NULL;
    if (parse_addr(addr_port, &a, err, cap) != 0)
        return CLI_EXIT_USAGE;
    family = check_host(addr_port, &a, &sa, err, cap);
    if (family < 0)
        return CLI_EXIT_USAGE;
    h = calloc(1, sizeof *h);
    if (h == NULL || sqle_mutex_init(&h->mu) != 0) {
        free(h);
        snprintf(err, cap, "--http %s: out of memory", addr_port);
        return CLI_EXIT_OSERR;
    }
    h->p = *p;
    /* A thread per connection: a callback that waits for the database
     * (/holder's read) then holds up only its own client, never a
     * probe of /health.  An IPv6 address also takes IPv4 ([::] is every
     * address of both). */
    flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_AUTO |
            MHD_USE_ITC | MHD_USE_ERROR_LOG;
    if (family == 6)
        flags |= MHD_USE_DUAL_STACK;
    h->d = MHD_start_daemon(flags, (uint16_t)a.port, NULL, NULL, on_request, h,
                            MHD_OPTION_EXTERNAL_LOGGER, on_log, h,
                            MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)sa.bytes,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_CONNECTIONS,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_IDLE_SECONDS,
                            MHD_OPTION_END);
    sqle_mutex_lock(&h->mu);
    h->started = 1;
    sqle_mutex_unlock(&h->mu);
    if (h->d == NULL) {
        snprintf(err, cap, "--http %s: cannot listen: %s", addr_port,
                 h->start_error[0] != '\0' ? h->start_error : "libmicrohttpd would not start");
        sqle_mutex_destroy(&h->mu);
        free(h);
        return CLI_EXIT_OSERR;
    }
    port = a.port;
    info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    if (info != NULL && info->port != 0)
        port = info->port;
    snprintf(h->url, sizeof h->url, family == 6 ? "http://[%s]:%u" : "http://%s:%u", a.host,
             port);
    *out = h;
    return CLI_CONTINUE;
}

const char *cli_http_url(const cli_http *h)
{
    return h != NULL ? h->url : "";
}

void cli_http_stop(cli_http *h)
{
    if (h == NULL)
        return;
    MHD_stop_daemon(h->d);
    sqle_mutex_destroy(&h->mu);
    free(h);
}

#endif
