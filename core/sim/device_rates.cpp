// The analytical GEMM curve, memory-bound kernels, fused attention.
#include "core/sim/device_rates.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/config/rank_dims.h"
#include "core/sim/calibration.h"

namespace ptdp {

DeviceRates::DeviceRates(const Machine& machine, Precision precision, const Calibration* calibration,
                         int ranks_on_host)
    : machine_(machine),
      calibration_(calibration),
      sharing_(calibration != nullptr ? calibration->host_sharing_at(ranks_on_host) : 1.0) {
  const double peak = machine.peak_for(to_string(precision));
  if (peak <= 0)
    throw std::invalid_argument("machine \"" + machine.name + "\" gives no peak_tflops for " + to_string(precision));
  peak_flops_ = peak * 1e12;
  element_bytes_ = ptdp::element_bytes(precision);
  bandwidth_ = machine.memory_bandwidth_gbs * 1e9 * machine.efficiency.memory;
  if (calibration_ != nullptr && calibration_->memory_bandwidth_gbs > 0)
    bandwidth_ = calibration_->memory_bandwidth_gbs * 1e9;
  if (bandwidth_ <= 0) throw std::invalid_argument("machine \"" + machine.name + "\" gives no memory bandwidth");
  launch_s_ = machine.mechanisms.kernel_launch ? machine.efficiency.kernel_launch_us * 1e-6 : 0.0;
}

double DeviceRates::analytical_gemm_efficiency(const GemmShape& g) const {
  const Efficiency& e = machine_.efficiency;
  const double tiles = std::ceil(g.m / e.gemm_tile_m) * std::ceil(g.n / e.gemm_tile_n) * g.batch;
  const double slots = std::ceil(tiles / std::max(1, e.sms)) * std::max(1, e.sms);
  const double useful = (g.m * g.n * g.batch) / (e.gemm_tile_m * e.gemm_tile_n);
  const Mechanisms& on = machine_.mechanisms;
  const double waves = on.wave_quantization ? std::min(1.0, useful / slots) : 1.0;
  return e.gemm * waves * (on.short_reduction ? g.k / (g.k + e.gemm_k_half) : 1.0);
}

double DeviceRates::analytical_gemm_seconds(const GemmShape& g) const {
  if (g.flops() <= 0) return 0.0;
  const double bytes = (g.m * g.k + g.k * g.n + g.m * g.n) * g.batch * element_bytes_;
  const double compute = g.flops() / (peak_flops_ * analytical_gemm_efficiency(g));
  return (machine_.mechanisms.memory_bound_gemm ? std::max(compute, bytes / bandwidth_) : compute) + launch_s_;
}

double DeviceRates::gemm_seconds(const GemmShape& g) const {
  const double t = analytical_gemm_seconds(g);
  return calibration_ != nullptr ? t * calibration_->gemm_time_ratio(g, *this) * sharing_ : t;
}

double DeviceRates::memory_seconds(double bytes, int kernels) const {
  return bytes / bandwidth_ * sharing_ + kernels * launch_s_;
}

double DeviceRates::flash_attention_seconds(double flops, double io_bytes) const {
  double eff = machine_.efficiency.flash_attention;
  if (calibration_ != nullptr && calibration_->flash_attention_tflops > 0)
    eff = calibration_->flash_attention_tflops * 1e12 / peak_flops_;
  return std::max(flops / (peak_flops_ * eff), io_bytes / bandwidth_) * sharing_ + launch_s_;
}

}  // namespace ptdp
