#include <algorithm>

#include "profiler/cuda_check.h"
#include "validator/check_patterns.h"
#include "validator/nccl_check_kernels.h"

namespace gpuplan {
namespace {

constexpr unsigned kThreads = 256;
constexpr int64_t kMaxBlocks = 1024;  // grid-stride: enough blocks to cover any GPU
constexpr unsigned kWarps = kThreads / 32;

__device__ int64_t SendValue(const CheckSpec& s, int64_t j) {
  switch (s.pattern) {
    case CheckPattern::kAllReduce:
      return check::AllReduceSend(s.rank, j);
    case CheckPattern::kAllGather:
      return check::AllGatherSend(s.rank, j);
    case CheckPattern::kReduceScatter:
      return check::ReduceScatterSend(s.rank, j);
    case CheckPattern::kAllToAll:
      return check::AllToAllSend(s.rank, s.count, j);
    case CheckPattern::kRing:
      return check::RingSend(s.rank, j);
    case CheckPattern::kMessage:
      return check::Message(s.tag, s.sender, j);
  }
  return -1;
}

__device__ int64_t WantValue(const CheckSpec& s, int64_t j) {
  switch (s.pattern) {
    case CheckPattern::kAllReduce:
      return check::AllReduceWant(s.ranks, j);
    case CheckPattern::kAllGather:
      return check::AllGatherWant(s.count, j);
    case CheckPattern::kReduceScatter:
      return check::ReduceScatterWant(s.rank, s.ranks, s.count, j);
    case CheckPattern::kAllToAll:
      return check::AllToAllWant(s.rank, s.count, j);
    case CheckPattern::kRing:
      return check::RingSend(s.sender, j);
    case CheckPattern::kMessage:
      return check::Message(s.tag, s.sender, j);
  }
  return -1;
}

__global__ void FillKernel(int64_t* data, int64_t elements, CheckSpec spec) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < elements;
       j += stride) {
    data[j] = SendValue(spec, j);
  }
}

// Each thread counts its elements; the block sums them (warp shuffles, then one warp over the
// warps' sums) and adds the total with one atomic.
__global__ void CountKernel(const int64_t* data, int64_t elements, CheckSpec spec,
                            unsigned long long* wrong) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  unsigned long long mine = 0;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < elements;
       j += stride) {
    if (data[j] != WantValue(spec, j)) ++mine;
  }
  for (int offset = 16; offset > 0; offset /= 2)
    mine += __shfl_down_sync(0xFFFFFFFFu, mine, offset);
  __shared__ unsigned long long warp_sums[kWarps];
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = mine;
  __syncthreads();
  if (warp != 0) return;
  mine = lane < kWarps ? warp_sums[lane] : 0;
  for (int offset = 16; offset > 0; offset /= 2)
    mine += __shfl_down_sync(0xFFFFFFFFu, mine, offset);
  if (lane == 0 && mine != 0) atomicAdd(wrong, mine);
}

unsigned Blocks(int64_t elements) {
  return static_cast<unsigned>(
      std::clamp<int64_t>((elements + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

}  // namespace

Status FillCheckSend(int64_t* data, int64_t elements, const CheckSpec& spec, cudaStream_t stream) {
  if (elements <= 0) return Status::Ok();
  FillKernel<<<Blocks(elements), kThreads, 0, stream>>>(data, elements, spec);
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::Ok();
}

Status CountCheckWrong(const int64_t* data, int64_t elements, const CheckSpec& spec, int64_t* wrong,
                       cudaStream_t stream) {
  if (elements <= 0) return Status::Ok();
  static_assert(sizeof(unsigned long long) == sizeof(int64_t));
  CountKernel<<<Blocks(elements), kThreads, 0, stream>>>(
      data, elements, spec, reinterpret_cast<unsigned long long*>(wrong));
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::Ok();
}

}  // namespace gpuplan
