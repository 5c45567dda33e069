// `gpuplan simulate`: a job from --spec and/or flags, evaluated by the analytic cost model.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/model_option.h"
#include "cli/moe_options.h"
#include "cli/option_checks.h"
#include "cli/profile_option.h"
#include "cli/progress_bar.h"
#include "common/file_write.h"
#include "common/json_reader.h"
#include "hardware-db/hardware_db.h"
#include "planner/report_document.h"
#include "planner/timeline_svg.h"
#include "simulator/cost_model.h"
#include "simulator/error_band.h"
#include "simulator/job_spec_json.h"
#include "simulator/pipeline_schedule.h"
#include "simulator/result_format.h"
#include "simulator/trace_json.h"

namespace gpuplan {
namespace {

struct SimulateOptions {
  std::string spec_path;
  bool json = false;
  // Flags that fill or override the spec; empty/nullopt = not given.
  std::string model, gpu, inter_node, precision, recompute, schedule, attention, framework;
  std::vector<std::string> recompute_modules;
  MoeOptions moe;
  std::optional<int64_t> gpus, gpus_per_node, tp, pp, dp, cp, ep, etp, vpp;
  std::optional<int64_t> micro_batch, global_batch, seq_len, zero, dp_replicate;
  std::optional<int64_t> activation_offload_layers;
  int64_t lora_rank = 0;
  std::vector<std::string> lora_targets;
  std::string lora_base;
  std::string profile_path;
  bool fsdp = false, sequence_parallel = false, cpu_offload = false, tp_overlap = false;
  bool ep_overlap = false;
  bool no_dp_overlap = false;
  bool tp_backward_overlap = false, no_tp_backward_overlap = false;
  bool grad_reduce_bf16 = false, fp8_param_gather = false;
  bool event = false;      // also run the event-driven simulator
  std::string trace_path;  // Chrome-trace / Perfetto JSON of the simulated step
  std::string svg_path;    // SVG Gantt chart of the simulated step
  bool svg_compute_only = false;
  bool embedding_slot = false, loss_slot = false;
  std::optional<int64_t> first_stage_layers, last_stage_layers;
};

// A flag's value as JSON; nullopt when the flag was not given.
std::optional<nlohmann::json> Given(const std::string& v) {
  return v.empty() ? std::nullopt : std::optional<nlohmann::json>(v);
}
std::optional<nlohmann::json> Given(const std::optional<int64_t>& v) {
  return v ? std::optional<nlohmann::json>(*v) : std::nullopt;
}
std::optional<nlohmann::json> Given(const std::optional<double>& v) {
  return v ? std::optional<nlohmann::json>(*v) : std::nullopt;
}
std::optional<nlohmann::json> Given(bool on, bool value) {
  return on ? std::optional<nlohmann::json>(value) : std::nullopt;
}

// Flags write into the same JSON shape the spec file uses, so one parser validates both.
// `flags` records which flag can set, and which did set, each field (errors name them).
nlohmann::json ApplyFlags(nlohmann::json spec, const SimulateOptions& o, SpecFlags* flags) {
  auto flag = [&](const char* section, const char* key, const char* name,
                  const std::optional<nlohmann::json>& v) {
    const std::string field = std::string(section) + "." + key;
    flags->names[field] = name;
    if (!v) return;
    if (!spec.contains(section) || !spec[section].is_object())
      spec[section] = nlohmann::json::object();
    spec[section][key] = *v;
    // A switch is named alone; an option with its value (a list's values), as typed.
    std::string typed(name);
    if (v->is_array()) {
      for (const nlohmann::json& item : *v) {
        typed += " " + (item.is_string() ? item.get<std::string>() : item.dump());
      }
    } else if (!v->is_boolean()) {
      typed += " " + (v->is_string() ? v->get<std::string>() : v->dump());
    }
    flags->given[field] = typed;
  };
  if (!o.model.empty()) {
    // The flag's path is relative to the working folder: with a --spec file it is made
    // absolute, so that it is not resolved against the spec's folder as the spec's own
    // hf_config is.
    std::string path = o.model;
    if (!o.spec_path.empty()) path = std::filesystem::absolute(path).lexically_normal().string();
    spec["model"] =
        IsHfConfigPath(o.model) ? nlohmann::json{{"hf_config", path}} : nlohmann::json(o.model);
  }
  flag("cluster", "gpu", "--gpu", Given(o.gpu));
  flag("cluster", "num_gpus", "--gpus", Given(o.gpus));
  flag("cluster", "gpus_per_node", "--gpus-per-node", Given(o.gpus_per_node));
  flag("cluster", "inter_node", "--inter-node", Given(o.inter_node));
  flag("training", "seq_len", "--seq-len", Given(o.seq_len));
  flag("training", "global_batch_size", "--global-batch", Given(o.global_batch));
  flag("training", "micro_batch_size", "--micro-batch", Given(o.micro_batch));
  flag("training", "precision", "--precision", Given(o.precision));
  flag("training", "recompute", "--recompute", Given(o.recompute));
  flag("training", "recompute_modules", "--recompute-modules",
       o.recompute_modules.empty() ? std::nullopt
                                   : std::optional<nlohmann::json>(o.recompute_modules));
  flag("training", "attention", "--attention", Given(o.attention));
  flag("training", "framework", "--framework", Given(o.framework));
  flag("training", "moe_dispatcher", "--moe-dispatcher", Given(o.moe.dispatcher));
  flag("training", "moe_load_imbalance", "--moe-load-imbalance", Given(o.moe.load_imbalance));
  flag("training", "grad_reduce_bf16", "--grad-reduce-bf16", Given(o.grad_reduce_bf16, true));
  flag("training", "fp8_param_gather", "--fp8-param-gather", Given(o.fp8_param_gather, true));
  flag("training", "activation_offload_layers", "--activation-offload-layers",
       Given(o.activation_offload_layers));
  std::optional<nlohmann::json> lora;
  if (o.lora_rank) {
    lora = nlohmann::json{{"rank", o.lora_rank}};
    if (!o.lora_targets.empty()) (*lora)["targets"] = o.lora_targets;
    if (!o.lora_base.empty()) (*lora)["base"] = o.lora_base;
  }
  flag("training", "lora", "--lora-rank", lora);
  flag("parallelism", "tp", "--tp", Given(o.tp));
  flag("parallelism", "pp", "--pp", Given(o.pp));
  flag("parallelism", "dp", "--dp", Given(o.dp));
  flag("parallelism", "cp", "--cp", Given(o.cp));
  flag("parallelism", "ep", "--ep", Given(o.ep));
  flag("parallelism", "etp", "--etp", Given(o.etp));
  flag("parallelism", "vpp", "--vpp", Given(o.vpp));
  flag("parallelism", "schedule", "--schedule", Given(o.schedule));
  flag("parallelism", "zero_stage", "--zero", Given(o.zero));
  flag("parallelism", "fsdp", "--fsdp", Given(o.fsdp, true));
  flag("parallelism", "dp_replicate", "--dp-replicate", Given(o.dp_replicate));
  flag("parallelism", "sequence_parallel", "--sequence-parallel", Given(o.sequence_parallel, true));
  flag("parallelism", "cpu_offload", "--cpu-offload", Given(o.cpu_offload, true));
  flag("parallelism", "tp_overlap", "--tp-overlap", Given(o.tp_overlap, true));
  flag("parallelism", "ep_overlap", "--ep-overlap", Given(o.ep_overlap, true));
  flag("parallelism", "dp_overlap", "--no-dp-overlap", Given(o.no_dp_overlap, false));
  // One field, two switches (CLI11 refuses both at once): the stack's default unless given.
  flag("parallelism", "tp_backward_overlap",
       o.no_tp_backward_overlap ? "--no-tp-backward-overlap" : "--tp-backward-overlap",
       o.no_tp_backward_overlap ? Given(true, false) : Given(o.tp_backward_overlap, true));
  flag("parallelism", "account_for_embedding_in_pipeline_split", "--embedding-slot",
       Given(o.embedding_slot, true));
  flag("parallelism", "account_for_loss_in_pipeline_split", "--loss-slot",
       Given(o.loss_slot, true));
  flag("parallelism", "first_stage_layers", "--first-stage-layers", Given(o.first_stage_layers));
  flag("parallelism", "last_stage_layers", "--last-stage-layers", Given(o.last_stage_layers));
  return spec;
}

// Without --spec the flags are the whole job: the ones a spec must give (docs/JOB_SPEC.md:
// model, cluster.gpu, cluster.num_gpus, training.global_batch_size) are named when missing.
Status CheckRequiredFlags(const SimulateOptions& o) {
  if (!o.spec_path.empty()) return Status::Ok();
  std::vector<std::string> missing;
  if (o.model.empty()) missing.push_back("--model");
  if (o.gpu.empty()) missing.push_back("--gpu");
  if (!o.gpus) missing.push_back("--gpus");
  if (!o.global_batch) missing.push_back("--global-batch");
  if (missing.empty()) return Status::Ok();
  std::string list;
  for (size_t i = 0; i < missing.size(); ++i) {
    list += (i == 0 ? "" : i + 1 == missing.size() ? " and " : ", ") + missing[i];
  }
  return Status::Invalid("simulate: " + list + (missing.size() == 1 ? " is" : " are") +
                         " required without --spec (or give a job spec: --spec FILE, "
                         "docs/JOB_SPEC.md)");
}

Status RunSimulate(const SimulateOptions& o, const GlobalOptions& g) {
  GPUPLAN_RETURN_IF_ERROR(CheckRequiredFlags(o));
  // Output paths are checked before the simulation: a typo costs no work, and the two outputs
  // cannot overwrite each other.
  const OutputPath paths[] = {{"--trace", o.trace_path}, {"--timeline-svg", o.svg_path}};
  GPUPLAN_RETURN_IF_ERROR(CheckDistinctOutputs(paths));
  for (const OutputPath& p : paths) {
    if (!p.path.empty()) GPUPLAN_RETURN_IF_ERROR(CheckOutputPath(p.path));
  }
  Expected<HardwareDb> db = LoadHardwareDb(g.hardware_db_dirs);
  if (!db.ok()) return db.status();
  nlohmann::json spec = nlohmann::json::object();
  std::string origin = "flags";  // errors about fields no flag set read "flags: section: ..."
  std::string base_dir = ".";
  if (!o.spec_path.empty()) {
    Expected<nlohmann::json> file = ReadJsonFile(o.spec_path);
    if (!file.ok()) return file.status();
    spec = std::move(file).value();
    origin = o.spec_path;
    base_dir = std::filesystem::path(o.spec_path).parent_path().string();
    if (base_dir.empty()) base_dir = ".";
  }
  SpecFlags flags;
  flags.without_file = o.spec_path.empty();
  nlohmann::json merged = ApplyFlags(std::move(spec), o, &flags);
  Expected<JobSpec> job = ParseJobSpec(merged, origin, base_dir, *db, flags);
  if (!job.ok()) return job.status();
  const GpuSpec& gpu = *db->FindGpu(job->cluster.gpu);
  const NetworkSpec& net = *db->FindNetwork(job->cluster.inter_node);
  std::optional<ProfileCalibration> cal;
  if (!o.profile_path.empty()) {
    Expected<ProfileCalibration> loaded =
        LoadProfileCalibration(o.profile_path, *db, ProfileUse::kTrainingStacks);
    if (!loaded.ok()) return loaded.status();
    if (loaded->rates.gpu_id != gpu.id) {
      return Status::Invalid("--profile: " + o.profile_path + " calibrates " +
                             loaded->rates.gpu_id + ", but the job runs on " + gpu.id +
                             "; profile that GPU or drop --profile");
    }
    cal = std::move(loaded).value();
  }
  const MeasuredRates* measured = cal ? &cal->rates : nullptr;
  const StepResult r = EvaluateStep(*job, gpu, net, measured);
  const bool event = o.event || !o.trace_path.empty() || !o.svg_path.empty();
  std::optional<EventSimResult> sim;
  std::vector<std::pair<std::string, std::string>> outputs;  // path, contents: written as one set
  if (event) {
    EventSimOptions options;
    options.record_timeline = !o.trace_path.empty() || !o.svg_path.empty();
    TerminalProgress bar("simulating", "%");  // redrawn in place on a terminal
    if (!o.json && isatty(STDERR_FILENO)) options.progress = &bar;
    Expected<EventSimResult> simulated = SimulateStepEvents(*job, gpu, net, options, measured);
    if (!simulated.ok()) return simulated.status().WithPrefix(origin);
    sim = std::move(simulated).value();
    const std::string title = job->model.name + " on " + std::to_string(job->cluster.num_gpus) +
                              " x " + job->cluster.gpu + ", " + LayoutSummary(*job) + ", " +
                              std::string(ScheduleName(job->parallel.schedule));
    if (!o.trace_path.empty()) {
      TraceInfo info;
      info.title = title;
      info.facts = {{"tool", "gpuplan simulate"},
                    {"step_time_s", std::to_string(sim->step_time_s)},
                    {"analytic_step_time_s", std::to_string(r.step_time_s)},
                    {"simulated_gpus", std::to_string(sim->simulated_gpus)},
                    {"represented_gpus", std::to_string(job->cluster.num_gpus)}};
      Expected<std::string> text = ChromeTraceFile(o.trace_path, sim->timeline, info);
      if (!text.ok()) return text.status();
      outputs.push_back({o.trace_path, std::move(text).value()});
    }
    if (!o.svg_path.empty()) {
      GanttOptions gantt;
      gantt.title = title;
      gantt.compute_only = o.svg_compute_only;
      outputs.push_back({o.svg_path, TimelineSvg(sim->timeline, gantt)});
    }
    std::vector<FileContents> writes;
    for (const auto& [path, content] : outputs) writes.push_back({path, content});
    GPUPLAN_RETURN_IF_ERROR(WriteFilesAtomically(writes));
  }
  Expected<std::vector<BandResidual>> residuals = ReadBandResidualsFile(BuiltinBandResidualsPath());
  if (!residuals.ok()) return residuals.status();
  const ErrorBand band = BandFor(*residuals, BandStack(*job), gpu.architecture,
                                 job->cluster.num_gpus, job->model.is_moe());
  if (o.json) {
    nlohmann::json out = StepResultToJson(r);
    out["error_band"] = ErrorBandToJson(band, r);
    out["job"] = JobSpecToJson(*job);
    if (sim) out["event_simulation"] = EventSimResultToJson(*sim, r);
    if (cal) {
      nlohmann::json figures = nlohmann::json::array();
      for (const FigureSource& f : cal->sources) {
        figures.push_back({{"figure", f.figure},
                           {"from", f.from_profile ? "profile" : "datasheet"},
                           {"detail", f.detail}});
      }
      out["calibration"] = {{"profile", o.profile_path},
                            {"gpu", cal->rates.gpu_id},
                            {"datasheet_step_time_s", EvaluateStep(*job, gpu, net).step_time_s},
                            {"figures", figures},
                            {"warnings", cal->warnings}};
    }
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::printf("%s", FormatStepResult(*job, r, &band).c_str());
    if (sim) std::printf("%s", FormatEventSimResult(*sim, r).c_str());
    if (cal) {
      const double datasheet = EvaluateStep(*job, gpu, net).step_time_s;
      std::printf("\n  Rates from profile %s (docs/PROFILE.md):\n%s", o.profile_path.c_str(),
                  FormatFigureSources(*cal).c_str());
      std::printf("  step time %.3f s with the profile, %.3f s with datasheet rates (%+.1f%%)\n",
                  r.step_time_s, datasheet, 100.0 * (r.step_time_s - datasheet) / datasheet);
    }
    if (!o.trace_path.empty()) {
      std::printf("\n  trace written to %s (open in https://ui.perfetto.dev)\n",
                  o.trace_path.c_str());
    }
    if (!o.svg_path.empty()) std::printf("  timeline written to %s\n", o.svg_path.c_str());
  }
  return Status::Ok();
}

}  // namespace

void AttachSimulate(CLI::App* sub, const GlobalOptions* global, std::function<Status()>* run) {
  auto o = std::make_shared<SimulateOptions>();
  sub->add_option("--spec", o->spec_path, "Job spec JSON (docs/JOB_SPEC.md); flags override it")
      ->check(CLI::ExistingFile);
  sub->add_flag("--json", o->json, "Print the result as one JSON object");
  sub->add_option("--model", o->model,
                  "Preset id (gpuplan models), or a HF config.json path or model folder");
  sub->add_option("--gpu", o->gpu, "GPU id (gpuplan hardware)");
  sub->add_option("--gpus", o->gpus, "Number of GPUs");
  sub->add_option("--gpus-per-node", o->gpus_per_node, "GPUs per node");
  sub->add_option("--inter-node", o->inter_node, "Network id between nodes");
  sub->add_option("--tp", o->tp, "Tensor-parallel size");
  sub->add_option("--pp", o->pp, "Pipeline-parallel size");
  sub->add_option("--dp", o->dp,
                  "Data-parallel size (default: GPUs / (tp*pp*cp) unless the spec sets dp)");
  sub->add_option("--cp", o->cp, "Context-parallel size");
  sub->add_option("--ep", o->ep, "Expert-parallel size");
  sub->add_option("--etp", o->etp,
                  "Expert tensor-parallel size (MoE; divides tp; default: tp, as Megatron-LM)");
  sub->add_option("--vpp", o->vpp, "Virtual pipeline stages per GPU (interleaved schedule)");
  sub->add_option("--schedule", o->schedule, "gpipe | 1f1b | interleaved | zb-h1");
  sub->add_option("--micro-batch", o->micro_batch, "Sequences per micro-batch");
  sub->add_option("--global-batch", o->global_batch, "Sequences per optimizer step");
  sub->add_option("--seq-len", o->seq_len,
                  "Tokens per sequence (default " + std::to_string(kDefaultSeqLen) +
                      ", as plan; docs/JOB_SPEC.md)");
  sub->add_option("--precision", o->precision, "fp32 | tf32 | bf16 | fp16 | fp8 | fp4");
  sub->add_option("--recompute", o->recompute, "none | selective | full");
  sub->add_option("--recompute-modules", o->recompute_modules,
                  "With --recompute selective: what it re-runs, core_attn (default) layernorm "
                  "moe_act mlp (Megatron-Core --recompute-modules; docs/JOB_SPEC.md)");
  sub->add_option("--attention", o->attention, "flash | unfused");
  sub->add_flag("--grad-reduce-bf16", o->grad_reduce_bf16,
                "Accumulate and reduce the main gradients in bf16, 2 bytes (Megatron "
                "--grad-reduce-in-bf16)");
  sub->add_flag("--fp8-param-gather", o->fp8_param_gather,
                "fp8: store the linear layers' weights in fp8 and all-gather them in fp8 "
                "(Megatron --fp8-param-gather; needs --zero 1 or more, or --fsdp)");
  sub->add_option("--activation-offload-layers", o->activation_offload_layers,
                  "Offload the stored activations of the first N layers to host memory over "
                  "NVLink-C2C or PCIe (Megatron --cpu-offloading --cpu-offloading-num-layers; "
                  "needs pp 1, --recompute none and N < layers)");
  sub->add_option("--framework", o->framework,
                  "Training stack, an id of frameworks.json (gpuplan hardware lists them; default "
                  "megatron-core): what it keeps in memory, its host cost and what it can run "
                  "(docs/HARDWARE_DB.md)");
  AddMoeOptions(sub, &o->moe, "one copy per node across nodes; Megatron flex dispatcher");
  sub->add_option("--zero", o->zero, "ZeRO stage 0-3");
  sub->add_flag("--fsdp", o->fsdp, "PyTorch FSDP full sharding");
  sub->add_option("--dp-replicate", o->dp_replicate,
                  "Hybrid sharding (HSDP): replicas of the ZeRO-3/FSDP shard group (divides dp)");
  sub->add_flag("--sequence-parallel", o->sequence_parallel, "Megatron sequence parallelism");
  sub->add_flag("--cpu-offload", o->cpu_offload, "Optimizer state in host memory");
  sub->add_flag("--tp-overlap", o->tp_overlap, "Overlap TP communication with GEMMs");
  sub->add_flag("--ep-overlap", o->ep_overlap,
                "MoE: overlap the expert all-to-all with another micro-batch's computation "
                "(Megatron --overlap-moe-expert-parallel-comm)");
  sub->add_flag("--no-dp-overlap", o->no_dp_overlap, "Do not overlap gradient reduction");
  CLI::Option* tp_bwd = sub->add_flag(
      "--tp-backward-overlap", o->tp_backward_overlap,
      "Without --tp-overlap: run the column-parallel layers' backward TP collectives beside "
      "their GEMMs (Megatron-Core's asynchronous all-reduce; default: the --framework's)");
  sub->add_flag("--no-tp-backward-overlap", o->no_tp_backward_overlap,
                "Run every backward TP collective in line (Megatron-LM of 2020-21, "
                "--no-async-tensor-model-parallel-allreduce; default: the --framework's)")
      ->excludes(tp_bwd);
  sub->add_flag("--embedding-slot", o->embedding_slot,
                "The embedding takes one layer slot of the first stage (Megatron "
                "--account-for-embedding-in-pipeline-split)");
  sub->add_flag("--loss-slot", o->loss_slot,
                "The LM head + loss take one layer slot of the last stage (Megatron "
                "--account-for-loss-in-pipeline-split)");
  sub->add_option("--first-stage-layers", o->first_stage_layers,
                  "Transformer layers of the first pipeline stage; the other stages share the "
                  "rest evenly (Megatron --decoder-first-pipeline-num-layers)");
  sub->add_option("--last-stage-layers", o->last_stage_layers,
                  "Transformer layers of the last pipeline stage (Megatron "
                  "--decoder-last-pipeline-num-layers)");
  sub->add_flag("--event", o->event,
                "Also run the event-driven simulator (docs/SIMULATOR.md) and compare");
  sub->add_option(
      "--trace", o->trace_path,
      "Write the simulated step as a Chrome-trace/Perfetto JSON file (implies --event)");
  CLI::Option* svg =
      sub->add_option("--timeline-svg", o->svg_path,
                      "Write the simulated step as an SVG Gantt chart (implies --event)");
  sub->add_flag("--timeline-compute-only", o->svg_compute_only,
                "Only the compute stream of each GPU in --timeline-svg")
      ->needs(svg);
  sub->add_option("--profile", o->profile_path,
                  "Measured profile of the job's GPU (gpuplan profile): its GEMM, attention, "
                  "memory and collective figures replace the datasheet ones");
  CLI::Option* lora_rank =
      sub->add_option("--lora-rank", o->lora_rank, "Fine-tune with LoRA adapters of this rank")
          ->check(PositiveInteger());
  sub->add_option("--lora-targets", o->lora_targets, "q k v o gate up down | attention | all")
      ->needs(lora_rank);
  sub->add_option("--lora-base", o->lora_base,
                  "Frozen base storage: same | bf16 | fp16 | fp8 | nf4 (QLoRA)")
      ->needs(lora_rank);
  sub->callback([o, global, run] { *run = [o, global] { return RunSimulate(*o, *global); }; });
}

}  // namespace gpuplan
