// Zero-bubble pipeline schedules ZB-H1 and ZB-H2 (Qi et al., "Zero Bubble
// Pipeline Parallelism", ICLR 2024, §3.1). The backward is split into B (input
// gradient, on the critical path between stages) and W (weight gradient, which
// no other stage waits for), and Ws are moved into what would be idle time.
//
// The paper's bubble with per-pass times T_F, T_B, T_W (B and W halves of the
// backward), per pipeline rank, and the micro-batches between F and B on rank r:
//   1F1B (B and W fused into one backward):  (p−1)·(T_F + T_B + T_W)   p−r
//   ZB-H1:                                   (p−1)·(T_F + T_B − T_W)   p−r
//   ZB-H2:                                   (p−1)·(T_F + T_B − 2T_W)  2(p−r)−1
// ZB-H1 has 1F1B's peak activation memory; ZB-H2 buys its bubble with up to
// 2p−1 micro-batches in flight on rank 0 (what W keeps is only each linear
// layer's input and output gradient, counted apart by the memory model).
//
// The lists are generated, not hand-written: a list scheduler on a unit time
// grid (T_F = T_B = T_W = 1, zero transfer time) runs all p ranks and at each
// step lets each idle rank take, in order of preference,
//   1. B of its oldest micro-batch whose output gradient has arrived,
//   2. F of its next micro-batch if it has arrived and fewer than the bound
//      above are between F and B, unless the W cap is reached (p pending Ws
//      for H1, 2p−1 for H2: caps the W buffers per rank),
//   3. W of its oldest pending B.
// The order each rank ran is its list. H2 differs from H1 only in the two
// bounds: rank r's first B arrives 2(p−1−r) steps after its first F ends,
// and the p−1−r extra warm-up Fs fill that wait (H1 idles there), so each
// rank runs without a gap from its first F to its last W: the paper's
// parallelogram.
//
// What that buys depends on how iterations meet. ptdp ends each iteration
// with a step every rank takes together (the global gradient norm), so rank
// p−1 idles (p−1)·T_F before its first F and rank 0 about as long after its
// last pass, whatever the schedule: synchronised, ZB-H2 idles about
// (p−1)·max(T_F, T_F + T_B − 2T_W) per rank. Under unit costs the ramp
// binds: ZB-H1 and ZB-H2 both idle exactly p−1 steps a rank, a bubble of
// (p−1)/(3m) for m ≥ p (the analytical bubble below). With ptdp's costs
// (T_B above 2T_W) the paper's term binds and ZB-H2 ends (p−1)·T_W before
// ZB-H1 (tests/unit/test_zero_bubble_costs.cpp). The paper's zero is the
// steady state when the step does not synchronise (its post-validation,
// which ptdp does not do): iteration k+1 on rank r starts when rank r ends
// iteration k, and the period is the longest rank's span from its first pass
// to its last. Under unit costs that span holds p−1 idle steps for ZB-H1
// (rank 0) and none for ZB-H2 once m ≥ 2p−1.
// tests/unit/test_zero_bubble.cpp checks, for p ≤ 8 and m ≤ 16: every list
// passes the checker; the synchronised unit-cost bubble is (p−1)/(3m) for both
// (m ≥ p); each rank's in-span idle is 0 for ZB-H2 (m ≥ 2p−1) while ZB-H1's
// longest span holds p−1; ZB-H2 keeps min(m, 2(p−r)−1) micro-batches in
// flight and at most 2p−1 pending Ws on rank r. Only v = 1: interleaving is
// refused by validation (plan.virtual_stages).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/schedule/registry.h"

namespace ptdp {

namespace {

// How far ahead of its Bs a rank may run: `fill` = 0 for ZB-H1, 1 for ZB-H2.
// Rank r may hold p−r + fill·(p−1−r) micro-batches between F and B, and
// p + fill·(p−1) pending Ws.
struct Bounds {
  int p, fill;
  int in_flight(int r) const { return p - r + fill * (p - 1 - r); }
  int pending_w() const { return p + fill * (p - 1); }
};

// One rank's progress in the unit-time list scheduler.
struct RankState {
  int next_f = 0, next_b = 0, next_w = 0;  // the next micro-batch of each kind
  int busy_until = 0;                       // the step the rank is free again
  std::vector<int> f_end, b_end;            // [mb] step its F / B ended, −1: not yet
};

class UnitScheduler {
 public:
  UnitScheduler(int p, int m, int fill) : p_(p), m_(m), bounds_{p, fill}, ranks_(static_cast<std::size_t>(p)), order_(static_cast<std::size_t>(p)) {
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
    if (s.next_f >= m_ || s.next_f - s.next_b >= bounds_.in_flight(r) || s.next_b - s.next_w >= bounds_.pending_w()) return false;
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
  Bounds bounds_;
  std::vector<RankState> ranks_;
  std::vector<std::vector<Instr>> order_;
};

// The pipeline phase of rank s.rank for fill 0 (ZB-H1) or 1 (ZB-H2).
Program build_zero_bubble(const ScheduleSpec& s, int fill, const char* name) {
  if (s.p < 1 || s.m < 1 || s.v != 1)
    throw std::invalid_argument(std::string(name) + " needs v = 1, p ≥ 1, m ≥ 1 (p=" + std::to_string(s.p) +
                                ", m=" + std::to_string(s.m) + ", v=" + std::to_string(s.v) + ")");
  const std::vector<Instr> order = UnitScheduler(s.p, s.m, fill).run()[static_cast<std::size_t>(s.rank)];
  Program prog;
  for (const Instr& in : order) {
    if (in.op == Op::forward) append_forward(prog, s, in.mb, 0);
    else if (in.op == Op::backward_input) append_backward_input(prog, s, in.mb, 0);
    else prog.push_back(in);
  }
  return prog;
}

// Idle over busy time per rank, synchronised at the step, under the paper's
// T_F = T_B = T_W (each pass is two GEMMs' worth per linear layer: the
// forward, the data gradient, the weight gradient): p−1 idle over 3m busy,
// for ZB-H1 and ZB-H2 alike (see the header).
double zero_bubble_bubble(int p, int m, int /*v*/) { return (p - 1) / (3.0 * m); }

const ScheduleRegistration kZbH1({"zb-h1",
                                  "zero bubble H1: B and W split, Ws fill 1F1B's bubble at 1F1B's activation memory",
                                  [](const ScheduleSpec& s) { return build_zero_bubble(s, 0, "zb-h1"); }, false,
                                  zero_bubble_bubble});
const ScheduleRegistration kZbH2({"zb-h2",
                                  "zero bubble H2: ZB-H1 with p−1−r more warm-up forwards on rank r (up to 2p−1 "
                                  "micro-batches in flight): no gap from a rank's first pass to its last",
                                  [](const ScheduleSpec& s) { return build_zero_bubble(s, 1, "zb-h2"); }, false,
                                  zero_bubble_bubble});

}  // namespace

}  // namespace ptdp
