#include "hardware-db/hardware_db.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>
#include <system_error>
#include <tuple>
#include <utility>

#include "common/json_reader.h"
#include "common/limits.h"
#include "common/str_format.h"

#ifndef GPUPLAN_DATA_ROOT
#define GPUPLAN_DATA_ROOT ""
#endif

namespace gpuplan {
namespace {

using nlohmann::json;

// Units of the JSON files (docs/HARDWARE_DB.md) to the SI units of the structs.
constexpr double kTera = 1e12;          // TFLOP/s -> FLOP/s
constexpr double kGiga = 1e9;           // GB -> bytes, GB/s -> bytes/s
constexpr double kGibi = 1073741824.0;  // GiB -> bytes
constexpr double kMebi = 1048576.0;     // MiB -> bytes
constexpr double kMicro = 1e-6;         // us -> s

// Physical ranges, checked after the unit conversion (JsonObjectReader::ScaledNumber) so that no
// figure can overflow or vanish in the cost model: far wider than any real part, narrow enough
// that times, costs and fractions stay finite and meaningful (docs/HARDWARE_DB.md).
constexpr double kMinBytesPerS = 1e6, kMaxBytesPerS = 1e15;  // 1 MB/s .. 1 PB/s
constexpr double kMinMemoryBytes = 1e6;  // 1 MB .. kMaxDeviceMemoryBytes (100 TB)
// A GPU's memory: 0.001 GiB .. 90,000 GiB (within kMaxDeviceMemoryBytes).
constexpr double kMinGpuMemoryGib = 0.001, kMaxGpuMemoryGib = 90000;
constexpr double kMinFlopsPerS = 1e9, kMaxFlopsPerS = 1e18;  // 1 GFLOP/s .. 1 EFLOP/s
constexpr double kMaxLatencyS = 1.0;
constexpr double kMinEfficiency = 0.01;  // efficiencies are fractions in [0.01, 1]
constexpr double kMaxTdpWatts = 1e5;
constexpr double kMaxSpotPreemptionsPerHour = 1e3;

std::string FormatNumber(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

template <typename Map>
std::string JoinKeys(const Map& m) {
  std::string out;
  for (const auto& [key, value] : m) {
    if (!out.empty()) out += ", ";
    out += key;
  }
  return out.empty() ? "none" : out;
}

// A fraction in [kMinEfficiency, 1]: efficiencies.
double Fraction(JsonObjectReader& r, std::string_view field) {
  return r.ScaledNumber(field, 1.0, kMinEfficiency, 1.0);
}

// A positive integer that fits an int (counts of SMs, GPUs).
int SmallPositiveInt(JsonObjectReader& r, std::string_view field) {
  const int64_t v = r.PositiveInt(field);
  if (r.status().ok() && v > INT_MAX) {
    r.Fail(field, "must be at most " + std::to_string(INT_MAX) + ", got " + std::to_string(v));
    return 0;
  }
  return static_cast<int>(v);
}

// The provenance fields every entry carries: a required non-empty `source`, plus optional
// `notes`, `verified` (true, false or a word such as "partial") and `unverified_fields`.
std::string ReadProvenance(const json& entry, JsonObjectReader& r) {
  std::string source = r.String("source");
  r.OptionalString("notes", "");
  r.OptionalStringList("unverified_fields");
  if (r.status().ok() && entry.contains("verified")) {
    const json& v = entry.at("verified");
    if (!v.is_boolean() && !v.is_string()) {
      r.Fail("verified", "must be true, false or a string such as \"partial\", got " + v.dump());
    }
  }
  return source;
}

// "<path>: gpu 'h100'" when the entry has a usable id, else "<path>: gpus[3]".
std::string EntryContext(const std::string& path, std::string_view kind, std::string_view key,
                         const json& entry, size_t index) {
  if (entry.is_object()) {
    auto it = entry.find("id");
    if (it != entry.end() && it->is_string() && !it->get<std::string>().empty()) {
      return path + ": " + std::string(kind) + " '" + it->get<std::string>() + "'";
    }
  }
  return path + ": " + std::string(key) + "[" + std::to_string(index) + "]";
}

Status ParseScaleup(const json& object, const std::string& context, GpuSpec* g) {
  JsonObjectReader r(object, context + ": in 'scaleup'");
  r.RejectUnknownFields({"kind", "gbps_per_gpu_unidir", "domain_gpus", "collective_efficiency",
                         "nvls_allreduce_efficiency", "notes"});
  g->scaleup_kind = r.Enum("kind", {"nvswitch", "nvlink-bridge", "xgmi", "shared-memory", "none"});
  if (!r.status().ok()) return r.status();
  if (g->scaleup_kind == "none") {
    for (std::string_view f : {"gbps_per_gpu_unidir", "domain_gpus", "collective_efficiency",
                               "nvls_allreduce_efficiency"}) {
      if (r.Has(f)) r.Fail(f, "must be omitted when kind is 'none' (the GPU has no scale-up link)");
    }
    g->scaleup_bytes_per_s = 0;
    g->scaleup_domain_gpus = 1;
    g->scaleup_collective_efficiency = 0;
    return r.status();
  }
  g->scaleup_bytes_per_s =
      r.ScaledNumber("gbps_per_gpu_unidir", kGiga, kMinBytesPerS, kMaxBytesPerS);
  g->scaleup_domain_gpus = SmallPositiveInt(r, "domain_gpus");
  g->scaleup_collective_efficiency = Fraction(r, "collective_efficiency");
  g->scaleup_nvls_efficiency = 0;
  if (r.Has("nvls_allreduce_efficiency")) {
    if (g->scaleup_kind != "nvswitch") {
      r.Fail("nvls_allreduce_efficiency",
             "is only for kind 'nvswitch' (NVLS reduces in the switch)");
    } else {
      g->scaleup_nvls_efficiency = Fraction(r, "nvls_allreduce_efficiency");
    }
  }
  return r.status();
}

Status ParseTflops(const json& object, const std::string& context, GpuSpec* g) {
  JsonObjectReader r(object, context + ": in 'tflops_dense'");
  std::vector<std::string_view> names;
  for (int i = 0; i < kPrecisionCount; ++i)
    names.push_back(PrecisionName(static_cast<Precision>(i)));
  r.RejectUnknownFields(names);
  bool any = false;
  for (int i = 0; i < kPrecisionCount; ++i) {
    const std::string_view name = PrecisionName(static_cast<Precision>(i));
    // Absent or null means "not supported"; a present value must be a positive number.
    const double flops = r.OptionalScaledNumber(name, 0, kTera, kMinFlopsPerS, kMaxFlopsPerS);
    g->peak_flops_per_s[static_cast<size_t>(i)] = flops;
    any = any || flops > 0;
  }
  if (r.status().ok() && !any) {
    return Status::Invalid(context +
                           ": field 'tflops_dense': needs at least one of fp32, tf32, "
                           "bf16, fp16, fp8, fp4 (absent or null means unsupported)");
  }
  return r.status();
}

// Lower-case words ("aws", "runpod", "hopper"): provider ids, by which prices and spot rates are
// matched, and GPU architectures, by which error bands are matched.
bool IsLowerCaseId(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

Status ParseGpu(const json& entry, const std::string& context, GpuSpec* g) {
  JsonObjectReader r(entry, context);
  // Bookkeeping fields (source, notes, verified, unverified_fields) are allowed in every entry so
  // reference data can be copied with its provenance.
  r.RejectUnknownFields({"id",
                         "name",
                         "vendor",
                         "architecture",
                         "tflops_dense",
                         "memory_gb",
                         "memory_mib",
                         "memory_bandwidth_gbps",
                         "sm_count",
                         "gemm_efficiency",
                         "gemm_efficiency_fp8",
                         "sustained_gemm_fraction",
                         "memory_efficiency",
                         "scaleup",
                         "pcie_gen",
                         "pcie_gbps_unidir",
                         "c2c_gbps_unidir",
                         "c2c_host_memory_gb_per_gpu",
                         "tdp_w",
                         "default_node",
                         "source",
                         "notes",
                         "verified",
                         "unverified_fields"});
  g->id = r.String("id");
  g->name = r.String("name");
  g->vendor = r.String("vendor");
  g->architecture = r.OptionalString("architecture", "");  // may be absent for a user GPU
  if (r.status().ok() && entry.contains("architecture") && !IsLowerCaseId(g->architecture)) {
    r.Fail("architecture",
           "must be a lower-case word (a-z, 0-9, '-', '_', '.') such as "
           "'hopper', got '" +
               g->architecture + "'");
  }
  const json* tflops = r.Object("tflops_dense");
  // The capacity is what the driver offers (docs/HARDWARE_DB.md): `memory_mib`, nvidia-smi's or
  // rocm-smi's total, when the entry gives it; else the datasheet's `memory_gb` read as GiB, the
  // unit HBM datasheets quote (an "80GB" A100 has 81,920 MiB, an H100 81,559). GDDR parts with ECC
  // on give up 1/16 of it (an L40S "48GB" has 46,068 MiB), so their entries give memory_mib.
  g->memory_bytes =
      r.ScaledNumber("memory_gb", kGibi, kMinGpuMemoryGib * kGibi, kMaxGpuMemoryGib * kGibi);
  if (r.Has("memory_mib")) {
    g->memory_bytes = r.ScaledNumber("memory_mib", kMebi, kMebi, kMaxGpuMemoryGib * kGibi);
  }
  g->memory_bandwidth_bytes_per_s =
      r.ScaledNumber("memory_bandwidth_gbps", kGiga, kMinBytesPerS, kMaxBytesPerS);
  g->sm_count = SmallPositiveInt(r, "sm_count");
  g->gemm_efficiency = Fraction(r, "gemm_efficiency");
  if (r.Has("gemm_efficiency_fp8")) {
    g->gemm_efficiency_fp8 = Fraction(r, "gemm_efficiency_fp8");
  }
  if (r.Has("sustained_gemm_fraction")) {
    g->sustained_gemm_fraction = Fraction(r, "sustained_gemm_fraction");
  }
  g->memory_efficiency = Fraction(r, "memory_efficiency");
  const json* scaleup = r.Object("scaleup");
  // Ranks of a host device ("shared-memory": the CPU backend's processes) run in host memory:
  // no PCIe link, so nothing to offload to (pcie_bytes_per_s 0; ValidateJob refuses offload).
  const bool host_device = scaleup != nullptr && scaleup->is_object() &&
                           scaleup->value("kind", json()) == json("shared-memory");
  if (host_device) {
    for (std::string_view f : {"pcie_gen", "pcie_gbps_unidir"}) {
      if (r.Has(f)) {
        r.Fail(f, "must be omitted when scaleup.kind is 'shared-memory' (ranks in host memory)");
      }
    }
  } else {
    g->pcie_gen = SmallPositiveInt(r, "pcie_gen");
    g->pcie_bytes_per_s = r.ScaledNumber("pcie_gbps_unidir", kGiga, kMinBytesPerS, kMaxBytesPerS);
  }
  if (r.Has("c2c_gbps_unidir")) {
    if (host_device) {
      r.Fail("c2c_gbps_unidir",
             "must be omitted when scaleup.kind is 'shared-memory' (ranks in host memory)");
    } else {
      g->c2c_bytes_per_s = r.ScaledNumber("c2c_gbps_unidir", kGiga, kMinBytesPerS, kMaxBytesPerS);
    }
  }
  if (r.Has("c2c_host_memory_gb_per_gpu")) {
    if (!r.Has("c2c_gbps_unidir")) {
      r.Fail("c2c_host_memory_gb_per_gpu",
             "needs c2c_gbps_unidir (the host memory a Grace superchip's GPU reaches over "
             "NVLink-C2C)");
    } else {
      g->host_memory_bytes_per_gpu = r.ScaledNumber("c2c_host_memory_gb_per_gpu", kGiga,
                                                    kMinMemoryBytes, kMaxDeviceMemoryBytes);
    }
  }
  g->tdp_watts = r.ScaledNumber("tdp_w", 1.0, 1.0, kMaxTdpWatts);
  g->default_node = r.OptionalString("default_node", "");  // may be absent for a user GPU
  g->source = ReadProvenance(entry, r);
  if (!r.status().ok()) return r.status();
  GPUPLAN_RETURN_IF_ERROR(ParseTflops(*tflops, context, g));
  if (g->gemm_efficiency_fp8 > 0 && !(g->PeakFlops(Precision::kFp8) > 0)) {
    return Status::Invalid(context +
                           ": field 'gemm_efficiency_fp8': needs an fp8 peak (tflops_dense.fp8)");
  }
  return ParseScaleup(*scaleup, context, g);
}

// The collectives a measured_busbw table may list: nccl-tests' names, as simulator/collective.h's
// table spells them (hardware-db cannot depend on the simulator).
constexpr std::string_view kMeasuredCollectives[] = {"all_reduce", "all_gather", "reduce_scatter",
                                                     "alltoall",   "broadcast",  "sendrecv"};
constexpr size_t kMaxMeasuredPoints = 64;

// A JSON array of `count` numbers scaled by `scale` into [lo, hi], or the reason it is not one.
Status ReadNumberArray(const json& object, std::string_view field, const std::string& context,
                       size_t count, double scale, double lo, double hi, std::vector<double>* out) {
  const json& a = object.at(std::string(field));
  const std::string where = context + ": field '" + std::string(field) + "': ";
  if (!a.is_array() || a.empty() || a.size() > kMaxMeasuredPoints) {
    return Status::Invalid(where + "must be an array of 1 to " +
                           std::to_string(kMaxMeasuredPoints) + " numbers");
  }
  if (count != 0 && a.size() != count) {
    return Status::Invalid(where + "has " + std::to_string(a.size()) + " values, 'nodes' has " +
                           std::to_string(count) + " (one value per node count)");
  }
  out->clear();
  for (size_t i = 0; i < a.size(); ++i) {
    const double v = a[i].is_number() ? a[i].get<double>() * scale : -1.0;
    if (!(v >= lo && v <= hi)) {
      return Status::Invalid(where + "entry " + std::to_string(i) + " must be a number in [" +
                             StrFormat("%g", lo / scale) + ", " + StrFormat("%g", hi / scale) +
                             "], got " + a[i].dump());
    }
    out->push_back(v);
  }
  return Status::Ok();
}

Status ParseMeasuredBusbw(const json& object, const std::string& network_context,
                          MeasuredNetworkBusbw* m) {
  const std::string context = network_context + ": in 'measured_busbw'";
  JsonObjectReader r(object, context);
  std::vector<std::string_view> allowed = {"gpus_per_node", "message_bytes", "nodes", "source",
                                           "notes"};
  allowed.insert(allowed.end(), std::begin(kMeasuredCollectives), std::end(kMeasuredCollectives));
  for (const auto& [key, value] : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      return Status::Invalid(context + ": unknown field '" + key + "' (allowed: gpus_per_node, " +
                             "message_bytes, nodes, source, notes, and the busbw series " +
                             "all_reduce, all_gather, reduce_scatter, alltoall, broadcast, " +
                             "sendrecv)");
    }
  }
  m->gpus_per_node = SmallPositiveInt(r, "gpus_per_node");
  m->message_bytes = r.ScaledNumber("message_bytes", 1.0, 1.0, 1e15);
  m->source = r.String("source");
  r.OptionalString("notes", "");
  if (!r.status().ok()) return r.status();
  if (!object.contains("nodes")) return Status::Invalid(context + ": missing field 'nodes'");
  GPUPLAN_RETURN_IF_ERROR(ReadNumberArray(object, "nodes", context, 0, 1.0, 2.0, 1e6, &m->nodes));
  for (size_t i = 0; i < m->nodes.size(); ++i) {
    if (m->nodes[i] != std::floor(m->nodes[i]) || (i > 0 && m->nodes[i] <= m->nodes[i - 1])) {
      return Status::Invalid(context +
                             ": field 'nodes': must be whole node counts >= 2 in increasing "
                             "order, got " +
                             object.at("nodes").dump());
    }
  }
  m->busbw_bytes_per_s.clear();
  for (std::string_view name : kMeasuredCollectives) {
    if (!object.contains(std::string(name))) continue;
    std::vector<double> series;
    GPUPLAN_RETURN_IF_ERROR(ReadNumberArray(object, name, context, m->nodes.size(), kGiga,
                                            kMinBytesPerS, kMaxBytesPerS, &series));
    m->busbw_bytes_per_s.emplace_back(std::string(name), std::move(series));
  }
  if (m->busbw_bytes_per_s.empty()) {
    return Status::Invalid(context +
                           ": needs at least one busbw series (GB/s per node count): "
                           "all_reduce, all_gather, reduce_scatter, alltoall, broadcast or "
                           "sendrecv");
  }
  return Status::Ok();
}

Status ParseNetwork(const json& entry, const std::string& context, NetworkSpec* n) {
  JsonObjectReader r(entry, context);
  r.RejectUnknownFields({"id", "name", "gbps_per_gpu", "latency_us", "hop_latency_us",
                         "collective_efficiency", "measured_busbw", "source", "notes", "verified",
                         "unverified_fields"});
  n->id = r.String("id");
  n->name = r.String("name");
  n->bytes_per_s_per_gpu = r.ScaledNumber("gbps_per_gpu", kGiga, kMinBytesPerS, kMaxBytesPerS);
  n->latency_s = r.ScaledNumber("latency_us", kMicro, 0.0, kMaxLatencyS);
  n->hop_latency_s =
      r.OptionalScaledNumber("hop_latency_us", n->latency_s, kMicro, 0.0, n->latency_s);
  n->collective_efficiency = Fraction(r, "collective_efficiency");
  const json* measured = r.OptionalObject("measured_busbw");
  n->source = ReadProvenance(entry, r);
  if (!r.status().ok()) return r.status();
  if (measured != nullptr) return ParseMeasuredBusbw(*measured, context, &n->measured_busbw);
  return Status::Ok();
}

Status ParseNode(const json& entry, const std::string& context, NodeTemplate* n) {
  JsonObjectReader r(entry, context);
  r.RejectUnknownFields({"id", "name", "gpu", "gpus_per_node", "tray_gpus", "network", "intra_node",
                         "intra_node_gbps_per_gpu", "intra_node_latency_us", "source", "notes",
                         "verified", "unverified_fields"});
  n->id = r.String("id");
  n->name = r.String("name");
  n->gpu = r.String("gpu");
  n->gpus_per_node = SmallPositiveInt(r, "gpus_per_node");
  n->tray_gpus = r.Has("tray_gpus") ? SmallPositiveInt(r, "tray_gpus") : n->gpus_per_node;
  if (r.status().ok() && n->gpus_per_node % n->tray_gpus != 0) {
    r.Fail("tray_gpus", "must divide gpus_per_node = " + std::to_string(n->gpus_per_node) +
                            " (the NVLink domain is made of whole trays), got " +
                            std::to_string(n->tray_gpus));
  }
  n->network = r.String("network");
  n->intra_node =
      r.Enum("intra_node", {"nvswitch", "nvlink-bridge", "xgmi", "pcie", "shared-memory"});
  n->intra_node_bytes_per_s =
      r.ScaledNumber("intra_node_gbps_per_gpu", kGiga, kMinBytesPerS, kMaxBytesPerS);
  n->intra_node_latency_s = r.ScaledNumber("intra_node_latency_us", kMicro, 0.0, kMaxLatencyS);
  n->source = ReadProvenance(entry, r);
  return r.status();
}

constexpr std::string_view kProviderIdRule = "a lower-case provider id (a-z, 0-9, '-', '_', '.')";

std::string ProviderId(JsonObjectReader& r, std::string_view field) {
  std::string id = r.String(field);
  if (r.status().ok() && !IsLowerCaseId(id)) {
    r.Fail(field, "must be " + std::string(kProviderIdRule) + ", got '" + id + "'");
    return {};
  }
  return id;
}

Status ParsePrice(const json& entry, const std::string& context, PriceEntry* p) {
  JsonObjectReader r(entry, context);
  r.RejectUnknownFields({"provider", "gpu", "offering", "kind", "usd_per_gpu_hour",
                         "gpus_per_instance", "max_gpus_per_job", "node", "as_of", "region",
                         "source", "notes", "verified", "unverified_fields"});
  p->provider = ProviderId(r, "provider");
  p->gpu = r.String("gpu");
  p->offering = r.String("offering");
  const std::string kind =
      r.Enum("kind", {PriceKindName(PriceKind::kOnDemand), PriceKindName(PriceKind::kSpot)});
  ParsePriceKind(kind, &p->kind);  // keeps the default when the reader has failed
  p->usd_per_gpu_hour =
      r.ScaledNumber("usd_per_gpu_hour", 1.0, kMinUsdPerGpuHour, kMaxUsdPerGpuHour);
  p->gpus_per_instance = SmallPositiveInt(r, "gpus_per_instance");
  p->max_gpus_per_job = r.OptionalNonNegativeInt("max_gpus_per_job", 0);
  p->node = r.OptionalString("node", "");
  p->as_of = r.String("as_of");
  p->region = r.OptionalString("region", "");
  p->source = ReadProvenance(entry, r);
  p->notes = r.OptionalString("notes", "");
  return r.status();
}

// A price is identified by where and how the GPU is sold; a later file replaces the same key.
using PriceKey = std::tuple<std::string, std::string, std::string, PriceKind>;
PriceKey KeyOf(const PriceEntry& p) { return {p.provider, p.gpu, p.offering, p.kind}; }

// "<path>: price 'aws/h100-sxm5-80gb/p5.48xlarge/spot'" when provider, gpu, offering and kind are
// non-empty strings, else "<path>: prices[3]".
std::string PriceContext(const std::string& path, const json& entry, size_t index) {
  std::string key;
  for (const char* field : {"provider", "gpu", "offering", "kind"}) {
    auto it = entry.find(field);  // end() for a non-object
    if (it == entry.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
      return path + ": prices[" + std::to_string(index) + "]";
    }
    if (!key.empty()) key += '/';
    key += it->get_ref<const std::string&>();
  }
  return path + ": price '" + key + "'";
}

// Parses the array root["prices"] into `out` (and the context naming each entry into
// `contexts`), rejecting a repeated (provider, gpu, offering, kind) within the file.
Status ParsePrices(const json& root, const std::string& path, std::vector<PriceEntry>* out,
                   std::vector<std::string>* contexts) {
  auto it = root.find("prices");
  if (it == root.end()) return Status::Ok();
  if (!it->is_array()) {
    return Status::Invalid(path + ": top-level key 'prices' must be an array of objects, got " +
                           std::string(it->type_name()));
  }
  std::map<PriceKey, size_t> seen;
  for (size_t i = 0; i < it->size(); ++i) {
    const json& entry = (*it)[i];
    std::string context = PriceContext(path, entry, i);
    PriceEntry price;
    GPUPLAN_RETURN_IF_ERROR(ParsePrice(entry, context, &price));
    auto [pos, inserted] = seen.emplace(KeyOf(price), i);
    if (!inserted) {
      return Status::Invalid(context + ": field 'offering': duplicate price, prices[" +
                             std::to_string(pos->second) +
                             "] of this file has the same provider, gpu, offering and kind");
    }
    out->push_back(std::move(price));
    contexts->push_back(std::move(context));
  }
  return Status::Ok();
}

// Applies the fields `object` names to `spec`, so a later object refines an earlier one. The
// sources accumulate, newest first.
Status ParseReliability(const json& object, const std::string& context, ReliabilitySpec* spec) {
  JsonObjectReader r(object, context);
  r.RejectUnknownFields({"interruptions_per_gpu_hour", "restart_s", "host_repair_share",
                         "host_repair_s", "checkpoint_write_gbps_per_node",
                         "spot_preemptions_per_instance_hour", "source", "notes", "verified",
                         "unverified_fields"});
  if (r.Has("interruptions_per_gpu_hour")) {
    spec->interruptions_per_gpu_hour =
        r.ScaledNumber("interruptions_per_gpu_hour", 1.0, 0.0, kMaxInterruptionsPerGpuHour);
  }
  if (r.Has("restart_s"))
    spec->restart_s = r.ScaledNumber("restart_s", 1.0, 0.0, kMaxRestartSeconds);
  if (r.Has("host_repair_share"))
    spec->host_repair_share = r.ScaledNumber("host_repair_share", 1.0, 0.0, 1.0);
  if (r.Has("host_repair_s"))
    spec->host_repair_s = r.ScaledNumber("host_repair_s", 1.0, 0.0, kMaxRestartSeconds);
  if (r.Has("checkpoint_write_gbps_per_node")) {
    spec->checkpoint_write_bytes_per_s_per_node = r.ScaledNumber(
        "checkpoint_write_gbps_per_node", kGiga, kMinBytesPerS, kMaxCheckpointBytesPerS);
  }
  const json* spot = r.OptionalObject("spot_preemptions_per_instance_hour");
  const std::string source = ReadProvenance(object, r);
  if (!r.status().ok()) return r.status();
  if (spot != nullptr) {
    JsonObjectReader s(*spot, context + ": in 'spot_preemptions_per_instance_hour'");
    for (auto it = spot->begin(); it != spot->end() && s.status().ok(); ++it) {
      if (!IsLowerCaseId(it.key())) {
        s.Fail(it.key(), "key must be " + std::string(kProviderIdRule) + " or \"default\"");
        break;
      }
      spec->spot_preemptions_per_instance_hour[it.key()] =
          s.ScaledNumber(it.key(), 1.0, 0.0, kMaxSpotPreemptionsPerHour);
    }
    if (!s.status().ok()) return s.status();
  }
  spec->source = spec->source.empty() ? source : source + " | earlier: " + spec->source;
  return Status::Ok();
}

// The fields of a frameworks.json entry that state a behaviour of the stack; each needs its
// entry in "sources".
constexpr std::string_view kFrameworkFields[] = {"loss_bytes_per_logit",
                                                 "loss_bytes_per_logit_with_tp",
                                                 "ddp_bucket_bytes_per_param",
                                                 "grad_bucket",
                                                 "eager_elementwise",
                                                 "repeat_kv",
                                                 "pipeline_split",
                                                 "weight_gather_in_forward",
                                                 "zero2_reduces_per_layer",
                                                 "zero3_unsharded_stage_with_pp",
                                                 "zero3_shard_is_master",
                                                 "zero1_grad_reduction",
                                                 "host_ms_per_layer",
                                                 "moe_host_ms_per_layer",
                                                 "pipeline_host_ms_per_tp_rank",
                                                 "tp_ms_per_inter_node_hop",
                                                 "max_zero_stage",
                                                 "fsdp",
                                                 "cpu_offload",
                                                 "pipeline_needs_pp_minus_1_microbatches",
                                                 "interleaved_pipeline",
                                                 "max_zero_stage_with_pp",
                                                 "ep_overlap",
                                                 "tp_overlap",
                                                 "tp_backward_overlap",
                                                 "tp_overlap_buffers",
                                                 "attention_kernels",
                                                 "parallel_dims",
                                                 "fp8_norm_fused_cast",
                                                 "fp8_weight_cast_every_microbatch",
                                                 "quantized_saved_inputs",
                                                 "activation_offload",
                                                 "recompute_modules",
                                                 "unfused_passes"};
constexpr double kMaxHostSecondsPerLayer = 1.0;  // a second per layer is a stalled stack, not data

// A required true/false field.
bool RequiredBool(JsonObjectReader& r, const json& entry, std::string_view field) {
  if (r.status().ok() && !entry.contains(std::string(field))) {
    r.Fail(field, "missing (true or false)");
    return false;
  }
  return r.OptionalBool(field, false);
}

Status ParseFramework(const json& entry, const std::string& context, FrameworkSpec* f) {
  JsonObjectReader r(entry, context);
  // The behaviour fields, and around them what identifies and documents the entry.
  std::vector<std::string_view> allowed = {"id", "name", "version"};
  allowed.insert(allowed.end(), std::begin(kFrameworkFields), std::end(kFrameworkFields));
  allowed.insert(allowed.end(), {"sources", "notes"});
  r.RejectUnknownFields(allowed);
  f->id = r.String("id");
  if (r.status().ok() && !IsLowerCaseId(f->id)) {
    r.Fail("id", "must be a lower-case word (a-z, 0-9, '-', '_', '.'), got '" + f->id + "'");
  }
  f->name = r.String("name");
  f->version = r.OptionalString("version", "");
  f->loss_bytes_per_logit = r.ScaledNumber("loss_bytes_per_logit", 1.0, 0.0, 64.0);
  f->loss_bytes_per_logit_with_tp =
      r.OptionalNumberInRange("loss_bytes_per_logit_with_tp", f->loss_bytes_per_logit, 0.0, 64.0);
  f->ddp_bucket_bytes_per_param = r.ScaledNumber("ddp_bucket_bytes_per_param", 1.0, 0.0, 16.0);
  f->eager_elementwise = RequiredBool(r, entry, "eager_elementwise");
  f->repeat_kv = r.OptionalBool("repeat_kv", false);
  f->pipeline_split = r.Enum("pipeline_split", {"even", "cost-balanced"}) == "cost-balanced"
                          ? PipelineSplit::kCostBalanced
                          : PipelineSplit::kEven;
  f->weight_gather_in_forward = RequiredBool(r, entry, "weight_gather_in_forward");
  f->zero2_reduces_per_layer = RequiredBool(r, entry, "zero2_reduces_per_layer");
  f->zero3_unsharded_stage_with_pp = RequiredBool(r, entry, "zero3_unsharded_stage_with_pp");
  f->zero3_shard_is_master = RequiredBool(r, entry, "zero3_shard_is_master");
  f->zero1_grad_reduction =
      r.Enum("zero1_grad_reduction", {"reduce-scatter-in-backward", "all-reduce-after-backward"}) ==
              "all-reduce-after-backward"
          ? Zero1GradReduction::kAllReduceAfterBackward
          : Zero1GradReduction::kReduceScatterInBackward;
  f->host_seconds_per_layer =
      r.ScaledNumber("host_ms_per_layer", 1e-3, 0.0, kMaxHostSecondsPerLayer);
  f->moe_host_seconds_per_layer =
      r.ScaledNumber("moe_host_ms_per_layer", 1e-3, 0.0, kMaxHostSecondsPerLayer);
  f->pipeline_host_seconds_per_tp_rank =
      r.ScaledNumber("pipeline_host_ms_per_tp_rank", 1e-3, 0.0, kMaxHostSecondsPerLayer);
  f->tp_seconds_per_inter_node_hop =
      r.ScaledNumber("tp_ms_per_inter_node_hop", 1e-3, 0.0, kMaxHostSecondsPerLayer);
  f->max_zero_stage = static_cast<int>(r.IntInRange("max_zero_stage", 0, 3));
  f->max_zero_stage_with_pp = static_cast<int>(
      r.OptionalIntInRange("max_zero_stage_with_pp", f->max_zero_stage, 0, f->max_zero_stage));
  f->fsdp = RequiredBool(r, entry, "fsdp");
  f->cpu_offload = RequiredBool(r, entry, "cpu_offload");
  f->pipeline_needs_pp_minus_1_microbatches =
      RequiredBool(r, entry, "pipeline_needs_pp_minus_1_microbatches");
  f->interleaved_pipeline = RequiredBool(r, entry, "interleaved_pipeline");
  f->ep_overlap = RequiredBool(r, entry, "ep_overlap");
  f->tp_overlap = RequiredBool(r, entry, "tp_overlap");
  f->tp_backward_overlap = RequiredBool(r, entry, "tp_backward_overlap");
  f->tp_overlap_buffers =
      r.OptionalNumberInRange("tp_overlap_buffers", f->tp_overlap_buffers, 0.0, 64.0);
  f->fp8_norm_fused_cast = RequiredBool(r, entry, "fp8_norm_fused_cast");
  f->fp8_weight_cast_every_microbatch = RequiredBool(r, entry, "fp8_weight_cast_every_microbatch");
  f->quantized_saved_inputs = RequiredBool(r, entry, "quantized_saved_inputs");
  f->activation_offload = RequiredBool(r, entry, "activation_offload");
  f->recompute_modules = RequiredBool(r, entry, "recompute_modules");
  if (r.status().ok() && !entry.contains("parallel_dims")) {
    r.Fail("parallel_dims", "missing (a list of tp, pp, cp, ep; [] for data parallelism only)");
  }
  const std::vector<std::string> dims = r.OptionalStringList("parallel_dims");
  const json* passes = r.Object("unfused_passes");
  const json* bucket = r.Object("grad_bucket");
  const json* kernels = r.Object("attention_kernels");
  const json* sources = r.Object("sources");
  if (!r.status().ok()) return r.status();
  {
    JsonObjectReader u(*passes, context + ": in 'unfused_passes'");
    u.RejectUnknownFields({"swiglu", "rotary", "qkv", "kv", "attention_output"});
    // More than 32 moves per element is a typo, not code (an unfused rotary makes about 10).
    f->unfused_passes.swiglu = u.OptionalNumberInRange("swiglu", 0, 0, 32);
    f->unfused_passes.rotary = u.OptionalNumberInRange("rotary", 0, 0, 32);
    f->unfused_passes.qkv = u.OptionalNumberInRange("qkv", 0, 0, 32);
    f->unfused_passes.kv = u.OptionalNumberInRange("kv", 0, 0, 32);
    f->unfused_passes.attention_output = u.OptionalNumberInRange("attention_output", 0, 0, 32);
    if (!u.status().ok()) return u.status();
  }
  {
    // A bucket is a parameter count or a byte size, not both; below 1M parameters (or 1 MiB)
    // or above 10G is a typo, not a stack's default.
    JsonObjectReader b(*bucket, context + ": in 'grad_bucket'");
    b.RejectUnknownFields({"params", "params_per_dp_rank", "bytes"});
    if (b.status().ok() && bucket->contains("params") == bucket->contains("bytes")) {
      b.Fail("params", "give exactly one of 'params' (parameters per bucket) and 'bytes'");
    }
    f->grad_bucket.params = b.OptionalNumberInRange("params", 0, 1e6, 1e10);
    f->grad_bucket.bytes = b.OptionalNumberInRange("bytes", 0, 1 << 20, 1e10);
    f->grad_bucket.params_per_dp_rank = b.OptionalNumberInRange("params_per_dp_rank", 0, 0, 1e8);
    if (!b.status().ok()) return b.status();
  }
  f->parallel_dims.clear();
  for (const std::string& dim : dims) {
    if (dim != "tp" && dim != "pp" && dim != "cp" && dim != "ep") {
      return Status::Invalid(context + ": field 'parallel_dims': '" + dim +
                             "' is not allowed (allowed: tp, pp, cp, ep)");
    }
    f->parallel_dims.insert(dim);
  }
  for (auto it = kernels->begin(); it != kernels->end(); ++it) {
    if (!it->is_object()) {
      return Status::Invalid(context + ": in 'attention_kernels': field '" + it.key() +
                             "' must be an object with 'kernel' and 'relative_speed'");
    }
    JsonObjectReader k(*it, context + ": in 'attention_kernels': in '" + it.key() + "'");
    k.RejectUnknownFields({"kernel", "relative_speed"});
    AttentionKernel kernel;
    kernel.kernel = k.String("kernel");
    // Above 2 or near 0 is a typo, not a kernel (cuDNN to FlashAttention-2 on H100 is 1.6).
    kernel.relative_speed = k.ScaledNumber("relative_speed", 1.0, 0.05, 2.0);
    if (!k.status().ok()) return k.status();
    f->attention_kernels[it.key()] = kernel;
  }
  // Every behaviour names where it was read: a stack entry is only as good as its sources.
  JsonObjectReader s(*sources, context + ": in 'sources'");
  for (auto it = sources->begin(); it != sources->end(); ++it) {
    if (std::find(std::begin(kFrameworkFields), std::end(kFrameworkFields), it.key()) ==
        std::end(kFrameworkFields)) {
      s.Fail(it.key(), "names no field of the entry");
    }
  }
  for (std::string_view field : kFrameworkFields) {
    // An optional field (max_zero_stage_with_pp, loss_bytes_per_logit_with_tp,
    // tp_overlap_buffers, repeat_kv) names its source where the entry gives it.
    const bool optional = field == "max_zero_stage_with_pp" ||
                          field == "loss_bytes_per_logit_with_tp" ||
                          field == "tp_overlap_buffers" || field == "repeat_kv";
    if (optional && !entry.contains(std::string(field))) continue;
    f->sources[std::string(field)] = s.String(field);
  }
  return s.status();
}

// Parses the array root[key] into `out`, rejecting a repeated id within the file.
template <typename Spec>
Status ParseArray(const json& root, std::string_view key, std::string_view kind,
                  const std::string& path, Status (*parse)(const json&, const std::string&, Spec*),
                  std::vector<Spec>* out) {
  auto it = root.find(key);
  if (it == root.end()) return Status::Ok();
  if (!it->is_array()) {
    return Status::Invalid(path + ": top-level key '" + std::string(key) +
                           "' must be an array of objects, got " + std::string(it->type_name()));
  }
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < it->size(); ++i) {
    const json& entry = (*it)[i];
    const std::string context = EntryContext(path, kind, key, entry, i);
    Spec spec;
    GPUPLAN_RETURN_IF_ERROR(parse(entry, context, &spec));
    auto [pos, inserted] = seen.emplace(spec.id, i);
    if (!inserted) {
      return Status::Invalid(context + ": field 'id': duplicate id, already defined at " +
                             std::string(key) + "[" + std::to_string(pos->second) +
                             "] of this file");
    }
    out->push_back(std::move(spec));
  }
  return Status::Ok();
}

template <typename Spec>
void Merge(std::vector<Spec>* parsed, const std::string& path, std::map<std::string, Spec>* specs,
           std::map<std::string, std::string>* files) {
  for (Spec& spec : *parsed) {
    (*files)[spec.id] = path;
    (*specs)[spec.id] = std::move(spec);
  }
}

std::string FileOf(const std::map<std::string, std::string>& files, const std::string& id) {
  auto it = files.find(id);
  return it == files.end() ? std::string("<hardware db>") : it->second;
}

template <typename Spec>
const Spec* Find(const std::map<std::string, Spec>& m, const std::string& id) {
  auto it = m.find(id);
  return it == m.end() ? nullptr : &it->second;
}

template <typename Spec>
std::vector<std::string> Keys(const std::map<std::string, Spec>& m) {
  std::vector<std::string> ids;
  ids.reserve(m.size());
  for (const auto& [id, spec] : m) ids.push_back(id);
  return ids;  // std::map iterates in sorted order
}

bool IsFraction(double v) { return v > 0.0 && v <= 1.0; }

}  // namespace

Status HardwareDb::LoadFile(const std::string& path) {
  Expected<json> doc = ReadJsonFile(path);
  if (!doc.ok()) return doc.status();
  return LoadJson(*doc, path);
}

Status HardwareDb::LoadJson(const json& root, const std::string& origin) {
  if (!root.is_object()) {
    return Status::Invalid(origin +
                           ": the top level must be a JSON object with 'gpus', 'networks', "
                           "'nodes' and/or 'prices' arrays and/or a 'reliability' object, got " +
                           std::string(root.type_name()));
  }
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string& key = it.key();
    if (key != "gpus" && key != "networks" && key != "nodes" && key != "prices" &&
        key != "reliability" && key != "frameworks" && key != "about" && key != "meta") {
      return Status::Invalid(
          origin + ": unknown top-level key '" + key +
          "' (allowed: gpus, networks, nodes, prices, reliability, frameworks, about, meta)");
    }
  }
  // Parse everything first so that a bad file leaves the database unchanged.
  std::vector<GpuSpec> gpus;
  std::vector<NetworkSpec> networks;
  std::vector<NodeTemplate> nodes;
  GPUPLAN_RETURN_IF_ERROR(ParseArray<GpuSpec>(root, "gpus", "gpu", origin, &ParseGpu, &gpus));
  GPUPLAN_RETURN_IF_ERROR(
      ParseArray<NetworkSpec>(root, "networks", "network", origin, &ParseNetwork, &networks));
  GPUPLAN_RETURN_IF_ERROR(
      ParseArray<NodeTemplate>(root, "nodes", "node", origin, &ParseNode, &nodes));
  std::vector<FrameworkSpec> frameworks;
  GPUPLAN_RETURN_IF_ERROR(ParseArray<FrameworkSpec>(root, "frameworks", "framework", origin,
                                                    &ParseFramework, &frameworks));
  std::vector<PriceEntry> prices;
  std::vector<std::string> price_contexts;
  GPUPLAN_RETURN_IF_ERROR(ParsePrices(root, origin, &prices, &price_contexts));
  ReliabilitySpec reliability = reliability_;
  const auto reliability_object = root.find("reliability");
  if (reliability_object != root.end()) {
    if (!reliability_object->is_object()) {
      return Status::Invalid(origin + ": top-level key 'reliability' must be a JSON object, got " +
                             std::string(reliability_object->type_name()));
    }
    GPUPLAN_RETURN_IF_ERROR(
        ParseReliability(*reliability_object, origin + ": reliability", &reliability));
  }

