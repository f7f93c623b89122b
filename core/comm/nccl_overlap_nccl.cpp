// NcclCommunicator's overlapped all-reduce: the data-parallel gradient buckets
// run on a stream of their own while the backward goes on on the compute stream.
#include <stdexcept>
#include <string>

#include "core/comm/nccl_communicator.h"
#include "core/comm/nccl_detail.h"
#include "core/kernels/cuda/cuda_query.h"

namespace ptdp {

using nccl_detail::nccl_count;
using nccl_detail::nccl_op;
using nccl_detail::nccl_type;
using nccl_detail::payload;

// An all-reduce on the reduce stream: an event recorded after it. wait() orders
// the compute stream after the event without blocking the host; a request
// destroyed unwaited does the same, so the buffer is never used too early.
class NcclReduceRequest final : public Request {
 public:
  NcclReduceRequest(NcclCommunicator& owner, cudaStream_t reduce_stream) : owner_(owner) {
    PTDP_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
    PTDP_CUDA_CHECK(cudaEventRecord(done_, reduce_stream));
  }
  ~NcclReduceRequest() override {
    if (!waited_) cudaStreamWaitEvent(owner_.compute_, done_, 0);
    cudaEventDestroy(done_);
  }
  NcclReduceRequest(const NcclReduceRequest&) = delete;
  NcclReduceRequest& operator=(const NcclReduceRequest&) = delete;
  void wait() override {
    if (waited_) return;
    PTDP_CUDA_CHECK(cudaStreamWaitEvent(owner_.compute_, done_, 0));
    waited_ = true;
  }
  bool test() override {
    const QueryResult q = cuda::read_event(done_);  // clears "not ready" from the error slot
    if (q.state == QueryState::ready) return true;
    if (q.state == QueryState::failed) PTDP_CUDA_CHECK(q.error);
    owner_.check_async({owner_.comm_}, "overlapped all-reduce");
    return false;
  }

 private:
  NcclCommunicator& owner_;
  cudaEvent_t done_ = nullptr;
  bool waited_ = false;
};

NcclCommunicator::ReduceStream::~ReduceStream() {
  if (ready != nullptr) cudaEventDestroy(ready);
  if (stream != nullptr) cudaStreamDestroy(stream);  // released once its queued work is done
}

bool NcclCommunicator::enter_reduce_stream(std::int64_t count, DType type) {
  if (count < 0) throw std::invalid_argument("NCCL communicator: negative count " + std::to_string(count));
  if (reduce_.stream == nullptr) {
    PTDP_CUDA_CHECK(cudaSetDevice(device_));
    PTDP_CUDA_CHECK(cudaStreamCreateWithFlags(&reduce_.stream, cudaStreamNonBlocking));
    PTDP_CUDA_CHECK(cudaEventCreateWithFlags(&reduce_.ready, cudaEventDisableTiming));
  }
  PTDP_CUDA_CHECK(cudaEventRecord(reduce_.ready, compute_));  // the kernels that wrote the buffers
  PTDP_CUDA_CHECK(cudaStreamWaitEvent(reduce_.stream, reduce_.ready, 0));
  return type == DType::f32 || type == DType::f64;  // gradients are fp32: others take the ordered path
}

std::unique_ptr<Request> NcclCommunicator::reduce_scatter_overlapped(const void* send, void* recv, std::int64_t count,
                                                                     DType type, ReduceOp op) {
  if (!enter_reduce_stream(count, type)) {
    reduce_scatter(send, recv, count, type, op);
    return std::make_unique<CompletedRequest>();
  }
  PTDP_NCCL_CHECK(ncclReduceScatter(send, recv, nccl_count(count), nccl_type(type), nccl_op(op), comm_, reduce_.stream));
  this->count(payload(count, type) * size_);
  return std::make_unique<NcclReduceRequest>(*this, reduce_.stream);
}

std::unique_ptr<Request> NcclCommunicator::all_gather_overlapped(const void* send, void* recv, std::int64_t count,
                                                                 DType type) {
  if (!enter_reduce_stream(count, type)) {
    all_gather(send, recv, count, type);
    return std::make_unique<CompletedRequest>();
  }
  PTDP_NCCL_CHECK(ncclAllGather(send, recv, nccl_count(count), nccl_type(type), comm_, reduce_.stream));
  this->count(payload(count, type));
  return std::make_unique<NcclReduceRequest>(*this, reduce_.stream);
}

std::unique_ptr<Request> NcclCommunicator::all_reduce_overlapped(void* buf, std::int64_t count, DType type,
                                                                 ReduceOp op) {
  if (!enter_reduce_stream(count, type)) {
    all_reduce(buf, count, type, op);
    return std::make_unique<CompletedRequest>();
  }
  PTDP_NCCL_CHECK(ncclAllReduce(buf, buf, static_cast<std::size_t>(count), type == DType::f32 ? ncclFloat32 : ncclFloat64,
                                op == ReduceOp::sum ? ncclSum : ncclMax, comm_, reduce_.stream));
  this->count(count * static_cast<std::int64_t>(dtype_size(type)));
  return std::make_unique<NcclReduceRequest>(*this, reduce_.stream);
}

}  // namespace ptdp
