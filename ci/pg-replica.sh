#!/usr/bin/env bash
# ci/pg-replica.sh -- run a command against a throwaway PostgreSQL primary
# and a streaming standby, synchronous or asynchronous.
#
#   bash ci/pg-replica.sh [--sync | --async] [COMMAND...]
#
# Starts a primary (127.0.58.4) and a standby copied from it with
# pg_basebackup (127.0.58.5), both on port SQLEASE_PG_PORT (58001),
# each in a fresh temporary directory, as the `postgres` user when run as
# root.  --sync (the default): synchronous_standby_names names the standby
# and synchronous_commit is on, so a commit is acknowledged only once the
# standby has it on disk.  --async: no synchronous standby; a commit is
# acknowledged by the primary alone.  The DSN `sqlease_pg_ha` lists both
# servers (psqlODBC hands Servername=h1,h2 to libpq as it is) with
# pqopt=target_session_attrs=read-write, so a client connects to whichever
# is the primary.  One port for both: psqlODBC 13 cuts Port at 9
# characters, so a list "58001,58002" reaches libpq as "58001,580".  The command runs from the top of the tree with
#
#   SQLEASE_TEST_DSN=DSN=sqlease_pg_ha   SQLEASE_TEST_DIALECT=postgres
#   SQLEASE_PG_HA_MODE                   sync or async
#   SQLEASE_PG_HA_CTL                    a command acting on the pair:
#       kill-primary      stop the primary at once (pg_ctl -m immediate: a
#                         crash, nothing flushed to the standby after it)
#       promote           promote the standby (pg_ctl promote, waits)
#       stall-standby     SIGSTOP the standby's WAL receiver: the primary's
#                         commits no longer reach it
#       resume-standby    SIGCONT it
#       drop-received     SIGKILL the frozen WAL receiver: what the primary
#                         sent that it had not read yet dies with its socket
#                         (the standby restarts its processes and goes on
#                         recovering from what it had); waits until it
#                         answers again
#       pids-primary      the primary's processes (postmaster first)
#       status            which server is in recovery
#
# Both servers are stopped (their processes resumed first) and the
# directory removed on every exit path; the script exits with the
# command's status.
#
# Environment: PG_BIN, SQLEASE_PG_PORT (the servers' port),
# SQLEASE_PG_HA_NET (first three octets of the two
# addresses, default 127.0.58), ODBC_DRIVER_DIR.

set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
MODE=sync
case ${1:-} in
--sync) MODE=sync; shift ;;
--async) MODE=async; shift ;;
esac
P1=${SQLEASE_PG_PORT:-58001}
P2=$P1
NET=${SQLEASE_PG_HA_NET:-127.0.58}
H1=$NET.4
H2=$NET.5
PG_USER=postgres
DB_NAME=sqlease
DB_ROLE=sqlease
DB_PASS=sqlease-ci-pw

log() { printf 'pg-replica.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 2; }

if [ -z "${PG_BIN:-}" ]; then
    if [ -x /usr/lib/postgresql/15/bin/pg_ctl ]; then
        PG_BIN=/usr/lib/postgresql/15/bin
    else
        PG_BIN=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
    fi
fi
[ -x "$PG_BIN/pg_ctl" ] && [ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/pg_basebackup" ] ||
    die "initdb/pg_ctl/pg_basebackup not found (install postgresql, or set PG_BIN)"
PSQL=$PG_BIN/psql
[ -x "$PSQL" ] || PSQL=$(command -v psql) || die "psql not found"

# shellcheck source=ci/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PG_DRIVER=$(find_driver psqlodbcw.so) ||
    die "psqlodbcw.so not found (install odbc-postgresql, or set ODBC_DRIVER_DIR)"
SQLITE_DRIVER=$(find_driver libsqlite3odbc.so || true)

for hp in "$H1:$P1" "$H2:$P2"; do
    if (exec 3<>"/dev/tcp/${hp%:*}/${hp#*:}") 2>/dev/null; then
        die "$hp is in use (SQLEASE_PG_PORT picks other ports)"
    fi
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sqlease-pgha-XXXXXX")
chmod 755 "$WORK"
mkdir -p "$WORK/pg/s1" "$WORK/pg/s2" "$WORK/odbc"
D1=$WORK/pg/primary
D2=$WORK/pg/standby
if [ "$(id -u)" = 0 ]; then
    id "$PG_USER" >/dev/null 2>&1 || die "system user '$PG_USER' missing"
    chown "$PG_USER" "$WORK/pg" "$WORK/pg/s1" "$WORK/pg/s2"
    as_pg() { su "$PG_USER" -s /bin/sh -c "$1"; }
else
    as_pg() { sh -c "$1"; }
fi

# ------------------------------------------------------------ the control script

cat >"$WORK/ctl.sh" <<EOF
#!/usr/bin/env bash
# Control of the primary/standby pair ci/pg-replica.sh started in $WORK.
set -uo pipefail
PG_BIN=$(printf '%q' "$PG_BIN")
D1=$(printf '%q' "$D1")
D2=$(printf '%q' "$D2")
AS_PG=$(if [ "$(id -u)" = 0 ]; then printf '%q' "su $PG_USER -s /bin/sh -c"; else printf '%q' "sh -c"; fi)
PSQL=$(printf '%q' "$PSQL")
SOCK1=$(printf '%q' "$WORK/pg/s1")
SOCK2=$(printf '%q' "$WORK/pg/s2")
P1=$P1
P2=$P2
EOF
cat >>"$WORK/ctl.sh" <<'EOF'
as_pg() { $AS_PG "$1"; }
postmaster() { head -n 1 "$1/postmaster.pid" 2>/dev/null; }
pids() {
    local pm
    pm=$(postmaster "$1") && [ -n "$pm" ] && kill -0 "$pm" 2>/dev/null || return 1
    echo "$pm"
    ps -o pid= --ppid "$pm"
}
walreceiver() {
    local pm
    pm=$(postmaster "$D2") || return 1
    ps -o pid=,cmd= --ppid "$pm" | awk '/walreceiver/ { print $1 }'
}
case ${1:-} in
kill-primary) as_pg "'$PG_BIN/pg_ctl' stop -D '$D1' -m immediate -w -t 30" >/dev/null ;;
promote) as_pg "'$PG_BIN/pg_ctl' promote -D '$D2' -w -t 60" >/dev/null ;;
stall-standby)
    p=$(walreceiver) && [ -n "$p" ] || { echo "no WAL receiver" >&2; exit 1; }
    kill -STOP $p && echo "$p" ;;
