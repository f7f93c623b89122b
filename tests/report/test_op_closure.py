"""scripts/op_closure.py: the runtime's compute per micro-batch against the sum of its benchmarked ops."""
import copy
import gzip
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "op_closure.py"
sys.path.insert(0, str(ROOT / "report"))
from ptdp_report.load import read_json  # noqa: E402

CONFIG = {"model": {"layers": 4, "hidden": 128, "heads": 4, "seq_len": 64, "vocab": 256},
          "plan": {"tp": 1, "pp": 1, "dp": 1, "micro_batch": 2, "global_batch": 16, "recompute": "none"}}
# Per benchmark, the times of its runs in ms (the fastest counts) and the counters
# ptdp_bench_kernels writes: how often a single-rank micro-batch runs each part
# and each of the layer's ops; the names as Google Benchmark writes them.
LAYERS = {"part_forward": 4, "layers_run": 4}
BENCH = {"embedding/fwd/b:2/s:64/h:128/manual_time": ([0.3, 0.2], {"part_forward": 1}),
         "layer/fwd/hidden:128/tp:1/tokens:128/manual_time": ([1.1, 1.2], LAYERS),
         "head/fwd/tokens:128/h:128/Vt:256/manual_time": ([0.4], {"part_forward": 1}),
         "head/bwd/tokens:128/h:128/Vt:256/manual_time": ([0.6], {"part_backward": 1}),
         "layer/bwd/hidden:128/tp:1/tokens:128/manual_time": ([2.0, 2.5], {"part_backward": 4, "layers_run": 4}),
         "embedding/bwd/b:2/s:64/h:128/Vt:256/manual_time": ([0.4], {"part_backward": 1}),
         # two of the layer's ops: 4 layers, the GEMM twice a layer forward
         "gemm/q_fwd/m:128/n:128/k:128/manual_time": ([0.25], {"op_forward": 8}),
         "layernorm/ln1_bwd/rows:128/cols:128/manual_time": ([0.1], {"op_backward": 8}),
         # a variant of an op: no counts, not summed
         "layernorm/ln1_bwd/unfused_ops/rows:128/cols:128/manual_time": ([0.01], {})}
SHAPES = {"model": {"layers": 4}, "plan": {"recompute": "none"}}


def bench_json(bench, shapes=SHAPES):
    runs = [{"name": n, "run_name": n, "run_type": "iteration", "real_time": t, "time_unit": "ms", **counters}
            for n, (times, counters) in bench.items() for t in times]
    runs.append({"name": "layer/fwd/x_mean", "run_type": "aggregate", "real_time": 0.001, "time_unit": "ms"})
    return {"context": {"ptdp_shapes": json.dumps(shapes)}, "benchmarks": runs}


def trace_json(forward_ms, backward_ms):
    events = [{"name": f"F({i},0)", "ph": "X", "dur": 1e3 * f, "pid": 0, "tid": 0, "ts": 0}
              for i, f in enumerate(forward_ms)]
    events += [{"name": f"B({i},0)", "ph": "X", "dur": 1e3 * b, "pid": 0, "tid": 0, "ts": 0}
               for i, b in enumerate(backward_ms)]
    events.append({"name": "optimizer_step", "ph": "X", "dur": 9e9, "pid": 0, "tid": 0, "ts": 0})
    return {"traceEvents": events}


