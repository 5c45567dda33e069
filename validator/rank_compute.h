// What the CPU and GPU backends' compute share (issue 19): the rank's weights as slices of one
// flat parameter buffer (and of as many gradients), assigned by walking its program once, and the
// lifetimes of the buffers its ops write, counted by a MemoryArena so that the peak memory of a
// run is that of the plan's buffers. How an op computes is the backend's (RunOnce).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "kernels/norm_kind.h"
#include "kernels/tensor_shapes.h"
#include "simulator/job.h"
#include "simulator/pipeline_schedule.h"
#include "validator/compute_backend.h"

namespace gpuplan {

/// Where a MemoryArena's buffers live: host memory (HostAllocator) or a device's.
class BufferAllocator {
 public:
  virtual ~BufferAllocator() = default;
  /// `bytes` (> 0) of memory aligned to at least 256 bytes, or Unavailable naming `what`.
  virtual Expected<void*> Allocate(size_t bytes, std::string_view what) = 0;
  virtual void Free(void* data) = 0;
  /// Sets `bytes` at `data` to zero.
  virtual Status Zero(void* data, size_t bytes) = 0;
};

/// malloc'ed host memory.
std::unique_ptr<BufferAllocator> HostAllocator();

/// Counts the bytes of the buffers it hands out: live now and the peak since ResetPeak.
class MemoryArena {
 public:
  explicit MemoryArena(std::unique_ptr<BufferAllocator> allocator)
      : allocator_(std::move(allocator)) {}

  /// Memory owned by the caller and counted against the arena until destroyed. Move-only.
  class Buffer {
   public:
    Buffer() = default;
    Buffer(Buffer&& other) noexcept;
    Buffer& operator=(Buffer&& other) noexcept;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    ~Buffer();
    void* data() const { return data_; }
    size_t bytes() const { return bytes_; }
    /// The buffer as elements of T (bytes / sizeof(T) of them).
    template <typename T>
    std::span<T> span() const {
      return {static_cast<T*>(data_), bytes_ / sizeof(T)};
    }

   private:
    friend class MemoryArena;
    void* data_ = nullptr;
    size_t bytes_ = 0;
    MemoryArena* arena_ = nullptr;
  };

  /// `bytes` of memory, uninitialised (the caller writes it before reading); an empty buffer for
  /// 0 bytes; Unavailable naming `what` when the allocator has none left.
  Expected<Buffer> Allocate(size_t bytes, std::string_view what);
  /// `bytes` of zeros.
  Expected<Buffer> Zeros(size_t bytes, std::string_view what);
  double LiveBytes() const { return live_bytes_; }
  double PeakBytes() const { return peak_bytes_; }
  /// Peak := live bytes now (before the steps that are measured).
  void ResetPeak() { peak_bytes_ = live_bytes_; }

