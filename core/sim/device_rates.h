// Time of one kernel on one GPU from its shape: GEMMs by an analytical
// efficiency curve (or a calibration table of measured GEMMs), memory-bound
// kernels by bytes moved. Letters: a GEMM computes C (m×n) = A (m×k) · B (k×n),
// `batch` times (batched GEMMs of attention; core/layer_ops/gemm_shape.h).
#pragma once
#include "core/config/machine.h"
#include "core/config/plan.h"
#include "core/layer_ops/gemm_shape.h"

namespace ptdp {

struct Calibration;

class DeviceRates {
 public:
  // Rates of `machine` for `precision`; `calibration` (may be null) corrects
  // GEMM efficiency and memory bandwidth with measurements, and slows every
  // kernel by its host_sharing at `ranks_on_host` (ranks of a CPU run sharing
  // one host's cores, caches and memory).
  DeviceRates(const Machine& machine, Precision precision, const Calibration* calibration, int ranks_on_host = 1);

  // Analytical curve (documented in docs/projection.md):
  //   eff = gemm · waves(m, n) · k/(k + k_half), where waves is the share of
  //   SM slots doing useful work when ceil(m/Tm)·ceil(n/Tn)·batch tiles run in
  //   waves of `sms`; time = max(flops/(peak·eff), bytes/(bandwidth·memory)) + launch.
  // With a calibration, scaled by measured/analytical time at the nearest measured shape.
  double gemm_seconds(const GemmShape& g) const;
  double analytical_gemm_seconds(const GemmShape& g) const;
  double analytical_gemm_efficiency(const GemmShape& g) const;
  // An element-wise or reduction kernel moving `bytes`.
  double memory_seconds(double bytes, int kernels = 1) const;
  // A fused attention kernel doing `flops` (causal work counted in full).
  double flash_attention_seconds(double flops, double io_bytes) const;

  double peak_flops() const { return peak_flops_; }
  double bandwidth() const { return bandwidth_; }
  double element_bytes() const { return element_bytes_; }
  double launch_seconds() const { return launch_s_; }

 private:
  const Machine& machine_;
  const Calibration* calibration_;
  double peak_flops_;     // FLOP/s
  double bandwidth_;      // achieved bytes/s of memory-bound kernels
  double element_bytes_;  // 2 for bf16/fp16, 4 for fp32
  double launch_s_;
  double sharing_;  // per-rank compute slowdown of ranks sharing the host (1: none)
};

}  // namespace ptdp
