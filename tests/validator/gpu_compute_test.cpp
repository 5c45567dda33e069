// The GPU backend's compute on device 0, without MPI (issue 19): every op of a small bf16 plan's
// program runs through cuBLASLt and the kernels of kernels/, and the arena counts what Megatron's
// mixed precision keeps. Skipped, with the reason, on a machine without a CUDA GPU.
#include "validator/gpu_compute.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/kernels/gpu_test_support.h"
#include "tests/validator/run_pass.h"
#include "tests/validator/test_job.h"
#include "validator/rank_layout.h"

namespace gpuplan {
namespace {

// Two Llama-style layers (h 256, 4 heads of 64, SwiGLU) at 512 tokens in bf16 on one GPU.
JobSpec SmallBf16Job() {
  JobSpec job = TinyCpuJob({.seq_len = 512}, 2);
  job.model.hidden_size = 256;
  job.model.ffn_hidden_size = 704;
  job.model.num_attention_heads = 4;
  job.model.num_kv_heads = 4;
  job.cluster.gpu = "h100-sxm5-80gb";
  job.cluster.inter_node = "ib-ndr-400";
  job.training.precision = Precision::kBf16;
  const Status st = ValidateJob(job, BuiltinDb());
  EXPECT_TRUE(st.ok()) << st.message();
  return job;
}

TEST(GpuCompute, RunsEveryOpOfAStepAndCountsItsMemory) {
  GPUPLAN_SKIP_WITHOUT_GPU();
  const JobSpec job = SmallBf16Job();
  const std::vector<ProgramStep> program = RankProgram(job, MakeRankLayout(job), 0);
  Expected<std::unique_ptr<GpuCompute>> c = GpuCompute::Create(job, program, 0, 0, 0);
  ASSERT_TRUE(c.ok()) << c.status().message();
  // bf16 parameters and fp32 gradients.
  const double params = static_cast<double>((*c)->Parameters());
  EXPECT_EQ((*c)->Arena().LiveBytes(), 6.0 * params);
  // The forward's activations stay until the backward.
  double after_forward = 0;
  for (const ProgramStep& step : program) {
    RunPass(**c, job, step);
    if (step.is_pass && step.pass.kind == PassKind::kForward) {
      after_forward = std::max(after_forward, (*c)->Arena().LiveBytes());
    }
  }
  EXPECT_GT(after_forward, 6.0 * params);
  // fp32 master weights and both AdamW moments join at the optimizer step (no ZeRO: all of
  // them); every activation is freed. The peak is the larger of the two: for this small model
  // (activations under 12 bytes per parameter) the optimizer state's (seen on an H200,
  // 2026-11-30).
  const double after_one = (*c)->Arena().LiveBytes();
  EXPECT_GT(after_one, 6.0 * params);
  EXPECT_LE(after_one, 18.0 * params);
  EXPECT_GE((*c)->Arena().PeakBytes(), std::max(after_one, after_forward));
  // A second step allocates what the first freed: no buffer leaks.
  ASSERT_TRUE((*c)->ResetPeaks().ok());
  for (const ProgramStep& step : program) RunPass(**c, job, step);
  EXPECT_EQ((*c)->Arena().LiveBytes(), after_one);
  Expected<RankCompute::AllocatorUse> use = (*c)->Allocator();
  ASSERT_TRUE(use.ok()) << use.status().message();
  EXPECT_GE(use->peak_bytes, (*c)->Arena().PeakBytes() - after_one);
  EXPECT_GE(use->device_used_bytes, use->peak_bytes);
}

// Ring attention (validator/gpu_compute.h): the forward keeps one output and log-sum-exp
// however many steps it runs; the other steps' outputs count while the op runs and are freed
// when it ends.
TEST(GpuCompute, RingAttentionKeepsOneOutputAndFreesItsSteps) {
  GPUPLAN_SKIP_WITHOUT_GPU();
  const JobSpec job = SmallBf16Job();
  const std::vector<ProgramStep> program = RankProgram(job, MakeRankLayout(job), 0);
  Expected<std::unique_ptr<GpuCompute>> c = GpuCompute::Create(job, program, 0, 0, 0);
  ASSERT_TRUE(c.ok()) << c.status().message();
  MemoryArena& arena = (*c)->Arena();
  RankOp op;
  op.name = "attention_fwd";
  op.shape = "b1 s256 h4 d64 ring3";
  const double o = 2.0 * 256 * 4 * 64, lse = 4.0 * 4 * 256;  // bf16 output, fp32 lse
  const double before = arena.LiveBytes();
  arena.ResetPeak();
  const Status st = (*c)->Run(op, OpSite{});
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(arena.LiveBytes() - before, o + lse);
  EXPECT_GE(arena.PeakBytes() - before, 2 * (o + lse));
  op.name = "attention_bwd";
  const Status bwd = (*c)->Run(op, OpSite{});
  ASSERT_TRUE(bwd.ok()) << bwd.message();
}

TEST(GpuCompute, AHeadDimensionTheKernelsLackIsInvalid) {
  GPUPLAN_SKIP_WITHOUT_GPU();
  JobSpec job = SmallBf16Job();
  job.model.num_attention_heads = 8;  // head_dim 32
  job.model.num_kv_heads = 8;
  const std::vector<ProgramStep> program = RankProgram(job, MakeRankLayout(job), 0);
  Expected<std::unique_ptr<GpuCompute>> c = GpuCompute::Create(job, program, 0, 0, 0);
  ASSERT_TRUE(c.ok()) << c.status().message();
  RankOp op;
  op.name = "attention_fwd";
  op.shape = "b1 s512 h8 d32";
  const Status st = (*c)->Run(op, OpSite{});
  EXPECT_EQ(st.kind(), ErrorKind::kInvalidInput) << st.message();
}

}  // namespace
}  // namespace gpuplan
