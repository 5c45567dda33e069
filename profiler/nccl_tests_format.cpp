#include "profiler/nccl_tests_format.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "common/str_format.h"

namespace gpuplan {
namespace {

bool Reduces(Collective c) {
  return c == Collective::kAllReduce || c == Collective::kReduceScatter;
}

std::string Table(Collective kind, int ranks, std::span<const CollectiveSample> samples,
                  const ElementType& type) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof(line), "# %s, %d %s, %s, out-of-place\n",
                std::string(GetCollectiveInfo(kind).name).c_str(), ranks,
                Noun(ranks, "rank", "ranks").c_str(), type.name);
  out += line;
  out += "#       size         count      type   redop    root     time   algbw   busbw\n";
  out += "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)\n";
  double busbw_sum = 0;
  int rows = 0;
  for (const CollectiveSample& s : samples) {
    if (s.kind != kind || s.ranks != ranks) continue;
    std::snprintf(line, sizeof(line), "%12.0f  %12.0f  %8s  %6s  %6d  %7.2f  %6.2f  %6.2f\n",
                  s.bytes, s.bytes / type.bytes, type.name, Reduces(kind) ? "sum" : "none",
                  kind == Collective::kBroadcast ? 0 : -1, s.seconds * 1e6,
                  s.AlgBytesPerSecond() / 1e9, s.BusBytesPerSecond() / 1e9);
    out += line;
    busbw_sum += s.BusBytesPerSecond() / 1e9;
    ++rows;
  }
  std::snprintf(line, sizeof(line), "# Avg bus bandwidth    : %g\n#\n",
                rows > 0 ? busbw_sum / rows : 0.0);
  out += line;
  return out;
}

}  // namespace

std::string FormatNcclTests(std::span<const CollectiveSample> samples, const ElementType& type) {
  std::vector<std::pair<Collective, int>> groups;
  for (const CollectiveSample& s : samples) {
    const std::pair<Collective, int> key{s.kind, s.ranks};
    if (std::find(groups.begin(), groups.end(), key) == groups.end()) groups.push_back(key);
  }
  std::string out;
  for (const auto& [kind, ranks] : groups) out += Table(kind, ranks, samples, type);
  return out;
}

}  // namespace gpuplan
