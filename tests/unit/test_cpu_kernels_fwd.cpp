// CPU reference kernels, forward passes: each fp32 kernel against a float64
// evaluation written here independently with naive loops, on seeded random inputs.
// Letters: b batch, s sequence, a heads, d head dim, n rows, h hidden, k/m in/out features.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

#include "core/kernels/cpu/adamw.h"
#include "core/kernels/cpu/attention.h"
#include "core/kernels/cpu/cross_entropy.h"
#include "core/kernels/cpu/elementwise.h"
#include "core/kernels/cpu/embedding.h"
#include "core/kernels/cpu/layernorm.h"
#include "core/kernels/cpu/linear.h"
#include "cpu_kernels_test_util.h"

namespace ptdp::test {
namespace {

using std::int64_t;

TEST(CpuEmbedding, ForwardLooksUpShardRowsAndZeroesOthers) {
  const int64_t h = 6, vocab_start = 4, vt = 5;  // shard holds ids [4, 9)
  const std::vector<std::int32_t> tokens{4, 0, 8, 10, 5, 5, 3, 9, 6, 4};
  const auto n = static_cast<int64_t>(tokens.size());
  std::mt19937 rng(11);
  const auto wte = randn(rng, vt * h);
  std::vector<double> ref(n * h, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    if (tokens[i] < 4 || tokens[i] >= 9) continue;
    for (int64_t j = 0; j < h; ++j) ref[i * h + j] = wte[(tokens[i] - 4) * h + j];
  }
  std::vector<float> out(n * h, -7.0f);  // junk: every element must be written
  cpu::embedding_forward(tokens.data(), n, cast<float>(wte).data(), vocab_start, vt, h, out.data());
  expect_close(out, ref, kFwdF32, "embedding_forward");
}

TEST(CpuEmbedding, PositionForwardAddsRowsPerBatch) {
  const int64_t b = 2, s = 5, h = 6, rows = 7;  // wpe holds more rows than s
  std::mt19937 rng(12);
  const auto x = randn(rng, b * s * h), wpe = randn(rng, rows * h);
  std::vector<double> ref(x);
  for (int64_t ib = 0; ib < b; ++ib)
    for (int64_t t = 0; t < s; ++t)
      for (int64_t j = 0; j < h; ++j) ref[(ib * s + t) * h + j] += wpe[t * h + j];
  auto got = cast<float>(x);
  cpu::position_forward(cast<float>(wpe).data(), b, s, h, got.data());
  expect_close(got, ref, kFwdF32, "position_forward");
}

TEST(CpuLayerNorm, ForwardMatchesFloat64) {
  const int64_t n = 7, h = 8;
  const double eps = 1e-5;
  std::mt19937 rng(13);
  const auto x = randn(rng, n * h, 2.0, 1.0), gamma = randn(rng, h), beta = randn(rng, h);
  std::vector<double> ref(n * h), ref_mean(n), ref_rstd(n);
  for (int64_t i = 0; i < n; ++i) {
    double mu = 0, var = 0;
    for (int64_t j = 0; j < h; ++j) mu += x[i * h + j] / static_cast<double>(h);
    for (int64_t j = 0; j < h; ++j) var += std::pow(x[i * h + j] - mu, 2) / static_cast<double>(h);
    ref_mean[i] = mu;
    ref_rstd[i] = 1.0 / std::sqrt(var + static_cast<double>(static_cast<float>(eps)));
    for (int64_t j = 0; j < h; ++j)
      ref[i * h + j] = (x[i * h + j] - mu) * ref_rstd[i] * gamma[j] + beta[j];
  }
  std::vector<float> y(n * h), mean(n), rstd(n);
  cpu::layernorm_forward(cast<float>(x).data(), cast<float>(gamma).data(), cast<float>(beta).data(),
                         n, h, static_cast<float>(eps), y.data(), mean.data(), rstd.data());
  expect_close(y, ref, kFwdF32, "layernorm_forward y");
  expect_close(mean, ref_mean, kFwdF32, "layernorm_forward mean");
  expect_close(rstd, ref_rstd, kFwdF32, "layernorm_forward rstd");
}

// y[n, m] = x[n, k] · w[m, k]ᵀ (+ bias), naive triple loop.
std::vector<double> linear_ref(const std::vector<double>& x, const std::vector<double>& w,
                               const std::vector<double>* bias, int64_t n, int64_t k, int64_t m) {
  std::vector<double> y(n * m);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      double acc = bias ? (*bias)[j] : 0.0;
      for (int64_t e = 0; e < k; ++e) acc += x[i * k + e] * w[j * k + e];
      y[i * m + j] = acc;
    }
  }
  return y;
}

