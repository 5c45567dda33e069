#include "profiler/cpu_backends.h"

#include <unistd.h>

#include <Eigen/Core>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <span>

#include "common/str_format.h"
#include "kernels/reference_activation.h"
#include "kernels/reference_adam.h"
#include "kernels/reference_attention.h"
#include "kernels/reference_cross_entropy.h"
#include "kernels/reference_norm.h"

namespace gpuplan {
namespace {

// Largest buffer set one timed case may allocate: the sweep runs beside the build on a small CI
// host, and a rank of the CPU backend has a few GB (hardware-db cpu: memory_gb 2).
constexpr double kMaxCaseBytes = 2e9;

// Mean seconds of one call of `fn` (returning Status) under `t`: warm-up calls, then calls until
// the loop covers t.min_seconds (at least t.min_iterations, at most t.max_iterations).
template <typename Fn>
Expected<double> TimeLoop(const TimingPolicy& t, Fn&& fn) {
  for (int i = 0; i < t.warmup_iterations; ++i) GPUPLAN_RETURN_IF_ERROR(fn());
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  int iterations = 0;
  double elapsed = 0;
  while (iterations < t.min_iterations ||
         (elapsed < t.min_seconds && iterations < t.max_iterations)) {
    GPUPLAN_RETURN_IF_ERROR(fn());
    ++iterations;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  }
  return elapsed / iterations;
}

Status TooLarge(const std::string& what, double bytes) {
  return Status::Invalid(StrFormat("%s needs %.1f GB, more than the CPU backend's %.1f GB per case",
                                   what.c_str(), bytes / 1e9, kMaxCaseBytes / 1e9));
}

// /proc/cpuinfo's first value of `key` ("model name", "cpu MHz"), "" when absent.
std::string CpuInfoField(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const size_t begin = line.find_first_not_of(" \t", colon + 1);
    return begin == std::string::npos ? "" : line.substr(begin);
  }
  return "";
}

class CpuProbe : public GpuProbe {
 public:
  Expected<std::vector<GpuDeviceInfo>> ListDevices() override {
    GpuDeviceInfo d;
    const std::string model = CpuInfoField("model name");
    d.name = "CPU rank: " + (model.empty() ? std::string("unknown CPU") : model) + ", 1 thread";
    d.sm_count = 1;  // threads per rank: GEMM waves are those of one core
    const long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGESIZE);
    d.memory_bytes = pages > 0 && page_bytes > 0
                         ? static_cast<double>(pages) * static_cast<double>(page_bytes)
                         : 0;
    const std::string mhz = CpuInfoField("cpu MHz");
    d.clock_hz = mhz.empty() ? 0 : std::atof(mhz.c_str()) * 1e6;
    return std::vector<GpuDeviceInfo>{d};
  }
  std::string VersionString() override { return CpuGemmLibrary(); }
  Expected<std::vector<GpuLinkInfo>> ListLinks() override {
    return std::vector<GpuLinkInfo>{};  // one device
  }
  SoftwareVersions Versions() override {
    SoftwareVersions v;  // no CUDA, NCCL or cuBLAS
    v.cpu_gemm = CpuGemmLibrary();
    return v;
  }
};

class EigenGemmRunner : public GemmRunner {
 public:
  bool Supports(Precision p) const override { return p == Precision::kFp32; }
  Expected<double> Seconds(Precision p, const GemmShape& s, const TimingPolicy& t) override {
    if (!Supports(p)) {
      return Status::Invalid(std::string(PrecisionName(p)) +
                             " GEMM: the CPU backend computes in fp32 only");
    }
    if (s.m < 1 || s.n < 1 || s.k < 1 || s.batch < 1) {
      return Status::Invalid("GEMM dimensions must be positive");
    }
    const double bytes = 4.0 * static_cast<double>(s.m * s.k + s.k * s.n + s.m * s.n);
    if (bytes > kMaxCaseBytes) return TooLarge("GEMM", bytes);
    // Column-major as cuBLAS: C[m x n] = A[m x k] * B[k x n], the batch one after another.
    Eigen::MatrixXf a = Eigen::MatrixXf::Constant(s.m, s.k, 0.5f / static_cast<float>(s.k));
    Eigen::MatrixXf b = Eigen::MatrixXf::Constant(s.k, s.n, 1.0f);
    Eigen::MatrixXf c(s.m, s.n);
    return TimeLoop(t, [&] {
      for (int64_t i = 0; i < s.batch; ++i) c.noalias() = a * b;
      return Status::Ok();
    });
  }
};

