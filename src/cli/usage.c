/*
 * usage.c -- the text of `sqlease --help` and `sqlease --version`.
 * Every command, flag, default and exit code a user can rely on is
 * listed here; hidden helper commands are not.  The dialects --dialect
 * takes are the generated table's (templates/dialects.toml), so that a
 * new row is listed without an edit here.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "dialect.h"
#include "http.h"

/* Help lines are at most this wide; a flag's text starts in this column. */
#define HELP_WIDTH 79
#define HELP_FLAG_COLUMN 23

static const char help_head[] =
"usage: sqlease [GLOBAL FLAGS] COMMAND [COMMAND FLAGS]\n"
"\n"
"Make sure exactly one process of a fleet runs a job, using a lease row in a\n"
"SQL database reached through ODBC.\n"
"\n"
"Commands:\n"
"  migrate                      create the table, add missing columns, seed the\n"
"                               lease row; create the fire and history tables\n"
"                               (idempotent)\n"
"  status [--json] [--watch [--http ADDR:PORT]]\n"
"                               owner, token, expires in, DB clock vs local clock\n"
"      --json                   print one JSON object on one line\n"
"      --watch                  then read the row every retry and print a line\n"
"                               (--json: an object) each time the holder or the\n"
"                               token changes; SIGINT/SIGTERM end it (exit 0)\n"
"      --http ADDR:PORT         with --watch: serve what it reads over HTTP\n"
"                               (/holder, /metrics, /health; /leader is 503)\n"
"  list [--json] [--by-owner]   every lease in the table: name, owner, held, token,\n"
"                               expires in (ms), data; --json: a JSON array;\n"
"                               --by-owner: held leases counted per owner\n"
"  run [--no-wait | --timeout D] [--conflict-exit-code N] [--min-hold D]\n"
"      [--kill-grace D] [--data S] [--metrics-file F]\n"
"      [--schedule CRON | --every D] [--tz ZONE] [--late-limit D] -- CMD [ARG...]\n"
"                               wait for the lease, run CMD while renewing it,\n"
"                               release when CMD exits; exit with CMD's status\n"
"      --no-wait                give up at once if another owner holds the lease\n"
"                               (the same as --timeout 0s)\n"
"      --timeout D              give up if the lease is not held within D of the\n"
"                               start (default: wait as long as it takes)\n"
"      --conflict-exit-code N   exit N (0..255) when giving up (default 75); with\n"
"                               -q a host that gives up prints nothing\n"
"      --min-hold D             the release keeps the row held until D after the\n"
"                               take (database clock); run still exits at once\n"
"                               (default 0); not when CMD could not be started\n"
"                               (127, or CMD exited 127 or 126)\n"
"      --kill-grace D           SIGTERM to SIGKILL delay when CMD must stop\n"
"                               (default (ttl - renew-deadline) / 2; must be less\n"
"                               than ttl - renew-deadline)\n"
"      --data S                 publish S in the row with the hold, for status,\n"
"                               list and the other instances (say, this host's\n"
"                               address): 1..1024 bytes of UTF-8 without control\n"
"                               characters; cleared at the release\n"
"      --metrics-file F         keep F (a name ending in .prom) up to date in\n"
"                               Prometheus' text format; removed on exit\n"
"      --schedule CRON          run once per fire of CRON (5 or 6 fields, @daily,\n"
"                               @every D): the take claims the latest fire at or\n"
"                               before the database's clock, once for the fleet;\n"
"                               a run that finds it claimed exits 75 naming who\n"
"                               ran it and when; the outcome goes to the fire\n"
"                               table.  Implies --no-wait; not with --timeout or\n"
"                               --min-hold.  CMD also gets SQLEASE_JOB and\n"
"                               SQLEASE_FIRE\n"
"      --every D                --schedule '@every D'\n"
"      --tz ZONE                the zone CRON is read in (default UTC)\n"
"      --late-limit D           a fire older than D is not run (default: the\n"
"                               schedule's shortest gap)\n"
"  supervise [--kill-grace D] [--data S] [--metrics-file F] [--http ADDR:PORT]\n"
"      [--crash-limit N] [--crash-window D] [--crash-pause D]\n"
"      [--handoff] [--priority N] [--preempt-after D | --min-hold D]\n"
"      -- CMD [ARG...]\n"
"                               keep CMD running exactly while holding the lease;\n"
"                               restart it with backoff (1 s doubling to 30 s) if\n"
"                               it exits; on loss stop it and wait to hold again;\n"
"                               on SIGTERM/SIGINT stop it, release, exit 0; if\n"
"                               CMD cannot be started at all, release, exit 127.\n"
"                               A database unreachable at start is retried every\n"
"                               retry.  With $NOTIFY_SOCKET (systemd Type=notify)\n"
"                               sends READY=1, STATUS= and STOPPING=1\n"
"      --kill-grace D, --data S, --metrics-file F   as for run\n"
"      --http ADDR:PORT         serve GET /metrics (as --metrics-file), /health\n"
"                               (200 while the database answers within the\n"
"                               renew deadline, else 503), /leader (200 while\n"
"                               this instance holds and CMD runs, else 503) and\n"
"                               /holder (JSON); only GET and HEAD.  PORT alone\n"
"                               listens on 127.0.0.1; 0.0.0.0:PORT on every IPv4\n"
"                               address, [::]:PORT on every address; port 0\n"
"                               takes a free port (logged)\n";

