// Known answers of the planner (issue 3, "Done when"): what it recommends for questions whose
// answer an engineer knows, and that it never recommends something that does not fit.
#include "planner/planner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "planner/compare_frameworks.h"
#include "planner/explain.h"
#include "planner/export.h"
#include "planner/report.h"
#include "planner/report_document.h"
#include "planner/units_format.h"
#include "simulator/framework.h"
#include "simulator/job_spec_json.h"
#include "simulator/memory.h"
#include "simulator/presets.h"
#include "simulator/shard.h"
#include "tests/parse_job.h"

namespace gpuplan {
namespace {

class PlannerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Expected<HardwareDb> db = LoadHardwareDb({});
    ASSERT_TRUE(db.ok()) << db.status().message();
    db_ = std::move(db).value();
  }
  PlanRequest Request(const std::string& model, std::vector<std::string> gpus, int64_t max_gpus) {
    PlanRequest req;
    req.model = FindModelPreset(model).value();
    req.train_tokens = 20e9;
    req.seq_len = 2048;
    req.global_batch_sizes = {512};
    req.gpus = std::move(gpus);
    req.max_gpus = max_gpus;
    req.reliability = db_.reliability();
    req.threads = 2;
    return req;
  }
  PlanResult Plan(const PlanRequest& req) {
    Expected<PlanResult> r = MakePlan(req, db_, nullptr);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? std::move(r).value() : PlanResult{};
  }
  // Every plan the result shows is valid and fits in memory.
  void ExpectAllFit(const PlanResult& r) {
    std::vector<const gpuplan::Plan*> shown;
    if (r.found) shown.push_back(&r.recommendation);
    for (const auto& p : r.alternatives) shown.push_back(&p);
    for (const auto& p : r.pareto) shown.push_back(&p);
    for (const auto& row : r.scaling) {
      if (row.feasible) shown.push_back(&row.plan);
    }
    for (const gpuplan::Plan* p : shown) {
      EXPECT_TRUE(ValidateJob(p->job, db_).ok()) << ValidateJob(p->job, db_).message();
      EXPECT_TRUE(p->step.memory.fits);
      EXPECT_LE(p->step.memory.peak_bytes, p->step.memory.capacity_bytes);
      EXPECT_GT(p->econ.expected_wall_s, p->econ.compute_time_s * 0.999);
      ExpectSoldAsPriced(*p);
    }
  }
  // A priced plan uses an offering that exists, serves its GPU count and matches its node.
  void ExpectSoldAsPriced(const gpuplan::Plan& p) {
    if (p.econ.usd_per_gpu_hour <= 0 || p.econ.provider == "override") return;
    const PriceEntry* entry = nullptr;
    for (const PriceEntry& e : db_.prices()) {
      if (e.provider == p.econ.provider && e.gpu == p.job.cluster.gpu &&
          e.offering == p.econ.offering && e.kind == p.econ.price_kind) {
        entry = &e;
      }
    }
    ASSERT_NE(entry, nullptr) << p.econ.provider << " " << p.econ.offering;
    EXPECT_DOUBLE_EQ(entry->usd_per_gpu_hour, p.econ.usd_per_gpu_hour);
    if (entry->max_gpus_per_job > 0) {
      EXPECT_LE(p.job.cluster.num_gpus, entry->max_gpus_per_job);
    }
    if (!entry->node.empty()) {
      EXPECT_EQ(entry->node, p.node);
    }
    EXPECT_EQ(p.econ.billed_gpus % entry->gpus_per_instance, 0);
    EXPECT_GE(p.econ.billed_gpus, p.job.cluster.num_gpus);
  }
  HardwareDb db_;
};

