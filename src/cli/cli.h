/*
 * cli.h -- what the sqlease tool's source files share: the exit codes,
 * the parsed command line, diagnostics and logging, and the entry point
 * of every command.  The tool sees the library only through sqlease.h;
 * the operating system through os.h (processes, signals, the terminal,
 * files), which also gives it the library's platform.h (threads, locks,
 * the monotonic clock).
 */
#ifndef SQLEASE_CLI_H
#define SQLEASE_CLI_H

#include <stdint.h>

#include "sqlease.h"

/* MinGW: to GCC, format(printf) means msvcrt's dialect (no %zu); the
 * build selects MinGW's C99 printf instead (__USE_MINGW_ANSI_STDIO), and
 * its <stdio.h> names the matching format checker. */
#if defined(__MINGW32__)
#include <stdio.h>
#endif
#if defined(__MINGW32__) && defined(__MINGW_PRINTF_FORMAT)
#define CLI_PRINTF(a, b) __attribute__((format(__MINGW_PRINTF_FORMAT, a, b)))
#elif defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

/* Exit codes (sysexits.h numbers where one fits). */
enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_FAIL = 1,         /* demo: something observed was wrong */
    CLI_EXIT_USAGE = 64,       /* bad command line or option */
    CLI_EXIT_UNAVAILABLE = 69, /* database unreachable, not migrated, failing */
    CLI_EXIT_OSERR = 71,       /* out of memory, thread, process, clock */
    CLI_EXIT_CANTCREAT = 73,   /* --metrics-file cannot be written */
    CLI_EXIT_IOERR = 74,       /* standard output could not be written */
    CLI_EXIT_NOT_HELD = 75,    /* lease not held, or lost */
    CLI_EXIT_NOEXEC = 127      /* CMD could not be started */
};

/* Returned by parsers when the program should go on (never an exit code). */
#define CLI_CONTINUE (-1)

/* The global flags, after flag > environment > default resolution.
 * Strings point into argv or the environment.  Durations are 0 when
 * neither a flag nor the environment set them (the library default). */
typedef struct cli_args {
    const char *dsn;      /* never NULL: --dsn, --dsn-file's contents, $SQLEASE_DSN,
                             $SQLEASE_DSN_FILE's contents, or the default */
    const char *table;    /* NULL: library default */
    const char *fire_table; /* the fire ledger's table; NULL: library default */
    const char *history_table; /* the holder history's table; NULL: library default */
    const char *name;     /* NULL: library default */
    const char *owner;    /* NULL: generated */
    const char *dialect;  /* NULL: detected */
    int64_t ttl_ms;
    int64_t heartbeat_ms;
    int64_t renew_deadline_ms;
    int64_t retry_ms;
    int64_t query_timeout_ms;  /* 0: the library default (5 s) */
    int64_t login_timeout_ms;  /* 0: the library default (5 s) */
    int verbosity;        /* -1 with -q, 1 with -v, else 0 */
    const char *command;  /* the COMMAND word */
    int cmd_argc;         /* arguments after COMMAND */
    char **cmd_argv;
    const char *argv0;    /* how the tool was invoked */
} cli_args;

/* ---- args.c ------------------------------------------------------- */

/* Parse the global flags and find COMMAND.  Returns CLI_CONTINUE, or an
 * exit code after --help / --version (0) or a usage error (64, message
 * already printed). */
int cli_args_parse(int argc, char **argv, cli_args *a);

/* Match argv[*i] against a flag that takes a value, in either the
 * "--flag value" or the "--flag=value" form.  Returns 1 (matched, *value
 * set, *i advanced past a separate value), 0 (not this flag) or -1 (the
 * value is missing; a usage message has been printed). */
int cli_flag_value(int argc, char **argv, int *i, const char *flag, const char **value);

/* The usage error for an unknown flag after COMMAND (with a hint when it
 * is a global flag in the wrong place).  Returns CLI_EXIT_USAGE. */
int cli_unknown_flag(const char *command, const char *arg);

/* Parse a duration for `what` (a flag or variable name).  Returns 0, or
 * -1 after printing a usage message. */
int cli_parse_duration(const char *what, const char *text, int64_t *ms);

/* ---- usage.c ------------------------------------------------------ */

