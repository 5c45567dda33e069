// The GUI's session (gui/session.h): the default plan, the derived DP, the requests it makes,
// and the session file, whose errors name the file and the field.
#include "gui/session.h"

#include <gtest/gtest.h>

#include "planner/what_if.h"
#include "simulator/job_spec_json.h"
#include "tests/builtin_db.h"

namespace gpuplan {
namespace {

TEST(SessionTest, TheDefaultSessionIsARealisticPlanThatFits) {
  const HardwareDb& db = BuiltinDb();
  const Session s = DefaultSession(db);
  Expected<JobSpec> job = ResolvedJob(s, db);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->parallel.dp, 8);
  EXPECT_EQ(s.node, "dgx-h100");
  const Plan plan = EvaluateFixedPlan(WhatIfRequest(s, db), db, *job, s.node);
  EXPECT_TRUE(plan.step.memory.fits);
  EXPECT_GT(plan.step.mfu, 0.3);
  EXPECT_GT(plan.econ.expected_cost_usd, 0);
}

TEST(SessionTest, ResolvedJobDerivesDpAndNamesTheRuleBroken) {
  const HardwareDb& db = BuiltinDb();
  Session s = DefaultSession(db);
  s.job.cluster.num_gpus = 100;
  Expected<JobSpec> job = ResolvedJob(s, db);
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("100 GPUs are not a multiple of TP x PP x CP = 32"),
            std::string::npos)
      << job.status().message();
  s.job.cluster.num_gpus = 96;  // DP 3: 512 sequences do not split into 3 replicas
  job = ResolvedJob(s, db);
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("global_batch"), std::string::npos)
      << job.status().message();
  // A job smaller than a node uses part of one machine.
  s.job.parallel = {};
  s.job.parallel.tp = 4;
  s.job.model.num_layers = 32;
  s.job.cluster.num_gpus = 4;
  s.job.training.global_batch_size = 8;
  job = ResolvedJob(s, db);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->cluster.gpus_per_node, 4);
  EXPECT_EQ(s.job.cluster.gpus_per_node, 8);
}

TEST(SessionTest, SelectGpuTakesItsNodeNetworkAndAPrecisionItRuns) {
  const HardwareDb& db = BuiltinDb();
  Session s = DefaultSession(db);
  s.job.training.precision = Precision::kFp8;
  ASSERT_NE(db.FindGpu("a100-sxm4-80gb"), nullptr);
  ASSERT_TRUE(SelectGpu(db, "a100-sxm4-80gb", &s).ok());
  EXPECT_EQ(s.job.cluster.gpu, "a100-sxm4-80gb");
  const NodeTemplate* node = db.FindNode(s.node);
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->gpu, "a100-sxm4-80gb");
  EXPECT_EQ(s.node, db.FindGpu("a100-sxm4-80gb")->default_node);
  EXPECT_EQ(s.job.cluster.inter_node, node->network);
  EXPECT_EQ(s.job.training.precision, Precision::kBf16);  // A100 has no fp8
  EXPECT_FALSE(SelectGpu(db, "no-such-gpu", &s).ok());
}

TEST(SessionTest, RequestsCarryTheWorkPriceAndSearchSettings) {
  const HardwareDb& db = BuiltinDb();
  Session s = DefaultSession(db);
  s.provider = "aws";
  s.price_kind = PriceKind::kSpot;
  s.price_override_usd_per_gpu_hour = 1.5;
  s.search_all_gpus = false;
  s.search_max_gpus = 64;
  s.deadline_s = 86400;
  const PlanRequest what_if = WhatIfRequest(s, db);
  EXPECT_EQ(what_if.train_tokens, 1e12);
  EXPECT_EQ(what_if.providers, std::vector<std::string>{"aws"});
  EXPECT_EQ(what_if.price_kind, PriceKind::kSpot);
  EXPECT_EQ(what_if.price_overrides.at("h100-sxm5-80gb"), 1.5);
  EXPECT_GT(what_if.reliability.interruptions_per_gpu_hour, 0);
  const PlanRequest search = SearchRequest(s, db);
  EXPECT_EQ(search.gpus, std::vector<std::string>{"h100-sxm5-80gb"});
  EXPECT_EQ(search.max_gpus, 64);
  EXPECT_EQ(search.global_batch_sizes, std::vector<int64_t>{512});
  EXPECT_EQ(search.seq_len, 8192);
  EXPECT_EQ(search.deadline_s, 86400);
  EXPECT_EQ(search.model.name, s.job.model.name);
  s.search_all_gpus = true;
  EXPECT_EQ(SearchRequest(s, db).gpus, db.GpuIds());
}

