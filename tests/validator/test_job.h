// A validated Llama-family job on H100 nodes with the given layout, for the validator tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>

#include "simulator/job_spec_json.h"
#include "simulator/presets.h"
#include "tests/builtin_db.h"

namespace gpuplan {

struct TestLayout {
  int64_t tp = 1, cp = 1, dp = 1, pp = 1, ep = 1, vpp = 1;
  Schedule schedule = Schedule::k1F1B;
  const char* model = "llama3-8b";
  int64_t seq_len = 2048;
  bool sequence_parallel = false;
  int64_t etp = 0;  ///< expert TP; 0: tp
};

/// 8 GPUs per node (fewer when the job is smaller), micro-batch 1, 8 micro-batches per DP rank.
inline JobSpec TestJob(const TestLayout& l) {
  JobSpec job;
  job.model = *FindModelPreset(l.model);
  const int64_t gpus = l.tp * l.cp * l.dp * l.pp;
  job.cluster.gpu = "h100-sxm5-80gb";
  job.cluster.num_gpus = gpus;
  job.cluster.gpus_per_node = std::min<int64_t>(8, gpus);
  job.cluster.inter_node = "ib-ndr-400";
  job.training.seq_len = l.seq_len;
  job.training.micro_batch_size = 1;
  job.training.global_batch_size = l.dp * 8;
  job.parallel.tp = l.tp;
  job.parallel.cp = l.cp;
  job.parallel.dp = l.dp;
  job.parallel.pp = l.pp;
  job.parallel.ep = l.ep;
  job.parallel.vpp = l.vpp;
  job.parallel.sequence_parallel = l.sequence_parallel;
  job.parallel.etp = l.etp;
  job.parallel.schedule = l.schedule;
  const Status st = ValidateJob(job, BuiltinDb());
  EXPECT_TRUE(st.ok()) << st.message();
  return job;
}

/// Mixtral 8x7B at TP4 with sequence parallelism, DP8 and EP8 (32 ranks), 4,096 tokens, with
/// expert tensor parallelism `etp` (MoE Parallel Folding when below 4).
inline JobSpec FoldedMoeJob(int64_t etp) {
  return TestJob({.tp = 4,
                  .dp = 8,
                  .ep = 8,
                  .model = "mixtral-8x7b",
                  .seq_len = 4096,
                  .sequence_parallel = true,
                  .etp = etp});
}

/// A tiny Llama-style model (h 128, SwiGLU 344, 4 heads, 2 KV heads, untied vocabulary 4096) of
/// `layers` layers on the cpu device in fp32, global batch 4, with the layout of `l`; the overhead
/// is the cpu device's (none).
inline JobSpec TinyCpuJob(TestLayout l, int64_t layers) {
  JobSpec job = TestJob(l);
  job.model.name = "tiny";
  job.model.num_layers = layers;
  job.model.hidden_size = 128;
  job.model.ffn_hidden_size = 344;
  job.model.num_attention_heads = 4;
  job.model.num_kv_heads = 2;
  job.model.vocab_size = 4096;
  job.model.tied_embeddings = false;
  job.cluster.gpu = "cpu";
  job.cluster.inter_node = "eth-25";
  job.training.precision = Precision::kFp32;
  job.training.global_batch_size = 4;
  job.overhead = OverheadSpec{0, 0};
  const Status st = ValidateJob(job, BuiltinDb());
  EXPECT_TRUE(st.ok()) << st.message();
  return job;
}

}  // namespace gpuplan
