#include "simulator/topology.h"

#include <algorithm>

namespace gpuplan {

ClusterLinks ResolveLinks(const GpuSpec& gpu, const NetworkSpec& net, int64_t gpus_per_node,
                          const MeasuredRates* measured) {
  ClusterLinks l;
  l.measured = measured;
  l.gpus_per_node = static_cast<double>(std::max<int64_t>(1, gpus_per_node));
  l.scaleup_kind = gpu.scaleup_kind;
  l.scaleup_domain_gpus = std::max(1, gpu.scaleup_domain_gpus);
  l.scaleup_busbw = gpu.scaleup_bytes_per_s * gpu.scaleup_collective_efficiency;
  l.scaleup_nvls_bytes_per_s = gpu.scaleup_bytes_per_s * gpu.scaleup_nvls_efficiency;
  l.pcie_busbw = gpu.pcie_bytes_per_s * kPcieCollectiveEfficiency;
  // A host's ranks (the cpu device) get PCIe's latency: no host measurement is built in, and a
  // profile's MPI fits replace it (MeasuredRates).
  l.intra_latency_s = gpu.scaleup_kind == "none" || gpu.HostDevice() ? kPcieStepLatencySeconds
                                                                     : kNvlinkStepLatencySeconds;
  l.network_bytes_per_s = net.bytes_per_s_per_gpu * net.collective_efficiency;
  l.network_latency_s = net.latency_s;
  l.network_hop_latency_s = net.hop_latency_s;
  if (!net.measured_busbw.nodes.empty()) l.network_measured = &net.measured_busbw;
  return l;
}

std::array<LayoutGroup, kLayoutGroupCount> LayoutGroups(const ParallelSpec& par) {
  const int64_t etp = par.ExpertTp();
  std::array<LayoutGroup, kLayoutGroupCount> g;
  g[kTpGroup] = {"tp", par.tp, 1};
  g[kEtpGroup] = {"etp", etp, 1};
  g[kCpGroup] = {"cp", par.cp, par.tp};
  g[kEpGroup] = {"ep", par.ep, etp};
  g[kDpGroup] = {"dp*cp", par.dp * par.cp, par.tp};
  g[kExpertDpGroup] = {"expert dp", par.ExpertDp(), etp * par.ep};
  g[kPpGroup] = {"pp", par.pp, par.tp * par.cp * par.dp};
  g[kShardGroup] = {"shard (dp/dp_replicate*cp)", par.ShardRanks(), par.tp};
  g[kReplicateGroup] = {"dp_replicate", par.dp_replicate, par.tp * par.ShardRanks()};
  return g;
}

bool GroupTilesNodes(int64_t gpus_per_node, int64_t size, int64_t stride) {
  const int64_t node = std::max<int64_t>(1, gpus_per_node);
  const int64_t n = std::max<int64_t>(1, size);
  const int64_t s = std::max<int64_t>(1, stride);
  if (n == 1) return true;
  const int64_t span = n * s;  // consecutive ranks covering the group and its interleaved peers
  if (span <= node) return node % span == 0;               // whole blocks of s groups per node
  if (s < node) return node % s == 0 && span % node == 0;  // each node: node/s members of s groups
  return true;  // members at least a node apart: one per node, every group alike
}

std::optional<LayoutGroup> UntiledGroup(const ParallelSpec& par, int64_t gpus_per_node) {
  for (const LayoutGroup& g : LayoutGroups(par)) {
    if (!GroupTilesNodes(gpus_per_node, g.size, g.stride)) return g;
  }
  return std::nullopt;
}

GroupLink PlaceGroup(const ClusterLinks& links, const LayoutGroup& group) {
  return PlaceGroup(links, group.size, group.stride);
}

GroupLink PlaceGroup(const ClusterLinks& links, int64_t size, int64_t stride) {
  GroupLink g;
  const double n = static_cast<double>(std::max<int64_t>(1, size));
  const double s = static_cast<double>(std::max<int64_t>(1, stride));
  g.ranks = n;
  // Members of the group that share a node: the node holds gpus_per_node consecutive ranks.
  g.ranks_per_node = s >= links.gpus_per_node ? 1.0 : std::min(n, links.gpus_per_node / s);
  const double span = g.ranks_per_node * s;  // consecutive ranks the node-local part covers

  // Intra-node bandwidth depends on the fabric and on whether the members share a domain.
  double intra = links.pcie_busbw;
  const bool in_domain = span <= links.scaleup_domain_gpus;
  if ((links.scaleup_kind == "nvswitch" || links.scaleup_kind == "shared-memory") && in_domain) {
    intra = links.scaleup_busbw;
    if (g.ranks_per_node >= 2.0) g.intra_nvls_bytes_per_s = links.scaleup_nvls_bytes_per_s;
  } else if (links.scaleup_kind == "xgmi" && in_domain) {
    // Fully connected mesh: a rank reaches each peer over one link, so the busbw of a group grows
    // with its size: measured 47.7 GB/s for 2 MI300X and 312.9 GB/s for 8 (stas00/ml-engineering
    // network/README.md; hardware-db/calibration/collectives.json mle_mi300x_2gpu_allreduce_4GiB,
    // mle_mi300x_8gpu_allreduce_4GiB).
    intra = links.scaleup_busbw * (g.ranks_per_node - 1.0) / (links.scaleup_domain_gpus - 1.0);
  } else if (links.scaleup_kind == "nvlink-bridge" && g.ranks_per_node == 2.0 && s == 1.0) {
    intra = links.scaleup_busbw;  // a bridged pair
  }
  g.intra_bytes_per_s = std::max(intra, 1.0);
  g.intra_latency_s = links.intra_latency_s;
  g.inter_bytes_per_s = std::max(links.network_bytes_per_s, 1.0);
  g.inter_latency_s = links.network_latency_s;
  g.inter_hop_latency_s = links.network_hop_latency_s;
  g.measured = links.measured;
  g.network_measured = links.network_measured;
  return g;
}

}  // namespace gpuplan
