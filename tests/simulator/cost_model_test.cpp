// Behaviour of the whole cost model: consistency of the result and the direction of each knob.
#include "simulator/cost_model.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "hardware-db/hardware_db.h"
#include "simulator/collective.h"
#include "simulator/event_sim.h"
#include "simulator/flops.h"
#include "simulator/job_spec_json.h"
#include "simulator/memory.h"
#include "simulator/model.h"
#include "simulator/moe_dispatch.h"
#include "simulator/pipeline.h"
#include "simulator/presets.h"
#include "simulator/shard.h"
#include "simulator/step_costs.h"
#include "simulator/tp_overlap.h"

namespace gpuplan {
namespace {

class CostModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Expected<HardwareDb> loaded = LoadHardwareDb({});
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    db_ = new HardwareDb(std::move(loaded).value());
  }
  static void TearDownTestSuite() { delete db_; }

  static nlohmann::json Spec(const std::string& model, const std::string& gpu, int gpus) {
    return {{"model", model},
            {"cluster", {{"gpu", gpu}, {"num_gpus", gpus}}},
            {"training", {{"seq_len", 2048}, {"global_batch_size", 64}, {"micro_batch_size", 1}}},
            {"parallelism", nlohmann::json::object()}};
  }

  static JobSpec Parse(const nlohmann::json& spec) {
    Expected<JobSpec> job = ParseJobSpec(spec, "<test>", ".", *db_);
    EXPECT_TRUE(job.ok()) << job.status().message();
    return job.ok() ? *job : JobSpec{};
  }

  // The step's costs at datasheet rates.
  static StepCosts Costs(const JobSpec& job) {
    const GpuSpec& gpu = *db_->FindGpu(job.cluster.gpu);
    return ComputeStepCosts(job, gpu, *db_->FindNetwork(job.cluster.inter_node),
                            DatasheetRates(gpu, job.training.precision));
  }

  static StepResult Eval(const JobSpec& job) {
    return EvaluateStep(job, *db_->FindGpu(job.cluster.gpu),
                        *db_->FindNetwork(job.cluster.inter_node));
  }

  static HardwareDb* db_;
};
HardwareDb* CostModelTest::db_ = nullptr;

// Reference for a gradient reduction in buckets behind a backward pass of `window` seconds,
// played out bucket by bucket: `params` gradients become ready at a steady rate but `late` of
// them (one tensor) at the end; each full bucket of the early ones goes out when filled, their
// rest and then the late tensor at the end, one after another on one stream. Exposed: the
// queue's end beyond the window, or the window's slow-down by kOverlapInterference for the
// communication beside it if larger.
double BucketQueueReference(const StepCosts& c, int zero, double params, double late,
                            double window) {
  const double bucket = c.grad_bucket_params;
  const double early = params - late;
  double clock = 0, comm = 0;
  auto issue = [&](double ready, double p) {
    const double seconds = GradReduceSeconds(c, zero, p, 0);
    clock = std::max(clock, ready) + seconds;
    comm += seconds;
  };
  double filled = 0;
  while (filled + bucket <= early) {
    filled += bucket;
    issue(window * filled / early, bucket);
  }
  if (early - filled > 0) issue(window, early - filled);
  if (late > 0) issue(window, late);
  const double tail = std::max(0.0, clock - window);
  return std::max(tail, kOverlapInterference * std::min(comm - tail, window));
}

// The overlap charge as docs/COST_MODEL.md ("Overlap") states it.
// Dense parameters only, all trainable: the unit the FSDP collectives take.
ShardParams DenseParams(double params) { return ShardParams{params, 0, params}; }

double Exposed(double comm, double window) {
  return std::max(comm - window, kOverlapInterference * std::min(comm, window));
}

TEST_F(CostModelTest, ResultIsConsistent) {
  nlohmann::json spec = Spec("llama3-70b", "h100-sxm5-80gb", 64);
  spec["parallelism"] = {{"tp", 8}, {"pp", 2}, {"sequence_parallel", true}, {"zero_stage", 1}};
  spec["training"]["recompute"] = "selective";
  const JobSpec job = Parse(spec);
  const StepResult r = Eval(job);
  EXPECT_NEAR(r.breakdown_s.Total(), r.step_time_s, 1e-9 * r.step_time_s);
  EXPECT_NEAR(r.tokens_per_s, 64.0 * 2048 / r.step_time_s, 1e-6 * r.tokens_per_s);
  EXPECT_NEAR(r.tokens_per_s_per_gpu * 64, r.tokens_per_s, 1e-6 * r.tokens_per_s);
  EXPECT_GT(r.mfu, 0.2);
  EXPECT_LT(r.mfu, 0.8);
  EXPECT_GE(r.hfu, r.mfu);
  EXPECT_GT(r.breakdown_s.tp_comm, 0);
  EXPECT_GT(r.breakdown_s.bubble, 0);
  EXPECT_EQ(r.microbatches, 64 / 4);
  EXPECT_TRUE(r.memory.fits);
}

// Ring attention (TE AttnFuncWithCPAndKVP2P) runs cp attention kernels per pass and merges each
// step: forward, cp - 1 output + log-sum-exp corrections (read two outputs, write one);
// backward, cp dQ and dK/dV accumulations. The FLOPs are the load-balanced causal share, run at
// the rate of the s/cp-token chunk each kernel sees.
TEST_F(CostModelTest, ContextParallelPaysPerRingStep) {
  nlohmann::json spec = Spec("llama3-8b", "h100-sxm5-80gb", 8);
  spec["training"]["seq_len"] = 8192;
  const JobSpec one = Parse(spec);
  spec["parallelism"] = {{"cp", 4}};
  const JobSpec four = Parse(spec);
  const GpuSpec& gpu = *db_->FindGpu("h100-sxm5-80gb");
  const NetworkSpec& net = *db_->FindNetwork(four.cluster.inter_node);
  const DeviceRates r = DatasheetRates(gpu, Precision::kBf16);
  const LayerCosts a = ComputeStepCosts(one, gpu, net, r).dense;
  const LayerCosts b = ComputeStepCosts(four, gpu, net, r).dense;
  const double tokens = 8192.0 / 4, q = 4096, kv = 1024, e = 2;
  const double out = tokens * q * e, grads = out + tokens * 2 * kv * e;
  // A quarter of the queries against all keys: a quarter of the FLOPs, on 2,048-token chunks
  // instead of 8,192-token sequences, plus the steps.
  const double chunk = AttentionLengthFactor(8192) / AttentionLengthFactor(2048);
  EXPECT_NEAR(chunk, 1.14, 0.005);
  const double kernel = (a.fwd_attn - r.kernel_overhead_s) / 4 * chunk + r.kernel_overhead_s;
  EXPECT_NEAR(b.fwd_attn, kernel + 3 * (r.kernel_overhead_s + MemoryBoundSeconds(r, 3 * out, 2)),
              1e-12);
  const double bwd_kernel = (a.bwd_attn - r.kernel_overhead_s) / 4 * chunk + r.kernel_overhead_s;
  EXPECT_NEAR(b.bwd_attn,
              bwd_kernel + 3 * r.kernel_overhead_s + 4 * MemoryBoundSeconds(r, 3 * grads, 2),
              1e-12);
}

// Without cp_overlap (the validator's executed job) the ring's transfers are waited for: the
// analytic model charges every pass's ring in full, and the event simulator agrees with it.
TEST_F(CostModelTest, ContextParallelRingWithoutOverlapIsWaitedFor) {
  nlohmann::json spec = Spec("llama3-8b", "h100-sxm5-80gb", 16);
  spec["training"]["seq_len"] = 16384;
  spec["cluster"]["gpus_per_node"] = 8;
  spec["parallelism"] = {{"cp", 16}, {"dp", 1}};
  const JobSpec overlapped = Parse(spec);
  spec["parallelism"]["cp_overlap"] = false;
  const JobSpec serial = Parse(spec);
  EXPECT_FALSE(serial.parallel.cp_overlap);
  EXPECT_EQ(JobSpecToJson(serial)["parallelism"]["cp_overlap"], false);
  EXPECT_FALSE(JobSpecToJson(overlapped)["parallelism"].contains("cp_overlap"));
  const StepCosts c = Costs(serial);
  const double micro = static_cast<double>(MicrobatchesPerStep(serial));
  const StepResult a = Eval(overlapped);
  const StepResult b = Eval(serial);
  EXPECT_NEAR(b.breakdown_s.cp_comm,
              micro * c.dense.cp_comm * static_cast<double>(serial.model.num_layers), 1e-12);
  EXPECT_GT(b.breakdown_s.cp_comm, a.breakdown_s.cp_comm);
  EXPECT_NEAR(b.step_time_s - a.step_time_s, b.breakdown_s.cp_comm - a.breakdown_s.cp_comm, 1e-9);
  const GpuSpec& gpu = *db_->FindGpu(serial.cluster.gpu);
  const NetworkSpec& net = *db_->FindNetwork(serial.cluster.inter_node);
  Expected<EventSimResult> sim = SimulateStepEvents(serial, gpu, net, {});
  ASSERT_TRUE(sim.ok()) << sim.status().message();
  EXPECT_NEAR(sim->step_time_s, b.step_time_s, 0.02 * b.step_time_s);
}

TEST_F(CostModelTest, SingleGpuHasNoCommunication) {
  nlohmann::json spec = Spec("gpt2-xl", "a100-sxm4-80gb", 1);
  spec["training"]["seq_len"] = 1024;  // GPT-2's learned positions
  const StepResult r = Eval(Parse(spec));
  EXPECT_EQ(r.breakdown_s.tp_comm, 0);
  EXPECT_EQ(r.breakdown_s.dp_comm, 0);
  EXPECT_EQ(r.breakdown_s.pp_comm, 0);
  EXPECT_EQ(r.breakdown_s.bubble, 0);
  EXPECT_GT(r.breakdown_s.compute, 0.9 * r.step_time_s);
}

