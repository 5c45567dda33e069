#include "validator/rank_compute.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/str_format.h"
#include "simulator/pipeline_schedule.h"
#include "validator/rank_program.h"

namespace gpuplan {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

class Host : public BufferAllocator {
 public:
  Expected<void*> Allocate(size_t bytes, std::string_view what) override {
    void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (p == nullptr) {
      return Status::Unavailable(StrFormat("cannot allocate %zu bytes of host memory for %s", bytes,
                                           std::string(what).c_str()));
    }
    return p;
  }
  void Free(void* data) override { std::free(data); }
  Status Zero(void* data, size_t bytes) override {
    std::memset(data, 0, bytes);
    return Status::Ok();
  }
};

constexpr size_t kWeightAlignment = 64;

Status BadShape(const RankOp& op, const char* expected) {
  return Status::Invalid("compute op '" + op.name + "': shape '" + op.shape + "' is not " +
                         expected);
}

}  // namespace

std::unique_ptr<BufferAllocator> HostAllocator() { return std::make_unique<Host>(); }

MemoryArena::Buffer::Buffer(Buffer&& other) noexcept { *this = std::move(other); }

MemoryArena::Buffer& MemoryArena::Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    if (arena_ != nullptr) arena_->Release(*this);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    arena_ = std::exchange(other.arena_, nullptr);
  }
  return *this;
}

MemoryArena::Buffer::~Buffer() {
  if (arena_ != nullptr) arena_->Release(*this);
}

void MemoryArena::Release(Buffer& b) {
  live_bytes_ -= static_cast<double>(b.bytes_);
  allocator_->Free(b.data_);
  b.data_ = nullptr;
  b.bytes_ = 0;
  b.arena_ = nullptr;
}

Expected<MemoryArena::Buffer> MemoryArena::Allocate(size_t bytes, std::string_view what) {
  Buffer b;
  if (bytes == 0) return b;
  Expected<void*> data = allocator_->Allocate(bytes, what);
  if (!data.ok()) return data.status();
  b.data_ = *data;
  b.bytes_ = bytes;
  b.arena_ = this;
  live_bytes_ += static_cast<double>(bytes);
  peak_bytes_ = std::max(peak_bytes_, live_bytes_);
  return b;
}

Expected<MemoryArena::Buffer> MemoryArena::Zeros(size_t bytes, std::string_view what) {
  Expected<Buffer> b = Allocate(bytes, what);
  if (!b.ok() || bytes == 0) return b;
  GPUPLAN_RETURN_IF_ERROR(allocator_->Zero(b->data(), bytes));
  return b;
}

Status CheckBackendSupports(const JobSpec& job, std::string_view backend) {
  const std::string name(backend);
  if (job.training.attention != AttentionImpl::kFlash) {
    return Status::Invalid("training.attention: the " + name +
                           " backend runs the fused attention kernel only (flash)");
  }
  const LoraSpec& lora = job.training.lora;
  if (lora.enabled && (lora.base == BaseWeights::kFp8 || lora.base == BaseWeights::kNf4)) {
    return Status::Invalid("training.lora.base: the " + name +
                           " backend keeps the frozen base at the training precision; a base "
                           "stored in fp8 or nf4 (converted before each GEMM) is not run yet");
  }
  if (job.model.attention_window > 0 && job.training.seq_len > job.model.attention_window) {
    return Status::Invalid(
        "model.attention_window: the " + name +
        " backend's attention kernel attends over the "
        "whole causal sequence; local attention of " +
        std::to_string(job.model.attention_window) + " tokens at seq_len " +
        std::to_string(job.training.seq_len) +
        " is not run yet (drop attention_window to validate the full-attention equivalent)");
  }
  if (job.training.activation_offload_layers > 0) {
    return Status::Invalid("training.activation_offload_layers: the " + name +
                           " backend keeps every layer's activations on its device (no "
                           "offload yet)");
  }
  return Status::Ok();
}

Status CheckGpuExecutable(const JobSpec& job) {
  const Precision p = job.training.precision;
  if (p != Precision::kBf16 && p != Precision::kFp16) {
    return Status::Invalid(
        "training.precision: the GPU backend executes bf16 and fp16 plans (got " +
        std::string(PrecisionName(p)) + ")");
  }
  GPUPLAN_RETURN_IF_ERROR(CheckBackendSupports(job, "GPU"));
  if (job.parallel.cpu_offload) {
    return Status::Invalid("parallelism.cpu_offload: the GPU backend does not offload yet");
  }
  return Status::Ok();
}

