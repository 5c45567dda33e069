// Issue 17: the event simulation reported "the dependency graph has a cycle" for the interleaved
// schedule with a micro-batch count pp does not divide (pp 7, vpp 2, 9 micro-batches). Such jobs
// are now refused by ValidateJob (as Megatron-LM refuses them); every job it accepts simulates.
#include <gtest/gtest.h>

#include <string>

#include "simulator/event_sim.h"
#include "simulator/job_spec_json.h"
#include "tests/builtin_db.h"

namespace gpuplan {
namespace {

// A small model with `layers` layers on pp GPUs (one per stage), m micro-batches of one sequence.
nlohmann::json Spec(int64_t layers, int64_t pp, int64_t vpp, const std::string& schedule,
                    int64_t m) {
  return {{"model",
           {{"name", "small"},
            {"num_layers", layers},
            {"hidden_size", 256},
            {"ffn_hidden_size", 1024},
            {"num_attention_heads", 4},
            {"num_kv_heads", 4},
            {"vocab_size", 1000},
            {"mlp", "gelu"}}},
          {"cluster", {{"gpu", "h100-sxm5-80gb"}, {"num_gpus", pp}, {"gpus_per_node", 8}}},
          {"training", {{"seq_len", 512}, {"global_batch_size", m}, {"micro_batch_size", 1}}},
          {"parallelism", {{"pp", pp}, {"vpp", vpp}, {"schedule", schedule}}}};
}

Expected<EventSimResult> Simulate(const JobSpec& job) {
  EventSimOptions options;
  options.record_timeline = false;
  return SimulateStepEvents(job, *BuiltinDb().FindGpu(job.cluster.gpu),
                            *BuiltinDb().FindNetwork(job.cluster.inter_node), options);
}

TEST(ScheduleCycle, IssueCaseIsRefusedNamingTheGlobalBatch) {
  // Qwen2 7B-sized: 28 layers, pp 7, vpp 2 and 4, 9 micro-batches.
  for (int64_t vpp : {2, 4}) {
    Expected<JobSpec> job =
        ParseJobSpec(Spec(28, 7, vpp, "interleaved", 9), "job.json", ".", BuiltinDb());
    ASSERT_FALSE(job.ok());
    EXPECT_EQ(job.status().message(),
              "job.json: training: field 'global_batch_size': 9 / (micro_batch_size*dp = 1) = 9 "
              "micro-batches per step, not a multiple of parallelism.pp = 7 as the interleaved "
              "schedule needs (Megatron-LM runs micro-batches in groups of pp); use a multiple of "
              "7 micro-batches, or vpp = 1 with schedule '1f1b'");
  }
}

TEST(ScheduleCycle, EveryAcceptedJobSimulates) {
  for (const char* schedule : {"gpipe", "1f1b", "interleaved", "zb-h1"}) {
    const bool interleaved = std::string(schedule) == "interleaved";
    for (int64_t pp = 2; pp <= 8; ++pp) {
      for (int64_t vpp = 1; vpp <= (interleaved ? 4 : 1); ++vpp) {
        for (int64_t m = 1; m <= 3 * pp + 1; ++m) {
          const std::string what = std::string(schedule) + " pp " + std::to_string(pp) + " vpp " +
                                   std::to_string(vpp) + " m " + std::to_string(m);
          Expected<JobSpec> job =
              ParseJobSpec(Spec(pp * vpp, pp, vpp, schedule, m), "<test>", ".", BuiltinDb());
          // Only the interleaved schedule refuses a micro-batch count: one pp does not divide.
          EXPECT_EQ(job.ok(), !interleaved || m % pp == 0)
              << what << (job.ok() ? "" : ": " + job.status().message());
          if (!job.ok()) continue;
          Expected<EventSimResult> sim = Simulate(*job);
          ASSERT_TRUE(sim.ok()) << what << ": " << sim.status().message();
          EXPECT_GT(sim->step_time_s, 0) << what;
        }
      }
    }
  }
}

}  // namespace
}  // namespace gpuplan
