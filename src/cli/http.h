/*
 * http.h -- `--http ADDR:PORT`: a small HTTP server for the people and
 * tools that operate a fleet (Prometheus, a load balancer, Kubernetes'
 * probes), served by libmicrohttpd on threads of its own, so that the
 * command's main loop stays as it is.  It answers GET and HEAD of four
 * paths, each from a provider's callback:
 *
 *   /metrics  the Prometheus text of --metrics-file (metrics.h)
 *   /health   200 while the instance works (it reaches the database in
 *             time), else 503; one line of text saying which
 *   /leader   200 while this instance holds the lease and its work runs,
 *             else 503; one line of text
 *   /holder   who holds the lease, as one JSON object
 *
 * Any other path is 404 and any other method 405: nothing the server
 * answers changes the lease.  ADDR defaults to 127.0.0.1 (a bare PORT),
 * so that a port is only reachable from elsewhere when asked for.
 *
 * A build without libmicrohttpd (the Windows build, which has no package
 * of it; a POSIX build where pkg-config did not find it) has the same
 * calls: cli_http_check and cli_http_start then refuse with a message
 * that says so.
 */
#ifndef SQLEASE_CLI_HTTP_H
#define SQLEASE_CLI_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "os.h"
#include "text.h"

/* The address a bare PORT listens on. */
#define CLI_HTTP_DEFAULT_HOST "127.0.0.1"

typedef struct cli_http cli_http;

/*
 * What the endpoints answer.  Each callback writes its answer's body into
 * out (empty on entry) and returns its HTTP status: 200, or 503 when the
 * answer is no (not healthy, not the leader, the row could not be read).
 * health and leader write one line of text, without its newline (the
 * server ends it, and shows control characters in it escaped); metrics
 * the exposition text (cli_metrics_format); holder one JSON object
 * (cli_http_holder_json, cli_http_error_json).
 *
 * They are called on the server's threads, one per connection, so
 * several at once, and while the command's own threads go on: each must
 * be thread-safe, must not call cli_http_stop, and should answer from
 * what the command already knows (a read of the database, if any, is
 * bounded by the query timeout and is best shared between requests).
 * ud is passed to each.
 */
typedef struct cli_http_provider {
    void *ud;
    int (*metrics)(void *ud, cli_text *out);
    int (*health)(void *ud, cli_text *out);
    int (*leader)(void *ud, cli_text *out);
    int (*holder)(void *ud, cli_text *out);
} cli_http_provider;

/* 1 if this build serves HTTP (it was built with libmicrohttpd). */
int cli_http_available(void);

/* Check --http's value (PORT, ADDR:PORT, [IPV6]:PORT; ADDR numeric)
 * before anything else is done, so that a typo is a usage error before
 * the database is reached.  Returns CLI_CONTINUE, or CLI_EXIT_USAGE with
 * the message (naming the flag and the value) in err; also when the
 * build has no HTTP support. */
int cli_http_check(const char *addr_port, char *err, size_t cap);

/* Listen on addr_port and serve the provider's answers until
 * cli_http_stop.  The provider is copied; its ud must live until the
 * stop.  Returns CLI_CONTINUE with *out set; or with *out NULL and the
 * message in err: CLI_EXIT_USAGE (a bad value, no HTTP support in this
 * build), CLI_EXIT_OSERR (cannot listen: the port is in use, the address
 * is not this host's, no thread).  Port 0 takes a free port, which
 * cli_http_url then names. */
int cli_http_start(const char *addr_port, const cli_http_provider *p, cli_http **out,
                   char *err, size_t cap);

/* Where it listens, for the log: "http://127.0.0.1:8080" (the port it
 * got, when asked for 0), "http://[::]:8080". */
const char *cli_http_url(const cli_http *h);

/* Stop listening, wait for the answers in flight (a callback running
 * returns first), free.  NULL does nothing.  After it returns no
 * callback runs. */
void cli_http_stop(cli_http *h);

/* /holder's object for the row `in` of lease `name`, as read read_ago_ms
 * ago: name, held, owner (null when free), this_instance, token,
 * acquired_at_ms and acquired_at (RFC 3339, the database's clock; null
 * when free), ttl_ms (the holder's, as its take wrote it; null when free
 * or unknown), expires_in_ms (0 when free), data (null when none),
 * last_owner (who held it before, when free; else null), db_now_ms and
 * read_ago_ms, on one line.  Strings escaped as json.h does. */
void cli_http_holder_json(cli_text *out, const char *name, const sqlease_lease_info *in,
                          int this_instance, int64_t read_ago_ms);

/* {"error":"message"} on one line, for a 503 of /holder. */
void cli_http_error_json(cli_text *out, const char *message);

/*
 * /health's rule for an instance whose supervisor `sup` (not NULL)
 * contends for lease `name`: 200 while it runs, the library finds it
 * healthy (a holder within its renew deadline, a follower that reached
 * the database within a ttl: sqlease_supervisor_health), and the
 * database answered it within renew_deadline_ms, which a follower's
 * polls must do too: a follower whose database has been gone that long
 * could not take over if it had to.  Else 503.  Writes the one line
 * saying which ("ok: holding lease 'x', token 7; the database answered
 * 412 ms ago"); `why` ("" none) is added to a 503 for a database that has
 * not answered.  What to say when there is no supervisor (connecting,
 * stopping) is the caller's.  Thread-safe as the supervisor's calls are.
 */
int cli_http_health(sqlease_supervisor *sup, const char *name, int64_t renew_deadline_ms,
                    const char *why, cli_text *out);

/*
 * /holder's read of the lease row, shared by all the clients of one
 * server: a client polling /holder costs the database a statement per
 * retry at most, as a follower's own polls do, however many ask.  One
 * read at a time; the others wait for it and answer from it.
 */
typedef struct cli_http_row {
    const cli_args *args;            /* the lease's options; never changes */
    char owner[SQLEASE_MAX_OWNER + 1]; /* this instance's; never changes */
    sqle_mutex mu;                   /* guards what follows */
    int64_t read_mono;               /* when the last read ended; -1 none */
    int read_ok;
    sqlease_lease_info info;         /* its answer, when read_ok */
    char read_error[512];            /* else why it failed */
} cli_http_row;

/* For the lease `a` names, as `owner` sees it.  Returns 0, or -1 (no
 * mutex). */
int cli_http_row_init(cli_http_row *r, const cli_args *a, const char *owner);

void cli_http_row_destroy(cli_http_row *r);

/*
 * /holder's answer (200, or 503 with cli_http_error_json's object): the
 * row of lease `name` on db (NULL: not connected yet, which is not a
 * read), read unless the last read is younger than retry_ms (<= 0: the
 * library's default retry).  this_instance is true when the row is held
 * by this instance's owner id and mine(ud, token) says the hold with
 * that token is this instance's (another process started with the same
 * owner id is not this one); mine is called without the row's lock, and
 * NULL means never.
 */
int cli_http_row_holder(cli_http_row *r, sqlease_db *db, int64_t retry_ms, const char *name,
                        int (*mine)(void *ud, int64_t token), void *ud, cli_text *out);

#endif
