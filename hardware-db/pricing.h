// Prices of GPU-hours by provider, and the reliability figures the planner's economics use.
// Every entry carries its source and date (hardware-db/data/prices.json, reliability.json;
// format in docs/HARDWARE_DB.md).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace gpuplan {

/// Seconds per hour: prices and failure rates are per hour, the simulator's times in seconds.
inline constexpr double kSecondsPerHour = 3600.0;

/// How capacity is bought. Spot capacity can be preempted by the provider; on-demand cannot
/// (community / marketplace offers that are not interruptible count as on-demand).
enum class PriceKind { kOnDemand, kSpot };

/// "on-demand", "spot".
std::string_view PriceKindName(PriceKind kind);
/// Parses a name from PriceKindName; returns false for anything else.
bool ParsePriceKind(std::string_view name, PriceKind* out);

/// One published price of one GPU type at one provider.
struct PriceEntry {
  std::string provider;  ///< lower-case id, e.g. "aws", "gcp", "lambda", "runpod"
  std::string gpu;       ///< GpuSpec id
  std::string offering;  ///< instance type or product, e.g. "p5.48xlarge", "Secure Cloud"
  PriceKind kind = PriceKind::kOnDemand;
  double usd_per_gpu_hour = 0;  ///< > 0; a published range is stored as its midpoint (see notes)
  int gpus_per_instance = 1;    ///< GPUs sold together (8 for p5.48xlarge); >= 1
  /// Largest job the offering serves at this price, in GPUs; 0 = no limit (a cluster offering
  /// with a scale-out fabric). Marketplace and single-host offers rent machines, not clusters.
  int64_t max_gpus_per_job = 0;
  /// NodeTemplate id when the offering is one specific machine (AWS p5.48xlarge with EFA);
  /// empty for a generic offer of the GPU's usual node.
  std::string node;
  std::string as_of;   ///< date of the observation, as published
  std::string region;  ///< may be empty
  std::string source;
  std::string notes;  ///< caveats, e.g. the published range of a midpoint price
};

/// Failure and restart figures for the reliability economics (planner/reliability.h).
struct ReliabilitySpec {
  /// Unexpected job interruptions per GPU-hour (Llama 3 405B: 419 unexpected interruptions in
  /// 54 days on 16 384 H100 = 1.97e-5 per GPU-hour; Llama 3 paper Sec. 3.3.4, Table 5).
  double interruptions_per_gpu_hour = 0;
  /// Wall time from an interruption to training again (detect, reschedule, re-initialise NCCL,
  /// load the checkpoint), seconds.
  double restart_s = 0;
  /// Share of the interruptions that take a host (server or tray) out of service until it is
  /// repaired or replaced (a failed GPU, HBM, NIC, power supply ...), in [0, 1]; -1 when no loaded
  /// file gives it.
  double host_repair_share = -1;
  /// Time from a host's failure to its return to service (diagnosis, replacement of the part or
  /// the tray, burn-in), seconds; -1 when no loaded file gives it. A rack-scale job waits for it
  /// when its domain has no spare host (planner/reliability.h).
  double host_repair_s = -1;
  /// Checkpoint write bandwidth per node to the checkpoint store, bytes/s.
  double checkpoint_write_bytes_per_s_per_node = 0;
  /// Spot preemptions per instance-hour by provider id; key "default" for providers not listed.
  std::map<std::string, double> spot_preemptions_per_instance_hour;
  std::string source;

  /// Preemption rate for `provider` (its own entry, else "default", else 0).
  double SpotPreemptionsPerInstanceHour(const std::string& provider) const;
};

}  // namespace gpuplan
