#!/usr/bin/env bash
# ci/mariadb.sh -- run a command against a throwaway MariaDB server, twice.
#
#   bash ci/mariadb.sh                  # runs `scons test` twice
#   bash ci/mariadb.sh scons test TESTS=test_dialect
#
# Starts MariaDB on 127.0.0.1 (an unused port, 53306 or the next free one)
# with its data, socket and ODBC configuration in a fresh temporary
# directory, creates the database `sqlease` and the user
# 'sqlease'@'127.0.0.1' (with a password), loads the time-zone tables,
# writes a private odbc.ini / odbcinst.ini (ODBCSYSINI / ODBCINI point at
# them; the system files are never touched) with the DSN `sqlease_maria`,
# and runs the command from the top of the tree twice:
#
#   SQLEASE_TEST_DSN="DSN=sqlease_maria;OPTION=0"   changed rows (driver default)
#   SQLEASE_TEST_DSN="DSN=sqlease_maria;OPTION=2"   found rows
#
# with SQLEASE_TEST_DIALECT=mysql.  Both runs must pass.  When the
# command is `scons test` without TESTS=, the second run (found rows) is
# the suites whose statements' row counts it changes: the library's own
# (lease, batched renews, groups, the fire ledger, the history, the
# privileges); the CLI, supervisor and scheduler suites send those same
# statements through that same code, and run with changed rows only
# (about 3 minutes less; SQLEASE_MARIADB_FOUND_ROWS_TESTS="" runs all).
#
# It also creates the user 'sqlease_lease'@'127.0.0.1', which may log in
# and nothing more (the DSN `sqlease_maria_lease`), for the
# least-privilege suite (tests/test_privileges.c), which grants it SELECT
# and UPDATE on a lease table of its own (`sqlease` may grant what it has)
# and runs the lease commands as that user:
#
#   SQLEASE_TEST_LEASE_DSN="DSN=sqlease_maria_lease;OPTION=0" (then 2)
#   SQLEASE_TEST_LEASE_ROLE="'sqlease_lease'@'127.0.0.1'" (as GRANT names it)  The second run
# happens even when the first fails.  The server is stopped by its pid
# (TERM, then KILL after a bounded wait) and the directory removed on
# every exit path.  Exit status: 0 if both runs passed, else the first
# non-zero status.
#
# Runs as root (the server then runs as the `mysql` system user) or as
# an ordinary user (the server runs as that user).
#
# The chaos harness also finds SQLEASE_DB_PORT (the server's port),
# SQLEASE_DB_STOP / SQLEASE_DB_START (commands that stop the server and
# start it again in place) and SQLEASE_DB_PIDS_CMD (a command printing the
# server's pid) in its environment.
#
# Environment: SQLEASE_MARIADB_PORT (first port to try), ODBC_DRIVER_DIR
# (where libmaodbc.so lives, if not a usual place), SQLEASE_MARIADB_OPTIONS
# (the OPTION values to run with; default "0 2").

set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
PORT_FIRST=${SQLEASE_MARIADB_PORT:-53306}
OPTIONS=${SQLEASE_MARIADB_OPTIONS:-0 2}
SYS_USER=mysql
DB_NAME=sqlease
DB_USER=sqlease
DB_PASS=sqlease-ci-pw

