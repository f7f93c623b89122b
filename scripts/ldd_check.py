"""Which shared libraries a program needs and where the dynamic loader finds
them (ldd), for the GPU pack (scripts/gpu_pack.py) and the campaign that runs
it (scripts/gpu_campaign.py). Standard library only.

The lent GPU machine provides the C and C++ runtimes and, through NVIDIA's
Python packages or the CUDA toolkit, the CUDA libraries (DEVICE_PROVIDED);
every other library a program needs travels in the pack.
"""
import os
import re
import subprocess

# Sonames the device machine provides: the C/C++ runtime, and CUDA's libraries
# from its pip packages (nvidia/cu13/lib, nvidia/cudnn/lib, nvidia/nccl/lib) or toolkit.
DEVICE_PROVIDED = re.compile(
    r"^(linux-vdso|ld-linux-x86-64|libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|"
    r"libcuda|libcudart|libcublas|libcublasLt|libcudnn[a-z_]*|libnccl|libnvrtc[a-z-]*|libnvJitLink)\.so")


def resolve(program, env):
    """(libraries, problems): {soname: the path the loader finds, or None} and ldd's error lines
    (a missing library, a missing symbol version such as GLIBCXX_3.4.30)."""
    r = subprocess.run(["ldd", program], capture_output=True, text=True, env=env, timeout=60)
    libraries, problems = {}, []
    for line in (r.stdout + r.stderr).splitlines():
        line = line.strip()
        if "=>" in line:
            name, _, rest = line.partition("=>")
            target = rest.strip().split(" (")[0].strip()
            libraries[name.strip()] = None if target == "not found" else target
            if target == "not found":
                problems.append(f"{program}: {name.strip()} not found")
        elif "not found" in line or "No such file" in line or "not a dynamic executable" in line:
            problems.append(line)
    if r.returncode != 0 and not problems:
        problems.append(f"{program}: ldd exited {r.returncode}")
    return libraries, problems


def check(programs, env, packed_dir=None):
    """(resolution, problems) over `programs`: {program: {soname: path}} and every problem,
    including a library the pack carries (a file in packed_dir) that the loader takes from elsewhere."""
    packed = set(os.listdir(packed_dir)) if packed_dir and os.path.isdir(packed_dir) else set()
    resolution, problems = {}, []
    for program in programs:
        libraries, found = resolve(program, env)
        resolution[program] = libraries
        problems += found
        for name, path in libraries.items():
            if name in packed and path and os.path.realpath(os.path.dirname(path)) != os.path.realpath(packed_dir):
                problems.append(f"{program}: {name} resolves to {path}, not the pack's copy")
    return resolution, problems
