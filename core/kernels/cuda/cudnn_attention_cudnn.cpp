// cuDNN SDPA through the frontend's graph API (see cudnn_attention.h): one
// forward and one backward graph per key, built once, cached with its
// workspace size. Tensors are (b, heads, s, d) views given by strides: q (and
// out) of (b, s, a, d), k and v at offsets 0 and d of each (b, s, g, 2, d) row
// of kv, so nothing is copied. Letters: b micro-batch, s sequence, a query
// heads and g key/value heads on this rank, d head dim.
// The frontend's JSON serialization is unused: keep its bundled nlohmann/json
// out of this translation unit (ptdp links its own).
#define CUDNN_FRONTEND_SKIP_JSON_LIB
#include <cudnn_frontend.h>

#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/kernels/cuda/cuda_check.h"
#include "core/kernels/cuda/cudnn_attention.h"

namespace ptdp::cuda {

namespace fe = cudnn_frontend;
using TensorPtr = std::shared_ptr<fe::graph::Tensor_attributes>;

namespace {

// Variant-pack ids of the graphs' tensors.
enum Uid : std::int64_t { kQ = 1, kK, kV, kO, kStats, kDO, kDQ, kDK, kDV };

struct Built {
  std::shared_ptr<fe::graph::Graph> graph;
  std::int64_t workspace = 0;  // bytes
};

// Dims and strides (elements) of the (b, a, s, d) and (b, g, s, d) views.
std::vector<std::int64_t> dims(const SdpaKey& k) { return {k.b, k.a, k.s, k.head_dim}; }
std::vector<std::int64_t> kv_dims(const SdpaKey& k) { return {k.b, k.g, k.s, k.head_dim}; }
std::vector<std::int64_t> kv_strides(const SdpaKey& k) {  // k or v in kv, dkv (b, s, g, 2, d)
  return {k.s * k.g * 2 * k.head_dim, 2 * k.head_dim, k.g * 2 * k.head_dim, 1};
}
std::vector<std::int64_t> out_strides(const SdpaKey& k) {  // (b, s, a, d)
  return {k.s * k.a * k.head_dim, k.head_dim, k.a * k.head_dim, 1};
}
std::vector<std::int64_t> stats_dims(const SdpaKey& k) { return {k.b, k.a, k.s, 1}; }
std::vector<std::int64_t> stats_strides(const SdpaKey& k) { return {k.a * k.s, k.s, 1, 1}; }  // (b, a, s) fp32

float attn_scale(const SdpaKey& k) { return 1.0f / std::sqrt(static_cast<float>(k.head_dim)); }

// cuDNN's fused attention takes head dims that are multiples of 8 up to 256.
void check_key(const SdpaKey& k) {
  if (k.type != DType::bf16 && k.type != DType::f16)
    throw std::invalid_argument("cuDNN attention computes in bf16 or fp16, not " + dtype_name(k.type));
  if (k.head_dim % 8 != 0 || k.head_dim > 256)
    throw std::invalid_argument("cuDNN attention needs a head dim (hidden / heads) that is a multiple of 8 and at "
                                "most 256, not " + std::to_string(k.head_dim));
  if (k.b < 1 || k.s < 1 || k.a < 1 || k.g < 1) throw std::invalid_argument("cuDNN attention: empty shape");
  if (k.a % k.g != 0)
    throw std::invalid_argument("cuDNN attention: the kv heads (" + std::to_string(k.g) + ") do not divide the query "
                                "heads (" + std::to_string(k.a) + ")");
}

// sm > 0: build for that compute capability instead of asking the device.
std::shared_ptr<fe::graph::Graph> new_graph(const SdpaKey& k, int sm) {
  auto g = std::make_shared<fe::graph::Graph>();
  if (sm > 0) g->set_sm_version(sm);
  g->set_io_data_type(k.type == DType::f16 ? fe::DataType_t::HALF : fe::DataType_t::BFLOAT16)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  return g;
}

TensorPtr input(fe::graph::Graph& g, const char* name, std::int64_t uid, std::vector<std::int64_t> dim,
                std::vector<std::int64_t> stride) {
  return g.tensor(fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim(dim).set_stride(stride));
}

void mark_output(const TensorPtr& t, std::int64_t uid, std::vector<std::int64_t> dim, std::vector<std::int64_t> stride) {
  t->set_output(true).set_uid(uid).set_dim(dim).set_stride(stride);
}

// q (b, a, s, d) of q; k, v (b, g, s, d) inside kv.
std::array<TensorPtr, 3> qkv_inputs(fe::graph::Graph& g, const SdpaKey& k) {
  return {input(g, "q", kQ, dims(k), out_strides(k)), input(g, "k", kK, kv_dims(k), kv_strides(k)),
          input(g, "v", kV, kv_dims(k), kv_strides(k))};
}

// out, stats = SDPA(q, k, v), causal, scale 1/sqrt(d).
std::shared_ptr<fe::graph::Graph> forward_graph(const SdpaKey& k, int sm = 0) {
  auto g = new_graph(k, sm);
  const auto [q, kk, v] = qkv_inputs(*g, k);
  auto options = fe::graph::SDPA_attributes()
                     .set_name("ptdp_attention_forward")
                     .set_generate_stats(true)
                     .set_causal_mask(true)
                     .set_attn_scale(attn_scale(k));
  auto [o, stats] = g->sdpa(q, kk, v, options);
  mark_output(o, kO, dims(k), out_strides(k));
  mark_output(stats, kStats, stats_dims(k), stats_strides(k));
  stats->set_data_type(fe::DataType_t::FLOAT);
  return g;
}

// dq, dk, dv from q, k, v, o, do and the forward's stats.
std::shared_ptr<fe::graph::Graph> backward_graph(const SdpaKey& k, int sm = 0) {
  auto g = new_graph(k, sm);
  const auto [q, kk, v] = qkv_inputs(*g, k);
  auto o = input(*g, "o", kO, dims(k), out_strides(k));
  auto d_o = input(*g, "do", kDO, dims(k), out_strides(k));
  auto stats = input(*g, "stats", kStats, stats_dims(k), stats_strides(k));
  stats->set_data_type(fe::DataType_t::FLOAT);
  auto options = fe::graph::SDPA_backward_attributes()
                     .set_name("ptdp_attention_backward")
                     .set_causal_mask(true)
                     .set_attn_scale(attn_scale(k))
                     .set_deterministic_algorithm(k.deterministic);
  auto [dq, dk, dv] = g->sdpa_backward(q, kk, v, o, d_o, stats, options);
  mark_output(dq, kDQ, dims(k), out_strides(k));
  mark_output(dk, kDK, kv_dims(k), kv_strides(k));
  mark_output(dv, kDV, kv_dims(k), kv_strides(k));
  return g;
}

// Lowers, picks an engine by cuDNN's heuristics (fallback list second), builds its plan.
Built finish(std::shared_ptr<fe::graph::Graph> g, cudnnHandle_t handle) {
  PTDP_CUDNN_FE_CHECK(g->validate());
  PTDP_CUDNN_FE_CHECK(g->build_operation_graph(handle));
  PTDP_CUDNN_FE_CHECK(g->create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}));
  PTDP_CUDNN_FE_CHECK(g->check_support());
  PTDP_CUDNN_FE_CHECK(g->build_plans());
  Built b{std::move(g), 0};
  PTDP_CUDNN_FE_CHECK(b.graph->get_workspace_size(b.workspace));
  return b;
}

