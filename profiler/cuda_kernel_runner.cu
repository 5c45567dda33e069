// KernelRunner over the CUDA kernels of kernels/: allocates the buffers of one KernelCase, fills
// them with pseudo-random values on the device (profiler/device_fill.h), times one launch with
// TimeOnStream, frees them.
#include <cuda_runtime_api.h>
#include <library_types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/activation.h"
#include "kernels/adam.h"
#include "kernels/attention.h"
#include "kernels/cross_entropy.h"
#include "kernels/norm.h"
#include "profiler/cuda_check.h"
#include "profiler/cuda_kernel_runner.h"
#include "profiler/cuda_resources.h"
#include "profiler/cuda_timing.h"
#include "profiler/device_fill.h"

namespace gpuplan {
namespace {

using kernels::DType;

// Uniform [-1, 1) values of `dtype` (device_fill.h) into n elements at `dst`.
Status Fill(void* dst, DType dtype, int64_t n, uint32_t seed, cudaStream_t stream) {
  const cudaDataType_t type = dtype == DType::kFp32   ? CUDA_R_32F
                              : dtype == DType::kBf16 ? CUDA_R_16BF
                                                      : CUDA_R_16F;
  return FillUniform(dst, static_cast<size_t>(n), type, seed, stream);
}

// (name, bytes) of the buffers of one case.
using BufferSpecs = std::vector<std::pair<std::string, size_t>>;

// The device buffers of one case, by name, freed together.
class DeviceBuffers {
 public:
  /// Allocates every (name, bytes) on the current device; Unavailable naming the buffer, its
  /// size and the case's total when one does not fit.
  Status Allocate(std::string_view kernel, const BufferSpecs& specs) {
    size_t total = 0;
    for (const auto& spec : specs) total += spec.second;
    for (const auto& [name, bytes] : specs) {
      Expected<DeviceMemory> memory = AllocateDevice(bytes, name);
      if (!memory.ok()) {
        return memory.status().WithPrefix(std::string(kernel) + " (" + std::to_string(total) +
                                          " bytes of buffers in all)");
      }
      buffers_.push_back({name, std::move(memory).value()});
    }
    return Status::Ok();
  }

  /// The buffer allocated as `name` (null when there is none).
  void* Get(std::string_view name) const {
    for (const Buffer& b : buffers_) {
      if (b.name == name) return b.memory.get();
    }
    return nullptr;
  }
  float* Float(std::string_view name) const { return static_cast<float*>(Get(name)); }

 private:
  struct Buffer {
    std::string name;
    DeviceMemory memory;
  };
  std::vector<Buffer> buffers_;
};

// The kernels' dtype for a case's Precision: bf16, fp16 or fp32; tf32 and fp8 are Invalid.
Expected<DType> CaseDType(const KernelCase& c) {
  switch (c.dtype) {
    case Precision::kBf16:
      return DType::kBf16;
    case Precision::kFp16:
      return DType::kFp16;
    case Precision::kFp32:
      return DType::kFp32;
    default:
      return Status::Invalid("kernel runner: " + std::string(GetKernelInfo(c.kind).name) +
                             " has no " + std::string(PrecisionName(c.dtype)) + " variant");
  }
}

size_t Bytes(int64_t elements, size_t element_bytes) {
  return static_cast<size_t>(elements) * element_bytes;
}

class CudaKernelRunner final : public KernelRunner {
 public:
  CudaKernelRunner(int device, CudaStream stream) : device_(device), stream_(std::move(stream)) {}

  Expected<double> Seconds(const KernelCase& c, const TimingPolicy& timing) override {
    if (static_cast<int>(c.kind) < 0 || static_cast<int>(c.kind) >= kKernelKindCount) {
      return Status::Invalid("kernel runner: unknown kernel kind " +
                             std::to_string(static_cast<int>(c.kind)));
    }
    Expected<DType> dtype = CaseDType(c);
    if (!dtype.ok()) return dtype.status();
    const DeviceGuard restore_device;
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
    const std::string_view name = GetKernelInfo(c.kind).name;
    DeviceBuffers buffers;
    std::function<Status()> launch;
    Status prepared = Prepare(c, *dtype, &buffers, &launch);
    if (!prepared.ok()) return prepared.WithPrefix(std::string(name));
    Expected<double> seconds = TimeOnStream(stream(), timing, launch);
    // Surface asynchronous faults here rather than in the next case; buffers free after this.
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream()));
    if (!seconds.ok()) return seconds.status().WithPrefix(std::string(name));
    return seconds;
  }

