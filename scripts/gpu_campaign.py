#!/usr/bin/env python3
"""The GPU campaign: everything ptdp has to learn from one GPU lease, in one
call of under 9 minutes, from the pack built on the CPU machine
(scripts/gpu_pack.sh; docs/gpu-campaign.md).

It unpacks the pack, checks with ldd that every library resolves (and stops at
once, with the reason written, when one does not), then runs the steps in order
of value within one budget (540 s by default), each under its own cap, a step
that no longer fits recorded as skipped:

  env       versions: GPU, driver, CUDA, cuBLASLt, cuDNN, NCCL, torch, the libraries and their paths,
            memory-pool support
  smoke     ptdp's first run on the GPU (the tiny GPT) and about 15 GPU tests
  headline  Table 1's 1.7B model, no recompute, the largest micro-batch that fits, 6 iterations, traced
  tests     the remaining GPU tests, through scripts/gtest_driver.py
  kernels   the kernel benchmarks at the 1.7B shapes, the GEMM ceiling, calibration and closure
  baseline  the PyTorch baseline of the headline run
  more      the 350M model, the recompute variants (ptdp and PyTorch), the Llama block
  slices    ptdp slice of two Table 1 rows
  ncu       Nsight Compute kernel times of one layer's forward and backward

OUT receives six files: summary.md, status.tsv, tests.tsv, env.txt,
campaign.log and campaign.tar.gz (every result, log and config); a background
packer rewrites them every 30 s, so a call cut off at its limit still returns
what finished.

Usage: gpu_campaign.py OUT [--pack DIR] [--steps LIST] [--only-failed TESTS.TSV] [--budget S] [--work DIR]
                       [--device cuda|cpu]
  --device cpu rehearses the training, kernel and summary steps on the CPU with the tiny GPT.
Each step's status is an outcome (campaign/outcome.py): ok, failed, timeout, oom, skipped or refused,
read from its commands' exit statuses and result files.
Exit status: 0 every step ok or skipped, 1 a step had another outcome, 2 refused input, 3 the pack cannot run here.
"""
import argparse
import hashlib
import os
import shutil
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "report"))
import gpu_pack  # noqa: E402
import ldd_check  # noqa: E402
from campaign import steps, steps_more  # noqa: E402
from campaign.context import Context  # noqa: E402
from campaign.outcome import FAILED, passed  # noqa: E402
from campaign.runner import Runner, Step, write_atomic, write_json  # noqa: E402
from ptdp_report.load import Refused, read_document, require  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPS = {row.name: row for row in (  # the step table, in order of value: name, cap in seconds, least it needs, body
    Step("env", 30, 5, steps.step_env),
    Step("smoke", 90, 20, steps.step_smoke),
    Step("headline", 150, 30, steps.step_headline),
    Step("tests", 180, 30, steps.step_tests),
    Step("kernels", 120, 30, steps.step_kernels),
    Step("baseline", 150, 40, steps_more.step_baseline),
    Step("more", 150, 40, steps_more.step_more),
    Step("slices", 80, 30, steps_more.step_slices),
    Step("ncu", 60, 20, steps_more.step_ncu),
)}
WORK_MARK = ".ptdp-campaign-work"


def refuse(why):
    print(f"gpu_campaign: refused: {why}", file=sys.stderr)
    sys.exit(2)


def prepare_folder(path, what, mark=None):
    """An empty folder at path: made, or emptied when it is one this campaign made (mark)."""
    if os.path.islink(path) or (os.path.exists(path) and not os.path.isdir(path)):
        refuse(f"{what} {path}: not a folder")
    if os.path.isdir(path) and os.listdir(path):
        if mark and os.path.exists(os.path.join(path, mark)):
            shutil.rmtree(path)
        elif mark:
            refuse(f"{what} {path}: a folder this campaign did not make (no {mark}); name another")
    os.makedirs(path, exist_ok=True)
    if mark:
        open(os.path.join(path, mark), "w").close()


