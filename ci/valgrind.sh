#!/usr/bin/env bash
# ci/valgrind.sh -- `sqlease run`, `sqlease supervise` and `sqlease cron`
# under Valgrind's memcheck: no error, no definite or indirect leak.
#
#   bash ci/valgrind.sh
#
# Builds build/bin/sqlease (the normal build: Valgrind and the sanitizers
# do not mix), then in a fresh temporary directory, on an SQLite file:
#
#   run       -- sh -c 'exit 3'    must exit 3
#   run --min-hold 1m -- ./no-such-command
#                                  must exit 127 and leave the row free
#   -v run    -- sh -c 'exit 4'    stderr a pipe: must exit 4, its lines
#                                  coming through the pipe
#   supervise -- sleep 60          held for a few heartbeats (so the
#                                  heartbeat, the watchdog and CMD's guard
#                                  all run), with a metrics file, a
#                                  NOTIFY_SOCKET (nobody listening) and,
#                                  when the build has HTTP support, --http
#                                  with every endpoint asked (the server's
#                                  threads answer under memcheck), then
#                                  SIGTERM: must exit 0 and remove the file
#   cron FILE                      a job every second, with --http when the
#                                  build serves it (every endpoint asked
#                                  at once), SIGTERM after a few fires:
#                                  must exit 0
#
# with --leak-check=full --errors-for-leak-kinds=definite,indirect
# --error-exitcode=99.  Every process Valgrind follows (sqlease, and the
# guard it forks) writes its own log; any error in any of them, or a
# definite/indirect leak in sqlease itself, fails the script, and the logs
# are printed (the guard's leak counts are not the guard's: see below).

set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 2
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
BIN=$TOP/build/bin/sqlease

command -v valgrind >/dev/null 2>&1 || { echo "valgrind.sh: valgrind is not installed" >&2; exit 2; }
scons -Q -j"$JOBS" build/bin/sqlease || exit 2

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sqlease-valgrind-XXXXXX")
SUP_PID=""
# shellcheck disable=SC2317  # called from the EXIT trap
cleanup() {
    if [ -n "$SUP_PID" ] && kill -0 "$SUP_PID" 2>/dev/null; then
        kill -KILL "$SUP_PID" 2>/dev/null
        wait "$SUP_PID" 2>/dev/null
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

DSN="Driver=SQLite3;Database=$WORK/vg.db;Timeout=5000"
TABLE=vg_lease_$$
VG=(valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect
    --error-exitcode=99 --child-silent-after-fork=no --log-file="$WORK/vg.%p.log")
COMMON=(--dsn "$DSN" --table "$TABLE" --ttl 10s --heartbeat 1s --renew-deadline 5s
        --retry 500ms)
failed=0

fail() {
    echo "valgrind.sh: FAIL: $*"
    failed=1
}

"$BIN" "${COMMON[@]}" migrate >"$WORK/migrate.out" 2>&1 || { cat "$WORK/migrate.out"; exit 2; }

echo "==== valgrind: sqlease run -- sh -c 'exit 3'"
"${VG[@]}" "$BIN" "${COMMON[@]}" run -- sh -c 'exit 3' >"$WORK/run.out" 2>&1
rc=$?
[ "$rc" = 3 ] || { cat "$WORK/run.out"; fail "run exited $rc, expected 3 (99: memcheck errors)"; }

echo "==== valgrind: sqlease run --min-hold 1m -- ./no-such-command (released at once)"
"${VG[@]}" "$BIN" "${COMMON[@]}" run --min-hold 1m -- ./no-such-command >"$WORK/noexec.out" 2>&1
rc=$?
[ "$rc" = 127 ] || { cat "$WORK/noexec.out"; fail "run exited $rc, expected 127 (99: memcheck errors)"; }
"$BIN" "${COMMON[@]}" status --json 2>&1 | grep -q '"held":false' ||
    fail "the lease is still held after a CMD that could not be started"

# stderr a pipe: log lines go through a non-blocking description of it
# of their own (src/cli/os/posix/stdio.c), CMD waits at its gate for the
# guard.
echo "==== valgrind: sqlease -v run -- sh -c 'exit 4', stderr a pipe"
"${VG[@]}" "$BIN" "${COMMON[@]}" -v run -- sh -c 'exit 4' 2>&1 | cat >"$WORK/run-pipe.out"
rc=${PIPESTATUS[0]}
[ "$rc" = 4 ] || { cat "$WORK/run-pipe.out"; fail "run (stderr a pipe) exited $rc, expected 4 (99: memcheck errors)"; }
grep -q 'started CMD' "$WORK/run-pipe.out" || { cat "$WORK/run-pipe.out"; fail "run (stderr a pipe) logged nothing through the pipe"; }

# --http when this build serves it (a build without libmicrohttpd says
# so to any value).
HTTP=()
if ! "$BIN" supervise --http x:1 -- true 2>&1 | grep -q 'no HTTP support'; then
    HTTP=(--http 127.0.0.1:0)
fi
# ask PORT: each endpoint, a 404 and a 405, several at once (a thread
# each); prints "METHOD PATH STATUS" of each kind, sorted.
ask() {
    python3 - "${1:-0}" <<'EOF'
import http.client, sys, threading
port, got, lock = int(sys.argv[1]), [], threading.Lock()
def ask(method, path):
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=30)
    try:
        c.request(method, path)
        st = c.getresponse().status
    except (OSError, http.client.HTTPException):
        st = -1
    with lock:
        got.append('%s %s %d' % (method, path, st))
asks = [('GET', p) for p in ('/metrics', '/health', '/leader', '/holder', '/nope')] * 2
asks += [('POST', '/leader'), ('HEAD', '/health')]
threads = [threading.Thread(target=ask, args=a) for a in asks]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(' '.join(sorted(set(got))))
EOF
}
echo "==== valgrind: sqlease supervise ${HTTP[*]} -- sleep 60 (SIGTERM after a few heartbeats)"
NOTIFY_SOCKET="$WORK/notify.sock" "${VG[@]}" "$BIN" "${COMMON[@]}" supervise \
    --metrics-file "$WORK/vg.prom" "${HTTP[@]}" -- sleep 60 >"$WORK/supervise.out" 2>&1 &
