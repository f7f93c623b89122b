// Tensor: a shape, an element type and shared storage from an Allocator.
// Storage returns its bytes to the allocator when the last view goes away,
// so the allocator's live bytes are exactly what the run holds.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor/allocator.h"
#include "core/tensor/dtype.h"

namespace ptdp {

using Shape = std::vector<std::int64_t>;
std::int64_t shape_numel(const Shape& s);
std::string shape_string(const Shape& s);

class Storage {
 public:
  Storage(Allocator& alloc, std::size_t bytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  Device device() const { return alloc_.device(); }

 private:
  Allocator& alloc_;
  void* data_;
  std::size_t bytes_;
};

class Tensor {
 public:
  Tensor() = default;
  Tensor(Allocator& alloc, Shape shape, DType dtype);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  std::int64_t dim(int i) const;
  int rank() const { return static_cast<int>(shape_.size()); }
  std::int64_t numel() const { return shape_numel(shape_); }
  DType dtype() const { return dtype_; }
  Device device() const;
  std::size_t bytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype_); }

  void* raw() const;
  // Typed access; throws when T does not match dtype().
  template <class T> T* data() const;

  // Same storage, other shape with the same number of elements.
  Tensor view(Shape shape) const;
  // Rows [begin, begin+count) of dimension 0, sharing storage.
  Tensor rows(std::int64_t begin, std::int64_t count) const;

 private:
  std::shared_ptr<Storage> storage_;
  Shape shape_;
  DType dtype_ = DType::f32;
  std::size_t offset_ = 0;  // bytes from the start of storage
};

}  // namespace ptdp