TEST_F(CostModelTest, FullRecomputeTradesTimeForMemory) {
  nlohmann::json spec = Spec("llama3-8b", "a100-sxm4-80gb", 8);
  const StepResult none = Eval(Parse(spec));
  spec["training"]["recompute"] = "full";
  const StepResult full = Eval(Parse(spec));
  EXPECT_GT(full.step_time_s, 1.2 * none.step_time_s);
  EXPECT_LT(full.memory.activations_bytes, 0.2 * none.memory.activations_bytes);
  EXPECT_GT(full.hfu, full.mfu * 1.2);
}

TEST_F(CostModelTest, ZeroStagesShrinkModelState) {
  nlohmann::json spec = Spec("llama3-8b", "a100-sxm4-80gb", 8);
  double previous = 1e30;
  for (int stage = 0; stage <= 3; ++stage) {
    spec["parallelism"]["zero_stage"] = stage;
    const MemoryBreakdown m = Eval(Parse(spec)).memory;
    const double state = m.weights_bytes + m.grads_bytes + m.optimizer_bytes;
    EXPECT_LT(state, previous) << "stage " << stage;
    previous = state;
  }
}

TEST_F(CostModelTest, LoraFitsWhereFullFineTuningDoesNot) {
  nlohmann::json spec = Spec("llama3-8b", "a100-sxm4-80gb", 1);
  spec["training"]["global_batch_size"] = 8;
  spec["training"]["recompute"] = "full";
  const StepResult full = Eval(Parse(spec));
  EXPECT_FALSE(full.memory.fits);  // 16 bytes/param x 8B = 128 GB
  spec["training"]["lora"] = {{"rank", 16}};
  const StepResult lora = Eval(Parse(spec));
  EXPECT_TRUE(lora.memory.fits);
  EXPECT_LT(lora.step_time_s, full.step_time_s);
  spec["training"]["lora"]["base"] = "nf4";
  const StepResult qlora = Eval(Parse(spec));
  EXPECT_LT(qlora.memory.weights_bytes, 0.3 * lora.memory.weights_bytes);
  EXPECT_GT(qlora.step_time_s, lora.step_time_s);  // dequantisation costs time
}

TEST_F(CostModelTest, InterleavingShrinksTheBubble) {
  nlohmann::json spec = Spec("gpt3-175b", "a100-sxm4-80gb", 64);
  spec["parallelism"] = {{"tp", 8}, {"pp", 8}, {"sequence_parallel", true}};
  const StepResult plain = Eval(Parse(spec));
  spec["parallelism"]["vpp"] = 4;
  spec["parallelism"]["schedule"] = "interleaved";
  const StepResult inter = Eval(Parse(spec));
  EXPECT_LT(inter.breakdown_s.bubble, 0.5 * plain.breakdown_s.bubble);
  EXPECT_GT(inter.breakdown_s.pp_comm, plain.breakdown_s.pp_comm);
  EXPECT_GT(inter.memory.activations_bytes, plain.memory.activations_bytes);
}

TEST_F(CostModelTest, BubbleFollowsScheduleInComputeBoundLimit) {
  nlohmann::json spec = Spec("gpt3-175b", "a100-sxm4-80gb", 8);
  spec["parallelism"] = {{"pp", 8}};
  spec["training"]["global_batch_size"] = 16;
  const StepResult r = Eval(Parse(spec));
  const double fraction = r.breakdown_s.bubble / (r.breakdown_s.bubble + r.breakdown_s.compute);
  // Stages differ slightly (embedding, LM head), so allow a small band around (p-1)/(m+p-1).
  EXPECT_NEAR(fraction, PipelineBubbleFraction(Schedule::k1F1B, 8, 16, 1), 0.03);
}

TEST_F(CostModelTest, DataParallelOverlapHidesGradientSync) {
  nlohmann::json spec = Spec("llama3-8b", "h100-sxm5-80gb", 64);
  spec["parallelism"] = {{"zero_stage", 1}};
  const StepResult overlapped = Eval(Parse(spec));
  spec["parallelism"]["dp_overlap"] = false;
  const StepResult exposed = Eval(Parse(spec));
  EXPECT_GT(exposed.breakdown_s.dp_comm, overlapped.breakdown_s.dp_comm);
}

// Golden: ZeRO-1 with overlapped DP communication. Megatron-Core (--overlap-param-gather) hides
// the reduce-scatter behind the last backward and the weights' all-gather behind the next step's
// first forward, the first bucket (embedding + the stack's bucket) and the last exposed. nanotron
// (no DDP wrapper under ZeRO-1 with fp32 accumulation, trainer.py) all-reduces the whole fp32
// gradient buffer after the last backward and all-gathers the weights at the end of its optimizer
// step, both exposed.
TEST_F(CostModelTest, MegatronGathersWeightsDuringTheFirstForward) {
  nlohmann::json spec = Spec("llama3-8b", "h100-sxm5-80gb", 64);  // dp 64 over 8 nodes
  spec["parallelism"] = {{"zero_stage", 1}};
  const JobSpec job = Parse(spec);
  const StepResult megatron = Eval(job);

  const StepCosts c = Costs(job);
  const double params = ParamsPerGpu(job, 0).trainable;
  const double edge =
      std::min(params, c.grad_bucket_params + CountParameters(job.model).embedding);  // tp 1
  const double layers = static_cast<double>(job.model.num_layers);
  // Each bucket is a collective of its own: the reduce-scatter's buckets queue behind the
  // backward as they fill, the embedding's (one tensor, the last ready) after them; the
  // all-gather's buckets run beside the forward, which waits for the embedding's and one more.
  const double embedding = CountParameters(job.model).embedding;
  const double reduce = BucketQueueReference(c, 1, params, embedding, layers * c.dense.bwd);
  const double gather = BucketedWeightGatherSeconds(c, 1, params, 0);
  const double gather_head =
      WeightGatherSeconds(c, 1, embedding, 0) + WeightGatherSeconds(c, 1, edge - embedding, 0);
  const double expected =
      reduce + Exposed(gather - gather_head, layers * c.dense.Forward()) + gather_head;
  EXPECT_NEAR(megatron.breakdown_s.dp_comm, expected, 1e-9 * expected);

  spec["training"]["framework"] = "nanotron";
  const JobSpec nanotron_job = Parse(spec);
  const StepResult nanotron = Eval(nanotron_job);
  // nanotron: the all-reduce of 4-byte gradients over the 64 DP ranks
  // (FP32GradientAccumulator.sync_gradients_across_dp), then the all-gather of the updated
  // weights at the end of its optimizer step (ZeroDistributedOptimizer.step); nothing hides
  // either.
  const StepCosts nc = Costs(nanotron_job);
  EXPECT_TRUE(nc.grads_all_reduced_after_backward);
  const double all_reduce = CollectiveSeconds(Collective::kAllReduce, 4.0 * params, nc.dp_link);
  const double nanotron_gather = WeightGatherSeconds(nc, 1, params, 0);  // one collective
  EXPECT_NEAR(nanotron.breakdown_s.dp_comm, all_reduce + nanotron_gather,
              1e-9 * (all_reduce + nanotron_gather));
  EXPECT_GT(all_reduce, GradReduceSeconds(c, 1, params, 0));  // twice the reduce-scatter's traffic
  EXPECT_LT(megatron.breakdown_s.dp_comm, nanotron.breakdown_s.dp_comm);
}

// Golden: the buckets a stack reduces gradients in. Megatron-LM (training.py, the DDP config's
// default): max(40M, 1M x dp x cp) parameters, 'so that chunks used in NCCL ring-reduce
// implementations are large enough to remain bandwidth-bound'; one bucket without
// --overlap-grad-reduce. PyTorch DDP (nanotron ZeRO-0): bucket_cap_mb = 25 MiB of the 16-bit .grad
// tensors the DDP wrapper holds (ddp_bucket_bytes_per_param 2), not of the 4-byte main gradients
// it reduces. DeepSpeed: reduce_bucket_size 5e8 elements. No buckets where nothing
// overlaps: nanotron's ZeRO-1 all-reduces its whole buffer, FSDP reduces per layer.
TEST_F(CostModelTest, GradientBucketsAreTheStacks) {
  nlohmann::json spec = Spec("llama3-8b", "h100-sxm5-80gb", 16);
  spec["parallelism"] = {{"zero_stage", 1}};
  EXPECT_DOUBLE_EQ(Costs(Parse(spec)).grad_bucket_params, 40e6);  // dp 16
  spec["cluster"]["num_gpus"] = 1024;
  spec["training"]["global_batch_size"] = 1024;
  spec["parallelism"]["cp"] = 2;
  EXPECT_DOUBLE_EQ(Costs(Parse(spec)).grad_bucket_params, 1024e6);  // dp 512 x cp 2
  spec["parallelism"]["dp_overlap"] = false;
  EXPECT_DOUBLE_EQ(Costs(Parse(spec)).grad_bucket_params, 0.0);

  nlohmann::json ddp = Spec("llama3-8b", "h100-sxm5-80gb", 16);
  ddp["training"]["framework"] = "nanotron";
  ddp["parallelism"] = {{"zero_stage", 0}};
  EXPECT_DOUBLE_EQ(Costs(Parse(ddp)).grad_bucket_params, 25.0 * 1024 * 1024 / 2.0);
  ddp["parallelism"]["zero_stage"] = 1;
  EXPECT_DOUBLE_EQ(Costs(Parse(ddp)).grad_bucket_params, 0.0);
  ddp["training"]["framework"] = "deepspeed";
  EXPECT_DOUBLE_EQ(Costs(Parse(ddp)).grad_bucket_params, 5e8);
  ddp["parallelism"] = {{"fsdp", true}};
  EXPECT_DOUBLE_EQ(Costs(Parse(ddp)).grad_bucket_params, 0.0);
}

