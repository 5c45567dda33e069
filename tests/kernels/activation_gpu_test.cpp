// The CUDA GELU and SwiGLU kernels against the float64 reference, forward and backward, per dtype.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/activation.h"
#include "kernels/reference_activation.h"
#include "tests/kernels/gpu_test_support.h"

namespace gpuplan::kernels {
namespace {

// Odd, so that no launch covers it exactly.
constexpr size_t kActivationElements = 100003;

class ActivationGpuTest : public ::testing::TestWithParam<DType> {};

TEST_P(ActivationGpuTest, GeluMatchesReference) {
  GPUPLAN_SKIP_WITHOUT_GPU();
  const DType dtype = GetParam();
  const std::vector<double> x = RandomValues(dtype, kActivationElements, -6, 6, 1);
  const std::vector<double> dy = RandomValues(dtype, kActivationElements, -1, 1, 2);
  const DeviceArray x_dev = ToDevice(dtype, x);
  const DeviceArray dy_dev = ToDevice(dtype, dy);
  const DeviceArray y(kActivationElements * DTypeBytes(dtype));
  const DeviceArray dx(kActivationElements * DTypeBytes(dtype));
  ASSERT_TRUE(GeluForward(kActivationElements, dtype, x_dev.get(), y.get(), nullptr).ok());
  ASSERT_TRUE(
      GeluBackward(kActivationElements, dtype, x_dev.get(), dy_dev.get(), dx.get(), nullptr).ok());
  ExpectClose("y", FromDevice(dtype, y, kActivationElements), *ReferenceGeluForward(x),
              ToleranceFor(dtype));
  ExpectClose("dx", FromDevice(dtype, dx, kActivationElements), *ReferenceGeluBackward(x, dy),
              ToleranceFor(dtype));
}

TEST_P(ActivationGpuTest, SwiGluMatchesReference) {
  GPUPLAN_SKIP_WITHOUT_GPU();
  const DType dtype = GetParam();
  const std::vector<double> gate = RandomValues(dtype, kActivationElements, -6, 6, 3);
  const std::vector<double> up = RandomValues(dtype, kActivationElements, -2, 2, 4);
  const std::vector<double> dy = RandomValues(dtype, kActivationElements, -1, 1, 5);
  const DeviceArray gate_dev = ToDevice(dtype, gate);
  const DeviceArray up_dev = ToDevice(dtype, up);
  const DeviceArray dy_dev = ToDevice(dtype, dy);
  const DeviceArray out(kActivationElements * DTypeBytes(dtype));
  const DeviceArray dgate(kActivationElements * DTypeBytes(dtype));
  const DeviceArray dup(kActivationElements * DTypeBytes(dtype));
  ASSERT_TRUE(
      SwiGluForward(kActivationElements, dtype, gate_dev.get(), up_dev.get(), out.get(), nullptr)
          .ok());
  ASSERT_TRUE(SwiGluBackward(kActivationElements, dtype, gate_dev.get(), up_dev.get(), dy_dev.get(),
                             dgate.get(), dup.get(), nullptr)
                  .ok());
  const Tolerance tol = ToleranceFor(dtype);
  ExpectClose("out", FromDevice(dtype, out, kActivationElements), *ReferenceSwiGluForward(gate, up),
              tol);
  Expected<SwiGluGradients> ref = ReferenceSwiGluBackward(gate, up, dy);
  ASSERT_TRUE(ref.ok()) << ref.status().message();
  ExpectClose("dgate", FromDevice(dtype, dgate, kActivationElements), ref->dgate, tol);
  ExpectClose("dup", FromDevice(dtype, dup, kActivationElements), ref->dup, tol);
}

INSTANTIATE_TEST_SUITE_P(Kernels, ActivationGpuTest,
                         ::testing::Values(DType::kFp32, DType::kBf16, DType::kFp16),
                         DTypeCaseName);

}  // namespace
}  // namespace gpuplan::kernels
