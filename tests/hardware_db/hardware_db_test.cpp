// Tests of the hardware database: the built-in data (ids, sources, spot values) and the loader's
// error messages, which must name the file, the entry and the field.
#include "hardware-db/hardware_db.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tests/builtin_db.h"
#include "tests/temp_dir.h"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected \"" << part << "\" in \"" << text << "\"";
}

// ---------------------------------------------------------------------------------------------
// Built-in database

const std::vector<std::string> kRequiredGpus = {
    "v100-sxm2-32gb", "a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-80gb", "h100-sxm5-80gb",
    "h100-pcie-80gb", "h200-sxm-141gb", "b200",           "l40s",           "l4",
    "rtx-4090",       "rtx-a6000",      "rtx-6000-ada",   "mi300x",         "t4",
    "gb200",          "gb300",          "b300",           "h200-nvl-141gb", "mi325x",
    "mi355x",         "h100-nvl-94gb"};
const std::vector<std::string> kRequiredNetworks = {
    "ib-edr-100", "ib-hdr-200", "ib-ndr-400", "ib-xdr-800", "roce-200",      "roce-400",
    "efa-p4d",    "efa-p5",     "eth-25",     "eth-100",    "spectrum-x-800"};
const std::vector<std::string> kRequiredNodes = {
    "dgx-a100",     "dgx-h100",    "hgx-h200",    "8x-l40s-pcie", "8x-rtx4090-pcie",
    "4x-a100-pcie", "dgx-v100",    "dgx-b200",    "8x-mi300x",    "8x-l4",
    "8x-t4",        "8x-a6000",    "8x-6000-ada", "8x-h100-pcie", "p4d-24xlarge",
    "p5-48xlarge",  "gb200-nvl72", "gb300-nvl72", "hgx-b300",     "p6-b200",
    "p6e-gb200",    "8x-h100-nvl"};

class BuiltinDbTest : public ::testing::Test {
 protected:
  static const HardwareDb& db() { return BuiltinDb(); }
};

TEST_F(BuiltinDbTest, LoadsAndValidates) {
  EXPECT_TRUE(db().Validate().ok()) << db().Validate().message();
  EXPECT_FALSE(BuiltinHardwareDbDir().empty());
}

TEST(DataRoot, InstalledProgramReadsItsShareFolder) {
  TempDir tmp("gpuplan_dataroot_");
  const std::filesystem::path prefix = tmp.path();
  std::filesystem::create_directories(prefix / "bin");
  const std::string exe = (prefix / "bin" / "gpuplan").string();
  // Not installed (no share/gpuplan/hardware-db beside bin/): the compiled-in source tree.
  EXPECT_EQ(ResolveDataRoot(exe, "/src/gpuplan"), "/src/gpuplan");
  EXPECT_EQ(ResolveDataRoot("", "/src/gpuplan"), "/src/gpuplan");
  std::filesystem::create_directories(prefix / "share" / "gpuplan" / "hardware-db");
  EXPECT_EQ(ResolveDataRoot(exe, "/src/gpuplan"), (prefix / "share" / "gpuplan").string());
}

TEST(DataRoot, CalibrationDataShipsWithTheProgram) {
  for (const char* file : {"published_runs.json", "collectives.json", "gemm.json",
                           "ultrascale_sweep.csv", "README.md"}) {
    EXPECT_TRUE(std::filesystem::is_regular_file(BuiltinCalibrationDir() + "/" + file)) << file;
  }
}

TEST_F(BuiltinDbTest, HasEveryRequiredId) {
  for (const std::string& id : kRequiredGpus) EXPECT_NE(db().FindGpu(id), nullptr) << id;
  for (const std::string& id : kRequiredNetworks) EXPECT_NE(db().FindNetwork(id), nullptr) << id;
  for (const std::string& id : kRequiredNodes) EXPECT_NE(db().FindNode(id), nullptr) << id;
}

TEST_F(BuiltinDbTest, EveryEntryNamesItsSource) {
  for (const auto& [id, g] : db().gpus()) EXPECT_FALSE(g.source.empty()) << id;
  for (const auto& [id, n] : db().networks()) EXPECT_FALSE(n.source.empty()) << id;
  for (const auto& [id, n] : db().nodes()) EXPECT_FALSE(n.source.empty()) << id;
}

