// CPU reference kernels, backward passes: each analytic gradient (float and double
// instantiations) against float64 central finite differences of L = Σ dy ∘ forward(x),
// gradient buffers pre-filled so accumulation (+=) and overwriting are both checked;
// and the vocabulary-parallel cross-entropy composed over two shards.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

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

TEST(CpuEmbedding, BackwardAccumulatesFiniteDifferenceGradient) {
  const int64_t h = 6, vocab_start = 4, vt = 5;  // shard [4, 9); repeats and outsiders
  const std::vector<std::int32_t> tokens{4, 0, 8, 10, 5, 5, 3, 9, 6, 4};
  const auto n = static_cast<int64_t>(tokens.size());
  std::mt19937 rng(21);
  auto wte = randn(rng, vt * h);
  const auto dy = randn(rng, n * h), prior = randn(rng, vt * h);
  const auto fd = fd_grad(wte, [&] {
    std::vector<double> out(n * h);
    cpu::embedding_forward(tokens.data(), n, wte.data(), vocab_start, vt, h, out.data());
    return dot(out, dy);
  });
  for_float_and_double([&](auto type, Tol tol, const std::string& name) {
    using T = typename decltype(type)::type;
    auto dwte = cast<T>(prior);
    cpu::embedding_backward(tokens.data(), n, cast<T>(dy).data(), vocab_start, vt, h, dwte.data());
    expect_close(dwte, plus(prior, fd), tol, "embedding_backward dwte" + name);
  });
}

TEST(CpuEmbedding, PositionBackwardAccumulatesFiniteDifferenceGradient) {
  const int64_t b = 2, s = 5, h = 6, rows = 7;  // rows s.. of wpe get no gradient
  std::mt19937 rng(22);
  auto wpe = randn(rng, rows * h);
  const auto x = randn(rng, b * s * h), dy = randn(rng, b * s * h), prior = randn(rng, rows * h);
  const auto fd = fd_grad(wpe, [&] {
    auto out = x;
    cpu::position_forward(wpe.data(), b, s, h, out.data());
    return dot(out, dy);
  });
  for_float_and_double([&](auto type, Tol tol, const std::string& name) {
    using T = typename decltype(type)::type;
    auto dwpe = cast<T>(prior);
    cpu::position_backward(cast<T>(dy).data(), b, s, h, dwpe.data());
    expect_close(dwpe, plus(prior, fd), tol, "position_backward dwpe" + name);
  });
}

TEST(CpuLayerNorm, BackwardMatchesFiniteDifferencesAndAccumulatesParams) {
  const int64_t n = 7, h = 8;
  const float eps = 1e-5f;
  std::mt19937 rng(23);
  auto x = randn(rng, n * h, 2.0, 1.0), gamma = randn(rng, h), beta = randn(rng, h);
  const auto dy = randn(rng, n * h), prior_g = randn(rng, h), prior_b = randn(rng, h);
  auto loss = [&] {
    std::vector<double> y(n * h), mean(n), rstd(n);
    cpu::layernorm_forward(x.data(), gamma.data(), beta.data(), n, h, static_cast<double>(eps),
                           y.data(), mean.data(), rstd.data());
    return dot(y, dy);
  };
  const auto fd_x = fd_grad(x, loss), fd_g = fd_grad(gamma, loss), fd_b = fd_grad(beta, loss);
  for_float_and_double([&](auto type, Tol tol, const std::string& name) {
    using T = typename decltype(type)::type;
    const auto xt = cast<T>(x), gt = cast<T>(gamma);
    std::vector<T> y(n * h), mean(n), rstd(n), dx(n * h, T(-7));
    cpu::layernorm_forward(xt.data(), gt.data(), cast<T>(beta).data(), n, h, static_cast<T>(eps),
                           y.data(), mean.data(), rstd.data());
    auto dgamma = cast<T>(prior_g), dbeta = cast<T>(prior_b);
    cpu::layernorm_backward(cast<T>(dy).data(), xt.data(), gt.data(), mean.data(), rstd.data(), n,
                            h, dx.data(), dgamma.data(), dbeta.data());
    expect_close(dx, fd_x, tol, "layernorm_backward dx" + name);
    expect_close(dgamma, plus(prior_g, fd_g), tol, "layernorm_backward dgamma" + name);
    expect_close(dbeta, plus(prior_b, fd_b), tol, "layernorm_backward dbeta" + name);
  });
}

