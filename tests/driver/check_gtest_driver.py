#!/usr/bin/env python3
"""scripts/gtest_driver.py against tests/driver/standin_tests.cpp, whose tests
pass, fail, skip, crash, hang and leave the process broken: every outcome is
recorded with its process, the tests after each resume in a fresh process, the
failures are rerun alone, a resumed table runs nothing again, --only-failed
selects the failures, the budget ends the run with the rest marked not run,
and bad input is refused (exit 2). Standard library only.

Usage: check_gtest_driver.py --driver scripts/gtest_driver.py --standin BINARY
"""
import argparse
import os
import subprocess
import sys
import tempfile
import unittest

ARGS = None


def drive(out, *extra):
    cmd = [sys.executable, ARGS.driver, "--binary", ARGS.standin, "--out", out, "--sanitizer", "none", *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=110)


def table(out):
    with open(os.path.join(out, "tests.tsv")) as f:
        lines = f.read().splitlines()
    head = lines[0].split("\t")
    return {row[0]: dict(zip(head, row)) for row in (l.split("\t") for l in lines[1:])}


class GtestDriver(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "run")
        cls.first = drive(cls.out, "--test-timeout", "3", "--budget", "60", "--rerun-budget", "40")
        cls.rows = table(cls.out)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_outcome_is_recorded_and_the_rest_resume_in_fresh_processes(self):
        r = self.rows
        expect = {"Standin.PassesFirst": ("passed", "1"), "Standin.Fails": ("failed", "1"),
                  "Standin.Skips": ("skipped", "1"), "Standin.Crashes": ("crashed", "1"),
                  "Standin.PassesAfterTheCrash": ("passed", "2"), "Standin.Hangs": ("hang", "2"),
                  "Standin.PassesAfterTheHang": ("passed", "3"), "Standin.LeavesAStickyError": ("broken", "3"),
                  "Standin.PassesAfterTheStickyError": ("passed", "4"), "StandinTyped.PassesLast": ("passed", "4")}
        self.assertEqual(set(r), set(expect), self.first.stdout)
        for name, (status, process) in expect.items():
            self.assertEqual((r[name]["status"], r[name]["process"]), (status, process), name)
        self.assertIn("SIGSEGV", r["Standin.Crashes"]["note"])
        self.assertIn("planted sticky error", r["Standin.LeavesAStickyError"]["note"])
        self.assertIn("Failure", r["Standin.Fails"]["note"])
        self.assertIn("no end within 3 s", r["Standin.Hangs"]["note"])
        self.assertEqual(self.first.returncode, 1, self.first.stdout + self.first.stderr)
        for n in range(1, 5):
            self.assertTrue(os.path.isfile(os.path.join(self.out, "logs", f"process-{n}.log")))

    def test_failures_are_rerun_alone_with_blocking_launches(self):
        r = self.rows
        alone = {"Standin.Fails": "exit 1", "Standin.Crashes": "crashed (SIGSEGV)",
                 "Standin.Hangs": "no end within 3 s", "Standin.LeavesAStickyError": "exit 86"}
        for name, outcome in alone.items():
            self.assertIn(f"alone with CUDA_LAUNCH_BLOCKING=1: {outcome}", r[name]["alone"], name)
            self.assertIn("memcheck: not run", r[name]["alone"], name)
        self.assertEqual(r["Standin.PassesFirst"]["alone"], "")
        with open(os.path.join(self.out, "alone", "Standin.Fails.log")) as f:
            self.assertIn("a planted failure", f.read())

    def test_a_resumed_table_runs_nothing_again(self):
        again = drive(self.out, "--test-timeout", "3")
        self.assertEqual(again.returncode, 1)
        self.assertNotIn("process 1", again.stdout)
        self.assertEqual(table(self.out), self.rows)

    def test_only_failed_selects_what_did_not_pass(self):
        out = os.path.join(self.tmp.name, "only")
        r = drive(out, "--only-failed", os.path.join(self.out, "tests.tsv"), "--test-timeout", "2",
                  "--rerun-limit", "0")
        rows = table(out)
        self.assertEqual(set(rows), {"Standin.Fails", "Standin.Crashes", "Standin.Hangs",
                                     "Standin.LeavesAStickyError"}, r.stdout)
        self.assertEqual(rows["Standin.Hangs"]["status"], "hang")

    def test_the_budget_ends_the_run_and_the_rest_are_marked_not_run(self):
        out = os.path.join(self.tmp.name, "short")
        r = drive(out, "--test-timeout", "30", "--budget", "12", "--rerun-limit", "0")
        rows = table(out)
        self.assertEqual(rows["Standin.PassesAfterTheCrash"]["status"], "passed", r.stdout)
        self.assertEqual(rows["Standin.Hangs"]["status"], "not-run")
        self.assertIn("out of time", rows["Standin.Hangs"]["note"])
        self.assertEqual(rows["StandinTyped.PassesLast"]["status"], "not-run")
        self.assertEqual(r.returncode, 1)

    def test_bad_input_is_refused(self):
        out = os.path.join(self.tmp.name, "bad")
        for extra, field in ((["--test-timeout", "0"], "--test-timeout"), (["--budget", "nan"], "--budget"),
                             (["--rerun-limit", "-1"], "--rerun-limit")):
            r = drive(out, *extra)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(field, r.stderr)
        r = subprocess.run([sys.executable, ARGS.driver, "--binary", ARGS.driver + ".absent", "--out", out],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--binary", r.stderr)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--driver", required=True)
    ap.add_argument("--standin", required=True)
    ARGS, rest = ap.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest)
