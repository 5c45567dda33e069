#include "profiler/profile.h"

#include <array>
#include <climits>
#include <cstdio>

#include "common/file_write.h"
#include "common/json_reader.h"
#include "common/limits.h"
#include "common/str_format.h"

namespace gpuplan {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 4> kBandwidthNames = {"device_copy", "host_to_device",
                                                             "device_to_host", "peer"};

std::vector<std::string_view> PrecisionNames() {
  std::vector<std::string_view> names;
  for (int i = 0; i < kPrecisionCount; ++i)
    names.push_back(PrecisionName(static_cast<Precision>(i)));
  return names;
}

std::vector<std::string_view> KernelNames() {
  std::vector<std::string_view> names;
  for (const KernelInfo& k : KernelTable()) names.push_back(k.name);
  return names;
}

std::vector<std::string_view> CollectiveNames() {
  std::vector<std::string_view> names;
  for (int i = 0; i < kCollectiveCount; ++i)
    names.push_back(GetCollectiveInfo(static_cast<Collective>(i)).name);
  return names;
}

// Device indices: integers that may be 0, must be present and fit an int.
int64_t RequiredIndex(JsonObjectReader& r, std::string_view field) {
  return r.IntInRange(field, 0, INT_MAX);
}

// Bounds of device facts read into an int (checked before narrowing): far above real GPUs.
constexpr int64_t kMaxSmCount = 1 << 20;
constexpr int64_t kMaxBusWidthBits = 1 << 20;

Precision ReadPrecision(JsonObjectReader& r) {
  const std::vector<std::string_view> names = PrecisionNames();
  Precision p = Precision::kBf16;
  ParsePrecision(r.Enum("dtype", names), &p);
  return p;
}

// Runs `read` on every object of the array `section` (absent = empty); errors name the entry.
template <typename T, typename F>
Status ReadArray(const json& root, std::string_view section, const std::string& origin,
                 std::vector<T>* out, F read) {
  auto it = root.find(section);
  if (it == root.end()) return Status::Ok();
  if (!it->is_array()) {
    return Status::Invalid(origin + ": field '" + std::string(section) + "': must be an array");
  }
  for (size_t i = 0; i < it->size(); ++i) {
    JsonObjectReader r((*it)[i],
                       origin + ": " + std::string(section) + "[" + std::to_string(i) + "]");
    T value{};
    read(r, &value);
    GPUPLAN_RETURN_IF_ERROR(r.status());
    out->push_back(value);
  }
  return Status::Ok();
}

void ReadDevice(JsonObjectReader& r, GpuDeviceInfo* d) {
  r.RejectUnknownFields({"index", "name", "pci_bus_id", "sm_count", "compute_capability",
                         "memory_bytes", "sm_clock_hz", "memory_clock_hz", "memory_bus_width_bits",
                         "power_limit_watts"});
  d->index = static_cast<int>(RequiredIndex(r, "index"));
  d->name = r.String("name");
  d->pci_bus_id = r.OptionalString("pci_bus_id", "");
  d->sm_count = static_cast<int>(r.IntInRange("sm_count", 1, kMaxSmCount));
  const std::string cc = r.String("compute_capability");
  int major = 0, minor = 0;
  if (r.status().ok() && std::sscanf(cc.c_str(), "%d.%d", &major, &minor) != 2) {
    r.Fail("compute_capability", "must look like \"9.0\", got \"" + cc + "\"");
  }
  d->compute_capability_major = major;
  d->compute_capability_minor = minor;
  d->memory_bytes = r.PositiveNumber("memory_bytes");
  d->clock_hz = r.OptionalNonNegativeNumber("sm_clock_hz", 0);
  d->memory_clock_hz = r.OptionalNonNegativeNumber("memory_clock_hz", 0);
  d->memory_bus_width_bits =
      static_cast<int>(r.OptionalIntInRange("memory_bus_width_bits", 0, 0, kMaxBusWidthBits));
  d->power_limit_watts = r.OptionalNonNegativeNumber("power_limit_watts", 0);
}

void ReadLink(JsonObjectReader& r, GpuLinkInfo* l) {
  r.RejectUnknownFields(
      {"from", "to", "peer_access", "performance_rank", "native_atomics", "nvlinks"});
  l->from = static_cast<int>(RequiredIndex(r, "from"));
  l->to = static_cast<int>(RequiredIndex(r, "to"));
  l->peer_access = r.OptionalBool("peer_access", false);
  l->performance_rank =
      r.Has("performance_rank")
          ? static_cast<int>(r.OptionalIntInRange("performance_rank", 0, 0, INT_MAX))
          : -1;
  l->native_atomics = r.OptionalBool("native_atomics", false);
  l->nvlinks =
      r.Has("nvlinks") ? static_cast<int>(r.OptionalIntInRange("nvlinks", 0, 0, INT_MAX)) : -1;
}

void ReadGemm(JsonObjectReader& r, GemmSample* g) {
  r.RejectUnknownFields({"dtype", "m", "n", "k", "batch", "seconds", "tflops"});
  g->dtype = ReadPrecision(r);
  g->shape.m = r.PositiveInt("m");
  g->shape.n = r.PositiveInt("n");
  g->shape.k = r.PositiveInt("k");
  g->shape.batch = r.OptionalPositiveInt("batch", 1);
  g->seconds = r.PositiveNumber("seconds");
}

void ReadKernel(JsonObjectReader& r, KernelSample* k) {
  r.RejectUnknownFields({"kernel", "dtype", "batch", "seq", "heads", "head_dim", "rows", "cols",
                         "seconds", "tflops", "gbps"});
  const std::vector<std::string_view> names = KernelNames();
  ParseKernelName(r.Enum("kernel", names), &k->kernel.kind);
  k->kernel.dtype = ReadPrecision(r);
  if (GetKernelInfo(k->kernel.kind).attention) {
    k->kernel.batch = r.PositiveInt("batch");
    k->kernel.seq = r.PositiveInt("seq");
    k->kernel.heads = r.PositiveInt("heads");
    k->kernel.head_dim = r.PositiveInt("head_dim");
  } else {
    k->kernel.rows = r.PositiveInt("rows");
    k->kernel.cols = r.PositiveInt("cols");
  }
  k->seconds = r.PositiveNumber("seconds");
}

void ReadBandwidth(JsonObjectReader& r, BandwidthSample* b) {
  r.RejectUnknownFields({"kind", "from", "to", "bytes", "seconds", "gbps"});
  const std::string kind = r.Enum("kind", kBandwidthNames);
  for (size_t i = 0; i < kBandwidthNames.size(); ++i) {
    if (kBandwidthNames[i] == kind) b->kind = static_cast<BandwidthKind>(i);
  }
  b->from = static_cast<int>(RequiredIndex(r, "from"));
  b->to = static_cast<int>(r.Has("to") ? r.OptionalIntInRange("to", 0, 0, INT_MAX) : b->from);
  b->bytes = r.PositiveNumber("bytes");
  b->seconds = r.PositiveNumber("seconds");
}

void ReadCollective(JsonObjectReader& r, CollectiveSample* c) {
  r.RejectUnknownFields({"collective", "ranks", "bytes", "seconds", "algbw_gbps", "busbw_gbps"});
  const std::vector<std::string_view> names = CollectiveNames();
  ParseCollectiveName(r.Enum("collective", names), &c->kind);
  c->ranks = static_cast<int>(r.IntInRange("ranks", 1, kMaxGpus));
  c->bytes = r.PositiveNumber("bytes");
  c->seconds = r.PositiveNumber("seconds");
}

json KernelToJson(const KernelSample& k) {
  const KernelInfo& info = GetKernelInfo(k.kernel.kind);
  json j = {{"kernel", info.name}, {"dtype", PrecisionName(k.kernel.dtype)}};
  if (info.attention) {
    j["batch"] = k.kernel.batch;
    j["seq"] = k.kernel.seq;
    j["heads"] = k.kernel.heads;
    j["head_dim"] = k.kernel.head_dim;
  } else {
    j["rows"] = k.kernel.rows;
    j["cols"] = k.kernel.cols;
  }
  j["seconds"] = k.seconds;
  const double flops = info.flops(k.kernel);
  if (flops > 0) j["tflops"] = flops / k.seconds / 1e12;
  j["gbps"] = info.bytes(k.kernel) / k.seconds / 1e9;
  return j;
}

}  // namespace

