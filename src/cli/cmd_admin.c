/*
 * cmd_admin.c -- the one-shot commands: `migrate` (create or upgrade the
 * table and seed the row), `status` (what the row says, human or JSON)
 * and `release --force` (admin: clear the row whoever holds it).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "json.h"
#include "platform.h"

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

/* ENOTABLE / ENOROW carry the library's "run sqlease migrate" message;
 * make sure the hint is there even if a driver-specific path lost it. */
static int fail_lease(const sqlease_error *err, int st)
{
    int rc = cli_fail(err, st);
    if ((st == SQLEASE_ENOTABLE || st == SQLEASE_ENOROW) &&
        strstr(err->message, "migrate") == NULL)
        cli_error("run `sqlease migrate` first");
    return rc;
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
        rc = cli_fail(&err, st);
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
    char dbt[80], lt[80];

    format_utc(in->db_now_ms, dbt, sizeof dbt);
    format_utc(local_ms, lt, sizeof lt);
    printf("lease:      %s (table %s, %s)\n", name_of(a), table_of(a), dialect);
    if (in->held)
        printf("owner:      %s\n", in->owner);
    else if (in->owner[0] != '\0')
        printf("owner:      free (expired; last owner %s)\n", in->owner);
    else
        printf("owner:      free\n");
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

static void print_status_json(const cli_args *a, const char *dialect,
                              const sqlease_lease_info *in, int64_t local_ms)
{
    cli_json j;

    cli_json_begin(&j, stdout);
    cli_json_string(&j, "name", name_of(a));
    cli_json_string(&j, "table", table_of(a));
    cli_json_string(&j, "owner", in->owner);
    cli_json_bool(&j, "held", in->held);
    cli_json_int(&j, "token", in->token);
    cli_json_int(&j, "expires_in_ms", in->held ? in->expires_at_ms - in->db_now_ms : 0);
    cli_json_int(&j, "acquired_at_ms", in->acquired_at_ms);
    cli_json_int(&j, "expires_at_ms", in->expires_at_ms);
    cli_json_int(&j, "db_now_ms", in->db_now_ms);
    cli_json_int(&j, "local_now_ms", local_ms);
    cli_json_int(&j, "skew_ms", in->db_now_ms - local_ms);
    cli_json_string(&j, "dialect", dialect);
    cli_json_end(&j);
}

int cli_cmd_status(const cli_args *a)
{
    static const char *const flags[] = {"--json"};
    sqlease_db *db;
    sqlease_lease *lease;
    sqlease_lease_info info;
    sqlease_error err;
    int64_t before, after;
    unsigned seen;
    int rc, st;

    cli_log_init(a, SQLEASE_LOG_WARN);
    rc = parse_bare_flags(a, flags, 1, &seen);
    if (rc != CLI_CONTINUE)
        return rc;
    rc = open_lease(a, &db, &lease);
    if (rc != CLI_CONTINUE)
        return rc;
    memset(&err, 0, sizeof err);
    memset(&info, 0, sizeof info);
    /* The local clock is read on both sides of the query and the midpoint
     * is compared with the database's reading, so the skew is not
     * inflated by the round trip. */
    before = sqlease_wall_ms();
    st = sqlease_lease_status(lease, &info, &err);
    after = sqlease_wall_ms();
    if (st != SQLEASE_OK) {
        rc = fail_lease(&err, st);
    } else {
        const char *dialect = sqlease_db_dialect(db);
        int64_t local = before + (after - before) / 2;
        if (seen & 1u)
            print_status_json(a, dialect ? dialect : "", &info, local);
        else
            print_status_human(a, dialect ? dialect : "", &info, local);
        rc = CLI_EXIT_OK;
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
        rc = fail_lease(&err, st);
    } else {
        if (released && before.held)
            printf("released lease '%s' held by %s (token %" PRId64 ")\n", name_of(a),
                   before.owner, before.token);
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
