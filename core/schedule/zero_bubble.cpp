// Zero-bubble pipeline schedule ZB-H1 (Qi et al., "Zero Bubble Pipeline
// Parallelism", ICLR 2024, §3.1). The backward is split into B (input
// gradient, on the critical path between stages) and W (weight gradient, which
// no other stage waits for), and Ws are moved into what would be idle time.
//
// The paper's bubble with per-pass times T_F, T_B, T_W (B and W halves of the
// backward), per pipeline rank:
//   1F1B (B and W fused into one backward):  (p−1)·(T_F + T_B + T_W)
//   ZB-H1:                                   (p−1)·(T_F + T_B − T_W)
// with the same peak activation memory as 1F1B: at most p−r micro-batches
// between their F and their B on rank r (what W keeps is only each linear
// layer's input and output gradient).
//
// The lists are generated, not hand-written: a list scheduler on a unit time
// grid (T_F = T_B = T_W = 1, zero transfer time) runs all p ranks and at each
// step lets each idle rank take, in order of preference,
//   1. B of its oldest micro-batch whose output gradient has arrived,
//   2. F of its next micro-batch if it has arrived and fewer than p−r are
//      between F and B (1F1B's in-flight bound), unless p Ws are already
//      pending (caps the W buffers at p micro-batches per rank),
//   3. W of its oldest pending B.
// The order each rank ran is its list. Under unit costs every rank idles
// exactly p−1 steps, the ZB-H1 bound above (tests/unit/test_zero_bubble.cpp
// checks it for p ≤ 8, m ≤ 16). Only v = 1: interleaving is refused by
// validation (plan.virtual_stages).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/schedule/registry.h"

namespace ptdp {

namespace {

// One rank's progress in the unit-time list scheduler.
struct RankState {
  int next_f = 0, next_b = 0, next_w = 0;  // the next micro-batch of each kind
  int busy_until = 0;                       // the step the rank is free again
  std::vector<int> f_end, b_end;            // [mb] step its F / B ended, −1: not yet
};

class UnitScheduler {
 public:
  UnitScheduler(int p, int m) : p_(p), m_(m), ranks_(static_cast<std::size_t>(p)), order_(static_cast<std::size_t>(p)) {
    for (RankState& r : ranks_) r.f_end.assign(static_cast<std::size_t>(m), -1), r.b_end.assign(static_cast<std::size_t>(m), -1);
  }

  // The order of (op, mb) each rank runs in, Op::forward/backward_input/backward_weight.
  std::vector<std::vector<Instr>> run() {
    const int total = 3 * m_ * p_;
    int placed = 0;
    for (int t = 0; placed < total; ++t) {
      if (t > 4 * total) throw std::logic_error("zero bubble list scheduler made no progress");
      for (int r = 0; r < p_; ++r) placed += take(r, t) ? 1 : 0;
    }
    return order_;
  }

 private:
  RankState& at(int r) { return ranks_[static_cast<std::size_t>(r)]; }
  static bool done_by(const std::vector<int>& end, int mb, int t) {
    return end[static_cast<std::size_t>(mb)] >= 0 && end[static_cast<std::size_t>(mb)] <= t;
  }

  bool can_backward(int r, int t) {
    RankState& s = at(r);
    if (s.next_b >= m_ || !done_by(s.f_end, s.next_b, t)) return false;
    return r == p_ - 1 || done_by(at(r + 1).b_end, s.next_b, t);
  }

  bool can_forward(int r, int t) {
    RankState& s = at(r);
    if (s.next_f >= m_ || s.next_f - s.next_b >= p_ - r || s.next_b - s.next_w >= p_) return false;
    return r == 0 || done_by(at(r - 1).f_end, s.next_f, t);
  }

  // Rank r, free at step t, takes one unit of work if it has any.
  bool take(int r, int t) {
    RankState& s = at(r);
    if (s.busy_until > t) return false;
    Instr in{Op::forward, -1, 0};
    if (can_backward(r, t)) {
      in = {Op::backward_input, s.next_b, 0};
      s.b_end[static_cast<std::size_t>(s.next_b++)] = t + 1;
    } else if (can_forward(r, t)) {
      in = {Op::forward, s.next_f, 0};
      s.f_end[static_cast<std::size_t>(s.next_f++)] = t + 1;
    } else if (s.next_w < s.next_b) {
      in = {Op::backward_weight, s.next_w++, 0};
    } else {
      return false;
    }
    s.busy_until = t + 1;
    order_[static_cast<std::size_t>(r)].push_back(in);
    return true;
  }

  int p_, m_;
  std::vector<RankState> ranks_;
  std::vector<std::vector<Instr>> order_;
};

Program build_zb_h1(const ScheduleSpec& s) {
  if (s.p < 1 || s.m < 1 || s.v != 1)
    throw std::invalid_argument("zb-h1 needs v = 1, p ≥ 1, m ≥ 1 (p=" + std::to_string(s.p) +
                                ", m=" + std::to_string(s.m) + ", v=" + std::to_string(s.v) + ")");
  const std::vector<Instr> order = UnitScheduler(s.p, s.m).run()[static_cast<std::size_t>(s.rank)];
  Program prog;
  for (const Instr& in : order) {
    if (in.op == Op::forward) append_forward(prog, s, in.mb, 0);
    else if (in.op == Op::backward_input) append_backward_input(prog, s, in.mb, 0);
    else prog.push_back(in);
  }
  return prog;
}

// Idle over busy time per rank: (p−1)(T_F + T_B − T_W) / (m(T_F + T_B + T_W)),
// with the paper's T_F = T_B = T_W (each pass is two GEMMs' worth per linear
// layer: the forward, the data gradient, the weight gradient): (p−1)/(3m).
double zb_h1_bubble(int p, int m, int /*v*/) { return (p - 1) / (3.0 * m); }

const ScheduleRegistration kZbH1({"zb-h1",
                                  "zero bubble H1: B and W split, Ws fill 1F1B's bubble at 1F1B's activation memory",
                                  build_zb_h1, false, zb_h1_bubble});

}  // namespace

}  // namespace ptdp
