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

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Status BadShape(const RankOp& op, const char* expected) {
  return Status::Invalid("compute op '" + op.name + "': shape '" + op.shape + "' is not " +
                         expected);
}

}  // namespace

MemoryArena::Buffer::Buffer(Buffer&& other) noexcept { *this = std::move(other); }

MemoryArena::Buffer& MemoryArena::Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    if (arena_ != nullptr) arena_->live_bytes_ -= 4.0 * static_cast<double>(size_);
    data_ = std::move(other.data_);
    size_ = std::exchange(other.size_, 0);
    arena_ = std::exchange(other.arena_, nullptr);
  }
  return *this;
}

MemoryArena::Buffer::~Buffer() {
  if (arena_ != nullptr) arena_->live_bytes_ -= 4.0 * static_cast<double>(size_);
}

MemoryArena::Buffer MemoryArena::Allocate(size_t n) {
  Buffer b;
  b.data_.reset(new float[n]);
  b.size_ = n;
  b.arena_ = this;
  live_bytes_ += 4.0 * static_cast<double>(n);
  peak_bytes_ = std::max(peak_bytes_, live_bytes_);
  return b;
}

MemoryArena::Buffer MemoryArena::Zeros(size_t n) {
  Buffer b = Allocate(n);
  std::fill(b.span().begin(), b.span().end(), 0.0f);
  return b;
}

