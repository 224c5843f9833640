#!/usr/bin/env python3
"""The test runner: runs test programs one after another and adds up what
they report.  `scons test` calls it with the suites of a build; ci/windows.sh
calls it with the Windows test programs, under Wine.

    run_tests.py [--timeout S] [--only "NAME ..."] [--work DIR] [--label L]
                 [--wrapper CMD] [--drain S] PROGRAM...

Each PROGRAM (a `.py` file runs with this Python, anything else as it is,
or behind --wrapper, e.g. `wine`) runs in its own process group and in a
fresh work directory DIR/NAME, NAME being its file name without extension;
its output is echoed as it comes.  A program still running after the
timeout is killed, and so is whatever a program leaves running in its
group when it ends.  Output that a process outside the group still writes
after the program ended is read for --drain seconds more (default 5).

Result files.  Every test program reports its counts in a result file,
NAME.PID.result, holding one line "PASSED FAILED" (two decimal numbers),
in the directory named by SQLEASE_RESULT_DIR.  The CUnit suites write
theirs through tests/testresult.c, the Windows programs through
tests/win/wintest.c, the Python ones through unittest_main() below.  Each
program gets a directory of its own; its counts are the sum of the files
found there.  A program that leaves no result file (it crashed, was
killed, or never got to its tests) counts as one failure, and so does one
that exits non-zero without reporting a failure.

The runner reports the same way one level up: when SQLEASE_RESULT_DIR is
set in its own environment, it leaves its total there, which is how
ci/test.sh and ci/matrix.sh count every test that ran (ci/results.sh).

Exit status: 0 if every program passed, 1 if any failed, 2 for bad usage.
"""

import argparse
import codecs
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time

RESULT_DIR_VAR = 'SQLEASE_RESULT_DIR'
RESULT_SUFFIX = '.result'
RESULT_LINE = re.compile(r'(\d+) (\d+)\n*')

# After a program ends, how long to go on reading output that a process
# outside its group (which the kill cannot reach) still writes to it.
DRAIN_SECONDS = 5.0
# How often a silent program is checked for its end and its timeout.
POLL_SECONDS = 0.05


def write_result(directory, name, passed, failed):
    """Leave a result file "PASSED FAILED" in directory.  Written under a
    temporary name and renamed, so that a reader never sees half a file."""
    fd, tmp = tempfile.mkstemp(prefix='.%s.' % name, dir=directory)
    with os.fdopen(fd, 'w') as f:
        f.write('%d %d\n' % (passed, failed))
    os.replace(tmp, os.path.join(directory, '%s.%d%s' % (name, os.getpid(), RESULT_SUFFIX)))


def read_results(directory):
    """(passed, failed, files) summed over the result files in directory.
    A file that is not one line of two numbers counts as one failure:
    whoever wrote it did not report properly."""
    passed = failed = files = 0
    try:
        names = sorted(os.listdir(directory))
    except FileNotFoundError:
        names = []
    for n in names:
        if not n.endswith(RESULT_SUFFIX):
            continue
        files += 1
        try:
            with open(os.path.join(directory, n), encoding='ascii') as f:
                m = RESULT_LINE.fullmatch(f.read())
        except (OSError, UnicodeDecodeError):
            m = None
        if m:
            passed += int(m.group(1))
            failed += int(m.group(2))
        else:
            print('run_tests: malformed result file %s' % os.path.join(directory, n))
            failed += 1
    return passed, failed, files


def unittest_main():
    """unittest.main() for the Python test programs, leaving their result
    file: skipped tests and expected failures count as neither passed nor
    failed, unexpected successes as failures."""
    import unittest

    prog = unittest.main(module='__main__', exit=False, verbosity=1)
    r = prog.result
    failed = len(r.failures) + len(r.errors) + len(r.unexpectedSuccesses)
    passed = r.testsRun - failed - len(r.skipped) - len(r.expectedFailures)
    directory = os.environ.get(RESULT_DIR_VAR)
    if directory:
        name = os.path.splitext(os.path.basename(sys.argv[0]))[0]
        write_result(directory, name, passed, failed)
    sys.exit(0 if r.wasSuccessful() else 1)


def kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_program(argv, cwd, env, timeout, drain=DRAIN_SECONDS):
    """Run argv in its own process group, echoing its output as it comes.
    Returns (exit status, note): the status is negative for a signal; the
    note says why the runner killed it, if it did."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    fd = proc.stdout.fileno()
    sel = selectors.DefaultSelector()
    sel.register(fd, selectors.EVENT_READ)
    decoder = codecs.getincrementaldecoder('utf-8')('replace')
    start = time.monotonic()
    exited_at = None
    note = ''
    while True:
        if sel.select(POLL_SECONDS):
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            sys.stdout.write(decoder.decode(chunk))
            sys.stdout.flush()
        now = time.monotonic()
        if exited_at is None:
            if proc.poll() is not None:
                exited_at = now
                kill_group(proc.pid)  # whatever it left behind in its group
            elif now - start > timeout:
                note = 'timed out after %gs, killed' % timeout
                kill_group(proc.pid)
                proc.wait()
                exited_at = now
        elif now - exited_at > drain:
            break  # a process outside the group still holds the pipe
    sys.stdout.write(decoder.decode(b'', final=True))
    sys.stdout.flush()
    sel.close()
    proc.stdout.close()
    rc = proc.wait()
    if rc < 0 and not note:
        note = 'killed by signal %d' % -rc
    return rc, note


def program_name(path):
    return os.path.splitext(os.path.basename(path))[0]


def command(path, wrapper):
    if path.endswith('.py'):
        return [sys.executable, path]
    return wrapper + [path]


def run_one(name, argv, work, env, timeout, drain=DRAIN_SECONDS):
    """Run one test program and count it.  Returns (passed, failed, line)."""
    cwd = os.path.join(work, name)
    results = os.path.join(work, name + '.results')
    os.makedirs(cwd)
    os.makedirs(results)
    child_env = dict(env)
    child_env[RESULT_DIR_VAR] = results
    print('==== %s ====' % name, flush=True)
    t0 = time.monotonic()
    rc, note = run_program(argv, cwd, child_env, timeout, drain)
    passed, failed, files = read_results(results)
    notes = [note] if note else []
    if files == 0:
        notes.append('no result file')
    ok = rc == 0 and failed == 0 and files > 0
    if not ok and failed == 0:
        failed = 1  # the program failed outside any counted test
    line = '%s %s (%d passed, %d failed, exit %d%s, %.1fs)' % (
        'PASS' if ok else 'FAIL', name, passed, failed, rc,
        ''.join(', ' + n for n in notes), time.monotonic() - t0)
    print(line, flush=True)
    return passed, failed, line


def main(args=None, env=None):
    p = argparse.ArgumentParser(description='Run test programs and add up their result files.')
    p.add_argument('--timeout', type=float, default=600,
                   help='seconds one program may run before it is killed (default 600)')
    p.add_argument('--only', default='',
                   help='names of the programs to run, space or comma separated (default: all)')
    p.add_argument('--work', default=None,
                   help='work directory, emptied first (default: a temporary one)')
    p.add_argument('--label', default='', help='what the summary heading names')
    p.add_argument('--wrapper', default='',
                   help='command put in front of every program that is not a .py file')
    p.add_argument('--drain', type=float, default=DRAIN_SECONDS,
                   help='seconds to go on reading output once a program has ended (default 5)')
    p.add_argument('programs', nargs='+', metavar='PROGRAM')
    a = p.parse_args(args)
    env = dict(os.environ if env is None else env)

    programs = [(program_name(path), command(os.path.abspath(path), a.wrapper.split()))
                for path in a.programs]
    wanted = set(t for t in re.split(r'[\s,]+', a.only) if t)
    if wanted:
        missing = wanted - set(name for name, _ in programs)
        if missing:
            print('run_tests: no such test: %s' % ', '.join(sorted(missing)))
            return 2
        programs = [prog for prog in programs if prog[0] in wanted]

    own_work = a.work is None
    work = tempfile.mkdtemp(prefix='sqlease-tests-') if own_work else os.path.abspath(a.work)
    if not own_work:
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)

    lines = []
    total_passed = total_failed = 0
    for name, argv in programs:
        passed, failed, line = run_one(name, argv, work, env, a.timeout, a.drain)
        total_passed += passed
        total_failed += failed
        lines.append(line)
    if own_work:
        shutil.rmtree(work, ignore_errors=True)

    print('==== summary%s ====' % (' (%s)' % a.label if a.label else ''))
    for line in lines:
        print(line)
    print('%d passed, %d failed' % (total_passed, total_failed), flush=True)
    if env.get(RESULT_DIR_VAR):
        write_result(env[RESULT_DIR_VAR], 'run_tests', total_passed, total_failed)
    return 1 if total_failed else 0


if __name__ == '__main__':
    sys.exit(main())
