/*
 * cmd_admin.c -- the commands that read or administer the table rather
 * than hold a lease: `migrate` (create or upgrade the table and seed the
 * row), `status` (what the row says, human or JSON, with the ready
 * followers and a hand-over under way; with --watch, every change of
 * holder after it), `list` (every lease of the table), `release --force`
 * (admin: clear the row whoever holds it) and `transfer` (ask the holder
 * to hand the lease over, and wait until it has moved).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "http.h"
#include "internal.h"
#include "json.h"
#include "metrics.h"
#include "os.h"

/* The row's data, or NULL when it has none (a NULL column). */
static const char *data_of(const sqlease_lease_info *in)
{
    return in->data[0] != '\0' ? in->data : NULL;
}

/* The row's data as a person is shown it (whoever wrote the row chose
 * its bytes: control characters escaped, internal.h), or "-". */
static const char *show_data(const sqlease_lease_info *in, char *buf, size_t cap)
{
    return data_of(in) != NULL ? sqle_show_text(in->data, buf, cap) : "-";
}

/* The table and name in force once connected: the flags, else the DSN's
 * odbc.ini section, else the defaults (set by connect_db()). */
static sqlease_options effective;

static const char *table_of(const cli_args *a)
{
    (void)a;
    return effective.table != NULL ? effective.table : SQLEASE_DEFAULT_TABLE;
}

static const char *fire_table_of(const cli_args *a)
{
    (void)a;
    return effective.fire_table != NULL ? effective.fire_table : SQLEASE_DEFAULT_FIRE_TABLE;
}

static const char *history_table_of(const cli_args *a)
{
    (void)a;
    return effective.history_table != NULL ? effective.history_table
                                           : SQLEASE_DEFAULT_HISTORY_TABLE;
}

static const char *name_of(const cli_args *a)
{
    (void)a;
    return effective.name != NULL ? effective.name : SQLEASE_DEFAULT_NAME;
}

/*
 * The options of a command that holds no lease: the table and the name
 * (flags over odbc.ini over defaults), never the supervisor's timing,
 * which nothing here uses, so that `--ttl 1s --heartbeat 5s status` works
 * and a DSN's odbc.ini timing cannot fail `status`.  The timing is set to
 * the built-in defaults, which satisfy every rule and outrank odbc.ini.
 */
static void no_hold_options(const cli_args *a, sqlease_options *o)
{
    cli_lease_options(a, o);
    o->ttl_ms = SQLEASE_DEFAULT_TTL_MS;
    o->heartbeat_ms = SQLEASE_DEFAULT_HEARTBEAT_MS;
    o->renew_deadline_ms = SQLEASE_DEFAULT_RENEW_DEADLINE_MS;
    o->retry_ms = SQLEASE_DEFAULT_RETRY_MS;
}

/* Check the flags, connect, and settle the options against odbc.ini. */
static int connect_db(const cli_args *a, sqlease_db **db)
{
    sqlease_options o;
    sqlease_error err;
    int rc;

    memset(&err, 0, sizeof err);
    no_hold_options(a, &o);
    if (sqlease_options_check(&o, &err) != SQLEASE_OK)
        return cli_usage("%s", err.message[0] ? err.message : "invalid options");
    rc = cli_open_db(a, db);
    if (rc != CLI_CONTINUE)
        return rc;
    no_hold_options(a, &o);
    rc = cli_effective_options(*db, &o, &effective);
    if (rc != CLI_CONTINUE) {
        sqlease_db_close(*db);
        *db = NULL;
    }
    return rc;
}

/* Commands here take no arguments beyond a few flags; anything else is
 * a usage error.  `flags` lists the bare flags accepted; *seen gets a bit
 * per flag present.  http (NULL: not accepted) gets --http's value, NULL
 * when not given.  Returns CLI_CONTINUE or an exit code. */
static int parse_flags(const cli_args *a, const char *const *flags, int nflags,
                       unsigned *seen, const char **http)
{
    *seen = 0;
    if (http != NULL)
        *http = NULL;
    for (int i = 0; i < a->cmd_argc; i++) {
        const char *arg = a->cmd_argv[i];
        int k;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            cli_print_help();
            return CLI_EXIT_OK;
        }
        if (http != NULL) {
            int r = cli_flag_value(a->cmd_argc, a->cmd_argv, &i, "--http", http);
            if (r < 0)
                return CLI_EXIT_USAGE;
            if (r > 0)
                continue;
        }
        for (k = 0; k < nflags; k++)
            if (strcmp(arg, flags[k]) == 0)
                break;
        if (k == nflags) {
            if (arg[0] == '-')
                return cli_unknown_flag(a->command, arg);
            return cli_usage("%s: unexpected argument '%s'", a->command, arg);
        }
        *seen |= 1u << k;
    }
    return CLI_CONTINUE;
}

static int parse_bare_flags(const cli_args *a, const char *const *flags, int nflags,
                            unsigned *seen)
{
    return parse_flags(a, flags, nflags, seen, NULL);
}

/* Connect and make a lease handle for the flags' table and name; the
 * owner is only used by release and is otherwise harmless. */
static int open_lease(const cli_args *a, sqlease_db **db, sqlease_lease **lease)
{
    sqlease_options o;
    sqlease_error err;
    int rc, st;

    *db = NULL;
    *lease = NULL;
    rc = connect_db(a, db);
    if (rc != CLI_CONTINUE)
        return rc;
    memset(&err, 0, sizeof err);
    cli_lease_options(a, &o);
    st = sqlease_lease_new(lease, *db, &o, &err);
    if (st != SQLEASE_OK) {
        sqlease_db_close(*db);
        *db = NULL;
        return cli_fail(&err, st);
    }
    return CLI_CONTINUE;
}

/*
 * A command on the table failed: say which lease (or table) and what the
 * command was doing, unless the library's message already names it, and
 * why a locked SQLite file is not an outage.  ENOTABLE / ENOROW carry the
 * library's "run sqlease migrate" message; make sure the hint is there
 * even if a driver-specific path lost it.
 */
