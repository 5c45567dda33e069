// The launchers reject bad arguments with Invalid naming them, before touching the GPU: these
// tests run (and pass) on machines without one.
#include <gtest/gtest.h>

#include <cstdint>

#include "kernels/activation.h"
#include "kernels/adam.h"
#include "kernels/attention.h"
#include "kernels/cross_entropy.h"
#include "kernels/norm.h"

namespace gpuplan::kernels {
namespace {

// Stand-ins that are never dereferenced: validation fails before any launch.
alignas(16) unsigned char kDummy[64];
void* Dummy(int offset = 0) { return kDummy + offset; }
float* DummyFloat() { return reinterpret_cast<float*>(kDummy); }

void ExpectInvalid(const Status& st, const std::string& mentions) {
  EXPECT_EQ(st.kind(), ErrorKind::kInvalidInput) << st.message();
  EXPECT_NE(st.message().find(mentions), std::string::npos) << st.message();
}

TEST(KernelArgumentsTest, AttentionRejectsUnsupportedShapesAndDtypes) {
  const AttentionForwardArgs args{Dummy(), Dummy(), Dummy(), Dummy(), DummyFloat()};
  ExpectInvalid(AttentionForward({1, 16, 2, 96}, DType::kBf16, args, nullptr), "head_dim");
  ExpectInvalid(AttentionForward({1, 16, 2, 64}, DType::kFp32, args, nullptr), "dtype");
  ExpectInvalid(AttentionForward({1, 0, 2, 64}, DType::kBf16, args, nullptr), "seq");
  ExpectInvalid(AttentionForward({1, 16, 70000, 64}, DType::kBf16, args, nullptr), "heads");
  AttentionForwardArgs missing = args;
  missing.lse = nullptr;
  ExpectInvalid(AttentionForward({1, 16, 2, 64}, DType::kBf16, missing, nullptr), "lse");
  AttentionForwardArgs misaligned = args;
  misaligned.k = Dummy(2);
  ExpectInvalid(AttentionForward({1, 16, 2, 64}, DType::kBf16, misaligned, nullptr),
                "attention k must");
  EXPECT_TRUE(AttentionSupported({4, 4096, 32, 128}, DType::kFp16).ok());
}

TEST(KernelArgumentsTest, AttentionBackwardNeedsAWorkspaceOfTheRightSize) {
  const AttentionShape shape{2, 100, 3, 64};
  // D (600 floats rounded up to 640) and the dq accumulator (38400 floats).
  EXPECT_EQ(AttentionBackwardWorkspaceBytes(shape), (640 + 38400) * sizeof(float));
  AttentionBackwardArgs args;
  args.q = args.k = args.v = args.o = args.d_o = Dummy();
  args.lse = DummyFloat();
  args.dq = args.dk = args.dv = args.workspace = Dummy();
  args.workspace_bytes = 64;
  ExpectInvalid(AttentionBackward(shape, DType::kBf16, args, nullptr), "workspace");
  args.workspace = nullptr;
  ExpectInvalid(AttentionBackward(shape, DType::kBf16, args, nullptr), "workspace");
}

TEST(KernelArgumentsTest, NormChecksLayerNormOnlyBuffers) {
  NormForwardArgs args;
  args.x = args.weight = Dummy();
  args.y = Dummy();
  args.rstd = DummyFloat();
  ExpectInvalid(NormForward(NormKind::kLayerNorm, {4, 8}, DType::kBf16, 1e-5, args, nullptr),
                "bias");
  args.bias = Dummy();
  ExpectInvalid(NormForward(NormKind::kRmsNorm, {4, 8}, DType::kBf16, 1e-5, args, nullptr), "bias");
  ExpectInvalid(NormForward(NormKind::kRmsNorm, {0, 8}, DType::kBf16, 1e-5, {}, nullptr), "rows");
  ExpectInvalid(NormForward(NormKind::kRmsNorm, {4, 8}, DType::kBf16, -1, {}, nullptr), "eps");
  EXPECT_EQ(NormBackwardWorkspaceBytes(NormKind::kLayerNorm, {1000, 10}), 2 * 512 * 10 * 4u);
  EXPECT_EQ(NormBackwardWorkspaceBytes(NormKind::kRmsNorm, {3, 10}), 3 * 10 * 4u);
}

TEST(KernelArgumentsTest, ElementwiseKernelsNameTheirBuffers) {
  ExpectInvalid(GeluForward(0, DType::kBf16, Dummy(), Dummy(), nullptr), "gelu");
  ExpectInvalid(GeluBackward(8, DType::kBf16, Dummy(), nullptr, Dummy(), nullptr), "gelu dy");
  ExpectInvalid(SwiGluForward(8, DType::kFp16, Dummy(), Dummy(), nullptr, nullptr), "swiglu out");
  ExpectInvalid(
      SwiGluBackward(8, DType::kFp16, Dummy(), Dummy(), Dummy(), Dummy(), nullptr, nullptr),
      "swiglu dup");
}

TEST(KernelArgumentsTest, CrossEntropyAndAdamValidateBeforeLaunching) {
  const int64_t* labels = reinterpret_cast<const int64_t*>(kDummy);
  ExpectInvalid(
      CrossEntropy({0, 10}, DType::kBf16, {Dummy(), labels, DummyFloat(), Dummy()}, nullptr),
      "rows");
  ExpectInvalid(
      CrossEntropy({2, 10}, DType::kBf16, {Dummy(), nullptr, DummyFloat(), Dummy()}, nullptr),
      "labels");
  const AdamWArgs adam{DummyFloat(), DummyFloat(), DummyFloat(), Dummy()};
  AdamWConfig config;
  config.beta2 = 1.5;
  ExpectInvalid(AdamWStep(16, DType::kBf16, config, adam, nullptr), "beta2");
  AdamWArgs misaligned = adam;
  misaligned.exp_avg = reinterpret_cast<float*>(Dummy(4));
  ExpectInvalid(AdamWStep(16, DType::kFp32, AdamWConfig{}, misaligned, nullptr), "exp_avg");
  misaligned = adam;
  misaligned.grad = Dummy(2);
  ExpectInvalid(AdamWStep(16, DType::kBf16, AdamWConfig{}, misaligned, nullptr), "grad");
}

}  // namespace
}  // namespace gpuplan::kernels
