"""Unit tests of the report package: eq. (1) and Figure 8's source, bar positions, x labels.

Run with Debian's Python (it has matplotlib):
  /usr/bin/python3 -m unittest discover -s tests/report -p "test_*.py"
"""
import sys
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "report" / "reference" / "megatron-sc21.json"

sys.path.insert(0, str(REPO / "report"))
from ptdp_report.derive import eq1_normalised_throughput, micro_batch_times, with_figure8  # noqa: E402
from ptdp_report.figures import _positions  # noqa: E402
from ptdp_report.layouts import x_label  # noqa: E402
from ptdp_report.load import Sweep, read_json  # noqa: E402


class Eq1Derivation(unittest.TestCase):
    """T(b) = (B/b + p − 1)·t(b); normalised throughput T(1)/T(b)."""

    def test_hand_computed_small_pipeline(self):
        # B = 8, p = 2: T(1) = 9·1.0 = 9, T(2) = 5·1.5 = 7.5, T(4) = 3·2.5 = 7.5.
        got = eq1_normalised_throughput({1: 1.0, 2: 1.5, 4: 2.5}, global_batch=8, pipeline=2)
        self.assertEqual(sorted(got), [1, 2, 4])
        self.assertAlmostEqual(got[1], 1.0, places=12)
        self.assertAlmostEqual(got[2], 1.2, places=12)
        self.assertAlmostEqual(got[4], 1.2, places=12)

    def test_default_pipeline_is_eight(self):
        # The fixture's times, B = 128: T(1) = 135·0.25 = 33.75, T(2) = 71·0.43 = 30.53,
        # T(4) = 39·0.8 = 31.2.
        got = eq1_normalised_throughput({1: 0.25, 2: 0.43, 4: 0.80}, global_batch=128)
        self.assertAlmostEqual(got[2], 33.75 / 30.53, places=12)
        self.assertAlmostEqual(got[4], 33.75 / 31.2, places=12)

    def test_needs_b_equal_1_and_leaves_out_b_above_B(self):
        self.assertEqual(eq1_normalised_throughput({2: 1.0, 4: 1.5}, global_batch=8), {})
        got = eq1_normalised_throughput({1: 1.0, 2: 1.5, 8: 4.0}, global_batch=4)
        self.assertEqual(sorted(got), [1, 2])

    def test_paper_figure8_from_paper_figure7(self):
        # t(b) ∝ b/TFLOPs(b). Figure 7's values are whole TFLOP/s (±0.5 of 68..91: ≤ 1.3% on a ratio,
        # ≤ 0.016 on values ≤ 1.22) and Figure 8's are rounded to 0.01 (±0.005): tolerance 0.021.
        experiments = read_json(REFERENCE)["experiments"]
        fig7 = experiments["figure7_single_gpu_microbatch"]["series"]["1B_model"]
        times = {int(b): int(b) / tflops for b, tflops in fig7.items()}
        for batch in (128, 512):
            paper = experiments["figure8_estimated_throughput_model"]["series"][f"batch_size_{batch}"]
            got = eq1_normalised_throughput(times, global_batch=batch)
            for b, value in paper.items():
                with self.subTest(batch=batch, b=b):
                    self.assertAlmostEqual(got[int(b)], value, delta=0.021)

    def test_micro_batch_times_take_points_whose_global_batch_is_b(self):
        def point(b, batch, t, status="ok", mode="measured"):
            return {"status": status, "mode": mode,
                    "result": {"plan": {"micro_batch": b, "global_batch": batch},
                               "metrics": {"iteration_s": {"median": t}}}}
        points = [point(1, 1, 0.2), point(2, 2, 0.3), point(4, 8, 9.9), point(8, 8, 9.9, status="oom"),
                  point(1, 1, 0.25, mode="projected")]
        self.assertEqual(micro_batch_times(points), {"measured": {1: 0.2, 2: 0.3}, "projected": {1: 0.25}})



def single_gpu_point(series, b, seconds, mode="projected"):
    """A point of one micro-batch of b on one GPU (global batch b), as figure7/figure8 sweeps run."""
    return {"status": "ok", "mode": mode, "series": series, "label": str(b),
            "overrides": {"plan.micro_batch": b, "plan.global_batch": b},
            "result": {"metrics": {"iteration_s": {"median": seconds}}}}


