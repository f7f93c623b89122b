"""A warmup + cosine training run of ptdp against a PyTorch loop, iteration by iteration.

ptdp trains a 2-layer GPT (vocabulary 256, fp32, two micro-batches of 2 a
step) for 100 iterations on a byte file of exactly seq_len + 1 seeded random
bytes: it holds one window, so every sample of every micro-batch is the same
sequence and no data RNG needs replicating. The initial weights come from
`ptdp train --iterations 0 --export-hf`; transformers' GPT2LMHeadModel loads
them (float32, eager attention, dropouts 0) and a plain PyTorch loop trains
them with torch.optim.AdamW (ptdp's betas, eps, weight decay on the matrices
and embeddings only), LambdaLR with the same warmup + cosine factor,
clip_grad_norm_ at clip_grad, and the loss the mean over the global batch's
tokens (micro-batch means averaged, the gradients accumulated). Every
iteration's loss must agree within 1e-5 (absolute) and every learning rate
within 1e-5 of that iteration's rate; the worst of each is printed, with the
gradient norms' (not asserted: a diagnostic of where a difference starts).

Needs torch, transformers and safetensors (CI has none): skipped visibly
(unittest's skip with the reason, exit status 77 for ctest's SKIP_RETURN_CODE)
where they cannot be imported. Registered in ctest as interop.torch_training
with the Python in PTDP_TORCH_PYTHON (cmake -DPTDP_TORCH_PYTHON=...).

Run: python3 tests/report/torch_training_check.py --ptdp build/endtoend/ptdp
"""
import json
import os
import random
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "report"))
from ptdp_report.load import read_json, read_result  # noqa: E402
from lr_schedule_check import OPTIMIZER, factor  # noqa: E402  the schedule report.lr_schedule checks
from torch_interop import ptdp_option, requires_torch, run_tests  # noqa: E402

ITERATIONS = 100
# The target. Measured: the curves differ by 1e-9 to 3.5e-7 at every iteration, with no
# growth while the loss falls from 5.1 to 1.5e-4 (the window is memorised): fp32 rounding, not
# drift. Absolute, since late losses are that small (relative 1e-3 there). A real difference
# goes far past it: weight decay off 6e-4, on biases too 1e-3, eps 1e-6 4e-3, no clipping 4e-2, the
# micro-batch losses summed (gradient x2) 1e-3, the schedule one iteration early 0.4.
LOSS_TOL = 1e-5  # absolute, in nats
LR_TOL = 1e-5    # relative to the iteration's learning rate
SEQ_LEN, DATA_SEED = 32, 32
CONFIG = {"model": {"layers": 2, "hidden": 64, "heads": 4, "seq_len": SEQ_LEN, "vocab": 256},
          # two micro-batches a step: gradient accumulation as ptdp's 1F1B runs it
          "plan": {"tp": 1, "pp": 1, "dp": 1, "micro_batch": 2, "global_batch": 4, "precision": "fp32", "seed": 1},
          # lr 3e-3, warmup 10, cosine to 3e-4 at 100; betas, eps, weight_decay, clip_grad: ptdp's defaults
          "optimizer": OPTIMIZER, "machine": "cpu-host"}
PTDP = None  # the ptdp program, from --ptdp


