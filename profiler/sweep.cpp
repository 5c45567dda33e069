#include "profiler/sweep.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <set>
#include <utility>

namespace gpuplan {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::set<std::string> NameTokens(const std::string& name) {
  std::set<std::string> tokens;
  std::string cur;
  for (char ch : name + " ") {
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      cur += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    } else if (!cur.empty()) {
      tokens.insert(cur);
      cur.clear();
    }
  }
  return tokens;
}

// Counts measurements and reports them to the progress sink.
class Counter {
 public:
  Counter(ProfileProgress* progress, int64_t total) : progress_(progress), total_(total) {}
  void Done(std::string_view phase) {
    ++done_;
    if (progress_ != nullptr) progress_->Update(phase, done_, total_);
  }

 private:
  ProfileProgress* progress_;
  int64_t total_;
  int64_t done_ = 0;
};

// Element-aligned size: a whole number of elements per rank, at least one.
double AlignCollectiveBytes(double bytes, int ranks, double element_bytes) {
  const double unit = element_bytes * ranks;
  return std::max(unit, std::floor(bytes / unit) * unit);
}

std::string ShapeText(const GemmShape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
         (s.batch > 1 ? " x" + std::to_string(s.batch) : "");
}

}  // namespace

ProfileOptions DefaultProfileOptions(bool quick) {
  ProfileOptions o;
  o.quick = quick;
  if (quick) {
    o.timing.min_seconds = 0.005;
    o.timing.warmup_iterations = 1;
    o.collective_step_factor = 4;
  }
  return o;
}

std::vector<GemmShape> DefaultGemmShapes(bool quick) {
  std::vector<GemmShape> shapes;
  const std::vector<int64_t> squares =
      quick ? std::vector<int64_t>{1024, 2048, 4096, 8192}
            : std::vector<int64_t>{512, 1024, 2048, 3072, 4096, 6144, 8192, 16384};
  for (int64_t s : squares) shapes.push_back({s, s, s, 1});
  const std::vector<int64_t> hiddens =
      quick ? std::vector<int64_t>{4096, 8192} : std::vector<int64_t>{2048, 4096, 5120, 8192};
  const std::vector<int64_t> tokens =
      quick ? std::vector<int64_t>{4096} : std::vector<int64_t>{2048, 8192};
  for (int64_t h : hiddens) {
    for (int64_t t : tokens) {
      shapes.push_back({t, 3 * h, h, 1});  // QKV (MHA)
      shapes.push_back({t, h, h, 1});      // attention output projection
      shapes.push_back({t, 4 * h, h, 1});  // FC1 (GPT MLP, 4h)
      shapes.push_back({t, h, 4 * h, 1});  // FC2
    }
  }
  // Short and long reductions at a fixed output: the k-depth term of the GEMM model.
  for (int64_t k : {128, 256, 512}) shapes.push_back({4096, 4096, k, 1});
  return shapes;
}

std::vector<GemmShape> ModelGemmShapes(const ModelSpec& m, int64_t tp, int64_t tokens) {
  const int64_t d = m.head_dim > 0 ? m.head_dim : m.hidden_size / m.num_attention_heads;
  const int64_t q = m.num_attention_heads * d;
  const int64_t kv = m.num_kv_heads * d;
  const int64_t f = m.ffn_hidden_size;
  const bool swiglu = m.mlp == MlpKind::kSwiGlu;
  const int64_t h = m.hidden_size;
  std::vector<GemmShape> shapes = {
      {tokens, (q + 2 * kv) / tp, h, 1},          // QKV, column parallel
      {tokens, h, q / tp, 1},                     // O, row parallel
      {tokens, (swiglu ? 2 : 1) * f / tp, h, 1},  // FC1 (gate and up fused for SwiGLU)
      {tokens, h, f / tp, 1},                     // FC2, row parallel
      {tokens, m.vocab_size / tp, h, 1},          // LM head, vocabulary parallel
  };
  return shapes;
}