Status RankCompute::Init(const std::vector<ProgramStep>& program, int64_t stage) {
  if (stage < 0 || stage >= job_.parallel.pp) {
    return Status::Invalid(StrFormat("stage %lld is not a stage of the plan (0..%lld)",
                                     static_cast<long long>(stage),
                                     static_cast<long long>(job_.parallel.pp - 1)));
  }
  // The trainable weights first, so that the gradients cover a prefix of the parameters.
  for (Registering pass : {Registering::kTrainable, Registering::kFrozen}) {
    registering_ = pass;
    for (const ProgramStep& step : program) {
      for (const RankOp& op : step.ops) {
        if (op.kind == RankOpKind::kCompute) {
          GPUPLAN_RETURN_IF_ERROR(RegisterWeights(op, -1));
        } else if (op.kind == RankOpKind::kLayers) {
          for (const LayerOp& inner : ExpandLayers(job_, stage, step, op)) {
            if (inner.op.kind == RankOpKind::kCompute) {
              GPUPLAN_RETURN_IF_ERROR(RegisterWeights(inner.op, inner.layer));
            }
          }
        }
      }
    }
    if (pass == Registering::kTrainable) trainable_ = next_weight_;
  }
  registering_ = Registering::kNo;
  Expected<MemoryArena::Buffer> params =
      arena_.Allocate(next_weight_ * bytes_.param, "the rank's parameters");
  if (!params.ok()) return params.status();
  params_ = std::move(params).value();
  GPUPLAN_RETURN_IF_ERROR(InitParameters());
  Expected<MemoryArena::Buffer> grads =
      arena_.Zeros(trainable_ * bytes_.grad, "the rank's gradients");
  if (!grads.ok()) return grads.status();
  grads_ = std::move(grads).value();
  return Synchronize();
}

bool RankCompute::Trainable(const std::string& key) const {
  return !job_.training.lora.enabled || EndsWith(key, " lora_a") || EndsWith(key, " lora_b");
}

Expected<size_t> RankCompute::WeightOffset(int64_t layer, const std::string& key, size_t n) {
  auto it = weights_.find({layer, key});
  if (it == weights_.end()) {
    if (registering_ != Registering::kNo &&
        Trainable(key) != (registering_ == Registering::kTrainable)) {
      return size_t{0};  // the other pass registers it
    }
    if (registering_ == Registering::kNo) {
      return Status::Internal(StrFormat("weight '%s' of layer %lld was not in the rank's program",
                                        key.c_str(), static_cast<long long>(layer)));
    }
    it = weights_.emplace(std::make_pair(layer, key), std::make_pair(next_weight_, n)).first;
    // Slices start at multiples of kWeightAlignment elements, as a framework's allocator aligns
    // each tensor (cuBLASLt and the vectorised kernels want 16-byte aligned operands).
    next_weight_ += (n + kWeightAlignment - 1) / kWeightAlignment * kWeightAlignment;
  } else if (it->second.second != n) {
    return Status::Internal(StrFormat("weight '%s' of layer %lld used with %zu and %zu elements",
                                      key.c_str(), static_cast<long long>(layer), it->second.second,
                                      n));
  }
  return it->second.first;
}

Status RankCompute::RegisterWeights(const RankOp& op, int64_t layer) {
  const Expected<ComputeOpArgs> args = Parse(op, layer);
  // Only the weights matter here: a bad shape or name is reported when the op runs.
  (void)args;
  return Status::Ok();
}

Expected<void*> RankCompute::Temporary(size_t bytes) {
  Expected<MemoryArena::Buffer> b = arena_.Allocate(
      bytes, running_ == nullptr ? "an op's scratch" : "scratch of op '" + running_->name + "'");
  if (!b.ok()) return b.status();
  temporaries_.push_back(std::move(b).value());
  return temporaries_.back().data();
}

Expected<void*> RankCompute::Output(size_t bytes) {
  Expected<MemoryArena::Buffer> b = arena_.Allocate(
      bytes, running_ == nullptr ? "an op's output" : "an output of op '" + running_->name + "'");
  if (!b.ok()) return b.status();
  void* out = b->data();
  (keep_in_ != nullptr ? *keep_in_ : transient_).push_back(std::move(b).value());
  return out;
}

