#!/usr/bin/env bash
# Runs ptdp's libFuzzer targets (fuzz/) for N minutes each and prints, per
# target, the run time, executions, new corpus entries and crashes. Builds them
# first in build-fuzz/ (clang++-14, PTDP_FUZZ=ON). Seeds: tests/corpus (the
# refused inputs, read in place) and committed valid inputs; what the fuzzer
# learns goes to .fuzz/corpus/TARGET (ignored by git), crashing inputs to
# .fuzz/crashes/TARGET/, logs to .fuzz/logs/. Exit status 1 when any target
# crashed, hung or ran out of memory.
#
#   scripts/fuzz.sh [--minutes N] [--parallel K] [TARGET...]
#     TARGET: config machine sweep result compare manifest safetensors launcher fault slurm_script benchmarks slurm_manifest
#     (default: all); K targets at a time (default 1).
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=10
parallel=1
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    --parallel) parallel=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(config machine sweep result compare manifest safetensors launcher fault slurm_script benchmarks slurm_manifest)

# The seed folders of each target, besides its own grown corpus (libFuzzer
# reads every folder given and writes new entries to the first only).
seeds() {
  case "$1" in
    config) echo tests/corpus/config tests/corpus/any endtoend/configs ;;
    machine) echo tests/corpus/machine tests/corpus/any sweeps/machines ;;
    sweep) echo tests/corpus/sweep tests/corpus/any sweeps ;;
    result) echo tests/corpus/result tests/corpus/sweep_results tests/corpus/any results/closure ;;
    compare) echo tests/corpus/compare tests/corpus/result tests/corpus/sweep_results tests/corpus/any ;;
    manifest) echo tests/corpus/manifest tests/corpus/any ;;
    safetensors) echo tests/corpus/safetensors ;;
    launcher) echo tests/corpus/launcher ;;
    fault) echo tests/corpus/fault ;;
    slurm_script) echo tests/corpus/launcher tests/corpus/fault ;;
    benchmarks) echo tests/corpus/benchmarks tests/corpus/any results/microbench/cpu-host ;;
    slurm_manifest) echo tests/corpus/slurm_manifest tests/corpus/any ;;
    *) echo "fuzz: unknown target $1 (config machine sweep result compare manifest safetensors launcher fault slurm_script benchmarks slurm_manifest)" >&2; return 1 ;;
  esac
}
for t in "${targets[@]}"; do seeds "$t" >/dev/null; done

build=build-fuzz
if [ ! -f "$build/CMakeCache.txt" ]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang-14 \
    -DCMAKE_CXX_COMPILER=clang++-14 -DPTDP_FUZZ=ON -DPTDP_WITH_CUDA=OFF -DPTDP_WITH_NCCL=OFF \
    -DPTDP_WITH_CUDNN=OFF -DPTDP_WITH_MPI=OFF "${launcher[@]}" >/dev/null
fi
ninja -C "$build" -j"$(nproc)" "${targets[@]/#/fuzz_}"

count() { find "$1" -maxdepth 1 -type f 2>/dev/null | wc -l; }

# One target for `minutes`; its summary line goes to .fuzz/logs/TARGET.summary.
run_one() {
  local t=$1 corpus=.fuzz/corpus/$1 crashes=.fuzz/crashes/$1 log=.fuzz/logs/$1.log
  mkdir -p "$corpus" "$crashes" .fuzz/logs
  local before crashes_before start status=0
  before=$(count "$corpus")
  crashes_before=$(count "$crashes")
  start=$(date +%s)
  # -timeout: an input that takes 30 s is a hang; -rss_limit_mb: 2 GiB is an exhausted machine.
  # shellcheck disable=SC2046
  "$build/fuzz/fuzz_$t" -max_total_time=$((minutes * 60)) -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
    -dict=fuzz/ptdp.dict -artifact_prefix="$crashes/" "$corpus" $(seeds "$t") >"$log" 2>&1 || status=$?
  local secs execs
  secs=$(($(date +%s) - start))
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  printf '%-8s %6.1f min  %10s executions  %5d new corpus entries (%d in all)  %d crashes  exit %d\n' \
    "$t" "$(awk -v s="$secs" 'BEGIN { print s / 60 }')" "$execs" $(($(count "$corpus") - before)) "$(count "$corpus")" \
    $(($(count "$crashes") - crashes_before)) "$status" >".fuzz/logs/$t.summary"
}

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:strict_string_checks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export OPENBLAS_NUM_THREADS=1
running=0
for t in "${targets[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$parallel" ]; then wait -n || true; running=$((running - 1)); fi
done
wait

failed=0
for t in "${targets[@]}"; do
  cat ".fuzz/logs/$t.summary"
  if ! grep -q ' 0 crashes  exit 0$' ".fuzz/logs/$t.summary"; then
    failed=1
    echo "  $t: see .fuzz/logs/$t.log; inputs kept in .fuzz/crashes/$t/:" $(ls ".fuzz/crashes/$t")
  fi
done
exit $failed