  Merge(&gpus, origin, &gpus_, &gpu_files_);
  Merge(&networks, origin, &networks_, &network_files_);
  Merge(&nodes, origin, &nodes_, &node_files_);
  Merge(&frameworks, origin, &frameworks_, &framework_files_);
  for (size_t i = 0; i < prices.size(); ++i) {
    const PriceKey key = KeyOf(prices[i]);
    auto same = std::find_if(prices_.begin(), prices_.end(),
                             [&key](const PriceEntry& p) { return KeyOf(p) == key; });
    if (same == prices_.end()) {
      prices_.push_back(std::move(prices[i]));
      price_contexts_.push_back(std::move(price_contexts[i]));
    } else {
      price_contexts_[static_cast<size_t>(same - prices_.begin())] = std::move(price_contexts[i]);
      *same = std::move(prices[i]);
    }
  }
  if (reliability_object != root.end()) {
    reliability_ = std::move(reliability);
    reliability_file_ = origin;
  }
  return Status::Ok();
}

Status HardwareDb::LoadDirectory(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return Status::Invalid(dir +
                           ": not a directory (a hardware database directory holds *.json "
                           "files, see docs/HARDWARE_DB.md)");
  }
  std::vector<std::string> files;
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code type_ec;
    if (it->path().extension() == ".json" && it->is_regular_file(type_ec)) {
      files.push_back(it->path().string());
    }
  }
  if (ec) return Status::Invalid(dir + ": cannot list directory: " + ec.message());
  std::sort(files.begin(), files.end());
  for (const std::string& file : files) GPUPLAN_RETURN_IF_ERROR(LoadFile(file));
  return Status::Ok();
}

