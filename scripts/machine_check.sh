#!/usr/bin/env bash
# One-command machine check (acceptance testing): runs ptdp's kernel and
# collective benchmarks at the shapes of a configuration, writes their JSON,
# turns them into a calibration and prints what ran against the profile's
# datasheet rates.
# The build folder: $PTDP_BUILD (default build).
# Usage: scripts/machine_check.sh [--config FILE] [--device cpu|cuda] [--ranks N] [--machine NAME] [--out DIR]
#                                 [--min-time SECONDS] [--max-bytes N] [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${PTDP_BUILD:-build}"
device=cpu; config=""; ranks=""; machine=""; out=out/machine-check; min_time=0.5; max_bytes=""
while [ $# -gt 0 ]; do
  case "$1" in
    --config) config="$2"; shift ;;
    --device) device="$2"; shift ;;
    --ranks) ranks="$2"; shift ;;
    --machine) machine="$2"; shift ;;
    --out) out="$2"; shift ;;
    --min-time) min_time="$2"; shift ;;
    --max-bytes) max_bytes="$2"; shift ;;
    --quick) min_time=0.01; max_bytes=65536 ;;
    *) echo "machine_check: unknown argument $1"; exit 2 ;;
  esac
  shift
done
[ -x "$build/endtoend/ptdp" ] || { echo "machine_check: build first (scripts/build.sh)"; exit 1; }
if [ -z "$ranks" ]; then
  if [ "$device" = cuda ]; then ranks=$(nvidia-smi -L 2>/dev/null | wc -l); else ranks=2; fi
fi
if [ -z "$machine" ]; then
  if [ -n "$config" ]; then
    machine=$(/usr/bin/python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["machine"]; print(m if isinstance(m,str) else m["name"])' "$config")
  elif [ "$device" = cuda ]; then machine=h100-80gb; else machine=cpu-host; fi
fi
mkdir -p "$out"
common=(--device "$device" ${config:+--config "$config"} --machine "$machine")
export OPENBLAS_NUM_THREADS=1
echo "== kernels ($device, $machine)"
"$build/microbench/ptdp_bench_kernels" "${common[@]}" --benchmark_min_time="$min_time" \
  --benchmark_out="$out/kernels.json" --benchmark_out_format=json > "$out/kernels.txt" 2>&1
echo "== collectives ($ranks ranks)"
mpi=(mpirun -np "$ranks")
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
[ "$ranks" -gt "$(nproc)" ] && mpi+=(--oversubscribe)
"${mpi[@]}" "$build/microbench/ptdp_bench_collectives" "${common[@]}" ${max_bytes:+--max-bytes "$max_bytes"} \
  --benchmark_min_time="$min_time" --benchmark_out="$out/collectives.json" --benchmark_out_format=json > "$out/collectives.txt" 2>&1
echo "== calibration"
"$build/endtoend/ptdp" calibrate "$out/kernels.json" "$out/collectives.json" --machine "$machine" --out "$out/calibration.json"
echo "machine_check: JSON in $out/ (kernels.json, collectives.json, calibration.json)"
