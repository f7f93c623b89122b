#!/usr/bin/env bash
# Builds the GPU campaign's pack here, on the CPU machine (the local nvcc is the
# device's 13.0): a Release build for sm_90 only, MPI off, no build RPATH, in
# build-pack/, of ptdp, ptdp_gpu_tests and ptdp_bench_kernels; then
# scripts/gpu_pack.py strips them, adds the shared libraries the GPU machine
# lacks, checks they load in a clean environment and writes DIR/ptdp-pack.tar.xz
# and DIR/manifest.json (at most 24 MiB). DIR (default .gpupack) must be a
# folder git ignores: it travels with the device call as `carry`.
# Usage: scripts/gpu_pack.sh [DIR] [--build-dir D] [--jobs N]
set -euo pipefail
cd "$(dirname "$0")/.."
out=.gpupack build=build-pack jobs=$(nproc)
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$2"; shift ;;
    --jobs) jobs="$2"; shift ;;
    -*) echo "gpu_pack: refused: unknown option $1" >&2; exit 2 ;;
    *) out="$1" ;;
  esac
  shift
done
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "gpu_pack: refused: --jobs must be a positive count" >&2; exit 2; }
if ! git check-ignore -q -- "$out/manifest.json"; then
  echo "gpu_pack: refused: $out is not ignored by git (add it to .gitignore: the pack is carried, never committed)" >&2
  exit 2
fi
start=$(date +%s)
scripts/setup.sh >/dev/null
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
echo "gpu_pack: configuring $build (Release, sm_90, MPI off, no build RPATH)"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DPTDP_WITH_MPI=OFF -DCMAKE_SKIP_BUILD_RPATH=ON >"$build.log" 2>&1 || { cat "$build.log"; exit 1; }
grep "ptdp: CUDA" "$build.log"
grep -q "CUDA ON, NCCL ON, cuDNN ON" "$build.log" ||
  { echo "gpu_pack: the pack needs CUDA, NCCL and cuDNN (see $build.log)" >&2; exit 1; }
echo "gpu_pack: building ptdp ptdp_gpu_tests ptdp_bench_kernels (-j$jobs; a cold build takes minutes)"
cmake --build "$build" -j"$jobs" --target ptdp ptdp_gpu_tests ptdp_bench_kernels
python3 scripts/gpu_pack.py --build-dir "$build" --out "$out"
echo "gpu_pack: done in $(( $(date +%s) - start )) s"
