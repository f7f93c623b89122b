#!/usr/bin/env python3
"""ptdp's CPU backend against PyTorch eager on the same model, batch and thread count: a
benchmark, not a test (docs/training.md, "The CPU against PyTorch eager"). For each config, `ptdp train` and
endtoend/baselines/pytorch_gpt.py --device cpu --no-compile run in turn, A/B/A/B for
--rounds rounds, with the same iterations, warm-up and threads (OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS and MKL_NUM_THREADS set to --threads for both); each side's time is
the median over rounds of its result's median iteration time, and the ratio is
pytorch / ptdp (at least 1: ptdp as fast or faster). --ops compares per op family too
(endtoend/cpu_vs_pytorch_ops.py).

Usage: cpu_vs_pytorch.py [--config FILE]... [--iterations N] [--warmup K] [--threads T]
                         [--rounds R] [--python PY] [--ptdp BIN] [--ops [--bench BIN]
                         [--op-min-time S]] [--out record.json]
Exit status: 0 success, 1 a run failed, 2 input refused (before anything runs).
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "report"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "baselines"))
from ptdp_report.load import CPU_VS_PYTORCH, Refused, read_benchmarks, read_json, read_result  # noqa: E402
from ptdp_report.output import check_output, write_json  # noqa: E402
import cpu_vs_pytorch_ops as ops  # noqa: E402
import pytorch_gpt  # noqa: E402  (torch is imported only inside its main())

BASELINE = os.path.join(REPO, "endtoend", "baselines", "pytorch_gpt.py")
TORCH_OPS = os.path.join(REPO, "endtoend", "baselines", "torch_ops.py")
DEFAULT_CONFIGS = [os.path.join(REPO, "endtoend", "configs", name) for name in ("tiny.json", "cpu-bench.json")]
DEFAULT_PYTHON = os.path.join(REPO, ".venv-torch", "bin", "python")
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
RUN_TIMEOUT_S = 3600


class RunFailed(RuntimeError):
    """A run that did not finish or wrote no readable result (exit 1)."""


def refuse(field, message):
    print(f"cpu_vs_pytorch: refused: {field}: {message}", file=sys.stderr)
    sys.exit(2)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", action="append", help="config JSON (repeatable); default: tiny.json, cpu-bench.json")
    ap.add_argument("--iterations", type=int, default=10, help="iterations per run, warm-up included")
    ap.add_argument("--warmup", type=int, default=2, help="leading iterations left out of the times")
    ap.add_argument("--threads", type=int, default=1, help="threads of both sides")
    ap.add_argument("--rounds", type=int, default=3, help="A/B rounds per config")
    ap.add_argument("--python", default=DEFAULT_PYTHON if os.path.exists(DEFAULT_PYTHON) else None,
                    help="a Python with torch (default: .venv-torch/bin/python, made by scripts/torch_venv.sh)")
    ap.add_argument("--ptdp", default=os.path.join(REPO, "build", "endtoend", "ptdp"))
    ap.add_argument("--ops", action="store_true", help="compare per op family too")
    ap.add_argument("--bench", default=os.path.join(REPO, "build", "microbench", "ptdp_bench_kernels"))
    ap.add_argument("--op-min-time", type=float, default=0.1, help="seconds each op is timed, per side")
    ap.add_argument("--out", help="write the record here")
    args = ap.parse_args(argv)
    args.config = args.config or DEFAULT_CONFIGS
    return args


def check_numbers(args):
    for name, value, low, high in (("--threads", args.threads, 1, 4096), ("--rounds", args.rounds, 1, 100),
                                   ("--iterations", args.iterations, 1, 100000)):
        if not low <= value <= high:
            refuse(name, f"must be in [{low}, {high}] (got {value})")
    if not 0 <= args.warmup < args.iterations:
        refuse("--warmup", f"must be in [0, --iterations) (got {args.warmup})")
    if not 0 < args.op_min_time <= 60:
        refuse("--op-min-time", f"must be in (0, 60] seconds (got {args.op_min_time})")


def check_config(path):
    """The config's document, refused unless the baseline runs the same model on one CPU."""
    try:
        doc = read_json(path)
    except Refused as e:
        refuse("--config", e)
    model, plan = doc.get("model"), doc.get("plan")
    if not isinstance(model, dict) or not isinstance(plan, dict):
        refuse("--config", f"{path}: needs a model and a plan object")
    if (other := pytorch_gpt.non_gpt_field(model)) is not None:
        refuse("--config", f"{path}: /model/{other[0]}: the baseline is ptdp's GPT ({other[1]})")
    if any(plan.get(k, 1) != 1 for k in ("tp", "pp", "dp")):
        refuse("--config", f"{path}: /plan: one rank only (tp = pp = dp = 1)")
    if plan.get("precision") != "fp32":
        refuse("--config", f"{path}: /plan/precision: must be \"fp32\" (the CPU backend's precision)")
    return doc


