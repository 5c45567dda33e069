// The CPU backend's compute (issue 19): a rank's compute ops run on this thread in float32 with
// real buffers of the plan's sizes. GEMMs through Eigen (one thread, as the CPU profile measures
// them), attention, norms, activations, cross-entropy and AdamW through the reference kernels of
// kernels/. Values are synthetic and deterministic (every input a fixed pattern in [-1, 1));
// what is real is the work and the memory: the rank's parameters, gradients and optimizer state,
// and every forward output kept until its backward, are buffers counted by a MemoryArena.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "simulator/job.h"
#include "validator/compute_backend.h"

namespace gpuplan {

/// Counts the bytes of the float buffers it hands out: live now and the peak since ResetPeak.
class MemoryArena {
 public:
  /// n floats owned by the caller and counted against the arena until destroyed. Move-only.
  class Buffer {
   public:
    Buffer() = default;
    Buffer(Buffer&& other) noexcept;
    Buffer& operator=(Buffer&& other) noexcept;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    ~Buffer();
    std::span<float> span() { return {data_.get(), size_}; }
    std::span<const float> span() const { return {data_.get(), size_}; }
    size_t size() const { return size_; }

   private:
    friend class MemoryArena;
    std::unique_ptr<float[]> data_;
    size_t size_ = 0;
    MemoryArena* arena_ = nullptr;
  };

  /// A buffer of `n` floats, uninitialised (the caller writes it before reading).
  Buffer Allocate(size_t n);
  /// A buffer of `n` zeros.
  Buffer Zeros(size_t n);
  double LiveBytes() const { return live_bytes_; }
  double PeakBytes() const { return peak_bytes_; }
  /// Peak := live bytes now (before the steps that are measured).
  void ResetPeak() { peak_bytes_ = live_bytes_; }

 private:
  double live_bytes_ = 0;
  double peak_bytes_ = 0;
};

/// Ok when the CPU backend can execute `job`: fp32 precision (the `cpu` device computes in fp32),
/// fused attention, no LoRA, no offload. Otherwise Invalid naming the field and what it allows.
Status CheckCpuExecutable(const JobSpec& job);

/// The compute of one rank of `job` at pipeline stage `stage` running `program` (its
/// RankProgram), whose place in its data-parallel group is `dp_index` (which ZeRO shard of the
/// optimizer state it updates).
///
/// Memory (MemoryArena): at creation the rank's parameters, one float32 buffer of which every
/// weight its program uses (GEMM weights, norm weights and biases, the embedding, an untied LM
/// head) is a slice, as many float32 gradients; at the first optimizer step AdamW's two moments
/// for the shard it updates (the op's count, at most the parameters). In a forward pass every op's
/// outputs are kept until the end of the backward of the same micro-batch and chunk (the
/// weight-gradient pass when the schedule splits the backward); with full recompute only each
/// layer's input is kept and the recomputation's outputs live until that backward ends. Backward
/// outputs live until the next op ends (they are its input), or until the pass ends. The values
/// ops read come from one scratch pattern buffer grown to the largest input; it stands in for the
/// buffers a real run reads (the previous op's output, a kept activation), which the arena
/// counts already, so it is not counted.
///
/// Ops by name (RankProgram, LayerProgram): "gemm <w>" C[m x n] = A[m x k] W[k x n]; "gemm <w>
/// dgrad" dX = dY W^T; "gemm <w> wgrad" dW[m x n] += dY^T X into the gradient slice of <w>;
/// rmsnorm/layernorm _fwd/_bwd; gelu/swiglu _fwd/_bwd; attention_fwd/_bwd; cross_entropy (the
/// logit gradient is kept for the LM head's backward); embedding_fwd (a row gather from the
/// embedding slice) and _bwd (a row scatter-add into its gradient); adam over the rank's shard.
/// Any other name is Invalid.
class CpuCompute : public ComputeBackend {
 public:
  static Expected<std::unique_ptr<CpuCompute>> Create(const JobSpec& job,
                                                      const std::vector<ProgramStep>& program,
                                                      int64_t stage, int64_t dp_index);
  Status Run(const RankOp& op, const OpSite& site) override;
  void EndPass(const PipelinePass& pass) override;
  MemoryArena& Arena() { return arena_; }
  /// Float32 parameters of the rank (the flat buffer the weights are slices of).
  size_t Parameters() const { return params_.size(); }

 private:
  CpuCompute(const JobSpec& job, int64_t dp_index) : job_(job), dp_index_(dp_index) {}
  Status RunOnce(const RankOp& op, const OpSite& site);
  /// The slice of the flat parameters (and of the gradients) that weight `key` of `layer` uses,
  /// `n` elements: assigned at its first use while the program is walked at creation, the same
  /// slice afterwards (Internal for a weight used with another size or not registered).
  Expected<size_t> WeightOffset(int64_t layer, const std::string& key, size_t n);
  /// Assigns the slices of the weights `op` uses (walking the program at creation).
  Status RegisterWeights(const RankOp& op, int64_t layer);
  std::span<const float> Scratch(size_t n);
  /// A buffer for an op's output: kept with the pass's saved buffers or freed after the op.
  std::span<float> Output(size_t n);
  struct GemmDims {
    long long m, n, k;
    bool dgrad, wgrad;
    size_t offset;  ///< of the weight (or its gradient) in the flat buffers
  };
  /// Parses "gemm <w>[ dgrad| wgrad]" of shape "m x n x k" and finds the slice of <w>.
  Expected<GemmDims> GemmWeight(const std::string& name, int64_t layer, const std::string& shape);
  Status Gemm(const std::string& name, int64_t layer, const std::string& shape);
  /// Rows of the rank's embedding (vocabulary-parallel: vocab / tp).
  size_t EmbeddingRows() const {
    return static_cast<size_t>(job_.model.vocab_size / job_.parallel.tp);
  }

  JobSpec job_;
  int64_t dp_index_ = 0;
  MemoryArena arena_;
  MemoryArena::Buffer params_, grads_, exp_avg_, exp_avg_sq_;
  /// Synthetic inputs (Scratch): outside the arena, see the class comment.
  std::vector<float> scratch_;
  std::vector<int64_t> labels_;
  std::map<std::pair<int64_t, std::string>, std::pair<size_t, size_t>> weights_;  // offset, size
  size_t next_weight_ = 0;
  bool registering_ = false;  // WeightOffset assigns new slices only while true
  int64_t optimizer_steps_ = 0;
  /// Buffers kept for the backward of (micro-batch, chunk).
  std::map<std::pair<int64_t, int64_t>, std::vector<MemoryArena::Buffer>> saved_;
  std::vector<MemoryArena::Buffer> transient_;  // outputs of the op running now
  std::vector<MemoryArena::Buffer> previous_;   // those of the op before it: this op's input
  bool keep_outputs_ = false;                   // set per op by Run
  std::pair<int64_t, int64_t> saving_for_{0, 0};
  int64_t checkpointed_layer_ = -1;
};

}  // namespace gpuplan
