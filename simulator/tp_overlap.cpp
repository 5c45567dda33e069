#include "simulator/tp_overlap.h"

#include <algorithm>

#include "simulator/step_costs.h"

namespace gpuplan {
namespace {

// The rates of a GEMM that shares the GPU with kTpOverlapCommSms communication SMs: fewer SMs
// for its waves and proportionally less matmul throughput.
DeviceRates WithoutCommSms(const DeviceRates& r) {
  DeviceRates narrow = r;
  narrow.sm_count = std::max(1, r.sm_count - kTpOverlapCommSms);
  narrow.matmul_flops_per_s =
      r.matmul_flops_per_s * narrow.sm_count / static_cast<double>(r.sm_count);
  return narrow;
}

// TE "ring_exchange" all-gather + GEMM of (m x k) * (k x n): tp row chunks of m / tp; while chunk
// i is multiplied, chunk i + 1 arrives from the ring neighbour (a copy of m / tp x k elements);
// the last chunk has nothing left to receive. A chunk takes its share of the whole GEMM (the
// chunks share waves across TE's compute streams; tp_overlap.h).
double RingExchangeSeconds(const DeviceRates& r, double m, double n, double k,
                           const GroupLink& link, double act_bytes) {
  const double tp = link.ranks;
  const double chunk = GemmSeconds(r, m, n, k) / tp;
  const double copy = CollectiveSeconds(Collective::kSendRecv, m / tp * k * act_bytes, link);
  return (tp - 1.0) * std::max(chunk, copy) + chunk;
}

// TE "pipeline" GEMM + reduce-scatter of the (m x n) output: kTpOverlapPipelineSplits row chunks
// on the SMs the reduce-scatter kernels leave, each its share of the whole narrowed GEMM (as in
// RingExchangeSeconds); chunk i is reduce-scattered while chunk i + 1 is multiplied (a two-stage
// pipeline: first GEMM, then the slower stage per chunk, then the last reduce-scatter).
double PipelineSeconds(const DeviceRates& narrow, double m, double n, double k,
                       const GroupLink& link, double act_bytes) {
  const double splits = kTpOverlapPipelineSplits;
  const double gemm = GemmSeconds(narrow, m, n, k) / splits;
  const double rs = CollectiveSeconds(Collective::kReduceScatter, m / splits * n * act_bytes, link);
  return gemm + (splits - 1.0) * std::max(gemm, rs) + rs;
}

}  // namespace

TpOverlapPass TpOverlapForward(const DeviceRates& rates, const TpOverlapGemms& g,
                               const GroupLink& tp_link, double act_bytes) {
  const DeviceRates narrow = WithoutCommSms(rates);
  const double T = g.tokens;
  const double h = g.hidden;
  TpOverlapPass p;
  p.overlapped = RingExchangeSeconds(rates, T, g.qkv_width, h, tp_link, act_bytes) +
                 PipelineSeconds(narrow, T, h, g.attn_width, tp_link, act_bytes);
  p.gemms = GemmSeconds(rates, T, g.qkv_width, h) + GemmSeconds(rates, T, h, g.attn_width);
  if (g.fc1_width > 0) {
    p.overlapped += RingExchangeSeconds(rates, T, g.fc1_width, h, tp_link, act_bytes) +
                    PipelineSeconds(narrow, T, h, g.fc2_width, tp_link, act_bytes);
    p.gemms += GemmSeconds(rates, T, g.fc1_width, h) + GemmSeconds(rates, T, h, g.fc2_width);
  }
  return p;
}

TpOverlapPass TpOverlapBackward(const DeviceRates& rates, const TpOverlapGemms& g,
                                const GroupLink& tp_link, double act_bytes) {
  const DeviceRates narrow = WithoutCommSms(rates);
  const double T = g.tokens;
  const double h = g.hidden;
  const double all_gather = CollectiveSeconds(Collective::kAllGather, T * h * act_bytes, tp_link);
  const double reduce_scatter =
      CollectiveSeconds(Collective::kReduceScatter, T * h * act_bytes, tp_link);
  TpOverlapPass p;
  // Output projection (and FC2): the gathered output gradient feeds the data-gradient GEMM.
  // Input projection (QKV, and FC1): data gradient (T x width) * (width x h) beside the input's
  // all-gather, weight gradient (width x T) * (T x h) beside the data gradient's reduce-scatter.
  auto column_parallel = [&](double width) {
    p.overlapped += std::max(GemmSeconds(narrow, T, h, width), all_gather) +
                    std::max(GemmSeconds(narrow, width, h, T), reduce_scatter);
    p.gemms += GemmSeconds(rates, T, h, width) + GemmSeconds(rates, width, h, T);
  };
  auto row_parallel = [&](double width) {
    p.overlapped += RingExchangeSeconds(rates, T, width, h, tp_link, act_bytes);
    p.gemms += GemmSeconds(rates, T, width, h);
  };
  row_parallel(g.attn_width);
  column_parallel(g.qkv_width);
  if (g.fc1_width > 0) {
    row_parallel(g.fc2_width);
    column_parallel(g.fc1_width);
  }
  return p;
}

double TpAsyncBackwardSeconds(const DeviceRates& rates, const TpOverlapGemms& g,
                              const GroupLink& tp_link, double act_bytes, bool sequence_parallel) {
  const double T = g.tokens;
  const double h = g.hidden;
  const double bytes = T * h * act_bytes;
  const double all_gather = CollectiveSeconds(Collective::kAllGather, bytes, tp_link);
  const double reduce_scatter = CollectiveSeconds(Collective::kReduceScatter, bytes, tp_link);
  const double all_reduce = CollectiveSeconds(Collective::kAllReduce, bytes, tp_link);
  // One block: the row-parallel layer's output-gradient gather (sequence parallelism), then the
  // column-parallel layer of output `width`: data gradient (T x width) * (width x h), weight
  // gradient (width x T) * (T x h), as TpOverlapBackward's bulk pieces but on all SMs.
  auto block = [&](double width) {
    const double dgrad = GemmSeconds(rates, T, h, width);
    const double wgrad = GemmSeconds(rates, width, h, T);
    if (!sequence_parallel) return ExposedSeconds(all_reduce, wgrad);
    return all_gather + ExposedSeconds(all_gather, dgrad) + ExposedSeconds(reduce_scatter, wgrad);
  };
  return block(g.qkv_width) + (g.fc1_width > 0 ? block(g.fc1_width) : 0.0);
}

int64_t TpOverlapMaxRanks(const GpuSpec& gpu, int64_t gpus_per_node) {
  if (gpu.scaleup_kind == "none" || gpu.HostDevice()) return 1;
  return std::min<int64_t>(gpus_per_node, gpu.scaleup_domain_gpus);
}

double TpOverlapBufferBytes(double buffers, double tokens, double hidden, double act_bytes) {
  return buffers * tokens * hidden * act_bytes;
}

}  // namespace gpuplan