/* Between them, in a build without HTTP support, a line that says so. */
static const char help_mid[] =
"      --crash-limit N          after N failures in a row (non-zero status or a\n"
"                               signal), each within --crash-window of CMD's\n"
"                               start, release the lease and stay out of\n"
"                               contention for --crash-pause (default 5; 0: never)\n"
"      --crash-window D         a failure this soon after the start counts\n"
"                               (default 60s)\n"
"      --crash-pause D          how long to stay out (default 2 x ttl)\n"
"      --handoff                be a ready follower (a ~ready/ row in the table,\n"
"                               which status lists); SIGTERM hands the lease to\n"
"                               the best ready follower once CMD has stopped\n"
"                               (released as before if none); SIGUSR1 drains this\n"
"                               host (lowest priority, lease handed over),\n"
"                               SIGUSR2 undoes it; renews and reads the row every\n"
"                               250 ms, so a transfer takes about half a second\n"
"      --priority N             hand-overs prefer the highest; a ready follower\n"
"                               asks a holder of lower priority for the lease\n"
"                               (-1000000000..1000000000, default 0; equal ones\n"
"                               never do); implies --handoff\n"
"      --preempt-after D        ask only a holder that has held this long\n"
"                               (default 30s); implies --handoff\n"
"      --min-hold D             the same as --preempt-after D: the least a hold\n"
"                               lasts before a higher priority takes it over\n"
"  cron [--check] [--keep D] [--kill-grace D] [--http ADDR:PORT]\n"
"      [--handoff] [--priority N] [--preempt-after D | --min-hold D] FILE\n"
"                               run the crontab-format FILE on whichever host\n"
"                               holds the lease: each fire on the database's\n"
"                               clock, claimed once in the fire table, its\n"
"                               command run by /bin/sh -c with SQLEASE_JOB,\n"
"                               SQLEASE_FIRE (ISO-8601 UTC) and SQLEASE_ATTEMPT;\n"
"                               missed, abandoned and overlapping fires by the\n"
"                               file's SQLEASE_MISSED, SQLEASE_ABANDONED and\n"
"                               SQLEASE_OVERLAP; SIGHUP reads FILE again (a\n"
"                               file that does not read keeps the schedule);\n"
"                               SIGTERM stops the jobs, releases, exits 0; a bad\n"
"                               line at start exits 64 naming line and column\n"
"      --check                  read FILE, list the jobs and next fires, exit\n"
"      --keep D                 delete ledger and history rows older than D\n"
"                               (default 30d)\n"
"      --kill-grace D           SIGTERM to SIGKILL delay when the jobs must stop,\n"
"                               all at once (default (ttl - renew-deadline) / 2:\n"
"                               5s; must be less than ttl - renew-deadline)\n"
"      --http ADDR:PORT         serve as supervise does: /health (its rule),\n"
"                               /leader (200 while this host holds the lease\n"
"                               and fires the jobs), /holder, and /metrics\n"
"                               with the scheduler's counters (fires claimed,\n"
"                               skipped, missed, abandoned, running, late)\n"
"      --handoff, --priority N, --preempt-after D, --min-hold D\n"
"                               as supervise's: SIGTERM hands the lease to a\n"
"                               ready cron once the running jobs have stopped\n"
"                               (their fires end failed, 'stopped: the lease was\n"
"                               handed over'); a cron of higher priority takes\n"
"                               the lease over\n";

