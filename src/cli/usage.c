/*
 * usage.c -- the text of `sqlease --help` and `sqlease --version`.
 * Every command, flag, default and exit code a user can rely on is
 * listed here; hidden helper commands are not.
 */
#include <stdio.h>

#include "cli.h"

static const char help_text[] =
"usage: sqlease [GLOBAL FLAGS] COMMAND [COMMAND FLAGS]\n"
"\n"
"Make sure exactly one process of a fleet runs a job, using a lease row in a\n"
"SQL database reached through ODBC.\n"
"\n"
"Commands:\n"
"  migrate                      create the table, add missing columns, seed the\n"
"                               lease row (idempotent)\n"
"  status [--json]              holder, token, expires in, DB clock vs local clock;\n"
"                               --json prints one JSON object on one line\n"
"  list [--json]                every lease in the table: name, owner, held, token,\n"
"                               expires in (ms), data; --json: a JSON array\n"
"  run [--no-wait] [--min-hold D] [--kill-grace D] -- CMD [ARG...]\n"
"                               wait for the lease, run CMD while renewing it,\n"
"                               release when CMD exits; exit with CMD's status\n"
"      --no-wait                exit 75 at once if another owner holds the lease\n"
"      --min-hold D             keep holding at least D after the take (default 0)\n"
"      --kill-grace D           SIGTERM to SIGKILL delay when CMD must stop\n"
"                               (default (ttl - renew-deadline) / 2; must be less\n"
"                               than ttl - renew-deadline)\n"
"  supervise [--kill-grace D] -- CMD [ARG...]\n"
"                               keep CMD running exactly while holding the lease;\n"
"                               restart it with backoff (1 s doubling to 30 s) if\n"
"                               it exits; on loss stop it and wait to hold again;\n"
"                               on SIGTERM/SIGINT stop it, release, exit 0; if\n"
"                               CMD cannot be started at all, release, exit 127\n"
"  release --force              admin: clear the lease row whoever holds it\n"
"  demo                         self-contained failover demo: three supervisors on\n"
"                               an SQLite file in a temporary directory (ignores\n"
"                               --dsn and the other global flags); exit 0 if all\n"
"                               it observed was right\n"
"  --version                    print the version\n"
"  --help, -h                   print this help\n"
"\n"
"Global flags (before COMMAND; --flag VALUE or --flag=VALUE):\n"
"  --dsn CONN           DSN name or ODBC connection string\n"
"                       (env SQLEASE_DSN; default \"" SQLEASE_DEFAULT_CONN "\",\n"
"                       relative to the current directory)\n"
"  --table T            lease table, identifier or schema.table\n"
"                       (env SQLEASE_TABLE; default " SQLEASE_DEFAULT_TABLE ")\n"
"  --name N             lease name, 1..64 bytes (env SQLEASE_NAME; default "
SQLEASE_DEFAULT_NAME ")\n"
"  --ttl D              lease lifetime (env SQLEASE_TTL; default 30s)\n"
"  --heartbeat D        holder renews this often (env SQLEASE_HEARTBEAT; default 10s)\n"
"  --renew-deadline D   holder stops CMD if the lease was not proven for this long\n"
"                       (env SQLEASE_RENEW_DEADLINE; default 20s)\n"
"  --retry D            non-holder polls this often (env SQLEASE_RETRY; default 2s)\n"
"  --owner ID           owner id written to the row (env SQLEASE_OWNER;\n"
"                       default host-pid-xxxxxxxx)\n"
"  --dialect X          sqlite, postgres, mysql or sqlserver (default: detected)\n"
"  --query-timeout D    bound on every statement, rounded up to whole seconds\n"
"                       (env SQLEASE_QUERY_TIMEOUT; default 5s)\n"
"  --login-timeout D    bound on connecting, rounded up to whole seconds\n"
"                       (env SQLEASE_LOGIN_TIMEOUT; default 5s)\n"
"  -v                   log everything (debug)\n"
"  -q                   log errors only\n"
"                       (default log level: info for supervise, warn otherwise)\n"
"\n"
"Precedence: flag > environment > odbc.ini (SqleaseTTL, ... in the DSN's\n"
"section) > default.  Durations need a unit: 500ms, 30s, 2m, 1h.  Timing must\n"
"satisfy retry < renew-deadline < ttl and heartbeat <= renew-deadline / 2.\n"
"SQLEASE_NAME and SQLEASE_OWNER are not read as defaults when SQLEASE_TOKEN is\n"
"set: that is a CMD running under a lease, not a configuration.\n"
"\n"
"CMD runs in its own process group with SQLEASE_NAME, SQLEASE_OWNER and\n"
"SQLEASE_TOKEN (the fencing token) in its environment; it is stopped with\n"
"SIGTERM, then SIGKILL after --kill-grace, and dies if sqlease dies.  A guard\n"
"process stops it at the lease's deadline even while sqlease is frozen.\n"
"\n"
"Exit codes:\n"
"  0    success (supervise: stopped by SIGTERM/SIGINT)\n"
"  64   usage error (bad flag, duration without a unit, invalid option)\n"
"  69   database unreachable, failing, or not migrated (run `sqlease migrate`)\n"
"  71   operating-system error\n"
"  75   lease not held (run --no-wait) or lost while CMD ran\n"
"  127  CMD could not be started (run, supervise)\n"
"  130/143  run interrupted by SIGINT/SIGTERM\n"
"  other    run: CMD's exit status (128+N if CMD was killed by signal N)\n";

void cli_print_help(void)
{
    fputs(help_text, stdout);
}

void cli_print_version(void)
{
    printf("sqlease %s\n", sqlease_version());
}
