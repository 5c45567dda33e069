// Tensor-parallel communication overlapped with the GEMMs that produce or consume it, as
// Transformer Engine's userbuffers run it under Megatron-LM --tp-comm-overlap (with sequence
// parallelism). Each overlapped GEMM is cut into chunks or runs on fewer SMs, so the overlap is
// not free: these functions return the GEMM + communication time of the overlapped pieces, and
// how much that exceeds the GEMMs alone.
//
// Methods (TE transformer_engine/pytorch/module/base.py, initialize_ub defaults):
//  - "ring_exchange" (QKV and FC1 forward, proj and FC2 data-gradient): the all-gather is
//    replaced by tp - 1 point-to-point copies on the copy engine while the GEMM runs in tp row
//    chunks, one chunk per step; no SMs are taken.
//  - "pipeline" (proj and FC2 forward): the GEMM runs in kTpOverlapPipelineSplits row chunks and
//    each chunk's output is reduce-scattered while the next is multiplied; the reduce-scatter
//    kernels take kTpOverlapCommSms SMs and the GEMM runs on the others.
//  - "bulk" (QKV and FC1 backward): the all-gather of the layer input for the weight gradient
//    runs beside the data-gradient GEMM, and the reduce-scatter of the data gradient beside the
//    weight-gradient GEMM, each on kTpOverlapCommSms SMs.
// The chunk GEMMs of "ring_exchange" and "pipeline" run on three streams, chunk i on stream
// i mod 3 (NVTE_COMM_OVERLAP_MAX_STREAMS; comm_gemm_overlap.cpp split_overlap_ag and
// split_overlap_rs), each waiting only for its own input rows: consecutive chunks run at once, so
// a chunk's last partial wave of tiles is filled by the next chunk's, and the chunks together
// take what the whole GEMM takes on the same SMs. A chunk is priced as its share of that, not as
// a small GEMM of its own. torch's async TP (SymmetricMemory micro-pipelining, torchtitan) does the
// same on two streams, "greatly reducing quantization inefficiency"
// (torch/distributed/_symmetric_memory/__init__.py, _pipelined_multi_all_gather_and_consume).
#pragma once

#include <cstdint>

#include "hardware-db/hardware.h"
#include "simulator/collective.h"
#include "simulator/gemm_time.h"

namespace gpuplan {

/// SMs TE gives the communication kernels of a "pipeline" or "bulk" overlap; the GEMM beside
/// them runs on the rest (initialize_ub default num_sm = 16 with set_sm_margin).
inline constexpr int kTpOverlapCommSms = 16;
/// Row chunks of a "pipeline" GEMM + reduce-scatter (initialize_ub default num_splits = 4).
inline constexpr double kTpOverlapPipelineSplits = 4;
/// Userbuffers TE registers, one per overlapped GEMM name (qkv/proj/fc1/fc2 fprop, dgrad and
/// qkv/fc1 wgrad, proj/fc2 wgrad "external"), each of the shape Megatron passes to
/// initialize_ub: (seq_length x micro_batch / cp) x hidden at the activation precision.
inline constexpr double kTpOverlapUserBuffers = 12;

/// The GEMMs of one transformer layer on one TP rank that TE overlaps (per micro-batch).
struct TpOverlapGemms {
  double tokens = 0;      ///< rows after the all-gather: micro-batch tokens on the rank (b*s/cp)
  double hidden = 0;      ///< h
  double qkv_width = 0;   ///< QKV output columns on the rank, (q + 2 kv) / t
  double attn_width = 0;  ///< attention output projection input columns, q / t
  /// FC1 output columns (gate and up) and FC2 input columns on the rank; 0 when the MLP is not
  /// overlapped (mixture-of-experts layers: their grouped expert GEMMs have no userbuffers).
  double fc1_width = 0;
  double fc2_width = 0;
};

/// One pass of a layer's overlapped tensor-parallel work (seconds).
struct TpOverlapPass {
  double overlapped = 0;  ///< the overlapped GEMMs and their communication, as they run
  double gemms = 0;       ///< the same GEMMs un-split on all SMs, no communication
  double Extra() const { return overlapped - gemms; }
};

/// The forward pass (QKV and FC1 ring-exchange all-gathers, proj and FC2 pipelined
/// reduce-scatters) of `g` at `rates`, activations of `act_bytes` per element, over `tp_link`
/// (tp = tp_link.ranks >= 2, inside one scale-up domain).
TpOverlapPass TpOverlapForward(const DeviceRates& rates, const TpOverlapGemms& g,
                               const GroupLink& tp_link, double act_bytes);

/// The backward pass (proj and FC2 data-gradient ring exchanges; QKV and FC1 bulk all-gather
/// beside the data-gradient GEMM and bulk reduce-scatter beside the weight-gradient GEMM).
TpOverlapPass TpOverlapBackward(const DeviceRates& rates, const TpOverlapGemms& g,
                                const GroupLink& tp_link, double act_bytes);

/// The backward pass without userbuffers, of a stack that issues the column-parallel layers'
/// collectives asynchronously (FrameworkSpec::tp_backward_overlap: Megatron-LM
/// LinearWithGradAccumulationAndAsyncCommunication.backward, Transformer Engine's
/// _Linear.backward): the layer's exposed TP seconds. With `sequence_parallel`, each block (the
/// attention, and the dense MLP when g.fc1_width > 0) all-gathers the row-parallel layer's output
/// gradient in line (proj, FC2), then runs the column-parallel layer's (QKV, FC1) all-gather of
/// its input beside its data-gradient GEMM and the data gradient's reduce-scatter beside its
/// weight-gradient GEMM, each pair charged as ExposedSeconds (step_costs.h); without, the
/// column-parallel layer's all-reduce of the data gradient beside its weight-gradient GEMM.
double TpAsyncBackwardSeconds(const DeviceRates& rates, const TpOverlapGemms& g,
                              const GroupLink& tp_link, double act_bytes, bool sequence_parallel);

/// The largest TP group whose userbuffers can map the peers' memory: the GPUs of one node that
/// share a scale-up domain (min(gpus_per_node, scaleup_domain_gpus)); 1 when the GPU has no
/// scale-up fabric, so no tp > 1 qualifies.
int64_t TpOverlapMaxRanks(const GpuSpec& gpu, int64_t gpus_per_node);

/// Bytes of the overlapped TP's communication buffers on one GPU: `buffers` (TE's userbuffers:
/// kTpOverlapUserBuffers; FrameworkSpec::tp_overlap_buffers) x tokens x hidden x act_bytes.
double TpOverlapBufferBytes(double buffers, double tokens, double hidden, double act_bytes);

}  // namespace gpuplan
