// Where each parallel group's ranks sit, and which links they use.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "hardware-db/hardware.h"
#include "simulator/collective.h"
#include "simulator/job.h"

namespace gpuplan {

/// Link facts of one cluster shape (GPU type x network x GPUs per node).
struct ClusterLinks {
  double gpus_per_node = 1;
  std::string_view scaleup_kind;  ///< GpuSpec::scaleup_kind
  double scaleup_domain_gpus = 1;
  double scaleup_busbw = 0;                 ///< achievable ring busbw of a full scale-up domain
  double scaleup_nvls_bytes_per_s = 0;      ///< NVLS all-reduce algbw in the domain; 0: no NVLS
  double pcie_busbw = 0;                    ///< achievable busbw when collectives cross PCIe
  double intra_latency_s = 0;               ///< per ring step inside a node
  double network_bytes_per_s = 0;           ///< per GPU, line rate x collective efficiency
  double network_latency_s = 0;             ///< NetworkSpec::latency_s
  double network_hop_latency_s = 0;         ///< NetworkSpec::hop_latency_s
  const MeasuredRates* measured = nullptr;  ///< copied into every GroupLink (CollectiveSeconds)
  /// The network's measured busbw table, or nullptr; copied into every GroupLink.
  const MeasuredNetworkBusbw* network_measured = nullptr;
};

/// Per ring step (LL) inside an NVLink/NVSwitch node, as a training framework's collectives pay
/// it. CALIBRATED with kCollectiveBaseLatencySeconds (collective.h; docs/METRICS.md): an 8-GPU
/// all-reduce issued from torch.distributed or by one process for all GPUs takes ~40 us for
/// small messages (10 + 14 x 2 us; collectives.json mle_a100_8gpu_allreduce_32768, the H200 and
/// B200 all_reduce_bench rows). NCCL's own figure is 0.6 us (tuning.cc hwLat, NVLink ring LL);
/// nccl-tests with a process per GPU measures 13.7 us for 8 H100 (dgxc_h100_np8_allreduce_8B).
inline constexpr double kNvlinkStepLatencySeconds = 2.0e-6;
/// PCIe peer transfers go through switches or the host bridge: a stated 5 us per step.
inline constexpr double kPcieStepLatencySeconds = 5.0e-6;
/// Fraction of PCIe x16 one-direction bandwidth collectives reach (stated default: nccl-tests on
/// PCIe-only boxes reach 70-80% of the link rate when P2P works).
inline constexpr double kPcieCollectiveEfficiency = 0.75;

/// One kind of communicator of a layout: `size` ranks whose consecutive members are `stride`
/// ranks apart in the global rank order.
struct LayoutGroup {
  std::string_view name;  ///< as the job spec's parallelism fields name it ("tp", "dp*cp", ...)
  int64_t size = 1;
  int64_t stride = 1;
};

/// Index of each group in LayoutGroups().
enum LayoutGroupIndex {
  kTpGroup,
  kEtpGroup,
  kCpGroup,
  kEpGroup,
  kDpGroup,
  kExpertDpGroup,
  kPpGroup,
  kShardGroup,
  kReplicateGroup,
  kLayoutGroupCount
};

/// The communicators of `par` as Megatron-LM orders ranks (parallel_state.py): tp fastest, then
/// cp, then dp, then pp; expert layers regroup a stage's tp x cp x dp ranks as etp fastest, then
/// ep, then expert-dp; an HSDP shard group is the dp/dp_replicate x cp ranks next to each other,
/// and a rank's replicas are one shard group apart.
std::array<LayoutGroup, kLayoutGroupCount> LayoutGroups(const ParallelSpec& par);

/// Whether every group of `size` ranks at `stride` has the same number of members in each node
/// of `gpus_per_node` consecutive ranks it touches, so that no group straddles a node (scale-up
/// domain) boundary with a few members. Always true when gpus_per_node and the layout are powers
/// of two; an NVL72 rack (72 GPUs) does not hold whole groups of 16.
bool GroupTilesNodes(int64_t gpus_per_node, int64_t size, int64_t stride);

/// The first group of `par` that does not tile nodes of `gpus_per_node` GPUs, or nullopt when
/// every one does. The job check refuses such a layout and the planner skips it.
std::optional<LayoutGroup> UntiledGroup(const ParallelSpec& par, int64_t gpus_per_node);

/// `measured`: the profile's fits for `gpu`, or nullptr (DeviceRates::measured).
ClusterLinks ResolveLinks(const GpuSpec& gpu, const NetworkSpec& net, int64_t gpus_per_node,
                          const MeasuredRates* measured = nullptr);

/// The link model of a communicator of `size` ranks whose consecutive members are `stride` ranks
/// apart in the global rank order (LayoutGroups). A node is the scale-up domain: a server's
/// GPUs, or a rack-scale template's whole NVLink domain. Precondition: GroupTilesNodes.
GroupLink PlaceGroup(const ClusterLinks& links, int64_t size, int64_t stride);
GroupLink PlaceGroup(const ClusterLinks& links, const LayoutGroup& group);

}  // namespace gpuplan
