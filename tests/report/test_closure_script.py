"""scripts/closure.py's reading of sweep results: each measured point counted by its fastest
iteration over the attempts' files, and results it cannot use refused (exit 2) before any
projection runs, naming the file and the field.

Run: python3 -m unittest discover -s tests/report -p "test_*.py"
"""
import importlib.util
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "closure.py"
spec = importlib.util.spec_from_file_location("closure_script", SCRIPT)
closure = importlib.util.module_from_spec(spec)
spec.loader.exec_module(closure)

SWEEP = {"name": "cpu_test", "machine": "cpu-host", "base": {"model": {"layers": 2}, "plan": {"tp": 1}}}


def results(*seconds):
    """A sweep-results document with one measured point per fastest iteration in `seconds`."""
    points = [{"key": f"k{i}", "label": f"p{i}", "mode": "measured", "status": "ok", "overrides": {"plan.tp": 1},
               "result": {"metrics": {"iteration_s": {"min": s}}}} for i, s in enumerate(seconds)]
    return {"schema": "ptdp.sweep-results/1", "sweep": {"name": "cpu_test"}, "points": points}


class ClosureResults(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, doc):
        path = self.dir / name
        path.write_text(json.dumps(doc), encoding="utf-8")
        return str(path)

    def test_the_fastest_attempt_counts(self):
        files = [self.write("a.json", results(0.5, 0.2)), self.write("b.json", results(0.3, 0.4))]
        rows = closure.fastest_points(files, {"cpu_test": SWEEP})
        self.assertEqual([(p["label"], s, runs) for _, p, s, runs in rows], [("p0", 0.3, 2), ("p1", 0.2, 2)])

    def test_a_points_config_is_the_base_with_its_overrides(self):
        config = closure.point_config(SWEEP, {"plan.tp": 2, "tag.params": "1.7B"})
        self.assertEqual(config, {"model": {"layers": 2}, "plan": {"tp": 2}, "machine": "cpu-host"})
        self.assertEqual(SWEEP["base"]["plan"], {"tp": 1})   # the definition is not changed

    def test_a_point_without_its_time_is_refused(self):
        doc = results(0.5)
        del doc["points"][0]["result"]["metrics"]["iteration_s"]
        with self.assertRaisesRegex(closure.Refused, "a.json: /points/0/result/metrics/iteration_s/min: missing"):
            closure.fastest_points([self.write("a.json", doc)], {"cpu_test": SWEEP})

    def test_the_script_exits_2_naming_the_field(self):
        sweep = self.write("sweep.json", dict(SWEEP, base=[]))
        proc = subprocess.run([sys.executable, str(SCRIPT), "--ptdp", "/nonexistent/ptdp", "--calibration", "c.json",
                               "--out", str(self.dir / "out.json"), "--sweep", sweep,
                               self.write("a.json", results(0.5))], capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("sweep.json: /base: must be an object", proc.stderr)
        self.assertFalse((self.dir / "out.json").exists())


if __name__ == "__main__":
    unittest.main()
