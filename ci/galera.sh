#!/usr/bin/env bash
# ci/galera.sh -- run a command against a throwaway 3-node MariaDB Galera
# cluster on loopback.
#
#   bash ci/galera.sh                          # a short check: each node answers
#   bash ci/galera.sh bash ci/chaos-ha.sh galera
#
# Each node listens on a loopback address of its own (127.0.58.1, .2, .3 by
# default: every 127/8 address is the loopback device's on Linux, so none
# has to be added) with its data, socket, error log and my.cnf in a fresh
# temporary directory.  Node 1 bootstraps the cluster; nodes 2 and 3 join
# it by state transfer (rsync).  The database `sqlease` and the user
# 'sqlease'@'127.%' are created once and replicate.  A private odbc.ini
# (ODBCSYSINI / ODBCINI point at it) has one DSN per node, and the command
# runs from the top of the tree with
#
#   SQLEASE_GALERA_DSN1..3   "DSN=sqlease_galera1" ...: node 1, 2, 3
#   SQLEASE_TEST_DSN         node 1's, SQLEASE_TEST_DIALECT=mysql
#   SQLEASE_GALERA_CTL       a command that acts on the cluster:
#       start N [bootstrap]  start node N (it rejoins; waits until Synced)
#       stop N               shut node N down cleanly
#       kill N               SIGKILL node N (a crash)
#       pid N                node N's server pid
#       cut N                drop node N's packets to and from the other
#                            nodes (nftables, table inet sqlease_galera_PID):
#                            its clients stay connected to it, it leaves the
#                            primary component and refuses their statements
#       heal                 remove every drop rule
#       restart-all          stop every node, bootstrap from the one with
#                            safe_to_bootstrap, start the others
#       wait-synced [S]      wait up to S seconds (60) for 3 Synced nodes
#       status               each node's state, one line per node
#       sql N STATEMENT      run a statement as root on node N (-N -B output)
#
# The group communication timeouts are short (a node that stops answering
# is out of the component within about 2 s rather than 5-15 s), so that a
# frozen node stalls the others briefly.  Everything is stopped on every
# exit path: each node by its pid (TERM, then KILL after 30 s), the
# nftables table deleted, the directory removed; a watchdog process does
# the same if this script is killed outright.  Exit status: the command's.
#
# Runs as root (the servers run as `mysql`; cut needs nft).
#
# Environment: SQLEASE_GALERA_PORT (first of the ports: node N's SQL port
# is it + N, its group port + 10 + N, its incremental state transfer port
# + 20 + N, its snapshot port + 30 + N; default 58100),
# SQLEASE_GALERA_NET (the first three octets of the node addresses;
# default 127.0.58), SQLEASE_GALERA_PRELOAD_NODE / SQLEASE_GALERA_PRELOAD
# (start node N with LD_PRELOAD=..., e.g. libfaketime, plus the FAKETIME*
# variables of this environment), ODBC_DRIVER_DIR.

set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
BASE=${SQLEASE_GALERA_PORT:-58100}
NET=${SQLEASE_GALERA_NET:-127.0.58}
SYS_USER=mysql
DB_NAME=sqlease
DB_USER=sqlease
DB_PASS=sqlease-ci-pw
NODES=3

