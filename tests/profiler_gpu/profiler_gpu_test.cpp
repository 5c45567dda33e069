// The machine backends on a real GPU: plausible numbers, errors as Status values. On a machine
// without a GPU every test skips with the reason, except NoGpu, which checks that reason.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "profiler/backends.h"

namespace gpuplan {
namespace {

// "" when the CUDA runtime sees a GPU, else why it does not.
std::string NoGpuReason() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) return cudaGetErrorString(err);
  return count == 0 ? "the CUDA runtime reports 0 devices" : "";
}

TEST(NoGpu, MakeSystemBackendsSaysNoCudaGpu) {
  if (NoGpuReason().empty()) GTEST_SKIP() << "a CUDA GPU is present";
  Expected<ProfileBackends> backends = MakeSystemBackends(0);
  ASSERT_FALSE(backends.ok());
  EXPECT_EQ(backends.status().kind(), ErrorKind::kUnavailable);
  EXPECT_NE(backends.status().message().find("no CUDA GPU"), std::string::npos)
      << backends.status().message();
}

constexpr double kMiB = 1 << 20;

class ProfilerGpuTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!NoGpuReason().empty()) return;
    Expected<ProfileBackends> made = MakeSystemBackends(0);
    if (made.ok()) {
      backends_ = new ProfileBackends(std::move(*made));
    } else {
      error_ = new std::string(made.status().message());
    }
  }
  // Before exit: NCCL communicators and CUDA objects must go while the runtime is alive.
  static void TearDownTestSuite() {
    delete backends_;
    backends_ = nullptr;
    delete error_;
    error_ = nullptr;
  }
  void SetUp() override {
    const std::string reason = NoGpuReason();
    if (!reason.empty()) GTEST_SKIP() << "no CUDA GPU: " << reason;
    ASSERT_NE(backends_, nullptr) << "MakeSystemBackends(0) failed on a GPU machine: "
                                  << (error_ != nullptr ? *error_ : "");
  }

  static GpuDeviceInfo Device0() {
    Expected<std::vector<GpuDeviceInfo>> devices = backends_->probe->ListDevices();
    EXPECT_TRUE(devices.ok()) << devices.status().message();
    return devices.ok() && !devices->empty() ? devices->front() : GpuDeviceInfo{};
  }

  static double GemmSeconds(Precision p, GemmShape shape) {
    Expected<double> s = backends_->gemm->Seconds(p, shape, TimingPolicy{});
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? *s : 0;
  }

  static ProfileBackends* backends_;
  static std::string* error_;
};

ProfileBackends* ProfilerGpuTest::backends_ = nullptr;
std::string* ProfilerGpuTest::error_ = nullptr;

TEST_F(ProfilerGpuTest, ProbeListsDevicesAndLinks) {
  Expected<std::vector<GpuDeviceInfo>> devices = backends_->probe->ListDevices();
  ASSERT_TRUE(devices.ok()) << devices.status().message();
  ASSERT_GE(devices->size(), 1u);
  for (const GpuDeviceInfo& d : *devices) {
    EXPECT_GT(d.sm_count, 0) << d.name;
    EXPECT_GT(d.memory_bytes, 0) << d.name;
    EXPECT_GT(d.clock_hz, 0) << d.name;
    EXPECT_FALSE(d.pci_bus_id.empty()) << d.name;
  }
  Expected<std::vector<GpuLinkInfo>> links = backends_->probe->ListLinks();
  ASSERT_TRUE(links.ok()) << links.status().message();
  EXPECT_EQ(links->size(), devices->size() * (devices->size() - 1));
}

TEST_F(ProfilerGpuTest, VersionsAreKnown) {
  const SoftwareVersions v = backends_->probe->Versions();
  EXPECT_FALSE(v.cuda_runtime.empty());
  EXPECT_FALSE(v.cuda_driver.empty());
  EXPECT_FALSE(v.nccl.empty());
  EXPECT_FALSE(v.cublas.empty());
  EXPECT_EQ(backends_->collectives->Version(), v.nccl);
}

// Dense BF16 tensor-core FMAs per clock per SM: 1024 on A100 (sm_80; NVIDIA A100 Tensor Core
// GPU Architecture whitepaper, 312 TFLOP/s = 108 SMs x 1.41 GHz x 1024 x 2), 2048 on H100/H200
// (sm_90; NVIDIA H100 Tensor Core GPU Architecture whitepaper, 2x A100 per SM per clock).
// 0 where the test knows no figure.
double Bf16FmaPerClockPerSm(const GpuDeviceInfo& d) {
  if (d.compute_capability_major == 8 && d.compute_capability_minor == 0) return 1024;
  if (d.compute_capability_major == 9 && d.compute_capability_minor == 0) return 2048;
  return 0;
}

TEST_F(ProfilerGpuTest, Bf16GemmThroughputIsPlausible) {
  const GemmShape shape{4096, 4096, 4096, 1};
  const double seconds = GemmSeconds(Precision::kBf16, shape);
  ASSERT_GT(seconds, 0);
  const double flops = 2.0 * 4096 * 4096 * 4096 / seconds;
  EXPECT_GT(flops, 10e12);
  const GpuDeviceInfo d = Device0();
  const double peak = 2 * d.sm_count * d.clock_hz * Bf16FmaPerClockPerSm(d);
  if (peak > 0) {
    EXPECT_LT(flops, peak) << "peak " << peak;
  }
}

