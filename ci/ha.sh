#!/usr/bin/env bash
# ci/ha.sh -- one holder on replicated databases: the checks CI runs, and
# the long ones.
#
#   bash ci/ha.sh          # ~4 min: Galera (the holder's node killed, then cut
#                          # off; conflicts of concurrent takes counted),
#                          # PostgreSQL failover to a synchronous standby, and
#                          # to an asynchronous one (its lost take reported)
#   bash ci/ha.sh --long   # every Galera node fault three times (a node no
#                          # holder uses killed, the holder's killed, cut off,
#                          # frozen, the whole cluster restarted), 30 s
#                          # contention phases, then the clock-skew measurement
#                          # (ci/clock-skew.sh)
#
# Everything runs through ci/chaos.sh (SQLEASE_CHAOS_DIALECTS="galera
# pg-sync pg-async"), whose servers ci/galera.sh and ci/pg-replica.sh start
# and stop.  Needs root (nodes run as mysql/postgres, nftables).  Exit
# status: non-zero if the Galera or synchronous-standby run found a
# violation, or the skew measurement could not run; the asynchronous
# standby's loss is the expected finding and never fails it.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
long=0
case ${1:-} in
--long) long=1 ;;
"") ;;
*) echo "usage: $0 [--long]" >&2; exit 64 ;;
esac
status=0
if [ "$long" = 1 ]; then
    SQLEASE_CHAOS_DIALECTS="galera pg-sync pg-async" bash "$HERE/chaos.sh" --long || status=1
    printf '\n==================== clock skew between Galera nodes ====================\n'
    # shellcheck source=ci/lib.sh
    . "$HERE/lib.sh"
    if ! preload=$(find_faketime); then
        echo "ha.sh: libfaketimeMT.so.1 not found (install faketime)" >&2
        status=1
    else
        SQLEASE_GALERA_PRELOAD_NODE=2 SQLEASE_GALERA_PRELOAD=$preload \
            bash "$HERE/galera.sh" bash "$HERE/clock-skew.sh" || status=1
    fi
else
    SQLEASE_CHAOS_DIALECTS="galera pg-sync pg-async" bash "$HERE/chaos.sh" \
        --faults node-kill,node-cutoff || status=1
fi
exit "$status"