 private:
  // Allocates and fills the buffers of `c` (running untimed producers where a backward needs a
  // forward's outputs) and sets `launch` to one launch of its kernel.
  Status Prepare(const KernelCase& c, DType dtype, DeviceBuffers* b,
                 std::function<Status()>* launch) {
    switch (c.kind) {
      case KernelKind::kAttentionForward:
      case KernelKind::kAttentionBackward:
        return PrepareAttention(c, dtype, b, launch);
      case KernelKind::kRmsNormForward:
      case KernelKind::kRmsNormBackward:
      case KernelKind::kLayerNormForward:
      case KernelKind::kLayerNormBackward:
        return PrepareNorm(c, dtype, b, launch);
      case KernelKind::kGeluForward:
      case KernelKind::kGeluBackward:
      case KernelKind::kSwiGluForward:
      case KernelKind::kSwiGluBackward:
        return PrepareActivation(c, dtype, b, launch);
      case KernelKind::kCrossEntropy:
        return PrepareCrossEntropy(c, dtype, b, launch);
      case KernelKind::kAdam:
        return PrepareAdam(c, dtype, b, launch);
      case KernelKind::kCount:
        break;
    }
    return Status::Internal("kernel runner: kernel kind without a runner");
  }

  Status PrepareAttention(const KernelCase& c, DType dtype, DeviceBuffers* b,
                          std::function<Status()>* launch) {
    const kernels::AttentionShape shape{c.batch, c.seq, c.heads, c.head_dim};
    GPUPLAN_RETURN_IF_ERROR(kernels::AttentionSupported(shape, dtype));
    const bool backward = c.kind == KernelKind::kAttentionBackward;
    const size_t tensor = Bytes(shape.Elements(), kernels::DTypeBytes(dtype));
    BufferSpecs specs = {{"q", tensor},
                         {"k", tensor},
                         {"v", tensor},
                         {"o", tensor},
                         {"lse", Bytes(shape.StatRows(), sizeof(float))}};
    if (backward) {
      specs.insert(specs.end(), {{"d_o", tensor},
                                 {"dq", tensor},
                                 {"dk", tensor},
                                 {"dv", tensor},
                                 {"workspace", kernels::AttentionBackwardWorkspaceBytes(shape)}});
    }
    GPUPLAN_RETURN_IF_ERROR(b->Allocate(GetKernelInfo(c.kind).name, specs));
    const int64_t n = shape.Elements();
    GPUPLAN_RETURN_IF_ERROR(Fill(b->Get("q"), dtype, n, 1, stream()));
    GPUPLAN_RETURN_IF_ERROR(Fill(b->Get("k"), dtype, n, 2, stream()));
    GPUPLAN_RETURN_IF_ERROR(Fill(b->Get("v"), dtype, n, 3, stream()));
    const kernels::AttentionForwardArgs fwd{b->Get("q"), b->Get("k"), b->Get("v"), b->Get("o"),
                                            b->Float("lse")};
    if (!backward) {
      *launch = [this, shape, dtype, fwd] {
        return kernels::AttentionForward(shape, dtype, fwd, stream());
      };
      return Status::Ok();
    }
    // The backward reads the forward's o and lse: produce them once, untimed.
    GPUPLAN_RETURN_IF_ERROR(kernels::AttentionForward(shape, dtype, fwd, stream()));
    GPUPLAN_RETURN_IF_ERROR(Fill(b->Get("d_o"), dtype, n, 4, stream()));
    kernels::AttentionBackwardArgs bwd;
    bwd.q = b->Get("q");
    bwd.k = b->Get("k");
    bwd.v = b->Get("v");
    bwd.o = b->Get("o");
    bwd.d_o = b->Get("d_o");
    bwd.lse = b->Float("lse");
    bwd.dq = b->Get("dq");
    bwd.dk = b->Get("dk");
    bwd.dv = b->Get("dv");
    bwd.workspace = b->Get("workspace");
    bwd.workspace_bytes = kernels::AttentionBackwardWorkspaceBytes(shape);
    *launch = [this, shape, dtype, bwd] {
      return kernels::AttentionBackward(shape, dtype, bwd, stream());
    };
    return Status::Ok();
  }