SUP_PID=$!
held=0
for _ in $(seq 1 300); do           # up to 30 s: Valgrind is slow to start
    if grep -q 'started CMD' "$WORK/supervise.out" 2>/dev/null; then
        held=1
        break
    fi
    sleep 0.1
done
[ "$held" = 1 ] || fail "supervise did not start CMD within 30 s"
if [ "${#HTTP[@]}" -gt 0 ] && [ "$held" = 1 ]; then
    port=$(grep -o 'and /holder on http://127.0.0.1:[0-9]*' "$WORK/supervise.out" | grep -o '[0-9]*$')
    answers=$(ask "$port")
    want='GET /health 200 GET /holder 200 GET /leader 200 GET /metrics 200 GET /nope 404 HEAD /health 200 POST /leader 405'
    [ "$answers" = "$want" ] || fail "--http answered '$answers', want '$want'"
fi
sleep 4                             # a few renews
grep -q '^sqlease_lease_held{.*} 1$' "$WORK/vg.prom" 2>/dev/null || fail "the metrics file does not say held"
kill -TERM "$SUP_PID"
wait "$SUP_PID"
rc=$?
SUP_PID=""
[ "$rc" = 0 ] || { cat "$WORK/supervise.out"; fail "supervise exited $rc, expected 0 (99: memcheck errors)"; }
[ ! -e "$WORK/vg.prom" ] || fail "the metrics file is still there after supervise exited"

# cron: the scheduler's thread forks each fire's command, the main
# thread reaps it and records its end; the server's threads ask the
# scheduler and read the row.
echo "==== valgrind: sqlease cron ${HTTP[*]} FILE (SIGTERM after a few fires)"
printf 'SQLEASE_JOB=tick\n@every 1s echo fired\n' >"$WORK/jobs.cron"
"$BIN" "${COMMON[@]}" --name crontab migrate >>"$WORK/migrate.out" 2>&1 || { cat "$WORK/migrate.out"; exit 2; }
"${VG[@]}" "$BIN" "${COMMON[@]}" --name crontab cron "${HTTP[@]}" "$WORK/jobs.cron" \
    >"$WORK/cron.out" 2>&1 &
SUP_PID=$!
fired=0
for _ in $(seq 1 300); do           # up to 30 s: Valgrind is slow to start
    if [ "$(grep -c 'job tick: fire .* ended (done' "$WORK/cron.out" 2>/dev/null)" -ge 2 ]; then
        fired=1
        break
    fi
    sleep 0.1
done
[ "$fired" = 1 ] || fail "cron did not run two fires within 30 s"
if [ "${#HTTP[@]}" -gt 0 ] && [ "$fired" = 1 ]; then
    port=$(grep -o 'and /holder on http://127.0.0.1:[0-9]*' "$WORK/cron.out" | grep -o '[0-9]*$')
    answers=$(ask "$port")
    want='GET /health 200 GET /holder 200 GET /leader 200 GET /metrics 200 GET /nope 404 HEAD /health 200 POST /leader 405'
    [ "$answers" = "$want" ] || fail "cron --http answered '$answers', want '$want'"
fi
kill -TERM "$SUP_PID"
wait "$SUP_PID"
rc=$?
SUP_PID=""
[ "$rc" = 0 ] || { cat "$WORK/cron.out"; fail "cron exited $rc, expected 0 (99: memcheck errors)"; }

# Every log, including the forked guard's.  A process Valgrind started
# must show no error and no lost byte.  A child forked without exec (the
# guard) is checked for errors only: it inherits the parent's heap, but
# not the parent's other threads, so what only those threads pointed to
# (the runner's round, say) shows as "definitely lost" in the child
# although nothing leaked.  Its log names its parent ("Parent PID"), and
# the parent is one of ours.
ERRORS='Invalid (read|write|free)|uninitialised|Mismatched free|Syscall param|Source and destination overlap'
pids=" "
forked=0
for log in "$WORK"/vg.*.log; do
    [ -f "$log" ] || continue
    p=${log##*/vg.}
    pids="$pids${p%.log} "
done
for log in "$WORK"/vg.*.log; do
    [ -f "$log" ] || continue
    parent=$(sed -n 's/^==[0-9]*== Parent PID: \([0-9]*\).*/\1/p' "$log" | head -n 1)
    case $pids in
    *" $parent "*) pattern=$ERRORS; forked=$((forked + 1)) ;;
    *) pattern="ERROR SUMMARY: [1-9]|definitely lost: [1-9]|indirectly lost: [1-9]|$ERRORS" ;;
    esac
    if grep -qE "$pattern" "$log"; then
        echo "---- $log"
        cat "$log"
        fail "memcheck reported errors or leaks (above)"
    fi
done
n=$(find "$WORK" -name 'vg.*.log' | wc -l)
if [ "$failed" = 0 ]; then
    echo "valgrind: run, supervise and cron clean ($n process logs checked, $forked of them forked children)"
else
    echo "valgrind: FAILED"
fi
exit "$failed"