def ptdp_train(tmp, *options):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PTDP_MEASURE_PEAK="0")
    r = subprocess.run([PTDP, "train", "--config", "config.json", "--data", "data.bin", *options], cwd=tmp,
                       env=env, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise AssertionError(f"ptdp train {' '.join(options)} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")


def ptdp_run(tmp):
    """ptdp's 100 iterations and its initial weights: (the result, the HF folder, the one window)."""
    window = bytes(random.Random(DATA_SEED).randrange(256) for _ in range(SEQ_LEN + 1))
    (Path(tmp) / "data.bin").write_bytes(window)
    (Path(tmp) / "config.json").write_text(json.dumps(CONFIG))
    ptdp_train(tmp, "--iterations", "0", "--export-hf", "init")
    ptdp_train(tmp, "--iterations", str(ITERATIONS), "--warmup", "0", "--out", "r.json")
    doc = read_result(Path(tmp) / "r.json")
    return doc, Path(tmp) / "init", list(window)


def optimizer_of(doc):
    """AdamW's settings as ptdp's result records them, its defaults resolved (the schedule: factor)."""
    return {k: doc["optimizer"][k] for k in ("lr", "beta1", "beta2", "eps", "weight_decay", "clip_grad")}


def torch_run(folder, window, opt):
    """The PyTorch loop: per iteration (loss, learning rate, gradient norm before clipping)."""
    import torch
    import torch.nn.functional as F
    from transformers import GPT2LMHeadModel
    torch.set_num_threads(1)
    model = GPT2LMHeadModel.from_pretrained(str(folder), torch_dtype=torch.float32, attn_implementation="eager",
                                            resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    model.train()
    # ptdp decays the weight matrices and the embeddings (wte, wpe), not biases or LayerNorm weights:
    # in GPT-2 those are exactly the tensors of two or more dimensions. lm_head is wte (tied).
    params = list(model.parameters())
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": opt["weight_decay"]},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    adamw = torch.optim.AdamW(groups, lr=opt["lr"], betas=(opt["beta1"], opt["beta2"]), eps=opt["eps"])
    schedule = torch.optim.lr_scheduler.LambdaLR(adamw, factor)
    micro_batches = CONFIG["plan"]["global_batch"] // CONFIG["plan"]["micro_batch"]
    tokens = torch.tensor([window[:-1]] * CONFIG["plan"]["micro_batch"])   # (b, s)
    targets = torch.tensor([window[1:]] * CONFIG["plan"]["micro_batch"])   # (b, s)
    out = []
    for _ in range(ITERATIONS):
        adamw.zero_grad(set_to_none=True)
        losses = []
        for _ in range(micro_batches):
            logits = model(tokens).logits.reshape(-1, 256)  # (b·s, V) float32
            loss = F.cross_entropy(logits, targets.reshape(-1))  # mean over the micro-batch's b·s tokens
            (loss / micro_batches).backward()  # the global batch's mean: each micro-batch's share
            losses.append(F.cross_entropy(logits.detach().double(), targets.reshape(-1)).item())
        lr = adamw.param_groups[0]["lr"]
        norm = torch.nn.utils.clip_grad_norm_(params, opt["clip_grad"]).item()
        adamw.step()
        schedule.step()
        out.append((sum(losses) / micro_batches, lr, norm))
    return out


def worst(ours, theirs, scale):
    """(iteration, difference, difference / scale) of the largest difference over scale."""
    diffs = [(abs(a - b) / s if s else abs(a - b), i, abs(a - b))
             for i, (a, b, s) in enumerate(zip(ours, theirs, scale))]
    ratio, i, d = max(diffs)
    return i, d, ratio


@requires_torch
class TrainingAgainstPyTorch(unittest.TestCase):
    def test_warmup_cosine_run_follows_pytorch(self):
        with tempfile.TemporaryDirectory() as tmp:
            doc, folder, window = ptdp_run(tmp)
            check = read_json(folder / "ptdp_check.json")
            # the one window is every sample: ptdp's fixed batch is it, row for row
            self.assertEqual(check["tokens"], [window[:-1]] * CONFIG["plan"]["micro_batch"])
            opt = optimizer_of(doc)
            theirs = torch_run(folder, window, opt)
        loss, lr, norm = doc["metrics"]["loss"], doc["metrics"]["lr"], doc["metrics"]["grad_norm"]
        self.assertEqual((len(loss), len(lr), len(norm)), (ITERATIONS,) * 3)
        t_loss, t_lr, t_norm = zip(*theirs)
        i, d, _ = worst(loss, t_loss, [1.0] * ITERATIONS)
        print(f"\nloss: worst |ptdp - torch| = {d:.3e} at iteration {i} (ptdp {loss[i]:.9f}, torch {t_loss[i]:.9f});"
              f" first {loss[0]:.6f}, last {loss[-1]:.6f}")
        j, e, rel = worst(lr, t_lr, t_lr)
        print(f"lr: worst |ptdp - torch| = {e:.3e} ({rel:.3e} of the rate) at iteration {j}")
        k, f, nrel = worst(norm, t_norm, t_norm)
        print(f"grad norm (not asserted): worst relative difference {nrel:.3e} at iteration {k}"
              f" (ptdp {norm[k]:.6g}, torch {t_norm[k]:.6g})")
        self.assertLessEqual(d, LOSS_TOL, f"loss at iteration {i}")
        self.assertLessEqual(rel, LR_TOL, f"learning rate at iteration {j}")


def main():
    global PTDP
    PTDP, rest = ptdp_option(__doc__.splitlines()[0])
    run_tests(rest)


if __name__ == "__main__":
    main()
