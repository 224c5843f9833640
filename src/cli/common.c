/*
 * common.c -- diagnostics, the log sink, and the few steps every
 * database command shares: building lease options from the flags,
 * checking them before connecting, connecting, and mapping a library
 * status to an exit code.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "classify.h"
#include "db.h"
#include "internal.h"
#include "odbc.h"
#include "os.h"

static int log_level = SQLEASE_LOG_WARN;
/* stderr is the systemd journal's stream: it stamps each line itself, and
 * a "<N>" prefix gives the line its priority (sd-daemon(3)). */
static int log_journal;

/* The switches over the library's enums here have no default: a level or
 * status added to sqlease.h without an answer here fails the build under
 * -Wswitch.  A number outside the enum gets the answer after the switch. */
static const char *level_name(int level)
{
    switch ((sqlease_log_level)level) {
    case SQLEASE_LOG_ERROR: return "error";
    case SQLEASE_LOG_WARN: return "warn";
    case SQLEASE_LOG_INFO: return "info";
    case SQLEASE_LOG_DEBUG: return "debug";
    }
    return "debug";
}

/* syslog priorities: err, warning, info, debug. */
static int journal_priority(int level)
{
    switch ((sqlease_log_level)level) {
    case SQLEASE_LOG_ERROR: return 3;
    case SQLEASE_LOG_WARN: return 4;
    case SQLEASE_LOG_INFO: return 6;
    case SQLEASE_LOG_DEBUG: return 7;
    }
    return 7;
}

void cli_log_detect(void)
{
    log_journal = cli_sys_stderr_is_journal();
}

int cli_log_to_journal(void)
{
    return log_journal;
}

/* The stamp is the OS layer's (stamp.c), so that the guard process,
 * which cannot use stdio, writes the same one. */
void cli_format_time(int64_t wall_ms, char *buf, size_t cap)
{
    (void)cli_os_format_stamp(wall_ms, buf, cap);
}

/* Every message and log line goes out through here: what it quotes may
 * come from the table or a driver (an owner id, a driver's message
 * quoting a value), and is shown with its control characters escaped
 * (sqle_show_text), never raw to a terminal. */
static void show_message(const char *fmt, va_list ap, char *out, size_t cap)
{
    char msg[1024];

    vsnprintf(msg, sizeof msg, fmt, ap);
    sqle_show_text(msg, out, cap);
}

void cli_error(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;

    va_start(ap, fmt);
    show_message(fmt, ap, msg, sizeof msg);
    va_end(ap);
    if (log_journal)
        fprintf(stderr, "<3>sqlease: %s\n", msg);
    else
        fprintf(stderr, "sqlease: %s\n", msg);
}

int cli_usage(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;

    va_start(ap, fmt);
    show_message(fmt, ap, msg, sizeof msg);
    va_end(ap);
    fprintf(stderr, "%ssqlease: %s (see 'sqlease --help')\n", log_journal ? "<3>" : "", msg);
    return CLI_EXIT_USAGE;
}

void cli_log_set_level(int level)
{
    log_level = level;
}

void cli_log_init(const cli_args *a, int default_level)
{
    if (a->verbosity > 0)
        log_level = SQLEASE_LOG_DEBUG;
    else if (a->verbosity < 0)
        log_level = SQLEASE_LOG_ERROR;
    else
        log_level = default_level;
}

int cli_log_level(void)
{
    return log_level;
}

/* A line in the log's form into buf (cap bytes), its newline included
 * (a line too long is cut, and still ends in one).  Returns its
 * length. */
static size_t format_line(char *buf, size_t cap, int level, const char *raw)
{
    char stamp[40], line[2048];
    int n;

    sqle_show_text(raw, line, sizeof line);
    if (log_journal) {
        n = snprintf(buf, cap, "<%d>sqlease: %s: %s\n", journal_priority(level),
                     level_name(level), line);
    } else {
        cli_format_time(sqle_wall_ms(), stamp, sizeof stamp);
        n = snprintf(buf, cap, "%s sqlease: %s: %s\n", stamp, level_name(level), line);
    }
    if (n < 0)
        return 0;
    if ((size_t)n >= cap) {
        n = (int)cap - 1;
        buf[n - 1] = '\n';
    }
    return (size_t)n;
}

