// The CUDA fused AdamW step against the float64 reference, per gradient dtype, over a length
// with a scalar tail (not a multiple of the 4-element vectors).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/adam.h"
#include "kernels/reference_adam.h"
#include "tests/kernels/gpu_test_support.h"

namespace gpuplan::kernels {
namespace {

class AdamGpuTest : public ::testing::TestWithParam<DType> {};

TEST_P(AdamGpuTest, StepMatchesReference) {
  GPUPLAN_SKIP_WITHOUT_GPU();
  const DType grad_dtype = GetParam();
  constexpr size_t kN = 100003;
  // A large lr makes the update, not the fp32 rounding of the parameter, what is compared.
  AdamWConfig config;
  config.lr = 0.1;
  config.weight_decay = 0.1;
  config.step = 5;
  const std::vector<double> param = RandomValues(DType::kFp32, kN, -1, 1, 1);
  const std::vector<double> m = RandomValues(DType::kFp32, kN, -0.1, 0.1, 2);
  const std::vector<double> v = RandomValues(DType::kFp32, kN, 0, 0.01, 3);
  const std::vector<double> grad = RandomValues(grad_dtype, kN, -0.2, 0.2, 4);
  std::vector<double> ref_param = param;
  std::vector<double> ref_m = m;
  std::vector<double> ref_v = v;
  ASSERT_TRUE(ReferenceAdamWStep<double>(config, ref_param, ref_m, ref_v, grad).ok());

  const DeviceArray param_dev = ToDevice(DType::kFp32, param);
  const DeviceArray m_dev = ToDevice(DType::kFp32, m);
  const DeviceArray v_dev = ToDevice(DType::kFp32, v);
  const DeviceArray grad_dev = ToDevice(grad_dtype, grad);
  const Status st = AdamWStep(kN, grad_dtype, config,
                              {param_dev.f32(), m_dev.f32(), v_dev.f32(), grad_dev.get()}, nullptr);
  ASSERT_TRUE(st.ok()) << st.message();
  // fp32 state: fp32 bounds whatever the gradient's dtype (the gradients are exact inputs).
  const Tolerance fp32 = ToleranceFor(DType::kFp32);
  const std::vector<double> got = FromDevice(DType::kFp32, param_dev, kN);
  std::vector<double> got_update(kN);
  std::vector<double> ref_update(kN);
  for (size_t i = 0; i < kN; ++i) {
    got_update[i] = got[i] - param[i];
    ref_update[i] = ref_param[i] - param[i];
  }
  ExpectClose("param update", got_update, ref_update, fp32);
  ExpectClose("exp_avg", FromDevice(DType::kFp32, m_dev, kN), ref_m, fp32);
  ExpectClose("exp_avg_sq", FromDevice(DType::kFp32, v_dev, kN), ref_v, fp32);
}

INSTANTIATE_TEST_SUITE_P(Kernels, AdamGpuTest,
                         ::testing::Values(DType::kFp32, DType::kBf16, DType::kFp16),
                         DTypeCaseName);

}  // namespace
}  // namespace gpuplan::kernels
