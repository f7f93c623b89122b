// Causal multi-head self-attention core, fp32 reference (see attention.h).
// Letters: b micro-batch, s sequence, a heads on this rank, d head dim.
// qkv, dqkv (b, s, a, 3, d); out, dout (b, s, a, d); probs (b, a, s, s).
#include "core/kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ptdp::cpu {
namespace {

// Strides of one (batch, head) slice inside the packed layouts.
struct Head {
  std::int64_t qkv_row;             // between consecutive positions in qkv: a·3·d
  std::int64_t out_row;             // between consecutive positions in out: a·d
  std::int64_t qkv0, out0, probs0;  // offsets of position 0 for this (batch, head)
};

Head head_view(std::int64_t ib, std::int64_t ih, std::int64_t s, std::int64_t a, std::int64_t d) {
  return {a * 3 * d, a * d, (ib * s * a + ih) * 3 * d, (ib * s * a + ih) * d,
          (ib * a + ih) * s * s};
}

template <class T>
T dot(const T* x, const T* y, std::int64_t d) {
  T acc = 0;
  for (std::int64_t e = 0; e < d; ++e) acc += x[e] * y[e];
  return acc;
}

// One query row t: p[0..t] = softmax(q_t·k_u / sqrt(d)), p[t+1..s) = 0; o = Σ_u p[u] v_u.
template <class T>
void forward_row(const T* qkv, const Head& hv, std::int64_t s, std::int64_t d, std::int64_t t, T* p,
                 T* o) {
  const T scale = T(1) / std::sqrt(static_cast<T>(d));
  const T* q = qkv + hv.qkv0 + t * hv.qkv_row;
  T mx = -INFINITY;
  for (std::int64_t u = 0; u <= t; ++u) {
    p[u] = dot(q, qkv + hv.qkv0 + u * hv.qkv_row + d, d) * scale;
    mx = std::max(mx, p[u]);
  }
  T sum = 0;
  for (std::int64_t u = 0; u <= t; ++u) {
    p[u] = std::exp(p[u] - mx);
    sum += p[u];
  }
  for (std::int64_t u = 0; u <= t; ++u) p[u] /= sum;
  for (std::int64_t u = t + 1; u < s; ++u) p[u] = 0;
  for (std::int64_t e = 0; e < d; ++e) o[e] = 0;
  for (std::int64_t u = 0; u <= t; ++u) {
    const T* v = qkv + hv.qkv0 + u * hv.qkv_row + 2 * d;
    for (std::int64_t e = 0; e < d; ++e) o[e] += p[u] * v[e];
  }
}

// One (batch, head): dV = Pᵀ dO; dP = dO Vᵀ; dS = P ∘ (dP − rowsum(dP ∘ P));
// dQ = dS K / sqrt(d); dK = dSᵀ Q / sqrt(d). dq, dk, dv of this head were zeroed.
template <class T>
void backward_head(const T* dout, const T* qkv, const T* probs, const Head& hv, std::int64_t s,
                   std::int64_t d, T* dqkv, std::vector<T>& ds) {
  const T scale = T(1) / std::sqrt(static_cast<T>(d));
  for (std::int64_t t = 0; t < s; ++t) {
    const T* p = probs + hv.probs0 + t * s;
    const T* dout_t = dout + hv.out0 + t * hv.out_row;
    T row_sum = 0;
    for (std::int64_t u = 0; u <= t; ++u) {
      const std::int64_t ku = hv.qkv0 + u * hv.qkv_row;
      for (std::int64_t e = 0; e < d; ++e) dqkv[ku + 2 * d + e] += p[u] * dout_t[e];  // dV
      ds[u] = dot(dout_t, qkv + ku + 2 * d, d);                                       // dP
      row_sum += ds[u] * p[u];
    }
    const std::int64_t qt = hv.qkv0 + t * hv.qkv_row;
    for (std::int64_t u = 0; u <= t; ++u) {
      const T g = p[u] * (ds[u] - row_sum) * scale;  // dS[t, u] / sqrt(d)
      const std::int64_t ku = hv.qkv0 + u * hv.qkv_row;
      for (std::int64_t e = 0; e < d; ++e) {
        dqkv[qt + e] += g * qkv[ku + d + e];  // dQ[t] += dS[t,u] K[u]
        dqkv[ku + d + e] += g * qkv[qt + e];  // dK[u] += dS[t,u] Q[t]
      }
    }
  }
}

}  // namespace

template <class T>
void attention_forward(const T* qkv, std::int64_t b, std::int64_t s, std::int64_t a, std::int64_t d,
                       T* out, T* probs) {
  for (std::int64_t ib = 0; ib < b; ++ib) {
    for (std::int64_t ih = 0; ih < a; ++ih) {
      const Head hv = head_view(ib, ih, s, a, d);
      for (std::int64_t t = 0; t < s; ++t) {
        forward_row(qkv, hv, s, d, t, probs + hv.probs0 + t * s, out + hv.out0 + t * hv.out_row);
      }
    }
  }
}

template <class T>
void attention_backward(const T* dout, const T* qkv, const T* probs, std::int64_t b, std::int64_t s,
                        std::int64_t a, std::int64_t d, T* dqkv) {
  std::fill(dqkv, dqkv + b * s * a * 3 * d, T(0));
  std::vector<T> ds(static_cast<std::size_t>(s));
  for (std::int64_t ib = 0; ib < b; ++ib) {
    for (std::int64_t ih = 0; ih < a; ++ih) {
      backward_head(dout, qkv, probs, head_view(ib, ih, s, a, d), s, d, dqkv, ds);
    }
  }
}

#define PTDP_INSTANTIATE(T)                                                                     \
  template void attention_forward<T>(const T*, std::int64_t, std::int64_t, std::int64_t,        \
                                     std::int64_t, T*, T*);                                     \
  template void attention_backward<T>(const T*, const T*, const T*, std::int64_t, std::int64_t, \
                                      std::int64_t, std::int64_t, T*);
PTDP_INSTANTIATE(float)
PTDP_INSTANTIATE(double)
#undef PTDP_INSTANTIATE

}  // namespace ptdp::cpu