log() { printf 'galera.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 2; }

[ "$(id -u)" = 0 ] || die "needs root (the nodes run as '$SYS_USER'; cut needs nft)"

first_cmd() {
    local c
    for c in "$@"; do
        if command -v "$c" >/dev/null 2>&1; then command -v "$c"; return 0; fi
        if [ -x "/usr/sbin/$c" ]; then printf '%s\n' "/usr/sbin/$c"; return 0; fi
    done
    return 1
}
SERVER=$(first_cmd mariadbd mysqld) || die "mariadbd not found (install mariadb-server)"
INSTALL_DB=$(first_cmd mariadb-install-db mysql_install_db) || die "mariadb-install-db not found"
CLIENT=$(first_cmd mariadb mysql) || die "the mariadb client is not found"
PROVIDER=""
for p in /usr/lib/galera/libgalera_smm.so /usr/lib/galera-4/libgalera_smm.so \
         /usr/lib64/galera-4/libgalera_smm.so; do
    [ -f "$p" ] && { PROVIDER=$p; break; }
done
[ -n "$PROVIDER" ] || die "libgalera_smm.so not found (install galera-4)"
command -v rsync >/dev/null 2>&1 || die "rsync not found (state transfer)"
NFT=$(first_cmd nft) || NFT=""

# shellcheck source=ci/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
MA_DRIVER=$(find_driver libmaodbc.so) ||
    die "libmaodbc.so not found (install odbc-mariadb, or set ODBC_DRIVER_DIR)"
SQLITE_DRIVER=$(find_driver libsqlite3odbc.so || true)

for n in 1 2 3; do
    for off in 0 10 20 30; do
        p=$((BASE + off + n))
        if (exec 3<>"/dev/tcp/$NET.$n/$p") 2>/dev/null; then
            die "port $NET.$n:$p is in use (SQLEASE_GALERA_PORT picks other ports)"
        fi
    done
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sqlease-galera-XXXXXX")
chmod 755 "$WORK"
mkdir -p "$WORK/odbc"
TABLE=sqlease_galera_$$

# ------------------------------------------------------------ the control script

# Everything that acts on a node lives in ctl.sh, so that the command this
# script runs (the chaos harness) can kill, freeze, cut off and restart
# nodes the same way this script starts and stops them.
cat >"$WORK/ctl.sh" <<EOF
#!/usr/bin/env bash
# Control of the cluster ci/galera.sh started in $WORK.
set -uo pipefail
WORK=$(printf '%q' "$WORK")
SERVER=$(printf '%q' "$SERVER")
CLIENT=$(printf '%q' "$CLIENT")
NFT=$(printf '%q' "$NFT")
TABLE=$TABLE
BASE=$BASE
NET=$NET
PRELOAD_NODE=${SQLEASE_GALERA_PRELOAD_NODE:-0}
PRELOAD=$(printf '%q' "${SQLEASE_GALERA_PRELOAD:-}")
EOF
cat >>"$WORK/ctl.sh" <<'EOF'
log() { printf 'galera ctl: %s\n' "$*" >&2; }
pid_of() { local p; p=$(cat "$WORK/node$1/pid" 2>/dev/null) && [ -n "$p" ] && kill -0 "$p" 2>/dev/null && echo "$p"; }
sql() {
    local n=$1; shift
    "$CLIENT" --no-defaults --socket="$WORK/node$n/sock" -u root --connect-timeout=2 -N -B -e "$*"
}
state() { sql "$1" "SHOW STATUS LIKE 'wsrep_local_state_comment'" 2>/dev/null | cut -f2; }
synced() { [ "$(state "$1")" = Synced ] && [ "$(sql "$1" "SHOW STATUS LIKE 'wsrep_ready'" 2>/dev/null | cut -f2)" = ON ]; }
start() {
    local n=$1 boot=${2:-} env=() i bg
    if pid_of "$n" >/dev/null; then log "node $n already runs"; return 0; fi
    if [ "$n" = "$PRELOAD_NODE" ] && [ -n "$PRELOAD" ]; then
        env=(env "LD_PRELOAD=$PRELOAD")
    fi
    if [ "$boot" = bootstrap ]; then
        sed -i 's/^safe_to_bootstrap: 0/safe_to_bootstrap: 1/' "$WORK/node$n/data/grastate.dat" 2>/dev/null
        boot=--wsrep-new-cluster
    fi
    rm -f "$WORK/node$n/pid"
    setsid "${env[@]}" "$SERVER" --defaults-file="$WORK/node$n/my.cnf" $boot \
        </dev/null >>"$WORK/node$n/server.out" 2>&1 &
    bg=$!
    for i in $(seq 1 1200); do          # up to 120 s: a state transfer may run
        synced "$n" && return 0
        if ! kill -0 "$bg" 2>/dev/null; then
            log "node $n exited during start-up; its log:"
            tail -n 30 "$WORK/node$n/error.log" >&2
            return 1
        fi
        sleep 0.1
    done
    log "node $n did not reach Synced in 120 s"
    return 1
}
stop() {
    local n=$1 p i
    p=$(pid_of "$n") || return 0
    kill -CONT "$p" 2>/dev/null
    kill -TERM "$p" 2>/dev/null
    for i in $(seq 1 300); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.1; done
    log "node $n (pid $p) did not stop in 30 s; killing it"
    kill -KILL "$p" 2>/dev/null
    for i in $(seq 1 50); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.1; done
    return 1
}
nkill() {
    local p i
    p=$(pid_of "$1") || return 0
    kill -KILL "$p"
    for i in $(seq 1 100); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.05; done
    return 1
}
isolate() {
    local n=$1 m rules=""
    [ -n "$NFT" ] || { log "nft not found (install nftables)"; return 1; }
    "$NFT" list table inet "$TABLE" >/dev/null 2>&1 ||
        printf 'table inet %s {\n chain input {\n  type filter hook input priority -5; policy accept;\n }\n}\n' \
            "$TABLE" | "$NFT" -f - || return 1
    # Node n's group and state transfer traffic with each other node, both
    # ways, by address pair: every node binds its own address, and its
    # clients' connections come from 127.0.0.1, so they are not touched.
    for m in 1 2 3; do
        [ "$m" = "$n" ] && continue
        rules+="add rule inet $TABLE input ip saddr $NET.$n ip daddr $NET.$m counter drop"$'\n'
        rules+="add rule inet $TABLE input ip saddr $NET.$m ip daddr $NET.$n counter drop"$'\n'
    done
    printf '%s' "$rules" | "$NFT" -f -
}
heal() {
    [ -n "$NFT" ] || return 0
    "$NFT" list table inet "$TABLE" >/dev/null 2>&1 || return 0
    "$NFT" flush chain inet "$TABLE" input
}
wait_synced() {
    local limit=${1:-60} i n ok
    for i in $(seq 1 $((limit * 10))); do
        ok=1
        for n in 1 2 3; do synced "$n" || { ok=0; break; }; done
        [ "$ok" = 1 ] && [ "$(sql 1 "SHOW STATUS LIKE 'wsrep_cluster_size'" | cut -f2)" = 3 ] && return 0
        sleep 0.1
    done
    log "the cluster did not have 3 Synced nodes within $limit s"
    return 1
}
restart_all() {
    local n boot=""
    for n in 3 2 1; do stop "$n" || return 1; done
    for n in 1 2 3; do
        grep -q '^safe_to_bootstrap: 1' "$WORK/node$n/data/grastate.dat" 2>/dev/null && boot=$n
    done
    [ -n "$boot" ] || boot=1
    start "$boot" bootstrap || return 1
    for n in 1 2 3; do
        [ "$n" = "$boot" ] || start "$n" || return 1
    done
}
cmd=${1:-}
shift || true
case $cmd in
start) start "$@" ;;
stop) stop "$1" ;;
kill) nkill "$1" ;;
pid) pid_of "$1" ;;
cut) isolate "$1" ;;
heal) heal ;;
restart-all) restart_all ;;
wait-synced) wait_synced "$@" ;;
status)
    for n in 1 2 3; do
        printf 'node %s pid %s state %s size %s\n' "$n" "$(pid_of "$n" || echo -)" \
            "$(state "$n" || echo -)" \
            "$(sql "$n" "SHOW STATUS LIKE 'wsrep_cluster_size'" 2>/dev/null | cut -f2)"
    done ;;