TEST(CpuLinear, ForwardMatchesFloat64WithAndWithoutBias) {
  const int64_t n = 7, k = 5, m = 6;
  std::mt19937 rng(14);
  const auto x = randn(rng, n * k), w = randn(rng, m * k), bias = randn(rng, m);
  std::vector<float> y(n * m, -7.0f);
  cpu::linear_forward(cast<float>(x).data(), cast<float>(w).data(), cast<float>(bias).data(), n, k,
                      m, y.data());
  expect_close(y, linear_ref(x, w, &bias, n, k, m), kFwdF32, "linear_forward with bias");
  std::fill(y.begin(), y.end(), -7.0f);
  cpu::linear_forward(cast<float>(x).data(), cast<float>(w).data(),
                      static_cast<const float*>(nullptr), n, k, m, y.data());
  expect_close(y, linear_ref(x, w, nullptr, n, k, m), kFwdF32, "linear_forward without bias");
}

// out (b, s, a, d), probs (b, a, s, s) from the full s×s score matrix of each (batch, head),
// masked to −inf above the diagonal, softmax by rows; q (b, s, a, d), kv (b, s, g, 2, d),
// query head ih reading kv head ih/(a/g).
void attention_ref(const std::vector<double>& q, const std::vector<double>& kv, int64_t b, int64_t s, int64_t a,
                   int64_t g, int64_t head_dim, std::vector<double>& out, std::vector<double>& probs) {
  auto qat = [&](int64_t ib, int64_t t, int64_t ih, int64_t e) { return q[((ib * s + t) * a + ih) * head_dim + e]; };
  auto kvat = [&](int64_t ib, int64_t t, int64_t ih, int64_t which, int64_t e) {
    return kv[(((ib * s + t) * g + ih / (a / g)) * 2 + which) * head_dim + e];
  };
  out.assign(b * s * a * head_dim, 0.0);
  probs.assign(b * a * s * s, 0.0);
  std::vector<double> sc(s * s);
  for (int64_t ib = 0; ib < b; ++ib) {
    for (int64_t ih = 0; ih < a; ++ih) {
      for (int64_t t = 0; t < s; ++t)
        for (int64_t u = 0; u < s; ++u) {
          double q_k = 0;
          for (int64_t e = 0; e < head_dim; ++e) q_k += qat(ib, t, ih, e) * kvat(ib, u, ih, 0, e);
          sc[t * s + u] = u > t ? -INFINITY : q_k / std::sqrt(static_cast<double>(head_dim));
        }
      for (int64_t t = 0; t < s; ++t) {
        double* p = probs.data() + ((ib * a + ih) * s + t) * s;
        const double mx = *std::max_element(sc.begin() + t * s, sc.begin() + (t + 1) * s);
        double z = 0;
        for (int64_t u = 0; u < s; ++u) z += std::exp(sc[t * s + u] - mx);
        for (int64_t u = 0; u < s; ++u) p[u] = std::exp(sc[t * s + u] - mx) / z;
        double* o = out.data() + ((ib * s + t) * a + ih) * head_dim;
        for (int64_t e = 0; e < head_dim; ++e)
          for (int64_t u = 0; u < s; ++u) o[e] += p[u] * kvat(ib, u, ih, 1, e);
      }
    }
  }
}

void check_attention_forward(const std::vector<double>& q, const std::vector<double>& kv, int64_t b, int64_t s,
                             int64_t a, int64_t g, int64_t head_dim, const std::string& what) {
  std::vector<double> ref_out, ref_probs;
  attention_ref(q, kv, b, s, a, g, head_dim, ref_out, ref_probs);
  std::vector<float> out(ref_out.size(), -7.0f), probs(ref_probs.size(), -7.0f);
  cpu::attention_forward(cast<float>(q).data(), cast<float>(kv).data(), b, s, a, g, head_dim, out.data(), probs.data());
  expect_close(out, ref_out, kFwdF32, what + " out");
  expect_close(probs, ref_probs, kFwdF32, what + " probs");
}

