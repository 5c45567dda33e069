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
  job.parallel.schedule = l.schedule;
  const Status st = ValidateJob(job, BuiltinDb());
  EXPECT_TRUE(st.ok()) << st.message();
  return job;
}

}  // namespace gpuplan
