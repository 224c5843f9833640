#!/usr/bin/env python3
"""Tests of tests/run_tests.py, the test runner: how it counts result
files, and what it does with programs that fail, crash, hang, leave
processes behind or do not report.  The programs it runs here are the
fakes in tests/runner/.  Run: python3 tests/test_run_tests.py
"""

import contextlib
import io
import os
import shutil
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_tests  # noqa: E402

FAKES = os.path.join(HERE, 'runner')


def fake(name):
    return os.path.join(FAKES, name + '.sh')


def gone(pid):
    """True once pid has ended: no process, or only its zombie (whoever
    reaps orphans here may not have yet)."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            state = f.read().rsplit(')', 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ('Z', 'X')


class RunnerCase(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix='sqlease-runner-test-')
        self.addCleanup(shutil.rmtree, self.work, True)

    def run_one(self, name, timeout=30, drain=run_tests.DRAIN_SECONDS):
        """run_tests.run_one on a fake; returns (passed, failed, line,
        output, seconds)."""
        out = io.StringIO()
        t0 = time.monotonic()
        with contextlib.redirect_stdout(out):
            passed, failed, line = run_tests.run_one(
                name, run_tests.command(fake(name), []), self.work, dict(os.environ), timeout,
                drain)
        return passed, failed, line, out.getvalue(), time.monotonic() - t0


class ResultFiles(RunnerCase):
    def test_written_file_is_read_back(self):
        run_tests.write_result(self.work, 'x', 7, 2)
        names = os.listdir(self.work)
        self.assertEqual(names, ['x.%d.result' % os.getpid()])
        with open(os.path.join(self.work, names[0])) as f:
            self.assertEqual(f.read(), '7 2\n')
        self.assertEqual(run_tests.read_results(self.work), (7, 2, 1))

    def test_files_add_up_and_others_are_ignored(self):
        for name, text in (('a.result', '3 0\n'), ('b.result', '4 1'),
                           ('.b.tmp', '100 100\n'), ('notes.txt', '9 9\n')):
            with open(os.path.join(self.work, name), 'w') as f:
                f.write(text)
        self.assertEqual(run_tests.read_results(self.work), (7, 1, 2))

    def test_malformed_file_is_one_failure(self):
        for name, text in (('a.result', '2 0\n'), ('b.result', '3 passed, 0 failed\n'),
                           ('c.result', ''), ('d.result', '1 2 3\n')):
            with open(os.path.join(self.work, name), 'w') as f:
                f.write(text)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            self.assertEqual(run_tests.read_results(self.work), (2, 3, 4))
        self.assertIn('malformed result file', out.getvalue())

    def test_no_directory_no_files(self):
        self.assertEqual(run_tests.read_results(os.path.join(self.work, 'none')), (0, 0, 0))


class Programs(RunnerCase):
    def test_passing_program(self):
        passed, failed, line, out, _ = self.run_one('fake_pass')
        self.assertEqual((passed, failed), (3, 0))
        self.assertTrue(line.startswith('PASS fake_pass (3 passed, 0 failed, exit 0, '), line)
        self.assertIn('fake_pass: 3 tests', out)  # its output was echoed

    def test_failing_program(self):
        passed, failed, line, _, _ = self.run_one('fake_fail')
        self.assertEqual((passed, failed), (2, 1))
        self.assertTrue(line.startswith('FAIL fake_fail (2 passed, 1 failed, exit 1, '), line)

    def test_nonzero_exit_without_a_failure_is_one(self):
        passed, failed, line, _, _ = self.run_one('fake_exit')
        self.assertEqual((passed, failed), (4, 1))
        self.assertTrue(line.startswith('FAIL fake_exit (4 passed, 1 failed, exit 3, '), line)

    def test_crash_before_the_result_file(self):
        passed, failed, line, out, _ = self.run_one('fake_crash')
        self.assertEqual((passed, failed), (0, 1))
        self.assertIn('exit -11, killed by signal 11, no result file', line)
        self.assertIn('fake_crash: about to crash', out)

    def test_no_result_file_is_a_failure_even_with_exit_0(self):
        passed, failed, line, _, _ = self.run_one('fake_silent')
        self.assertEqual((passed, failed), (0, 1))
        self.assertIn('FAIL fake_silent (0 passed, 1 failed, exit 0, no result file', line)

    def test_malformed_result_file(self):
        passed, failed, line, _, _ = self.run_one('fake_garbled')
        self.assertEqual((passed, failed), (0, 1))
        self.assertTrue(line.startswith('FAIL fake_garbled (0 passed, 1 failed, exit 0, '), line)

    def test_timeout_kills_the_program_and_its_group(self):
        passed, failed, line, out, took = self.run_one('fake_hang', timeout=0.2)
        self.assertEqual((passed, failed), (0, 1))
        self.assertIn('exit -9, timed out after 0.2s, killed, no result file', line)
        self.assertIn('fake_hang: hanging', out)
        self.assertLess(took, 0.2 + run_tests.DRAIN_SECONDS)
        with open(os.path.join(self.work, 'fake_hang', 'hang.pid')) as f:
            pid = int(f.read())
        end = time.monotonic() + 5
        while not gone(pid) and time.monotonic() < end:
            time.sleep(0.05)
        self.assertTrue(gone(pid), 'the process fake_hang started survived the timeout')

    def test_what_a_program_leaves_in_its_group_is_killed(self):
        passed, failed, line, _, took = self.run_one('fake_leave')
        self.assertEqual((passed, failed), (1, 0))
        self.assertTrue(line.startswith('PASS fake_leave (1 passed, 0 failed, exit 0, '), line)
        # Its leftover held the output pipe: killed, not waited for.
        self.assertLess(took, run_tests.DRAIN_SECONDS)
        with open(os.path.join(self.work, 'fake_leave', 'leave.pid')) as f:
            pid = int(f.read())
        end = time.monotonic() + 5
        while not gone(pid) and time.monotonic() < end:
            time.sleep(0.05)
        self.assertTrue(gone(pid), 'the process fake_leave left behind survived')


    def test_output_held_outside_the_group_is_read_for_the_drain_time(self):
        passed, failed, line, _, took = self.run_one('fake_escape', drain=0.2)
        with open(os.path.join(self.work, 'fake_escape', 'escape.pid')) as f:
            pid = int(f.read())
        os.kill(pid, 9)  # out of the runner's reach: ours to stop
        self.assertEqual((passed, failed), (1, 0))
        self.assertTrue(line.startswith('PASS fake_escape (1 passed, 0 failed, exit 0, '), line)
        self.assertGreaterEqual(took, 0.2)
        self.assertLess(took, run_tests.DRAIN_SECONDS)


class Main(RunnerCase):
    def main(self, args, env):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = run_tests.main(args, env)
        return rc, out.getvalue()

    def test_total_and_aggregate_result_file(self):
        outer = os.path.join(self.work, 'outer')
        os.makedirs(outer)
        env = dict(os.environ, SQLEASE_RESULT_DIR=outer)
        rc, out = self.main(['--work', os.path.join(self.work, 'w'), '--label', 'fakes',
                             fake('fake_pass'), fake('fake_fail'), fake('fake_crash')], env)
        self.assertEqual(rc, 1)
        self.assertIn('==== summary (fakes) ====\n', out)
        self.assertTrue(out.endswith('5 passed, 2 failed\n'), out[-200:])
        self.assertEqual(run_tests.read_results(outer), (5, 2, 1))
        # Each program ran in a work directory of its own.
        for name in ('fake_pass', 'fake_fail', 'fake_crash'):
            self.assertTrue(os.path.isdir(os.path.join(self.work, 'w', name)))

    def test_only_and_all_passing(self):
        outer = os.path.join(self.work, 'outer')
        os.makedirs(outer)
        env = dict(os.environ, SQLEASE_RESULT_DIR=outer)
        rc, out = self.main(['--only', 'fake_pass,fake_leave', fake('fake_pass'),
                             fake('fake_fail'), fake('fake_leave')], env)
        self.assertEqual(rc, 0)
        self.assertNotIn('fake_fail', out)
        self.assertTrue(out.endswith('4 passed, 0 failed\n'), out[-200:])
        self.assertEqual(run_tests.read_results(outer), (4, 0, 1))

    def test_unknown_name_runs_nothing(self):
        outer = os.path.join(self.work, 'outer')
        os.makedirs(outer)
        env = dict(os.environ, SQLEASE_RESULT_DIR=outer)
        rc, out = self.main(['--only', 'fake_pass no_such', fake('fake_pass')], env)
        self.assertEqual(rc, 2)
        self.assertIn('no such test: no_such', out)
        self.assertEqual(run_tests.read_results(outer), (0, 0, 0))

    def test_without_a_result_dir_nothing_is_left(self):
        env = dict(os.environ)
        env.pop('SQLEASE_RESULT_DIR', None)
        rc, out = self.main([fake('fake_pass')], env)
        self.assertEqual(rc, 0)
        self.assertTrue(out.endswith('3 passed, 0 failed\n'), out[-200:])


if __name__ == '__main__':
    run_tests.unittest_main()
