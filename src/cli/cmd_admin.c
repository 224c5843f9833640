/*
 * cmd_admin.c -- the commands that read or administer the table rather
 * than hold a lease: `migrate` (create or upgrade the table and seed the
 * row), `status` (what the row says, human or JSON; with --watch, every
 * change of holder after it), `list` (every lease of the table) and
 * `release --force` (admin: clear the row whoever holds it).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "internal.h"
#include "json.h"
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
 * per flag present.  Returns CLI_CONTINUE or an exit code. */
static int parse_bare_flags(const cli_args *a, const char *const *flags, int nflags,
                            unsigned *seen)
{
    *seen = 0;
    for (int i = 0; i < a->cmd_argc; i++) {
        const char *arg = a->cmd_argv[i];
        int k;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            cli_print_help();
            return CLI_EXIT_OK;
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
    if (st != SQLEASE_OK) {
        cli_error("%s%s", err.message[0] != '\0' ? err.message : sqlease_strerror(st),
                  cli_error_hint(db, &err));
        rc = cli_exit_for_status(st);
    } else {
        printf("migrated table %s; lease row '%s' present\n", table_of(a), name);
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
}

static void print_status_json(const cli_args *a, const char *dialect,
                              const sqlease_lease_info *in, int64_t local_ms)
{
    cli_json j;

    cli_json_begin(&j, stdout);
    status_json_fields(&j, a, dialect, name_of(a), in, local_ms);
    cli_json_end(&j);
}

static int watch(const cli_args *a, const sqlease_db *db, sqlease_lease *lease,
                 const char *dialect, int json, const sqlease_lease_info *first);

int cli_cmd_status(const cli_args *a)
{
    static const char *const flags[] = {"--json", "--watch"};
    sqlease_db *db;
    sqlease_lease *lease;
    sqlease_lease_info info;
    sqlease_error err;
    int64_t before, after;
    unsigned seen;
    int rc, st;

    cli_log_init(a, SQLEASE_LOG_WARN);
    rc = parse_bare_flags(a, flags, 2, &seen);
    if (rc != CLI_CONTINUE)
        return rc;
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
    memset(&err, 0, sizeof err);
    memset(&info, 0, sizeof info);
    /* The local clock is read on both sides of the query and the midpoint
     * is compared with the database's reading, so the skew is not
     * inflated by the round trip. */
    before = sqle_wall_ms();
    st = sqlease_lease_status(lease, &info, &err);
    after = sqle_wall_ms();
    if (st != SQLEASE_OK) {
        rc = fail_lease(a, db, "status", &err, st);
    } else {
        const char *dialect = sqlease_db_dialect(db);
        int64_t local = before + (after - before) / 2;
        if (seen & 1u)
            print_status_json(a, dialect ? dialect : "", &info, local);
        else
            print_status_human(a, dialect ? dialect : "", &info, local);
        rc = CLI_EXIT_OK;
        if (seen & 2u)
            rc = watch(a, db, lease, dialect ? dialect : "", (seen & 1u) != 0, &info);
    }
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

/*
 * Read the row every retry and print it whenever the holder or the token
 * differs from what was printed last (an expired hold counts as free:
 * that is when anyone may take it).  A read that fails is logged and the
 * watch goes on; SIGINT or SIGTERM ends it with status 0; a reader of
 * its output that has gone ends it with 74, as a failed write does.  Each
 * line is flushed at once, for a script reading it through a pipe.
 */
static int watch(const cli_args *a, const sqlease_db *db, sqlease_lease *lease,
                 const char *dialect, int json, const sqlease_lease_info *first)
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
        if (st != SQLEASE_OK) {
            cli_log(SQLEASE_LOG_WARN, "status --watch: %s (trying again in %" PRId64 " ms)",
                    err.message[0] != '\0' ? err.message : sqlease_strerror(st), retry);
            continue;
        }
        if (token == in.token && strcmp(owner, in.held ? in.owner : "") == 0)
            continue;
        token = in.token;
        snprintf(owner, sizeof owner, "%s", in.held ? in.owner : "");
        if (json)
            print_status_json(a, dialect, &in, before + (after - before) / 2);
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
