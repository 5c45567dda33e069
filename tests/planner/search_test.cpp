// The layout search (planner/search.h): its space, its results, and that its pruning never
// skips a faster layout (checked against a brute force over the same space).
#include "planner/search.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "hardware-db/hardware_db.h"
#include "planner/explain.h"
#include "simulator/cost_model.h"
#include "simulator/ep_overlap.h"
#include "simulator/job_spec_json.h"
#include "simulator/memory.h"
#include "simulator/presets.h"
#include "simulator/shard.h"

namespace gpuplan {
namespace {

class SearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Expected<HardwareDb> db = LoadHardwareDb({});
    ASSERT_TRUE(db.ok()) << db.status().message();
    db_ = std::move(db).value();
  }
  PlanRequest Request(const std::string& model, int64_t seq, int64_t gbs) const {
    PlanRequest req;
    req.model = FindModelPreset(model).value();
    req.train_tokens = 1e9;
    req.seq_len = seq;
    req.global_batch_sizes = {gbs};
    req.gpus = {"h100-sxm5-80gb"};
    req.max_gpus = 64;
    req.reliability = db_.reliability();
    return req;
  }
  HardwarePoint Point(const std::string& gpu, int64_t n) const {
    const GpuSpec* g = db_.FindGpu(gpu);
    const NodeTemplate* node = db_.FindNode(g->default_node);
    return {g, node, db_.FindNetwork(node->network), n};
  }
  HardwareDb db_;
};

TEST_F(SearchTest, GpuCounts) {
  EXPECT_EQ(CandidateGpuCounts(1, 64, 8), (std::vector<int64_t>{1, 2, 4, 8, 16, 24, 32, 48, 64}));
  EXPECT_EQ(CandidateGpuCounts(3, 8, 8), (std::vector<int64_t>{4, 8}));
  EXPECT_TRUE(CandidateGpuCounts(9, 15, 8).empty());
  const std::vector<int64_t> big = CandidateGpuCounts(1, 4096, 8);
  for (int64_t n = 1; n <= 4096; n *= 2) {
    EXPECT_NE(std::find(big.begin(), big.end(), n), big.end()) << n;
  }
  EXPECT_NE(std::find(big.begin(), big.end(), 3072), big.end());
}

TEST_F(SearchTest, SmallModelOnOneNodeIsPureDataParallel) {
  const PointResult r = SearchPoint(Request("gpt-1.7b", 2048, 512), Point("h100-sxm5-80gb", 8));
  ASSERT_FALSE(r.best.empty());
  const ParallelSpec& p = r.best.front().job.parallel;
  EXPECT_EQ(p.dp, 8);
  EXPECT_EQ(p.tp * p.pp * p.cp, 1);
  EXPECT_EQ(r.best.front().job.training.recompute, Recompute::kNone);
}

TEST_F(SearchTest, KeptLayoutsAreValidFitAndSorted) {
  const PointResult r = SearchPoint(Request("llama3-70b", 4096, 256), Point("h100-sxm5-80gb", 64));
  ASSERT_FALSE(r.best.empty());
  EXPECT_LE(r.best.size(), static_cast<size_t>(kKeepPerPoint));
  for (size_t i = 0; i < r.best.size(); ++i) {
    const Plan& p = r.best[i];
    EXPECT_TRUE(ValidateJob(p.job, db_).ok()) << ValidateJob(p.job, db_).message();
    EXPECT_TRUE(p.step.memory.fits);
    EXPECT_LE(p.step.memory.peak_bytes, db_.FindGpu("h100-sxm5-80gb")->memory_bytes);
    if (i > 0) {
      EXPECT_LE(r.best[i - 1].econ.compute_time_s, p.econ.compute_time_s);
    }
  }
  // 70B with Adam cannot be replicated on 80 GB: it needs model parallelism or sharding.
  const ParallelSpec& p = r.best.front().job.parallel;
  EXPECT_TRUE(p.tp > 1 || p.pp > 1 || p.zero_stage >= 3 || p.fsdp);
  EXPECT_GT(r.stats.pruned_memory, 0);
  EXPECT_EQ(r.stats.configurations, r.stats.evaluated + r.stats.pruned_memory);
}

