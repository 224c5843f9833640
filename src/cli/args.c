/*
 * args.c -- the global part of the command line: the flags before
 * COMMAND, resolved against the environment and the defaults
 * (flag > environment > default), and the helpers the commands use for
 * their own flags (both "--flag value" and "--flag=value").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "os.h"
#include "platform.h"

/* One global flag that takes a value: where its text came from is kept
 * so that a bad value can be blamed on the flag or on the variable. */
typedef struct value_flag {
    const char *flag;   /* "--ttl" */
    const char *env;    /* "SQLEASE_TTL", or NULL */
    const char *text;   /* the value found, or NULL */
    const char *source; /* flag or env name the text came from */
} value_flag;

enum { F_DSN, F_DSN_FILE, F_TABLE, F_FIRE_TABLE, F_HISTORY_TABLE, F_NAME, F_TTL, F_HEARTBEAT, F_RENEW_DEADLINE, F_RETRY,
       F_OWNER, F_DIALECT, F_QUERY_TIMEOUT, F_LOGIN_TIMEOUT, F_COUNT };

/* A connection string read from --dsn-file lives as long as the process,
 * as argv and the environment do. */
static char dsn_from_file[4096];

int cli_flag_value(int argc, char **argv, int *i, const char *flag, const char **value)
{
    const char *arg = argv[*i];
    size_t n = strlen(flag);

    if (strncmp(arg, flag, n) != 0)
        return 0;
    if (arg[n] == '=') {
        *value = arg + n + 1;
        return 1;
    }
    if (arg[n] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        cli_usage("%s needs a value", flag);
        return -1;
    }
    *i += 1;
    *value = argv[*i];
    return 1;
}

int cli_unknown_flag(const char *command, const char *arg)
{
    static const char *const globals[] = {"--dsn", "--dsn-file", "--table", "--fire-table",
                                          "--history-table", "--name", "--ttl",
                                          "--heartbeat",
                                          "--renew-deadline", "--retry", "--owner",
                                          "--dialect", "--query-timeout",
                                          "--login-timeout", "-v", "-q"};
    size_t len = strcspn(arg, "=");

    for (size_t k = 0; k < sizeof globals / sizeof globals[0]; k++)
        if (strlen(globals[k]) == len && strncmp(arg, globals[k], len) == 0)
            return cli_usage("%s: '%s' is a global flag: put it before %s", command,
                             globals[k], command);
    return cli_usage("%s: unknown flag '%s'", command, arg);
}

/* Which commands take which flag of their own: a mistake in the order
 * (`sqlease --data x run -- ...`) is then answered with where the flag
 * goes, not only with "unknown". */
static const struct {
    const char *flag;
    const char *commands[3];
} command_flags[] = {
    {"--no-wait", {"run", NULL}},
    {"--timeout", {"run", "transfer"}},
    {"--conflict-exit-code", {"run", NULL}},
    {"--min-hold", {"run", "supervise", "cron"}},
    {"--kill-grace", {"run", "supervise", "cron"}},
    {"--data", {"run", "supervise"}},
    {"--metrics-file", {"run", "supervise"}},
    {"--crash-limit", {"supervise", NULL}},
    {"--crash-window", {"supervise", NULL}},
    {"--crash-pause", {"supervise", NULL}},
    {"--handoff", {"supervise", "cron"}},
    {"--priority", {"supervise", "cron"}},
    {"--preempt-after", {"supervise", "cron"}},
    {"--to", {"transfer", NULL}},
    {"--json", {"status", "list"}},
    {"--by-owner", {"list", NULL}},
    {"--watch", {"status", NULL}},
    {"--force", {"release", NULL}},
};

/* The first word after argv[from] that is a command, or NULL. */
static const char *later_command(int argc, char **argv, int from)
{
    static const char *const commands[] = {"migrate", "status", "list", "run", "supervise",
                                           "cron", "fires", "history", "release",
                                           "transfer", "demo"};

    for (int i = from; i < argc && strcmp(argv[i], "--") != 0; i++)
        for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++)
            if (strcmp(argv[i], commands[k]) == 0)
                return commands[k];
    return NULL;
}

/* An unknown flag before COMMAND: if it is a command's own flag, say to
 * put it after that command. */