 private:
  void Release(Buffer& b);
  std::unique_ptr<BufferAllocator> allocator_;
  double live_bytes_ = 0;
  double peak_bytes_ = 0;
};

/// Ok when `job` uses only what both backends execute: fused attention, LoRA over a base kept at
/// the training precision (not fp8 or nf4), every layer's activations on the device; else
/// Invalid naming the field and `backend` ("CPU", "GPU").
Status CheckBackendSupports(const JobSpec& job, std::string_view backend);

/// Ok when the GPU backend can execute `job`: bf16 or fp16 precision (the attention kernel's;
/// fp8 GEMMs with their scaling are not executed), what CheckBackendSupports allows, no offload.
/// Otherwise Invalid naming the field and what it allows. (Head dimensions other than 64 and 128
/// are refused by the attention kernel when the op runs.)
Status CheckGpuExecutable(const JobSpec& job);

/// The compute ops the backends run.
enum class ComputeOpKind {
  kGemm,
  kNorm,
  kGelu,
  kSwiGlu,
  kAttention,
  kCrossEntropy,
  kEmbedding,
  kAdam
};

/// A compute op parsed from its name and shape, with the slices of the weights it uses.
struct ComputeOpArgs {
  ComputeOpKind kind = ComputeOpKind::kGemm;
  bool backward = false;  ///< "_bwd" (norm, activation, attention, embedding)
  struct Gemm {
    long long m = 0, n = 0, k = 0;
    bool dgrad = false, wgrad = false;
  } gemm;
  kernels::NormKind norm = kernels::NormKind::kRmsNorm;
  int64_t rows = 0, cols = 0;         ///< norm, activation, cross-entropy, embedding
  kernels::AttentionShape attention;  ///< attention: the rank's queries and their own keys
  int64_t ring = 1;   ///< attention: steps of ring attention ("ring<n>", the CP degree), else 1
  size_t weight = 0;  ///< offset in elements of the weight (GEMM, norm, embedding) or the shard
  size_t bias = 0;    ///< LayerNorm's bias offset
  size_t shard = 0;   ///< adam: elements of the rank's optimizer shard, starting at `weight`
  /// attention forward under RecomputeRole::kCheckpoint: its log-sum-exp is a Temporary
  bool checkpointed = false;
  /// norm, embedding: the weight is frozen (LoRA) and has no gradient slice
  bool frozen = false;
};

/// A rank's compute over a MemoryArena, the part the CPU and GPU backends share.
///
/// Memory: after Init the rank's parameters, one buffer of which every weight its program uses
/// (GEMM weights, norm weights and biases, the embedding, an untied LM head) is a slice, and as
/// many gradients. In a forward pass every op's outputs (Output) are kept until the end of the
/// backward of the same micro-batch and chunk (a layer op's until the weight-gradient pass when
/// the schedule splits the backward; the final norm's and the loss's, which only the LM head's
/// backward reads, until the backward pass reaches its layers), unless no backward reads them
/// (RankOp::saved_for_backward, the logits among them: then until the next op ends); with full
/// recompute only each layer's input is kept, and the outputs of its forward
/// run again in the backward live until that layer's backward ends. An op a selective recomputation
/// discards (RecomputeRole::kDiscard) keeps its outputs only until the next op ends; a checkpointed
/// attention (kCheckpoint) keeps its output but not its log-sum-exp; a re-run in the backward
/// (kRerun, named "<op> (recompute)", run as <op>) keeps its outputs until the backward of its
/// layer ends. Backward outputs live until the next op ends (they are
/// its input), or until the pass ends.
///
/// Ops by name (RankProgram, LayerProgram): "gemm <w>" C[m x n] = A[m x k] W[k x n]; "gemm <w>
/// dgrad" dX = dY W^T; "gemm <w> wgrad" dW[m x n] += dY^T X into the gradient slice of <w>;
/// rmsnorm/layernorm _fwd/_bwd; gelu/swiglu _fwd/_bwd; attention_fwd/_bwd (with "ring<n>": ring
/// attention's n steps, the backend's comment says how it runs them); cross_entropy (the
/// logit gradient is kept for the LM head's backward); embedding_fwd (a row gather from the
/// embedding slice) and _bwd (a row scatter-add into its gradient); adam over the rank's shard.
/// The backend's RunOnce says Invalid for any other name.
class RankCompute : public ComputeBackend {
 public:
  /// Runs the op's `count` repeats (RunOnce), then Synchronize, so that the op's time is over
  /// when it returns.
  Status Run(const RankOp& op, const OpSite& site) final;
  void EndPass(const PipelinePass& pass) final;
  MemoryArena& Arena() { return arena_; }
  /// What a device's allocator holds, beyond the arena's count of the plan's buffers.
  struct AllocatorUse {
    double peak_bytes = 0;         ///< the allocator's high-water mark since ResetPeaks
    double device_used_bytes = 0;  ///< the whole device's memory in use now (every allocation)
    double device_total_bytes = 0;
  };
  /// Restarts the peaks (the arena's; a device backend's allocator's too) before measured steps.
  virtual Status ResetPeaks() {
    arena_.ResetPeak();
    return Status::Ok();
  }
  /// All zero for host memory (the CPU backend).
  virtual Expected<AllocatorUse> Allocator() const { return AllocatorUse{}; }
  /// Elements of the rank's parameters (the flat buffer the weights are slices of, each starting
  /// at a multiple of 64 elements).
  size_t Parameters() const { return next_weight_; }
  /// Elements of its trainable parameters, the first of the flat buffer, and of its gradients:
  /// all of them, or under LoRA its adapters' (the frozen base follows them and has none).
  size_t TrainableParameters() const { return trainable_; }

 protected:
  /// Element sizes: of a parameter, of a gradient, of an activation (an op's output).
  struct ElementBytes {
    size_t param = 4, grad = 4, activation = 4;
  };
  RankCompute(const JobSpec& job, int64_t dp_index, std::unique_ptr<BufferAllocator> allocator,
              ElementBytes bytes)
      : job_(job),
        dp_index_(dp_index),
        bytes_(bytes),
        arena_(std::move(allocator)),
        split_backward_(GetScheduleInfo(job.parallel.schedule).splits_backward) {}