static int fail_lease(const cli_args *a, const sqlease_db *db, const char *what,
                      const sqlease_error *err, int st)
{
    const char *msg = err->message[0] != '\0' ? err->message : sqlease_strerror(st);
    char subject[SQLEASE_MAX_NAME + 128];

    if (strcmp(what, "list") == 0)
        snprintf(subject, sizeof subject, "table %s", table_of(a));
    else
        snprintf(subject, sizeof subject, "lease '%s'", name_of(a));
    if (strstr(msg, subject) != NULL || (st == SQLEASE_ENOTABLE && strstr(msg, table_of(a))))
        cli_error("%s%s", msg, cli_error_hint(db, err));
    else
        cli_error("%s: %s failed: %s%s", subject, what, msg, cli_error_hint(db, err));
    if ((st == SQLEASE_ENOTABLE || st == SQLEASE_ENOROW) && strstr(msg, "migrate") == NULL)
        cli_error("run `sqlease migrate` first");
    return cli_exit_for_status(st);
}

int cli_cmd_migrate(const cli_args *a)
{
    sqlease_db *db = NULL;
    sqlease_error err;
    const char *name;
    const char *names[1];
    unsigned seen;
    int rc, st;

    cli_log_init(a, SQLEASE_LOG_WARN);
    rc = parse_bare_flags(a, NULL, 0, &seen);
    if (rc != CLI_CONTINUE)
        return rc;
    rc = connect_db(a, &db);
    if (rc != CLI_CONTINUE)
        return rc;
    name = name_of(a);
    names[0] = name;
    memset(&err, 0, sizeof err);
    st = sqlease_migrate(db, table_of(a), names, 1, &err);
    /* The fire ledger's table beside it: `cron` and `run --schedule`
     * record each fire there (an idempotent CREATE when it exists). */
    if (st == SQLEASE_OK)
        st = sqlease_fire_migrate(db, fire_table_of(a), &err);
    /* And the holder history's: every hold of a lease is recorded there
     * from now on (an idempotent CREATE too). */
    if (st == SQLEASE_OK)
        st = sqlease_history_migrate(db, history_table_of(a), &err);
    if (st != SQLEASE_OK) {
        cli_error("%s%s", err.message[0] != '\0' ? err.message : sqlease_strerror(st),
                  cli_error_hint(db, &err));
        rc = cli_exit_for_status(st);
    } else {
        printf("migrated table %s, fire table %s and history table %s; lease row '%s' "
               "present\n", table_of(a), fire_table_of(a), history_table_of(a), name);
        rc = CLI_EXIT_OK;
    }
    sqlease_db_close(db);
    return rc;
}

/* "2024-11-03T06:40:00.500Z" for an epoch-ms instant (UTC). */
static void format_utc(int64_t ms, char *buf, size_t cap)
{
    time_t secs = (time_t)(ms / 1000);
    struct tm *tm = gmtime(&secs);

    if (ms <= 0 || tm == NULL) {
        snprintf(buf, cap, "-");
        return;
    }
    snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm->tm_year + 1900,
             tm->tm_mon + 1, tm->tm_mday, tm->tm_hour, tm->tm_min, tm->tm_sec,
             (int)(ms % 1000));
}

/* The ready followers of the lease (sqlease_lease_ready), best first. */
#define READY_SHOWN 16
typedef struct ready_list {
    int n;
    int more;          /* beyond READY_SHOWN */
    int failed;        /* the read failed: not shown */
    const char *holder; /* left out: the holder's own (NULL: none) */
    char owner[READY_SHOWN][SQLEASE_MAX_OWNER + 1];
    int64_t priority[READY_SHOWN];
    int64_t seen_ago[READY_SHOWN];
} ready_list;

static int collect_ready(void *ud, const char *owner, int64_t priority, int64_t seen_ago_ms)
{
    ready_list *r = ud;

    /* The holder keeps its ready row while it holds: it is not one of
     * those ready to take over. */
    if (r->holder != NULL && strcmp(owner, r->holder) == 0)
        return 0;
    if (r->n >= READY_SHOWN) {
        r->more++;
        return 0;
    }
    snprintf(r->owner[r->n], sizeof r->owner[0], "%s", owner);
    r->priority[r->n] = priority;
    r->seen_ago[r->n] = seen_ago_ms;
    r->n++;
    return 0;
}

/* "120 ms" or "1.2 s". */
static void format_ago(int64_t ms, char *buf, size_t cap)
{
    if (ms < 0)
        snprintf(buf, cap, "?");
    else if (ms < 1000)
        snprintf(buf, cap, "%" PRId64 " ms", ms);
    else
        snprintf(buf, cap, "%" PRId64 ".%" PRId64 " s", ms / 1000, ms % 1000 / 100);
}

/* The lines of a hand-over under way, the holder's priority and the
 * ready followers: only when there is something to say, so that a fleet
 * that uses none of it sees the status it always saw. */
static void print_handoff_human(const sqlease_lease_info *in, const ready_list *r)
{
    char who[SQLE_QUOTED_ID_MAX], ago[32];
    int i;

    if (in->held && in->handoff_to[0] != '\0')
        printf("hand-over:  asked for, to %s (the holder hands over at its next renew)\n",
               strcmp(in->handoff_to, "*") == 0
                   ? "the best ready follower"
                   : sqle_quote_id(in->handoff_to, who, sizeof who));
    else if (in->reserved)
        printf("hand-over:  reserved for %s for %" PRId64 " ms more\n",
               sqle_quote_id(in->handoff_to, who, sizeof who), in->expires_at_ms - in->db_now_ms);
    if (in->held && (in->priority != 0 || r->n > 0))
        printf("priority:   %" PRId64 "\n", in->priority);
    if (r->n == 0)
        return;
    printf("ready:      ");
    for (i = 0; i < r->n; i++) {
        format_ago(r->seen_ago[i], ago, sizeof ago);
        printf("%s%s (priority %" PRId64 ", seen %s ago)", i > 0 ? ", " : "",
               sqle_quote_id(r->owner[i], who, sizeof who), r->priority[i], ago);
    }
    if (r->more > 0)
        printf(", and %d more", r->more);
    printf("\n");
}

