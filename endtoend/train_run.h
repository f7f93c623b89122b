// The body of `ptdp train` once every input has been accepted: build the
// backend, train, gather per-rank figures to rank 0 and write the result.
#pragma once
#include <optional>
#include <string>

#include "core/comm/communicator.h"
#include "core/config/config.h"
#include "core/config/hardware.h"
#include "core/model/full_params.h"
#include "core/runtime/fault_spec.h"
#include "core/topology/process_place.h"

namespace ptdp::cli {

struct TrainArgs {
  std::string config;
  int iterations = 10;
  int warmup = 1;
  Device device = Device::cpu;
  std::string out;
  std::string data;
  std::string trace;
  double comm_timeout_s = 60;
  std::string fault;  // testing aid (core/runtime/fault_spec.h): "KIND:RANK:ITERATION" or "slow:RANK:FACTOR"
  bool allow_oversubscribe_memory = false;  // run a plan the memory model says cannot fit the device
  std::string save;     // checkpoint directory (docs/checkpoint-format.md); empty: no saves
  int save_every = 0;   // iterations between saves (0: at the end only)
  int keep = 0;         // checkpoints kept in `save` (0: all)
  bool overwrite = false;  // --save may replace another run's checkpoints
  std::string load;     // checkpoint to continue from (a save directory or one iter_* folder)
  std::string init_hf;    // start from the Hugging Face GPT-2 in this folder (core/checkpoint/hf_gpt2.h)
  std::string export_hf;  // write the trained weights as a Hugging Face GPT-2 to this folder
};

// The fault --fault asks for in a job of `ranks` ranks (core/runtime/fault_spec.h),
// or none when it asks for none. Throws FaultRefused naming the part.
std::optional<Fault> fault_of(const TrainArgs& args, int ranks);

// Trains on `world`'s ranks, this one at `here`, from `initial` when given (full
// weights, each rank takes its shard); rank 0 prints progress and writes the files.
// `mpi_version` and `hardware` (what was found, how the profile was chosen)
// are recorded in the result. Returns the exit status.
int train_and_report(const Config& cfg, const TrainArgs& args, Communicator& world, const ProcessPlace& here,
                     const std::string& mpi_version, const Hardware& hardware, const FullParams* initial = nullptr);

}  // namespace ptdp::cli