// Activation offload is searched where a layout does not fit without recomputation, at pp 1
// with ZeRO <= 1 and over NVLink-C2C only (a Grace superchip, whose host memory per GPU holds the
// offloaded layers); never on a PCIe host, whose shared uplinks the model does not price.
TEST_F(PlannerTest, ActivationOffloadOnlyOverNvlinkC2c) {
  for (const std::string gpu : {"gb200", "h100-sxm5-80gb"}) {
    PlanRequest req = Request("llama3-70b", {gpu}, 64);
    req.seq_len = 8192;
    req.global_batch_sizes = {256};
    req.objective = Objective::kTime;
    const PlanResult r = Plan(req);
    ASSERT_TRUE(r.found) << gpu;
    ExpectAllFit(r);
    int offloading = 0;
    std::vector<const gpuplan::Plan*> shown = {&r.recommendation};
    for (const auto& p : r.alternatives) shown.push_back(&p);
    for (const auto& row : r.scaling) {
      if (row.feasible) shown.push_back(&row.plan);
    }
    for (const gpuplan::Plan* p : shown) {
      const JobSpec& job = p->job;
      if (job.training.activation_offload_layers == 0) continue;
      ++offloading;
      EXPECT_EQ(job.parallel.pp, 1);
      EXPECT_EQ(job.training.recompute, Recompute::kNone);
      EXPECT_LE(job.parallel.zero_stage, 1);
      const GpuSpec& spec = *db_.FindGpu(job.cluster.gpu);
      EXPECT_LE(OffloadedActivationBytes(job, JobLayerActivations(job)),
                spec.host_memory_bytes_per_gpu);
      // The fewest layers that fit: one fewer does not.
      JobSpec fewer = job;
      --fewer.training.activation_offload_layers;
      EXPECT_FALSE(FitsWithMargin(EstimateMemory(fewer, spec), req.memory_margin));
      EXPECT_EQ(IntrinsicBound(*p, req.memory_margin), "memory");
      EXPECT_NE(MemoryReason(*p, spec, req.memory_margin)
                    .find("without offloading the activations of " +
                          std::to_string(job.training.activation_offload_layers) + " layers"),
                std::string::npos);
    }
    if (gpu == "gb200") {
      EXPECT_GT(offloading, 0);
    } else {
      EXPECT_EQ(offloading, 0);
    }
  }
}

TEST_F(PlannerTest, OneBillionParametersOnUpToEightGpusIsPureDataParallel) {
  PlanRequest req = Request("mpt-1b", {"h100-sxm5-80gb"}, 8);
  req.objective = Objective::kTime;
  const PlanResult r = Plan(req);
  ASSERT_TRUE(r.found);
  const ParallelSpec& p = r.recommendation.job.parallel;
  EXPECT_EQ(r.recommendation.job.cluster.num_gpus, 8);
  EXPECT_EQ(p.dp, 8);
  EXPECT_EQ(p.tp * p.pp * p.cp, 1);
  ExpectAllFit(r);
}

// Five residuals of `stack` on hopper around `ratio` (measured / predicted step time).
std::vector<BandResidual> Residuals(const std::string& stack, double ratio) {
  std::vector<BandResidual> out;
  for (double spread : {1.0, 1.02, 0.98, 1.04, 0.96}) {
    out.push_back(
        {stack + std::to_string(spread), "test " + stack, stack, "hopper", 64, ratio * spread});
  }
  return out;
}

bool Sharded(const JobSpec& job) { return job.parallel.zero_stage == 3 || job.parallel.fsdp; }

TEST_F(PlannerTest, ConfidenceRanksEachPlanAtItsBandsPessimisticEnd) {
  PlanRequest req = Request("llama3-8b", {"h100-sxm5-80gb"}, 256);
  req.objective = Objective::kTime;
  for (const double sharded_ratio : {2.0, 0.5}) {
    req.band_residuals = Residuals("megatron-core", 1.0);
    for (const BandResidual& r : Residuals("megatron-core FSDP/ZeRO-3", sharded_ratio)) {
      req.band_residuals.push_back(r);
    }
    req.confidence = 0.9;
    const PlanResult r = Plan(req);
    ASSERT_TRUE(r.found);
    const gpuplan::Plan& p = r.recommendation;
    // Sharded layouts measured twice as slow as predicted lose; twice as fast, they win.
    EXPECT_EQ(Sharded(p.job), sharded_ratio < 1) << LayoutSummary(p.job);
    EXPECT_EQ(p.band.runs, 5);
    EXPECT_TRUE(p.band.validated);
    EXPECT_NEAR(p.rank_factor, p.band.Factor(0.9), 1e-12);
    EXPECT_GT(p.band.high_factor, p.band.low_factor);
    for (const gpuplan::Plan& a : r.alternatives) EXPECT_EQ(a.band.runs, 5);
  }
}

