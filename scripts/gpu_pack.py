#!/usr/bin/env python3
"""Packs the GPU campaign's programs from a build folder (scripts/gpu_pack.sh
builds one): ptdp, ptdp_gpu_tests and ptdp_bench_kernels, stripped, and every
shared library they need that the lent GPU machine lacks (ldd_check.py:
OpenBLAS, libgfortran, libquadmath, Google Benchmark), into OUT/ptdp-pack.tar.xz
and OUT/manifest.json, each written through a temporary name. The programs are
checked first in a clean environment: with only the pack's libraries and the
CUDA ones on the search path, every library resolves and each packed one to the
pack's copy. Standard library only.

Usage: gpu_pack.py --build-dir BUILD --out DIR [--max-mib 24] [--fast]
Exit status: 0 packed, 1 a check failed (nothing written), 2 refused input.
"""
import argparse
import datetime
import glob
import hashlib
import json
import lzma
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ldd_check  # noqa: E402

PROGRAMS = {"ptdp": "endtoend/ptdp", "ptdp_gpu_tests": "tests/ptdp_gpu_tests",
            "ptdp_bench_kernels": "microbench/ptdp_bench_kernels"}
ARCHIVE = "ptdp-pack.tar.xz"
CACHE_KEYS = ("PTDP_WITH_CUDA", "PTDP_WITH_NCCL", "PTDP_WITH_CUDNN", "PTDP_WITH_MPI", "CMAKE_CUDA_ARCHITECTURES",
              "CMAKE_BUILD_TYPE", "CMAKE_SKIP_BUILD_RPATH", "CMAKE_CUDA_COMPILER")


def refuse(why):
    print(f"gpu_pack: refused: {why}", file=sys.stderr)
    sys.exit(2)


def fail(why):
    print(f"gpu_pack: {why}", file=sys.stderr)
    sys.exit(1)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def cache_values(build):
    values = {}
    with open(os.path.join(build, "CMakeCache.txt"), errors="replace") as f:
        for line in f:
            key, _, value = line.strip().partition("=")
            name = key.split(":")[0]
            if name in CACHE_KEYS:
                values[name] = value
    return values


def cuda_library_dirs():
    """This machine's CUDA libraries (toolkit, cuDNN, NCCL), the clean check's stand-in for the device's."""
    dirs = ["/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"]
    dirs += sorted(glob.glob("/usr/local/cuda-*/lib64"))
    return [d for d in dirs if os.path.isdir(d)]


def git(*args):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        return subprocess.run(["git", "-C", root, *args], capture_output=True, text=True, timeout=30).stdout.strip()
    except OSError:
        return ""


def stage(build, into):
    """Stripped programs in into/bin, the libraries the device lacks in into/lib; returns the manifest's parts."""
    os.makedirs(os.path.join(into, "bin"))
    os.makedirs(os.path.join(into, "lib"))
    programs, packed, device = {}, {}, set()
    for name, rel in PROGRAMS.items():
        src = os.path.join(build, rel)
        if not os.access(src, os.X_OK):
            refuse(f"--build-dir {build}: no {rel} (build the targets {', '.join(PROGRAMS)} first)")
        dst = os.path.join(into, "bin", name)
        shutil.copy2(src, dst)
        subprocess.run(["strip", "--strip-unneeded", dst], check=True)
        libraries, problems = ldd_check.resolve(src, dict(os.environ))
        if problems:
            fail("the build's own programs do not load here: " + "; ".join(problems))
        for soname, path in sorted(libraries.items()):
            if ldd_check.DEVICE_PROVIDED.match(soname):
                device.add(soname)
            elif soname not in packed:
                shutil.copy2(os.path.realpath(path), os.path.join(into, "lib", soname))
                packed[soname] = {"from": path, "bytes": os.path.getsize(path)}
        programs[name] = {"bytes": os.path.getsize(dst), "sha256": sha256(dst), "needs": sorted(libraries)}
    return programs, packed, sorted(device)


