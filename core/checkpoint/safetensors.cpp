// safetensors reading and writing; see safetensors.h.
#include "core/checkpoint/safetensors.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/config/bounds.h"
#include "core/config/json_read.h"
#include "core/io/crc32.h"
#include "core/io/read_file.h"

namespace ptdp {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian, as this host must be");

namespace {

constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;  // the format's own limit

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw SafetensorsError(path.string() + ": " + what);
}

// The file's bytes; a file that cannot be read, or is no regular file, refused as a SafetensorsError.
std::vector<std::uint8_t> file_bytes_of(const std::filesystem::path& path) {
  try {
    return read_regular_file(path);
  } catch (const std::runtime_error& e) {
    throw SafetensorsError(e.what());
  }
}

// `tensor`'s dtype; unknown names refused (echoed cut: core/config/json_read.h cut_text).
DType dtype_from(const std::filesystem::path& path, const std::string& name, const std::string& tensor) {
  for (DType t : {DType::f32, DType::f64, DType::bf16, DType::f16, DType::i32})
    if (safetensors_dtype(t) == name) return t;
  fail(path, tensor + " has dtype \"" + cut_text(name, 40) + "\", not one of F32, F64, BF16, F16, I32");
}

float bf16_to_f32(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));  // inf, nan
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
  const float sub = static_cast<float>(mant) * 0x1p-24f;  // subnormal: mant · 2^-24
  return sign != 0 ? -sub : sub;
}

SafetensorsFile::Entry read_entry(const std::filesystem::path& path, const std::string& name, const nlohmann::json& j,
                                  std::size_t data_bytes) {
  const std::string tensor = "tensor \"" + cut_text(name, 200) + "\"";
  if (!j.is_object() || !j.contains("dtype") || !j.contains("shape") || !j.contains("data_offsets"))
    fail(path, tensor + " needs dtype, shape and data_offsets");
  const auto& dt = j.at("dtype");
  const auto& shape = j.at("shape");
  const auto& off = j.at("data_offsets");
  if (!dt.is_string() || !shape.is_array() || !off.is_array() || off.size() != 2)
    fail(path, tensor + ": dtype must be a string, shape an array, data_offsets two numbers");
  SafetensorsFile::Entry e;
  e.dtype = dtype_from(path, dt.get<std::string>(), tensor);
  std::uint64_t numel = 1;
  for (const auto& d : shape) {
    if (!d.is_number_unsigned()) fail(path, tensor + " has a shape entry that is not a size");
    const std::uint64_t size = d.get<std::uint64_t>();
    // One tensor's bound (core/config/bounds.h), checked before multiplying: never wraps.
    if (size != 0 && numel > static_cast<std::uint64_t>(kMaxElements) / size)
      fail(path, tensor + " has more than 2^40 elements");
    numel *= size;
    e.shape.push_back(static_cast<std::int64_t>(size));
  }
  for (const auto& o : off)
    if (!o.is_number_unsigned()) fail(path, tensor + " has offsets that are not byte positions");
  e.begin = off[0].get<std::size_t>(), e.end = off[1].get<std::size_t>();
  if (e.begin > e.end || e.end > data_bytes)
    fail(path, tensor + " lies outside the file's " + std::to_string(data_bytes) +
                   " data bytes (truncated?)");
  if (e.end - e.begin != numel * dtype_size(e.dtype))
    fail(path, tensor + " holds " + std::to_string(e.end - e.begin) + " bytes, its shape needs " +
                   std::to_string(numel * dtype_size(e.dtype)));
  return e;
}

std::uint16_t f32_to_bf16(float f) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40);  // nan stays nan
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

std::uint16_t f32_to_f16(float f) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u;                    // nan
  if (a >= 0x477ff000u) return sign | 0x7c00u;                   // rounds past 65504: inf
  if (a < 0x38800000u) {                                         // below 2^-14: subnormal (or zero)
    const float scaled = std::bit_cast<float>(a) * 0x1p24f;      // units of 2^-24, exact
    return sign | static_cast<std::uint16_t>(std::nearbyint(scaled));
  }
  const std::uint32_t r = a + 0xfffu + ((a >> 13) & 1u);         // round to nearest even at bit 13
  return sign | static_cast<std::uint16_t>((r - 0x38000000u) >> 13);
}

}  // namespace

std::vector<std::uint8_t> encode_f32(const float* values, std::size_t n, DType type) {
  std::vector<std::uint8_t> out(n * dtype_size(type));
  for (std::size_t i = 0; i < n; ++i) {
    if (type == DType::f32) {
      std::memcpy(out.data() + 4 * i, &values[i], 4);
      continue;
    }
    if (type != DType::bf16 && type != DType::f16)
      throw std::invalid_argument("encode_f32: " + safetensors_dtype(type) + " is not F32, BF16 or F16");
    const std::uint16_t h = type == DType::bf16 ? f32_to_bf16(values[i]) : f32_to_f16(values[i]);
    std::memcpy(out.data() + 2 * i, &h, 2);
  }
  return out;
}