TEST_F(PlannerTest, WithConfidenceTheDeadlineIsCheckedAtThePessimisticEnd) {
  PlanRequest req = Request("llama3-8b", {"h100-sxm5-80gb"}, 64);
  req.objective = Objective::kTime;
  req.band_residuals = Residuals("megatron-core", 2.0);
  for (const BandResidual& r : Residuals("megatron-core FSDP/ZeRO-3", 2.0)) {
    req.band_residuals.push_back(r);
  }
  const PlanResult expected = Plan(req);
  ASSERT_TRUE(expected.found);
  EXPECT_EQ(expected.recommendation.rank_factor, 1.0);
  req.objective = Objective::kCostUnderDeadline;
  req.deadline_s = 1.2 * expected.recommendation.econ.expected_wall_s;
  EXPECT_TRUE(Plan(req).found);
  req.confidence = 0.9;  // every plan's 90% end is about twice its expected time
  const PlanResult pessimistic = Plan(req);
  EXPECT_FALSE(pessimistic.found);
  req.confidence = 0.995;
  EXPECT_NE(ValidatePlanRequest(req, db_).message().find("--confidence: must be in [0.5, 0.99]"),
            std::string::npos);
  req.confidence = 0.9;
  req.band_residuals.clear();
  EXPECT_NE(ValidatePlanRequest(req, db_).message().find("--confidence: needs"), std::string::npos);
}

// A stack's limits are the search's (frameworks.json): nanotron shards at most the optimizer
// state, splits pipelines by cost and cannot be launched by the Megatron export.
TEST_F(PlannerTest, TheSearchKeepsToWhatTheStackRuns) {
  PlanRequest req = Request("llama3-70b", {"h100-sxm5-80gb"}, 64);
  req.objective = Objective::kTime;
  req.framework = *db_.FindFramework("nanotron");
  const PlanResult r = Plan(req);
  ASSERT_TRUE(r.found);
  std::vector<const gpuplan::Plan*> shown = {&r.recommendation};
  for (const gpuplan::Plan& p : r.alternatives) shown.push_back(&p);
  for (const gpuplan::Plan* p : shown) {
    const ParallelSpec& par = p->job.parallel;
    EXPECT_EQ(p->job.training.framework.id, "nanotron");
    EXPECT_LE(par.zero_stage, 1) << LayoutSummary(p->job);
    EXPECT_FALSE(par.fsdp);
    EXPECT_TRUE(StackRunsLayout(p->job).ok()) << StackRunsLayout(p->job).message();
    if (par.pp > 1) {
      EXPECT_EQ(par.stage_layers, CostBalancedStageLayers(p->job.model, par.pp));
    }
  }
  Expected<std::string> exported = ExportPlan(r.recommendation, "megatron");
  ASSERT_FALSE(exported.ok());
  EXPECT_NE(exported.status().message().find("timed for framework 'nanotron'"), std::string::npos)
      << exported.status().message();
}

TEST_F(PlannerTest, CompareFrameworksPlansUnderEveryStack) {
  PlanRequest req = Request("llama3-8b", {"h100-sxm5-80gb"}, 64);
  req.objective = Objective::kTime;
  Expected<std::vector<FrameworkComparisonRow>> rows = CompareFrameworks(req, db_, nullptr);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), db_.frameworks().size());
  // The request's stack first, then the others in id order.
  std::vector<std::string> ids;
  for (const FrameworkComparisonRow& r : *rows) ids.push_back(r.framework.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"megatron-core", "composer", "deepspeed", "hf-trainer",
                                           "nanotron", "torchtitan", "torchtitan-compile"}));
  for (const FrameworkComparisonRow& r : *rows) {
    ASSERT_TRUE(r.found) << r.framework.id;
    EXPECT_EQ(r.plan.job.training.framework.id, r.framework.id);
  }
  // The default stack's row is the plain plan's recommendation.
  const PlanResult plain = Plan(req);
  EXPECT_DOUBLE_EQ((*rows)[0].plan.econ.expected_wall_s, plain.recommendation.econ.expected_wall_s);
  // nanotron's host floor, ZeRO-1 limit and FlashAttention-2 on Hopper cost time on the same
  // hardware; so do Composer's FlashAttention-2 and its lack of model parallelism.
  const FrameworkComparisonRow& composer = (*rows)[1];
  const FrameworkComparisonRow& nanotron = (*rows)[4];
  EXPECT_GT(nanotron.plan.econ.expected_wall_s, (*rows)[0].plan.econ.expected_wall_s);
  EXPECT_GT(composer.plan.econ.expected_wall_s, (*rows)[0].plan.econ.expected_wall_s);
  EXPECT_EQ(composer.plan.job.parallel.tp * composer.plan.job.parallel.pp, 1);
  // Only a stack with userbuffers (frameworks.json tp_overlap) is credited the TP overlap, and a
  // pipelined DeepSpeed plan keeps to ZeRO 0-1 (its PipelineEngine asserts it) and to one model
  // chunk a stage (no interleaved schedule).
  for (const FrameworkComparisonRow& r : *rows) {
    const ParallelSpec& p = r.plan.job.parallel;
    EXPECT_TRUE(r.framework.tp_overlap || !p.tp_overlap) << r.framework.id;
    EXPECT_TRUE(p.pp == 1 || p.ZeroStage() <= r.framework.max_zero_stage_with_pp) << r.framework.id;
    EXPECT_TRUE(r.framework.interleaved_pipeline || p.vpp == 1) << r.framework.id;
    EXPECT_TRUE(r.framework.cpu_offload || !p.cpu_offload) << r.framework.id;
  }
  const std::string table = FormatFrameworkComparison(*rows, "megatron-core");
  EXPECT_NE(table.find("vs megatron-core"), std::string::npos) << table;
  EXPECT_NE(table.find("% time"), std::string::npos) << table;
  EXPECT_EQ(FrameworkComparisonToJson(*rows)[4]["framework"], "nanotron");
}