TEST(CpuAttention, ForwardMatchesExplicitMaskedScores) {
  std::mt19937 rng(15);
  const int64_t b = 2, s = 5, a = 3, head_dim = 4;
  const auto q = randn(rng, b * s * a * head_dim), kv = randn(rng, b * s * a * 2 * head_dim);
  check_attention_forward(q, kv, b, s, a, a, head_dim, "attention_forward");
}

TEST(CpuAttention, GroupedQueryForwardMatchesExplicitMaskedScores) {
  std::mt19937 rng(152);
  const int64_t b = 2, s = 5, a = 6, g = 2, head_dim = 4;  // three query heads per kv head
  const auto q = randn(rng, b * s * a * head_dim), kv = randn(rng, b * s * g * 2 * head_dim);
  check_attention_forward(q, kv, b, s, a, g, head_dim, "grouped-query attention_forward");
}

TEST(CpuAttention, ForwardIsStableForLargeScores) {
  // Integers in [-20, 20] and d = 4: scores q·k/2 are exact in fp32 and reach ~800,
  // so exp overflows (fp32 max ≈ e^88) unless the row max is subtracted first.
  std::mt19937 rng(151);
  std::uniform_int_distribution<int> dist(-20, 20);
  const int64_t b = 1, s = 5, a = 2, head_dim = 4;
  std::vector<double> q(b * s * a * head_dim), kv(b * s * a * 2 * head_dim);
  for (auto& v : q) v = dist(rng);
  for (auto& v : kv) v = dist(rng);
  check_attention_forward(q, kv, b, s, a, a, head_dim, "attention_forward, large scores");
}

TEST(CpuElementwise, GeluAddScaleSumSquaresMatchFloat64) {
  const int64_t n = 40;
  std::mt19937 rng(16);
  const auto x = randn(rng, n, 2.0), z = randn(rng, n);
  std::vector<double> ref_gelu(n), ref_add(n), ref_scaled(n);
  double ref_ss = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double u = std::sqrt(2.0 / std::numbers::pi) * (x[i] + 0.044715 * std::pow(x[i], 3));
    ref_gelu[i] = 0.5 * x[i] * (1.0 + std::tanh(u));
    ref_add[i] = x[i] + z[i];
    ref_scaled[i] = x[i] * static_cast<double>(0.37f);
    ref_ss += x[i] * x[i];
  }
  const auto xf = cast<float>(x), zf = cast<float>(z);
  std::vector<float> y(n);
  cpu::gelu_forward(xf.data(), n, y.data());
  expect_close(y, ref_gelu, kFwdF32, "gelu_forward");
  auto sum = xf;  // out aliases a
  cpu::add(sum.data(), zf.data(), n, sum.data());
  expect_close(sum, ref_add, kFwdF32, "add (aliased)");
  auto scaled = xf;
  cpu::scale(scaled.data(), n, 0.37f);
  expect_close(scaled, ref_scaled, kFwdF32, "scale");
  expect_close(std::vector<double>{cpu::sum_squares(xf.data(), n)}, {ref_ss}, kSameF64,
               "sum_squares (float input, double accumulation)");
}

TEST(CpuCrossEntropy, ShardPiecesMatchFloat64) {
  // Shard holds ids [3, 8) of V = 10; targets: in, in, out, out, in, out.
  const int64_t n = 6, vocab_start = 3, vt = 5;
  const std::vector<std::int32_t> targets{3, 7, 0, 8, 5, 9};
  std::mt19937 rng(17);
  const auto logits = randn(rng, n * vt, 2.0);
  std::vector<double> mx(n), se(n), tl(n, 0.0), loss(n);
  for (int64_t i = 0; i < n; ++i) {
    mx[i] = *std::max_element(logits.begin() + i * vt, logits.begin() + (i + 1) * vt);
    for (int64_t j = 0; j < vt; ++j) se[i] += std::exp(logits[i * vt + j] - mx[i]);
    if (targets[i] >= 3 && targets[i] < 8) tl[i] = logits[i * vt + targets[i] - 3];
    loss[i] = std::log(se[i]) + mx[i] - tl[i];
  }
  const auto lf = cast<float>(logits);
  std::vector<float> got_mx(n), got_se(n), got_tl(n, -7.0f), got_loss(n);
  cpu::ce_row_max(lf.data(), n, vt, got_mx.data());
  cpu::ce_row_sum_exp(lf.data(), n, vt, got_mx.data(), got_se.data());
  cpu::ce_target_logit(lf.data(), targets.data(), n, vt, vocab_start, got_tl.data());
  cpu::ce_loss(got_mx.data(), got_se.data(), got_tl.data(), n, got_loss.data());
  expect_close(got_mx, mx, kFwdF32, "ce_row_max");
  expect_close(got_se, se, kFwdF32, "ce_row_sum_exp");
  expect_close(got_tl, tl, kFwdF32, "ce_target_logit");
  expect_close(got_loss, loss, kFwdF32, "ce_loss");
}