Status CheckCpuExecutable(const JobSpec& job) {
  if (job.training.precision != Precision::kFp32) {
    return Status::Invalid("training.precision: the CPU backend computes in fp32 (got " +
                           std::string(PrecisionName(job.training.precision)) + ")");
  }
  if (job.training.attention != AttentionImpl::kFlash) {
    return Status::Invalid(
        "training.attention: the CPU backend runs the fused attention kernel only (flash)");
  }
  if (job.training.lora.enabled) {
    return Status::Invalid("training.lora: the CPU backend does not run LoRA plans yet");
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
  if (stage < 0 || stage >= job.parallel.pp) {
    return Status::Invalid(StrFormat("stage %lld is not a stage of the plan (0..%lld)",
                                     static_cast<long long>(stage),
                                     static_cast<long long>(job.parallel.pp - 1)));
  }
  std::unique_ptr<CpuCompute> c(new CpuCompute(job, dp_index));
  c->registering_ = true;
  for (const ProgramStep& step : program) {
    for (const RankOp& op : step.ops) {
      if (op.kind == RankOpKind::kCompute) {
        GPUPLAN_RETURN_IF_ERROR(c->RegisterWeights(op, -1));
      } else if (op.kind == RankOpKind::kLayers) {
        for (const LayerOp& inner : ExpandLayers(job, stage, step, op)) {
          if (inner.op.kind == RankOpKind::kCompute) {
            GPUPLAN_RETURN_IF_ERROR(c->RegisterWeights(inner.op, inner.layer));
          }
        }
      }
    }
  }
  c->registering_ = false;
  c->params_ = c->arena_.Allocate(c->next_weight_);
  std::span<float> p = c->params_.span();
  for (size_t i = 0; i < p.size(); ++i) p[i] = 0.02f * PatternValue(i);
  c->grads_ = c->arena_.Zeros(c->next_weight_);
  return c;
}

Expected<size_t> CpuCompute::WeightOffset(int64_t layer, const std::string& key, size_t n) {
  auto it = weights_.find({layer, key});
  if (it == weights_.end()) {
    if (!registering_) {
      return Status::Internal(StrFormat("weight '%s' of layer %lld was not in the rank's program",
                                        key.c_str(), static_cast<long long>(layer)));
    }
    it = weights_.emplace(std::make_pair(layer, key), std::make_pair(next_weight_, n)).first;
    next_weight_ += n;
  } else if (it->second.second != n) {
    return Status::Internal(StrFormat("weight '%s' of layer %lld used with %zu and %zu elements",
                                      key.c_str(), static_cast<long long>(layer), it->second.second,
                                      n));
  }
  return it->second.first;
}

Status CpuCompute::RegisterWeights(const RankOp& op, int64_t layer) {
  if (op.name.rfind("gemm ", 0) == 0) return GemmWeight(op.name, layer, op.shape).status();
  long long rows = 0, cols = 0;
  if (std::sscanf(op.shape.c_str(), "%lld x %lld", &rows, &cols) != 2 || cols < 1) {
    return Status::Ok();
  }
  const size_t c = static_cast<size_t>(cols);
  if (op.name.find("norm_") != std::string::npos) {
    GPUPLAN_RETURN_IF_ERROR(WeightOffset(layer, "norm", c).status());
    if (op.name[0] == 'l') GPUPLAN_RETURN_IF_ERROR(WeightOffset(layer, "norm_bias", c).status());
  } else if (op.name.rfind("embedding_", 0) == 0) {
    GPUPLAN_RETURN_IF_ERROR(WeightOffset(-1, "embedding", EmbeddingRows() * c).status());
  }
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

std::span<float> CpuCompute::Output(size_t n) {
  MemoryArena::Buffer b = arena_.Allocate(n);
  std::span<float> out = b.span();
  (keep_outputs_ ? saved_[saving_for_] : transient_).push_back(std::move(b));
  return out;
}

Expected<CpuCompute::GemmDims> CpuCompute::GemmWeight(const std::string& name, int64_t layer,
                                                      const std::string& shape) {
  long long m = 0, n = 0, k = 0;
  if (std::sscanf(shape.c_str(), "%lld x %lld x %lld", &m, &n, &k) != 3 || m < 1 || n < 1 ||
      k < 1) {
    return Status::Invalid("compute op '" + name + "': shape '" + shape + "' is not 'm x n x k'");
  }
  GemmDims g{m, n, k, EndsWith(name, " dgrad"), EndsWith(name, " wgrad"), 0};
  std::string key = name.substr(5, name.size() - 5 - (g.dgrad || g.wgrad ? 6 : 0));
  // The LM head is the embedding matrix when they are tied (ParamsPerGpu counts it once).
  if (key == "lm_head" && job_.model.tied_embeddings) key = "embedding";
  if (key == "lm_head" || key == "embedding") layer = -1;
  Expected<size_t> offset = WeightOffset(layer, key, static_cast<size_t>(g.wgrad ? m * n : n * k));
  if (!offset.ok()) return offset.status();
  g.offset = *offset;
  return g;
}

Status CpuCompute::Gemm(const std::string& name, int64_t layer, const std::string& shape) {
  Expected<GemmDims> dims = GemmWeight(name, layer, shape);
  if (!dims.ok()) return dims.status();
  const auto [m, n, k, dgrad, wgrad, offset] = *dims;
  if (wgrad) {
    // dW [n x m] (the forward's [in x out]) += X^T [n x k] dY [k x m] over the k rows.
    const F s = Scratch(static_cast<size_t>(k * std::max(m, n)));
    Matrix dw(grads_.span().data() + offset, n, m);
    dw.noalias() += ConstMatrix(s.data(), k, n).transpose() * ConstMatrix(s.data(), k, m);
    return Status::Ok();
  }
  const F a = Scratch(static_cast<size_t>(m * k));
  Matrix c(Output(static_cast<size_t>(m * n)).data(), m, n);
  const float* w = params_.span().data() + offset;
  if (dgrad) {
    c.noalias() = ConstMatrix(a.data(), m, k) * ConstMatrix(w, n, k).transpose();
  } else {
    c.noalias() = ConstMatrix(a.data(), m, k) * ConstMatrix(w, k, n);
  }
  return Status::Ok();
}

Status CpuCompute::RunOnce(const RankOp& op, const OpSite& site) {
  using namespace kernels;
  const std::string& name = op.name;
  if (name.rfind("gemm ", 0) == 0) return Gemm(name, site.layer, op.shape);
  long long rows = 0, cols = 0;
  const bool matrix =
      std::sscanf(op.shape.c_str(), "%lld x %lld", &rows, &cols) == 2 && rows > 0 && cols > 0;
  const size_t n = static_cast<size_t>(rows * cols);
  const size_t r = static_cast<size_t>(rows), c = static_cast<size_t>(cols);
  if (name == "rmsnorm_fwd" || name == "layernorm_fwd" || name == "rmsnorm_bwd" ||
      name == "layernorm_bwd") {
    if (!matrix) return BadShape(op, "'rows x cols'");
    const bool layer_norm = name[0] == 'l';
    const NormKind kind = layer_norm ? NormKind::kLayerNorm : NormKind::kRmsNorm;
    Expected<size_t> w = WeightOffset(site.layer, "norm", c);
    if (!w.ok()) return w.status();
    Expected<size_t> b =
        layer_norm ? WeightOffset(site.layer, "norm_bias", c) : Expected<size_t>(0);
    if (!b.ok()) return b.status();
    const F x = Scratch(n);
    const F weight = params_.span().subspan(*w, c);
    const MatrixShape shape{rows, cols};
    if (EndsWith(name, "_fwd")) {
      const F bias = layer_norm ? F(params_.span().subspan(*b, c)) : F();
      const std::span<float> mean = layer_norm ? Output(r) : std::span<float>();
      return ReferenceNormForwardInto<float>(kind, shape, x, weight, bias, 1e-5, Output(n), mean,
                                             Output(r));
    }
    const F stats = x.first(r);  // mean and rstd from the pattern: any finite values do
    const std::span<float> dbias = layer_norm ? grads_.span().subspan(*b, c) : std::span<float>();
    return ReferenceNormBackwardInto<float>(kind, shape, x, weight, layer_norm ? stats : F(), stats,
                                            x, Output(n), grads_.span().subspan(*w, c), dbias);
  }
  if (name == "gelu_fwd" || name == "gelu_bwd" || name == "swiglu_fwd" || name == "swiglu_bwd") {
    if (!matrix) return BadShape(op, "'rows x cols'");
    const F x = Scratch(n);
    if (name == "gelu_fwd") return ReferenceGeluForwardInto<float>(x, Output(n));
    if (name == "gelu_bwd") return ReferenceGeluBackwardInto<float>(x, x, Output(n));
    if (name == "swiglu_fwd") return ReferenceSwiGluForwardInto<float>(x, x, Output(n));
    return ReferenceSwiGluBackwardInto<float>(x, x, x, Output(n), Output(n));
  }
  if (name == "attention_fwd" || name == "attention_bwd") {
    long long b = 0, s = 0, h = 0, d = 0;
    if (std::sscanf(op.shape.c_str(), "b%lld s%lld h%lld d%lld", &b, &s, &h, &d) != 4) {
      return BadShape(op, "'b<batch> s<seq> h<heads> d<head_dim>'");
    }
    const AttentionShape shape{b, s, h, d};
    GPUPLAN_RETURN_IF_ERROR(CheckShape(shape));
    const size_t e = static_cast<size_t>(shape.Elements());
    const size_t stats = static_cast<size_t>(shape.StatRows());
    const F x = Scratch(e);
    if (name == "attention_fwd") {
      return ReferenceAttentionForwardInto<float>(shape, x, x, x, Output(e), Output(stats));
    }
    return ReferenceAttentionBackwardInto<float>(shape, x, x, x, x, x, x.first(stats), Output(e),
                                                 Output(e), Output(e));
  }
  if (name == "cross_entropy") {
    if (!matrix) return BadShape(op, "'rows x cols'");
    labels_.resize(r);
    for (size_t i = 0; i < r; ++i) labels_[i] = static_cast<int64_t>((i * 7919) % c);
    return ReferenceCrossEntropyInto<float>({rows, cols}, Scratch(n), labels_, Output(r), Output(n))
        .status();
  }
  if (name == "embedding_fwd" || name == "embedding_bwd") {
    if (!matrix) return BadShape(op, "'rows x cols'");
    const size_t vocab = EmbeddingRows();
    Expected<size_t> w = WeightOffset(-1, "embedding", vocab * c);
    if (!w.ok()) return w.status();
    if (name == "embedding_fwd") {
      const float* table = params_.span().data() + *w;
      float* out = Output(n).data();
      for (size_t i = 0; i < r; ++i)
        std::memcpy(out + i * c, table + (i * 7919 % vocab) * c, 4 * c);
      return Status::Ok();
    }
    float* grad = grads_.span().data() + *w;
    const F dy = Scratch(n);
    for (size_t i = 0; i < r; ++i) {
      float* row = grad + (i * 7919 % vocab) * c;
      for (size_t j = 0; j < c; ++j) row[j] += dy[i * c + j];
    }
    return Status::Ok();
  }
  if (name == "adam") {
    long long count = 0;
    if (std::sscanf(op.shape.c_str(), "%lld params", &count) != 1 || count < 0) {
      return BadShape(op, "'<n> params'");
    }
    // The op counts the model's parameters (ParamsPerGpu); the rank holds the weights its
    // program uses, a few (biases, position tables) fewer or none more.
    const size_t shard = std::min(static_cast<size_t>(count), grads_.size());
    if (shard == 0) return Status::Ok();
    if (exp_avg_.size() != shard) {
      exp_avg_ = arena_.Zeros(shard);
      exp_avg_sq_ = arena_.Zeros(shard);
    }
    // The rank's ZeRO shard when the shards tile the gradients, else the first `shard` elements.
    size_t offset = static_cast<size_t>(dp_index_) * shard;
    if (offset + shard > grads_.size()) offset = 0;
    AdamWConfig config;
    config.step = ++optimizer_steps_;
    return ReferenceAdamWStep<float>(config, params_.span().subspan(offset, shard), exp_avg_.span(),
                                     exp_avg_sq_.span(), F(grads_.span().subspan(offset, shard)));
  }
  return Status::Invalid("compute op '" + name + "': not one the CPU backend runs");
}

Status CpuCompute::Run(const RankOp& op, const OpSite& site) {
  const bool forward_pass = site.pass.kind == PassKind::kForward;
  const bool full_recompute = job_.training.recompute == Recompute::kFull;
  saving_for_ = {site.pass.microbatch, site.pass.chunk};
  if (forward_pass && site.layer >= 0 && full_recompute) {
    keep_outputs_ = false;
    if (site.layer != checkpointed_layer_) {  // keep the layer's input for its recomputation
      checkpointed_layer_ = site.layer;
      const bool sp = job_.parallel.sequence_parallel && job_.parallel.tp > 1;
      const int64_t tokens = job_.training.micro_batch_size * job_.training.seq_len /
                             job_.parallel.cp / (sp ? job_.parallel.tp : 1);
      saved_[saving_for_].push_back(
          arena_.Allocate(static_cast<size_t>(tokens * job_.model.hidden_size)));
    }
  } else {
    // Forward outputs, and those of a recomputation inside a backward, wait for the backward.
    keep_outputs_ = forward_pass || (site.layer >= 0 && site.layer_program == PassKind::kForward);
  }
  for (int64_t i = 0; i < op.count; ++i) {
    const Status st = RunOnce(op, site);
    // This op's unkept outputs are the next op's input: they live until it ends (an op with
    // none, a weight-gradient GEMM, leaves the input of the op after it alive).
    if (!transient_.empty()) previous_ = std::move(transient_);
    transient_.clear();
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

void CpuCompute::EndPass(const PipelinePass& pass) {
  previous_.clear();  // the pass's last output has gone to the next stage or the optimizer
  checkpointed_layer_ = -1;
  const bool split = GetScheduleInfo(job_.parallel.schedule).splits_backward;
  if (pass.kind == (split ? PassKind::kWeightGrad : PassKind::kBackward)) {
    saved_.erase({pass.microbatch, pass.chunk});
  }
}

}  // namespace gpuplan
