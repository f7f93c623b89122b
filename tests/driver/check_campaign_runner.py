#!/usr/bin/env python3
"""The GPU campaign's step runner (scripts/campaign/runner.py, outcome.py) without
a GPU (label campaign): a step whose command exits 0, fails, is stopped at its
cap, runs out of memory, is refused, or is skipped is recorded in status.tsv
with that outcome, read from exit statuses alone (never from printed text); a
training attempt that exits 0 without its result failed; the outcome names
are those of ptdp's step runner (core/process/outcome.h).
Standard library only.

Usage: check_campaign_runner.py
"""
import os
import re
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from campaign import outcome, training  # noqa: E402
from campaign.runner import Runner, Step, StepSkipped  # noqa: E402


class CampaignRunner(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out, self.work = (os.path.join(self.tmp.name, d) for d in ("out", "work"))
        os.makedirs(self.out)
        os.makedirs(self.work)
        self.runner = Runner(self.out, self.work, budget=120, pack_every=3600)

    def tearDown(self):
        self.runner.close(lambda: None)
        self.tmp.cleanup()

    def command_step(self, script, cap=30, oom_exit=outcome.OOM_EXIT):
        """A step running `sh -c script`, its outcome read from the exit status."""
        log = os.path.join(self.work, "logs", "step.log")
        return Step("s", cap, 1, lambda ctx, room: outcome.of_exit(self.runner.run(["sh", "-c", script], log, room),
                                                                     oom_exit))

    def row(self):
        with open(os.path.join(self.work, "status.tsv")) as f:
            lines = f.read().splitlines()
        self.assertEqual(lines[0].split("\t"), ["step", "status", "seconds", "note"])
        return lines[-1].split("\t")

    def test_each_exit_status_is_its_outcome(self):
        for script, expected in (("echo done", "ok"), ("echo ok; exit 1", "failed"), ("exit 2", "refused"),
                                 ("exit 4", "oom"), ("exit 3", "failed"), ("kill -9 $$", "failed")):
            self.assertEqual(self.runner.step(self.command_step(script), None), expected, script)
            self.assertEqual(self.row()[:2], ["s", expected], script)

    def test_the_baselines_out_of_memory_is_its_own_exit_status(self):
        self.assertEqual(self.runner.step(self.command_step("exit 3", oom_exit=3), None), "oom")

    def test_a_command_past_its_cap_is_stopped_as_timeout(self):
        self.assertEqual(self.runner.step(self.command_step("sleep 30", cap=1), None), "timeout")
        with open(os.path.join(self.work, "logs", "step.log")) as f:
            self.assertIn("stopped at its cap", f.read())

    def test_a_skipped_step_is_recorded_with_its_reason(self):
        def body(ctx, room):
            raise StepSkipped("no GPU (nvidia-smi lists none)")
        self.assertEqual(self.runner.step(Step("s", 30, 1, body), None), "skipped")
        self.assertEqual(self.row()[1::2], ["skipped", "no GPU (nvidia-smi lists none)"])
        self.assertEqual(self.runner.step(Step("late", 30, 500, body), None), "skipped")
        self.assertIn("out of time", self.row()[3])

    def test_a_step_that_breaks_or_answers_nonsense_failed(self):
        def broken(ctx, room):
            raise KeyError("metrics")
        self.assertEqual(self.runner.step(Step("s", 30, 1, broken), None), "failed")
        self.assertEqual(self.runner.step(Step("s", 30, 1, lambda ctx, room: "fine"), None), "failed")
        self.assertIn("not an outcome", self.row()[3])

    def test_a_training_attempt_needs_its_result_file(self):
        missing, result = os.path.join(self.work, "none.json"), os.path.join(self.work, "result.json")
        with open(result, "w") as f:
            f.write('{"metrics": {}}')
        self.assertEqual(training.outcome("ptdp", 0, missing), "failed")
        self.assertEqual(training.outcome("ptdp", 0, result), "ok")
        self.assertEqual(training.outcome("pytorch", 3, result), "oom")
        self.assertEqual(training.outcome("ptdp", 3, result), "failed")

    def test_a_step_of_parts_takes_the_first_that_did_not_pass(self):
        self.assertEqual(outcome.combined(["ok", "skipped", "oom", "failed"]), "oom")
        self.assertEqual(outcome.combined(["ok", "skipped"]), "ok")

    def test_the_names_are_those_of_ptdps_step_runner(self):
        with open(os.path.join(ROOT, "core", "process", "outcome.h")) as f:
            header = f.read()
        listed = re.search(r"kOutcomeNames = \{([^}]*)\}", header).group(1)
        names = re.findall(r'"([a-z_]+)"', listed)
        self.assertEqual(tuple(names[:len(outcome.OUTCOMES)]), outcome.OUTCOMES)
        enum = re.search(r"enum class Outcome : std::uint8_t \{([^}]*)\}", header).group(1)
        self.assertEqual([n.strip() for n in enum.split(",")], names)


if __name__ == "__main__":
    unittest.main()
