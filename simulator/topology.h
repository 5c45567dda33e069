// Where each parallel group's ranks sit, and which links they use.
#pragma once

#include <cstdint>

#include "hardware-db/hardware.h"
#include "simulator/collective.h"

namespace gpuplan {

/// Link facts of one cluster shape (GPU type x network x GPUs per node).
struct ClusterLinks {
  double gpus_per_node = 1;
  std::string_view scaleup_kind;  ///< GpuSpec::scaleup_kind
  double scaleup_domain_gpus = 1;
  double scaleup_busbw = 0;             ///< achievable ring busbw of a full scale-up domain
  double scaleup_nvls_bytes_per_s = 0;  ///< NVLS all-reduce algbw in the domain; 0: no NVLS
  double pcie_busbw = 0;                ///< achievable busbw when collectives cross PCIe
  double intra_latency_s = 0;           ///< per ring step inside a node
  double network_bytes_per_s = 0;       ///< per GPU, line rate x collective efficiency
  double network_latency_s = 0;
  const MeasuredRates* measured = nullptr;  ///< copied into every GroupLink (CollectiveSeconds)
  /// The network's measured busbw table, or nullptr; copied into every GroupLink.
  const MeasuredNetworkBusbw* network_measured = nullptr;
};

/// Per ring step inside an NVLink/NVSwitch node: an 8-GPU A100 all-reduce of 32 KiB takes
/// ~44 us over 14 ring steps (nccl-tests output in ml-engineering network/README.md,
/// calibration/collectives.json mle_a100_8gpu_allreduce_32768) -> ~3 us.
inline constexpr double kNvlinkStepLatencySeconds = 3.0e-6;
/// PCIe peer transfers go through switches or the host bridge: a stated 5 us per step.
inline constexpr double kPcieStepLatencySeconds = 5.0e-6;
/// Fraction of PCIe x16 one-direction bandwidth collectives reach (stated default: nccl-tests on
/// PCIe-only boxes reach 70-80% of the link rate when P2P works).
inline constexpr double kPcieCollectiveEfficiency = 0.75;

/// `measured`: the profile's fits for `gpu`, or nullptr (DeviceRates::measured).
ClusterLinks ResolveLinks(const GpuSpec& gpu, const NetworkSpec& net, int64_t gpus_per_node,
                          const MeasuredRates* measured = nullptr);

/// The link model of a communicator of `size` ranks whose consecutive members are `stride` ranks
/// apart in the global rank order. gpuplan places ranks as Megatron-LM does: TP varies fastest,
/// then CP, then DP (with EP inside DP), then PP (so TP stays inside a node when it fits).
GroupLink PlaceGroup(const ClusterLinks& links, int64_t size, int64_t stride);

}  // namespace gpuplan