Status HardwareDb::Validate() const {
  for (const auto& [id, g] : gpus_) {
    const std::string where = FileOf(gpu_files_, id) + ": gpu '" + id + "': field ";
    if (!g.default_node.empty() && nodes_.find(g.default_node) == nodes_.end()) {
      return Status::Invalid(where + "'default_node': unknown node '" + g.default_node +
                             "' (known nodes: " + JoinKeys(nodes_) + ")");
    }
    if (g.scaleup_domain_gpus < 1) {
      return Status::Invalid(where + "'scaleup.domain_gpus': must be >= 1, got " +
                             std::to_string(g.scaleup_domain_gpus));
    }
    if (!IsFraction(g.gemm_efficiency)) {
      return Status::Invalid(where + "'gemm_efficiency': must be in (0, 1], got " +
                             FormatNumber(g.gemm_efficiency));
    }
    if (!IsFraction(g.memory_efficiency)) {
      return Status::Invalid(where + "'memory_efficiency': must be in (0, 1], got " +
                             FormatNumber(g.memory_efficiency));
    }
    if (g.scaleup_kind != "none" && !IsFraction(g.scaleup_collective_efficiency)) {
      return Status::Invalid(where + "'scaleup.collective_efficiency': must be in (0, 1], got " +
                             FormatNumber(g.scaleup_collective_efficiency));
    }
  }
  for (const auto& [id, n] : networks_) {
    if (!IsFraction(n.collective_efficiency)) {
      return Status::Invalid(FileOf(network_files_, id) + ": network '" + id +
                             "': field 'collective_efficiency': must be in (0, 1], got " +
                             FormatNumber(n.collective_efficiency));
    }
  }
  for (const auto& [id, n] : nodes_) {
    const std::string where = FileOf(node_files_, id) + ": node '" + id + "': field ";
    if (gpus_.find(n.gpu) == gpus_.end()) {
      return Status::Invalid(where + "'gpu': unknown gpu '" + n.gpu +
                             "' (known gpus: " + JoinKeys(gpus_) + ")");
    }
    if (networks_.find(n.network) == networks_.end()) {
      return Status::Invalid(where + "'network': unknown network '" + n.network +
                             "' (known networks: " + JoinKeys(networks_) + ")");
    }
    if (n.gpus_per_node < 1) {
      return Status::Invalid(where + "'gpus_per_node': must be >= 1, got " +
                             std::to_string(n.gpus_per_node));
    }
  }
  for (size_t i = 0; i < prices_.size(); ++i) {
    const PriceEntry& p = prices_[i];
    const std::string where = price_contexts_[i] + ": field ";
    if (!IsLowerCaseId(p.provider)) {
      return Status::Invalid(where + "'provider': must be " + std::string(kProviderIdRule) +
                             ", got '" + p.provider + "'");
    }
    if (gpus_.find(p.gpu) == gpus_.end()) {
      return Status::Invalid(where + "'gpu': unknown gpu '" + p.gpu +
                             "' (known gpus: " + JoinKeys(gpus_) + ")");
    }
    if (!p.node.empty()) {
      auto node = nodes_.find(p.node);
      if (node == nodes_.end()) {
        return Status::Invalid(where + "'node': unknown node '" + p.node +
                               "' (known nodes: " + JoinKeys(nodes_) + ")");
      }
      if (node->second.gpu != p.gpu) {
        return Status::Invalid(where + "'node': node '" + p.node + "' holds " + node->second.gpu +
                               ", not " + p.gpu);
      }
    }
    if (!ParsePriceKind(PriceKindName(p.kind), nullptr)) {
      return Status::Invalid(where + "'kind': must be on-demand or spot");
    }
    if (!(p.usd_per_gpu_hour > 0)) {
      return Status::Invalid(where + "'usd_per_gpu_hour': must be > 0, got " +
                             FormatNumber(p.usd_per_gpu_hour));
    }
    if (p.gpus_per_instance < 1) {
      return Status::Invalid(where + "'gpus_per_instance': must be >= 1, got " +
                             std::to_string(p.gpus_per_instance));
    }
    if (p.source.empty()) return Status::Invalid(where + "'source': must be a non-empty string");
  }
  return ValidateReliability();
}

