#include "planner/export.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "common/str_format.h"
#include "planner/export_formats.h"
#include "planner/units_format.h"
#include "simulator/job_spec_json.h"

namespace gpuplan {

namespace {
constexpr ExporterSpec kExporters[] = {
    {"megatron", "Megatron-LM launch script: torchrun + pretrain_gpt.py with the plan's flags",
     "train_megatron.sh", "megatron-core", true, WriteMegatron, CheckMegatronExpressible},
    {"deepspeed",
     "Megatron-DeepSpeed launch script: torchrun + pretrain_gpt.py with the plan's flags and "
     "its DeepSpeed config JSON",
     "train_megatron_deepspeed.sh", "deepspeed", true, WriteDeepSpeed, CheckDeepSpeedExpressible},
    {"torchrun-fsdp",
     "torchrun command for torchtitan (FSDP2/TP/PP/CP) with --section.option overrides",
     "train_torchtitan.sh", "torchtitan", true, WriteTorchrunFsdp, CheckTorchrunExpressible},
    {"accelerate", "Hugging Face Accelerate config YAML (FSDP2, DDP, parallelism_config)",
     "accelerate_config.yaml", "hf-trainer", false, WriteAccelerate, CheckAccelerateExpressible},
};

constexpr LauncherSpec kLaunchers[] = {
    {"per-node", "run the script with bash on every node, NODE_RANK and MASTER_ADDR set",
     Launcher::kPerNode},
    {"slurm", "submit the script with sbatch: srun starts one torchrun on each of its nodes",
     Launcher::kSlurm},
};
}  // namespace

std::span<const ExporterSpec> Exporters() { return kExporters; }

std::span<const LauncherSpec> Launchers() { return kLaunchers; }

std::string_view LauncherName(Launcher launcher) {
  for (const LauncherSpec& l : kLaunchers) {
    if (l.launcher == launcher) return l.name;
  }
  return "?";
}

const LauncherSpec* FindLauncher(std::string_view name) {
  for (const LauncherSpec& l : kLaunchers) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

const ExporterSpec* FindExporter(std::string_view format) {
  for (const ExporterSpec& e : kExporters) {
    if (e.name == format) return &e;
  }
  return nullptr;
}

namespace {
Status UnknownFormat(std::string_view format) {
  std::string allowed;
  for (const ExporterSpec& e : kExporters) {
    if (!allowed.empty()) allowed += ", ";
    allowed += e.name;
  }
  return Status::Invalid("unknown export format '" + std::string(format) +
                         "' (allowed: " + allowed + ")");
}

// A configuration file is started by its own tool's launcher, which the user runs per node.
Status CheckExporterLauncher(const ExporterSpec& e, Launcher launcher) {
  if (e.launch_script || launcher == Launcher::kPerNode) return Status::Ok();
  std::string scripts;
  for (const ExporterSpec& other : kExporters) {
    if (other.launch_script)
      scripts += (scripts.empty() ? "'" : ", '") + std::string(other.name) + "'";
  }
  return Refuse(e.name, "launcher '" + std::string(LauncherName(launcher)) +
                            "': this format is a configuration file its tool's own launcher "
                            "reads on each node, not a launch script; export " +
                            scripts + " for a script that launcher starts");
}
}  // namespace

Status CheckLauncher(std::string_view format, Launcher launcher) {
  const ExporterSpec* e = FindExporter(format);
  return e == nullptr ? UnknownFormat(format) : CheckExporterLauncher(*e, launcher);
}

Status CheckExportable(std::string_view format, const JobSpec& job, Launcher launcher) {
  GPUPLAN_RETURN_IF_ERROR(CheckLauncher(format, launcher));
  return FindExporter(format)->check(job);
}

Expected<std::string> ExportPlan(const Plan& plan, std::string_view format, Launcher launcher) {
  const std::string& stack = plan.job.training.framework.id;
  for (const ExporterSpec& e : kExporters) {
    if (e.name == format) {
      GPUPLAN_RETURN_IF_ERROR(CheckExporterLauncher(e, launcher));
      if (stack != e.framework) {
        const std::string launches(e.framework);
        return Status::Invalid(StrFormat(
            "%s: the plan is timed for framework '%s', and this export launches %s; plan with "
            "--framework %s (or without --framework: --export %s implies it)",
            std::string(e.name).c_str(), stack.c_str(), launches.c_str(), launches.c_str(),
            std::string(e.name).c_str()));
      }
      return e.write(plan, launcher);
    }
  }
  return UnknownFormat(format);
}

// ---- shared by the exporters ------------------------------------------------------------

std::string PlanLabel(const Plan& plan) {
  const JobSpec& j = plan.job;
  const ParallelSpec& p = j.parallel;
  std::string s =
      j.model.name + " on " + std::to_string(j.cluster.num_gpus) + " x " + j.cluster.gpu;
  if (!plan.node.empty()) s += " (" + plan.node + ")";
  s += ", tp " + std::to_string(p.tp) + " pp " + std::to_string(p.pp) + " dp " +
       std::to_string(p.dp);
  if (p.cp > 1) s += " cp " + std::to_string(p.cp);
  if (p.ep > 1) s += " ep " + std::to_string(p.ep);
  if (p.ExpertTp() != p.tp) s += " etp " + std::to_string(p.ExpertTp());
  if (p.vpp > 1) s += " vpp " + std::to_string(p.vpp);
  return s;
}

std::vector<std::string> HeaderLines(const Plan& plan) {
  std::vector<std::string> lines = {"generated by gpuplan for plan: " + PlanLabel(plan)};
  const StepResult& r = plan.step;
  if (r.step_time_s > 0) {
    lines.push_back("predicted: step " + FormatDuration(r.step_time_s) + ", MFU " +
                    FormatPercent(r.mfu) + ", peak memory " + FormatGb(r.memory.peak_bytes) +
                    " of " + FormatGb(r.memory.capacity_bytes) + " per GPU");
  }
  const PlanEconomics& e = plan.econ;
  if (e.expected_wall_s > 0) {
    std::string line = "expected: " + FormatCount(e.steps) + " " + Noun(e.steps, "step", "steps") +
                       ", wall time " + FormatDuration(e.expected_wall_s);
    if (e.expected_cost_usd > 0) line += ", cost " + FormatUsd(e.expected_cost_usd);
    lines.push_back(line);
  }
  return lines;
}

std::string CommentLines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += "# " + line + "\n";
  return out;
}

std::string ArgArray::Bash(std::string_view name) const {
  std::string out = std::string(name) + "=(\n";
  for (const std::string& line : lines_) out += "  " + line + "\n";
  return out + ")\n";
}

void AddMegatronShapeArgs(const ModelSpec& m, ArgArray* a) {
  a->Add("--num-layers", m.num_layers);
  a->Add("--hidden-size", m.hidden_size);
  a->Add("--ffn-hidden-size", m.ffn_hidden_size);
  a->Add("--num-attention-heads", m.num_attention_heads);
  a->Add("--kv-channels", m.HeadDim());
}

void AddMegatronSequenceAndMlpArgs(const JobSpec& job, const MegatronModelDialect& dialect,
                                   ArgArray* a, std::vector<std::string>* notes) {
  const ModelSpec& m = job.model;
  a->Add("--seq-length", job.training.seq_len);
  if (m.max_position_embeddings_learned > 0) {
    if (!dialect.learned_positions.empty()) a->Flag(dialect.learned_positions);
    a->Add("--max-position-embeddings", m.max_position_embeddings_learned);
  } else {
    a->Flag(dialect.rotary_positions);
    a->Add("--max-position-embeddings", job.training.seq_len);
    if (m.mlp == MlpKind::kGelu) {
      notes->push_back(
          "position embedding: the model has no learned positions (rotary or ALiBi); " +
          std::string(dialect.tool) + " has no ALiBi, so rotary embeddings are used");
    }
  }
  if (m.mlp == MlpKind::kSwiGlu) {
    a->Flag("--swiglu");
    a->Add("--normalization", dialect.rmsnorm);
  }
}

void AddMegatronBatchArgs(const Plan& plan, ArgArray* a) {
  const TrainingSpec& t = plan.job.training;
  a->Add("--micro-batch-size", t.micro_batch_size);
  a->Add("--global-batch-size", t.global_batch_size);
  if (TrainSteps(plan) > 0) a->Add("--train-iters", TrainSteps(plan));
  // The checkpoint interval the reliability economics chose; --save (the directory) is the user's.
  if (CheckpointIntervalSteps(plan) > 0) a->Add("--save-interval", CheckpointIntervalSteps(plan));
}

void AddMegatronRecomputeArgs(const TrainingSpec& training, ArgArray* a) {
  switch (training.recompute) {
    case Recompute::kNone:
      break;
    case Recompute::kSelective:
      a->Add("--recompute-granularity", "selective");
      if (training.recompute_modules != kRecomputeCoreAttn) {
        a->Add("--recompute-modules", RecomputeModulesName(training.recompute_modules, " "));
      }
      break;
    case Recompute::kFull:
      a->Add("--recompute-granularity", "full");
      a->Add("--recompute-method", "uniform");
      a->Add("--recompute-num-layers", 1);
      break;
  }
}

void AddMegatronEmbeddingAndDropoutArgs(const JobSpec& job, ArgArray* a,
                                        std::vector<std::string>* notes) {
  const ModelSpec& m = job.model;
  if (!m.tied_embeddings) a->Flag("--untie-embeddings-and-output-weights");
  if (!job.training.dropout) {
    a->Add("--attention-dropout", "0.0");
    a->Add("--hidden-dropout", "0.0");
  }
  if (!m.approximation_note.empty()) notes->push_back("model note: " + m.approximation_note);
}

std::string PretrainGptScriptText(const Plan& plan, const PretrainGptScript& s, Launcher launcher) {
  std::vector<std::string> header = HeaderLines(plan);
  header.push_back(s.flags_source);
  const int64_t nodes = NumNodes(plan.job.cluster);
  const std::string checkout = "a " + s.tool + " checkout";
  header.push_back(launcher == Launcher::kSlurm
                       ? SlurmRunLine(plan.job.cluster, "from " + checkout)
                       : "Run with bash from " + checkout + " on each node (" +
                             std::to_string(nodes) + " " + Noun(nodes, "node", "nodes") +
                             "), with NODE_RANK and MASTER_ADDR set.");
  for (const std::string& note : s.notes) header.push_back("note: " + note);
  std::string out =
      "#!/usr/bin/env bash\n" + CommentLines(header) + SlurmDirectives(plan, launcher);
  out += "set -euo pipefail\n\n" + s.setup;
  out += TorchrunLaunchArgs(plan.job.cluster, launcher) + "\n";
  out += s.model.Bash("MODEL_ARGS") + "\n" + s.parallel.Bash("PARALLEL_ARGS") + "\n" +
         s.training.Bash("TRAINING_ARGS") + "\n" + s.data;
  out +=
      "# Learning rate, schedule, checkpoints: the default lr is a placeholder, not a plan "
      "choice.\n";
  out += "EXTRA_ARGS=${EXTRA_ARGS:-\"--lr 1.0e-4\"}\n\n";
  out += std::string(TorchrunPrefix(launcher)) +
         "torchrun \"${DISTRIBUTED_ARGS[@]}\" pretrain_gpt.py \\\n"
         "  \"${MODEL_ARGS[@]}\" \\\n  \"${PARALLEL_ARGS[@]}\" \\\n  \"${TRAINING_ARGS[@]}\" \\\n"
         "  $DATA_ARGS \\\n  $EXTRA_ARGS\n";
  return out;
}

std::string TorchrunLaunchArgs(const ClusterSpec& cluster, Launcher launcher) {
  std::string out = "GPUS_PER_NODE=" + std::to_string(GpusPerNode(cluster)) + "\n";
  out += "NNODES=" + std::to_string(NumNodes(cluster)) + "\n";
  const bool slurm = launcher == Launcher::kSlurm;
  if (!slurm) out += "NODE_RANK=${NODE_RANK:-0}\n";
  out += MasterAddrLines(launcher) + "MASTER_PORT=${MASTER_PORT:-6000}\n\n";
  out += "DISTRIBUTED_ARGS=(\n  --nproc_per_node \"$GPUS_PER_NODE\"\n  --nnodes \"$NNODES\"\n";
  // Under Slurm torchrun's dynamic rendezvous: srun starts the node agents in no set order, and
  // the c10d store on the first node numbers them (torch/distributed/run.py; torchtitan's
  // multinode_trainer.slurm). Per node, the static one of NODE_RANK.
  out += slurm ? "  --rdzv-id \"$SLURM_JOB_ID\"\n  --rdzv-backend c10d\n"
                 "  --rdzv-endpoint \"$MASTER_ADDR:$MASTER_PORT\"\n"
               : "  --node_rank \"$NODE_RANK\"\n  --master_addr \"$MASTER_ADDR\"\n"
                 "  --master_port \"$MASTER_PORT\"\n";
  return out + ")\n";
}

std::string SlurmRunLine(const ClusterSpec& cluster, const std::string& from) {
  const int64_t nodes = NumNodes(cluster);
  const std::string how =
      nodes > 1 ? " on a filesystem all " + std::to_string(nodes) +
                      " nodes mount: srun starts torchrun on each node, and they meet at the "
                      "job's first node."
                : ": srun starts torchrun on the job's node.";
  return "Submit with sbatch " + from + how +
         " Add the #SBATCH lines your cluster needs (--partition, --account, --time).";
}

std::string SlurmDirectives(const Plan& plan, Launcher launcher) {
  if (launcher != Launcher::kSlurm) return std::string();
  // The job name: the model's name in lower case, runs of other characters as one '-'.
  std::string name = "gpuplan-";
  for (const char c : plan.job.model.name) {
    const bool word = std::isalnum(static_cast<unsigned char>(c)) != 0;
    if (word) {
      name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (name.back() != '-') {
      name += '-';
    }
  }
  if (name.back() == '-') name.pop_back();
  // One task per node, each node whole (sbatch --exclusive), its GPUs given to the task
  // (torchtitan's multinode_trainer.slurm asks the same with --ntasks and --gpus-per-task).
  const ClusterSpec& c = plan.job.cluster;
  return "#SBATCH --job-name=" + name + "\n#SBATCH --nodes=" + std::to_string(NumNodes(c)) +
         "\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=" +
         std::to_string(GpusPerNode(c)) + "\n#SBATCH --exclusive\n";
}

std::string MasterAddrLines(Launcher launcher) {
  if (launcher != Launcher::kSlurm) return "MASTER_ADDR=${MASTER_ADDR:-localhost}\n";
  return ": \"${SLURM_JOB_NODELIST:?submit this script with sbatch (it runs on the nodes "
         "of a Slurm job)}\"\n"
         "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | sed -n 1p)\n";
}

std::string_view TorchrunPrefix(Launcher launcher) {
  // One task per node with all the node's CPUs: a step's task gets --cpus-per-task CPUs (one by
  // default, srun(1)), and torchrun's workers and their data loaders share them. A node that
  // fails ends the step (--kill-on-bad-exit) rather than leaving the others waiting.
  return launcher == Launcher::kSlurm
             ? "srun --ntasks-per-node=1 --cpus-per-task=\"$SLURM_CPUS_ON_NODE\" "
               "--kill-on-bad-exit=1 \\\n  "
             : "";
}

int64_t GpusPerNode(const ClusterSpec& c) {
  return c.gpus_per_node < c.num_gpus ? c.gpus_per_node : c.num_gpus;
}

int64_t NumNodes(const ClusterSpec& c) { return c.num_gpus / GpusPerNode(c); }

int64_t GradAccumulationSteps(const JobSpec& job) {
  return job.training.global_batch_size / (job.training.micro_batch_size * job.parallel.dp);
}

int64_t TrainSteps(const Plan& plan) { return static_cast<int64_t>(std::ceil(plan.econ.steps)); }

int64_t CheckpointIntervalSteps(const Plan& plan) {
  if (!(plan.econ.checkpoint_interval_s > 0) || !(plan.step.step_time_s > 0)) return 0;
  return std::max<int64_t>(1,
                           std::llround(plan.econ.checkpoint_interval_s / plan.step.step_time_s));
}

Status Refuse(std::string_view format, const std::string& reason) {
  return Status::Invalid(std::string(format) + ": " + reason);
}

Status RefuseMegatronOnlyKnobs(std::string_view format, const JobSpec& job) {
  const TrainingSpec& t = job.training;
  const std::string knob =
      t.fp8_param_gather                ? "fp8_param_gather"
      : t.grad_reduce_bf16              ? "grad_reduce_bf16"
      : t.activation_offload_layers > 0 ? "activation_offload_layers"
      : t.recompute_modules != kRecomputeCoreAttn
          ? "recompute_modules " + RecomputeModulesName(t.recompute_modules, ", ")
          : "";
  if (knob.empty()) return Status::Ok();
  return Refuse(format, knob +
                            ": the plan was timed with Megatron-LM's --grad-reduce-in-bf16 / "
                            "--fp8-param-gather / --cpu-offloading / --recompute-modules, which "
                            "this format has no switch for; export 'megatron' instead");
}

}  // namespace gpuplan
