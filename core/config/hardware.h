// The machine at hand: what `ptdp train` finds it runs on (the CPU or the GPU
// by name, ranks per host), the shipped profile that hardware maps to, and how
// a profile the config names contradicts it. Pure: the probing is
// core/runtime/backend.h's detect_hardware.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/json_read.h"
#include "core/config/machine.h"
#include "core/config/peak_cache.h"

namespace ptdp {

struct Hardware {
  Device device = Device::cpu;
  std::string name;               // CPU model (/proc/cpuinfo) or GPU name (cudaGetDeviceProperties)
  int cores = 0;                  // logical CPU cores of rank 0's host
  std::int64_t memory_bytes = 0;  // host RAM (CPU; the cgroup limit where lower) or one GPU's memory
  int hosts = 1;                  // distinct host names over the world
  int ranks_per_host = 1;         // the most ranks on one host: the GPUs per node in use
  std::string profile;            // the machine profile the run used
  bool detected = false;          // true: the config named no machine and the profile comes from this hardware
  std::vector<std::string> mismatch;  // how a named profile contradicts this hardware (warnings)
  // Where the peak behind MFU came from: measured on this machine (the CPU),
  // else the profile, which names the machine it was measured on ("" unknown).
  std::optional<MeasuredPeak> measured_peak;
  std::string profile_measured_on;
  // Figures this hardware cannot have produced (MFU or HFU above 100% of the
  // peak: core/results/plausibility.h's utilization_above_peak): errors.
  std::vector<std::string> errors;
};

// The machine a profile says its figures were measured on: its
// sources.measured_on ("AMD EPYC"), or "" where it does not say.
std::string profile_measured_on(const Machine& m);

// The shipped profile of a GPU, by the name CUDA reports ("NVIDIA H100 80GB
// HBM3" -> "h100-80gb"); "" when no profile describes it (an A100 40GB, an L40S).
std::string profile_for_gpu(const std::string& gpu_name);

// The machine a config without one trains on: cpu-host on the CPU, the GPU's
// profile on CUDA, with gpus_per_node set to the ranks per host. Throws
// ConfigRefused (field "machine") naming the GPU when no profile matches.
Machine machine_at_hand(const Hardware& hw, const std::filesystem::path& machines_dir);

// Sentences saying how the named profile `m` contradicts `hw`: another device,
// another GPU's profile, fewer GPUs per node than ranks on one host. Empty when none.
std::vector<std::string> hardware_mismatches(const Machine& m, const Hardware& hw);

// The result's "hardware" block, and back (JsonRefused naming the pointer).
nlohmann::json to_json(const Hardware& hw);
Hardware hardware_of(const JsonAt& j);

}  // namespace ptdp
