// The CUDA RMSNorm and LayerNorm against the float64 reference, forward and backward, per dtype,
// including more rows than the backward has partial-sum blocks (512).
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "kernels/norm.h"
#include "kernels/reference_norm.h"
#include "tests/kernels/gpu_test_support.h"

namespace gpuplan::kernels {
namespace {

struct NormCase {
  NormKind kind;
  DType dtype;
  MatrixShape shape;
};

std::string CaseString(const NormCase& c) {
  return std::string(NormKindName(c.kind)) + "_" + std::string(DTypeName(c.dtype)) + "_" +
         std::to_string(c.shape.rows) + "x" + std::to_string(c.shape.cols);
}

void PrintTo(const NormCase& c, std::ostream* os) { *os << CaseString(c); }

std::string NormCaseName(const ::testing::TestParamInfo<NormCase>& info) {
  return CaseString(info.param);
}

class NormGpuTest : public ::testing::TestWithParam<NormCase> {};

TEST_P(NormGpuTest, ForwardAndBackwardMatchReference) {
  GPUPLAN_SKIP_WITHOUT_GPU();
  const auto [kind, dtype, shape] = GetParam();
  const bool layer = kind == NormKind::kLayerNorm;
  const Tolerance tol = ToleranceFor(dtype);
  const Tolerance fp32 = ToleranceFor(DType::kFp32);
  const size_t n = static_cast<size_t>(shape.Elements());
  const size_t rows = static_cast<size_t>(shape.rows);
  const size_t cols = static_cast<size_t>(shape.cols);
  constexpr double kEps = 1e-5;
  // An offset mean, so that LayerNorm's centring matters.
  const std::vector<double> x = RandomValues(dtype, n, -1, 3, 1);
  const std::vector<double> w = RandomValues(dtype, cols, 0.5, 1.5, 2);
  const std::vector<double> b = layer ? RandomValues(dtype, cols, -1, 1, 3) : std::vector<double>{};
  const std::vector<double> dy = RandomValues(dtype, n, -1, 1, 4);
  Expected<NormForwardResult> ref = ReferenceNormForward(kind, shape, x, w, b, kEps);
  ASSERT_TRUE(ref.ok()) << ref.status().message();

  const DeviceArray x_dev = ToDevice(dtype, x);
  const DeviceArray w_dev = ToDevice(dtype, w);
  const DeviceArray y(n * DTypeBytes(dtype));
  const DeviceArray mean(layer ? rows * sizeof(float) : 0);
  const DeviceArray rstd(rows * sizeof(float));
  const DeviceArray b_in = ToDevice(dtype, b);
  NormForwardArgs fwd;
  fwd.x = x_dev.get();
  fwd.weight = w_dev.get();
  fwd.bias = layer ? b_in.get() : nullptr;
  fwd.y = y.get();
  fwd.mean = layer ? mean.f32() : nullptr;
  fwd.rstd = rstd.f32();
  const Status fwd_status = NormForward(kind, shape, dtype, kEps, fwd, nullptr);
  ASSERT_TRUE(fwd_status.ok()) << fwd_status.message();
  ExpectClose("y", FromDevice(dtype, y, n), ref->y, tol);
  ExpectClose("rstd", FromDevice(DType::kFp32, rstd, rows), ref->rstd, fp32);
  if (layer) ExpectClose("mean", FromDevice(DType::kFp32, mean, rows), ref->mean, fp32);

  // Backward from the fp32 statistics the forward stores, on both sides.
  const std::vector<double> mean_stored = RoundTo(DType::kFp32, ref->mean);
  const std::vector<double> rstd_stored = RoundTo(DType::kFp32, ref->rstd);
  Expected<NormGradients> grads =
      ReferenceNormBackward(kind, shape, x, w, mean_stored, rstd_stored, dy);
  ASSERT_TRUE(grads.ok()) << grads.status().message();
  const DeviceArray mean_in = ToDevice(DType::kFp32, mean_stored);
  const DeviceArray rstd_in = ToDevice(DType::kFp32, rstd_stored);
  const DeviceArray dy_dev = ToDevice(dtype, dy);
  const DeviceArray dx(n * DTypeBytes(dtype));
  const DeviceArray dweight(cols * sizeof(float));
  const DeviceArray dbias(cols * sizeof(float));
  const DeviceArray workspace(NormBackwardWorkspaceBytes(kind, shape));
  NormBackwardArgs bwd;
  bwd.x = x_dev.get();
  bwd.weight = w_dev.get();
  bwd.dy = dy_dev.get();
  bwd.mean = layer ? mean_in.f32() : nullptr;
  bwd.rstd = rstd_in.f32();
  bwd.dx = dx.get();
  bwd.dweight = dweight.f32();
  bwd.dbias = layer ? dbias.f32() : nullptr;
  bwd.workspace = workspace.get();
  bwd.workspace_bytes = workspace.bytes();
  const Status bwd_status = NormBackward(kind, shape, dtype, bwd, nullptr);
  ASSERT_TRUE(bwd_status.ok()) << bwd_status.message();
  ExpectClose("dx", FromDevice(dtype, dx, n), grads->dx, tol);
  ExpectClose("dweight", FromDevice(DType::kFp32, dweight, cols), grads->dweight, tol);
  if (layer) ExpectClose("dbias", FromDevice(DType::kFp32, dbias, cols), grads->dbias, tol);
}

std::vector<NormCase> NormCases() {
  std::vector<NormCase> cases;
  for (NormKind kind : {NormKind::kRmsNorm, NormKind::kLayerNorm}) {
    for (DType dtype : {DType::kFp32, DType::kBf16, DType::kFp16}) {
      cases.push_back({kind, dtype, {3, 1000}});
      cases.push_back({kind, dtype, {600, 96}});
    }
  }
  cases.push_back({NormKind::kRmsNorm, DType::kBf16, {5, 8192}});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Kernels, NormGpuTest, ::testing::ValuesIn(NormCases()), NormCaseName);

}  // namespace
}  // namespace gpuplan::kernels