double GemmSample::Flops() const {
  return 2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) *
         static_cast<double>(shape.k) * static_cast<double>(shape.batch);
}

std::string_view BandwidthKindName(BandwidthKind kind) {
  return kBandwidthNames[static_cast<size_t>(kind)];
}

double BandwidthSample::BytesPerSecond() const {
  return (kind == BandwidthKind::kDeviceCopy ? 2.0 : 1.0) * bytes / seconds;
}

double CollectiveSample::BusBytesPerSecond() const {
  return AlgBytesPerSecond() * GetCollectiveInfo(kind).bus_factor(ranks);
}

json ProfileToJson(const Profile& p) {
  json j = {{"format", kProfileFormat}, {"version", p.version}};
  // Unknown strings are left out (readers take absent as unknown).
  auto put = [](json& o, const char* key, const std::string& value) {
    if (!value.empty()) o[key] = value;
  };
  put(j, "created_utc", p.created_utc);
  put(j, "tool", p.tool);
  put(j, "host", p.host);
  j["quick"] = p.quick;
  put(j, "gpu_id", p.gpu_id);
  put(j, "source", p.source);
  j["versions"] = json::object();
  put(j["versions"], "cuda_runtime", p.versions.cuda_runtime);
  put(j["versions"], "cuda_driver", p.versions.cuda_driver);
  put(j["versions"], "driver", p.versions.driver);
  put(j["versions"], "nccl", p.versions.nccl);
  put(j["versions"], "cublas", p.versions.cublas);
  put(j["versions"], "cpu_gemm", p.versions.cpu_gemm);
  put(j["versions"], "mpi", p.versions.mpi);
  j["devices"] = json::array();
  for (const GpuDeviceInfo& d : p.devices) {
    json e = {{"index", d.index},
              {"name", d.name},
              {"sm_count", d.sm_count},
              {"compute_capability", std::to_string(d.compute_capability_major) + "." +
                                         std::to_string(d.compute_capability_minor)},
              {"memory_bytes", d.memory_bytes},
              {"sm_clock_hz", d.clock_hz},
              {"memory_clock_hz", d.memory_clock_hz},
              {"memory_bus_width_bits", d.memory_bus_width_bits},
              {"power_limit_watts", d.power_limit_watts}};
    put(e, "pci_bus_id", d.pci_bus_id);
    j["devices"].push_back(e);
  }
  j["links"] = json::array();
  for (const GpuLinkInfo& l : p.links) {
    json e = {{"from", l.from},
              {"to", l.to},
              {"peer_access", l.peer_access},
              {"native_atomics", l.native_atomics}};
    if (l.performance_rank >= 0) e["performance_rank"] = l.performance_rank;
    if (l.nvlinks >= 0) e["nvlinks"] = l.nvlinks;
    j["links"].push_back(e);
  }
  j["gemm"] = json::array();
  for (const GemmSample& g : p.gemm) {
    j["gemm"].push_back({{"dtype", PrecisionName(g.dtype)},
                         {"m", g.shape.m},
                         {"n", g.shape.n},
                         {"k", g.shape.k},
                         {"batch", g.shape.batch},
                         {"seconds", g.seconds},
                         {"tflops", g.Flops() / g.seconds / 1e12}});
  }
  j["kernels"] = json::array();
  for (const KernelSample& k : p.kernels) j["kernels"].push_back(KernelToJson(k));
  j["bandwidth"] = json::array();
  for (const BandwidthSample& b : p.bandwidth) {
    j["bandwidth"].push_back({{"kind", BandwidthKindName(b.kind)},
                              {"from", b.from},
                              {"to", b.to},
                              {"bytes", b.bytes},
                              {"seconds", b.seconds},
                              {"gbps", b.BytesPerSecond() / 1e9}});
  }
  j["collectives"] = json::array();
  for (const CollectiveSample& c : p.collectives) {
    j["collectives"].push_back({{"collective", GetCollectiveInfo(c.kind).name},
                                {"ranks", c.ranks},
                                {"bytes", c.bytes},
                                {"seconds", c.seconds},
                                {"algbw_gbps", c.AlgBytesPerSecond() / 1e9},
                                {"busbw_gbps", c.BusBytesPerSecond() / 1e9}});
  }
  j["skipped"] = p.skipped;
  if (p.corrections.Any() || !p.corrections.reports.empty()) {
    json c = {{"compute_time_factor", p.corrections.compute_time_factor},
              {"communication_time_factor", p.corrections.communication_time_factor},
              {"reports", p.corrections.reports}};
    put(c, "created_utc", p.corrections.created_utc);
    j["corrections"] = c;
  }
  return j;
}

