// The CPU backend's compute (issue 19): a rank's compute ops run on this thread in float32 with
// real buffers of the plan's sizes (validator/rank_compute.h). GEMMs through Eigen (one thread, as
// the CPU profile measures them), attention, norms, activations, cross-entropy and AdamW through
// the reference kernels of kernels/. Values are synthetic and deterministic (every input a fixed
// pattern in [-1, 1)); what is real is the work and the memory: the rank's parameters, gradients
// and optimizer state, and every forward output kept until its backward, are buffers counted by a
// MemoryArena.
//
// Ring attention ("attention_fwd/_bwd" with "ring<n>", context parallelism): the causal kernel
// over the rank's own tokens, then n - 1 steps of the non-causal kernel, the rank's s queries
// against s/2 keys (each step's share under Megatron's causal load balancing), as Transformer
// Engine's AttnFuncWithCPAndKVP2P runs them. Forward, each step's output and log-sum-exp are
// merged into the running ones (ReferenceAttentionMergeInto); backward, each step's dQ is added
// to the rank's and its dK, dV to the chunk's accumulators. The partial results are Temporary
// buffers. The K/V chunks themselves travel in the program's "ring send/recv" collectives.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "simulator/job.h"
#include "validator/rank_compute.h"

namespace gpuplan {

/// Ok when the CPU backend can execute `job`: fp32 precision (the `cpu` device computes in fp32),
/// what CheckBackendSupports allows (under LoRA a base of the training precision, `same`), no
/// offload. Otherwise Invalid naming the field and what it allows.
Status CheckCpuExecutable(const JobSpec& job);

/// The compute of one rank of `job` at pipeline stage `stage` running `program` (its
/// RankProgram), whose place in its data-parallel group is `dp_index` (which ZeRO shard of the
/// optimizer state it updates), in float32 host memory (RankCompute says what it keeps when).
/// AdamW's two moments for the shard it updates join at the first optimizer step. The values
/// ops read come from one scratch pattern buffer grown to the largest input; it stands in for the
/// buffers a real run reads (the previous op's output, a kept activation), which the arena
/// counts already, so it is not counted.
class CpuCompute : public RankCompute {
 public:
  static Expected<std::unique_ptr<CpuCompute>> Create(const JobSpec& job,
                                                      const std::vector<ProgramStep>& program,
                                                      int64_t stage, int64_t dp_index);

 private:
  CpuCompute(const JobSpec& job, int64_t dp_index)
      : RankCompute(job, dp_index, HostAllocator(), ElementBytes{4, 4, 4}) {}
  Status InitParameters() override;
  Status RunOnce(const RankOp& op, const OpSite& site) override;
  std::span<const float> Scratch(size_t n);
  /// Output(4 n) as n floats; empty when the arena has no memory left (the kernels then refuse
  /// the size, naming the op).
  std::span<float> Out(size_t n);
  /// Temporary(4 n) as n floats; empty when the arena has no memory left.
  std::span<float> Temp(size_t n);
  /// An attention op, with its ring steps (the file comment).
  Status RunAttention(const ComputeOpArgs& a);

  MemoryArena::Buffer exp_avg_, exp_avg_sq_;
  /// Synthetic inputs (Scratch): outside the arena, see the class comment.
  std::vector<float> scratch_;
  std::vector<int64_t> labels_;
  int64_t optimizer_steps_ = 0;
};

}  // namespace gpuplan
