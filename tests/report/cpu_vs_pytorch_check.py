#!/usr/bin/python3
"""endtoend/cpu_vs_pytorch.py, the CPU-against-PyTorch benchmark, without timing asserts:
its reading of results, ratio and tables on canned results and on a kernel benchmark
output of tiny.json (cpu_vs_pytorch/bench_kernels_tiny.json); its refusals (exit 2, naming the
field, before anything runs); the baseline's --threads and --out; the JSON writer;
scripts/torch_venv.sh's dry run; and, where a Python with torch and the built programs
are found, a real run of 2 iterations (skipped visibly otherwise).

The torch Python: $PTDP_TORCH_PYTHON when it imports torch, else .venv-torch/bin/python;
the programs: $PTDP_PTDP and $PTDP_BENCH_KERNELS, else build/ (ctest sets all three).
Usage: python3 tests/report/cpu_vs_pytorch_check.py [-v]
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).resolve().parent / "cpu_vs_pytorch" / "bench_kernels_tiny.json"
DRIVER = REPO / "endtoend" / "cpu_vs_pytorch.py"
BASELINE = REPO / "endtoend" / "baselines" / "pytorch_gpt.py"
TINY = REPO / "endtoend" / "configs" / "tiny.json"
sys.path.insert(0, str(REPO / "report"))
sys.path.insert(0, str(REPO / "endtoend"))
import cpu_vs_pytorch as driver  # noqa: E402
import cpu_vs_pytorch_ops as ops  # noqa: E402
from ptdp_report.load import Refused, read_benchmarks, read_json  # noqa: E402
from ptdp_report.output import write_json  # noqa: E402


def result(samples):
    """A result file's content as ptdp and the baseline write it (only what is read)."""
    return {"metrics": {"iteration_s": {"median": None, "samples": samples}}}


class Ratio(unittest.TestCase):
    def test_the_median_of_the_samples(self):
        self.assertEqual(driver.median_iteration_s(result([0.3, 0.1, 0.2]))[0], 0.2)
        self.assertEqual(driver.median_iteration_s({"metrics": {"iteration_s": {"median": 0.5}}}), (0.5, []))
        with self.assertRaises(driver.RunFailed):
            driver.median_iteration_s({"metrics": {}})

    def test_medians_over_rounds_and_the_ratio_pytorch_over_ptdp(self):
        rounds = [{"ptdp": {"median_s": p}, "pytorch": {"median_s": t}}
                  for p, t in ((0.010, 0.030), (0.012, 0.020), (0.011, 0.022))]
        row = driver.summarize("cpu-bench.json", rounds)
        self.assertAlmostEqual(row["ptdp_ms"], 11.0)
        self.assertAlmostEqual(row["pytorch_ms"], 22.0)
        self.assertAlmostEqual(row["ratio"], 2.0)
        text = driver.table([row], 1)
        self.assertIn("1 thread(s)", text)
        self.assertRegex(text, r"cpu-bench\.json +11\.00 +22\.00 +2\.00")


class Ops(unittest.TestCase):
    def setUp(self):
        self.items, self.unsplit = ops.op_items(read_benchmarks(FIXTURE), vocab=128)
        self.by_key = {i["key"]: i for i in self.items}

    def test_names(self):
        self.assertEqual(ops.parse_name("gemm/q_fwd/m:32/n:64/k:64/manual_time"),
                         ("gemm/q_fwd", {"m": 32, "n": 64, "k": 64}))
        self.assertEqual(ops.parse_name("add/x_bwd/unfused_ops/rows:2/cols:3/manual_time")[0], "add/x_bwd/unfused_ops")

    def test_fused_ops_count_as_their_gemm_and_gelu(self):
        self.assertEqual(self.unsplit, [])
        self.assertNotIn("bias_gelu/fc1_fwd", self.by_key)
        for key in ("gemm/fc1_fwd", "gelu/act_fwd", "gemm/fc2_dgrad", "gelu/act_bwd"):
            self.assertEqual(self.by_key[key]["count"], 2, key)  # once per layer, 2 layers
        self.assertEqual(self.by_key["gemm/q_fwd"]["count"], 4)  # q and the projection: one shape

    def test_what_a_micro_batch_runs_once_and_what_is_left_out(self):
        for key in ("adamw/step", "head/fwd", "head/bwd", "embedding/fwd", "embedding/bwd"):
            self.assertEqual(self.by_key[key]["count"], 1, key)
        self.assertEqual(self.by_key["embedding/fwd"]["sizes"], {"b": 2, "s": 16, "h": 64, "Vt": 128})
        self.assertFalse([k for k in self.by_key if k.startswith("gemm/logits_")])  # inside the head
        self.assertEqual({i["family"] for i in self.items}, set(ops.FAMILIES))
        self.assertAlmostEqual(self.by_key["gemm/q_fwd"]["ptdp_us"], 4.5, delta=0.05)  # 0.0045 ms in the fixture

    def test_family_sums_and_both_attentions(self):
        torch = [{"key": i["key"], "variant": v, "us": 2 * i["ptdp_us"] if v != "explicit" else 3 * i["ptdp_us"]}
                 for i in self.items for v in (("sdpa", "explicit") if i["family"] == "attention" else ("eager",))]
        rows = {r["family"]: r for r in ops.family_rows(self.items, torch)}
        self.assertEqual(len(rows), len(ops.FAMILIES) + 1)
        self.assertAlmostEqual(rows["attention (SDPA)"]["ratio"], 2.0)
        self.assertAlmostEqual(rows["attention (explicit)"]["ratio"], 3.0)
        gemm = sum(i["count"] * i["ptdp_us"] for i in self.items if i["family"] == "gemm")
        self.assertAlmostEqual(rows["gemm"]["ptdp_us"], gemm)
        self.assertAlmostEqual(rows["gemm"]["torch_us"], 2 * gemm)
        self.assertIn("cross entropy/logits", ops.ops_table("tiny.json", list(rows.values())))

    def test_an_op_torch_did_not_time_is_left_out_of_both_sides(self):
        torch = [{"key": "gemm/q_fwd", "variant": "eager", "us": 1.0}]
        (row,) = ops.family_rows(self.items, torch)
        self.assertEqual(row["ops"], ["gemm/q_fwd"])
        self.assertAlmostEqual(row["ptdp_us"], 4 * self.by_key["gemm/q_fwd"]["ptdp_us"])


