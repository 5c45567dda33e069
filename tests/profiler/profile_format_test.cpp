// The profile JSON: round trip, and bad files rejected with the file, entry and field named.
#include <gtest/gtest.h>

#include "profiler/profile.h"
#include "tests/model/contains.h"
#include "tests/temp_dir.h"

namespace gpuplan {
namespace {

Profile SampleProfile() {
  Profile p;
  p.created_utc = "2026-11-21T10:00:00Z";
  p.tool = "gpuplan 0.1.0";
  p.host = "node1";
  p.gpu_id = "h100-sxm5-80gb";
  p.versions.nccl = "2.27.7";
  GpuDeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.sm_count = 132;
  d.compute_capability_major = 9;
  d.memory_bytes = 85e9;
  p.devices = {d, d};
  p.devices[1].index = 1;
  p.links = {{0, 1, true, 0, true, 18}, {1, 0, true, -1, false, -1}};
  p.gemm = {{Precision::kBf16, {4096, 4096, 4096, 1}, 1.8e-4},
            {Precision::kFp8, {1024, 8192, 4096, 2}, 3e-5}};
  KernelCase attn;
  attn.kind = KernelKind::kAttentionForward;
  attn.batch = 2;
  attn.seq = 8192;
  attn.heads = 32;
  attn.head_dim = 128;
  KernelCase norm{KernelKind::kRmsNormForward, Precision::kBf16, 0, 0, 0, 0, 8192, 4096};
  p.kernels = {{attn, 2e-3}, {norm, 5e-5}};
  p.bandwidth = {{BandwidthKind::kDeviceCopy, 0, 0, 1 << 28, 2e-4},
                 {BandwidthKind::kPeer, 0, 1, 1 << 28, 1e-3}};
  p.collectives = {{Collective::kAllReduce, 2, 1 << 20, 2e-5}};
  p.skipped = {"tf32 GEMM: not asked"};
  return p;
}

TEST(ProfileFormat, RoundTripKeepsEverySample) {
  const Profile p = SampleProfile();
  Expected<Profile> back = ProfileFromJson(ProfileToJson(p), "<mem>");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->gpu_id, p.gpu_id);
  EXPECT_EQ(back->versions.nccl, "2.27.7");
  ASSERT_EQ(back->devices.size(), 2u);
  EXPECT_EQ(back->devices[1].index, 1);
  EXPECT_EQ(back->devices[0].compute_capability_major, 9);
  ASSERT_EQ(back->links.size(), 2u);
  EXPECT_EQ(back->links[0].nvlinks, 18);
  EXPECT_EQ(back->links[1].nvlinks, -1);
  EXPECT_EQ(back->links[1].performance_rank, -1);
  ASSERT_EQ(back->gemm.size(), 2u);
  EXPECT_EQ(back->gemm[1].dtype, Precision::kFp8);
  EXPECT_EQ(back->gemm[1].shape.batch, 2);
  EXPECT_DOUBLE_EQ(back->gemm[0].seconds, 1.8e-4);
  ASSERT_EQ(back->kernels.size(), 2u);
  EXPECT_EQ(back->kernels[0].kernel.seq, 8192);
  EXPECT_EQ(back->kernels[1].kernel.cols, 4096);
  ASSERT_EQ(back->bandwidth.size(), 2u);
  EXPECT_EQ(back->bandwidth[1].to, 1);
  ASSERT_EQ(back->collectives.size(), 1u);
  EXPECT_EQ(back->skipped, p.skipped);
}

TEST(ProfileFormat, DerivedFiguresFollowNcclTestsDefinitions) {
  const nlohmann::json j = ProfileToJson(SampleProfile());
  // 4096^3 GEMM: 2*4096^3 / 1.8e-4 s = 763.6 TFLOP/s.
  EXPECT_NEAR(j["gemm"][0]["tflops"].get<double>(), 2.0 * 4096.0 * 4096 * 4096 / 1.8e-4 / 1e12,
              1e-9);
  // all_reduce over 2 ranks: busbw = algbw * 2(n-1)/n = algbw.
  const double algbw = (1 << 20) / 2e-5 / 1e9;
  EXPECT_NEAR(j["collectives"][0]["algbw_gbps"].get<double>(), algbw, 1e-9);
  EXPECT_NEAR(j["collectives"][0]["busbw_gbps"].get<double>(), algbw, 1e-9);
  // Device copy counts read + write.
  EXPECT_NEAR(j["bandwidth"][0]["gbps"].get<double>(), 2.0 * (1 << 28) / 2e-4 / 1e9, 1e-9);
}

TEST(ProfileFormat, WrittenFileReadsBack) {
  TempDir dir("gpuplan_profile_");
  const std::string path = (dir.path() / "p.json").string();
  ASSERT_TRUE(WriteProfile(path, SampleProfile()).ok());
  Expected<Profile> back = ReadProfile(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->gemm.size(), 2u);
}

struct BadCase {
  const char* name;
  void (*edit)(nlohmann::json& j);
  const char* expected;  // substring of the message
};

const BadCase kBadCases[] = {
    {"format", [](nlohmann::json& j) { j["format"] = "nccl"; }, "field 'format'"},
    {"version", [](nlohmann::json& j) { j["version"] = 2; }, "reads profile version 1"},
    {"unknown_field", [](nlohmann::json& j) { j["gemm"][1]["mm"] = 3; }, "gemm[1]"},
    {"negative_time", [](nlohmann::json& j) { j["gemm"][0]["seconds"] = -1; }, "'seconds'"},
    {"dtype", [](nlohmann::json& j) { j["gemm"][0]["dtype"] = "int4"; }, "'dtype'"},
    {"kernel", [](nlohmann::json& j) { j["kernels"][0]["kernel"] = "conv"; }, "kernels[0]"},
    {"attention_dims", [](nlohmann::json& j) { j["kernels"][0].erase("seq"); }, "'seq'"},
    {"collective", [](nlohmann::json& j) { j["collectives"][0]["collective"] = "allreduce"; },
     "all_reduce"},
    {"ranks", [](nlohmann::json& j) { j["collectives"][0]["ranks"] = 8; }, "lists 2 devices"},
    {"no_devices", [](nlohmann::json& j) { j["devices"] = nlohmann::json::array(); },
     "at least one GPU"},
    {"cc", [](nlohmann::json& j) { j["devices"][0]["compute_capability"] = "hopper"; },
     "compute_capability"},
    {"not_array", [](nlohmann::json& j) { j["bandwidth"] = 3; }, "must be an array"},
};

TEST(ProfileFormat, BadFilesNameTheField) {
  for (const BadCase& c : kBadCases) {
    nlohmann::json j = ProfileToJson(SampleProfile());
    c.edit(j);
    Expected<Profile> p = ProfileFromJson(j, "x.json");
    ASSERT_FALSE(p.ok()) << c.name;
    EXPECT_EQ(p.status().kind(), ErrorKind::kInvalidInput) << c.name;
    EXPECT_TRUE(Contains(p.status().message(), c.expected))
        << c.name << ": " << p.status().message();
    EXPECT_TRUE(Contains(p.status().message(), "x.json")) << c.name;
  }
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

// Golden numbers of the kernel table (profiler/kernel_cases.h).
TEST(KernelTable, FlopsAndBytesFollowTheirSources) {
  KernelCase attn;
  attn.kind = KernelKind::kAttentionForward;
  attn.batch = 1;
  attn.seq = 4096;
  attn.heads = 32;
  attn.head_dim = 128;
  // FlashAttention-2 causal forward: 4 * b * h * s^2 * d / 2 = 137.4 GFLOP.
  EXPECT_DOUBLE_EQ(GetKernelInfo(attn.kind).flops(attn), 4.0 * 32 * 4096.0 * 4096 * 128 / 2);
  attn.kind = KernelKind::kAttentionBackward;
  EXPECT_DOUBLE_EQ(GetKernelInfo(attn.kind).flops(attn), 2.5 * 4.0 * 32 * 4096.0 * 4096 * 128 / 2);
  // AdamW over 1M bf16 gradients: 3 fp32 reads + 2 B gradient + 3 fp32 writes = 26 B/param.
  const KernelCase adam{KernelKind::kAdam, Precision::kBf16, 0, 0, 0, 0, 1, 1000000};
  EXPECT_DOUBLE_EQ(GetKernelInfo(adam.kind).bytes(adam), 26e6);
  // GELU forward reads and writes each bf16 element once.
  const KernelCase gelu{KernelKind::kGeluForward, Precision::kBf16, 0, 0, 0, 0, 10, 100};
  EXPECT_DOUBLE_EQ(GetKernelInfo(gelu.kind).bytes(gelu), 2.0 * 1000 * 2);
  for (const KernelInfo& k : KernelTable()) {
    KernelKind parsed;
    ASSERT_TRUE(ParseKernelName(k.name, &parsed));
    EXPECT_EQ(parsed, k.kind);
  }
}

}  // namespace
}  // namespace gpuplan
