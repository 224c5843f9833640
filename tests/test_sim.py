#!/usr/bin/env python3
"""The simulator (tests/sim/, build/sim/bin/sqlease-sim): the library's
own engine, supervisor, lease and statement code on a simulated platform
and database under a seed.

Checked here: a short run of the real code finds no violation and runs
every kind of statement and event the scenario mix has; a seed's trace is
the same bytes twice (the schedule is the seed's, a group's included);
the planted bugs are listed; and each of the three races planted back
(`--plant`: a stale hold released while its on_stopped runs; an
on_started delivered after its hold ended; a fifth stuck connection at
the cap on abandoned ones) is found within a seed budget, naming what
broke.  A developer's quick look, a minute at most: ci/sim.sh runs the
long one (thousands of seeds of each scenario, and every plant), so the
seed counts here are only what it takes to run every kind once.
Run: python3 tests/test_sim.py (after `scons sim`)
"""

import os
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("SQLEASE_BUILDDIR", os.path.join(ROOT, "build"))
BIN = os.path.join(BUILD, "sim", "bin")


# What only the hand-over scenario (--scenario handoff) runs.
HANDOFF_KINDS = ("ready_list", "handoff_request", "handoff_cancel", "handoff", "handoff_ask",
                 "handed", "dead_target", "preempt", "end_handed_over")


