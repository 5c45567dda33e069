// Hardware facts the cost model reads: GPUs, networks and node templates. Every entry carries the
// `source` it was taken from. Units are in the names; GB = 1e9 bytes as nccl-tests uses.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuplan {

/// Numeric formats a GPU can run matrix math in. Order matters: it indexes peak_flops_per_s.
enum class Precision { kFp32 = 0, kTf32, kBf16, kFp16, kFp8, kFp4, kCount };
inline constexpr int kPrecisionCount = static_cast<int>(Precision::kCount);

/// "fp32", "tf32", "bf16", "fp16", "fp8", "fp4".
std::string_view PrecisionName(Precision p);
/// Parses a name from PrecisionName; returns false for anything else.
bool ParsePrecision(std::string_view name, Precision* out);

/// One GPU model as its datasheet and published measurements describe it.
struct GpuSpec {
  std::string id;      ///< e.g. "h100-sxm5-80gb"
  std::string name;    ///< e.g. "NVIDIA H100 SXM5 80GB"
  std::string vendor;  ///< "NVIDIA", "AMD"
  /// GPU generation, lower case ("ampere", "hopper", "cdna3"); empty when the entry does not say.
  /// Published runs validate the model per architecture (simulator/error_band.h).
  std::string architecture;
  /// Dense (no structured sparsity) peak FLOP/s per precision; 0 means not supported.
  std::array<double, kPrecisionCount> peak_flops_per_s{};
  /// Device memory as the driver reports it (nvidia-smi's total, cudaMemGetInfo): entry field
  /// `memory_mib`, else the datasheet's `memory_gb` read as GiB. What a job may use of it is less
  /// (MemoryBreakdown::capacity_bytes: the allocator's headroom, simulator/memory.h).
  double memory_bytes = 0;
  double memory_bandwidth_bytes_per_s = 0;  ///< datasheet peak
  int sm_count = 0;                         ///< streaming multiprocessors (CUs on AMD)
  /// Best measured dense-GEMM throughput / dense peak (the "maximum achievable matmul FLOPS"), of
  /// the 16-bit GEMMs (fp32/tf32 and, without gemm_efficiency_fp8, fp8 and fp4 GEMMs too).
  double gemm_efficiency = 0;
  /// Best measured fp8 GEMM throughput / fp8 dense peak; 0 when the entry gives none (fp8 GEMMs
  /// then take gemm_efficiency). fp8 GEMMs reach less of their peak than 16-bit ones (H100 SXM:
  /// 0.709 against 0.803; docs/HARDWARE_DB.md).
  double gemm_efficiency_fp8 = 0;
  /// Training GEMM throughput over the best single-GEMM rate on this device; 0: the
  /// fraction calibrated on the published GPU runs (kSustainedGemmFraction, simulator/gemm_time.h).
  double sustained_gemm_fraction = 0;
  /// Fraction of memory_bandwidth_bytes_per_s reached by streaming kernels (copy/elementwise).
  double memory_efficiency = 0;
  /// Scale-up fabric: "nvswitch" (all GPUs of a node at full bandwidth), "nvlink-bridge" (pairs),
  /// "xgmi" (fully connected mesh), "shared-memory" (the `cpu` device: ranks are processes of one
  /// host exchanging through its memory, MPI's shared-memory transport) or "none" (PCIe only).
  std::string scaleup_kind;
  double scaleup_bytes_per_s = 0;  ///< per GPU, one direction; 0 when scaleup_kind == "none"
  int scaleup_domain_gpus = 1;     ///< GPUs that reach each other over the scale-up fabric
  /// Achievable ring all-reduce busbw / scaleup_bytes_per_s inside the scale-up domain
  /// (nccl-tests).
  double scaleup_collective_efficiency = 0;
  /// NVLS (NVLink SHARP: the NVSwitch reduces in the switch) all-reduce algbw /
  /// scaleup_bytes_per_s inside one NVSwitch domain (nccl-tests); 0 when the switch has no NVLS
  /// (before NVSwitch gen 3) or it was not measured.
  double scaleup_nvls_efficiency = 0;
  int pcie_gen = 0;             ///< 0 for a host device (no PCIe link)
  double pcie_bytes_per_s = 0;  ///< x16, one direction; 0 for a host device
  /// NVLink-C2C between this GPU and its Grace CPU, one direction, bytes/s; 0 when the GPU
  /// reaches host memory over PCIe (every part but the Grace superchips GH200/GB200/GB300).
  double c2c_bytes_per_s = 0;
  /// The link optimizer offload crosses to host memory: NVLink-C2C where the GPU has it, else
  /// PCIe (bytes/s, one direction).
  /// Host memory per GPU behind its NVLink-C2C link (the Grace CPU's LPDDR5X over the
  /// superchip's GPUs), bytes; 0 when not in the database (PCIe hosts: the server's, not tied to
  /// a GPU). Bounds activation offload (training.activation_offload_layers).
  double host_memory_bytes_per_gpu = 0;
  double HostLinkBytesPerS() const {
    return c2c_bytes_per_s > 0 ? c2c_bytes_per_s : pcie_bytes_per_s;
  }
  /// True for a device whose ranks run in host memory (scaleup_kind "shared-memory"): nothing
  /// to offload to, no userbuffers for TP overlap.
  bool HostDevice() const { return scaleup_kind == "shared-memory"; }
  double tdp_watts = 0;
  std::string default_node;  ///< id of the node template this GPU usually ships in
  std::string source;

