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

import os
import re
import shutil
import subprocess
import sys
import tempfile
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
        for var in ('SQLEASE_DSN', 'SQLEASE_NAME', 'SQLEASE_TABLE', 'SQLEASE_TTL',
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
        problems = [p for p in PROBLEMS if 'README.md' in p]
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
        self.dsn('prod', os.path.join(self.dir, 'prod.db'))
        cmd = b.text.replace('/usr/local/bin/sqlease', SQLEASE)
        self.assertNotEqual(cmd, b.text)
        status, out = self.sh(cmd)
        self.assertEqual(status, 0, out)
        self.assertIn("lease row 'nightly' present", out)
        self.assertIn('"held":false', self.status_json('--dsn', 'prod', '--name', 'nightly'))

    @runs('readme-crontab')
    def test_readme_crontab(self, b):
        """The crontab line on two hosts: one runs the job, the other finds
        the lease held for the minimum hold and exits 0 without a word."""
        fields = b.text.strip().split(None, 5)
        self.assertEqual(fields[:5], ['0', '3', '*', '*', '*'])
        self.dsn('prod', os.path.join(self.dir, 'prod.db'))
        backup = os.path.join(self.dir, 'backup.sh')
        with open(backup, 'w', encoding='utf-8') as f:
            f.write('#!/bin/sh\necho "$SQLEASE_OWNER" >> %s/ran\n' % self.dir)
        os.chmod(backup, 0o755)
        cmd = (fields[5].replace('/usr/local/bin/sqlease', SQLEASE)
               .replace('/usr/local/bin/backup.sh', backup))
        self.assertEqual(self.sh(SQLEASE + ' --dsn prod --name nightly migrate')[0], 0)
        status, out = self.sh(cmd.replace(' -q ', ' --owner host-a -q '))
        self.assertEqual((status, out), (0, ''))
        status, out = self.sh(cmd.replace(' -q ', ' --owner host-b -q '))
        self.assertEqual((status, out), (0, ''))
        with open(os.path.join(self.dir, 'ran'), encoding='utf-8') as f:
            self.assertEqual(f.read(), 'host-a\n')
        st = self.status_json('--dsn', 'prod', '--name', 'nightly')
        self.assertIn('"held":true', st)
        self.assertIn('"owner":"host-a"', st)

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


if __name__ == '__main__':
    import run_tests  # tests/run_tests.py: unittest.main() that leaves a result file

    run_tests.unittest_main()
