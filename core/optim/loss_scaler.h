// Dynamic loss scaling for fp16: the loss gradient is multiplied by the scale
// so small gradients survive 16 bits; before the optimizer the gradients are
// checked: an overflow (inf or NaN in the global norm) skips the step and
// halves the scale; after `window` good steps in a row the scale doubles.
// bf16 and fp32 run with a fixed scale of 1 (never skip).
#pragma once

namespace ptdp {

class LossScaler {
 public:
  // enabled: fp16. initial 2^16, window 1000 steps, floor 1 (Megatron-LM's defaults).
  explicit LossScaler(bool enabled, double initial = 65536.0, int window = 1000);

  double scale() const { return scale_; }
  bool enabled() const { return enabled_; }
  // Takes the global norm of the SCALED gradients; true when the step may run.
  // Updates the scale for the next iteration.
  bool update(double scaled_norm);
  int skipped() const { return skipped_; }
  int good_steps() const { return good_steps_; }
  // A checkpoint's state: the scale, the good steps since the last change, the skipped steps.
  void restore(double scale, int good_steps, int skipped) {
    scale_ = scale;
    good_steps_ = good_steps;
    skipped_ = skipped;
  }

 private:
  bool enabled_;
  double scale_;
  int window_;
  int good_steps_ = 0;
  int skipped_ = 0;
};

}  // namespace ptdp