Status HardwareDb::ValidateReliability() const {
  if (reliability_file_.empty()) {
    return Status::Invalid(
        "<hardware db>: reliability: no loaded file has a top-level 'reliability' object (the "
        "built-in reliability.json has one)");
  }
  const ReliabilitySpec& r = reliability_;
  const std::string where = reliability_file_ + ": reliability: field ";
  if (!(r.interruptions_per_gpu_hour >= 0)) {
    return Status::Invalid(where + "'interruptions_per_gpu_hour': must be >= 0, got " +
                           FormatNumber(r.interruptions_per_gpu_hour));
  }
  if (!(r.restart_s >= 0)) {
    return Status::Invalid(where + "'restart_s': must be >= 0, got " + FormatNumber(r.restart_s));
  }
  for (const auto& [field, value] :
       {std::pair{"host_repair_share", r.host_repair_share}, {"host_repair_s", r.host_repair_s}}) {
    if (!(value >= 0)) {
      return Status::Invalid(where + "'" + field +
                             "': must be >= 0; no loaded 'reliability' object gives it");
    }
  }
  if (!(r.checkpoint_write_bytes_per_s_per_node > 0)) {
    return Status::Invalid(where +
                           "'checkpoint_write_gbps_per_node': must be > 0; no loaded "
                           "'reliability' object gives it");
  }
  for (const auto& [provider, rate] : r.spot_preemptions_per_instance_hour) {
    if (!(rate >= 0)) {
      return Status::Invalid(where + "'spot_preemptions_per_instance_hour." + provider +
                             "': must be >= 0, got " + FormatNumber(rate));
    }
  }
  if (r.source.empty()) return Status::Invalid(where + "'source': must be a non-empty string");
  return Status::Ok();
}

