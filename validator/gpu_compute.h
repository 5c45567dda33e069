// The GPU backend's compute (issue 19): a rank's compute ops on one CUDA device, in the plan's
// precision, with real buffers of the plan's sizes (validator/rank_compute.h). GEMMs through
// cuBLASLt; attention, norms, activations, cross-entropy and AdamW through the CUDA kernels of
// kernels/. Values are synthetic (inputs uniform in [-1, 1)); what is real is the work and the
// memory. Buffers come from a stream-ordered memory pool of the device (cudaMallocFromPoolAsync)
// that keeps freed memory for reuse, as PyTorch's caching allocator does, and are counted by the
// MemoryArena. Mixed precision as Megatron-LM's distributed optimizer keeps it: parameters in
// the plan's 16-bit precision, gradients in fp32 (main_grad), and for the shard the rank updates
// fp32 master weights and AdamW's two moments.
//
// Ring attention ("ring<n>", context parallelism) runs n attention kernels: the first into the
// op's outputs, the other n - 1 into Temporary buffers. The CUDA kernel is causal only, so those
// steps run it over the rank's own chunk, as many query-key pairs as a step of Megatron's load-
// balanced ring (s(s+1)/2 against s·s/2); the merge of each step's output (forward) and the
// additions of its gradients (backward), memory-bound element-wise work, are not run here yet
// (the CPU backend runs them).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "common/status.h"
#include "kernels/dtype.h"
#include "profiler/cublaslt_handles.h"
#include "profiler/cuda_resources.h"
#include "simulator/job.h"
#include "validator/rank_compute.h"

namespace gpuplan {

/// The compute of one rank of `job` at pipeline stage `stage` running `program`, whose place in
/// its data-parallel group is `dp_index`, on CUDA device `device`. Each op's kernels run on one
/// stream, which Run synchronises before it returns, so that the step executor's clock times the
/// op (per-op synchronisation: no overlap of consecutive ops' launch latency, a few microseconds
/// per op). Not counted by the arena, as the CPU backend does not count its scratch: the input
/// pattern buffers (one of the plan's precision, one fp32, grown to the largest input), the
/// labels, and cuBLASLt's 32 MiB workspace.
class GpuCompute : public RankCompute {
 public:
  static Expected<std::unique_ptr<GpuCompute>> Create(const JobSpec& job,
                                                      const std::vector<ProgramStep>& program,
                                                      int64_t stage, int64_t dp_index, int device);
  ~GpuCompute() override;

  /// The pool's high-water mark (cudaMemPoolAttrUsedMemHigh) and the device's memory in use
  /// (cudaMemGetInfo: total - free, every allocation of every process on it).
  Expected<AllocatorUse> Allocator() const override;
  /// The arena's peak and the pool's high-water mark.
  Status ResetPeaks() override;

 private:
  class PoolAllocator;
  GpuCompute(const JobSpec& job, int64_t dp_index, std::unique_ptr<PoolAllocator> allocator,
             PoolAllocator* pool, kernels::DType dtype);
  Status InitParameters() override;
  Status RunOnce(const RankOp& op, const OpSite& site) override;
  Status Synchronize() override;
  /// An input pattern of `n` elements of the plan's precision (fp32: `fp32`), grown as needed.
  Expected<void*> Scratch(size_t n, bool fp32 = false);
  /// Output(bytes) of `n` activations of the plan's precision.
  Expected<void*> Activations(size_t n);
  Status Gemm(const ComputeOpArgs& args, const std::string& what);
  cudaStream_t stream() const;

  struct GemmPlan {
    MatmulDesc desc;
    MatrixLayout a, b, c;
    cublasLtMatmulAlgo_t algo{};
  };
  /// The plan of a GEMM by (m, n, k, variant: 0 forward, 1 dgrad, 2 wgrad), made at first use.
  Expected<GemmPlan*> PlanFor(const ComputeOpArgs::Gemm& g, const std::string& what);

  PoolAllocator* pool_;  // owned by the arena (RankCompute), which outlives every buffer
  kernels::DType dtype_;
  LtHandle lt_;
  DeviceMemory workspace_;
  std::map<std::tuple<long long, long long, long long, int>, GemmPlan> plans_;
  DeviceMemory scratch_, scratch_fp32_, labels_;
  size_t scratch_elements_ = 0, scratch_fp32_elements_ = 0, labels_rows_ = 0;
  MemoryArena::Buffer master_, exp_avg_, exp_avg_sq_;
  int64_t optimizer_steps_ = 0;
};

}  // namespace gpuplan
