// The device mode of the in-process communicator (CUDA builds only): ranks are
// threads of one process sharing one GPU, buffers are device memory. A send
// stages its payload on the sender's compute stream; the matching receive
// orders the receiver's stream after it (an event, no host wait on the GPU)
// and copies on the receiver's stream. Lets a test run a pipeline's ranks on
// one GPU, each with its own CudaOps, through the same Trainer as a real run.
#pragma once
#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "core/comm/in_process_communicator.h"

namespace ptdp {

// As make_in_process_world, but point-to-point and collectives take device
// buffers. Each rank registers its compute stream (set_in_process_stream)
// before it communicates or splits; sub-communicators inherit it.
std::vector<std::unique_ptr<Communicator>> make_in_process_device_world(int size, double timeout_s,
                                                                        InProcessLog* log = nullptr);

// Rank `comm`'s compute stream: its sends stage on it, its receives and
// collectives are ordered on it. Throws std::logic_error when `comm` is not a
// device-mode in-process communicator.
void set_in_process_stream(Communicator& comm, cudaStream_t stream);

}  // namespace ptdp
