// Helpers of the GPU tests of the vectorised kernels: device arrays that start
// `offset` elements past an aligned allocation (offset 1: a view that is not
// 16-byte aligned, so the kernels must take their scalar path), and a bitwise
// comparison for the deterministic reductions.
#pragma once
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "tests/gpu/gpu_test.h"

namespace ptdp::gputest {

template <class T> class OffsetBuffer {
 public:
  OffsetBuffer(std::size_t n, std::size_t offset) : buf_(n + offset), n_(n), offset_(offset) {}
  OffsetBuffer(const std::vector<T>& host, std::size_t offset) : OffsetBuffer(host.size(), offset) {
    EXPECT_EQ(cudaMemcpy(get(), host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  T* get() const { return buf_.get() + offset_; }
  std::vector<T> download() const {
    const std::vector<T> all = buf_.download();
    return std::vector<T>(all.begin() + static_cast<std::ptrdiff_t>(offset_), all.end());
  }

 private:
  DeviceBuffer<T> buf_;
  std::size_t n_, offset_;
};

template <class T> std::vector<float> got(const OffsetBuffer<T>& buf) { return to_floats(buf.download()); }

// Passes iff a and b hold the same bits (a deterministic kernel run twice).
template <class T>
void expect_bitwise_equal(const std::vector<T>& a, const std::vector<T>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) {
      ADD_FAILURE() << what << ": element " << i << " differs between two runs";
      return;
    }
}

}  // namespace ptdp::gputest
