#!/usr/bin/env bash
# ci/postgres.sh -- run a command against a throwaway PostgreSQL server.
#
#   bash ci/postgres.sh                 # runs `scons test`
#   bash ci/postgres.sh scons test TESTS=test_dialect
#
# Starts PostgreSQL on 127.0.0.1 (an unused port, 55432 or the next free
# one) with its data, socket and ODBC configuration in a fresh temporary
# directory, creates the database and role `sqlease`, writes a private
# odbc.ini / odbcinst.ini there (ODBCSYSINI / ODBCINI point at them; the
# system files are never touched) with the DSN `sqlease_pg`, and runs the
# command from the top of the tree with
#
#   SQLEASE_TEST_DSN=DSN=sqlease_pg   SQLEASE_TEST_DIALECT=postgres
#
# It also creates the role `sqlease_lease`, which may log in and nothing
# more (the DSN `sqlease_pg_lease`), for the least-privilege suite
# (tests/test_privileges.c), which grants it SELECT and UPDATE on a lease
# table of its own and runs the lease commands as that role:
#
#   SQLEASE_TEST_LEASE_DSN=DSN=sqlease_pg_lease
#   SQLEASE_TEST_LEASE_ROLE=sqlease_lease       (the grantee, as GRANT names it)
#
# The server is stopped and the directory removed on every exit path, and
# the script exits with the command's status.
#
# Runs as root (the server then runs as the `postgres` system user) or as
# an ordinary user (the server runs as that user).
#
# The chaos harness also finds SQLEASE_DB_PORT (the server's port),
# SQLEASE_DB_STOP / SQLEASE_DB_START (commands that stop the server and
# start it again in place) and SQLEASE_DB_PIDS_CMD (a command printing the
# server's pids, the postmaster first, then every process it forked) in
# its environment.
#
# SQLEASE_PG_FAKETIME=1 starts the server under libfaketime (package
# faketime) with its wall clock offset by what the file named in
# SQLEASE_PG_FAKETIME_FILE (exported to the command) says, read again at
# every clock read: write "+30s" there and the server's clock steps 30 s
# forward at once, as an NTP step would (its monotonic clock is left
# alone).  ci/clock-step.sh uses it.
#
# Environment: PG_BIN (directory of initdb/pg_ctl; default: the newest
# /usr/lib/postgresql/*/bin), SQLEASE_PG_PORT (first port to try),
# ODBC_DRIVER_DIR (where psqlodbcw.so lives, if not a usual place).

set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
PORT_FIRST=${SQLEASE_PG_PORT:-55432}
PG_USER=postgres
DB_NAME=sqlease
DB_ROLE=sqlease
DB_PASS=sqlease-ci-pw

