// Names and sizes of element types and devices.
#include "core/tensor/dtype.h"

namespace ptdp {

std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::f64: return 8;
    case DType::f32: case DType::i32: return 4;
    case DType::bf16: case DType::f16: return 2;
  }
  return 0;
}

std::string dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "fp32";
    case DType::f64: return "fp64";
    case DType::bf16: return "bf16";
    case DType::f16: return "fp16";
    case DType::i32: return "int32";
  }
  return "?";
}

std::string device_name(Device d) { return d == Device::cpu ? "cpu" : "cuda"; }

std::optional<Device> device_from_name(const std::string& name) {
  for (const Device d : {Device::cpu, Device::cuda})
    if (device_name(d) == name) return d;
  return std::nullopt;
}

}  // namespace ptdp
