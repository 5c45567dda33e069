// The float64 GELU and SwiGLU references: known values and finite differences of the backward.
#include "kernels/reference_activation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/kernels/finite_difference.h"

namespace gpuplan::kernels {
namespace {

TEST(ReferenceActivationTest, GeluKnownValues) {
  // 0.5 (1 + tanh(sqrt(2/pi) 1.044715)) = 0.841192 (tanh approximation; exact GELU: 0.841345).
  EXPECT_NEAR(Gelu(1.0), 0.841192, 1e-6);
  EXPECT_EQ(Gelu(0.0), 0.0);
  // tanh is odd, so gelu(x) - gelu(-x) = x.
  for (double x : {0.3, 1.7, 4.0}) EXPECT_NEAR(Gelu(x) - Gelu(-x), x, 1e-15);
  EXPECT_NEAR(Gelu(10.0), 10.0, 1e-12);
  EXPECT_NEAR(Gelu(-10.0), 0.0, 1e-12);
}

TEST(ReferenceActivationTest, GeluBackwardMatchesFiniteDifferences) {
  const std::vector<double> x = UniformValues(40, -5, 5, 1);
  const std::vector<double> dy = UniformValues(40, -1, 1, 2);
  Expected<std::vector<double>> dx = ReferenceGeluBackward(x, dy);
  ASSERT_TRUE(dx.ok()) << dx.status().message();
  const std::vector<double> numeric = NumericalGradient(
      [&](std::span<const double> v) { return Dot(*ReferenceGeluForward(v), dy); }, x);
  ExpectAllNear("dx", *dx, numeric, 1e-8);
}

TEST(ReferenceActivationTest, SwiGluKnownValue) {
  // silu(1) * 2 = 2 / (1 + e^-1).
  Expected<std::vector<double>> out =
      ReferenceSwiGluForward(std::vector<double>{1.0, 0.0}, std::vector<double>{2.0, 5.0});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_NEAR((*out)[0], 2.0 / (1.0 + std::exp(-1.0)), 1e-15);
  EXPECT_EQ((*out)[1], 0.0);
}

TEST(ReferenceActivationTest, SwiGluBackwardMatchesFiniteDifferences) {
  const std::vector<double> gate = UniformValues(30, -6, 6, 3);
  const std::vector<double> up = UniformValues(30, -2, 2, 4);
  const std::vector<double> dy = UniformValues(30, -1, 1, 5);
  Expected<SwiGluGradients> g = ReferenceSwiGluBackward(gate, up, dy);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ExpectAllNear(
      "dgate", g->dgate,
      NumericalGradient(
          [&](std::span<const double> v) { return Dot(*ReferenceSwiGluForward(v, up), dy); }, gate),
      1e-8);
  ExpectAllNear(
      "dup", g->dup,
      NumericalGradient(
          [&](std::span<const double> v) { return Dot(*ReferenceSwiGluForward(gate, v), dy); }, up),
      1e-8);
}

TEST(ReferenceActivationTest, RejectsEmptyAndMismatchedInputs) {
  EXPECT_EQ(ReferenceGeluForward({}).status().kind(), ErrorKind::kInvalidInput);
  const std::vector<double> a(3, 1.0);
  const std::vector<double> b(4, 1.0);
  EXPECT_EQ(ReferenceGeluBackward(a, b).status().kind(), ErrorKind::kInvalidInput);
  EXPECT_EQ(ReferenceSwiGluForward(a, b).status().kind(), ErrorKind::kInvalidInput);
  EXPECT_EQ(ReferenceSwiGluBackward(a, a, b).status().kind(), ErrorKind::kInvalidInput);
}

}  // namespace
}  // namespace gpuplan::kernels