/* After cron's --http, the same line as after supervise's. */
static const char help_cron_tail[] =
"  fires [--job J] [--since D] [--json] [--all-names]\n"
"                               the fire table, newest first: each fire's job,\n"
"                               state (running, done, failed, abandoned,\n"
"                               skipped, missed), attempt, host, start,\n"
"                               duration, exit status, owner and token, note\n"
"      --since D                how far back (default 1d)\n"
"      --all-names              every lease name, not only --name's\n"
"  history [--since D] [--json] [--all-names]\n"
"                               the history table, newest first: each hold's\n"
"                               start, end, duration, how it ended (released,\n"
"                               expired, lost, deadline, forced, handed_over;\n"
"                               holding; unknown), the gap before it (no\n"
"                               holder), host, pid, owner and token\n"
"      --since D                how far back (default 1d)\n"
"      --all-names              every lease name, not only --name's\n"
"  release --force              admin: clear the lease row whoever holds it\n"
"  transfer [--to OWNER] [--timeout D]\n"
"                               ask the holder to hand the lease over to OWNER\n"
"                               (default: its best ready follower) and wait until\n"
"                               it has moved; the holder answers at its next\n"
"                               renew and hands over once its CMD has stopped.\n"
"                               Exit 0 moved, 75 not held or not moved in time\n"
"      --timeout D              give up after D (default the holder's ttl); a\n"
"                               request not answered is withdrawn\n"
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
"                       relative to the current directory); a password here\n"
"                       shows in ps: use a private odbc.ini or --dsn-file\n"
"  --dsn-file FILE      read the connection string from FILE's first line (env\n"
"                       SQLEASE_DSN_FILE); refused unless FILE is a regular\n"
"                       file owned by you or root that its group and others\n"
"                       may not use (chmod 600 FILE), through no other user's\n"
"                       symbolic link\n"
"  --table T            lease table, identifier or schema.table\n"
"                       (env SQLEASE_TABLE; default " SQLEASE_DEFAULT_TABLE ")\n"
"  --fire-table T       the fire table (scheduled fires), as --table\n"
"                       (env SQLEASE_FIRE_TABLE; default " SQLEASE_DEFAULT_FIRE_TABLE ")\n"
"  --history-table T    the history table (every hold), as --table\n"
"                       (env SQLEASE_HISTORY_TABLE; default " SQLEASE_DEFAULT_HISTORY_TABLE ")\n"
"  --name N             lease name, 1..64 bytes (env SQLEASE_NAME; default "
SQLEASE_DEFAULT_NAME ")\n"
"  --ttl D              lease lifetime (env SQLEASE_TTL; default 30s)\n"
"  --heartbeat D        holder renews this often (env SQLEASE_HEARTBEAT;\n"
"                       default ttl/3: 10s)\n"
"  --renew-deadline D   holder stops CMD if the lease was not proven for this long\n"
"                       (env SQLEASE_RENEW_DEADLINE; default 2*ttl/3: 20s)\n"
"  --retry D            non-holder polls this often (env SQLEASE_RETRY;\n"
"                       default ttl/10, at most 2s)\n"
"  --owner ID           owner id written to the row (env SQLEASE_OWNER;\n"
"                       default host-pid-xxxxxxxx)\n";

