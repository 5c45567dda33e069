// The planner's reports: JSON keys and round trip, text tables, Markdown, self-contained HTML,
// CSV quoting, and WriteReport's files and failures. Plans are built by hand from job specs and
// the cost model, with plausible economics.
#include "planner/report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "hardware-db/hardware_db.h"
#include "planner/plan_json.h"
#include "planner/report_charts.h"
#include "planner/report_document.h"
#include "planner/svg_chart.h"
#include "planner/units_format.h"
#include "simulator/cost_model.h"
#include "simulator/job_spec_json.h"
#include "tests/csv_text.h"
#include "tests/temp_dir.h"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;

constexpr const char* kModelName = "Llama <3> & co";
constexpr double kTrainTokens = 1.0e12;

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + needle.size())) {
    ++n;
  }
  return n;
}

class ReportTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Expected<HardwareDb> loaded = LoadHardwareDb({});
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    db_ = new HardwareDb(std::move(loaded).value());
  }
  static void TearDownTestSuite() { delete db_; }

  // llama3-70b, seq 4096, global batch 512, on `gpus` x `gpu` with `parallel`; priced at
  // `usd_per_gpu_hour` with 95% goodput.
  static Plan MakePlan(const std::string& gpu, const std::string& node, int gpus,
                       const nlohmann::json& parallel, double usd_per_gpu_hour) {
    const nlohmann::json spec = {{"model", "llama3-70b"},
                                 {"cluster", {{"gpu", gpu}, {"num_gpus", gpus}}},
                                 {"training",
                                  {{"seq_len", 4096},
                                   {"global_batch_size", 512},
                                   {"micro_batch_size", 1},
                                   {"recompute", "selective"}}},
                                 {"parallelism", parallel}};
    Expected<JobSpec> job = ParseJobSpec(spec, "<test>", ".", *db_);
    EXPECT_TRUE(job.ok()) << job.status().message();
    Plan p;
    p.job = *job;
    p.job.model.name = kModelName;
    p.node = node;
    p.step = EvaluateStep(p.job, *db_->FindGpu(gpu), *db_->FindNetwork(p.job.cluster.inter_node));
    PlanEconomics& e = p.econ;
    e.tokens = kTrainTokens;
    e.steps = kTrainTokens / (512.0 * 4096);
    e.compute_time_s = e.steps * p.step.step_time_s;
    e.checkpoint_bytes = 70e9 * 14;
    e.checkpoint_write_s = 45;
    e.mtbf_s = 3600.0 * 1e4 / gpus;
    e.checkpoint_interval_s = std::sqrt(2 * e.checkpoint_write_s * e.mtbf_s);
    e.expected_wall_s = e.compute_time_s / 0.95;
    e.goodput = e.compute_time_s / e.expected_wall_s;
    e.expected_interruptions = e.expected_wall_s / e.mtbf_s;
    e.provider = "lambda";
    e.offering = "8x " + gpu;
    e.usd_per_gpu_hour = usd_per_gpu_hour;
    e.billed_gpus = gpus;
    e.expected_cost_usd = e.expected_wall_s / 3600 * gpus * usd_per_gpu_hour;
    e.usd_per_million_tokens = e.expected_cost_usd / (kTrainTokens / 1e6);
    return p;
  }

  static nlohmann::json Layout(int tp, int pp) {
    return {{"tp", tp}, {"pp", pp}, {"sequence_parallel", true}, {"zero_stage", 1}};
  }

  static PlanResult Found() {
    PlanResult r;
    r.request.model.name = kModelName;
    r.request.train_tokens = kTrainTokens;
    r.request.seq_len = 4096;
    r.request.global_batch_sizes = {512};
    r.request.gpus = {"h100-sxm5-80gb", "a100-sxm4-80gb"};
    r.request.min_gpus = 8;
    r.request.max_gpus = 256;
    r.request.deadline_s = 120 * 86400.0;
    r.request.objective = Objective::kCostUnderDeadline;
    r.found = true;
    r.recommendation = MakePlan("h100-sxm5-80gb", "dgx-h100", 128, Layout(8, 2), 2.99);
    r.bound = "deadline";
    r.explanation = {"The cheapest plan that meets the 120.0 d deadline.",
                     "64 x h100-sxm5-80gb would cost less but miss the deadline."};
    r.alternatives = {MakePlan("a100-sxm4-80gb", "dgx-a100", 256, Layout(8, 4), 1.79),
                      MakePlan("h100-sxm5-80gb", "dgx-h100", 256, Layout(8, 2), 2.99)};
    r.pareto = {r.alternatives[1], r.recommendation,
                MakePlan("h100-sxm5-80gb", "dgx-h100", 64, Layout(8, 2), 2.99)};
    r.scaling_gpu = "h100-sxm5-80gb";
    ScalingRow too_few;
    too_few.gpus = 8;
    r.scaling.push_back(too_few);
    const int counts[] = {32, 64, 128, 256};
    for (int n : counts) {
      ScalingRow row;
      row.gpus = n;
      row.feasible = true;
      row.plan = MakePlan("h100-sxm5-80gb", "dgx-h100", n, Layout(8, n == 32 ? 4 : 2), 2.99);
      r.scaling.push_back(row);
    }
    FillSpeedups(&r.scaling);
    r.warnings = {"prices are list prices as of 2024; check the provider"};
    r.stats = {4321, 1200, 3000, 121, 0.42, 16};
    return r;
  }

  static PlanResult NotFound() {
    PlanResult r;
    r.request.model.name = kModelName;
    r.request.train_tokens = kTrainTokens;
    r.request.seq_len = 4096;
    r.request.global_batch_sizes = {512};
    r.request.gpus = {"a100-sxm4-80gb"};
    r.request.min_gpus = 1;
    r.request.max_gpus = 8;
    r.found = false;
    r.explanation = {"No layout of llama3-70b fits in 8 GPUs."};
    r.no_fit.any_plan = true;
    r.no_fit.smallest =
        MakePlan("a100-sxm4-80gb", "dgx-a100", 8,
                 {{"tp", 8}, {"pp", 1}, {"sequence_parallel", true}, {"zero_stage", 1}}, 1.79);
    r.no_fit.suggestions = {"h200-sxm-141gb (141 GB) fits at 16 GPUs",
                            "a100-sxm4-80gb fits at 32 GPUs"};
    r.stats = {96, 0, 90, 6, 0.01, 4};
    return r;
  }

  static HardwareDb* db_;
};
HardwareDb* ReportTest::db_ = nullptr;

