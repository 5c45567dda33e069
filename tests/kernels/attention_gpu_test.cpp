// The CUDA flash attention against the float64 reference, forward and backward, per dtype, for
// sequence lengths on and off the 64-row tile boundary and both supported head dims.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "kernels/attention.h"
#include "kernels/reference_attention.h"
#include "tests/kernels/gpu_test_support.h"

namespace gpuplan::kernels {
namespace {

struct AttentionCase {
  DType dtype;
  AttentionShape shape;
};

std::string CaseString(const AttentionCase& c) {
  const AttentionShape& s = c.shape;
  return std::string(DTypeName(c.dtype)) + "_b" + std::to_string(s.batch) + "_s" +
         std::to_string(s.seq) + "_h" + std::to_string(s.heads) + "_d" + std::to_string(s.head_dim);
}

void PrintTo(const AttentionCase& c, std::ostream* os) { *os << CaseString(c); }

std::string AttentionCaseName(const ::testing::TestParamInfo<AttentionCase>& info) {
  return CaseString(info.param);
}

class AttentionGpuTest : public ::testing::TestWithParam<AttentionCase> {};

TEST_P(AttentionGpuTest, ForwardAndBackwardMatchReference) {
  GPUPLAN_SKIP_WITHOUT_GPU();
  const DType dtype = GetParam().dtype;
  const AttentionShape shape = GetParam().shape;
  const Tolerance tol = ToleranceFor(dtype);
  const Tolerance fp32 = ToleranceFor(DType::kFp32);
  const size_t n = static_cast<size_t>(shape.Elements());
  const size_t rows = static_cast<size_t>(shape.StatRows());
  // |q.k| / sqrt(d) has a standard deviation of ~1.3: softmax rows far from uniform.
  const std::vector<double> q = RandomValues(dtype, n, -2, 2, 1);
  const std::vector<double> k = RandomValues(dtype, n, -2, 2, 2);
  const std::vector<double> v = RandomValues(dtype, n, -1, 1, 3);
  const std::vector<double> d_o = RandomValues(dtype, n, -1, 1, 4);
  Expected<AttentionForwardResult> ref = ReferenceAttentionForward(shape, q, k, v);
  ASSERT_TRUE(ref.ok()) << ref.status().message();

  const DeviceArray dq_in = ToDevice(dtype, q);
  const DeviceArray dk_in = ToDevice(dtype, k);
  const DeviceArray dv_in = ToDevice(dtype, v);
  const DeviceArray o(n * DTypeBytes(dtype));
  const DeviceArray lse(rows * sizeof(float));
  const Status fwd = AttentionForward(
      shape, dtype, {dq_in.get(), dk_in.get(), dv_in.get(), o.get(), lse.f32()}, nullptr);
  ASSERT_TRUE(fwd.ok()) << fwd.message();
  ExpectClose("o", FromDevice(dtype, o, n), ref->o, tol);
  // The log-sum-exp comes from fp32 arithmetic on exact products: fp32 bounds.
  ExpectClose("lse", FromDevice(DType::kFp32, lse, rows), ref->lse, fp32);

  // Backward from the rounded o and lse the forward stores, on both sides.
  const std::vector<double> o_stored = RoundTo(dtype, ref->o);
  const std::vector<double> lse_stored = RoundTo(DType::kFp32, ref->lse);
  Expected<AttentionGradients> grads =
      ReferenceAttentionBackward(shape, q, k, v, o_stored, d_o, lse_stored);
  ASSERT_TRUE(grads.ok()) << grads.status().message();
  const DeviceArray o_in = ToDevice(dtype, o_stored);
  const DeviceArray lse_in = ToDevice(DType::kFp32, lse_stored);
  const DeviceArray do_in = ToDevice(dtype, d_o);
  const DeviceArray dq(n * DTypeBytes(dtype));
  const DeviceArray dk(n * DTypeBytes(dtype));
  const DeviceArray dv(n * DTypeBytes(dtype));
  const DeviceArray workspace(AttentionBackwardWorkspaceBytes(shape));
  AttentionBackwardArgs args;
  args.q = dq_in.get();
  args.k = dk_in.get();
  args.v = dv_in.get();
  args.o = o_in.get();
  args.d_o = do_in.get();
  args.lse = lse_in.f32();
  args.dq = dq.get();
  args.dk = dk.get();
  args.dv = dv.get();
  args.workspace = workspace.get();
  args.workspace_bytes = workspace.bytes();
  const Status bwd = AttentionBackward(shape, dtype, args, nullptr);
  ASSERT_TRUE(bwd.ok()) << bwd.message();
  ExpectClose("dq", FromDevice(dtype, dq, n), grads->dq, tol);
  ExpectClose("dk", FromDevice(dtype, dk, n), grads->dk, tol);
  ExpectClose("dv", FromDevice(dtype, dv, n), grads->dv, tol);
}

INSTANTIATE_TEST_SUITE_P(Kernels, AttentionGpuTest,
                         ::testing::Values(AttentionCase{DType::kBf16, {2, 77, 3, 64}},
                                           AttentionCase{DType::kFp16, {2, 77, 3, 64}},
                                           AttentionCase{DType::kBf16, {1, 256, 2, 128}},
                                           AttentionCase{DType::kFp16, {1, 256, 2, 128}},
                                           AttentionCase{DType::kBf16, {1, 130, 2, 128}},
                                           AttentionCase{DType::kFp16, {3, 5, 1, 64}}),
                         AttentionCaseName);

}  // namespace
}  // namespace gpuplan::kernels