log() { printf 'postgres.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 2; }

# ------------------------------------------------------------ binaries

if [ -z "${PG_BIN:-}" ]; then
    if [ -x /usr/lib/postgresql/15/bin/pg_ctl ]; then
        PG_BIN=/usr/lib/postgresql/15/bin
    else
        PG_BIN=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
    fi
fi
if [ ! -x "$PG_BIN/pg_ctl" ] || [ ! -x "$PG_BIN/initdb" ]; then
    die "initdb/pg_ctl not found (install postgresql, or set PG_BIN)"
fi
PSQL=$PG_BIN/psql
[ -x "$PSQL" ] || PSQL=$(command -v psql) || die "psql not found"

# The ODBC driver library: an absolute path, so that the private
# odbcinst.ini does not depend on the driver manager's search path.
# shellcheck source=ci/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PG_DRIVER=$(find_driver psqlodbcw.so) ||
    die "psqlodbcw.so not found (install odbc-postgresql, or set ODBC_DRIVER_DIR)"
SQLITE_DRIVER=$(find_driver libsqlite3odbc.so || true)

# ------------------------------------------------------------ a free port

PORT=$(free_port "$PORT_FIRST") || die "no free port in $PORT_FIRST..$((PORT_FIRST + 50))"

# ------------------------------------------------------------ temp dir + cleanup

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sqlease-pg-XXXXXX")
chmod 755 "$WORK"          # the server's user must be able to reach pg/
PGDIR=$WORK/pg             # data directory and socket, owned by the server's user
DATA=$PGDIR/data
SOCK=$PGDIR
mkdir -p "$PGDIR" "$WORK/odbc"

if [ "$(id -u)" = 0 ]; then
    id "$PG_USER" >/dev/null 2>&1 || die "system user '$PG_USER' missing"
    chown "$PG_USER" "$PGDIR"
    as_pg() { su "$PG_USER" -s /bin/sh -c "$1"; }
else
    as_pg() { sh -c "$1"; }
fi

STARTED=0
# shellcheck disable=SC2317  # called from the EXIT trap
cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    if [ "$STARTED" = 1 ]; then
        # A chaos run may have left it stopped (SIGSTOP) if it died.
        if [ -f "$WORK/db-pids.sh" ]; then
            bash "$WORK/db-pids.sh" 2>/dev/null | xargs -r kill -CONT 2>/dev/null || true
        fi
        log "stopping the server (data dir $DATA)"
        as_pg "'$PG_BIN/pg_ctl' stop -D '$DATA' -m fast -w -t 60" >/dev/null 2>&1 ||
            as_pg "'$PG_BIN/pg_ctl' stop -D '$DATA' -m immediate -w -t 30" >/dev/null 2>&1 ||
            log "could not stop the server in $DATA"
    fi
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# ------------------------------------------------------------ initdb + start

# Local (socket) connections are trusted, for the set-up below; TCP, which
# the tests use through the ODBC driver, needs the role's password.
printf '%s\n' "$DB_PASS" >"$PGDIR/pw"
if [ "$(id -u)" = 0 ]; then chown "$PG_USER" "$PGDIR/pw"; fi
log "initdb in $DATA ($PG_BIN)"
if ! as_pg "'$PG_BIN/initdb' -D '$DATA' -U postgres --auth-local=trust --auth-host=scram-sha-256 \
        --pwfile='$PGDIR/pw' -E UTF8 --locale=C.UTF-8" >"$WORK/initdb.log" 2>&1; then
    cat "$WORK/initdb.log" >&2
    die "initdb failed"
fi
rm -f "$PGDIR/pw"

PRELOAD=""
if [ "${SQLEASE_PG_FAKETIME:-0}" = 1 ]; then
    lib=$(find_faketime) || die "libfaketimeMT.so.1 not found (install faketime)"
    export SQLEASE_PG_FAKETIME_FILE=$WORK/faketime
    echo "+0" >"$SQLEASE_PG_FAKETIME_FILE"
    chmod 644 "$SQLEASE_PG_FAKETIME_FILE"
    PRELOAD="env LD_PRELOAD='$lib' FAKETIME_TIMESTAMP_FILE='$SQLEASE_PG_FAKETIME_FILE' FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1 "
    log "the server's clock follows $SQLEASE_PG_FAKETIME_FILE (libfaketime)"
fi

log "starting on 127.0.0.1:$PORT"
STARTED=1
if ! as_pg "$PRELOAD'$PG_BIN/pg_ctl' start -D '$DATA' -w -t 60 -l '$PGDIR/server.log' \
        -o \"-p $PORT -k '$SOCK' -c listen_addresses=127.0.0.1 -c fsync=off\"" \
        >"$WORK/pg_ctl.log" 2>&1; then
    cat "$WORK/pg_ctl.log" "$PGDIR/server.log" >&2 2>/dev/null || true
    die "the server did not start"
fi

psql_admin() {
    "$PSQL" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$PORT" -U postgres -d postgres "$@"
}
psql_admin -c "CREATE ROLE $DB_ROLE LOGIN PASSWORD '$DB_PASS'" \
           -c "CREATE DATABASE $DB_NAME OWNER $DB_ROLE" \
           -c "CREATE ROLE ${DB_ROLE}_lease LOGIN PASSWORD '$DB_PASS'" >/dev/null ||
    die "could not create the roles and database"

# ------------------------------------------------------------ ODBC configuration

{
    printf '[PostgreSQL Unicode]\nDescription = PostgreSQL ODBC driver (Unicode)\nDriver = %s\n\n' \
        "$PG_DRIVER"
    # Tests that use the embedded SQLite default (the CLI demo, ...) keep
    # finding their driver through this file.
    if [ -n "$SQLITE_DRIVER" ]; then
        printf '[SQLite3]\nDescription = SQLite3 ODBC driver\nDriver = %s\n\n' "$SQLITE_DRIVER"
    fi
} >"$WORK/odbc/odbcinst.ini"
cat >"$WORK/odbc/odbc.ini" <<EOF
[sqlease_pg]
Description = sqlease CI PostgreSQL
Driver = PostgreSQL Unicode
Servername = 127.0.0.1
Port = $PORT
Database = $DB_NAME
Username = $DB_ROLE
Password = $DB_PASS
SSLmode = disable

[sqlease_pg_lease]
Description = sqlease CI PostgreSQL, a role with only the grants a test gives it
Driver = PostgreSQL Unicode
Servername = 127.0.0.1
Port = $PORT
Database = $DB_NAME
Username = ${DB_ROLE}_lease
Password = $DB_PASS
SSLmode = disable
EOF
export ODBCSYSINI=$WORK/odbc
export ODBCINI=$WORK/odbc/odbc.ini

# ------------------------------------------------------------ restart commands

# For the chaos harness (ci/chaos.sh): how to stop this server and start it
# again in place, and the port it listens on (the harness puts a proxy of
# its own in front of it).  The cleanup above stops it whoever started it.
PG_STOP="'$PG_BIN/pg_ctl' stop -D '$DATA' -m fast -w -t 60"
PG_START="$PRELOAD'$PG_BIN/pg_ctl' start -D '$DATA' -w -t 60 -l '$PGDIR/server.log' \
-o \"-p $PORT -k '$SOCK' -c listen_addresses=127.0.0.1 -c fsync=off\""
for f in stop start; do
    if [ "$f" = stop ]; then c=$PG_STOP; else c=$PG_START; fi
    if [ "$(id -u)" = 0 ]; then
        printf '#!/usr/bin/env bash\nexec su %s -s /bin/sh -c %q\n' "$PG_USER" "$c"
    else
        printf '#!/usr/bin/env bash\nexec sh -c %q\n' "$c"
    fi >"$WORK/db-$f.sh"
done
# The postmaster and its children (each backend runs in a process group
# of its own, so a group signal would miss them): the chaos harness
# freezes the server with SIGSTOP to every one of them.
{
    printf '#!/usr/bin/env bash\n'
    printf 'pm=$(head -n 1 %q 2>/dev/null) && [ -n "$pm" ] && kill -0 "$pm" 2>/dev/null || exit 1\n' \
        "$DATA/postmaster.pid"
    printf 'echo "$pm"\nps -o pid= --ppid "$pm"\nexit 0\n'
} >"$WORK/db-pids.sh"
export SQLEASE_DB_PORT=$PORT
export SQLEASE_DB_STOP="bash $WORK/db-stop.sh"
export SQLEASE_DB_START="bash $WORK/db-start.sh"
export SQLEASE_DB_PIDS_CMD="bash $WORK/db-pids.sh"

# ------------------------------------------------------------ run

export SQLEASE_TEST_DSN="DSN=sqlease_pg"
export SQLEASE_TEST_DIALECT=postgres
export SQLEASE_TEST_LEASE_DSN="DSN=sqlease_pg_lease"
export SQLEASE_TEST_LEASE_ROLE="${DB_ROLE}_lease"
[ $# -gt 0 ] || set -- scons test
log "running: $* (SQLEASE_TEST_DSN=$SQLEASE_TEST_DSN)"
cd "$TOP"
set +e
"$@"
status=$?
set -e
log "exit status $status"
exit "$status"
