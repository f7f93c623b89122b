// The shape of one GEMM, as the layer's op records (layer_op.h), the cost
// model (core/sim/device_rates.h) and the calibration table name it:
// C (m×n) = A (m×k) · B (k×n), `batch` times (the batched GEMMs of attention).
#pragma once

namespace ptdp {

struct GemmShape {
  double m = 0, n = 0, k = 0, batch = 1;
  double flops() const { return 2 * m * n * k * batch; }
};

}  // namespace ptdp
