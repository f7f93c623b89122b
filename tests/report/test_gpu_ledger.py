"""scripts/gpu_ledger.py: a campaign's tests and steps recorded with the pack's
commit, the date and the GPU (a failure keeps the last pass); a rehearsal
without a GPU refused; sync adds and drops tests by the program's list; check
fails when the ledger or its rendering is stale."""
import json
import os
import stat
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gpu_ledger.py"
sys.path.insert(0, str(ROOT / "report"))
from ptdp_report.load import read_json  # noqa: E402


def fake_program(folder, tests):
    """A stand-in test program that lists `tests` (Suite.Name) as GoogleTest does."""
    suites = {}
    for t in tests:
        suite, _, name = t.partition(".")
        suites.setdefault(suite, []).append(name)
    listing = "".join(f"{s}.\n" + "".join(f"  {n}\n" for n in names) for s, names in suites.items())
    path = Path(folder) / "fake_tests"
    path.write_text("#!/bin/sh\ncat <<'END'\n" + listing + "END\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def campaign_folder(folder, tests, steps, commit="abc123def4567890", device="cuda"):
    w = Path(folder)
    w.mkdir(parents=True, exist_ok=True)
    (w / "pack-manifest.json").write_text(json.dumps({"commit": commit}))
    (w / "env.json").write_text(json.dumps({"date": "2026-12-01T10:00:00Z", "device": device,
                                            "gpu": "NVIDIA H100 80GB HBM3" if device == "cuda" else None}))
    (w / "tests.tsv").write_text("test\tstatus\tseconds\tprocess\tnote\talone\n" +
                                 "".join(f"{t}\t{s}\t0.1\t1\t\t\n" for t, s in tests.items()))
    (w / "status.tsv").write_text("step\tstatus\tseconds\tnote\n" + "".join(f"{k}\t{v}\t1\t\n" for k, v in steps.items()))
    return str(w)


class GpuLedger(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.ledger, self.doc = Path(self.tmp.name) / "ledger.json", Path(self.tmp.name) / "ledger.md"

    def tearDown(self):
        self.tmp.cleanup()

    def run_ledger(self, *args):
        return subprocess.run([sys.executable, str(SCRIPT), "--ledger", str(self.ledger), "--doc", str(self.doc), *args],
                              capture_output=True, text=True)

    def test_record_keeps_the_last_pass_through_a_later_failure(self):
        prog = fake_program(self.tmp.name, ["A.one", "A.two", "B.three"])
        self.assertEqual(self.run_ledger("sync", "--binary", prog).returncode, 0)
        first = campaign_folder(Path(self.tmp.name) / "c1", {"A.one": "passed", "A.two": "failed", "B.three": "not-run"},
                                {"env": "ok", "headline": "ok", "tests": "failed", "ncu": "skipped"})
        r = self.run_ledger("record", first, "--gpu", "h100")
        self.assertEqual(r.returncode, 0, r.stderr)
        second = campaign_folder(Path(self.tmp.name) / "c2", {"A.one": "crashed"}, {"headline": "failed"},
                                 commit="fff000fff000fff0")
        self.assertEqual(self.run_ledger("record", second, "--gpu", "h200").returncode, 0)
        t = read_json(self.ledger)
        self.assertEqual(t["tests"]["A.one"]["last_passed"]["commit"], "abc123def4567890")
        self.assertEqual(t["tests"]["A.one"]["last_passed"]["gpu"], "h100")
        self.assertEqual(t["tests"]["A.one"]["last_run"]["status"], "crashed")
        self.assertIsNone(t["tests"]["A.two"]["last_passed"])
        self.assertIsNone(t["tests"]["B.three"]["last_run"])  # not run: nothing to record
        self.assertEqual(t["steps"]["headline"]["last_passed"]["date"], "2026-12-01")
        self.assertEqual(t["steps"]["headline"]["last_run"]["status"], "failed")
        self.assertIsNone(t["steps"]["ncu"]["last_run"])  # skipped: it did not run
        doc = self.doc.read_text()
        self.assertIn("| A.one | 2026-12-01, abc123def456, h100 | 2026-12-01, fff000fff000, h200 (crashed) |", doc)
        self.assertIn("GPU tests that have passed on a GPU: 1 of 3.", doc)

    def test_a_rehearsal_without_a_gpu_is_refused(self):
        w = campaign_folder(Path(self.tmp.name) / "cpu", {"A.one": "passed"}, {"env": "ok"}, device="cpu")
        r = self.run_ledger("record", w, "--gpu", "h100")
        self.assertEqual(r.returncode, 2)
        self.assertFalse(self.ledger.exists())
        self.assertEqual(self.run_ledger("record", w, "--gpu", "H100;rm").returncode, 2)

    def test_a_ledger_with_a_key_twice_is_refused(self):
        self.ledger.write_text('{"schema": "ptdp.gpu_ledger/1", "tests": {}, "tests": {}, "steps": {}}')
        r = self.run_ledger("check", "--binary", fake_program(self.tmp.name, ["A.one"]))
        self.assertEqual(r.returncode, 2)
        self.assertIn('ledger.json: the key "tests" appears twice in one object', r.stderr)

    def test_check_fails_until_sync_follows_the_program(self):
        prog = fake_program(self.tmp.name, ["A.one"])
        self.run_ledger("sync", "--binary", prog)
        self.assertEqual(self.run_ledger("check", "--binary", prog).returncode, 0)
        grown = fake_program(Path(self.tmp.name), ["A.one", "C.new"])
        r = self.run_ledger("check", "--binary", grown)
        self.assertEqual(r.returncode, 1)
        self.assertIn("C.new", r.stdout)
        self.run_ledger("sync", "--binary", grown)
        self.assertEqual(self.run_ledger("check", "--binary", grown).returncode, 0)
        self.doc.write_text(self.doc.read_text() + "edited by hand\n")
        self.assertEqual(self.run_ledger("check", "--binary", grown).returncode, 1)


if __name__ == "__main__":
    unittest.main()
