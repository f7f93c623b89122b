"""The GPU campaign's steps, in order of value (docs/gpu-campaign.md). Each
takes the context and the seconds it may use, writes its files under the work
folder as soon as it has them, records its findings with runner.note, and
returns its outcome (campaign/outcome.py: from its commands' exit statuses and
result files, never from what they printed) or raises StepSkipped. Standard
library only.
"""
import os
import platform
import subprocess
import sys
import time

from campaign import training
from campaign.outcome import FAILED, OK, combined, of_exit
from campaign.runner import StepSkipped, write_atomic, write_json
from ptdp_report.load import Refused, parse_json, read_json, read_or_none

# About 15 GPU tests a first look needs: the allocator, parameter initialisation,
# the GEMMs, cuDNN's attention forward and backward and the unfused path, and a
# tiny GPT trained on the GPU against the CPU backend.
SMOKE_FILTER = ":".join([
    "CudaPoolAllocator.*", "CudaInit.*", "CudaGemm.*", "CudaOps.*", "CudaLinear/bf16.*",
    "CudnnAttentionTest/bf16.ForwardAndBackwardMatchTheCpuReference",
    "CudnnAttentionTest/bf16.UnfusedPathMatchesTheCpuReference",
    "CudaTraining.ASmallGptOnOneGpuMatchesTheCpuBackend", "NcclWorldOfOne.AllReduceOfOneRankIsIdentity"])


def driver(ctx, room, gtest_filter=""):
    """The GPU tests through scripts/gtest_driver.py into the one table tests.tsv (tests already
    there with a final status are not run again)."""
    cmd = [ctx.python, os.path.join(ctx.root, "scripts", "gtest_driver.py"), "--binary", ctx.bin("ptdp_gpu_tests"),
           "--out", ctx.work, "--test-timeout", "120", "--budget", f"{max(room - 45, 10):.0f}",
           "--rerun-budget", "40", "--sanitizer", "auto" if ctx.gpu else "none"]
    cmd += ["--filter", gtest_filter] if gtest_filter else []
    cmd += ["--only-failed", ctx.only_failed] if ctx.only_failed else []
    log = ctx.path("logs", "gtest-driver.log")
    rc = ctx.runner.run(cmd, log, room, ctx.env)
    ctx.runner.note(ctx.last_line(log))
    return of_exit(rc)


def step_env(ctx, room):
    """Versions and facts: the GPU, driver, CUDA, cuBLASLt, cuDNN, NCCL, torch, the libraries
    ptdp loads and from where, and whether the GPU has stream-ordered memory pools."""
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version,clocks.max.sm,"
                          "clocks.max.mem,power.limit,ecc.mode.current,pcie.link.gen.current,pcie.link.width.current",
                          "--format=csv"], capture_output=True, text=True, timeout=30) if ctx.gpu else None
    libs = read_or_none(ctx.path("libraries.json")) or {}
    ptdp_libs = libs.get(ctx.bin("ptdp"), {})
    pairs = [f"{k}={v}" for k, v in ptdp_libs.items() if v and k.startswith(("libcudart", "libcublasLt", "libcudnn.",
                                                                            "libnccl"))]
    found = ctx.path("versions.json")
    ctx.runner.run([ctx.python, os.path.join(ctx.root, "scripts", "campaign", "versions.py"), found, *pairs],
                   ctx.path("logs", "versions.log"), min(room, 60), ctx.env)
    versions = read_or_none(found) or {}
    torch = subprocess.run([ctx.python, "-c", "import json, torch; print(json.dumps({'torch': torch.__version__, "
                            "'cuda': torch.version.cuda, 'cudnn': torch.backends.cudnn.version(), "
                            "'gpu': torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}))"],
                           capture_output=True, text=True, env=ctx.torch_env, timeout=120)
    manifest = read_or_none(ctx.path("pack-manifest.json")) or {}
    env = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "gpu": ctx.gpu or None, "gpu_memory_mib": ctx.gpu_mib, "device": ctx.device,
           "nvidia_smi": smi.stdout.strip() if smi else None, "versions": versions,
           "torch": read_json_text(torch.stdout.strip()) if torch.returncode == 0 else {"error": torch.stderr[-300:]},
           "pack": {k: manifest.get(k) for k in ("commit", "dirty", "created", "build")},
           "library_dirs": ctx.library_dirs, "libraries": libs, "host": platform.node(), "cpus": os.cpu_count(),
           "kernel": platform.release(), "python": sys.version.split()[0]}
    write_json(ctx.path("env.json"), env)
    lines = [f"gpu: {ctx.gpu or 'none'} ({ctx.gpu_mib} MiB)", f"pack: commit {env['pack'].get('commit')}",
             f"versions: {versions}", f"torch: {env['torch']}", f"library dirs: {':'.join(ctx.library_dirs)}"]
    lines += [f"{prog}: {name} -> {path}" for prog, m in libs.items() for name, path in sorted(m.items())]
    lines += ["", env["nvidia_smi"] or "nvidia-smi: no GPU"]
    write_atomic(ctx.path("env.txt"), "\n".join(lines) + "\n")
    ctx.runner.note(f"gpu {ctx.gpu or 'none'}; CUDA runtime {versions.get('cuda_runtime')}, driver "
                    f"{versions.get('cuda_driver')}, cuBLASLt {versions.get('cublaslt')}, cuDNN "
                    f"{versions.get('cudnn')}, NCCL {versions.get('nccl')}, memory pools "
                    f"{versions.get('memory_pools_supported')}; torch {env['torch'].get('torch')}")


