#include "validator/gpu_compute.h"

#include <library_types.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/str_format.h"
#include "kernels/activation.h"
#include "kernels/adam.h"
#include "kernels/attention.h"
#include "kernels/cross_entropy.h"
#include "kernels/norm.h"
#include "profiler/cublas_check.h"
#include "profiler/cuda_check.h"
#include "profiler/device_fill.h"
#include "validator/gpu_compute_kernels.h"

namespace gpuplan {

// Device memory from a pool of `device` that keeps what is freed for reuse (release threshold at
// its maximum), allocated and freed in order on the compute stream (cudaMallocFromPoolAsync).
class GpuCompute::PoolAllocator : public BufferAllocator {
 public:
  static Expected<std::unique_ptr<PoolAllocator>> Create(int device) {
    std::unique_ptr<PoolAllocator> a(new PoolAllocator);
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
    Expected<CudaStream> stream = CreateStream();
    if (!stream.ok()) return stream.status();
    a->stream_ = std::move(stream).value();
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaMemPoolCreate(&a->pool_, &props));
    uint64_t keep = UINT64_MAX;
    GPUPLAN_CUDA_RETURN_IF_ERROR(
        cudaMemPoolSetAttribute(a->pool_, cudaMemPoolAttrReleaseThreshold, &keep));
    return a;
  }
  ~PoolAllocator() override {
    if (stream_) cudaStreamSynchronize(stream_.get());
    if (pool_ != nullptr) cudaMemPoolDestroy(pool_);
  }
  Expected<void*> Allocate(size_t bytes, std::string_view what) override {
    void* p = nullptr;
    const cudaError_t err = cudaMallocFromPoolAsync(&p, bytes, pool_, stream_.get());
    if (err != cudaSuccess) {
      cudaGetLastError();
      return Status::Unavailable(StrFormat("cannot allocate %zu bytes of device memory for %s: %s",
                                           bytes, std::string(what).c_str(),
                                           cudaGetErrorString(err)));
    }
    return p;
  }
  void Free(void* data) override { cudaFreeAsync(data, stream_.get()); }
  Status Zero(void* data, size_t bytes) override {
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(data, 0, bytes, stream_.get()));
    return Status::Ok();
  }
  cudaStream_t stream() const { return stream_.get(); }
  cudaMemPool_t pool() const { return pool_; }

 private:
  PoolAllocator() = default;
  CudaStream stream_;
  cudaMemPool_t pool_ = nullptr;
};

namespace {

cudaDataType_t CudaType(kernels::DType t) {
  switch (t) {
    case kernels::DType::kBf16:
      return CUDA_R_16BF;
    case kernels::DType::kFp16:
      return CUDA_R_16F;
    case kernels::DType::kFp32:
      break;
  }
  return CUDA_R_32F;
}

Expected<MatrixLayout> Layout(cudaDataType_t type, long long rows, long long cols) {
  cublasLtMatrixLayout_t raw = nullptr;
  GPUPLAN_CUBLAS_RETURN_IF_ERROR(cublasLtMatrixLayoutCreate(&raw, type, static_cast<uint64_t>(rows),
                                                            static_cast<uint64_t>(cols), rows));
  return MatrixLayout(raw);
}

}  // namespace

GpuCompute::GpuCompute(const JobSpec& job, int64_t dp_index,
                       std::unique_ptr<PoolAllocator> allocator, PoolAllocator* pool,
                       kernels::DType dtype)
    : RankCompute(job, dp_index, std::move(allocator),
                  ElementBytes{kernels::DTypeBytes(dtype), 4, kernels::DTypeBytes(dtype)}),
      pool_(pool),
      dtype_(dtype) {}

GpuCompute::~GpuCompute() {
  if (pool_ != nullptr) cudaStreamSynchronize(pool_->stream());
}