static void print_status_human(const cli_args *a, const char *dialect,
                               const sqlease_lease_info *in, int64_t local_ms)
{
    char dbt[80], lt[80], who[SQLE_QUOTED_ID_MAX], data[SQLE_SHOWN_MAX(SQLEASE_MAX_DATA)];

    format_utc(in->db_now_ms, dbt, sizeof dbt);
    format_utc(local_ms, lt, sizeof lt);
    sqle_quote_id(in->owner, who, sizeof who);
    printf("lease:      %s (table %s, %s)\n", name_of(a), table_of(a), dialect);
    if (in->held)
        printf("owner:      %s\n", who);
    else if (in->owner[0] != '\0')
        printf("owner:      free (expired; last owner %s)\n", who);
    else
        printf("owner:      free\n");
    printf("data:       %s\n", show_data(in, data, sizeof data));
    printf("token:      %" PRId64 "\n", in->token);
    if (in->held)
        printf("expires in: %" PRId64 " ms\n", in->expires_at_ms - in->db_now_ms);
    else
        printf("expires in: -\n");
    printf("db now:     %" PRId64 " ms (%s)\n", in->db_now_ms, dbt);
    printf("local now:  %" PRId64 " ms (%s)\n", local_ms, lt);
    printf("skew:       %+" PRId64 " ms (database clock minus this host's)\n",
           in->db_now_ms - local_ms);
}

/* The members of one lease's JSON object, shared by status and list. */
static void status_json_fields(cli_json *j, const cli_args *a, const char *dialect,
                               const char *name, const sqlease_lease_info *in, int64_t local_ms)
{
    cli_json_string(j, "name", name);
    cli_json_string(j, "table", table_of(a));
    cli_json_string(j, "owner", in->owner);
    cli_json_bool(j, "held", in->held);
    cli_json_int(j, "token", in->token);
    cli_json_int(j, "expires_in_ms", in->held ? in->expires_at_ms - in->db_now_ms : 0);
    cli_json_string_or_null(j, "data", data_of(in));
    cli_json_int(j, "acquired_at_ms", in->acquired_at_ms);
    cli_json_int(j, "expires_at_ms", in->expires_at_ms);
    cli_json_int(j, "db_now_ms", in->db_now_ms);
    cli_json_int(j, "local_now_ms", local_ms);
    cli_json_int(j, "skew_ms", in->db_now_ms - local_ms);
    cli_json_string(j, "dialect", dialect);
    cli_json_string_or_null(j, "handoff_to", in->handoff_to[0] != '\0' ? in->handoff_to : NULL);
    cli_json_bool(j, "reserved", in->reserved);
    cli_json_int(j, "priority", in->priority);
}

static void print_status_json(const cli_args *a, const char *dialect,
                              const sqlease_lease_info *in, int64_t local_ms,
                              const ready_list *r)
{
    cli_json j, e;
    int i;

    cli_json_begin(&j, stdout);
    status_json_fields(&j, a, dialect, name_of(a), in, local_ms);
    if (!r->failed) {
        cli_json_array_begin(&j, "ready");
        for (i = 0; i < r->n; i++) {
            cli_json_element(&j, &e);
            cli_json_string(&e, "owner", r->owner[i]);
            cli_json_int(&e, "priority", r->priority[i]);
            cli_json_int(&e, "seen_ms_ago", r->seen_ago[i]);
            cli_json_close(&e);
        }
        cli_json_array_end(&j);
    }
    cli_json_end(&j);
}

typedef struct watch_http watch_http;
static int watch(const cli_args *a, const sqlease_db *db, sqlease_lease *lease,
                 const char *dialect, int json, const sqlease_lease_info *first,
                 watch_http *wh);
static int watch_http_start(const cli_args *a, const sqlease_db *db, const char *addr_port,
                            watch_http **out);
static void watch_http_read(watch_http *wh, int st, const sqlease_lease_info *in,
                            const sqlease_error *err);
static void watch_http_stop(watch_http *wh);

int cli_cmd_status(const cli_args *a)
{
    static const char *const flags[] = {"--json", "--watch"};
    sqlease_db *db;
    sqlease_lease *lease;
    sqlease_lease_info info;
    sqlease_error err;
    watch_http *wh = NULL;
    const char *http;
    int64_t before, after;
    unsigned seen;
    int rc, st;

    cli_log_init(a, SQLEASE_LOG_WARN);
    rc = parse_flags(a, flags, 2, &seen, &http);
    if (rc != CLI_CONTINUE)
        return rc;
    if (http != NULL) {
        char msg[400];
        if (!(seen & 2u))
            return cli_usage("status: --http serves what a watch reads: it needs --watch");
        if (cli_http_check(http, msg, sizeof msg) != CLI_CONTINUE)
            return cli_usage("%s", msg);
    }
    /* A watch ends with SIGINT or SIGTERM, and that is its normal end:
     * routed before the first statement, so that one arriving at any
     * moment is seen. */
    if ((seen & 2u) && sqle_signal_setup() != 0) {
        cli_error("cannot install signal handlers");
        return CLI_EXIT_OSERR;
    }
    rc = open_lease(a, &db, &lease);
    if (rc != CLI_CONTINUE)
        return rc;
    if (http != NULL && (rc = watch_http_start(a, db, http, &wh)) != CLI_CONTINUE) {
        sqlease_lease_free(lease);
        sqlease_db_close(db);
        return rc;
    }
    memset(&err, 0, sizeof err);
    memset(&info, 0, sizeof info);
    /* The local clock is read on both sides of the query and the midpoint
     * is compared with the database's reading, so the skew is not
     * inflated by the round trip. */
    before = sqle_wall_ms();
    st = sqlease_lease_status(lease, &info, &err);
    after = sqle_wall_ms();
    watch_http_read(wh, st, &info, &err);
    if (st != SQLEASE_OK) {
        rc = fail_lease(a, db, "status", &err, st);
    } else {
        const char *dialect = sqlease_db_dialect(db);
        int64_t local = before + (after - before) / 2;
        ready_list ready;
        sqlease_error rerr;

        /* One more read: the ready followers (supervise --handoff). */
        memset(&ready, 0, sizeof ready);
        memset(&rerr, 0, sizeof rerr);
        ready.holder = info.held ? info.owner : NULL;
        if (sqlease_lease_ready(lease, collect_ready, &ready, &rerr) != SQLEASE_OK) {
            ready.failed = 1;
            ready.n = 0;
            cli_log(SQLEASE_LOG_WARN, "lease '%s': ready followers not read: %s", name_of(a),
                    rerr.message);
        }
        if (seen & 1u) {
            print_status_json(a, dialect ? dialect : "", &info, local, &ready);
        } else {
            print_status_human(a, dialect ? dialect : "", &info, local);
            print_handoff_human(&info, &ready);
        }
        rc = CLI_EXIT_OK;
        if (seen & 2u)
            rc = watch(a, db, lease, dialect ? dialect : "", (seen & 1u) != 0, &info, wh);
    }
    watch_http_stop(wh);
    sqlease_lease_free(lease);
    sqlease_db_close(db);
    return rc;
}