TEST_F(PlannerTest, ModelTooBigForOneGpuGetsShardingOrModelParallelism) {
  PlanRequest req = Request("llama3-70b", {"h100-sxm5-80gb"}, 64);
  req.objective = Objective::kTime;
  const PlanResult r = Plan(req);
  ASSERT_TRUE(r.found);
  const ParallelSpec& p = r.recommendation.job.parallel;
  EXPECT_TRUE(p.tp > 1 || p.pp > 1 || p.zero_stage >= 3 || p.fsdp || p.cpu_offload);
  ExpectAllFit(r);
}

TEST_F(PlannerTest, UnderALooseDeadlineTheCheapestPlanUsesFewerGpusThanTheFastest) {
  PlanRequest req = Request("llama3-8b", {"h100-sxm5-80gb"}, 256);
  req.objective = Objective::kTime;
  const PlanResult fastest = Plan(req);
  req.objective = Objective::kCostUnderDeadline;
  req.deadline_s = 365 * 86400.0;
  const PlanResult cheapest = Plan(req);
  ASSERT_TRUE(fastest.found);
  ASSERT_TRUE(cheapest.found);
  EXPECT_LT(cheapest.recommendation.job.cluster.num_gpus,
            fastest.recommendation.job.cluster.num_gpus);
  EXPECT_LE(cheapest.recommendation.econ.expected_cost_usd,
            fastest.recommendation.econ.expected_cost_usd);
  EXPECT_LE(fastest.recommendation.econ.expected_wall_s,
            cheapest.recommendation.econ.expected_wall_s);
  ExpectAllFit(fastest);
  ExpectAllFit(cheapest);
}

TEST_F(PlannerTest, ParetoFrontIsNonDominatedAndContainsTheExtremes) {
  PlanRequest req = Request("llama3-8b", {"h100-sxm5-80gb", "a100-sxm4-80gb"}, 128);
  const PlanResult r = Plan(req);
  ASSERT_GE(r.pareto.size(), 2u);
  for (size_t i = 1; i < r.pareto.size(); ++i) {
    EXPECT_GT(r.pareto[i].econ.expected_wall_s, r.pareto[i - 1].econ.expected_wall_s);
    EXPECT_LT(r.pareto[i].econ.expected_cost_usd, r.pareto[i - 1].econ.expected_cost_usd);
  }
  // The cheapest plan (objective cost, no deadline) is the last point of the front.
  ASSERT_TRUE(r.found);
  EXPECT_DOUBLE_EQ(r.pareto.back().econ.expected_cost_usd, r.recommendation.econ.expected_cost_usd);
  ExpectAllFit(r);
}

TEST_F(PlannerTest, DeadlineBindsTheCheapestPlan) {
  PlanRequest req = Request("llama3-70b", {"h100-sxm5-80gb"}, 1024);
  req.train_tokens = 2e12;
  req.seq_len = 4096;
  req.global_batch_sizes = {1024};
  req.objective = Objective::kCostUnderDeadline;
  req.deadline_s = 60 * 86400.0;
  const PlanResult r = Plan(req);
  ASSERT_TRUE(r.found);
  EXPECT_LE(r.recommendation.econ.expected_wall_s, req.deadline_s);
  EXPECT_EQ(r.bound, "deadline");
  ExpectAllFit(r);
}

