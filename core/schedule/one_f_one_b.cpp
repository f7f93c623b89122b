// 1F1B (PipeDream-Flush): rank r runs a warm-up of min(p−r−1, m) forwards, then
// alternates one forward and one backward, then a cool-down of the remaining
// backwards. At most p−r micro-batches are in flight; the bubble is (p−1)/m.
#include <algorithm>

#include "core/schedule/registry.h"

namespace ptdp {

namespace {

Program build_1f1b(const ScheduleSpec& s) {
  Program prog;
  const int warmup = std::min(s.p - s.rank - 1, s.m);
  for (int mb = 0; mb < warmup; ++mb) append_forward(prog, s, mb, 0);  // warm-up
  for (int i = 0; i < s.m - warmup; ++i) {                              // steady state
    append_forward(prog, s, warmup + i, 0);
    append_backward(prog, s, i, 0);
  }
  for (int mb = s.m - warmup; mb < s.m; ++mb) append_backward(prog, s, mb, 0);  // cool-down
  return prog;
}

const ScheduleRegistration k1f1b({"1f1b", "PipeDream-Flush: warm-up, one forward one backward, cool-down",
                                  build_1f1b, false});

}  // namespace

}  // namespace ptdp