int cli_cmd_release(const cli_args *a)
{
    static const char *const flags[] = {"--force"};
    sqlease_db *db;
    sqlease_lease *lease;
    sqlease_lease_info before;
    sqlease_error err;
    unsigned seen;
    char who[SQLE_QUOTED_ID_MAX];
    int released = 0;
    int rc, st;

    cli_log_init(a, SQLEASE_LOG_WARN);
    rc = parse_bare_flags(a, flags, 1, &seen);
    if (rc != CLI_CONTINUE)
        return rc;
    if (!(seen & 1u))
        return cli_usage("release needs --force (it clears the row whoever holds it)");
    rc = open_lease(a, &db, &lease);
    if (rc != CLI_CONTINUE)
        return rc;
    memset(&err, 0, sizeof err);
    memset(&before, 0, sizeof before);
    /* Read the row first only to say whose lease was cleared. */
    st = sqlease_lease_status(lease, &before, &err);
    if (st == SQLEASE_OK)
        st = sqlease_lease_release_force(lease, &released, &err);
    if (st != SQLEASE_OK) {
        rc = fail_lease(a, db, "release", &err, st);
    } else {
        if (released && before.held)
            printf("released lease '%s' held by %s (token %" PRId64 ")\n", name_of(a),
                   sqle_quote_id(before.owner, who, sizeof who), before.token);
        else if (released)
            printf("lease '%s' was not held; row cleared (token %" PRId64 ")\n", name_of(a),
                   before.token);
        else
            printf("lease '%s': no row cleared\n", name_of(a));
        rc = CLI_EXIT_OK;
    }
    sqlease_lease_free(lease);
    sqlease_db_close(db);
    return rc;
}

/* ------------------------------------------------------------------ */
/* status --watch                                                      */
/* ------------------------------------------------------------------ */

/* One change of holder or token, as one line: the database's time of the
 * read, then who holds the lease (or that it is free), the token, and the
 * holder's data. */
static void print_change_human(const sqlease_lease_info *in)
{
    char t[80], who[SQLE_QUOTED_ID_MAX], data[SQLE_SHOWN_MAX(SQLEASE_MAX_DATA)];

    format_utc(in->db_now_ms, t, sizeof t);
    sqle_quote_id(in->owner, who, sizeof who);
    if (in->held)
        printf("%s holder %s token %" PRId64 " expires in %" PRId64 " ms data %s\n", t,
               who, in->token, in->expires_at_ms - in->db_now_ms,
               show_data(in, data, sizeof data));
    else if (in->owner[0] != '\0')
        printf("%s free (expired; last holder %s) token %" PRId64 "\n", t, who,
               in->token);
    else
        printf("%s free token %" PRId64 "\n", t, in->token);
}

/* How often a watch reads the row: the retry the flags, the environment
 * or the DSN's odbc.ini section set, else the one derived from the ttl
 * they set, else the default.  Timing that breaks a supervisor's rules is
 * no reason to refuse a watch: then the retry as given, or the default. */
static int64_t watch_interval(const cli_args *a, const sqlease_db *db)
{
    sqlease_options in, out;
    sqlease_error err;

    if (a->retry_ms > 0)
        return a->retry_ms;
    cli_lease_options(a, &in);
    if (sqlease_options_effective(db, &in, &out, &err) == SQLEASE_OK &&
        out.retry_ms > 0)
        return out.retry_ms;
    return SQLEASE_DEFAULT_RETRY_MS;
}

/* How long a watch may go without an answer and still call itself
 * healthy: the renew deadline, resolved as the retry is (a holder with
 * the same settings stops its work after that long without one). */
static int64_t watch_deadline(const cli_args *a, const sqlease_db *db)
{
    sqlease_options in, out;
    sqlease_error err;

    if (a->renew_deadline_ms > 0)
        return a->renew_deadline_ms;
    cli_lease_options(a, &in);
    if (sqlease_options_effective(db, &in, &out, &err) == SQLEASE_OK &&
        out.renew_deadline_ms > 0)
        return out.renew_deadline_ms;
    return SQLEASE_DEFAULT_RENEW_DEADLINE_MS;
}

/* ---- status --watch --http ------------------------------------------- */

/*
 * What the watch's endpoints answer from: its own reads of the row, which
 * the main loop records here after each one (watch_http_read) and the
 * server's threads read under the lock.  A watch holds no lease, so
 * /leader is always 503 and this_instance always false; /holder is the
 * last read (no statement of its own), and /metrics what the row said.
 */
struct watch_http {
    cli_http *server;
    sqle_mutex mu;
    char name[SQLEASE_MAX_NAME + 1];
    char labels[2 * SQLEASE_MAX_NAME + 16];
    int64_t deadline_ms;      /* healthy while a read answered within this */
    int have;                 /* a read has answered */
    sqlease_lease_info info;  /* the last one that did */
    int64_t ok_mono;          /* when */
    char error[512];          /* the last read's failure; "" if it answered */
    uint64_t reads, changes;
};

/* A read answered within the deadline: the answer is worth giving.  Under
 * mu; *ago gets how long ago it answered. */
static int watch_fresh(const watch_http *wh, int64_t *ago)
{
    *ago = wh->have ? sqle_mono_ms() - wh->ok_mono : -1;
    return wh->have && *ago <= wh->deadline_ms;
}

