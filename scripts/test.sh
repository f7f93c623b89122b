#!/usr/bin/env bash
# Sets up, builds with warnings as errors, and runs every test (ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh -DPTDP_WERROR=ON
export OPENBLAS_NUM_THREADS=1
cd build
ctest --output-on-failure -j"$(nproc)"