/*
 * One write per line, so lines from library threads and the main thread
 * never interleave.  Outside the journal each line starts with the time
 * (RFC 3339, UTC, ms), so that a log file or a terminal says when things
 * happened.  A line never waits for stderr (cli_os_stderr_write): it is
 * written at once or dropped, since it may be written on the way to
 * stopping CMD at a deadline, and stderr may be a pipe nobody drains.
 * The first line that goes out after some were dropped is followed by
 * one that says how many.
 */
void cli_log_emit(int level, const char *line)
{
    char buf[1400], note[128];
    unsigned long dropped;
    size_t n = format_line(buf, sizeof buf, level, line);

    if (n == 0 || cli_os_stderr_write(buf, n) != 0)
        return;
    dropped = cli_os_stderr_dropped();
    if (dropped == 0)
        return;
    snprintf(note, sizeof note, "%lu log line%s dropped: stderr could not take %s without "
             "waiting", dropped, dropped == 1 ? " was" : "s were", dropped == 1 ? "it" : "them");
    n = format_line(buf, sizeof buf, SQLEASE_LOG_WARN, note);
    (void)cli_os_stderr_write(buf, n);
}

void cli_log_sink(void *userdata, int level, const char *line)
{
    (void)userdata;
    if (level > log_level)
        return;
    cli_log_emit(level, line);
}

void cli_log(int level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    if (level > log_level)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cli_log_sink(NULL, level, msg);
}

/* The database side failing in any way is "unavailable" to a script: the
 * lease cannot be decided, whatever the reason. */
int cli_exit_for_status(int status)
{
    switch ((sqlease_status)status) {
    case SQLEASE_OK:
        return CLI_EXIT_OK;
    case SQLEASE_NOT_HELD:
    case SQLEASE_CLAIMED:  /* the fire runs (or ran) elsewhere */
    case SQLEASE_NOT_DUE:  /* not this run's to run, yet */
    case SQLEASE_NO_FOLLOWER: /* a hand-over with nobody to take it */
    case SQLEASE_PENDING:  /* a hand-over under way already */
        return CLI_EXIT_NOT_HELD;
    case SQLEASE_EINVAL:
        return CLI_EXIT_USAGE;
    case SQLEASE_ENOMEM:
    case SQLEASE_EPLATFORM:
    case SQLEASE_ESTATE:
        return CLI_EXIT_OSERR;
    case SQLEASE_ECONNECT:
    case SQLEASE_ETIMEOUT:
    case SQLEASE_EDB:
    case SQLEASE_ENOTABLE:
    case SQLEASE_ENOROW:
    case SQLEASE_ECLOCK:
    case SQLEASE_EDIALECT:
    case SQLEASE_EROWCOUNT:
        return CLI_EXIT_UNAVAILABLE;
    }
    return CLI_EXIT_UNAVAILABLE;
}

/*
 * Two failures that are not the database failing to answer, and what to
 * do about them (by the classifier, on the dialect of the handle's
 * database): SQLite's busy timeout (another connection is writing), and
 * a privilege the connection's role lacks.  migrate's own message already
 * names the privilege its step needs.
 */
const char *cli_error_hint(const sqlease_db *db, const sqlease_error *err)
{
    return err != NULL ? cli_error_hint_text(db, err->sqlstate, err->message) : "";
}

const char *cli_error_hint_text(const sqlease_db *db, const char *sqlstate, const char *message)
{
    const char *dialect = db != NULL ? sqlease_db_dialect(db) : NULL;
    char state[6] = "";
    sqle_diag d;
    sqle_failure f;

    if (message == NULL || message[0] == '\0')
        return "";
    /* A line of the library's log: "[SQLSTATE] the driver's message". */
    if ((sqlstate == NULL || sqlstate[0] == '\0') && message[0] == '[' &&
        strlen(message) > 7 && message[6] == ']') {
        memcpy(state, message + 1, 5);
        sqlstate = state;
    }
    d.sqlstate = sqlstate;
    d.native = 0;
    d.message = message;
    f = sqle_classify(&d, sqle_dialect_find(dialect), SQLEASE_AT_STATEMENT);
    if (f == SQLEASE_FAIL_LOCKED)
        return " (another connection holds the SQLite file's write lock; the DSN's"
               " Timeout= is how long to wait for it)";
    if (f == SQLEASE_FAIL_PRIVILEGE && strncmp(message, "migrate: ", 9) != 0) {
        if (dialect != NULL && strcmp(dialect, "sqlite") == 0)
            return " (this process cannot write the database file or its directory)";
        return " (the connection's role lacks a privilege: status and list need SELECT on the"
               " lease table, run, supervise and release SELECT and UPDATE)";
    }
    return "";
}