// ---- layout and JSON -------------------------------------------------------------------------

TEST_F(ReportTest, LayoutSummaryOfTheGpt3Example) {
  Expected<JobSpec> job =
      ReadJobSpecFile(std::string(GPUPLAN_SOURCE_DIR) + "/examples/gpt3-175b-a100.json", *db_);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(LayoutSummary(*job), "TP8 PP16 DP8 mb1 selective bf16 ZeRO-1");
  job->parallel.first_stage_layers = 4;  // 96 layers: 4 + 14 x 6 + 8
  job->parallel.last_stage_layers = 8;
  EXPECT_EQ(LayoutSummary(*job), "TP8 PP16(4+14x6+8) DP8 mb1 selective bf16 ZeRO-1");
  job->parallel.pp = 3;  // 96 layers: 4 + 84 + 8
  EXPECT_EQ(LayoutSummary(*job), "TP8 PP3(4+84+8) DP8 mb1 selective bf16 ZeRO-1");
  job->parallel.pp = 16;
  job->parallel.first_stage_layers = 0;
  job->parallel.last_stage_layers = 0;
  job->parallel.fsdp = true;
  job->parallel.cpu_offload = true;
  job->parallel.vpp = 2;
  job->training.recompute = Recompute::kFull;
  EXPECT_EQ(LayoutSummary(*job), "TP8 PP16 VPP2 DP8 mb1 full-recompute bf16 FSDP offload");
  job->parallel.tp_overlap = true;
  job->parallel.ep_overlap = true;  // ep 1: nothing to overlap, not shown
  EXPECT_EQ(LayoutSummary(*job),
            "TP8 PP16 VPP2 DP8 mb1 full-recompute bf16 FSDP offload tp-overlap");
  job->parallel.ep = 2;
  EXPECT_EQ(LayoutSummary(*job),
            "TP8 PP16 VPP2 DP8 EP2 mb1 full-recompute bf16 FSDP offload tp-overlap ep-overlap");
}

