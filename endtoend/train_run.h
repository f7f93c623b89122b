// The body of `ptdp train` once every input has been accepted: build the
// backend, train, gather per-rank figures to rank 0 and write the result.
#pragma once
#include <string>

#include "core/comm/communicator.h"
#include "core/config/config.h"

namespace ptdp::cli {

struct TrainArgs {
  std::string config;
  int iterations = 10;
  int warmup = 1;
  std::string device = "cpu";
  std::string out;
  std::string data;
  std::string trace;
};

// Trains on `world`'s ranks; rank 0 prints progress and writes the files. Returns the exit status.
int train_and_report(const Config& cfg, const TrainArgs& args, Communicator& world);

}  // namespace ptdp::cli