static int watch_http_metrics(void *ud, cli_text *out)
{
    watch_http *wh = ud;
    cli_metrics_row v;
    int64_t ago;

    memset(&v, 0, sizeof v);
    sqle_mutex_lock(&wh->mu);
    (void)watch_fresh(wh, &ago);
    v.held = wh->have && wh->info.held;
    v.token = wh->info.token;
    v.expires_in_ms = v.held ? wh->info.expires_at_ms - wh->info.db_now_ms : 0;
    v.last_contact_ms = ago;
    v.reads = wh->reads;
    v.changes = wh->changes;
    cli_metrics_format_row(wh->labels, &v, out);
    sqle_mutex_unlock(&wh->mu);
    return 200;
}

static int watch_http_health(void *ud, cli_text *out)
{
    watch_http *wh = ud;
    int64_t ago;
    int status = 200;

    sqle_mutex_lock(&wh->mu);
    if (watch_fresh(wh, &ago)) {
        cli_text_printf(out, "ok: watching lease '%s'; the database answered %" PRId64
                        " ms ago", wh->name, ago);
    } else {
        status = 503;
        if (!wh->have)
            cli_text_puts(out, "the database has not answered yet");
        else
            cli_text_printf(out, "the database has not answered for %" PRId64 " ms (renew"
                            " deadline %" PRId64 " ms)", ago, wh->deadline_ms);
        if (wh->error[0] != '\0')
            cli_text_printf(out, ": %s", wh->error);
    }
    sqle_mutex_unlock(&wh->mu);
    return status;
}

static int watch_http_leader(void *ud, cli_text *out)
{
    (void)ud;
    cli_text_puts(out, "not the leader: status --watch holds no lease");
    return 503;
}

static int watch_http_holder(void *ud, cli_text *out)
{
    watch_http *wh = ud;
    int64_t ago;
    int status = 200;

    sqle_mutex_lock(&wh->mu);
    if (watch_fresh(wh, &ago)) {
        cli_http_holder_json(out, wh->name, &wh->info, 0, ago);
    } else {
        status = 503;
        cli_http_error_json(out, wh->error[0] != '\0' ? wh->error
                                                     : "the database has not answered yet");
    }
    sqle_mutex_unlock(&wh->mu);
    return status;
}

static int watch_http_start(const cli_args *a, const sqlease_db *db, const char *addr_port,
                            watch_http **out)
{
    watch_http *wh = calloc(1, sizeof *wh);
    cli_http_provider p;
    char err[600], n[2 * SQLEASE_MAX_NAME + 1];
    int rc;

    *out = NULL;
    if (wh == NULL || sqle_mutex_init(&wh->mu) != 0) {
        free(wh);
        cli_error("out of memory");
        return CLI_EXIT_OSERR;
    }
    snprintf(wh->name, sizeof wh->name, "%s", name_of(a));
    cli_metrics_escape(wh->name, n, sizeof n);
    snprintf(wh->labels, sizeof wh->labels, "name=\"%s\"", n);
    wh->deadline_ms = watch_deadline(a, db);
    memset(&p, 0, sizeof p);
    p.ud = wh;
    p.metrics = watch_http_metrics;
    p.health = watch_http_health;
    p.leader = watch_http_leader;
    p.holder = watch_http_holder;
    rc = cli_http_start(addr_port, &p, &wh->server, err, sizeof err);
    if (rc != CLI_CONTINUE) {
        cli_error("%s", err);
        sqle_mutex_destroy(&wh->mu);
        free(wh);
        return rc;
    }
    cli_log(SQLEASE_LOG_INFO, "serving /metrics, /health, /leader and /holder on %s",
            cli_http_url(wh->server));
    *out = wh;
    return CLI_CONTINUE;
}

/* After every read of the row (NULL wh: no --http). */
static void watch_http_read(watch_http *wh, int st, const sqlease_lease_info *in,
                            const sqlease_error *err)
{
    if (wh == NULL)
        return;
    sqle_mutex_lock(&wh->mu);
    wh->reads++;
    if (st == SQLEASE_OK) {
        if (wh->have && (in->token != wh->info.token || in->held != wh->info.held ||
                         strcmp(in->owner, wh->info.owner) != 0))
            wh->changes++;
        wh->info = *in;
        wh->have = 1;
        wh->ok_mono = sqle_mono_ms();
        wh->error[0] = '\0';
    } else {
        snprintf(wh->error, sizeof wh->error, "%s",
                 err->message[0] != '\0' ? err->message : sqlease_strerror(st));
    }
    sqle_mutex_unlock(&wh->mu);
}

static void watch_http_stop(watch_http *wh)
{
    if (wh == NULL)
        return;
    cli_http_stop(wh->server);
    sqle_mutex_destroy(&wh->mu);
    free(wh);
}

/*
 * Read the row every retry and print it whenever the holder or the token
 * differs from what was printed last (an expired hold counts as free:
 * that is when anyone may take it).  A read that fails is logged and the
 * watch goes on; SIGINT or SIGTERM ends it with status 0; a reader of
 * its output that has gone ends it with 74, as a failed write does.  Each
 * line is flushed at once, for a script reading it through a pipe.
 */