TEST_F(BuiltinDbTest, SpotValuesInSiUnits) {
  const GpuSpec* h100 = db().FindGpu("h100-sxm5-80gb");
  ASSERT_NE(h100, nullptr);
  EXPECT_DOUBLE_EQ(h100->PeakFlops(Precision::kBf16), 989.5e12);
  EXPECT_DOUBLE_EQ(h100->PeakFlops(Precision::kFp8), 1979e12);
  EXPECT_DOUBLE_EQ(h100->memory_bytes, 81559.0 * 1024 * 1024);  // memory_mib, nvidia-smi's total
  EXPECT_DOUBLE_EQ(h100->memory_bandwidth_bytes_per_s, 3.35e12);
  EXPECT_EQ(h100->sm_count, 132);
  EXPECT_NEAR(h100->gemm_efficiency * 989.5, 794.5, 0.1);      // ml-engineering MAMF
  EXPECT_NEAR(h100->gemm_efficiency_fp8 * 1979, 1402.6, 0.1);  // MAMF, fp8 e4m3
  EXPECT_EQ(h100->scaleup_kind, "nvswitch");
  EXPECT_DOUBLE_EQ(h100->scaleup_bytes_per_s, 450e9);
  EXPECT_EQ(h100->scaleup_domain_gpus, 8);
  EXPECT_DOUBLE_EQ(h100->pcie_bytes_per_s, 63e9);
  EXPECT_EQ(h100->default_node, "dgx-h100");

  const GpuSpec* a100 = db().FindGpu("a100-sxm4-80gb");
  ASSERT_NE(a100, nullptr);
  EXPECT_DOUBLE_EQ(a100->scaleup_bytes_per_s, 300e9);
  EXPECT_NEAR(a100->scaleup_collective_efficiency * 300, 234.9, 0.1);
  EXPECT_EQ(a100->scaleup_nvls_efficiency, 0.0);                 // NVSwitch gen 2: no NVLS
  EXPECT_NEAR(h100->scaleup_nvls_efficiency * 450, 275.0, 0.5);  // nccl-tests #212 algbw

  const GpuSpec* v100 = db().FindGpu("v100-sxm2-32gb");
  ASSERT_NE(v100, nullptr);
  EXPECT_EQ(v100->PeakFlops(Precision::kBf16), 0);  // Volta: no bf16
  EXPECT_EQ(v100->PeakFlops(Precision::kTf32), 0);
  EXPECT_DOUBLE_EQ(v100->PeakFlops(Precision::kFp16), 125e12);

  const GpuSpec* t4 = db().FindGpu("t4");
  ASSERT_NE(t4, nullptr);
  EXPECT_DOUBLE_EQ(t4->PeakFlops(Precision::kFp16), 65e12);
  EXPECT_EQ(t4->PeakFlops(Precision::kBf16), 0);

  const GpuSpec* rtx4090 = db().FindGpu("rtx-4090");
  ASSERT_NE(rtx4090, nullptr);
  EXPECT_DOUBLE_EQ(rtx4090->PeakFlops(Precision::kBf16), 165.2e12);  // FP32 accumulate
  EXPECT_EQ(rtx4090->scaleup_kind, "none");

  const GpuSpec* mi300x = db().FindGpu("mi300x");
  ASSERT_NE(mi300x, nullptr);
  EXPECT_EQ(mi300x->scaleup_kind, "xgmi");
  EXPECT_EQ(mi300x->sm_count, 304);
  EXPECT_DOUBLE_EQ(mi300x->memory_bytes, 205822885888.0);  // rocm-smi's total, 196,288 MiB

  const NetworkSpec* hdr = db().FindNetwork("ib-hdr-200");
  ASSERT_NE(hdr, nullptr);
  EXPECT_DOUBLE_EQ(hdr->bytes_per_s_per_gpu, 25e9);
  EXPECT_GT(hdr->latency_s, 0);
  EXPECT_LT(hdr->latency_s, 100e-6);
  EXPECT_DOUBLE_EQ(db().FindNetwork("efa-p4d")->bytes_per_s_per_gpu, 6.25e9);
  EXPECT_DOUBLE_EQ(db().FindNetwork("efa-p5")->bytes_per_s_per_gpu, 50e9);
  const MeasuredNetworkBusbw& playbook = db().FindNetwork("hf-playbook-h100")->measured_busbw;
  EXPECT_EQ(playbook.nodes, (std::vector<double>{2, 4, 8, 16, 32, 64}));
  EXPECT_DOUBLE_EQ(playbook.Find("all_reduce")->back(), 32.9e9);
  EXPECT_TRUE(db().FindNetwork("ib-ndr-400")->measured_busbw.nodes.empty());

  const NodeTemplate* dgx = db().FindNode("dgx-h100");
  ASSERT_NE(dgx, nullptr);
  EXPECT_EQ(dgx->gpu, "h100-sxm5-80gb");
  EXPECT_EQ(dgx->gpus_per_node, 8);
  EXPECT_EQ(dgx->network, "ib-ndr-400");
  EXPECT_EQ(dgx->intra_node, "nvswitch");
  EXPECT_DOUBLE_EQ(dgx->intra_node_bytes_per_s, 450e9);
  EXPECT_EQ(db().FindNode("4x-a100-pcie")->gpus_per_node, 4);
}

TEST_F(BuiltinDbTest, DataIsSelfConsistent) {
  for (const auto& [id, g] : db().gpus()) {
    SCOPED_TRACE(id);
    EXPECT_EQ(g.id, id);
    EXPECT_LE(g.gemm_efficiency, 1.0);
    // fp8 GEMMs reach no more of their peak than 16-bit ones where both are measured.
    if (g.gemm_efficiency_fp8 > 0) {
      EXPECT_GT(g.PeakFlops(Precision::kFp8), 0);
      EXPECT_LE(g.gemm_efficiency_fp8, g.gemm_efficiency);
    }
    EXPECT_GT(g.sm_count, 0);
    EXPECT_GT(g.memory_bytes, 1e9);
    if (g.HostDevice()) {
      // The CPU backend's rank: fp32 only, conservative rates, no PCIe link.
      EXPECT_GT(g.PeakFlops(Precision::kFp32), 0);
      EXPECT_EQ(g.PeakFlops(Precision::kBf16), 0);
      EXPECT_EQ(g.pcie_bytes_per_s, 0);
      EXPECT_GT(g.scaleup_bytes_per_s, 0);
    } else {
      // Training needs a 16-bit (or wider) tensor format.
      EXPECT_GT(g.PeakFlops(Precision::kFp16) + g.PeakFlops(Precision::kBf16), 0);
      EXPECT_GT(g.gemm_efficiency, 0.4);
    }
    if (g.scaleup_kind == "none") {
      EXPECT_EQ(g.scaleup_bytes_per_s, 0);
    } else if (!g.HostDevice()) {
      EXPECT_GT(g.scaleup_bytes_per_s, g.pcie_bytes_per_s);
      EXPECT_GE(g.scaleup_domain_gpus, 2);
    }
    // The default node is built from this GPU.
    const NodeTemplate* node = db().FindNode(g.default_node);
    ASSERT_NE(node, nullptr);
    EXPECT_EQ(node->gpu, id);
  }
  for (const auto& [id, n] : db().nodes()) {
    SCOPED_TRACE(id);
    const GpuSpec* g = db().FindGpu(n.gpu);
    ASSERT_NE(g, nullptr);
    if (n.intra_node == "nvswitch" || n.intra_node == "xgmi" || n.intra_node == "shared-memory") {
      EXPECT_EQ(n.intra_node, g->scaleup_kind);
      EXPECT_DOUBLE_EQ(n.intra_node_bytes_per_s, g->scaleup_bytes_per_s);
      EXPECT_LE(n.gpus_per_node, g->scaleup_domain_gpus);
    } else {
      // PCIe boxes (bridged pairs included): whole-node collectives cross PCIe.
      EXPECT_LE(n.intra_node_bytes_per_s, g->pcie_bytes_per_s);
    }
    EXPECT_GT(n.intra_node_latency_s, 0);
  }
  for (const auto& [id, n] : db().networks()) {
    SCOPED_TRACE(id);
    EXPECT_GT(n.bytes_per_s_per_gpu, 0);
    EXPECT_GT(n.latency_s, 0);
  }
}

TEST_F(BuiltinDbTest, LookupsAndIds) {
  EXPECT_EQ(db().FindGpu("no-such-gpu"), nullptr);
  EXPECT_EQ(db().FindNetwork("no-such-net"), nullptr);
  EXPECT_EQ(db().FindNode("no-such-node"), nullptr);
  const std::vector<std::string> ids = db().GpuIds();
  EXPECT_EQ(ids.size(), db().gpus().size());
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  const std::vector<std::string> networks = db().NetworkIds();
  EXPECT_TRUE(std::is_sorted(networks.begin(), networks.end()));
  EXPECT_EQ(db().NodeIds().size(), db().nodes().size());
}

