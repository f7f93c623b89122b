"""The modern validation section (report/ptdp_report/modern.py) on a small ptdp.validation/1
document with "set": "modern": two sources, one within the 8% target and one over it.

Run with Debian's Python (it has matplotlib):
  /usr/bin/python3 -m unittest discover -s tests/report -p "test_*.py"
"""
import copy
import json
import os
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "report"))

from ptdp_report.load import Refused  # noqa: E402
from ptdp_report.modern import FIGURE, modern_section  # noqa: E402


def point(label, paper, projected, fits=True):
    p = {"label": label, "paper": paper, "projected": projected, "error": projected / paper - 1}
    if not fits:
        p["fits"] = False
    return p


DOC = {"schema": "ptdp.validation/1", "set": "modern",
       "overall": {"points": 3, "sources": 2, "mean_abs_error": 0.07, "max_abs_error": 0.15},
       "h200": "none found",
       "experiments": [
           {"name": "modern-a", "metric": "iteration_s.median", "mean_abs_error": 0.03, "max_abs_error": 0.04,
            "source": {"title": "Source A", "gpu": "A100"},
            "points": [point("r1", 10.0, 10.2), point("r2", 20.0, 19.2)]},
           {"name": "modern-b", "metric": "model_tflops_per_gpu", "mean_abs_error": 0.15, "max_abs_error": 0.15,
            "source": {"title": "Source B", "gpu": "H100"},
            "points": [point("r3", 400.0, 460.0, fits=False)]}]}


class ModernSection(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        os.environ.setdefault("MPLCONFIGDIR", str(Path(self.tmp.name) / "mpl"))
        self.results, self.out = Path(self.tmp.name) / "results", Path(self.tmp.name) / "out"
        self.results.mkdir()
        self.out.mkdir()

    def tearDown(self):
        self.tmp.cleanup()

    def test_per_source_rows_with_the_target_and_every_run(self):
        (self.results / "modern-validation.json").write_text(json.dumps(DOC), encoding="utf-8")
        text = "\n".join(modern_section(self.results, self.out))
        # modern-a: mean 3.0%, within 8%; modern-b: 15.0%, over it.
        self.assertIn("| modern-a | Source A | A100 | 2 | iteration_s.median | 3.0% | 4.0% | yes |", text)
        self.assertIn("| modern-b | Source B | H100 | 1 | model_tflops_per_gpu | 15.0% | 15.0% | no |", text)
        # r3: 460 / 400 - 1 = +15.0%, marked as not fitting ptdp's memory model.
        self.assertIn("| modern-b | r3 | 400 | 460 | +15.0% (does not fit in ptdp's memory model) |", text)
        self.assertIn("3 runs from 2 sources", text)
        self.assertGreater((self.out / FIGURE).stat().st_size, 10_000)

    def test_no_section_without_a_modern_file(self):
        self.assertEqual(modern_section(self.results, self.out), [])
        paper = dict(DOC, set="paper")
        (self.results / "modern-validation.json").write_text(json.dumps(paper), encoding="utf-8")
        self.assertEqual(modern_section(self.results, self.out), [])

    def test_a_run_missing_a_field_is_refused(self):
        broken = copy.deepcopy(DOC)
        del broken["experiments"][1]["points"][0]["projected"]
        (self.results / "modern-validation.json").write_text(json.dumps(broken), encoding="utf-8")
        with self.assertRaisesRegex(Refused, r"modern-validation.json: /experiments/1/points/0/projected: missing"):
            modern_section(self.results, self.out)


if __name__ == "__main__":
    unittest.main()