static int unknown_global_flag(int argc, char **argv, int i)
{
    const char *arg = argv[i];
    const char *command = later_command(argc, argv, i + 1);
    size_t len = strcspn(arg, "=");

    for (size_t k = 0; k < sizeof command_flags / sizeof command_flags[0]; k++) {
        const char *const *c = command_flags[k].commands;
        char which[64] = "";
        size_t n = 0, j;

        if (strlen(command_flags[k].flag) != len ||
            strncmp(arg, command_flags[k].flag, len) != 0)
            continue;
        for (; n < 3 && c[n] != NULL; n++)
            if (command != NULL && strcmp(command, c[n]) == 0)
                return cli_usage("'%s' is a flag of %s: put it after %s",
                                 command_flags[k].flag, command, command);
        /* "run", "run and supervise", "run, supervise and cron" */
        for (j = 0; j < n; j++)
            snprintf(which + strlen(which), sizeof which - strlen(which), "%s%s",
                     j == 0 ? "" : j + 1 == n ? " and " : ", ", c[j]);
        if (command != NULL)
            return cli_usage("'%s' is a flag of %s, not of %s", command_flags[k].flag, which,
                             command);
        return cli_usage("'%s' is a flag of %s: put it after %s", command_flags[k].flag, which,
                         n == 1 ? c[0] : "the command");
    }
    return cli_usage("unknown flag '%s'", arg);
}

int cli_parse_duration(const char *what, const char *text, int64_t *ms)
{
    sqlease_error err;

    memset(&err, 0, sizeof err);
    if (sqlease_parse_duration(text, ms, &err) != SQLEASE_OK) {
        cli_usage("%s: %s", what, err.message[0] ? err.message : "invalid duration");
        return -1;
    }
    return 0;
}

/* A duration option: 0 would silently mean "the default" to the library,
 * so a zero the user wrote is refused instead. */
static int resolve_duration(const value_flag *f, int64_t *out)
{
    if (f->text == NULL) {
        *out = 0;
        return 0;
    }
    if (cli_parse_duration(f->source, f->text, out) != 0)
        return -1;
    if (*out <= 0) {
        cli_usage("%s: must be more than 0", f->source);
        return -1;
    }
    return 0;
}

/* SQLEASE_NAME and SQLEASE_OWNER are also what a CMD run under a lease
 * finds in its environment (with SQLEASE_TOKEN).  A sqlease started by
 * such a CMD must not take them as its own defaults: it would present
 * itself as its parent's owner, renew the parent's live lease and release
 * it on exit. */
static int inherited_identity(const char *env)
{
    const char *token = sqle_getenv("SQLEASE_TOKEN");
    return token != NULL && token[0] != '\0' &&
           (strcmp(env, "SQLEASE_NAME") == 0 || strcmp(env, "SQLEASE_OWNER") == 0);
}

/*
 * The connection: --dsn or --dsn-file (not both), else $SQLEASE_DSN or
 * $SQLEASE_DSN_FILE (not both), else the default.  A flag outranks the
 * environment whichever of the two it is.  The file keeps a password out
 * of argv (which every user sees in ps) and out of the environment
 * (which CMD inherits), and is refused when someone else owns it or
 * others may read or write it (os.h).
 */
static int resolve_dsn(value_flag *flags, const char **dsn)
{
    value_flag *d = &flags[F_DSN], *f = &flags[F_DSN_FILE];
    char why[1024];

    if (d->source != NULL && f->source != NULL) {
        int d_flag = d->source == d->flag, f_flag = f->source == f->flag;
        if (d_flag == f_flag)
            return cli_usage("%s and %s both given: give one", d->source, f->source);
        if (d_flag)
            f->text = NULL;
        else
            d->text = NULL;
    }
    if (d->text != NULL) {
        *dsn = d->text;
        return CLI_CONTINUE;
    }
    if (f->text == NULL) {
        *dsn = SQLEASE_DEFAULT_CONN;
        return CLI_CONTINUE;
    }
    /* Exit 64, the bad-argument status, but without the pointer to
     * --help: the message itself says what to change. */
    if (cli_os_read_private_file(f->text, dsn_from_file, sizeof dsn_from_file, why,
                                 sizeof why) != 0) {
        cli_error("%s %s: %s", f->source, f->text, why);
        return CLI_EXIT_USAGE;
    }
    *dsn = dsn_from_file;
    return CLI_CONTINUE;
}

/* Fill in values the flags left unset from the environment.  An empty
 * variable counts as unset (the shell convention); an empty flag value
 * is an error, because the user said something and it cannot be meant. */