def check_program(field, path):
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        refuse(field, f"{path}: not an executable file (build it: cmake --build build)")


def torch_version(python):
    """The torch version the interpreter imports; refused (exit 2) when there is none."""
    if not python:
        refuse("--python", "no Python with torch: make one with scripts/torch_venv.sh, or name one")
    try:
        run = subprocess.run([python, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                             text=True, timeout=300, check=False)
    except OSError as e:
        refuse("--python", f"{python}: cannot run: {e}")
    if run.returncode != 0:
        refuse("--python", f"{python}: cannot import torch")
    return run.stdout.strip()


def check_arguments(args):
    """Every refusal, before anything runs: (the configs' documents, torch's version)."""
    check_numbers(args)
    configs = [check_config(path) for path in args.config]
    try:
        if args.out:
            check_output(args.out)
    except Refused as e:
        refuse("--out", e)
    check_program("--ptdp", args.ptdp)
    if args.ops:
        check_program("--bench", args.bench)
    return configs, torch_version(args.python)


# --- what the result files say ------------------------------------------------------------------
def median_iteration_s(result):
    """(median, samples) of a result's timed iterations (metrics.iteration_s)."""
    it = result["metrics"].get("iteration_s") or {}
    samples = [float(x) for x in it.get("samples") or []]
    if samples:
        return statistics.median(samples), samples
    if isinstance(it.get("median"), (int, float)):
        return float(it["median"]), []
    raise RunFailed("the result has no metrics.iteration_s")


def summarize(name, rounds):
    """A config's row from its rounds ([{"ptdp": {"median_s"}, "pytorch": {"median_s"}}]): each
    side's median over rounds, in ms, and the ratio pytorch / ptdp."""
    ptdp = statistics.median(r["ptdp"]["median_s"] for r in rounds) * 1e3
    torch = statistics.median(r["pytorch"]["median_s"] for r in rounds) * 1e3
    return {"name": name, "ptdp_ms": ptdp, "pytorch_ms": torch, "ratio": torch / ptdp if ptdp > 0 else None}


def table(rows, threads):
    return ops.ratio_table(f"ptdp CPU against PyTorch eager, {threads} thread(s); ratio = pytorch / ptdp "
                           "(>= 1: ptdp as fast)", ("config", "ptdp ms", "pytorch ms", "ratio"),
                           [(r["name"], r["ptdp_ms"], r["pytorch_ms"], r["ratio"]) for r in rows])


# --- running -------------------------------------------------------------------------------------
def thread_env(threads):
    return dict(os.environ, **{v: str(threads) for v in THREAD_VARIABLES})


def run(command, env, what, stdin=None):
    """The finished command's stdout; RunFailed naming `what` otherwise."""
    try:
        done = subprocess.run(command, env=env, input=stdin, capture_output=True, text=True,
                              timeout=RUN_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RunFailed(f"{what}: {e}") from None
    if done.returncode != 0:
        raise RunFailed(f"{what}: exit {done.returncode}: {done.stderr.strip()[-2000:]}")
    return done.stdout


def train_commands(args, config, out):
    """{side: command} of one round: the same config, iterations and warm-up for both."""
    steps = ["--iterations", str(args.iterations), "--warmup", str(args.warmup), "--out", out]
    return {"ptdp": [args.ptdp, "train", "--config", config] + steps,
            "pytorch": [args.python, BASELINE, "--config", config, "--device", "cpu", "--no-compile",
                        "--threads", str(args.threads)] + steps}


def run_rounds(args, config, work, progress):
    """The config's rounds, ptdp then PyTorch in each: [{"ptdp": {...}, "pytorch": {...}}]."""
    env, rounds = thread_env(args.threads), []
    for r in range(args.rounds):
        this = {}
        for side in ("ptdp", "pytorch"):
            out = os.path.join(work, f"{side}-{r}.json")
            run(train_commands(args, config, out)[side], env, f"{side} on {config}")
            try:
                result = read_result(out)
            except Refused as e:
                raise RunFailed(f"{side} on {config}: {e}") from None
            median, samples = median_iteration_s(result)
            this[side] = {"median_s": median, "samples": samples, "software": result.get("software"),
                          "run": result.get("run")}
            progress(f"{os.path.basename(config)} round {r + 1}/{args.rounds} {side}: "
                     f"median {median * 1e3:.2f} ms over {len(samples)} iterations")
        rounds.append(this)
    return rounds


def compare_ops(args, config, doc, work, progress):
    """ptdp's kernel benchmark on the config's shapes and the same ops in PyTorch."""
    env, out = thread_env(args.threads), os.path.join(work, "bench.json")
    run([args.bench, "--config", config, f"--benchmark_filter={ops.BENCHMARK_FILTER}",
         f"--benchmark_min_time={args.op_min_time}", "--benchmark_format=json", f"--benchmark_out={out}",
         "--benchmark_out_format=json"], env, f"ptdp_bench_kernels on {config}")
    bench = read_benchmarks(out)
    items, unsplit = ops.op_items(bench, doc["model"]["vocab"])
    progress(f"{os.path.basename(config)} ops: ptdp_bench_kernels timed {len(items)} ops")
    request = {"threads": args.threads, "min_time": args.op_min_time,
               "ops": [{"key": i["key"], "kind": i["kind"], "sizes": i["sizes"]} for i in items]}
    torch = json.loads(run([args.python, TORCH_OPS], env, f"torch_ops on {config}", json.dumps(request)))
    progress(f"{os.path.basename(config)} ops: PyTorch timed {len(torch['ops'])} op variants")
    return {"benchmark_context": bench.get("context"), "items": items, "unsplit_fused": unsplit,
            "torch_ops": torch["ops"], "families": ops.family_rows(items, torch["ops"])}


# --- the record ----------------------------------------------------------------------------------
def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def git(*argv):
    try:
        return subprocess.run(["git", "-C", REPO, *argv], capture_output=True, text=True, timeout=30,
                              check=False).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def software(args, torch):
    version = run([args.ptdp, "--version"], None, "ptdp --version").strip()
    return {"ptdp": version, "commit": git("rev-parse", "HEAD") or "unknown",
            "uncommitted_changes": bool(git("status", "--porcelain", "--untracked-files=no")),
            "torch": torch, "torch_python": args.python, "driver_python": platform.python_version()}


def record(args, torch, entries):
    return {"schema": CPU_VS_PYTORCH, "mode": "measured",
            "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": sys.argv, "machine": {"cpu": cpu_model(), "cpus": os.cpu_count(), "host": platform.node()},
            "threads": args.threads, "thread_variables": list(THREAD_VARIABLES),
            "iterations": args.iterations, "warmup": args.warmup, "rounds": args.rounds,
            "order": "per round: ptdp, then pytorch", "software": software(args, torch), "configs": entries}


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    docs, torch = check_arguments(args)
    progress = lambda line: print(f"cpu_vs_pytorch: {line}", flush=True)  # noqa: E731
    entries = []
    try:
        for path, doc in zip(args.config, docs):
            with tempfile.TemporaryDirectory(prefix="cpu_vs_pytorch.") as work:
                rounds = run_rounds(args, path, work, progress)
                entry = {"path": path, "config": doc, "rounds": rounds,
                         **summarize(os.path.basename(path), rounds)}
                if args.ops:
                    entry["ops"] = compare_ops(args, path, doc, work, progress)
            entries.append(entry)
    except RunFailed as e:
        print(f"cpu_vs_pytorch: failed: {e}", file=sys.stderr)
        return 1
    print(table(entries, args.threads))
    for e in entries:
        if "ops" in e:
            print(ops.ops_table(e["name"], e["ops"]["families"]))
    if args.out:
        write_json(args.out, record(args, torch, entries))
        print(f"cpu_vs_pytorch: record in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
