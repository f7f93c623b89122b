#!/usr/bin/env python3
"""PyTorch baseline for `ptdp train`: the same GPT, batch, sequence and
iterations, written the way a PyTorch user would (bf16 autocast, fused AdamW,
torch.compile of each block, SDPA causal attention), on synthetic tokens. Writes a result of
ptdp's schema (docs/results-format.md) with "system": "pytorch".

The model is ptdp's: pre-LN blocks, learned positions, the word embedding tied
to the logits, a GeLU (tanh) MLP of inner size f (4h by default), biases on
every linear layer and layernorm, weights drawn from N(0, 0.02) and the two
residual projections (attention output, MLP second layer) from
N(0, 0.02/sqrt(2l)), biases zero, layernorm scales one. The optimizer is
ptdp's AdamW: the config's "optimizer" section over ptdp's defaults (core/config/
config.h), weight decay on matrices and embeddings only, the gradient's global
norm clipped to clip_grad. One iteration is global_batch/micro_batch
micro-batches with gradients accumulated, then one optimizer step.

Usage: pytorch_gpt.py --config FILE [--iterations N] [--warmup K] [--recompute none|full]
                      [--device cuda|cpu] [--no-compile] [--threads N] [--out result.json]
Exit status: 0 success, 1 failure, 2 input refused, 3 out of device memory.
"""
import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "report"))
from ptdp_report.load import Refused, read_json, require  # noqa: E402
from ptdp_report.output import check_output, write_json  # noqa: E402

OPTIMIZER_DEFAULTS = {"lr": 1e-3, "beta1": 0.9, "beta2": 0.95, "eps": 1e-8, "weight_decay": 0.01, "clip_grad": 1.0}
PLAN_DEFAULTS = {"tp": 1, "pp": 1, "dp": 1, "virtual_stages": 1, "micro_batch": 1, "global_batch": 1,
                 "schedule": "1f1b", "recompute": "none", "precision": "bf16", "seed": 1, "attention": "unfused"}


# Model fields that make another block than ptdp's GPT, the one written here: their GPT values.
GPT_BLOCK = {"norm": "layernorm", "activation": "gelu", "position": "learned", "bias": True,
             "tied_embeddings": True, "dropout": 0}


def non_gpt_field(model):
    """(field, what the baseline needs) of the first model field that asks for another block than
    ptdp's GPT, or None."""
    for key, gpt in GPT_BLOCK.items():
        if model.get(key, gpt) != gpt:
            return key, json.dumps(gpt)
    if (model.get("kv_heads") or model.get("heads")) != model.get("heads"):
        return "kv_heads", "kv_heads = heads"
    return None


def refuse(field, message):
    print(f"pytorch_gpt: refused: {field}: {message}", file=sys.stderr)
    sys.exit(2)


def read_config(path):
    """The config file and its machine profile (read from sweeps/machines/ when named)."""
    try:
        c = require(read_json(path), path, {"/model": "object", "/plan": "object", "/model/hidden": "number",
                                            "/model/heads": "number"})
        machine = c.get("machine", "cpu-host")
        if isinstance(machine, str):
            machines = os.environ.get("PTDP_MACHINES", os.path.join(REPO, "sweeps", "machines"))
            machine = read_json(os.path.join(machines, machine + ".json"))
    except Refused as e:
        refuse("config", e)
    return c, machine


def load_config(path):
    """The config's model, plan (with ptdp's defaults), machine profile and optimizer."""
    c, machine = read_config(path)
    model = dict(c["model"])
    if (other := non_gpt_field(model)) is not None:
        refuse("model." + other[0], f"the baseline is ptdp's GPT block ({other[1]})")
    model.setdefault("ffn_hidden", 0)
    model.setdefault("dropout", 0.0)
    plan = {**PLAN_DEFAULTS, **c["plan"]}
    optimizer = {**OPTIMIZER_DEFAULTS, **c.get("optimizer", {})}
    if plan["tp"] * plan["pp"] * plan["dp"] != 1:
        refuse("plan", "the baseline runs on one device: tp = pp = dp = 1")
    if plan["global_batch"] % plan["micro_batch"]:
        refuse("plan.global_batch", "must be a multiple of plan.micro_batch")
    if model["hidden"] % model["heads"]:
        refuse("model.heads", "must divide model.hidden")
    return model, plan, machine, optimizer


