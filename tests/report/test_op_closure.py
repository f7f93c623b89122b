"""scripts/op_closure.py: the runtime's compute per micro-batch against the sum of its benchmarked ops."""
import gzip
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "op_closure.py"
CONFIG = {"model": {"layers": 4, "hidden": 128, "heads": 4, "seq_len": 64, "vocab": 256},
          "plan": {"tp": 1, "pp": 1, "dp": 1, "micro_batch": 2, "global_batch": 16, "recompute": "none"}}
# Per op, the times of its runs in ms (the fastest counts); the names as Google Benchmark writes them.
BENCH = {"embedding/fwd/b:2/s:64/h:128/manual_time": [0.3, 0.2],
         "layer/fwd/hidden:128/tp:1/tokens:128/manual_time": [1.1, 1.2],
         "head/fwd/tokens:128/h:128/Vt:256/manual_time": [0.4],
         "head/bwd/tokens:128/h:128/Vt:256/manual_time": [0.6],
         "layer/bwd/hidden:128/tp:1/tokens:128/manual_time": [2.0, 2.5],
         "embedding/bwd/b:2/s:64/h:128/Vt:256/manual_time": [0.4]}


def bench_json(bench):
    runs = [{"name": n, "run_name": n, "run_type": "iteration", "real_time": t, "time_unit": "ms"}
            for n, times in bench.items() for t in times]
    runs.append({"name": "layer/fwd/x_mean", "run_type": "aggregate", "real_time": 0.001, "time_unit": "ms"})
    return {"benchmarks": runs}


def trace_json(forward_ms, backward_ms):
    events = [{"name": f"F({i},0)", "ph": "X", "dur": 1e3 * f, "pid": 0, "tid": 0, "ts": 0}
              for i, f in enumerate(forward_ms)]
    events += [{"name": f"B({i},0)", "ph": "X", "dur": 1e3 * b, "pid": 0, "tid": 0, "ts": 0}
               for i, b in enumerate(backward_ms)]
    events.append({"name": "optimizer_step", "ph": "X", "dur": 9e9, "pid": 0, "tid": 0, "ts": 0})
    return {"traceEvents": events}


class OpClosure(unittest.TestCase):
    def run_check(self, config, traces, bound="0.10", gz=False):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            (tmp / "config.json").write_text(json.dumps(config))
            (tmp / "kernels.json").write_text(json.dumps(bench_json(BENCH)))
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
            out = json.loads((tmp / "ops.json").read_text()) if (tmp / "ops.json").exists() else None
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

    def test_full_recompute_adds_the_layers_forward_to_backward(self):
        config = json.loads(json.dumps(CONFIG))
        config["plan"]["recompute"] = "full"
        proc, out = self.run_check(config, [([5.0], [13.4])])  # 9.0 + 4·1.1 = 13.4 ms
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertAlmostEqual(out["directions"]["backward"]["sum_of_ops_s"], 13.4e-3)

    def test_fails_beyond_the_bound(self):
        proc, out = self.run_check(CONFIG, [([5.0], [10.0])])  # backward +11.1%
        self.assertEqual(proc.returncode, 1)
        self.assertFalse(out["pass"])
        self.assertIn("OUT OF BOUND", proc.stdout)
        self.assertEqual(self.run_check(CONFIG, [([5.0], [10.0])], bound="0.12")[0].returncode, 0)

    def test_refuses_a_multi_rank_config(self):
        config = json.loads(json.dumps(CONFIG))
        config["plan"]["tp"] = 2
        proc, out = self.run_check(config, [([5.0], [9.0])])
        self.assertEqual(proc.returncode, 2)
        self.assertIn("plan.tp·pp·dp = 2", proc.stderr)
        self.assertIsNone(out)


if __name__ == "__main__":
    unittest.main()
