"""What every step of the GPU campaign shares: the tree, the unpacked pack, the
environments ptdp and PyTorch run in, the GPU found, the machine profile ptdp
chose, and the configs the steps train. Standard library only.
"""
import glob
import json
import os
import shutil
import subprocess
import sys

from campaign.runner import StepSkipped, write_json
from ptdp_report.load import read_json, read_or_none

# Models of the campaign: the paper's Table 1 first row (1.7B) and the 350M GPT
# (endtoend/configs/gpt-*-h100.json); on the CPU rehearsal both are tiny.json.
MODELS = {"1.7b": "gpt-1.7b-h100.json", "350m": "gpt-350m-h100.json"}
GPU_MICRO_BATCHES = (16, 8, 4, 2, 1)  # tried largest first: the memory model refuses what cannot fit
CPU_MICRO_BATCHES = (4, 2)
GPU_GLOBAL_BATCH = 16  # the paper's 1.7B run: 512 sequences on 32 GPUs
CPU_GLOBAL_BATCH = 4


def nvidia_library_dirs():
    """The lib/ folders of NVIDIA's Python packages (nvidia/cu13/lib, nvidia/cudnn/lib, ...) beside this Python."""
    try:
        import nvidia  # a namespace package of the device's PyTorch environment
        roots = list(nvidia.__path__)
    except ImportError:
        return []
    return sorted(d for r in roots for d in glob.glob(os.path.join(r, "*", "lib")) if os.path.isdir(d))


def toolkit_library_dirs():
    return [d for d in ("/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib") if os.path.isdir(d)]


def gpu_found():
    """(name, memory MiB) of GPU 0 by nvidia-smi, or ("", 0)."""
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"],
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "", 0
    first = r.stdout.strip().splitlines()[:1]
    if r.returncode != 0 or not first:
        return "", 0
    name, _, mib = first[0].rpartition(",")
    return name.strip(), int(mib.strip()) if mib.strip().isdigit() else 0


class Context:
    def __init__(self, root, work, runner, device, pack):
        self.root, self.work, self.runner, self.device = root, work, runner, device
        self.pack = pack  # the unpacked pack: bin/, lib/
        self.python = sys.executable
        self.gpu, self.gpu_mib = gpu_found()
        self.library_dirs = [os.path.join(pack, "lib")] + nvidia_library_dirs() + toolkit_library_dirs()
        self.torch_env = dict(os.environ)  # PyTorch keeps the machine's own search path
        self.env = dict(os.environ)
        self.env["LD_LIBRARY_PATH"] = ":".join(self.library_dirs + [p for p in [os.environ.get("LD_LIBRARY_PATH")] if p])
        self.env["PTDP_DATA_DIR"] = root
        self.env["OPENBLAS_NUM_THREADS"] = "1"
        self.machine = None  # the profile ptdp chose for this GPU (its first result's machine.name)
        self.micro_batch = {}  # (model, recompute) -> the micro-batch ptdp trained at
        self.only_failed = None

    def bin(self, name):
        return os.path.join(self.pack, "bin", name)

    def path(self, *parts):
        p = os.path.join(self.work, *parts)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        return p

    def need_gpu(self):
        if self.device == "cuda" and not self.gpu:
            raise StepSkipped("no GPU (nvidia-smi lists none)")

    def has_torch(self):
        r = subprocess.run([self.python, "-c", "import torch"], capture_output=True, env=self.torch_env, timeout=120)
        return r.returncode == 0

    def sanitizer(self):
        found = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
        return found if os.access(found, os.X_OK) else None

    # --- configs ----------------------------------------------------------------
    def config(self, model, micro_batch, recompute):
        """A config of MODEL (1.7b | 350m) at MICRO_BATCH with RECOMPUTE for this device; its path."""
        out = self.path("configs", f"{model}-b{micro_batch}-{recompute}.json")
        if self.device == "cpu":
            c = read_json(os.path.join(self.root, "endtoend", "configs", "tiny.json"))
            c["plan"].update({"precision": "fp32", "attention": "unfused"})
            c["machine"] = "cpu-host"
            global_batch = CPU_GLOBAL_BATCH
        else:
            c = read_json(os.path.join(self.root, "endtoend", "configs", MODELS[model]))
            global_batch = GPU_GLOBAL_BATCH
            if self.machine:
                c["machine"] = self.machine
            else:
                c.pop("machine", None)  # ptdp train takes the GPU's own profile
        c["plan"].update({"micro_batch": micro_batch, "global_batch": max(global_batch, micro_batch),
                          "recompute": recompute})
        write_json(out, c)
        return out

    def micro_batches(self):
        return CPU_MICRO_BATCHES if self.device == "cpu" else GPU_MICRO_BATCHES

    def learn_machine(self, result_path):
        """Takes the machine profile ptdp chose from one of its results."""
        r = read_or_none(result_path) or {}
        m = r.get("machine")
        name = m.get("name") if isinstance(m, dict) else m
        if name and not self.machine:
            self.machine = name
            self.runner.note(f"machine profile {name} (ptdp's choice for {self.gpu or 'this CPU'})")

    def first_line(self, log, *words):
        """The first line of a log holding every word (the reason a run was refused or failed)."""
        try:
            with open(log, errors="replace") as f:
                for line in f:
                    if all(w in line for w in words) and not line.startswith("$ "):
                        return " ".join(line.split())[:300]
        except OSError:
            pass
        return ""

    def last_line(self, log):
        try:
            with open(log, errors="replace") as f:
                lines = [l.strip() for l in f if l.strip()]
            return lines[-1][:300] if lines else ""
        except OSError:
            return ""


def dump(value):
    return json.dumps(value, separators=(",", ":"))