TEST_F(PlannerTest, ImpossibleRequestExplainsItself) {
  PlanRequest req = Request("llama3-405b", {"rtx-4090"}, 8);
  const PlanResult r = Plan(req);
  EXPECT_FALSE(r.found);
  ASSERT_TRUE(r.no_fit.any_plan);
  EXPECT_GT(r.no_fit.smallest.step.memory.peak_bytes, r.no_fit.smallest.step.memory.capacity_bytes);
  ASSERT_FALSE(r.explanation.empty());
  EXPECT_NE(r.explanation.front().find("smallest footprint found"), std::string::npos);
  ASSERT_FALSE(r.no_fit.suggestions.empty());
  const std::string text = FormatPlanResultText(r);
  EXPECT_NE(text.find("smallest footprint"), std::string::npos) << text;
}

TEST_F(PlannerTest, FittingLayoutsNobodySellsAreNotCalledTooBig) {
  // Llama 3 8B fits 64 A100 PCIe, but no offering in the database sells 64 of them in one job.
  PlanRequest req = Request("llama3-8b", {"a100-pcie-80gb"}, 64);
  req.min_gpus = 64;
  const PlanResult r = Plan(req);
  EXPECT_FALSE(r.found);
  ASSERT_FALSE(r.explanation.empty());
  EXPECT_NE(r.explanation.front().find("Layouts fit"), std::string::npos) << r.explanation.front();
  EXPECT_NE(r.explanation.front().find("--price a100-pcie-80gb=USD"), std::string::npos);
  EXPECT_EQ(r.explanation.front().find("Nothing fits"), std::string::npos);
}

TEST_F(PlannerTest, MissedDeadlineSaysByHowMuch) {
  PlanRequest req = Request("llama3-70b", {"h100-sxm5-80gb"}, 8);
  req.train_tokens = 2e12;
  req.objective = Objective::kCostUnderDeadline;
  req.deadline_s = 86400;
  const PlanResult r = Plan(req);
  EXPECT_FALSE(r.found);
  ASSERT_FALSE(r.explanation.empty());
  EXPECT_NE(r.explanation.front().find("No plan meets the constraints"), std::string::npos);
  EXPECT_FALSE(r.scaling.empty());
  // The report's "No plan found" says just that: plans fit, none is quick enough. Nothing claims
  // that no layout could be enumerated.
  const std::string text = FormatPlanResultText(r);
  const std::string title = "No plan found\n-------------\n";
  const size_t start = text.find(title);
  ASSERT_NE(start, std::string::npos) << text;
  const size_t body = start + title.size();
  std::string expected;
  for (const std::string& e : r.explanation) expected += "  " + e + "\n";
  EXPECT_EQ(text.substr(body, text.find("\n\n", body) + 1 - body), expected) << text;
}

// The question users ask first: a 7B model fine-tuned on 50 000 examples of 2 048 tokens.
TEST_F(PlannerTest, FineTuningSevenBillionOnOneToEightGpus) {
  for (bool lora : {false, true}) {
    PlanRequest req = Request("llama2-7b", {"a100-sxm4-80gb"}, 8);
    req.train_tokens = 50000.0 * 2048;
    req.global_batch_sizes = {128};
    if (lora) req.lora = {true, 16, kLoraAttention, BaseWeights::kSame};
    const PlanResult r = Plan(req);
    ASSERT_TRUE(r.found) << lora;
    ASSERT_EQ(r.scaling.size(), 4u);
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(r.scaling[i].gpus, int64_t{1} << i);
    for (const ScalingRow& row : r.scaling) {
      if (!row.feasible) continue;
      EXPECT_GT(row.plan.econ.expected_wall_s, 0);
      EXPECT_GT(row.plan.econ.expected_cost_usd, 0);
      EXPECT_GT(row.speedup, 0);
    }
    if (lora) {
      // LoRA fits one GPU, and the cheapest choice is then to use fewer GPUs: the text says so.
      EXPECT_TRUE(r.scaling[0].feasible);
      const std::string text = FormatPlanResultText(r);
      EXPECT_NE(text.find("One GPU"), std::string::npos) << text;
    }
    ExpectAllFit(r);
  }
}

TEST_F(PlannerTest, ProviderSpecificNodesArePricedOnlyByTheirOffering) {
  PlanRequest req = Request("llama3-8b", {"h100-sxm5-80gb"}, 256);
  req.providers = {"aws"};
  req.objective = Objective::kTime;
  const PlanResult r = Plan(req);
  ASSERT_TRUE(r.found);
  // AWS sells H100s as p5.48xlarge (EFA), not as a DGX with InfiniBand.
  EXPECT_EQ(r.recommendation.node, "p5-48xlarge");
  EXPECT_EQ(r.recommendation.econ.offering, "p5.48xlarge");
  ExpectAllFit(r);
}