# --- FLOPs: ptdp's counts (core/accounting/flops.cpp), f the MLP inner size ---------------------------
def layer_forward_flops(m, batch):
    s, h, f = m["seq_len"], m["hidden"], m["ffn_hidden"] or 4 * m["hidden"]
    return 2 * batch * s * (4 * h * h + 2 * h * f) + 4 * batch * s * s * h


def flops_per_iteration(m, batch, recompute):
    """{"model", "eq3", "no_recompute", "hardware"} as ptdp reports them."""
    logits = 6 * batch * m["seq_len"] * m["hidden"] * m["vocab"]
    layer = layer_forward_flops(m, batch)
    eq3 = 4 * m["layers"] * layer + logits
    no_recompute = 3 * m["layers"] * layer + logits
    hardware = eq3 if recompute == "full" else no_recompute
    return {"model": hardware, "eq3": eq3, "no_recompute": no_recompute, "hardware": hardware}


def throughput_metrics(m, plan, machine, iteration_s):
    batch = plan["global_batch"]
    fl = flops_per_iteration(m, batch, plan["recompute"])
    peak = (machine.get("peak_tflops") or {}).get(plan["precision"], 0)
    per_s = lambda x: x / iteration_s / 1e12 if iteration_s > 0 else 0.0
    util = lambda x: x / (iteration_s * peak * 1e12) if iteration_s > 0 and peak > 0 else None
    return {"flops_per_iteration": fl,
            "model_tflops_per_gpu": per_s(fl["model"]), "hardware_tflops_per_gpu": per_s(fl["hardware"]),
            "aggregate_pflops": per_s(fl["model"]) / 1e3,
            "tokens_per_s": batch * m["seq_len"] / iteration_s if iteration_s > 0 else 0.0,
            "sequences_per_s": batch / iteration_s if iteration_s > 0 else 0.0,
            "peak_tflops_used": peak or None,
            "peak_source": (machine.get("sources") or {}).get("peak_tflops"),
            "percent_of_peak": 100 * per_s(fl["model"]) / peak if peak else None,
            "mfu": util(fl["no_recompute"]), "hfu": util(fl["hardware"]),
            "utilization": {"peak_tflops": peak or None, "precision": plan["precision"],
                            "mfu": "flops_per_iteration.no_recompute / (gpus * iteration_s * peak)",
                            "hfu": "flops_per_iteration.hardware / (gpus * iteration_s * peak)"}}


def summarize(samples):
    if not samples:
        return {"median": None, "min": None, "max": None, "mean": None, "samples": []}
    s = sorted(samples)
    k = len(s) // 2
    med = s[k] if len(s) % 2 else 0.5 * (s[k - 1] + s[k])
    return {"median": med, "min": s[0], "max": s[-1], "mean": sum(s) / len(s), "samples": samples}


