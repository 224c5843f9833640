#!/usr/bin/env bash
# ci/cron-fleet.sh -- scheduled jobs on a fleet of this host's processes,
# on PostgreSQL (ci/postgres.sh starts and stops the server), each fire
# checked to run exactly once (ci/cron_fleet.py):
#
#   daemons   five `sqlease cron` (two with their clocks 30 s off under
#             libfaketime), a job every 5 s, through SIGKILLs of the
#             holder, rolling restarts and the holder cut off by nftables:
#             every fire run once, none more than ttl + 1 s late
#   outage    every host down for a while: SQLEASE_MISSED once, all, skip
#   crontab   five crontabs firing `run --every 10s`, one 9 s late: each
#             fire run once, the others saying who ran it
#
#   bash ci/cron-fleet.sh                 CI: 90 s of daemons (each fault kind
#                                         at least once), 30 s outage,
#                                         6 fires of crontabs (about 3.5 min)
#   bash ci/cron-fleet.sh --long          10 minutes of daemons, a 2-minute
#                                         outage, 12 fires
set -uo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 2
# shellcheck source=ci/lib.sh
. ci/lib.sh
SECONDS_DAEMONS=${CRON_FLEET_SECONDS:-90} OUTAGE_S=${CRON_FLEET_OUTAGE_S:-30} FIRES=${CRON_FLEET_FIRES:-6}
if [ "${1:-}" = --long ]; then
    SECONDS_DAEMONS=600 OUTAGE_S=120 FIRES=12
fi
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
scons -Q -j"$JOBS" build/bin/sqlease || exit 2
FAKETIME_LIB=$(find_faketime || true)
NFT=()
if [ "$(id -u)" = 0 ] && command -v nft >/dev/null 2>&1; then
    NFT=(--nft)
fi
export SECONDS_DAEMONS OUTAGE_S FIRES FAKETIME_LIB
# shellcheck disable=SC2016  # expanded by the inner shell, where it is set
exec bash ci/postgres.sh bash -c '
    rc=0
    python3 ci/cron_fleet.py daemons --bin build/bin/sqlease --dsn "$SQLEASE_TEST_DSN" \
        --seconds "$SECONDS_DAEMONS" ${FAKETIME_LIB:+--faketime "$FAKETIME_LIB"} '"${NFT[*]:-}"' || rc=1
    python3 ci/cron_fleet.py outage --bin build/bin/sqlease --dsn "$SQLEASE_TEST_DSN" \
        --outage-s "$OUTAGE_S" || rc=1
    python3 ci/cron_fleet.py crontab --bin build/bin/sqlease --dsn "$SQLEASE_TEST_DSN" \
        --fires "$FIRES" || rc=1
    exit $rc'
