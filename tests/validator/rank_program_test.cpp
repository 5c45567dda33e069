// Rank programs: pipeline sends match receives, the schedule's passes all appear, TP/DP/ZeRO
// collectives follow the plan.
#include "validator/rank_program.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "simulator/shard.h"
#include "simulator/step_costs.h"
#include "tests/validator/test_job.h"

namespace gpuplan {
namespace {

JobSpec Job(int64_t tp, int64_t dp, int64_t pp, Schedule schedule = Schedule::k1F1B,
            int64_t vpp = 1) {
  return TestJob({.tp = tp, .dp = dp, .pp = pp, .vpp = vpp, .schedule = schedule});
}

int Count(const std::vector<RankOp>& ops, const std::string& name) {
  int n = 0;
  for (const RankOp& op : ops) n += op.name == name ? 1 : 0;
  return n;
}

// Every (sender, receiver) pair carries as many messages and bytes in one direction as the
// receiver expects from that sender.
void ExpectSendsMatchReceives(const JobSpec& job) {
  const RankLayout l = MakeRankLayout(job);
  std::map<std::pair<int64_t, int64_t>, std::pair<int, double>> sent, received;
  for (int64_t r = 0; r < l.world_size; ++r) {
    for (const ProgramStep& s : RankProgram(job, l, r)) {
      for (const RankOp& op : s.ops) {
        if (op.kind == RankOpKind::kSend) {
          auto& e = sent[{r, op.peer}];
          ++e.first;
          e.second += op.bytes;
        } else if (op.kind == RankOpKind::kRecv) {
          auto& e = received[{op.peer, r}];
          ++e.first;
          e.second += op.bytes;
        }
      }
    }
  }
  EXPECT_FALSE(sent.empty());
  EXPECT_EQ(sent, received);
}

TEST(RankProgram, PipelineSendsMatchReceives) {
  ExpectSendsMatchReceives(Job(2, 1, 4));
  ExpectSendsMatchReceives(Job(1, 2, 4, Schedule::kInterleaved, 2));
  ExpectSendsMatchReceives(Job(1, 1, 4, Schedule::kZeroBubbleH1));
}

TEST(RankProgram, RunsEveryPassOfTheScheduleWithItsPeers) {
  const JobSpec job = Job(1, 1, 4, Schedule::kInterleaved, 2);
  const RankLayout l = MakeRankLayout(job);
  const int64_t m = MicrobatchesPerStep(job);
  const std::vector<ProgramStep> steps = RankProgram(job, l, 3);  // last stage
  const auto order = PassOrder(job.parallel.schedule, 4, m, 2, 3);
  ASSERT_GE(steps.size(), order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_TRUE(steps[i].is_pass);
    EXPECT_EQ(steps[i].pass.microbatch, order[i].microbatch);
    EXPECT_EQ(steps[i].pass.chunk, order[i].chunk);
  }
  // Chunk 0 of the last stage feeds chunk 1 of the first stage (virtual stage 3 -> 4).
  for (const ProgramStep& s : steps) {
    if (!s.is_pass || s.pass.kind != PassKind::kForward || s.pass.chunk != 0) continue;
    ASSERT_EQ(s.ops.back().kind, RankOpKind::kSend);
    EXPECT_EQ(s.ops.back().peer, 0);
  }
}

TEST(RankProgram, TensorParallelCollectivesPerLayer) {
  JobSpec job = Job(4, 2, 1);
  std::vector<RankOp> fwd = LayerProgram(job, PassKind::kForward, false);
  std::vector<RankOp> bwd = LayerProgram(job, PassKind::kBackward, false);
  EXPECT_EQ(Count(fwd, "all_reduce"), 2);  // after attention and MLP (Shoeybi et al. 2019)
  EXPECT_EQ(Count(bwd, "all_reduce"), 2);
  EXPECT_EQ(Count(bwd, "gemm qkv wgrad"), 1);
  job.parallel.sequence_parallel = true;
  fwd = LayerProgram(job, PassKind::kForward, false);
  EXPECT_EQ(Count(fwd, "all_reduce"), 0);
  EXPECT_EQ(Count(fwd, "all_gather"), 2);
  EXPECT_EQ(Count(fwd, "reduce_scatter"), 2);
  // Each TP collective moves the T x h activation of the micro-batch.
  for (const RankOp& op : fwd) {
    if (op.kind == RankOpKind::kCollective) {
      EXPECT_DOUBLE_EQ(op.bytes, 2048.0 * 4096 * 2);
    }
  }
}

// Context parallelism runs ring attention: each rank's s/cp tokens, its attention over cp steps
// (the cost model's "Context parallelism"), the K/V chunks passed cp - 1 times.
TEST(RankProgram, ContextParallelRunsRingAttention) {
  const JobSpec job = TestJob({.cp = 4, .dp = 2});
  for (PassKind pass : {PassKind::kForward, PassKind::kBackward}) {
    int attention = 0;
    for (const RankOp& op : LayerProgram(job, pass, false)) {
      if (op.name.rfind("attention_", 0) == 0) {
        ++attention;
        EXPECT_EQ(op.shape, "b1 s512 h32 d128 ring4");
      }
      if (op.group == GroupKind::kCp) {
        EXPECT_EQ(op.count, 3);
      }
    }
    EXPECT_EQ(attention, 1);
  }
  for (const RankOp& op : LayerProgram(TestJob({.dp = 2}), PassKind::kForward, false)) {
    if (op.name == "attention_fwd") {
      EXPECT_EQ(op.shape, "b1 s2048 h32 d128");
    }
  }
}

// A MoE layer runs Megatron-Core's all-to-all dispatcher as the cost model prices it: the top_k
// copies of the rank's T/t local tokens over EP, gathered over the expert TP group (= TP), and
// the reverse for the combine (token_dispatcher.py).
TEST(RankProgram, MoeLayerDispatchesLocalTokens) {
  const JobSpec job = TestJob({.tp = 2,
                               .dp = 8,
                               .ep = 8,
                               .model = "mixtral-8x7b",
                               .seq_len = 4096,
                               .sequence_parallel = true});
  const std::vector<RankOp> fwd = LayerProgram(job, PassKind::kForward, true);
  const double routed = 4096.0 / 2 * 2 * 4096 * 2;  // T/t x top_k rows of h, bf16
  std::vector<std::pair<std::string, double>> moe_ops;
  for (const RankOp& op : fwd) {
    if (op.kind == RankOpKind::kCollective && op.name.find("routed") != std::string::npos) {
      moe_ops.emplace_back(op.name, op.bytes);
    }
    if (op.name.starts_with("alltoall")) moe_ops.emplace_back(op.name, op.bytes);
  }
  const std::vector<std::pair<std::string, double>> expected = {
      {"alltoall dispatch", routed},
      {"all_gather routed", 2 * routed},
      {"reduce_scatter routed", 2 * routed},
      {"alltoall combine", routed}};
  EXPECT_EQ(moe_ops, expected);
  // Mixtral has no shared experts: only attention's pair runs over TP in full T x h.
  EXPECT_EQ(Count(fwd, "all_gather"), 1);
  EXPECT_EQ(Count(fwd, "reduce_scatter"), 1);
  const std::vector<RankOp> bwd = LayerProgram(job, PassKind::kBackward, true);
  EXPECT_EQ(Count(bwd, "alltoall combine (grad)"), 1);
  EXPECT_EQ(Count(bwd, "all_gather routed (grad)"), 1);
  EXPECT_EQ(Count(bwd, "reduce_scatter routed (grad)"), 1);
  EXPECT_EQ(Count(bwd, "alltoall dispatch (grad)"), 1);
}

// Expert TP below TP (etp < tp, MoE Parallel Folding): the routed copies of the rank's T/t local
// tokens are all-gathered over the expert TP group only (none with etp 1), and each expert's
// GEMMs are split by etp, not tp; the shared expert keeps the TP split. Mixtral (8 experts) at
// TP4 with sequence parallelism, EP8, 4,096 tokens.
TEST(RankProgram, MoeLayerSplitsItsExpertsByExpertTp) {
  const std::vector<RankOp> fwd = LayerProgram(FoldedMoeJob(1), PassKind::kForward, true);
  EXPECT_EQ(Count(fwd, "all_gather routed"), 0);
  // One local expert over the 1,024 x top_k 2 routed copies, FC1 to 2 x 14,336 whole.
  int fc1 = 0;
  for (const RankOp& op : fwd) {
    if (op.name == "gemm expert0 fc1") {
      ++fc1;
      EXPECT_EQ(op.shape, "2048 x 28672 x 4096");
    }
    if (op.name == "swiglu_fwd") {
      EXPECT_EQ(op.shape, "2048 x 14336");
    }
  }
  EXPECT_EQ(fc1, 1);
  for (const RankOp& op : LayerProgram(FoldedMoeJob(2), PassKind::kForward, true)) {
    if (op.name == "all_gather routed") {
      EXPECT_EQ(op.group, GroupKind::kExpertTp);
      EXPECT_EQ(op.bytes, 2.0 * 1024 * 2 * 4096 * 2);  // etp x T/t x top_k rows of h, bf16
    }
    if (op.name == "gemm expert0 fc1") {
      EXPECT_EQ(op.shape, "4096 x 14336 x 4096");
    }
  }
}

// A MoE layer's routed experts run as the cost model times them (GroupedGemmPasses): one GEMM
// per local expert, over its own weights, on the T x top_k routed rows spread over the rank's
// experts; every expert has its data- and weight-gradient GEMMs.
TEST(RankProgram, MoeLayerRunsOneGemmPerLocalExpert) {
  const JobSpec job = TestJob({.dp = 8, .ep = 4, .model = "mixtral-8x7b", .seq_len = 4096});
  const std::vector<RankOp> fwd = LayerProgram(job, PassKind::kForward, true);
  // 8 experts over EP 4: 2 local experts, 4,096 x 2 / 2 rows each, FC1 to 2 x 14,336.
  EXPECT_EQ(Count(fwd, "gemm fc1"), 0);
  for (const char* expert : {"expert0", "expert1"}) {
    int fc1 = 0;
    for (const RankOp& op : fwd) {
      if (op.name == std::string("gemm ") + expert + " fc1") {
        ++fc1;
        EXPECT_EQ(op.shape, "4096 x 28672 x 4096");
      }
    }
    EXPECT_EQ(fc1, 1) << expert;
    EXPECT_EQ(Count(fwd, std::string("gemm ") + expert + " fc2"), 1);
  }
  EXPECT_EQ(Count(fwd, "gemm expert2 fc1"), 0);
  const std::vector<RankOp> bwd = LayerProgram(job, PassKind::kBackward, true);
  for (const char* name : {"gemm expert1 fc1 dgrad", "gemm expert1 fc1 wgrad",
                           "gemm expert1 fc2 dgrad", "gemm expert1 fc2 wgrad"}) {
    EXPECT_EQ(Count(bwd, name), 1) << name;
  }
}

// A selective recomputation re-runs what it names (Megatron-Core's recompute_modules). core_attn
// checkpoints every layer's attention (the forward keeps its output, not its log-sum-exp) and
// re-runs its forward, with CP its ring exchange too, just before its backward. On a MoE layer,
// layernorm and moe_act (CheckpointWithoutOutput) mark the pre-MLP norm and the routed experts'
// activation (not the shared expert's) discarded; the backward re-runs the norm first, from the
// MLP output's gradient hook, and the activation just before the experts' FC2 backward, from
// FC2's. A dense layer re-runs only the attention.
TEST(RankProgram, SelectiveRecomputationDiscardsAndRerunsWhatItNames) {
  JobSpec job = TestJob({.tp = 2,
                         .cp = 2,
                         .dp = 4,
                         .ep = 8,
                         .model = "mixtral-8x7b",
                         .seq_len = 8192,
                         .sequence_parallel = true});
  job.model.moe_shared_experts = 1;
  job.training.recompute = Recompute::kSelective;
  job.training.recompute_modules = kRecomputeCoreAttn | kRecomputeLayernorm | kRecomputeMoeAct;
  using Marked = std::tuple<std::string, std::string, RecomputeRole>;
  auto marked = [](const std::vector<RankOp>& ops) {
    std::vector<Marked> out;
    for (const RankOp& op : ops) {
      if (op.recompute != RecomputeRole::kNone) out.emplace_back(op.name, op.shape, op.recompute);
    }
    return out;
  };
  // T = 8,192 / cp 2 = 4,096 tokens: T/t = 2,048 sequence-parallel rows of h; 4,096 x top_k 2
  // routed rows of f/t = 7,168; the attention over 16 of 32 heads.
  const Marked attention = {"attention_fwd", "b1 s4096 h16 d128 ring2", RecomputeRole::kCheckpoint};
  const Marked attention_rerun = {"attention_fwd (recompute)", "b1 s4096 h16 d128 ring2",
                                  RecomputeRole::kRerun};
  const std::vector<RankOp> fwd = LayerProgram(job, PassKind::kForward, true);
  EXPECT_EQ(marked(fwd),
            (std::vector<Marked>{attention,
                                 {"rmsnorm_fwd", "2048 x 4096", RecomputeRole::kDiscard},
                                 {"swiglu_fwd", "8192 x 7168", RecomputeRole::kDiscard}}));
  EXPECT_EQ(Count(fwd, "swiglu_fwd"), 2);  // the shared expert's, 4,096 x 7,168, kept
  const std::vector<RankOp> bwd = LayerProgram(job, PassKind::kBackward, true);
  EXPECT_EQ(marked(bwd),
            (std::vector<Marked>{{"rmsnorm_fwd (recompute)", "2048 x 4096", RecomputeRole::kRerun},
                                 {"swiglu_fwd (recompute)", "8192 x 7168", RecomputeRole::kRerun},
                                 attention_rerun}));
  ASSERT_FALSE(bwd.empty());
  EXPECT_EQ(bwd.front().name, "rmsnorm_fwd (recompute)");
  for (size_t i = 1; i < bwd.size(); ++i) {
    if (bwd[i].name == "gemm shared fc2 dgrad") {
      EXPECT_EQ(bwd[i - 1].name, "swiglu_fwd (recompute)");
    }
    if (bwd[i].name == "attention_fwd (recompute)") {
      EXPECT_EQ(bwd[i - 1].name, "ring send/recv kv (recompute)");
      EXPECT_EQ(bwd[i - 1].count, 1);
      ASSERT_LT(i + 1, bwd.size());
      EXPECT_EQ(bwd[i + 1].name, "attention_bwd");
    }
  }
  EXPECT_EQ(marked(LayerProgram(job, PassKind::kForward, false)), std::vector<Marked>{attention});
  EXPECT_EQ(marked(LayerProgram(job, PassKind::kBackward, false)),
            std::vector<Marked>{attention_rerun});
  job.training.recompute_modules = kRecomputeMoeAct;
  EXPECT_EQ(
      marked(LayerProgram(job, PassKind::kBackward, true)),
      (std::vector<Marked>{{"swiglu_fwd (recompute)", "8192 x 7168", RecomputeRole::kRerun}}));
  job.training.recompute = Recompute::kNone;
  job.training.recompute_modules = kRecomputeCoreAttn;
  EXPECT_TRUE(marked(LayerProgram(job, PassKind::kForward, true)).empty());
  EXPECT_TRUE(marked(LayerProgram(job, PassKind::kBackward, true)).empty());
}

// recompute_modules mlp checkpoints a dense layer's MLP (Megatron's tensor_parallel.checkpoint
// of self.mlp): in forward every op inside it discards its outputs but FC2, whose output is the
// layer's; its backward first runs the MLP's forward again, the pre-MLP norm (fused into FC1 by
// Transformer Engine), the sequence-parallel all-gather, FC1, SwiGLU, FC2 and its
// reduce-scatter, then the MLP's backward as without it. Llama 3 8B at TP2 with sequence
// parallelism, 2,048 tokens: 1,024 rows of h = 4,096 outside the TP region, FC1 2 x 14,336 / 2
// wide.
TEST(RankProgram, CheckpointedMlpRerunsItsForwardBeforeItsBackward) {
  JobSpec job = TestJob({.tp = 2, .dp = 4, .sequence_parallel = true});
  job.training.recompute = Recompute::kSelective;
  job.training.recompute_modules = kRecomputeMlp;
  using Marked = std::tuple<std::string, std::string, RecomputeRole>;
  std::vector<Marked> fwd;
  for (const RankOp& op : LayerProgram(job, PassKind::kForward, false)) {
    if (op.recompute != RecomputeRole::kNone) fwd.emplace_back(op.name, op.shape, op.recompute);
  }
  EXPECT_EQ(fwd, (std::vector<Marked>{{"rmsnorm_fwd", "1024 x 4096", RecomputeRole::kDiscard},
                                      {"gemm fc1", "2048 x 14336 x 4096", RecomputeRole::kDiscard},
                                      {"swiglu_fwd", "2048 x 7168", RecomputeRole::kDiscard}}));
  const std::vector<RankOp> bwd = LayerProgram(job, PassKind::kBackward, false);
  const std::vector<std::string> rerun = {"rmsnorm_fwd (recompute)",
                                          "all_gather (recompute)",
                                          "gemm fc1 (recompute)",
                                          "swiglu_fwd (recompute)",
                                          "gemm fc2 (recompute)",
                                          "reduce_scatter (recompute)",
                                          "all_gather",
                                          "gemm fc2 dgrad"};
  ASSERT_GE(bwd.size(), rerun.size());
  for (size_t i = 0; i < rerun.size(); ++i) {
    EXPECT_EQ(bwd[i].name, rerun[i]) << i;
    EXPECT_EQ(bwd[i].recompute, i + 2 < rerun.size() ? RecomputeRole::kRerun : RecomputeRole::kNone)
        << i;
  }
  // The attention is neither checkpointed nor re-run without core_attn.
  EXPECT_EQ(Count(bwd, "attention_fwd (recompute)"), 0);
}

// LoRA (Hu et al. 2021): each targeted linear runs its adapter's x·A and ·B after it in forward
// (A whole and B split by tp on a column-parallel linear, A split and B whole on a row-parallel
// one) and their gradients after its data gradient in backward; no frozen weight gets a weight
// gradient, the embedding none at all; an input only a frozen linear's weight gradient would
// read is not saved, nor an adapter's output, which joins its linear's. Llama 3 8B at TP2 with
// sequence parallelism, 2,048 tokens, adapters of rank 16 on q, v and down.
TEST(RankProgram, LoraRunsAdaptersAndFreezesTheBase) {
  JobSpec job = TestJob({.tp = 2, .dp = 4, .sequence_parallel = true});
  job.training.lora = {.enabled = true, .rank = 16, .targets = kLoraQ | kLoraV | kLoraDown};
  const std::vector<RankOp> fwd = LayerProgram(job, PassKind::kForward, false);
  std::vector<std::tuple<std::string, std::string, bool>> adapters;
  for (const RankOp& op : fwd) {
    if (op.name.find("lora") != std::string::npos) {
      adapters.emplace_back(op.name, op.shape, op.saved_for_backward);
    }
  }
  EXPECT_EQ(adapters, (std::vector<std::tuple<std::string, std::string, bool>>{
                          {"gemm q lora_a", "2048 x 16 x 4096", true},
                          {"gemm q lora_b", "2048 x 2048 x 16", false},
                          {"gemm v lora_a", "2048 x 16 x 4096", true},
                          {"gemm v lora_b", "2048 x 512 x 16", false},
                          {"gemm down lora_a", "2048 x 16 x 7168", true},
                          {"gemm down lora_b", "2048 x 4096 x 16", false}}));
  // Saved inputs: the QKV input (q and v have adapters), not the FC1 input (gate and up have
  // none), the FC2 input (down has one).
  std::vector<std::pair<std::string, bool>> saved;
  for (const RankOp& op : fwd) {
    if (op.name == "rmsnorm_fwd" || op.name == "swiglu_fwd") {
      saved.emplace_back(op.name, op.saved_for_backward);
    }
  }
  EXPECT_EQ(saved, (std::vector<std::pair<std::string, bool>>{
                       {"rmsnorm_fwd", true}, {"rmsnorm_fwd", false}, {"swiglu_fwd", true}}));
  const std::vector<RankOp> bwd = LayerProgram(job, PassKind::kBackward, false);
  for (const char* frozen :
       {"gemm qkv wgrad", "gemm o wgrad", "gemm fc1 wgrad", "gemm fc2 wgrad"}) {
    EXPECT_EQ(Count(bwd, frozen), 0) << frozen;
  }
  for (const char* w : {"q", "v", "down"}) {
    for (const char* g : {" lora_b dgrad", " lora_b wgrad", " lora_a wgrad", " lora_a dgrad"}) {
      EXPECT_EQ(Count(bwd, std::string("gemm ") + w + g), 1) << w << g;
    }
  }
  EXPECT_EQ(Count(bwd, "gemm k lora_b dgrad"), 0);
  for (const ProgramStep& step : RankProgram(job, MakeRankLayout(job), 0)) {
    EXPECT_EQ(Count(step.ops, "embedding_bwd"), 0) << step.label;
    EXPECT_EQ(Count(step.ops, "gemm lm_head wgrad"), 0) << step.label;
  }
}

TEST(RankProgram, ZeroStagesChangeTheGradientTraffic) {
  JobSpec job = Job(1, 8, 1);
  const RankLayout l = MakeRankLayout(job);
  auto step_ops = [&](const char* label) {
    for (const ProgramStep& s : RankProgram(job, l, 0))
      if (s.label == label) return s.ops;
    return std::vector<RankOp>{};
  };
  job.parallel.zero_stage = 0;
  EXPECT_EQ(step_ops("grad sync").front().name, "all_reduce grad buckets");
  job.parallel.zero_stage = 1;
  EXPECT_EQ(step_ops("grad sync").front().name, "reduce_scatter grad buckets");
  EXPECT_EQ(step_ops("optimizer").back().name, "all_gather updated params");
  const RankOp rs = step_ops("grad sync").front();
  // Buckets of 40M parameters cover the rank's trainable parameters, 2 bytes each.
  const double params = ParamsPerGpu(job, 0).trainable;
  EXPECT_NEAR(rs.bytes * static_cast<double>(rs.count), 2 * params, 1);
  // Without dp_overlap (the executed job) one collective reduces the whole buffer, as
  // Megatron-LM does without --overlap-grad-reduce and the cost model times it.
  job.parallel.dp_overlap = false;
  EXPECT_EQ(step_ops("grad sync").front().count, 1);
  EXPECT_NEAR(step_ops("grad sync").front().bytes, 2 * params, 1);
  job.parallel.dp_overlap = true;
  // ZeRO-2 reduce-scatters every backward pass's gradients (the cost model's stage_time), so
  // nothing is left to reduce after the passes.
  job.parallel.zero_stage = 2;
  EXPECT_TRUE(step_ops("grad sync").empty());
  int64_t passes = 0;
  for (const ProgramStep& s : RankProgram(job, l, 0)) {
    if (!s.is_pass || s.pass.kind != PassKind::kBackward) continue;
    ++passes;
    ASSERT_EQ(Count(s.ops, "reduce_scatter grads (ZeRO-2)"), 1) << s.label;
    EXPECT_NEAR(s.ops.back().bytes, 2 * params, 1);
  }
  EXPECT_EQ(passes, MicrobatchesPerStep(job));
  job.parallel.zero_stage = 3;
  EXPECT_TRUE(step_ops("grad sync").empty());
  EXPECT_EQ(Count(LayerProgram(job, PassKind::kForward, false), "all_gather layer params"), 1);
  EXPECT_EQ(Count(LayerProgram(job, PassKind::kBackward, false), "reduce_scatter layer grads"), 1);
}

// ZeRO-3 gathers each layer twice a micro-batch, with or without full recomputation: the
// recomputed forward inside the backward pass gathers, and the backward uses those weights
// (kFsdpGathersPerMicroBatch, as the cost model charges).
TEST(RankProgram, ZeroThreeGathersTwicePerMicroBatch) {
  JobSpec job = Job(1, 8, 1);
  job.parallel.zero_stage = 3;
  const RankLayout l = MakeRankLayout(job);
  auto gathers_per_layer = [&] {
    int n = 0;
    for (const ProgramStep& s : RankProgram(job, l, 0)) {
      if (!s.is_pass) continue;
      for (const RankOp& op : s.ops) {
        if (op.kind != RankOpKind::kLayers) continue;
        for (const LayerOp& x : ExpandLayers(job, 0, s, op)) {
          n += x.op.name == "all_gather layer params" ? 1 : 0;
        }
      }
    }
    return static_cast<double>(n) /
           static_cast<double>(job.model.num_layers * MicrobatchesPerStep(job));
  };
  EXPECT_EQ(gathers_per_layer(), kFsdpGathersPerMicroBatch);
  job.training.recompute = Recompute::kFull;
  EXPECT_EQ(gathers_per_layer(), kFsdpGathersPerMicroBatch);
}

TEST(RankProgram, ZeroBubbleSplitsWeightGradients) {
  const JobSpec job = Job(1, 1, 4, Schedule::kZeroBubbleH1);
  EXPECT_EQ(Count(LayerProgram(job, PassKind::kBackward, false), "gemm fc1 wgrad"), 0);
  EXPECT_EQ(Count(LayerProgram(job, PassKind::kWeightGrad, false), "gemm fc1 wgrad"), 1);
  int w = 0;
  for (const ProgramStep& s : RankProgram(job, MakeRankLayout(job), 0))
    w += s.is_pass && s.pass.kind == PassKind::kWeightGrad ? 1 : 0;
  EXPECT_EQ(w, MicrobatchesPerStep(job));
}

}  // namespace
}  // namespace gpuplan
