#include "validator/cpu_compute.h"

#include <Eigen/Core>
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "common/str_format.h"
#include "kernels/reference_activation.h"
#include "kernels/reference_adam.h"
#include "kernels/reference_attention.h"
#include "kernels/reference_cross_entropy.h"
#include "kernels/reference_norm.h"
#include "simulator/pipeline_schedule.h"
#include "simulator/shard.h"

namespace gpuplan {
namespace {

using Matrix = Eigen::Map<Eigen::MatrixXf>;
using ConstMatrix = Eigen::Map<const Eigen::MatrixXf>;
using F = std::span<const float>;

// The deterministic input pattern: element i is (i * 37 mod 200) / 100 - 1, in [-1, 1).
float PatternValue(size_t i) { return static_cast<float>((i * 37) % 200) / 100.0f - 1.0f; }

}  // namespace

Status CheckCpuExecutable(const JobSpec& job) {
  if (job.training.precision != Precision::kFp32) {
    return Status::Invalid("training.precision: the CPU backend computes in fp32 (got " +
                           std::string(PrecisionName(job.training.precision)) + ")");
  }
  GPUPLAN_RETURN_IF_ERROR(CheckBackendSupports(job, "CPU"));
  if (job.training.lora.enabled && job.training.lora.base != BaseWeights::kSame) {
    return Status::Invalid(
        "training.lora.base: the CPU backend keeps the frozen base in fp32 beside its adapters "
        "(base 'same'); a 16-bit base is run by the GPU backend");
  }
  if (job.parallel.cpu_offload) {
    return Status::Invalid("parallelism.cpu_offload: the CPU backend's ranks are on the host");
  }
  return Status::Ok();
}

Expected<std::unique_ptr<CpuCompute>> CpuCompute::Create(const JobSpec& job,
                                                         const std::vector<ProgramStep>& program,
                                                         int64_t stage, int64_t dp_index) {
  GPUPLAN_RETURN_IF_ERROR(CheckCpuExecutable(job));
  Eigen::setNbThreads(1);  // one thread per rank, as the CPU profile measures
  std::unique_ptr<CpuCompute> c(new CpuCompute(job, dp_index));
  GPUPLAN_RETURN_IF_ERROR(c->Init(program, stage));
  return c;
}

Status CpuCompute::InitParameters() {
  std::span<float> p = params().span<float>();
  for (size_t i = 0; i < p.size(); ++i) p[i] = 0.02f * PatternValue(i);
  return Status::Ok();
}

std::span<const float> CpuCompute::Scratch(size_t n) {
  if (scratch_.size() < n) {
    const size_t had = scratch_.size();
    scratch_.resize(n);
    for (size_t i = had; i < n; ++i) scratch_[i] = PatternValue(i);
  }
  return std::span<const float>(scratch_).first(n);
}

std::span<float> CpuCompute::Out(size_t n) {
  Expected<void*> out = Output(4 * n);
  if (!out.ok()) return {};
  return {static_cast<float*>(*out), n};
}

std::span<float> CpuCompute::Temp(size_t n) {
  Expected<void*> out = Temporary(4 * n);
  if (!out.ok()) return {};
  return {static_cast<float*>(*out), n};
}

Status CpuCompute::RunAttention(const ComputeOpArgs& a) {
  using namespace kernels;
  const AttentionShape& own = a.attention;
  const size_t e = static_cast<size_t>(own.Elements());
  const size_t stats = static_cast<size_t>(own.StatRows());
  // A ring step against another rank's K/V under Megatron's causal load balancing: the rank's
  // queries against the earlier half of that rank's chunk, all of it visible (or, against a later
  // rank, the later half of the queries against its whole chunk: the same pairs).
  AttentionShape step = own;
  step.kv_seq = std::max<int64_t>(1, own.seq / 2);
  step.causal = false;
  const size_t kv = static_cast<size_t>(step.KvElements());
  const F x = Scratch(e);
  if (!a.backward) {
    const std::span<float> o = Out(e), lse = a.checkpointed ? Temp(stats) : Out(stats);
    GPUPLAN_RETURN_IF_ERROR(ReferenceAttentionForwardInto<float>(own, x, x, x, o, lse));
    if (a.ring == 1) return Status::Ok();
    const std::span<float> o_part = Temp(e), lse_part = Temp(stats);
    for (int64_t i = 1; i < a.ring; ++i) {
      GPUPLAN_RETURN_IF_ERROR(ReferenceAttentionForwardInto<float>(step, x, x.first(kv),
                                                                   x.first(kv), o_part, lse_part));
      GPUPLAN_RETURN_IF_ERROR(ReferenceAttentionMergeInto<float>(own, o_part, lse_part, o, lse));
    }
    return Status::Ok();
  }
  const std::span<float> dq = Out(e), dk = Out(e), dv = Out(e);
  GPUPLAN_RETURN_IF_ERROR(
      ReferenceAttentionBackwardInto<float>(own, x, x, x, x, x, x.first(stats), dq, dk, dv));
  if (a.ring == 1) return Status::Ok();
  const std::span<float> dq_part = Temp(e), dk_part = Temp(kv), dv_part = Temp(kv);
  for (int64_t i = 1; i < a.ring; ++i) {
    GPUPLAN_RETURN_IF_ERROR(ReferenceAttentionBackwardInto<float>(
        step, x, x.first(kv), x.first(kv), x, x, x.first(stats), dq_part, dk_part, dv_part));
    // dQ accumulates on the rank; dK and dV join the accumulator that travels with the chunk.
    Eigen::Map<Eigen::VectorXf>(dq.data(), dq.size()) +=
        Eigen::Map<const Eigen::VectorXf>(dq_part.data(), dq_part.size());
    Eigen::Map<Eigen::VectorXf>(dk.data(), kv) +=
        Eigen::Map<const Eigen::VectorXf>(dk_part.data(), kv);
    Eigen::Map<Eigen::VectorXf>(dv.data(), kv) +=
        Eigen::Map<const Eigen::VectorXf>(dv_part.data(), kv);
  }
  return Status::Ok();
}

Status CpuCompute::RunOnce(const RankOp& op, const OpSite& site) {
  using namespace kernels;
  Expected<ComputeOpArgs> parsed = Parse(op, site.layer);
  if (!parsed.ok()) return parsed.status();
  const ComputeOpArgs& a = *parsed;
  float* const params_data = params().span<float>().data();
  float* const grads_data = grads().span<float>().data();
  const size_t r = static_cast<size_t>(a.rows), c = static_cast<size_t>(a.cols), n = r * c;
  switch (a.kind) {
    case ComputeOpKind::kGemm: {
      const auto [m, gn, k, dgrad, wgrad] = a.gemm;
      if (wgrad) {
        // dW [n x m] (the forward's [in x out]) += X^T [n x k] dY [k x m] over the k rows.
        const F s = Scratch(static_cast<size_t>(k * std::max(m, gn)));
        Matrix dw(grads_data + a.weight, gn, m);
        dw.noalias() += ConstMatrix(s.data(), k, gn).transpose() * ConstMatrix(s.data(), k, m);
        return Status::Ok();
      }
      const F x = Scratch(static_cast<size_t>(m * k));
      const std::span<float> out = Out(static_cast<size_t>(m * gn));
      if (out.empty()) return Status::Unavailable("compute op '" + op.name + "': out of memory");
      Matrix y(out.data(), m, gn);
      const float* w = params_data + a.weight;
      if (dgrad) {
        y.noalias() = ConstMatrix(x.data(), m, k) * ConstMatrix(w, gn, k).transpose();
      } else {
        y.noalias() = ConstMatrix(x.data(), m, k) * ConstMatrix(w, k, gn);
      }
      return Status::Ok();
    }
    case ComputeOpKind::kNorm: {
      const bool layer_norm = a.norm == NormKind::kLayerNorm;
      const F x = Scratch(n);
      const F weight(params_data + a.weight, c);
      const MatrixShape shape{a.rows, a.cols};
      if (!a.backward) {
        const F bias = layer_norm ? F(params_data + a.bias, c) : F();
        const std::span<float> mean = layer_norm ? Out(r) : std::span<float>();
        return ReferenceNormForwardInto<float>(a.norm, shape, x, weight, bias, 1e-5, Out(n), mean,
                                               Out(r));
      }
      const F stats = x.first(r);  // mean and rstd from the pattern: any finite values do
      // A frozen (LoRA) norm's weight gradient goes to scratch: it has no gradient slice.
      const std::span<float> dweight =
          a.frozen ? Temp(c) : std::span<float>(grads_data + a.weight, c);
      const std::span<float> dbias = !layer_norm ? std::span<float>()
                                     : a.frozen  ? Temp(c)
                                                 : std::span<float>(grads_data + a.bias, c);
      return ReferenceNormBackwardInto<float>(a.norm, shape, x, weight, layer_norm ? stats : F(),
                                              stats, x, Out(n), dweight, dbias);
    }
    case ComputeOpKind::kGelu: {
      const F x = Scratch(n);
      return a.backward ? ReferenceGeluBackwardInto<float>(x, x, Out(n))
                        : ReferenceGeluForwardInto<float>(x, Out(n));
    }
    case ComputeOpKind::kSwiGlu: {
      const F x = Scratch(n);
      return a.backward ? ReferenceSwiGluBackwardInto<float>(x, x, x, Out(n), Out(n))
                        : ReferenceSwiGluForwardInto<float>(x, x, Out(n));
    }
    case ComputeOpKind::kAttention:
      return RunAttention(a);
    case ComputeOpKind::kCrossEntropy:
      labels_.resize(r);
      for (size_t i = 0; i < r; ++i) labels_[i] = static_cast<int64_t>((i * 7919) % c);
      return ReferenceCrossEntropyInto<float>({a.rows, a.cols}, Scratch(n), labels_, Out(r), Out(n))
          .status();
    case ComputeOpKind::kEmbedding: {
      const size_t vocab = EmbeddingRows();
      if (!a.backward) {
        const float* table = params_data + a.weight;
        const std::span<float> out = Out(n);
        if (out.empty()) return Status::Unavailable("compute op '" + op.name + "': out of memory");
        for (size_t i = 0; i < r; ++i)
          std::memcpy(out.data() + i * c, table + (i * 7919 % vocab) * c, 4 * c);
        return Status::Ok();
      }
      const F dy = Scratch(n);
      for (size_t i = 0; i < r; ++i) {
        float* row = grads_data + a.weight + (i * 7919 % vocab) * c;
        for (size_t j = 0; j < c; ++j) row[j] += dy[i * c + j];
      }
      return Status::Ok();
    }
    case ComputeOpKind::kAdam: {
      if (a.shard == 0) return Status::Ok();
      if (exp_avg_.bytes() != 4 * a.shard) {
        for (MemoryArena::Buffer* moment : {&exp_avg_, &exp_avg_sq_}) {
          Expected<MemoryArena::Buffer> zeros = Arena().Zeros(4 * a.shard, "AdamW's moments");
          if (!zeros.ok()) return zeros.status();
          *moment = std::move(zeros).value();
        }
      }
      AdamWConfig config;
      config.step = ++optimizer_steps_;
      return ReferenceAdamWStep<float>(config, {params_data + a.weight, a.shard},
                                       exp_avg_.span<float>(), exp_avg_sq_.span<float>(),
                                       F(grads_data + a.weight, a.shard));
    }
  }
  return Status::Internal("compute op '" + op.name + "': unknown kind");
}

}  // namespace gpuplan