// Golden: ZeRO-2 with the interleaved schedule. Each of the vpp model chunks' backward is its own
// pass and ends by waiting for its reduce-scatter (DeepSpeed's backward epilogue; event_sim.cpp
// alike): per micro-batch and stage, vpp reductions of a chunk's gradients, each overlapped with
// that chunk's backward only and exposing its last bucket. A chunk holds its own layers; the LM
// head's gradients sit in the chunk the last stage's backward starts with (its last), the
// embedding's in the first stage's chunk 0, ready last.
TEST_F(CostModelTest, InterleavedZeroTwoExposesEveryChunksLastBucket) {
  nlohmann::json spec = Spec("llama3-8b", "h100-sxm5-80gb", 64);  // 32 layers
  spec["training"]["global_batch_size"] = 64;
  spec["parallelism"] = {{"zero_stage", 2}, {"pp", 2}, {"vpp", 4}, {"schedule", "interleaved"}};
  const JobSpec job = Parse(spec);  // dp 32, 2 micro-batches, 4 layers per chunk
  ASSERT_EQ(MicrobatchesPerStep(job), 2);
  const StepCosts c = Costs(job);
  const StepResult r = Eval(job);
  const double layers = 4.0 * LayerParamsPerGpu(job, false).trainable;
  const double window = 4.0 * c.dense.bwd;
  const double head = ParamsPerGpu(job, 1).trainable - 4.0 * layers;
  ASSERT_GT(head, 0.0);
  const double last_stage = 3.0 * BucketQueueReference(c, 2, layers, 0, window) +
                            BucketQueueReference(c, 2, layers + head, 0, window);
  // The step is timed on its slowest stage (the last: the LM head): 2 micro-batches of its
  // reductions, then the weights' all-gather once, behind the first stage's forward passes with
  // its first bucket (the embedding's) exposed (Megatron-Core --overlap-param-gather). The
  // interleaved schedule runs each model chunk for a group of pp micro-batches and gathers the
  // next chunk's weights meanwhile (Megatron-LM schedules.py, param_sync_func): the gathers
  // overlap pp = 2 forward passes.
  const ShardParams first = ParamsPerGpu(job, 0);
  ASSERT_GE(first.Total(), ParamsPerGpu(job, 1).Total());
  const double embedding = CountParameters(job.model).embedding;
  const double gather = BucketedWeightGatherSeconds(c, 2, first.trainable, 0);
  const double gather_head =
      WeightGatherSeconds(c, 2, embedding, 0) + WeightGatherSeconds(c, 2, c.grad_bucket_params, 0);
  const double expected = 2.0 * last_stage +
                          Exposed(gather - gather_head, 2.0 * 16.0 * c.dense.Forward()) +
                          gather_head;
  EXPECT_NEAR(r.breakdown_s.dp_comm, expected, 1e-9 * expected);
}

// The exposed DP time of a dense single-stage ZeRO-2 step on Megatron-Core-style overlap:
// `microbatches` bucket queues behind each backward (the embedding's gradient last), then the
// weights gathered bucket by bucket in the first forward, the embedding's and one bucket waited
// for.
double ZeroTwoDpReference(const JobSpec& job, const StepCosts& c, double microbatches) {
  const double params = ParamsPerGpu(job, 0).trainable;
  const double embedding = CountParameters(job.model).embedding;
  const double layers = static_cast<double>(job.model.num_layers);
  const double gather = BucketedWeightGatherSeconds(c, 2, params, 0);
  const double gather_head =
      WeightGatherSeconds(c, 2, embedding, 0) + WeightGatherSeconds(c, 2, c.grad_bucket_params, 0);
  const double per_microbatch = BucketQueueReference(c, 2, params, embedding, layers * c.dense.bwd);
  return microbatches * per_microbatch + Exposed(gather - gather_head, layers * c.dense.Forward()) +
         gather_head;
}

// Golden: ZeRO-2 shards the gradients, so each micro-batch's backward reduce-scatters its own
// (DeepSpeed stage_1_and_2.py reduces every micro-batch when it partitions gradients; ZeRO-1
// only at the accumulation boundary): m reductions per step, each overlapped with its backward
// with the last bucket exposed, then the weights' all-gather once (during the first forward on
// Megatron-Core).
TEST_F(CostModelTest, ZeroTwoReduceScattersEveryMicrobatch) {
  nlohmann::json spec = Spec("llama3-8b", "h100-sxm5-80gb", 64);  // dp 64, 1 micro-batch
  spec["parallelism"] = {{"zero_stage", 2}};
  spec["training"]["global_batch_size"] = 256;  // 4 micro-batches
  const JobSpec job = Parse(spec);
  const StepResult zero2 = Eval(job);
  ASSERT_EQ(zero2.microbatches, 4);

  const double expected = ZeroTwoDpReference(job, Costs(job), 4);
  EXPECT_NEAR(zero2.breakdown_s.dp_comm, expected, 1e-9 * expected);

  // ZeRO-1 reduces once per step, so it pays less DP time for more gradient memory.
  spec["parallelism"]["zero_stage"] = 1;
  const StepResult zero1 = Eval(Parse(spec));
  EXPECT_LT(zero1.breakdown_s.dp_comm, zero2.breakdown_s.dp_comm);
  EXPECT_GT(zero1.memory.grads_bytes, zero2.memory.grads_bytes);

  // Without overlap every reduction is exposed: m reduce-scatters and one all-gather, each one
  // collective (no buckets).
  spec["parallelism"] = {{"zero_stage", 2}, {"dp_overlap", false}};
  const JobSpec serial_job = Parse(spec);
  const StepResult serial = Eval(serial_job);
  const StepCosts sc = Costs(serial_job);
  ASSERT_EQ(sc.grad_bucket_params, 0.0);
  const double params = ParamsPerGpu(job, 0).trainable;
  const double serial_expected =
      4.0 * GradReduceSeconds(sc, 2, params, 0) + WeightGatherSeconds(sc, 2, params, 0);
  EXPECT_NEAR(serial.breakdown_s.dp_comm, serial_expected, 1e-9 * serial_expected);
}

// Golden: PyTorch FSDP's SHARD_GRAD_OP (Composer's ZeRO-2; FSDP2 reshard_after_forward=False in
// torchtitan) keeps one flat parameter per wrapped transformer block, so it reduce-scatters each
// block's gradients and all-gathers its weights as one collective
// (torch/distributed/fsdp/_runtime_utils.py _post_backward_hook): the buckets are layers, not the
// 25 MiB of PyTorch DDP, which the same stack uses without FSDP (ZeRO-0). At DP 512 a 25 MiB
// bucket was one of ~400 latency-bound rings per micro-batch for a 3B model; llm-foundry's
// SHARD_GRAD_OP runs of it on 128-512 H100 (README "Large Scale" table) lose 7.5% from 128 to
// 512 GPUs, where those buckets charged 38%.
TEST_F(CostModelTest, ZeroTwoOnPytorchFsdpReducesOneLayerAtATime) {
  nlohmann::json spec = Spec("llama3-8b", "h100-sxm5-80gb", 512);
  spec["training"]["framework"] = "composer";
  spec["training"]["global_batch_size"] = 1024;  // 2 micro-batches
  spec["parallelism"] = {{"zero_stage", 2}};
  const JobSpec job = Parse(spec);
  const StepCosts c = Costs(job);
  EXPECT_DOUBLE_EQ(c.grad_bucket_params, LayerParamsPerGpu(job, false).trainable);
  EXPECT_DOUBLE_EQ(GradBucketParams(job), c.grad_bucket_params);
  spec["training"]["framework"] = "torchtitan";
  EXPECT_DOUBLE_EQ(GradBucketParams(Parse(spec)), c.grad_bucket_params);

  // The step charges the ZeRO-2 queue (as ZeroTwoReduceScattersEveryMicrobatch) with those
  // buckets: 2 reductions a step and the weights gathered bucket by bucket in forward.
  const StepResult zero2 = Eval(job);
  ASSERT_EQ(zero2.microbatches, 2);
  const double expected = ZeroTwoDpReference(job, c, 2);
  EXPECT_NEAR(zero2.breakdown_s.dp_comm, expected, 1e-9 * expected);

  // Composer's DDP (ZeRO-0) keeps PyTorch's 25 MiB buckets of its fp32 gradients.
  spec["training"]["framework"] = "composer";
  spec["parallelism"] = {{"zero_stage", 0}};
  EXPECT_DOUBLE_EQ(GradBucketParams(Parse(spec)), 26214400.0 / 4.0);
  // DeepSpeed's ZeRO-2 reduces in its reduce_bucket_size (5e8 elements) whatever the layer.
  spec["training"]["framework"] = "deepspeed";
  spec["parallelism"] = {{"zero_stage", 2}};
  EXPECT_DOUBLE_EQ(GradBucketParams(Parse(spec)), 5e8);
}

