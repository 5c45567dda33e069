// Error bands (simulator/error_band.h): the band of a class worked by hand, the fallbacks to a
// coarser class and to an untested one, and the residuals file's errors.
#include "simulator/error_band.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "common/file_write.h"
#include "tests/parse_job.h"
#include "tests/temp_dir.h"

namespace gpuplan {
namespace {

BandResidual Residual(const std::string& source, const std::string& architecture, int64_t num_gpus,
                      double ratio) {
  return BandResidual{source + "-" + std::to_string(num_gpus) + "-" + std::to_string(ratio),
                      source,
                      "megatron-core",
                      architecture,
                      num_gpus,
                      ratio};
}

// Publications A and B, five runs each on 8 GPUs of `architecture`, with log ratios centred 0 and
// 0.2 (median |deviation| 0.1 when pooled; tau = 0.2 / sqrt(2) between them).
std::vector<BandResidual> TwoPublications(const std::string& architecture) {
  std::vector<BandResidual> r;
  for (double x : {0.0, 0.05, -0.05, 0.1, -0.1})
    r.push_back(Residual("A", architecture, 8, std::exp(x)));
  for (double x : {0.2, 0.25, 0.15, 0.3, 0.1})
    r.push_back(Residual("B", architecture, 8, std::exp(x)));
  return r;
}

TEST(ErrorBand, AClassOfFiveRunsWorkedByHand) {
  // Logs 0, +-0.1, +-0.2: median 0, median |deviation| 0.1, so s = 0.14826; t(0.9, 4) = 1.533
  // (tabulated; the expansion gives 1.5320); h = 1.5320 x 0.14826 x sqrt(1.2) = 0.24882.
  std::vector<BandResidual> r;
  for (double x : {0.0, 0.1, -0.1, 0.2, -0.2}) r.push_back(Residual("A", "hopper", 8, std::exp(x)));
  const ErrorBand band = BandFor(r, "megatron-core", "hopper", 16, false);
  EXPECT_TRUE(band.validated);
  EXPECT_EQ(band.runs, 5);
  EXPECT_EQ(band.basis, "megatron-core, hopper, <= 64 GPUs");
  const double h = 1.5320 * 0.14826 * std::sqrt(1.2);
  EXPECT_NEAR(std::log(band.low_factor), -h, 1e-3);
  EXPECT_NEAR(std::log(band.high_factor), h, 1e-3);
}

// From kMinQuantileBandRuns residuals each end of the band is the class's own quantile, widened
// for one new run: a class that is often far too slow and never far too fast gets a band to
// match, where the median absolute deviation would make it symmetric.
TEST(ErrorBand, ALargeClassTakesEachEndFromItsOwnQuantiles) {
  // 30 runs of two publications with logs 0, 0.01, ..., 0.24 and a slow tail of five at
  // 1.0-1.4.
  std::vector<BandResidual> r;
  std::vector<double> logs;
  for (int i = 0; i < 30; ++i) {
    const double x = i < 25 ? 0.01 * i : 1.0 + 0.1 * (i - 25);
    logs.push_back(x);
    r.push_back(Residual(i % 2 == 0 ? "A" : "B", "hopper", 8, std::exp(x)));
  }
  const ErrorBand band = BandFor(r, "megatron-core", "hopper", 8, false);
  ASSERT_TRUE(band.validated);
  EXPECT_EQ(band.runs, 30);
  // Type-7 quantiles of the sorted logs: position p x 29.
  auto quantile = [&](double p) {
    const double i = p * 29;
    const int k = static_cast<int>(i);
    return logs[k] + (i - k) * (logs[k + 1] - logs[k]);
  };
  const double centre = 0.5 * (logs[14] + logs[15]);
  EXPECT_NEAR(band.log_centre, centre, 1e-12);
  // Unwidened, the ends would be the quantiles; one new run widens each side by sqrt(1 + 1/30).
  const double widen = std::sqrt(1 + 1.0 / 30);
  EXPECT_NEAR(std::log(band.low_factor), centre - (centre - quantile(0.1)) * widen, 1e-6);
  EXPECT_NEAR(std::log(band.high_factor), centre + (quantile(0.9) - centre) * widen, 1e-6);
  EXPECT_GT(std::log(band.high_factor) - centre, 5 * (centre - std::log(band.low_factor)));
  // --confidence ranks by a quantile of the same two-piece distribution.
  EXPECT_NEAR(band.Factor(0.9), band.high_factor, 1e-12);
  EXPECT_NEAR(band.Factor(0.5), std::exp(centre), 1e-9);
}

TEST(ErrorBand, ASmallClassFallsBackToItsArchitectureAtAnyScale) {
  std::vector<BandResidual> r;
  for (double x : {1.0, 1.1, 0.9}) r.push_back(Residual("A", "hopper", 1024, x));
  for (double x : {1.2, 1.3}) r.push_back(Residual("B", "hopper", 8, x));
  const ErrorBand band = BandFor(r, "megatron-core", "hopper", 2048, false);
  EXPECT_TRUE(band.validated);
  EXPECT_EQ(band.runs, 5);
  EXPECT_EQ(band.basis, "megatron-core, hopper, any scale");
  EXPECT_NEAR(band.low_factor * band.high_factor, 1.1 * 1.1, 0.02);  // centred on the median
}

TEST(ErrorBand, AnUntestedClassIsWidenedByTheSpreadBetweenPublications) {
  // Two publications of five runs each, centred 0.2 apart in log: tau = 0.2 / sqrt(2).
  std::vector<BandResidual> r = TwoPublications("ampere");
  const ErrorBand tested = BandFor(r, "megatron-core", "ampere", 8, false);
  const ErrorBand untested = BandFor(r, "megatron-core", "blackwell", 8, false);
  EXPECT_TRUE(tested.validated);
  EXPECT_FALSE(untested.validated);
  EXPECT_EQ(untested.runs, 10);
  EXPECT_EQ(untested.basis, "megatron-core");
  const double tested_half = std::log(tested.high_factor / tested.low_factor) / 2;
  const double untested_half = std::log(untested.high_factor / untested.low_factor) / 2;
  // Pooled: median 0.1, |deviations| median 0.1 -> s = 0.14826; t(0.9, 9) = 1.383.
  const double s = 0.14826, tau = 0.2 / std::sqrt(2.0);
  EXPECT_NEAR(untested_half, 1.3830 * std::sqrt(s * s * 1.1 + tau * tau), 2e-3);
  EXPECT_GT(untested_half, tested_half);
  // A stack no run used pools over every run.
  EXPECT_EQ(BandFor(r, "nanotron", "ampere", 8, false).basis, "all stacks");
}

TEST(ErrorBand, AClassFromOnePublicationIsWidenedByTheSpreadBetweenPublications) {
  // Publications A and B (ampere, five runs each, medians 0 and 0.2 in log: tau = 0.2 / sqrt(2))
  // and a Hopper class whose five runs all come from C, 20% faster than predicted.
  std::vector<BandResidual> r = TwoPublications("ampere");
  const double c = std::log(0.8);
  for (double x : {0.0, 0.01, -0.01, 0.02, -0.02})
    r.push_back(Residual("C", "hopper", 1024, std::exp(c + x)));
  // tau over the three publications' medians 0, 0.2 and log 0.8.
  const double mean = (0.0 + 0.2 + c) / 3;
  const double tau =
      std::sqrt((mean * mean + (0.2 - mean) * (0.2 - mean) + (c - mean) * (c - mean)) / 2);
  const ErrorBand band = BandFor(r, "megatron-core", "hopper", 2048, false);
  EXPECT_TRUE(band.validated);
  EXPECT_EQ(band.publications, 1);
  EXPECT_EQ(band.basis, "megatron-core, hopper, > 512 GPUs");
  // s = 1.4826 x 0.01; t(0.9, 4) = 1.5320.
  const double s = 1.4826 * 0.01;
  const double half = 1.5320 * std::sqrt(s * s * 1.2 + tau * tau);
  EXPECT_NEAR(std::log(band.low_factor), c - half, 2e-3);
  EXPECT_NEAR(std::log(band.high_factor), c + half, 2e-3);
  EXPECT_EQ(DescribeBand(band),
            "5 published runs of megatron-core, hopper, > 512 GPUs, cross-validated, all from one "
            "publication: widened by the spread between publications; their median ran 25% faster "
            "than predicted");
  // Two publications in a class: its own spread, no tau.
  const ErrorBand ampere = BandFor(r, "megatron-core", "ampere", 8, false);
  EXPECT_EQ(ampere.publications, 2);
  EXPECT_EQ(DescribeBand(ampere),
            "10 published runs of megatron-core, ampere, <= 64 GPUs, "
            "cross-validated; their median ran 10% slower than predicted");
}

// A mixture-of-experts job is its own class: dense runs of its stack, however many, do not check
// its all-to-all, router and expert costs, so its band is the untested one, pooled from them and
// widened, and says they are dense; MoE runs of the class make it a tested class of its own.
TEST(ErrorBand, MixtureOfExpertsJobsAreTheirOwnClass) {
  std::vector<BandResidual> r = TwoPublications("hopper");
  const ErrorBand dense = BandFor(r, "megatron-core", "hopper", 8, false);
  const ErrorBand moe = BandFor(r, "megatron-core", "hopper", 8, true);
  EXPECT_TRUE(dense.validated);
  EXPECT_FALSE(moe.validated);
  EXPECT_EQ(moe.basis, "megatron-core (dense models only)");
  EXPECT_GT(moe.high_factor / moe.low_factor, dense.high_factor / dense.low_factor);
  EXPECT_EQ(DescribeBand(moe).rfind("WIDE, no published run of this class: widened from 10 "
                                    "published runs of megatron-core (dense models only) in "
                                    "other classes",
                                    0),
            0u)
      << DescribeBand(moe);
  for (double x : {0.3, 0.35, 0.25, 0.4, 0.2}) {
    r.push_back(Residual("C", "hopper", 256, std::exp(x)));
    r.back().moe = true;
  }
  const ErrorBand tested = BandFor(r, "megatron-core", "hopper", 8, true);
  EXPECT_TRUE(tested.validated);
  EXPECT_EQ(tested.basis, "megatron-core MoE, hopper, any scale");
  EXPECT_EQ(tested.runs, 5);
  EXPECT_EQ(BandFor(r, "megatron-core", "hopper", 8, false).runs, 10);  // dense: still its own
  // With MoE runs in the stack, an untested MoE class pools the stack without the caveat.
  EXPECT_EQ(BandFor(r, "megatron-core", "ampere", 8, true).basis, "megatron-core");
}

// The MoE runs of candidate_runs.json are not cross-validated and band no class, but an MoE job
// that no class covers gets a band holding at least their middle 80%: the pooled dense band says
// nothing about the MoE costs they measured (docs/ACCURACY.md, "Error bands").
TEST(ErrorBand, AnUntestedMoeBandReachesTheCandidateMoeRuns) {
  std::vector<BandResidual> r = TwoPublications("hopper");
  const ErrorBand pooled = BandFor(r, "megatron-core", "hopper", 8, true);
  const ErrorBand dense = BandFor(r, "megatron-core", "hopper", 8, false);
  // Pooled: centre 0.1, s = 0.14826, tau = 0.1414, t(0.9, 9) = 1.383: ends 0.1 -/+ 0.291.
  EXPECT_NEAR(std::log(pooled.high_factor), 0.1 + 0.291, 2e-3);
  auto add_candidates = [](std::vector<BandResidual> v, std::initializer_list<double> logs) {
    for (double x : logs) {
      v.push_back(Residual("M", "hopper", 16, std::exp(x)));
      v.back().moe = true;
      v.back().candidate = true;
    }
    return v;
  };
  // Sorted logs; type-7 quantiles: q10 = -0.3 + 0.7 x 0.32 = -0.076, q90 = 0.5 + 0.3 x 0.3 = 0.59.
  const std::vector<BandResidual> with =
      add_candidates(r, {-0.3, 0.02, 0.02, 0.03, 0.04, 0.04, 0.5, 0.8});
  const ErrorBand moe = BandFor(with, "megatron-core", "hopper", 8, true);
  EXPECT_FALSE(moe.validated);
  EXPECT_EQ(moe.runs, 10);
  EXPECT_EQ(moe.basis, "megatron-core (dense models only)");
  EXPECT_EQ(moe.moe_candidate_runs, 8);
  EXPECT_NEAR(std::log(moe.high_factor), 0.59, 1e-9);    // raised to the candidates' q90
  EXPECT_DOUBLE_EQ(moe.low_factor, pooled.low_factor);   // q10 lies inside: unchanged
  EXPECT_NEAR(moe.Factor(0.9), moe.high_factor, 1e-12);  // --confidence ranks by the same end
  EXPECT_EQ(DescribeBand(moe),
            DescribeBand(pooled) +
                "; widened to 8 MoE candidate runs, whose middle 80% ran 0.93-1.80x the "
                "predicted step time");
  // Dense jobs, and the coverage of the published runs, do not see them.
  const ErrorBand dense_with = BandFor(with, "megatron-core", "hopper", 8, false);
  EXPECT_DOUBLE_EQ(dense_with.low_factor, dense.low_factor);
  EXPECT_DOUBLE_EQ(dense_with.high_factor, dense.high_factor);
  EXPECT_EQ(dense_with.moe_candidate_runs, 0);
  EXPECT_EQ(CrossValidatedBandCoverage(with).runs, 10);
  // Fewer than kMinBandRuns candidates widen nothing; nor do candidates a tested MoE class.
  EXPECT_EQ(BandFor(add_candidates(r, {0.5, 0.6, 0.7, 0.8}), "megatron-core", "hopper", 8, true)
                .moe_candidate_runs,
            0);
  std::vector<BandResidual> tested = with;
  for (double x : {0.3, 0.35, 0.25, 0.4, 0.2}) {
    tested.push_back(Residual("C", "hopper", 256, std::exp(x)));
    tested.back().moe = true;
  }
  EXPECT_TRUE(BandFor(tested, "megatron-core", "hopper", 8, true).validated);
  EXPECT_EQ(BandFor(tested, "megatron-core", "hopper", 8, true).moe_candidate_runs, 0);
}

TEST(ErrorBand, ShardedDataParallelismIsItsOwnStack) {
  const nlohmann::json base = {{"model", "llama3-8b"},
                               {"cluster", {{"gpu", "h100-sxm5-80gb"}, {"num_gpus", 8}}},
                               {"training", {{"seq_len", 4096}, {"global_batch_size", 8}}}};
  nlohmann::json fsdp = base;
  fsdp["parallelism"] = {{"dp", 8}, {"zero_stage", 3}};
  nlohmann::json tp = base;
  tp["parallelism"] = {{"dp", 1}, {"tp", 8}};
  EXPECT_EQ(BandStack(ParseTestJob(fsdp)), "megatron-core FSDP/ZeRO-3");
  EXPECT_EQ(BandStack(ParseTestJob(tp)), "megatron-core");
}

TEST(ErrorBand, ResidualsFileRoundTripsAndNamesBadFields) {
  TempDir dir("gpuplan_error_band_");
  std::vector<BandResidual> r = {Residual("A", "hopper", 8, 0.9), Residual("B", "ampere", 64, 1.1)};
  r[1].moe = true;
  const std::string path = (dir.path() / "cv_residuals.json").string();
  ASSERT_TRUE(WriteFileAtomically(path, FormatBandResidualsJson(r)).ok());
  Expected<std::vector<BandResidual>> back = ReadBandResidualsFile(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[1].architecture, "ampere");
  EXPECT_DOUBLE_EQ((*back)[1].step_time_ratio, 1.1);
  EXPECT_FALSE((*back)[0].moe);
  EXPECT_TRUE((*back)[1].moe);

  // One entry's fields after the common ones; the error must name `expected`.
  auto expect_refused = [&](const std::string& fields, const std::string& expected) {
    ASSERT_TRUE(WriteFileAtomically(path, R"({"runs": [{"id": "x", "source": "A", "stack": "s",
                                        "architecture": "a", "num_gpus": 8, )" +
                                              fields + "}]}")
                    .ok());
    Expected<std::vector<BandResidual>> bad = ReadBandResidualsFile(path);
    ASSERT_FALSE(bad.ok()) << fields;
    EXPECT_NE(bad.status().message().find(expected), std::string::npos) << bad.status().message();
  };
  expect_refused(R"("step_time_ratio": -1)", path + ": runs[0]: field 'step_time_ratio'");
  // "moe" is optional (absent: a dense run) but must be a boolean.
  expect_refused(R"("moe": 1, "step_time_ratio": 1)", "field 'moe'");

