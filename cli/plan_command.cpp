// `gpuplan plan`: search hardware x layout x price for a model and a job; recommend, explain,
// export the launch configuration, write reports.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/model_option.h"
#include "cli/moe_options.h"
#include "cli/option_checks.h"
#include "cli/profile_option.h"
#include "cli/progress_bar.h"
#include "common/checked_math.h"
#include "common/file_write.h"
#include "common/json_reader.h"
#include "common/limits.h"
#include "common/str_format.h"
#include "hardware-db/hardware_db.h"
#include "planner/compare_frameworks.h"
#include "planner/export.h"
#include "planner/plan_json.h"
#include "planner/planner.h"
#include "planner/report.h"
#include "simulator/error_band.h"
#include "simulator/hf_config.h"
#include "simulator/job_spec_json.h"
#include "simulator/memory.h"
#include "simulator/moe_dispatch.h"
#include "simulator/presets.h"

namespace gpuplan {
namespace {

/// Pre-training default batch: 4M tokens per step, as Llama 3 405B started (Llama 3 Herd of
/// Models, arXiv 2407.21783, Sec. 3.4.1: "initial batch size of 4M tokens").
constexpr double kDefaultPretrainBatchTokens = 4.0 * 1024 * 1024;
/// Fine-tuning default batch: 128 sequences (Stanford Alpaca's fine-tuning recipe).
constexpr int64_t kDefaultFinetuneBatch = 128;

struct PlanOptions {
  std::string model;
  std::string tokens;
  int64_t samples = 0, epochs = 0, steps = 0, seq_len = 0;
  std::string global_batch;
  std::vector<std::string> precisions;
  int64_t lora_rank = 0;
  std::vector<std::string> lora_targets;
  std::string lora_base;
  std::string attention;
  std::string framework;
  bool grad_reduce_bf16 = false, fp8_param_gather = false;
  MoeOptions moe;
  std::vector<std::string> gpus, nodes, providers, prices;
  std::string profile_path;
  int64_t min_gpus = 1, max_gpus = 1024;
  bool spot = false;
  std::string deadline, budget, objective = "cost";
  std::optional<double> failure_rate, restart_s, repair_s, checkpoint_gbps;
  double memory_margin = kDefaultMemoryMargin;
  std::optional<double> confidence;
  int threads = 0;
  bool json = false, quiet = false, compare_frameworks = false;
  std::string report_dir, export_format, export_out, export_launcher;
};

Status Invalid(const std::string& option, const std::string& message) {
  return Status::Invalid(option + ": " + message);
}

// "--option: 'value' (allowed: a, b)", the names of a table of specs with a `name`.
template <typename Spec>
Status NotInTable(const std::string& option, const std::string& value,
                  std::span<const Spec> table) {
  std::string names;
  for (const Spec& spec : table) names += (names.empty() ? "" : ", ") + std::string(spec.name);
  return Invalid(option, "'" + value + "' (allowed: " + names + ")");
}

// "60d", "12h", "90min", "3600s", "2w" -> seconds.
Expected<double> ParseDuration(const std::string& text, const std::string& option) {
  static const std::pair<const char*, double> kUnits[] = {
      {"min", 60}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}, {"w", 7 * 86400}};
  for (const auto& [unit, seconds] : kUnits) {
    const std::string u = unit;
    if (text.size() > u.size() && text.compare(text.size() - u.size(), u.size(), u) == 0) {
      std::optional<double> v = ParseCount(text.substr(0, text.size() - u.size()));
      if (v && *v > 0 && std::isfinite(*v * seconds)) return *v * seconds;
    }
  }
  return Invalid(option, "'" + text +
                             "' is not a duration (a positive number with a unit: s, "
                             "min, h, d or w, e.g. 60d)");
}

// "1024", "512,1024", or a power-of-two range "512:4096". Each batch is at most
// kMaxTokensPerStep sequences (checked as a double, before narrowing), so the doubling range has
// at most 41 entries.
Expected<std::vector<int64_t>> ParseBatches(const std::string& text) {
  std::vector<int64_t> out;
  std::string too_large;
  auto number = [&](const std::string& s) -> std::optional<int64_t> {
    std::optional<double> v = ParseCount(s);
    if (!v || *v < 1 || std::floor(*v) != *v) return std::nullopt;
    if (*v > static_cast<double>(kMaxTokensPerStep)) {
      too_large = s;
      return std::nullopt;
    }
    return static_cast<int64_t>(*v);
  };
  auto fail = [&](const std::string& problem) {
    if (!too_large.empty()) {
      return Invalid("--global-batch", "'" + too_large + "' exceeds the limit of " +
                                           std::to_string(kMaxTokensPerStep) + " sequences");
    }
    return Invalid("--global-batch", problem);
  };
  const auto colon = text.find(':');
  if (colon != std::string::npos) {
    auto lo = number(text.substr(0, colon));
    auto hi = number(text.substr(colon + 1));
    if (!lo || !hi || *hi < *lo) {
      return fail("'" + text + "' is not a range LOW:HIGH of sequences");
    }
    for (int64_t b = *lo; b <= *hi; b *= 2) out.push_back(b);
    return out;
  }
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    auto b = number(item);
    if (!b) return fail("'" + item + "' is not a positive whole number");
    if (static_cast<int64_t>(out.size()) >= kMaxPlannerBatchSizes) {
      return fail("more than " + std::to_string(kMaxPlannerBatchSizes) + " batch sizes");
    }
    out.push_back(*b);
  }
  return out;
}

