#!/usr/bin/env python3
"""The documents' code blocks, run: the README's tour, set-up, cron and C
example, and the docs/ recipes, each against this build and an SQLite
file in a temporary directory.  Every block is named by a marker line
(tests/docblocks.py); a block this file runs has a test below decorated
with @runs(NAME), one that a CI script runs is named in that script, one
that cannot run here says why.  So a document cannot gain a block nobody
runs, and a recipe that stops working fails here.

Console blocks are transcripts: each `$ ` line is run by one bash session
in turn, and the lines after it are its output (stdout and stderr), where
`...` stands for any text.  After a command put in the background with
`&`, the session waits until the lease is held before it goes on (the
reader types slower than the script).

Run: python3 tests/test_docs.py (SQLEASE_BIN, SQLEASE_SRCDIR and
SQLEASE_BUILDDIR name the build; `scons test` sets them).
"""

import configparser
import http.client
import json
import os
import pwd
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import docblocks  # noqa: E402

ROOT = os.environ.get('SQLEASE_SRCDIR') or docblocks.ROOT
BUILD = os.environ.get('SQLEASE_BUILDDIR') or os.path.join(ROOT, 'build')
SQLEASE = os.environ.get('SQLEASE_BIN') or os.path.join(BUILD, 'bin', 'sqlease')
CC = shutil.which('cc') or shutil.which('gcc') or 'cc'
BLOCKS, PROBLEMS = docblocks.all_blocks(ROOT)

# The blocks this file runs: name -> test method.
RUNS = {}


def runs(name):
    """Mark a test as the one that runs block NAME; the test gets it."""
    def wrap(fn):
        RUNS[name] = fn

        def test(self):
            if name not in BLOCKS:
                self.fail('no block %r in the documents' % name)
            fn(self, BLOCKS[name])
        test.__name__ = fn.__name__
        test.__doc__ = fn.__doc__
        return test
    return wrap


def expected_regex(text):
    """A transcript's expected output as a regex: literal, `...` any text."""
    parts = [re.escape(p) for p in text.split('...')]
    return re.compile('.*?'.join(parts), re.S)


def clean(text):
    """Output without trailing blanks on lines and at the end."""
    return '\n'.join(l.rstrip() for l in text.rstrip().split('\n'))