// The weights are gathered in the precision they are kept in: a model trained in fp32 (or tf32)
// gathers 4 bytes per parameter after the ZeRO-1 step and per layer under FSDP, as Megatron's
// distributed optimizer gathers its param buffer and FSDP without a mixed-precision param_dtype
// its fp32 flat parameters; 16-bit training gathers 2. Before 2026-12-02 every precision was
// charged 2 bytes: the validator's CPU ranks, which train in fp32, gathered twice what the
// model charged.
TEST_F(CostModelTest, WeightsAreGatheredInTheirOwnPrecision) {
  nlohmann::json spec = Spec("llama3-8b", "h100-sxm5-80gb", 64);
  spec["parallelism"] = {{"zero_stage", 1}, {"dp_overlap", false}};
  const JobSpec bf16 = Parse(spec);
  spec["training"]["precision"] = "fp32";
  const JobSpec fp32 = Parse(spec);
  spec["training"]["precision"] = "tf32";
  const JobSpec tf32 = Parse(spec);
  EXPECT_EQ(Costs(bf16).weight_gather_bytes_per_param, 2.0);
  EXPECT_EQ(Costs(fp32).weight_gather_bytes_per_param, 4.0);
  EXPECT_EQ(Costs(tf32).weight_gather_bytes_per_param, 4.0);
  const StepCosts c = Costs(fp32);
  const double params = ParamsPerGpu(fp32, 0).trainable;
  EXPECT_DOUBLE_EQ(WeightGatherSeconds(c, 1, params, 0),
                   CollectiveSeconds(Collective::kAllGather, 4.0 * params, c.dp_link));
  // Unbucketed (no overlap), the step's DP time is the reduce-scatter and that gather.
  const double expected = GradReduceSeconds(c, 1, params, 0) + WeightGatherSeconds(c, 1, params, 0);
  EXPECT_NEAR(Eval(fp32).breakdown_s.dp_comm, expected, 1e-9 * expected);
}

// Megatron-Core runs the column-parallel layers' backward collectives beside their GEMMs
// (FrameworkSpec::tp_backward_overlap, TpAsyncBackwardSeconds; golden test
// Golden.MegatronAsyncTpBackward); parallelism.tp_backward_overlap false, as Megatron-LM of 2021
// and Megatron-DeepSpeed by default, runs them in line like the forward's.
TEST_F(CostModelTest, MegatronOverlapsTheBackwardTpCollectives) {
  nlohmann::json spec = Spec("llama3-8b", "h100-sxm5-80gb", 8);
  spec["parallelism"] = {{"tp", 8}, {"sequence_parallel", true}};
  const JobSpec async = Parse(spec);
  EXPECT_TRUE(async.parallel.TpBackwardOverlap(async.training.framework));
  const LayerCosts a = Costs(async).dense;
  EXPECT_GT(a.tp_bwd, 0);
  EXPECT_LT(a.tp_bwd, a.tp_fwd);
  spec["parallelism"]["tp_backward_overlap"] = false;
  const JobSpec in_line = Parse(spec);
  const LayerCosts b = Costs(in_line).dense;
  EXPECT_DOUBLE_EQ(b.tp_bwd, b.tp_fwd);
  EXPECT_DOUBLE_EQ(a.tp_fwd, b.tp_fwd);
  EXPECT_LT(Eval(async).step_time_s, Eval(in_line).step_time_s);
  // Other stacks keep theirs in line unless the spec says otherwise.
  spec["parallelism"].erase("tp_backward_overlap");
  spec["training"]["framework"] = "deepspeed";
  const LayerCosts d = Costs(Parse(spec)).dense;
  EXPECT_DOUBLE_EQ(d.tp_bwd, d.tp_fwd);
  spec["parallelism"]["tp_backward_overlap"] = true;
  EXPECT_LT(Costs(Parse(spec)).dense.tp_bwd, d.tp_fwd);
}

TEST_F(CostModelTest, FasterNetworkHelpsCrossNodeJobs) {
  nlohmann::json spec = Spec("llama3-70b", "h100-sxm5-80gb", 128);
  spec["parallelism"] = {{"tp", 8}, {"zero_stage", 3}};
  spec["cluster"]["inter_node"] = "eth-25";
  const StepResult slow = Eval(Parse(spec));
  spec["cluster"]["inter_node"] = "ib-ndr-400";
  const StepResult fast = Eval(Parse(spec));
  EXPECT_LT(fast.step_time_s, slow.step_time_s);
}

// HSDP (PyTorch FSDP HYBRID_SHARD): ZeRO-3 shards over dp/r x cp ranks, gathers and
// reduce-scatters inside that group, all-reduces each rank's gradient shard across the r
// replicas, and keeps r times the sharded state of a flat ZeRO-3.
TEST_F(CostModelTest, HybridShardingGathersInsideTheGroupAndAllReducesAcrossReplicas) {
  nlohmann::json spec = Spec("llama3-8b", "h100-sxm5-80gb", 64);
  spec["parallelism"] = {{"zero_stage", 3}};
  const JobSpec flat = Parse(spec);
  spec["parallelism"]["dp_replicate"] = 8;
  const JobSpec hsdp = Parse(spec);
  const GpuSpec& gpu = *db_->FindGpu("h100-sxm5-80gb");
  const NetworkSpec& net = *db_->FindNetwork(hsdp.cluster.inter_node);
  const StepCosts c = ComputeStepCosts(hsdp, gpu, net, DatasheetRates(gpu, Precision::kBf16));
  // One shard group per node, replicas one node apart.
  EXPECT_EQ(c.shard_link.ranks, 8);
  EXPECT_EQ(c.shard_link.nodes(), 1);
  EXPECT_EQ(c.replicate_link.ranks, 8);
  EXPECT_EQ(c.replicate_link.ranks_per_node, 1);
  const double params = 1e9;
  const double bytes = c.grad_bytes_per_param * params;
  EXPECT_NEAR(FsdpReduceSeconds(c, DenseParams(params)),
              CollectiveSeconds(Collective::kReduceScatter, bytes, c.shard_link) +
                  CollectiveSeconds(Collective::kAllReduce, bytes / 8, c.replicate_link),
              1e-12);
  EXPECT_NEAR(FsdpGatherSeconds(c, DenseParams(params)),
              CollectiveSeconds(Collective::kAllGather, 2 * params, c.shard_link), 1e-12);
  const StepCosts f = ComputeStepCosts(flat, gpu, net, DatasheetRates(gpu, Precision::kBf16));
  EXPECT_EQ(f.shard_link.ranks, 64);
  EXPECT_EQ(f.replicate_link.ranks, 1);
  EXPECT_NEAR(FsdpReduceSeconds(f, DenseParams(params)),
              CollectiveSeconds(Collective::kReduceScatter, bytes, f.dp_link), 1e-12);
  // The step charges both per micro-batch, so the flat and the hybrid layout differ in DP time.
  const StepResult a = Eval(flat);
  const StepResult b = Eval(hsdp);
  EXPECT_NE(a.breakdown_s.dp_comm, b.breakdown_s.dp_comm);
  // Model state is sharded 8 ways instead of 64; both keep the same two unsharded layer
  // gradients during backward.
  EXPECT_NEAR(b.memory.optimizer_bytes, 8 * a.memory.optimizer_bytes,
              1e-9 * b.memory.optimizer_bytes);
  const ShardParams p = ParamsPerGpu(flat, 0);
  const double in_flight = (4.0 + 2.0) * p.trainable / static_cast<double>(StageLayers(flat, 0));
  EXPECT_NEAR(b.memory.grads_bytes - in_flight, 8 * (a.memory.grads_bytes - in_flight),
              1e-9 * b.memory.grads_bytes);
}

// Golden: FSDP / ZeRO-3 gathers and reduce-scatters layer by layer (each layer a wrap unit, the
// embedding and LM head one more), so every collective's latency is paid per layer; prefetch
// hides them behind the micro-batch's computation except the first layer's gather.
TEST_F(CostModelTest, FsdpPaysEachCollectivePerLayer) {
  nlohmann::json spec = Spec("llama3-8b", "h100-sxm5-80gb", 512);  // 64 nodes, dp 512
  spec["parallelism"] = {{"zero_stage", 3}};
  spec["training"]["global_batch_size"] = 512;  // 1 micro-batch
  const JobSpec job = Parse(spec);
  const StepResult r = Eval(job);
  const StepCosts c = Costs(job);
  const ShardParams layer = LayerParamsPerGpu(job, false);
  const double layers = static_cast<double>(job.model.num_layers);
  const double rest = ParamsPerGpu(job, 0).Total() - layers * layer.Total();
  const double gather =
      layers * FsdpGatherSeconds(c, layer) + FsdpGatherSeconds(c, DenseParams(rest));
  const double reduce =
      layers * FsdpReduceSeconds(c, layer) + FsdpReduceSeconds(c, DenseParams(rest));
  const double compute =
      layers * c.dense.Compute() + c.embed_fwd + c.embed_bwd + c.head_fwd + c.head_bwd;
  const double all = 2.0 * gather + reduce;
  const double expected = Exposed(all, compute) + FsdpGatherSeconds(c, layer);
  EXPECT_NEAR(r.breakdown_s.dp_comm, expected, 1e-9 * expected);
  // One collective for the whole stage would pay the 512-GPU ring's latency once, not 3 x 33
  // times.
  EXPECT_GT(gather, FsdpGatherSeconds(c, ParamsPerGpu(job, 0)));
}

