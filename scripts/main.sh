#!/usr/bin/env bash
# The main job: set up, build, and train the small default GPT on the CPU,
# writing its measured result to out/main/small-cpu-train.json.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
mkdir -p out/main
export OPENBLAS_NUM_THREADS=1
build/endtoend/ptdp train --config endtoend/configs/small.json --iterations 60 --warmup 2 \
  --out out/main/small-cpu-train.json --trace out/main/small-cpu-trace.json
echo "main: result in out/main/small-cpu-train.json, trace in out/main/small-cpu-trace.json"