Expected<Profile> ProfileFromJson(const json& root, const std::string& origin) {
  JsonObjectReader r(root, origin);
  r.RejectUnknownFields({"format", "version", "created_utc", "tool", "host", "quick", "gpu_id",
                         "source", "versions", "devices", "links", "gemm", "kernels", "bandwidth",
                         "collectives", "skipped", "corrections"});
  Profile p;
  const std::string format = r.String("format");
  if (r.status().ok() && format != kProfileFormat) {
    r.Fail("format", "must be \"" + std::string(kProfileFormat) +
                         "\" (a file written by "
                         "`gpuplan profile`), got \"" +
                         format + "\"");
  }
  p.version = static_cast<int>(r.IntInRange("version", 1, INT_MAX));
  if (r.status().ok() && p.version != kProfileVersion) {
    r.Fail("version", "this gpuplan reads profile version " + std::to_string(kProfileVersion) +
                          ", the file is version " + std::to_string(p.version));
  }
  p.created_utc = r.OptionalString("created_utc", "");
  p.tool = r.OptionalString("tool", "");
  p.host = r.OptionalString("host", "");
  p.quick = r.OptionalBool("quick", false);
  p.gpu_id = r.OptionalString("gpu_id", "");
  p.source = r.OptionalString("source", "");
  p.skipped = r.OptionalStringList("skipped");
  if (const json* v = r.OptionalObject("versions")) {
    JsonObjectReader vr(*v, origin + ": versions");
    vr.RejectUnknownFields(
        {"cuda_runtime", "cuda_driver", "driver", "nccl", "cublas", "cpu_gemm", "mpi"});
    p.versions.cuda_runtime = vr.OptionalString("cuda_runtime", "");
    p.versions.cuda_driver = vr.OptionalString("cuda_driver", "");
    p.versions.driver = vr.OptionalString("driver", "");
    p.versions.nccl = vr.OptionalString("nccl", "");
    p.versions.cublas = vr.OptionalString("cublas", "");
    p.versions.cpu_gemm = vr.OptionalString("cpu_gemm", "");
    p.versions.mpi = vr.OptionalString("mpi", "");
    GPUPLAN_RETURN_IF_ERROR(vr.status());
  }
  if (const json* c = r.OptionalObject("corrections")) {
    JsonObjectReader cr(*c, origin + ": corrections");
    cr.RejectUnknownFields(
        {"compute_time_factor", "communication_time_factor", "reports", "created_utc"});
    p.corrections.compute_time_factor = cr.OptionalPositiveNumber("compute_time_factor", 1);
    p.corrections.communication_time_factor =
        cr.OptionalPositiveNumber("communication_time_factor", 1);
    p.corrections.reports = cr.OptionalStringList("reports");
    p.corrections.created_utc = cr.OptionalString("created_utc", "");
    GPUPLAN_RETURN_IF_ERROR(cr.status());
  }
  GPUPLAN_RETURN_IF_ERROR(r.status());
  GPUPLAN_RETURN_IF_ERROR(ReadArray(root, "devices", origin, &p.devices, ReadDevice));
  GPUPLAN_RETURN_IF_ERROR(ReadArray(root, "links", origin, &p.links, ReadLink));
  GPUPLAN_RETURN_IF_ERROR(ReadArray(root, "gemm", origin, &p.gemm, ReadGemm));
  GPUPLAN_RETURN_IF_ERROR(ReadArray(root, "kernels", origin, &p.kernels, ReadKernel));
  GPUPLAN_RETURN_IF_ERROR(ReadArray(root, "bandwidth", origin, &p.bandwidth, ReadBandwidth));
  GPUPLAN_RETURN_IF_ERROR(ReadArray(root, "collectives", origin, &p.collectives, ReadCollective));
  if (p.devices.empty()) {
    return Status::Invalid(origin + ": field 'devices': must list at least one GPU");
  }
  // GPU collectives run over the listed devices; the CPU backend's over the MPI ranks of a launch
  // on this host (versions.mpi), each one device of the kind listed.
  const int device_count = static_cast<int>(p.devices.size());
  for (size_t i = 0; i < p.collectives.size() && p.versions.mpi.empty(); ++i) {
    if (p.collectives[i].ranks > device_count) {
      return Status::Invalid(origin + ": collectives[" + std::to_string(i) +
                             "]: field 'ranks': " + std::to_string(p.collectives[i].ranks) + " " +
                             Noun(p.collectives[i].ranks, "rank", "ranks") +
                             " but the profile lists " + std::to_string(device_count) + " " +
                             Noun(device_count, "device", "devices"));
    }
  }
  return p;
}

Expected<Profile> ReadProfile(const std::string& path) {
  Expected<json> j = ReadJsonFile(path);
  if (!j.ok()) return j.status();
  return ProfileFromJson(*j, path);
}

Status WriteProfile(const std::string& path, const Profile& profile) {
  return WriteFileAtomically(
      path,
      ProfileToJson(profile).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

}  // namespace gpuplan
