// Overflow detection and the scale's halving and growth.
#include "core/optim/loss_scaler.h"

#include <algorithm>
#include <cmath>

namespace ptdp {

LossScaler::LossScaler(bool enabled, double initial, int window)
    : enabled_(enabled), scale_(enabled ? initial : 1.0), window_(window) {}

bool LossScaler::update(double scaled_norm) {
  if (!enabled_) return true;
  if (!std::isfinite(scaled_norm)) {
    scale_ = std::max(1.0, scale_ / 2);
    good_steps_ = 0;
    ++skipped_;
    return false;
  }
  if (++good_steps_ >= window_) {
    scale_ *= 2;
    good_steps_ = 0;
  }
  return true;
}

}  // namespace ptdp