static int watch(const cli_args *a, const sqlease_db *db, sqlease_lease *lease,
                 const char *dialect, int json, const sqlease_lease_info *first,
                 watch_http *wh)
{
    char owner[SQLEASE_MAX_OWNER + 1];
    int64_t token = first->token;
    int64_t retry = watch_interval(a, db);

    snprintf(owner, sizeof owner, "%s", first->held ? first->owner : "");
    if (fflush(stdout) != 0)
        return CLI_EXIT_OK; /* main reports the failed write */
    while (sqle_signal_received() == 0) {
        sqlease_lease_info in;
        sqlease_error err;
        int64_t until = sqle_mono_ms() + retry, before, after;
        int st;

        /* Slices, so that a signal is answered within 100 ms, and a
         * reader that has gone too (`status --watch | head -1`): the
         * watch has no one to tell a change to. */
        while (sqle_signal_received() == 0 && sqle_mono_ms() < until) {
            int64_t left = until - sqle_mono_ms();
            if (cli_os_stdout_gone()) {
                cli_error("cannot write to standard output");
                return CLI_EXIT_IOERR;
            }
            sqle_sleep_ms(left < 100 ? left : 100);
        }
        if (sqle_signal_received() != 0)
            break;
        memset(&err, 0, sizeof err);
        before = sqle_wall_ms();
        st = sqlease_lease_status(lease, &in, &err);
        after = sqle_wall_ms();
        watch_http_read(wh, st, &in, &err);
        if (st != SQLEASE_OK) {
            cli_log(SQLEASE_LOG_WARN, "status --watch: %s (trying again in %" PRId64 " ms)",
                    err.message[0] != '\0' ? err.message : sqlease_strerror(st), retry);
            continue;
        }
        if (token == in.token && strcmp(owner, in.held ? in.owner : "") == 0)
            continue;
        token = in.token;
        snprintf(owner, sizeof owner, "%s", in.held ? in.owner : "");
        if (json) {
            /* A change's line: the row alone (the ready followers cost a
             * read of their own, which a watch does not make). */
            static const ready_list none = {0, 0, 1, NULL, {{0}}, {0}, {0}};
            print_status_json(a, dialect, &in, before + (after - before) / 2, &none);
        }
        else
            print_change_human(&in);
        if (fflush(stdout) != 0)
            break;
    }
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* list                                                                */
/* ------------------------------------------------------------------ */

typedef struct list_row {
    char name[SQLEASE_MAX_NAME + 1];
    sqlease_lease_info info;
} list_row;

typedef struct list_rows {
    list_row *v;
    size_t n, cap;
    int failed;
} list_rows;

static int collect_row(void *ud, const char *name, const sqlease_lease_info *info)
{
    list_rows *r = ud;

    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        list_row *v = realloc(r->v, cap * sizeof *v);
        if (v == NULL) {
            r->failed = 1;
            return 1;
        }
        r->v = v;
        r->cap = cap;
    }
    snprintf(r->v[r->n].name, sizeof r->v[r->n].name, "%s", name);
    r->v[r->n].info = *info;
    r->n++;
    return 0;
}

/* Display width of a UTF-8 string, counted in code points (close enough
 * for the alignment of names and owners). */
static size_t width(const char *s)
{
    size_t w = 0;

    for (; *s != '\0'; s++)
        if (((unsigned char)*s & 0xc0) != 0x80)
            w++;
    return w;
}

static void pad(const char *s, size_t to)
{
    size_t w = width(s);

    fputs(s, stdout);
    for (; w < to; w++)
        fputc(' ', stdout);
}

/* One line per lease, columns aligned: name, owner, held, token, expires
 * in (ms), data; "-" where there is nothing.  Names, owners and data are
 * as the table has them, so each is shown with its control characters
 * escaped (internal.h), and the columns are as wide as what is shown. */
static void print_list_human(const list_rows *r)
{
    size_t wn = strlen("NAME"), wo = strlen("OWNER"), wt = strlen("TOKEN"), i;
    char tok[32], who[SQLE_QUOTED_ID_MAX], name[SQLE_SHOWN_MAX(SQLEASE_MAX_NAME)];
    char data[SQLE_SHOWN_MAX(SQLEASE_MAX_DATA)];

    for (i = 0; i < r->n; i++) {
        const sqlease_lease_info *in = &r->v[i].info;
        if (width(sqle_show_text(r->v[i].name, name, sizeof name)) > wn)
            wn = width(name);
        if (in->owner[0] != '\0' && width(sqle_quote_id(in->owner, who, sizeof who)) > wo)
            wo = width(who);
        snprintf(tok, sizeof tok, "%" PRId64, in->token);
        if (strlen(tok) > wt)
            wt = strlen(tok);
    }
    pad("NAME", wn + 2);
    pad("OWNER", wo + 2);
    pad("HELD", 6);
    pad("TOKEN", wt + 2);
    pad("EXPIRES_IN_MS", 15);
    fputs("DATA\n", stdout);
    for (i = 0; i < r->n; i++) {
        const sqlease_lease_info *in = &r->v[i].info;
        char exp[32];

        snprintf(tok, sizeof tok, "%" PRId64, in->token);
        if (in->held)
            snprintf(exp, sizeof exp, "%" PRId64, in->expires_at_ms - in->db_now_ms);
        else
            snprintf(exp, sizeof exp, "-");
        pad(sqle_show_text(r->v[i].name, name, sizeof name), wn + 2);
        pad(in->owner[0] != '\0' ? sqle_quote_id(in->owner, who, sizeof who) : "-", wo + 2);
        pad(in->held ? "yes" : "no", 6);
        pad(tok, wt + 2);
        pad(exp, 15);
        fputs(show_data(in, data, sizeof data), stdout);
        fputc('\n', stdout);
    }
}

/* A JSON array of the objects `status --json` prints, one per line. */
static void print_list_json(const cli_args *a, const char *dialect, const list_rows *r,
                            int64_t local_ms)
{
    size_t i;

    fputc('[', stdout);
    for (i = 0; i < r->n; i++) {
        cli_json j;
        if (i > 0)
            fputs(",\n", stdout);
        cli_json_begin(&j, stdout);
        status_json_fields(&j, a, dialect, r->v[i].name, &r->v[i].info, local_ms);
        cli_json_close(&j);
    }
    fputs("]\n", stdout);
}

/* Held leases counted per owner (a group's shares at a glance): group
 * presence rows (SQLEASE_GROUP_PRESENCE_PREFIX) are counted as the
 * owner's presence, not as a lease; free and expired rows as "-".  One
 * line per owner, in the order owners are first met in name order. */