Status RankCompute::ParseGemm(const RankOp& op, const std::string& name, int64_t layer,
                              ComputeOpArgs* args) {
  long long m = 0, n = 0, k = 0;
  if (std::sscanf(op.shape.c_str(), "%lld x %lld x %lld", &m, &n, &k) != 3 || m < 1 || n < 1 ||
      k < 1) {
    return BadShape(op, "'m x n x k'");
  }
  ComputeOpArgs::Gemm& g = args->gemm;
  g = {m, n, k, EndsWith(name, " dgrad"), EndsWith(name, " wgrad")};
  std::string key = name.substr(5, name.size() - 5 - (g.dgrad || g.wgrad ? 6 : 0));
  // The LM head is the embedding matrix when they are tied (ParamsPerGpu counts it once).
  if (key == "lm_head" && job_.model.tied_embeddings) key = "embedding";
  if (g.wgrad && !Trainable(key)) {
    return Status::Internal("compute op '" + op.name + "': a weight gradient of frozen weight '" +
                            key + "'");
  }
  if (key == "lm_head" || key == "embedding") layer = -1;
  Expected<size_t> offset = WeightOffset(layer, key, static_cast<size_t>(g.wgrad ? m * n : n * k));
  if (!offset.ok()) return offset.status();
  args->weight = *offset;
  return Status::Ok();
}

Expected<ComputeOpArgs> RankCompute::Parse(const RankOp& op, int64_t layer) {
  // A re-run of a forward op runs as that op.
  const std::string name = op.recompute == RecomputeRole::kRerun && EndsWith(op.name, kRerunSuffix)
                               ? op.name.substr(0, op.name.size() - kRerunSuffix.size())
                               : op.name;
  ComputeOpArgs args;
  if (name.rfind("gemm ", 0) == 0) {
    GPUPLAN_RETURN_IF_ERROR(ParseGemm(op, name, layer, &args));
    return args;
  }
  args.backward = EndsWith(name, "_bwd");
  long long rows = 0, cols = 0;
  const bool matrix =
      std::sscanf(op.shape.c_str(), "%lld x %lld", &rows, &cols) == 2 && rows > 0 && cols > 0;
  args.rows = rows;
  args.cols = cols;
  const size_t c = static_cast<size_t>(cols);
  const std::string base =
      name.substr(0, name.size() - (args.backward || EndsWith(name, "_fwd") ? 4 : 0));
  static constexpr struct {
    std::string_view name;
    ComputeOpKind kind;
  } kMatrixOps[] = {
      {"rmsnorm", ComputeOpKind::kNorm},        {"layernorm", ComputeOpKind::kNorm},
      {"gelu", ComputeOpKind::kGelu},           {"swiglu", ComputeOpKind::kSwiGlu},
      {"embedding", ComputeOpKind::kEmbedding}, {"cross_entropy", ComputeOpKind::kCrossEntropy}};
  for (const auto& m : kMatrixOps) {
    if (base != m.name) continue;
    if (!matrix) return BadShape(op, "'rows x cols'");
    args.kind = m.kind;
    if (m.kind == ComputeOpKind::kNorm) {
      const bool layer_norm = name[0] == 'l';
      args.norm = layer_norm ? kernels::NormKind::kLayerNorm : kernels::NormKind::kRmsNorm;
      args.frozen = !Trainable("norm");
      Expected<size_t> w = WeightOffset(layer, "norm", c);
      if (!w.ok()) return w.status();
      args.weight = *w;
      if (layer_norm) {
        Expected<size_t> b = WeightOffset(layer, "norm_bias", c);
        if (!b.ok()) return b.status();
        args.bias = *b;
      }
    } else if (m.kind == ComputeOpKind::kEmbedding) {
      Expected<size_t> w = WeightOffset(-1, "embedding", EmbeddingRows() * c);
      if (!w.ok()) return w.status();
      args.weight = *w;
      args.frozen = !Trainable("embedding");
      if (args.backward && args.frozen) {
        return Status::Internal("compute op '" + name + "': a gradient of the frozen embedding");
      }
    }
    return args;
  }
  if (base == "attention") {
    long long b = 0, s = 0, h = 0, d = 0, ring = 1;
    int used = 0;
    const std::string& shape = op.shape;
    bool ok = std::sscanf(shape.c_str(), "b%lld s%lld h%lld d%lld%n", &b, &s, &h, &d, &used) == 4;
    if (ok && static_cast<size_t>(used) < shape.size()) {
      int more = 0;
      ok = std::sscanf(shape.c_str() + used, " ring%lld%n", &ring, &more) == 1 && ring >= 2 &&
           static_cast<size_t>(used + more) == shape.size();
    }
    if (!ok) return BadShape(op, "'b<batch> s<seq> h<heads> d<head_dim>[ ring<n>]'");
    args.kind = ComputeOpKind::kAttention;
    args.attention = kernels::AttentionShape{b, s, h, d};
    args.ring = ring;
    args.checkpointed = op.recompute == RecomputeRole::kCheckpoint;
    GPUPLAN_RETURN_IF_ERROR(kernels::CheckShape(args.attention));
    return args;
  }
  if (name == "adam") {
    long long count = 0;
    if (std::sscanf(op.shape.c_str(), "%lld params", &count) != 1 || count < 0) {
      return BadShape(op, "'<n> params'");
    }
    args.kind = ComputeOpKind::kAdam;
    // The op counts the model's trainable parameters (ParamsPerGpu); the rank holds the weights
    // its program uses, a few (biases, position tables) fewer or none more, and under LoRA with
    // tp > 1 a few more (the adapters' A of column-parallel linears whole on every TP rank). Its
    // ZeRO shard when the shards tile the trainable parameters, else their first `shard`.
    args.shard = std::min(static_cast<size_t>(count), trainable_);
    args.weight = static_cast<size_t>(dp_index_) * args.shard;
    if (args.weight + args.shard > trainable_) args.weight = 0;
    return args;
  }
  return Status::Invalid("compute op '" + name + "': not one the validator's backends run");
}

