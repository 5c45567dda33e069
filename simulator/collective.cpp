#include "simulator/collective.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "hardware-db/hardware.h"
#include "simulator/calibration.h"

namespace gpuplan {
namespace {

double AllReduceFactor(double n) { return 2.0 * (n - 1.0) / n; }
double GatherFactor(double n) { return (n - 1.0) / n; }
double OneFactor(double) { return 1.0; }

// Latency multipliers: all-reduce is a reduce-scatter followed by an all-gather (2 passes).
constexpr std::array<CollectiveInfo, kCollectiveCount> kCollectives = {{
    {Collective::kAllReduce, "all_reduce", &AllReduceFactor, 2.0},
    {Collective::kAllGather, "all_gather", &GatherFactor, 1.0},
    {Collective::kReduceScatter, "reduce_scatter", &GatherFactor, 1.0},
    {Collective::kAllToAll, "alltoall", &GatherFactor, 1.0},
    {Collective::kBroadcast, "broadcast", &OneFactor, 1.0},
    {Collective::kSendRecv, "sendrecv", &OneFactor, 1.0},
}};

}  // namespace

const CollectiveInfo& GetCollectiveInfo(Collective c) {
  return kCollectives[static_cast<size_t>(c)];
}

bool ParseCollectiveName(std::string_view name, Collective* out) {
  for (const CollectiveInfo& info : kCollectives) {
    if (info.name == name) {
      *out = info.kind;
      return true;
    }
  }
  return false;
}

double MeasuredNetworkBytesPerSecond(const MeasuredNetworkBusbw& table, std::string_view name,
                                     double nodes) {
  const std::vector<double>* busbw = table.Find(name);
  if (busbw == nullptr || table.nodes.empty() || table.gpus_per_node <= 0) return 0.0;
  const std::vector<double>& x = table.nodes;
  const std::vector<double>& y = *busbw;
  double value = y.front();
  if (x.size() > 1 && nodes > x.front()) {
    // The segment holding `nodes`, or the last one beyond the largest measured count.
    size_t i = 1;
    while (i + 1 < x.size() && nodes > x[i]) ++i;
    const double slope = std::log(y[i] / y[i - 1]) / std::log(x[i] / x[i - 1]);
    const bool beyond = nodes > x.back();
    value =
        beyond && slope > 0.0 ? y.back() : y[i - 1] * std::exp(slope * std::log(nodes / x[i - 1]));
  }
  return value / table.gpus_per_node;
}

double GroupBusBandwidth(const GroupLink& link) {
  if (link.nodes() <= 1.0) return link.intra_bytes_per_s;
  const double network = link.ranks_per_node * link.inter_bytes_per_s;
  return link.ranks_per_node > 1 ? std::min(link.intra_bytes_per_s, network) : network;
}

namespace {

// The measured fit that applies to collective `c` over `ranks` GPUs of one node, or nullptr.
const CollectiveFit* MeasuredFit(Collective c, double ranks, const GroupLink& link) {
  if (link.measured == nullptr) return nullptr;
  return link.measured->FindCollective(c, c == Collective::kSendRecv ? 2.0 : ranks);
}

// CollectiveSeconds before the validation correction.
double ModelSeconds(Collective c, double bytes, const GroupLink& measured_link) {
  const double n = measured_link.ranks;
  if (n <= 1.0 || bytes <= 0.0) return 0.0;
  const CollectiveInfo& info = GetCollectiveInfo(c);
  const double nodes = measured_link.nodes();
  GroupLink link = measured_link;
  if (const CollectiveFit* fit = MeasuredFit(c, nodes <= 1.0 ? n : link.ranks_per_node, link)) {
    if (nodes <= 1.0) {
      return fit->alpha_s + bytes * info.bus_factor(n) / fit->busbw_bytes_per_s;
    }
    link.intra_bytes_per_s = fit->busbw_bytes_per_s;
  }
  if (nodes > 1.0 && link.network_measured != nullptr) {
    const double measured_network = MeasuredNetworkBytesPerSecond(
        *link.network_measured, info.name, std::max(nodes, link.fabric_nodes));
    if (measured_network > 0.0) link.inter_bytes_per_s = measured_network;
  }
  const double intra_steps = (link.ranks_per_node - 1.0) * info.latency_steps_multiplier;
  const double inter_steps =
      nodes > 1.0 ? std::ceil(std::log2(nodes)) * info.latency_steps_multiplier : 0.0;
  double latency = intra_steps * link.intra_latency_s + inter_steps * link.inter_latency_s;
  if (c == Collective::kSendRecv)
    latency = nodes > 1.0 ? link.inter_latency_s : link.intra_latency_s;

  if (c == Collective::kAllToAll && nodes > 1.0) {
    // Each rank sends bytes/n to every peer: (ranks_per_node - 1) shares over the intra-node
    // fabric and (n - ranks_per_node) shares through its own NIC; the two proceed concurrently.
    const double share = bytes / n;
    const double intra = share * (link.ranks_per_node - 1.0) / link.intra_bytes_per_s;
    const double inter = share * (n - link.ranks_per_node) / link.inter_bytes_per_s;
    return latency + std::max(intra, inter);
  }
  if (c == Collective::kSendRecv) {
    const double bw = nodes > 1.0 ? link.inter_bytes_per_s : link.intra_bytes_per_s;
    return latency + bytes / bw;
  }
  const double ring = latency + bytes * info.bus_factor(n) / GroupBusBandwidth(link);
  if (c == Collective::kAllReduce && nodes <= 1.0 && link.intra_nvls_bytes_per_s > 0.0 &&
      bytes >= kNvlsMinBytes) {
    // NVLS: the NVSwitch reduces in the switch, so every GPU sends its buffer once and receives
    // the sum once; the measured algbw (GpuSpec::scaleup_nvls_efficiency) is nearly independent
    // of the GPU count. NCCL picks it over the ring when it is faster.
    return std::min(ring, latency + bytes / link.intra_nvls_bytes_per_s);
  }
  return ring;
}

}  // namespace

double CollectiveSeconds(Collective c, double bytes, const GroupLink& link) {
  const double t = ModelSeconds(c, bytes, link);
  return link.measured != nullptr ? t * link.measured->communication_time_factor : t;
}

}  // namespace gpuplan