  double PeakFlops(Precision p) const { return peak_flops_per_s[static_cast<int>(p)]; }
};

/// nccl-tests bus bandwidth measured on one real cluster at several node counts, every GPU of
/// every node in the communicator (docs/HARDWARE_DB.md "measured_busbw"). It replaces the line
/// rate x efficiency of the network for the collectives it lists: a group takes the busbw of the
/// measured ring with as many ranks (its time grows with the ring's hops, which a line rate cannot
/// show).
struct MeasuredNetworkBusbw {
  int gpus_per_node = 0;      ///< GPUs of each node in the measured communicator
  double message_bytes = 0;   ///< nccl-tests size of the measurement
  std::vector<double> nodes;  ///< node counts, ascending, each >= 2
  /// (nccl-tests collective name, busbw in bytes/s at each of `nodes`).
  std::vector<std::pair<std::string, std::vector<double>>> busbw_bytes_per_s;
  std::string source;

  /// The busbw series of collective `name`, or nullptr when it was not measured.
  const std::vector<double>* Find(std::string_view name) const;
};

/// A scale-out network as seen by one GPU (rail-optimised: one NIC share per GPU).
struct NetworkSpec {
  std::string id;  ///< e.g. "ib-ndr-400"
  std::string name;
  double bytes_per_s_per_gpu = 0;  ///< line rate available to one GPU, one direction
  /// One network crossing, end to end, small message (launch and protocol included): a
  /// send/recv between nodes, and half of the smallest all-reduce between two nodes.
  double latency_s = 0;
  /// Each network hop of a ring (or level of a tree) beyond what a collective pays once: a
  /// collective over h network hops takes 2 x (latency_s - hop_latency_s) + h x hop_latency_s, so
  /// the two-node all-reduce (h = 2) keeps 2 x latency_s. Equal to latency_s (no once-per-
  /// collective part) when networks.json gives no hop_latency_us.
  double hop_latency_s = 0;
  /// Achievable collective busbw / bytes_per_s_per_gpu for large messages (nccl-tests).
  double collective_efficiency = 0;
  /// Optional measured busbw by node count; empty `nodes` when the network has none.
  MeasuredNetworkBusbw measured_busbw;
  std::string source;
};

/// A node as sold or rented: which GPU, how many, which network by default.
struct NodeTemplate {
  std::string id;  ///< e.g. "dgx-h100"
  std::string name;
  std::string gpu;  ///< GpuSpec id
  /// GPUs of one scale-up (NVLink) domain as the cost model places ranks: a server's GPUs for
  /// HGX/DGX-style nodes; for rack-scale NVLink templates such as gb200-nvl72, whose domain
  /// spans its compute trays, the rack's GPUs a job uses (64 of 72: two trays are spares).
  int gpus_per_node = 0;
  /// GPUs of one host (a server, or one compute tray of a rack-scale template: 4 on GB200
  /// NVL72): they share a CPU, its memory and checkpoint path, and fail together. Divides
  /// gpus_per_node; equal to it when the template does not say.
  int tray_gpus = 0;
  std::string network;  ///< NetworkSpec id of its usual scale-out fabric
  /// Intra-node fabric: "nvswitch", "nvlink-bridge", "xgmi", "pcie" or "shared-memory".
  std::string intra_node;
  /// Per-GPU one-direction bandwidth between GPUs inside the node for collectives, and latency.
  double intra_node_bytes_per_s = 0;
  double intra_node_latency_s = 0;
  std::string source;
};

}  // namespace gpuplan
