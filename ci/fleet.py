#!/usr/bin/env python3
"""ci/fleet.py -- a fleet of `sqlease supervise` on this host, its holder
killed again and again, checked for one holder at a time.

    fleet.py pooler  --bin B --dsn POOLED --direct-dsn DIRECT [--instances 3]
                     [--kills 2] [--label L]
    fleet.py upgrade --old-bin OLD --new-bin NEW --dsn DSN [--kills 4] [--label L]
    fleet.py clockstep --bin B --dsn DSN --clock-file F [--steps 4] [--step-s 30]
                       [--back-steps 2]
                     [--label L]

pooler: every instance reaches the database through DSN POOLED (PgBouncer
in transaction or statement pooling, ci/pgbouncer.sh); the holder is
killed (SIGKILL) --kills times and stopped once with SIGTERM, the killed
instance started again each time.  Not one line an instance logs may be
an error: a renew or a poll that failed is a statement the pooler broke.

upgrade: a rolling upgrade from OLD (the previous release, built by
ci/upgrade.sh) to NEW on one table: OLD migrates it and holds it with two
instances; NEW's migrate runs under that live hold, which must go on
unchanged (same holder, same token, its CMD never stopped); then two NEW
instances join, and the lease is handed from one version to the other and
back, --kills times by SIGKILL of the holder and twice by SIGTERM (the
other waiters of the holder's version are stopped first, so that the
successor is of the other version).

clockstep: two instances on a PostgreSQL server whose clock follows the
file F (libfaketime: ci/postgres.sh with SQLEASE_PG_FAKETIME=1); while
one holds and the other waits, the server's clock steps forward by
--step-s seconds, --steps times, each step expiring the live hold at
once; then back by --step-s, --back-steps times under the live hold (it
goes on), and each time again right after a SIGKILL of the holder.  The holder's next renew fails and stops its CMD; the waiting one
takes only after it has watched the row unchanged for a ttl, so the two
CMDs never overlap.  Checked: after each step someone holds again within
ttl + 2 x retry + heartbeat + 1 s, and after each kill and step back
within ttl + 2 x retry + 1 s of the kill; the usual checks but the error lines
(a lost hold is logged as one).

Every instance's CMD is a shell that takes an exclusive flock(1) on one
file of this run and then writes "start TOKEN OWNER NS" to the run's log
(NS: the wall clock in ns, read after the lock) and sleeps while holding
it; the kernel releases the lock the moment the process dies.  A CMD that
cannot take the lock at once writes "overlap ..." instead: two CMDs would
have run at the same time.  Checks: no overlap line; the tokens of the
start lines strictly increase; after each SIGKILL a successor starts
within ttl + retry + 1 s of it, after each SIGTERM within retry + 1 s
(the 1 s is for a loaded 2-core machine); no error line in any
instance's log.

Timing: --ttl 3s --heartbeat 500ms --renew-deadline 1500ms --retry 250ms.
Everything started is stopped (by pid) on every exit path, and the lease
table (sqlease_fleet_<pid>) is left on the server for the server script
to remove with the server.  Results: one result file (ci/results.sh) with
the checks passed and failed, when SQLEASE_RESULT_DIR is set.  Exit status
0 only when every check passed.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

TTL_MS, HEARTBEAT_MS, RENEW_DEADLINE_MS, RETRY_MS = 3000, 500, 1500, 250
SLACK_MS = 1000
TIMING = ['--ttl', '%dms' % TTL_MS, '--heartbeat', '%dms' % HEARTBEAT_MS,
          '--renew-deadline', '%dms' % RENEW_DEADLINE_MS, '--retry', '%dms' % RETRY_MS]
KILL_BOUND_MS = TTL_MS + RETRY_MS + SLACK_MS
TERM_BOUND_MS = RETRY_MS + SLACK_MS

# What a pooler in the way looks like in an error line: psqlODBC's named
# statements missing or doubled on a server connection (26000, 42P05), a
# protocol the pooler refused (08P01), and PgBouncer's own refusals.
POOLER_ERROR = re.compile(
    r'26000|42P05|08P01|prepared statement|pgbouncer|pooler|pooling mode|'
    r'server conn crashed|query_wait_timeout|no more connections|unsupported startup parameter',
    re.IGNORECASE)
ERROR_LINE = re.compile(r'sqlease: error:|\berror: ')


class Checks:
    """Each check is one passed or failed test, as the CI counts them."""

    def __init__(self, label):
        self.label = label
        self.passed = 0
        self.failed = 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
            print('fleet %s: ok: %s' % (self.label, what), flush=True)
        else:
            self.failed += 1
            print('fleet %s: FAILED: %s' % (self.label, what), flush=True)
        return ok

    def report(self):
        d = os.environ.get('SQLEASE_RESULT_DIR')
        if d:
            name = 'fleet-%s' % re.sub(r'[^A-Za-z0-9_-]', '_', self.label)
            fd, tmp = tempfile.mkstemp(prefix='.%s.' % name, dir=d)
            with os.fdopen(fd, 'w') as f:
                f.write('%d %d\n' % (self.passed, self.failed))
            os.replace(tmp, os.path.join(d, '%s.%d.result' % (name, os.getpid())))
        print('fleet %s: %d passed, %d failed' % (self.label, self.passed, self.failed),
              flush=True)


class Fleet:
    """The run's directory, lock, CMD log, table and instances."""

    def __init__(self, label):
        self.label = label
        self.dir = tempfile.mkdtemp(prefix='sqlease-fleet-')
        self.lock = os.path.join(self.dir, 'cmd.lock')
        self.log = os.path.join(self.dir, 'cmd.log')
        self.table = 'sqlease_fleet_%d' % os.getpid()
        self.instances = []
        self.seq = 0
        open(self.log, 'w').close()
        self.cmd = ('exec 9>>"$FLEET_LOCK"; '
                    'if flock -n 9; then '
                    'echo "start $SQLEASE_TOKEN $SQLEASE_OWNER $(date +%s%N)" >>"$FLEET_LOG"; '
                    'exec sleep 3600; '
                    'else echo "overlap $SQLEASE_TOKEN $SQLEASE_OWNER $(date +%s%N)" '
                    '>>"$FLEET_LOG"; exit 1; fi')

    def sqlease(self, binary, dsn, *args, timeout=60):
        """Run one sqlease command to its end: (status, stdout, stderr)."""
        p = subprocess.run([binary, '--dsn', dsn, '--table', self.table] + list(args),
                           capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def start(self, version, binary, dsn):
        """A supervise instance; its log is kept for the error count."""
        self.seq += 1
        owner = '%s-%s-%d' % (self.label, version, self.seq)
        log = open(os.path.join(self.dir, '%s.log' % owner), 'w')
        env = dict(os.environ, FLEET_LOCK=self.lock, FLEET_LOG=self.log)
        proc = subprocess.Popen(
            [binary, '--dsn', dsn, '--table', self.table, '--owner', owner] + TIMING +
            ['supervise', '--', 'sh', '-c', self.cmd],
            stdout=log, stderr=subprocess.STDOUT, env=env)
        log.close()
        inst = {'owner': owner, 'version': version, 'binary': binary, 'dsn': dsn,
                'proc': proc, 'log': os.path.join(self.dir, '%s.log' % owner)}
        self.instances.append(inst)
        return inst

    def live(self, version=None):
        return [i for i in self.instances
                if i['proc'].poll() is None and (version is None or i['version'] == version)]

    def starts(self):
        """The CMD log's lines: (kind, token, owner, ns)."""
        out = []
        with open(self.log) as f:
            for line in f:
                p = line.split()
                if len(p) == 4 and p[0] in ('start', 'overlap'):
                    out.append((p[0], int(p[1]), p[2], int(p[3])))
        return out

    def await_start(self, after, timeout_ms):
        """The first start line after the first `after` lines, or None."""
        end = time.monotonic() + timeout_ms / 1000.0
        while time.monotonic() < end:
            s = self.starts()
            if len(s) > after:
                return s[after]
            time.sleep(0.02)
        return None

    def holder(self, start):
        for i in self.instances:
            if i['owner'] == start[2]:
                return i
        return None

    def stop(self, inst, sig=signal.SIGTERM, timeout=20):
        if inst['proc'].poll() is None:
            inst['proc'].send_signal(sig)
            try:
                inst['proc'].wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                inst['proc'].kill()
                inst['proc'].wait()

    def stop_all(self):
        for i in self.instances:
            if i['proc'].poll() is None:
                i['proc'].send_signal(signal.SIGTERM)
        for i in self.instances:
            try:
                i['proc'].wait(timeout=20)
            except subprocess.TimeoutExpired:
                i['proc'].kill()
                i['proc'].wait()

    def error_lines(self):
        """(instance owner, line) of every error line in the logs."""
        out = []
        for i in self.instances:
            with open(i['log'], errors='replace') as f:
                for line in f:
                    if ERROR_LINE.search(line):
                        out.append((i['owner'], line.rstrip()))
        return out

    def lock_held(self):
        """Whether some CMD holds the lock now (a non-blocking try)."""
        r = subprocess.run(['flock', '-n', self.lock, 'true'])
        return r.returncode != 0

    def cleanup(self):
        self.stop_all()
        for i in self.instances:
            try:
                os.unlink(i['log'])
            except OSError:
                pass
        for f in (self.lock, self.log):
            try:
                os.unlink(f)
            except OSError:
                pass
        try:
            os.rmdir(self.dir)
        except OSError:
            pass


def handover(fleet, checks, sig, restart, force_other):
    """Stop the holder with sig (the waiters of its version first, with
    force_other), wait for the successor, check its bound, and start
    again whatever was stopped.  Returns the successor's start line."""
    before = fleet.starts()
    cur = [s for s in before if s[0] == 'start'][-1]
    h = fleet.holder(cur)
    if not checks.check(h is not None and h['proc'].poll() is None,
                        'the holder %s is a live instance' % cur[2]):
        return None
    stopped = []
    if force_other:
        for w in fleet.live(h['version']):
            if w is not h:
                fleet.stop(w)
                stopped.append(w)
    t_stop = time.time_ns()
    fleet.stop(h, sig)
    bound = KILL_BOUND_MS if sig == signal.SIGKILL else TERM_BOUND_MS
    nxt = fleet.await_start(len(before), bound + 5000)
    how = 'SIGKILL' if sig == signal.SIGKILL else 'SIGTERM'
    if checks.check(nxt is not None, 'a successor after %s of %s (%s)' % (how, cur[2], h['version'])):
        gap = (nxt[3] - t_stop) / 1e6
        checks.check(gap <= bound, 'successor %s (token %d) %.0f ms after the %s, bound %d ms'
                     % (nxt[2], nxt[1], gap, how, bound))
        checks.check(nxt[1] > cur[1], 'token %d > %d' % (nxt[1], cur[1]))
        succ = fleet.holder(nxt)
        if force_other and succ is not None:
            checks.check(succ['version'] != h['version'],
                         'the successor is of the other version (%s -> %s)'
                         % (h['version'], succ['version']))
    for w in [h] + stopped:
        if restart:
            fleet.start(w['version'], w['binary'], w['dsn'])
    return nxt


def final_checks(fleet, checks, pooled, errors_ok=False):
    fleet.stop_all()
    lines = fleet.starts()
    overlaps = [s for s in lines if s[0] == 'overlap']
    checks.check(not overlaps, 'no CMD started while another ran (%d overlap lines)'
                 % len(overlaps))
    toks = [s[1] for s in lines if s[0] == 'start']
    checks.check(all(b > a for a, b in zip(toks, toks[1:])),
                 'tokens strictly increase over %d holds: %s' % (len(toks), toks))
    errs = fleet.error_lines()
    for owner, line in errs[:20]:
        print('  %s: %s' % (owner, line))
    if pooled:
        pooler = [e for e in errs if POOLER_ERROR.search(e[1])]
        checks.check(not pooler, 'no error line is the pooler\'s doing (%d)' % len(pooler))
    if not errors_ok:
        checks.check(not errs, 'no error line in any instance\'s log (%d)' % len(errs))


def cmd_pooler(a):
    checks = Checks(a.label)
    fleet = Fleet(a.label)
    try:
        rc, _, err = fleet.sqlease(a.bin, a.direct_dsn, 'migrate')
        if not checks.check(rc == 0, 'migrate on the direct connection (%s)' % err.strip()):
            return checks
        for _ in range(a.instances):
            fleet.start('v', a.bin, a.dsn)
        first = fleet.await_start(0, KILL_BOUND_MS + 5000)
        if not checks.check(first is not None and first[0] == 'start',
                            'a first holder through the pooler'):
            return checks
        for _ in range(a.kills):
            if handover(fleet, checks, signal.SIGKILL, True, False) is None:
                break
        handover(fleet, checks, signal.SIGTERM, True, False)
        # Let the new holder renew for a while through the pooler.
        time.sleep(4 * HEARTBEAT_MS / 1000.0)
        final_checks(fleet, checks, True)
    finally:
        fleet.cleanup()
    return checks


def status_json(fleet, binary, dsn):
    rc, out, _ = fleet.sqlease(binary, dsn, 'status', '--json')
    try:
        return json.loads(out) if rc == 0 else None
    except ValueError:
        return None


def cmd_upgrade(a):
    checks = Checks(a.label)
    fleet = Fleet(a.label)
    try:
        rc, out, err = fleet.sqlease(a.old_bin, a.dsn, '--version')
        print('fleet %s: old %s, new %s' % (a.label, out.strip(),
                                             fleet.sqlease(a.new_bin, a.dsn, '--version')[1].strip()))
        rc, _, err = fleet.sqlease(a.old_bin, a.dsn, 'migrate')
        if not checks.check(rc == 0, 'the old migrate makes the table (%s)' % err.strip()):
            return checks
        for _ in range(2):
            fleet.start('old', a.old_bin, a.dsn)
        first = fleet.await_start(0, KILL_BOUND_MS + 5000)
        if not checks.check(first is not None and first[0] == 'start',
                            'an old instance holds'):
            return checks
        # Read with the old binary: before the new migrate the table is the
        # old release's, which lacks columns the new status reads (ttl_ms).
        before = status_json(fleet, a.old_bin, a.dsn)
        rc, _, err = fleet.sqlease(a.new_bin, a.dsn, 'migrate')
        checks.check(rc == 0, 'the new migrate under the live hold exits 0 (%s)' % err.strip())
        # Two heartbeats after the migrate: the hold went on unchanged.
        time.sleep(2 * HEARTBEAT_MS / 1000.0)
        after = status_json(fleet, a.new_bin, a.dsn)
        checks.check(before is not None and after is not None and after['held'] and
                     after['owner'] == first[2] and after['token'] == first[1] and
                     after['expires_at_ms'] > before['expires_at_ms'],
                     'the old holder %s keeps token %d across the new migrate and renews on '
                     '(expiry %s -> %s)' % (first[2], first[1],
                                            before and before.get('expires_at_ms'),
                                            after and after.get('expires_at_ms')))
        checks.check(len(fleet.starts()) == 1 and fleet.lock_held(),
                     'its CMD ran on, and no other started')
        old_after = status_json(fleet, a.old_bin, a.dsn)
        checks.check(old_after is not None and old_after['owner'] == first[2],
                     'the old binary reads the migrated table')
        for _ in range(2):
            fleet.start('new', a.new_bin, a.dsn)
        time.sleep(2 * RETRY_MS / 1000.0)
        for _ in range(a.kills):
            if handover(fleet, checks, signal.SIGKILL, True, True) is None:
                break
        for _ in range(2):
            if handover(fleet, checks, signal.SIGTERM, True, True) is None:
                break
        time.sleep(4 * HEARTBEAT_MS / 1000.0)
        final_checks(fleet, checks, False)
    finally:
        fleet.cleanup()
    return checks


def cmd_clockstep(a):
    checks = Checks(a.label)
    fleet = Fleet(a.label)
    bound = TTL_MS + 2 * RETRY_MS + HEARTBEAT_MS + SLACK_MS
    try:
        rc, _, err = fleet.sqlease(a.bin, a.dsn, 'migrate')
        if not checks.check(rc == 0, 'migrate (%s)' % err.strip()):
            return checks
        fleet.start('v', a.bin, a.dsn)
        first = fleet.await_start(0, KILL_BOUND_MS + 5000)
        if not checks.check(first is not None and first[0] == 'start', 'a first holder'):
            return checks
        fleet.start('v', a.bin, a.dsn)
        time.sleep(2 * TTL_MS / 1000.0)       # the second one watches the holder's renews
        offset = 0
        for i in range(a.steps):
            before = fleet.starts()
            offset += a.step_s
            with open(a.clock_file, 'w') as f:
                f.write('+%ds\n' % offset)
            t_step = time.time_ns()
            nxt = fleet.await_start(len(before), bound + 5000)
            if not checks.check(nxt is not None,
                                'step %d (+%d s): someone holds again' % (i + 1, a.step_s)):
                break
            gap = (nxt[3] - t_step) / 1e6
            checks.check(gap <= bound, 'step %d: %s (token %d) started %.0f ms after the step, '
                         'bound %d ms' % (i + 1, nxt[2], nxt[1], gap, bound))
            time.sleep(2 * TTL_MS / 1000.0)   # a settled holder and a watching follower
        # Steps back: a live holder keeps its lease across one (nobody
        # starts), and a holder killed just before one is succeeded within
        # ttl + 2 x retry (+ slack) of the kill, not after the step.
        back_bound = TTL_MS + 2 * RETRY_MS + SLACK_MS
        for i in range(a.back_steps):
            before = fleet.starts()
            offset -= a.step_s
            with open(a.clock_file, 'w') as f:
                f.write('%+ds\n' % offset)
            time.sleep(TTL_MS / 1000.0)
            checks.check(len(fleet.starts()) == len(before) and fleet.lock_held(),
                         'back step %d (-%d s) under a live hold: its CMD runs on, no other '
                         'starts' % (i + 1, a.step_s))
            cur = [s for s in before if s[0] == 'start'][-1]
            h = fleet.holder(cur)
            if not checks.check(h is not None and h['proc'].poll() is None,
                                'the holder %s is a live instance' % cur[2]):
                break
            t_kill = time.time_ns()
            fleet.stop(h, signal.SIGKILL)
            offset -= a.step_s
            with open(a.clock_file, 'w') as f:
                f.write('%+ds\n' % offset)
            nxt = fleet.await_start(len(before), a.step_s * 1000 + back_bound + 5000)
            if not checks.check(nxt is not None, 'kill %d, then -%d s: someone holds again'
                                % (i + 1, a.step_s)):
                break
            gap = (nxt[3] - t_kill) / 1e6
            checks.check(gap <= back_bound, 'kill %d, then -%d s: %s (token %d) started %.0f ms '
                         'after the kill, bound %d ms' % (i + 1, a.step_s, nxt[2], nxt[1], gap,
                                                         back_bound))
            fleet.start('v', a.bin, a.dsn)
            time.sleep(2 * TTL_MS / 1000.0)
        final_checks(fleet, checks, False, errors_ok=True)
    finally:
        with open(a.clock_file, 'w') as f:
            f.write('+0\n')
        fleet.cleanup()
    return checks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    sub = ap.add_subparsers(dest='what', required=True)
    p = sub.add_parser('pooler')
    p.add_argument('--bin', required=True)
    p.add_argument('--dsn', required=True)
    p.add_argument('--direct-dsn', required=True)
    p.add_argument('--instances', type=int, default=3)
    p.add_argument('--kills', type=int, default=2)
    p.add_argument('--label', default='pooler')
    u = sub.add_parser('upgrade')
    u.add_argument('--old-bin', required=True)
    u.add_argument('--new-bin', required=True)
    u.add_argument('--dsn', required=True)
    u.add_argument('--kills', type=int, default=4)
    u.add_argument('--label', default='upgrade')
    c = sub.add_parser('clockstep')
    c.add_argument('--bin', required=True)
    c.add_argument('--dsn', required=True)
    c.add_argument('--clock-file', required=True)
    c.add_argument('--steps', type=int, default=4)
    c.add_argument('--step-s', type=int, default=30)
    c.add_argument('--back-steps', type=int, default=2)
    c.add_argument('--label', default='clockstep')
    a = ap.parse_args()

    def on_signal(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)
    t0 = time.monotonic()
    try:
        checks = {'pooler': cmd_pooler, 'upgrade': cmd_upgrade,
                  'clockstep': cmd_clockstep}[a.what](a)
    except KeyboardInterrupt:
        print('fleet %s: interrupted' % a.label)
        return 130
    print('fleet %s: %.1f s' % (a.label, time.monotonic() - t0))
    checks.report()
    return 0 if checks.failed == 0 and checks.passed > 0 else 1


if __name__ == '__main__':
    sys.exit(main())
