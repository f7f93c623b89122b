#!/usr/bin/env bash
# One-command machine check (acceptance testing): runs ptdp's kernel and
# collective benchmarks at the shapes of a configuration, writes their JSON,
# turns them into a calibration and prints what ran against the profile's
# datasheet rates. Each benchmark runs --repetitions times (default 3) and
# counts by its fastest. On a CPU with more than one rank, the kernels run once
# more beside that many − 1 busy copies: ranks of a CPU run share the host, and
# the calibration records how much that slows each (host_sharing).
# The build folder: $PTDP_BUILD (default build).
# Usage: scripts/machine_check.sh [--config FILE] [--device cpu|cuda] [--ranks N] [--machine NAME] [--out DIR]
#                                 [--min-time SECONDS] [--collective-min-time SECONDS] [--max-bytes N]
#                                 [--repetitions N] [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${PTDP_BUILD:-build}"
device=cpu; config=""; ranks=""; machine=""; out=out/machine-check; min_time=0.5; coll_min_time=""; max_bytes=""; reps=3
while [ $# -gt 0 ]; do
  case "$1" in
    --config) config="$2"; shift ;;
    --device) device="$2"; shift ;;
    --ranks) ranks="$2"; shift ;;
    --machine) machine="$2"; shift ;;
    --out) out="$2"; shift ;;
    --min-time) min_time="$2"; shift ;;
    --collective-min-time) coll_min_time="$2"; shift ;;
    --max-bytes) max_bytes="$2"; shift ;;
    --repetitions) reps="$2"; shift ;;
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
    machine=$(/usr/bin/python3 report/ptdp_report/load.py get "$config" /machine/name "")  # a profile given whole
    [ -n "$machine" ] || machine=$(/usr/bin/python3 report/ptdp_report/load.py get "$config" /machine)
  elif [ "$device" = cuda ]; then machine=h100-80gb; else machine=cpu-host; fi
fi
mkdir -p "$out"
common=(--device "$device" ${config:+--config "$config"} --machine "$machine")
export OPENBLAS_NUM_THREADS=1
timing=(--benchmark_min_time="$min_time" --benchmark_repetitions="$reps")
echo "== kernels ($device, $machine)"
"$build/microbench/ptdp_bench_kernels" "${common[@]}" "${timing[@]}" \
  --benchmark_out="$out/kernels.json" --benchmark_out_format=json > "$out/kernels.txt" 2>&1
inputs=("$out/kernels.json")
if [ "$device" = cpu ] && [ "$ranks" -gt 1 ]; then
  # One copy measures while ranks − 1 others run the same benchmarks over and
  # over beside it, so it never runs alone; they stop when it is done.
  echo "== kernels beside $((ranks - 1)) more copies (ranks sharing the host)"
  others=()
  trap 'kill "${others[@]}" 2>/dev/null || true' EXIT  # never left running, whatever fails
  for i in $(seq 2 "$ranks"); do
    "$build/microbench/ptdp_bench_kernels" "${common[@]}" --benchmark_min_time="$min_time" \
      --benchmark_repetitions=1000000 > /dev/null 2>&1 &
    others+=($!)
  done
  "$build/microbench/ptdp_bench_kernels" "${common[@]}" "${timing[@]}" --concurrent "$ranks" \
    --benchmark_out="$out/kernels_shared.json" --benchmark_out_format=json > "$out/kernels_shared.txt" 2>&1
  kill "${others[@]}" 2>/dev/null || true
  wait "${others[@]}" 2>/dev/null || true
  inputs+=("$out/kernels_shared.json")
fi
echo "== collectives ($ranks ranks)"
mpi=(mpirun -np "$ranks")
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
[ "$ranks" -gt "$(nproc)" ] && mpi+=(--oversubscribe)
"${mpi[@]}" "$build/microbench/ptdp_bench_collectives" "${common[@]}" ${max_bytes:+--max-bytes "$max_bytes"} \
  --benchmark_min_time="${coll_min_time:-$min_time}" --benchmark_repetitions="$reps" \
  --benchmark_out="$out/collectives.json" --benchmark_out_format=json > "$out/collectives.txt" 2>&1
echo "== calibration"
"$build/endtoend/ptdp" calibrate "${inputs[@]}" "$out/collectives.json" --machine "$machine" --out "$out/calibration.json"
echo "machine_check: JSON in $out/ (${inputs[*]##*/} collectives.json calibration.json)"
