// Helpers of the GPU tests (ctest label gpu): skip visibly when this machine
// has no CUDA device; copy between host vectors and device memory; compare a
// device result with its CPU reference, rounded to the output type first.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "tests/gpu/gpu_tolerances.h"

namespace ptdp::gputest {

inline bool has_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

#define PTDP_REQUIRE_GPU() \
  if (!::ptdp::gputest::has_gpu()) GTEST_SKIP() << "no CUDA device on this machine: GPU test skipped"

template <class T> float to_float(T x) { return static_cast<float>(x); }
template <> inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
template <> inline float to_float(__half x) { return __half2float(x); }
template <class T> T from_float(float x) { return static_cast<T>(x); }
template <> inline __nv_bfloat16 from_float(float x) { return __float2bfloat16(x); }
template <> inline __half from_float(float x) { return __float2half(x); }
// x rounded to T and back: the reference "rounded to the output type first".
template <class T> float round_to(float x) { return to_float(from_float<T>(x)); }

// Device buffer of n elements of T, freed at scope exit; "poisoned" with NaN
// bytes (0xFF) so an element a kernel forgot to write fails the comparison.
template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    EXPECT_EQ(cudaMalloc(&ptr_, std::max<std::size_t>(n, 1) * sizeof(T)), cudaSuccess);
    cudaMemset(ptr_, 0xFF, n * sizeof(T));
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  T* get() const { return ptr_; }
  void upload(const std::vector<T>& host) { cudaMemcpy(ptr_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice); }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    cudaDeviceSynchronize();
    cudaMemcpy(host.data(), ptr_, n_ * sizeof(T), cudaMemcpyDeviceToHost);
    return host;
  }

 private:
  T* ptr_ = nullptr;
  std::size_t n_;
};

// n values ~ N(0, sigma²) already representable in T (so the CPU reference sees the same inputs).
template <class T>
std::vector<float> random_values(std::mt19937& rng, std::size_t n, float sigma = 1.0f) {
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> out(n);
  for (auto& v : out) v = round_to<T>(dist(rng));
  return out;
}

template <class T> std::vector<T> to_type(const std::vector<float>& v) {
  std::vector<T> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = from_float<T>(v[i]);
  return out;
}
template <class T> std::vector<float> to_floats(const std::vector<T>& v) {
  std::vector<float> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = to_float(v[i]);
  return out;
}

// Passes iff |got − round_to<Out>(ref)| ≤ atol + rtol·|ref| for every element;
// on failure names the worst element, its index, got and ref.
template <class Out>
void expect_close(const std::vector<float>& got, const std::vector<float>& ref, Tolerance tol, const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  double worst = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double r = round_to<Out>(ref[i]);
    const double excess = std::abs(got[i] - r) / (tol.atol + tol.rtol * std::abs(r));
    if (!(excess <= worst)) worst = excess, at = i;  // NaN counts as worst
  }
  EXPECT_LE(worst, 1.0) << what << ": worst element " << at << ": got " << got[at] << ", reference " << ref[at]
                        << " (atol " << tol.atol << ", rtol " << tol.rtol << ")";
}

// The two 16-bit types every kernel is tested in, named bf16 and fp16 in test names.
using Types16 = ::testing::Types<__nv_bfloat16, __half>;
struct TypeNames {
  template <class T> static std::string GetName(int) { return std::is_same_v<T, __nv_bfloat16> ? "bf16" : "fp16"; }
};

// A device buffer's values as floats.
template <class T> std::vector<float> got(const DeviceBuffer<T>& buf) { return to_floats(buf.download()); }

}  // namespace ptdp::gputest