def sim(name, *args, timeout=600):
    """Run one simulator binary: (exit status, stdout)."""
    p = subprocess.run([os.path.join(BIN, name)] + [str(a) for a in args],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout


class Simulator(unittest.TestCase):

    def setUp(self):
        if not os.path.exists(os.path.join(BIN, "sqlease-sim")):
            # Built where SQLite's headers are (libsqlite3-dev, which CI
            # installs): a skip there would hide the missing package.
            self.assertNotEqual(os.environ.get("CI"), "true",
                                "build/sim/bin/sqlease-sim was not built")
            self.skipTest("the simulator is not built (scons sim needs libsqlite3-dev)")

    def test_real_code_has_no_violation(self):
        rc, out = sim("sqlease-sim", "--seeds", 150)
        last = out.strip().splitlines()[-1]
        self.assertEqual(rc, 0, out[-3000:])
        self.assertRegex(last, r"^150 seeds \(from 1\), \d+ simulated s, \d+ statements, "
                               r"\d+ faults, 0 violations, slowest recovery [\d.]+ s$")
        # It did something: statements and faults, not an empty history.
        stmts = int(last.split(" statements")[0].rsplit(" ", 1)[1])
        faults = int(last.split(" faults")[0].rsplit(" ", 1)[1])
        self.assertGreater(stmts, 150 * 100, last)
        self.assertGreater(faults, 150 * 10, last)
        # Every path of the scenario mix ran (clock steps need
        # --clock-steps; "other" counts texts the simulator does not know).
        kinds = [l for l in out.splitlines() if l.startswith("kinds: ")][0]
        counts = dict(kv.split("=") for kv in kinds.split()[1:])
        never = [k for k, v in counts.items() if v == "0" and k not in ("clock_step", "other")
                 and k not in HANDOFF_KINDS]
        self.assertEqual(never, [], kinds)
        for kind in ("renew_each", "take_each", "release_each", "release_force", "repair",
                     "reseed", "null_repair", "twin", "owner_reuse", "group_move", "gone_stop",
                     "fire_claim", "fire_end", "fire_prune", "hold_start", "hold_end",
                     "fire_run", "end_lost"):
            self.assertIn(kind, counts, kinds)

    def test_handoff_scenario(self):
        # Ready followers, hand-overs to live and dead targets, requests
        # withdrawn and priorities that preempt: no violation, and every
        # one of them ran.
        rc, out = sim("sqlease-sim", "--seeds", 60, "--scenario", "handoff")
        self.assertEqual(rc, 0, out[-3000:])
        self.assertRegex(out.strip().splitlines()[-1], r"^60 seeds \(from 1\), .* 0 violations")
        kinds = [l for l in out.splitlines() if l.startswith("kinds: ")][0]
        counts = dict(kv.split("=") for kv in kinds.split()[1:])
        for kind in HANDOFF_KINDS:
            self.assertGreater(int(counts[kind]), 0, kinds)
        # Its plants, each found at once: a hand-over sent while the old
        # work stops, a preemption at an equal priority, one before
        # preempt_after, and a reservation that never ends.
        for plant, pattern in (
                ("handoff_during_on_stopped", r"lease-\d+: p\d+ starts \(token \d+\) while p\d+'s "
                                              r"work runs"),
                ("handoff_equal_priority_preempts", r"p\d+ \(priority (\d+)\) asked lease-\d+'s "
                                                    r"holder p\d+ \(priority \1\)"),
                ("handoff_preempt_ignores_min_hold", r"under preempt_after"),
                ("handoff_reservation_never_ends", r"a hand-over to gone, which no live process "
                                                   r"is")):
            rc, out = sim("sqlease-sim", "--plant", plant, "--seeds", 50, "--first",
                          "--scenario", "handoff")
            self.assertEqual(rc, 1, plant + ": " + out[-2000:])
            self.assertRegex(out, pattern, plant)

    def test_more_processes_and_leases(self):
        # Five processes with six leases each (six renew groups) on one
        # table: more callbacks per handle than pool threads at times.
        rc, out = sim("sqlease-sim", "--seeds", 30, "--processes", 5, "--leases", 6)
        self.assertEqual(rc, 0, out[-3000:])
        self.assertRegex(out.strip().splitlines()[-1], r"^30 seeds \(from 1\), .* 0 violations")

    def test_database_clock_steps_need_the_watch(self):
        # Steps of the database's clock: with the followers' watch (the
        # default), no overlap; with the old rule (take by the database's
        # expiry alone), found at once.
        rc, out = sim("sqlease-sim", "--seeds", 100, "--clock-steps")
        self.assertEqual(rc, 0, out[-3000:])
        self.assertIn(" 0 violations", out)
        rc, out = sim("sqlease-sim", "--seeds", 200, "--clock-steps", "--by-expiry", "--first")
        self.assertEqual(rc, 1, out[-2000:])
        self.assertRegex(out, r"lease-\d+: p\d+ starts \(token \d+\) while p\d+'s work runs")

    def test_plants_are_listed(self):
        # The plants are the uses of SQLE_PLANTED, each named once.
        rc, out = sim("sqlease-sim", "--list-plants")
        self.assertEqual(rc, 0, out)
        names = out.split()
        self.assertEqual(names, sorted(set(names)))
        for name in ("release_during_on_stopped", "on_started_after_its_hold",
                     "fifth_stuck_connection", "renew_lost_is_error", "take_by_expiry",
                     "fire_claim_unfenced", "start_run_trusts_claim_gen", "once_catches_up_all",
                     "hold_end_says_released"):
            self.assertIn(name, names)
        rc, out = sim("sqlease-sim", "--plant", "no_such_bug", "--seeds", 1)
        self.assertEqual(rc, 64, out)
        self.assertIn("no plant 'no_such_bug'", out)

    def test_replay_is_the_same_bytes(self):
        rc1, a = sim("sqlease-sim", "--replay", 7)
        rc2, b = sim("sqlease-sim", "--replay", 7)
        _, g1 = sim("sqlease-sim", "--replay", 9)  # a group's
        _, g2 = sim("sqlease-sim", "--replay", 9)
        self.assertEqual(g1, g2)
        self.assertEqual((rc1, rc2), (0, 0))
        self.assertEqual(a, b)
        self.assertGreater(len(a.splitlines()), 200)
        self.assertIn(" started token ", a)
        rc3, c = sim("sqlease-sim", "--replay", 8)
        self.assertNotEqual(a, c)

    def test_finds_a_release_sent_while_on_stopped_runs(self):
        rc, out = sim("sqlease-sim", "--plant", "release_during_on_stopped", "--seeds", 200,
                      "--first")
        self.assertEqual(rc, 1, out[-2000:])
        self.assertRegex(out, r"VIOLATION seed \d+ at [\d.]+ s: p\d+ lease-\d+: release of token "
                              r"\d+ sent while its (on_stopped runs|work runs \(before on_stopped\))")

    def test_finds_an_on_started_delivered_after_its_hold(self):
        rc, out = sim("sqlease-sim", "--plant", "on_started_after_its_hold", "--seeds", 1000,
                      "--first")
        self.assertEqual(rc, 1, out[-2000:])
        self.assertRegex(out, r"VIOLATION seed \d+ at [\d.]+ s: (p\d+ lease-\d+: on_started "
                              r"\(token \d+\) \d+ ms past its proof \+ renew_deadline|"
                              r"lease-\d+: p\d+ starts (\(token \d+\) while p\d+'s work runs|"
                              r"with token \d+, not above))")

    def test_finds_a_fifth_stuck_connection(self):
        rc, out = sim("sqlease-sim", "--plant", "fifth_stuck_connection", "--seeds", 200,
                      "--first")
        self.assertEqual(rc, 1, out[-2000:])
        self.assertRegex(out, r"VIOLATION seed \d+ at [\d.]+ s: p\d+: 5 calls of one handle "
                              r"\(family \d+\) in the database at once")
        # The seed's replay shows the same violation at the same moment:
        # what a run finds, its trace explains.
        first = [l for l in out.splitlines() if l.startswith("VIOLATION")][0]
        seed = first.split()[2]
        rc, trace = sim("sqlease-sim", "--plant", "fifth_stuck_connection", "--replay", seed)
        self.assertEqual(rc, 1, trace[-2000:])
        self.assertIn(first, trace.splitlines())


if __name__ == "__main__":
    import run_tests  # tests/run_tests.py: unittest.main() that leaves a result file

    run_tests.unittest_main()
