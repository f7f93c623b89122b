"""The PyTorch baseline (endtoend/baselines/pytorch_gpt.py): its FLOP counts and
utilisation figures against hand-computed values (no torch needed), and a tiny
CPU run writing ptdp's result schema (skipped where torch is not installed).

Run: /usr/bin/python3 -m unittest discover -s tests/report -p "test_*.py"
"""
import importlib.util
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BASELINE = REPO / "endtoend" / "baselines" / "pytorch_gpt.py"
spec = importlib.util.spec_from_file_location("pytorch_gpt", BASELINE)
pytorch_gpt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pytorch_gpt)  # imports torch only inside main()
sys.path.insert(0, str(REPO / "report"))
from ptdp_report.load import read_result  # noqa: E402

GPT_1_7B = {"layers": 24, "hidden": 2304, "heads": 24, "seq_len": 2048, "vocab": 51200, "ffn_hidden": 0}


class BaselineFlops(unittest.TestCase):
    """The same counts as ptdp (core/accounting/flops.cpp), so MFU/HFU compare across systems."""

    def test_72_and_96_forms(self):
        B, s, l, h, V = 8, 2048, 24, 2304, 51200
        f = pytorch_gpt.flops_per_iteration(GPT_1_7B, B, "full")
        self.assertAlmostEqual(f["eq3"] / (96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))), 1, places=12)
        self.assertAlmostEqual(f["no_recompute"] / (72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h))), 1,
                               places=12)
        self.assertEqual(f["hardware"], f["eq3"])
        self.assertEqual(pytorch_gpt.flops_per_iteration(GPT_1_7B, B, "none")["hardware"], f["no_recompute"])

    def test_mfu_hfu_over_the_profile_peak(self):
        plan = {"global_batch": 8, "recompute": "full", "precision": "bf16"}
        m = pytorch_gpt.throughput_metrics(GPT_1_7B, plan, {"peak_tflops": {"bf16": 989}}, 2.5)
        fl = m["flops_per_iteration"]
        self.assertAlmostEqual(m["mfu"], fl["no_recompute"] / (2.5 * 989e12), places=15)
        self.assertAlmostEqual(m["hfu"], fl["hardware"] / (2.5 * 989e12), places=15)
        # 4/3 · (1 + s/6h + V/16lh) / (1 + s/6h + V/12lh) for the 1.7B GPT (tests/unit/test_utilization.cpp)
        self.assertAlmostEqual(m["hfu"] / m["mfu"], 1.3123, places=4)
        self.assertIsNone(pytorch_gpt.throughput_metrics(GPT_1_7B, plan, {"peak_tflops": {}}, 2.5)["mfu"])


class BaselineConfig(unittest.TestCase):
    """Configs are read as ptdp reads them, and refused before torch is imported (exit 2)."""

    def refused(self, text):
        with tempfile.TemporaryDirectory() as tmp:
            config = Path(tmp) / "c.json"
            config.write_text(text, encoding="utf-8")
            proc = subprocess.run([sys.executable, str(BASELINE), "--config", str(config), "--device", "cpu"],
                                  capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        return proc.stderr

    def test_a_key_twice(self):
        text = '{"model": {"layers": 1, "hidden": 8, "heads": 2, "heads": 4}, "plan": {}}'
        self.assertIn('c.json: /model: the key "heads" appears twice in one object', self.refused(text))

    def test_a_missing_machine_profile(self):
        text = json.dumps({"model": GPT_1_7B, "plan": {}, "machine": "no-such-machine"})
        self.assertIn("no-such-machine.json: no such file", self.refused(text))

    def test_a_missing_section(self):
        self.assertIn("c.json: /plan: missing", self.refused(json.dumps({"model": GPT_1_7B})))

    def test_another_block_than_ptdps_gpt(self):
        for field, value in (("norm", "rmsnorm"), ("activation", "swiglu"), ("kv_heads", 8)):
            text = json.dumps({"model": {**GPT_1_7B, field: value}, "plan": {}})
            self.assertIn(f"model.{field}: the baseline is ptdp's GPT block", self.refused(text))


def have_torch():
    return importlib.util.find_spec("torch") is not None


@unittest.skipUnless(have_torch(), "torch is not installed for this Python")
class BaselineRun(unittest.TestCase):
    def test_tiny_cpu_run_writes_the_result_schema(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "r.json"
            subprocess.run([sys.executable, str(BASELINE), "--config", str(REPO / "endtoend/configs/tiny.json"),
                            "--device", "cpu", "--iterations", "2", "--warmup", "1", "--no-compile",
                            "--out", str(out)], check=True, capture_output=True, timeout=600)
            r = read_result(out)
        self.assertEqual((r["schema"], r["system"], r["mode"]), ("ptdp.result/2", "pytorch", "measured"))
        m = r["metrics"]
        self.assertGreater(m["iteration_s"]["median"], 0)
        self.assertAlmostEqual(m["hfu"], m["mfu"])  # recompute none
        self.assertLess(abs(m["loss"][0] - 4.852), 0.2)  # ln(128): untrained on uniform tokens
        self.assertIn("torch", r["software"])


if __name__ == "__main__":
    unittest.main()
