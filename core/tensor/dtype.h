// Element types and devices a tensor can have.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace ptdp {

enum class DType : std::uint8_t { f32, f64, bf16, f16, i32 };
enum class Device : std::uint8_t { cpu, cuda };

std::size_t dtype_size(DType t);
std::string dtype_name(DType t);
std::string device_name(Device d);  // "cpu" | "cuda", as --device and machine profiles spell it
std::optional<Device> device_from_name(const std::string& name);

}  // namespace ptdp
