// The fp32 fast paths of the CPU backend (core/kernels/cpu/*_blas.cpp,
// *_vector.cpp) against the plain reference kernels evaluated in float64 on the
// same inputs, within kFastF32 (tolerances.h). Shapes cross the attention row
// block (64) and the 16 lanes with tails; NaN inputs must stay NaN.
// Letters: b batch, s sequence, a heads, g kv heads, d head dim, n rows, h hidden.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/kernels/cpu/adamw.h"
#include "core/kernels/cpu/adamw_vector.h"
#include "core/kernels/cpu/attention.h"
#include "core/kernels/cpu/attention_blas.h"
#include "core/kernels/cpu/bias.h"
#include "core/kernels/cpu/cross_entropy.h"
#include "core/kernels/cpu/cross_entropy_vector.h"
#include "core/kernels/cpu/elementwise.h"
#include "core/kernels/cpu/elementwise_vector.h"
#include "core/kernels/cpu/layernorm.h"
#include "core/kernels/cpu/norm_vector.h"
#include "core/kernels/cpu/rmsnorm.h"
#include "core/kernels/cpu/swiglu.h"
#include "cpu_kernels_test_util.h"

namespace ptdp::test {
namespace {

using std::int64_t;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

struct AttentionCase {
  int64_t b, s, a, g, d;
};

// q (b, s, a, d) and kv (b, s, g, 2, d) at σ = 0.5: scores q·k/√d of order 1.
struct AttentionData {
  AttentionCase c;
  std::vector<double> q, kv, dout;
  AttentionData(AttentionCase shape, unsigned seed) : c(shape) {
    std::mt19937 rng(seed);
    q = randn(rng, c.b * c.s * c.a * c.d, 0.5);
    kv = randn(rng, c.b * c.s * c.g * 2 * c.d, 0.5);
    dout = randn(rng, c.b * c.s * c.a * c.d, 0.5);
  }
};

std::string name(const AttentionCase& c) {
  return "b" + std::to_string(c.b) + " s" + std::to_string(c.s) + " a" + std::to_string(c.a) + " g" +
         std::to_string(c.g) + " d" + std::to_string(c.d);
}

// s = 150 spans three row blocks (64, 64, 22); s = 1 one row; g < a grouped heads.
const AttentionCase kAttentionCases[] = {{2, 5, 3, 3, 4}, {1, 150, 4, 2, 16}, {2, 70, 2, 1, 8}, {1, 1, 2, 2, 4}};

TEST(CpuFastAttention, ForwardMatchesReferenceAndZeroesTheMaskedTriangle) {
  for (const auto& c : kAttentionCases) {
    AttentionData in(c, 41);
    std::vector<double> out(in.q.size()), probs(c.b * c.a * c.s * c.s);
    cpu::attention_forward(in.q.data(), in.kv.data(), c.b, c.s, c.a, c.g, c.d, out.data(), probs.data());
    std::vector<float> got_out(out.size(), -7.0f), got_probs(probs.size(), -7.0f);
    cpu::attention_forward_blas(cast<float>(in.q).data(), cast<float>(in.kv).data(), c.b, c.s, c.a, c.g, c.d,
                                got_out.data(), got_probs.data());
    expect_close(got_out, out, kFastF32, "attention out, " + name(c));
    expect_close(got_probs, probs, kFastF32, "attention probs, " + name(c));
    for (int64_t row = 0; row < c.b * c.a * c.s; ++row)
      for (int64_t u = row % c.s + 1; u < c.s; ++u) ASSERT_EQ(got_probs[row * c.s + u], 0.0f) << name(c);
  }
}

TEST(CpuFastAttention, BackwardMatchesReference) {
  for (const auto& c : kAttentionCases) {
    AttentionData in(c, 43);
    std::vector<double> out(in.q.size()), probs(c.b * c.a * c.s * c.s), dq(in.q.size()), dkv(in.kv.size());
    cpu::attention_forward(in.q.data(), in.kv.data(), c.b, c.s, c.a, c.g, c.d, out.data(), probs.data());
    cpu::attention_backward(in.dout.data(), in.q.data(), in.kv.data(), probs.data(), c.b, c.s, c.a, c.g, c.d,
                            dq.data(), dkv.data());
    const auto qf = cast<float>(in.q), kvf = cast<float>(in.kv);
    std::vector<float> fo(out.size()), fp(probs.size()), got_dq(dq.size(), -7.0f), got_dkv(dkv.size(), -7.0f);
    cpu::attention_forward_blas(qf.data(), kvf.data(), c.b, c.s, c.a, c.g, c.d, fo.data(), fp.data());
    cpu::attention_backward_blas(cast<float>(in.dout).data(), qf.data(), kvf.data(), fp.data(), c.b, c.s, c.a, c.g,
                                 c.d, got_dq.data(), got_dkv.data());
    expect_close(got_dq, dq, kFastF32, "attention dq, " + name(c));
    expect_close(got_dkv, dkv, kFastF32, "attention dkv, " + name(c));
  }
}

TEST(CpuFastAttention, RowBlockKeepsABlockOfScoresNearHalfAnL2) {
  EXPECT_EQ(cpu::attention_row_block(16), 64);
  EXPECT_EQ(cpu::attention_row_block(256), 64);
  EXPECT_EQ(cpu::attention_row_block(2048), 32);  // 32 rows × 2048 floats = 256 KiB
  EXPECT_EQ(cpu::attention_row_block(32768), 16);
}

TEST(CpuFastAttention, NaNQueryGivesNaNOutput) {
  const AttentionCase c{1, 70, 1, 1, 4};
  AttentionData in(c, 47);
  auto qf = cast<float>(in.q);
  qf[66 * c.d] = kNaN;  // row 66: the second block
  std::vector<float> out(qf.size()), probs(c.s * c.s);
  cpu::attention_forward_blas(qf.data(), cast<float>(in.kv).data(), c.b, c.s, c.a, c.g, c.d, out.data(),
                              probs.data());
  EXPECT_TRUE(std::isnan(out[66 * c.d]));
  EXPECT_FALSE(std::isnan(out[65 * c.d]));
}

// h = 37: two lanes' tails; h = 256 the model's width.
TEST(CpuFastNorms, LayerNormAndRmsNormMatchReference) {
  for (const int64_t h : {37, 256}) {
    std::mt19937 rng(53 + static_cast<unsigned>(h));
    const int64_t n = 9;
    const auto x = randn(rng, n * h, 1.0, 0.3), dy = randn(rng, n * h), gamma = randn(rng, h, 0.2, 1.0);
    const auto beta = randn(rng, h, 0.1);
    const std::string tag = " h=" + std::to_string(h);
    std::vector<double> y(n * h), mean(n), rstd(n), dx(n * h), dgamma(h, 0.5), dbeta(h, 0.25);
    cpu::layernorm_forward(x.data(), gamma.data(), beta.data(), n, h, 1e-5, y.data(), mean.data(), rstd.data());
    cpu::layernorm_backward(dy.data(), x.data(), gamma.data(), mean.data(), rstd.data(), n, h, dx.data(),
                            dgamma.data(), dbeta.data());
    std::vector<float> fy(y.size()), fmean(n), frstd(n), fdx(dx.size()), fdgamma(h, 0.5f), fdbeta(h, 0.25f);
    const auto xf = cast<float>(x), gf = cast<float>(gamma), dyf = cast<float>(dy);
    cpu::layernorm_forward_vector(xf.data(), gf.data(), cast<float>(beta).data(), n, h, 1e-5f, fy.data(),
                                  fmean.data(), frstd.data());
    cpu::layernorm_backward_vector(dyf.data(), xf.data(), gf.data(), fmean.data(), frstd.data(), n, h, fdx.data(),
                                   fdgamma.data(), fdbeta.data());
    expect_close(fy, y, kFastF32, "layernorm y" + tag);
    expect_close(fmean, mean, kFastF32, "layernorm mean" + tag);
    expect_close(frstd, rstd, kFastF32, "layernorm rstd" + tag);
    expect_close(fdx, dx, kFastF32, "layernorm dx" + tag);
    expect_close(fdgamma, dgamma, kFastF32, "layernorm dgamma" + tag);
    expect_close(fdbeta, dbeta, kFastF32, "layernorm dbeta" + tag);

    std::vector<double> ry(n * h), rr(n), rdx(n * h), rdg(h, 0.5);
    cpu::rmsnorm_forward(x.data(), gamma.data(), n, h, 1e-5, ry.data(), rr.data());
    cpu::rmsnorm_backward(dy.data(), x.data(), gamma.data(), rr.data(), n, h, rdx.data(), rdg.data());
    std::vector<float> gry(ry.size()), grr(n), grdx(rdx.size()), grdg(h, 0.5f);
    cpu::rmsnorm_forward_vector(xf.data(), gf.data(), n, h, 1e-5f, gry.data(), grr.data());
    cpu::rmsnorm_backward_vector(dyf.data(), xf.data(), gf.data(), grr.data(), n, h, grdx.data(), grdg.data());
    expect_close(gry, ry, kFastF32, "rmsnorm y" + tag);
    expect_close(grr, rr, kFastF32, "rmsnorm rstd" + tag);
    expect_close(grdx, rdx, kFastF32, "rmsnorm dx" + tag);
    expect_close(grdg, rdg, kFastF32, "rmsnorm dgamma" + tag);
  }
}

// The claim of vector_lanes.h: lane j sums elements j, j+16, ..., then the lanes
// in order, whichever clone runs. Written out here in scalar code, the sum of
// squares must agree to the last bit (odd n: a tail in lanes 0..n%16-1).
TEST(CpuFastLanes, SumOfSquaresAddsInSixteenFixedLanes) {
  std::mt19937 rng(59);
  const auto x = cast<float>(randn(rng, 1001));
  double lanes[16] = {};
  for (std::size_t i = 0; i < x.size(); ++i) lanes[i % 16] += static_cast<double>(x[i]) * x[i];
  double total = 0;
  for (double l : lanes) total += l;
  EXPECT_EQ(cpu::sum_squares_vector(x.data(), static_cast<int64_t>(x.size())), total);
}

TEST(CpuFastElementwise, MatchReference) {
  std::mt19937 rng(61);
  const int64_t rows = 7, cols = 45, n = rows * cols;
  const auto x = randn(rng, n, 2.0), z = randn(rng, n), bias = randn(rng, cols);
  const auto xf = cast<float>(x), zf = cast<float>(z), bf = cast<float>(bias);
  std::vector<double> y(n), dx(n), sum(n), dbias(cols, 0.5);
  cpu::gelu_forward(x.data(), n, y.data());
  cpu::gelu_backward(z.data(), x.data(), n, dx.data());
  std::vector<float> fy(n), fdx(n), fsum(n), fdbias(cols, 0.5f);
  cpu::gelu_forward_vector(xf.data(), n, fy.data());
  cpu::gelu_backward_vector(zf.data(), xf.data(), n, fdx.data());
  expect_close(fy, y, kFastF32, "gelu");
  expect_close(fdx, dx, kFastF32, "gelu backward");
  // The same formula (gelu_formula.h) in the reference's fp32 loop: equal to the bit.
  std::vector<float> ry(n);
  cpu::gelu_forward(xf.data(), n, ry.data());
  EXPECT_EQ(fy, ry);

  cpu::add(x.data(), z.data(), n, sum.data());
  cpu::add_vector(xf.data(), zf.data(), n, fsum.data());
  expect_close(fsum, sum, kFastF32, "add");
  auto scaled = xf;
  cpu::scale_vector(scaled.data(), n, 0.37f);
  std::vector<double> ref_scaled = x;
  cpu::scale(ref_scaled.data(), n, static_cast<double>(0.37f));
  expect_close(scaled, ref_scaled, kFastF32, "scale");
  expect_close(std::vector<double>{cpu::sum_squares_vector(xf.data(), n)}, {cpu::sum_squares(x.data(), n)},
               kSameF64, "sum of squares (double lanes)");

  auto biased = xf;
  std::vector<double> ref_biased = x;
  cpu::bias_add(ref_biased.data(), bias.data(), rows, cols);
  cpu::bias_add_vector(biased.data(), bf.data(), rows, cols);
  expect_close(biased, ref_biased, kFastF32, "bias add");
  cpu::bias_backward(z.data(), rows, cols, dbias.data());
  cpu::bias_backward_vector(zf.data(), rows, cols, fdbias.data());
  expect_close(fdbias, dbias, kFastF32, "bias backward");
}

TEST(CpuFastElementwise, SwiGluMatchesReference) {
  std::mt19937 rng(67);
  const int64_t n = 5, f = 29;
  const auto pre = randn(rng, n * 2 * f, 2.0), dy = randn(rng, n * f);
  std::vector<double> y(n * f), dpre(n * 2 * f);
  cpu::swiglu_forward(pre.data(), n, f, y.data());
  cpu::swiglu_backward(dy.data(), pre.data(), n, f, dpre.data());
  std::vector<float> fy(y.size()), fdpre(dpre.size());
  cpu::swiglu_forward_vector(cast<float>(pre).data(), n, f, fy.data());
  cpu::swiglu_backward_vector(cast<float>(dy).data(), cast<float>(pre).data(), n, f, fdpre.data());
  expect_close(fy, y, kFastF32, "swiglu");
  expect_close(fdpre, dpre, kFastF32, "swiglu backward");
}

TEST(CpuFastAdamW, TwoStepsMatchReference) {
  std::mt19937 rng(71);
  const int64_t n = 333;
  auto p = randn(rng, n), m = randn(rng, n, 0.01), v = cast<double>(cast<float>(randn(rng, n, 0.01)));
  for (auto& e : v) e = e * e;
  auto fp = cast<float>(p), fm = cast<float>(m), fv = cast<float>(v);
  AdamWParams hp;
  hp.lr = 0.01f;
  hp.weight_decay = 0.1f;
  for (int step = 1; step <= 2; ++step) {
    hp.step = step;
    const auto g = randn(rng, n);
    cpu::adamw_step(p.data(), g.data(), m.data(), v.data(), n, hp);
    cpu::adamw_step_vector(fp.data(), cast<float>(g).data(), fm.data(), fv.data(), n, hp);
  }
  expect_close(fp, p, kAdamWF32, "adamw param");
  expect_close(fm, m, kAdamWF32, "adamw m");
  expect_close(fv, v, kAdamWF32, "adamw v");
}

// One vocabulary shard [vocab_start, +vt): targets inside and outside it.
TEST(CpuFastCrossEntropy, RowPiecesAndBackwardMatchReference) {
  std::mt19937 rng(73);
  const int64_t n = 6, vt = 53, vocab_start = 20;
  const auto logits = randn(rng, n * vt, 3.0);
  const std::vector<std::int32_t> targets{20, 72, 3, 45, 90, 21};
  std::vector<double> mx(n), se(n), dl(n * vt);
  cpu::ce_row_max(logits.data(), n, vt, mx.data());
  cpu::ce_row_sum_exp(logits.data(), n, vt, mx.data(), se.data());
  cpu::ce_backward(logits.data(), targets.data(), mx.data(), se.data(), n, vt, vocab_start, 0.25, dl.data());
  const auto lf = cast<float>(logits);
  std::vector<float> fmx(n), fse(n), fdl(dl.size());
  cpu::ce_row_max_vector(lf.data(), n, vt, fmx.data());
  cpu::ce_row_sum_exp_vector(lf.data(), n, vt, fmx.data(), fse.data());
  cpu::ce_backward_vector(lf.data(), targets.data(), fmx.data(), fse.data(), n, vt, vocab_start, 0.25f, fdl.data());
  expect_close(fmx, mx, kSameF64, "row max (exact)");
  expect_close(fse, se, kFastF32, "sum of exponentials");
  expect_close(fdl, dl, kFastF32, "dlogits");
}

TEST(CpuFastNaN, NaNInputsStayNaN) {
  std::vector<float> row(40, 0.5f), out(40), mean(1), rstd(1), gamma(40, 1.0f), beta(40, 0.0f);
  row[17] = kNaN;
  cpu::layernorm_forward_vector(row.data(), gamma.data(), beta.data(), 1, 40, 1e-5f, out.data(), mean.data(),
                                rstd.data());
  EXPECT_TRUE(std::isnan(out[0]));
  float mx = 0, se = 0;
  cpu::ce_row_max_vector(row.data(), 1, 40, &mx);
  cpu::ce_row_sum_exp_vector(row.data(), 1, 40, &mx, &se);
  EXPECT_TRUE(std::isnan(se));
  EXPECT_TRUE(std::isnan(cpu::sum_squares_vector(row.data(), 40)));
  cpu::gelu_forward_vector(row.data(), 40, out.data());
  EXPECT_TRUE(std::isnan(out[17]));
}

}  // namespace
}  // namespace ptdp::test
