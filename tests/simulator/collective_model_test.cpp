// CollectiveSeconds against every usable published collective measurement
// (hardware-db/calibration/collectives.json): nccl-tests' time = size * factor(n) / busbw.
// Prints the error by size class (docs/COST_MODEL.md keeps the table).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/json_reader.h"
#include "hardware-db/hardware_db.h"
#include "simulator/collective.h"
#include "simulator/topology.h"

namespace gpuplan {
namespace {

// Which hardware-db GPU a row's gpu_type names (prefix of the published text). An H100 NVL pair
// measured before its NVLink bridge was fitted cannot be expressed (the GPU's pair is bridged):
// that row is skipped.
struct GpuMatch {
  const char* prefix;
  const char* gpu_id;
};
constexpr GpuMatch kGpus[] = {
    {"A100 (SXM", "a100-sxm4-80gb"},
    {"H200", "h200-sxm-141gb"},
    {"B200", "b200"},
    {"AMD MI300X", "mi300x"},
    {"H100 PCIe", "h100-pcie-80gb"},
    {"GB200", "gb200"},
    {"H100 SXM", "h100-sxm5-80gb"},
    {"H100 NVL (NVLink bridge", "h100-nvl-94gb"},
};

// The multi-node rows run on AWS p5en / p6-b200, 8 x 400 Gb/s EFA per node (efa-p5), or on
// HGX H100 with 8 x 400 Gb/s InfiniBand NDR (ib-ndr-400). Single-node rows never touch the
// network; any entry serves.
std::string NetworkFor(const std::string& interconnect, double nodes) {
  if (nodes <= 1) return "ib-ndr-400";
  if (interconnect.find("EFA") != std::string::npos) return "efa-p5";
  return interconnect.find("InfiniBand") != std::string::npos ? "ib-ndr-400" : "";
}

// The row ran the ring with NVLS switched off (NCCL_NVLS_ENABLE=0) on a GPU that has it.
bool RanRingWithoutNvls(const nlohmann::json& e) {
  return e["nccl_algo"].is_string() && e["nccl_algo"].get<std::string>() == "Ring";
}

// How the row's benchmark ran its ranks, from its tool line: one process driving several GPUs
// (nccl-tests -g N with N > 1: one thread launches every GPU's kernel, which adds time to small
// messages), one process per GPU (nccl-tests -g 1 under MPI: NCCL's kernels alone, inside one
// node or across nodes), torch.distributed (all_reduce_bench.py: one process per GPU, each call
// issued and timed from Python, as a training framework issues it), or not stated.
const char* LaunchStyle(const std::string& tool, double nodes) {
  if (tool.find("all_reduce_bench") != std::string::npos) return "torch.distributed script";
  if (tool.find("-g 1") != std::string::npos) {
    return nodes > 1 ? "nccl-tests, a process per GPU, across nodes"
                     : "nccl-tests, a process per GPU, one node";
  }
  if (tool.find("-g ") != std::string::npos) return "nccl-tests, one process for all GPUs";
  return "not stated";
}

struct Row {
  std::string id;
  double bytes = 0;
  double ratio = 0;  // predicted / measured
  const char* style = "";
  double error() const { return std::abs(ratio - 1.0); }
};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

TEST(CollectiveModel, PublishedMeasurements) {
  Expected<HardwareDb> db = LoadHardwareDb({});
  ASSERT_TRUE(db.ok()) << db.status().message();
  Expected<nlohmann::json> doc = ReadJsonFile(BuiltinCalibrationDir() + "/collectives.json");
  ASSERT_TRUE(doc.ok()) << doc.status().message();

  std::vector<Row> rows;
  std::vector<std::string> skipped;
  for (const nlohmann::json& e : (*doc)["collectives"]) {
    const std::string id = e["id"].get<std::string>();
    auto skip = [&](const char* why) { skipped.push_back(id + ": " + why); };
    Collective c;
    if (!e["collective"].is_string() ||
        !ParseCollectiveName(e["collective"].get<std::string>(), &c)) {
      skip("collective is not one gpuplan models");
      continue;
    }
    if (!e["message_size_bytes"].is_number() ||
        !(e["busbw_GBps"].is_number() || (e.contains("time_us") && e["time_us"].is_number())) ||
        !e["num_gpus"].is_number()) {
      skip("no message size, busbw or GPU count");
      continue;
    }
    const double bytes = e["message_size_bytes"].get<double>();
    const double n = e["num_gpus"].get<double>();
    const double nodes = e["num_nodes"].is_number() ? e["num_nodes"].get<double>() : 1.0;
    const double per_node =
        e["gpus_per_node"].is_number() ? e["gpus_per_node"].get<double>() : n / nodes;
    const std::string gpu_type = e["gpu_type"].is_string() ? e["gpu_type"].get<std::string>() : "";
    const GpuMatch* match =
        std::find_if(std::begin(kGpus), std::end(kGpus),
                     [&](const GpuMatch& g) { return gpu_type.rfind(g.prefix, 0) == 0; });
    const std::string net_id = NetworkFor(e["interconnect"].get<std::string>(), nodes);
    if (match == std::end(kGpus) || net_id.empty()) {
      skip("GPU type or network not in the hardware database");
      continue;
    }
    const GpuSpec* gpu = db->FindGpu(match->gpu_id);
    const NetworkSpec* net = db->FindNetwork(net_id);
    ASSERT_NE(gpu, nullptr) << match->gpu_id;
    ASSERT_NE(net, nullptr) << net_id;
    const ClusterLinks links = ResolveLinks(*gpu, *net, static_cast<int64_t>(per_node));
    GroupLink g = PlaceGroup(links, static_cast<int64_t>(n), 1);
    if (RanRingWithoutNvls(e)) g.intra_nvls_bytes_per_s = 0;
    // The printed time where the row has it (small messages print busbw as 0.00), else the
    // time nccl-tests' busbw stands for.
    const double busbw = e["busbw_GBps"].get<double>() * 1e9;
    const double measured = e.contains("time_us") && e["time_us"].is_number()
                                ? e["time_us"].get<double>() * 1e-6
                                : bytes * GetCollectiveInfo(c).bus_factor(n) / busbw;
    const double predicted = CollectiveSeconds(c, bytes, g);
    std::printf("  %s: predicted / measured %.3f (measured %.1f us)\n", id.c_str(),
                predicted / measured, measured * 1e6);
    rows.push_back({id, bytes, predicted / measured,
                    LaunchStyle(e["tool"].is_string() ? e["tool"].get<std::string>() : "", nodes)});
  }

  // Size classes: < 64 KiB (latency), 64 KiB - 16 MiB (mixed), >= 16 MiB (bandwidth).
  std::vector<double> small, medium, large, all;
  for (const Row& r : rows) {
    all.push_back(r.error());
    (r.bytes < 65536.0 ? small : r.bytes < 16777216.0 ? medium : large).push_back(r.error());
  }
  std::printf("collective rows used: %zu, skipped: %zu\n", rows.size(), skipped.size());
  for (const std::string& s : skipped) std::printf("  skipped %s\n", s.c_str());
  std::printf("| size class | rows | median abs error |\n");
  std::printf("| < 64 KiB | %zu | %.1f%% |\n", small.size(), 100 * Median(small));
  std::printf("| 64 KiB - 16 MiB | %zu | %.1f%% |\n", medium.size(), 100 * Median(medium));
  std::printf("| >= 16 MiB | %zu | %.1f%% |\n", large.size(), 100 * Median(large));
  std::printf("| all | %zu | %.1f%% |\n", all.size(), 100 * Median(all));
  // Below 16 MiB, where latency counts, by how the benchmark ran its ranks: the median of
  // predicted / measured (below 1: predicted too fast).
  std::printf("| launch style (< 16 MiB) | rows | median predicted / measured |\n");
  for (const char* style :
       {"nccl-tests, a process per GPU, one node", "nccl-tests, a process per GPU, across nodes",
        "nccl-tests, one process for all GPUs", "torch.distributed script", "not stated"}) {
    std::vector<double> ratios;
    for (const Row& r : rows) {
      if (r.bytes < 16777216.0 && std::string(r.style) == style) ratios.push_back(r.ratio);
    }
    std::printf("| %s | %zu | %.2f |\n", style, ratios.size(), Median(ratios));
  }
  ASSERT_GE(rows.size(), 60u);
  // What holds today (docs/COST_MODEL.md): large messages are bandwidth-bound and within 10%,
  // the overall median within issue 16's 15%. Small and medium messages are the weak classes:
  // the latency is a framework's call (torch.distributed, or one process launching all GPUs),
  // which inside one node is about twice what nccl-tests measures with a process per GPU.
  EXPECT_LE(Median(large), 0.10);
  EXPECT_LE(Median(all), 0.15);
}

}  // namespace
}  // namespace gpuplan