resume-standby)
    for p in $(pids "$D2"); do kill -CONT "$p" 2>/dev/null; done; exit 0 ;;
drop-received)
    p=$(walreceiver) && [ -n "$p" ] || { echo "no WAL receiver" >&2; exit 1; }
    kill -KILL $p
    for q in $(pids "$D2"); do kill -CONT "$q" 2>/dev/null; done
    sleep 0.5
    for _ in $(seq 1 600); do
        "$PSQL" -X -A -t -h "$SOCK2" -p "$P1" -U postgres -d postgres -c 'SELECT 1' \
            >/dev/null 2>&1 && exit 0
        sleep 0.1
    done
    echo "the standby did not come back" >&2; exit 1 ;;
pids-primary) pids "$D1" ;;
status)
    for s in "$SOCK1" "$SOCK2"; do
        printf '%s in recovery: %s\n' "${s##*/}" \
            "$("$PSQL" -X -A -t -h "$s" -p "$P1" -U postgres -d postgres \
                -c 'SELECT pg_is_in_recovery()' 2>/dev/null || echo down)"
    done ;;
*) echo "usage: ctl.sh kill-primary|promote|stall-standby|resume-standby|drop-received|pids-primary|status" >&2
   exit 64 ;;
esac
EOF
CTL="bash $WORK/ctl.sh"