log() { printf 'mariadb.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 2; }

# ------------------------------------------------------------ binaries

first_cmd() {
    local c
    for c in "$@"; do
        if command -v "$c" >/dev/null 2>&1; then
            command -v "$c"
            return 0
        fi
        if [ -x "/usr/sbin/$c" ]; then
            printf '%s\n' "/usr/sbin/$c"
            return 0
        fi
    done
    return 1
}
SERVER=$(first_cmd mariadbd mysqld) || die "mariadbd not found (install mariadb-server)"
INSTALL_DB=$(first_cmd mariadb-install-db mysql_install_db) || die "mariadb-install-db not found"
CLIENT=$(first_cmd mariadb mysql) || die "the mariadb client is not found"
ADMIN=$(first_cmd mariadb-admin mysqladmin) || die "mariadb-admin not found"
TZINFO=$(first_cmd mariadb-tzinfo-to-sql mysql_tzinfo_to_sql) || die "mariadb-tzinfo-to-sql not found"

# shellcheck source=ci/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
MA_DRIVER=$(find_driver libmaodbc.so) ||
    die "libmaodbc.so not found (install odbc-mariadb, or set ODBC_DRIVER_DIR)"
SQLITE_DRIVER=$(find_driver libsqlite3odbc.so || true)

# ------------------------------------------------------------ a free port

PORT=$(free_port "$PORT_FIRST") || die "no free port in $PORT_FIRST..$((PORT_FIRST + 50))"

# ------------------------------------------------------------ temp dir + cleanup

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sqlease-maria-XXXXXX")
chmod 755 "$WORK"          # the server's user must be able to reach my/
MYDIR=$WORK/my             # data, socket, pid file, error log: the server's user owns it
DATA=$MYDIR/data
SOCK=$MYDIR/sock
PIDFILE=$MYDIR/pid
ERRLOG=$MYDIR/error.log
mkdir -p "$MYDIR" "$WORK/odbc"

if [ "$(id -u)" = 0 ]; then
    id "$SYS_USER" >/dev/null 2>&1 || die "system user '$SYS_USER' missing"
    chown "$SYS_USER" "$MYDIR"
    USER_OPT=(--user="$SYS_USER")
    # root@localhost logs in over the socket as the OS user root.
    ROOT_AUTH=socket
else
    USER_OPT=()
    # Not root: root@localhost without a password, reachable only through
    # the private socket (there is no TCP account for it).
    ROOT_AUTH=normal
fi

SERVER_PID=""
# The chaos harness may have restarted the server (SQLEASE_DB_STOP /
# SQLEASE_DB_START below): then the pid to watch and to stop is the one in
# the pid file, no longer our child.
refresh_server_pid() {
    local p
    [ -n "$SERVER_PID" ] || return 0
    kill -0 "$SERVER_PID" 2>/dev/null && return 0
    p=$(cat "$PIDFILE" 2>/dev/null || true)
    if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=$p
    fi
}
# shellcheck disable=SC2317  # called from the EXIT trap
stop_server() {
    refresh_server_pid
    [ -n "$SERVER_PID" ] || return 0
    if kill -0 "$SERVER_PID" 2>/dev/null; then
        log "stopping the server (pid $SERVER_PID)"
        # A chaos run may have left it stopped (SIGSTOP) if it died.
        kill -CONT "$SERVER_PID" 2>/dev/null || true
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 1 300); do        # up to 30 s
            kill -0 "$SERVER_PID" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$SERVER_PID" 2>/dev/null; then
            log "the server did not stop in 30 s; killing it"
            kill -KILL "$SERVER_PID" 2>/dev/null || true
        fi
    fi
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
}
# shellcheck disable=SC2317  # called from the EXIT trap
cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    stop_server
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# ------------------------------------------------------------ install + start

log "mariadb-install-db in $DATA"
if ! "$INSTALL_DB" --no-defaults "${USER_OPT[@]}" --datadir="$DATA" \
        --auth-root-authentication-method="$ROOT_AUTH" --skip-test-db \
        >"$WORK/install.log" 2>&1; then
    cat "$WORK/install.log" >&2
    die "mariadb-install-db failed"
fi

log "starting on 127.0.0.1:$PORT"
"$SERVER" --no-defaults "${USER_OPT[@]}" --datadir="$DATA" --socket="$SOCK" \
    --port="$PORT" --bind-address=127.0.0.1 --pid-file="$PIDFILE" \
    --log-error="$ERRLOG" --skip-name-resolve --character-set-server=utf8mb4 \
    --innodb-buffer-pool-size=64M --innodb-flush-log-at-trx-commit=2 \
    </dev/null >"$WORK/server.out" 2>&1 &
SERVER_PID=$!

client_root() {
    "$CLIENT" --no-defaults --socket="$SOCK" -u root "$@"
}

ready=0
for _ in $(seq 1 600); do              # up to 60 s
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        cat "$WORK/server.out" "$ERRLOG" >&2 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=""
        die "the server exited during start-up"
    fi
    if "$ADMIN" --no-defaults --socket="$SOCK" -u root --connect-timeout=2 ping \
            >/dev/null 2>&1; then
        ready=1
        break
    fi
    sleep 0.1
done
if [ "$ready" != 1 ]; then
    cat "$ERRLOG" >&2 2>/dev/null || true
    die "the server did not answer a ping within 60 s"
fi

client_root <<EOF || die "could not create the database and user"
CREATE DATABASE $DB_NAME CHARACTER SET utf8mb4;
CREATE USER '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$DB_PASS';
GRANT ALL PRIVILEGES ON $DB_NAME.* TO '$DB_USER'@'127.0.0.1' WITH GRANT OPTION;
CREATE USER '${DB_USER}_lease'@'127.0.0.1' IDENTIFIED BY '$DB_PASS';
EOF

# Time-zone tables: the suites set time_zone = 'America/New_York'.  The
# converter warns about zoneinfo files it skips; that is expected.
log "loading time-zone tables"
"$TZINFO" /usr/share/zoneinfo 2>/dev/null | client_root mysql 2>"$WORK/tz.log" ||
    { cat "$WORK/tz.log" >&2; die "loading the time-zone tables failed"; }
tz_ok=$(client_root -N -B -e \
    "SELECT CONVERT_TZ('2024-11-03 06:40:00', 'UTC', 'America/New_York') IS NOT NULL") || true
[ "$tz_ok" = 1 ] || die "time zone America/New_York is not usable after loading the tables"

# ------------------------------------------------------------ ODBC configuration