class OpClosure(unittest.TestCase):
    def run_check(self, config, traces, bound="0.10", gz=False, kernels=None):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            (tmp / "config.json").write_text(json.dumps(config))
            (tmp / "kernels.json").write_text(json.dumps(kernels or bench_json(BENCH)))
            names = []
            for i, (fwd, bwd) in enumerate(traces):
                names.append(str(tmp / f"trace{i}.json") + (".gz" if gz else ""))
                text = json.dumps(trace_json(fwd, bwd))
                if gz:  # the GPU campaign keeps its traces gzip'd
                    with gzip.open(names[-1], "wt") as f:
                        f.write(text)
                else:
                    Path(names[-1]).write_text(text)
            proc = subprocess.run([sys.executable, str(SCRIPT), "--config", str(tmp / "config.json"), "--kernels",
                                   str(tmp / "kernels.json"), "--trace", *names, "--bound", bound,
                                   "--out", str(tmp / "ops.json")], capture_output=True, text=True)
            out = read_json(tmp / "ops.json") if (tmp / "ops.json").exists() else None
            return proc, out

    def test_sums_the_fastest_runs_of_a_micro_batchs_ops(self):
        # forward 0.2 + 4·1.1 + 0.4 = 5.0 ms; backward 0.6 + 4·2.0 + 0.4 = 9.0 ms. Trace medians
        # 5.25 (+5%) and 9.45 (+5%); the second trace is slower and does not count.
        proc, out = self.run_check(CONFIG, [([5.0, 5.25, 9.0], [9.45, 9.0, 12.0]), ([6.0], [10.0])])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        fwd, bwd = out["directions"]["forward"], out["directions"]["backward"]
        self.assertAlmostEqual(fwd["sum_of_ops_s"], 5.0e-3)
        self.assertAlmostEqual(bwd["sum_of_ops_s"], 9.0e-3)
        self.assertAlmostEqual(fwd["excess"], 0.05)
        self.assertAlmostEqual(bwd["excess"], 0.05)
        self.assertTrue(out["pass"])

    def test_reads_a_gzipped_trace(self):
        proc, out = self.run_check(CONFIG, [([5.25], [9.45])], gz=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertAlmostEqual(out["directions"]["forward"]["excess"], 0.05)

    def test_sums_what_the_benchmarks_say_a_micro_batch_runs(self):
        # Full recompute: ptdp_bench_kernels marks the layers' forward as run in backward too.
        config = copy.deepcopy(CONFIG)
        config["plan"]["recompute"] = "full"
        bench = dict(BENCH)
        bench["layer/fwd/hidden:128/tp:1/tokens:128/manual_time"] = ([1.1, 1.2], {**LAYERS, "part_backward": 4})
        shapes = {"model": {"layers": 4}, "plan": {"recompute": "full"}}
        proc, out = self.run_check(config, [([5.0], [13.4])], kernels=bench_json(bench, shapes))  # 9.0 + 4·1.1 ms
        self.assertEqual(proc.returncode, 0, proc.stderr)
        backward = out["directions"]["backward"]
        self.assertAlmostEqual(backward["sum_of_ops_s"], 13.4e-3)
        self.assertIn({"benchmark": "layer/fwd", "count": 4, "seconds_each": 1.1e-3}, backward["parts"])
        self.assertAlmostEqual(backward["layers_s"], 12.4e-3)  # the layers' backward and their forward again

    def test_sets_the_layers_against_their_ops(self):
        proc, out = self.run_check(CONFIG, [([5.0], [9.0])])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        forward, backward = out["directions"]["forward"], out["directions"]["backward"]
        self.assertAlmostEqual(forward["layers_s"], 4.4e-3)
        self.assertAlmostEqual(forward["sum_of_layer_ops_s"], 2.0e-3)  # 8 × 0.25 ms
        self.assertAlmostEqual(backward["sum_of_layer_ops_s"], 0.8e-3)  # the variant not counted

    def test_refuses_benchmarks_of_another_config_or_without_counts(self):
        config = copy.deepcopy(CONFIG)
        config["plan"]["recompute"] = "full"
        proc, out = self.run_check(config, [([5.0], [9.0])])
        self.assertEqual(proc.returncode, 2)
        self.assertIn("ran for layers, recompute", proc.stderr)
        bare = {n: (times, {}) for n, (times, _) in BENCH.items()}
        proc, out = self.run_check(CONFIG, [([5.0], [9.0])], kernels=bench_json(bare))
        self.assertEqual(proc.returncode, 2)
        self.assertIn("no part_forward counts", proc.stderr)
        self.assertIsNone(out)

    def test_refuses_a_run_without_its_time(self):
        kernels = bench_json(BENCH)
        del kernels["benchmarks"][1]["real_time"]
        proc, out = self.run_check(CONFIG, [([5.0], [9.0])], kernels=kernels)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("kernels.json: /benchmarks/1/real_time: missing", proc.stderr)
        self.assertIsNone(out)

    def test_fails_beyond_the_bound(self):
        proc, out = self.run_check(CONFIG, [([5.0], [10.0])])  # backward +11.1%
        self.assertEqual(proc.returncode, 1)
        self.assertFalse(out["pass"])
        self.assertIn("OUT OF BOUND", proc.stdout)
        self.assertEqual(self.run_check(CONFIG, [([5.0], [10.0])], bound="0.12")[0].returncode, 0)

    def test_refuses_a_multi_rank_config(self):
        config = copy.deepcopy(CONFIG)
        config["plan"]["tp"] = 2
        proc, out = self.run_check(config, [([5.0], [9.0])])
        self.assertEqual(proc.returncode, 2)
        self.assertIn("plan.tp·pp·dp = 2", proc.stderr)
        self.assertIsNone(out)


if __name__ == "__main__":
    unittest.main()