def fake_program(folder, marker):
    """An executable that leaves `marker` behind when run: proof that a refusal ran nothing."""
    path = Path(folder) / "fake"
    path.write_text(f"#!/bin/sh\ntouch '{marker}'\nexit 1\n")
    path.chmod(0o755)
    return path


class Refusals(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)
        self.marker = self.dir / "ran"
        self.fake = fake_program(self.dir, self.marker)

    def tearDown(self):
        self.tmp.cleanup()

    def refused(self, *argv, field):
        base = ["--ptdp", str(self.fake), "--python", str(self.fake), "--config", str(TINY)]
        proc = subprocess.run([sys.executable, str(DRIVER), *base, *argv], capture_output=True, text=True,
                              timeout=120, check=False)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn(f"refused: {field}:", proc.stderr)
        self.assertFalse(self.marker.exists() and field != "--python", "a program ran before the refusal")
        return proc.stderr

    def config(self, model=None, plan=None):
        doc = read_json(TINY)
        doc["model"].update(model or {})
        doc["plan"].update(plan or {})
        path = self.dir / "c.json"
        path.write_text(json.dumps(doc))
        return str(path)

    def test_numbers(self):
        self.refused("--threads", "0", field="--threads")
        self.refused("--rounds", "0", field="--rounds")
        self.refused("--iterations", "3", "--warmup", "3", field="--warmup")
        self.refused("--op-min-time", "0", field="--op-min-time")

    def test_configs(self):
        self.assertIn("no-such.json: no such file", self.refused("--config", str(self.dir / "no-such.json"),
                                                                   field="--config"))
        for model, plan, pointer in (({"norm": "rmsnorm"}, {}, "/model/norm"), ({"kv_heads": 2}, {}, "/model/kv_heads"),
                                     ({"dropout": 0.1}, {}, "/model/dropout"), ({}, {"tp": 2}, "/plan"),
                                     ({}, {"precision": "bf16"}, "/plan/precision")):
            self.assertIn(pointer, self.refused("--config", self.config(model, plan), field="--config"))

    def test_a_config_at_its_defaults_passes_the_config_checks(self):
        path = self.config({"kv_heads": 0, "norm": "layernorm", "bias": True})
        self.refused("--config", path, "--python", str(self.dir / "none"), field="--python")

    def test_programs_and_out(self):
        self.refused("--ptdp", str(self.dir / "none"), field="--ptdp")
        self.refused("--ops", "--bench", str(self.dir / "none"), field="--bench")
        (self.dir / "target").write_text("keep")
        os.symlink(self.dir / "target", self.dir / "link.json")
        self.refused("--out", str(self.dir / "link.json"), field="--out")
        self.assertEqual((self.dir / "target").read_text(), "keep")

    def test_a_python_without_torch(self):
        self.assertIn("cannot import torch", self.refused(field="--python"))
        self.refused("--python", str(self.dir / "none"), field="--python")