TEST_F(PlannerTest, ExplicitPriceOverridesTheDatabase) {
  PlanRequest req = Request("llama3-8b", {"h100-sxm5-80gb"}, 64);
  req.price_overrides["h100-sxm5-80gb"] = 1.0;
  const PlanResult r = Plan(req);
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.recommendation.econ.provider, "override");
  EXPECT_DOUBLE_EQ(r.recommendation.econ.usd_per_gpu_hour, 1.0);
  EXPECT_NEAR(r.recommendation.econ.expected_cost_usd,
              r.recommendation.econ.expected_wall_s / 3600 *
                  static_cast<double>(r.recommendation.job.cluster.num_gpus),
              1e-6 * r.recommendation.econ.expected_cost_usd);
}

TEST_F(PlannerTest, ExportKeepsTheSearchToLayoutsTheFormatExpresses) {
  // The deepspeed export cannot express hybrid sharding (MiCS needs the model built under
  // deepspeed.zero.MiCS_Init; export_deepspeed.cpp): with the export asked for, such layouts are
  // left out of the search instead of being recommended and refused.
  PlanRequest req = Request("llama3-8b", {"h100-sxm5-80gb"}, 16);
  req.min_gpus = 16;
  req.train_tokens = 10e9;
  req.global_batch_sizes = {1024};
  req.seq_len = 4096;
  req.objective = Objective::kTime;
  req.framework = *db_.FindFramework("deepspeed");
  req.export_format = "deepspeed";
  const PlanResult r = Plan(req);
  ASSERT_TRUE(r.found);
  EXPECT_GT(r.stats.pruned_export, 0);
  EXPECT_EQ(r.recommendation.job.parallel.dp_replicate, 1);
  EXPECT_TRUE(CheckExportable("deepspeed", r.recommendation.job).ok());
  for (const gpuplan::Plan& a : r.alternatives) {
    EXPECT_TRUE(CheckExportable("deepspeed", a.job).ok()) << LayoutSummary(a.job);
  }
  req.export_format = "no-such-format";
  EXPECT_NE(ValidatePlanRequest(req, db_).message().find("--export: unknown export format"),
            std::string::npos);
}

TEST_F(PlannerTest, RequestErrorsNameTheOption) {
  PlanRequest req = Request("llama3-8b", {"h100-sxm5-80gb"}, 8);
  req.gpus = {"h100-typo"};
  EXPECT_NE(ValidatePlanRequest(req, db_).message().find("--gpu: unknown GPU 'h100-typo'"),
            std::string::npos);
  req = Request("llama3-8b", {"h100-sxm5-80gb"}, 8);
  req.objective = Objective::kCostUnderDeadline;
  EXPECT_NE(ValidatePlanRequest(req, db_).message().find("needs --deadline"), std::string::npos);
  req = Request("llama3-8b", {"h100-sxm5-80gb"}, 8);
  req.max_gpus = 0;
  EXPECT_NE(ValidatePlanRequest(req, db_).message().find("--max-gpus"), std::string::npos);
  req = Request("gpt2-xl", {"h100-sxm5-80gb"}, 8);
  req.seq_len = 2048;
  EXPECT_NE(ValidatePlanRequest(req, db_).message().find(
                "--seq-len: 2048 tokens exceed the 1024 learned positions of GPT-2 XL"),
            std::string::npos);
  req = Request("llama3-8b", {"h100-sxm5-80gb"}, 8);
  req.providers = {"nowhere"};
  EXPECT_NE(ValidatePlanRequest(req, db_).message().find("--provider: unknown provider"),
            std::string::npos);
  req = Request("llama3-8b", {"h100-sxm5-80gb"}, 8);
  req.train_steps = 10;
  EXPECT_NE(ValidatePlanRequest(req, db_).message().find("exactly one"), std::string::npos);
  // Issue 17: the search space is bounded (docs/JOB_SPEC.md, Limits).
  req = Request("llama3-8b", {"h100-sxm5-80gb"}, 8);
  req.max_gpus = int64_t{1} << 62;
  EXPECT_EQ(ValidatePlanRequest(req, db_).message(),
            "--max-gpus: 4611686018427387904 exceeds the limit of 1048576 GPUs per job");
  req = Request("llama3-8b", {"h100-sxm5-80gb"}, 8);
  req.global_batch_sizes = {100'000'000};
  EXPECT_NE(ValidatePlanRequest(req, db_).message().find(
                "--global-batch: 100000000 sequences need at least 195313 micro-batches per step "
                "on at most 8 GPUs"),
            std::string::npos);
  req = Request("llama3-8b", {"h100-sxm5-80gb"}, 8);
  req.price_overrides["h100-sxm5-80gb"] = 1e308;
  EXPECT_NE(
      ValidatePlanRequest(req, db_).message().find("--price: h100-sxm5-80gb=1e+308 is outside"),
      std::string::npos);
}