void cli_print_help(void);
void cli_print_version(void);

/* ---- common.c ----------------------------------------------------- */

/* Messages on stderr, each one line starting "sqlease: " (no time stamp:
 * these are a command's answer, for the person or script that ran it,
 * not log lines).  cli_usage adds the hint to --help and returns
 * CLI_EXIT_USAGE. */
void cli_error(const char *fmt, ...) CLI_PRINTF(1, 2);
int cli_usage(const char *fmt, ...) CLI_PRINTF(1, 2);

/* Look once, before any thread starts, whether stderr is the systemd
 * journal (os.h): then log lines carry a "<N>" priority prefix and no
 * time stamp, which the journal adds itself. */
void cli_log_detect(void);
int cli_log_to_journal(void);
/* wall_ms as RFC 3339 UTC with milliseconds: 2026-12-01T05:03:07.123Z. */
void cli_format_time(int64_t wall_ms, char *buf, size_t cap);

/* The tool's log: level (an sqlease_log_level) from the command's default
 * and -v / -q.  Set once before any thread starts. */
void cli_log_set_level(int level);
/* -v gives debug, -q error, otherwise the command's default. */
void cli_log_init(const cli_args *a, int default_level);
int cli_log_level(void);
void cli_log(int level, const char *fmt, ...) CLI_PRINTF(2, 3);
/* The same sink, in the shape the library wants. */
void cli_log_sink(void *userdata, int level, const char *line);
/* Print one log line whatever the level (the caller has filtered):
 * "2026-12-01T05:03:07.123Z sqlease: info: line", or "<6>sqlease: info:
 * line" into the journal. */
void cli_log_emit(int level, const char *line);

/* The exit code for a library status. */
int cli_exit_for_status(int status);

/* Lease options from the global flags (callbacks left empty). */
void cli_lease_options(const cli_args *a, sqlease_options *o);

/* 1 if the connection names a DSN (a bare name, or DSN= in a connection
 * string), whose odbc.ini section may then set the lease's name and
 * timing: those are known only once the database is opened. */
int cli_conn_names_dsn(const char *conn);

/* Check the global flags with sqlease_options_check, before connecting.
 * Returns CLI_CONTINUE or CLI_EXIT_USAGE (message printed). */
int cli_check_options(const cli_args *a);
/* The options in force on `db` (flags over odbc.ini over defaults), or
 * exit 64 with the library's message. */
int cli_effective_options(sqlease_db *db, const sqlease_options *in, sqlease_options *out);

/* Connect with the global flags.  Returns CLI_CONTINUE with *db set, or
 * an exit code after printing why. */
int cli_open_db(const cli_args *a, sqlease_db **db);
/* The connection options cli_open_db uses (log to cli_log_sink). */
void cli_db_options(const cli_args *a, sqlease_db_options *o);
/* The exit code for a failed sqlease_db_open: 64 or 69. */
int cli_open_exit_code(const cli_args *a, int status);

/* Print "sqlease: <message>" for a failed call and return its exit code. */
int cli_fail(const sqlease_error *err, int status);
/* What to do about a failure that is not an outage, as a phrase to append
 * to its message: " (another connection holds the SQLite file's write
 * lock; ...)", " (the connection's role lacks a privilege: ...)"; else "". */
const char *cli_error_hint(const sqlease_db *db, const sqlease_error *err);
/* The same for a message (a line of the library's log: its SQLSTATE is
 * read from a leading "[XXXXX]" when sqlstate is NULL or ""). */
const char *cli_error_hint_text(const sqlease_db *db, const char *sqlstate,
                                const char *message);

/* ---- commands ----------------------------------------------------- */

int cli_cmd_migrate(const cli_args *a);
int cli_cmd_status(const cli_args *a);
int cli_cmd_list(const cli_args *a);
int cli_cmd_release(const cli_args *a);
int cli_cmd_transfer(const cli_args *a);
int cli_cmd_run(const cli_args *a);
int cli_cmd_supervise(const cli_args *a);
int cli_cmd_cron(const cli_args *a);
int cli_cmd_fires(const cli_args *a);
int cli_cmd_history(const cli_args *a);
int cli_cmd_demo(const cli_args *a);
int cli_cmd_demo_job(const cli_args *a);

#endif
