// Ops' default compositions that a backend may fuse (linear_gelu_backward,
// bias_residual_add, bias_residual_layernorm), on the CPU backend: they must
// equal the separate ops exactly, whatever aliases the output.
// Letters: n rows, h hidden, f inner, m out.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "core/kernels/cpu/cpu_ops.h"

namespace ptdp {
namespace {

struct Cpu {
  CpuAllocator alloc;
  CpuOps ops{alloc};
  std::mt19937 rng{7};
  Tensor random(Shape shape) {
    Tensor t = ops.empty(std::move(shape));
    std::normal_distribution<float> d(0.0f, 1.0f);
    for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
    return t;
  }
  Tensor clone(const Tensor& t) {
    Tensor c = ops.empty(t.shape(), t.dtype());
    ops.copy(t, c);
    return c;
  }
};

std::vector<float> values(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.numel()}; }

TEST(OpsDefaults, BiasResidualAddEqualsBiasAddThenAddWhateverItAliases) {
  Cpu c;
  const std::int64_t n = 5, h = 7;
  const Tensor y = c.random({n, h}), bias = c.random({h}), res = c.random({n, h});
  Tensor expect = c.clone(y);
  c.ops.bias_add(expect, bias);
  c.ops.add(res, expect, expect);
  Tensor out = c.ops.empty({n, h});
  c.ops.bias_residual_add(y, bias, res, out);  // no alias
  EXPECT_EQ(values(out), values(expect));
  Tensor y2 = c.clone(y);
  c.ops.bias_residual_add(y2, bias, res, y2);  // out aliases y
  EXPECT_EQ(values(y2), values(expect));
  Tensor r2 = c.clone(res);
  c.ops.bias_residual_add(y, bias, r2, r2);  // out aliases residual
  EXPECT_EQ(values(r2), values(expect));
}

// sum, ln, mean, rstd of bias_residual_layernorm with the sum written to a new
// tensor, over y, or over residual: each must equal bias_residual_add then
// layernorm_forward bit for bit.
TEST(OpsDefaults, BiasResidualLayernormEqualsBiasResidualAddThenLayernorm) {
  Cpu c;
  const std::int64_t n = 5, h = 7;
  const Tensor y = c.random({n, h}), bias = c.random({h}), res = c.random({n, h});
  const Tensor gamma = c.random({h}), beta = c.random({h});
  Tensor sum = c.ops.empty({n, h}), ln = c.ops.empty({n, h});
  Tensor mean = c.ops.empty({n}, DType::f32), rstd = c.ops.empty({n}, DType::f32);
  c.ops.bias_residual_add(y, bias, res, sum);
  c.ops.layernorm_forward(sum, gamma, beta, ln, mean, rstd);
  for (const int alias : {0, 1, 2}) {  // sum: new, over y, over residual
    Tensor y2 = c.clone(y), r2 = c.clone(res);
    Tensor s2 = alias == 1 ? y2 : alias == 2 ? r2 : c.ops.empty({n, h});
    Tensor ln2 = c.ops.empty({n, h}), mean2 = c.ops.empty({n}, DType::f32), rstd2 = c.ops.empty({n}, DType::f32);
    c.ops.bias_residual_layernorm(y2, bias, r2, gamma, beta, s2, ln2, mean2, rstd2);
    SCOPED_TRACE(alias);
    EXPECT_EQ(values(s2), values(sum));
    EXPECT_EQ(values(ln2), values(ln));
    EXPECT_EQ(values(mean2), values(mean));
    EXPECT_EQ(values(rstd2), values(rstd));
  }
}

TEST(OpsDefaults, LinearGeluBackwardEqualsTheSeparateOps) {
  Cpu c;
  const std::int64_t n = 6, f = 9, m = 4;
  const Tensor dy = c.random({n, m}), pre = c.random({n, f}), w = c.random({m, f});
  Tensor gelu = c.ops.empty({n, f});
  c.ops.gelu_forward(pre, gelu);
  const Tensor dw0 = c.random({m, f}), db0 = c.random({m}), dbp0 = c.random({f});
  // Separate ops.
  Tensor dgelu = c.ops.empty({n, f}), dpre = c.ops.empty({n, f});
  Tensor dw = c.clone(dw0), db = c.clone(db0), dbp = c.clone(dbp0);
  c.ops.bias_backward(dy, db);
  Tensor none;
  c.ops.linear_backward(dy, gelu, w, dgelu, dw, none);
  c.ops.gelu_backward(dgelu, pre, dpre);
  c.ops.bias_backward(dpre, dbp);
  // Composition.
  Tensor dpre2 = c.ops.empty({n, f}), dw2 = c.clone(dw0), db2 = c.clone(db0), dbp2 = c.clone(dbp0);
  c.ops.linear_gelu_backward(dy, gelu, pre, w, dpre2, dw2, db2, dbp2);
  EXPECT_EQ(values(dpre2), values(dpre));
  EXPECT_EQ(values(dw2), values(dw));
  EXPECT_EQ(values(db2), values(db));    // accumulated into its old value
  EXPECT_EQ(values(dbp2), values(dbp));
  // Undefined bias gradients are skipped.
  Tensor dpre3 = c.ops.empty({n, f}), dw3 = c.clone(dw0), no_db, no_dbp;
  c.ops.linear_gelu_backward(dy, gelu, pre, w, dpre3, dw3, no_db, no_dbp);
  EXPECT_EQ(values(dpre3), values(dpre));
}

}  // namespace
}  // namespace ptdp
