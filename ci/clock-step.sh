#!/usr/bin/env bash
# ci/clock-step.sh -- `sqlease supervise` across steps of the database's
# clock: a PostgreSQL server started under libfaketime (ci/postgres.sh,
# SQLEASE_PG_FAKETIME=1) has its clock stepped 30 s forward four times
# while one instance holds and another waits (ci/fleet.py clockstep).
# Each step expires the live hold at once; the waiting instance takes only
# after it has watched the row unchanged for a ttl, by which time the
# holder's failed renew has stopped its CMD: no overlap, and someone holds
# again within ttl + 2 x retry + heartbeat + 1 s.  Then back 30 s under
# the live hold (it goes on), and right after a SIGKILL of the holder: the
# watching instance takes within ttl + 2 x retry + 1 s of the kill, not
# after the step.  About 75 s.
#
#   bash ci/clock-step.sh
set -uo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 2
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
scons -Q -j"$JOBS" build/bin/sqlease || exit 2
# shellcheck disable=SC2016  # expanded by the inner shell, where it is set
SQLEASE_PG_FAKETIME=1 exec bash ci/postgres.sh bash -c \
    'exec python3 ci/fleet.py clockstep --bin build/bin/sqlease --dsn "$SQLEASE_TEST_DSN" \
         --clock-file "$SQLEASE_PG_FAKETIME_FILE"'
