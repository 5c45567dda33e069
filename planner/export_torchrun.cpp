// torchrun-fsdp export: a torchrun command launching torchtitan with the --section.option
// overrides of pytorch/torchtitan torchtitan/config/job_config.py (docs/EXPORT.md).
#include <string>
#include <vector>

#include "common/str_format.h"
#include "planner/export_formats.h"

namespace gpuplan {
namespace {

constexpr std::string_view kTorchrunFormat = "torchrun-fsdp";

// torchtitan's built-in model flavors (torchtitan/models/llama3/__init__.py, llama3_configs),
// matched on the plan's model dimensions.
struct TitanFlavor {
  std::string_view name, flavor;
  int64_t layers, hidden, heads, kv_heads, ffn, vocab;
};
constexpr TitanFlavor kFlavors[] = {
    {"llama3", "8B", 32, 4096, 32, 8, 14336, 128256},
    {"llama3", "70B", 80, 8192, 64, 8, 28672, 128256},
    {"llama3", "405B", 126, 16384, 128, 8, 53248, 128256},
};

const TitanFlavor* FindFlavor(const ModelSpec& m) {
  for (const TitanFlavor& f : kFlavors) {
    if (m.num_layers == f.layers && m.hidden_size == f.hidden && m.num_attention_heads == f.heads &&
        m.num_kv_heads == f.kv_heads && m.ffn_hidden_size == f.ffn && m.vocab_size == f.vocab &&
        !m.is_moe()) {
      return &f;
    }
  }
  return nullptr;
}

// torchtitan counts the embedding and the output layer as one layer each when it splits
// pipeline_parallel_layers_per_stage (pipeline_parallel.py: ceil((layers + 2) / per_stage)
// stages). Returns the per-stage count giving pp x vpp stages, or 0 when none does.
int64_t LayersPerStage(const JobSpec& job) {
  const int64_t stages = job.parallel.pp * job.parallel.vpp;
  const int64_t units = job.model.num_layers + 2;
  const int64_t per_stage = (units + stages - 1) / stages;
  return (units + per_stage - 1) / per_stage == stages ? per_stage : 0;
}

}  // namespace

Status CheckTorchrunExpressible(const JobSpec& job) {
  const ParallelSpec& p = job.parallel;
  if (job.training.lora.enabled) {
    return Refuse(kTorchrunFormat,
                  "the plan trains LoRA adapters; torchtitan's --section.option overrides have "
                  "no LoRA option; export 'accelerate' and apply the adapters with Hugging Face "
                  "PEFT instead");
  }
  if (job.training.precision == Precision::kFp16) {
    return Refuse(kTorchrunFormat,
                  "fp16: torchtitan's training.mixed_precision_param accepts bfloat16 or "
                  "float32 only; export 'megatron' or 'deepspeed' instead");
  }
  if (job.training.precision == Precision::kFp4) {
    return Refuse(kTorchrunFormat,
                  "fp4: torchtitan's model converters offer float8 and MX formats, not "
                  "Transformer Engine's NVFP4 recipe the plan assumes; export 'megatron' "
                  "instead");
  }
  if (p.ep_overlap) {
    return Refuse(kTorchrunFormat,
                  "ep_overlap: torchtitan runs each micro-batch's forward and backward on their "
                  "own (no combined 1F1B schedule); export 'megatron' instead");
  }
  const int64_t etp = p.ExpertTp();
  if (job.model.is_moe() && p.tp > 1 && etp != 1 && etp != p.tp) {
    return Refuse(kTorchrunFormat,
                  "etp " + std::to_string(etp) +
                      ": torchtitan runs expert tensor parallelism of 1 or tp only "
                      "(parallel_dims.py); export 'megatron' instead");
  }
  // torchtitan's EP borrows all CP ranks and some FSDP ranks, and with etp = 1 all TP ranks too
  // (parallel_dims.py).
  const int64_t shard = p.ShardsModelState() ? p.dp : 1;
  const int64_t borrowed = p.cp * (etp == 1 ? p.tp : 1);
  if (p.ep > 1 && (p.ep % borrowed != 0 || (shard * borrowed) % p.ep != 0)) {
    return Refuse(kTorchrunFormat,
                  "ep " + std::to_string(p.ep) +
                      ": torchtitan borrows expert-parallel ranks from the FSDP and "
                      "context-parallel ranks (and the TP ranks when etp = 1) and "
                      "needs ep to be a multiple of cp" +
                      std::string(etp == 1 ? " x tp" : "") + " dividing dp_shard x cp" +
                      std::string(etp == 1 ? " x tp" : "") + " (here dp_shard " +
                      std::to_string(shard) + ", cp " + std::to_string(p.cp) + ", tp " +
                      std::to_string(p.tp) + ")");
  }
  if (p.tp > 1 && p.tp_overlap) {
    return Refuse(kTorchrunFormat,
                  "tp_overlap: torchtitan's async tensor parallelism needs torch.compile "
                  "(maybe_enable_async_tp raises without --compile.enable), and this export "
                  "launches eager torchtitan, the stack the plan was timed for; plan without "
                  "the overlap, or export 'megatron' instead");
  }
  const bool sharded = p.ShardsModelState();
  if (!sharded && p.dp > 1 && (p.tp > 1 || p.pp > 1 || p.cp > 1)) {
    return Refuse(kTorchrunFormat,
                  "zero 0 with tp, pp or cp: torchtitan's DDP raises \"DDP has not supported > "
                  "1D parallelism\" (parallelize.py); plan with zero >= 1 (FSDP2)");
  }
  if (p.cpu_offload && (sharded ? p.DpShard() : 1) == 1 && p.cp == 1) {
    return Refuse(kTorchrunFormat,
                  "cpu offload without sharding: torchtitan applies FSDP2's offload policy "
                  "only to a sharded model (data_parallel_shard_degree or cp > 1), so the "
                  "optimizer state would stay on the GPU; export 'megatron' instead");
  }
  if (p.pp > 1 && p.schedule == Schedule::kZeroBubbleH1) {
    return Refuse(kTorchrunFormat,
                  "schedule zb-h1: torchtitan's zero-bubble schedules (InterleavedZeroBubble, "
                  "ZBVZeroBubble) run several stages per rank, not ZB-H1's one; plan with "
                  "schedule 1f1b or interleaved");
  }
  if (p.first_stage_layers > 0 || p.last_stage_layers > 0 || !p.stage_layers.empty()) {
    return Refuse(kTorchrunFormat,
                  "the plan's pipeline is uneven (first/last_stage_layers or stage_layers); "
                  "torchtitan splits the layers by its own rule (pipeline_parallel_layers_per_"
                  "stage); export 'megatron' instead");
  }
  if (p.vpp > 2 && LayersPerStage(job) == 0) {
    return Refuse(kTorchrunFormat,
                  "vpp " + std::to_string(p.vpp) +
                      ": no pipeline_parallel_layers_per_stage gives pp x vpp stages "
                      "for this layer count; export 'megatron' instead");
  }
  return RefuseMegatronOnlyKnobs(kTorchrunFormat, job);
}

namespace {

std::string_view ScheduleName(const ParallelSpec& p) {
  if (p.vpp > 1) return "Interleaved1F1B";
  return p.schedule == Schedule::kGpipe ? "GPipe" : "1F1B";
}

std::vector<std::string> Options(const Plan& plan, std::vector<std::string>* notes) {
  const JobSpec& job = plan.job;
  const ParallelSpec& p = job.parallel;
  const TrainingSpec& t = job.training;
  std::vector<std::string> o = {"--job.config_file \"$CONFIG_FILE\""};
  if (const TitanFlavor* f = FindFlavor(job.model)) {
    o.push_back("--model.name " + std::string(f->name));
    o.push_back("--model.flavor " + std::string(f->flavor));
  } else {
    notes->push_back("torchtitan has no built-in flavor with the dimensions of " + job.model.name +
                     "; CONFIG_FILE must name a model (model.name, "
                     "model.flavor) registered with them");
  }
  o.push_back("--training.seq_len " + std::to_string(t.seq_len));
  o.push_back("--training.global_batch_size " + std::to_string(t.global_batch_size));
  if (p.pp > 1) {
    // The pipeline runs all micro-batches of a data-parallel rank in one schedule.
    o.push_back("--training.local_batch_size " + std::to_string(t.global_batch_size / p.dp));
    o.push_back("--parallelism.pipeline_parallel_microbatch_size " +
                std::to_string(t.micro_batch_size));
  } else {
    o.push_back("--training.local_batch_size " + std::to_string(t.micro_batch_size));
  }
  if (TrainSteps(plan) > 0) o.push_back("--training.steps " + std::to_string(TrainSteps(plan)));
  if (CheckpointIntervalSteps(plan) > 0) {
    o.push_back("--checkpoint.enable");
    o.push_back("--checkpoint.interval " + std::to_string(CheckpointIntervalSteps(plan)));
  }
  const bool full_precision = t.precision == Precision::kFp32 || t.precision == Precision::kTf32;
  o.push_back(std::string("--training.mixed_precision_param ") +
              (full_precision ? "float32" : "bfloat16"));
  if (t.precision == Precision::kFp8) {
    o.push_back("--model.converters float8");
    notes->push_back(
        "fp8: torchao Float8Linear through the 'float8' converter (renamed "
        "'quantize.linear.float8' in later torchtitan)");
  }
  if (p.cpu_offload) {
    o.push_back("--training.enable_cpu_offload");
    notes->push_back(
        "cpu offload: FSDP2 offloads parameters and gradients as well as the "
        "optimizer state, more host traffic than the plan assumed");
  }

  const bool sharded = p.ShardsModelState();
  // HSDP (dp_replicate > 1): FSDP2's 2-D mesh, shard inside a group, replicate across groups.
  const int64_t shard = sharded ? p.DpShard() : 1;
  o.push_back("--parallelism.data_parallel_replicate_degree " + std::to_string(p.dp / shard));
  o.push_back("--parallelism.data_parallel_shard_degree " + std::to_string(shard));
  if (sharded) {
    const bool full_shard = p.fsdp || p.zero_stage == 3;
    o.push_back(std::string("--parallelism.fsdp_reshard_after_forward ") +
                (full_shard ? "always" : "never"));
    if (!full_shard) {
      notes->push_back("zero " + std::to_string(p.zero_stage) +
                       ": FSDP2 has no optimizer-only sharding; parameters are kept gathered "
                       "after forward (reshard_after_forward never, SHARD_GRAD_OP) and sharded "
                       "between steps, so memory is at most the plan's");
    }
  }
  o.push_back("--parallelism.tensor_parallel_degree " + std::to_string(p.tp));
  if (p.tp > 1 && !p.sequence_parallel) {
    notes->push_back(
        "torchtitan's tensor parallelism always shards norms along the sequence "
        "(sequence parallel), which the plan did not assume");
  }
  o.push_back("--parallelism.pipeline_parallel_degree " + std::to_string(p.pp));
  if (p.pp > 1) {
    o.push_back("--parallelism.pipeline_parallel_schedule " + std::string(ScheduleName(p)));
    if (p.vpp > 2) {
      o.push_back("--parallelism.pipeline_parallel_layers_per_stage " +
                  std::to_string(LayersPerStage(job)));
      notes->push_back(
          "pipeline_parallel_layers_per_stage counts the embedding and output "
          "layers as one layer each, so stages differ by up to one layer");
    }
  }
  o.push_back("--parallelism.context_parallel_degree " + std::to_string(p.cp));
  o.push_back("--parallelism.expert_parallel_degree " + std::to_string(p.ep));
  if (p.ep > 1 && job.training.moe_dispatcher == MoeDispatcher::kDeepEp) {
    o.push_back("--parallelism.expert_parallel_comm_backend deepep");
  }
  if (job.model.is_moe()) {
    // torchtitan's default expert TP is 1, Megatron's (and the plan's default) tp.
    o.push_back("--parallelism.expert_tensor_parallel_degree " + std::to_string(p.ExpertTp()));
  }
  switch (t.recompute) {
    case Recompute::kNone:
      o.push_back("--activation_checkpoint.mode none");
      break;
    case Recompute::kSelective:
      o.push_back("--activation_checkpoint.mode selective");
      o.push_back("--activation_checkpoint.selective_ac_option op");
      break;
    case Recompute::kFull:
      o.push_back("--activation_checkpoint.mode full");
      break;
  }
  if (t.attention == AttentionImpl::kUnfused) {
    notes->push_back(
        "the plan assumes unfused attention; torchtitan runs fused SDPA kernels "
        "(faster than predicted)");
  }
  return o;
}

}  // namespace

Expected<std::string> WriteTorchrunFsdp(const Plan& plan, Launcher launcher) {
  const JobSpec& job = plan.job;
  GPUPLAN_RETURN_IF_ERROR(CheckTorchrunExpressible(job));
  std::vector<std::string> notes;
  const std::vector<std::string> options = Options(plan, &notes);

  std::vector<std::string> header = HeaderLines(plan);
  header.push_back(
      "torchtitan through torchrun; options are the --section.option overrides of "
      "torchtitan/config/job_config.py.");
  const int64_t nodes = NumNodes(job.cluster);
  const std::string config = "CONFIG_FILE is a torchtitan train config.";
  header.push_back(launcher == Launcher::kSlurm
                       ? SlurmRunLine(job.cluster, "from a torchtitan checkout") + " " + config
                       : "Run with bash on each node (" + std::to_string(nodes) + " " +
                             Noun(nodes, "node", "nodes") + ") with MASTER_ADDR set; " + config);
  for (const std::string& note : notes) header.push_back("note: " + note);
  std::string out =
      "#!/usr/bin/env bash\n" + CommentLines(header) + SlurmDirectives(plan, launcher);
  out += "set -euo pipefail\n\n";
  out += "NNODES=" + std::to_string(NumNodes(job.cluster)) + "\n";
  out += "NPROC_PER_NODE=" + std::to_string(GpusPerNode(job.cluster)) + "\n";
  out += MasterAddrLines(launcher);
  out += "CONFIG_FILE=${CONFIG_FILE:?set CONFIG_FILE to a torchtitan train config (.toml)}\n\n";
  // Under Slurm the job's id names the rendezvous, as in torchtitan's multinode_trainer.slurm.
  const std::string rdzv_id = launcher == Launcher::kSlurm ? "$SLURM_JOB_ID" : "gpuplan";
  out += std::string(TorchrunPrefix(launcher)) +
         "torchrun --nnodes=\"$NNODES\" --nproc-per-node=\"$NPROC_PER_NODE\" \\\n"
         "  --rdzv-backend=c10d --rdzv-endpoint=\"$MASTER_ADDR:29400\" "
         "--rdzv-id=\"${RDZV_ID:-" +
         rdzv_id +
         "}\" \\\n"
         "  -m torchtitan.train";
  for (const std::string& option : options) out += " \\\n  " + option;
  return out + "\n";
}

}  // namespace gpuplan