// Golden: under ZeRO-3 a MoE layer's routed experts are gathered and reduce-scattered over the
// expert shard group, the ranks that hold the same experts (where memory.cpp shards them), and
// its dense part over the shard group. Mixtral on 64 B200 at TP2 EP8: the expert shard group is
// tp x dp / (etp x ep) = 2 x 32 / (2 x 8) = 4 ranks, one per node; the dense shard group 32
// ranks, 4 per node.
TEST_F(CostModelTest, FsdpGathersExpertsOverTheExpertShardGroup) {
  nlohmann::json spec = Spec("mixtral-8x7b", "b200", 64);
  spec["training"]["global_batch_size"] = 256;
  spec["parallelism"] = {{"tp", 2}, {"ep", 8}, {"sequence_parallel", true}, {"zero_stage", 3}};
  const JobSpec zero3 = Parse(spec);
  const StepCosts c = Costs(zero3);
  EXPECT_EQ(c.shard_link.ranks, 32);
  EXPECT_EQ(c.expert_shard_link.ranks, 4);
  EXPECT_EQ(c.expert_shard_link.ranks_per_node, 1);
  const ShardParams layer = LayerParamsPerGpu(zero3, true);
  ASSERT_GT(layer.expert, 0);
  EXPECT_NEAR(FsdpGatherSeconds(c, layer),
              CollectiveSeconds(Collective::kAllGather, 2 * layer.dense, c.shard_link) +
                  CollectiveSeconds(Collective::kAllGather, 2 * layer.expert, c.expert_shard_link),
              1e-12);
  EXPECT_NEAR(
      FsdpReduceSeconds(c, layer),
      CollectiveSeconds(Collective::kReduceScatter, c.grad_bytes_per_param * layer.DenseTrainable(),
                        c.shard_link) +
          CollectiveSeconds(Collective::kReduceScatter,
                            c.grad_bytes_per_param * layer.ExpertTrainable(), c.expert_shard_link),
      1e-12);
  // ZeRO-3 reduce-scatters every micro-batch, as ZeRO-2 does, and gathers the weights besides:
  // it cannot move less than ZeRO-2.
  spec["parallelism"]["zero_stage"] = 2;
  EXPECT_GT(Eval(zero3).breakdown_s.dp_comm, Eval(Parse(spec)).breakdown_s.dp_comm);
  // HSDP: the expert shard group is the shard group's experts, its replicas one group apart.
  spec["parallelism"]["zero_stage"] = 3;
  spec["parallelism"]["dp_replicate"] = 2;
  const StepCosts h = Costs(Parse(spec));
  EXPECT_EQ(h.expert_shard_link.ranks, 2);
  EXPECT_EQ(h.expert_replicate_link.ranks, 2);
}

// Golden: without dp_overlap nothing of ZeRO-3's per-layer collectives is hidden, in the
// analytic model and in the event simulator alike.
TEST_F(CostModelTest, FsdpWithoutOverlapWaitsForEverything) {
  nlohmann::json spec = Spec("llama3-8b", "h100-sxm5-80gb", 64);
  spec["parallelism"] = {{"zero_stage", 3}};
  const JobSpec overlapped = Parse(spec);
  spec["parallelism"]["dp_overlap"] = false;
  const JobSpec blocking = Parse(spec);
  const StepCosts c = Costs(blocking);
  const ShardParams layer = LayerParamsPerGpu(blocking, false);
  const double layers = static_cast<double>(blocking.model.num_layers);
  ShardParams rest;
  rest.dense = ParamsPerGpu(blocking, 0).Total() - layers * layer.Total();
  rest.trainable = rest.dense;
  const double all = 2.0 * (layers * FsdpGatherSeconds(c, layer) + FsdpGatherSeconds(c, rest)) +
                     layers * FsdpReduceSeconds(c, layer) + FsdpReduceSeconds(c, rest);
  const StepResult r = Eval(blocking);
  EXPECT_NEAR(r.breakdown_s.dp_comm, static_cast<double>(r.microbatches) * all,
              1e-9 * r.breakdown_s.dp_comm);
  EXPECT_GT(r.step_time_s, Eval(overlapped).step_time_s);
  const GpuSpec& gpu = *db_->FindGpu(blocking.cluster.gpu);
  const NetworkSpec& net = *db_->FindNetwork(blocking.cluster.inter_node);
  const Expected<EventSimResult> a = SimulateStepEvents(overlapped, gpu, net);
  const Expected<EventSimResult> b = SimulateStepEvents(blocking, gpu, net);
  ASSERT_TRUE(a.ok() && b.ok());
  // (the simulator runs a layer's reduce-scatter beside the next layer's gather)
  EXPECT_GT(b->breakdown_s.dp_comm, 0.8 * r.breakdown_s.dp_comm);
  EXPECT_GT(b->step_time_s, a->step_time_s);
}

// Golden: full recomputation's forward runs inside the backward on the weights the backward
// gathered (PyTorch FSDP skips its pre-forward unshard in the pre-backward state, Megatron-FSDP
// likewise, DeepSpeed keeps them within stage3_max_reuse_distance): ZeRO-3 moves the same bytes
// per micro-batch with and without it, two gathers and one reduce-scatter per layer, in the
// analytic model and in the event simulator.
TEST_F(CostModelTest, FsdpRecomputationReusesTheBackwardGather) {
  nlohmann::json spec = Spec("llama3-8b", "h100-sxm5-80gb", 64);
  spec["parallelism"] = {{"zero_stage", 3}, {"dp_overlap", false}};
  const JobSpec plain = Parse(spec);
  spec["training"]["recompute"] = "full";
  const JobSpec recomputed = Parse(spec);
  const StepResult a = Eval(plain);
  const StepResult b = Eval(recomputed);
  EXPECT_EQ(kFsdpGathersPerMicroBatch, 2);
  EXPECT_NEAR(b.breakdown_s.dp_comm, a.breakdown_s.dp_comm, 1e-12 * a.breakdown_s.dp_comm);
  EXPECT_GT(b.breakdown_s.compute, a.breakdown_s.compute);
  const GpuSpec& gpu = *db_->FindGpu(plain.cluster.gpu);
  const NetworkSpec& net = *db_->FindNetwork(plain.cluster.inter_node);
  const Expected<EventSimResult> sa = SimulateStepEvents(plain, gpu, net);
  const Expected<EventSimResult> sb = SimulateStepEvents(recomputed, gpu, net);
  ASSERT_TRUE(sa.ok() && sb.ok());
  EXPECT_NEAR(sb->breakdown_s.dp_comm, sa->breakdown_s.dp_comm, 0.02 * sa->breakdown_s.dp_comm);
}

// Golden: a pipeline stage that keeps its weights gathered (torchtitan) gathers each layer once
// per step and reduce-scatters the accumulated gradients once, after the last backward
// (torch.distributed.pipelining runs FSDP's post_backward by hand then); the baseline does both
// gathers (forward, and backward, which the recomputation reuses) and the reduce-scatter every
// micro-batch. Without dp_overlap the analytic model charges all of it: m x (2G + R) against
// G + R.
TEST_F(CostModelTest, TorchtitanGathersAPipelineStageOncePerStep) {
  nlohmann::json spec = Spec("llama3-8b", "h100-sxm5-80gb", 64);
  spec["training"]["recompute"] = "full";
  spec["training"]["framework"] = "torchtitan";
  spec["parallelism"] = {{"pp", 2}, {"dp", 32}, {"fsdp", true}, {"dp_overlap", false}};
  const JobSpec titan = Parse(spec);
  spec["training"]["framework"] = "megatron-core";
  const JobSpec baseline = Parse(spec);
  const StepResult kept = Eval(titan), base = Eval(baseline);
  ASSERT_EQ(kept.microbatches, 2);
  const StepCosts c = Costs(titan);
  // The slowest stage's collectives: its layers and the embedding or head unit.
  double expected_kept = 0, expected_base = 0;
  for (int64_t stage = 0; stage < 2; ++stage) {
    const ShardParams layer = LayerParamsPerGpu(titan, false);
    const double layers = static_cast<double>(StageLayers(titan, stage));
    ShardParams rest;
    rest.dense = ParamsPerGpu(titan, stage).Total() - layers * layer.Total();
    rest.trainable = rest.dense;
    const double g = layers * FsdpGatherSeconds(c, layer) + FsdpGatherSeconds(c, rest);
    const double r = layers * FsdpReduceSeconds(c, layer) + FsdpReduceSeconds(c, rest);
    expected_kept = std::max(expected_kept, g + r);
    expected_base = std::max(expected_base, 2.0 * (2.0 * g + r));
  }
  EXPECT_NEAR(kept.breakdown_s.dp_comm, expected_kept, 0.05 * expected_kept);
  EXPECT_NEAR(base.breakdown_s.dp_comm, expected_base, 0.05 * expected_base);
  EXPECT_LT(kept.step_time_s, base.step_time_s);
}