class Figure8Source(unittest.TestCase):
    """Which sweep Figure 8 is derived from, and B taken from a figure8 sweep's series names."""

    REFERENCE = {"experiments": {"figure8_estimated_throughput_model": {
        "series": {"batch_size_128": {"1": 1.0, "2": 1.3}}}}}

    def test_figure8_sweep_replaced_by_its_derivation(self):
        figure7 = Sweep("figure7", {"reference": "figure7_single_gpu_microbatch"},
                        [single_gpu_point("1B_model", 1, 9.0)])
        runs = [("batch_size_128", 1, 1.0), ("batch_size_128", 2, 1.5),
                ("batch_size_512", 1, 1.0), ("batch_size_512", 4, 3.0)]
        figure8 = Sweep("figure8", {"reproduces": "Figure 8: as run", "metric": "model_tflops_per_gpu"},
                        [single_gpu_point(*run) for run in runs])
        warnings = []
        got = with_figure8([figure7, figure8], self.REFERENCE, warnings.append)
        self.assertEqual([s.name for s in got], ["figure7", "figure8"])
        self.assertIs(got[0], figure7)
        derived = got[1]
        self.assertEqual((derived.derived_from, derived.reproduces, derived.metric),
                         ("figure8", "Figure 8: as run", "normalised_throughput"))
        values = {(p["series"], p["label"]): (p["value"], p["paper"]) for p in derived.points}
        # B = 128: T(1) = 135·1.0, T(2) = 71·1.5 = 106.5. B = 512: T(1) = 519, T(4) = 135·3 = 405.
        self.assertEqual(sorted(values), [("batch 128", "1"), ("batch 128", "2"),
                                          ("batch 512", "1"), ("batch 512", "4")])
        self.assertAlmostEqual(values[("batch 128", "2")][0], 135 / 106.5, places=12)
        self.assertEqual(values[("batch 128", "2")][1], 1.3)
        self.assertAlmostEqual(values[("batch 512", "4")][0], 519 / 405, places=12)
        self.assertIsNone(values[("batch 512", "4")][1])
        self.assertEqual(warnings, [])

    def test_without_t1_nothing_is_derived(self):
        figure7 = Sweep("figure7", {}, [single_gpu_point("1B_model", 2, 1.5)])
        warnings = []
        self.assertEqual(with_figure8([figure7], self.REFERENCE, warnings.append), [figure7])
        self.assertEqual(len(warnings), 1)
        table1 = Sweep("table1", {})
        self.assertEqual(with_figure8([table1], self.REFERENCE, warnings.append), [table1])



class Layout(unittest.TestCase):
    """Where bars go, and the x label of a sweep without a paper layout."""

    def test_bars_of_a_category_are_centred_on_it(self):
        def group(*labels):
            return ("C0", "s", "projected", [{"label": label} for label in labels])
        groups = [group("a", "b"), group("a"), group("b", "c")]
        at = _positions(groups, ["a", "b", "c"], "bars")
        # At most 2 groups share a category: bars 0.4 wide, at x ± 0.2; alone at x.
        self.assertEqual(at, {(0, "a"): -0.2, (1, "a"): 0.2, (0, "b"): 0.8, (2, "b"): 1.2, (2, "c"): 2.0})
        self.assertEqual(_positions(groups, ["a", "b", "c"], "lines")[(2, "b")], 1.0)

    def test_generic_x_label_names_the_override_the_labels_spell(self):
        points = [{"label": str(b), "overrides": {"plan.micro_batch": b, "plan.recompute": r}}
                  for b in (1, 2) for r in ("none", "full")]
        self.assertEqual(x_label(Sweep("cpu_microbatch", {}, points)), "plan.micro_batch")
        tagged = [{"label": "t=2", "overrides": {"plan.tp": 2, "tag.layout": "t=2"}}]
        self.assertEqual(x_label(Sweep("cpu_layouts", {}, tagged)), "layout")
        self.assertEqual(x_label(Sweep("other", {}, [{"label": "x", "overrides": {}}])), "Configuration")
        self.assertEqual(x_label(Sweep("figure13", {}, points)),
                         "(Pipeline-parallel size p, tensor-parallel size t)")


if __name__ == "__main__":
    unittest.main()