def clean_check(into):
    """Every library resolves with only the pack's and the CUDA libraries on the search path."""
    env = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": ":".join([os.path.join(into, "lib")] + cuda_library_dirs())}
    programs = [os.path.join(into, "bin", n) for n in PROGRAMS]
    _, problems = ldd_check.check(programs, env, os.path.join(into, "lib"))
    if problems:
        fail("the pack does not load in a clean environment: " + "; ".join(problems))
    return env["LD_LIBRARY_PATH"]


def extract_pack(archive, into):
    """Unpacks a pack archive into `into`, refusing any member that is not a plain file or
    folder inside it (tarfile's "data" filter where this Python has it)."""
    with tarfile.open(archive, "r:xz") as tar:
        members = tar.getmembers()
        for m in members:
            target = os.path.realpath(os.path.join(into, m.name))
            if not (m.isfile() or m.isdir()) or os.path.commonpath([os.path.realpath(into), target]) != \
                    os.path.realpath(into):
                raise ValueError(f"{archive}: member {m.name!r} is not a plain file or folder inside the pack")
        if hasattr(tarfile, "data_filter"):
            tar.extractall(into, members=members, filter="data")
        else:  # Python before 3.11.4: the members were checked above
            tar.extractall(into, members=members)


def write_json(path, value):
    with open(path, "w") as f:
        json.dump(value, f, indent=1)
        f.write("\n")


def write_atomic(out, name, write):
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=out)
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, os.path.join(out, name))
    except BaseException:
        os.unlink(tmp)
        raise


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-mib", type=float, default=24)
    ap.add_argument("--fast", action="store_true", help="xz preset 0 instead of 9 (rehearsals)")
    args = ap.parse_args()
    if not os.path.isfile(os.path.join(args.build_dir, "CMakeCache.txt")):
        refuse(f"--build-dir {args.build_dir}: not a configured build folder (no CMakeCache.txt)")
    if os.path.islink(args.out) or (os.path.exists(args.out) and not os.path.isdir(args.out)):
        refuse(f"--out {args.out}: not a folder")
    if not args.max_mib > 0:
        refuse("--max-mib: must be a positive size")
    build = cache_values(args.build_dir)
    if build.get("PTDP_WITH_CUDA") != "ON":
        refuse(f"--build-dir {args.build_dir}: built without CUDA (PTDP_WITH_CUDA={build.get('PTDP_WITH_CUDA')})")
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ptdp-pack-") as tmp:
        into = os.path.join(tmp, "pack")
        programs, packed, device = stage(args.build_dir, into)
        search = clean_check(into)
        print(f"gpu_pack: {len(programs)} programs and {len(packed)} libraries load in a clean environment "
              f"(LD_LIBRARY_PATH={search})")
        archive = os.path.join(tmp, ARCHIVE)
        with tarfile.open(archive, "w:xz", preset=0 if args.fast else 9 | lzma.PRESET_EXTREME) as tar:
            tar.add(into, arcname=".")
        size = os.path.getsize(archive)
        if size > args.max_mib * 2**20:
            fail(f"{ARCHIVE} is {size / 2**20:.1f} MiB, over --max-mib {args.max_mib:g}: nothing written")
        manifest = {"schema": "ptdp.gpu_pack/1", "commit": git("rev-parse", "HEAD") or "unknown",
                    "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
                    "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "build": build, "programs": programs, "packed_libraries": packed, "device_libraries": device,
                    "archive": {"name": ARCHIVE, "bytes": size, "sha256": sha256(archive),
                                "compression": "xz -0" if args.fast else "xz -9e"}}
        write_atomic(args.out, ARCHIVE, lambda t: shutil.copyfile(archive, t))
        write_atomic(args.out, "manifest.json", lambda t: write_json(t, manifest))  # last: the pack's commit point
    raw = sum(p["bytes"] for p in programs.values()) + sum(p["bytes"] for p in packed.values())
    print(f"gpu_pack: {os.path.join(args.out, ARCHIVE)}: {size / 2**20:.1f} MiB ({raw / 2**20:.1f} MiB unpacked), "
          f"commit {manifest['commit'][:12]}{' (with uncommitted changes)' if manifest['dirty'] else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