// Golden: the optimizer updates the rank's shard as memory holds it: the dense parameters
// divided by the shard group, the experts' by the expert shard group. Mixtral at TP2 ZeRO-1 on
// 64 H100 keeps the same optimizer state at EP1 and EP8 (EP divides the experts, expert-DP
// shards them 8 times fewer), so its update takes the same time.
TEST_F(CostModelTest, OptimizerUpdatesTheExpertShard) {
  nlohmann::json spec = Spec("mixtral-8x7b", "h100-sxm5-80gb", 64);
  spec["training"]["global_batch_size"] = 256;
  spec["parallelism"] = {{"tp", 2}, {"sequence_parallel", true}, {"zero_stage", 1}};
  const StepResult ep1 = Eval(Parse(spec));
  spec["parallelism"]["ep"] = 8;
  const JobSpec job = Parse(spec);
  const StepResult ep8 = Eval(job);
  EXPECT_NEAR(ep8.memory.optimizer_bytes, ep1.memory.optimizer_bytes,
              1e-9 * ep1.memory.optimizer_bytes);
  EXPECT_NEAR(ep8.breakdown_s.optimizer, ep1.breakdown_s.optimizer,
              1e-9 * ep1.breakdown_s.optimizer);
  // Adam moves kAdamBytesPerParam per parameter of the shard.
  const ShardParams p = ParamsPerGpu(job, 0);
  const double shard = p.DenseTrainable() / static_cast<double>(job.parallel.ShardRanks()) +
                       p.ExpertTrainable() / static_cast<double>(job.parallel.ExpertShardRanks());
  EXPECT_NEAR(ep8.breakdown_s.optimizer,
              MemoryBoundSeconds(DatasheetRates(*db_->FindGpu(job.cluster.gpu), Precision::kBf16),
                                 kAdamBytesPerParam * shard, 10),
              1e-9 * ep8.breakdown_s.optimizer);
  // The event simulator updates the same shard.
  const Expected<EventSimResult> sim = SimulateStepEvents(
      job, *db_->FindGpu(job.cluster.gpu), *db_->FindNetwork(job.cluster.inter_node));
  ASSERT_TRUE(sim.ok()) << sim.status().message();
  EXPECT_NEAR(sim->breakdown_s.optimizer, ep8.breakdown_s.optimizer,
              1e-9 * ep8.breakdown_s.optimizer);
}

// Golden: selective recomputation checkpoints the core attention module whatever its kernel
// (Megatron-Core Attention._checkpointed_attention_forward): with a fused kernel the backward
// first runs its forward again, one attention forward per layer, and the layer keeps neither the
// kernel's log-sum-exp (4 bytes per query row and head) nor its own copy of the output; in 16
// bits the out-projection's input is that output, kept either way. The context-parallel ring is
// inside the core attention: it runs 4 passes per micro-batch instead of 3, as under full
// recomputation.
TEST_F(CostModelTest, SelectiveRecomputationRerunsTheFusedAttentionForward) {
  nlohmann::json spec = Spec("llama3-8b", "h100-sxm5-80gb", 8);
  spec["parallelism"] = {{"tp", 2}, {"sequence_parallel", true}};
  const JobSpec none = Parse(spec);
  spec["training"]["recompute"] = "selective";
  const JobSpec selective = Parse(spec);
  ASSERT_EQ(selective.training.attention, AttentionImpl::kFlash);
  const StepCosts c = Costs(selective);
  EXPECT_GT(c.dense.fwd_attn, 0);
  EXPECT_DOUBLE_EQ(c.dense.recompute, c.dense.fwd_attn);
  EXPECT_DOUBLE_EQ(Costs(none).dense.recompute, 0);
  EXPECT_GT(Eval(selective).step_time_s, Eval(none).step_time_s);
  const double sb = static_cast<double>(selective.training.seq_len);
  const double lse = 4.0 * sb * static_cast<double>(selective.model.num_attention_heads) / 2.0;
  EXPECT_NEAR(LayerActivationBytes(none, false, Recompute::kNone) -
                  LayerActivationBytes(selective, false, Recompute::kSelective),
              lse, 1e-9 * lse);
  spec["parallelism"]["cp"] = 2;
  const StepCosts ring = Costs(Parse(spec));
  ASSERT_GT(ring.dense.cp_pass, 0);
  EXPECT_DOUBLE_EQ(ring.dense.cp_comm, 4.0 * ring.dense.cp_pass);
}

// Golden: Megatron-Core's --recompute-modules (transformer_config.py recompute_modules). On a
// MoE layer, layernorm discards the pre-MLP norm's output (the router's input, h per token, split
// by t with sequence parallelism) and moe_act the routed experts' activation output (FC2's input,
// f_expert per routed copy), each 2 bytes in bf16, and the backward re-runs them: one norm pass
// (read h, write h per local token) and one SwiGLU pass (read 2f, write f per routed copy).
// Without core_attn the core attention is neither re-run nor dropped; a dense layer (Mixtral has
// none) would keep all. Mixtral on 64 H100 at TP2 EP8 with sequence parallelism, micro-batches
// of one 2,048-token sequence.
TEST_F(CostModelTest, RecomputedModulesRerunTheirMemoryBoundPasses) {
  nlohmann::json spec = Spec("mixtral-8x7b", "h100-sxm5-80gb", 64);
  spec["training"]["global_batch_size"] = 256;
  spec["parallelism"] = {{"tp", 2}, {"ep", 8}, {"sequence_parallel", true}, {"zero_stage", 1}};
  const JobSpec none = Parse(spec);
  spec["training"]["recompute"] = "selective";
  auto with = [&](std::vector<std::string> modules) {
    spec["training"]["recompute_modules"] = modules;
    return Parse(spec);
  };
  const JobSpec norm = with({"layernorm"});
  const JobSpec act = with({"moe_act"});
  const JobSpec both = with({"layernorm", "moe_act"});
  const JobSpec attn = with({"core_attn"});
  const ModelSpec& m = none.model;
  const double t = 2, T = static_cast<double>(none.training.seq_len);
  const double h = static_cast<double>(m.hidden_size);
  const double f = static_cast<double>(m.ExpertFfn());
  const double routed = static_cast<double>(m.moe_top_k);
  // Memory per layer and micro-batch.
  const double base = LayerActivationBytes(none, true, Recompute::kNone);
  const double norm_bytes = 2.0 * T * h / t;
  const double act_bytes = 2.0 * routed * T * f / t;
  EXPECT_NEAR(base - LayerActivationBytes(norm, true, Recompute::kSelective), norm_bytes,
              1e-9 * norm_bytes);
  EXPECT_NEAR(base - LayerActivationBytes(act, true, Recompute::kSelective), act_bytes,
              1e-9 * act_bytes);
  EXPECT_NEAR(base - LayerActivationBytes(both, true, Recompute::kSelective),
              norm_bytes + act_bytes, 1e-9 * act_bytes);
  EXPECT_LT(LayerActivationBytes(attn, true, Recompute::kSelective), base);
  // Time: the two memory-bound passes, no attention forward.
  const DeviceRates r = DatasheetRates(*db_->FindGpu("h100-sxm5-80gb"), Precision::kBf16);
  EXPECT_DOUBLE_EQ(Costs(none).moe.recompute, 0);
  EXPECT_NEAR(Costs(norm).moe.recompute, MemoryBoundSeconds(r, 2.0 * 2.0 * h * T / t, 1), 1e-15);
  EXPECT_NEAR(Costs(act).moe.recompute, MemoryBoundSeconds(r, 2.0 * routed * 3.0 * f / t * T, 1),
              1e-15);
  EXPECT_NEAR(Costs(both).moe.recompute,
              MemoryBoundSeconds(r, 2.0 * (2.0 * h * T / t + routed * 3.0 * f / t * T), 2), 1e-15);
  EXPECT_DOUBLE_EQ(Costs(attn).moe.recompute, Costs(attn).moe.fwd_attn);
  EXPECT_DOUBLE_EQ(RecomputedAttentionForwards(both.training), 0);
  EXPECT_DOUBLE_EQ(RecomputedAttentionForwards(attn.training), 1);
  EXPECT_GT(Eval(both).step_time_s, Eval(none).step_time_s);
  EXPECT_LT(Eval(both).step_time_s, Eval(attn).step_time_s);
  EXPECT_LT(Eval(both).memory.peak_bytes, Eval(none).memory.peak_bytes);
  // The event simulator re-runs the same passes.
  for (const JobSpec& job : {none, both}) {
    const Expected<EventSimResult> sim = SimulateStepEvents(
        job, *db_->FindGpu(job.cluster.gpu), *db_->FindNetwork(job.cluster.inter_node));
    ASSERT_TRUE(sim.ok()) << sim.status().message();
  }
}

// Golden: the re-run modules come back for their layer's backward (Megatron-Core's
// CheckpointWithoutOutput re-runs them from a gradient hook while the micro-batch's stored
// activations are all held), so a stage with MoE layers holds one MoE layer's discarded bytes
// beside its stored activations at its peak, as full recomputation holds one re-materialised
// layer. Mixtral on 64 H100 as above; a stage without MoE layers holds none.
TEST_F(CostModelTest, RecomputedModulesHoldOneLayersRerunAtThePeak) {
  nlohmann::json spec = Spec("mixtral-8x7b", "h100-sxm5-80gb", 64);
  spec["training"]["global_batch_size"] = 256;
  spec["parallelism"] = {{"tp", 2}, {"ep", 8}, {"sequence_parallel", true}, {"zero_stage", 1}};
  const JobSpec none = Parse(spec);
  spec["training"]["recompute"] = "selective";
  spec["training"]["recompute_modules"] = {"core_attn", "layernorm", "moe_act"};
  JobSpec both = Parse(spec);
  spec["training"]["recompute_modules"] = {"core_attn"};
  const JobSpec attn = Parse(spec);
  const ModelSpec& m = none.model;
  const double t = 2, T = static_cast<double>(none.training.seq_len);
  const double one_layer =
      2.0 * T * static_cast<double>(m.hidden_size) / t +
      2.0 * static_cast<double>(m.moe_top_k) * T * static_cast<double>(m.ExpertFfn()) / t;
  EXPECT_NEAR(RerunModuleBytes(both, true), one_layer, 1e-9 * one_layer);
  EXPECT_DOUBLE_EQ(RerunModuleBytes(none, true), 0);
  EXPECT_DOUBLE_EQ(RerunModuleBytes(attn, true), 0);
  const GpuSpec& gpu = *db_->FindGpu("h100-sxm5-80gb");
  auto held = [&](const JobSpec& job, int64_t stage) {
    return StageMemory(job, gpu, stage).activations_bytes -
           StageActivationBytes(job, JobLayerActivations(job), stage);
  };
  EXPECT_NEAR(held(both, 0), one_layer, 1e-9 * one_layer);
  EXPECT_DOUBLE_EQ(held(attn, 0), 0);
  // Two stages of 16 layers, the first 16 dense: only the second stage re-runs modules.
  both.model.moe_first_dense_layers = 16;
  both.parallel.pp = 2;
  both.parallel.dp /= 2;
  EXPECT_DOUBLE_EQ(held(both, 0), 0);
  EXPECT_NEAR(held(both, 1), one_layer, 1e-9 * one_layer);
}