Expected<std::unique_ptr<GpuCompute>> GpuCompute::Create(const JobSpec& job,
                                                         const std::vector<ProgramStep>& program,
                                                         int64_t stage, int64_t dp_index,
                                                         int device) {
  GPUPLAN_RETURN_IF_ERROR(CheckGpuExecutable(job));
  Expected<std::unique_ptr<PoolAllocator>> allocator = PoolAllocator::Create(device);
  if (!allocator.ok()) return allocator.status();
  PoolAllocator* pool = allocator->get();
  const kernels::DType dtype =
      job.training.precision == Precision::kFp16 ? kernels::DType::kFp16 : kernels::DType::kBf16;
  std::unique_ptr<GpuCompute> c(
      new GpuCompute(job, dp_index, std::move(allocator).value(), pool, dtype));
  cublasLtHandle_t raw = nullptr;
  GPUPLAN_CUBLAS_RETURN_IF_ERROR(cublasLtCreate(&raw));
  c->lt_ = LtHandle(raw);
  Expected<DeviceMemory> workspace = AllocateDevice(kCublasLtWorkspaceBytes, "cuBLASLt workspace");
  if (!workspace.ok()) return workspace.status();
  c->workspace_ = std::move(workspace).value();
  GPUPLAN_RETURN_IF_ERROR(c->Init(program, stage));
  return c;
}

cudaStream_t GpuCompute::stream() const { return pool_->stream(); }

Status GpuCompute::InitParameters() {
  return FillUniform(params().data(), Parameters(), CudaType(dtype_), 7, stream());
}

Status GpuCompute::Synchronize() {
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream()));
  return Status::Ok();
}

Expected<RankCompute::AllocatorUse> GpuCompute::Allocator() const {
  uint64_t high = 0;
  GPUPLAN_CUDA_RETURN_IF_ERROR(
      cudaMemPoolGetAttribute(pool_->pool(), cudaMemPoolAttrUsedMemHigh, &high));
  size_t free = 0, total = 0;
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&free, &total));
  return AllocatorUse{static_cast<double>(high), static_cast<double>(total - free),
                      static_cast<double>(total)};
}

Status GpuCompute::ResetPeaks() {
  GPUPLAN_RETURN_IF_ERROR(RankCompute::ResetPeaks());
  uint64_t zero = 0;
  GPUPLAN_CUDA_RETURN_IF_ERROR(
      cudaMemPoolSetAttribute(pool_->pool(), cudaMemPoolAttrUsedMemHigh, &zero));
  return Status::Ok();
}

Expected<void*> GpuCompute::Scratch(size_t n, bool fp32) {
  DeviceMemory& buffer = fp32 ? scratch_fp32_ : scratch_;
  size_t& have = fp32 ? scratch_fp32_elements_ : scratch_elements_;
  if (have < n) {
    GPUPLAN_RETURN_IF_ERROR(Synchronize());  // the old buffer may still be read
    buffer.reset();
    const kernels::DType t = fp32 ? kernels::DType::kFp32 : dtype_;
    Expected<DeviceMemory> grown = AllocateDevice(n * kernels::DTypeBytes(t), "input patterns");
    if (!grown.ok()) return grown.status();
    buffer = std::move(grown).value();
    have = n;
    GPUPLAN_RETURN_IF_ERROR(FillUniform(buffer.get(), n, CudaType(t), fp32 ? 11 : 13, stream()));
  }
  return buffer.get();
}

Expected<void*> GpuCompute::Activations(size_t n) {
  return Output(n * kernels::DTypeBytes(dtype_));
}