std::string safetensors_dtype(DType t) {
  switch (t) {
    case DType::f32: return "F32";
    case DType::f64: return "F64";
    case DType::bf16: return "BF16";
    case DType::f16: return "F16";
    case DType::i32: return "I32";
  }
  return "?";
}

WrittenFile write_safetensors(StagedFile& out, const std::vector<TensorRef>& tensors,
                              const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::size_t offset = 0;
  for (const TensorRef& t : tensors) {
    if (header.contains(t.name)) fail(out.path(), "tensor \"" + t.name + "\" named twice");
    const std::size_t bytes = static_cast<std::size_t>(shape_numel(t.shape)) * dtype_size(t.dtype);
    header[t.name] = {{"dtype", safetensors_dtype(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned
  WrittenFile written;
  const auto put = [&](const void* data, std::size_t n) {
    out.write(data, n);
    written.crc32 = crc32(data, n, written.crc32);
    written.bytes += static_cast<std::int64_t>(n);
  };
  const std::uint64_t n = text.size();
  put(&n, sizeof n);
  put(text.data(), text.size());
  for (const TensorRef& t : tensors) put(t.data, static_cast<std::size_t>(shape_numel(t.shape)) * dtype_size(t.dtype));
  return written;
}

WrittenFile write_safetensors(const std::filesystem::path& path, const std::vector<TensorRef>& tensors,
                              const std::map<std::string, std::string>& metadata, StageOptions options) {
  StagedFile out(path, options);
  const WrittenFile written = write_safetensors(out, tensors, metadata);
  out.commit();
  return written;
}

SafetensorsFile::SafetensorsFile(const std::filesystem::path& path) : SafetensorsFile(path, file_bytes_of(path)) {}

SafetensorsFile::SafetensorsFile(std::filesystem::path path, std::vector<std::uint8_t> bytes)
    : path_(std::move(path)), bytes_(std::move(bytes)) {
  std::uint64_t n = 0;
  if (bytes_.size() < sizeof n) fail(path_, "is shorter than a safetensors header");
  std::memcpy(&n, bytes_.data(), sizeof n);
  if (n == 0) fail(path_, "announces an empty header (length 0)");
  if (n > kMaxHeaderBytes || n > bytes_.size() - sizeof n)
    fail(path_, "announces a " + std::to_string(n) + "-byte header in a " + std::to_string(bytes_.size()) +
                    "-byte file");
  data_start_ = sizeof n + n;
  nlohmann::json header;
  try {
    header = parse_json(std::string(reinterpret_cast<const char*>(bytes_.data()) + sizeof n, n), path_.string());
  } catch (const std::exception& e) {
    fail(path_, std::string("header is not JSON: ") + e.what());
  }
  if (!header.is_object()) fail(path_, "header is not a JSON object");
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      if (!value.is_object()) fail(path_, "__metadata__ is not an object");
      for (const auto& [k, v] : value.items()) {
        if (!v.is_string()) fail(path_, "__metadata__." + cut_text(k) + " is not a string");
        metadata_[k] = v.get<std::string>();
      }
      continue;
    }
    entries_[name] = read_entry(path_, name, value, bytes_.size() - data_start_);
  }
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  for (const auto& [name, e] : entries_) spans.push_back({e.begin, e.end});
  std::sort(spans.begin(), spans.end());
  for (std::size_t i = 1; i < spans.size(); ++i)
    if (spans[i].first < spans[i - 1].second) fail(path_, "has tensors whose bytes overlap");
}

const SafetensorsFile::Entry& SafetensorsFile::entry(const std::string& name) const {
  const auto it = entries_.find(name);
  if (it == entries_.end()) fail(path_, "holds no tensor \"" + name + "\"");
  return it->second;
}

const std::uint8_t* SafetensorsFile::data(const std::string& name) const {
  return bytes_.data() + data_start_ + entry(name).begin;
}

std::vector<float> SafetensorsFile::read_f32(const std::string& name) const {
  const Entry& e = entry(name);
  const std::uint8_t* p = data(name);
  const std::size_t n = static_cast<std::size_t>(shape_numel(e.shape));
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch (e.dtype) {
      case DType::f32: std::memcpy(&out[i], p + 4 * i, 4); break;
      case DType::f64: {
        double d;
        std::memcpy(&d, p + 8 * i, 8);
        out[i] = static_cast<float>(d);
        break;
      }
      case DType::bf16:
      case DType::f16: {
        std::uint16_t b;
        std::memcpy(&b, p + 2 * i, 2);
        out[i] = e.dtype == DType::bf16 ? bf16_to_f32(b) : f16_to_f32(b);
        break;
      }
      case DType::i32: fail(path_, "tensor \"" + name + "\" is I32, not a float tensor");
    }
  }
  return out;
}

}  // namespace ptdp