STARTED=""
CHILD=""
# The command, if it still runs (this script was signalled): SIGTERM, and
# up to 30 s to finish (the chaos harness stops its fleet first).
# shellcheck disable=SC2317  # called from the EXIT trap
stop_child() {
    [ -n "$CHILD" ] || return 0
    kill -TERM "$CHILD" 2>/dev/null
    for _ in $(seq 1 300); do kill -0 "$CHILD" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$CHILD" 2>/dev/null
    wait "$CHILD" 2>/dev/null
    CHILD=""
}
# shellcheck disable=SC2317  # called from the EXIT trap
cleanup() {
    local rc=$? d pm
    trap - EXIT INT TERM HUP
    set +e
    stop_child
    for d in $STARTED; do
        pm=$(head -n 1 "$d/postmaster.pid" 2>/dev/null)
        if [ -n "$pm" ] && kill -0 "$pm" 2>/dev/null; then
            kill -CONT "$pm" $(ps -o pid= --ppid "$pm") 2>/dev/null
            as_pg "'$PG_BIN/pg_ctl' stop -D '$d' -m immediate -w -t 30" >/dev/null 2>&1 ||
                log "could not stop the server in $d"
        fi
    done
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# ------------------------------------------------------------ primary

printf '%s\n' "$DB_PASS" >"$WORK/pg/pw"
[ "$(id -u)" != 0 ] || chown "$PG_USER" "$WORK/pg/pw"
as_pg "'$PG_BIN/initdb' -D '$D1' -U postgres --auth-local=trust --auth-host=scram-sha-256 \
    --pwfile='$WORK/pg/pw' -E UTF8 --locale=C.UTF-8" >"$WORK/initdb.log" 2>&1 ||
    { cat "$WORK/initdb.log" >&2; die "initdb failed"; }
rm -f "$WORK/pg/pw"
cat >>"$D1/postgresql.conf" <<EOF
listen_addresses = '$H1'
port = $P1
unix_socket_directories = '$WORK/pg/s1'
wal_level = replica
max_wal_senders = 4
hot_standby = on
synchronous_commit = on
synchronous_standby_names = ''
fsync = off
EOF
# The standby's replication connection (and pg_basebackup's) comes over
# TCP from loopback as postgres: trusted, for replication only, ahead of
# initdb's lines that would ask for a password.
{ printf 'host replication postgres 127.0.0.0/8 trust\n'; cat "$D1/pg_hba.conf"; } >"$D1/pg_hba.new"
mv "$D1/pg_hba.new" "$D1/pg_hba.conf"
[ "$(id -u)" != 0 ] || chown "$PG_USER" "$D1/pg_hba.conf"

log "starting the primary on $H1:$P1 ($MODE)"
STARTED="$D1"
as_pg "'$PG_BIN/pg_ctl' start -D '$D1' -w -t 60 -l '$WORK/pg/primary.log'" >/dev/null </dev/null ||
    { cat "$WORK/pg/primary.log" >&2; die "the primary did not start"; }
"$PSQL" -X -q -v ON_ERROR_STOP=1 -h "$WORK/pg/s1" -p "$P1" -U postgres -d postgres \
    -c "CREATE ROLE $DB_ROLE LOGIN PASSWORD '$DB_PASS'" \
    -c "CREATE DATABASE $DB_NAME OWNER $DB_ROLE" >/dev/null ||
    die "could not create the role and database"

# ------------------------------------------------------------ standby

log "copying the standby (pg_basebackup)"
as_pg "'$PG_BIN/pg_basebackup' -h '$H1' -p $P1 -U postgres -D '$D2' -R -X stream \
    -c fast -w" >"$WORK/basebackup.log" 2>&1 </dev/null ||
    { cat "$WORK/basebackup.log" >&2; die "pg_basebackup failed"; }
cat >>"$D2/postgresql.conf" <<EOF
listen_addresses = '$H2'
port = $P2
unix_socket_directories = '$WORK/pg/s2'
EOF
# After the primary_conninfo pg_basebackup -R wrote there (the last one
# wins): the name synchronous_standby_names refers to.
printf "primary_conninfo = 'host=%s port=%s user=postgres application_name=standby1'\n" \
    "$H1" "$P1" >>"$D2/postgresql.auto.conf"
log "starting the standby on $H2:$P2"
STARTED="$D2 $D1"
as_pg "'$PG_BIN/pg_ctl' start -D '$D2' -w -t 60 -l '$WORK/pg/standby.log'" >/dev/null </dev/null ||
    { cat "$WORK/pg/standby.log" >&2; die "the standby did not start"; }
for _ in $(seq 1 300); do
    st=$("$PSQL" -X -A -t -h "$WORK/pg/s1" -p "$P1" -U postgres -d postgres -c \
        "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby1'" \
        2>/dev/null || true)
    [ -n "$st" ] && break
    sleep 0.1
done
[ -n "$st" ] || die "the standby did not connect to the primary"
if [ "$MODE" = sync ]; then
    # Only now: with a synchronous standby named before it exists, every
    # commit (the set-up's own) would wait for it.
    "$PSQL" -X -q -h "$WORK/pg/s1" -p "$P1" -U postgres -d postgres \
        -c "ALTER SYSTEM SET synchronous_standby_names = 'standby1'" \
        -c "SELECT pg_reload_conf()" >/dev/null || die "could not name the synchronous standby"
    for _ in $(seq 1 100); do
        st=$("$PSQL" -X -A -t -h "$WORK/pg/s1" -p "$P1" -U postgres -d postgres -c \
            "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby1'")
        [ "$st" = sync ] && break
        sleep 0.1
    done
    [ "$st" = sync ] || die "the standby is not synchronous ($st)"
fi
log "the standby streams ($st)"

# ------------------------------------------------------------ ODBC configuration

{
    printf '[PostgreSQL Unicode]\nDescription = PostgreSQL ODBC driver (Unicode)\nDriver = %s\n\n' \
        "$PG_DRIVER"
    if [ -n "$SQLITE_DRIVER" ]; then
        printf '[SQLite3]\nDescription = SQLite3 ODBC driver\nDriver = %s\n\n' "$SQLITE_DRIVER"
    fi
} >"$WORK/odbc/odbcinst.ini"
cat >"$WORK/odbc/odbc.ini" <<EOF
[sqlease_pg_ha]
Description = sqlease CI PostgreSQL primary and standby
Driver = PostgreSQL Unicode
Servername = ${SQLEASE_PG_HA_ORDER:-$H1,$H2}
Port = $P1
Database = $DB_NAME
Username = $DB_ROLE
Password = $DB_PASS
SSLmode = disable
pqopt = target_session_attrs=read-write
EOF
export ODBCSYSINI=$WORK/odbc
export ODBCINI=$WORK/odbc/odbc.ini
export SQLEASE_TEST_DSN="DSN=sqlease_pg_ha"
export SQLEASE_TEST_DIALECT=postgres
export SQLEASE_PG_HA_MODE=$MODE
export SQLEASE_PG_HA_CTL=$CTL

[ $# -gt 0 ] || set -- $CTL status
log "running: $*"
cd "$TOP"
# In the background, so that a signal to this script ends the wait at once
# and its trap stops the command, then the servers.
set +e
"$@" &
CHILD=$!
wait "$CHILD"
status=$?
CHILD=""
set -e
log "exit status $status"
exit "$status"