TEST_F(ReportTest, JsonHasExactlyTheDocumentedTopLevelKeys) {
  const nlohmann::json j = PlanResultToJson(Found());
  std::vector<std::string> keys;
  for (const auto& item : j.items()) keys.push_back(item.key());
  std::sort(keys.begin(), keys.end());
  const std::vector<std::string> expected = {"alternatives", "bound",  "explanation",    "found",
                                             "no_fit",       "pareto", "recommendation", "request",
                                             "scaling",      "stats",  "warnings"};
  EXPECT_EQ(keys, expected);
  EXPECT_TRUE(j["found"].get<bool>());
  EXPECT_TRUE(j["no_fit"].is_null());
  EXPECT_EQ(j["request"]["model"], kModelName);
  EXPECT_EQ(j["request"]["objective"], "cost-under-deadline");
  EXPECT_DOUBLE_EQ(j["request"]["deadline_s"].get<double>(), 120 * 86400.0);
  EXPECT_TRUE(j["request"]["budget_usd"].is_null());
  EXPECT_EQ(j["alternatives"].size(), 2u);
  EXPECT_EQ(j["pareto"].size(), 3u);
  EXPECT_EQ(j["stats"]["configurations"], 4321);
}

TEST_F(ReportTest, JsonPlanCarriesStepEconomicsAndLayout) {
  const PlanResult r = Found();
  const nlohmann::json rec = PlanResultToJson(r)["recommendation"];
  EXPECT_EQ(rec["node"], "dgx-h100");
  EXPECT_EQ(rec["layout"], "TP8 PP2 DP8 mb1 selective bf16 ZeRO-1");
  EXPECT_DOUBLE_EQ(rec["step"]["step_time_s"].get<double>(), r.recommendation.step.step_time_s);
  EXPECT_TRUE(rec["step"].contains("mfu"));
  EXPECT_TRUE(rec["step"]["breakdown_s"].contains("bubble"));
  EXPECT_TRUE(rec["step"]["memory"].contains("peak_bytes_per_gpu"));
  for (const char* key : {"steps",
                          "tokens",
                          "compute_time_s",
                          "checkpoint_bytes",
                          "checkpoint_write_s",
                          "checkpoint_interval_s",
                          "mtbf_s",
                          "expected_interruptions",
                          "spare_hosts_per_domain",
                          "no_spare_probability",
                          "expected_repair_wait_s",
                          "expected_wall_s",
                          "goodput",
                          "provider",
                          "offering",
                          "price_kind",
                          "usd_per_gpu_hour",
                          "billed_gpus",
                          "expected_cost_usd",
                          "usd_per_million_tokens"}) {
    EXPECT_TRUE(rec["economics"].contains(key)) << key;
  }
  EXPECT_DOUBLE_EQ(rec["economics"]["expected_cost_usd"].get<double>(),
                   r.recommendation.econ.expected_cost_usd);
}

TEST_F(ReportTest, JsonJobReadsBackAsAJobSpec) {
  const PlanResult r = Found();
  const nlohmann::json job = PlanResultToJson(r)["recommendation"]["job"];
  Expected<JobSpec> back = ParseJobSpec(job, "plan.json", ".", *db_);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(JobSpecToJson(*back), JobSpecToJson(r.recommendation.job));
}

TEST_F(ReportTest, JsonScalingRowsHaveNullsWhereNothingFits) {
  const nlohmann::json s = PlanResultToJson(Found())["scaling"];
  EXPECT_EQ(s["gpu"], "h100-sxm5-80gb");
  ASSERT_EQ(s["rows"].size(), 5u);
  EXPECT_FALSE(s["rows"][0]["feasible"].get<bool>());
  EXPECT_TRUE(s["rows"][0]["step_time_s"].is_null());
  for (const char* key : {"gpus", "feasible", "step_time_s", "expected_wall_s", "baseline_gpus",
                          "speedup", "scaling_efficiency", "superlinear_reason", "provider",
                          "usd_per_gpu_hour", "expected_cost_usd", "layout"}) {
    EXPECT_TRUE(s["rows"][1].contains(key)) << key;
  }
  EXPECT_DOUBLE_EQ(s["rows"][1]["speedup"].get<double>(), 1.0);
  EXPECT_EQ(s["rows"][1]["baseline_gpus"], 32);
  EXPECT_TRUE(s["rows"][1]["superlinear_reason"].is_null());
  EXPECT_EQ(s["rows"][1]["provider"], "lambda");
  EXPECT_DOUBLE_EQ(s["rows"][1]["usd_per_gpu_hour"].get<double>(), 2.99);
  EXPECT_TRUE(s["rows"][0]["provider"].is_null());
}

