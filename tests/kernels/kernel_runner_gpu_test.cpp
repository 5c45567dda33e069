// The profiler's CUDA KernelRunner (profiler/cuda_kernel_runner.h) times every kernel kind and
// rejects the combinations the kernels do not have.
#include <gtest/gtest.h>

#include <memory>

#include "profiler/cuda_kernel_runner.h"
#include "tests/kernels/gpu_test_support.h"

namespace gpuplan {
namespace {

KernelCase SmallCase(KernelKind kind, Precision dtype) {
  KernelCase c;
  c.kind = kind;
  c.dtype = dtype;
  if (GetKernelInfo(kind).attention) {
    c.batch = 1;
    c.seq = 200;
    c.heads = 2;
    c.head_dim = 64;
  } else {
    c.rows = 64;
    c.cols = kind == KernelKind::kCrossEntropy ? 50257 : 1024;
  }
  return c;
}

TimingPolicy QuickTiming() {
  TimingPolicy t;
  t.warmup_iterations = 1;
  t.min_iterations = 2;
  t.max_iterations = 5;
  t.min_seconds = 0;
  return t;
}

TEST(KernelRunnerGpuTest, TimesEveryKernelKind) {
  GPUPLAN_SKIP_WITHOUT_GPU();
  Expected<std::unique_ptr<KernelRunner>> runner = MakeCudaKernelRunner(0);
  ASSERT_TRUE(runner.ok()) << runner.status().message();
  for (const KernelInfo& info : KernelTable()) {
    for (Precision p : {Precision::kBf16, Precision::kFp16}) {
      Expected<double> s = (*runner)->Seconds(SmallCase(info.kind, p), QuickTiming());
      ASSERT_TRUE(s.ok()) << info.name << ": " << s.status().message();
      EXPECT_GT(*s, 0) << info.name;
      EXPECT_LT(*s, 1) << info.name;
    }
  }
  // fp32 where the kernels have it: everything but attention.
  Expected<double> s =
      (*runner)->Seconds(SmallCase(KernelKind::kAdam, Precision::kFp32), QuickTiming());
  EXPECT_TRUE(s.ok()) << s.status().message();
}

TEST(KernelRunnerGpuTest, RejectsUnsupportedCases) {
  GPUPLAN_SKIP_WITHOUT_GPU();
  Expected<std::unique_ptr<KernelRunner>> runner = MakeCudaKernelRunner(0);
  ASSERT_TRUE(runner.ok()) << runner.status().message();
  KernelCase c = SmallCase(KernelKind::kAttentionForward, Precision::kFp32);
  EXPECT_EQ((*runner)->Seconds(c, QuickTiming()).status().kind(), ErrorKind::kInvalidInput);
  c.dtype = Precision::kBf16;
  c.head_dim = 96;
  EXPECT_EQ((*runner)->Seconds(c, QuickTiming()).status().kind(), ErrorKind::kInvalidInput);
  c = SmallCase(KernelKind::kGeluForward, Precision::kFp8);
  EXPECT_EQ((*runner)->Seconds(c, QuickTiming()).status().kind(), ErrorKind::kInvalidInput);
  c = SmallCase(KernelKind::kRmsNormForward, Precision::kBf16);
  c.rows = 0;
  EXPECT_EQ((*runner)->Seconds(c, QuickTiming()).status().kind(), ErrorKind::kInvalidInput);
}

TEST(KernelRunnerGpuTest, OutOfMemoryIsUnavailable) {
  GPUPLAN_SKIP_WITHOUT_GPU();
  Expected<std::unique_ptr<KernelRunner>> runner = MakeCudaKernelRunner(0);
  ASSERT_TRUE(runner.ok()) << runner.status().message();
  // 2^40 parameters: 4 TiB of fp32 state.
  KernelCase c = SmallCase(KernelKind::kAdam, Precision::kBf16);
  c.cols = int64_t{1} << 40;
  Expected<double> s = (*runner)->Seconds(c, QuickTiming());
  EXPECT_EQ(s.status().kind(), ErrorKind::kUnavailable) << s.status().message();
  EXPECT_NE(s.status().message().find("cannot allocate"), std::string::npos)
      << s.status().message();
}

}  // namespace
}  // namespace gpuplan