TEST(SessionTest, ASearchAnswersTheSessionUntilTheModelOrTheJobChanges) {
  const HardwareDb& db = BuiltinDb();
  Session s = DefaultSession(db);
  const PlanRequest searched = SearchRequest(s, db);
  EXPECT_TRUE(SearchedFor(searched, s));
  s.job.cluster.num_gpus = 64;  // hardware and layout are the search's to choose
  s.job.parallel.tp = 4;
  s.provider = "aws";
  EXPECT_TRUE(SearchedFor(searched, s));
  Session other = s;
  other.job.model.num_layers = 40;
  EXPECT_FALSE(SearchedFor(searched, other));
  other = s;
  other.train_tokens = 2e12;
  EXPECT_FALSE(SearchedFor(searched, other));
  other = s;
  other.job.training.global_batch_size = 1024;
  EXPECT_FALSE(SearchedFor(searched, other));
  other = s;
  other.job.training.precision = Precision::kFp8;
  EXPECT_FALSE(SearchedFor(searched, other));
}

TEST(SessionTest, LoadPlanTakesHardwareLayoutAndProvider) {
  const HardwareDb& db = BuiltinDb();
  Session s = DefaultSession(db);
  Plan plan;
  plan.job = s.job;
  plan.job.cluster.num_gpus = 4;
  plan.job.cluster.gpus_per_node = 4;  // the planner's job: part of one machine
  plan.job.parallel = {};
  plan.job.parallel.tp = 4;
  plan.node = "dgx-h100";
  plan.econ.provider = "lambda";
  plan.econ.price_kind = PriceKind::kOnDemand;
  LoadPlan(db, plan, &s);
  EXPECT_EQ(s.job.cluster.num_gpus, 4);
  EXPECT_EQ(s.job.cluster.gpus_per_node, 8);  // the machine's size
  EXPECT_EQ(s.job.parallel.tp, 4);
  EXPECT_EQ(s.provider, "lambda");
  plan.econ.provider = "override";
  LoadPlan(db, plan, &s);
  EXPECT_EQ(s.provider, "lambda");
}

TEST(SessionTest, TheSessionFileRoundTrips) {
  const HardwareDb& db = BuiltinDb();
  Session s = DefaultSession(db);
  s.provider = "aws";
  s.price_override_usd_per_gpu_hour = 2.25;
  s.objective = Objective::kTime;
  s.budget_usd = 5e6;
  s.model_source = ModelSource::kCustom;
  s.job.model.num_layers = 40;
  s.job.parallel.vpp = 1;
  s.job.parallel.schedule = Schedule::k1F1B;
  const nlohmann::json json = SessionToJson(s);
  EXPECT_EQ(json["format"], "gpuplan-session");
  EXPECT_EQ(json["version"], 1);
  Expected<Session> back = SessionFromJson(json, "s.json", db);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(SessionToJson(*back), json);
  EXPECT_EQ(back->job.model.num_layers, 40);
  EXPECT_EQ(back->model_source, ModelSource::kCustom);
  EXPECT_EQ(back->objective, Objective::kTime);
}

TEST(SessionTest, SessionFileErrorsNameTheFileAndTheField) {
  const HardwareDb& db = BuiltinDb();
  const nlohmann::json good = SessionToJson(DefaultSession(db));
  const auto error = [&](const std::function<void(nlohmann::json&)>& spoil) {
    nlohmann::json j = good;
    spoil(j);
    Expected<Session> s = SessionFromJson(j, "my.json", db);
    EXPECT_FALSE(s.ok());
    return s.ok() ? std::string() : s.status().message();
  };
  const auto has = [](const std::string& message, const char* part) {
    return message.find(part) != std::string::npos;
  };
  std::string m = error([](nlohmann::json& j) { j["version"] = 2; });
  EXPECT_TRUE(has(m, "my.json") && has(m, "version")) << m;
  m = error([](nlohmann::json& j) { j["format"] = "other"; });
  EXPECT_TRUE(has(m, "format") && has(m, "gpuplan-session")) << m;
  m = error([](nlohmann::json& j) { j["node"] = "dgx-a100"; });
  EXPECT_TRUE(has(m, "node") && has(m, "dgx-h100")) << m;
  m = error([](nlohmann::json& j) { j["job"]["parallelism"]["tp"] = 3; });
  EXPECT_TRUE(has(m, "my.json") && has(m, "tp")) << m;
  m = error([](nlohmann::json& j) { j["price"]["kind"] = "reserved"; });
  EXPECT_TRUE(has(m, "price") && has(m, "spot")) << m;
  m = error([](nlohmann::json& j) { j["price"]["provider"] = "nobody"; });
  EXPECT_TRUE(has(m, "provider") && has(m, "nobody")) << m;
  m = error([](nlohmann::json& j) { j["work"]["train_tokens"] = -1; });
  EXPECT_TRUE(has(m, "train_tokens")) << m;
  m = error([](nlohmann::json& j) { j["extra"] = 1; });
  EXPECT_TRUE(has(m, "extra")) << m;
  Expected<Session> missing = ReadSessionFile("/nonexistent/s.json", db);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(has(missing.status().message(), "/nonexistent/s.json"));
}

}  // namespace
}  // namespace gpuplan