static int print_list_by_owner(int json, const list_rows *r)
{
    typedef struct owner_count {
        const char *owner;
        int64_t leases;
        int present;
    } owner_count;
    owner_count *v = calloc(r->n + 1, sizeof *v);
    size_t n = 0, i, k;
    int64_t free_rows = 0;
    size_t pl = strlen(SQLEASE_GROUP_PRESENCE_PREFIX);
    char who[SQLE_QUOTED_ID_MAX];

    if (v == NULL)
        return 0;
    for (i = 0; i < r->n; i++) {
        const sqlease_lease_info *in = &r->v[i].info;
        int presence = strncmp(r->v[i].name, SQLEASE_GROUP_PRESENCE_PREFIX, pl) == 0;
        if (!in->held) {
            if (!presence)
                free_rows++;
            continue;
        }
        for (k = 0; k < n; k++)
            if (strcmp(v[k].owner, in->owner) == 0)
                break;
        if (k == n)
            v[n++].owner = in->owner;
        if (presence)
            v[k].present = 1;
        else
            v[k].leases++;
    }
    if (json) {
        fputc('[', stdout);
        for (k = 0; k < n; k++) {
            cli_json j;
            if (k > 0)
                fputs(",\n", stdout);
            cli_json_begin(&j, stdout);
            cli_json_string(&j, "owner", v[k].owner);
            cli_json_int(&j, "leases", v[k].leases);
            cli_json_bool(&j, "group_member", v[k].present);
            cli_json_close(&j);
        }
        fputs("]\n", stdout);
    } else {
        printf("%-24s %8s  %s\n", "OWNER", "LEASES", "GROUP_MEMBER");
        for (k = 0; k < n; k++) {
            pad(sqle_quote_id(v[k].owner, who, sizeof who), 24);
            printf(" %8" PRId64 "  %s\n", v[k].leases, v[k].present ? "yes" : "no");
        }
        printf("%-24s %8" PRId64 "\n", "-", free_rows);
    }
    free(v);
    return 1;
}

int cli_cmd_list(const cli_args *a)
{
    static const char *const flags[] = {"--json", "--by-owner"};
    sqlease_db *db = NULL;
    sqlease_error err;
    list_rows rows;
    int64_t before, after;
    unsigned seen;
    int rc, st;

    cli_log_init(a, SQLEASE_LOG_WARN);
    rc = parse_bare_flags(a, flags, 2, &seen);
    if (rc != CLI_CONTINUE)
        return rc;
    rc = connect_db(a, &db);
    if (rc != CLI_CONTINUE)
        return rc;
    memset(&err, 0, sizeof err);
    memset(&rows, 0, sizeof rows);
    before = sqle_wall_ms();
    st = sqlease_list(db, table_of(a), collect_row, &rows, &err);
    after = sqle_wall_ms();
    if (st == SQLEASE_OK && rows.failed) {
        st = SQLEASE_ENOMEM;
        snprintf(err.message, sizeof err.message, "out of memory");
    }
    if (st != SQLEASE_OK) {
        rc = fail_lease(a, db, "list", &err, st);
    } else {
        const char *dialect = sqlease_db_dialect(db);
        if ((seen & 2u) && !print_list_by_owner(seen & 1u, &rows)) {
            cli_error("list: out of memory");
            free(rows.v);
            sqlease_db_close(db);
            return CLI_EXIT_OSERR;
        }
        if (seen & 2u)
            ;
        else if (seen & 1u)
            print_list_json(a, dialect ? dialect : "", &rows, before + (after - before) / 2);
        else
            print_list_human(&rows);
        rc = CLI_EXIT_OK;
    }
    free(rows.v);
    sqlease_db_close(db);
    return rc;
}

/* ------------------------------------------------------------------ */
/* transfer                                                            */
/* ------------------------------------------------------------------ */

/* How often transfer reads the row while it waits for the lease to move. */
#define TRANSFER_POLL_MS 50

/* transfer's flags: --to OWNER, --timeout D (more than 0). */
static int parse_transfer_flags(const cli_args *a, const char **to, int64_t *timeout_ms)
{
    *to = NULL;
    *timeout_ms = 0;
    for (int i = 0; i < a->cmd_argc; i++) {
        const char *arg = a->cmd_argv[i];
        const char *val = NULL;
        int r;

        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            cli_print_help();
            return CLI_EXIT_OK;
        }
        r = cli_flag_value(a->cmd_argc, a->cmd_argv, &i, "--to", &val);
        if (r < 0)
            return CLI_EXIT_USAGE;
        if (r > 0) {
            if (val[0] == '\0')
                return cli_usage("--to must not be empty");
            *to = val;
            continue;
        }
        r = cli_flag_value(a->cmd_argc, a->cmd_argv, &i, "--timeout", &val);
        if (r < 0)
            return CLI_EXIT_USAGE;
        if (r > 0) {
            if (cli_parse_duration("--timeout", val, timeout_ms) != 0)
                return CLI_EXIT_USAGE;
            if (*timeout_ms <= 0)
                return cli_usage("--timeout: must be more than 0");
            continue;
        }
        if (arg[0] == '-')
            return cli_unknown_flag(a->command, arg);
        return cli_usage("%s: unexpected argument '%s'", a->command, arg);
    }
    return CLI_CONTINUE;
}

/* Whether `owner` is among the ready followers read. */
static int ready_has(const ready_list *r, const char *owner)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->owner[i], owner) == 0)
            return 1;
    return 0;
}

/* The best ready follower but the holder, or NULL. */
static const char *ready_best_but(const ready_list *r, const char *holder)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->owner[i], holder) != 0)
            return r->owner[i];
    return NULL;
}

/*
 * `sqlease transfer [--to OWNER] [--timeout D]`: ask whoever holds the
 * lease to hand it over (to OWNER, or to its best ready follower), then
 * read the row every 50 ms until another hold has it.  The holder answers
 * at its next renew (within a heartbeat), stops its command after a lead
 * of a retry, and hands the row over reserved for the target, which
 * takes it at its next read.
 * Exit 0 moved (to OWNER, when named); 75 not held, a hand-over pending
 * already, no ready follower to pick, or not moved within the timeout
 * (default: the holder's ttl), when a request the holder never answered
 * is withdrawn; 64 usage; 69 the database.
 */
