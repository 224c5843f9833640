#!/usr/bin/env python3
"""ci/cron_fleet.py -- scheduled jobs run by a fleet on this host, each
fire checked to run exactly once, through the faults a fleet meets.

    cron_fleet.py daemons --bin B --dsn DSN [--hosts 5] [--seconds 120]
                  [--faketime LIB] [--nft]
    cron_fleet.py outage  --bin B --dsn DSN [--outage-s 30]
    cron_fleet.py crontab --bin B --dsn DSN [--fires 6] [--period-s 10]

daemons: --hosts `sqlease cron` processes (ttl 3 s) run one file, a job
every 5 s (six fields) that writes "fire JOB FIRE_MS OWNER ATTEMPT" to
this run's log and sleeps a second.  Each host reaches the database
through a TCP relay of its own on loopback, so that the kernel can cut
one host off (nftables drops the relay port's packets, --nft, as root);
two hosts run under libfaketime with their wall clocks 30 s ahead and
behind (--faketime, the preload library).  Every 12 s one fault in
turn: the holder killed (SIGKILL, restarted 2 s later), a host stopped
and restarted with SIGTERM (a rolling restart), the holder cut off from
the database for 8 s.  Then every fire between the first holder and the
end is checked: run exactly once (one log line), its row in the fire
table once, and started within ttl + 1 s of its time by the database's
clock (the row's started_at_ms).

outage: three lease names, one file each (a job every 5 s with
SQLEASE_MISSED=once, all, skip); a host runs each, then all stop for
--outage-s, then they start again: `once` runs 1 catch-up and records the
others missed, `all` runs every fire of the outage, `skip` runs none and
records them all, each fire of the outage in the ledger once.

crontab: five "hosts' crontabs" fire `sqlease run --every PERIOD` at each
period's boundary, one of them PERIOD - 1 s late (later than a
min-hold would have guessed): each fire runs once, the late host and
the losers exit 0 (--conflict-exit-code 0) saying who ran it.

Everything started is stopped on every exit path; the relays are
threads; an nftables table added is deleted.  Results: one result file
(ci/results.sh), when SQLEASE_RESULT_DIR is set.  Exit status 0 only when
every check passed.
"""

import argparse
import json
import os
import random
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fleet import Checks  # noqa: E402

TTL_MS, HEARTBEAT_MS, RENEW_DEADLINE_MS, RETRY_MS = 3000, 500, 1500, 250
TIMING = ['--ttl', '%dms' % TTL_MS, '--heartbeat', '%dms' % HEARTBEAT_MS,
          '--renew-deadline', '%dms' % RENEW_DEADLINE_MS, '--retry', '%dms' % RETRY_MS]
PERIOD_S = 5
LATE_BOUND_MS = TTL_MS + 1000
NFT_TABLE = 'sqlease_cron_fleet_%d' % os.getpid()


