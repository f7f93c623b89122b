#!/usr/bin/env python3
"""PyTorch's bf16 GEMM ceiling on this GPU: one 8192x8192x8192 product on
random data, CUDA events around each, 3 warm-ups, the median of 20; written as
JSON to the file given. The measured bound ptdp's MFU is read against.

Usage: torch_ceiling.py OUT.json
"""
import json
import os
import sys

import torch

n = 8192
a, b = (torch.randn(n, n, device="cuda", dtype=torch.bfloat16) for _ in range(2))
for _ in range(3):
    a @ b
times = []
for _ in range(20):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    a @ b
    stop.record()
    stop.synchronize()
    times.append(start.elapsed_time(stop) / 1e3)
times.sort()
median = times[len(times) // 2]
out = {"shape": [n, n, n], "dtype": "bf16", "median_s": median, "tflops": 2 * n**3 / median / 1e12,
       "samples": len(times), "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0)}
tmp = sys.argv[1] + ".tmp"
with open(tmp, "w") as f:
    json.dump(out, f, indent=1)
os.replace(tmp, sys.argv[1])
print(f"torch bf16 GEMM {n}^3: {out['tflops']:.0f} TFLOP/s (median of 20)")
