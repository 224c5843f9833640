#!/usr/bin/env bash
# ci/sqlserver.sh -- run a command against a SQL Server the caller provides.
#
#   SQLEASE_TEST_SQLSERVER_DSN='Driver=FreeTDS;Server=db.example;Port=1433;Database=sqlease;UID=u;PWD=p;TDS_Version=7.4' \
#       bash ci/sqlserver.sh            # runs `scons test`
#
# No SQL Server can run on this build host, so nothing is started here:
# when SQLEASE_TEST_SQLSERVER_DSN (a DSN name or a full ODBC connection
# string) is set, the command runs with SQLEASE_TEST_DSN set to it and
# SQLEASE_TEST_DIALECT=sqlserver; otherwise the script says it skipped and
# exits 77 (skipped, as ci/matrix.sh reads it).  The server needs SQL
# Server 2016 or later (DATEDIFF_BIG).

set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)

if [ -z "${SQLEASE_TEST_SQLSERVER_DSN:-}" ]; then
    echo "sqlserver.sh: skipped: no SQL Server DSN given (set SQLEASE_TEST_SQLSERVER_DSN)" >&2
    exit 77
fi

export SQLEASE_TEST_DSN=$SQLEASE_TEST_SQLSERVER_DSN
export SQLEASE_TEST_DIALECT=sqlserver
[ $# -gt 0 ] || set -- scons test
# The DSN may carry a password: say only that one was given.
echo "sqlserver.sh: running: $* (SQLEASE_TEST_DSN from SQLEASE_TEST_SQLSERVER_DSN)" >&2
cd "$TOP"
set +e
"$@"
status=$?
set -e
echo "sqlserver.sh: exit status $status" >&2
exit "$status"