const GpuSpec* HardwareDb::FindGpu(const std::string& id) const { return Find(gpus_, id); }
const NetworkSpec* HardwareDb::FindNetwork(const std::string& id) const {
  return Find(networks_, id);
}
const NodeTemplate* HardwareDb::FindNode(const std::string& id) const { return Find(nodes_, id); }
const FrameworkSpec* HardwareDb::FindFramework(const std::string& id) const {
  return Find(frameworks_, id);
}

std::vector<std::string> HardwareDb::GpuIds() const { return Keys(gpus_); }
std::vector<std::string> HardwareDb::NetworkIds() const { return Keys(networks_); }
std::vector<std::string> HardwareDb::NodeIds() const { return Keys(nodes_); }
std::vector<std::string> HardwareDb::FrameworkIds() const { return Keys(frameworks_); }

std::vector<const PriceEntry*> HardwareDb::FindPrices(const std::string& gpu,
                                                      PriceKind kind) const {
  std::vector<const PriceEntry*> found;
  for (const PriceEntry& p : prices_) {
    if (p.gpu == gpu && p.kind == kind) found.push_back(&p);
  }
  std::stable_sort(found.begin(), found.end(), [](const PriceEntry* a, const PriceEntry* b) {
    return a->usd_per_gpu_hour < b->usd_per_gpu_hour;
  });
  return found;
}