// Deterministic inputs in [-1, 1): the kernels' time does not depend on the values.
std::vector<float> Pattern(int64_t n, float scale = 1.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = scale * (static_cast<float>((i * 37) % 200) / 100.0f - 1);
  return v;
}

std::vector<float> Zeros(int64_t n) { return std::vector<float>(static_cast<size_t>(n), 0.0f); }

// The reference kernels in float32 into preallocated outputs, as the executor's ranks run them.
class ReferenceKernelRunner : public KernelRunner {
 public:
  Expected<double> Seconds(const KernelCase& c, const TimingPolicy& t) override {
    const KernelInfo& info = GetKernelInfo(c.kind);
    const double elements = info.attention
                                ? static_cast<double>(c.batch * c.seq * c.heads * c.head_dim)
                                : static_cast<double>(c.rows * c.cols);
    // Inputs, outputs and saved statistics in float32: at most about eight tensors of a case.
    if (8.0 * 4.0 * elements > kMaxCaseBytes) {
      return TooLarge(std::string(info.name), 32.0 * elements);
    }
    using namespace kernels;
    using F = std::span<const float>;
    switch (c.kind) {
      case KernelKind::kAttentionForward:
      case KernelKind::kAttentionBackward: {
        const AttentionShape shape{c.batch, c.seq, c.heads, c.head_dim};
        GPUPLAN_RETURN_IF_ERROR(CheckShape(shape));
        const int64_t n = shape.Elements();
        const std::vector<float> q = Pattern(n, 0.1f), k = Pattern(n, 0.2f), v = Pattern(n);
        std::vector<float> o = Zeros(n), lse = Zeros(shape.StatRows());
        GPUPLAN_RETURN_IF_ERROR(ReferenceAttentionForwardInto<float>(shape, q, k, v, o, lse));
        if (c.kind == KernelKind::kAttentionForward) {
          return TimeLoop(
              t, [&] { return ReferenceAttentionForwardInto<float>(shape, q, k, v, o, lse); });
        }
        const std::vector<float> d_o = Pattern(n, 0.5f);
        std::vector<float> dq = Zeros(n), dk = Zeros(n), dv = Zeros(n);
        return TimeLoop(t, [&] {
          return ReferenceAttentionBackwardInto<float>(shape, q, k, v, F(o), d_o, F(lse), dq, dk,
                                                       dv);
        });
      }
      case KernelKind::kRmsNormForward:
      case KernelKind::kRmsNormBackward:
      case KernelKind::kLayerNormForward:
      case KernelKind::kLayerNormBackward: {
        const bool rms =
            c.kind == KernelKind::kRmsNormForward || c.kind == KernelKind::kRmsNormBackward;
        const NormKind kind = rms ? NormKind::kRmsNorm : NormKind::kLayerNorm;
        const MatrixShape shape{c.rows, c.cols};
        GPUPLAN_RETURN_IF_ERROR(CheckShape(shape));
        const std::vector<float> x = Pattern(shape.Elements()), weight = Pattern(c.cols, 0.5f);
        const std::vector<float> bias = rms ? std::vector<float>{} : Pattern(c.cols, 0.1f);
        std::vector<float> y = Zeros(shape.Elements()), mean = Zeros(rms ? 0 : c.rows),
                           rstd = Zeros(c.rows);
        constexpr double kEps = 1e-5;
        auto forward = [&] {
          return ReferenceNormForwardInto<float>(kind, shape, x, weight, bias, kEps, y, mean, rstd);
        };
        GPUPLAN_RETURN_IF_ERROR(forward());
        if (c.kind == KernelKind::kRmsNormForward || c.kind == KernelKind::kLayerNormForward) {
          return TimeLoop(t, forward);
        }
        const std::vector<float> dy = Pattern(shape.Elements(), 0.3f);
        std::vector<float> dx = Zeros(shape.Elements()), dweight = Zeros(c.cols),
                           dbias = Zeros(rms ? 0 : c.cols);
        return TimeLoop(t, [&] {
          return ReferenceNormBackwardInto<float>(kind, shape, x, weight, F(mean), F(rstd), dy, dx,
                                                  dweight, dbias);
        });
      }
      case KernelKind::kGeluForward:
      case KernelKind::kGeluBackward: {
        const int64_t n = c.rows * c.cols;
        const std::vector<float> x = Pattern(n), dy = Pattern(n, 0.3f);
        std::vector<float> out = Zeros(n);
        if (c.kind == KernelKind::kGeluForward) {
          return TimeLoop(t, [&] { return ReferenceGeluForwardInto<float>(x, out); });
        }
        return TimeLoop(t, [&] { return ReferenceGeluBackwardInto<float>(x, dy, out); });
      }
      case KernelKind::kSwiGluForward:
      case KernelKind::kSwiGluBackward: {
        const int64_t n = c.rows * c.cols;
        const std::vector<float> gate = Pattern(n), up = Pattern(n, 0.5f), dy = Pattern(n, 0.3f);
        std::vector<float> out = Zeros(n), dup = Zeros(n);
        if (c.kind == KernelKind::kSwiGluForward) {
          return TimeLoop(t, [&] { return ReferenceSwiGluForwardInto<float>(gate, up, out); });
        }
        return TimeLoop(t,
                        [&] { return ReferenceSwiGluBackwardInto<float>(gate, up, dy, out, dup); });
      }
      case KernelKind::kCrossEntropy: {
        const MatrixShape shape{c.rows, c.cols};
        GPUPLAN_RETURN_IF_ERROR(CheckShape(shape));
        const std::vector<float> logits = Pattern(shape.Elements(), 4.0f);
        std::vector<float> loss = Zeros(c.rows), dlogits = Zeros(shape.Elements());
        std::vector<int64_t> labels(static_cast<size_t>(c.rows));
        for (int64_t r = 0; r < c.rows; ++r) labels[static_cast<size_t>(r)] = (r * 7919) % c.cols;
        return TimeLoop(t, [&] {
          return ReferenceCrossEntropyInto<float>(shape, logits, labels, loss, dlogits).status();
        });
      }
      case KernelKind::kAdam: {
        std::vector<float> param = Pattern(c.cols, 0.1f), m = Zeros(c.cols), v = Zeros(c.cols);
        const std::vector<float> grad = Pattern(c.cols, 0.01f);
        const AdamWConfig config;
        return TimeLoop(t, [&] { return ReferenceAdamWStep<float>(config, param, m, v, grad); });
      }
      case KernelKind::kCount:
        break;
    }
    return Status::Invalid("unknown kernel kind");
  }
};

