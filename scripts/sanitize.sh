#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer build of the unit and mpi tests
# (build-asan/, clang++-14, CUDA/NCCL/cuDNN off, MPI on) and a run of them that
# fails on any sanitizer report. Not in CI: the sanitized suite alone takes
# longer than CI's 10 minutes. Usage: scripts/sanitize.sh [-j N] [CTEST ARGS...]
# (e.g. -R InputCorpus). Environment: CXX (default clang++-14), PTDP_ASAN_BUILD
# (default build-asan).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
if [ "${1:-}" = "-j" ]; then jobs=$2; shift 2; fi
build=${PTDP_ASAN_BUILD:-build-asan}
cxx=${CXX:-clang++-14}
cc=${CC:-${cxx/++/}}  # clang++-14 -> clang-14, g++ -> g

sanitize="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
# -O1 -g: the sanitizers' advice (readable stacks, a tolerable slow-down); asserts stay on.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_CXX_FLAGS="$sanitize" -DCMAKE_C_FLAGS="$sanitize" -DCMAKE_EXE_LINKER_FLAGS="$sanitize" \
  -DPTDP_WITH_CUDA=OFF -DPTDP_WITH_NCCL=OFF -DPTDP_WITH_CUDNN=OFF -DPTDP_WITH_MPI=ON "${launcher[@]}" >/dev/null
grep -q "PTDP_WITH_MPI:BOOL=ON" "$build/CMakeCache.txt" || { echo "sanitize: MPI not found" >&2; exit 1; }
ninja -C "$build" -j"$jobs" ptdp_unit_tests ptdp_mpi_tests ptdp_launch_tests

# Any report ends the process with an error: a test that sees it fails. Leaks
# inside Open MPI's own libraries are theirs (scripts/sanitize.supp). A huge
# allocation fails as it does without ASan (null, so ptdp's OutOfMemory), not
# as an ASan report: the oversubscription tests allocate beyond the host.
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1:halt_on_error=1:abort_on_error=1:strict_string_checks=1:check_initialization_order=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
# Slow unwinding: Open MPI's libraries have no frame pointers, and a stack cut
# short at their first frame would not reach the library the suppression names.
export LSAN_OPTIONS="suppressions=$PWD/scripts/sanitize.supp:print_suppressions=0:fast_unwind_on_malloc=0"
export OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$build"
# Left out: tests that bound the wall time of a whole command, which the
# sanitizers' slow-down (about 4x) breaks without any report.
ctest -j"$jobs" -L "unit|mpi" -E "^PaperAblation.EachMechanismOffInTurnWithinThirtySeconds$" --output-on-failure "$@"