// Golden: recompute_modules mlp checkpoints a dense layer's MLP (Megatron-Core
// transformer_layer.py _forward_mlp: tensor_parallel.checkpoint(self.mlp, False,
// pre_mlp_layernorm_output); not MoE layers). Only its input is kept, which the pre-MLP norm
// (fused into FC1 by Transformer Engine) stores anyway: the layer no longer stores FC1's input
// (2 bytes x T/t x h with sequence parallelism) nor SwiGLU's gate and up (2 x 2 bytes x T x f/t)
// and product, FC2's input (2 bytes x T x f/t). Its backward first runs the MLP's forward again:
// the norm (read h, write h per local token), FC1, SwiGLU and FC2 (the layer's mlp_fwd), with the
// sequence-parallel all-gather and reduce-scatter around them; those bytes come back during the
// layer's backward. Llama 3 8B on 8 H100 at TP2, micro-batches of one 2,048-token sequence.
TEST_F(CostModelTest, CheckpointedMlpRerunsItsForwardWithItsCollectives) {
  nlohmann::json spec = Spec("llama3-8b", "h100-sxm5-80gb", 8);
  spec["parallelism"] = {{"tp", 2}, {"sequence_parallel", true}, {"zero_stage", 1}};
  const JobSpec none = Parse(spec);
  spec["training"]["recompute"] = "selective";
  spec["training"]["recompute_modules"] = {"mlp"};
  const JobSpec mlp = Parse(spec);
  const ModelSpec& m = none.model;
  const double t = 2, T = static_cast<double>(none.training.seq_len);
  const double h = static_cast<double>(m.hidden_size);
  const double f = static_cast<double>(m.ffn_hidden_size);
  const double discarded = 2.0 * T * h / t + 3.0 * 2.0 * T * f / t;
  EXPECT_NEAR(LayerActivationBytes(none, false, Recompute::kNone) -
                  LayerActivationBytes(mlp, false, Recompute::kSelective),
              discarded, 1e-9 * discarded);
  EXPECT_NEAR(RerunModuleBytes(mlp, false), discarded, 1e-9 * discarded);
  EXPECT_DOUBLE_EQ(RerunModuleBytes(none, false), 0);
  const GpuSpec& gpu = *db_->FindGpu("h100-sxm5-80gb");
  EXPECT_NEAR(StageMemory(mlp, gpu, 0).activations_bytes -
                  StageActivationBytes(mlp, JobLayerActivations(mlp), 0),
              discarded, 1e-9 * discarded);
  // Time: the MLP's forward and the norm again, and its all-gather and reduce-scatter.
  const StepCosts before = Costs(none);
  const StepCosts after = Costs(mlp);
  const DeviceRates r = DatasheetRates(gpu, Precision::kBf16);
  EXPECT_NEAR(after.dense.recompute,
              before.dense.mlp_fwd + MemoryBoundSeconds(r, 2.0 * 2.0 * h * T / t, 1), 1e-15);
  const double pair = CollectiveSeconds(Collective::kAllGather, T * h * 2.0, after.tp_link) +
                      CollectiveSeconds(Collective::kReduceScatter, T * h * 2.0, after.tp_link);
  EXPECT_NEAR(after.dense.tp_recompute, pair, 1e-15);
  EXPECT_NEAR(after.dense.tp_comm - before.dense.tp_comm, pair, 1e-15);
  // With TP overlap the re-run pays what the MLP's overlapped GEMMs take beyond themselves.
  spec["parallelism"]["tp_overlap"] = true;
  const StepCosts overlapped = Costs(Parse(spec));
  TpOverlapGemms g{
      T,
      h,
      (static_cast<double>(m.num_attention_heads) + 2.0 * static_cast<double>(m.num_kv_heads)) *
          static_cast<double>(m.HeadDim()) / t,
      static_cast<double>(m.num_attention_heads * m.HeadDim()) / t,
      2.0 * f / t,
      f / t};
  const double all = TpOverlapForward(r, g, after.tp_link, 2.0).Extra();
  g.fc1_width = g.fc2_width = 0;
  EXPECT_NEAR(overlapped.dense.tp_recompute,
              all - TpOverlapForward(r, g, after.tp_link, 2.0).Extra(), 1e-15);
  EXPECT_GT(Eval(mlp).step_time_s, Eval(none).step_time_s);
  EXPECT_LT(Eval(mlp).memory.peak_bytes, Eval(none).memory.peak_bytes);
  const Expected<EventSimResult> sim =
      SimulateStepEvents(mlp, gpu, *db_->FindNetwork(mlp.cluster.inter_node));
  ASSERT_TRUE(sim.ok()) << sim.status().message();
}

// Golden: a full recomputation re-runs each layer's forward with its collectives: the CP ring
// passes the K/V chunk 4 times per micro-batch instead of 3, and the EP dispatch and combine run
// 6 all-to-alls instead of 4 (Megatron-LM --recompute-granularity full checkpoints the layer).
TEST_F(CostModelTest, FullRecomputationRepeatsTheForwardCollectives) {
  nlohmann::json spec = Spec("mixtral-8x7b", "h100-sxm5-80gb", 64);
  spec["training"]["global_batch_size"] = 256;
  spec["parallelism"] = {{"tp", 2}, {"ep", 8}, {"sequence_parallel", true}, {"zero_stage", 1}};
  const StepCosts none = Costs(Parse(spec));
  spec["training"]["recompute"] = "full";
  const StepCosts full = Costs(Parse(spec));
  EXPECT_NEAR(full.moe.ep_comm / none.moe.ep_comm, 1.5, 1e-12);
  EXPECT_NEAR(full.moe.ep_pass, none.moe.ep_pass, 1e-15);
  EXPECT_NEAR(full.moe.tp_comm - none.moe.tp_comm, none.moe.tp_fwd, 1e-15);

  nlohmann::json cp = Spec("llama3-70b", "h100-sxm5-80gb", 64);
  cp["training"]["seq_len"] = 32768;
  cp["parallelism"] = {{"tp", 8}, {"cp", 8}, {"sequence_parallel", true}, {"zero_stage", 1}};
  const StepCosts a = Costs(Parse(cp));
  cp["training"]["recompute"] = "full";
  const StepCosts b = Costs(Parse(cp));
  EXPECT_NEAR(a.dense.cp_comm, 3 * a.dense.cp_pass, 1e-15);
  EXPECT_NEAR(b.dense.cp_comm, 4 * b.dense.cp_pass, 1e-15);
}

// Golden: every stage synchronises its gradients after its own last backward and the step ends
// with the latest; stage s starts s stages' backward passes earlier in the pipeline's drain.
// DeepSeek-V3 on 2,048 B200 (TP2 CP4 PP16 EP2 ZeRO-1): the first stage, light with its dense
// layers but holding the embedding, whose gradient is the last to be ready, ends the step
// whatever the split, as the event simulator finds.
TEST_F(CostModelTest, DpSyncEndsWithTheLatestStage) {
  nlohmann::json spec = Spec("deepseek-v3", "b200", 2048);
  spec["cluster"]["inter_node"] = "efa-p6-b200";
  spec["training"] = {{"seq_len", 4096}, {"global_batch_size", 1024}, {"micro_batch_size", 1}};
  spec["parallelism"] = {{"tp", 2},        {"cp", 4},  {"pp", 16},
                         {"ep", 2},        {"etp", 1}, {"sequence_parallel", true},
                         {"zero_stage", 1}};
  const GpuSpec& gpu = *db_->FindGpu("b200");
  const NetworkSpec& net = *db_->FindNetwork("efa-p6-b200");
  for (const auto& [first, last] : {std::pair{3, 2}, std::pair{4, 1}, std::pair{1, 4}}) {
    spec["parallelism"]["first_stage_layers"] = first;
    spec["parallelism"]["last_stage_layers"] = last;
    const JobSpec job = Parse(spec);
    const StepResult analytic = Eval(job);
    const Expected<EventSimResult> sim = SimulateStepEvents(job, gpu, net);
    ASSERT_TRUE(sim.ok()) << sim.status().message();
    EXPECT_NEAR(analytic.breakdown_s.dp_comm / sim->breakdown_s.dp_comm, 1.0, 0.05)
        << first << "/" << last;
  }
}