// FillSpeedups by hand: 8 GPUs need CPU offload (4 s of a 10 s step in the optimizer), 16 GPUs
// do not (3 s steps): 1100 s / 330 s = 3.33x on 2x the GPUs, 166.7% of linear. The largest
// saving is the offload: 3.2e-3 GPU-s per token of optimizer (4 s x 100 steps x 8 GPUs / 1e6
// tokens) against 3.2e-4 of checkpoints and restarts ((1100 - 1000) s x 8 - (330 - 300) s x 16,
// per 1e6 tokens) and none in compute (6 s x 8 = 3 s x 16).
TEST(FillSpeedups, NamesTheBaselineAndExplainsSuperlinearRows) {
  const auto row = [](int64_t gpus, bool feasible, int64_t tp, bool offload, double compute_s,
                      double optimizer_s, double wall_s) {
    ScalingRow r;
    r.gpus = gpus;
    r.feasible = feasible;
    r.plan.job.cluster.num_gpus = gpus;
    r.plan.job.parallel.tp = tp;
    r.plan.job.parallel.dp = gpus / tp;
    r.plan.job.parallel.cpu_offload = offload;
    r.plan.step.breakdown_s.compute = compute_s;
    r.plan.step.breakdown_s.optimizer = optimizer_s;
    r.plan.step.step_time_s = compute_s + optimizer_s;
    r.plan.econ.steps = 100;
    r.plan.econ.tokens = 1e6;
    r.plan.econ.compute_time_s = 100 * r.plan.step.step_time_s;
    r.plan.econ.expected_wall_s = wall_s;
    return r;
  };
  std::vector<ScalingRow> rows = {
      row(4, false, 2, true, 0, 0, 0), row(8, true, 2, true, 6, 4, 1100),
      row(16, true, 1, false, 3, 0, 330), row(32, true, 1, false, 1.5, 0, 330.0 / 2)};
  FillSpeedups(&rows);
  EXPECT_EQ(rows[0].baseline_gpus, 0);
  EXPECT_EQ(rows[1].baseline_gpus, 8);
  EXPECT_EQ(rows[3].baseline_gpus, 8);
  EXPECT_DOUBLE_EQ(rows[1].scaling_efficiency, 1.0);
  EXPECT_EQ(rows[1].superlinear_reason, "");
  EXPECT_NEAR(rows[2].speedup, 1100.0 / 330, 1e-12);
  EXPECT_NEAR(rows[2].scaling_efficiency, 1100.0 / 330 / 2, 1e-12);
  const std::string offload =
      "fewer GPU-hours than 8 GPUs; the largest saving is in the optimizer step and offload "
      "transfers (CPU offload on -> off)";
  EXPECT_EQ(rows[2].superlinear_reason, offload);
  // 32 GPUs are superlinear against 8 too (the baseline), for the same reason: same words.
  EXPECT_NEAR(rows[3].scaling_efficiency, 1100.0 / 165 / 4, 1e-12);
  EXPECT_EQ(rows[3].superlinear_reason, offload);
}

// The headline query of the README: rows name their provider and price, and the 8-GPU row
// (CPU offload) makes larger counts superlinear, which each such row explains.
TEST_F(PlannerTest, ScalingRowsNameProviderAndExplainSuperlinearEfficiency) {
  PlanRequest req = Request("llama3-70b", {"h100-sxm5-80gb"}, 256);
  req.train_tokens = 2e12;
  req.seq_len = 4096;
  req.global_batch_sizes = {1024};
  req.deadline_s = 60 * 86400.0;
  req.objective = Objective::kCostUnderDeadline;
  const PlanResult r = Plan(req);
  ASSERT_FALSE(r.scaling.empty());
  int64_t baseline = 0;
  for (const ScalingRow& row : r.scaling) {
    if (!row.feasible) continue;
    if (baseline == 0) baseline = row.gpus;
    EXPECT_EQ(row.baseline_gpus, baseline);
    EXPECT_FALSE(row.plan.econ.provider.empty()) << row.gpus;
    EXPECT_GT(row.plan.econ.usd_per_gpu_hour, 0) << row.gpus;
    EXPECT_EQ(row.scaling_efficiency >= 1.0005, !row.superlinear_reason.empty()) << row.gpus;
  }
  const std::string text = FormatPlanResultText(r);
  EXPECT_NE(text.find("efficiency vs " + std::to_string(baseline)), std::string::npos) << text;
  EXPECT_NE(text.find("$/GPU-h"), std::string::npos) << text;
}