TEST(PrecisionTest, NamesRoundTrip) {
  for (int i = 0; i < kPrecisionCount; ++i) {
    const Precision p = static_cast<Precision>(i);
    Precision parsed = Precision::kFp32;
    ASSERT_TRUE(ParsePrecision(PrecisionName(p), &parsed)) << PrecisionName(p);
    EXPECT_EQ(parsed, p);
  }
  EXPECT_EQ(PrecisionName(Precision::kBf16), "bf16");
  Precision p = Precision::kFp32;
  EXPECT_FALSE(ParsePrecision("BF16", &p));
  EXPECT_FALSE(ParsePrecision("int8", &p));
  EXPECT_FALSE(ParsePrecision("", &p));
}

// ---------------------------------------------------------------------------------------------
// Loader errors and user overrides, with fixture files written into a fresh temporary directory.

json ValidGpu(const std::string& id) {
  return json{{"id", id},
              {"name", "Test GPU"},
              {"vendor", "NVIDIA"},
              {"tflops_dense", {{"fp32", 60}, {"bf16", 1000}, {"fp16", 1000}, {"fp8", nullptr}}},
              {"memory_gb", 96},
              {"memory_bandwidth_gbps", 4000},
              {"sm_count", 132},
              {"gemm_efficiency", 0.8},
              {"memory_efficiency", 0.85},
              {"scaleup",
               {{"kind", "nvswitch"},
                {"gbps_per_gpu_unidir", 450},
                {"domain_gpus", 8},
                {"collective_efficiency", 0.8}}},
              {"pcie_gen", 5},
              {"pcie_gbps_unidir", 63},
              {"tdp_w", 700},
              {"default_node", "test-node"},
              {"source", "unit test fixture"}};
}

json ValidNetwork(const std::string& id) {
  return json{{"id", id},        {"name", "Test network"},       {"gbps_per_gpu", 50},
              {"latency_us", 5}, {"collective_efficiency", 0.9}, {"source", "unit test fixture"}};
}

json ValidNode(const std::string& id, const std::string& gpu) {
  return json{{"id", id},
              {"name", "Test node"},
              {"gpu", gpu},
              {"gpus_per_node", 8},
              {"network", "ib-ndr-400"},
              {"intra_node", "nvswitch"},
              {"intra_node_gbps_per_gpu", 450},
              {"intra_node_latency_us", 3},
              {"source", "unit test fixture"}};
}

class HardwareDbFilesTest : public ::testing::Test {
 protected:
  // Writes `text` to dir/name and returns the full path.
  std::string Write(const std::string& name, const std::string& text) {
    const fs::path path = tmp_.path() / name;
    std::ofstream out(path);
    out << text;
    return path.string();
  }
  std::string Write(const std::string& name, const json& doc) { return Write(name, doc.dump(2)); }

  // Loads one file into an empty database and returns the error message ("" when it loads).
  std::string LoadError(const std::string& path) {
    HardwareDb db;
    Status st = db.LoadFile(path);
    return st.ok() ? "" : st.message();
  }

  std::string dir() const { return tmp_.path().string(); }

 private:
  TempDir tmp_{"gpuplan_hwdb_test_"};
};

TEST_F(HardwareDbFilesTest, ValidFixtureLoads) {
  const std::string path = Write("gpus.json", json{{"gpus", {ValidGpu("test-gpu")}}});
  HardwareDb db;
  ASSERT_TRUE(db.LoadFile(path).ok()) << db.LoadFile(path).message();
  const GpuSpec* g = db.FindGpu("test-gpu");
  ASSERT_NE(g, nullptr);
  EXPECT_DOUBLE_EQ(g->memory_bytes, 96.0 * 1024 * 1024 * 1024);  // memory_gb read as GiB
  EXPECT_DOUBLE_EQ(g->PeakFlops(Precision::kBf16), 1000e12);
  EXPECT_EQ(g->PeakFlops(Precision::kFp8), 0);   // null = unsupported
  EXPECT_EQ(g->PeakFlops(Precision::kTf32), 0);  // absent = unsupported
}

TEST_F(HardwareDbFilesTest, NegativeMemoryNamesFileEntryAndField) {
  json gpu = ValidGpu("bad-gpu");
  gpu["memory_gb"] = -1;
  const std::string path = Write("gpus.json", json{{"gpus", {gpu}}});
  const std::string err = LoadError(path);
  EXPECT_TRUE(Contains(err, path));
  EXPECT_TRUE(Contains(err, "gpu 'bad-gpu'"));
  EXPECT_TRUE(Contains(err, "field 'memory_gb'"));
  EXPECT_TRUE(Contains(err, "-1"));
}

// memory_mib, the driver's total, is the capacity when given (a GDDR card with ECC on offers
// 15/16 of its datasheet GiB); a bad one names the field.
TEST_F(HardwareDbFilesTest, MemoryMibIsTheDriversTotal) {
  json gpu = ValidGpu("ecc-gpu");
  gpu["memory_gb"] = 48;
  gpu["memory_mib"] = 46068;
  HardwareDb db;
  const std::string path = Write("gpus.json", json{{"gpus", {gpu}}});
  ASSERT_TRUE(db.LoadFile(path).ok()) << db.LoadFile(path).message();
  EXPECT_DOUBLE_EQ(db.FindGpu("ecc-gpu")->memory_bytes, 46068.0 * 1024 * 1024);
  gpu["memory_mib"] = 0;
  const std::string bad = Write("bad.json", json{{"gpus", {gpu}}});
  const std::string err = LoadError(bad);
  EXPECT_TRUE(Contains(err, "gpu 'ecc-gpu'")) << err;
  EXPECT_TRUE(Contains(err, "field 'memory_mib'")) << err;
}

// hop_latency_us is optional (absent: the crossing latency, paid per hop) and at most
// latency_us: the once-per-collective part 2 x (latency - hop) cannot be negative.
TEST_F(HardwareDbFilesTest, NetworkHopLatency) {
  json net = ValidNetwork("hop-net");
  const std::string plain = Write("networks.json", json{{"networks", {net}}});
  HardwareDb db;
  ASSERT_TRUE(db.LoadFile(plain).ok());
  EXPECT_DOUBLE_EQ(db.FindNetwork("hop-net")->hop_latency_s, 5e-6);
  net["hop_latency_us"] = 2;
  HardwareDb with_hop;
  ASSERT_TRUE(with_hop.LoadFile(Write("networks.json", json{{"networks", {net}}})).ok());
  EXPECT_DOUBLE_EQ(with_hop.FindNetwork("hop-net")->hop_latency_s, 2e-6);
  net["hop_latency_us"] = 6;
  const std::string path = Write("networks.json", json{{"networks", {net}}});
  const std::string err = LoadError(path);
  EXPECT_TRUE(Contains(err, path));
  EXPECT_TRUE(Contains(err, "network 'hop-net'"));
  EXPECT_TRUE(Contains(err, "field 'hop_latency_us'"));
  EXPECT_TRUE(Contains(err, "[0, 5]"));
}