  ASSERT_TRUE(WriteFileAtomically(path, R"({"runs": []})").ok());
  EXPECT_FALSE(ReadBandResidualsFile(path).ok());

  // A layout-sweep row names its model; it round-trips, must not be empty, and a file of sweep
  // rows alone has nothing to widen an untested class with.
  r[1].sweep_model = "1B";
  ASSERT_TRUE(WriteFileAtomically(path, FormatBandResidualsJson(r)).ok());
  back = ReadBandResidualsFile(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ((*back)[0].sweep_model, "");
  EXPECT_EQ((*back)[1].sweep_model, "1B");
  expect_refused(R"("sweep_model": "", "step_time_ratio": 1)", "runs[0]: field 'sweep_model'");
  expect_refused(R"("sweep_model": "1B", "step_time_ratio": 1)", "no published run");

  // A candidate MoE run round-trips; a candidate must be an MoE run outside the sweep.
  r[1].sweep_model.clear();
  r[1].candidate = true;
  ASSERT_TRUE(WriteFileAtomically(path, FormatBandResidualsJson(r)).ok());
  back = ReadBandResidualsFile(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_FALSE((*back)[0].candidate);
  EXPECT_TRUE((*back)[1].candidate);
  expect_refused(R"("candidate": true, "step_time_ratio": 1)", "runs[0]: field 'candidate'");
  expect_refused(R"("candidate": 1, "moe": true, "step_time_ratio": 1)", "field 'candidate'");
}

// The layout sweep's rows band their own stack (a class of nanotron, hopper) and leave every other
// job's band as the published runs alone make it: neither the spread between publications nor
// the pool of an untested stack counts them.
TEST(ErrorBand, LayoutSweepRowsBandTheirOwnStackOnly) {
  const std::vector<BandResidual> published = TwoPublications("hopper");
  std::vector<BandResidual> with_sweep = published;
  for (double x : {0.3, 0.4, 0.5, 0.6, 0.7, 0.8}) {
    BandResidual r = Residual(kSweepBandSource, "hopper", 128, std::exp(x));
    r.stack = "nanotron";
    r.sweep_model = x < 0.55 ? "1B" : "8B";
    with_sweep.push_back(r);
  }
  for (const char* stack : {"megatron-core", "torchtitan"}) {  // a tested and an untested stack
    const ErrorBand a = BandFor(published, stack, "hopper", 8, false);
    const ErrorBand b = BandFor(with_sweep, stack, "hopper", 8, false);
    EXPECT_EQ(a.basis, b.basis) << stack;
    EXPECT_DOUBLE_EQ(a.low_factor, b.low_factor) << stack;
    EXPECT_DOUBLE_EQ(a.high_factor, b.high_factor) << stack;
  }
  // nanotron: its own class, from one publication, so widened by tau = 0.2 / sqrt(2) as an
  // untested class is; centred on the rows' median log, 0.55.
  const ErrorBand nanotron = BandFor(with_sweep, "nanotron", "hopper", 256, false);
  EXPECT_TRUE(nanotron.validated);
  EXPECT_EQ(nanotron.runs, 6);
  EXPECT_EQ(nanotron.publications, 1);
  EXPECT_EQ(nanotron.basis, "nanotron, hopper, 65-512 GPUs");
  EXPECT_NEAR(nanotron.log_centre, 0.55, 1e-12);
  const double s = 1.4826 * 0.15, tau = 0.2 / std::sqrt(2.0);
  EXPECT_NEAR(nanotron.log_scale_low, std::sqrt(s * s * (1 + 1.0 / 6) + tau * tau), 1e-9);
  // Its description names what the residuals are: rows of the sweep, not published runs.
  EXPECT_EQ(nanotron.sweep_rows, 6);
  EXPECT_EQ(DescribeBand(nanotron).rfind("6 rows of the layout sweep of nanotron, hopper, "
                                         "65-512 GPUs, cross-validated, all from one publication",
                                         0),
            0u)
      << DescribeBand(nanotron);
  // A nanotron MoE job has no class: the untested pool of its stack is the sweep's dense rows.
  const ErrorBand moe = BandFor(with_sweep, "nanotron", "hopper", 256, true);
  EXPECT_EQ(DescribeBand(moe).rfind("WIDE, no published run of this class: widened from 6 rows "
                                    "of the layout sweep of nanotron (dense models only)",
                                    0),
            0u)
      << DescribeBand(moe);
  // A class holding both kinds says so.
  ErrorBand mixed = nanotron;
  mixed.runs = 10;
  EXPECT_EQ(DescribeBand(mixed).rfind("4 published runs and 6 rows of the layout sweep of", 0), 0u)
      << DescribeBand(mixed);

  // Coverage: published runs as before; each sweep model's rows against the other model's.
  const BandCoverage before = CrossValidatedBandCoverage(published);
  const BandCoverage after = CrossValidatedBandCoverage(with_sweep);
  EXPECT_EQ(after.runs, before.runs);
  EXPECT_EQ(after.covered, before.covered);
  ASSERT_EQ(after.sweep_by_model.size(), 2u);
  EXPECT_EQ(after.sweep_by_model[0].first, "1B");
  EXPECT_EQ(after.sweep_by_model[0].second.second, 3);
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

TEST(ErrorBand, StudentTQuantilesMatchTheTables) {
  // Student's t tables (e.g. NIST/SEMATECH e-Handbook, Table 1.4.2.7.2).
  EXPECT_NEAR(StudentTQuantile(0.90, 4), 1.533, 0.005);
  EXPECT_NEAR(StudentTQuantile(0.95, 10), 1.812, 0.005);
  EXPECT_NEAR(StudentTQuantile(0.99, 30), 2.457, 0.008);
  EXPECT_NEAR(StudentTQuantile(0.10, 127), -1.288, 0.002);
  EXPECT_NEAR(StudentTQuantile(0.975, 1e9), 1.959964, 1e-6);  // the normal quantile
  EXPECT_NEAR(StudentTQuantile(0.5, 7), 0, 1e-12);
}

}  // namespace
}  // namespace gpuplan
