"""The memory validation section (report/ptdp_report/memory.py) on a small ptdp.validation/1
document with "set": "memory": one source within the target, one over it with a pending
mechanism and a named one.

Run with Debian's Python:
  /usr/bin/python3 -m unittest discover -s tests/report -p "test_*.py"
"""
import copy
import json
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "report"))

from ptdp_report.load import Refused  # noqa: E402
from ptdp_report.memory import memory_section  # noqa: E402


def point(run, published, modelled, **why):
    return {"run": run, "scope": "model_state_per_parameter", "published_as": f"{published}",
            "published": published, "modelled": modelled, "error": modelled / published - 1, **why}


DOC = {"schema": "ptdp.validation/1", "set": "memory",
       "overall": {"points": 3, "mean_abs_error": 0.1, "max_abs_error": 0.25},
       "overall_without_pending": {"points": 2, "mean_abs_error": 0.025, "max_abs_error": 0.05},
       "not_comparable": [{"source": "b", "run": "row x", "why": "16-bit gradients"}],
       "experiments": [
           {"name": "memory-a", "mean_abs_error": 0.0, "max_abs_error": 0.0, "source": {"title": "Source A"},
            "points": [point("a1", 18.0, 18.0)]},
           {"name": "memory-b", "mean_abs_error": 0.15, "max_abs_error": 0.25, "source": {"title": "Source B"},
            "points": [point("b1", 16.0, 16.8, mechanism="fp32 gradients"),
                       point("b2", 2.0, 2.5, pending="ZeRO-2")]}]}


class MemorySection(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.results = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, doc):
        (self.results / "memory-validation.json").write_text(json.dumps(doc), encoding="utf-8")

    def test_per_source_rows_every_figure_and_why_it_differs(self):
        self.write(DOC)
        text = "\n".join(memory_section(self.results))
        self.assertIn("| memory-a | Source A | 1 | 0.0% | 0.0% | yes |", text)
        self.assertIn("| memory-b | Source B | 2 | 15.0% | 25.0% | no |", text)
        # b1: 16.8 / 16 - 1 = +5.0%, with its mechanism; b2: 2.5 / 2 - 1 = +25.0%, pending.
        self.assertIn("| memory-b | b1 | model_state_per_parameter | 16.0 | 16 | 16.8 | +5.0% | fp32 gradients |", text)
        self.assertIn("| +25.0% | pending: ZeRO-2 |", text)
        self.assertIn("2 figures, mean 2.5%, max 5.0%", text)
        self.assertIn("_Not comparable: b, row x: 16-bit gradients_", text)

    def test_absent_or_other_set_gives_no_section(self):
        self.assertEqual(memory_section(self.results), [])
        doc = copy.deepcopy(DOC)
        doc["set"] = "modern"
        self.write(doc)
        self.assertEqual(memory_section(self.results), [])

    def test_a_point_without_its_error_is_refused(self):
        doc = copy.deepcopy(DOC)
        del doc["experiments"][1]["points"][0]["error"]
        self.write(doc)
        with self.assertRaises(Refused):
            memory_section(self.results)


if __name__ == "__main__":
    unittest.main()