class MemcpyBandwidthRunner : public BandwidthRunner {
 public:
  Expected<double> DeviceCopySeconds(int, double bytes, const TimingPolicy& t) override {
    if (!(bytes >= 1)) return Status::Invalid("copy size must be at least one byte");
    if (2 * bytes > kMaxCaseBytes) return TooLarge("copy", 2 * bytes);
    const size_t n = static_cast<size_t>(bytes);
    std::vector<char> src(n, 1), dst(n, 0);
    return TimeLoop(t, [&] {
      std::memcpy(dst.data(), src.data(), n);
      return Status::Ok();
    });
  }
  Expected<double> HostToDeviceSeconds(int, double, const TimingPolicy&) override {
    return NoHostLink();
  }
  Expected<double> DeviceToHostSeconds(int, double, const TimingPolicy&) override {
    return NoHostLink();
  }
  Expected<double> PeerCopySeconds(int, int, double, const TimingPolicy&) override {
    return Status::Unavailable("the CPU backend measures one rank's device");
  }

 private:
  static Status NoHostLink() {
    return Status::Unavailable("the CPU backend's ranks run in host memory (no host link)");
  }
};

}  // namespace

std::string CpuGemmLibrary() {
  const int threads = Eigen::nbThreads();
  return StrFormat("Eigen %d.%d.%d, %d thread%s%s", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION,
                   EIGEN_MINOR_VERSION, threads, threads == 1 ? "" : "s",
                   threads == 1 ? " (built without OpenMP)" : "");
}