TEST(CpuLinear, BackwardMatchesFiniteDifferencesAndAccumulatesParams) {
  const int64_t n = 7, k = 5, m = 6;
  std::mt19937 rng(24);
  auto x = randn(rng, n * k), w = randn(rng, m * k), bias = randn(rng, m);
  const auto dy = randn(rng, n * m), prior_w = randn(rng, m * k), prior_b = randn(rng, m);
  auto loss = [&] {
    std::vector<double> y(n * m);
    cpu::linear_forward(x.data(), w.data(), bias.data(), n, k, m, y.data());
    return dot(y, dy);
  };
  const auto fd_x = fd_grad(x, loss), fd_w = fd_grad(w, loss), fd_b = fd_grad(bias, loss);
  for_float_and_double([&](auto type, Tol tol, const std::string& name) {
    using T = typename decltype(type)::type;
    const auto xt = cast<T>(x), wt = cast<T>(w), dyt = cast<T>(dy);
    std::vector<T> dx(n * k, T(-7));
    auto dw = cast<T>(prior_w), db = cast<T>(prior_b);
    cpu::linear_backward(dyt.data(), xt.data(), wt.data(), n, k, m, dx.data(), dw.data(),
                         db.data());
    expect_close(dx, fd_x, tol, "linear_backward dx" + name);
    expect_close(dw, plus(prior_w, fd_w), tol, "linear_backward dw" + name);
    expect_close(db, plus(prior_b, fd_b), tol, "linear_backward dbias" + name);
    // Without dx and dbias (first layer, no bias): dw alone, still accumulated.
    auto dw_only = cast<T>(prior_w);
    cpu::linear_backward(dyt.data(), xt.data(), wt.data(), n, k, m, static_cast<T*>(nullptr),
                         dw_only.data(), static_cast<T*>(nullptr));
    expect_close(dw_only, plus(prior_w, fd_w), tol, "linear_backward dw, dx = dbias = null" + name);
  });
}

// L = Σ dy ∘ attention(q, kv); dq and dkv against float64 finite differences.
// g < a: each kv head's gradient sums over the a/g query heads reading it.
void check_attention_backward(int64_t b, int64_t s, int64_t a, int64_t g, int64_t head_dim, unsigned seed) {
  std::mt19937 rng(seed);
  auto q = randn(rng, b * s * a * head_dim), kv = randn(rng, b * s * g * 2 * head_dim);
  const auto dy = randn(rng, b * s * a * head_dim);
  const auto loss = [&] {
    std::vector<double> out(b * s * a * head_dim), probs(b * a * s * s);
    cpu::attention_forward(q.data(), kv.data(), b, s, a, g, head_dim, out.data(), probs.data());
    return dot(out, dy);
  };
  const auto fd_q = fd_grad(q, loss), fd_kv = fd_grad(kv, loss);
  const std::string shape = " a " + std::to_string(a) + " g " + std::to_string(g);
  for_float_and_double([&](auto type, Tol tol, const std::string& name) {
    using T = typename decltype(type)::type;
    const auto qt = cast<T>(q), kvt = cast<T>(kv);
    std::vector<T> out(b * s * a * head_dim), probs(b * a * s * s), dq(q.size(), T(-7)), dkv(kv.size(), T(-7));
    cpu::attention_forward(qt.data(), kvt.data(), b, s, a, g, head_dim, out.data(), probs.data());
    cpu::attention_backward(cast<T>(dy).data(), qt.data(), kvt.data(), probs.data(), b, s, a, g, head_dim, dq.data(),
                            dkv.data());
    expect_close(dq, fd_q, tol, "attention_backward dq" + shape + name);
    expect_close(dkv, fd_kv, tol, "attention_backward dkv" + shape + name);
  });
}

TEST(CpuAttention, BackwardMatchesFiniteDifferences) { check_attention_backward(2, 5, 3, 3, 4, 25); }
TEST(CpuAttention, GroupedQueryBackwardMatchesFiniteDifferences) { check_attention_backward(2, 5, 4, 2, 4, 251); }

TEST(CpuElementwise, GeluBackwardMatchesFiniteDifferences) {
  const int64_t n = 40;
  std::mt19937 rng(26);
  auto x = randn(rng, n, 2.0);
  const auto dy = randn(rng, n);
  const auto fd = fd_grad(x, [&] {
    std::vector<double> y(n);
    cpu::gelu_forward(x.data(), n, y.data());
    return dot(y, dy);
  });
  for_float_and_double([&](auto type, Tol tol, const std::string& name) {
    using T = typename decltype(type)::type;
    std::vector<T> dx(n, T(-7));
    cpu::gelu_backward(cast<T>(dy).data(), cast<T>(x).data(), n, dx.data());
    expect_close(dx, fd, tol, "gelu_backward dx" + name);
  });
}