Expected<PlanRequest> BuildRequest(const PlanOptions& o, const HardwareDb& db,
                                   std::vector<std::string>* notes) {
  PlanRequest req;
  Expected<ModelSpec> model = ResolveModel(o.model);
  if (!model.ok()) return model.status().WithPrefix("--model");
  req.model = std::move(model).value();
  req.seq_len = o.seq_len > 0 ? o.seq_len : kDefaultSeqLen;
  if (o.seq_len == 0)
    notes->push_back("sequence length not given: using " + std::to_string(req.seq_len));
  if (o.seq_len < 0) return Invalid("--seq-len", "must be >= 1");

  // The work.
  const int given = (!o.tokens.empty() ? 1 : 0) + (o.samples > 0 ? 1 : 0) + (o.steps > 0 ? 1 : 0);
  if (given != 1) {
    return Invalid("--tokens/--samples/--steps", "give exactly one amount of work");
  }
  if (o.samples < 0 || o.epochs < 0 || o.steps < 0) {
    return Invalid("--samples/--epochs/--steps", "must be positive");
  }
  if (!o.tokens.empty()) {
    std::optional<double> t = ParseCount(o.tokens);
    if (!t || !(*t >= 1))
      return Invalid("--tokens", "'" + o.tokens + "' is not a positive count (e.g. 2T, 300B)");
    req.train_tokens = *t;
  } else if (o.samples > 0) {
    const int64_t epochs = o.epochs > 0 ? o.epochs : 1;
    const std::optional<int64_t> tokens = CheckedProduct({o.samples, epochs, req.seq_len});
    if (!tokens || static_cast<double>(*tokens) > kMaxTrainTokens) {
      return Invalid("--samples", std::to_string(o.samples) + " x " + std::to_string(epochs) +
                                      " epochs x seq " + std::to_string(req.seq_len) +
                                      " tokens exceed the limit of " +
                                      StrFormat("%.0e", kMaxTrainTokens) + " training tokens");
    }
    req.train_tokens = static_cast<double>(*tokens);
  } else {
    req.train_steps = o.steps;
  }
  if (!o.global_batch.empty()) {
    Expected<std::vector<int64_t>> b = ParseBatches(o.global_batch);
    if (!b.ok()) return b.status();
    req.global_batch_sizes = std::move(b).value();
  } else {
    const int64_t gbs =
        o.samples > 0
            ? kDefaultFinetuneBatch
            : std::max<int64_t>(1, static_cast<int64_t>(kDefaultPretrainBatchTokens /
                                                        static_cast<double>(req.seq_len)));
    req.global_batch_sizes = {gbs};
    notes->push_back("global batch not given: using " + std::to_string(gbs) + " " +
                     Noun(gbs, "sequence", "sequences") + " (" +
                     (o.samples > 0 ? "a fine-tuning batch of 128, as Stanford Alpaca"
                                    : "4M tokens, as Llama 3 pre-training started") +
                     ")");
  }
  if (o.samples > 0 && o.epochs == 0) notes->push_back("--epochs not given: 1 epoch");

  if (!o.precisions.empty()) {
    req.precisions.clear();
    for (const std::string& p : o.precisions) {
      Precision v;
      if (!ParsePrecision(p, &v))
        return Invalid("--precision", "'" + p + "' (allowed: fp32, tf32, bf16, fp16, fp8, fp4)");
      req.precisions.push_back(v);
    }
  }
  if (o.lora_rank != 0) {
    // The job-spec parser owns the LoRA vocabulary; reuse it through a minimal spec.
    nlohmann::json lora = {{"rank", o.lora_rank}};
    if (!o.lora_targets.empty()) lora["targets"] = o.lora_targets;
    if (!o.lora_base.empty()) lora["base"] = o.lora_base;
    Expected<LoraSpec> parsed =
        ParseLoraSpec(lora, "--lora-rank/--lora-targets/--lora-base", req.precisions.front());
    if (!parsed.ok()) return parsed.status();
    req.lora = parsed.value();
  }
  if (!o.attention.empty()) {
    if (o.attention == "flash") {
      req.attention = AttentionImpl::kFlash;
    } else if (o.attention == "unfused") {
      req.attention = AttentionImpl::kUnfused;
    } else {
      return Invalid("--attention", "'" + o.attention + "' (allowed: flash, unfused)");
    }
  }
  req.dropout = req.model.HasLinearBiases();
  for (Precision p : req.precisions) {
    if (o.grad_reduce_bf16 && !Bf16GradReductionApplies(p)) {
      return Invalid("--grad-reduce-bf16", std::string("needs every --precision to be bf16, fp8 or "
                                                       "fp4; got ") +
                                               std::string(PrecisionName(p)));
    }
  }
  if (o.fp8_param_gather && std::find(req.precisions.begin(), req.precisions.end(),
                                      Precision::kFp8) == req.precisions.end()) {
    return Invalid("--fp8-param-gather", "needs --precision fp8 among the precisions");
  }
  if (o.fp8_param_gather && req.lora.enabled) {
    return Invalid("--fp8-param-gather",
                   "stores trained weights in fp8; with --lora-rank use --lora-base fp8 instead");
  }
  req.grad_reduce_bf16 = o.grad_reduce_bf16;
  req.fp8_param_gather = o.fp8_param_gather;
  if (!o.moe.dispatcher.empty() || o.moe.load_imbalance) {
    if (!req.model.is_moe()) {
      return Invalid(!o.moe.dispatcher.empty() ? "--moe-dispatcher" : "--moe-load-imbalance",
                     "needs a mixture-of-experts model; " + req.model.name + " is dense");
    }
  }
  if (!o.moe.dispatcher.empty() && !ParseMoeDispatcher(o.moe.dispatcher, &req.moe_dispatcher)) {
    return Invalid("--moe-dispatcher", "'" + o.moe.dispatcher + "' (allowed: alltoall, deepep)");
  }
  if (o.moe.load_imbalance) {
    const std::string problem = MoeLoadImbalanceProblem(*o.moe.load_imbalance);
    if (!problem.empty()) return Invalid("--moe-load-imbalance", problem);
    req.moe_load_imbalance = *o.moe.load_imbalance;
  }

  // Hardware.
  if (o.gpus.empty() || (o.gpus.size() == 1 && o.gpus[0] == "all")) {
    req.gpus = db.GpuIds();
  } else {
    req.gpus = o.gpus;
  }
  req.nodes = o.nodes;
  req.min_gpus = o.min_gpus;
  req.max_gpus = o.max_gpus;

  // Prices and constraints.
  req.providers = o.providers;
  req.price_kind = o.spot ? PriceKind::kSpot : PriceKind::kOnDemand;
  for (const std::string& p : o.prices) {
    const auto eq = p.find('=');
    std::optional<double> usd =
        eq == std::string::npos ? std::nullopt : ParseCount(p.substr(eq + 1));
    if (!usd && eq != std::string::npos) {
      // The form is right when the value is a number: then only its range is wrong.
      const std::string value = p.substr(eq + 1);
      char* end = nullptr;
      (void)std::strtod(value.c_str(), &end);
      if (!value.empty() && *end == '\0') {
        return Invalid("--price", p.substr(0, eq) + ": $/GPU-hour must be > 0, got " + value);
      }
    }
    if (!usd)
      return Invalid("--price",
                     "'" + p + "' is not GPU=USD_PER_GPU_HOUR (e.g. h100-sxm5-80gb=2.10)");
    req.price_overrides[p.substr(0, eq)] = *usd;
  }
  if (!o.deadline.empty()) {
    Expected<double> d = ParseDuration(o.deadline, "--deadline");
    if (!d.ok()) return d.status();
    req.deadline_s = d.value();
  }
  if (!o.budget.empty()) {
    std::string b = o.budget;
    if (!b.empty() && b[0] == '$') b.erase(0, 1);
    std::optional<double> usd = ParseCount(b);
    if (!usd || !(*usd > 0))
      return Invalid("--budget",
                     "'" + o.budget + "' is not a positive amount of USD (e.g. 250000 or 250k)");
    req.budget_usd = *usd;
  }
  if (!ParseObjective(o.objective, &req.objective)) {
    return Invalid(
        "--objective",
        "'" + o.objective + "' (allowed: time, cost, cost-under-deadline, time-under-budget)");
  }
  if (!(o.memory_margin >= 0 && o.memory_margin <= kMaxMemoryMargin)) {
    return Invalid("--memory-margin",
                   StrFormat("must be the fraction of each GPU's memory to keep free, in [0, %g], "
                             "got %g",
                             kMaxMemoryMargin, o.memory_margin));
  }
  req.memory_margin = o.memory_margin;
  if (!o.framework.empty()) {
    const FrameworkSpec* stack = db.FindFramework(o.framework);
    if (stack == nullptr) {
      std::string known;
      for (const std::string& id : db.FrameworkIds()) known += (known.empty() ? "" : ", ") + id;
      return Invalid("--framework",
                     "'" + o.framework + "' is not allowed (allowed: " + known + ")");
    }
    req.framework = *stack;
  }
  Expected<std::vector<BandResidual>> residuals = ReadBandResidualsFile(BuiltinBandResidualsPath());
  if (!residuals.ok()) return residuals.status();
  req.band_residuals = std::move(residuals).value();
  if (o.confidence) {
    if (!(*o.confidence >= kMinConfidence && *o.confidence <= kMaxConfidence)) {
      return Invalid("--confidence",
                     StrFormat("must be the probability that a run finishes within what the "
                               "plan is ranked by, in [%g, %g], got %g",
                               kMinConfidence, kMaxConfidence, *o.confidence));
    }
    req.confidence = *o.confidence;
  }
  req.reliability = db.reliability();
  if (o.failure_rate) {
    if (!(*o.failure_rate >= 0 && *o.failure_rate <= kMaxInterruptionsPerGpuHour)) {
      return Invalid("--failure-rate", StrFormat("must be interruptions per GPU-hour in [0, %g]",
                                                 kMaxInterruptionsPerGpuHour));
    }
    req.reliability.interruptions_per_gpu_hour = *o.failure_rate;
  }
  if (o.restart_s) {
    if (!(*o.restart_s >= 0 && *o.restart_s <= kMaxRestartSeconds)) {
      return Invalid("--restart-time",
                     StrFormat("must be a number of seconds in [0, %g]", kMaxRestartSeconds));
    }
    req.reliability.restart_s = *o.restart_s;
  }
  if (o.repair_s) {
    if (!(*o.repair_s >= 0 && *o.repair_s <= kMaxRestartSeconds)) {
      return Invalid("--repair-time",
                     StrFormat("must be a number of seconds in [0, %g]", kMaxRestartSeconds));
    }
    req.reliability.host_repair_s = *o.repair_s;
  }
  if (o.checkpoint_gbps) {
    if (!(*o.checkpoint_gbps > 0 && *o.checkpoint_gbps * 1e9 <= kMaxCheckpointBytesPerS)) {
      return Invalid("--checkpoint-bandwidth", StrFormat("must be a number of GB/s in (0, %g]",
                                                         kMaxCheckpointBytesPerS / 1e9));
    }
    req.reliability.checkpoint_write_bytes_per_s_per_node = *o.checkpoint_gbps * 1e9;
  }
  req.threads = o.threads;
  return req;
}

