#include "simulator/collective.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

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

// Latency of a collective as NCCL's tuning model counts it (NVIDIA/nccl src/graph/tuning.cc,
// ncclTopoTuneModel: baseLat + nIntraSteps x intraLat + nInterSteps x interLat), over n ranks on
// `nodes` nodes with r = n / nodes per node. A collective that spans nodes pays the network's
// once-per-collective part (NetworkBaseLatency) beside its hops.
struct Latency {
  // Ring: n - 1 hops in sequence, nodes - 1 of them through the network, both ways for
  // all-reduce ((nsteps - nInterSteps) intraLat + nInterSteps interLat). It grows with the ring,
  // so a small shard over many nodes is latency-bound.
  double ring = 0;
  // Tree: (r - 1) steps inside the node and log2(nodes) levels across nodes, both ways for
  // all-reduce (2((nRanks/nNodes - 1) intraLat + log2(nNodes) interLat)). All-to-all's
  // concurrent sends take the same form.
  double tree = 0;
  // PAT (reduce-scatter and all-gather, NCCL 2.23+), only when each rank is on a node of its own
  // (ncclPatEnable: nNodes == nRanks): 8 us + log2i(nNodes) x interLat / 3.5 + 2.8 us per rank
  // (tuning.cc, NCCL_ALGO_PAT). Negative where NCCL does not enable it.
  double pat = -1;
  // The once-per-collective part that ring and tree include: kCollectiveBaseLatencySeconds or,
  // across nodes, the network's (NetworkBaseLatency), whichever is larger. Protocols scale the
  // rest (the steps), not this.
  double base = 0;
  // ring or tree latency (either includes `base`) with its steps run at `step_factor`.
  double WithSteps(double latency, double step_factor) const {
    return base + step_factor * (latency - base);
  }
};

// The part of a collective's network latency paid once, whatever the number of hops: what the
// smallest two-node all-reduce (two network hops, 2 x inter_latency_s end to end) leaves beyond
// its two hops. It stands for NCCL's baseLat and the launch that nccl-tests' timing includes.
double NetworkBaseLatency(const GroupLink& link) {
  return 2.0 * std::max(0.0, link.inter_latency_s - link.inter_hop_latency_s);
}

Latency CollectiveLatency(const CollectiveInfo& info, double n, double nodes,
                          const GroupLink& link) {
  const double multiplier = info.latency_steps_multiplier;
  const double intra_s = link.intra_latency_s;
  const double hop_s = link.inter_hop_latency_s;
  const double base =
      std::max(kCollectiveBaseLatencySeconds, nodes > 1.0 ? NetworkBaseLatency(link) : 0.0);
  const double levels = nodes > 1.0 ? std::ceil(std::log2(nodes)) : 0.0;
  const bool pat =
      (info.kind == Collective::kReduceScatter || info.kind == Collective::kAllGather) &&
      nodes > 1.0 && n == nodes;
  return {base + multiplier * ((n - nodes) * intra_s + (nodes - 1.0) * hop_s),
          base + multiplier * ((n / nodes - 1.0) * intra_s + levels * hop_s),
          pat ? kPatBaseLatencySeconds + std::floor(std::log2(nodes)) * hop_s / 3.5 +
                    n * kPatLatencyPerRankSeconds
              : -1.0,
          base};
}

// Calls f(latency, busbw_fraction) for each way NCCL can run `c`: every protocol of
// kCollectiveProtocols on the ring (its steps' latency x step_latency_factor, at busbw_fraction of
// the ring's bus bandwidth), and across nodes for all-reduce also on a double binary tree at
// kTreeBusbwFraction of that bandwidth; reduce-scatter and all-gather over one rank per node also
// with PAT (Simple only, at kPatBusbwFraction). Each way takes latency + transfer / busbw_fraction,
// a line in the transfer time.
template <typename F>
void ForEachAlgorithmAndProtocol(Collective c, bool across_nodes, const Latency& lat, F f) {
  const bool tree = c == Collective::kAllReduce && across_nodes;
  for (const CollectiveProtocol& p : kCollectiveProtocols) {
    f(lat.WithSteps(lat.ring, p.step_latency_factor), p.busbw_fraction);
    if (tree) {
      f(lat.WithSteps(lat.tree, p.step_latency_factor), kTreeBusbwFraction * p.busbw_fraction);
    }
  }
  if (lat.pat >= 0.0) f(lat.pat, kPatBusbwFraction);
}

// Seconds of a ring collective (all-reduce, all-gather, reduce-scatter, broadcast) whose
// transfer at the ring's bus bandwidth takes `transfer` seconds: the fastest way NCCL can run it.
double RingOrTreeSeconds(Collective c, bool across_nodes, const Latency& lat, double transfer) {
  double best = std::numeric_limits<double>::infinity();
  ForEachAlgorithmAndProtocol(c, across_nodes, lat, [&](double latency, double fraction) {
    best = std::min(best, latency + transfer / fraction);
  });
  return best;
}

