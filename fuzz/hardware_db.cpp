// Harness: a hardware-database file of any kind (gpus, networks, nodes, prices, reliability:
// docs/HARDWARE_DB.md; one format holds them all) loaded over the built-in database, as
// `--hardware-db DIR` does, then Validate(). Invariant: in a database that validates, every GPU
// and network figure is finite and positive where the format requires it.
#include "fuzz/fuzz_common.h"

using namespace gpuplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<nlohmann::json> doc = fuzz::Json(data, size);
  if (!doc) return 0;
  HardwareDb db = fuzz::BuiltinDb();
  if (!db.LoadJson(*doc, "<fuzz>").ok() || !db.Validate().ok()) return 0;
  for (const auto& [id, gpu] : db.gpus()) {
    fuzz::Require(std::isfinite(gpu.memory_bytes) && gpu.memory_bytes > 0, "gpu memory > 0");
    fuzz::Require(
        std::isfinite(gpu.memory_bandwidth_bytes_per_s) && gpu.memory_bandwidth_bytes_per_s > 0,
        "gpu memory bandwidth > 0");
    for (double flops : gpu.peak_flops_per_s) fuzz::Require(fuzz::IsAmount(flops), "peak >= 0");
    fuzz::Require(gpu.gemm_efficiency > 0 && gpu.gemm_efficiency <= 1, "gemm efficiency");
    fuzz::Require(gpu.gemm_efficiency_fp8 >= 0 && gpu.gemm_efficiency_fp8 <= 1,
                  "fp8 gemm efficiency");
    fuzz::Require(gpu.scaleup_domain_gpus >= 1, "scale-up domain >= 1");
  }
  for (const auto& [id, net] : db.networks()) {
    fuzz::Require(std::isfinite(net.bytes_per_s_per_gpu) && net.bytes_per_s_per_gpu > 0,
                  "network bandwidth > 0");
    fuzz::Require(fuzz::IsAmount(net.latency_s), "network latency >= 0");
    fuzz::Require(net.hop_latency_s >= 0 && net.hop_latency_s <= net.latency_s,
                  "network hop latency in [0, latency]");
  }
  for (const PriceEntry& price : db.prices()) {
    fuzz::Require(std::isfinite(price.usd_per_gpu_hour) && price.usd_per_gpu_hour > 0, "price > 0");
  }
  return 0;
}
