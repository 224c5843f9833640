#!/usr/bin/env python3
"""bench/rolling.py -- rolling restarts of a fleet of `sqlease supervise`:
the leaderless gap each one leaves, with and without --handoff, and how
fast `sqlease transfer` moves the lease.

    bench/rolling.py [--bin build/bin/sqlease] [--dsn DSN] [--hosts 3]
                     [--restarts 50] [--timing default|fast] [--modes handoff,plain]
                     [--transfers 10] [--dead 5] [--seed N]

A fleet of --hosts instances of `supervise` (owner ids host-0, host-1,
...) on one lease.  A rolling restart sends SIGTERM to the holder, waits
for it to exit and for another instance to start its CMD, and starts the
stopped one again (the same owner id, as a host restarted by its service
manager), then waits until it is ready (with --handoff: its ready row is
listed by `status --json`; without: a retry), and a random part of a
retry more, so that no SIGTERM falls at a fixed point of the followers'
polls, before the next one.  Every CMD is a shell that takes an
exclusive flock(1) on one file of the run and writes "start TOKEN OWNER
NS" to the run's log once it holds it, and "stop TOKEN OWNER NS" when
SIGTERM ends it, before it lets the lock go (NS: the wall clock in ns,
read by the CMD); one that cannot take the lock at once writes
"overlap": two CMDs would have run at once.  The gap of a
restart is the new CMD's start minus the old CMD's stop, from those
lines: the time no CMD runs.

Each mode (handoff: every instance is `supervise --handoff`; plain:
without) runs --restarts restarts on a table of its own and prints the
gap's p50, p99 and max (nearest rank: with 50 restarts p99 is the
max).  Then, with
--handoff, --transfers times `sqlease transfer --to` the next host (the
time transfer reports, and the CMD gap), and --dead times `transfer --to`
a host that is not there (how long until a live instance's CMD starts).

Timing: default (ttl 30 s: heartbeat 10 s, retry 2 s, as a fleet left to
the defaults), or fast (ttl 3 s, heartbeat 500 ms, renew deadline
1500 ms, retry 250 ms, as ci/fleet.py and the fault run).

The database: --dsn, else $SQLEASE_TEST_DSN (ci/postgres.sh,
ci/mariadb.sh set it), else an SQLite file in the run's directory.
Checks (exit 1 when one fails): no overlap line and every CMD's start
after the previous one's stop (printed as "never two CMDs at once" when
it holds), tokens strictly increase, every restart had a successor
within its bound (a retry, the reservation and a second on a loaded
machine), no error line in any instance's log.  Everything started is stopped by pid on every exit path.
"""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TIMINGS = {
    'default': {'ttl': 30000, 'heartbeat': 10000, 'renew_deadline': 20000, 'retry': 2000},
    'fast': {'ttl': 3000, 'heartbeat': 500, 'renew_deadline': 1500, 'retry': 250},
}

CMD = ('exec 9>>"$ROLL_LOCK"; '
       'if flock -n 9; then '
       'echo "start $SQLEASE_TOKEN $SQLEASE_OWNER $(date +%s%N)" >>"$ROLL_LOG"; '
       'trap \'echo "stop $SQLEASE_TOKEN $SQLEASE_OWNER $(date +%s%N)" >>"$ROLL_LOG"; '
       'exit 0\' TERM; '
       'sleep 3600 & wait $!; '
       'else echo "overlap $SQLEASE_TOKEN $SQLEASE_OWNER $(date +%s%N)" >>"$ROLL_LOG"; '
       'exit 1; fi')