  /// Assigns the weights of `program` (RankProgram of pipeline `stage`), the trainable ones first,
  /// allocates the parameters (InitParameters writes them) and zeroed gradients of the trainable
  /// ones. Derived Create functions call it once.
  Status Init(const std::vector<ProgramStep>& program, int64_t stage);
  /// Writes the parameters' initial values.
  virtual Status InitParameters() = 0;
  /// One repeat of kCompute `op` at `site`.
  virtual Status RunOnce(const RankOp& op, const OpSite& site) = 0;
  /// Waits until the ops issued so far have finished (a device backend's stream); Ok by default.
  virtual Status Synchronize() { return Status::Ok(); }

  /// The slice of the flat parameters (and of the gradients) that weight `key` of `layer` uses,
  /// `n` elements: assigned at its first use while Init walks the program, the same slice
  /// afterwards (Internal for a weight used with another size or not registered).
  Expected<size_t> WeightOffset(int64_t layer, const std::string& key, size_t n);
  /// Parses kCompute `op` of `layer` (names and shapes in the class comment) and finds the
  /// slices of its weights; Invalid naming the op for another name or a shape that does not
  /// parse ("rows x cols", "m x n x k", "b<batch> s<seq> h<heads> d<head_dim>[ ring<n>]",
  /// "<n> params").
  Expected<ComputeOpArgs> Parse(const RankOp& op, int64_t layer);
  /// An output of `bytes` for the op running now: kept with the pass's saved buffers or freed
  /// after the next op (see the class comment). Unavailable when the arena has no memory left.
  Expected<void*> Output(size_t bytes);
  /// A buffer of `bytes` the op running now combines before it ends (ring attention's partial
  /// results), counted in the arena and freed once the op has finished (after Synchronize).
  Expected<void*> Temporary(size_t bytes);
  /// Rows of the rank's embedding (vocabulary-parallel: vocab / tp).
  size_t EmbeddingRows() const {
    return static_cast<size_t>(job_.model.vocab_size / job_.parallel.tp);
  }

  const JobSpec& job() const { return job_; }
  const ElementBytes& element_bytes() const { return bytes_; }
  MemoryArena::Buffer& params() { return params_; }
  MemoryArena::Buffer& grads() { return grads_; }

 private:
  Status RegisterWeights(const RankOp& op, int64_t layer);
  /// "gemm <w>[ dgrad| wgrad]" (`name`: the op's name less a re-run's suffix) of shape
  /// "m x n x k" and the slice of <w>.
  Status ParseGemm(const RankOp& op, const std::string& name, int64_t layer, ComputeOpArgs* args);

  JobSpec job_;
  int64_t dp_index_ = 0;
  ElementBytes bytes_;
  MemoryArena arena_;
  bool split_backward_;  // the schedule runs weight gradients in their own pass (ZB-H1)
  MemoryArena::Buffer params_, grads_;
  std::map<std::pair<int64_t, std::string>, std::pair<size_t, size_t>> weights_;  // offset, size
  size_t next_weight_ = 0;
  size_t trainable_ = 0;
  /// While Init walks the program: which weights WeightOffset assigns slices to (kNo: none).
  enum class Registering { kNo, kTrainable, kFrozen } registering_ = Registering::kNo;
  /// Whether weight `key` is trained: every weight, or under LoRA the adapters' ("... lora_a",
  /// "... lora_b").
  bool Trainable(const std::string& key) const;
  /// Buffers kept for the backward of (micro-batch, chunk): until its backward pass ends, or a
  /// layer op's (saved_for_w_) until its weight-gradient pass when the schedule splits them;
  /// those of the ops after the last layer (saved_head_: the final norm's output, the loss's
  /// gradient) until the backward pass reaches its layers, the LM head's backward done.
  std::map<std::pair<int64_t, int64_t>, std::vector<MemoryArena::Buffer>> saved_, saved_for_w_,
      saved_head_;
  bool past_layers_ = false;                      // the pass running now has run a layer op
  std::vector<MemoryArena::Buffer> transient_;    // outputs of the op running now
  std::vector<MemoryArena::Buffer> previous_;     // those of the op before it: this op's input
  std::vector<MemoryArena::Buffer> temporaries_;  // the running op's own scratch (Temporary)
  std::vector<MemoryArena::Buffer>* keep_in_ = nullptr;  // where Run keeps outputs; null: transient
  std::vector<MemoryArena::Buffer> rerun_;  // outputs of re-run ops (kRerun) of rerun_layer_
  int64_t rerun_layer_ = -1;
  std::pair<int64_t, int64_t> saving_for_{0, 0};
  int64_t checkpointed_layer_ = -1;
  const RankOp* running_ = nullptr;  // the op Run is running, named when memory runs out
};

}  // namespace gpuplan