def read_json_text(text):
    try:
        return parse_json(text, "the torch probe's output")
    except Refused:
        return {"unparsed": text[-300:]}


def step_smoke(ctx, room):
    """ptdp's first run on the device (the tiny GPT, 2 iterations; it names the machine
    profile), then the smoke subset of the GPU tests."""
    ctx.need_gpu()
    t0 = time.monotonic()
    config = ctx.path("configs", "first-run.json")
    c = read_json(os.path.join(ctx.root, "endtoend", "configs", "tiny.json"))
    c.pop("machine", None)  # ptdp takes the machine at hand: the GPU's profile, by its name
    if ctx.device == "cuda":
        c["plan"].update({"precision": "bf16", "attention": "flash"})
    write_json(config, c)
    out, log = ctx.path("smoke", "first-run.json"), ctx.path("logs", "first-run.log")
    rc = ctx.runner.run([ctx.bin("ptdp"), "train", "--config", config, "--device", ctx.device, "--iterations", "2",
                         "--warmup", "0", "--out", out], log, min(room, 60), ctx.env)
    ctx.runner.note(f"first ptdp run: exit {rc}: {ctx.last_line(log)[:200]}")
    first = of_exit(rc) if rc != 0 or read_or_none(out) else FAILED  # exit 0 with no readable result failed
    if first == OK:
        ctx.learn_machine(out)
    tests = driver(ctx, room - (time.monotonic() - t0), SMOKE_FILTER) if ctx.device == "cuda" else OK
    return combined([first, tests])


def step_headline(ctx, room):
    """Table 1's 1.7B model, no recompute, at the largest micro-batch the memory model
    admits, 6 iterations (2 warm-up), traced; its projection is in the result."""
    ctx.need_gpu()
    out, b, outcome = training.train(ctx, "ptdp", "1.7b", "none", room, "headline", traced=True)
    if not out:
        return outcome
    ctx.learn_machine(out)
    ctx.micro_batch[("1.7b", "none")] = b
    r = read_or_none(out)["metrics"]
    ctx.runner.note(f"1.7B b={b}: {r['iteration_s']['median']:.4g} s/iteration, MFU {100 * (r.get('mfu') or 0):.1f}%, "
                    f"{r.get('model_tflops_per_gpu', 0):.1f} TFLOP/s, peak "
                    f"{(r.get('memory_bytes') or {}).get('peak_measured', 0) / 2**30:.1f} GiB")


def step_tests(ctx, room):
    """Every GPU test not run yet, in a few processes (scripts/gtest_driver.py)."""
    ctx.need_gpu()
    if ctx.device != "cuda":
        raise StepSkipped("the CPU rehearsal runs no GPU tests")
    return driver(ctx, room)


def step_kernels(ctx, room):
    """The kernel benchmarks at the headline's shapes, the GEMM ceiling (ptdp's 8192³ GEMM and
    PyTorch's), then calibrate, the calibrated projection and the op closure."""
    ctx.need_gpu()
    b = ctx.micro_batch.get(("1.7b", "none"), ctx.micro_batches()[1])
    config = ctx.config("1.7b", b, "none")
    t0 = time.monotonic()
    kernels, log = ctx.path("kernels", "kernels.json"), ctx.path("logs", "kernels.log")
    rc = ctx.runner.run([ctx.bin("ptdp_bench_kernels"), "--device", ctx.device, "--config", config,
                         "--benchmark_min_time=0.05", f"--benchmark_out={kernels}", "--benchmark_out_format=json"],
                        log, room * 0.6, ctx.env)
    doc = read_or_none(kernels) or {}
    runs = doc.get("benchmarks", [])
    errors = [r["name"] for r in runs if r.get("error_occurred")]
    ctx.runner.note(f"ptdp_bench_kernels exit {rc}: {len(runs)} benchmarks, {len(errors)} with errors"
                    + (f" ({', '.join(errors[:6])})" if errors else ""))
    fallbacks = [r["name"] for r in runs if r.get("unfused_fallback")]
    if fallbacks:
        ctx.runner.note(f"unfused fallbacks: {', '.join(fallbacks)}")
    ceiling(ctx, room - (time.monotonic() - t0))
    if not runs:
        return combined([of_exit(rc), FAILED])
    closure(ctx, config, kernels, room - (time.monotonic() - t0))
    return combined([of_exit(rc), FAILED if errors else OK])


