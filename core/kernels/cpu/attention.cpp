// Causal self-attention core, fp32 reference (see attention.h).
// Letters: b micro-batch, s sequence, a query heads, g kv heads, d head dim
// (head_dim in the code).
// Layouts and the view of one (batch, query head): attention_head.h.
#include "core/kernels/cpu/attention.h"

#include "core/kernels/cpu/attention_head.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ptdp::cpu {
namespace {

template <class T>
T dot(const T* x, const T* y, std::int64_t n) {
  T acc = 0;
  for (std::int64_t e = 0; e < n; ++e) acc += x[e] * y[e];
  return acc;
}

// One query row t: p[0..t] = softmax(q_t·k_u / sqrt(d)), p[t+1..s) = 0; o = Σ_u p[u] v_u.
template <class T>
void forward_row(const T* q, const T* kv, const AttentionHead& hv, std::int64_t s, std::int64_t head_dim, std::int64_t t, T* p,
                 T* o) {
  const T scale = T(1) / std::sqrt(static_cast<T>(head_dim));
  const T* qt = q + hv.q0 + t * hv.q_row;
  T mx = -INFINITY;
  for (std::int64_t u = 0; u <= t; ++u) {
    p[u] = dot(qt, kv + hv.k0 + u * hv.kv_row, head_dim) * scale;
    mx = std::max(mx, p[u]);
  }
  T sum = 0;
  for (std::int64_t u = 0; u <= t; ++u) {
    p[u] = std::exp(p[u] - mx);
    sum += p[u];
  }
  for (std::int64_t u = 0; u <= t; ++u) p[u] /= sum;
  for (std::int64_t u = t + 1; u < s; ++u) p[u] = 0;
  for (std::int64_t e = 0; e < head_dim; ++e) o[e] = 0;
  for (std::int64_t u = 0; u <= t; ++u) {
    const T* v = kv + hv.v0 + u * hv.kv_row;
    for (std::int64_t e = 0; e < head_dim; ++e) o[e] += p[u] * v[e];
  }
}

// One (batch, query head): dV = Pᵀ dO; dP = dO Vᵀ; dS = P ∘ (dP − rowsum(dP ∘ P));
// dQ = dS K / sqrt(d); dK = dSᵀ Q / sqrt(d). Adds into dq, dkv (zeroed by the caller).
template <class T>
void backward_head(const T* dout, const T* q, const T* kv, const T* probs, const AttentionHead& hv, std::int64_t s,
                   std::int64_t head_dim, T* dq, T* dkv, std::vector<T>& ds) {
  const T scale = T(1) / std::sqrt(static_cast<T>(head_dim));
  for (std::int64_t t = 0; t < s; ++t) {
    const T* p = probs + hv.probs0 + t * s;
    const T* dout_t = dout + hv.out0 + t * hv.out_row;
    T row_sum = 0;
    for (std::int64_t u = 0; u <= t; ++u) {
      const std::int64_t vu = hv.v0 + u * hv.kv_row;
      for (std::int64_t e = 0; e < head_dim; ++e) dkv[vu + e] += p[u] * dout_t[e];  // dV
      ds[u] = dot(dout_t, kv + vu, head_dim);                                      // dP
      row_sum += ds[u] * p[u];
    }
    const std::int64_t qt = hv.q0 + t * hv.q_row;
    for (std::int64_t u = 0; u <= t; ++u) {
      const T gs = p[u] * (ds[u] - row_sum) * scale;  // dS[t, u] / sqrt(d)
      const std::int64_t ku = hv.k0 + u * hv.kv_row;
      for (std::int64_t e = 0; e < head_dim; ++e) {
        dq[qt + e] += gs * kv[ku + e];  // dQ[t] += dS[t,u] K[u]
        dkv[ku + e] += gs * q[qt + e];  // dK[u] += dS[t,u] Q[t]
      }
    }
  }
}

}  // namespace

template <class T>
void attention_forward(const T* q, const T* kv, std::int64_t b, std::int64_t s, std::int64_t a, std::int64_t g,
                       std::int64_t head_dim, T* out, T* probs) {
  for (std::int64_t ib = 0; ib < b; ++ib)
    for (std::int64_t ih = 0; ih < a; ++ih) {
      const AttentionHead hv = attention_head(ib, ih, s, a, g, head_dim);
      for (std::int64_t t = 0; t < s; ++t)
        forward_row(q, kv, hv, s, head_dim, t, probs + hv.probs0 + t * s, out + hv.out0 + t * hv.out_row);
    }
}

template <class T>
void attention_backward(const T* dout, const T* q, const T* kv, const T* probs, std::int64_t b, std::int64_t s,
                        std::int64_t a, std::int64_t g, std::int64_t head_dim, T* dq, T* dkv) {
  std::fill(dq, dq + b * s * a * head_dim, T(0));
  std::fill(dkv, dkv + b * s * g * 2 * head_dim, T(0));
  std::vector<T> ds(static_cast<std::size_t>(s));
  for (std::int64_t ib = 0; ib < b; ++ib)
    for (std::int64_t ih = 0; ih < a; ++ih)
      backward_head(dout, q, kv, probs, attention_head(ib, ih, s, a, g, head_dim), s, head_dim, dq, dkv, ds);
}

#define PTDP_INSTANTIATE(T)                                                                                 \
  template void attention_forward<T>(const T*, const T*, std::int64_t, std::int64_t, std::int64_t,          \
                                     std::int64_t, std::int64_t, T*, T*);                                   \
  template void attention_backward<T>(const T*, const T*, const T*, const T*, std::int64_t, std::int64_t,   \
                                      std::int64_t, std::int64_t, std::int64_t, T*, T*);
PTDP_INSTANTIATE(float)
PTDP_INSTANTIATE(double)
#undef PTDP_INSTANTIATE

}  // namespace ptdp::cpu
