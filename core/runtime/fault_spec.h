// `ptdp train --fault`, a testing aid: one rank fails in a chosen way at a
// chosen iteration, to check that the job ends (and how) instead of hanging;
// or one rank is made slower, a planted straggler. Spelled KIND:RANK:ITERATION
// (KIND kill, hang, oom, alloc or nan) or slow:RANK:FACTOR. Every part is
// checked against the job it is for, so no spec names a rank or iteration that
// never comes, wraps around, or makes the run last for ever.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ptdp {

// The largest slowdown `slow` takes: a straggler the summary must find, not a hang.
inline constexpr double kMaxFaultSlowdown = 100;

struct Fault {
  // kill: SIGKILL; hang: stop answering (the other ranks' --comm-timeout ends the job);
  // oom: throw OutOfMemory (the tensor allocator's); alloc: throw std::bad_alloc (any other allocation);
  // nan: the iteration's loss reads NaN on every rank (the loss is all-reduced, so RANK plays no part);
  // slow: RANK's forwards and backwards take `factor` times as long, every iteration (a planted straggler)
  enum class Kind : std::uint8_t { kill, hang, oom, alloc, nan, slow } kind = Kind::hang;
  int rank = 0;       // in [0, ranks)
  int iteration = 0;  // in [0, iterations), counted from 0; not slow
  double factor = 1;  // slow only: in (1, kMaxFaultSlowdown]
};

// A spec that is not one of the forms above or does not fit the job; what()
// names the part ("the rank "5" is not an integer from 0 to 1 (the job's 2 ranks)").
struct FaultRefused : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// `text` as the fault of a job of `ranks` ranks running `iterations`
// iterations. `hang` needs a second rank, whose --comm-timeout ends the job:
// a single rank that stops answering would never end. Throws FaultRefused.
Fault parse_fault(const std::string& text, int ranks, int iterations);

// "kill", "hang", ...: the kind as the spec spells it.
const char* fault_kind_name(Fault::Kind kind);

}  // namespace ptdp
