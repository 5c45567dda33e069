// Fits: exact recovery of known parameters, and the alpha-beta fit and the nccl-tests printer on
// recorded nccl-tests output (hardware-db/calibration/collectives.json).
#include <gtest/gtest.h>

#include <cmath>

#include "common/json_reader.h"
#include "hardware-db/hardware_db.h"
#include "profiler/fit.h"
#include "profiler/nccl_tests_format.h"
#include "tests/model/contains.h"

namespace gpuplan {
namespace {

std::vector<CollectiveSample> AlphaBetaSamples(Collective c, int ranks, double alpha,
                                               double busbw) {
  std::vector<CollectiveSample> s;
  for (double bytes = 8; bytes <= 1 << 30; bytes *= 4) {
    s.push_back({c, ranks, bytes, alpha + bytes * GetCollectiveInfo(c).bus_factor(ranks) / busbw});
  }
  return s;
}

TEST(CollectiveFit, RecoversAlphaAndBusBandwidth) {
  for (Collective c : {Collective::kAllReduce, Collective::kAllGather, Collective::kAllToAll}) {
    const auto samples = AlphaBetaSamples(c, 8, 25e-6, 360e9);
    Expected<CollectiveFit> f = FitCollective(samples);
    ASSERT_TRUE(f.ok()) << f.status().message();
    EXPECT_NEAR(f->alpha_s, 25e-6, 1e-12);
    EXPECT_NEAR(f->busbw_bytes_per_s / 360e9, 1.0, 1e-9);
    EXPECT_LT(f->rms_relative_error, 1e-9);
    EXPECT_EQ(f->samples, static_cast<int>(samples.size()));
  }
}

TEST(CollectiveFit, NegativeLatencyIsRefittedAtZero) {
  // Times proportional to size, then slightly faster for small sizes than a line through 0:
  // the unconstrained intercept is negative, the fit keeps alpha = 0.
  std::vector<CollectiveSample> s = {{Collective::kAllReduce, 2, 1e6, 1e-5},
                                     {Collective::kAllReduce, 2, 1e8, 1.2e-3}};
  Expected<CollectiveFit> f = FitCollective(s);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->alpha_s, 0.0);
  EXPECT_GT(f->busbw_bytes_per_s, 0.0);
}

TEST(CollectiveFit, RejectsMixedGroupsAndSingleSizes) {
  std::vector<CollectiveSample> mixed = {{Collective::kAllReduce, 2, 1e6, 1e-5},
                                         {Collective::kAllReduce, 4, 1e7, 1e-4}};
  EXPECT_TRUE(Contains(FitCollective(mixed).status().message(), "mix"));
  std::vector<CollectiveSample> one = {{Collective::kAllGather, 2, 1e6, 1e-5},
                                       {Collective::kAllGather, 2, 1e6, 1.1e-5}};
  EXPECT_TRUE(Contains(FitCollective(one).status().message(), "two message sizes"));
  // FitCollectives skips what cannot be fitted and 1-rank groups.
  std::vector<CollectiveSample> all = AlphaBetaSamples(Collective::kBroadcast, 4, 1e-5, 1e11);
  all.push_back({Collective::kAllReduce, 1, 1e6, 1e-5});
  all.push_back({Collective::kAllReduce, 1, 1e7, 1e-4});
  const std::vector<CollectiveFit> fits = FitCollectives(all);
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_EQ(fits[0].kind, Collective::kBroadcast);
  EXPECT_EQ(fits[0].ranks, 4);
}

// Samples made by GemmSeconds itself at known parameters: the fit must give them back.
TEST(GemmFit, RecoversTheModelItWasMadeWith) {
  DeviceRates truth;
  truth.matmul_flops_per_s = 750e12;
  truth.memory_bytes_per_s = 3e12;
  truth.sm_count = 132;
  truth.kernel_overhead_s = 4e-6;
  truth.gemm_fill_depth = 48;
  truth.activation_bytes = 2;
  std::vector<GemmSample> samples;
  for (int64_t m : {2048, 4096, 8192})
    for (int64_t k : {256, 1024, 4096, 8192})
      samples.push_back({Precision::kBf16,
                         {m, 4096, k, 1},
                         GemmSeconds(truth, static_cast<double>(m), 4096, static_cast<double>(k))});
  Expected<GemmFit> f = FitGemm(samples, Precision::kBf16, 132, 3e12);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_NEAR(f->flops_per_s / 750e12, 1.0, 1e-6);
  EXPECT_NEAR(f->fill_depth, 48, 1e-3);
  EXPECT_NEAR(f->overhead_s, 4e-6, 1e-10);
  EXPECT_LT(f->rms_relative_error, 1e-6);
  // The rates of the fit reproduce every sample.
  const DeviceRates r = GemmFitRates(*f, 132, 3e12);
  for (const GemmSample& s : samples) {
    EXPECT_NEAR(GemmSeconds(r, static_cast<double>(s.shape.m), static_cast<double>(s.shape.n),
                            static_cast<double>(s.shape.k)) /
                    s.seconds,
                1.0, 1e-6);
  }
}

TEST(GemmFit, LeavesMemoryBoundShapesOutAndNeedsTwoSamples) {
  std::vector<GemmSample> samples = {
      {Precision::kBf16, {4096, 4096, 4096, 1}, 2.0 * 4096.0 * 4096 * 4096 / 700e12},
      {Precision::kBf16, {8192, 8192, 8192, 1}, 2.0 * 8192.0 * 8192 * 8192 / 720e12},
      // m = 1 GEMV: 16M elements read in 12 us at 3 TB/s: memory-bound.
      {Precision::kBf16, {1, 4096, 4096, 1}, 12e-6},
      {Precision::kFp16, {4096, 4096, 4096, 1}, 2e-4}};
  Expected<GemmFit> f = FitGemm(samples, Precision::kBf16, 132, 3e12);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->samples, 2);
  EXPECT_EQ(f->excluded_memory_bound, 1);
  Expected<GemmFit> fp16 = FitGemm(samples, Precision::kFp16, 132, 3e12);
  EXPECT_FALSE(fp16.ok());
  EXPECT_TRUE(Contains(fp16.status().message(), "at least two"));
}

