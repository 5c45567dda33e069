// The CUDA fused cross-entropy against the float64 reference, per dtype, with the GPT-2
// vocabulary (50257, no multiple of the block) and in place.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/cross_entropy.h"
#include "kernels/reference_cross_entropy.h"
#include "tests/kernels/gpu_test_support.h"

namespace gpuplan::kernels {
namespace {

class CrossEntropyGpuTest : public ::testing::TestWithParam<DType> {};

// Runs the kernel on random logits, out of place or in place, and compares the per-row losses,
// their mean and the gradient with the reference.
void CheckCrossEntropy(DType dtype, const MatrixShape& shape, bool in_place) {
  const size_t n = static_cast<size_t>(shape.Elements());
  const size_t rows = static_cast<size_t>(shape.rows);
  const std::vector<double> logits = RandomValues(dtype, n, -4, 4, 1);
  std::vector<int64_t> labels(rows);
  for (size_t r = 0; r < rows; ++r) labels[r] = static_cast<int64_t>(r) * 7919 % shape.cols;
  labels[0] = shape.cols - 1;
  Expected<CrossEntropyResult> ref = ReferenceCrossEntropy(shape, logits, labels);
  ASSERT_TRUE(ref.ok()) << ref.status().message();

  const DeviceArray logits_dev = ToDevice(dtype, logits);
  const DeviceArray labels_dev = ToDevice(labels);
  const DeviceArray loss(rows * sizeof(float));
  const DeviceArray dlogits(in_place ? 0 : n * DTypeBytes(dtype));
  const DeviceArray& grad = in_place ? logits_dev : dlogits;
  const Status st = CrossEntropy(
      shape, dtype,
      {logits_dev.get(), static_cast<const int64_t*>(labels_dev.get()), loss.f32(), grad.get()},
      nullptr);
  ASSERT_TRUE(st.ok()) << st.message();
  // Loss and its mean come from fp32 arithmetic on exact inputs: fp32 bounds.
  const std::vector<double> got_loss = FromDevice(DType::kFp32, loss, rows);
  ExpectClose("loss", got_loss, ref->loss, ToleranceFor(DType::kFp32));
  double mean = 0;
  for (double l : got_loss) mean += l / static_cast<double>(rows);
  EXPECT_NEAR(mean, ref->mean_loss, 1e-5 * ref->mean_loss);
  ExpectClose("dlogits", FromDevice(dtype, grad, n), ref->dlogits, ToleranceFor(dtype));
}

TEST_P(CrossEntropyGpuTest, MatchesReferenceOnGpt2Vocabulary) {
  GPUPLAN_SKIP_WITHOUT_GPU();
  CheckCrossEntropy(GetParam(), {3, 50257}, false);
}

TEST_P(CrossEntropyGpuTest, MatchesReferenceInPlaceOnASmallVocabulary) {
  GPUPLAN_SKIP_WITHOUT_GPU();
  CheckCrossEntropy(GetParam(), {17, 10}, true);
}

INSTANTIATE_TEST_SUITE_P(Kernels, CrossEntropyGpuTest,
                         ::testing::Values(DType::kFp32, DType::kBf16, DType::kFp16),
                         DTypeCaseName);

}  // namespace
}  // namespace gpuplan::kernels