sql) sql "$@" ;;
*) echo "usage: ctl.sh start N [bootstrap]|stop N|kill N|pid N|cut N|heal|restart-all|wait-synced [S]|status|sql N STMT" >&2
   exit 64 ;;
esac
EOF
CTL="bash $WORK/ctl.sh"

# ------------------------------------------------------------ clean-up

stop_everything() {
    local n p
    [ -n "$NFT" ] && "$NFT" delete table inet "$TABLE" >/dev/null 2>&1
    for n in 3 2 1; do
        p=$(cat "$WORK/node$n/pid" 2>/dev/null || true)
        [ -n "$p" ] && kill -0 "$p" 2>/dev/null && kill -CONT "$p" 2>/dev/null
    done
    for n in 3 2 1; do
        $CTL stop "$n" || true
    done
}
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
    local rc=$?
    trap - EXIT INT TERM HUP
    set +e    # every step of the clean-up runs, whichever fails
    stop_child
    log "stopping the cluster"
    stop_everything
    [ -z "${WATCHDOG:-}" ] || kill "$WATCHDOG" 2>/dev/null || true
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# If this script is killed outright (SIGKILL), the watchdog, in a session
# of its own, undoes what it can: the table, the nodes, the directory.
setsid bash -c '
    trap "" INT TERM HUP
    while kill -0 '"$$"' 2>/dev/null; do sleep 1; done
    [ -d "$1" ] || exit 0
    [ -n "$2" ] && "$2" delete table inet "$3" >/dev/null 2>&1
    for f in "$1"/node*/pid; do p=$(cat "$f" 2>/dev/null) && kill -CONT "$p" && kill -KILL "$p"; done 2>/dev/null
    sleep 1
    rm -rf "$1"' galera-watchdog "$WORK" "$NFT" "$TABLE" </dev/null >/dev/null 2>&1 &
WATCHDOG=$!

# ------------------------------------------------------------ nodes