// Recorded nccl-tests output: 8 x H200 all_reduce (collectives.json). Time = size / algbw.
std::vector<CollectiveSample> RecordedAllReduce(const std::string& gpu,
                                                std::vector<double>* busbw) {
  Expected<nlohmann::json> doc = ReadJsonFile(BuiltinCalibrationDir() + "/collectives.json");
  EXPECT_TRUE(doc.ok()) << doc.status().message();
  std::vector<CollectiveSample> out;
  if (!doc.ok()) return out;
  for (const nlohmann::json& e : (*doc)["collectives"]) {
    if (!e["gpu_type"].is_string() || e["gpu_type"].get<std::string>() != gpu) continue;
    if (e["collective"] != "all_reduce" || e["num_gpus"] != 8 || e["num_nodes"] != 1) continue;
    if (!e["message_size_bytes"].is_number() || !e["algbw_GBps"].is_number()) continue;
    const double bytes = e["message_size_bytes"].get<double>();
    const double algbw = e["algbw_GBps"].get<double>() * 1e9;
    if (algbw <= 0) continue;
    out.push_back({Collective::kAllReduce, 8, bytes, bytes / algbw});
    busbw->push_back(e["busbw_GBps"].get<double>());
  }
  return out;
}

TEST(NcclTestsFormat, RecordedRowsPrintWithTheirPublishedBusBandwidth) {
  std::vector<double> busbw;
  const std::vector<CollectiveSample> rows = RecordedAllReduce("H200 SXM", &busbw);
  ASSERT_GE(rows.size(), 10u);
  const std::string table = FormatNcclTests(rows);
  EXPECT_TRUE(Contains(table,
                       "#       size         count      type   redop    root     time   "
                       "algbw   busbw"));
  EXPECT_TRUE(Contains(table, "# all_reduce, 8 ranks"));
  EXPECT_TRUE(Contains(table, "# Avg bus bandwidth    :"));
  // busbw = algbw * 2(n-1)/n reproduces the published busbw column (to its 2-decimal rounding).
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_NEAR(rows[i].BusBytesPerSecond() / 1e9, busbw[i], 0.01 + 0.005 * busbw[i]) << i;
  }
  std::printf("%s", table.c_str());
}

TEST(CollectiveFit, RecordedH200AllReduceFitsItsLargeMessageBandwidth) {
  std::vector<double> busbw;
  const std::vector<CollectiveSample> rows = RecordedAllReduce("H200 SXM", &busbw);
  ASSERT_GE(rows.size(), 10u);
  Expected<CollectiveFit> f = FitCollective(rows);
  ASSERT_TRUE(f.ok()) << f.status().message();
  const double best = *std::max_element(busbw.begin(), busbw.end());
  std::printf(
      "H200 x8 all_reduce: alpha %.1f us, busbw %.1f GB/s (best measured %.1f), "
      "rms error %.1f%% over %d sizes\n",
      f->alpha_s * 1e6, f->busbw_bytes_per_s / 1e9, best, 100 * f->rms_relative_error, f->samples);
  // The fitted bandwidth is the large-message plateau within 15%, the latency a few tens of us
  // (NVLink/NVSwitch all-reduce latency, nccl-tests small sizes).
  EXPECT_NEAR(f->busbw_bytes_per_s / 1e9 / best, 1.0, 0.15);
  EXPECT_GT(f->alpha_s, 1e-6);
  EXPECT_LT(f->alpha_s, 100e-6);
}

}  // namespace
}  // namespace gpuplan