TEST(CpuCrossEntropy, BackwardIsScaledSoftmaxMinusOneHotInShard) {
  const int64_t n = 6, vocab_start = 3, vt = 5;
  const std::vector<std::int32_t> targets{3, 7, 0, 8, 5, 9};
  const double scale = 0.25;
  std::mt19937 rng(18);
  const auto logits = randn(rng, n * vt, 2.0);
  const auto gmax = randn(rng, n, 0.5, 3.0);  // a "global" max and sum from other shards
  const auto gsum = randn(rng, n, 0.5, 8.0);
  std::vector<double> ref(n * vt);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < vt; ++j)
      ref[i * vt + j] = scale * (std::exp(logits[i * vt + j] - gmax[i]) / gsum[i] -
                                 (targets[i] - 3 == j ? 1.0 : 0.0));
  std::vector<float> got(n * vt, -7.0f);
  cpu::ce_backward(cast<float>(logits).data(), targets.data(), cast<float>(gmax).data(),
                   cast<float>(gsum).data(), n, vt, vocab_start, static_cast<float>(scale),
                   got.data());
  expect_close(got, ref, kFwdF32, "ce_backward");
}

// Float64 AdamW straight from the header's formula, `steps` steps from zero moments.
std::vector<double> adamw_ref(std::vector<double> p, const std::vector<std::vector<double>>& grads,
                              const cpu::AdamWParams& hp) {
  const auto b1 = static_cast<double>(hp.beta1), b2 = static_cast<double>(hp.beta2);
  std::vector<double> m(p.size(), 0.0), v(p.size(), 0.0);
  for (std::size_t t = 0; t < grads.size(); ++t) {
    const double step = static_cast<double>(t + 1);
    for (std::size_t i = 0; i < p.size(); ++i) {
      const double g = grads[t][i];
      m[i] = b1 * m[i] + (1 - b1) * g;
      v[i] = b2 * v[i] + (1 - b2) * g * g;
      const double upd = (m[i] / (1 - std::pow(b1, step))) /
                         (std::sqrt(v[i] / (1 - std::pow(b2, step))) + static_cast<double>(hp.eps));
      p[i] -= static_cast<double>(hp.lr) * (upd + static_cast<double>(hp.weight_decay) * p[i]);
    }
  }
  return p;
}

template <class T>
std::vector<T> adamw_run(const std::vector<double>& p0,
                         const std::vector<std::vector<double>>& grads, cpu::AdamWParams hp) {
  const auto n = static_cast<int64_t>(p0.size());
  auto p = cast<T>(p0);
  std::vector<T> m(n), v(n);  // zero moments
  for (std::size_t t = 0; t < grads.size(); ++t) {
    hp.step = static_cast<int>(t + 1);
    const auto g = cast<T>(grads[t]);
    cpu::adamw_step(p.data(), g.data(), m.data(), v.data(), n, hp);
  }
  return p;
}

TEST(CpuAdamW, OneAndTwoStepsMatchFormulaWithAndWithoutDecay) {
  std::mt19937 rng(19);
  const std::size_t n = 9;
  const auto p0 = randn(rng, n);
  const std::vector<std::vector<double>> grads{randn(rng, n), randn(rng, n, 0.1)};
  for (const float wd : {0.0f, 0.1f}) {
    cpu::AdamWParams hp;
    hp.lr = 1e-2f;
    hp.weight_decay = wd;
    for (std::size_t steps : {1u, 2u}) {
      const std::vector<std::vector<double>> g(grads.begin(), grads.begin() + steps);
      const auto ref = adamw_ref(p0, g, hp);
      const std::string what = "adamw wd=" + std::to_string(wd) + " steps=" + std::to_string(steps);
      expect_close(adamw_run<float>(p0, g, hp), ref, kAdamWF32, what + " float");
      expect_close(adamw_run<double>(p0, g, hp), ref, kSameF64, what + " double");
    }
  }
}

}  // namespace
}  // namespace ptdp::test