int cli_fail(const sqlease_error *err, int status)
{
    if (err != NULL && err->message[0] != '\0')
        cli_error("%s", err->message);
    else
        cli_error("%s", sqlease_strerror(status));
    return cli_exit_for_status(status);
}

void cli_lease_options(const cli_args *a, sqlease_options *o)
{
    sqlease_options_init(o);
    o->table = a->table;
    o->fire_table = a->fire_table;
    o->history_table = a->history_table;
    o->name = a->name;
    o->owner = a->owner;
    o->ttl_ms = a->ttl_ms;
    o->heartbeat_ms = a->heartbeat_ms;
    o->renew_deadline_ms = a->renew_deadline_ms;
    o->retry_ms = a->retry_ms;
    o->log = cli_log_sink;
    o->log_userdata = NULL;
    o->log_level = log_level;
}

/* The same test the library makes when it reads the section (db.c). */
int cli_conn_names_dsn(const char *conn)
{
    char dsn[SQLE_DSN_NAME_MAX];

    return sqle_odbc_dsn_name(conn, dsn, sizeof dsn);
}

/* Before connecting, check what the flags alone decide.  With a DSN (by
 * name or DSN= in a connection string) the timing may still come from
 * its odbc.ini section, so the timing rules wait for
 * cli_effective_options; identifiers are checked either way. */
int cli_check_options(const cli_args *a)
{
    sqlease_options o;
    sqlease_error err;
    const char *dsn = a->dsn != NULL ? a->dsn : SQLEASE_DEFAULT_CONN;

    memset(&err, 0, sizeof err);
    cli_lease_options(a, &o);
    if (cli_conn_names_dsn(dsn))
        o.ttl_ms = o.heartbeat_ms = o.renew_deadline_ms = o.retry_ms = 0;
    if (sqlease_options_check(&o, &err) != SQLEASE_OK)
        return cli_usage("%s", err.message[0] ? err.message : "invalid options");
    return CLI_CONTINUE;
}

int cli_effective_options(sqlease_db *db, const sqlease_options *in, sqlease_options *out)
{
    sqlease_error err;

    memset(&err, 0, sizeof err);
    if (sqlease_options_effective(db, in, out, &err) != SQLEASE_OK)
        return cli_usage("%s", err.message[0] ? err.message : "invalid options");
    return CLI_CONTINUE;
}

void cli_db_options(const cli_args *a, sqlease_db_options *o)
{
    sqlease_db_options_init(o);
    o->conn = a->dsn;
    o->dialect = a->dialect;
    /* Only migrate creates the database (an SQLite file): every other
     * command on a file that is not there says so, instead of creating an
     * empty one wherever it runs. */
    o->must_exist = a->command == NULL || strcmp(a->command, "migrate") != 0;
    if (a->query_timeout_ms > 0)
        o->query_timeout_ms = a->query_timeout_ms;
    if (a->login_timeout_ms > 0)
        o->login_timeout_ms = a->login_timeout_ms;
    o->log = cli_log_sink;
    o->log_userdata = NULL;
    o->log_level = log_level;
}

/* Whatever the reason, the tool could not reach a usable database; a bad
 * --dialect is the one usage error (the library refuses an unknown forced
 * dialect before connecting, and a known one is never "unsupported"), as
 * is a bad odbc.ini value. */
int cli_open_exit_code(const cli_args *a, int status)
{
    return status == SQLEASE_EINVAL || (status == SQLEASE_EDIALECT && a->dialect != NULL)
               ? CLI_EXIT_USAGE : CLI_EXIT_UNAVAILABLE;
}

int cli_open_db(const cli_args *a, sqlease_db **db)
{
    sqlease_db_options o;
    sqlease_error err;
    int st;

    memset(&err, 0, sizeof err);
    cli_db_options(a, &o);
    st = sqlease_db_open(db, &o, &err);
    if (st != SQLEASE_OK) {
        *db = NULL;
        cli_fail(&err, st);
        return cli_open_exit_code(a, st);
    }
    return CLI_CONTINUE;
}
