#!/usr/bin/env python3
"""The ops of ptdp's kernel benchmark timed in PyTorch eager (fp32, CPU), for
endtoend/cpu_vs_pytorch.py --ops: each op at the sizes ptdp's benchmark ran it,
as the PyTorch GPT of pytorch_gpt.py runs it; a backward as autograd runs it
(torch.autograd.grad over a kept graph, the engine's dispatch included, as
eager training pays it). The attention core twice: SDPA causal and the explicit
matmul-softmax-matmul.

Letters: n tokens of a micro-batch (b·s), h hidden, a heads, d head dim, V vocabulary.
Reads {"threads", "min_time", "ops": [{"key", "kind", "sizes": {name: int}}]} on
stdin, writes {"torch", "threads", "ops": [{"key", "variant", "us", "samples"}]} on
stdout (µs per call: the median of REPEATS batches of calls).
Exit status: 0 success, 1 failure.
"""
import json
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pytorch_gpt  # noqa: E402  (the baseline's optimizer choice, one definition)

REPEATS = 3  # batches of calls per op; their median is the op's time


def time_call(fn, min_time):
    """µs per call of fn: warmed up, then REPEATS batches of calls that each last about
    min_time / REPEATS seconds."""
    fn()
    fn()
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-7)
    calls = max(1, math.ceil(min_time / REPEATS / one))
    samples = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(samples), samples


def backward_of(torch, out, inputs):
    """A call of autograd over out's graph (kept) for a random output gradient."""
    grad = torch.randn_like(out)
    return lambda: torch.autograd.grad(out, inputs, grad, retain_graph=True)


def leaf(torch, *shape):
    return torch.randn(*shape).requires_grad_()


def gemm(torch, kind, z):
    """C (m, n) = A (m, k) · B (k, n): nn.Linear's forward, or the data or weight gradient
    autograd computes for it."""
    m, n, k = z["m"], z["n"], z["k"]
    linear = torch.nn.functional.linear
    if kind == "linear_forward":  # y (m, n) = x (m, k) · W (n, k)ᵀ + b (n)
        x, w, b = leaf(torch, m, k), leaf(torch, n, k), leaf(torch, n)
        return lambda: linear(x, w, b)
    if kind == "linear_data_grad":  # dx (m, n) = dy (m, k) · W (k, n), of y (m, k) = x · Wᵀ + b
        x, w, b = leaf(torch, m, n), leaf(torch, k, n), leaf(torch, k)
        return backward_of(torch, linear(x, w, b), (x,))
    x, w, b = leaf(torch, k, n), leaf(torch, m, n), leaf(torch, m)  # dW (m, n) = dyᵀ · x (k, n), db (m)
    return backward_of(torch, linear(x, w, b), (w, b))


def rows_op(torch, kind, z):
    """Element-wise and normalisation ops over (rows, cols)."""
    F, rows, cols = torch.nn.functional, z["rows"], z["cols"]
    x, y, b = leaf(torch, rows, cols), leaf(torch, rows, cols), leaf(torch, cols)
    w, beta = leaf(torch, cols), leaf(torch, cols)
    if kind == "layernorm_forward":
        return lambda: F.layer_norm(x, (cols,), w, beta)
    if kind == "layernorm_backward":
        return backward_of(torch, F.layer_norm(x, (cols,), w, beta), (x, w, beta))
    if kind == "bias_residual_layernorm":  # x2 = y + b + x and its layernorm
        return lambda: F.layer_norm(y + b + x, (cols,), w, beta)
    if kind == "bias_residual_add":
        return lambda: y + b + x
    if kind == "add":
        return lambda: y + x
    if kind == "bias_backward":
        return lambda: y.sum(0)
    if kind == "gelu_forward":
        return lambda: F.gelu(x, approximate="tanh")
    if kind == "gelu_backward":
        return backward_of(torch, F.gelu(x, approximate="tanh"), (x,))
    return None


def attention(torch, kind, z, variant):
    """The attention core over q, k, v (b, a, s, d), causal: SDPA or scores-softmax-context."""
    b, s, a, d = z["b"], z["s"], z["heads"], z["d"]
    if z.get("kv_heads", a) != a:
        return None  # grouped-query attention: not ptdp's GPT
    q, k, v = (leaf(torch, b, a, s, d) for _ in range(3))
    mask = torch.ones(s, s, dtype=torch.bool).triu(1)

    def forward():
        if variant == "sdpa":
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        scores = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(d))  # (b, a, s, s)
        return torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1) @ v

    return forward if kind == "attention_forward" else backward_of(torch, forward(), (q, k, v))


def embedding(torch, kind, z):
    """The word embedding's lookup plus the positions (b, s, h), or its gradient's scatter-add."""
    b, s, h, V = z["b"], z["s"], z["h"], z["Vt"]
    tokens, wte, wpe = torch.randint(0, V, (b, s)), leaf(torch, V, h), leaf(torch, s, h)
    if kind == "embedding_forward":
        return lambda: torch.nn.functional.embedding(tokens, wte) + wpe
    return backward_of(torch, torch.nn.functional.embedding(tokens, wte), (wte,))


def head(torch, kind, z):
    """Final layernorm, logits through the tied embedding (n, V) and mean cross-entropy."""
    F, n, h, V = torch.nn.functional, z["tokens"], z["h"], z["Vt"]
    x, wte, w, beta = leaf(torch, n, h), leaf(torch, V, h), leaf(torch, h), leaf(torch, h)
    targets = torch.randint(0, V, (n,))

    def forward():
        return F.cross_entropy(F.layer_norm(x, (h,), w, beta) @ wte.t(), targets)

    return forward if kind == "head_forward" else backward_of(torch, forward(), (x, wte, w, beta))


def adamw(torch, z):
    """One step of the baseline's AdamW (fused where torch has it) over params fp32 values."""
    holder = torch.nn.Module()
    holder.w = torch.nn.Parameter(torch.zeros(1, z["params"]))
    holder.w.grad = torch.randn(1, z["params"])
    opt, _ = pytorch_gpt.make_optimizer(torch, holder, pytorch_gpt.OPTIMIZER_DEFAULTS, "cpu")
    return opt.step


def make_call(torch, kind, z, variant):
    """The call timed for one op, or None where PyTorch has no equivalent here."""
    if kind in ("linear_forward", "linear_data_grad", "linear_weight_grad"):
        return gemm(torch, kind, z)
    if kind in ("attention_forward", "attention_backward"):
        return attention(torch, kind, z, variant)
    if kind in ("embedding_forward", "embedding_backward"):
        return embedding(torch, kind, z)
    if kind in ("head_forward", "head_backward"):
        return head(torch, kind, z)
    if kind == "adamw":
        return adamw(torch, z)
    return rows_op(torch, kind, z)


def variants(kind):
    return ("sdpa", "explicit") if kind.startswith("attention_") else ("eager",)


def main():
    request = json.load(sys.stdin)
    import torch  # pylint: disable=import-outside-toplevel
    torch.set_num_threads(request["threads"])
    torch.manual_seed(1)
    out = []
    for op in request["ops"]:
        for variant in variants(op["kind"]):
            call = make_call(torch, op["kind"], op["sizes"], variant)
            if call is None:
                continue
            us, samples = time_call(call, request["min_time"])
            out.append({"key": op["key"], "variant": variant, "us": us, "samples": samples})
            print(f"torch_ops: {op['key']} ({variant}): {us:.1f} us", file=sys.stderr, flush=True)
    json.dump({"torch": torch.__version__, "threads": torch.get_num_threads(), "ops": out}, sys.stdout)


if __name__ == "__main__":
    main()