  Status PrepareNorm(const KernelCase& c, DType dtype, DeviceBuffers* b,
                     std::function<Status()>* launch) {
    const kernels::MatrixShape shape{c.rows, c.cols};
    GPUPLAN_RETURN_IF_ERROR(kernels::CheckShape(shape));
    const bool layer =
        c.kind == KernelKind::kLayerNormForward || c.kind == KernelKind::kLayerNormBackward;
    const bool backward =
        c.kind == KernelKind::kRmsNormBackward || c.kind == KernelKind::kLayerNormBackward;
    const kernels::NormKind kind =
        layer ? kernels::NormKind::kLayerNorm : kernels::NormKind::kRmsNorm;
    const size_t eb = kernels::DTypeBytes(dtype);
    const size_t matrix = Bytes(shape.Elements(), eb);
    const size_t stat = Bytes(shape.rows, sizeof(float));
    BufferSpecs specs = {
        {"x", matrix}, {"weight", Bytes(shape.cols, eb)}, {"y", matrix}, {"rstd", stat}};
    if (layer) specs.insert(specs.end(), {{"bias", Bytes(shape.cols, eb)}, {"mean", stat}});
    if (backward) {
      specs.insert(specs.end(), {{"dy", matrix},
                                 {"dweight", Bytes(shape.cols, sizeof(float))},
                                 {"workspace", kernels::NormBackwardWorkspaceBytes(kind, shape)}});
      if (layer) specs.push_back({"dbias", Bytes(shape.cols, sizeof(float))});
    }
    GPUPLAN_RETURN_IF_ERROR(b->Allocate(GetKernelInfo(c.kind).name, specs));
    GPUPLAN_RETURN_IF_ERROR(Fill(b->Get("x"), dtype, shape.Elements(), 5, stream()));
    GPUPLAN_RETURN_IF_ERROR(Fill(b->Get("weight"), dtype, shape.cols, 6, stream()));
    if (layer) {
      GPUPLAN_RETURN_IF_ERROR(Fill(b->Get("bias"), dtype, shape.cols, 7, stream()));
    }
    constexpr double kEps = 1e-5;
    const kernels::NormForwardArgs fwd{b->Get("x"), b->Get("weight"), b->Get("bias"),
                                       b->Get("y"), b->Float("mean"), b->Float("rstd")};
    if (!backward) {
      *launch = [this, kind, shape, dtype, fwd] {
        return kernels::NormForward(kind, shape, dtype, kEps, fwd, stream());
      };
      return Status::Ok();
    }
    // The backward reads the forward's statistics: produce them once, untimed.
    GPUPLAN_RETURN_IF_ERROR(kernels::NormForward(kind, shape, dtype, kEps, fwd, stream()));
    GPUPLAN_RETURN_IF_ERROR(Fill(b->Get("dy"), dtype, shape.Elements(), 8, stream()));
    kernels::NormBackwardArgs bwd;
    bwd.x = b->Get("x");
    bwd.weight = b->Get("weight");
    bwd.dy = b->Get("dy");
    bwd.mean = b->Float("mean");
    bwd.rstd = b->Float("rstd");
    bwd.dx = b->Get("y");  // the forward's output buffer, free now
    bwd.dweight = b->Float("dweight");
    bwd.dbias = b->Float("dbias");
    bwd.workspace = b->Get("workspace");
    bwd.workspace_bytes = kernels::NormBackwardWorkspaceBytes(kind, shape);
    *launch = [this, kind, shape, dtype, bwd] {
      return kernels::NormBackward(kind, shape, dtype, bwd, stream());
    };
    return Status::Ok();
  }

  Status PrepareActivation(const KernelCase& c, DType dtype, DeviceBuffers* b,
                           std::function<Status()>* launch) {
    const kernels::MatrixShape shape{c.rows, c.cols};
    GPUPLAN_RETURN_IF_ERROR(kernels::CheckShape(shape));
    const int64_t n = shape.Elements();
    const size_t matrix = Bytes(n, kernels::DTypeBytes(dtype));
    const bool gelu = c.kind == KernelKind::kGeluForward || c.kind == KernelKind::kGeluBackward;
    const bool backward =
        c.kind == KernelKind::kGeluBackward || c.kind == KernelKind::kSwiGluBackward;
    // Inputs first (x or gate, up), then dy for a backward, then the outputs.
    std::vector<std::string> inputs =
        gelu ? std::vector<std::string>{"x"} : std::vector<std::string>{"gate", "up"};
    if (backward) inputs.push_back("dy");
    const std::vector<std::string> outputs =
        gelu ? std::vector<std::string>{backward ? "dx" : "y"}
             : (backward ? std::vector<std::string>{"dgate", "dup"}
                         : std::vector<std::string>{"out"});
    BufferSpecs specs;
    for (const std::string& name : inputs) specs.push_back({name, matrix});
    for (const std::string& name : outputs) specs.push_back({name, matrix});
    GPUPLAN_RETURN_IF_ERROR(b->Allocate(GetKernelInfo(c.kind).name, specs));
    uint32_t seed = 9;
    for (const std::string& name : inputs) {
      GPUPLAN_RETURN_IF_ERROR(Fill(b->Get(name), dtype, n, seed++, stream()));
    }
    cudaStream_t s = stream();
    switch (c.kind) {
      case KernelKind::kGeluForward:
        *launch = [=, x = b->Get("x"), y = b->Get("y")] {
          return kernels::GeluForward(n, dtype, x, y, s);
        };
        break;
      case KernelKind::kGeluBackward:
        *launch = [=, x = b->Get("x"), dy = b->Get("dy"), dx = b->Get("dx")] {
          return kernels::GeluBackward(n, dtype, x, dy, dx, s);
        };
        break;
      case KernelKind::kSwiGluForward:
        *launch = [=, gate = b->Get("gate"), up = b->Get("up"), out = b->Get("out")] {
          return kernels::SwiGluForward(n, dtype, gate, up, out, s);
        };
        break;
      default:
        *launch = [=, gate = b->Get("gate"), up = b->Get("up"), dy = b->Get("dy"),
                   dgate = b->Get("dgate"), dup = b->Get("dup")] {
          return kernels::SwiGluBackward(n, dtype, gate, up, dy, dgate, dup, s);
        };
        break;
    }
    return Status::Ok();
  }