// q, k, v (or dq, dk, dv): q itself, k and v at 0 and d elements of 2 bytes into each kv row.
void add_qkv(std::unordered_map<std::int64_t, void*>& pack, const SdpaKey& k, const void* q, const void* kv,
             Uid first) {
  pack[first] = const_cast<void*>(q);
  for (int c = 0; c < 2; ++c) pack[first + 1 + c] = static_cast<char*>(const_cast<void*>(kv)) + c * k.head_dim * 2;
}

}  // namespace

struct CudnnAttention::Impl {
  cudnnHandle_t handle = nullptr;
  std::map<SdpaKey, Built> forward, backward;
  int built = 0;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    forward.clear();
    backward.clear();
    if (handle != nullptr) cudnnDestroy(handle);  // unchecked: a destructor does not throw
  }

  Built& get(const SdpaKey& key, bool is_backward) {
    auto& cache = is_backward ? backward : forward;
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    check_key(key);
    Built b = finish(is_backward ? backward_graph(key) : forward_graph(key), handle);
    ++built;
    return cache.emplace(key, std::move(b)).first->second;
  }

  void execute(const Built& b, std::unordered_map<std::int64_t, void*>& pack, void* workspace) {
    if (b.workspace > 0 && workspace == nullptr) throw std::invalid_argument("cuDNN attention: workspace missing");
    PTDP_CUDNN_FE_CHECK(b.graph->execute(handle, pack, workspace));
  }
};

CudnnAttention::CudnnAttention(cudaStream_t stream) : impl_(std::make_unique<Impl>()) {
  PTDP_CUDNN_CHECK(cudnnCreate(&impl_->handle));
  PTDP_CUDNN_CHECK(cudnnSetStream(impl_->handle, stream));
}

CudnnAttention::~CudnnAttention() = default;

std::int64_t CudnnAttention::forward_workspace_bytes(const SdpaKey& key) { return impl_->get(key, false).workspace; }
std::int64_t CudnnAttention::backward_workspace_bytes(const SdpaKey& key) { return impl_->get(key, true).workspace; }
int CudnnAttention::graphs_built() const { return impl_->built; }

void CudnnAttention::forward(const SdpaKey& key, const void* q, const void* kv, void* out, float* stats,
                             void* workspace) {
  const Built& b = impl_->get(key, false);
  std::unordered_map<std::int64_t, void*> pack{{kO, out}, {kStats, stats}};
  add_qkv(pack, key, q, kv, kQ);
  impl_->execute(b, pack, workspace);
}

void CudnnAttention::backward(const SdpaKey& key, const void* q, const void* kv, const void* out, const void* dout,
                              const float* stats, void* dq, void* dkv, void* workspace) {
  const Built& b = impl_->get(key, true);
  std::unordered_map<std::int64_t, void*> pack{
      {kO, const_cast<void*>(out)}, {kDO, const_cast<void*>(dout)}, {kStats, const_cast<float*>(stats)}};
  add_qkv(pack, key, q, kv, kQ);
  add_qkv(pack, key, dq, dkv, kDQ);
  impl_->execute(b, pack, workspace);
}

std::string sdpa_graphs_invalid(const SdpaKey& key, int sm) {
  check_key(key);
  for (const auto& g : {forward_graph(key, sm), backward_graph(key, sm)}) {
    auto status = g->validate();
    if (!status.is_good()) return status.err_msg;
  }
  return "";
}

std::shared_ptr<CudnnAttention> make_cudnn_attention(cudaStream_t stream) {
  return std::make_shared<CudnnAttention>(stream);
}

}  // namespace ptdp::cuda
