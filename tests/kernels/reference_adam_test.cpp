// The float64 AdamW reference: the first step's sign-like move, bias correction over steps, and
// config validation.
#include "kernels/reference_adam.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/kernels/finite_difference.h"

namespace gpuplan::kernels {
namespace {

TEST(ReferenceAdamTest, FirstStepMovesByLrTimesSignPlusDecay) {
  // Step 1: m_hat = g, v_hat = g^2, so the update is g / (|g| + eps) ~ sign(g).
  AdamWConfig config;
  config.lr = 1e-2;
  config.weight_decay = 0.1;
  std::vector<double> param = UniformValues(20, -1, 1, 1);
  const std::vector<double> before = param;
  const std::vector<double> grad = UniformValues(20, -1, 1, 2);
  std::vector<double> m(20, 0.0);
  std::vector<double> v(20, 0.0);
  ASSERT_TRUE(ReferenceAdamWStep<double>(config, param, m, v, grad).ok());
  for (size_t i = 0; i < param.size(); ++i) {
    const double sign = grad[i] > 0 ? 1.0 : -1.0;
    // |g| / (|g| + eps) differs from 1 by at most eps / |g|.
    EXPECT_NEAR(param[i], before[i] - config.lr * (sign + config.weight_decay * before[i]),
                config.lr * config.eps / std::abs(grad[i]) + 1e-15)
        << i;
    EXPECT_NEAR(m[i], 0.1 * grad[i], 1e-15);
    EXPECT_NEAR(v[i], 0.001 * grad[i] * grad[i], 1e-15);
  }
}

TEST(ReferenceAdamTest, BiasCorrectionMakesAConstantGradientMoveAtLr) {
  // With a constant gradient the bias-corrected moments are exactly g and g^2 at every step.
  AdamWConfig config;
  config.lr = 1e-3;
  config.weight_decay = 0;
  std::vector<double> param = {0.5, -0.25};
  const std::vector<double> grad = {0.3, -2.0};
  std::vector<double> m(2, 0.0);
  std::vector<double> v(2, 0.0);
  for (int64_t step = 1; step <= 5; ++step) {
    config.step = step;
    ASSERT_TRUE(ReferenceAdamWStep<double>(config, param, m, v, grad).ok());
  }
  EXPECT_NEAR(param[0], 0.5 - 5 * 1e-3 * 0.3 / (0.3 + 1e-8), 1e-12);
  EXPECT_NEAR(param[1], -0.25 + 5 * 1e-3 * 2.0 / (2.0 + 1e-8), 1e-12);
}

TEST(ReferenceAdamTest, RejectsBadConfigAndSizesWithoutTouchingTheState) {
  std::vector<double> param = {1.0, 2.0};
  std::vector<double> m = {0.0, 0.0};
  std::vector<double> v = {0.0, 0.0};
  const std::vector<double> grad = {1.0, 1.0};
  AdamWConfig config;
  config.beta1 = 1.0;
  EXPECT_EQ(ReferenceAdamWStep<double>(config, param, m, v, grad).kind(), ErrorKind::kInvalidInput);
  config = AdamWConfig{};
  config.step = 0;
  EXPECT_EQ(ReferenceAdamWStep<double>(config, param, m, v, grad).kind(), ErrorKind::kInvalidInput);
  config = AdamWConfig{};
  config.eps = 0;
  EXPECT_EQ(ReferenceAdamWStep<double>(config, param, m, v, grad).kind(), ErrorKind::kInvalidInput);
  EXPECT_EQ(ReferenceAdamWStep<double>(AdamWConfig{}, param, m, v, std::vector<double>{1.0}).kind(),
            ErrorKind::kInvalidInput);
  EXPECT_EQ(param[0], 1.0);
  EXPECT_EQ(m[0], 0.0);
}

}  // namespace
}  // namespace gpuplan::kernels