TEST_F(HardwareDbFilesTest, MissingRequiredField) {
  json gpu = ValidGpu("bad-gpu");
  gpu.erase("sm_count");
  const std::string path = Write("gpus.json", json{{"gpus", {gpu}}});
  const std::string err = LoadError(path);
  EXPECT_TRUE(Contains(err, path));
  EXPECT_TRUE(Contains(err, "gpu 'bad-gpu'"));
  EXPECT_TRUE(Contains(err, "field 'sm_count'"));
  EXPECT_TRUE(Contains(err, "required"));
}

TEST_F(HardwareDbFilesTest, MissingIdNamesTheIndex) {
  json gpu = ValidGpu("x");
  gpu.erase("id");
  const std::string path = Write("gpus.json", json{{"gpus", {ValidGpu("first"), gpu}}});
  const std::string err = LoadError(path);
  EXPECT_TRUE(Contains(err, path));
  EXPECT_TRUE(Contains(err, "gpus[1]"));
  EXPECT_TRUE(Contains(err, "field 'id'"));
}

// A measured busbw table: loaded in SI units, and every malformed part named with its field.
TEST_F(HardwareDbFilesTest, MeasuredBusbwTable) {
  json net = ValidNetwork("measured-net");
  net["measured_busbw"] = json{{"gpus_per_node", 8},
                               {"message_bytes", 268435456},
                               {"nodes", {2, 4, 8}},
                               {"all_gather", {180.5, 120, 70}},
                               {"source", "unit test fixture"}};
  HardwareDb db;
  ASSERT_EQ(LoadError(Write("networks.json", json{{"networks", {net}}})), "");
  ASSERT_TRUE(db.LoadFile(dir() + "/networks.json").ok());
  const MeasuredNetworkBusbw& m = db.FindNetwork("measured-net")->measured_busbw;
  EXPECT_EQ(m.gpus_per_node, 8);
  EXPECT_EQ(m.nodes, (std::vector<double>{2, 4, 8}));
  ASSERT_NE(m.Find("all_gather"), nullptr);
  EXPECT_DOUBLE_EQ(m.Find("all_gather")->front(), 180.5e9);
  EXPECT_EQ(m.Find("all_reduce"), nullptr);

  struct Bad {
    const char* field;
    json value;
    const char* expected;
  };
  for (const Bad& b : {Bad{"nodes", json{4, 2, 8}, "field 'nodes': must be whole node counts"},
                       Bad{"nodes", json{1, 2, 8}, "field 'nodes': entry 0 must be a number"},
                       Bad{"all_gather", json{180, 120}, "field 'all_gather': has 2 values"},
                       Bad{"all_gather", json{180, -1, 70}, "field 'all_gather': entry 1"},
                       Bad{"all_gather", json("fast"), "field 'all_gather': must be an array"},
                       Bad{"allgather", json{1, 2, 3}, "unknown field 'allgather'"},
                       Bad{"gpus_per_node", json(0), "field 'gpus_per_node'"}}) {
    json bad = net;
    bad["id"] = "bad-net";
    bad["measured_busbw"][b.field] = b.value;
    const std::string path = Write("networks.json", json{{"networks", {bad}}});
    const std::string err = LoadError(path);
    EXPECT_TRUE(Contains(err, path)) << err;
    EXPECT_TRUE(Contains(err, "network 'bad-net': in 'measured_busbw'")) << err;
    EXPECT_TRUE(Contains(err, b.expected)) << err;
  }
  json no_series = net;
  no_series["measured_busbw"].erase("all_gather");
  const std::string err = LoadError(Write("networks.json", json{{"networks", {no_series}}}));
  EXPECT_TRUE(Contains(err, "needs at least one busbw series")) << err;
}

TEST_F(HardwareDbFilesTest, WrongType) {
  json net = ValidNetwork("bad-net");
  net["gbps_per_gpu"] = "400 Gb/s";
  const std::string path = Write("networks.json", json{{"networks", {net}}});
  const std::string err = LoadError(path);
  EXPECT_TRUE(Contains(err, path));
  EXPECT_TRUE(Contains(err, "network 'bad-net'"));
  EXPECT_TRUE(Contains(err, "field 'gbps_per_gpu'"));
  EXPECT_TRUE(Contains(err, "must be a number in [0.001, 1e+06], got \"400 Gb/s\""));
}

TEST_F(HardwareDbFilesTest, UnknownField) {
  json node = ValidNode("bad-node", "h100-sxm5-80gb");
  node["gpus_per_nodes"] = 8;  // typo
  const std::string path = Write("nodes.json", json{{"nodes", {node}}});
  const std::string err = LoadError(path);
  EXPECT_TRUE(Contains(err, path));
  EXPECT_TRUE(Contains(err, "node 'bad-node'"));
  EXPECT_TRUE(Contains(err, "field 'gpus_per_nodes'"));
  EXPECT_TRUE(Contains(err, "unknown field"));
}

