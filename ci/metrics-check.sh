#!/usr/bin/env bash
# ci/metrics-check.sh -- Prometheus' own linter on sqlease's metrics: what
# `supervise --http` answers on /metrics (a holder and a follower), what
# `status --watch --http` answers there, what `cron --http` answers there
# (a holder whose job has fired, and a standby), and the file
# `--metrics-file` writes, each through `promtool check metrics` (HELP and
# TYPE lines, metric names, units, counters ending in _total).  Also
# checks that each one's content type is the text format's, that /metrics
# and the file say the same metrics, and that cron's has the lease's
# metrics as supervise's has them and the scheduler's besides.
#
#   bash ci/metrics-check.sh
#
# Builds build/bin/sqlease (HTTP=yes: the check needs --http), then runs
# it in a temporary directory on an SQLite file.  A few seconds.  Needs
# promtool (Debian: prometheus) and libmicrohttpd-dev, both in
# ci/packages-full.txt.  Prints one PASS or FAIL line per check, leaves
# the counts in $SQLEASE_RESULT_DIR (ci/results.sh), exits non-zero if any
# failed, and kills what it started by pid.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
# shellcheck source=ci/results.sh
. ci/results.sh

JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
BIN=$PWD/build/bin/sqlease
passed=0
failed=0
pids=()
work=

pass() {
    echo "PASS $*"
    passed=$((passed + 1))
}

fail() {
    echo "FAIL $*"
    failed=$((failed + 1))
}

finish() {
    echo "metrics check: $passed passed, $failed failed"
    results_write metrics-check "$passed" "$failed"
    [ "$failed" -eq 0 ]
    exit
}

# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
    local p
    for p in "${pids[@]}"; do
        kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    [ -n "$work" ] && rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if ! command -v promtool >/dev/null 2>&1; then
    fail "promtool is not installed (Debian: prometheus; bash ci/install-deps.sh --full)"
    finish
fi
if ! scons -Q -j"$JOBS" HTTP=yes build/bin/sqlease; then
    fail "build with HTTP=yes (libmicrohttpd-dev installed?)"
    finish
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlease-metrics-XXXXXX")
cd "$work" || exit 2
common=(--dsn "Driver=SQLite3;Database=$work/m.db" --name job --ttl 3s --heartbeat 500ms
        --renew-deadline 1500ms --retry 250ms)
"$BIN" "${common[@]}" migrate >/dev/null || { fail "migrate"; finish; }

# start NAME ARGS...: sqlease in the background, its stderr in NAME.err.
start() {
    local name=$1
    shift
    "$BIN" "${common[@]}" "$@" >"$name.out" 2>"$name.err" &
    pids+=("$!")
}

# port NAME: the port NAME's log says it serves on (waits up to 15 s).
port() {
    local p
    for _ in $(seq 300); do
        p=$(grep -o 'and /holder on http://127.0.0.1:[0-9]*' "$1.err" 2>/dev/null | grep -o '[0-9]*$')
        [ -n "$p" ] && { echo "$p"; return 0; }
        sleep 0.05
    done
    return 1
}

# get PORT PATH OUT: the body of GET PATH into OUT, its status and
# content type on stdout ("200 text/plain; ...").  Python's http.client,
# so that no proxy from the environment comes in between.
get() {
    python3 - "$@" <<'EOF'
import http.client, sys
port, path, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
c = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
c.request('GET', path)
r = c.getresponse()
with open(out, 'wb') as f:
    f.write(r.read())
print(r.status, r.getheader('Content-Type'))
EOF
}

# check WHAT FILE: promtool on FILE.
check() {
    local out
    if out=$(promtool check metrics <"$2" 2>&1); then
        pass "promtool check metrics: $1"
    else
        fail "promtool check metrics: $1"
        printf '    %s\n' "$out"
        sed -e 's/^/    | /' "$2"
    fi
}

start holder --owner holder supervise --http 127.0.0.1:0 --metrics-file "$work/holder.prom" \
    -- sleep 60
