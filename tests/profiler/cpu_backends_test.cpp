// The profiler's CPU backend (profiler/cpu_backends.h): each runner on this host's CPU, and a
// quick CPU profile that calibrates the hardware database's `cpu` device.
#include "profiler/cpu_backends.h"

#include <gtest/gtest.h>

#include <set>

#include "profiler/profile_rates.h"
#include "tests/builtin_db.h"

namespace gpuplan {
namespace {

// One timed call per case: these tests check that the runners run, not how fast.
TimingPolicy OneCall() {
  TimingPolicy t;
  t.warmup_iterations = 0;
  t.min_iterations = 1;
  t.max_iterations = 1;
  t.min_seconds = 0;
  return t;
}

TEST(CpuBackends, TheProbeDescribesOneSingleThreadedRank) {
  ProfileBackends b = MakeCpuBackends();
  Expected<std::vector<GpuDeviceInfo>> devices = b.probe->ListDevices();
  ASSERT_TRUE(devices.ok()) << devices.status().message();
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].sm_count, 1);
  EXPECT_EQ((*devices)[0].name.rfind("CPU rank: ", 0), 0u) << (*devices)[0].name;
  EXPECT_GT((*devices)[0].memory_bytes, 0);
  EXPECT_TRUE(b.probe->ListLinks().ok());
  EXPECT_EQ(b.probe->Versions().cpu_gemm, CpuGemmLibrary());
  EXPECT_EQ(CpuGemmLibrary().rfind("Eigen ", 0), 0u);
  EXPECT_EQ(b.collectives, nullptr);
  EXPECT_NE(b.no_collectives_reason.find("MPI"), std::string::npos);
}

TEST(CpuBackends, GemmsAreFp32AndTakeLongerWhenLarger) {
  ProfileBackends b = MakeCpuBackends();
  EXPECT_TRUE(b.gemm->Supports(Precision::kFp32));
  for (Precision p : {Precision::kBf16, Precision::kFp16, Precision::kFp8, Precision::kTf32}) {
    EXPECT_FALSE(b.gemm->Supports(p));
    EXPECT_FALSE(b.gemm->Seconds(p, {64, 64, 64, 1}, OneCall()).ok());
  }
  TimingPolicy t = OneCall();
  t.min_iterations = 3;  // the median of a few: 64x more work must show
  Expected<double> small = b.gemm->Seconds(Precision::kFp32, {64, 64, 64, 1}, t);
  Expected<double> large = b.gemm->Seconds(Precision::kFp32, {256, 256, 256, 1}, t);
  ASSERT_TRUE(small.ok() && large.ok());
  EXPECT_GT(*small, 0);
  EXPECT_GT(*large, *small);
  EXPECT_FALSE(b.gemm->Seconds(Precision::kFp32, {0, 64, 64, 1}, t).ok());
  // A case beyond what a rank may allocate is refused, not attempted.
  Expected<double> huge = b.gemm->Seconds(Precision::kFp32, {40000, 40000, 40000, 1}, t);
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("more than the CPU backend's"), std::string::npos);
}

// Busy neighbours run while the load lives and stop when it is destroyed; a GEMM measured beside
// them still runs (its speed depends on the host, so it is not asserted).
TEST(CpuBackends, NeighbourLoadRunsBesideAMeasurementAndStops) {
  ProfileBackends b = MakeCpuBackends();
  { const CpuNeighbourLoad none(0); }
  {
    const CpuNeighbourLoad one(1);
    Expected<double> beside = b.gemm->Seconds(Precision::kFp32, {128, 128, 128, 1}, OneCall());
    ASSERT_TRUE(beside.ok()) << beside.status().message();
    EXPECT_GT(*beside, 0);
  }  // joins its thread: a hang here fails the test by its timeout
}

TEST(CpuBackends, EveryKernelOfTheCpuProfileRuns) {
  ProfileBackends b = MakeCpuBackends();
  std::set<KernelKind> kinds;
  for (const KernelCase& c : CpuProfileOptions(true).kernel_cases) {
    SCOPED_TRACE(std::string(GetKernelInfo(c.kind).name));
    EXPECT_EQ(c.dtype, Precision::kFp32);
    Expected<double> t = b.kernels->Seconds(c, OneCall());
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_GT(*t, 0);
    kinds.insert(c.kind);
  }
  EXPECT_EQ(kinds.size(), static_cast<size_t>(kKernelKindCount));
}

TEST(CpuBackends, CopiesRunAndHostLinksDoNotExist) {
  ProfileBackends b = MakeCpuBackends();
  Expected<double> copy = b.bandwidth->DeviceCopySeconds(0, 1 << 20, OneCall());
  ASSERT_TRUE(copy.ok());
  EXPECT_GT(*copy, 0);
  EXPECT_FALSE(b.bandwidth->HostToDeviceSeconds(0, 1 << 20, OneCall()).ok());
  EXPECT_FALSE(b.bandwidth->DeviceToHostSeconds(0, 1 << 20, OneCall()).ok());
  EXPECT_FALSE(b.bandwidth->PeerCopySeconds(0, 1, 1 << 20, OneCall()).ok());
}

TEST(CpuBackends, AQuickProfileCalibratesTheCpuDevice) {
  ProfileOptions options = CpuProfileOptions(true);
  options.timing = OneCall();
  // Keep the GEMMs small: the sanitizer build runs this too.
  std::vector<GemmShape> shapes;
  for (const GemmShape& s : options.gemm_shapes) {
    if (s.m * s.n * s.k <= int64_t{512} * 512 * 512) shapes.push_back(s);
  }
  shapes.push_back({256, 256, 256, 1});
  options.gemm_shapes = shapes;
  ProfileBackends b = MakeCpuBackends();
  Expected<Profile> profile = RunProfile(options, b, BuiltinDb(), nullptr);
  ASSERT_TRUE(profile.ok()) << profile.status().message();
  profile->gpu_id = kCpuDeviceId;
  EXPECT_EQ(profile->gemm.size(), shapes.size());
  EXPECT_EQ(profile->kernels.size(), options.kernel_cases.size());
  bool collectives_noted = false;
  for (const std::string& s : profile->skipped) {
    collectives_noted = collectives_noted || s.rfind("collectives: the CPU backend", 0) == 0;
  }
  EXPECT_TRUE(collectives_noted);

  Expected<ProfileCalibration> cal =
      CalibrateFromProfile(*profile, BuiltinDb(), "cpu.json", ProfileUse::kTrainingStacks);
  ASSERT_TRUE(cal.ok()) << cal.status().message();
  EXPECT_EQ(cal->rates.gpu_id, "cpu");
  EXPECT_GT(cal->rates.gemm_flops_per_s[static_cast<size_t>(Precision::kFp32)], 0);
  EXPECT_GT(cal->rates.memory_bytes_per_s, 0);
  // fp32 attention samples stand in for 16-bit ones on a device without 16-bit math.
  EXPECT_GT(cal->rates.attention_forward_flops_per_s, 0);
  EXPECT_GT(cal->rates.attention_backward_flops_per_s, 0);
  EXPECT_TRUE(cal->warnings.empty());
}

}  // namespace
}  // namespace gpuplan