TEST_F(HardwareDbFilesTest, NestedFieldErrors) {
  json gpu = ValidGpu("bad-gpu");
  gpu["tflops_dense"]["bf16"] = -5;
  std::string path = Write("a.json", json{{"gpus", {gpu}}});
  std::string err = LoadError(path);
  EXPECT_TRUE(Contains(err, path));
  EXPECT_TRUE(Contains(err, "gpu 'bad-gpu'"));
  EXPECT_TRUE(Contains(err, "tflops_dense"));
  EXPECT_TRUE(Contains(err, "field 'bf16'"));

  gpu = ValidGpu("bad-gpu");
  gpu["scaleup"]["collective_efficiency"] = 1.5;
  path = Write("b.json", json{{"gpus", {gpu}}});
  err = LoadError(path);
  EXPECT_TRUE(Contains(err, path));
  EXPECT_TRUE(Contains(err, "gpu 'bad-gpu'"));
  EXPECT_TRUE(Contains(err, "field 'collective_efficiency'"));
  EXPECT_TRUE(Contains(err, "must be a number in [0.01, 1], got 1.5"));

  gpu = ValidGpu("bad-gpu");
  gpu["scaleup"] = json{{"kind", "none"}, {"gbps_per_gpu_unidir", 100}};
  path = Write("c.json", json{{"gpus", {gpu}}});
  EXPECT_TRUE(Contains(LoadError(path), "field 'gbps_per_gpu_unidir'"));

  gpu = ValidGpu("bad-gpu");
  gpu["scaleup"]["kind"] = "nvlink-bridge";
  gpu["scaleup"]["nvls_allreduce_efficiency"] = 0.6;
  path = Write("n.json", json{{"gpus", {gpu}}});
  err = LoadError(path);
  EXPECT_TRUE(Contains(err, "gpu 'bad-gpu'"));
  EXPECT_TRUE(Contains(err, "field 'nvls_allreduce_efficiency'"));
  EXPECT_TRUE(Contains(err, "only for kind 'nvswitch'"));

  gpu = ValidGpu("bad-gpu");
  gpu["scaleup"]["nvls_allreduce_efficiency"] = 2;
  path = Write("o.json", json{{"gpus", {gpu}}});
  EXPECT_TRUE(Contains(LoadError(path), "field 'nvls_allreduce_efficiency'"));

  // A host device (the CPU backend's ranks) has no PCIe link to describe.
  gpu = ValidGpu("bad-gpu");
  gpu["scaleup"]["kind"] = "shared-memory";
  path = Write("h.json", json{{"gpus", {gpu}}});
  err = LoadError(path);
  EXPECT_TRUE(Contains(err, "gpu 'bad-gpu'"));
  EXPECT_TRUE(Contains(err,
                       "field 'pcie_gen': must be omitted when scaleup.kind is "
                       "'shared-memory'"))
      << err;
  gpu.erase("pcie_gen");
  gpu.erase("pcie_gbps_unidir");
  path = Write("i.json", json{{"gpus", {gpu}}});
  EXPECT_EQ(LoadError(path), "");

  gpu = ValidGpu("bad-gpu");
  gpu["scaleup"]["kind"] = "infinityband";
  path = Write("d.json", json{{"gpus", {gpu}}});
  EXPECT_TRUE(Contains(LoadError(path), "field 'kind'"));

  gpu = ValidGpu("bad-gpu");
  gpu["tflops_dense"] = json{{"fp8", nullptr}};
  path = Write("e.json", json{{"gpus", {gpu}}});
  EXPECT_TRUE(Contains(LoadError(path), "field 'tflops_dense'"));
}

TEST_F(HardwareDbFilesTest, EfficiencyOutOfRange) {
  json net = ValidNetwork("bad-net");
  net["collective_efficiency"] = 0;
  const std::string path = Write("networks.json", json{{"networks", {net}}});
  const std::string err = LoadError(path);
  EXPECT_TRUE(Contains(err, "network 'bad-net'"));
  EXPECT_TRUE(Contains(err, "field 'collective_efficiency'"));
}

TEST_F(HardwareDbFilesTest, Fp8GemmEfficiency) {
  json gpu = ValidGpu("fp8-gpu");
  gpu["tflops_dense"]["fp8"] = 2000;
  gpu["gemm_efficiency_fp8"] = 0.7;
  std::string path = Write("a.json", json{{"gpus", {gpu}}});
  HardwareDb db;
  ASSERT_TRUE(db.LoadFile(path).ok());
  EXPECT_DOUBLE_EQ(db.FindGpu("fp8-gpu")->gemm_efficiency_fp8, 0.7);
  // Absent: 0, and fp8 GEMMs take gemm_efficiency (simulator/gemm_time.h GemmEfficiency).
  gpu.erase("gemm_efficiency_fp8");
  path = Write("b.json", json{{"gpus", {gpu}}});
  HardwareDb plain;
  ASSERT_TRUE(plain.LoadFile(path).ok());
  EXPECT_EQ(plain.FindGpu("fp8-gpu")->gemm_efficiency_fp8, 0);
  gpu["gemm_efficiency_fp8"] = 1.5;
  path = Write("c.json", json{{"gpus", {gpu}}});
  std::string err = LoadError(path);
  EXPECT_TRUE(Contains(err, path));
  EXPECT_TRUE(Contains(err, "fp8-gpu"));
  EXPECT_TRUE(Contains(err, "field 'gemm_efficiency_fp8'"));
  // A GPU without an fp8 peak has no fp8 GEMM to measure.
  gpu = ValidGpu("no-fp8");
  gpu["gemm_efficiency_fp8"] = 0.7;
  path = Write("d.json", json{{"gpus", {gpu}}});
  err = LoadError(path);
  EXPECT_TRUE(Contains(err, "no-fp8"));
  EXPECT_TRUE(Contains(err, "field 'gemm_efficiency_fp8': needs an fp8 peak"));
}

TEST_F(HardwareDbFilesTest, MalformedJsonNamesTheFile) {
  const std::string path = Write("broken.json", std::string("{\"gpus\": [ {\"id\": \"x\", } ]"));
  const std::string err = LoadError(path);
  EXPECT_TRUE(Contains(err, path));
  EXPECT_TRUE(Contains(err, "malformed JSON"));
}

TEST_F(HardwareDbFilesTest, UnknownTopLevelKey) {
  const std::string path = Write("x.json", json{{"gpu", json::array()}});
  const std::string err = LoadError(path);
  EXPECT_TRUE(Contains(err, path));
  EXPECT_TRUE(Contains(err, "'gpu'"));
  // about/meta are allowed.
  EXPECT_EQ(LoadError(Write("y.json", json{{"about", "x"}, {"meta", {{"a", 1}}}})), "");
  EXPECT_TRUE(Contains(LoadError(Write("z.json", json{{"gpus", ValidGpu("g")}})), "array"));
  EXPECT_TRUE(Contains(LoadError(Write("w.json", json::array())), "JSON object"));
}

TEST_F(HardwareDbFilesTest, DuplicateIdInOneFile) {
  const std::string path =
      Write("gpus.json", json{{"gpus", {ValidGpu("twin"), ValidGpu("other"), ValidGpu("twin")}}});
  const std::string err = LoadError(path);
  EXPECT_TRUE(Contains(err, path));
  EXPECT_TRUE(Contains(err, "gpu 'twin'"));
  EXPECT_TRUE(Contains(err, "field 'id'"));
  EXPECT_TRUE(Contains(err, "duplicate"));
}

TEST_F(HardwareDbFilesTest, FailedFileLeavesDbUnchanged) {
  json bad = ValidGpu("bad");
  bad["memory_gb"] = 0;
  const std::string path = Write("gpus.json", json{{"gpus", {ValidGpu("good"), bad}}});
  HardwareDb db;
  EXPECT_FALSE(db.LoadFile(path).ok());
  EXPECT_EQ(db.FindGpu("good"), nullptr);
}

