#!/usr/bin/env bash
# Configures and builds ptdp in build/ (Release). Extra arguments go to CMake's
# configure step, e.g. -DPTDP_WERROR=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
# Ninja where it is installed (scripts/setup.sh installs it): it schedules a
# cold build better than make. A build/ made earlier keeps its generator.
generator=()
if [ ! -f build/CMakeCache.txt ] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
if ! cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@" >build.log 2>&1; then
  cat build.log
  exit 1
fi
grep "ptdp:" build.log || true
cmake --build build -j"$(nproc)"