Status RunPlan(const PlanOptions& o, const GlobalOptions& g) {
  Expected<HardwareDb> db = LoadHardwareDb(g.hardware_db_dirs);
  if (!db.ok()) return db.status();
  std::vector<std::string> notes;
  Expected<PlanRequest> req = BuildRequest(o, *db, &notes);
  if (!req.ok()) return req.status();
  std::optional<ProfileCalibration> cal;
  if (!o.profile_path.empty()) {
    Expected<ProfileCalibration> loaded =
        LoadProfileCalibration(o.profile_path, *db, ProfileUse::kTrainingStacks);
    if (!loaded.ok()) return loaded.status();
    const std::string& id = loaded->rates.gpu_id;
    if (std::find(req->gpus.begin(), req->gpus.end(), id) == req->gpus.end()) {
      return Status::Invalid("--profile: " + o.profile_path + " calibrates " + id +
                             ", which is not among the GPUs searched (--gpu)");
    }
    cal = std::move(loaded).value();
    req->measured = &cal->rates;
    std::string figures;
    for (const FigureSource& f : cal->sources) {
      if (f.from_profile) figures += (figures.empty() ? "" : ", ") + f.figure;
    }
    notes.push_back(id + " timed with measured " + figures + " from " + o.profile_path +
                    "; everything else from the datasheet");
  }
  if (!o.export_format.empty()) {
    const ExporterSpec* exporter = FindExporter(o.export_format);
    if (exporter == nullptr) return NotInTable("--export", o.export_format, Exporters());
    // An export implies its stack: the plan is timed for what the configuration launches.
    const std::string launches(exporter->framework);
    if (!o.framework.empty() && o.framework != launches) {
      return Invalid("--export", "'" + o.export_format + "' launches " + launches +
                                     ", and --framework asks for " + o.framework +
                                     "; drop --framework (the export implies it) or use " +
                                     launches);
    }
    const FrameworkSpec* stack = db->FindFramework(launches);
    if (stack == nullptr) {
      return Invalid("--export", "'" + o.export_format + "' launches " + launches +
                                     ", which the hardware database's frameworks.json lacks");
    }
    req->framework = *stack;
    req->export_format = o.export_format;  // the search keeps to what the format expresses
  }
  Launcher launcher = Launcher::kPerNode;
  if (!o.export_launcher.empty()) {
    const LauncherSpec* spec = FindLauncher(o.export_launcher);
    if (spec == nullptr) return NotInTable("--export-launcher", o.export_launcher, Launchers());
    launcher = spec->launcher;
    GPUPLAN_RETURN_IF_ERROR(
        CheckLauncher(o.export_format, launcher).WithPrefix("--export-launcher"));
  }
  // Output paths are checked before the search, so a typo costs no search and two outputs
  // cannot overwrite each other.
  std::vector<OutputPath> paths = {{"--export-out", o.export_out}};
  if (!o.report_dir.empty()) {
    for (const std::string& name : ReportFileNames()) {
      paths.push_back(
          {"--report (" + name + ")", (std::filesystem::path(o.report_dir) / name).string()});
    }
  }
  GPUPLAN_RETURN_IF_ERROR(CheckDistinctOutputs(paths));
  if (!o.export_out.empty()) GPUPLAN_RETURN_IF_ERROR(CheckOutputPath(o.export_out));
  TerminalProgress bar("searching", "hardware points");  // redrawn in place on a terminal
  const bool show_bar = !o.quiet && isatty(STDERR_FILENO);
  Expected<PlanResult> result = MakePlan(*req, *db, show_bar ? &bar : nullptr);
  if (!result.ok()) return result.status();
  PlanResult& r = result.value();
  for (std::string& n : notes) r.warnings.insert(r.warnings.begin(), "assumed: " + n);
  std::vector<FrameworkComparisonRow> stacks;
  if (o.compare_frameworks) {
    Expected<std::vector<FrameworkComparisonRow>> compared =
        CompareFrameworks(*req, *db, show_bar ? &bar : nullptr);
    if (!compared.ok()) return compared.status();
    stacks = std::move(compared).value();
  }

  std::string exported;
  if (!o.export_format.empty() && r.found) {
    Expected<std::string> e = ExportPlan(r.recommendation, o.export_format, launcher);
    if (!e.ok()) return e.status().WithPrefix("--export " + o.export_format);
    exported = std::move(e).value();
  }
  // The report and the export are written as one set: a failure leaves neither half-done.
  std::vector<std::pair<std::string, std::string>> outputs;
  if (!o.report_dir.empty()) {
    GPUPLAN_RETURN_IF_ERROR(CreateReportDirectory(o.report_dir));
    outputs = ReportFiles(r, o.report_dir);
  }
  if (!o.export_out.empty() && !exported.empty()) outputs.emplace_back(o.export_out, exported);
  std::vector<FileContents> writes;
  for (const auto& [path, content] : outputs) writes.push_back({path, content});
  GPUPLAN_RETURN_IF_ERROR(WriteFilesAtomically(writes));
  // An export without --export-out is the whole of standard output, so `gpuplan plan ...
  // --export megatron > train.sh` writes a runnable file; the report then goes to standard error,
  // also when no plan is found (the file stays empty rather than holding the report).
  const bool export_to_stdout = !o.export_format.empty() && o.export_out.empty() && !o.json;
  std::FILE* report = export_to_stdout ? stderr : stdout;
  if (o.json) {
    nlohmann::json out = PlanResultToJson(r);
    if (!exported.empty()) {
      out["export"] = {{"format", o.export_format},
                       {"launcher", std::string(LauncherName(launcher))},
                       {"content", exported}};
    }
    if (o.compare_frameworks) out["framework_comparison"] = FrameworkComparisonToJson(stacks);
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::fprintf(report, "%s", FormatPlanResultText(r).c_str());
    if (o.compare_frameworks) {
      std::fprintf(report, "%s", FormatFrameworkComparison(stacks, req->framework.id).c_str());
    }
    if (!o.report_dir.empty())
      std::fprintf(report, "\nreport written to %s/\n", o.report_dir.c_str());
    if (!exported.empty() && !o.export_out.empty())
      std::fprintf(report, "%s configuration written to %s\n", o.export_format.c_str(),
                   o.export_out.c_str());
  }
  if (export_to_stdout) std::printf("%s", exported.c_str());
  if (!r.found) {
    return Status::NotFound(std::string("no plan found") +
                            (o.export_format.empty() ? "" : ", so nothing to --export") +
                            " (the report says why)");
  }
  return Status::Ok();
}

}  // namespace