// Rack-scale fields: a node's tray_gpus divides its gpus_per_node (and defaults to it); a GPU's
// NVLink-C2C link replaces PCIe as the host link; an fp4 peak loads.
TEST_F(HardwareDbFilesTest, TraysC2cAndFp4) {
  json rack = ValidNode("rack", "h100-sxm5-80gb");
  rack["gpus_per_node"] = 64;
  rack["tray_gpus"] = 4;
  json server = ValidNode("server", "h100-sxm5-80gb");
  json gpu = ValidGpu("superchip");
  gpu["c2c_gbps_unidir"] = 225;
  gpu["c2c_host_memory_gb_per_gpu"] = 240;
  gpu["tflops_dense"]["fp4"] = 9000;
  gpu.erase("default_node");
  const std::string nodes = Write("nodes.json", json{{"nodes", {rack, server}}});
  Write("gpus.json", json{{"gpus", {gpu}}});
  Expected<HardwareDb> db = LoadHardwareDb({dir()});
  ASSERT_TRUE(db.ok()) << db.status().message();
  EXPECT_EQ(db->FindNode("rack")->tray_gpus, 4);
  EXPECT_EQ(db->FindNode("server")->tray_gpus, 8);
  EXPECT_DOUBLE_EQ(db->FindGpu("superchip")->HostLinkBytesPerS(), 225e9);
  EXPECT_DOUBLE_EQ(db->FindGpu("superchip")->host_memory_bytes_per_gpu, 240e9);
  EXPECT_DOUBLE_EQ(db->FindGpu("h100-sxm5-80gb")->host_memory_bytes_per_gpu, 0);
  EXPECT_DOUBLE_EQ(db->FindGpu("superchip")->PeakFlops(Precision::kFp4), 9000e12);
  EXPECT_DOUBLE_EQ(db->FindGpu("h100-sxm5-80gb")->HostLinkBytesPerS(), 63e9);

  gpu.erase("c2c_gbps_unidir");
  const std::string gpus = Write("gpus.json", json{{"gpus", {gpu}}});
  const std::string gpu_err = LoadError(gpus);
  EXPECT_TRUE(Contains(gpu_err, "gpu 'superchip'")) << gpu_err;
  EXPECT_TRUE(Contains(gpu_err, "field 'c2c_host_memory_gb_per_gpu': needs c2c_gbps_unidir"))
      << gpu_err;
  gpu.erase("c2c_host_memory_gb_per_gpu");
  Write("gpus.json", json{{"gpus", {gpu}}});

  rack["tray_gpus"] = 3;
  Write("nodes.json", json{{"nodes", {rack}}});
  const std::string err = LoadError(nodes);
  EXPECT_TRUE(Contains(err, "node 'rack'")) << err;
  EXPECT_TRUE(Contains(err, "field 'tray_gpus': must divide gpus_per_node = 64")) << err;
}

TEST_F(HardwareDbFilesTest, NodeReferencingUnknownGpu) {
  const std::string path =
      Write("nodes.json", json{{"nodes", {ValidNode("my-node", "no-such-gpu")}}});
  Expected<HardwareDb> db = LoadHardwareDb({dir()});
  ASSERT_FALSE(db.ok());
  const std::string& err = db.status().message();
  EXPECT_TRUE(Contains(err, path));
  EXPECT_TRUE(Contains(err, "node 'my-node'"));
  EXPECT_TRUE(Contains(err, "field 'gpu'"));
  EXPECT_TRUE(Contains(err, "no-such-gpu"));
}

TEST_F(HardwareDbFilesTest, NodeReferencingUnknownNetworkAndGpuWithUnknownNode) {
  json node = ValidNode("my-node", "h100-sxm5-80gb");
  node["network"] = "carrier-pigeon";
  std::string path = Write("nodes.json", json{{"nodes", {node}}});
  Expected<HardwareDb> db = LoadHardwareDb({dir()});
  ASSERT_FALSE(db.ok());
  EXPECT_TRUE(Contains(db.status().message(), "field 'network'"));
  EXPECT_TRUE(Contains(db.status().message(), "carrier-pigeon"));
  fs::remove(path);

  json gpu = ValidGpu("lonely-gpu");
  gpu["default_node"] = "nowhere";
  path = Write("gpus.json", json{{"gpus", {gpu}}});
  db = LoadHardwareDb({dir()});
  ASSERT_FALSE(db.ok());
  EXPECT_TRUE(Contains(db.status().message(), path));
  EXPECT_TRUE(Contains(db.status().message(), "gpu 'lonely-gpu'"));
  EXPECT_TRUE(Contains(db.status().message(), "field 'default_node'"));
}

TEST_F(HardwareDbFilesTest, DefaultNodeIsOptional) {
  json gpu = ValidGpu("prototype-gpu");
  gpu.erase("default_node");
  Write("gpus.json", json{{"gpus", {gpu}}});
  Expected<HardwareDb> db = LoadHardwareDb({dir()});
  ASSERT_TRUE(db.ok()) << db.status().message();
  ASSERT_NE(db->FindGpu("prototype-gpu"), nullptr);
  EXPECT_EQ(db->FindGpu("prototype-gpu")->default_node, "");
}

TEST_F(HardwareDbFilesTest, ArchitectureIsOptionalAndALowerCaseWord) {
  json gpu = ValidGpu("prototype-gpu");
  gpu.erase("default_node");
  ASSERT_FALSE(gpu.contains("architecture"));
  Write("gpus.json", json{{"gpus", {gpu}}});
  Expected<HardwareDb> db = LoadHardwareDb({dir()});
  ASSERT_TRUE(db.ok()) << db.status().message();
  EXPECT_EQ(db->FindGpu("prototype-gpu")->architecture, "");

  gpu["architecture"] = "Hopper";
  const std::string path = Write("gpus.json", json{{"gpus", {gpu}}});
  const std::string err = LoadError(path);
  EXPECT_TRUE(Contains(err, path));
  EXPECT_TRUE(Contains(err, "gpu 'prototype-gpu'"));
  EXPECT_TRUE(Contains(err, "field 'architecture': must be a lower-case word"));
  EXPECT_TRUE(Contains(err, "got 'Hopper'"));
}

TEST_F(BuiltinDbTest, EveryBuiltinGpuNamesItsArchitecture) {
  for (const auto& [id, gpu] : db().gpus()) EXPECT_FALSE(gpu.architecture.empty()) << id;
  EXPECT_EQ(db().FindGpu("h200-sxm-141gb")->architecture, "hopper");
}