def bench_filter(family):
    """Google Benchmark's filter for one benchmark family: its full names carry the arguments
    ("gemm/q_fwd/m:8192/n:8192/k:8192/manual_time")."""
    return f"--benchmark_filter=^{family}/"


def ceiling(ctx, room):
    """One n³ GEMM by ptdp (the q GEMM of a config with those shapes, proj's of the same sizes timed with it:
    n = b·s = h = 8192 in bf16 on a GPU, 512 in fp32 on the CPU rehearsal) and, on a GPU, by PyTorch."""
    if room < 20:
        return
    gpu = ctx.device == "cuda"
    n = 8192 if gpu else 512
    c = {"model": {"layers": 1, "hidden": n, "heads": n // 128, "seq_len": n // 4, "vocab": 51200},
         "plan": {"tp": 1, "pp": 1, "dp": 1, "micro_batch": 4, "global_batch": 4,
                  "precision": "bf16" if gpu else "fp32",
                  "attention": "flash" if gpu else "unfused"},
         "machine": ctx.machine or ("h100-80gb" if gpu else "cpu-host")}
    config = ctx.path("configs", f"ceiling-{n}.json")
    write_json(config, c)
    out = ctx.path("kernels", "ceiling-ptdp.json")
    ctx.runner.run([ctx.bin("ptdp_bench_kernels"), "--device", ctx.device, "--config", config,
                    bench_filter("gemm/q_fwd"), "--benchmark_min_time=0.2", f"--benchmark_out={out}",
                    "--benchmark_out_format=json"], ctx.path("logs", "ceiling-ptdp.log"), min(room / 2, 60), ctx.env)
    runs = (read_or_none(out) or {}).get("benchmarks", [])
    ctx.runner.note(f"GEMM ceiling {n}³ {c['plan']['precision']}: ptdp {runs[0].get('TFLOP/s', 0):.3g} TFLOP/s"
                    if runs else "GEMM ceiling: ptdp's benchmark did not run")
    if not gpu:
        return
    ctx.runner.run([ctx.python, os.path.join(ctx.root, "scripts", "campaign", "torch_ceiling.py"),
                    ctx.path("kernels", "ceiling-torch.json")], ctx.path("logs", "ceiling-torch.log"),
                   min(room / 2, 60), ctx.torch_env)
    torch = read_or_none(ctx.path("kernels", "ceiling-torch.json")) or {}
    if torch.get("tflops"):
        ctx.runner.note(f"GEMM ceiling 8192³ bf16: PyTorch {torch['tflops']:.0f} TFLOP/s")


def closure(ctx, config, kernels, room):
    """ptdp calibrate from these benchmarks, the headline's projection with that calibration,
    and the headline's forward and backward against the sum of its benchmarked ops."""
    machine = ctx.machine or (read_or_none(config) or {}).get("machine")
    if not machine or room < 10:
        return
    calibration = ctx.path("kernels", "calibration.json")
    rc = ctx.runner.run([ctx.bin("ptdp"), "calibrate", kernels, "--machine", machine, "--out", calibration],
                        ctx.path("logs", "calibrate.log"), min(room, 30), ctx.env)
    if rc != 0:
        ctx.runner.note(f"ptdp calibrate exit {rc}: {ctx.last_line(ctx.path('logs', 'calibrate.log'))}")
        return
    projected = ctx.path("kernels", "projected-calibrated.json")
    ctx.runner.run([ctx.bin("ptdp"), "project", "--config", config, "--calibration", calibration, "--out", projected],
                   ctx.path("logs", "project.log"), min(room, 30), ctx.env)
    b = ctx.micro_batch.get(("1.7b", "none"))
    trace = ctx.path("headline", f"ptdp-1.7b-none-b{b}.trace.json.gz")
    measured = read_or_none(ctx.path("headline", f"ptdp-1.7b-none-b{b}.json"))
    p = read_or_none(projected)
    if measured and p:
        m_s, p_s = measured["metrics"]["iteration_s"]["median"], p["metrics"]["iteration_s"]["median"]
        ctx.runner.note(f"closure: iteration measured {m_s:.4g} s, calibrated projection {p_s:.4g} s "
                        f"({100 * (p_s / m_s - 1):+.1f}%)")
    if os.path.isfile(trace):
        log = ctx.path("logs", "op-closure.log")
        ctx.runner.run([ctx.python, os.path.join(ctx.root, "scripts", "op_closure.py"), "--config", config,
                        "--kernels", kernels, "--trace", trace, "--bound", "0.10", "--out",
                        ctx.path("kernels", "ops.json")], log, min(room, 30), ctx.env)
        ctx.runner.note(f"op closure: {ctx.last_line(log)}")