std::vector<KernelCase> DefaultKernelCases(bool quick) {
  std::vector<KernelCase> cases;
  const std::vector<int64_t> seqs =
      quick ? std::vector<int64_t>{2048, 8192} : std::vector<int64_t>{1024, 2048, 4096, 8192};
  const std::vector<int64_t> head_dims =
      quick ? std::vector<int64_t>{128} : std::vector<int64_t>{64, 128};
  for (KernelKind kind : {KernelKind::kAttentionForward, KernelKind::kAttentionBackward}) {
    for (int64_t d : head_dims) {
      for (int64_t s : seqs) {
        KernelCase c;
        c.kind = kind;
        c.batch = std::max<int64_t>(1, 16384 / s);  // 16k tokens per launch
        c.seq = s;
        c.head_dim = d;
        c.heads = 4096 / d;  // hidden 4096
        cases.push_back(c);
      }
    }
  }
  const int64_t tokens = 8192;
  const std::vector<int64_t> hiddens =
      quick ? std::vector<int64_t>{4096} : std::vector<int64_t>{4096, 8192};
  for (int64_t h : hiddens) {
    for (KernelKind kind : {KernelKind::kRmsNormForward, KernelKind::kRmsNormBackward,
                            KernelKind::kLayerNormForward, KernelKind::kLayerNormBackward}) {
      cases.push_back({kind, Precision::kBf16, 0, 0, 0, 0, tokens, h});
    }
    for (KernelKind kind : {KernelKind::kGeluForward, KernelKind::kGeluBackward}) {
      cases.push_back({kind, Precision::kBf16, 0, 0, 0, 0, tokens, 4 * h});
    }
    for (KernelKind kind : {KernelKind::kSwiGluForward, KernelKind::kSwiGluBackward}) {
      cases.push_back({kind, Precision::kBf16, 0, 0, 0, 0, tokens, h * 7 / 2});
    }
  }
  cases.push_back({KernelKind::kCrossEntropy, Precision::kBf16, 0, 0, 0, 0, 4096, 128256});
  if (!quick)
    cases.push_back({KernelKind::kCrossEntropy, Precision::kBf16, 0, 0, 0, 0, 8192, 32000});
  cases.push_back(
      {KernelKind::kAdam, Precision::kBf16, 0, 0, 0, 0, 1, quick ? 50000000 : 200000000});
  return cases;
}

std::vector<double> CollectiveSizes(double min_bytes, double max_bytes, double factor) {
  std::vector<double> sizes;
  if (!(min_bytes > 0) || !(factor > 1)) return sizes;
  for (double s = min_bytes; s <= max_bytes * (1 + 1e-9); s *= factor) sizes.push_back(s);
  return sizes;
}

std::vector<int> CollectiveGroupSizes(int max_ranks) {
  if (max_ranks <= 1) return {1};
  std::vector<int> sizes;
  for (int n = 2; n <= max_ranks; n *= 2) sizes.push_back(n);
  if (sizes.back() != max_ranks) sizes.push_back(max_ranks);
  return sizes;
}

std::string MatchGpuId(const GpuDeviceInfo& device, const HardwareDb& db) {
  const std::set<std::string> tokens = NameTokens(device.name);
  std::string best;
  // Most shared tokens first; between equals, the entry whose name adds fewer words the device
  // does not print ("NVIDIA H200" is the SXM part, not "NVIDIA H200 NVL 141GB (PCIe, ...)").
  std::pair<size_t, size_t> best_score{0, 0};  // (shared, SIZE_MAX - unshared)
  bool tie = false;
  for (const auto& [id, gpu] : db.gpus()) {
    if (gpu.sm_count > 0 && gpu.sm_count != device.sm_count) continue;
    if (std::abs(device.memory_bytes - gpu.memory_bytes) > 0.10 * gpu.memory_bytes) continue;
    size_t shared = 0;
    size_t unshared = 0;
    bool model_number = false;  // a shared token like "h100" or "4090" (not a size like "80gb")
    for (const std::string& t : NameTokens(gpu.name)) {
      if (tokens.count(t) == 0) {
        ++unshared;
        continue;
      }
      ++shared;
      const bool digit = std::any_of(t.begin(), t.end(), [](char ch) {
        return std::isdigit(static_cast<unsigned char>(ch)) != 0;
      });
      model_number = model_number || (digit && !t.ends_with("gb"));
    }
    if (!model_number) continue;
    const std::pair<size_t, size_t> score{shared, SIZE_MAX - unshared};
    if (score > best_score) {
      best = id;
      best_score = score;
      tie = false;
    } else if (score == best_score) {
      tie = true;
    }
  }
  return tie ? "" : best;
}

