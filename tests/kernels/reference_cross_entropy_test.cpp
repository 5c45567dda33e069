// The float64 softmax cross-entropy reference: uniform logits, finite differences of the mean
// loss, and label validation.
#include "kernels/reference_cross_entropy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "tests/kernels/finite_difference.h"

namespace gpuplan::kernels {
namespace {

TEST(ReferenceCrossEntropyTest, UniformLogitsGiveLogVocab) {
  const MatrixShape shape{2, 50257};
  const std::vector<double> logits(static_cast<size_t>(shape.Elements()), 0.7);
  const std::vector<int64_t> labels = {0, 50256};
  Expected<CrossEntropyResult> r = ReferenceCrossEntropy(shape, logits, labels);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double log_vocab = std::log(50257.0);
  EXPECT_NEAR(r->loss[0], log_vocab, 1e-12);
  EXPECT_NEAR(r->loss[1], log_vocab, 1e-12);
  EXPECT_NEAR(r->mean_loss, log_vocab, 1e-12);
  // (1/V - onehot) / rows.
  EXPECT_NEAR(r->dlogits[1], 0.5 / 50257, 1e-15);
  EXPECT_NEAR(r->dlogits[0], 0.5 * (1.0 / 50257 - 1), 1e-15);
  EXPECT_NEAR(r->dlogits[50257 + 50256], 0.5 * (1.0 / 50257 - 1), 1e-15);
}

TEST(ReferenceCrossEntropyTest, GradientMatchesFiniteDifferencesOfTheMeanLoss) {
  const MatrixShape shape{3, 11};
  const std::vector<double> logits = UniformValues(33, -4, 4, 1);
  const std::vector<int64_t> labels = {3, 0, 10};
  Expected<CrossEntropyResult> r = ReferenceCrossEntropy(shape, logits, labels);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::vector<double> numeric = NumericalGradient(
      [&](std::span<const double> z) { return ReferenceCrossEntropy(shape, z, labels)->mean_loss; },
      logits);
  ExpectAllNear("dlogits", r->dlogits, numeric, 1e-8);
  // Each row of softmax - onehot sums to zero.
  for (int row = 0; row < 3; ++row) {
    double sum = 0;
    for (int c = 0; c < 11; ++c) sum += r->dlogits[row * 11 + c];
    EXPECT_NEAR(sum, 0, 1e-15);
  }
}

TEST(ReferenceCrossEntropyTest, LargeLogitsStayFinite) {
  // The max shift keeps exp() in range: loss of [1000, 0] with label 1 is 1000 + log(1 + e^-1000).
  Expected<CrossEntropyResult> r =
      ReferenceCrossEntropy({1, 2}, std::vector<double>{1000, 0}, std::vector<int64_t>{1});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NEAR(r->loss[0], 1000, 1e-12);
}

TEST(ReferenceCrossEntropyTest, RejectsLabelsOutsideTheVocabulary) {
  const std::vector<double> logits(6, 0.0);
  EXPECT_EQ(ReferenceCrossEntropy({2, 3}, logits, std::vector<int64_t>{0, 3}).status().kind(),
            ErrorKind::kInvalidInput);
  EXPECT_EQ(ReferenceCrossEntropy({2, 3}, logits, std::vector<int64_t>{-1, 0}).status().kind(),
            ErrorKind::kInvalidInput);
  EXPECT_EQ(ReferenceCrossEntropy({2, 3}, logits, std::vector<int64_t>{0}).status().kind(),
            ErrorKind::kInvalidInput);
}

}  // namespace
}  // namespace gpuplan::kernels