{
    printf '[MariaDB Unicode]\nDescription = MariaDB Connector/ODBC (Unicode)\nDriver = %s\n\n' \
        "$MA_DRIVER"
    # Tests that use the embedded SQLite default (the CLI demo, ...) keep
    # finding their driver through this file.
    if [ -n "$SQLITE_DRIVER" ]; then
        printf '[SQLite3]\nDescription = SQLite3 ODBC driver\nDriver = %s\n\n' "$SQLITE_DRIVER"
    fi
} >"$WORK/odbc/odbcinst.ini"
cat >"$WORK/odbc/odbc.ini" <<EOF
[sqlease_maria]
Description = sqlease CI MariaDB
Driver = MariaDB Unicode
Server = 127.0.0.1
Port = $PORT
Database = $DB_NAME
User = $DB_USER
Password = $DB_PASS
OPTION = 0

[sqlease_maria_lease]
Description = sqlease CI MariaDB, a user with only the grants a test gives it
Driver = MariaDB Unicode
Server = 127.0.0.1
Port = $PORT
Database = $DB_NAME
User = ${DB_USER}_lease
Password = $DB_PASS
OPTION = 0
EOF
export ODBCSYSINI=$WORK/odbc
export ODBCINI=$WORK/odbc/odbc.ini
export SQLEASE_TEST_DIALECT=mysql

# ------------------------------------------------------------ restart commands

# For the chaos harness (ci/chaos.sh): how to stop this server and start it
# again in place, and the port it listens on (the harness puts a proxy of
# its own in front of it).  `shutdown` returns once the server is down; the
# restarted server runs detached (setsid), and stop_server finds it
# by its pid file.
{
    printf '#!/usr/bin/env bash\n'
    printf 'exec %q --no-defaults --socket=%q -u root --connect-timeout=5 shutdown\n' \
        "$ADMIN" "$SOCK"
} >"$WORK/db-stop.sh"
{
    printf '#!/usr/bin/env bash\n'
    printf 'setsid'
    printf ' %q' "$SERVER" --no-defaults "${USER_OPT[@]}" --datadir="$DATA" --socket="$SOCK" \
        --port="$PORT" --bind-address=127.0.0.1 --pid-file="$PIDFILE" \
        --log-error="$ERRLOG" --skip-name-resolve --character-set-server=utf8mb4 \
        --innodb-buffer-pool-size=64M --innodb-flush-log-at-trx-commit=2
    printf ' </dev/null >>%q 2>&1 &\n' "$WORK/server.out"
    printf 'for _ in $(seq 1 600); do\n'
    printf '    %q --no-defaults --socket=%q -u root --connect-timeout=2 ping >/dev/null 2>&1 && exit 0\n' \
        "$ADMIN" "$SOCK"
    printf '    sleep 0.1\ndone\nexit 1\n'
} >"$WORK/db-start.sh"
{
    printf '#!/usr/bin/env bash\n'
    printf 'p=$(cat %q 2>/dev/null) && [ -n "$p" ] && kill -0 "$p" 2>/dev/null || exit 1\n' \
        "$PIDFILE"
    printf 'echo "$p"\n'
} >"$WORK/db-pids.sh"
export SQLEASE_DB_PORT=$PORT
export SQLEASE_DB_STOP="bash $WORK/db-stop.sh"
export SQLEASE_DB_START="bash $WORK/db-start.sh"
export SQLEASE_DB_PIDS_CMD="bash $WORK/db-pids.sh"

# ------------------------------------------------------------ run

[ $# -gt 0 ] || set -- scons test
cd "$TOP"
status=0
summary=""
FOUND_ROWS_TESTS=${SQLEASE_MARIADB_FOUND_ROWS_TESTS-test_db test_dialect test_fire test_group test_history test_holder test_lease test_odbc test_overlap test_privileges test_states}
plain_scons_test=0
case " $* " in
    *" TESTS="*) ;;
    " scons "*" test "|" scons test ") plain_scons_test=1 ;;
esac
first=1
for opt in $OPTIONS; do
    run=("$@")
    if [ "$first" = 0 ] && [ "$plain_scons_test" = 1 ] && [ -n "$FOUND_ROWS_TESTS" ]; then
        run+=("TESTS=$FOUND_ROWS_TESTS")
    fi
    first=0
    export SQLEASE_TEST_DSN="DSN=sqlease_maria;OPTION=$opt"
    export SQLEASE_TEST_LEASE_DSN="DSN=sqlease_maria_lease;OPTION=$opt"
    export SQLEASE_TEST_LEASE_ROLE="'${DB_USER}_lease'@'127.0.0.1'"
    log "running: ${run[*]} (SQLEASE_TEST_DSN=$SQLEASE_TEST_DSN)"
    set +e
    "${run[@]}"
    rc=$?
    set -e
    if [ "$rc" = 0 ]; then
        summary="$summary OPTION=$opt:PASS"
    else
        summary="$summary OPTION=$opt:FAIL($rc)"
        [ "$status" != 0 ] || status=$rc
    fi
    refresh_server_pid
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        log "the server died during the run; its log:"
        tail -n 50 "$ERRLOG" >&2 2>/dev/null || true
        [ "$status" != 0 ] || status=1
        break
    fi
done
log "results:$summary"
exit "$status"
