// Causal self-attention core on BLAS, fp32 (see attention_blas.h).
// Letters: b micro-batch, s sequence, a query heads, g kv heads, d head dim
// (head_dim in the code); R query rows a block, rows [r0, r1) of one head.
// Compiled with the fast paths' flags (core/CMakeLists.txt): vector_exp's clamp
// vectorizes, and every clone rounds alike (vector_lanes.h).
#include "core/kernels/cpu/attention_blas.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/kernels/cpu/attention_head.h"
#include "core/kernels/cpu/gemm.h"
#include "core/kernels/cpu/vector_exp.h"
#include "core/kernels/cpu/vector_lanes.h"

namespace ptdp::cpu {
namespace {

// Row t of a block: p[0, len) (len = t + 1, the keys t sees) from scaled
// scores to probabilities; p[len, width) = 0 (masked, or never computed).
PTDP_VECTOR_CLONES void softmax_causal_row(float* p, std::int64_t len, std::int64_t width) {
  const float mx = lane_max(p, len);
  for (std::int64_t u = 0; u < len; ++u) p[u] = vector_exp(p[u] - mx);
  const float inv = 1.0f / lane_sum(len, [p](std::int64_t u) { return p[u]; });
  for (std::int64_t u = 0; u < len; ++u) p[u] *= inv;
  for (std::int64_t u = len; u < width; ++u) p[u] = 0;
}

// Row t of a block: dp[0, len) = dP (dO·Vᵀ) in, dS/√d = p ∘ (dP − Σ dP∘p)/√d out;
// dp[len, width) = 0.
PTDP_VECTOR_CLONES void softmax_backward_row(const float* p, float* dp, std::int64_t len, std::int64_t width,
                                             float scale) {
  const float row_sum = lane_sum(len, [p, dp](std::int64_t u) { return dp[u] * p[u]; });
  PTDP_ELEMENTWISE
  for (std::int64_t u = 0; u < len; ++u) dp[u] = p[u] * (dp[u] - row_sum) * scale;
  for (std::int64_t u = len; u < width; ++u) dp[u] = 0;
}

// One head, query rows [r0, r1): scores into probs[r0:r1, 0:r1], softmax, the
// rest of each probs row zeroed, then out[r0:r1] = P·V[0:r1].
void forward_block(const float* q, const float* kv, const AttentionHead& hv, std::int64_t s,
                   std::int64_t head_dim, std::int64_t r0, std::int64_t r1, float* out, float* probs) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  const std::int64_t n = r1 - r0;
  float* p = probs + hv.probs0 + r0 * s;  // (n, s), row stride s
  gemm<float>(false, true, n, r1, head_dim, scale, q + hv.q0 + r0 * hv.q_row, hv.q_row, kv + hv.k0, hv.kv_row,
              0.0f, p, s);
  for (std::int64_t i = 0; i < n; ++i) softmax_causal_row(p + i * s, r0 + i + 1, s);
  gemm<float>(false, false, n, head_dim, r1, 1.0f, p, s, kv + hv.v0, hv.kv_row, 0.0f,
              out + hv.out0 + r0 * hv.out_row, hv.out_row);
}

// One head, query rows [r0, r1), adding into dq, dk, dv (ds: R × r1 scratch):
// dV[0:r1] += Pᵀ·dO_blk; dP = dO_blk·V[0:r1]ᵀ; dS = P∘(dP − rowsum(dP∘P))/√d;
// dQ_blk += dS·K[0:r1]; dK[0:r1] += dSᵀ·Q_blk.
void backward_block(const float* dout, const float* q, const float* kv, const float* probs, const AttentionHead& hv,
                    std::int64_t s, std::int64_t head_dim, std::int64_t r0, std::int64_t r1, float* dq, float* dkv,
                    float* ds) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  const std::int64_t n = r1 - r0;
  const float* p = probs + hv.probs0 + r0 * s;
  const float* dout_blk = dout + hv.out0 + r0 * hv.out_row;
  const float* q_blk = q + hv.q0 + r0 * hv.q_row;
  gemm<float>(true, false, r1, head_dim, n, 1.0f, p, s, dout_blk, hv.out_row, 1.0f, dkv + hv.v0, hv.kv_row);
  gemm<float>(false, true, n, r1, head_dim, 1.0f, dout_blk, hv.out_row, kv + hv.v0, hv.kv_row, 0.0f, ds, r1);
  for (std::int64_t i = 0; i < n; ++i) softmax_backward_row(p + i * s, ds + i * r1, r0 + i + 1, r1, scale);
  gemm<float>(false, false, n, head_dim, r1, 1.0f, ds, r1, kv + hv.k0, hv.kv_row, 1.0f, dq + hv.q0 + r0 * hv.q_row,
              hv.q_row);
  gemm<float>(true, false, r1, head_dim, n, 1.0f, ds, r1, q_blk, hv.q_row, 1.0f, dkv + hv.k0, hv.kv_row);
}

}  // namespace

std::int64_t attention_row_block(std::int64_t s) {
  constexpr std::int64_t kMaxRows = 64, kMinRows = 16, kBlockFloats = (256 << 10) / sizeof(float);
  return std::clamp(kBlockFloats / std::max<std::int64_t>(s, 1), kMinRows, kMaxRows);
}

void attention_forward_blas(const float* q, const float* kv, std::int64_t b, std::int64_t s, std::int64_t a,
                            std::int64_t g, std::int64_t head_dim, float* out, float* probs) {
  const std::int64_t rows = attention_row_block(s);
  for (std::int64_t ib = 0; ib < b; ++ib)
    for (std::int64_t ih = 0; ih < a; ++ih) {
      const AttentionHead hv = attention_head(ib, ih, s, a, g, head_dim);
      for (std::int64_t r0 = 0; r0 < s; r0 += rows)
        forward_block(q, kv, hv, s, head_dim, r0, std::min(s, r0 + rows), out, probs);
    }
}

void attention_backward_blas(const float* dout, const float* q, const float* kv, const float* probs,
                             std::int64_t b, std::int64_t s, std::int64_t a, std::int64_t g,
                             std::int64_t head_dim, float* dq, float* dkv) {
  std::fill(dq, dq + b * s * a * head_dim, 0.0f);
  std::fill(dkv, dkv + b * s * g * 2 * head_dim, 0.0f);
  const std::int64_t rows = attention_row_block(s);
  std::vector<float> ds(static_cast<std::size_t>(rows * s));
  for (std::int64_t ib = 0; ib < b; ++ib)
    for (std::int64_t ih = 0; ih < a; ++ih) {
      const AttentionHead hv = attention_head(ib, ih, s, a, g, head_dim);
      for (std::int64_t r0 = 0; r0 < s; r0 += rows)
        backward_block(dout, q, kv, probs, hv, s, head_dim, r0, std::min(s, r0 + rows), dq, dkv, ds.data());
    }
}

}  // namespace ptdp::cpu
