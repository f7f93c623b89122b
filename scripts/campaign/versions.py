#!/usr/bin/env python3
"""Writes, as JSON into OUT, the versions of the CUDA libraries ptdp loads (the
files given, as the loader resolved them for ptdp) and what the GPU supports,
through their C APIs (ctypes): the driver and runtime versions, stream-ordered
memory pools, cuBLASLt, cuDNN and NCCL. Run by the campaign's env step in a
process of its own (a library that crashes the loader costs only this process).
Standard library only.

Usage: versions.py OUT SONAME=PATH ...
"""
import ctypes
import json
import os
import sys

POOLS_SUPPORTED = 115  # cudaDevAttrMemoryPoolsSupported


def call_int(lib, fn):
    """fn(int*) -> status: the int, or the error status."""
    v = ctypes.c_int(0)
    rc = getattr(lib, fn)(ctypes.byref(v))
    return v.value if rc == 0 else f"error {rc}"


def main(out_path, pairs):
    paths = dict(p.split("=", 1) for p in pairs if "=" in p)
    out = {"libraries": paths}

    def load(prefix):
        path = next((v for k, v in paths.items() if k.startswith(prefix)), None)
        return ctypes.CDLL(path) if path else None

    try:
        rt = load("libcudart.so")
        if rt:
            out["cuda_runtime"] = call_int(rt, "cudaRuntimeGetVersion")
            out["cuda_driver"] = call_int(rt, "cudaDriverGetVersion")
            count = ctypes.c_int(0)
            out["gpus"] = count.value if rt.cudaGetDeviceCount(ctypes.byref(count)) == 0 else 0
            if out["gpus"]:
                out["memory_pools_supported"] = pools(rt)
    except OSError as e:
        out["cuda_error"] = str(e)
    for key, prefix, fn in (("cublaslt", "libcublasLt.so", "cublasLtGetVersion"),
                            ("cudnn", "libcudnn.so", "cudnnGetVersion")):
        try:
            lib = load(prefix)
            if lib:
                getattr(lib, fn).restype = ctypes.c_size_t
                out[key] = getattr(lib, fn)()
        except (OSError, AttributeError) as e:
            out[key] = f"error: {e}"
    try:
        nccl = load("libnccl.so")
        if nccl:
            out["nccl"] = call_int(nccl, "ncclGetVersion")
    except (OSError, AttributeError) as e:
        out["nccl"] = f"error: {e}"
    tmp = f"{out_path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(out, f)
    os.replace(tmp, out_path)


def pools(rt):
    """cudaDeviceGetAttribute(&v, cudaDevAttrMemoryPoolsSupported, 0): the attribute comes first, then the device."""
    v = ctypes.c_int(0)
    return rt.cudaDeviceGetAttribute(ctypes.byref(v), POOLS_SUPPORTED, 0) == 0 and v.value == 1


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
