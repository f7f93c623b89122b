"""report/plot_history.py, which draws `ptdp history`'s JSON: a PNG from a two-series history
(flagged points included, a null value skipped), and refusal of anything but ptdp.history/1.

Run with Debian's Python (it has matplotlib):
  /usr/bin/python3 -m unittest discover -s tests/report -p "test_*.py"
"""
import contextlib
import copy
import io
import json
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "report"))
import plot_history  # noqa: E402


def point(file, value, flagged=False):
    return {"file": file, "commit": file.split(".")[0], "value": value, "flagged": flagged,
            "delta_pct": None, "p_value": None}


HISTORY = {"schema": "ptdp.history/1", "metric": "model_tflops_per_gpu", "threshold_pct": 5, "alpha": 0.05,
           "flagged": 1,
           "series": [{"label": "t1 p1", "key": "a", "mode": "measured",
                       "points": [point("1.json", 1.0), point("2.json", 0.8, True), point("3.json", None)]},
                      {"label": "t8 p2", "key": "b", "mode": "projected", "points": [point("2.json", 3.0)]}]}


class PlotHistory(unittest.TestCase):
    def test_draws_a_png(self):
        with tempfile.TemporaryDirectory() as out:
            data, png = Path(out) / "h.json", Path(out) / "plot.tmp"  # no .png suffix, as ptdp's temporary
            data.write_text(json.dumps(HISTORY), encoding="utf-8")
            self.assertEqual(plot_history.main([str(data), str(png)]), 0)
            self.assertEqual(png.read_bytes()[:4], b"\x89PNG")

    def test_files_in_the_order_given(self):
        self.assertEqual(plot_history.file_order(HISTORY), [("1.json", "1"), ("2.json", "2"), ("3.json", "3")])

    def test_refuses_another_schema(self):
        with tempfile.TemporaryDirectory() as out:
            data = Path(out) / "h.json"
            data.write_text(json.dumps({"schema": "ptdp.compare/2"}), encoding="utf-8")
            self.assertEqual(plot_history.main([str(data), str(Path(out) / "x.png")]), 2)
            self.assertFalse((Path(out) / "x.png").exists())

    def test_refuses_a_point_without_its_file(self):
        broken = copy.deepcopy(HISTORY)
        del broken["series"][1]["points"][0]["file"]
        with tempfile.TemporaryDirectory() as out:
            data = Path(out) / "h.json"
            data.write_text(json.dumps(broken), encoding="utf-8")
            with contextlib.redirect_stderr(io.StringIO()) as err:
                self.assertEqual(plot_history.main([str(data), str(Path(out) / "x.png")]), 2)
            self.assertIn("h.json: /series/1/points/0/file: missing", err.getvalue())


if __name__ == "__main__":
    unittest.main()