Expected<GpuCompute::GemmPlan*> GpuCompute::PlanFor(const ComputeOpArgs::Gemm& g,
                                                    const std::string& what) {
  const int variant = g.wgrad ? 2 : g.dgrad ? 1 : 0;
  const auto key = std::make_tuple(g.m, g.n, g.k, variant);
  auto it = plans_.find(key);
  if (it != plans_.end()) return &it->second;
  // Column-major, as the CPU backend's Eigen maps: forward C[m x n] = X[m x k] W[k x n]; dgrad
  // C[m x n] = X[m x k] W[n x k]^T; wgrad dW[n x m] += S[k x n]^T S[k x m] into fp32.
  const cudaDataType_t in = CudaType(dtype_);
  const cudaDataType_t out = g.wgrad ? CUDA_R_32F : in;
  cublasLtMatmulDesc_t raw = nullptr;
  GPUPLAN_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescCreate(&raw, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  GemmPlan plan;
  plan.desc = MatmulDesc(raw);
  const int32_t trans_a = g.wgrad ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int32_t trans_b = g.dgrad ? CUBLAS_OP_T : CUBLAS_OP_N;
  GPUPLAN_CUBLAS_RETURN_IF_ERROR(
      cublasLtMatmulDescSetAttribute(raw, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof(trans_a)));
  GPUPLAN_CUBLAS_RETURN_IF_ERROR(
      cublasLtMatmulDescSetAttribute(raw, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof(trans_b)));
  Expected<MatrixLayout> a = g.wgrad ? Layout(in, g.k, g.n) : Layout(in, g.m, g.k);
  Expected<MatrixLayout> b = g.wgrad   ? Layout(in, g.k, g.m)
                             : g.dgrad ? Layout(in, g.n, g.k)
                                       : Layout(in, g.k, g.n);
  Expected<MatrixLayout> c = g.wgrad ? Layout(out, g.n, g.m) : Layout(out, g.m, g.n);
  for (const Expected<MatrixLayout>* l : {&a, &b, &c}) {
    if (!l->ok()) return l->status();
  }
  plan.a = std::move(a).value();
  plan.b = std::move(b).value();
  plan.c = std::move(c).value();
  Expected<cublasLtMatmulAlgo_t> algo =
      BestAlgo(lt_.get(), plan.desc.get(), plan.a.get(), plan.b.get(), plan.c.get(), what);
  if (!algo.ok()) return algo.status();
  plan.algo = *algo;
  return &plans_.emplace(key, std::move(plan)).first->second;
}

Status GpuCompute::Gemm(const ComputeOpArgs& args, const std::string& what) {
  const ComputeOpArgs::Gemm& g = args.gemm;
  Expected<GemmPlan*> plan = PlanFor(g, what);
  if (!plan.ok()) return plan.status();
  const size_t in_bytes = kernels::DTypeBytes(dtype_);
  Expected<void*> x = Scratch(static_cast<size_t>(g.k * (g.wgrad ? std::max(g.m, g.n) : g.m)));
  if (!x.ok()) return x.status();
  const void* a = *x;
  const void* b = *x;
  void* c = nullptr;
  float beta = 0.0f;
  if (g.wgrad) {
    c = static_cast<char*>(grads().data()) + 4 * args.weight;
    beta = 1.0f;  // accumulated into the gradient over micro-batches
  } else {
    b = static_cast<const char*>(params().data()) + in_bytes * args.weight;
    Expected<void*> y = Activations(static_cast<size_t>(g.m * g.n));
    if (!y.ok()) return y.status();
    c = *y;
  }
  const float alpha = 1.0f;
  GPUPLAN_CUBLAS_RETURN_IF_ERROR(
      cublasLtMatmul(lt_.get(), (*plan)->desc.get(), &alpha, a, (*plan)->a.get(), b,
                     (*plan)->b.get(), &beta, c, (*plan)->c.get(), c, (*plan)->c.get(),
                     &(*plan)->algo, workspace_.get(), kCublasLtWorkspaceBytes, stream()));
  return Status::Ok();
}

Status GpuCompute::RunOnce(const RankOp& op, const OpSite& site) {
  using namespace kernels;
  Expected<ComputeOpArgs> parsed = Parse(op, site.layer);
  if (!parsed.ok()) return parsed.status();
  const ComputeOpArgs& a = *parsed;
  if (a.kind == ComputeOpKind::kGemm) return Gemm(a, op.name);
  if (a.kind == ComputeOpKind::kAdam) {
    if (a.shard == 0) return Status::Ok();
    // AdamWStep reads the gradient in 16-byte vectors: the shard starts at a multiple of 4.
    const size_t first = a.weight / 4 * 4;
    if (exp_avg_.bytes() != 4 * a.shard) {
      for (MemoryArena::Buffer* state : {&master_, &exp_avg_, &exp_avg_sq_}) {
        Expected<MemoryArena::Buffer> zeros =
            Arena().Zeros(4 * a.shard, "the fp32 master weights and AdamW's moments");
        if (!zeros.ok()) return zeros.status();
        *state = std::move(zeros).value();
      }
    }
    AdamWConfig config;
    config.step = ++optimizer_steps_;
    AdamWArgs args;
    args.param = master_.span<float>().data();
    args.exp_avg = exp_avg_.span<float>().data();
    args.exp_avg_sq = exp_avg_sq_.span<float>().data();
    args.grad = grads().span<float>().data() + first;
    const int64_t n = static_cast<int64_t>(a.shard);
    GPUPLAN_RETURN_IF_ERROR(AdamWStep(n, DType::kFp32, config, args, stream()));
    // The updated master weights, rounded to the model's precision, are the next step's weights.
    return CastFromFloat(dtype_, args.param, n,
                         static_cast<char*>(params().data()) + DTypeBytes(dtype_) * first,
                         stream());
  }
  const size_t bytes = DTypeBytes(dtype_);
  const char* param = static_cast<const char*>(params().data());
  float* grad = grads().span<float>().data();
  const size_t r = static_cast<size_t>(a.rows), n = r * static_cast<size_t>(a.cols);
  // Outputs (or the op's Temporary buffers) as arena buffers; a failed allocation returns its
  // Status from RunOnce.
  std::vector<void*> out;
  auto buffers = [&](bool temporary, std::initializer_list<size_t> sizes) -> Status {
    out.clear();
    for (size_t s : sizes) {
      Expected<void*> o = temporary ? Temporary(s) : Output(s);
      if (!o.ok()) return o.status();
      out.push_back(*o);
    }
    return Status::Ok();
  };
  auto outputs = [&](std::initializer_list<size_t> sizes) { return buffers(false, sizes); };
  switch (a.kind) {
    case ComputeOpKind::kNorm: {
      const bool layer_norm = a.norm == NormKind::kLayerNorm;
      const MatrixShape shape{a.rows, a.cols};
      Expected<void*> x = Scratch(n);
      if (!x.ok()) return x.status();
      if (!a.backward) {
        GPUPLAN_RETURN_IF_ERROR(outputs({n * bytes, 4 * r, layer_norm ? 4 * r : 0}));
        NormForwardArgs f;
        f.x = *x;
        f.weight = param + bytes * a.weight;
        f.bias = layer_norm ? param + bytes * a.bias : nullptr;
        f.y = out[0];
        f.rstd = static_cast<float*>(out[1]);
        f.mean = layer_norm ? static_cast<float*>(out[2]) : nullptr;
        return NormForward(a.norm, shape, dtype_, 1e-5, f, stream());
      }
      Expected<void*> stats = Scratch(r, true);  // mean and rstd: any finite values do
      if (!stats.ok()) return stats.status();
      const size_t workspace = NormBackwardWorkspaceBytes(a.norm, shape);
      GPUPLAN_RETURN_IF_ERROR(outputs({n * bytes, workspace}));
      NormBackwardArgs b;
      b.x = *x;
      b.weight = param + bytes * a.weight;
      b.dy = *x;
      b.mean = layer_norm ? static_cast<const float*>(*stats) : nullptr;
      b.rstd = static_cast<const float*>(*stats);
      b.dx = out[0];
      b.dweight = grad + a.weight;
      b.dbias = layer_norm ? grad + a.bias : nullptr;
      if (a.frozen) {  // a frozen (LoRA) norm has no gradient slice: its gradient goes to scratch
        const size_t cols = static_cast<size_t>(a.cols);
        Expected<void*> dweight = Temporary(4 * cols);
        if (!dweight.ok()) return dweight.status();
        b.dweight = static_cast<float*>(*dweight);
        if (layer_norm) {
          Expected<void*> dbias = Temporary(4 * cols);
          if (!dbias.ok()) return dbias.status();
          b.dbias = static_cast<float*>(*dbias);
        }
      }
      b.workspace = out[1];
      b.workspace_bytes = workspace;
      return NormBackward(a.norm, shape, dtype_, b, stream());
    }
    case ComputeOpKind::kGelu:
    case ComputeOpKind::kSwiGlu: {
      Expected<void*> x = Scratch(n);
      if (!x.ok()) return x.status();
      const int64_t count = static_cast<int64_t>(n);
      const bool gelu = a.kind == ComputeOpKind::kGelu;
      GPUPLAN_RETURN_IF_ERROR(outputs({n * bytes, !gelu && a.backward ? n * bytes : 0}));
      if (gelu) {
        return a.backward ? GeluBackward(count, dtype_, *x, *x, out[0], stream())
                          : GeluForward(count, dtype_, *x, out[0], stream());
      }
      return a.backward ? SwiGluBackward(count, dtype_, *x, *x, *x, out[0], out[1], stream())
                        : SwiGluForward(count, dtype_, *x, *x, out[0], stream());
    }
    case ComputeOpKind::kAttention: {
      const size_t e = static_cast<size_t>(a.attention.Elements());
      const size_t rows = static_cast<size_t>(a.attention.StatRows());
      GPUPLAN_RETURN_IF_ERROR(AttentionSupported(a.attention, dtype_));
      Expected<void*> x = Scratch(e);
      if (!x.ok()) return x.status();
      // Ring attention's other steps run into Temporary buffers (file comment).
      auto temporaries = [&](std::initializer_list<size_t> sizes) { return buffers(true, sizes); };
      if (!a.backward) {
        if (a.checkpointed) {  // the log-sum-exp only the attention's own backward would read
          GPUPLAN_RETURN_IF_ERROR(outputs({e * bytes}));
          Expected<void*> lse = Temporary(4 * rows);
          if (!lse.ok()) return lse.status();
          out.push_back(*lse);
        } else {
          GPUPLAN_RETURN_IF_ERROR(outputs({e * bytes, 4 * rows}));
        }
        for (int64_t i = 0; i < a.ring; ++i) {
          if (i == 1) GPUPLAN_RETURN_IF_ERROR(temporaries({e * bytes, 4 * rows}));
          AttentionForwardArgs f{*x, *x, *x, out[0], static_cast<float*>(out[1])};
          GPUPLAN_RETURN_IF_ERROR(AttentionForward(a.attention, dtype_, f, stream()));
        }
        return Status::Ok();
      }
      Expected<void*> lse = Scratch(rows, true);
      if (!lse.ok()) return lse.status();
      const size_t workspace = AttentionBackwardWorkspaceBytes(a.attention);
      GPUPLAN_RETURN_IF_ERROR(outputs({e * bytes, e * bytes, e * bytes, workspace}));
      for (int64_t i = 0; i < a.ring; ++i) {
        if (i == 1)
          GPUPLAN_RETURN_IF_ERROR(temporaries({e * bytes, e * bytes, e * bytes, workspace}));
        AttentionBackwardArgs b;
        b.q = b.k = b.v = b.o = b.d_o = *x;
        b.lse = static_cast<const float*>(*lse);
        b.dq = out[0];
        b.dk = out[1];
        b.dv = out[2];
        b.workspace = out[3];
        b.workspace_bytes = workspace;
        GPUPLAN_RETURN_IF_ERROR(AttentionBackward(a.attention, dtype_, b, stream()));
      }
      return Status::Ok();
    }
    case ComputeOpKind::kCrossEntropy: {
      Expected<void*> logits = Scratch(n);
      if (!logits.ok()) return logits.status();
      if (labels_rows_ < r) {
        GPUPLAN_RETURN_IF_ERROR(Synchronize());
        labels_.reset();
        Expected<DeviceMemory> labels = AllocateDevice(8 * r, "cross-entropy labels");
        if (!labels.ok()) return labels.status();
        labels_ = std::move(labels).value();
        labels_rows_ = r;
      }
      GPUPLAN_RETURN_IF_ERROR(
          FillLabels(static_cast<int64_t*>(labels_.get()), a.rows, a.cols, stream()));
      GPUPLAN_RETURN_IF_ERROR(outputs({4 * r, n * bytes}));
      CrossEntropyArgs ce{*logits, static_cast<const int64_t*>(labels_.get()),
                          static_cast<float*>(out[0]), out[1]};
      return CrossEntropy({a.rows, a.cols}, dtype_, ce, stream());
    }
    case ComputeOpKind::kEmbedding: {
      const int64_t vocab = static_cast<int64_t>(EmbeddingRows());
      if (!a.backward) {
        GPUPLAN_RETURN_IF_ERROR(outputs({n * bytes}));
        return EmbeddingGather(dtype_, param + bytes * a.weight, vocab, a.rows, a.cols, out[0],
                               stream());
      }
      Expected<void*> dy = Scratch(n);
      if (!dy.ok()) return dy.status();
      return EmbeddingScatterAdd(dtype_, *dy, vocab, a.rows, a.cols, grad + a.weight, stream());
    }
    case ComputeOpKind::kGemm:
    case ComputeOpKind::kAdam:
      break;
  }
  return Status::Internal("compute op '" + op.name + "': unknown kind");
}

}  // namespace gpuplan