// Golden from FlashAttention-3's H100 benchmark table (causal forward, head dim 128): the gap
// between a CP piece's attention rate and the full sequence's, lowest and highest of FA2, FA3
// and cuDNN.
TEST(ShortSequenceAttentionGap, FollowsTheFlashAttention3Benchmark) {
  const std::pair<double, double> cp2 = ShortSequenceAttentionGap(2048, 4096);
  EXPECT_NEAR(cp2.first, 518.0 / 484.0 - 1.0, 1e-12);   // cuDNN
  EXPECT_NEAR(cp2.second, 579.0 / 521.0 - 1.0, 1e-12);  // FlashAttention-3
  const std::pair<double, double> cp4 = ShortSequenceAttentionGap(1024, 4096);
  EXPECT_NEAR(cp4.first, 319.0 / 260.0 - 1.0, 1e-12);  // FlashAttention-2
  EXPECT_NEAR(cp4.second, 579.0 / 423.0 - 1.0, 1e-12);
  // Between measured lengths the rate is interpolated in log(length): 1,448 tokens is halfway.
  const std::pair<double, double> mid = ShortSequenceAttentionGap(1024.0 * std::sqrt(2.0), 2048);
  EXPECT_NEAR(mid.first, 298.0 / 279.0 - 1.0, 1e-9);  // FlashAttention-2
  EXPECT_EQ(ShortSequenceAttentionGap(4096, 4096).first, 0.0);
  EXPECT_EQ(ShortSequenceAttentionGap(256, 4096).first, -1.0);
  EXPECT_EQ(ShortSequenceAttentionGap(8192, 32768).second, -1.0);
}

// The README's headline layout, Llama 3 70B at TP2 ZeRO-3 HSDP4 on 512 H100: its report says what
// the model assumes about sharded data parallelism, with the collectives it counts (80 layers +
// the embedding/head unit, forward and backward gathers and a reduce-scatter, 4 micro-batches =
// 972) and the exposed time it charges; with full recomputation a third gather per unit.
TEST_F(PlannerTest, ShardedDataParallelLayoutsStateWhatTheModelAssumes) {
  gpuplan::Plan plan;
  plan.job = ParseTestJob(
      {{"model", "llama3-70b"},
       {"cluster", {{"gpu", "h100-sxm5-80gb"}, {"num_gpus", 512}, {"inter_node", "ib-ndr-400"}}},
       {"training", {{"seq_len", 4096}, {"global_batch_size", 1024}, {"micro_batch_size", 1}}},
       {"parallelism",
        {{"tp", 2},
         {"dp", 256},
         {"sequence_parallel", true},
         {"zero_stage", 3},
         {"dp_replicate", 4}}}});
  JobSpec& job = plan.job;
  const auto assumed_for_zero3 = [&] {
    plan.step =
        EvaluateStep(job, *db_.FindGpu(job.cluster.gpu), *db_.FindNetwork(job.cluster.inter_node));
    for (const std::string& s : LayoutAssumptions(plan)) {
      if (s.rfind("Assumed for ZeRO-3:", 0) == 0) return s;
    }
    return std::string();
  };
  std::string s = assumed_for_zero3();
  ASSERT_FALSE(s.empty());
  EXPECT_NE(s.find("(972 collectives per step"), std::string::npos) << s;
  EXPECT_NE(s.find("across the 4 replicas of its shard group (64 data-parallel ranks)"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find(FormatDuration(plan.step.breakdown_s.dp_comm) + " of data-parallel"),
            std::string::npos)
      << s;
  job.training.recompute = Recompute::kFull;
  s = assumed_for_zero3();
  // The recomputation's forward runs on the backward's gather (kFsdpGathersPerMicroBatch).
  EXPECT_NE(s.find("and again for backward, which its recomputation reuses,"), std::string::npos)
      << s;
  EXPECT_NE(s.find("(972 collectives per step"), std::string::npos) << s;
  job.parallel.zero_stage = 1;
  job.parallel.dp_replicate = 1;
  EXPECT_TRUE(assumed_for_zero3().empty());
}

}  // namespace
}  // namespace gpuplan