TEST_F(SearchTest, MemoryMarginKeepsHeadroom) {
  // Every kept layout leaves the margin free; without a margin the search may fill the GPU, and
  // with one it never finds a faster layout than without.
  PlanRequest req = Request("llama3-70b", 4096, 256);
  const HardwarePoint point = Point("h100-sxm5-80gb", 64);
  const double capacity = UsableBytes(*db_.FindGpu("h100-sxm5-80gb"), req.overhead);
  req.memory_margin = 0.25;
  const PointResult kept = SearchPoint(req, point);
  ASSERT_FALSE(kept.best.empty());
  for (const Plan& p : kept.best) EXPECT_LE(p.step.memory.peak_bytes, 0.75 * capacity);
  req.memory_margin = 0;
  const PointResult full = SearchPoint(req, point);
  ASSERT_FALSE(full.best.empty());
  EXPECT_LE(full.best.front().step.step_time_s, kept.best.front().step.step_time_s);
  EXPECT_GT(full.best.front().step.memory.peak_bytes, 0.75 * capacity);
}

TEST_F(SearchTest, SmallestFootprintIsTrackedWhenNothingFits) {
  PlanRequest req = Request("llama3-405b", 4096, 64);
  const PointResult r = SearchPoint(req, Point("rtx-4090", 8));
  EXPECT_TRUE(r.best.empty());
  EXPECT_TRUE(r.any_layout);
  EXPECT_GT(r.smallest.step.memory.peak_bytes, r.smallest.step.memory.capacity_bytes);
}

// Brute force over a sub-space of the search's space (vpp <= 4; MoE: every expert TP) without
// the dominance pruning: the search must find a layout at least as fast as the best one that
// fits there.
TEST_F(SearchTest, PruningNeverSkipsAFasterLayout) {
  for (const auto& [model, gpus] :
       {std::pair<std::string, int64_t>{"llama3-8b", 8}, {"gpt-7.5b", 16}, {"mixtral-8x7b", 16}}) {
    const PlanRequest req = Request(model, 4096, 64);
    const HardwarePoint point = Point("a100-sxm4-40gb", gpus);
    const PointResult r = SearchPoint(req, point);
    double brute = INFINITY;
    JobSpec job = r.smallest.job;  // model, cluster, training settings of this point
    for (int64_t tp = 1; tp <= 8; tp *= 2)
      for (int64_t cp = 1; cp <= 4; cp *= 2)
        for (int64_t pp = 1; pp <= job.model.num_layers; ++pp)
          for (int64_t ep = 1; ep <= 8; ep *= 2)
            for (int64_t etp = 1; etp <= tp; etp *= 2)
              for (int64_t mb = 1; mb <= 64; mb *= 2)
                for (int64_t vpp = 1; vpp <= 4; ++vpp)
                  for (int zero = 0; zero <= 3; ++zero)
                    for (int64_t rep = 1; rep <= 8; rep *= 2)
                      for (int rec = 0; rec < 3; ++rec)
                        for (uint32_t modules = 1; modules <= 7; ++modules)
                          for (bool off : {false, true})
                            for (bool ep_overlap : {false, true}) {
                              // The modules of a selective recomputation (all that
                              // ValidateJob accepts); the default for the other levels.
                              if (rec != 1 && modules != kRecomputeCoreAttn) continue;
                              if (rep > 1 && zero != 3) continue;
                              if (ep_overlap && ep < 2) continue;
                              if (tp * cp * pp > gpus || gpus % (tp * cp * pp) != 0) continue;
                              // Uneven pipelines: the planner's split, with vpp = 1.
                              const std::optional<StageSplit> split =
                                  SuggestStageSplit(job.model.num_layers, pp);
                              if (job.model.num_layers % (pp * vpp) != 0 && !(split && vpp == 1)) {
                                continue;
                              }
                              if (64 % (mb * (gpus / (tp * cp * pp))) != 0) continue;
                              if ((ep > 1 || etp != tp) && !job.model.is_moe()) continue;
                              job.parallel = ParallelSpec{};
                              job.parallel.etp = etp;
                              job.parallel.tp = tp;
                              job.parallel.cp = cp;
                              job.parallel.pp = pp;
                              job.parallel.dp = gpus / (tp * cp * pp);
                              job.parallel.ep = ep;
                              job.parallel.vpp = vpp;
                              if (split) {
                                job.parallel.first_stage_layers = split->first;
                                job.parallel.last_stage_layers = split->last;
                              }
                              job.parallel.schedule =
                                  vpp > 1 ? Schedule::kInterleaved : Schedule::k1F1B;
                              job.parallel.sequence_parallel = tp > 1;
                              job.parallel.zero_stage = zero;
                              job.parallel.dp_replicate = rep;
                              job.parallel.cpu_offload = off;
                              job.parallel.ep_overlap = ep_overlap;
                              job.training.micro_batch_size = mb;
                              job.training.recompute = static_cast<Recompute>(rec);
                              job.training.recompute_modules = modules;
                              if (!ValidateJob(job, db_).ok()) continue;
                              // HSDP shard groups that fill at least a node (docs/PLANNER.md).
                              if (rep > 1 &&
                                  tp * job.parallel.ShardRanks() < job.cluster.gpus_per_node) {
                                continue;
                              }
                              const int64_t micro = 64 / (mb * job.parallel.dp);
                              if (vpp > 1 && micro % pp != 0) continue;
                              if (cp > 1 && 4096 / cp < kMinContextParallelChunkTokens) continue;
                              if (!FitsWithMargin(EstimateMemory(job, *point.gpu),
                                                  req.memory_margin)) {
                                continue;
                              }
                              const StepResult s = EvaluateStep(job, *point.gpu, *point.network);
                              brute = std::min(brute, s.step_time_s);
                            }
    ASSERT_FALSE(r.best.empty()) << model;
    EXPECT_LE(r.best.front().step.step_time_s, brute * (1 + 1e-12)) << model;
  }
}

