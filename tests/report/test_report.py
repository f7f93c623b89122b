"""Tests of the report generator's CLI: report/build_report.py run on tests/report/fixtures.

Run with Debian's Python (it has matplotlib):
  /usr/bin/python3 -m unittest discover -s tests/report -p "test_*.py"
Expected strings are computed by hand from the fixtures' values; each says how.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SCRIPT = REPO / "report" / "build_report.py"
FIXTURES = HERE / "fixtures"
PYTHON = "/usr/bin/python3"            # Debian's Python, with matplotlib
sys.path.insert(0, str(REPO / "report"))
from ptdp_report.load import read_json  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MIN_PNG_BYTES = 15_000     # a blank 7x4 in canvas at 110 dpi is ~2.4 kB; drawn figures 30-50 kB
MIN_PNG_SIZE = (700, 400)  # pixels: 7x4 in at 110 dpi is 770x440 before the legend widens it
# Sweeps in the fixtures, plus figure8 derived from figure7.
SWEEPS = {"table1", "figure7", "figure8", "figure13", "figure17", "cpu_layouts"}


def run_report(results, out):
    env = dict(os.environ, MPLCONFIGDIR=str(Path(out).parent / "mplconfig"))
    return subprocess.run([PYTHON, str(SCRIPT), "--results", str(results), "--out", str(out)],
                          capture_output=True, text=True, env=env, timeout=300)


def png_size(path):
    """(width, height) from the IHDR chunk that follows the PNG signature."""
    with open(path, "rb") as f:
        head = f.read(24)
    return struct.unpack(">II", head[16:24])


class BuildReportOnFixtures(unittest.TestCase):
    """One run of the CLI on the fixtures; each test checks a part of what it wrote."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = Path(cls.tmp.name) / "out"
        cls.proc = run_report(FIXTURES, cls.out)
        report = cls.out / "report.md"
        cls.report = report.read_text(encoding="utf-8") if report.exists() else ""

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def assertRow(self, row):
        self.assertIn(row + "\n", self.report)

    def section(self, name):
        """The text of one experiment's section of report.md."""
        start = self.report.index(f"\n## {name}\n")
        end = self.report.find("\n## ", start + 1)
        return self.report[start:] if end < 0 else self.report[start:end]

    def test_exits_zero(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)

    def test_one_valid_png_per_sweep(self):
        self.assertEqual({p.stem for p in self.out.glob("*.png")}, SWEEPS)
        for name in SWEEPS:
            path = self.out / f"{name}.png"
            with self.subTest(name):
                self.assertEqual(path.read_bytes()[:8], PNG_MAGIC)
                self.assertGreater(path.stat().st_size, MIN_PNG_BYTES)
                width, height = png_size(path)
                self.assertGreaterEqual(width, MIN_PNG_SIZE[0])
                self.assertGreaterEqual(height, MIN_PNG_SIZE[1])

    def test_a_section_per_experiment_with_its_figure(self):
        for name in SWEEPS:
            with self.subTest(name):
                self.assertIn(f"\n## {name}\n", self.report)
                self.assertIn(f"![]({name}.png)", self.section(name))
        self.assertIn("Figure 13: tensor vs pipeline parallelism, 162.2B GPT on 64 GPUs, d=1",
                      self.section("figure13"))

    def test_provenance(self):
        self.assertIn("- `table1.json` (commit `e10795f4c2a1`, updated 2026-11-21T10:00:00Z)", self.report)
        self.assertIn("- `cpu/cpu_layouts.json` (commit `7c3e9a1d5b2f`", self.report)
        self.assertIn("Projected numbers are projections", self.report)
        self.assertIn("measured numbers are measurements", self.report)

    def test_overview(self):
        # table1 |errors| 10.0, 2.17, 0.0 -> mean 4.1; figure17: 5.0, 10.0, 5.0, 2.86, 3.85 -> 5.3.
        self.assertRow("| [table1](#table1) | 3 | 3 | 4.1% | 10.0% |")
        self.assertRow("| [figure17](#figure17) | 6 | 5 | 5.3% | 10.0% |")
        self.assertRow("| [cpu_layouts](#cpu_layouts) | 6 | 0 | — | — |")
        order = [self.report.index(f"\n## {n}\n") for n in
                 ("table1", "figure7", "figure8", "figure13", "figure17", "cpu_layouts")]
        self.assertEqual(order, sorted(order))

    def test_table1_rows_and_errors(self):
        # (150.7 − 137)/137 = +10.0%; (135 − 138)/138 = −2.17%; 142 against 142.
        self.assertRow("| PTD-P | 1.7B | projected | 150.7 | 137.0 | +10.0% | ok |")
        self.assertRow("| PTD-P | 3.6B | projected | 135.0 | 138.0 | -2.2% | ok |")
        self.assertRow("| PTD-P | 7.5B | projected | 142.0 | 142.0 | +0.0% | ok |")
        self.assertIn("Mean |error| 4.1%, max |error| 10.0% over 3 point(s) with both values.",
                      self.section("table1"))

    def test_figure13_measured_and_projected(self):
        # 98/103 − 1 = −4.85%; 137.4/134 − 1 = +2.54%; 140.7/134 − 1 = +5.0%;
        # 171.6/165 − 1 = +4.0%.
        self.assertRow("| batch 32 | (2,32) | projected | 98.0 | 103.0 | -4.9% | ok |")
        self.assertRow("| batch 32 | (4,16) | measured | 137.4 | 134.0 | +2.5% | ok |")
        self.assertRow("| batch 32 | (4,16) | projected | 140.7 | 134.0 | +5.0% | ok |")
        self.assertRow("| batch 128 | (8,8) | projected | 171.6 | 165.0 | +4.0% | ok |")
        self.assertIn("Points: 3 projected, 1 measured.", self.section("figure13"))

    def test_bubble_and_memory_table(self):
        # Measured point: bubble 0.1123, analytical (p−1)/m = 3/32; memory 61.0 GiB model, 63.75 GiB peak.
        self.assertRow("| batch 32 | (4,16) | measured | 0.112 | — | 0.094 | 61.0 | 63.8 |")
        self.assertRow("| batch 32 | (4,16) | projected | — | 0.098 | 0.094 | 64.2 | — |")
        self.assertRow("| 1f1b | (2,2,2) | measured | 0.262 | — | 0.250 | 0.00197 | 0.00213 |")

    def test_does_not_fit_and_failed_points(self):
        self.assertRow("| without_recompute | 16 | projected | — | — | — | "
                       "does_not_fit: stage 0 needs 88.2 GiB, 76.0 GiB available |")
        self.assertIn("| interleaved | (1,4,2) | measured | — | — | — | failed: rank 3:", self.report)
        self.assertRow("| interleaved | (1,4,2) | projected | 19,030 | — | — | ok |")
        self.assertIn("No point has both a ptdp value and a paper value.", self.section("cpu_layouts"))

    def test_ablation_table(self):
        # fixtures/paper-ablation.json: full 3.4% and 7.8%; tensor_parallel_comm off: +0.086, +0.165.
        self.assertIn("\n## Ablation: each modelled mechanism off in turn\n", self.report)
        self.assertRow("| mechanism | table1 | figure13 |")
        self.assertRow("| full model: mean abs error | 3.4% | 7.8% |")
        self.assertRow("| without tensor_parallel_comm | +8.6 | +16.5 |")

    def test_closure_table(self):
        # fixtures/closure/cpu.json: 0.1275/0.125 − 1 = +2.0% within; 0.075/0.1 − 1 = −25.0% out;
        # the 4-rank point on 2 cores is shown and excepted: 1 of 2 checked points within 10%.
        self.assertIn("\n## Closure on the machine that measured: cpu\n", self.report)
        self.assertIn("1 of 2 points within 10%", self.report)
        self.assertIn("commit abc1234, g++ 12.2.0, Test CPU, 2 cores, load average 1.50 at the end", self.report)
        self.assertRow("| cpu_layouts | 1f1b single rank | 1 | 0.1250 | 0.1275 | +2.0% | within |")
        self.assertRow("| cpu_layouts | 1f1b t=2 | 2 | 0.1000 | 0.0750 | -25.0% | OUT |")
        self.assertRow("| cpu_layouts | 1f1b t=2 p=2 s/g | 4 | 0.0800 | 0.0440 | -45.0% | oversubscribed: excepted |")
        # compute per micro-batch: 5.25 ms against 0.2 + 4·1.1 + 0.4 = 5.0 ms (+5.0%, within 10%);
        # 10.8 ms against 0.6 + 4·2.0 + 0.4 = 9.0 ms (+20.0%, out).
        self.assertRow("| forward | 5.250 | 5.000 | +5.0% | within | embedding/fwd + 4×layer/fwd + head/fwd |")
        self.assertRow("| backward | 10.800 | 9.000 | +20.0% | OUT | head/bwd + 4×layer/bwd + embedding/bwd |")

    def test_figure8_derived_from_figure7(self):
        # Fixture t(b) = 0.25, 0.43, 0.80 s; p = 8. B = 128: T = 135·0.25, 71·0.43, 39·0.80 = 33.75,
        # 30.53, 31.2 -> 1, 1.1055, 1.0817 against the paper's 1.0, 1.09, 1.09: +1.4%, −0.8%.
        # B = 512: T = 129.75, 113.09, 108 -> 1.1473, 1.2014 against 1.13, 1.21: +1.5%, −0.7%.
        self.assertRow("| batch 128 | 1 | projected | 1.00 | 1.00 | +0.0% | ok |")
        self.assertRow("| batch 128 | 2 | projected | 1.11 | 1.09 | +1.4% | ok |")
        self.assertRow("| batch 128 | 4 | projected | 1.08 | 1.09 | -0.8% | ok |")
        self.assertRow("| batch 512 | 2 | projected | 1.15 | 1.13 | +1.5% | ok |")
        self.assertRow("| batch 512 | 4 | projected | 1.20 | 1.21 | -0.7% | ok |")
        self.assertIn("eq. (1) applied to the times t(b) in figure7's results", self.section("figure8"))

    def test_unknown_fields_are_ignored(self):
        # figure13.json carries x_runner_host, sweep.x_owner, point x_debug/x_future and
        # result.metrics.x_power_watts; its measured point is still reported, the fields are not.
        self.assertRow("| batch 32 | (4,16) | measured | 137.4 | 134.0 | +2.5% | ok |")
        for text in ("IGNORED-FIELD-MARKER", "selene-login-3", "x_owner", "x_power_watts"):
            self.assertNotIn(text, self.report)

    def test_hidden_work_folders_are_not_read(self):
        # fixtures/.table1.work/ holds a per-point file as `ptdp sweep` leaves them: no warning.
        self.assertNotIn(".table1.work", self.proc.stderr)

    def test_a_file_of_another_schema_warns_once(self):
        warnings = [line for line in self.proc.stderr.splitlines() if line.startswith("warning:")]
        self.assertEqual(len(warnings), 1, self.proc.stderr)
        self.assertIn("other_schema.json", warnings[0])
        self.assertIn("ptdp.result/1", warnings[0])
        self.assertNotIn("other_schema.json", self.report)


