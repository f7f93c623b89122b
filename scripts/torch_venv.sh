#!/usr/bin/env bash
# Makes the project's PyTorch virtual environment, .venv-torch/ in the repository
# (ignored by git), for endtoend/cpu_vs_pytorch.py, endtoend/baselines/ and the
# interop tests (label interop; a fresh build's default PTDP_TORCH_PYTHON): torch,
# numpy, transformers and safetensors from PyPI (torch's default wheel; the CPU
# is all they need). Does nothing when the environment already imports them. Prints the path of its
# python on stdout (py=$(scripts/torch_venv.sh)), the rest on stderr.
#
# Usage: scripts/torch_venv.sh [--venv DIR] [--dry-run]
#   --venv DIR  make it here instead of .venv-torch/
#   --dry-run   say what would run, run nothing
# Exit status: 0 done, 1 a step failed, 2 bad option.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv-torch"
dry_run=0
while [ $# -gt 0 ]; do
  case "$1" in
    --venv)
      [ $# -ge 2 ] && [ -n "$2" ] || { echo "torch_venv: refused: --venv needs a folder" >&2; exit 2; }
      venv="$2"; shift ;;
    --dry-run) dry_run=1 ;;
    -h|--help) sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "torch_venv: refused: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
python="$venv/bin/python"

step() {
  echo "torch_venv: $*" >&2
  if [ "$dry_run" -eq 0 ]; then "$@" >&2; fi
}

if [ -x "$python" ] && "$python" -c "import torch, numpy, transformers, safetensors" 2>/dev/null; then
  echo "torch_venv: $venv has torch $("$python" -c 'import torch; print(torch.__version__)')" >&2
else
  [ -x "$python" ] || step python3 -m venv "$venv"
  step "$python" -m pip install --disable-pip-version-check torch numpy transformers safetensors
fi
echo "$python"