// EP overlap (Megatron-Core's combined 1F1B schedule) is searched for MoE layouts with EP, both
// ways; every kept layout with it is one the stack runs (EpOverlapProblem), never with full
// recomputation, and never on a stack without the schedule.
TEST_F(SearchTest, EpOverlapIsSearchedWhereTheStackRunsIt) {
  PlanRequest req = Request("mixtral-8x7b", 4096, 256);
  const HardwarePoint point = Point("h100-sxm5-80gb", 64);
  const PointResult r = SearchPoint(req, point);
  ASSERT_FALSE(r.best.empty());
  int with = 0;
  for (const Plan& p : r.best) {
    if (!p.job.parallel.ep_overlap) continue;
    ++with;
    EXPECT_FALSE(EpOverlapProblem(p.job).has_value()) << *EpOverlapProblem(p.job);
    JobSpec without = p.job;
    without.parallel.ep_overlap = false;
    // Kept because it is faster than the same layout without the overlap.
    EXPECT_LT(p.step.step_time_s, EvaluateStep(without, *point.gpu, *point.network).step_time_s);
    // Its explanation states the assumption.
    const std::vector<std::string> assumed = LayoutAssumptions(p);
    EXPECT_TRUE(std::any_of(assumed.begin(), assumed.end(), [](const std::string& a) {
      return a.rfind("Assumed for EP overlap:", 0) == 0;
    }));
  }
  EXPECT_GT(with, 0);

  req.framework = *db_.FindFramework("nanotron");
  for (const Plan& p : SearchPoint(req, point).best) EXPECT_FALSE(p.job.parallel.ep_overlap);
}

TEST_F(SearchTest, PipelineStagesThatDoNotDivideTheLayersAreSearched) {
  // Llama 3 70B (80 layers) on 24 x 40 GB: the fastest layouts that fit use pp 3, 27 + 27 + 26
  // layers (SuggestStageSplit).
  const PointResult r = SearchPoint(Request("llama3-70b", 4096, 96), Point("a100-sxm4-40gb", 24));
  bool found = false;
  for (const Plan& p : r.best) {
    EXPECT_TRUE(ValidateJob(p.job, db_).ok()) << ValidateJob(p.job, db_).message();
    if (p.job.parallel.pp == 3) {
      found = true;
      EXPECT_EQ(p.job.parallel.first_stage_layers, 27);
      EXPECT_EQ(p.job.parallel.last_stage_layers, 26);
      EXPECT_EQ(p.job.parallel.vpp, 1);
    }
  }
  EXPECT_TRUE(found) << "no kept layout with pp 3";
}

TEST_F(SearchTest, ThreadedSearchEqualsSerial) {
  const PlanRequest req = Request("llama3-8b", 4096, 128);
  std::vector<HardwarePoint> points;
  for (int64_t n : CandidateGpuCounts(1, 64, 8)) points.push_back(Point("h100-sxm5-80gb", n));
  const std::vector<PointResult> serial = SearchPoints(req, points, 1, nullptr);
  const std::vector<PointResult> threaded = SearchPoints(req, points, 4, nullptr);
  ASSERT_EQ(serial.size(), threaded.size());
  for (size_t i = 0; i < serial.size(); ++i) {
    ASSERT_EQ(serial[i].best.size(), threaded[i].best.size());
    if (!serial[i].best.empty()) {
      EXPECT_EQ(serial[i].best[0].step.step_time_s, threaded[i].best[0].step.step_time_s);
    }
  }
}

}  // namespace
}  // namespace gpuplan