class BuildReportInputs(unittest.TestCase):
    """Refused input, nothing to report, and a sweep spread over two files."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_missing_folder_is_refused(self):
        proc = run_report(self.root / "nowhere", self.root / "out")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("no such folder", proc.stderr)

    def test_no_sweep_results_fails(self):
        (self.root / "results").mkdir()
        shutil.copy(FIXTURES / "other_schema.json", self.root / "results")
        proc = run_report(self.root / "results", self.root / "out")
        self.assertEqual(proc.returncode, 1)
        self.assertIn("no ptdp.sweep-results/1 files", proc.stderr)

    def refused(self, name, text):
        """build_report's stderr on results holding table1 and a file `name` with `text`; exit 2 asserted."""
        results = self.root / "results"
        results.mkdir()
        shutil.copy(FIXTURES / "table1.json", results)
        (results / name).write_text(text, encoding="utf-8")
        proc = run_report(results, self.root / "out")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertFalse((self.root / "out" / "report.md").exists())
        return proc.stderr

    def test_a_file_that_is_not_json_is_refused(self):
        stderr = self.refused("cut.json", 'ptdp sweep was interrupted here {"schema": "ptdp.sweep-results/1"')
        self.assertIn("cut.json: not valid JSON", stderr)

    def test_a_key_twice_is_refused_with_its_pointer(self):
        text = (FIXTURES / "table1.json").read_text(encoding="utf-8")
        text = text.replace('"updated":', '"updated": "2026-11-22T08:00:00Z", "updated":', 1)
        self.assertIn("b.json: the key \"updated\" appears twice in one object", self.refused("b.json", text))

    def test_a_point_that_is_not_an_object_is_refused(self):
        doc = read_json(FIXTURES / "table1.json")
        doc["points"].append(7)
        self.assertIn(f"b.json: /points/{len(doc['points']) - 1}: must be an object",
                      self.refused("b.json", json.dumps(doc)))

    def test_a_section_file_missing_a_field_is_refused(self):
        doc = read_json(FIXTURES / "paper-ablation.json")
        del doc["off"][0]["mechanism"]
        self.assertIn("paper-ablation.json: /off/0/mechanism: missing",
                      self.refused("paper-ablation.json", json.dumps(doc)))

    def test_newer_file_replaces_a_point_with_the_same_key(self):
        results = self.root / "results"
        results.mkdir()
        doc = read_json(FIXTURES / "table1.json")
        (results / "a.json").write_text(json.dumps(doc), encoding="utf-8")
        doc["updated"] = "2026-11-22T08:00:00Z"
        doc["points"] = doc["points"][:1]
        doc["points"][0]["value"] = 140.8          # (140.8 − 137)/137 = +2.77%
        (results / "b.json").write_text(json.dumps(doc), encoding="utf-8")
        proc = run_report(results, self.root / "out")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        report = (self.root / "out" / "report.md").read_text(encoding="utf-8")
        self.assertIn("| PTD-P | 1.7B | projected | 140.8 | 137.0 | +2.8% | ok |\n", report)
        self.assertNotIn("150.7", report)
        self.assertIn("| [table1](#table1) | 3 | 3 |", report)


if __name__ == "__main__":
    unittest.main()