// The transfer time that RingOrTreeSeconds turns into `seconds`: the inverse of that minimum of
// increasing lines, which is the largest of the lines' own solutions. Not positive when the
// latency alone exceeds `seconds`.
double TransferSeconds(Collective c, bool across_nodes, const Latency& lat, double seconds) {
  double transfer = -std::numeric_limits<double>::infinity();
  ForEachAlgorithmAndProtocol(c, across_nodes, lat, [&](double latency, double fraction) {
    transfer = std::max(transfer, fraction * (seconds - latency));
  });
  return transfer;
}

// Per-GPU network bandwidth of collective `c` for the group `link` from a measured busbw table:
// the table's full-node ring with as many ranks (ranks / gpus_per_node nodes, at least the
// first measured count), with the latency that measurement contained taken out: its ring of n
// ranks took S·factor/busbw seconds for the table's message size S; the model adds its own
// latency to the bandwidth term, so the bandwidth is the one that gives that time with that
// latency. 0 when the table does not list `c`.
double MeasuredNetworkTransferRate(Collective c, const MeasuredNetworkBusbw& table,
                                   const GroupLink& link) {
  const CollectiveInfo& info = GetCollectiveInfo(c);
  const double nodes = std::max(link.ranks / table.gpus_per_node, table.nodes.front());
  const double busbw = MeasuredNetworkBytesPerSecond(table, info.name, nodes);
  if (busbw <= 0.0 || table.message_bytes <= 0.0) return busbw;
  const double n = table.gpus_per_node * nodes;
  const double volume = table.message_bytes * info.bus_factor(n);
  const Latency lat = CollectiveLatency(info, n, nodes, link);
  const double transfer = TransferSeconds(c, true, lat, volume / (busbw * table.gpus_per_node));
  // A measurement faster than the latency alone would imply an unbounded rate: keep the table's.
  return transfer > 0.0 ? volume / transfer / table.gpus_per_node : busbw;
}

// CollectiveSeconds before the validation correction.
double ModelSeconds(Collective c, double bytes, const GroupLink& measured_link) {
  const double n = measured_link.ranks;
  if (n <= 1.0 || bytes <= 0.0) return 0.0;
  const CollectiveInfo& info = GetCollectiveInfo(c);
  const double nodes = measured_link.nodes();
  const bool across_nodes = nodes > 1.0;
  GroupLink link = measured_link;
  if (const CollectiveFit* fit = MeasuredFit(c, across_nodes ? link.ranks_per_node : n, link)) {
    if (!across_nodes) return fit->Seconds(bytes);
    link.intra_bytes_per_s = fit->busbw_bytes_per_s;
  }
  if (across_nodes && link.network_measured != nullptr) {
    const double measured_network = MeasuredNetworkTransferRate(c, *link.network_measured, link);
    if (measured_network > 0.0) link.inter_bytes_per_s = measured_network;
  }
  if (c == Collective::kSendRecv) {
    return PointToPointLatencySeconds(link) +
           bytes / (across_nodes ? link.inter_bytes_per_s : link.intra_bytes_per_s);
  }
  const Latency lat = CollectiveLatency(info, n, nodes, link);
  if (c == Collective::kAllToAll && across_nodes) {
    // Each rank sends bytes/n to every peer: (ranks_per_node - 1) shares over the intra-node
    // fabric and (n - ranks_per_node) shares through its own NIC; the two proceed concurrently.
    const double share = bytes / n;
    const double intra = share * (link.ranks_per_node - 1.0) / link.intra_bytes_per_s;
    const double inter = share * (n - link.ranks_per_node) / link.inter_bytes_per_s;
    return lat.tree + std::max(intra, inter);
  }
  const double transfer = bytes * info.bus_factor(n) / GroupBusBandwidth(link);
  const double seconds = RingOrTreeSeconds(c, across_nodes, lat, transfer);
  if (c == Collective::kAllReduce && !across_nodes && link.intra_nvls_bytes_per_s > 0.0 &&
      bytes >= kNvlsMinBytes) {
    // NVLS: the NVSwitch reduces in the switch, so every GPU sends its buffer once and receives
    // the sum once; the measured algbw (GpuSpec::scaleup_nvls_efficiency) is nearly independent
    // of the GPU count. It runs the Simple protocol. NCCL picks it over the ring when it is faster.
    return std::min(seconds, lat.WithSteps(lat.ring, kSimpleLatencyFactor) +
                                 bytes / link.intra_nvls_bytes_per_s);
  }
  return seconds;
}

}  // namespace

double PointToPointLatencySeconds(const GroupLink& link) {
  if (link.nodes() > 1.0) return std::max(kCollectiveBaseLatencySeconds, link.inter_latency_s);
  return kCollectiveBaseLatencySeconds + link.intra_latency_s;
}

double CollectiveSeconds(Collective c, double bytes, const GroupLink& link) {
  const double t = ModelSeconds(c, bytes, link);
  return link.measured != nullptr ? t * link.measured->communication_time_factor : t;
}

}  // namespace gpuplan