  Status PrepareCrossEntropy(const KernelCase& c, DType dtype, DeviceBuffers* b,
                             std::function<Status()>* launch) {
    const kernels::MatrixShape shape{c.rows, c.cols};
    GPUPLAN_RETURN_IF_ERROR(kernels::CheckShape(shape));
    const size_t matrix = Bytes(shape.Elements(), kernels::DTypeBytes(dtype));
    GPUPLAN_RETURN_IF_ERROR(
        b->Allocate(GetKernelInfo(c.kind).name, {{"logits", matrix},
                                                 {"labels", Bytes(shape.rows, sizeof(int64_t))},
                                                 {"loss", Bytes(shape.rows, sizeof(float))},
                                                 {"dlogits", matrix}}));
    GPUPLAN_RETURN_IF_ERROR(Fill(b->Get("logits"), dtype, shape.Elements(), 12, stream()));
    // Labels spread over the vocabulary (any in-range value costs the same).
    std::vector<int64_t> host_labels(static_cast<size_t>(shape.rows));
    for (size_t r = 0; r < host_labels.size(); ++r) {
      host_labels[r] = static_cast<int64_t>(r) * 7919 % shape.cols;
    }
    auto* labels = static_cast<int64_t*>(b->Get("labels"));
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaMemcpy(
        labels, host_labels.data(), host_labels.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
    const kernels::CrossEntropyArgs args{b->Get("logits"), labels, b->Float("loss"),
                                         b->Get("dlogits")};
    *launch = [this, shape, dtype, args] {
      return kernels::CrossEntropy(shape, dtype, args, stream());
    };
    return Status::Ok();
  }

  Status PrepareAdam(const KernelCase& c, DType dtype, DeviceBuffers* b,
                     std::function<Status()>* launch) {
    const int64_t n = c.cols;  // KernelCase: AdamW over `cols` parameters
    GPUPLAN_RETURN_IF_ERROR(kernels::CheckElementCount("adam cols", n));
    const size_t state = Bytes(n, sizeof(float));
    GPUPLAN_RETURN_IF_ERROR(
        b->Allocate(GetKernelInfo(c.kind).name, {{"param", state},
                                                 {"exp_avg", state},
                                                 {"exp_avg_sq", state},
                                                 {"grad", Bytes(n, kernels::DTypeBytes(dtype))}}));
    GPUPLAN_RETURN_IF_ERROR(Fill(b->Get("param"), DType::kFp32, n, 14, stream()));
    GPUPLAN_RETURN_IF_ERROR(Fill(b->Get("exp_avg"), DType::kFp32, n, 15, stream()));
    // The second moment must not be negative: start from zero, as a first step does.
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(b->Get("exp_avg_sq"), 0, state, stream()));
    GPUPLAN_RETURN_IF_ERROR(Fill(b->Get("grad"), dtype, n, 17, stream()));
    kernels::AdamWConfig config;
    config.step = 10;
    const kernels::AdamWArgs args{b->Float("param"), b->Float("exp_avg"), b->Float("exp_avg_sq"),
                                  b->Get("grad")};
    *launch = [this, n, dtype, config, args] {
      return kernels::AdamWStep(n, dtype, config, args, stream());
    };
    return Status::Ok();
  }

  cudaStream_t stream() const { return stream_.get(); }

  int device_;
  CudaStream stream_;
};

}  // namespace

Expected<std::unique_ptr<KernelRunner>> MakeCudaKernelRunner(int device) {
  int count = 0;
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaGetDeviceCount(&count));
  if (device < 0 || device >= count) {
    return Status::Unavailable("kernel runner: no CUDA device " + std::to_string(device) + " (" +
                               std::to_string(count) + " present)");
  }
  const DeviceGuard restore_device;
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  Expected<CudaStream> stream = CreateStream();
  if (!stream.ok()) return stream.status();
  return std::unique_ptr<KernelRunner>(
      std::make_unique<CudaKernelRunner>(device, std::move(stream).value()));
}

}  // namespace gpuplan