TEST_F(ProfilerGpuTest, GemmTimeScalesWithTheCube) {
  const double small = GemmSeconds(Precision::kBf16, {2048, 2048, 2048, 1});
  const double large = GemmSeconds(Precision::kBf16, {4096, 4096, 4096, 1});
  ASSERT_GT(small, 0);
  const double ratio = large / small;  // 8x the work
  EXPECT_GT(ratio, 4);
  EXPECT_LT(ratio, 12);
}

TEST_F(ProfilerGpuTest, EverySupportedPrecisionRuns) {
  for (int i = 0; i < kPrecisionCount; ++i) {
    const auto p = static_cast<Precision>(i);
    if (!backends_->gemm->Supports(p)) continue;
    EXPECT_GT(GemmSeconds(p, {1024, 1024, 1024, 1}), 0) << PrecisionName(p);
  }
}

TEST_F(ProfilerGpuTest, BatchedGemmRuns) {
  EXPECT_GT(GemmSeconds(Precision::kBf16, {512, 512, 512, 8}), 0);
  if (backends_->gemm->Supports(Precision::kFp8)) {
    EXPECT_GT(GemmSeconds(Precision::kFp8, {512, 512, 512, 8}), 0);
  }
}

TEST_F(ProfilerGpuTest, BadRequestsReturnStatus) {
  const TimingPolicy timing;
  Expected<double> s = backends_->gemm->Seconds(Precision::kCount, {64, 64, 64, 1}, timing);
  EXPECT_EQ(s.status().kind(), ErrorKind::kInvalidInput);
  s = backends_->gemm->Seconds(Precision::kBf16, {0, 64, 64, 1}, timing);
  EXPECT_EQ(s.status().kind(), ErrorKind::kInvalidInput);
  if (backends_->gemm->Supports(Precision::kFp8)) {
    s = backends_->gemm->Seconds(Precision::kFp8, {64, 64, 8, 1}, timing);
    EXPECT_EQ(s.status().kind(), ErrorKind::kInvalidInput);
  }
  s = backends_->gemm->Seconds(Precision::kBf16, {1 << 20, 1 << 20, 1 << 20, 1}, timing);
  EXPECT_EQ(s.status().kind(), ErrorKind::kUnavailable) << s.status().message();
  s = backends_->bandwidth->DeviceCopySeconds(0, 0, timing);
  EXPECT_EQ(s.status().kind(), ErrorKind::kInvalidInput);
  s = backends_->bandwidth->PeerCopySeconds(0, 0, kMiB, timing);
  EXPECT_EQ(s.status().kind(), ErrorKind::kInvalidInput);
  const int too_many = backends_->collectives->MaxRanks() + 1;
  s = backends_->collectives->Seconds(Collective::kAllReduce, too_many, kMiB, timing);
  EXPECT_EQ(s.status().kind(), ErrorKind::kInvalidInput);
  s = backends_->collectives->Seconds(Collective::kAllReduce, 0, kMiB, timing);
  EXPECT_EQ(s.status().kind(), ErrorKind::kInvalidInput);
}

TEST_F(ProfilerGpuTest, DeviceCopyBandwidthIsPlausible) {
  const double bytes = 256 * kMiB;
  Expected<double> s = backends_->bandwidth->DeviceCopySeconds(0, bytes, TimingPolicy{});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_GT(2 * bytes / *s, 100e9);  // read + write
}

TEST_F(ProfilerGpuTest, HostCopyBandwidthIsPlausible) {
  const double bytes = 64 * kMiB;
  Expected<double> h2d = backends_->bandwidth->HostToDeviceSeconds(0, bytes, TimingPolicy{});
  ASSERT_TRUE(h2d.ok()) << h2d.status().message();
  EXPECT_GT(bytes / *h2d, 1e9);
  Expected<double> d2h = backends_->bandwidth->DeviceToHostSeconds(0, bytes, TimingPolicy{});
  ASSERT_TRUE(d2h.ok()) << d2h.status().message();
  EXPECT_GT(bytes / *d2h, 1e9);
}

TEST_F(ProfilerGpuTest, PeerCopyFollowsPeerAccess) {
  if (backends_->collectives->MaxRanks() < 2) GTEST_SKIP() << "needs 2 GPUs";
  Expected<std::vector<GpuLinkInfo>> links = backends_->probe->ListLinks();
  ASSERT_TRUE(links.ok()) << links.status().message();
  const GpuLinkInfo& link = links->front();
  Expected<double> s =
      backends_->bandwidth->PeerCopySeconds(link.from, link.to, 64 * kMiB, TimingPolicy{});
  if (link.peer_access) {
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_GT(*s, 0);
  } else {
    EXPECT_EQ(s.status().kind(), ErrorKind::kUnavailable);
  }
}

TEST_F(ProfilerGpuTest, NcclAllReduceRuns) {
  const int ranks = std::min(2, backends_->collectives->MaxRanks());
  Expected<double> s =
      backends_->collectives->Seconds(Collective::kAllReduce, ranks, 64 * kMiB, TimingPolicy{});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_GT(*s, 0);
}

TEST_F(ProfilerGpuTest, EveryCollectiveRunsOnAllGpus) {
  const int ranks = backends_->collectives->MaxRanks();
  for (int i = 0; i < kCollectiveCount; ++i) {
    const auto c = static_cast<Collective>(i);
    Expected<double> s = backends_->collectives->Seconds(c, ranks, kMiB, TimingPolicy{});
    ASSERT_TRUE(s.ok()) << GetCollectiveInfo(c).name << ": " << s.status().message();
    EXPECT_GT(*s, 0) << GetCollectiveInfo(c).name;
  }
}

}  // namespace
}  // namespace gpuplan
