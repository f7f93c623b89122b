// Tensor storage, views and typed access.
#include "core/tensor/tensor.h"

#include <sstream>
#include <stdexcept>

namespace ptdp {

std::int64_t shape_numel(const Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

std::string shape_string(const Shape& s) {
  std::ostringstream out;
  out << "(";
  for (std::size_t i = 0; i < s.size(); ++i) out << (i ? ", " : "") << s[i];
  out << ")";
  return out.str();
}

Storage::Storage(Allocator& alloc, std::size_t bytes)
    : alloc_(alloc), data_(alloc.allocate(bytes)), bytes_(bytes) {}

Storage::~Storage() { alloc_.deallocate(data_, bytes_); }

Tensor::Tensor(Allocator& alloc, Shape shape, DType dtype)
    : shape_(std::move(shape)), dtype_(dtype) {
  for (auto d : shape_)
    if (d < 0) throw std::invalid_argument("tensor shape " + shape_string(shape_) + " is negative");
  storage_ = std::make_shared<Storage>(alloc, bytes());
}

std::int64_t Tensor::dim(int i) const {
  if (i < 0) i += rank();
  if (i < 0 || i >= rank())
    throw std::out_of_range("dim " + std::to_string(i) + " of shape " + shape_string(shape_));
  return shape_[static_cast<std::size_t>(i)];
}

Device Tensor::device() const { return storage_ ? storage_->device() : Device::cpu; }

void* Tensor::raw() const {
  if (!storage_) return nullptr;
  return static_cast<char*>(storage_->data()) + offset_;
}

template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<double>() { return DType::f64; }
template <> constexpr DType dtype_of<std::int32_t>() { return DType::i32; }
template <> constexpr DType dtype_of<std::uint16_t>() { return DType::bf16; }

template <class T> T* Tensor::data() const {
  // 16-bit float tensors are reached through raw(); uint16_t names either.
  const bool ok = dtype_ == dtype_of<T>() ||
                  (dtype_of<T>() == DType::bf16 && dtype_ == DType::f16);
  if (!ok) throw std::logic_error("tensor of " + dtype_name(dtype_) + " read with another type");
  return static_cast<T*>(raw());
}
template float* Tensor::data<float>() const;
template double* Tensor::data<double>() const;
template std::int32_t* Tensor::data<std::int32_t>() const;
template std::uint16_t* Tensor::data<std::uint16_t>() const;

Tensor Tensor::view(Shape shape) const {
  if (shape_numel(shape) != numel())
    throw std::logic_error("view " + shape_string(shape) + " of tensor " + shape_string(shape_));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::rows(std::int64_t begin, std::int64_t count) const {
  if (rank() == 0 || begin < 0 || count < 0 || begin + count > shape_[0])
    throw std::out_of_range("rows [" + std::to_string(begin) + ", +" + std::to_string(count) +
                            ") of tensor " + shape_string(shape_));
  std::int64_t row_elems = 1;
  for (std::size_t i = 1; i < shape_.size(); ++i) row_elems *= shape_[i];
  Tensor t = *this;
  t.shape_[0] = count;
  t.offset_ += static_cast<std::size_t>(begin * row_elems) * dtype_size(dtype_);
  return t;
}

}  // namespace ptdp