class Relay(threading.Thread):
    """A TCP relay on loopback to the database: the port a host connects
    to, so that dropping its packets cuts that host off alone."""

    def __init__(self, target_port):
        super().__init__(daemon=True)
        self.target = ('127.0.0.1', target_port)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(('127.0.0.1', 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.stopping = False

    def run(self):
        while not self.stopping:
            r, _, _ = select.select([self.sock], [], [], 0.2)
            if not r:
                continue
            try:
                c, _ = self.sock.accept()
                s = socket.create_connection(self.target)
            except OSError:
                continue
            threading.Thread(target=self.pump, args=(c, s), daemon=True).start()

    def pump(self, a, b):
        socks = [a, b]
        try:
            while not self.stopping:
                r, _, _ = select.select(socks, [], [], 0.5)
                for x in r:
                    data = x.recv(65536)
                    if not data:
                        return
                    (b if x is a else a).sendall(data)
        except OSError:
            pass
        finally:
            a.close()
            b.close()

    def stop(self):
        self.stopping = True
        self.sock.close()


class Nft:
    """One nftables table of this run: drop a port's packets, undo."""

    def __init__(self):
        self.ok = shutil.which('nft') is not None and os.geteuid() == 0
        self.made = False

    def cut(self, port):
        rules = ('table inet %s { chain in { type filter hook input priority 0; '
                 'tcp dport %d drop; tcp sport %d drop; } }' % (NFT_TABLE, port, port))
        p = subprocess.run(['nft', '-f', '-'], input=rules, text=True, capture_output=True)
        self.made = p.returncode == 0
        return self.made

    def heal(self):
        if self.made:
            subprocess.run(['nft', 'delete', 'table', 'inet', NFT_TABLE], capture_output=True)
            self.made = False


class Fleet:
    def __init__(self, a, label):
        self.a = a
        self.dir = tempfile.mkdtemp(prefix='sqlease-cronfleet-')
        self.log = os.path.join(self.dir, 'fires.log')
        open(self.log, 'w').close()
        self.table = 'sqlease_cf_%d' % os.getpid()
        self.fire_table = 'sqlease_cff_%d' % os.getpid()
        self.hosts = []
        self.label = label

    def base(self, dsn=None):
        return [self.a.bin, '--dsn', dsn or self.a.dsn, '--table', self.table,
                '--fire-table', self.fire_table]

    def sqlease(self, *args, name='jobs', dsn=None, timeout=60, env=None):
        p = subprocess.run(self.base(dsn) + ['--name', name] + list(args), capture_output=True,
                           text=True, timeout=timeout, env=env)
        return p.returncode, p.stdout, p.stderr

    def cronfile(self, name, body):
        path = os.path.join(self.dir, name)
        with open(path, 'w') as f:
            f.write(body)
        return path

    def start_cron(self, host):
        log = open(os.path.join(self.dir, '%s.log' % host['owner']), 'a')
        env = dict(os.environ, **host.get('env', {}))
        host['proc'] = subprocess.Popen(
            self.base(host.get('dsn')) + ['--name', host['name'], '--owner', host['owner']] +
            TIMING + ['cron', host['file']], stdout=log, stderr=subprocess.STDOUT, env=env)
        log.close()

    def stop(self, host, sig=signal.SIGTERM, timeout=20):
        p = host.get('proc')
        if p is not None and p.poll() is None:
            p.send_signal(sig)
            try:
                p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def holder(self, name='jobs'):
        rc, out, _ = self.sqlease('status', '--json', name=name)
        try:
            st = json.loads(out) if rc == 0 else None
        except ValueError:
            return None
        if not st or not st.get('held'):
            return None
        return st.get('owner')

    def fires(self, name):
        rc, out, err = self.sqlease('fires', '--json', '--since', '1h', name=name)
        if rc != 0:
            print('fires: %s' % err.strip())
            return []
        return [json.loads(l) for l in out.strip().split('\n') if l.strip()]

    def lines(self):
        out = []
        with open(self.log) as f:
            for line in f:
                p = line.split()
                if len(p) >= 5 and p[0] == 'fire':
                    out.append((p[1], int(p[2]), p[3], int(p[4])))
        return out

    def cleanup(self):
        for h in self.hosts:
            self.stop(h)
        shutil.rmtree(self.dir, ignore_errors=True)


def job_line(log, job, spec, sleep_s=1):
    return ('SQLEASE_JOB=%s\n%s echo "fire $SQLEASE_JOB $SQLEASE_FIRE_MS $SQLEASE_OWNER '
            '$SQLEASE_ATTEMPT" >> %s; sleep %d\n' % (job, spec, log, sleep_s))


def check_once(checks, fl, name, job, first_ms, last_ms, what):
    """Every fire of `job` in [first_ms, last_ms] ran once and has one row."""
    rows = [r for r in fl.fires(name) if r['job'] == job]
    by_fire = {}
    for r in rows:
        by_fire.setdefault(r['fire_at_ms'], []).append(r)
    lines = [l for l in fl.lines() if l[0] == job]
    runs = {}
    for l in lines:
        runs.setdefault(l[1], []).append(l)
    want = list(range(first_ms, last_ms + 1, PERIOD_S * 1000))
    twice = [f for f in want if len(runs.get(f, [])) > 1]
    never = [f for f in want if len(runs.get(f, [])) == 0 and
             not any(r['state'] == 'abandoned' for r in by_fire.get(f, []))]
    checks.check(not twice, '%s: no fire of %d ran twice (%s)' % (what, len(want), twice[:5]))
    checks.check(not never, '%s: every fire of %d ran (never: %s)' % (what, len(want), never[:5]))
    rowless = [f for f in want if len(by_fire.get(f, [])) != 1]
    checks.check(not rowless, '%s: each fire has one row in the fire table (not: %s)'
                 % (what, rowless[:5]))
    late = [(r['fire_at_ms'], r['started_at_ms'] - r['fire_at_ms']) for r in rows
            if first_ms <= r['fire_at_ms'] <= last_ms and r['state'] in ('done', 'failed')
            and r['started_at_ms'] - r['fire_at_ms'] > LATE_BOUND_MS]
    worst = max([r['started_at_ms'] - r['fire_at_ms'] for r in rows
                 if r['state'] in ('done', 'failed')] or [0])
    checks.check(not late, '%s: every fire started within ttl + 1 s of its time (worst %d ms; '
                 'late: %s)' % (what, worst, late[:5]))
    return rows


def cmd_daemons(a):
    checks = Checks('cron-daemons')
    fl = Fleet(a, 'daemons')
    nft = Nft() if a.nft else None
    relays = []
    try:
        rc, _, err = fl.sqlease('migrate')
        if not checks.check(rc == 0, 'migrate (%s)' % err.strip()):
            return checks
        jobs = fl.cronfile('jobs.cron', job_line(fl.log, 'tick', '*/%d * * * * *' % PERIOD_S))
        port = int(os.environ.get('SQLEASE_DB_PORT', '0'))
        for i in range(a.hosts):
            h = {'owner': 'host-%d' % i, 'name': 'jobs', 'file': jobs}
            if port:
                r = Relay(port)
                r.start()
                relays.append(r)
                h['relay'] = r
                h['dsn'] = '%s;Port=%d' % (a.dsn, r.port)
            if a.faketime and i in (1, 2):
                h['env'] = {'LD_PRELOAD': a.faketime, 'FAKETIME': '+30s' if i == 1 else '-30s',
                            'FAKETIME_DONT_FAKE_MONOTONIC': '1'}
            fl.hosts.append(h)
            fl.start_cron(h)
        t_end = time.monotonic() + a.seconds
        while fl.holder() is None and time.monotonic() < t_end:
            time.sleep(0.1)
        rc, out, _ = fl.sqlease('status', '--json')
        first_ms = (json.loads(out)['db_now_ms'] // (PERIOD_S * 1000) + 2) * PERIOD_S * 1000
        faults = ['kill', 'restart', 'cut'] if nft and nft.ok and relays else ['kill', 'restart']
        k = 0
        while time.monotonic() < t_end - 15:
            time.sleep(12)
            what = faults[k % len(faults)]
            k += 1
            owner = fl.holder()
            h = next((x for x in fl.hosts if x['owner'] == owner), None)
            if what == 'restart':
                h = random.choice(fl.hosts)
            if h is None:
                continue
            print('cron-daemons: %s %s' % (what, h['owner']), flush=True)
            if what == 'kill':
                fl.stop(h, signal.SIGKILL)
                time.sleep(2)
                fl.start_cron(h)
            elif what == 'restart':
                fl.stop(h)
                fl.start_cron(h)
            elif what == 'cut':
                nft.cut(h['relay'].port)
                time.sleep(8)
                nft.heal()
        time.sleep(max(0.0, t_end - time.monotonic()))
        rc, out, _ = fl.sqlease('status', '--json')
        last_ms = (json.loads(out)['db_now_ms'] // (PERIOD_S * 1000) - 1) * PERIOD_S * 1000
        checks.check(k > 0, '%d faults made' % k)
        for h in fl.hosts:
            fl.stop(h)
        check_once(checks, fl, 'jobs', 'tick', first_ms, last_ms,
                   '%d hosts for %d s' % (a.hosts, a.seconds))
    finally:
        if nft:
            nft.heal()
        for r in relays:
            r.stop()
        fl.cleanup()
    return checks


def cmd_outage(a):
    checks = Checks('cron-outage')
    fl = Fleet(a, 'outage')
    try:
        for pol in ('once', 'all', 'skip'):
            rc, _, err = fl.sqlease('migrate', name='out-%s' % pol)
            if not checks.check(rc == 0, 'migrate out-%s (%s)' % (pol, err.strip())):
                return checks
            f = fl.cronfile('%s.cron' % pol, 'SQLEASE_MISSED=%s\n' % pol +
                            job_line(fl.log, 'j-%s' % pol, '*/%d * * * * *' % PERIOD_S, 0))
            h = {'owner': 'h-%s' % pol, 'name': 'out-%s' % pol, 'file': f}
            fl.hosts.append(h)
            fl.start_cron(h)
        time.sleep(2 * PERIOD_S + 1)
        for h in fl.hosts:
            fl.stop(h)
        rc, out, _ = fl.sqlease('status', '--json', name='out-once')
        t_stop = json.loads(out)['db_now_ms']
        time.sleep(a.outage_s)
        rc, out, _ = fl.sqlease('status', '--json', name='out-once')
        t_start = json.loads(out)['db_now_ms']
        for h in fl.hosts:
            fl.start_cron(h)
        time.sleep(TTL_MS / 1000.0 + 2)
        for h in fl.hosts:
            fl.stop(h)
        gap = [f for f in range((t_stop // 5000 + 1) * 5000, t_start + 1, 5000)]
        for pol in ('once', 'all', 'skip'):
            rows = {r['fire_at_ms']: r for r in fl.fires('out-%s' % pol)
                    if r['fire_at_ms'] in gap}
            ran = [f for f in gap if rows.get(f, {}).get('state') in ('done', 'failed')]
            missed = [f for f in gap if rows.get(f, {}).get('state') == 'missed']
            checks.check(len(rows) == len(gap), '%s: each of the %d fires of the outage '
                         'recorded (%d)' % (pol, len(gap), len(rows)))
            want_ran = {'once': 1, 'all': len(gap), 'skip': 0}[pol]
            checks.check(len(ran) == want_ran and len(missed) == len(gap) - want_ran,
                         '%s: %d run, %d missed (want %d, %d)' % (pol, len(ran), len(missed),
                                                                  want_ran,
                                                                  len(gap) - want_ran))
            if pol == 'once':
                checks.check(ran == gap[-1:], 'once: the catch-up is the latest fire')
            lines = [l for l in fl.lines() if l[0] == 'j-%s' % pol and l[1] in gap]
            checks.check(sorted(l[1] for l in lines) == sorted(ran),
                         '%s: the commands ran for exactly the fires recorded run' % pol)
    finally:
        fl.cleanup()
    return checks


def cmd_crontab(a):
    checks = Checks('cron-crontab')
    fl = Fleet(a, 'crontab')
    try:
        rc, _, err = fl.sqlease('migrate', name='nightly')
        if not checks.check(rc == 0, 'migrate (%s)' % err.strip()):
            return checks
        period_ms = a.period_s * 1000
        out_of = []
        for n in range(a.fires):
            now = time.time()
            nxt = (int(now) // a.period_s + 1) * a.period_s
            time.sleep(nxt - now + 0.05)
            procs = []
            for i in range(5):
                cmd = fl.base() + ['--name', 'nightly', '--owner', 'cron-%d' % i, 'run',
                                   '--every', '%ds' % a.period_s, '--conflict-exit-code', '0',
                                   '--', 'sh', '-c',
                                   'echo "fire nightly $SQLEASE_FIRE_MS $SQLEASE_OWNER 1" '
                                   '>> %s; sleep 1' % fl.log]
                if i == 4:
                    cmd = ['sh', '-c', 'sleep %d; exec "$@"' % (a.period_s - 1), 'late'] + cmd
                procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                              stderr=subprocess.PIPE, text=True))
            for p in procs:
                o, e = p.communicate(timeout=60)
                out_of.append((p.returncode, e))
        bad = [(rc, e) for rc, e in out_of if rc != 0]
        checks.check(not bad, 'every run exits 0 (the losers with --conflict-exit-code 0): %s'
                     % bad[:3])
        named = [e for rc, e in out_of if 'run by cron-' in e]
        checks.check(len(named) == 4 * a.fires,
                     'each of the %d losers names the host that ran its fire (%d)'
                     % (4 * a.fires, len(named)))
        lines = fl.lines()
        fires = sorted(l[1] for l in lines)
        checks.check(len(fires) == a.fires and len(set(fires)) == a.fires,
                     '%d fires, each run once: %s' % (a.fires, fires))
        rows = fl.fires('nightly')
        checks.check(len(rows) == a.fires and all(r['state'] == 'done' for r in rows),
                     'each fire done in the fire table (%d rows)' % len(rows))
        checks.check(all(f % period_ms == 0 for f in fires), 'fires on the period')
    finally:
        fl.cleanup()
    return checks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    sub = ap.add_subparsers(dest='what', required=True)
    d = sub.add_parser('daemons')
    d.add_argument('--bin', required=True)
    d.add_argument('--dsn', required=True)
    d.add_argument('--hosts', type=int, default=5)
    d.add_argument('--seconds', type=int, default=120)
    d.add_argument('--faketime', default='')
    d.add_argument('--nft', action='store_true')
    o = sub.add_parser('outage')
    o.add_argument('--bin', required=True)
    o.add_argument('--dsn', required=True)
    o.add_argument('--outage-s', type=int, default=30)
    c = sub.add_parser('crontab')
    c.add_argument('--bin', required=True)
    c.add_argument('--dsn', required=True)
    c.add_argument('--fires', type=int, default=6)
    c.add_argument('--period-s', type=int, default=10)
    a = ap.parse_args()

    def on_signal(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)
    t0 = time.monotonic()
    try:
        checks = {'daemons': cmd_daemons, 'outage': cmd_outage,
                  'crontab': cmd_crontab}[a.what](a)
    except KeyboardInterrupt:
        print('cron fleet: interrupted')
        return 130
    print('cron fleet %s: %.1f s' % (a.what, time.monotonic() - t0))
    checks.report()
    return 0 if checks.failed == 0 and checks.passed > 0 else 1


if __name__ == '__main__':
    sys.exit(main())
