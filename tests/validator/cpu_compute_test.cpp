// The CPU backend's compute on one rank, without MPI: what it refuses, that every op of a tiny
// plan's program runs, and that its arena counts what a forward keeps until the backward.
#include "validator/cpu_compute.h"

#include <gtest/gtest.h>

#include "simulator/shard.h"
#include "tests/validator/run_pass.h"
#include "tests/validator/test_job.h"
#include "validator/rank_layout.h"

namespace gpuplan {
namespace {

// Two layers at 128 tokens on one rank: 1F1B over 4 micro-batches.
JobSpec TwoLayerJob() { return TinyCpuJob({.seq_len = 128}, 2); }

TEST(CpuCompute, RefusesWhatTheCpuBackendDoesNotRun) {
  JobSpec job = TwoLayerJob();
  job.training.precision = Precision::kBf16;
  EXPECT_EQ(CheckCpuExecutable(job).message(),
            "training.precision: the CPU backend computes in fp32 (got bf16)");
  job = TwoLayerJob();
  job.training.attention = AttentionImpl::kUnfused;
  EXPECT_NE(CheckCpuExecutable(job).message().find("training.attention"), std::string::npos);
  job = TwoLayerJob();
  job.training.lora = {.enabled = true, .rank = 8, .targets = kLoraAll};
  EXPECT_TRUE(CheckCpuExecutable(job).ok());
  job.training.lora.base = BaseWeights::kBf16;
  EXPECT_EQ(CheckCpuExecutable(job).message(),
            "training.lora.base: the CPU backend keeps the frozen base in fp32 beside its adapters "
            "(base 'same'); a 16-bit base is run by the GPU backend");
}

TEST(GpuCompute, RefusesWhatTheGpuBackendDoesNotRun) {
  JobSpec job = TwoLayerJob();
  EXPECT_EQ(CheckGpuExecutable(job).message(),
            "training.precision: the GPU backend executes bf16 and fp16 plans (got fp32)");
  job.training.precision = Precision::kBf16;
  EXPECT_TRUE(CheckGpuExecutable(job).ok());
  job.training.lora = {.enabled = true, .rank = 8, .targets = kLoraAll};
  EXPECT_TRUE(CheckGpuExecutable(job).ok());
  job.training.lora.base = BaseWeights::kNf4;
  EXPECT_EQ(CheckGpuExecutable(job).message(),
            "training.lora.base: the GPU backend keeps the frozen base at the training precision; "
            "a base stored in fp8 or nf4 (converted before each GEMM) is not run yet");
  job.training.lora = {};
  job.training.activation_offload_layers = 1;
  EXPECT_EQ(CheckGpuExecutable(job).message(),
            "training.activation_offload_layers: the GPU backend keeps every layer's activations "
            "on its device (no offload yet)");
}

TEST(CpuCompute, ForwardKeepsItsOutputsUntilTheBackward) {
  const JobSpec job = TwoLayerJob();
  const std::vector<ProgramStep> program = RankProgram(job, MakeRankLayout(job), 0);
  Expected<std::unique_ptr<CpuCompute>> c = CpuCompute::Create(job, program, 0, 0);
  ASSERT_TRUE(c.ok()) << c.status().message();
  // Parameters and gradients: every GEMM weight, norm and the untied embedding and LM head.
  const double h = 128, qkv = 128 + 2 * 64, f = 344, v = 4096;
  const double layer = h * qkv + h * h + h * 2 * f + f * h + 2 * h;  // + 2 norms' weights...
  EXPECT_GE(static_cast<double>((*c)->Parameters()), 2 * (layer - h) + 2 * v * h);
  const double state = (*c)->Arena().LiveBytes();
  EXPECT_EQ(state, 8.0 * static_cast<double>((*c)->Parameters()));
  // 1F1B on one stage: F mb0, B mb0, F mb1, B mb1, ..., then the optimizer.
  ASSERT_EQ(program[0].label, "F mb0 c0");
  RunPass(**c, job, program[0]);
  const double after_forward = (*c)->Arena().LiveBytes();
  // Kept: at least the logits and their gradient (2 x 128 x 4096 floats).
  EXPECT_GT(after_forward - state, 4.0 * 2 * 128 * 4096);
  RunPass(**c, job, program[1]);
  const double scratch = (*c)->Arena().LiveBytes() - state;
  EXPECT_LT(scratch, after_forward - state);  // the forward's outputs are freed, scratch stays
  for (size_t i = 2; i < program.size(); ++i) RunPass(**c, job, program[i]);
  // AdamW's two moments for every parameter (no ZeRO) joined at the optimizer step.
  EXPECT_EQ((*c)->Arena().LiveBytes(),
            state + scratch + 8.0 * static_cast<double>((*c)->Parameters()));
  EXPECT_GE((*c)->Arena().PeakBytes(), after_forward);
}

// A selective recomputation of modules keeps less: after a MoE layer's forward the rank holds
// neither the pre-MLP norm's output and statistics (layernorm) nor the routed experts' activation
// output (moe_act); the backward re-runs both, holding each layer's re-runs until its backward
// ends, and finishes where the backward without them does.
TEST(CpuCompute, RecomputedModulesKeepLessUntilTheBackward) {
  struct Held {
    double after_forward, after_backward;
  };
  auto run = [](uint32_t modules) {
    JobSpec job = TwoLayerJob();
    job.model.moe_num_experts = 4;
    job.model.moe_top_k = 2;
    job.model.moe_shared_experts = 1;
    job.training.framework = *BuiltinDb().FindFramework("megatron-core");
    job.training.recompute = Recompute::kSelective;
    job.training.recompute_modules = modules;
    const Status valid = ValidateJob(job, BuiltinDb());
    EXPECT_TRUE(valid.ok()) << valid.message();
    const std::vector<ProgramStep> program = RankProgram(job, MakeRankLayout(job), 0);
    Expected<std::unique_ptr<CpuCompute>> c = CpuCompute::Create(job, program, 0, 0);
    EXPECT_TRUE(c.ok()) << c.status().message();
    if (!c.ok()) return Held{};
    const double state = (*c)->Arena().LiveBytes();
    EXPECT_EQ(program[0].label, "F mb0 c0");
    RunPass(**c, job, program[0]);
    Held held{(*c)->Arena().LiveBytes() - state, 0};
    RunPass(**c, job, program[1]);
    held.after_backward = (*c)->Arena().LiveBytes() - state;
    return held;
  };
  const Held kept = run(kRecomputeCoreAttn);
  const Held discarded = run(kRecomputeCoreAttn | kRecomputeLayernorm | kRecomputeMoeAct);
  // Per layer: 128 x 128 norm outputs and 128 rstd; 128 x top_k 2 routed rows of 344.
  const double per_layer = 4.0 * (128 * 128 + 128 + 256 * 344);
  EXPECT_EQ(kept.after_forward - discarded.after_forward, 2 * per_layer);
  EXPECT_EQ(kept.after_backward, discarded.after_backward);
}

// LoRA: the rank's parameters are its adapters, first, then the frozen base; it holds gradients
// and AdamW moments for the adapters alone. A forward with an adapter on q only keeps, against
// full training, each adapter's x·A but neither the FC1 input (the second norm's output and
// statistics) nor the FC2 input (the SwiGLU output), nor the LM head's input (the final norm's).
TEST(CpuCompute, LoraTrainsOnlyItsAdapters) {
  JobSpec job = TwoLayerJob();
  job.training.lora = {.enabled = true, .rank = 8, .targets = kLoraAll};
  std::vector<ProgramStep> program = RankProgram(job, MakeRankLayout(job), 0);
  Expected<std::unique_ptr<CpuCompute>> c = CpuCompute::Create(job, program, 0, 0);
  ASSERT_TRUE(c.ok()) << c.status().message();
  // r (in + out) per adapter, each a multiple of 64 elements here: the cost model's count.
  const double adapters = 2 * LoraParamsPerLayer(job.model, job.training.lora);
  EXPECT_EQ(static_cast<double>((*c)->TrainableParameters()), adapters);
  const double params = static_cast<double>((*c)->Parameters());
  const double state = (*c)->Arena().LiveBytes();
  EXPECT_EQ(state, 4.0 * params + 4.0 * adapters);
  for (const ProgramStep& step : program) RunPass(**c, job, step);
  EXPECT_GE((*c)->Arena().LiveBytes(), state + 8.0 * adapters);  // AdamW's moments joined

  auto kept_after_forward = [](const JobSpec& j) {
    const std::vector<ProgramStep> p = RankProgram(j, MakeRankLayout(j), 0);
    Expected<std::unique_ptr<CpuCompute>> r = CpuCompute::Create(j, p, 0, 0);
    EXPECT_TRUE(r.ok()) << r.status().message();
    if (!r.ok()) return 0.0;
    const double before = (*r)->Arena().LiveBytes();
    RunPass(**r, j, p[0]);
    return (*r)->Arena().LiveBytes() - before;
  };
  const double full = kept_after_forward(TwoLayerJob());
  job.training.lora.targets = kLoraQ;
  const double lora = kept_after_forward(job);
  const double T = 128, h = 128, f = 344, r = 8;
  const double per_layer = 4 * ((T * h + T) + T * f - T * r);
  EXPECT_EQ(full - lora, 2 * per_layer + 4 * (T * h + T));
}

// Ring attention's steps: the forward keeps one output and log-sum-exp however many steps it
// merges; the steps' partial results count while the op runs and are freed when it ends.
TEST(CpuCompute, RingAttentionKeepsOneOutputAndFreesItsSteps) {
  const JobSpec job = TwoLayerJob();
  const std::vector<ProgramStep> program = RankProgram(job, MakeRankLayout(job), 0);
  Expected<std::unique_ptr<CpuCompute>> c = CpuCompute::Create(job, program, 0, 0);
  ASSERT_TRUE(c.ok()) << c.status().message();
  MemoryArena& arena = (*c)->Arena();
  RankOp op;
  op.name = "attention_fwd";
  const double o = 4.0 * 64 * 4 * 16, lse = 4.0 * 64 * 4;  // b1 s64 h4 d16, in bytes
  double before = arena.LiveBytes();
  op.shape = "b1 s64 h4 d16";
  ASSERT_TRUE((*c)->Run(op, OpSite{}).ok());
  EXPECT_EQ(arena.LiveBytes() - before, o + lse);
  before = arena.LiveBytes();
  arena.ResetPeak();
  op.shape = "b1 s64 h4 d16 ring3";
  const Status fwd = (*c)->Run(op, OpSite{});
  ASSERT_TRUE(fwd.ok()) << fwd.message();
  EXPECT_EQ(arena.LiveBytes() - before, o + lse);
  EXPECT_EQ(arena.PeakBytes() - before, 2 * (o + lse));  // + one step's partial o and lse
  op.name = "attention_bwd";
  before = arena.LiveBytes();
  arena.ResetPeak();
  const Status bwd = (*c)->Run(op, OpSite{});
  ASSERT_TRUE(bwd.ok()) << bwd.message();
  EXPECT_EQ(arena.LiveBytes() - before, 3 * o);                  // dq, dk, dv
  EXPECT_EQ(arena.PeakBytes() - before, 3 * o + o + 2 * o / 2);  // + a step's dq, dk, dv (s/2)
  for (const char* bad : {"b1 s64 h4 d16 ring1", "b1 s64 h4 d16 ring2x", "b1 s64 h4 d16 cp2"}) {
    op.shape = bad;
    EXPECT_EQ((*c)->Run(op, OpSite{}).message(),
              "compute op 'attention_bwd': shape '" + std::string(bad) +
                  "' is not 'b<batch> s<seq> h<heads> d<head_dim>[ ring<n>]'");
  }
}

TEST(CpuCompute, UnknownOpIsInvalid) {
  const JobSpec job = TwoLayerJob();
  const std::vector<ProgramStep> program = RankProgram(job, MakeRankLayout(job), 0);
  Expected<std::unique_ptr<CpuCompute>> c = CpuCompute::Create(job, program, 0, 0);
  ASSERT_TRUE(c.ok());
  RankOp op;
  op.name = "softmax_fwd";
  op.shape = "4 x 4";
  EXPECT_EQ((*c)->Run(op, OpSite{}).message(),
            "compute op 'softmax_fwd': not one the validator's backends run");
  op.name = "gemm qkv";
  op.shape = "4 x 4";
  EXPECT_EQ((*c)->Run(op, OpSite{}).message(),
            "compute op 'gemm qkv': shape '4 x 4' is not 'm x n x k'");
}

}  // namespace
}  // namespace gpuplan