CpuNeighbourLoad::CpuNeighbourLoad(int threads) {
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this] {
      const Eigen::MatrixXf a = Eigen::MatrixXf::Constant(512, 512, 1.0f / 512);
      const Eigen::MatrixXf b = Eigen::MatrixXf::Constant(512, 512, 1.0f);
      Eigen::MatrixXf c(512, 512);
      while (!stop_.load(std::memory_order_relaxed)) c.noalias() = a * b;
    });
  }
}

CpuNeighbourLoad::~CpuNeighbourLoad() {
  stop_.store(true);
  for (std::thread& t : threads_) t.join();
}

ProfileBackends MakeCpuBackends() {
  ProfileBackends b;
  b.probe = std::make_unique<CpuProbe>();
  b.gemm = std::make_unique<EigenGemmRunner>();
  b.kernels = std::make_unique<ReferenceKernelRunner>();
  b.bandwidth = std::make_unique<MemcpyBandwidthRunner>();
  b.no_collectives_reason = kCpuCollectivesNeedALaunch;
  return b;
}

ProfileOptions CpuProfileOptions(bool quick) {
  ProfileOptions o = DefaultProfileOptions(quick);
  o.precisions = {Precision::kFp32};
  const std::vector<int64_t> squares = quick ? std::vector<int64_t>{128, 512, 1024}
                                             : std::vector<int64_t>{64, 128, 256, 512, 768, 1024};
  for (int64_t s : squares) o.gemm_shapes.push_back({s, s, s, 1});
  // Projections of a small transformer (hidden 256-1024, 512-2048 tokens): wide, tall and deep.
  for (const GemmShape& s : std::vector<GemmShape>{{1024, 3072, 1024, 1},
                                                   {1024, 1024, 3072, 1},
                                                   {2048, 768, 256, 1},
                                                   {512, 4096, 512, 1},
                                                   {512, 512, 2048, 1}}) {
    if (!quick || s.m == 1024) o.gemm_shapes.push_back(s);
  }
  auto attention = [](KernelKind kind, int64_t seq) {
    KernelCase c;
    c.kind = kind;
    c.dtype = Precision::kFp32;
    c.batch = 1;
    c.seq = seq;
    c.heads = 4;
    c.head_dim = 64;
    return c;
  };
  auto matrix = [](KernelKind kind, int64_t rows, int64_t cols) {
    KernelCase c;
    c.kind = kind;
    c.dtype = Precision::kFp32;
    c.rows = rows;
    c.cols = cols;
    return c;
  };
  for (int64_t seq : quick ? std::vector<int64_t>{256} : std::vector<int64_t>{256, 512}) {
    o.kernel_cases.push_back(attention(KernelKind::kAttentionForward, seq));
    o.kernel_cases.push_back(attention(KernelKind::kAttentionBackward, seq));
  }
  for (KernelKind kind : {KernelKind::kRmsNormForward, KernelKind::kRmsNormBackward,
                          KernelKind::kLayerNormForward, KernelKind::kLayerNormBackward}) {
    o.kernel_cases.push_back(matrix(kind, 1024, 1024));
  }
  for (KernelKind kind : {KernelKind::kGeluForward, KernelKind::kGeluBackward,
                          KernelKind::kSwiGluForward, KernelKind::kSwiGluBackward}) {
    o.kernel_cases.push_back(matrix(kind, 1024, 2048));
  }
  o.kernel_cases.push_back(matrix(KernelKind::kCrossEntropy, 256, 8192));
  o.kernel_cases.push_back(matrix(KernelKind::kAdam, 1, 1 << 20));
  // The collectives of a launch (--ranks N): 8 B to 256 MiB (64 MiB when quick), the gradients of
  // the plans a host runs; a rank's buffers stay within a few times that.
  o.collective_max_bytes = (quick ? 64.0 : 256.0) * 1024 * 1024;
  return o;
}

}  // namespace gpuplan
