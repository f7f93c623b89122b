// GPipe: all m forward passes, then all m backward passes (a flush per
// iteration). Every micro-batch's activations are alive at the turn: m in flight.
#include "core/schedule/registry.h"

namespace ptdp {

namespace {

Program build_gpipe(const ScheduleSpec& s) {
  Program prog;
  for (int mb = 0; mb < s.m; ++mb) append_forward(prog, s, mb, 0);
  for (int mb = 0; mb < s.m; ++mb) append_backward(prog, s, mb, 0);
  return prog;
}

const ScheduleRegistration kGpipe({"gpipe", "all forwards, then all backwards", build_gpipe, false});

}  // namespace

}  // namespace ptdp
