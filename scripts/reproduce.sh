#!/usr/bin/env bash
# Runs every sweep in sweeps/ (projected on any machine; measured where this
# machine can hold the points: the CPU sweeps, which are also projected),
# checks the projections against the paper, and builds the report.
# Usage: scripts/reproduce.sh [--results DIR] [--report DIR] [--fresh]
#   defaults: out/results and out/report; a rerun resumes unfinished sweeps.
#   The committed results/ and report/latest/ come from:
#   scripts/reproduce.sh --results results --report report/latest --fresh
set -euo pipefail
cd "$(dirname "$0")/.."
results=out/results
report=out/report
fresh=0
while [ $# -gt 0 ]; do
  case "$1" in
    --fresh) fresh=1 ;;
    --results) results="$2"; shift ;;
    --report) report="$2"; shift ;;
    *) echo "reproduce: unknown argument $1"; exit 2 ;;
  esac
  shift
done
ptdp=build/endtoend/ptdp
[ -x "$ptdp" ] || { echo "reproduce: build first (scripts/build.sh)"; exit 1; }
if [ "$fresh" -eq 1 ]; then
  rm -rf "$results"/*.json "$results"/.*.work
fi
mkdir -p "$results"
export OPENBLAS_NUM_THREADS=1

# The device kind ("cpu" or "cuda") of a sweep's machine profile: CPU sweeps are
# measured here, so their projection is written beside them.
sweep_device() {
  local at machine
  for at in /machine /base/machine; do
    machine=$(/usr/bin/python3 report/ptdp_report/load.py get "$1" "$at" "")
    [ -n "$machine" ] && break
  done
  case "$machine" in
    "") echo cuda ;;
    "{"*) /usr/bin/python3 report/ptdp_report/load.py get "$1" "$at/device" cuda ;;  # a profile given whole
    *) /usr/bin/python3 report/ptdp_report/load.py get "sweeps/machines/$machine.json" /device cuda ;;
  esac
}

# First, so every projection of the sweeps takes its expected error from this
# validation (docs/projection.md, "Expected error and sensitivity").
echo "== paper validation"
"$ptdp" validate --quiet --out "$results/paper-validation.json" | grep -E "points|no point" || true
export PTDP_VALIDATION="$results/paper-validation.json"
status=0
for sweep in sweeps/*.json; do
  name=$(basename "$sweep" .json)
  echo "== $name"
  "$ptdp" sweep "$sweep" --mode auto --jobs 2 --out "$results/$name.json" | tail -n 1 || status=1
  if [ "$(sweep_device "$sweep")" = cpu ]; then
    "$ptdp" sweep "$sweep" --mode project --jobs 2 --out "$results/$name-projected.json" | tail -n 1 || status=1
  fi
done
echo "== paper ablation (each modelled mechanism off in turn)"
"$ptdp" validate --ablate --out "$results/paper-ablation.json" || status=1
echo "== modern validation (published runs from other sources: report/reference/modern-runs.json)"
"$ptdp" validate --set modern --quiet --out "$results/modern-validation.json" | grep -E "points|modern set" || status=1
echo "== report"
/usr/bin/python3 report/build_report.py --results "$results" --out "$report"
echo "reproduce: results in $results, report in $report/report.md"
exit $status
