// safetensors, Hugging Face's tensor file format (the format's specification:
// github.com/huggingface/safetensors): an 8-byte little-endian header length N,
// N bytes of JSON naming every tensor's dtype, shape and [begin, end) byte
// offsets into the data that follows, plus an optional "__metadata__" object of
// strings; then the raw little-endian bytes. ptdp's checkpoint shards and its
// Hugging Face GPT-2 interchange are both this format: a header any tool can
// read, tensors that map straight into memory.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/io/staged_file.h"
#include "core/tensor/dtype.h"
#include "core/tensor/tensor.h"

namespace ptdp {

// A file that is not valid safetensors, or a tensor it lacks; the message names the file.
class SafetensorsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One tensor to write: host bytes, numel(shape)·dtype_size(dtype) of them.
struct TensorRef {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
  const void* data = nullptr;
};

// What was written: the file's size and its CRC-32 (crc32.h), computed as the
// bytes went out (a checkpoint's manifest records both; no file is read back).
struct WrittenFile {
  std::int64_t bytes = 0;
  std::uint32_t crc32 = 0;
};

// Streams `tensors` (names unique) and `metadata` into `out`: the header, then
// each tensor's bytes straight from its memory (a shard of gigabytes is never
// copied whole). The caller commits `out`. Throws SafetensorsError naming the
// file (a tensor named twice), std::runtime_error when a write fails.
WrittenFile write_safetensors(StagedFile& out, const std::vector<TensorRef>& tensors,
                              const std::map<std::string, std::string>& metadata = {});
// The same into `path` through a StagedFile with `options`, committed.
WrittenFile write_safetensors(const std::filesystem::path& path, const std::vector<TensorRef>& tensors,
                              const std::map<std::string, std::string>& metadata = {}, StageOptions options = {});

class SafetensorsFile {
 public:
  struct Entry {
    DType dtype = DType::f32;
    Shape shape;
    std::size_t begin = 0, end = 0;  // byte offsets into the data section
  };

  // Reads the whole file (a regular file: a device or FIFO is refused,
  // core/io/read_file.h) and checks it: the header's length and JSON (strict:
  // a key named twice is refused), every entry's dtype, shape (element counts
  // in 64 bits, without overflow) and offsets (inside the data, numel·size
  // bytes, not overlapping). Throws SafetensorsError naming the file and the fault.
  explicit SafetensorsFile(const std::filesystem::path& path);
  // The same checks of bytes already in memory, named `path` in messages.
  SafetensorsFile(std::filesystem::path path, std::vector<std::uint8_t> bytes);

  const std::filesystem::path& path() const { return path_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::map<std::string, Entry>& entries() const { return entries_; }
  bool has(const std::string& name) const { return entries_.count(name) > 0; }
  // Throws SafetensorsError when the file has no tensor `name`.
  const Entry& entry(const std::string& name) const;
  const std::uint8_t* data(const std::string& name) const;
  // The tensor's elements as fp32 (from F32, BF16, F16 or F64).
  std::vector<float> read_f32(const std::string& name) const;
  // Header and data bytes: what was read.
  std::size_t file_bytes() const { return bytes_.size(); }

 private:
  std::filesystem::path path_;
  std::vector<std::uint8_t> bytes_;
  std::size_t data_start_ = 0;
  std::map<std::string, Entry> entries_;
  std::map<std::string, std::string> metadata_;
};

// n fp32 values as little-endian bytes of `type` (F32, BF16 or F16; 16-bit by
// round to nearest even, so values the type holds exactly stay exact).
std::vector<std::uint8_t> encode_f32(const float* values, std::size_t n, DType type);

// safetensors' dtype names: "F32", "F64", "BF16", "F16", "I32".
std::string safetensors_dtype(DType t);

}  // namespace ptdp