Status RankCompute::Run(const RankOp& op, const OpSite& site) {
  const bool forward_pass = site.pass.kind == PassKind::kForward;
  const bool full_recompute = job_.training.recompute == Recompute::kFull;
  saving_for_ = {site.pass.microbatch, site.pass.chunk};
  if (site.layer != rerun_layer_) {  // a layer's re-run outputs live until its backward ends
    rerun_.clear();
    rerun_layer_ = site.layer;
  }
  // A re-run op, or a layer's forward run again inside a backward pass (full recompute).
  if (op.recompute == RecomputeRole::kRerun ||
      (!forward_pass && site.layer >= 0 && site.layer_program == PassKind::kForward)) {
    keep_in_ = &rerun_;
  } else if (forward_pass && (op.recompute == RecomputeRole::kDiscard || !op.saved_for_backward)) {
    keep_in_ = nullptr;  // read by the next op, then freed
  } else if (forward_pass && site.layer >= 0 && full_recompute) {
    keep_in_ = nullptr;
    if (site.layer != checkpointed_layer_) {  // keep the layer's input for its recomputation
      checkpointed_layer_ = site.layer;
      const bool sp = job_.parallel.sequence_parallel && job_.parallel.tp > 1;
      const int64_t tokens = job_.training.micro_batch_size * job_.training.seq_len /
                             job_.parallel.cp / (sp ? job_.parallel.tp : 1);
      Expected<MemoryArena::Buffer> input =
          arena_.Allocate(static_cast<size_t>(tokens * job_.model.hidden_size) * bytes_.activation,
                          "a layer's input kept for its recomputation");
      if (!input.ok()) return input.status();
      saved_[saving_for_].push_back(std::move(input).value());
    }
  } else if (forward_pass && site.layer < 0 && past_layers_) {
    keep_in_ = &saved_head_[saving_for_];  // read by the LM head's backward
  } else {
    // Forward outputs wait for the backward; a layer's for its weight-gradient pass if split.
    keep_in_ = !forward_pass                        ? nullptr
               : split_backward_ && site.layer >= 0 ? &saved_for_w_[saving_for_]
                                                    : &saved_[saving_for_];
  }
  if (site.layer >= 0) {
    past_layers_ = true;
    // The LM head's backward has run: the loss's gradient and the head's input are read.
    if (!forward_pass) saved_head_.erase(saving_for_);
  }
  running_ = &op;
  Status st = Status::Ok();
  for (int64_t i = 0; i < op.count && st.ok(); ++i) {
    st = RunOnce(op, site);
    // This op's unkept outputs are the next op's input: they live until it ends (an op with
    // none, a weight-gradient GEMM, leaves the input of the op after it alive).
    if (!transient_.empty()) previous_ = std::move(transient_);
    transient_.clear();
  }
  running_ = nullptr;
  if (st.ok()) st = Synchronize();
  temporaries_.clear();
  return st;
}

void RankCompute::EndPass(const PipelinePass& pass) {
  previous_.clear();  // the pass's last output has gone to the next stage or the optimizer
  past_layers_ = false;
  rerun_.clear();
  rerun_layer_ = -1;
  checkpointed_layer_ = -1;
  if (pass.kind == PassKind::kBackward) {
    saved_.erase({pass.microbatch, pass.chunk});
    saved_head_.erase({pass.microbatch, pass.chunk});
  }
  if (pass.kind == PassKind::kWeightGrad) saved_for_w_.erase({pass.microbatch, pass.chunk});
}

}  // namespace gpuplan
