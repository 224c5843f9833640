#!/usr/bin/env bash
# ci/pgbouncer.sh -- run a command through PgBouncer in front of a throwaway
# PostgreSQL server.
#
#   bash ci/pgbouncer.sh                          # `scons test`, transaction pooling
#   bash ci/pgbouncer.sh --mode statement scons test TESTS=test_lease
#   bash ci/pgbouncer.sh --pool 2 python3 ci/fleet.py pooler
#
# Starts PostgreSQL through ci/postgres.sh, then PgBouncer (run as the
# server's system user: PgBouncer refuses to run as root) on 127.0.0.1 at
# an unused port (56432 or the next free one), with its configuration, log
# and pid file in a temporary directory of its own:
#
#   pool_mode = transaction | statement | session   (--mode; default transaction)
#   default_pool_size = N                           (--pool; default 2)
#
# so that consecutive transactions of one client run on whichever of the N
# server connections is free, as a fleet behind PgBouncer sees them.  A DSN
# `sqlease_pgb` through it joins ci/postgres.sh's private odbc.ini, and the
# command runs from the top of the tree with
#
#   SQLEASE_TEST_DSN=DSN=sqlease_pgb   (through the pooler)
#   SQLEASE_DIRECT_DSN=DSN=sqlease_pg  (the server itself, for set-up and checks)
#   SQLEASE_POOL_MODE=MODE             SQLEASE_TEST_DIALECT=postgres
#
# and the rest of ci/postgres.sh's environment.  PgBouncer is stopped by
# its pid (SIGINT: it closes every connection and exits; SIGKILL if it
# has not after 10 s) on every exit path, before ci/postgres.sh stops the
# server and removes its directory.  Exit status: the command's, or 2 if
# the pooler could not be started.
#
# Environment: SQLEASE_PGB_PORT (first port to try).

set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
MODE=transaction
POOL=2
INNER=0

log() { printf 'pgbouncer.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 2; }

while [ $# -gt 0 ]; do
    case $1 in
    --mode) MODE=${2:-}; shift 2 ;;
    --mode=*) MODE=${1#--mode=}; shift ;;
    --pool) POOL=${2:-}; shift 2 ;;
    --pool=*) POOL=${1#--pool=}; shift ;;
    --inner) INNER=1; shift ;;
    --) shift; break ;;
    *) break ;;
    esac
done
case $MODE in
transaction | statement | session) ;;
*) die "--mode must be transaction, statement or session (got '$MODE')" ;;
esac
[[ $POOL =~ ^[1-9][0-9]*$ ]] || die "--pool must be a positive number (got '$POOL')"

# Outside: start the server first, and come back in with it running.
if [ "$INNER" = 0 ]; then
    command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] ||
        die "pgbouncer not found (install the pgbouncer package)"
    exec bash "$HERE/postgres.sh" bash "$HERE/pgbouncer.sh" --inner --mode "$MODE" \
        --pool "$POOL" -- "$@"
fi

[ -n "${SQLEASE_DB_PORT:-}" ] && [ -n "${ODBCINI:-}" ] ||
    die "--inner runs only under ci/postgres.sh"
PGBOUNCER=$(command -v pgbouncer 2>/dev/null || echo /usr/sbin/pgbouncer)
# shellcheck source=ci/lib.sh
. "$HERE/lib.sh"
PORT=$(free_port "${SQLEASE_PGB_PORT:-56432}") || die "no free port for PgBouncer"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sqlease-pgb-XXXXXX")
chmod 755 "$WORK"
RUN_AS=""
if [ "$(id -u)" = 0 ]; then
    RUN_AS=postgres
    chown "$RUN_AS" "$WORK"
fi
PID=""

# shellcheck disable=SC2317  # called from the EXIT trap
cleanup() {
    local rc=$? i
    trap - EXIT INT TERM HUP
    if [ -z "$PID" ] && [ -s "$WORK/pgbouncer.pid" ]; then
        PID=$(<"$WORK/pgbouncer.pid")
    fi
    if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
        kill -INT "$PID" 2>/dev/null || true
        for i in $(seq 1 100); do
            kill -0 "$PID" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$PID" 2>/dev/null; then
            log "PgBouncer (pid $PID) did not stop on SIGINT: SIGKILL"
            kill -KILL "$PID" 2>/dev/null || true
        fi
    fi
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# The server's role authenticates PgBouncer with its password (SCRAM);
# PgBouncer lets any client in under that role (auth_type = any), which
# is what a pool shared by a fleet looks like to the server.
# Besides the database in --mode, one alias per pooling mode (a pool of
# its own each), for the benchmark's side-by-side figures.
SERVER="host=127.0.0.1 port=$SQLEASE_DB_PORT dbname=sqlease user=sqlease password=sqlease-ci-pw"
cat >"$WORK/pgbouncer.ini" <<EOF
[databases]
sqlease = $SERVER
sqlease_tx = $SERVER pool_mode=transaction
sqlease_st = $SERVER pool_mode=statement

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $PORT
unix_socket_dir =
auth_type = any
pool_mode = $MODE
default_pool_size = $POOL
max_client_conn = 200
logfile = $WORK/pgbouncer.log
pidfile = $WORK/pgbouncer.pid
EOF
if [ -n "$RUN_AS" ]; then
    chown "$RUN_AS" "$WORK/pgbouncer.ini"
    su "$RUN_AS" -s /bin/sh -c "'$PGBOUNCER' -d '$WORK/pgbouncer.ini'" ||
        die "PgBouncer did not start: $(tail -n 5 "$WORK/pgbouncer.log" 2>/dev/null)"
else
    "$PGBOUNCER" -d "$WORK/pgbouncer.ini" ||
        die "PgBouncer did not start: $(tail -n 5 "$WORK/pgbouncer.log" 2>/dev/null)"
fi
# -d forks: the pid file appears once it listens.
for _ in $(seq 1 100); do
    [ -s "$WORK/pgbouncer.pid" ] && (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
    sleep 0.1
done
[ -s "$WORK/pgbouncer.pid" ] || die "PgBouncer wrote no pid file: $(tail -n 5 "$WORK/pgbouncer.log")"
PID=$(<"$WORK/pgbouncer.pid")
log "PgBouncer $("$PGBOUNCER" --version | head -n 1 | awk '{print $2}') (pid $PID) on 127.0.0.1:$PORT," \
    "pool_mode = $MODE, default_pool_size = $POOL"

while read -r dsn db mode; do
    printf '\n[%s]\nDescription = sqlease CI PostgreSQL through PgBouncer (%s pooling)\n' \
        "$dsn" "$mode"
    printf 'Driver = PostgreSQL Unicode\nServername = 127.0.0.1\nPort = %s\n' "$PORT"
    printf 'Database = %s\nUsername = sqlease\nSSLmode = disable\n' "$db"
done >>"$ODBCINI" <<EOF
sqlease_pgb sqlease $MODE
sqlease_pgb_tx sqlease_tx transaction
sqlease_pgb_st sqlease_st statement
EOF

export SQLEASE_DIRECT_DSN="DSN=sqlease_pg"
export SQLEASE_TEST_DSN="DSN=sqlease_pgb"
export SQLEASE_POOL_MODE=$MODE
export SQLEASE_PGB_LOG=$WORK/pgbouncer.log
[ $# -gt 0 ] || set -- scons test
log "running: $* (SQLEASE_TEST_DSN=$SQLEASE_TEST_DSN)"
cd "$TOP"
set +e
"$@"
status=$?
set -e
log "exit status $status"
exit "$status"