static int resolve_sources(value_flag *flags)
{
    for (int k = 0; k < F_COUNT; k++) {
        value_flag *f = &flags[k];
        if (f->text != NULL) {
            if (f->text[0] == '\0')
                return cli_usage("%s must not be empty", f->flag);
            f->source = f->flag;
            continue;
        }
        if (f->env != NULL && !inherited_identity(f->env)) {
            const char *v = sqle_getenv(f->env);
            if (v != NULL && v[0] != '\0') {
                f->text = v;
                f->source = f->env;
            }
        }
    }
    return CLI_CONTINUE;
}

int cli_args_parse(int argc, char **argv, cli_args *a)
{
    value_flag flags[F_COUNT] = {
        [F_DSN] = {"--dsn", "SQLEASE_DSN", NULL, NULL},
        [F_DSN_FILE] = {"--dsn-file", "SQLEASE_DSN_FILE", NULL, NULL},
        [F_TABLE] = {"--table", "SQLEASE_TABLE", NULL, NULL},
        [F_FIRE_TABLE] = {"--fire-table", "SQLEASE_FIRE_TABLE", NULL, NULL},
        [F_HISTORY_TABLE] = {"--history-table", "SQLEASE_HISTORY_TABLE", NULL, NULL},
        [F_NAME] = {"--name", "SQLEASE_NAME", NULL, NULL},
        [F_TTL] = {"--ttl", "SQLEASE_TTL", NULL, NULL},
        [F_HEARTBEAT] = {"--heartbeat", "SQLEASE_HEARTBEAT", NULL, NULL},
        [F_RENEW_DEADLINE] = {"--renew-deadline", "SQLEASE_RENEW_DEADLINE", NULL, NULL},
        [F_RETRY] = {"--retry", "SQLEASE_RETRY", NULL, NULL},
        [F_OWNER] = {"--owner", "SQLEASE_OWNER", NULL, NULL},
        [F_DIALECT] = {"--dialect", NULL, NULL, NULL},
        [F_QUERY_TIMEOUT] = {"--query-timeout", "SQLEASE_QUERY_TIMEOUT", NULL, NULL},
        [F_LOGIN_TIMEOUT] = {"--login-timeout", "SQLEASE_LOGIN_TIMEOUT", NULL, NULL},
    };
    int i;

    memset(a, 0, sizeof *a);
    a->argv0 = argc > 0 ? argv[0] : "sqlease";

    for (i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int matched = 0;

        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            cli_print_help();
            return CLI_EXIT_OK;
        }
        if (strcmp(arg, "--version") == 0) {
            cli_print_version();
            return CLI_EXIT_OK;
        }
        if (strcmp(arg, "-v") == 0) {
            a->verbosity = 1;
            continue;
        }
        if (strcmp(arg, "-q") == 0) {
            a->verbosity = -1;
            continue;
        }
        for (int k = 0; k < F_COUNT && !matched; k++) {
            int r = cli_flag_value(argc, argv, &i, flags[k].flag, &flags[k].text);
            if (r < 0)
                return CLI_EXIT_USAGE;
            matched = r;
        }
        if (matched)
            continue;
        if (arg[0] == '-')
            return unknown_global_flag(argc, argv, i);
        a->command = arg;
        a->cmd_argc = argc - i - 1;
        a->cmd_argv = argv + i + 1;
        break;
    }
    if (a->command == NULL)
        return cli_usage("missing COMMAND (migrate, status, list, run, supervise, cron, fires, "
                         "history, release, transfer, demo)");

    if (resolve_sources(flags) != CLI_CONTINUE)
        return CLI_EXIT_USAGE;
    if (resolve_dsn(flags, &a->dsn) != CLI_CONTINUE)
        return CLI_EXIT_USAGE;
    a->table = flags[F_TABLE].text;
    a->fire_table = flags[F_FIRE_TABLE].text;
    a->history_table = flags[F_HISTORY_TABLE].text;
    a->name = flags[F_NAME].text;
    a->owner = flags[F_OWNER].text;
    a->dialect = flags[F_DIALECT].text;
    if (resolve_duration(&flags[F_TTL], &a->ttl_ms) != 0 ||
        resolve_duration(&flags[F_HEARTBEAT], &a->heartbeat_ms) != 0 ||
        resolve_duration(&flags[F_RENEW_DEADLINE], &a->renew_deadline_ms) != 0 ||
        resolve_duration(&flags[F_RETRY], &a->retry_ms) != 0 ||
        resolve_duration(&flags[F_QUERY_TIMEOUT], &a->query_timeout_ms) != 0 ||
        resolve_duration(&flags[F_LOGIN_TIMEOUT], &a->login_timeout_ms) != 0)
        return CLI_EXIT_USAGE;
    return CLI_CONTINUE;
}
