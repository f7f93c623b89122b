#!/usr/bin/env bash
# Installs the Debian packages ptdp builds and runs with, when any is missing,
# and the header-only cuDNN frontend (PyPI wheel nvidia-cudnn-frontend) into
# the repository's .venv; does nothing when all are present. Used by the
# README's two commands.
set -euo pipefail

packages=(cmake g++ make ninja-build git libopenblas-dev nlohmann-json3-dev libcli11-dev
          libgtest-dev libgmock-dev libbenchmark-dev openmpi-bin libopenmpi-dev
          python3 python3-matplotlib python3-venv)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all Debian packages present"
else
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# cuDNN's C++ frontend (headers only; CMake finds them under
# .venv/lib/python3*/site-packages/include). The fused attention needs it.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
frontend="nvidia-cudnn-frontend==1.32.0"
if [ ! -x "$venv/bin/python3" ]; then
  echo "setup: creating $venv"
  python3 -m venv "$venv"
fi
installed="$("$venv/bin/python3" -m pip show nvidia-cudnn-frontend 2>/dev/null | sed -n 's/^Version: //p' || true)"
if [ "$installed" = "${frontend#*==}" ]; then
  echo "setup: $frontend present"
else
  echo "setup: installing $frontend into $venv"
  # --no-deps: only its headers are used, not the Python package's dependencies.
  "$venv/bin/python3" -m pip install -q --disable-pip-version-check --no-deps "$frontend"
fi
echo "setup: done"