# --- the model ----------------------------------------------------------------------------------
def build_model(torch, m, recompute):
    nn, F = torch.nn, torch.nn.functional
    from torch.utils.checkpoint import checkpoint
    h, a, f = m["hidden"], m["heads"], m["ffn_hidden"] or 4 * m["hidden"]

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(h), nn.LayerNorm(h)
            self.qkv, self.proj = nn.Linear(h, 3 * h), nn.Linear(h, h)
            self.fc1, self.fc2 = nn.Linear(h, f), nn.Linear(f, h)

        def forward(self, x):  # x (b, s, h)
            b, s, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, a, h // a).permute(2, 0, 3, 1, 4)  # each (b, a, s, d)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # flash on CUDA for bf16/fp16
            x = x + self.proj(y.transpose(1, 2).reshape(b, s, h))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(m["vocab"], h), nn.Embedding(m["seq_len"], h)
            self.blocks = nn.ModuleList(Block() for _ in range(m["layers"]))
            self.ln_f = nn.LayerNorm(h)

        def forward(self, tokens, targets):  # tokens, targets (b, s)
            x = self.wte(tokens) + self.wpe.weight[: tokens.shape[1]]
            for blk in self.blocks:
                x = checkpoint(blk, x, use_reentrant=False) if recompute == "full" and self.training else blk(x)
            logits = self.ln_f(x) @ self.wte.weight.t()  # tied embedding: (b, s, V)
            return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1))

    model = GPT()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2:  # matrices and embeddings
                residual = name.endswith("proj.weight") or name.endswith("fc2.weight")
                p.normal_(0.0, 0.02 / math.sqrt(2 * m["layers"]) if residual else 0.02)
            elif name.endswith("bias"):  # linear and layernorm biases; layernorm scales stay one
                p.zero_()
    return model


def make_optimizer(torch, model, o, device):
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": o["weight_decay"]}, {"params": no_decay, "weight_decay": 0.0}]
    kw = dict(lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"])
    try:
        return torch.optim.AdamW(groups, fused=True, **kw), "fused"
    except (RuntimeError, TypeError):  # no fused kernel for this device
        return torch.optim.AdamW(groups, foreach=True, **kw), "foreach"


def software_info(torch):
    try:
        commit = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=10).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        commit = "unknown"
    cuda = torch.cuda.is_available()
    return {"commit": commit, "python": platform.python_version(), "torch": torch.__version__,
            "cuda_runtime": torch.version.cuda, "cudnn": torch.backends.cudnn.version() if cuda else None,
            "nccl": ".".join(map(str, torch.cuda.nccl.version())) if cuda else None,
            "triton": _version("triton")}


def _version(module):
    try:
        return __import__(module).__version__
    except Exception:  # absent or broken: not part of this run
        return None


def train(torch, args, model_cfg, plan, optimizer_cfg):
    device = torch.device(args.device)
    torch.manual_seed(plan["seed"])
    model = build_model(torch, model_cfg, plan["recompute"]).to(device)
    model.train()
    opt, opt_kind = make_optimizer(torch, model, optimizer_cfg, device)
    if not args.no_compile:
        # Regional compilation: each block compiled alone; the identical blocks share one compiled
        # graph, so a 24-layer model compiles in about the time of one layer.
        for blk in model.blocks:
            blk.compile()
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(plan["precision"])
    scaler = torch.amp.GradScaler(args.device) if dtype == torch.float16 else None
    b, s, V = plan["micro_batch"], model_cfg["seq_len"], model_cfg["vocab"]
    micro = plan["global_batch"] // b
    gen = torch.Generator(device=device).manual_seed(plan["seed"])

    def step():
        total = 0.0
        for _ in range(micro):
            tokens = torch.randint(0, V, (b, s + 1), device=device, generator=gen)  # synthetic, uniform
            with torch.autocast(args.device, dtype=dtype, enabled=dtype is not None):
                loss = model(tokens[:, :-1], tokens[:, 1:]) / micro
            (scaler.scale(loss) if scaler else loss).backward()
            total += loss.detach()
        if scaler:
            scaler.unscale_(opt)
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), optimizer_cfg["clip_grad"]) \
            if optimizer_cfg["clip_grad"] > 0 else torch.zeros(())
        if scaler:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
        opt.zero_grad(set_to_none=True)
        return float(total), float(norm)

    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    seconds, losses, norms = [], [], []
    for it in range(args.iterations):
        sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
        sync()
        t0 = time.perf_counter()
        loss, norm = step()
        sync()
        dt = time.perf_counter() - t0
        losses.append(loss)
        norms.append(norm)
        if it >= args.warmup:
            seconds.append(dt)
        print(f"iter {it + 1:4d}/{args.iterations}  loss {loss:.4f}  {dt:.3f} s"
              f"{'  (warm-up)' if it < args.warmup else ''}", flush=True)
    peak = torch.cuda.max_memory_allocated() if device.type == "cuda" else None
    return seconds, losses, norms, peak, opt_kind


