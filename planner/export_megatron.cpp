// Megatron-LM export: a bash script running torchrun + pretrain_gpt.py. Flag names are those of
// NVIDIA/Megatron-LM megatron/training/arguments.py (docs/EXPORT.md lists the mapping).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/str_format.h"
#include "planner/export_formats.h"
#include "simulator/gemm_time.h"
#include "simulator/shard.h"

namespace gpuplan {
namespace {

constexpr std::string_view kMegatronFormat = "megatron";

// Megatron-FSDP's --data-parallel-sharding-strategy for the plan's ZeRO stage, or empty when
// the plan uses no sharding beyond the distributed optimizer (ZeRO-1).
std::string_view FsdpStrategy(const ParallelSpec& p) {
  if (p.fsdp || p.zero_stage == 3) return "optim_grads_params";
  if (p.zero_stage == 2) return "optim_grads";
  return "";
}

// Megatron's --moe-layer-freq pattern for leading dense layers: "([0]*3+[1]*58)".
std::string MoeLayerPattern(const ModelSpec& m) {
  return "\"([0]*" + std::to_string(m.moe_first_dense_layers) + "+[1]*" +
         std::to_string(m.MoeLayers()) + ")\"";
}

ArgArray ModelArgs(const JobSpec& job, std::vector<std::string>* notes) {
  const ModelSpec& m = job.model;
  ArgArray a;
  AddMegatronShapeArgs(m, &a);
  if (m.num_kv_heads < m.num_attention_heads) {
    a.Flag("--group-query-attention");
    a.Add("--num-query-groups", m.num_kv_heads);
  }
  AddMegatronSequenceAndMlpArgs(job,
                                {"Megatron-LM", "--position-embedding-type learned_absolute",
                                 "--position-embedding-type rope", "RMSNorm"},
                                &a, notes);
  if (!m.HasLinearBiases()) {
    a.Flag("--disable-bias-linear");
    if (m.qkv_bias) a.Flag("--add-qkv-bias");
  }
  AddMegatronEmbeddingAndDropoutArgs(job, &a, notes);
  if (m.is_moe()) {
    a.Add("--num-experts", m.moe_num_experts);
    a.Add("--moe-router-topk", m.moe_top_k);
    a.Add("--moe-ffn-hidden-size", m.ExpertFfn());
    if (m.moe_shared_experts > 0) {
      a.Add("--moe-shared-expert-intermediate-size", m.moe_shared_experts * m.ExpertFfn());
    }
    if (m.moe_first_dense_layers > 0) a.Add("--moe-layer-freq", MoeLayerPattern(m));
    if (m.moe_router_groups > 0) {
      a.Add("--moe-router-num-groups", m.moe_router_groups);
      a.Add("--moe-router-group-topk", m.moe_router_group_topk);
    }
    // The experts as the cost model times them: a rank's local experts as grouped GEMMs
    // (Transformer Engine's GroupedLinear, one kernel per expert on several streams; without the
    // flag Megatron-Core loops over them in Python, SequentialMLP) and the token permutation as
    // fused kernels. Dropless FP8 with several local experts pads each expert's rows to FP8's
    // multiple in the router instead of in every GEMM (arguments.py suggests it).
    a.Flag("--moe-grouped-gemm");
    a.Flag("--moe-permute-fusion");
    if (job.training.precision == Precision::kFp8 && m.moe_num_experts > job.parallel.ep) {
      a.Flag("--moe-router-padding-for-fp8");
    }
  }
  if (m.attention_window > 0) {
    // Transformer Engine's window (left, right): query i attends keys i - left .. i + right, so
    // a causal window of w keys is (w - 1, 0).
    a.Add("--window-size", std::to_string(m.attention_window - 1) + ",0");
    const int64_t full = m.num_layers - m.local_attention_layers;
    if (full > 0 && m.num_layers % full == 0) {
      // N: one full-attention layer after N - 1 window layers (Gemma 2: 2, Gemma 3: 6).
      a.Add("--window-attn-skip-freq", m.num_layers / full);
      notes->push_back("local attention: one full-attention layer after every " +
                       std::to_string(m.num_layers / full - 1) +
                       " window layers (--window-attn-skip-freq); the plan knows only the "
                       "count, " +
                       std::to_string(full) + " of " + std::to_string(m.num_layers) +
                       ", so check the model's own order");
    } else if (full > 0) {
      notes->push_back("local attention: " + std::to_string(full) + " of " +
                       std::to_string(m.num_layers) +
                       " layers attend fully; give their pattern with --window-attn-skip-freq "
                       "'([1]*k+[0]*...)', or every layer runs the window");
    }
  }
  return a;
}

ArgArray ParallelArgs(const JobSpec& job, std::vector<std::string>* notes) {
  const ParallelSpec& p = job.parallel;
  ArgArray a;
  a.Add("--tensor-model-parallel-size", p.tp);
  if (p.sequence_parallel && p.tp > 1) a.Flag("--sequence-parallel");
  if (p.tp_overlap && p.tp > 1) a.Flag("--tp-comm-overlap");
  if (p.tp > 1 && !p.tp_overlap && p.tp_backward_overlap == std::optional<bool>(false)) {
    // Megatron-Core always runs the column-parallel backward collectives asynchronously; the
    // --no-async-tensor-model-parallel-allreduce of older Megatron-LM no longer exists.
    notes->push_back(
        "tp_backward_overlap false: Megatron-Core always overlaps the column-parallel layers' "
        "backward TP collectives with their GEMMs (older Megatron-LM: "
        "--no-async-tensor-model-parallel-allreduce); the script runs them overlapped");
  }
  a.Add("--pipeline-model-parallel-size", p.pp);
  const bool uneven = p.first_stage_layers > 0 || p.last_stage_layers > 0;
  if (p.first_stage_layers > 0) a.Add("--decoder-first-pipeline-num-layers", p.first_stage_layers);
  if (p.last_stage_layers > 0) a.Add("--decoder-last-pipeline-num-layers", p.last_stage_layers);
  // A pipeline slot for the input embedding or the loss counts as one layer in the split.
  if (p.embedding_slot) a.Flag("--account-for-embedding-in-pipeline-split");
  if (p.loss_slot) a.Flag("--account-for-loss-in-pipeline-split");
  if (p.vpp > 1 && uneven) {
    // arguments.py: uneven pipelines take the virtual stages per rank, not layers per stage.
    a.Add("--num-virtual-stages-per-pipeline-rank", p.vpp);
  } else if (p.vpp > 1) {
    a.Add("--num-layers-per-virtual-pipeline-stage", job.model.num_layers / (p.pp * p.vpp));
  } else if (p.pp > 1 && p.schedule == Schedule::kGpipe) {
    notes->push_back(
        "schedule: the plan assumes GPipe; Megatron-LM runs 1F1B, which keeps fewer "
        "micro-batches in flight (less memory than predicted, same bubble)");
  }
  if (p.cp > 1) {
    a.Add("--context-parallel-size", p.cp);
    a.Add("--cp-comm-type", "p2p");
  }
  if (p.ep > 1) {
    a.Add("--expert-model-parallel-size", p.ep);
    if (job.training.moe_dispatcher == MoeDispatcher::kDeepEp) {
      a.Add("--moe-token-dispatcher-type", "flex");
      a.Add("--moe-flex-dispatcher-backend", "deepep");
    } else {
      a.Add("--moe-token-dispatcher-type", "alltoall");
    }
    if (p.ep_overlap) {
      a.Flag("--overlap-moe-expert-parallel-comm");
      a.Flag("--delay-wgrad-compute");
    }
  }
  // Megatron's default expert TP is --tensor-model-parallel-size.
  if (p.ExpertTp() != p.tp) a.Add("--expert-tensor-parallel-size", p.ExpertTp());
  const std::string_view fsdp = FsdpStrategy(p);
  if (!fsdp.empty()) {
    a.Flag("--use-megatron-fsdp");
    a.Add("--data-parallel-sharding-strategy", fsdp);
    if (p.dp_replicate > 1) {
      // HSDP: shard inside each of dp_replicate groups, replicate across them.
      a.Add("--num-distributed-optimizer-instances", p.dp_replicate);
      a.Add("--outer-dp-sharding-strategy", "no_shard");
    }
    a.Add("--ckpt-format", "fsdp_dtensor");  // the only format Megatron-FSDP accepts
  } else if (p.zero_stage == 1) {
    a.Flag("--use-distributed-optimizer");
  }
  if (p.dp_overlap && p.dp > 1) {
    a.Flag("--overlap-grad-reduce");
    if (p.zero_stage >= 1) a.Flag("--overlap-param-gather");
  }
  if (p.cpu_offload) {
    a.Flag("--optimizer-cpu-offload");
    a.Flag("--use-precision-aware-optimizer");  // required by --optimizer-cpu-offload
    if (!fsdp.empty()) {
      notes->push_back(
          "optimizer CPU offload together with Megatron-FSDP is not documented by "
          "Megatron-LM; verify on a short run");
    }
  }
  return a;
}

ArgArray TrainingArgs(const Plan& plan, std::vector<std::string>* notes) {
  const TrainingSpec& t = plan.job.training;
  ArgArray a;
  AddMegatronBatchArgs(plan, &a);
  switch (t.precision) {
    case Precision::kBf16:
      a.Flag("--bf16");
      break;
    case Precision::kFp16:
      a.Flag("--fp16");
      break;
    case Precision::kFp8:
      a.Flag("--bf16");
      a.Add("--fp8-format", "hybrid");
      break;
    case Precision::kFp4: {
      // Megatron-Core's NVFP4 recipe with the share of layers the plan assumed in bf16
      // (kFp4Bf16LayerFraction), kept at the end of the model.
      const int64_t layers = plan.job.model.num_layers;
      const int64_t bf16_layers =
          std::max<int64_t>(1, std::llround(kFp4Bf16LayerFraction * static_cast<double>(layers)));
      a.Flag("--bf16");
      a.Add("--fp4-format", "e2m1");
      a.Add("--fp4-recipe", "nvfp4");
      a.Flag("--first-last-layers-bf16");
      a.Add("--num-layers-at-start-in-bf16", 0);
      a.Add("--num-layers-at-end-in-bf16", std::min(bf16_layers, layers));
      break;
    }
    case Precision::kFp32:
    case Precision::kTf32:
    case Precision::kCount:
      notes->push_back("precision " + std::string(PrecisionName(t.precision)) +
                       ": Megatron-LM trains in fp32 without a precision flag");
      break;
  }
  if (t.grad_reduce_bf16) a.Flag("--grad-reduce-in-bf16");
  if (t.fp8_param_gather) a.Flag("--fp8-param-gather");
  if (t.activation_offload_layers > 0) {
    a.Flag("--cpu-offloading");
    a.Add("--cpu-offloading-num-layers", t.activation_offload_layers);
  }
  AddMegatronRecomputeArgs(t, &a);
  // FlashAttention kernels need 16-bit inputs: in fp32 Transformer Engine picks the backend.
  const bool half = t.precision != Precision::kFp32 && t.precision != Precision::kTf32;
  a.Add("--attention-backend",
        t.attention == AttentionImpl::kUnfused ? "unfused" : (half ? "flash" : "auto"));
  return a;
}

}  // namespace

Status CheckMegatronExpressible(const JobSpec& job) {
  const ParallelSpec& p = job.parallel;
  if (job.training.lora.enabled) {
    return Refuse(kMegatronFormat,
                  "the plan trains LoRA adapters; Megatron-LM's pretrain_gpt.py has no LoRA "
                  "option (PEFT lives in NeMo / Megatron-Bridge); export 'accelerate' and apply "
                  "the adapters with Hugging Face PEFT instead");
  }
  if (!p.stage_layers.empty()) {
    return Refuse(kMegatronFormat,
                  "the plan places " + StageLayersText(job) +
                      " layers on its pipeline stages (the training stack's own "
                      "split); Megatron-LM splits evenly or takes "
                      "--decoder-first/last-pipeline-num-layers; plan with framework "
                      "megatron-core for a layout it runs");
  }
  if (p.cp > 1 && job.training.seq_len % (2 * p.cp) != 0) {
    return Refuse(kMegatronFormat,
                  "seq_len " + std::to_string(job.training.seq_len) +
                      " is not a multiple of 2 x cp = " + std::to_string(2 * p.cp) +
                      ", which Megatron-LM requires for context parallelism");
  }
  // megatron/training/arguments.py validate_args: "Expert parallelism is not supported with fp16
  // training."
  if (p.ep > 1 && job.training.precision == Precision::kFp16) {
    return Refuse(kMegatronFormat,
                  "fp16 with ep " + std::to_string(p.ep) +
                      ": Megatron-LM asserts that expert parallelism is not supported with fp16 "
                      "training; plan in bf16 (--precision bf16)");
  }
  if (p.pp > 1 && p.schedule == Schedule::kZeroBubbleH1) {
    return Refuse(kMegatronFormat,
                  "schedule zb-h1: pretrain_gpt.py runs 1F1B or the interleaved schedule, no "
                  "zero-bubble schedule, so the run would have a larger bubble than planned; "
                  "plan with schedule 1f1b or interleaved");
  }
  if (job.model.attention_chunked) {
    return Refuse(kMegatronFormat,
                  "chunked attention of " + std::to_string(job.model.attention_window) +
                      " tokens: pretrain_gpt.py's flags set sliding windows (--window-size), not "
                      "chunks, so the run would attend differently from the plan");
  }
  return Status::Ok();
}

Expected<std::string> WriteMegatron(const Plan& plan, Launcher launcher) {
  const JobSpec& job = plan.job;
  GPUPLAN_RETURN_IF_ERROR(CheckMegatronExpressible(job));
  PretrainGptScript script;
  script.tool = "Megatron-LM";
  script.flags_source = "Megatron-LM pretrain_gpt.py; flags as in megatron/training/arguments.py.";
  script.model = ModelArgs(job, &script.notes);
  script.parallel = ParallelArgs(job, &script.notes);
  script.training = TrainingArgs(plan, &script.notes);
  const ParallelSpec& p = job.parallel;
  if ((p.tp > 1 || p.cp > 1) && FsdpStrategy(p).empty()) {
    script.setup =
        "# Megatron-LM requires this with tensor or context parallelism (before Blackwell).\n"
        "export CUDA_DEVICE_MAX_CONNECTIONS=1\n\n";
  }
  script.data =
      "# Not chosen by the plan. Default: Megatron's mock data with the plan's vocabulary (enough\n"
      "# to measure step time); set DATA_ARGS for real data and a tokenizer.\n"
      "DATA_ARGS=${DATA_ARGS:-\"--mock-data --tokenizer-type NullTokenizer --vocab-size " +
      std::to_string(job.model.vocab_size) + "\"}\n";
  return PretrainGptScriptText(plan, script, launcher);
}

}  // namespace gpuplan
