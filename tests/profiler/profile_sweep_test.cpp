// The sweep over fake backends, the profile -> rates conversion, and how a profile changes the
// prediction (docs/PROFILE.md, "How a profile changes the prediction").
#include <gtest/gtest.h>

#include <cmath>

#include "profiler/fit.h"
#include "profiler/profile_rates.h"
#include "profiler/sweep.h"
#include "simulator/cost_model.h"
#include "simulator/gemm_time.h"
#include "simulator/job_spec_json.h"
#include "simulator/presets.h"
#include "simulator/topology.h"
#include "tests/builtin_db.h"
#include "tests/model/contains.h"

namespace gpuplan {
namespace {

constexpr double kMemoryBw = 3.0e12;
/// Attention rates at kAttentionReferenceTokens; the fake's kernels follow AttentionLengthFactor
/// at other lengths, as the cost model assumes of a GPU's fused kernels.
constexpr double kAttentionFwd = 400e12, kAttentionBwd = 300e12;
constexpr double kAlpha = 20e-6, kBusBw = 350e9;

DeviceRates TruthRates(Precision p) {
  DeviceRates r;
  r.matmul_flops_per_s = p == Precision::kTf32 ? 380e12 : 700e12;
  r.memory_bytes_per_s = kMemoryBw;
  r.sm_count = 132;
  r.kernel_overhead_s = 3e-6;
  r.gemm_fill_depth = 32;
  r.activation_bytes = PrecisionBytes(p);
  return r;
}

class FakeProbe : public GpuProbe {
 public:
  Expected<std::vector<GpuDeviceInfo>> ListDevices() override {
    GpuDeviceInfo d;
    d.name = "NVIDIA H100 80GB HBM3";
    d.sm_count = 132;
    d.compute_capability_major = 9;
    d.memory_bytes = 85.0e9;
    GpuDeviceInfo e = d;
    e.index = 1;
    return std::vector<GpuDeviceInfo>{d, e};
  }
  std::string VersionString() override { return "fake"; }
  Expected<std::vector<GpuLinkInfo>> ListLinks() override {
    return std::vector<GpuLinkInfo>{{0, 1, true, 0, true, 18}, {1, 0, true, 0, true, 18}};
  }
  SoftwareVersions Versions() override {
    return {"13.0", "13.0", "580.1", "2.27.7", "13.0.0", "", ""};
  }
};

class FakeGemm : public GemmRunner {
 public:
  bool Supports(Precision p) const override { return p != Precision::kFp8; }
  Expected<double> Seconds(Precision p, const GemmShape& s, const TimingPolicy&) override {
    return GemmSeconds(TruthRates(p), static_cast<double>(s.m), static_cast<double>(s.n),
                       static_cast<double>(s.k), static_cast<double>(s.batch));
  }
};

class FakeKernels : public KernelRunner {
 public:
  Expected<double> Seconds(const KernelCase& c, const TimingPolicy&) override {
    if (c.kind == KernelKind::kAdam) return Status::Unavailable("out of memory: 5.6 GB");
    const KernelInfo& info = GetKernelInfo(c.kind);
    const double length = AttentionLengthFactor(static_cast<double>(c.seq));
    if (c.kind == KernelKind::kAttentionForward) return info.flops(c) / (kAttentionFwd * length);
    if (c.kind == KernelKind::kAttentionBackward) return info.flops(c) / (kAttentionBwd * length);
    return info.bytes(c) / kMemoryBw;
  }
};

class FakeBandwidth : public BandwidthRunner {
 public:
  Expected<double> DeviceCopySeconds(int, double bytes, const TimingPolicy&) override {
    return 2 * bytes / kMemoryBw;
  }
  Expected<double> HostToDeviceSeconds(int, double bytes, const TimingPolicy&) override {
    return bytes / 55e9;
  }
  Expected<double> DeviceToHostSeconds(int, double bytes, const TimingPolicy&) override {
    return bytes / 50e9;
  }
  Expected<double> PeerCopySeconds(int, int, double bytes, const TimingPolicy&) override {
    return bytes / 390e9;
  }
};

class FakeCollectives : public CollectiveRunner {
 public:
  int MaxRanks() const override { return 2; }
  std::string Version() const override { return "2.27.7"; }
  double ElementBytes() const override { return 2; }
  bool Runs(Collective) const override { return true; }
  Expected<double> Seconds(Collective c, int ranks, double bytes, const TimingPolicy&) override {
    return kAlpha + bytes * GetCollectiveInfo(c).bus_factor(ranks) / kBusBw;
  }
};

class CountingProgress : public ProfileProgress {
 public:
  void Update(std::string_view, int64_t done, int64_t of) override {
    EXPECT_EQ(done, last + 1);
    last = done;
    total = of;
  }
  int64_t last = 0, total = 0;
};

ProfileBackends FakeBackends() {
  ProfileBackends b;
  b.probe = std::make_unique<FakeProbe>();
  b.gemm = std::make_unique<FakeGemm>();
  b.kernels = std::make_unique<FakeKernels>();
  b.bandwidth = std::make_unique<FakeBandwidth>();
  b.collectives = std::make_unique<FakeCollectives>();
  return b;
}

Profile QuickFakeProfile() {
  ProfileBackends b = FakeBackends();
  CountingProgress progress;
  Expected<Profile> p = RunProfile(DefaultProfileOptions(true), b, BuiltinDb(), &progress);
  EXPECT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(progress.last, progress.total);
  return p.ok() ? *p : Profile{};
}

TEST(ProfileSweep, MeasuresEveryPartAndNotesWhatItSkipped) {
  const Profile p = QuickFakeProfile();
  EXPECT_EQ(p.gpu_id, "h100-sxm5-80gb");
  EXPECT_EQ(p.devices.size(), 2u);
  EXPECT_EQ(p.links.size(), 2u);
  EXPECT_EQ(p.versions.nccl, "2.27.7");
  EXPECT_TRUE(p.quick);
  // bf16, fp16, tf32 over the quick grid; fp8 unsupported by the fake.
  EXPECT_EQ(p.gemm.size(), 3 * DefaultGemmShapes(true).size());
  bool fp8_noted = false, adam_noted = false;
  for (const std::string& s : p.skipped) {
    fp8_noted = fp8_noted || Contains(s, "fp8 GEMM: not supported");
    adam_noted = adam_noted || Contains(s, "adam: out of memory");
  }
  EXPECT_TRUE(fp8_noted);
  EXPECT_TRUE(adam_noted);
  EXPECT_EQ(p.kernels.size(), DefaultKernelCases(true).size() - 1);
  // device copy, H2D, D2H (one size when quick) and the two peer directions.
  EXPECT_EQ(p.bandwidth.size(), 5u);
  // 8 B .. 512 MiB by x4 = 14 sizes, for each of the 6 collectives over 2 ranks.
  EXPECT_EQ(p.collectives.size(), 6u * 14u);
  for (const CollectiveSample& c : p.collectives) {
    EXPECT_EQ(c.ranks, 2);
    EXPECT_EQ(std::fmod(c.bytes, 4.0), 0.0) << "whole bf16 elements per rank";
  }
}

// A runner of wider elements that does not run every collective (the CPU backend's MPI ranks:
// 64-bit integers, no broadcast): sizes are whole elements per rank and the rest is left out.
class FakeMpiCollectives : public FakeCollectives {
 public:
  double ElementBytes() const override { return 8; }
  bool Runs(Collective c) const override { return c != Collective::kBroadcast; }
};

TEST(ProfileSweep, CollectivesFollowTheRunnersElementsAndKinds) {
  ProfileBackends b;
  b.probe = std::make_unique<FakeProbe>();
  b.collectives = std::make_unique<FakeMpiCollectives>();
  CountingProgress progress;
  Expected<Profile> p = RunProfile(DefaultProfileOptions(true), b, BuiltinDb(), &progress);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(progress.last, progress.total);
  // 16 B (one element per rank, the 8 B request rounded up) .. 512 MiB by x4: 14 sizes, for
  // the 5 collectives it runs.
  EXPECT_EQ(p->collectives.size(), 5u * 14u);
  for (const CollectiveSample& c : p->collectives) {
    EXPECT_NE(c.kind, Collective::kBroadcast);
    EXPECT_EQ(std::fmod(c.bytes, 16.0), 0.0) << "whole 8-byte elements per rank";
  }
}

TEST(ProfileSweep, CalibrationRecoversWhatTheFakesMeasure) {
  const Profile p = QuickFakeProfile();
  Expected<ProfileCalibration> cal =
      CalibrateFromProfile(p, BuiltinDb(), "fake", ProfileUse::kGpuplanExecutor);
  ASSERT_TRUE(cal.ok()) << cal.status().message();
  const MeasuredRates& m = cal->rates;
  EXPECT_EQ(m.gpu_id, "h100-sxm5-80gb");
  EXPECT_NEAR(m.gemm_flops_per_s[static_cast<int>(Precision::kBf16)] / 700e12, 1.0, 1e-6);
  EXPECT_NEAR(m.gemm_flops_per_s[static_cast<int>(Precision::kTf32)] / 380e12, 1.0, 1e-6);
  EXPECT_EQ(m.gemm_flops_per_s[static_cast<int>(Precision::kFp8)], 0.0);
  EXPECT_NEAR(m.gemm_fill_depth, 32, 1e-3);
  EXPECT_NEAR(m.kernel_overhead_s, 3e-6, 1e-10);
  EXPECT_NEAR(m.memory_bytes_per_s / kMemoryBw, 1.0, 1e-9);
  EXPECT_NEAR(m.attention_forward_flops_per_s / kAttentionFwd, 1.0, 1e-9);
  EXPECT_NEAR(m.attention_backward_flops_per_s / kAttentionBwd, 1.0, 1e-9);
  ASSERT_EQ(m.collectives.size(), 6u);
  for (const CollectiveFit& f : m.collectives) {
    EXPECT_NEAR(f.alpha_s, kAlpha, 1e-12);
    EXPECT_NEAR(f.busbw_bytes_per_s / kBusBw, 1.0, 1e-9);
  }
  int from_profile = 0;
  for (const FigureSource& s : cal->sources) from_profile += s.from_profile ? 1 : 0;
  EXPECT_EQ(from_profile, 1 + 3 + 1 + 6);  // memory, 3 GEMM precisions, attention, collectives
  const std::string text = FormatFigureSources(*cal);
  EXPECT_TRUE(Contains(text, "GEMM fp8          datasheet"));
  EXPECT_TRUE(Contains(text, "all_reduce x2     profile"));
}

// The profile's attention samples time gpuplan's kernels/, which the executor runs (validate,
// calibrate); a training stack on a GPU runs FlashAttention or cuDNN, so plan and simulate keep
// the datasheet's reference kernel and say why, quoting the measured rates. Everything else is
// the same for both uses.
TEST(ProfileSweep, AttentionSamplesCalibrateTheExecutorNotTheStacks) {
  const Profile p = QuickFakeProfile();
  Expected<ProfileCalibration> stacks =
      CalibrateFromProfile(p, BuiltinDb(), "fake", ProfileUse::kTrainingStacks);
  Expected<ProfileCalibration> executor =
      CalibrateFromProfile(p, BuiltinDb(), "fake", ProfileUse::kGpuplanExecutor);
  ASSERT_TRUE(stacks.ok() && executor.ok());
  EXPECT_EQ(stacks->rates.attention_forward_flops_per_s, 0.0);
  EXPECT_EQ(stacks->rates.attention_backward_flops_per_s, 0.0);
  EXPECT_GT(executor->rates.attention_forward_flops_per_s, 0.0);
  EXPECT_EQ(stacks->rates.gemm_flops_per_s, executor->rates.gemm_flops_per_s);
  EXPECT_EQ(stacks->rates.memory_bytes_per_s, executor->rates.memory_bytes_per_s);
  const std::string text = FormatFigureSources(*stacks);
  EXPECT_TRUE(Contains(text, "attention         datasheet")) << text;
  EXPECT_TRUE(Contains(text, "not the profile's attention kernels")) << text;
  // The job's attention rate under the stacks' calibration is the datasheet's.
  const GpuSpec& h100 = *BuiltinDb().FindGpu("h100-sxm5-80gb");
  EXPECT_EQ(CalibratedRates(h100, Precision::kBf16, &stacks->rates).attention_flops_per_s,
            DatasheetRates(h100, Precision::kBf16).attention_flops_per_s);
}

TEST(ProfileSweep, ProfileWithoutKnownGpuIsRejectedWithTheDeviceName) {
  Profile p = QuickFakeProfile();
  p.gpu_id.clear();
  Expected<ProfileCalibration> cal =
      CalibrateFromProfile(p, BuiltinDb(), "p.json", ProfileUse::kTrainingStacks);
  ASSERT_FALSE(cal.ok());
  EXPECT_TRUE(Contains(cal.status().message(), "NVIDIA H100 80GB HBM3"));
  EXPECT_TRUE(Contains(cal.status().message(), "gpu_id"));
  p.gpu_id = "h900";
  EXPECT_TRUE(Contains(CalibrateFromProfile(p, BuiltinDb(), "p.json", ProfileUse::kTrainingStacks)
                           .status()
                           .message(),
                       "h900"));
}

TEST(ProfileSweep, MatchesDeviceNamesToTheHardwareDb) {
  struct Case {
    const char* name;
    int sms;
    double bytes;
    const char* id;
  };
  const Case cases[] = {
      {"NVIDIA H100 80GB HBM3", 132, 85.0e9, "h100-sxm5-80gb"},
      {"NVIDIA H100 PCIe", 114, 85.0e9, "h100-pcie-80gb"},
      {"NVIDIA H100 NVL", 132, 100.5e9, "h100-nvl-94gb"},
      {"NVIDIA A100-SXM4-80GB", 108, 85.2e9, "a100-sxm4-80gb"},
      {"NVIDIA A100 80GB PCIe", 108, 85.2e9, "a100-pcie-80gb"},
      {"NVIDIA A100-SXM4-40GB", 108, 42.5e9, "a100-sxm4-40gb"},
      {"NVIDIA H200", 132, 143.8e9, "h200-sxm-141gb"},
      {"NVIDIA H200 NVL", 132, 143.8e9, "h200-nvl-141gb"},
      {"NVIDIA GB200", 148, 189.5e9, "gb200"},
      {"NVIDIA B200", 148, 191.5e9, "b200"},
      {"NVIDIA GeForce RTX 4090", 128, 25.3e9, "rtx-4090"},
      {"NVIDIA Tesla X1", 80, 32e9, ""},  // V100 memory and SMs, other name: no match
  };
  for (const Case& c : cases) {
    GpuDeviceInfo d;
    d.name = c.name;
    d.sm_count = c.sms;
    d.memory_bytes = c.bytes;
    EXPECT_EQ(MatchGpuId(d, BuiltinDb()), c.id) << c.name;
  }
}

TEST(ProfileSweep, GridsFollowNcclTestsAndTheModel) {
  const std::vector<double> sizes = CollectiveSizes(8, 1 << 30, 2);
  EXPECT_EQ(sizes.size(), 28u);  // 8 B .. 1 GiB, nccl-tests -b 8 -e 1G -f 2
  EXPECT_EQ(sizes.back(), 1 << 30);
  EXPECT_EQ(CollectiveGroupSizes(8), (std::vector<int>{2, 4, 8}));
  EXPECT_EQ(CollectiveGroupSizes(6), (std::vector<int>{2, 4, 6}));
  EXPECT_EQ(CollectiveGroupSizes(1), (std::vector<int>{1}));
  Expected<ModelSpec> llama = FindModelPreset("llama3-8b");
  ASSERT_TRUE(llama.ok());
  const std::vector<GemmShape> shapes = ModelGemmShapes(*llama, 2, 4096);
  ASSERT_EQ(shapes.size(), 5u);
  EXPECT_EQ(shapes[0].n, (4096 + 2 * 1024) / 2);  // QKV with 8 KV heads of 128, TP 2
  EXPECT_EQ(shapes[2].n, 2 * 14336 / 2);          // gate + up
  EXPECT_EQ(shapes[3].k, 14336 / 2);
  EXPECT_EQ(shapes[4].n, 128256 / 2);
}

// The documented effect of a profile on the prediction (docs/PROFILE.md).
TEST(ProfileEffect, ReplacesExactlyTheMeasuredFigures) {
  const GpuSpec& gpu = *BuiltinDb().FindGpu("h100-sxm5-80gb");
  const DeviceRates sheet = DatasheetRates(gpu, Precision::kBf16);
  MeasuredRates m;
  m.gpu_id = gpu.id;
  m.gemm_flops_per_s[static_cast<int>(Precision::kBf16)] = 600e12;
  m.gemm_fill_depth = 0;
  m.memory_bytes_per_s = 2.9e12;
  const DeviceRates r = CalibratedRates(gpu, Precision::kBf16, &m);
  EXPECT_DOUBLE_EQ(r.matmul_flops_per_s, 600e12 * kSustainedGemmFraction);
  EXPECT_EQ(r.gemm_fill_depth, 0.0);
  EXPECT_DOUBLE_EQ(r.memory_bytes_per_s, 2.9e12);
  EXPECT_DOUBLE_EQ(r.attention_flops_per_s, sheet.attention_flops_per_s);  // not measured
  EXPECT_DOUBLE_EQ(r.kernel_overhead_s, sheet.kernel_overhead_s);          // not measured
  EXPECT_EQ(r.measured, &m);
  // Other precisions and other GPUs keep the datasheet.
  EXPECT_DOUBLE_EQ(CalibratedRates(gpu, Precision::kFp8, &m).matmul_flops_per_s,
                   DatasheetRates(gpu, Precision::kFp8).matmul_flops_per_s);
  const GpuSpec& a100 = *BuiltinDb().FindGpu("a100-sxm4-80gb");
  EXPECT_EQ(CalibratedRates(a100, Precision::kBf16, &m).measured, nullptr);
}

TEST(ProfileEffect, CollectivesInsideANodeUseTheFit) {
  const GpuSpec& gpu = *BuiltinDb().FindGpu("h100-sxm5-80gb");
  const NetworkSpec& net = *BuiltinDb().FindNetwork("ib-ndr-400");
  MeasuredRates m;
  m.gpu_id = gpu.id;
  m.collectives = {{Collective::kAllReduce, 8, 30e-6, 400e9, 0, 10, {}},
                   {Collective::kSendRecv, 2, 10e-6, 300e9, 0, 10, {}}};
  const ClusterLinks links = ResolveLinks(gpu, net, 8, &m);
  const GroupLink tp8 = PlaceGroup(links, 8, 1);
  const double bytes = 64e6;
  EXPECT_DOUBLE_EQ(CollectiveSeconds(Collective::kAllReduce, bytes, tp8),
                   30e-6 + bytes * 2.0 * 7.0 / 8.0 / 400e9);
  // Not measured: all-gather keeps the datasheet model.
  GroupLink sheet8 = tp8;
  sheet8.measured = nullptr;
  EXPECT_DOUBLE_EQ(CollectiveSeconds(Collective::kAllGather, bytes, tp8),
                   CollectiveSeconds(Collective::kAllGather, bytes, sheet8));
  // A hop inside the node uses the 2-rank sendrecv fit.
  EXPECT_DOUBLE_EQ(CollectiveSeconds(Collective::kSendRecv, bytes, PlaceGroup(links, 2, 1)),
                   10e-6 + bytes / 300e9);
  // DP over 4 nodes x 8: the node-local part's measured busbw bounds the intra-node bandwidth.
  const GroupLink dp32 = PlaceGroup(links, 32, 1);
  GroupLink dp32_sheet = dp32;
  dp32_sheet.measured = nullptr;
  dp32_sheet.intra_bytes_per_s = 400e9;
  EXPECT_DOUBLE_EQ(CollectiveSeconds(Collective::kAllReduce, bytes, dp32),
                   CollectiveSeconds(Collective::kAllReduce, bytes, dp32_sheet));
}

// Between its smallest and largest measured sizes a collective takes its measured table,
// interpolated in log(size) and log(time); outside it the fitted line. A CPU's shared-memory
// all-reduce slows down once its buffers leave the caches, which one line through every size
// does not follow.
TEST(ProfileEffect, MeasuredCollectivesInterpolateTheirTable) {
  std::vector<CollectiveSample> samples;
  // 1 us + size / 2 GB/s up to 8 MiB, then half the rate (the caches left behind).
  for (double bytes = 1024; bytes <= 64.0 * 1024 * 1024; bytes *= 4) {
    const double rate = bytes <= 8.0 * 1024 * 1024 ? 2e9 : 1e9;
    samples.push_back({Collective::kAllReduce, 2, bytes, 1e-6 + bytes / rate});
  }
  Expected<CollectiveFit> fit = FitCollective(samples);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  ASSERT_EQ(fit->table.size(), samples.size());
  // At a measured size: the measurement.
  EXPECT_DOUBLE_EQ(fit->Seconds(16.0 * 1024 * 1024), samples[7].seconds);
  // Between two: the geometric mean at the geometric mean of the sizes.
  const double lo = 4.0 * 1024 * 1024, hi = 16.0 * 1024 * 1024;
  EXPECT_NEAR(fit->Seconds(std::sqrt(lo * hi)), std::sqrt(samples[6].seconds * samples[7].seconds),
              1e-12);
  // 28 MiB: within 2% of the slow regime's 1 us + size / 1 GB/s; the line misses it by more.
  const double b = 28.0 * 1024 * 1024, truth = 1e-6 + b / 1e9;
  EXPECT_NEAR(fit->Seconds(b) / truth, 1.0, 0.02);
  const double line = fit->alpha_s + b * 2.0 * 0.5 / fit->busbw_bytes_per_s;
  EXPECT_GT(std::abs(line / truth - 1.0), 0.05);
  // Beyond the table: the line.
  EXPECT_DOUBLE_EQ(fit->Seconds(1e9), fit->alpha_s + 1e9 * 2.0 * 0.5 / fit->busbw_bytes_per_s);
  EXPECT_DOUBLE_EQ(fit->Seconds(100), fit->alpha_s + 100 * 2.0 * 0.5 / fit->busbw_bytes_per_s);
}

TEST(ProfileEffect, SlowerMeasuredGemmsSlowTheStep) {
  const HardwareDb& db = BuiltinDb();
  const GpuSpec& gpu = *db.FindGpu("h100-sxm5-80gb");
  const NetworkSpec& net = *db.FindNetwork("ib-ndr-400");
  JobSpec job;
  job.model = *FindModelPreset("llama3-8b");
  job.cluster.gpu = gpu.id;
  job.cluster.num_gpus = 8;
  job.cluster.gpus_per_node = 8;
  job.cluster.inter_node = net.id;
  job.training.seq_len = 4096;
  job.training.global_batch_size = 64;
  job.parallel.tp = 2;
  job.parallel.dp = 4;
  ASSERT_TRUE(ValidateJob(job, db).ok());
  const StepResult sheet = EvaluateStep(job, gpu, net);
  MeasuredRates m;
  m.gpu_id = gpu.id;
  const double datasheet_best = gpu.PeakFlops(Precision::kBf16) * gpu.gemm_efficiency;
  m.gemm_flops_per_s[static_cast<int>(Precision::kBf16)] = datasheet_best;
  m.gemm_fill_depth = kGemmFillDepth;
  // Same figures as the datasheet: same prediction.
  EXPECT_NEAR(EvaluateStep(job, gpu, net, &m).step_time_s / sheet.step_time_s, 1.0, 1e-12);
  // Half the GEMM rate: the step grows, by less than 2x (attention keeps its datasheet rate,
  // memory-bound kernels and communication do not change).
  m.gemm_flops_per_s[static_cast<int>(Precision::kBf16)] = datasheet_best / 2;
  const double slower = EvaluateStep(job, gpu, net, &m).step_time_s;
  EXPECT_GT(slower, 1.3 * sheet.step_time_s);
  EXPECT_LT(slower, 2.0 * sheet.step_time_s);
}

}  // namespace
}  // namespace gpuplan
