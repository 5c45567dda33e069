// The float64 RMSNorm / LayerNorm reference: known values, normalised statistics, and finite
// differences of the backward w.r.t. x, weight and bias.
#include "kernels/reference_norm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/kernels/finite_difference.h"

namespace gpuplan::kernels {
namespace {

TEST(ReferenceNormTest, RmsNormKnownValue) {
  // mean(x^2) = (9 + 16) / 2 = 12.5.
  const std::vector<double> x = {3, 4};
  const std::vector<double> w = {1, 2};
  Expected<NormForwardResult> r = ReferenceNormForward(NormKind::kRmsNorm, {1, 2}, x, w, {}, 0.5);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double rstd = 1 / std::sqrt(13.0);
  EXPECT_NEAR(r->rstd[0], rstd, 1e-15);
  EXPECT_NEAR(r->y[0], 3 * rstd, 1e-15);
  EXPECT_NEAR(r->y[1], 8 * rstd, 1e-15);
  EXPECT_TRUE(r->mean.empty());
}

TEST(ReferenceNormTest, LayerNormRowsHaveZeroMeanAndUnitVariance) {
  const MatrixShape shape{3, 50};
  const std::vector<double> x = UniformValues(150, 1, 5, 1);
  const std::vector<double> w(50, 1.0);
  const std::vector<double> b(50, 0.0);
  Expected<NormForwardResult> r = ReferenceNormForward(NormKind::kLayerNorm, shape, x, w, b, 0);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (int row = 0; row < 3; ++row) {
    double sum = 0;
    double sum_sq = 0;
    for (int c = 0; c < 50; ++c) {
      sum += r->y[row * 50 + c];
      sum_sq += r->y[row * 50 + c] * r->y[row * 50 + c];
    }
    EXPECT_NEAR(sum / 50, 0, 1e-12);
    EXPECT_NEAR(sum_sq / 50, 1, 1e-12);  // biased variance, as Ba et al. 2016
    EXPECT_GT(r->mean[row], 1);
  }
}

// dx, dweight (and dbias) against central differences of L = sum(y * W).
void CheckBackward(NormKind kind) {
  const bool layer = kind == NormKind::kLayerNorm;
  const MatrixShape shape{3, 7};
  const double eps = 1e-3;
  const std::vector<double> x = UniformValues(21, -2, 3, 2);
  const std::vector<double> w = UniformValues(7, 0.5, 1.5, 3);
  const std::vector<double> b = layer ? UniformValues(7, -1, 1, 4) : std::vector<double>{};
  const std::vector<double> dy = UniformValues(21, -1, 1, 5);
  Expected<NormForwardResult> fwd = ReferenceNormForward(kind, shape, x, w, b, eps);
  ASSERT_TRUE(fwd.ok()) << fwd.status().message();
  Expected<NormGradients> g = ReferenceNormBackward(kind, shape, x, w, fwd->mean, fwd->rstd, dy);
  ASSERT_TRUE(g.ok()) << g.status().message();

  auto loss = [&](const std::vector<double>& xx, const std::vector<double>& ww,
                  const std::vector<double>& bb) {
    return Dot(ReferenceNormForward(kind, shape, xx, ww, bb, eps)->y, dy);
  };
  auto vec = [](std::span<const double> s) { return std::vector<double>(s.begin(), s.end()); };
  ExpectAllNear("dx", g->dx,
                NumericalGradient([&](std::span<const double> v) { return loss(vec(v), w, b); }, x),
                1e-7);
  ExpectAllNear("dweight", g->dweight,
                NumericalGradient([&](std::span<const double> v) { return loss(x, vec(v), b); }, w),
                1e-7);
  if (layer) {
    ExpectAllNear(
        "dbias", g->dbias,
        NumericalGradient([&](std::span<const double> v) { return loss(x, w, vec(v)); }, b), 1e-7);
  } else {
    EXPECT_TRUE(g->dbias.empty());
  }
}

TEST(ReferenceNormTest, RmsNormBackwardMatchesFiniteDifferences) {
  CheckBackward(NormKind::kRmsNorm);
}

TEST(ReferenceNormTest, LayerNormBackwardMatchesFiniteDifferences) {
  CheckBackward(NormKind::kLayerNorm);
}

TEST(ReferenceNormTest, RejectsInconsistentInputs) {
  const std::vector<double> x(6, 1.0);
  const std::vector<double> w(3, 1.0);
  // RMSNorm takes no bias; LayerNorm needs one.
  EXPECT_EQ(ReferenceNormForward(NormKind::kRmsNorm, {2, 3}, x, w, w, 1e-5).status().kind(),
            ErrorKind::kInvalidInput);
  EXPECT_EQ(ReferenceNormForward(NormKind::kLayerNorm, {2, 3}, x, w, {}, 1e-5).status().kind(),
            ErrorKind::kInvalidInput);
  EXPECT_EQ(ReferenceNormForward(NormKind::kRmsNorm, {3, 3}, x, w, {}, 1e-5).status().kind(),
            ErrorKind::kInvalidInput);
  EXPECT_EQ(ReferenceNormForward(NormKind::kRmsNorm, {2, 3}, x, w, {}, -1).status().kind(),
            ErrorKind::kInvalidInput);
}

}  // namespace
}  // namespace gpuplan::kernels