def unpack(pack_dir, work):
    """Checks the archive against its manifest and unpacks it into work/pack; returns that folder."""
    try:
        manifest = require(read_document(os.path.join(pack_dir, "manifest.json"), "ptdp.gpu_pack/1"),
                           os.path.join(pack_dir, "manifest.json"), {"/archive/name": "string",
                                                                     "/archive/sha256": "string"})
    except Refused as e:
        return None, f"{e} (run scripts/gpu_pack.sh)"
    archive = os.path.join(pack_dir, manifest["archive"]["name"])
    h = hashlib.sha256()
    try:
        with open(archive, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except OSError as e:
        return None, f"{archive}: {e}"
    if h.hexdigest() != manifest["archive"]["sha256"]:
        return None, f"{archive}: its sha256 differs from the manifest's (a pack from another build)"
    into = os.path.join(work, "pack")
    try:
        gpu_pack.extract_pack(archive, into)
    except (OSError, ValueError, tarfile.TarError) as e:
        return None, str(e)
    shutil.copyfile(os.path.join(pack_dir, "manifest.json"), os.path.join(work, "pack-manifest.json"))
    return into, ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--pack", default=os.path.join(ROOT, ".gpupack"))
    ap.add_argument("--steps", default=",".join(STEPS))
    ap.add_argument("--only-failed", help="tests.tsv of an earlier campaign: run only its tests that did not pass")
    ap.add_argument("--budget", type=float, default=540)
    ap.add_argument("--work", default=os.path.join(ROOT, ".campaign-work"))
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    args = ap.parse_args()
    chosen = [s for s in args.steps.split(",") if s]
    unknown = [s for s in chosen if s not in STEPS]
    if unknown or not chosen:
        refuse(f"--steps: unknown {', '.join(unknown) or '(none given)'}; the steps are {', '.join(STEPS)}")
    if not 30 <= args.budget <= 3600:
        refuse("--budget: must be between 30 and 3600 seconds")
    if args.only_failed and not os.path.isfile(args.only_failed):
        refuse(f"--only-failed {args.only_failed}: no such file")
    out, work = os.path.abspath(args.out), os.path.abspath(args.work)
    if os.path.commonpath([out, work]) in (out, work):
        refuse("OUT and --work must not lie inside one another")
    prepare_folder(work, "--work", WORK_MARK)
    prepare_folder(out, "OUT")
    runner = Runner(out, work, args.budget)
    runner.say(f"gpu_campaign: steps {','.join(chosen)}, budget {args.budget:.0f} s, device {args.device}")
    pack, why = unpack(os.path.abspath(args.pack), work)
    ctx = Context(ROOT, work, runner, args.device, pack or os.path.join(work, "pack"))
    ctx.only_failed = os.path.abspath(args.only_failed) if args.only_failed else None
    if pack:
        programs = [ctx.bin(n) for n in ("ptdp", "ptdp_gpu_tests", "ptdp_bench_kernels")]
        resolution, problems = ldd_check.check(programs, ctx.env, os.path.join(pack, "lib"))
        write_json(ctx.path("libraries.json"), resolution)
        why = "; ".join(problems)
    summary = lambda: write_summary(work)  # noqa: E731
    if why:
        runner.say(f"gpu_campaign: the pack cannot run here: {why}")
        runner.record("pack", FAILED, 0, [why])
        runner.close(summary)
        return 3
    runner.say(f"gpu_campaign: pack unpacked, every library resolves (GPU: {ctx.gpu or 'none'})")
    outcomes = []
    for name in chosen:
        outcomes.append(runner.step(STEPS[name], ctx))
        runner.pack_now(summary)
    runner.close(summary)
    runner.say(f"gpu_campaign: done in {runner.elapsed():.0f} s: " +
               ", ".join(f"{r['step']} {r['status']}" for r in runner.steps))
    return 0 if all(passed(o) for o in outcomes) else 1


def write_summary(work):
    import gpu_campaign_summary
    write_atomic(os.path.join(work, "summary.md"), gpu_campaign_summary.render(work))


if __name__ == "__main__":
    sys.exit(main())