std::vector<std::string> HardwareDb::Providers() const {
  std::vector<std::string> providers;
  for (const PriceEntry& p : prices_) providers.push_back(p.provider);
  std::sort(providers.begin(), providers.end());
  providers.erase(std::unique(providers.begin(), providers.end()), providers.end());
  return providers;
}

std::string ResolveDataRoot(const std::string& executable_path, const std::string& compiled_root) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!executable_path.empty()) {
    const fs::path installed =
        fs::path(executable_path).parent_path().parent_path() / "share" / "gpuplan";
    if (fs::is_directory(installed / "hardware-db", ec)) return installed.string();
  }
  return compiled_root;
}

std::string DataRoot() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ResolveDataRoot(ec ? std::string() : exe.string(), GPUPLAN_DATA_ROOT);
}

std::string BuiltinHardwareDbDir() { return DataRoot() + "/hardware-db/data"; }

std::string BuiltinCalibrationDir() { return DataRoot() + "/hardware-db/calibration"; }

Expected<HardwareDb> LoadHardwareDb(const std::vector<std::string>& extra_dirs) {
  HardwareDb db;
  const std::string builtin = BuiltinHardwareDbDir();
  std::error_code ec;
  if (builtin.empty() || !std::filesystem::is_directory(builtin, ec)) {
    return Status::Unavailable(
        "built-in hardware database not found at '" + builtin +
        "' (the source tree compiled in, or <prefix>/share/gpuplan when installed)");
  }
  GPUPLAN_RETURN_IF_ERROR(db.LoadDirectory(builtin));
  for (const std::string& dir : extra_dirs) GPUPLAN_RETURN_IF_ERROR(db.LoadDirectory(dir));
  GPUPLAN_RETURN_IF_ERROR(db.Validate());
  return db;
}

}  // namespace gpuplan