GCOMM=gcomm://$NET.1:$((BASE + 11)),$NET.2:$((BASE + 12)),$NET.3:$((BASE + 13))
for n in 1 2 3; do
    d=$WORK/node$n
    mkdir -p "$d"
    chown "$SYS_USER" "$d"
    cat >"$d/my.cnf" <<EOF
[mysqld]
user = $SYS_USER
datadir = $d/data
socket = $d/sock
pid-file = $d/pid
log-error = $d/error.log
port = $((BASE + n))
bind-address = $NET.$n
skip-name-resolve
character-set-server = utf8mb4
innodb-buffer-pool-size = 64M
innodb-flush-log-at-trx-commit = 2
binlog-format = ROW
default-storage-engine = InnoDB
innodb-autoinc-lock-mode = 2
wsrep-on = ON
wsrep-provider = $PROVIDER
wsrep-cluster-name = sqlease_ci_$$
wsrep-cluster-address = $GCOMM
wsrep-node-name = node$n
wsrep-node-address = $NET.$n:$((BASE + 10 + n))
wsrep-sst-method = rsync
wsrep-sst-receive-address = $NET.$n:$((BASE + 30 + n))
wsrep-provider-options = "gmcast.listen_addr=tcp://$NET.$n:$((BASE + 10 + n));ist.recv_addr=$NET.$n:$((BASE + 20 + n));gcache.size=64M;evs.keepalive_period=PT0.5S;evs.inactive_check_period=PT0.5S;evs.suspect_timeout=PT3S;evs.inactive_timeout=PT5S;evs.install_timeout=PT5S;gmcast.peer_timeout=PT3S"

[sst]
sst-syslog = -1
EOF
    if ! "$INSTALL_DB" --no-defaults --user="$SYS_USER" --datadir="$d/data" \
            --auth-root-authentication-method=socket --skip-test-db >"$d/install.log" 2>&1; then
        cat "$d/install.log" >&2
        die "mariadb-install-db failed for node $n"
    fi
done

t0=$(date +%s)
log "bootstrapping node 1 on $NET.1:$((BASE + 1))"
$CTL start 1 bootstrap || die "node 1 did not start"
$CTL sql 1 "CREATE DATABASE $DB_NAME CHARACTER SET utf8mb4;
CREATE USER '$DB_USER'@'127.%' IDENTIFIED BY '$DB_PASS';
GRANT ALL PRIVILEGES ON $DB_NAME.* TO '$DB_USER'@'127.%';" ||
    die "could not create the database and user"
for n in 2 3; do
    log "node $n joins on $NET.$n:$((BASE + n))"
    $CTL start "$n" || die "node $n did not join"
done
$CTL wait-synced 60 || die "the cluster did not form"
log "cluster of 3 up in $(($(date +%s) - t0)) s"

# ------------------------------------------------------------ ODBC configuration

{
    printf '[MariaDB Unicode]\nDescription = MariaDB Connector/ODBC (Unicode)\nDriver = %s\n\n' \
        "$MA_DRIVER"
    if [ -n "$SQLITE_DRIVER" ]; then
        printf '[SQLite3]\nDescription = SQLite3 ODBC driver\nDriver = %s\n\n' "$SQLITE_DRIVER"
    fi
} >"$WORK/odbc/odbcinst.ini"
for n in 1 2 3; do
    cat <<EOF
[sqlease_galera$n]
Description = sqlease CI Galera node $n
Driver = MariaDB Unicode
Server = $NET.$n
Port = $((BASE + n))
Database = $DB_NAME
User = $DB_USER
Password = $DB_PASS
OPTION = 0

EOF
done >"$WORK/odbc/odbc.ini"
export ODBCSYSINI=$WORK/odbc
export ODBCINI=$WORK/odbc/odbc.ini
export SQLEASE_GALERA_DSN1="DSN=sqlease_galera1"
export SQLEASE_GALERA_DSN2="DSN=sqlease_galera2"
export SQLEASE_GALERA_DSN3="DSN=sqlease_galera3"
export SQLEASE_GALERA_NODES=$NODES
export SQLEASE_GALERA_CTL=$CTL
export SQLEASE_TEST_DSN=$SQLEASE_GALERA_DSN1
export SQLEASE_TEST_DIALECT=mysql

# ------------------------------------------------------------ run

if [ $# -eq 0 ]; then
    set -- bash -c 'for n in 1 2 3; do $SQLEASE_GALERA_CTL sql $n "SELECT @@wsrep_node_name, (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = '"'"'WSREP_CLUSTER_SIZE'"'"')" || exit 1; done'
fi
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