// Golden: local attention. A sliding window of w keys leaves a query of a sequence of s > w
// tokens w - w^2/(2s) keys on average (the first w queries see their prefix), chunks of c keep
// each query inside its chunk; up to the window nothing changes. A layer's fused attention does
// those FLOPs at the rate of a sequence as long as the window; the model FLOPs count s x the
// window per local layer (Megatron's convention: no causal halving).
TEST_F(CostModelTest, LocalAttentionAttendsItsWindow) {
  ModelSpec m = *FindModelPreset("mistral-7b");
  m.attention_window = 4096;
  m.local_attention_layers = m.num_layers;
  EXPECT_DOUBLE_EQ(CausalKeysPerQuery(m, 32768, true), 4096 - 4096.0 * 4096 / (2 * 32768));
  EXPECT_DOUBLE_EQ(CausalKeysPerQuery(m, 32768, false), 16384);
  EXPECT_DOUBLE_EQ(CausalKeysPerQuery(m, 4096, true), 2048);
  m.attention_chunked = true;
  m.attention_window = 8192;
  EXPECT_DOUBLE_EQ(CausalKeysPerQuery(m, 32768, true), 4096);
  EXPECT_DOUBLE_EQ(CausalKeysPerQuery(m, 10000, true), (8192.0 * 8192 + 1808.0 * 1808) / 20000);

  nlohmann::json spec = Spec("mistral-7b", "h100-sxm5-80gb", 8);
  spec["training"]["seq_len"] = 32768;
  spec["training"]["global_batch_size"] = 8;
  spec["parallelism"] = {{"tp", 8}, {"sequence_parallel", true}};
  const JobSpec windowed = Parse(spec);  // the preset's 4,096-token window on every layer
  ASSERT_EQ(windowed.model.attention_window, 4096);
  nlohmann::json full_model = JobSpecToJson(windowed)["model"];
  full_model.erase("attention_window");
  full_model.erase("local_attention_layers");
  spec["model"] = full_model;
  const JobSpec full = Parse(spec);
  spec["model"] = "mistral-7b";
  const StepCosts a = Costs(full);
  const StepCosts b = Costs(windowed);
  const GpuSpec& gpu = *db_->FindGpu("h100-sxm5-80gb");
  const DeviceRates r = DatasheetRates(gpu, Precision::kBf16);
  const double heads = 32.0 / 8, d = 128, tokens = 32768;
  const double flops = 4.0 * heads * tokens * (4096 - 4096.0 * 4096 / (2 * 32768)) * d;
  EXPECT_NEAR(b.dense.fwd_attn,
              flops / (r.attention_flops_per_s *
                       AttentionLengthFactor(4096, r.attention_half_rate_tokens)) +
                  r.kernel_overhead_s,
              1e-12);
  EXPECT_LT(b.dense.fwd_attn, 0.3 * a.dense.fwd_attn);
  EXPECT_DOUBLE_EQ(b.dense.fwd_gemm, a.dense.fwd_gemm);
  // Model FLOPs: the attention core of every layer is s x 2 (w - w^2/2s) instead of s x s.
  const double core_full = DenseLayerForwardFlops(full.model, tokens).attn_core;
  const double core_local = DenseLayerForwardFlops(windowed.model, tokens).attn_core;
  EXPECT_NEAR(core_local / core_full, 2.0 * (4096 - 4096.0 * 4096 / (2 * 32768)) / 32768, 1e-12);
  // Up to the window nothing changes.
  spec["training"]["seq_len"] = 4096;
  const JobSpec short_windowed = Parse(spec);
  spec["model"] = full_model;
  EXPECT_DOUBLE_EQ(Eval(short_windowed).step_time_s, Eval(Parse(spec)).step_time_s);
}

TEST_F(CostModelTest, MixtureOfExpertsUsesAllToAll) {
  nlohmann::json spec = Spec("mixtral-8x7b", "h100-sxm5-80gb", 64);
  spec["parallelism"] = {{"tp", 2}, {"ep", 8}, {"sequence_parallel", true}, {"zero_stage", 1}};
  const StepResult r = Eval(Parse(spec));
  EXPECT_GT(r.breakdown_s.ep_comm, 0);
  EXPECT_TRUE(r.memory.fits);
}

// Megatron-Core's all-to-all dispatcher (token_dispatcher.py: permute -> A2A(EP) -> AG(ETP),
// RS(ETP) -> A2A(EP) -> unpermute): each rank sends the top_k copies of its T/t local tokens over
// EP, and the expert TP group gathers them; the expert GEMMs keep the FLOPs of f/t on T rows.
TEST_F(CostModelTest, MoeDispatcherSendsLocalTokensAndGathersOverExpertTp) {
  nlohmann::json spec = Spec("mixtral-8x7b", "h100-sxm5-80gb", 64);
  spec["parallelism"] = {{"tp", 2}, {"ep", 8}, {"sequence_parallel", true}, {"zero_stage", 1}};
  const JobSpec folded_spec = [&] {
    nlohmann::json s = spec;
    s["parallelism"]["etp"] = 1;
    return Parse(s);
  }();
  const JobSpec job = Parse(spec);  // etp = tp = 2
  const StepCosts c = Costs(job);
  const StepCosts folded = Costs(folded_spec);
  const double T = 2048, h = 4096, k = 2, t = 2;
  const double routed = T / t * k * h * 2.0;  // bf16 copies of the local tokens
  EXPECT_DOUBLE_EQ(c.moe.ep_bytes, routed);
  EXPECT_DOUBLE_EQ(c.moe.ep_comm,
                   4.0 * CollectiveSeconds(Collective::kAllToAll, routed, c.ep_link));
  // EP strides the expert TP group: etp = 2 places the 8 ranks 2 apart, etp = 1 next to each
  // other; both inside one 8-GPU node here only for etp = 1.
  EXPECT_DOUBLE_EQ(c.ep_link.ranks, 8.0);
  EXPECT_GT(c.ep_link.nodes(), 1.0);
  EXPECT_DOUBLE_EQ(folded.ep_link.nodes(), 1.0);
  // TP: the attention pair of T x h, then the routed pair of etp x T/t x k rows over the expert
  // TP group (Mixtral has no shared experts, so no dense MLP pair).
  const double pair = CollectiveSeconds(Collective::kAllGather, T * h * 2.0, c.tp_link) +
                      CollectiveSeconds(Collective::kReduceScatter, T * h * 2.0, c.tp_link);
  const double routed_pair = CollectiveSeconds(Collective::kAllGather, t * routed, c.tp_link) +
                             CollectiveSeconds(Collective::kReduceScatter, t * routed, c.tp_link);
  EXPECT_DOUBLE_EQ(c.moe.tp_fwd, pair + routed_pair);
  EXPECT_DOUBLE_EQ(folded.moe.tp_fwd, pair);
  // The same FLOPs either way: e/t x T rows at width f/e.
  EXPECT_DOUBLE_EQ(c.moe.fwd_flops, folded.moe.fwd_flops);
  // Expert weights split over ep x etp.
  EXPECT_DOUBLE_EQ(LayerParamsPerGpu(folded_spec, true).expert,
                   2.0 * LayerParamsPerGpu(job, true).expert);
}

TEST_F(CostModelTest, MoeLoadImbalanceAndDeepEpDispatch) {
  nlohmann::json spec = Spec("mixtral-8x7b", "h100-sxm5-80gb", 64);
  spec["parallelism"] = {{"tp", 1}, {"ep", 8}, {"zero_stage", 1}};
  const JobSpec balanced = Parse(spec);
  spec["training"]["moe_load_imbalance"] = 1.5;
  const JobSpec skewed = Parse(spec);
  const StepCosts b = Costs(balanced);
  const StepCosts s = Costs(skewed);
  // The busiest rank runs 1.5x the routed rows and receives 1.5x the copies.
  EXPECT_DOUBLE_EQ(s.moe.ep_bytes, 1.5 * b.moe.ep_bytes);
  EXPECT_DOUBLE_EQ(s.moe.ep_comm,
                   4.0 * CollectiveSeconds(Collective::kAllToAll, s.moe.ep_bytes, s.ep_link));
  EXPECT_GT(s.moe.fwd_gemm, b.moe.fwd_gemm);
  EXPECT_DOUBLE_EQ(s.moe.fwd_flops - b.moe.fwd_flops,
                   0.5 * 2.0 * 2048 * 2.0 * 4096 * 3.0 * 14336);  // k x rows x h x 3f
  EXPECT_GT(EvaluateStep(skewed, *db_->FindGpu("h100-sxm5-80gb"),
                         *db_->FindNetwork(skewed.cluster.inter_node))
                .memory.activations_bytes,
            EvaluateStep(balanced, *db_->FindGpu("h100-sxm5-80gb"),
                         *db_->FindNetwork(balanced.cluster.inter_node))
                .memory.activations_bytes);
  // DeepEP: EP 8 inside one node moves each token once per other rank it reaches.
  spec["training"]["moe_load_imbalance"] = 1.0;
  spec["training"]["moe_dispatcher"] = "deepep";
  const StepCosts d = Costs(Parse(spec));
  EXPECT_DOUBLE_EQ(d.moe.ep_comm, 4.0 * DeepEpSeconds(RoutingOf(balanced.model), 2048, 4096 * 2.0,
                                                      1.0, d.ep_link));
  EXPECT_EQ(d.moe.ep_bytes, b.moe.ep_bytes);
}

TEST_F(CostModelTest, MeasuredRatesReplaceDatasheet) {
  nlohmann::json spec = Spec("gpt2-xl", "a100-sxm4-80gb", 1);
  spec["training"]["seq_len"] = 1024;  // GPT-2's learned positions
  const JobSpec job = Parse(spec);
  const GpuSpec& gpu = *db_->FindGpu("a100-sxm4-80gb");
  DeviceRates rates = DatasheetRates(gpu, job.training.precision);
  const double base =
      EvaluateStep(job, gpu, *db_->FindNetwork(job.cluster.inter_node), rates).step_time_s;
  rates.matmul_flops_per_s *= 0.5;
  const double slower =
      EvaluateStep(job, gpu, *db_->FindNetwork(job.cluster.inter_node), rates).step_time_s;
  EXPECT_GT(slower, 1.4 * base);
}

}  // namespace
}  // namespace gpuplan