def check_arguments(args):
    """The options' own rules, before the config is read or torch imported (exit 2)."""
    if args.iterations < 1 or not 0 <= args.warmup < args.iterations:
        refuse("--warmup", "must be in [0, --iterations)")
    if args.threads is not None and not 1 <= args.threads <= 4096:
        refuse("--threads", f"must be in [1, 4096] (got {args.threads})")
    try:
        if args.out:
            check_output(args.out)
    except Refused as e:
        refuse("--out", e)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--recompute", choices=["none", "full"], help="default: the config's plan.recompute")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    ap.add_argument("--no-compile", action="store_true", help="run eagerly, without torch.compile")
    ap.add_argument("--threads", type=int, help="torch.set_num_threads(N); default: torch's own choice")
    ap.add_argument("--out")
    args = ap.parse_args()
    check_arguments(args)
    model_cfg, plan, machine, optimizer_cfg = load_config(args.config)
    if args.recompute:
        plan["recompute"] = args.recompute
    if plan["recompute"] not in ("none", "full"):
        refuse("plan.recompute", "the baseline runs none or full")
    import torch
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    if args.device == "cuda" and not torch.cuda.is_available():
        refuse("--device", "no CUDA device")
    if args.device == "cuda" and plan["precision"] == "fp32":
        plan["precision"] = "bf16"  # as ptdp: the CUDA backend trains in bf16 or fp16
    try:
        seconds, losses, norms, peak, opt_kind = train(torch, args, model_cfg, plan, optimizer_cfg)
    except torch.cuda.OutOfMemoryError as e:
        print(f"pytorch_gpt: out of memory at micro-batch {plan['micro_batch']}: {e}", file=sys.stderr)
        sys.exit(3)
    it_s = summarize(seconds)["median"]
    metrics = throughput_metrics(model_cfg, plan, machine, it_s)
    metrics["iteration_s"] = summarize(seconds)
    metrics["memory_bytes"] = {"peak_measured": peak}
    metrics["loss"], metrics["grad_norm"] = losses, norms
    cuda = args.device == "cuda"
    result = {"schema": "ptdp.result/2", "system": "pytorch", "mode": "measured", "model": model_cfg, "plan": plan,
              "machine": machine, "optimizer": optimizer_cfg, "software": software_info(torch),
              "run": {"device": args.device, "ranks": 1, "iterations": args.iterations, "warmup": args.warmup,
                      "threads": torch.get_num_threads(),
                      "data": "synthetic (uniform random tokens)",
                      "backend": "pytorch " + ("eager" if args.no_compile else "torch.compile (per block)") +
                                 ", SDPA causal attention, AdamW " + opt_kind,
                      "hardware": {"device": torch.cuda.get_device_name(0) if cuda else platform.processor()}},
              "metrics": metrics}
    if args.out:
        write_json(args.out, result)
    pct = lambda x: f"{100 * x:.1f}%" if x is not None else "n/a"
    print(f"pytorch_gpt: median {it_s:.4f} s/iteration, {metrics['model_tflops_per_gpu']:.4f} model TFLOP/s per "
          f"device, MFU {pct(metrics['mfu'])}, HFU {pct(metrics['hfu'])}, peak memory "
          f"{(peak or 0) / 2**20:.1f} MiB{', result in ' + args.out if args.out else ''}")


if __name__ == "__main__":
    main()