TEST_F(ReportTest, JsonOfANotFoundResultHasTheDiagnosis) {
  const nlohmann::json j = PlanResultToJson(NotFound());
  EXPECT_FALSE(j["found"].get<bool>());
  EXPECT_TRUE(j["recommendation"].is_null());
  EXPECT_TRUE(j["no_fit"]["any_plan"].get<bool>());
  EXPECT_EQ(j["no_fit"]["smallest"]["layout"], "TP8 PP1 DP1 mb1 selective bf16 ZeRO-1");
  EXPECT_EQ(j["no_fit"]["suggestions"].size(), 2u);
}

// ---- text and Markdown -----------------------------------------------------------------------

TEST_F(ReportTest, TextShowsRecommendationTablesAndHumanUnits) {
  const PlanResult r = Found();
  const std::string text = FormatPlanResultText(r);
  for (const char* expected :
       {"Recommendation", "128 x h100-sxm5-80gb", "dgx-h100",
        "TP8 PP2 DP8 mb1 selective bf16 ZeRO-1", "expected wall time", "goodput", "checkpoints",
        "cost per 1M tokens", "bound by", "deadline", "would cost less",
        "Pareto front: time vs cost", "* recommended", "Scaling on h100-sxm5-80gb", "does not fit",
        "Warnings", "list prices", "Enumerated 4,321 layouts"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
  }
  EXPECT_NE(text.find(FormatDuration(r.recommendation.econ.expected_wall_s)), std::string::npos);
  EXPECT_NE(text.find(FormatUsd(r.recommendation.econ.expected_cost_usd)), std::string::npos);
  EXPECT_NE(text.find("1.00x"), std::string::npos);
}

TEST_F(ReportTest, TextTablesHaveAlignedColumns) {
  const std::string text = FormatPlanResultText(Found());
  const std::vector<std::string> lines = Lines(text);
  const auto header = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("GPUs") != std::string::npos && l.find("speedup") != std::string::npos;
  });
  ASSERT_NE(header, lines.end()) << text;
  for (const char* col : {"step time", "wall time", "efficiency", "cost"}) {
    EXPECT_NE(header->find(col), std::string::npos) << col;
  }
  // Header, rule and the 5 rows: the right-aligned "speedup vs 32" column ends at the same place.
  const size_t end = header->find("speedup vs 32") + std::string("speedup vs 32").size();
  for (auto it = header + 2; it != header + 7; ++it) {
    if (it->find("does not fit") != std::string::npos) continue;
    EXPECT_EQ(it->find('x', end - 1), end - 1) << *it;
  }
}

// The scaling table says what speedup and efficiency compare with, where each row is priced, and
// why an efficiency is above 100%: one line per reason, naming the counts it holds for.
TEST_F(ReportTest, ScalingTableNamesBaselineProviderPriceAndSuperlinearReasons) {
  PlanResult r = Found();
  const std::string text = FormatPlanResultText(r);
  for (const char* expected :
       {"speedup vs 32", "efficiency vs 32", "provider", "$/GPU-h", "$2.99",
        "Speedup and efficiency against 32 GPUs, the smallest count that fits (efficiency 100% = "
        "linear scaling); every priced row is at lambda."}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
  }
  // 64 GPUs at PP2 beat 32 at PP4 per GPU-hour: the slowest stage of four carries more than a
  // quarter of the compute.
  EXPECT_NE(text.find("- Superlinear at 64 GPUs: fewer GPU-hours than 32 GPUs; the largest saving "
                      "is in compute (PP 4 -> 2)."),
            std::string::npos)
      << text;

  r.scaling[2].plan.econ.provider = "coreweave";
  r.scaling[2].superlinear_reason = "fewer GPU-hours than 32 GPUs; the largest saving is in X";
  r.scaling[3].superlinear_reason = "fewer GPU-hours than 32 GPUs; the largest saving is in Y";
  r.scaling[4].superlinear_reason = r.scaling[2].superlinear_reason;
  const std::string marked = FormatPlanResultText(r);
  for (const char* expected :
       {"each row is priced at the provider it names.", "coreweave",
        "- Superlinear at 64, 256 GPUs: fewer GPU-hours than 32 GPUs; the largest saving is in X.",
        "- Superlinear at 128 GPUs: fewer GPU-hours than 32 GPUs; the largest saving is in Y."}) {
    EXPECT_NE(marked.find(expected), std::string::npos) << expected << "\n" << marked;
  }
  EXPECT_NE(PlanResultToMarkdown(r).find("Superlinear at 64, 256 GPUs"), std::string::npos);
  EXPECT_NE(PlanResultToHtml(r).find("<li>Superlinear at 64, 256 GPUs"), std::string::npos);
}