// A training stack with every field and its sources (frameworks.json).
json ValidFramework(const std::string& id) {
  json f = {
      {"id", id},
      {"name", "Test stack"},
      {"loss_bytes_per_logit", 6},
      {"ddp_bucket_bytes_per_param", 2},
      {"grad_bucket", {{"bytes", 26214400}}},
      {"eager_elementwise", true},
      {"pipeline_split", "even"},
      {"weight_gather_in_forward", false},
      {"zero2_reduces_per_layer", true},
      {"zero3_unsharded_stage_with_pp", true},
      {"zero3_shard_is_master", true},
      {"zero1_grad_reduction", "all-reduce-after-backward"},
      {"host_ms_per_layer", 1.5},
      {"moe_host_ms_per_layer", 2.5},
      {"pipeline_host_ms_per_tp_rank", 0},
      {"tp_ms_per_inter_node_hop", 0},
      {"max_zero_stage", 2},
      {"fsdp", false},
      {"cpu_offload", false},
      {"pipeline_needs_pp_minus_1_microbatches", false},
      {"interleaved_pipeline", false},
      {"ep_overlap", false},
      {"tp_overlap", false},
      {"tp_backward_overlap", true},
      {"parallel_dims", {"tp"}},
      {"fp8_norm_fused_cast", false},
      {"fp8_weight_cast_every_microbatch", true},
      {"quantized_saved_inputs", false},
      {"activation_offload", false},
      {"recompute_modules", false},
      {"unfused_passes", {{"swiglu", 2}, {"rotary", 8}}},
      {"attention_kernels", {{"hopper", {{"kernel", "flash-attn-2"}, {"relative_speed", 0.6}}}}}};
  json sources = json::object();
  for (auto it = f.begin(); it != f.end(); ++it) {
    if (it.key() != "id" && it.key() != "name") sources[it.key()] = "our code, commit abc";
  }
  f["sources"] = sources;
  return f;
}

TEST_F(HardwareDbFilesTest, FrameworkEntryLoadsInItsUnits) {
  json entry = ValidFramework("mystack");
  entry["version"] = "v1.2 (2026)";  // optional, needs no source
  Write("frameworks.json", json{{"frameworks", {entry}}});
  Expected<HardwareDb> db = LoadHardwareDb({dir()});
  ASSERT_TRUE(db.ok()) << db.status().message();
  const FrameworkSpec* f = db->FindFramework("mystack");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->host_seconds_per_layer, 1.5e-3);
  // 25 MiB of 4-byte gradients per bucket, not grown with the data-parallel group.
  EXPECT_DOUBLE_EQ(f->grad_bucket.Params(4.0, 1024.0), 26214400.0 / 4.0);
  EXPECT_EQ(f->version, "v1.2 (2026)");
  EXPECT_EQ(f->max_zero_stage, 2);
  EXPECT_EQ(f->max_zero_stage_with_pp, 2);        // optional: max_zero_stage where not given
  EXPECT_EQ(f->loss_bytes_per_logit_with_tp, 6);  // optional: loss_bytes_per_logit
  EXPECT_EQ(f->tp_overlap_buffers, 12);           // optional: Transformer Engine's userbuffers
  EXPECT_FALSE(f->repeat_kv);                     // optional: K and V kept at their own width
  EXPECT_TRUE(f->tp_backward_overlap);
  EXPECT_FALSE(f->tp_overlap);
  EXPECT_FALSE(f->interleaved_pipeline);
  EXPECT_FALSE(f->cpu_offload);
  EXPECT_TRUE(f->eager_elementwise);
  EXPECT_FALSE(f->weight_gather_in_forward);
  EXPECT_TRUE(f->zero2_reduces_per_layer);
  EXPECT_TRUE(f->zero3_unsharded_stage_with_pp);
  EXPECT_TRUE(f->zero3_shard_is_master);
  EXPECT_EQ(f->zero1_grad_reduction, Zero1GradReduction::kAllReduceAfterBackward);
  EXPECT_EQ(f->sources.at("host_ms_per_layer"), "our code, commit abc");
  EXPECT_DOUBLE_EQ(f->moe_host_seconds_per_layer, 2.5e-3);  // ms in the file
  EXPECT_EQ(f->parallel_dims, (std::set<std::string>{"tp"}));
  EXPECT_FALSE(f->fp8_norm_fused_cast);
  EXPECT_TRUE(f->fp8_weight_cast_every_microbatch);
  EXPECT_FALSE(f->quantized_saved_inputs);
  EXPECT_FALSE(f->activation_offload);
  EXPECT_FALSE(f->recompute_modules);
  EXPECT_DOUBLE_EQ(f->unfused_passes.swiglu, 2);
  EXPECT_DOUBLE_EQ(f->unfused_passes.rotary, 8);
  EXPECT_DOUBLE_EQ(f->unfused_passes.qkv, 0);  // absent: fused
  EXPECT_DOUBLE_EQ(f->AttentionSpeed("hopper"), 0.6);
  EXPECT_EQ(f->attention_kernels.at("hopper").kernel, "flash-attn-2");
  EXPECT_DOUBLE_EQ(f->AttentionSpeed("ampere"), 1.0);      // not listed: the reference kernel
  EXPECT_NE(db->FindFramework("megatron-core"), nullptr);  // the built-in ones stay
}