int cli_cmd_transfer(const cli_args *a)
{
    sqlease_db *db;
    sqlease_lease *lease;
    sqlease_lease_info req, now;
    sqlease_error err;
    ready_list ready;
    const char *to = NULL;
    char who[SQLE_QUOTED_ID_MAX], whom[SQLE_QUOTED_ID_MAX];
    int64_t timeout_ms, started, until;
    int rc, st;

    cli_log_init(a, SQLEASE_LOG_WARN);
    rc = parse_transfer_flags(a, &to, &timeout_ms);
    if (rc != CLI_CONTINUE)
        return rc;
    if (to != NULL) {
        sqlease_options o;
        sqlease_options_init(&o);
        o.owner = to;
        memset(&err, 0, sizeof err);
        if (sqlease_options_check(&o, &err) != SQLEASE_OK)
            return cli_usage("--to: %s", err.message);
    }
    rc = open_lease(a, &db, &lease);
    if (rc != CLI_CONTINUE)
        return rc;
    memset(&err, 0, sizeof err);
    memset(&ready, 0, sizeof ready);
    memset(&now, 0, sizeof now);
    /* Whom it can go to: without --to, a ready follower must be there
     * (else nobody is preferred, and the holder would only release it). */
    st = sqlease_lease_status(lease, &now, &err);
    if (st == SQLEASE_OK)
        st = sqlease_lease_ready(lease, collect_ready, &ready, &err);
    if (st != SQLEASE_OK) {
        rc = fail_lease(a, db, "transfer", &err, st);
        goto done;
    }
    if (now.held && to != NULL && strcmp(now.owner, to) == 0) {
        printf("lease '%s' is held by %s already (token %" PRId64 ")\n", name_of(a),
               sqle_quote_id(to, who, sizeof who), now.token);
        rc = CLI_EXIT_OK;
        goto done;
    }
    if (now.held && to == NULL && ready_best_but(&ready, now.owner) == NULL) {
        cli_error("lease '%s': no ready follower to hand it over to (run the others with "
                  "`supervise --handoff`, or name one with --to)", name_of(a));
        rc = CLI_EXIT_NOT_HELD;
        goto done;
    }
    if (now.held && to != NULL && !ready_has(&ready, to))
        cli_log(SQLEASE_LOG_WARN, "lease '%s': %s is not a ready follower (it keeps no ready "
                "row); if it does not take the lease, the row is free again after the "
                "reservation", name_of(a), sqle_quote_id(to, who, sizeof who));
    started = sqle_mono_ms();
    memset(&req, 0, sizeof req);
    st = sqlease_lease_request_handoff(lease, to, &req, &err);
    if (st != SQLEASE_OK) {
        if (st == SQLEASE_NOT_HELD || st == SQLEASE_PENDING) {
            cli_error("%s", err.message);
            rc = CLI_EXIT_NOT_HELD;
        } else {
            rc = fail_lease(a, db, "transfer", &err, st);
        }
        goto done;
    }
    if (timeout_ms <= 0)
        timeout_ms = req.ttl_ms > 0 ? req.ttl_ms : SQLEASE_DEFAULT_TTL_MS;
    until = started + timeout_ms;
    cli_log(SQLEASE_LOG_INFO, "asked %s (token %" PRId64 ") to hand lease '%s' over to %s",
            sqle_quote_id(req.owner, who, sizeof who), req.token, name_of(a),
            to != NULL ? sqle_quote_id(to, whom, sizeof whom) : "its best ready follower");
    for (;;) {
        sqle_sleep_ms(TRANSFER_POLL_MS);
        memset(&err, 0, sizeof err);
        st = sqlease_lease_status(lease, &now, &err);
        if (st == SQLEASE_OK && now.token != req.token && now.held) {
            /* Another hold has it: the target; or, its reservation passed
             * (or "*" found nobody), whoever took it, the old holder
             * included. */
            int64_t took = sqle_mono_ms() - started;
            int moved = to != NULL ? strcmp(now.owner, to) == 0
                                   : strcmp(now.owner, req.owner) != 0;

            sqle_quote_id(now.owner, whom, sizeof whom);
            if (moved) {
                printf("lease '%s' moved from %s (token %" PRId64 ") to %s (token %" PRId64
                       ") in %" PRId64 " ms\n", name_of(a), who, req.token, whom, now.token,
                       took);
                rc = CLI_EXIT_OK;
            } else {
                char target[SQLE_QUOTED_ID_MAX];
                cli_error("lease '%s' went to %s (token %" PRId64 "), not to %s: %s", name_of(a),
                          whom, now.token,
                          to != NULL ? sqle_quote_id(to, target, sizeof target)
                                     : "another ready follower",
                          "its reservation passed before it took it");
                rc = CLI_EXIT_NOT_HELD;
            }
            break;
        }
        if (st != SQLEASE_OK)
            cli_log(SQLEASE_LOG_WARN, "transfer: %s", err.message);
        if (sqle_mono_ms() < until)
            continue;
        /* Not moved in time.  A request the holder has not answered is
         * withdrawn (a holder before 0.2.1 never answers one); a hand-over
         * under way is left to finish. */
        rc = CLI_EXIT_NOT_HELD;
        if (st == SQLEASE_OK && now.held && now.token == req.token &&
            strcmp(now.handoff_to, req.handoff_to) == 0) {
            int cancelled = 0;
            sqlease_error cerr;
            memset(&cerr, 0, sizeof cerr);
            (void)sqlease_lease_cancel_handoff(lease, &req, &cancelled, &cerr);
            cli_error("lease '%s' not moved within %" PRId64 " ms: %s did not answer%s",
                      name_of(a), timeout_ms, who,
                      cancelled ? "; the request is withdrawn" : "");
        } else if (st == SQLEASE_OK && now.reserved) {
            cli_error("lease '%s' not moved within %" PRId64 " ms: handed over to %s, which has "
                      "not taken it (reserved for %" PRId64 " ms more)", name_of(a), timeout_ms,
                      sqle_quote_id(now.handoff_to, whom, sizeof whom),
                      now.expires_at_ms - now.db_now_ms);
        } else if (st == SQLEASE_OK && !now.held) {
            cli_error("lease '%s' not moved within %" PRId64 " ms: %s let it go and nobody has "
                      "taken it yet", name_of(a), timeout_ms, who);
        } else {
            cli_error("lease '%s' not moved within %" PRId64 " ms", name_of(a), timeout_ms);
        }
        break;
    }
done:
    sqlease_lease_free(lease);
    sqlease_db_close(db);
    return rc;
}