TEST_F(ReportTest, TextOfANotFoundResultDiagnosesMemory) {
  const std::string text = FormatPlanResultText(NotFound());
  EXPECT_EQ(text.find("Recommendation"), std::string::npos);
  for (const char* expected :
       {"No plan found", "Smallest memory footprint found", "8 x a100-sxm4-80gb", "memory per GPU",
        "of 80.4 GB", "h200-sxm-141gb (141 GB) fits", "No layout of llama3-70b fits"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
  }
}

TEST_F(ReportTest, MarkdownHasHeadingsTablesAndEscapes) {
  const std::string md = PlanResultToMarkdown(Found());
  EXPECT_EQ(md.rfind("# gpuplan plan: Llama &lt;3&gt; &amp; co\n", 0), 0u) << md;
  for (const char* expected : {"## Recommendation", "## Pareto front: time vs cost",
                               "## Scaling on h100-sxm5-80gb", "## Warnings", "- **layout**:",
                               "| GPUs | step time | wall time | speedup vs 32 | efficiency vs "
                               "32 | provider | \\$/GPU-h | cost | layout |",
                               "|---:|---:|---:|---:|---:|---|---:|---:|---|", "\\$"}) {
    EXPECT_NE(md.find(expected), std::string::npos) << expected << "\n" << md;
  }
  EXPECT_EQ(md.find("<3>"), std::string::npos);
  const std::string missing = PlanResultToMarkdown(NotFound());
  EXPECT_NE(missing.find("## No plan found"), std::string::npos);
  EXPECT_NE(missing.find("- h200-sxm-141gb (141 GB) fits at 16 GPUs"), std::string::npos);
}

// ---- HTML ------------------------------------------------------------------------------------

TEST_F(ReportTest, HtmlIsOneSelfContainedPageWithFourCharts) {
  const std::string html = PlanResultToHtml(Found());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(Count(html, "<html"), 1u);
  EXPECT_EQ(Count(html, "</html>"), 1u);
  EXPECT_EQ(Count(html, "<svg"), 4u);
  EXPECT_EQ(Count(html, "</svg>"), 4u);
  for (const char* forbidden : {"<script", "http", "src=", "href=", "url(", "@import", "<link"}) {
    EXPECT_EQ(html.find(forbidden), std::string::npos) << forbidden;
  }
  for (const char* expected :
       {"Pareto front", "expected wall time (log scale)", "expected cost (USD)",
        "GPUs (log2 scale)", "ideal (linear)", "scaling efficiency", "capacity 80.0 GB",
        "optimizer state", "bubble", "TP comm", "recommended", "h100-sxm5-80gb \u00d7128"}) {
    EXPECT_NE(html.find(expected), std::string::npos) << expected;
  }
}

TEST_F(ReportTest, HtmlEscapesEveryText) {
  const std::string html = PlanResultToHtml(Found());
  EXPECT_NE(html.find("Llama &lt;3&gt; &amp; co"), std::string::npos);
  EXPECT_EQ(html.find("<3>"), std::string::npos);
  EXPECT_EQ(html.find("& co"), std::string::npos);
}

TEST_F(ReportTest, HtmlOfANotFoundResultShowsTheDiagnosisAndItsMemory) {
  const std::string html = PlanResultToHtml(NotFound());
  EXPECT_NE(html.find("No plan found"), std::string::npos);
  EXPECT_NE(html.find("over by"), std::string::npos);
  EXPECT_NE(html.find("<li>a100-sxm4-80gb fits at 32 GPUs</li>"), std::string::npos);
  EXPECT_EQ(Count(html, "<svg"), 1u);  // the memory chart of the smallest footprint
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

// ---- charts ----------------------------------------------------------------------------------

// Nine points 40 px apart on one row, as on a flat Pareto front; the middle one is emphasised.
std::vector<LabelRequest> CrowdedRow() {
  std::vector<LabelRequest> labels;
  for (int i = 0; i < 9; ++i) {
    labels.push_back(
        {200.0 + 40 * i, 150, i == 4 ? 7.0 : 4.5, "h100-sxm5-80gb \u00d71024", i == 4});
  }
  return labels;
}

constexpr Box kPlotArea{100, 40, 690, 340};

TEST(ReportChartsTest, PlacedLabelsOverlapNeitherEachOtherNorPointsNorTheEdge) {
  const std::vector<LabelRequest> labels = CrowdedRow();
  const std::vector<std::optional<PlacedLabel>> placed = PlaceLabels(labels, kPlotArea);
  ASSERT_EQ(placed.size(), labels.size());
  ASSERT_TRUE(placed[4].has_value()) << "the emphasised label is always shown";
  size_t shown = 0;
  for (size_t i = 0; i < placed.size(); ++i) {
    if (!placed[i]) continue;
    ++shown;
    EXPECT_TRUE(kPlotArea.Contains(placed[i]->box)) << i;
    for (size_t j = 0; j < placed.size(); ++j) {
      if (j != i && placed[j]) {
        EXPECT_FALSE(placed[i]->box.Overlaps(placed[j]->box)) << i << " " << j;
      }
      const LabelRequest& p = labels[j];
      EXPECT_FALSE(placed[i]->box.Overlaps({p.x - p.r, p.y - p.r, p.x + p.r, p.y + p.r}))
          << "label " << i << " covers point " << j;
    }
  }
  EXPECT_GT(shown, 2u);
  EXPECT_LT(shown, labels.size()) << "too crowded for every label; some are dropped";
  const std::vector<std::optional<PlacedLabel>> again = PlaceLabels(labels, kPlotArea);
  for (size_t i = 0; i < placed.size(); ++i) {
    ASSERT_EQ(again[i].has_value(), placed[i].has_value()) << i;
    if (placed[i]) {
      EXPECT_EQ(again[i]->box.x0, placed[i]->box.x0) << i;
    }
  }
}

TEST(ReportChartsTest, LabelsGoRightOfTheirPointUnlessTheEdgeIsInTheWay) {
  const std::vector<std::optional<PlacedLabel>> placed =
      PlaceLabels({{150, 100, 4.5, "h100-sxm5-80gb \u00d78", false},
                   {680, 100, 4.5, "h100-sxm5-80gb \u00d78", false}},
                  kPlotArea);
  ASSERT_TRUE(placed[0] && placed[1]);
  EXPECT_STREQ(placed[0]->anchor, "start");
  EXPECT_GT(placed[0]->box.x0, 150);
  EXPECT_STREQ(placed[1]->anchor, "end");
  EXPECT_LT(placed[1]->box.x1, 680);
}

TEST(ReportChartsTest, AnEmphasisedLabelIsShownEvenWhereNothingFits) {
  const std::vector<std::optional<PlacedLabel>> placed =
      PlaceLabels({{50, 50, 7, "h100-sxm5-80gb \u00d7128", true},
                   {60, 50, 4.5, "h100-sxm5-80gb \u00d7256", false}},
                  {40, 40, 80, 60});
  EXPECT_TRUE(placed[0].has_value());
  EXPECT_FALSE(placed[1].has_value());
}

TEST_F(ReportTest, ScalingChartHasLogSpeedupTicksAndStartsAtTheFirstFeasibleRow) {
  const std::string svg = RenderChart(ChartKind::kScaling, Found());
  for (const char* tick :
       {">1x</text>", ">2x</text>", ">4x</text>", "speedup over 32 GPUs (log2 scale)"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  }
  EXPECT_EQ(svg.find("0.0x"), std::string::npos) << "no linear axis from zero";
  // The ideal (dashed) line and the speedup line share their first point: 32 GPUs at 1x.
  const auto first_point = [&](const std::string& marker) {
    const size_t at = svg.find("points=\"", svg.find(marker));
    return svg.substr(at, svg.find(' ', at) - at);
  };
  EXPECT_EQ(first_point("stroke-dasharray=\"6,4\" points"),
            first_point("stroke=\"#4e79a7\" stroke-width=\"2\" points"));
}

// ---- CSV -------------------------------------------------------------------------------------

TEST_F(ReportTest, CsvHasAHeaderAndOneRowPerPlan) {
  PlanResult r = Found();
  r.recommendation.band.runs = 9;
  r.recommendation.band.low_factor = 0.9;
  r.recommendation.band.high_factor = 1.2;
  const std::vector<std::string> lines = Lines(PlanResultToCsv(r), "\r\n");
  // recommendation + 2 alternatives + 3 Pareto + 4 feasible scaling rows.
  ASSERT_EQ(lines.size(), 1u + 1 + 2 + 3 + 4);
  const std::vector<std::string> header = CsvFields(lines[0]);
  ASSERT_EQ(header.size(), 36u);
  EXPECT_EQ(header.front(), "kind");
  EXPECT_EQ(header[31], "usd_per_million_tokens");
  EXPECT_EQ(header.back(), "expected_cost_usd_high");
  for (const std::string& line : lines) EXPECT_EQ(CsvFields(line).size(), 36u) << line;
  const std::vector<std::string> rec = CsvFields(lines[1]);
  EXPECT_EQ(rec[0], "recommendation");
  EXPECT_EQ(rec[1], "h100-sxm5-80gb");
  EXPECT_EQ(rec[2], "128");
  EXPECT_EQ(rec[15], "selective");
  EXPECT_EQ(rec[18], "1");  // dp_replicate
  EXPECT_EQ(rec[20], "bf16");
  EXPECT_NEAR(std::stod(rec[30]), r.recommendation.econ.expected_cost_usd, 1e-3);
  // The error band's ends; empty for a plan without a band.
  EXPECT_NEAR(std::stod(rec[33]), 1.2 * r.recommendation.econ.expected_wall_s, 1e-2);
  EXPECT_NEAR(std::stod(rec[34]), 0.9 * r.recommendation.econ.expected_cost_usd, 1e-3);
  EXPECT_EQ(CsvFields(lines[2])[32], "");
  EXPECT_EQ(CsvFields(lines[2])[0], "alternative");
  EXPECT_EQ(CsvFields(lines[4])[0], "pareto");
  EXPECT_EQ(CsvFields(lines.back())[0], "scaling");
}

TEST_F(ReportTest, CsvQuotesCommasAndQuotes) {
  PlanResult r = Found();
  r.recommendation.node = "rack 7, \"east\"";
  const std::string csv = PlanResultToCsv(r);
  EXPECT_NE(csv.find(",\"rack 7, \"\"east\"\"\","), std::string::npos) << csv;
  EXPECT_EQ(CsvFields(Lines(csv, "\r\n")[1])[3], "rack 7, \"east\"");
}

// ---- WriteReport -----------------------------------------------------------------------------

TEST_F(ReportTest, WriteReportWritesTheFourFiles) {
  TempDir tmp("gpuplan_report_");
  const fs::path dir = tmp.path() / "out" / "run1";  // created
  const PlanResult r = Found();
  const Status st = WriteReport(r, dir.string());
  ASSERT_TRUE(st.ok()) << st.message();
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"plan.html", "plan.json", "plan.md", "plans.csv"}));
  std::ifstream json_file(dir / "plan.json");
  const nlohmann::json j = nlohmann::json::parse(json_file, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j, PlanResultToJson(r));
  std::stringstream html;
  html << std::ifstream(dir / "plan.html").rdbuf();
  EXPECT_EQ(html.str(), PlanResultToHtml(r));
}

TEST_F(ReportTest, WriteReportFailsCleanlyWhenTheDirectoryCannotBeMade) {
  TempDir tmp("gpuplan_report_");
  const fs::path file = tmp.path() / "not-a-dir";
  std::ofstream(file) << "x";
  const std::string dir = (file / "reports").string();
  const Status st = WriteReport(Found(), dir);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.kind(), ErrorKind::kUnavailable);
  EXPECT_NE(st.message().find(dir), std::string::npos) << st.message();
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp.path()), fs::directory_iterator()), 1);
}

TEST_F(ReportTest, WriteReportLeavesNoTemporaryFilesOnFailure) {
  TempDir tmp("gpuplan_report_");
  fs::create_directories(tmp.path() / "plan.json");  // a directory where a file must go
  const Status st = WriteReport(Found(), tmp.path().string());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("plan.json"), std::string::npos) << st.message();
  for (const auto& entry : fs::directory_iterator(tmp.path())) {
    const std::string name = entry.path().filename().string();
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << name;
    if (entry.is_regular_file()) {  // whatever was renamed into place is complete
      EXPECT_GT(entry.file_size(), 100u) << name;
    }
  }
}

}  // namespace
}  // namespace gpuplan
