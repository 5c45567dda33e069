// The training-stack table (simulator/framework.h) and what each row changes in memory, checked
// against counts read from the stacks' code.
#include <gtest/gtest.h>

#include <string>

#include "simulator/framework.h"
#include "simulator/job.h"
#include "simulator/memory.h"
#include "tests/builtin_db.h"

namespace gpuplan {
namespace {

// The sweep's 1B Llama layer (nanotron scripts/scaling_benchmarks.py): h 2048, 32 heads, MHA,
// SwiGLU 8192, vocabulary 131072, tied embeddings, one node of H100.
JobSpec Llama1B(Framework framework) {
  JobSpec j;
  ModelSpec& m = j.model;
  m.name = "1B";
  m.num_layers = 16;
  m.hidden_size = 2048;
  m.ffn_hidden_size = 8192;
  m.num_attention_heads = 32;
  m.num_kv_heads = 32;
  m.vocab_size = 131072;
  m.mlp = MlpKind::kSwiGlu;
  m.tied_embeddings = true;
  j.cluster = {"h100-sxm5-80gb", 8, 8, "ib-ndr-400"};
  j.training.seq_len = 4096;
  j.training.global_batch_size = 8;
  j.training.framework = framework;
  j.parallel.dp = 8;
  return j;
}

TEST(Framework, TableNamesAndParse) {
  ASSERT_EQ(Frameworks().size(), 2u);
  EXPECT_EQ(Frameworks()[0].id, Framework::kMegatronCore);  // the default
  Framework f = Framework::kMegatronCore;
  EXPECT_TRUE(ParseFramework("nanotron", &f));
  EXPECT_EQ(f, Framework::kNanotron);
  EXPECT_FALSE(ParseFramework("Nanotron", &f));
  EXPECT_EQ(FrameworkNames(), "megatron-core, nanotron");
  EXPECT_STREQ(TraitsOf(Framework::kNanotron).name, "nanotron");
}

// nanotron models/llama.py, one layer, tp = 1, per token (elements): the two norm inputs (h
// each), the QKV and gate/up inputs (h each), the contiguous Q/K/V copy (q + 2kv), the K/V copy
// concatenated for the rotary kernel (2kv), the attention output (q), the merged gate/up output
// (2f), SiLU's output (f) and the product (f); 2 bytes each, plus FlashAttention's fp32
// log-sum-exp (4 bytes per head). Megatron-Core keeps neither copy nor SiLU's output.
TEST(Framework, NanotronLayerActivationsFromTheCode) {
  const double sb = 4096, h = 2048, q = 2048, kv = 2048, f = 8192, a = 32;
  const double lse = 4 * sb * a;
  const double nanotron = 2 * sb * (4 * h + (q + 2 * kv) + 2 * kv + q + 4 * f) + lse;
  const double megatron = 2 * sb * (4 * h + (q + 2 * kv) + q + 3 * f) + lse;
  EXPECT_DOUBLE_EQ(
      LayerActivationBytes(Llama1B(Framework::kNanotron), false, Recompute::kNone), nanotron);
  EXPECT_DOUBLE_EQ(
      LayerActivationBytes(Llama1B(Framework::kMegatronCore), false, Recompute::kNone), megatron);
}

// The loss buffers on the last stage: 16-bit logits + fp32 copy (Megatron-Core subtracts the max
// in place: 6 bytes per logit), + a second fp32 buffer (nanotron: 10); and PyTorch DDP's 16-bit
// gradient buckets beside nanotron's fp32 main gradients (2 bytes per parameter, dp > 1 only).
TEST(Framework, LossBuffersAndDdpBuckets) {
  const GpuSpec& gpu = *BuiltinDb().FindGpu("h100-sxm5-80gb");
  const double logits = 4096.0 * 131072.0;
  const MemoryBreakdown megatron = EstimateMemory(Llama1B(Framework::kMegatronCore), gpu);
  const MemoryBreakdown nanotron = EstimateMemory(Llama1B(Framework::kNanotron), gpu);
  EXPECT_DOUBLE_EQ(megatron.logits_bytes, 6 * logits);
  EXPECT_DOUBLE_EQ(nanotron.logits_bytes, 10 * logits);
  EXPECT_DOUBLE_EQ(nanotron.grads_bytes - megatron.grads_bytes, 2 * megatron.weights_bytes / 2);
  JobSpec single = Llama1B(Framework::kNanotron);
  single.parallel.dp = 1;
  single.cluster.num_gpus = 1;
  const MemoryBreakdown alone = EstimateMemory(single, gpu);
  EXPECT_DOUBLE_EQ(alone.grads_bytes, 2 * alone.weights_bytes);  // fp32 main grads, no buckets
}

}  // namespace
}  // namespace gpuplan