TEST_F(HardwareDbFilesTest, FrameworkErrorsNameTheEntryAndTheField) {
  struct Bad {
    std::function<void(json*)> edit;
    std::string message;
  };
  const std::vector<Bad> cases = {
      {[](json* f) { f->erase("fsdp"); },
       "framework 'mystack': field 'fsdp': missing (true or false)"},
      {[](json* f) { f->erase("zero2_reduces_per_layer"); },
       "framework 'mystack': field 'zero2_reduces_per_layer': missing (true or false)"},
      {[](json* f) { (*f)["pipeline_split"] = "balanced"; }, "field 'pipeline_split'"},
      {[](json* f) { (*f)["zero1_grad_reduction"] = "overlapped"; },
       "field 'zero1_grad_reduction'"},
      {[](json* f) { (*f)["max_zero_stage"] = 4; }, "field 'max_zero_stage'"},
      {[](json* f) { (*f)["host_ms_per_layer"] = -1; }, "field 'host_ms_per_layer'"},
      {[](json* f) { f->erase("moe_host_ms_per_layer"); }, "field 'moe_host_ms_per_layer'"},
      {[](json* f) { (*f)["moe_host_ms_per_layer"] = 1001; }, "field 'moe_host_ms_per_layer'"},
      {[](json* f) { (*f)["id"] = "My Stack"; }, "field 'id': must be a lower-case word"},
      {[](json* f) { (*f)["sources"].erase("ep_overlap"); },
       "framework 'mystack': in 'sources': field 'ep_overlap': is required but missing"},
      {[](json* f) { f->erase("tp_overlap"); },
       "framework 'mystack': field 'tp_overlap': missing (true or false)"},
      {[](json* f) { f->erase("recompute_modules"); },
       "framework 'mystack': field 'recompute_modules': missing (true or false)"},
      // The optional ZeRO limit under pipelining: within max_zero_stage, and with its source.
      {[](json* f) { (*f)["max_zero_stage_with_pp"] = 3; }, "field 'max_zero_stage_with_pp'"},
      {[](json* f) { (*f)["max_zero_stage_with_pp"] = 1; },
       "in 'sources': field 'max_zero_stage_with_pp': is required but missing"},
      // The optional loss buffers with tensor parallelism: in range, and with its source.
      {[](json* f) { (*f)["loss_bytes_per_logit_with_tp"] = 65; },
       "field 'loss_bytes_per_logit_with_tp'"},
      {[](json* f) { (*f)["loss_bytes_per_logit_with_tp"] = 16; },
       "in 'sources': field 'loss_bytes_per_logit_with_tp': is required but missing"},
      {[](json* f) { (*f)["tp_overlap_buffers"] = -1; }, "field 'tp_overlap_buffers'"},
      {[](json* f) { (*f)["tp_overlap_buffers"] = 1; },
       "in 'sources': field 'tp_overlap_buffers': is required but missing"},
      {[](json* f) { (*f)["repeat_kv"] = 1; }, "field 'repeat_kv'"},
      {[](json* f) { (*f)["repeat_kv"] = true; },
       "in 'sources': field 'repeat_kv': is required but missing"},
      {[](json* f) { (*f)["sources"]["host_ms_per_layer"] = ""; },
       "in 'sources': field 'host_ms_per_layer': must be a non-empty string"},
      {[](json* f) { (*f)["sources"]["speed"] = "x"; },
       "in 'sources': field 'speed': names no field of the entry"},
      {[](json* f) { (*f)["host_us"] = 1; }, "field 'host_us': unknown field"},
      {[](json* f) { f->erase("parallel_dims"); }, "field 'parallel_dims': missing"},
      {[](json* f) {
         (*f)["parallel_dims"] = {"tp", "dp"};
       },
       "field 'parallel_dims': 'dp' is not allowed (allowed: tp, pp, cp, ep)"},
      {[](json* f) { (*f)["attention_kernels"]["hopper"]["relative_speed"] = 0; },
       "in 'attention_kernels': in 'hopper': field 'relative_speed'"},
      {[](json* f) { (*f)["unfused_passes"]["rope"] = 2; },
       "in 'unfused_passes': field 'rope': unknown field"},
      {[](json* f) { (*f)["unfused_passes"]["swiglu"] = 40; },
       "in 'unfused_passes': field 'swiglu'"},
      {[](json* f) {
         (*f)["grad_bucket"] = {{"params", 4e7}, {"bytes", 26214400}};
       },
       "framework 'mystack': in 'grad_bucket': field 'params': give exactly one of 'params'"},
      {[](json* f) { (*f)["grad_bucket"] = json::object(); },
       "in 'grad_bucket': field 'params': give exactly one of 'params'"},
      {[](json* f) {
         (*f)["grad_bucket"] = {{"params", 100}};
       },
       "in 'grad_bucket': field 'params': must be a number in [1e+06, 1e+10], got 100"},
      {[](json* f) { (*f)["grad_bucket"]["per_rank"] = 1; },
       "in 'grad_bucket': field 'per_rank': unknown field"},
      {[](json* f) { f->erase("grad_bucket"); }, "field 'grad_bucket'"},
      {[](json* f) { (*f)["attention_kernels"]["hopper"] = 0.6; },
       "in 'attention_kernels': field 'hopper' must be an object"},
  };
  for (const Bad& c : cases) {
    json f = ValidFramework("mystack");
    c.edit(&f);
    const std::string path = Write("frameworks.json", json{{"frameworks", {f}}});
    const std::string err = LoadError(path);
    EXPECT_TRUE(Contains(err, path)) << err;
    EXPECT_TRUE(Contains(err, c.message)) << err << "\n  expected: " << c.message;
  }
}

TEST_F(HardwareDbFilesTest, MissingDirectoryIsAnError) {
  Expected<HardwareDb> db = LoadHardwareDb({dir() + "/does-not-exist"});
  ASSERT_FALSE(db.ok());
  EXPECT_TRUE(Contains(db.status().message(), "does-not-exist"));
}

TEST_F(HardwareDbFilesTest, UserDirOverridesBuiltinById) {
  json h100 = ValidGpu("h100-sxm5-80gb");
  h100["name"] = "H100 as measured on our cluster";
  h100["memory_gb"] = 96;
  h100["default_node"] = "dgx-h100";
  // A user dir may also add new entries that refer to built-in ones.
  json node = ValidNode("my-h100-node", "h100-sxm5-80gb");
  node["gpus_per_node"] = 4;
  Write("my-hardware.json", json{{"gpus", {h100}}, {"nodes", {node}}});
  Write("notes.txt", std::string("not json, ignored"));

  Expected<HardwareDb> db = LoadHardwareDb({dir()});
  ASSERT_TRUE(db.ok()) << db.status().message();
  const GpuSpec* g = db->FindGpu("h100-sxm5-80gb");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->name, "H100 as measured on our cluster");
  EXPECT_DOUBLE_EQ(g->memory_bytes, 96.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(g->PeakFlops(Precision::kBf16), 1000e12);
  ASSERT_NE(db->FindNode("my-h100-node"), nullptr);
  EXPECT_EQ(db->FindNode("my-h100-node")->gpus_per_node, 4);
  // Untouched built-in entries stay.
  ASSERT_NE(db->FindGpu("a100-sxm4-80gb"), nullptr);
  EXPECT_DOUBLE_EQ(db->FindGpu("a100-sxm4-80gb")->memory_bytes, 81920.0 * 1024 * 1024);
}

TEST_F(HardwareDbFilesTest, LaterFilesOverrideEarlierOnes) {
  json first = ValidGpu("g");
  first["memory_gb"] = 10;
  json second = ValidGpu("g");
  second["memory_gb"] = 20;
  Write("a.json", json{{"gpus", {first}}});
  Write("b.json", json{{"gpus", {second}}, {"nodes", {ValidNode("test-node", "g")}}});
  HardwareDb db;
  ASSERT_TRUE(db.LoadDirectory(dir()).ok());
  ASSERT_NE(db.FindGpu("g"), nullptr);
  EXPECT_DOUBLE_EQ(db.FindGpu("g")->memory_bytes, 20.0 * 1024 * 1024 * 1024);
}

}  // namespace
}  // namespace gpuplan