Expected<Profile> RunProfile(const ProfileOptions& o, ProfileBackends& b, const HardwareDb& db,
                             ProfileProgress* progress) {
  if (b.probe == nullptr) return Status::Internal("RunProfile: no GPU probe");
  Expected<std::vector<GpuDeviceInfo>> devices = b.probe->ListDevices();
  if (!devices.ok()) return devices.status();
  if (o.device < 0 || o.device >= static_cast<int>(devices->size())) {
    return Status::Invalid("--device: " + std::to_string(o.device) +
                           " is not a GPU of this host (" + std::to_string(devices->size()) +
                           " found)");
  }
  Profile p;
  p.tool = o.tool;
  p.host = o.host;
  p.created_utc = o.created_utc;
  p.quick = o.quick;
  p.devices = *devices;
  p.versions = b.probe->Versions();
  Expected<std::vector<GpuLinkInfo>> links = b.probe->ListLinks();
  if (links.ok()) {
    p.links = *links;
  } else {
    p.skipped.push_back("topology: " + links.status().message());
  }
  const GpuDeviceInfo& dev = p.devices[static_cast<size_t>(o.device)];
  p.gpu_id = MatchGpuId(dev, db);
  p.source = "gpuplan profile on " + (o.host.empty() ? std::string("this host") : o.host) +
             ", GPU " + std::to_string(o.device) + " (" + dev.name + ")";

  const std::vector<GemmShape> shapes =
      o.gemm_shapes.empty() ? DefaultGemmShapes(o.quick) : o.gemm_shapes;
  const std::vector<KernelCase> kernels =
      o.kernel_cases.empty() ? DefaultKernelCases(o.quick) : o.kernel_cases;
  std::vector<Precision> precisions;
  for (Precision prec : o.precisions) {
    if (b.gemm != nullptr && b.gemm->Supports(prec)) {
      precisions.push_back(prec);
    } else if (b.gemm != nullptr) {
      p.skipped.push_back(std::string(PrecisionName(prec)) + " GEMM: not supported on " + dev.name +
                          " (compute capability " + std::to_string(dev.compute_capability_major) +
                          "." + std::to_string(dev.compute_capability_minor) + ")");
    }
  }
  const std::vector<double> copy_sizes =
      o.quick ? std::vector<double>{256 * kMiB}
              : std::vector<double>{64 * kMiB, 256 * kMiB, 1024 * kMiB};
  const int max_ranks = b.collectives != nullptr ? b.collectives->MaxRanks() : 0;
  const std::vector<int> groups = CollectiveGroupSizes(max_ranks);
  const std::vector<double> sizes =
      CollectiveSizes(o.collective_min_bytes, o.collective_max_bytes, o.collective_step_factor);
  const int64_t peers = static_cast<int64_t>(p.devices.size() * (p.devices.size() - 1));
  const int64_t total =
      (b.gemm ? static_cast<int64_t>(shapes.size() * precisions.size()) : 0) +
      (b.kernels ? static_cast<int64_t>(kernels.size()) : 0) +
      (b.bandwidth ? static_cast<int64_t>(3 * copy_sizes.size()) + peers : 0) +
      (b.collectives ? static_cast<int64_t>(kCollectiveCount * groups.size() * sizes.size()) : 0);
  Counter counter(progress, total);

  // A failure of one case (out of memory, unsupported shape) is noted, the sweep goes on.
  auto note = [&](const std::string& what, const Status& st) {
    p.skipped.push_back(what + ": " + st.message());
  };

  if (b.gemm == nullptr) p.skipped.push_back("GEMM: no GEMM backend");
  for (Precision prec : precisions) {
    for (const GemmShape& s : shapes) {
      Expected<double> t = b.gemm->Seconds(prec, s, o.timing);
      if (t.ok()) {
        p.gemm.push_back({prec, s, *t});
      } else {
        note(std::string(PrecisionName(prec)) + " GEMM " + ShapeText(s), t.status());
      }
      counter.Done("GEMM");
    }
  }

  if (b.kernels == nullptr) p.skipped.push_back("kernels: no kernel backend");
  for (const KernelCase& c : b.kernels ? kernels : std::vector<KernelCase>{}) {
    Expected<double> t = b.kernels->Seconds(c, o.timing);
    if (t.ok()) {
      p.kernels.push_back({c, *t});
    } else {
      note(std::string(GetKernelInfo(c.kind).name), t.status());
    }
    counter.Done("kernels");
  }

  if (b.bandwidth == nullptr) p.skipped.push_back("bandwidth: no copy backend");
  if (b.bandwidth != nullptr) {
    using Fn = Expected<double> (BandwidthRunner::*)(int, double, const TimingPolicy&);
    const std::pair<BandwidthKind, Fn> kinds[] = {
        {BandwidthKind::kDeviceCopy, &BandwidthRunner::DeviceCopySeconds},
        {BandwidthKind::kHostToDevice, &BandwidthRunner::HostToDeviceSeconds},
        {BandwidthKind::kDeviceToHost, &BandwidthRunner::DeviceToHostSeconds}};
    for (const auto& [kind, fn] : kinds) {
      for (double bytes : copy_sizes) {
        Expected<double> t = (b.bandwidth.get()->*fn)(o.device, bytes, o.timing);
        if (t.ok()) {
          p.bandwidth.push_back({kind, o.device, o.device, bytes, *t});
        } else {
          note(std::string(BandwidthKindName(kind)), t.status());
        }
        counter.Done("bandwidth");
      }
    }
    for (const GpuDeviceInfo& from : p.devices) {
      for (const GpuDeviceInfo& to : p.devices) {
        if (from.index == to.index) continue;
        Expected<double> t =
            b.bandwidth->PeerCopySeconds(from.index, to.index, 256 * kMiB, o.timing);
        if (t.ok()) {
          p.bandwidth.push_back({BandwidthKind::kPeer, from.index, to.index, 256 * kMiB, *t});
        } else {
          note("peer copy " + std::to_string(from.index) + "->" + std::to_string(to.index),
               t.status());
        }
        counter.Done("peer copies");
      }
    }
  }

  if (b.collectives == nullptr) {
    p.skipped.push_back("collectives: " + (b.no_collectives_reason.empty()
                                               ? std::string("no NCCL backend")
                                               : b.no_collectives_reason));
  }
  if (max_ranks == 1) {
    p.skipped.push_back(
        "collectives over 2+ GPUs: this host has one GPU (1-rank NCCL calls "
        "measured for their fixed cost only)");
  }
  for (int ranks : b.collectives ? groups : std::vector<int>{}) {
    for (int i = 0; i < kCollectiveCount; ++i) {
      const auto kind = static_cast<Collective>(i);
      double last = 0;
      for (double requested : sizes) {
        const double bytes = AlignCollectiveBytes(requested, ranks, b.collectives->ElementBytes());
        counter.Done("collectives");
        if (!b.collectives->Runs(kind)) continue;
        if (bytes == last) continue;
        last = bytes;
        Expected<double> t = b.collectives->Seconds(kind, ranks, bytes, o.timing);
        if (t.ok()) {
          p.collectives.push_back({kind, ranks, bytes, *t});
        } else {
          note(std::string(GetCollectiveInfo(kind).name) + " x" + std::to_string(ranks) + " " +
                   std::to_string(static_cast<int64_t>(bytes)) + " B",
               t.status());
        }
      }
    }
  }
  return p;
}

}  // namespace gpuplan