void AttachPlan(CLI::App* sub, const GlobalOptions* global, std::function<Status()>* run) {
  auto o = std::make_shared<PlanOptions>();
  sub->add_option("--model", o->model,
                  "Preset id (gpuplan models), or a HF config.json path or model folder");
  sub->add_option("--tokens", o->tokens, "Tokens to train on, e.g. 2T, 300B");
  CLI::Option* samples =
      sub->add_option("--samples", o->samples, "Training examples (with --epochs; fine-tuning)")
          ->check(PositiveInteger());
  sub->add_option("--epochs", o->epochs, "Passes over --samples (default 1)")
      ->check(PositiveInteger())
      ->needs(samples);
  sub->add_option("--steps", o->steps, "Optimizer steps")->check(PositiveInteger());
  sub->add_option("--seq-len", o->seq_len,
                  "Tokens per sequence (default " + std::to_string(kDefaultSeqLen) + ")")
      ->check(PositiveInteger());
  sub->add_option("--global-batch", o->global_batch,
                  "Sequences per step: N, a list N,M or a power-of-two range LOW:HIGH");
  sub->add_option("--precision", o->precisions, "Precisions to consider (default bf16)")
      ->delimiter(',');
  CLI::Option* lora_rank =
      sub->add_option("--lora-rank", o->lora_rank, "Fine-tune LoRA adapters of this rank")
          ->check(PositiveInteger());
  sub->add_option("--lora-targets", o->lora_targets, "q k v o gate up down | attention | all")
      ->delimiter(',')
      ->needs(lora_rank);
  sub->add_option("--lora-base", o->lora_base,
                  "Frozen base storage: same | bf16 | fp16 | fp8 | nf4 (QLoRA)")
      ->needs(lora_rank);
  sub->add_option("--attention", o->attention, "flash (default) | unfused");
  sub->add_flag("--grad-reduce-bf16", o->grad_reduce_bf16,
                "Every plan accumulates and reduces its main gradients in bf16 (Megatron "
                "--grad-reduce-in-bf16)");
  sub->add_flag("--fp8-param-gather", o->fp8_param_gather,
                "fp8 plans with ZeRO >= 1 store and all-gather the linear weights in fp8 "
                "(Megatron --fp8-param-gather)");
  sub->add_option("--framework", o->framework,
                  "Training stack every plan runs on, an id of frameworks.json (default "
                  "megatron-core): the search keeps to the layouts it can run (docs/PLANNER.md)");
  AddMoeOptions(sub, &o->moe, "Megatron flex dispatcher; searched with etp 1");
  sub->add_option("--profile", o->profile_path,
                  "Measured profile (gpuplan profile) of one of the GPUs: its figures replace "
                  "the datasheet ones for that GPU");
  sub->add_option("--gpu", o->gpus, "GPU ids to consider, comma-separated, or 'all' (default)")
      ->delimiter(',');
  sub->add_option("--node", o->nodes, "Node templates to consider (default: all of each GPU)")
      ->delimiter(',');
  sub->add_option("--min-gpus", o->min_gpus, "Smallest GPU count (default 1)");
  sub->add_option("--max-gpus", o->max_gpus, "Largest GPU count (default 1024)");
  sub->add_option("--provider", o->providers, "Providers to price at (default: all)")
      ->delimiter(',');
  sub->add_flag("--spot", o->spot, "Price spot capacity (with preemptions) instead of on-demand");
  sub->add_option("--price", o->prices, "Override a price: GPU=USD per GPU-hour (repeatable)");
  sub->add_option("--deadline", o->deadline, "Finish within, e.g. 14d, 36h");
  sub->add_option("--budget", o->budget, "Spend at most USD, e.g. 250000 or 250k");
  sub->add_option("--objective", o->objective,
                  "time | cost (default) | cost-under-deadline | time-under-budget");
  sub->add_option("--failure-rate", o->failure_rate,
                  "Job interruptions per GPU-hour (default: Llama 3 405B's 1.97e-5)");
  sub->add_option("--restart-time", o->restart_s, "Seconds from an interruption to training again");
  sub->add_option("--repair-time", o->repair_s,
                  "Seconds to return a failed host (server or rack tray) to service; a "
                  "rack-scale job whose rack has no spare tray waits for it (default: "
                  "reliability.json)");
  sub->add_option("--checkpoint-bandwidth", o->checkpoint_gbps,
                  "Checkpoint write GB/s per node (default: hardware-db reliability.json)");
  sub->add_option("--memory-margin", o->memory_margin,
                  StrFormat("Fraction of each GPU's memory a plan leaves free for what the memory "
                            "model misses (default %g; docs/PLANNER.md)",
                            kDefaultMemoryMargin));
  sub->add_option("--confidence", o->confidence,
                  StrFormat("Rank plans and check --deadline and --budget at this quantile of "
                            "each plan's error band instead of the expected value, in [%g, %g] "
                            "(e.g. 0.9; docs/PLANNER.md)",
                            kMinConfidence, kMaxConfidence));
  sub->add_flag("--compare-frameworks", o->compare_frameworks,
                "Also plan the same request under every training stack of frameworks.json and "
                "print what switching would buy (docs/PLANNER.md)");
  sub->add_option("--threads", o->threads, "Search threads (default: all cores)")
      ->check(CLI::Range(1, 4096));
  sub->add_flag("--json", o->json, "Print the result as JSON (recommendation, pareto, scaling)");
  sub->add_flag("--quiet", o->quiet, "No progress bar");
  sub->add_option("--report", o->report_dir, "Write plan.md, plan.html, plan.json, plans.csv here");
  CLI::Option* format = sub->add_option(
      "--export", o->export_format,
      "Launch configuration of the plan: megatron | deepspeed | torchrun-fsdp | accelerate");
  sub->add_option("--export-out", o->export_out,
                  "Write the --export output to this file (without it, the launch configuration "
                  "alone goes to standard output and the report to standard error)")
      ->needs(format);
  std::string launchers;
  for (const LauncherSpec& l : Launchers()) {
    launchers +=
        (launchers.empty() ? "" : "; ") + std::string(l.name) + ": " + std::string(l.description);
  }
  sub->add_option("--export-launcher", o->export_launcher,
                  "How the exported script starts the job (default per-node). " + launchers)
      ->needs(format);
  sub->callback([o, global, run] { *run = [o, global] { return RunPlan(*o, *global); }; });
}

}  // namespace gpuplan