class DocTest(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix='sqlease-docs.')
        self.env = dict(os.environ)
        self.env['PATH'] = os.path.dirname(SQLEASE) + os.pathsep + self.env.get('PATH', '')
        # A user DSN file of the test's own; the driver's registration
        # (odbcinst.ini) stays where the system or the CI script has it.
        self.odbcini = os.path.join(self.dir, 'odbc.ini')
        self.env['ODBCINI'] = self.odbcini
        for var in ('SQLEASE_DSN', 'SQLEASE_DSN_FILE', 'SQLEASE_NAME', 'SQLEASE_TABLE', 'SQLEASE_TTL',
                    'SQLEASE_HEARTBEAT', 'SQLEASE_RENEW_DEADLINE', 'SQLEASE_RETRY'):
            self.env.pop(var, None)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    # ------------------------------------------------------------ helpers

    def dsn(self, name, database):
        """Add an SQLite DSN NAME for file DATABASE to the test's odbc.ini."""
        with open(self.odbcini, 'a', encoding='utf-8') as f:
            f.write('[%s]\nDriver = SQLite3\nDatabase = %s\n\n' % (name, database))

    def sh(self, script, timeout=60, cwd=None):
        """Run SCRIPT with bash in the test's directory: (status, output)."""
        p = subprocess.run(['bash', '-c', script], cwd=cwd or self.dir, env=self.env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout)
        return p.returncode, p.stdout.decode('utf-8', 'replace')

    def transcript(self, block, timeout=120):
        """Run a console block's commands in one bash session and compare
        each command's output with the lines the block shows after it."""
        steps, cur = [], None
        for line in block.text.rstrip('\n').split('\n'):
            if line.startswith('$ '):
                cur = [line[2:], []]
                steps.append(cur)
            else:
                self.assertIsNotNone(cur, '%s: output before any command' % block.where())
                cur[1].append(line)
        sep = '@@doc-step@@'
        script = ['exec 2>&1']
        for cmd, _ in steps:
            script.append(cmd)
            if cmd.rstrip().endswith('&'):
                script.append('for _ in $(seq 200); do sqlease status --json 2>/dev/null'
                              ' | grep -q \'"held":true\' && break; sleep 0.05; done')
            script.append("printf '\\n%s\\n'" % sep)
        script.append('kill $(jobs -p) 2>/dev/null; wait')
        status, out = self.sh('\n'.join(script), timeout=timeout)
        got = out.split('\n%s\n' % sep)
        self.assertGreaterEqual(len(got), len(steps), out)
        for (cmd, want), text in zip(steps, got):
            want, text = clean('\n'.join(want)), clean(text)
            self.assertRegex(text, '^' + expected_regex(want).pattern + '$',
                             '%s: `%s` printed:\n%s\nwhere the document shows:\n%s'
                             % (block.where(), cmd, text, want))
        return got

    def compile_c(self, source, out, extra=()):
        """Compile a C block against this build's static library."""
        src = os.path.join(self.dir, out + '.c')
        with open(src, 'w', encoding='utf-8') as f:
            f.write(source)
        exe = os.path.join(self.dir, out)
        cmd = [CC, '-std=c11', '-Wall', '-Wextra', '-Werror', '-D_DEFAULT_SOURCE',
               '-I' + os.path.join(ROOT, 'include'), src,
               os.path.join(BUILD, 'lib', 'libsqlease.a'),
               '-lodbc', '-lodbcinst', '-luuid', '-pthread', '-o', exe] + list(extra)
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.assertEqual(p.returncode, 0, p.stdout.decode())
        return exe

    def status_json(self, *args):
        status, out = self.sh(' '.join(['sqlease'] + list(args) + ['status', '--json']))
        self.assertEqual(status, 0, out)
        return out

    # ------------------------------------------------------------ coverage

    def test_every_block_is_run(self):
        """Every block has a marker, a unique name and a runner: this
        file, a script that names it, or a reason it cannot run."""
        problems = list(PROBLEMS)
        for b in BLOCKS.values():
            if b.by:
                script = os.path.join(ROOT, b.by)
                if not os.path.isfile(script):
                    problems.append('%s: %s runs it, but there is no such file' % (b.where(), b.by))
                    continue
                with open(script, encoding='utf-8') as f:
                    named = b.name in f.read()
                if not named:
                    problems.append('%s: %s does not name block %s' % (b.where(), b.by, b.name))
            elif b.why:
                if len(b.why.split()) < 3:
                    problems.append('%s: say why %s cannot run' % (b.where(), b.name))
            elif b.name not in RUNS:
                problems.append('%s: nothing runs block %s' % (b.where(), b.name))
        for name in RUNS:
            if name in BLOCKS and (BLOCKS[name].by or BLOCKS[name].why):
                problems.append('%s: marked as not run here, but a test runs it' % name)
        self.assertEqual(problems, [])

    # ------------------------------------------------------------ README

    @runs('readme-setup-demo')
    def test_readme_setup_demo(self, b):
        """The first set-up command, as written; its demo runs and passes."""
        self.assertEqual(b.text, 'bash ci/install-deps.sh && scons -j2 && build/bin/sqlease demo\n')
        self.assertTrue(os.path.isfile(os.path.join(ROOT, 'ci', 'install-deps.sh')))
        status, out = self.sh('"$1" demo'.replace('$1', SQLEASE), timeout=120)
        self.assertEqual(status, 0, out)
        self.assertIn('demo passed: 3 holders', out)

    @runs('readme-setup-test')
    def test_readme_setup_test(self, b):
        """The second set-up command is the one CI runs (.ci/run)."""
        self.assertEqual(b.text, 'bash ci/install-deps.sh --full && bash ci/test.sh\n')
        with open(os.path.join(ROOT, '.ci', 'run'), encoding='utf-8') as f:
            ci = [l for l in f.read().split('\n') if l.startswith('bash ')]
        self.assertEqual(ci, ['bash ci/install-deps.sh --full', 'bash ci/test.sh'])

    @runs('readme-tour')
    def test_readme_tour(self, b):
        """The tour: migrate, a run, a second run losing with 75, status."""
        got = self.transcript(b)
        # The job ran with a token, and status shows a live hold of it.
        token = re.search(r'token (\d+)', got[1]).group(1)
        self.assertGreater(int(token), 0)
        self.assertEqual(int(re.search(r'token:\s+(\d+)', got[4]).group(1)), int(token) + 1)
        self.assertTrue(os.path.isfile(os.path.join(self.dir, 'sqlease.db')))

    @runs('readme-migrate')
    def test_readme_migrate(self, b):
        """The deployment step, against a DSN `prod` (an SQLite file)."""
        self.check_migrate(b)

    @runs('operating-migrate')
    def test_operating_migrate(self, b):
        """The same deployment step in docs/operating.md."""
        self.check_migrate(b)

    def check_migrate(self, b):
        self.dsn('prod', os.path.join(self.dir, 'prod.db'))
        cmd = b.text.replace('/usr/local/bin/sqlease', SQLEASE)
        self.assertNotEqual(cmd, b.text)
        status, out = self.sh(cmd)
        self.assertEqual(status, 0, out)
        self.assertIn("lease row 'nightly' present", out)
        self.assertIn('"held":false', self.status_json('--dsn', 'prod', '--name', 'nightly'))

    @runs('readme-crontab')
    def test_readme_crontab(self, b):
        """The crontab line on three hosts: one runs the fire, the others
        find it claimed and exit 0 without a word."""
        self.check_crontab(b)

    @runs('operating-crontab')
    def test_operating_crontab(self, b):
        """The crontab line of docs/operating.md, on two hosts."""
        self.check_crontab(b)

    def check_crontab(self, b):
        """Three hosts fire the line, the third after the first has
        finished: host-a runs the fire (the latest 03:00 by the database's
        clock, within the day's late limit), the two others exit 0 without
        a word, and the fire's row says host-a ran it, done, status 0."""
        fields = b.text.strip().split(None, 5)
        self.assertEqual(fields[:5], ['0', '3', '*', '*', '*'])
        self.assertIn("--schedule '0 3 * * *'", fields[5])
        self.dsn('prod', os.path.join(self.dir, 'prod.db'))
        backup = os.path.join(self.dir, 'backup.sh')
        with open(backup, 'w', encoding='utf-8') as f:
            f.write('#!/bin/sh\necho "$SQLEASE_OWNER $SQLEASE_FIRE" >> %s/ran\n' % self.dir)
        os.chmod(backup, 0o755)
        cmd = (fields[5].replace('/usr/local/bin/sqlease', SQLEASE)
               .replace('/usr/local/bin/backup.sh', backup))
        self.assertEqual(self.sh(SQLEASE + ' --dsn prod --name nightly migrate')[0], 0)
        for host in ('host-a', 'host-b', 'host-c'):
            status, out = self.sh(cmd.replace(' -q ', ' --owner %s -q ' % host))
            self.assertEqual((status, out), (0, ''))
        with open(os.path.join(self.dir, 'ran'), encoding='utf-8') as f:
            ran = f.read().split('\n')
        self.assertEqual(len(ran), 2, ran)
        self.assertRegex(ran[0], r'^host-a \d{4}-\d\d-\d\dT03:00:00Z$')
        status, out = self.sh(SQLEASE + ' --dsn prod --name nightly fires --json')
        self.assertEqual(status, 0, out)
        rows = [json.loads(l) for l in out.strip().split('\n')]
        self.assertEqual(len(rows), 1, out)
        self.assertEqual((rows[0]['owner'], rows[0]['state'], rows[0]['exit_status'],
                          rows[0]['fire_at']), ('host-a', 'done', 0, ran[0].split()[1]))
        st = self.status_json('--dsn', 'prod', '--name', 'nightly')
        self.assertIn('"held":false', st)

    @runs('operating-cronfile')
    def test_operating_cronfile(self, b):
        """The example file reads: its four jobs, named as it says (the
        last after its command and its line's hash), each with a next
        fire."""
        path = os.path.join(self.dir, 'jobs.cron')
        with open(path, 'w', encoding='utf-8') as f:
            f.write(b.text)
        status, out = self.sh('sqlease cron --check %s' % path)
        self.assertEqual(status, 0, out)
        names = [l.split('\t')[0] for l in out.strip().split('\n')]
        self.assertEqual(names[:3], ['backup', 'report', 'heartbeat'])
        self.assertRegex(names[3], r'^sync\.sh-[0-9a-f]{8}$')
        self.assertIn('CRON_TZ=Europe/Berlin', out.split('\n')[0])
        for line in out.strip().split('\n'):
            self.assertRegex(line, r'\tnext \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\t')

    @runs('operating-cron-systemd')
    def test_operating_cron_systemd(self, b):
        """The unit's ExecStart, as systemd runs it, on a file of one job
        every second: the job runs; its --http (on a free port of the
        loopback here) answers /leader 200 and counts the fires in
        /metrics; ExecReload's SIGHUP with a new file adds a job; SIGTERM
        stops it, exit 0."""
        unit = configparser.ConfigParser(interpolation=None)
        unit.read_string(b.text)
        exec_start = unit['Service']['ExecStart']
        self.assertEqual(unit['Service']['ExecReload'], '/bin/kill -HUP $MAINPID')
        self.dsn('prod', os.path.join(self.dir, 'prod.db'))
        jobs = os.path.join(self.dir, 'jobs.cron')
        ran = os.path.join(self.dir, 'ran')
        with open(jobs, 'w', encoding='utf-8') as f:
            f.write('SQLEASE_JOB=tick\n* * * * * * echo "$SQLEASE_JOB" >> %s\n' % ran)
        self.assertEqual(self.sh(SQLEASE + ' --dsn prod --name jobs migrate')[0], 0)
        self.assertIn('--http 0.0.0.0:8080 ', exec_start)
        argv = (exec_start.replace('/usr/local/bin/sqlease', SQLEASE)
                .replace('/etc/sqlease/jobs.cron', jobs)
                .replace('--http 0.0.0.0:8080', '--http 127.0.0.1:0').split())
        err = open(os.path.join(self.dir, 'cron.err'), 'w+b')
        self.addCleanup(err.close)
        p = subprocess.Popen(argv, cwd=self.dir, env=self.env, stdout=subprocess.DEVNULL,
                             stderr=err)
        try:
            port = self.await_http_port(p, err)
            if port is None:
                with open(err.name, encoding='utf-8', errors='replace') as f:
                    said = f.read()
                self.assertIn('has no HTTP support', said)
                self.assertNotEqual(os.environ.get('CI'), 'true', said)
                # The rest of the unit without it.
                self.assertEqual(p.wait(timeout=15), 64)
                k = argv.index('--http')
                del argv[k:k + 2]
                p = subprocess.Popen(argv, cwd=self.dir, env=self.env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            else:
                self.check_cron_http(port)

            def count(word):
                try:
                    with open(ran, encoding='utf-8') as f:
                        return f.read().split().count(word)
                except OSError:
                    return 0
            end = time.monotonic() + 10
            while count('tock') == 0 and time.monotonic() < end:
                if count('tick') > 0 and count('tock') == 0 and not os.path.exists(jobs + '.2'):
                    with open(jobs + '.2', 'w', encoding='utf-8') as f:
                        f.write('SQLEASE_JOB=tick\n* * * * * * echo "$SQLEASE_JOB" >> %s\n'
                                'SQLEASE_JOB=tock\n* * * * * * echo "$SQLEASE_JOB" >> %s\n'
                                % (ran, ran))
                    os.replace(jobs + '.2', jobs)
                    p.send_signal(signal.SIGHUP)
                time.sleep(0.05)
            self.assertGreater(count('tick'), 0)
            self.assertGreater(count('tock'), 0)
            p.send_signal(signal.SIGTERM)
            self.assertEqual(p.wait(timeout=15), 0)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()

    @runs('readme-c')
    def test_readme_c(self, b):
        """The README's program builds without a warning and holds, then
        stops its work at shutdown; its row is released."""
        exe = self.compile_c(b.text, 'app')
        p = subprocess.run([exe], cwd=self.dir, env=self.env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        out = p.stdout.decode()
        self.assertEqual(p.returncode, 0, out + p.stderr.decode())
        self.assertRegex(out, r'^holding, token \d+: start the work\nstop the work \(shutdown\)\n$')
        st = self.status_json('--dsn', "'Driver=SQLite3;Database=jobs.db'", '--name', 'nightly')
        self.assertIn('"held":false', st)

    @runs('readme-c-build')
    def test_readme_c_build(self, b):
        """The build line, run as written in a clone (include/ and build/
        beside app.c), builds the README's program and runs it."""
        with open(os.path.join(self.dir, 'app.c'), 'w', encoding='utf-8') as f:
            f.write(BLOCKS['readme-c'].text)
        os.symlink(os.path.join(ROOT, 'include'), os.path.join(self.dir, 'include'))
        os.symlink(BUILD, os.path.join(self.dir, 'build'))
        status, out = self.sh(b.text)
        self.assertEqual(status, 0, out)
        self.assertIn('stop the work (shutdown)', out)


    # ------------------------------------------------------------ docs/

    @runs('c-api-program')
    def test_c_api_program(self, b):
        """The complete program of docs/c-api.md builds with -Werror,
        migrates, holds, and stops its work at shutdown."""
        exe = self.compile_c(b.text, 'program')
        p = subprocess.run([exe], cwd=self.dir, env=self.env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=90)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        self.assertRegex(p.stdout.decode(), r'^start, token \d+\nstop \(shutdown\)\n$')
        self.assertIn("holding the lease", p.stderr.decode())

    @runs('fence-snippet')
    def test_fence_snippet(self, b):
        """The fence snippet, inside a program whose supervisor holds the
        lease: it fills the predicate and the values to bind."""
        program = (
            '#include <sqlease.h>\n#include <stdio.h>\n#include <string.h>\n'
            'int main(void)\n{\n'
            '    sqlease_db_options dbo;\n    sqlease_options o;\n'
            '    sqlease_db *db = NULL;\n    sqlease_supervisor *sup = NULL;\n'
            '    sqlease_error err;\n    const char *names[] = { "fenced" };\n'
            '    sqlease_db_options_init(&dbo);\n'
            '    dbo.conn = "Driver=SQLite3;Database=fence.db";\n'
            '    sqlease_options_init(&o);\n    o.name = "fenced";\n'
            '    if (sqlease_db_open(&db, &dbo, &err) != SQLEASE_OK ||\n'
            '        sqlease_migrate(db, NULL, names, 1, &err) != SQLEASE_OK ||\n'
            '        sqlease_supervisor_start(&sup, db, &o, &err) != SQLEASE_OK ||\n'
            '        sqlease_supervisor_await(sup, 10000, &err) != SQLEASE_OK)\n'
            '        return 2;\n'
            '    {\n' + b.text +
            '    if (f.sql == NULL || f.nvalues != 3 || f.values[2].type != SQLEASE_VALUE_INT64)\n'
            '        return 3;\n'
            '    printf("%s\\n", f.sql);\n'
            '    }\n'
            '    sqlease_supervisor_free(sup);\n    sqlease_db_close(db);\n    return 0;\n}\n')
        exe = self.compile_c(program, 'fence')
        p = subprocess.run([exe], cwd=self.dir, env=self.env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        self.assertTrue(p.stdout.decode().startswith('EXISTS (SELECT 1 FROM sys_job_lease WHERE'),
                        p.stdout.decode())

    @runs('fire-snippet')
    def test_fire_snippet(self, b):
        """The fire ledger's snippet, inside a program whose supervisor
        holds the lease: the first claim runs the job and records its end;
        the same fire again is told it is done, and where."""
        program = (
            '#include <sqlease.h>\n#include <stdio.h>\n#include <string.h>\n'
            'static int runs;\n'
            'static int run_backup(void) { runs++; return 0; }\n'
            'int main(void)\n{\n'
            '    sqlease_db_options dbo;\n    sqlease_options o;\n'
            '    sqlease_db *db = NULL;\n    sqlease_supervisor *sup = NULL;\n'
            '    sqlease_error err;\n    const char *names[] = { "cron" };\n'
            '    int64_t fire_at_ms = 0;\n    int round;\n'
            '    sqlease_db_options_init(&dbo);\n'
            '    dbo.conn = "Driver=SQLite3;Database=fire.db";\n'
            '    sqlease_options_init(&o);\n    o.name = "cron";\n    o.host = "doc-host";\n'
            '    if (sqlease_db_open(&db, &dbo, &err) != SQLEASE_OK ||\n'
            '        sqlease_migrate(db, NULL, names, 1, &err) != SQLEASE_OK ||\n'
            '        sqlease_fire_migrate(db, NULL, &err) != SQLEASE_OK ||\n'
            '        sqlease_supervisor_start(&sup, db, &o, &err) != SQLEASE_OK ||\n'
            '        sqlease_supervisor_await(sup, 10000, &err) != SQLEASE_OK ||\n'
            '        sqlease_db_now_ms(db, &fire_at_ms, &err) != SQLEASE_OK)\n'
            '        return 2;\n'
            '    for (round = 0; round < 2; round++) {\n' + b.text +
            '    }\n'
            '    printf("runs %d\\n", runs);\n'
            '    sqlease_supervisor_free(sup);\n    sqlease_db_close(db);\n    return 0;\n}\n')
        exe = self.compile_c(program, 'fire')
        p = subprocess.run([exe], cwd=self.dir, env=self.env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        self.assertRegex(p.stdout.decode(), r'^backup at \d+: done on doc-host\nruns 1\n$')

    @runs('history-snippet')
    def test_history_snippet(self, b):
        """The holder history's snippet, after a supervisor held the lease
        and stopped: its hold, on this host, ended 'released'."""
        head, call = b.text.split('/* ... */')
        program = (
            '#include <sqlease.h>\n#include <stdio.h>\n#include <string.h>\n' + head +
            'int main(void)\n{\n'
            '    sqlease_db_options dbo;\n    sqlease_options o;\n'
            '    sqlease_db *db = NULL;\n    sqlease_supervisor *sup = NULL;\n'
            '    sqlease_error err;\n    const char *names[] = { "nightly" };\n'
            '    int64_t since_ms = 0;\n'
            '    sqlease_db_options_init(&dbo);\n'
            '    dbo.conn = "Driver=SQLite3;Database=history.db";\n'
            '    sqlease_options_init(&o);\n    o.name = "nightly";\n    o.host = "doc-host";\n'
            '    if (sqlease_db_open(&db, &dbo, &err) != SQLEASE_OK ||\n'
            '        sqlease_migrate(db, NULL, names, 1, &err) != SQLEASE_OK ||\n'
            '        sqlease_history_migrate(db, NULL, &err) != SQLEASE_OK ||\n'
            '        sqlease_supervisor_start(&sup, db, &o, &err) != SQLEASE_OK ||\n'
            '        sqlease_supervisor_await(sup, 10000, &err) != SQLEASE_OK)\n'
            '        return 2;\n'
            '    sqlease_supervisor_free(sup);\n' + call +
            '    sqlease_db_close(db);\n    return 0;\n}\n')
        exe = self.compile_c(program, 'history')
        p = subprocess.run([exe], cwd=self.dir, env=self.env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        self.assertRegex(p.stdout.decode(),
                         r'^\S+ token \d+ on doc-host pid \d+: \d+\.\.\d+ released, gap -1 ms\n$')

    @runs('config-synopsis')
    def test_config_synopsis(self, b):
        """The synopsis names exactly the flags `sqlease --help` does."""
        status, out = self.sh('sqlease --help')
        self.assertEqual(status, 0)
        flags = lambda t: set(re.findall(r'(?<![\w-])--[a-z][a-z-]*', t)) - {'--flag'}
        self.assertEqual(flags(b.text), flags(out))

    @runs('config-odbc-ini')
    def test_config_odbc_ini(self, b):
        """The SQLite DSN `jobs` with lease settings: migrate seeds its
        SqleaseName, and run uses its SqleaseTTL."""
        db = os.path.join(self.dir, 'jobs.db')
        text = b.text.replace('/var/lib/myapp/jobs.db', db)
        self.assertNotEqual(text, b.text)
        with open(self.odbcini, 'w', encoding='utf-8') as f:
            f.write(text)
        status, out = self.sh('sqlease --dsn jobs migrate')
        self.assertEqual(status, 0, out)
        self.assertIn("lease row 'nightly' present", out)
        status, out = self.sh('sqlease -v --dsn jobs run -- true')
        self.assertEqual(status, 0, out)
        self.assertIn("lease 'nightly'", out)
        self.assertIn('ttl 45000ms', out)

    @runs('contributing-layout')
    def test_contributing_layout(self, b):
        """Every path the layout names is in the tree."""
        missing, seen = [], 0
        for line in b.text.split('\n'):
            for word in re.findall(r'[A-Za-z][\w.{},\[\]-]*/[\w.{},\[\]/-]*', line):
                paths = [word.rstrip(':,;')]
                m = re.match(r'^(.*)\{([^}]*)\}(.*)$', word)
                if m:
                    paths = [m.group(1) + x + m.group(3) for x in m.group(2).split(',')]
                m2 = [re.match(r'^(.*)\.\[([a-z]+)\]$', p) for p in paths]
                if any(m2):
                    paths = [mm.group(1) + '.' + ch for mm in m2 if mm for ch in mm.group(2)]
                for path in paths:
                    seen += 1
                    if not os.path.exists(os.path.join(ROOT, path.rstrip('/'))):
                        missing.append(path)
        self.assertGreater(seen, 30)
        self.assertEqual(missing, [])

    @runs('operating-systemd')
    def test_operating_systemd(self, b):
        """The unit: Type=notify, KillMode=mixed.  Its ExecStart, run as
        systemd would (NOTIFY_SOCKET set), says READY=1 and its status,
        holds the lease, and on SIGTERM to sqlease alone stops CMD,
        releases the lease and exits 0 (STOPPING=1)."""
        unit = configparser.ConfigParser(strict=True, interpolation=None)
        unit.optionxform = str
        unit.read_string(b.text)
        svc = unit['Service']
        self.assertEqual((svc['Type'], svc['KillMode'], svc['Restart']),
                         ('notify', 'mixed', 'always'))
        self.dsn('prod', os.path.join(self.dir, 'prod.db'))
        job = os.path.join(self.dir, 'my-scheduler')
        with open(job, 'w', encoding='utf-8') as f:
            f.write('#!/bin/sh\necho "$SQLEASE_TOKEN" > %s/job-started\nexec sleep 60\n' % self.dir)
        os.chmod(job, 0o755)
        cmd = (svc['ExecStart'].replace('/usr/local/bin/sqlease', SQLEASE)
               .replace('/usr/local/bin/my-scheduler', job)).split()
        self.assertEqual(self.sh(SQLEASE + ' --dsn prod --name scheduler migrate')[0], 0)
        sock_path = os.path.join(self.dir, 'notify')
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(sock_path)
        sock.settimeout(0.2)
        env = dict(self.env, NOTIFY_SOCKET=sock_path)
        proc = subprocess.Popen(cmd, cwd=self.dir, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        said = []

        def await_said(pred, seconds):
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                if any(pred(m) for m in said):
                    return True
                try:
                    said.append(sock.recv(4096).decode())
                except socket.timeout:
                    pass
            return any(pred(m) for m in said)
        try:
            self.assertTrue(await_said(lambda m: 'READY=1' in m, 30), said)
            self.assertTrue(await_said(lambda m: 'STATUS=holding, token' in m, 30), said)
            started = os.path.join(self.dir, 'job-started')
            end = time.monotonic() + 10
            while not os.path.exists(started) and time.monotonic() < end:
                time.sleep(0.02)
            self.assertTrue(os.path.exists(started))
            proc.send_signal(signal.SIGTERM)  # KillMode=mixed: the main process alone
            self.assertEqual(proc.wait(timeout=30), 0)
            self.assertTrue(await_said(lambda m: 'STOPPING=1' in m, 5), said)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stderr.close()
            sock.close()
        self.assertIn('"held":false', self.status_json('--dsn', 'prod', '--name', 'scheduler'))

    @runs('kubernetes-deployment')
    def test_kubernetes_deployment(self, b):
        """The Deployment's container, run as its three replicas would be
        (the DSN in the environment, as the Secret gives it; the port 0
        instead of 8080, which may be taken here): each answers its
        probes' path with 200, and /leader is 200 on exactly one.  Then a
        SIGTERM, as Kubernetes sends, ends each with 0."""
        text = b.text
        command = json.loads(re.search(r'^\s*command: (\[.*\])$', text, re.M).group(1))
        args = json.loads(re.search(r'^\s*args: (\[.*\])$', text, re.M).group(1))
        replicas = int(re.search(r'^\s*replicas: (\d+)$', text, re.M).group(1))
        probes = re.findall(r'(\w+Probe):\n\s+httpGet:\n\s+path: (\S+)\n\s+port: (\d+)\n',
                            text)
        self.assertEqual(command, ['/usr/local/bin/sqlease'])
        self.assertEqual(replicas, 3)
        self.assertEqual(sorted(p[0] for p in probes), ['livenessProbe', 'readinessProbe'])
        self.assertEqual({(p[1], p[2]) for p in probes}, {('/health', '8080')})
        self.assertIn('0.0.0.0:8080', args)
        self.assertIn('- name: SQLEASE_DSN\n', text)
        self.assertIn('prometheus.io/port: "8080"', text)
        name = args[args.index('--name') + 1]
        env = dict(self.env, SQLEASE_DSN='Driver=SQLite3;Database=%s'
                   % os.path.join(self.dir, 'k8s.db'))
        p = subprocess.run([SQLEASE, '--name', name, 'migrate'], cwd=self.dir, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.assertEqual(p.returncode, 0, p.stdout.decode())
        job = os.path.join(self.dir, 'scheduler')
        with open(job, 'w', encoding='utf-8') as f:
            f.write('#!/bin/sh\nexec sleep 60\n')
        os.chmod(job, 0o755)
        argv = [SQLEASE] + [{'0.0.0.0:8080': '127.0.0.1:0', '/app/scheduler': job}.get(a, a)
                            for a in args]
        procs, errs = [], []
        try:
            for i in range(replicas):
                errs.append(open(os.path.join(self.dir, 'pod%d.err' % i), 'w+b'))
                procs.append(subprocess.Popen(argv, cwd=self.dir, env=env,
                                              stdin=subprocess.DEVNULL,
                                              stdout=subprocess.DEVNULL, stderr=errs[i]))
            ports = [self.await_http_port(proc, err) for proc, err in zip(procs, errs)]
            if None in ports:
                said = ''.join(open(e.name, encoding='utf-8').read() for e in errs)
                if 'has no HTTP support' in said:
                    self.assertNotEqual(os.environ.get('CI'), 'true', said)
                    self.skipTest('this sqlease is built without HTTP support')
                self.fail(said)
            end = time.monotonic() + 30
            while True:
                health = [http_status(port, '/health') for port in ports]
                leaders = [http_status(port, '/leader') for port in ports]
                if health == [200] * replicas and sorted(leaders) == [200] + [503] * (replicas - 1):
                    break
                self.assertLess(time.monotonic(), end, (health, leaders))
                time.sleep(0.1)
            for proc in procs:
                proc.send_signal(signal.SIGTERM)
            self.assertEqual([proc.wait(timeout=30) for proc in procs], [0] * replicas)
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            for err in errs:
                err.close()

    def check_cron_http(self, port):
        """`cron --http` on PORT: /leader 200 with the scheduler's hold,
        and the fires it claims counted up in /metrics."""
        def get(path):
            conn = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
            try:
                conn.request('GET', path)
                r = conn.getresponse()
                return r.status, r.read().decode()
            finally:
                conn.close()

        def claimed():
            status, text = get('/metrics')
            self.assertEqual(status, 200, text)
            m = re.search(r'^sqlease_fires_claimed_total\{name="jobs",owner="[^"]*"\} (\d+)$',
                          text, re.M)
            self.assertIsNotNone(m, text)
            return int(m.group(1))

        end = time.monotonic() + 15
        while get('/leader')[0] != 200 and time.monotonic() < end:
            time.sleep(0.05)
        status, text = get('/leader')
        self.assertEqual(status, 200, text)
        self.assertRegex(text, r"^holding lease 'jobs', token \d+, \d+ fire\(s\) running\n$")
        first, end = claimed(), time.monotonic() + 10
        while claimed() <= first and time.monotonic() < end:
            time.sleep(0.1)
        self.assertGreater(claimed(), first)

    def await_http_port(self, proc, err, seconds=30):
        """The port a `--http 127.0.0.1:0` process says it got, or None
        if it exits first or does not say within the time."""
        end = time.monotonic() + seconds
        mark = 'and /holder on http://127.0.0.1:'
        while time.monotonic() < end:
            with open(err.name, encoding='utf-8', errors='replace') as f:
                said = f.read()
            if mark in said:
                return int(re.match(r'\d+', said.split(mark, 1)[1]).group(0))
            if proc.poll() is not None:
                return None
            time.sleep(0.05)
        return None

    @runs('readme-odbc-ini')
    def test_readme_odbc_ini(self, b):
        """The README's DSN: found by the driver manager (the connect fails
        only at the made-up host), its password never shown."""
        self.check_private_dsn(b, 'sqlease --dsn prod --name nightly migrate')

    @runs('security-odbc-ini')
    def test_security_odbc_ini(self, b):
        """The private DSN and its use: the file made 0600, the DSN found
        (the connect fails only at the made-up host), no password shown."""
        path = self.check_private_dsn(
            b, BLOCKS['security-odbc-ini-use'].text.replace('~/.odbc.ini', '"$ODBCINI"'))
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)

    def check_private_dsn(self, b, use):
        path = os.path.join(self.dir, '.odbc.ini')
        with open(path, 'w', encoding='utf-8') as f:
            f.write(b.text)
        self.env['ODBCINI'] = path
        self.env['SQLEASE_LOGIN_TIMEOUT'] = '2s'
        status, out = self.sh(use)
        self.assertEqual(status, 69, out)
        self.assertNotIn('IM002', out)       # the DSN was found
        self.assertIn("cannot connect to 'prod'", out)
        self.assertNotIn('change-me', out)
        return path

    @runs('security-odbc-ini-use')
    def test_security_odbc_ini_use(self, b):
        """Run with the DSN block above (test_security_odbc_ini)."""
        self.assertIn('sqlease --dsn prod', b.text)
        self.assertIn('chmod 600 ~/.odbc.ini', b.text)

    @runs('security-dsn-file')
    def test_security_dsn_file(self, b):
        """The connection string in a file made with umask 077: status
        reads it; the file is 0600."""
        self.dsn('prod', os.path.join(self.dir, 'prod.db'))
        self.assertEqual(self.sh('sqlease --dsn prod --name nightly migrate')[0], 0)
        self.env['HOME'] = self.dir
        status, out = self.sh(b.text)
        self.assertEqual(status, 0, out)
        self.assertIn('lease:      nightly (table sys_job_lease, sqlite)', out)
        conn = os.path.join(self.dir, 'sqlease-prod.conn')
        self.assertEqual(stat.S_IMODE(os.stat(conn).st_mode), 0o600)

    @runs('security-dsn-file-refused')
    def test_security_dsn_file_refused(self, b):
        """The two refusals, as root (CI runs the tests as root): a file of
        mode 0640, then one given to uid 65534; each line as printed, the
        exit 64, and the file's password never shown."""
        if os.geteuid() != 0:
            self.assertNotEqual(os.environ.get('CI'), 'true', 'the tests do not run as root')
            self.skipTest('not root: cannot give a file to another user')
        lines = b.text.rstrip('\n').split('\n')
        self.assertEqual(len(lines), 2)
        conn = os.path.join(self.dir, 'sqlease-prod.conn')
        with open(conn, 'w', encoding='utf-8') as f:
            f.write('DSN=prod;UID=sqlease_job;PWD=change-me\n')
        shown = lambda line: line.replace('/root/sqlease-prod.conn', conn)
        os.chmod(conn, 0o640)
        status, out = self.sh('sqlease --dsn-file %s --name nightly status' % conn)
        self.assertEqual((status, out), (64, shown(lines[0]) + '\n'))
        os.chmod(conn, 0o600)
        os.chown(conn, 65534, -1)
        status, out = self.sh('sqlease --dsn-file %s --name nightly status' % conn)
        try:
            name = pwd.getpwuid(65534).pw_name
        except KeyError:
            name = None
        want = shown(lines[1])
        want = want.replace('(nobody)', '(%s)' % name) if name else want.replace(' (nobody)', '')
        self.assertEqual((status, out), (64, want + '\n'))
        self.assertNotIn('change-me', out)


def http_status(port, path):
    """The status of GET http://127.0.0.1:PORT/PATH, or None (no answer).
    http.client, not urllib: no proxy from the environment in between."""
    conn = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
    try:
        conn.request('GET', path)
        return conn.getresponse().status
    except (OSError, http.client.HTTPException):
        return None
    finally:
        conn.close()


class ManPage(unittest.TestCase):
    """sqlease(3): it names every call the header exports, renders without
    a warning, and its example builds and runs."""

    def setUp(self):
        with open(os.path.join(ROOT, 'src', 'sqlease.3'), encoding='utf-8') as f:
            self.page = f.read()
        with open(os.path.join(ROOT, 'include', 'sqlease.h'), encoding='utf-8') as f:
            self.header = f.read()

    def test_names_every_call(self):
        """Every SQLEASE_API function, by its macro's name where it has
        one (and the underscore function too), appears in the page."""
        calls = re.findall(r'^SQLEASE_API[^(]*?\b(sqlease_\w+)\(', self.header, re.M)
        self.assertGreater(len(calls), 30)
        text = self.page.replace('\\-', '-')
        missing = [c for c in calls if not re.search(r'\b%s\b' % re.escape(c), text)]
        macros = set(re.findall(r'^#define (sqlease_\w+|SQLEASE_FENCE_INIT)\(', self.header, re.M))
        missing += [m for m in macros if m not in text]
        self.assertEqual(missing, [])

    def test_version_is_the_headers(self):
        """Both man pages carry the version sqlease.h sets."""
        version = re.search(r'^#define SQLEASE_VERSION "([^"]+)"', self.header, re.M).group(1)
        for page in ('src/sqlease.3', 'src/cli/sqlease.1'):
            with open(os.path.join(ROOT, page), encoding='utf-8') as f:
                th = re.search(r'^\.TH .*$', f.read(), re.M).group(0)
            self.assertIn('"sqlease %s"' % version, th, page)

    def test_renders_without_warnings(self):
        groff = shutil.which('groff')
        if groff is None:
            # CI installs man-db, which brings groff: a skip there would
            # hide a package missing from the list.
            self.assertNotEqual(os.environ.get('CI'), 'true', 'groff is not installed')
            self.skipTest('groff is not installed')
        p = subprocess.run([groff, '-man', '-Tutf8', '-ww', '-z',
                            os.path.join(ROOT, 'src', 'sqlease.3')],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual((p.returncode, p.stderr.decode()), (0, ''))

    def test_example_builds_and_runs(self):
        """The EXAMPLE, unescaped from roff, compiles with -Werror, and
        against a migrated row holds, then stops at shutdown."""
        ex = re.search(r'^\.EX\n(.*?)^\.EE$', self.page, re.M | re.S).group(1)
        ex = ex.replace('\\e', '\\').replace('\\-', '-')
        t = DocTest('test_every_block_is_run')
        t.setUp()
        try:
            exe = t.compile_c(ex, 'man3')
            status, out = t.sh(SQLEASE + " --dsn 'Driver=SQLite3;Database=jobs.db' --name nightly"
                               " migrate")
            self.assertEqual(status, 0, out)
            p = subprocess.run([exe], cwd=t.dir, env=t.env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr.decode())
            self.assertRegex(p.stdout.decode(), r'^holding, token \d+\nstopped: shutdown\n$')
        finally:
            t.tearDown()


if __name__ == '__main__':
    import run_tests  # tests/run_tests.py: unittest.main() that leaves a result file

    run_tests.unittest_main()