def pct(values, p):
    """The p-th percentile by nearest rank."""
    v = sorted(values)
    if not v:
        return float('nan')
    k = max(1, -(-len(v) * p // 100))
    return v[int(k) - 1]


class Run:
    """One mode's table, instances, lock and log."""

    def __init__(self, a, mode, dsn, tmp):
        self.a = a
        self.mode = mode
        self.dsn = dsn
        self.table = 'sqlease_roll_%d_%s' % (os.getpid(), mode)
        self.dir = tempfile.mkdtemp(prefix='roll-%s-' % mode, dir=tmp)
        self.lock = os.path.join(self.dir, 'cmd.lock')
        self.log = os.path.join(self.dir, 'cmd.log')
        open(self.log, 'w').close()
        t = TIMINGS[a.timing]
        self.t = t
        self.timing = ['--ttl', '%dms' % t['ttl'], '--heartbeat', '%dms' % t['heartbeat'],
                       '--renew-deadline', '%dms' % t['renew_deadline'],
                       '--retry', '%dms' % t['retry']]
        self.procs = {}
        self.rng = random.Random(a.seed)
        self.logs = []
        self.failed = []

    def sqlease(self, *args, timeout=120):
        p = subprocess.run([self.a.bin, '--dsn', self.dsn, '--table', self.table] + list(args),
                           capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def start(self, owner):
        path = os.path.join(self.dir, '%s.%d.log' % (owner, len(self.logs)))
        self.logs.append(path)
        f = open(path, 'w')
        env = dict(os.environ, ROLL_LOCK=self.lock, ROLL_LOG=self.log)
        flags = ['--handoff'] if self.mode == 'handoff' else []
        self.procs[owner] = subprocess.Popen(
            [self.a.bin] + (['-v'] if self.a.verbose else []) +
            ['--dsn', self.dsn, '--table', self.table, '--owner', owner]
            + self.timing + ['supervise'] + flags + ['--', 'sh', '-c', CMD],
            stdout=f, stderr=subprocess.STDOUT, env=env)
        f.close()

    def lines(self):
        out = []
        with open(self.log) as f:
            for line in f:
                p = line.split()
                if len(p) == 4 and p[0] in ('start', 'stop', 'overlap'):
                    out.append((p[0], int(p[1]), p[2], int(p[3])))
        return out

    def starts(self):
        return [x for x in self.lines() if x[0] == 'start']

    def await_starts(self, n, timeout_s):
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            s = self.starts()
            if len(s) >= n:
                return s
            time.sleep(0.01)
        return None

    def ready(self):
        """The owners status lists as ready followers (the holder's own
        row left out)."""
        rc, out, _ = self.sqlease('status', '--json')
        if rc != 0:
            return set()
        try:
            return {r['owner'] for r in json.loads(out).get('ready', [])}
        except ValueError:
            return set()

    def settle(self, owner, holder):
        """Wait until a restarted instance is ready to take over."""
        if self.mode == 'handoff':
            end = time.monotonic() + 30
            while time.monotonic() < end and owner not in self.ready():
                time.sleep(0.05)
        # Its first poll, and a little: a deployment waits for readiness.
        # Then a random part of a retry, so that the next SIGTERM falls at
        # no fixed point of the followers' polls (which a fixed wait after
        # a start would line up with).
        time.sleep(2 * self.t['retry'] / 1000.0 + 0.2 +
                   self.rng.uniform(0, self.t['retry'] / 1000.0))

    def wait_ms(self):
        """How long a transfer may take: the holder answers at its next
        renew (within a heartbeat), a dead target's reservation runs out
        (3 retries, the default), a follower reads the row (a retry), and
        a margin for a loaded machine."""
        t = self.t
        return t['heartbeat'] + 4 * t['retry'] + 5000

    def check(self, ok, what):
        if not ok:
            self.failed.append(what)
            print('rolling %s: FAILED: %s' % (self.mode, what), flush=True)
        return ok

    def stop_all(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs.values():
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def error_lines(self):
        out = []
        for path in self.logs:
            with open(path, errors='replace') as f:
                out += [line.rstrip() for line in f if 'sqlease: error:' in line]
        return out


def restarts(r):
    """--restarts rolling restarts: the gaps, ms."""
    gaps = []
    bound_ms = r.t['retry'] + (3 * r.t['retry'] if r.mode == 'handoff' else 0) + 1000
    for i in range(r.a.restarts):
        s = r.starts()
        cur = s[-1]
        owner = cur[2]
        p = r.procs[owner]
        p.send_signal(signal.SIGTERM)
        nxt = r.await_starts(len(s) + 1, 60)
        try:
            rc = p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
        r.check(rc == 0, 'restart %d: supervise of %s exited %s' % (i + 1, owner, rc))
        if not r.check(nxt is not None, 'restart %d: a successor of %s' % (i + 1, owner)):
            break
        new = nxt[len(s)]
        stop = [x for x in r.lines() if x[0] == 'stop' and x[1] == cur[1]]
        if not r.check(len(stop) == 1, 'restart %d: the stop line of token %d' % (i + 1, cur[1])):
            break
        gap = (new[3] - stop[0][3]) / 1e6
        gaps.append(gap)
        r.check(gap <= bound_ms, 'restart %d: gap %.1f ms, bound %d ms' % (i + 1, gap, bound_ms))
        r.start(owner)
        r.settle(owner, new[2])
    return gaps


def transfers(r, n):
    """n transfers --to the next ready host: what transfer reports, and
    the CMD gap, ms."""
    took, gaps = [], []
    for i in range(n):
        s = r.starts()
        holder = s[-1][2]
        ready = sorted(r.ready())
        if not r.check(ready, 'transfer %d: a ready follower' % (i + 1)):
            break
        to = ready[i % len(ready)]
        t0 = time.monotonic()
        rc, out, err = r.sqlease('transfer', '--to', to, '--timeout', '%dms' % r.wait_ms())
        t1 = time.monotonic()
        if not r.check(rc == 0, 'transfer %d --to %s: exit %d (%s)' % (i + 1, to, rc,
                                                                       err.strip())):
            continue
        took.append((t1 - t0) * 1000.0)
        nxt = r.await_starts(len(s) + 1, 10)
        stop = [x for x in r.lines() if x[0] == 'stop' and x[1] == s[-1][1]]
        if nxt is not None and stop:
            gaps.append((nxt[len(s)][3] - stop[0][3]) / 1e6)
        r.check(nxt is not None and nxt[len(s)][2] == to,
                'transfer %d: %s -> %s' % (i + 1, holder, to))
        time.sleep(r.t['retry'] / 1000.0)
    return took, gaps


def dead(r, n):
    """n transfers --to a host that is not there: ms from the request to
    a live instance's CMD start."""
    out = []
    for i in range(n):
        s = r.starts()
        t0 = time.time_ns()
        rc, _, err = r.sqlease('transfer', '--to', 'host-gone', '--timeout',
                               '%dms' % r.wait_ms())
        nxt = r.await_starts(len(s) + 1, r.wait_ms() / 1000.0)
        if r.check(nxt is not None, 'dead target %d: held again' % (i + 1)):
            out.append((nxt[len(s)][3] - t0) / 1e6)
        r.check(rc == 75, 'dead target %d: transfer exits 75 (%d: %s)' % (i + 1, rc, err.strip()))
        time.sleep(r.t['retry'] / 1000.0 + 0.3)
    return out


def summary(name, v):
    if not v:
        return '%s: none' % name
    return '%s: n=%d p50 %.0f ms, p99 %.0f ms, max %.0f ms (min %.0f)' % (
        name, len(v), pct(v, 50), pct(v, 99), max(v), min(v))


def run_mode(a, mode, dsn, tmp):
    r = Run(a, mode, dsn, tmp)
    res = {}
    try:
        rc, _, err = r.sqlease('migrate')
        if not r.check(rc == 0, 'migrate: %s' % err.strip()):
            return r, res
        for h in range(a.hosts):
            r.start('host-%d' % h)
            if h == 0 and not r.check(r.await_starts(1, 60) is not None, 'a first holder'):
                return r, res
        for h in range(a.hosts):
            r.settle('host-%d' % h, None)
        res['gaps'] = restarts(r)
        if mode == 'handoff' and a.transfers > 0:
            res['transfer_ms'], res['transfer_gaps'] = transfers(r, a.transfers)
        if mode == 'handoff' and a.dead > 0:
            res['dead_ms'] = dead(r, a.dead)
    finally:
        r.stop_all()
    lines = r.lines()
    overlaps = [x for x in lines if x[0] == 'overlap']
    r.check(not overlaps, 'no CMD started while another ran')
    toks = [x[1] for x in lines if x[0] == 'start']
    r.check(all(b > a for a, b in zip(toks, toks[1:])),
            'tokens strictly increase over %d holds' % len(toks))
    # The same from the CMDs' own clocks: each hold's start comes after
    # the stop of the hold before it (the lock says so too; this would
    # catch a CMD that ran without it).
    stops = {x[1]: x[3] for x in lines if x[0] == 'stop'}
    starts = [(x[1], x[3]) for x in lines if x[0] == 'start']
    early = [(b[0], (stops[a[0]] - b[1]) / 1e6) for a, b in zip(starts, starts[1:])
             if a[0] in stops and b[1] < stops[a[0]]]
    for tok, ms in early[:5]:
        print('  token %d started %.1f ms before the previous hold stopped' % (tok, ms))
    unstopped = [a[0] for a in starts[:-1] if a[0] not in stops]
    if r.check(not early and not unstopped and not overlaps,
               'never two CMDs at once (%d overlap lines, %d starts before the previous '
               'stop, %d holds without a stop line)' % (len(overlaps), len(early),
                                                        len(unstopped))):
        print('rolling %s: never two CMDs at once: %d holds, each started after the previous '
              'one stopped, no overlap line' % (r.mode, len(starts)), flush=True)
    errs = r.error_lines()
    for e in errs[:10]:
        print('  ' + e)
    r.check(not errs, 'no error line in any instance\'s log (%d)' % len(errs))
    return r, res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--bin', default=os.path.join(ROOT, 'build', 'bin', 'sqlease'))
    ap.add_argument('--dsn', default=None)
    ap.add_argument('--hosts', type=int, default=3)
    ap.add_argument('--restarts', type=int, default=50)
    ap.add_argument('--timing', choices=sorted(TIMINGS), default='default')
    ap.add_argument('--modes', default='handoff,plain')
    ap.add_argument('--transfers', type=int, default=10)
    ap.add_argument('--dead', type=int, default=5)
    ap.add_argument('--seed', type=int, default=1, help='of the random waits between restarts')
    ap.add_argument('--keep', action='store_true', help='keep the run\'s directory (logs)')
    ap.add_argument('--verbose', action='store_true', help='the instances log at debug level')
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    tmp = tempfile.mkdtemp(prefix='sqlease-rolling-')
    dsn = a.dsn or os.environ.get('SQLEASE_TEST_DSN') or \
        'Driver=SQLite3;Database=%s' % os.path.join(tmp, 'rolling.db')
    failed = 0

    def on_signal(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)
    try:
        for mode in a.modes.split(','):
            t0 = time.monotonic()
            r, res = run_mode(a, mode, dsn, tmp)
            failed += len(r.failed)
            print('rolling %s (%s timing, %d hosts, %s): %s' % (
                mode, a.timing, a.hosts, dsn.split(';')[0], summary('gap', res.get('gaps'))),
                flush=True)
            if 'transfer_ms' in res:
                print('rolling %s: transfer --to a ready host, %s; its %s' % (
                    mode, summary('until moved', res['transfer_ms']),
                    summary('CMD gap', res['transfer_gaps'])), flush=True)
            if 'dead_ms' in res:
                print('rolling %s: transfer --to a host that is gone, %s' % (
                    mode, summary('request to a live CMD start', res['dead_ms'])), flush=True)
            print('rolling %s: %.0f s, %d checks failed' % (mode, time.monotonic() - t0,
                                                            len(r.failed)), flush=True)
    except KeyboardInterrupt:
        print('rolling: interrupted')
        return 130
    finally:
        if a.keep:
            print('rolling: logs kept in %s' % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
