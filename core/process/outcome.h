// How a step ended: the one outcome vocabulary of sweep points, `ptdp accept`'s
// steps and the GPU campaign's (scripts/campaign/outcome.py spells the same
// names; tests/driver/check_campaign_runner.py holds the two equal), and the
// exit statuses ptdp's programs end with, from which a step's outcome is read.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace ptdp {

// What every step runner records:
//   ok       exit 0 and its result file read;
//   failed   any other exit status, a signal, or a result file that is refused;
//   timeout  ended at its time limit;
//   oom      out of memory (exit kExitOutOfMemory);
//   skipped  not run, with the reason (cannot run here, out of time);
//   refused  its input refused (exit kExitRefused, or before it started).
// A sweep point's record has two more verdicts of its own:
//   does_not_fit  projected, but the plan exceeds the device's memory;
//   missing       an emitted Slurm job that has not reported yet.
enum class Outcome : std::uint8_t { ok, failed, timeout, oom, skipped, refused, does_not_fit, missing };

// Each outcome's name, in the enum's order: results files, reports and the
// campaign's status.tsv spell outcomes by these words and no others.
inline constexpr std::array<std::string_view, 8> kOutcomeNames = {"ok",      "failed",  "timeout",      "oom",
                                                                  "skipped", "refused", "does_not_fit", "missing"};
static_assert(kOutcomeNames.size() == static_cast<std::size_t>(Outcome::missing) + 1, "a name for every outcome");

std::string to_string(Outcome o);
// The outcome named `text`; failed for a word that names none (a child that
// wrote nonsense failed).
Outcome outcome_from_string(std::string_view text);
// Whether a run with this outcome failed: failed, timeout or oom (a refusal,
// a skipped step, a plan that does not fit or a missing job is not a failure).
bool is_failure(Outcome o);

// Exit statuses of ptdp's programs (`ptdp` and the benchmark programs).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitRefused = 2;
// Not 3: MPI_Abort in MpiCommunicator::abort ends the job with 3.
inline constexpr int kExitOutOfMemory = 4;

// The outcome an exit status means (0 ok, kExitRefused refused,
// kExitOutOfMemory oom, anything else failed); `code` 128 + N is signal N.
Outcome outcome_of_exit(int code);

}  // namespace ptdp
