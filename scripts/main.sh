#!/usr/bin/env bash
# The main job: set up, build, train the small default GPT on the CPU (a
# measured result and its trace), then run every paper sweep (projected; the
# CPU sweeps measured and projected) and build the report with the paper's
# numbers overlaid. Everything lands in out/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
mkdir -p out/main
export OPENBLAS_NUM_THREADS=1
echo "== training the small default GPT on the CPU"
build/endtoend/ptdp train --config endtoend/configs/small.json --iterations 30 --warmup 2 \
  --out out/main/small-cpu-train.json --trace out/main/small-cpu-trace.json | tail -n 3
scripts/reproduce.sh --results out/results --report out/report
echo "main: training result in out/main/, sweep results in out/results/, report in out/report/report.md"