hp=$(port holder) || { fail "the holder names its port"; cat holder.err; finish; }
for _ in $(seq 300); do
    grep -q 'started CMD' holder.err && break
    sleep 0.05
done
start follower --owner follower supervise --http 127.0.0.1:0 -- sleep 60
fp=$(port follower) || { fail "the follower names its port"; cat follower.err; finish; }
start watch -v status --watch --http 127.0.0.1:0
wp=$(port watch) || { fail "the watch names its port"; cat watch.err; finish; }
# cron on a lease of its own: a job every second, so that its counters
# have counted something when they are read.
printf 'SQLEASE_JOB=tick\n@every 1s true\n' >jobs.cron
"$BIN" "${common[@]}" --name crontab migrate >/dev/null || { fail "migrate crontab"; finish; }
start cron --name crontab --owner cron cron --http 127.0.0.1:0 jobs.cron
cp=$(port cron) || { fail "cron names its port"; cat cron.err; finish; }
start cronstandby --name crontab --owner cronstandby cron --http 127.0.0.1:0 jobs.cron
sp=$(port cronstandby) || { fail "the standby cron names its port"; cat cronstandby.err; finish; }
for _ in $(seq 300); do
    grep -q 'job tick: fire .* ended' cron.err && break
    sleep 0.05
done
sleep 1

want='200 text/plain; version=0.0.4; charset=utf-8'
for who in holder:$hp follower:$fp watch:$wp cron:$cp cronstandby:$sp; do
    name=${who%%:*}
    got=$(get "${who##*:}" /metrics "$name.metrics")
    if [ "$got" = "$want" ]; then
        pass "$name: GET /metrics answers $want"
    else
        fail "$name: GET /metrics answers '$got', want '$want'"
    fi
    check "$name's /metrics" "$name.metrics"
done
check "--metrics-file" holder.prom
# has FILE LINE WHAT: FILE has the line LINE.
has() {
    if grep -qxF "$2" "$1"; then
        pass "$3"
    else
        fail "$3: no line '$2' in $1"
    fi
}
has holder.metrics 'sqlease_lease_held{name="job",owner="holder"} 1' "the holder's /metrics: held"
has follower.metrics 'sqlease_lease_held{name="job",owner="follower"} 0' \
    "the follower's /metrics: not held"
has watch.metrics 'sqlease_row_held{name="job"} 1' "the watch's /metrics: the row held"
has cron.metrics 'sqlease_lease_held{name="crontab",owner="cron"} 1' "cron's /metrics: held"
has cronstandby.metrics 'sqlease_lease_held{name="crontab",owner="cronstandby"} 0' \
    "the standby cron's /metrics: not held"
has cronstandby.metrics 'sqlease_fires_claimed_total{name="crontab",owner="cronstandby"} 0' \
    "the standby cron's /metrics: no fire claimed"
claimed=$(sed -n 's/^sqlease_fires_claimed_total{name="crontab",owner="cron"} \([0-9]*\)$/\1/p' \
    cron.metrics)
if [ "${claimed:-0}" -ge 1 ]; then
    pass "cron's /metrics: $claimed fire(s) claimed"
else
    fail "cron's /metrics: no fire claimed ('${claimed}')"
fi
if diff <(grep '^# ' holder.metrics) <(grep '^# ' cron.metrics | head -n "$(grep -c '^# ' holder.metrics)") \
    >/dev/null; then
    pass "cron's /metrics begins with the lease's metrics, as supervise's"
else
    fail "cron's /metrics does not begin with supervise's metrics"
fi
if diff <(grep '^# ' holder.metrics) <(grep '^# ' holder.prom) >/dev/null; then
    pass "/metrics and --metrics-file have the same metrics (HELP and TYPE lines)"
else
    fail "/metrics and --metrics-file differ in their HELP and TYPE lines"
    diff <(grep '^# ' holder.metrics) <(grep '^# ' holder.prom) | sed -e 's/^/    /'
fi
finish
