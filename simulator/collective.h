// Collective communication time, with nccl-tests' definitions of size, algbw and busbw
// (NVIDIA/nccl-tests doc/PERFORMANCE.md): algbw = size / time, busbw = algbw * factor(n).
#pragma once

#include <string_view>

namespace gpuplan {

struct MeasuredRates;
struct MeasuredNetworkBusbw;

/// The collectives gpuplan models. Order indexes kCollectives.
enum class Collective {
  kAllReduce = 0,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kSendRecv
};

/// One row of the collective table: name as nccl-tests prints it, the busbw factor, and how many
/// sequential latency steps a ring (inside a node) / tree (across nodes) implementation takes.
struct CollectiveInfo {
  Collective kind;
  std::string_view name;
  /// busbw / algbw for n ranks (nccl-tests PERFORMANCE.md): all_reduce 2(n-1)/n; all_gather,
  /// reduce_scatter, alltoall (n-1)/n; broadcast, sendrecv 1.
  double (*bus_factor)(double n);
  /// Latency steps: ring steps per intra-node rank, tree levels across nodes (both x this).
  double latency_steps_multiplier;
};

/// The table of all collectives (one visible place for anything open-ended).
const CollectiveInfo& GetCollectiveInfo(Collective c);
/// Parses a CollectiveInfo::name ("all_reduce", ...); false when unknown.
bool ParseCollectiveName(std::string_view name, Collective* out);
inline constexpr int kCollectiveCount = 6;

/// Smallest all-reduce that NCCL runs with NVLS inside an NVSwitch node: the NCCL_DEBUG output
/// quoted with the 8x H200 measurement picked Ring LL up to 1 MiB and NVLS Simple from 2 MiB
/// (stas00/ml-engineering network/README.md; calibration/collectives.json
/// mle_h200_8gpu_allreduce_nvls_*).
inline constexpr double kNvlsMinBytes = 2.0 * 1024 * 1024;

/// Bus bandwidth of NCCL's tree all-reduce across nodes as a fraction of the ring's (NVIDIA/nccl
/// src/graph/tuning.cc, ncclTopoTuneModel: busBw * .9 for NCCL_ALGO_TREE).
inline constexpr double kTreeBusbwFraction = 0.9;

/// PAT, NCCL's Bruck-style reduce-scatter and all-gather for communicators with one rank per
/// node (NCCL 2.23+, on by default where ncclPatEnable allows it: nNodes == nRanks): its latency
/// is logarithmic in the nodes but for a small linear part, and it runs Simple at 0.75 of the
/// ring's bus bandwidth (NVIDIA/nccl src/graph/tuning.cc: latency 8 + log2i(nNodes) x
/// interLat / 3.5 + nRanks x 2.8 us; busBw *= .75 for NCCL_ALGO_PAT).
inline constexpr double kPatBaseLatencySeconds = 8e-6;
inline constexpr double kPatLatencyPerRankSeconds = 2.8e-6;
inline constexpr double kPatBusbwFraction = 0.75;

/// NCCL's protocols, as its tuning model weighs them (NVIDIA/nccl src/graph/tuning.cc): LL, which
/// stores 8 bytes (4 of data, 4 of flag) per line and polls the flags, reaches the receiver
/// soonest but moves data at a fraction of the link's rate; Simple, which moves whole buffers
/// and synchronises each step with a fence, reaches the full rate at a higher latency per step.
/// NCCL runs each collective with the protocol its model finds fastest, LL for small messages
/// and Simple for large ones; between them neither is efficient.
struct CollectiveProtocol {
  std::string_view name;
  /// × the latency of the collective's steps (ring or tree hops); the once-per-collective part
  /// (kCollectiveBaseLatencySeconds, the network's) is the same for every protocol, as NCCL's
  /// baseLat nearly is (6.6 us LL, 8.4 us Simple for the ring).
  double step_latency_factor;
  double busbw_fraction;  ///< × the group's bus bandwidth (Simple's)
};

/// The part of every collective's latency paid once, whatever its ranks: the kernel launch and
/// NCCL's base latency (tuning.cc baseLat, 6.6 us for ring LL) as a training framework issues
/// the call. CALIBRATED with kNvlinkStepLatencySeconds, kSimpleLatencyFactor and
/// kLlBusbwFraction on collectives.json (docs/METRICS.md); it lies between NCCL's baseLat and
/// the smallest all-reduce measured with a process per GPU (13.7 us for 8 B on 8 H100 SXM,
/// dgxc_h100_np8_allreduce_8B). A collective is never cheaper than this: a ring of two GPUs
/// takes it plus two steps, not two steps alone.
inline constexpr double kCollectiveBaseLatencySeconds = 10e-6;
/// Simple's step latency / LL's. CALIBRATED (docs/METRICS.md). NCCL's own table gives 3.4 us
/// against 0.6 us per NVLink ring step and 14 against 2.7 per network ring step.
inline constexpr double kSimpleLatencyFactor = 2.5;
/// LL's bus bandwidth / Simple's. CALIBRATED with kSimpleLatencyFactor (same rows). NCCL caps
/// LL at half the line (its flags) and at a per-channel rate (llMaxBws).
inline constexpr double kLlBusbwFraction = 0.2;

/// The protocols gpuplan chooses between (one visible table).
inline constexpr CollectiveProtocol kCollectiveProtocols[] = {
    {"LL", 1.0, kLlBusbwFraction},
    {"Simple", kSimpleLatencyFactor, 1.0},
};

/// How one communicator's ranks sit on the machine.
struct GroupLink {
  double ranks = 1;              ///< group size n
  double ranks_per_node = 1;     ///< members of this group inside one node
  double intra_bytes_per_s = 0;  ///< achievable busbw between members inside a node
  double intra_latency_s = 0;    ///< per ring step inside a node (LL)
  /// NVLS all-reduce algbw when the node-local members share one NVSwitch domain; 0: no NVLS.
  double intra_nvls_bytes_per_s = 0;
  double inter_bytes_per_s = 0;  ///< achievable per-GPU network bandwidth (line rate x eff.)
  /// One network crossing, end to end (NetworkSpec::latency_s): a send/recv across nodes.
  double inter_latency_s = 0;
  /// Each network hop of a collective's ring or tree (NetworkSpec::hop_latency_s, at most
  /// inter_latency_s); the rest of the two-crossing latency, 2 (inter_latency_s -
  /// inter_hop_latency_s), is paid once per collective that spans nodes.
  double inter_hop_latency_s = 0;
  /// Measured alpha-beta fits of this GPU type inside one node (a profile), or nullptr.
  const MeasuredRates* measured = nullptr;
  /// The network's measured busbw by node count (NetworkSpec::measured_busbw), or nullptr.
  const MeasuredNetworkBusbw* network_measured = nullptr;
  double nodes() const { return ranks / ranks_per_node; }
};

/// Per-GPU network bandwidth of collective `name` over `nodes` nodes (> 1) from a measured table:
/// busbw / gpus_per_node of the measurement, so a full-node group reproduces the measured busbw.
/// Between measured node counts the busbw is interpolated linearly in log(busbw) over
/// log(nodes) (a power law per segment); below the first count the first value holds; beyond the
/// last, the last segment's decline continues (a rise is never extrapolated). 0 when the table
/// has no series for `name`.
double MeasuredNetworkBytesPerSecond(const MeasuredNetworkBusbw& table, std::string_view name,
                                     double nodes);

/// Achievable bus bandwidth of the group for large messages. Inside one node: the intra-node
/// busbw. Across nodes, NCCL runs one ring per NIC rail; every ring leaves each node once, so a
/// node's egress carries ~2S for all-reduce over `ranks_per_node` NICs: busbw is
/// min(intra busbw, ranks_per_node x per-GPU network bandwidth).
double GroupBusBandwidth(const GroupLink& link);

/// Seconds for one collective of `bytes` (nccl-tests "size": the buffer for all-reduce, the
/// gathered output for all-gather, the input for reduce-scatter, the per-rank total for
/// all-to-all). time = latency + size * factor(n) / busbw.
/// With a measured fit (link.measured) for this collective and group size, a group inside one
/// node takes the fit's alpha + size * factor(n) / busbw instead (a send/recv hop: the 2-rank
/// sendrecv fit); a group spanning nodes takes the measured busbw of its node-local part
/// (ranks_per_node) as its intra-node bandwidth. A measured communication_time_factor
/// (validation corrections) multiplies the result. A group spanning nodes on a network with a
/// measured busbw table (link.network_measured) takes its per-GPU network bandwidth from the table
/// of the table's full-node ring with as many ranks as the group (MeasuredNetworkBytesPerSecond at
/// ranks / gpus_per_node nodes) when the table lists the collective.
/// All-to-all uses the per-destination split instead: the off-node share (n - ranks_per_node)/n
/// goes through the NIC. Latency (alpha), as NCCL's tuning model counts it: a ring of n ranks
/// takes n - 1 hops (2(n - 1) for all-reduce), nodes - 1 (2(nodes - 1)) of them at
/// link.inter_latency_s and the rest at link.intra_latency_s; across nodes an all-reduce takes the
/// faster of that ring and a tree of 2((ranks_per_node - 1) intra + ceil(log2(nodes)) inter)
/// latency at kTreeBusbwFraction of the bus bandwidth. Every collective pays, once, the larger of
/// kCollectiveBaseLatencySeconds and (across nodes) the network's once-per-collective part.
/// Each algorithm runs with the faster of the protocols (kCollectiveProtocols: LL at the steps'
/// latency and kLlBusbwFraction of the bandwidth, Simple at kSimpleLatencyFactor times the
/// steps' latency and the full bandwidth; NVLS runs Simple). All-to-all takes the tree's latency;
/// a send/recv PointToPointLatencySeconds.
double CollectiveSeconds(Collective c, double bytes, const GroupLink& link);

/// Latency of one message between two members of the group: inside a node,
/// kCollectiveBaseLatencySeconds plus one step (link.intra_latency_s); across nodes, one network
/// crossing (link.inter_latency_s, an end-to-end figure), at least kCollectiveBaseLatencySeconds.
double PointToPointLatencySeconds(const GroupLink& link);

}  // namespace gpuplan