class BaselineOptions(unittest.TestCase):
    """pytorch_gpt.py's --threads and --out are refused before torch is imported."""

    def refused(self, *argv):
        proc = subprocess.run([sys.executable, str(BASELINE), "--config", str(TINY), "--device", "cpu", *argv],
                              capture_output=True, text=True, timeout=120, check=False)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        return proc.stderr

    def test_threads(self):
        self.assertIn("--threads: must be in [1, 4096]", self.refused("--threads", "0"))

    def test_out_a_link(self):
        with tempfile.TemporaryDirectory() as tmp:
            os.symlink(Path(tmp) / "elsewhere", Path(tmp) / "r.json")
            self.assertIn("--out:", self.refused("--out", str(Path(tmp) / "r.json")))


class Writer(unittest.TestCase):
    def test_through_an_exclusive_name_never_a_planted_link(self):
        with tempfile.TemporaryDirectory() as tmp:
            out, target = Path(tmp) / "r.json", Path(tmp) / "target"
            target.write_text("keep")
            os.symlink(target, Path(tmp) / "r.json.tmp")  # the name the baseline used to write through
            write_json(out, {"a": 1})
            self.assertEqual(json.loads(out.read_text()), {"a": 1})
            self.assertEqual(target.read_text(), "keep")
            self.assertEqual(sorted(p.name for p in Path(tmp).iterdir()), ["r.json", "r.json.tmp", "target"])
            os.replace(Path(tmp) / "r.json.tmp", out)  # now a link: refused, not written through
            with self.assertRaises(Refused):
                write_json(out, {"a": 2})
            self.assertEqual(target.read_text(), "keep")
            self.assertEqual(sorted(p.name for p in Path(tmp).iterdir()), ["r.json", "target"])


class TorchVenvScript(unittest.TestCase):
    def test_dry_run_prints_the_python_and_runs_nothing(self):
        with tempfile.TemporaryDirectory() as tmp:
            venv = Path(tmp) / "v"
            proc = subprocess.run([str(REPO / "scripts" / "torch_venv.sh"), "--venv", str(venv), "--dry-run"],
                                  capture_output=True, text=True, timeout=60, check=True)
            self.assertEqual(proc.stdout.strip(), str(venv / "bin" / "python"))
            self.assertIn("pip install --disable-pip-version-check torch numpy transformers safetensors", proc.stderr)
            self.assertFalse(venv.exists())

    def test_an_unknown_option(self):
        proc = subprocess.run([str(REPO / "scripts" / "torch_venv.sh"), "--bogus"], capture_output=True, text=True,
                              timeout=60, check=False)
        self.assertEqual(proc.returncode, 2)


def torch_python():
    for python in (os.environ.get("PTDP_TORCH_PYTHON"), str(REPO / ".venv-torch" / "bin" / "python")):
        if python and Path(python).exists() and subprocess.run(
                [python, "-c", "import torch"], capture_output=True, timeout=300, check=False).returncode == 0:
            return python
    return None


def program(variable, default):
    path = os.environ.get(variable) or str(REPO / default)
    return path if os.access(path, os.X_OK) else None


PYTHON = torch_python()
PTDP = program("PTDP_PTDP", "build/endtoend/ptdp")
BENCH = program("PTDP_BENCH_KERNELS", "build/microbench/ptdp_bench_kernels")


@unittest.skipUnless(PYTHON and PTDP and BENCH, "needs a Python with torch ($PTDP_TORCH_PYTHON or .venv-torch: "
                                                "scripts/torch_venv.sh) and the built ptdp and ptdp_bench_kernels")
class RealRun(unittest.TestCase):
    def test_tiny_two_iterations_with_ops(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "record.json"
            proc = subprocess.run([sys.executable, str(DRIVER), "--config", str(TINY), "--iterations", "2",
                                   "--warmup", "1", "--rounds", "1", "--ops", "--op-min-time", "0.01",
                                   "--python", PYTHON, "--ptdp", PTDP, "--bench", BENCH, "--out", str(out)],
                                  capture_output=True, text=True, timeout=600, check=False)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            doc = read_json(out)
        self.assertEqual((doc["schema"], doc["mode"], doc["threads"]), ("ptdp.cpu-vs-pytorch/1", "measured", 1))
        (entry,) = doc["configs"]
        self.assertGreater(entry["ratio"], 0)
        self.assertEqual(entry["rounds"][0]["pytorch"]["run"]["threads"], 1)
        self.assertEqual(len(entry["rounds"][0]["ptdp"]["samples"]), 1)
        self.assertEqual(len(entry["ops"]["families"]), len(ops.FAMILIES) + 1)
        self.assertIn("tiny.json round 1/1 pytorch: median", proc.stdout)
        self.assertTrue(doc["software"]["torch"] and doc["software"]["commit"] and doc["machine"]["cpu"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