// Per-row loss of logits (n, vt) over one shard [vocab_start, +vt), composed from the pieces
// with the shard's own max and sum (the single-shard case: vocab_start = 0, vt = V).
template <class T>
std::vector<T> ce_single_shard(const std::vector<T>& logits, const std::vector<std::int32_t>& tg,
                               int64_t n, int64_t vt, std::vector<T>& mx, std::vector<T>& se) {
  std::vector<T> tl(n), loss(n);
  mx.resize(n);
  se.resize(n);
  cpu::ce_row_max(logits.data(), n, vt, mx.data());
  cpu::ce_row_sum_exp(logits.data(), n, vt, mx.data(), se.data());
  cpu::ce_target_logit(logits.data(), tg.data(), n, vt, 0, tl.data());
  cpu::ce_loss(mx.data(), se.data(), tl.data(), n, loss.data());
  return loss;
}

constexpr int64_t kCeRows = 6, kCeVocab = 10;
const std::vector<std::int32_t> kCeTargets{0, 3, 4, 9, 6, 2};  // both sides of the split at 4

TEST(CpuCrossEntropy, BackwardMatchesFiniteDifferencesOfMeanLoss) {
  const int64_t n = kCeRows, V = kCeVocab;
  std::mt19937 rng(27);
  auto logits = randn(rng, n * V, 2.0);
  const auto fd = fd_grad(logits, [&] {
    std::vector<double> mx, se;
    const auto loss = ce_single_shard(logits, kCeTargets, n, V, mx, se);
    return dot(loss, std::vector<double>(n, 1.0 / static_cast<double>(n)));
  });
  for_float_and_double([&](auto type, Tol tol, const std::string& name) {
    using T = typename decltype(type)::type;
    const auto lt = cast<T>(logits);
    std::vector<T> mx, se, dlogits(n * V, T(-7));
    ce_single_shard(lt, kCeTargets, n, V, mx, se);
    cpu::ce_backward(lt.data(), kCeTargets.data(), mx.data(), se.data(), n, V, 0,
                     T(1) / static_cast<T>(n), dlogits.data());
    expect_close(dlogits, fd, tol, "ce_backward dlogits" + name);
  });
}

// Columns [c0, c0 + w) of an (n, V) row-major matrix, as an (n, w) matrix.
std::vector<float> columns(const std::vector<float>& x, int64_t n, int64_t V, int64_t c0,
                           int64_t w) {
  std::vector<float> out(n * w);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < w; ++j) out[i * w + j] = x[i * V + c0 + j];
  return out;
}

TEST(CpuCrossEntropy, TwoShardCompositionMatchesUnsplit) {
  const int64_t n = kCeRows, V = kCeVocab;
  const int64_t start[2] = {0, 4}, width[2] = {4, 6};  // unequal widths catch stride mix-ups
  std::mt19937 rng(28);
  const auto logits = cast<float>(randn(rng, n * V, 2.0));
  std::vector<float> mx, se, full_grad(n * V);
  const auto full_loss = ce_single_shard(logits, kCeTargets, n, V, mx, se);
  const float scale = 1.0f / static_cast<float>(n);
  cpu::ce_backward(logits.data(), kCeTargets.data(), mx.data(), se.data(), n, V, 0, scale,
                   full_grad.data());
  // Each shard: local max → global max (max-reduce); sum_exp with the global max (sum-reduce);
  // target logit (sum-reduce; zero on shards without the target).
  std::vector<float> shard[2], gmax(n, -INFINITY), gsum(n, 0.0f), gtl(n, 0.0f), part(n);
  for (int r = 0; r < 2; ++r) {
    shard[r] = columns(logits, n, V, start[r], width[r]);
    cpu::ce_row_max(shard[r].data(), n, width[r], part.data());
    for (int64_t i = 0; i < n; ++i) gmax[i] = std::max(gmax[i], part[i]);
  }
  for (int r = 0; r < 2; ++r) {
    cpu::ce_row_sum_exp(shard[r].data(), n, width[r], gmax.data(), part.data());
    for (int64_t i = 0; i < n; ++i) gsum[i] += part[i];
    cpu::ce_target_logit(shard[r].data(), kCeTargets.data(), n, width[r], start[r], part.data());
    for (int64_t i = 0; i < n; ++i) gtl[i] += part[i];
  }
  std::vector<float> loss(n);
  cpu::ce_loss(gmax.data(), gsum.data(), gtl.data(), n, loss.data());
  expect_close(loss, cast<double>(full_loss), kReassocF32, "two-shard ce_loss");
  for (int r = 0; r < 2; ++r) {
    std::vector<float> grad(n * width[r], -7.0f);
    cpu::ce_backward(shard[r].data(), kCeTargets.data(), gmax.data(), gsum.data(), n, width[r],
                     start[r], scale, grad.data());
    expect_close(grad, cast<double>(columns(full_grad, n, V, start[r], width[r])), kReassocF32,
                 "two-shard ce_backward, shard " + std::to_string(r));
  }
}

}  // namespace
}  // namespace ptdp::test