/* Between them, the --dialect line (print_dialect_flag). */
static const char help_tail[] =
"  --query-timeout D    bound on every statement, rounded up to whole seconds\n"
"                       (env SQLEASE_QUERY_TIMEOUT; default 5s)\n"
"  --login-timeout D    bound on connecting, rounded up to whole seconds\n"
"                       (env SQLEASE_LOGIN_TIMEOUT; default 5s)\n"
"  -v                   log everything (debug)\n"
"  -q                   log errors only; run prints nothing when it gives up\n"
"                       (default log level: info for supervise, warn otherwise)\n"
"\n"
"Log lines start with the time (RFC 3339, UTC, ms), except when stderr is the\n"
"systemd journal ($JOURNAL_STREAM), which stamps them itself.  Control\n"
"characters in what the table holds (owner, data, names), in messages and in\n"
"log lines are printed escaped: \\x1b, \\u0085.\n"
"\n"
"Precedence: flag > environment > odbc.ini (SqleaseTTL, ... in the DSN's\n"
"section) > default.  Durations need a unit: 500ms, 30s, 2m, 1h, 2d (0 needs none;\n"
"it is allowed for --min-hold, --timeout and --kill-grace).  Timing must\n"
"satisfy retry < renew-deadline < ttl and heartbeat <= renew-deadline / 2; a\n"
"heartbeat, renew deadline or retry set nowhere is derived from the ttl, so\n"
"--ttl alone is enough.  migrate, status and release use no timing.\n"
"SQLEASE_NAME and SQLEASE_OWNER are not read as defaults when SQLEASE_TOKEN is\n"
"set: that is a CMD running under a lease, not a configuration.\n"
"\n"
"CMD runs in its own process group with SQLEASE_NAME, SQLEASE_OWNER,\n"
"SQLEASE_TOKEN (the fencing token) and SQLEASE_FENCE_SQL (the hold as an SQL\n"
"predicate, for CMD's own statements) in its environment; it is stopped with\n"
"SIGTERM, then SIGKILL after --kill-grace, and dies if sqlease dies.  A guard\n"
"process stops it at the lease's deadline even while sqlease is frozen.\n"
"\n"
"Exit codes:\n"
"  0    success (supervise: stopped by SIGTERM/SIGINT)\n"
"  64   usage error (bad flag, duration without a unit, invalid option, a\n"
"       --dsn-file refused)\n"
"  69   database unreachable, failing, or not migrated (run `sqlease migrate`;\n"
"       only migrate creates a missing SQLite file)\n"
"  71   operating-system error (also: --http cannot listen, its port in use)\n"
"  73   --metrics-file cannot be created\n"
"  74   standard output cannot be written\n"
"  75   run: lease not obtained (--no-wait, --timeout; see --conflict-exit-code),\n"
"       or lost while CMD ran; run --schedule: the fire was claimed by another\n"
"       run, or none is due within --late-limit; transfer: not held, a\n"
"       hand-over pending already, no ready follower, or not moved in time\n"
"  127  CMD could not be started (run, supervise)\n"
"  130/143  run interrupted by SIGINT/SIGTERM\n"
"  other    run: CMD's exit status (128+N if CMD was killed by signal N)\n";

/* Print `word` at column *col, first going to a new line under the
 * flags' text column when it would pass HELP_WIDTH. */
static void put_word(const char *word, size_t *col)
{
    size_t n = strlen(word);

    if (*col > HELP_FLAG_COLUMN && *col + n > HELP_WIDTH) {
        printf("\n%*s", HELP_FLAG_COLUMN, "");
        *col = HELP_FLAG_COLUMN;
        while (*word == ' ') {
            word++;
            n--;
        }
    }
    fputs(word, stdout);
    *col += n;
}

/* The --dialect line: every row's key with its aliases, in key order,
 * wrapped between rows. */
static void print_dialect_flag(void)
{
    char word[256];
    size_t col = strlen("  --dialect X"), i, j, n;

    printf("  --dialect X%*s", (int)(HELP_FLAG_COLUMN - col), "");
    col = HELP_FLAG_COLUMN;
    for (i = 0; i < sqle_dialect_count; i++) {
        const sqle_dialect *d = &sqle_dialects[i];

        n = (size_t)snprintf(word, sizeof word, "%s%s", i > 0 ? " " : "", d->key);
        for (j = 0; j < d->naliases && n < sizeof word; j++)
            n += (size_t)snprintf(word + n, sizeof word - n, "%s%s", j == 0 ? " (or " : ", ",
                                  d->aliases[j]);
        if (n < sizeof word)
            snprintf(word + n, sizeof word - n, "%s%s", d->naliases > 0 ? ")" : "",
                     i + 1 < sqle_dialect_count ? "," : ";");
        put_word(word, &col);
    }
    put_word(" default:", &col);
    put_word(" detected", &col);
    putchar('\n');
}

/* Under each --http, in a build without HTTP support. */
static void http_note(void)
{
    if (!cli_http_available())
        fputs("                               (not in this build: it has no libmicrohttpd)\n",
              stdout);
}

void cli_print_help(void)
{
    fputs(help_head, stdout);
    http_note();
    fputs(help_mid, stdout);
    http_note();
    fputs(help_cron_tail, stdout);
    print_dialect_flag();
    fputs(help_tail, stdout);
}

void cli_print_version(void)
{
    printf("sqlease %s\n", sqlease_version());
}
