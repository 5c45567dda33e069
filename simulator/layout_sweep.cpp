#include "simulator/layout_sweep.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include "common/checked_math.h"
#include "common/csv_table.h"
#include "common/json_reader.h"
#include "common/limits.h"
#include "common/median.h"
#include "common/rank_correlation.h"
#include "common/str_format.h"
#include "simulator/cost_model.h"
#include "simulator/framework.h"
#include "simulator/job_spec_json.h"
#include "simulator/shard.h"

namespace gpuplan {
namespace {

// |predicted - measured| / measured peak memory of a row that ran: what PyTorch's allocator holds
// on rank 0, of the first stage.
double MemoryError(const SweepPrediction& p) {
  return std::abs(p.rank0_allocator_bytes - p.row->measured_memory_bytes) /
         p.row->measured_memory_bytes;
}

}  // namespace

double SweepStallSecondsPerMicroBatch(const SweepPrediction& p) {
  const JobSpec& job = p.row->job;
  const double tokens_per_gpu =
      static_cast<double>(job.training.global_batch_size * job.training.seq_len) /
      static_cast<double>(job.cluster.num_gpus);
  const double micro_batches = static_cast<double>(MicrobatchesPerStep(job));
  return (tokens_per_gpu / p.row->measured_tokens_per_s_per_gpu -
          tokens_per_gpu / p.tokens_per_s_per_gpu) /
         micro_batches;
}

bool SweepZeroTwins(const SweepRow& a, const SweepRow& b) {
  const ParallelSpec& x = a.job.parallel;
  const ParallelSpec& y = b.job.parallel;
  return a.model == b.model && a.nodes == b.nodes && x.zero_stage != y.zero_stage && x.dp == y.dp &&
         x.tp == y.tp && x.pp == y.pp && x.cp == y.cp && x.ep == y.ep &&
         x.sequence_parallel == y.sequence_parallel &&
         a.job.training.micro_batch_size == b.job.training.micro_batch_size &&
         a.job.training.global_batch_size == b.job.training.global_batch_size;
}

double SweepTwinDeparture(const SweepPrediction& a, const SweepPrediction& b) {
  return std::abs(
      std::log(a.row->measured_tokens_per_s_per_gpu / b.row->measured_tokens_per_s_per_gpu) -
      std::log(a.tokens_per_s_per_gpu / b.tokens_per_s_per_gpu));
}

namespace {

// The departures (SweepTwinDeparture) of a group's ZeRO-twin pairs of simulated rows that ran
// (both ratios defined: measured and predicted throughputs positive), each pair once.
std::vector<double> ZeroTwinDepartures(const std::vector<const SweepPrediction*>& group) {
  auto comparable = [](const SweepPrediction* p) {
    return p->expressible && p->row->ran && p->tokens_per_s_per_gpu > 0;
  };
  std::vector<double> departures;
  for (const SweepPrediction* a : group) {
    for (const SweepPrediction* b : group) {
      if (comparable(a) && comparable(b) &&
          a->row->job.parallel.zero_stage < b->row->job.parallel.zero_stage &&
          SweepZeroTwins(*a->row, *b->row)) {
        departures.push_back(SweepTwinDeparture(*a, *b));
      }
    }
  }
  return departures;
}

// Whether a departure exceeds kSweepTwinTolerance either way.
bool TwinOff(double departure) { return departure > std::log1p(kSweepTwinTolerance); }

// Group metrics from its predictions (all of one model and node count); the group's ZeRO-twin
// departures are appended to `twin_departures` (the whole sweep's median is over all of them).
SweepSummary SummarizeGroup(const std::string& label,
                            const std::vector<const SweepPrediction*>& group,
                            std::vector<double>* twin_departures) {
  SweepSummary s;
  s.label = label;
  std::vector<double> predicted, measured, throughput_errors, memory_errors;
  // The fastest simulated row that `eligible` admits, or nullptr.
  auto fastest = [&](bool (SweepPrediction::*eligible)() const) {
    const SweepPrediction* best = nullptr;
    for (const SweepPrediction* p : group) {
      if (p->expressible && (p->*eligible)() &&
          (best == nullptr || p->tokens_per_s_per_gpu > best->tokens_per_s_per_gpu)) {
        best = p;
      }
    }
    return best;
  };
  for (const SweepPrediction* p : group) {
    const SweepRow& row = *p->row;
    s.rows += 1;
    if (row.ran) s.best_measured = std::max(s.best_measured, row.measured_tokens_per_s_per_gpu);
    if (!p->expressible) continue;
    s.simulated += 1;
    if (!row.RunsStatedBatch()) s.off_batch += 1;
    if (!row.ran) {
      s.crashed += 1;
      if (!p->PredictedToRun()) s.crashed_predicted_fail += 1;
      if (p->fits && !p->refusal.empty()) s.crashed_refused += 1;
      continue;
    }
    s.ran += 1;
    if (!p->PredictedToRun()) s.ran_predicted_fail += 1;
    if (SweepStallSecondsPerMicroBatch(*p) >= kSweepStallSeconds) {
      s.stalled += 1;
      if (row.job.parallel.pp > 1) s.stalled_pp += 1;
    }
    // A row predicted to fail is predicted to deliver nothing: it ranks below every row
    // predicted to run, as the planner would never choose it.
    predicted.push_back(p->PredictedToRun() ? p->tokens_per_s_per_gpu : 0.0);
    measured.push_back(row.measured_tokens_per_s_per_gpu);
    throughput_errors.push_back(
        std::abs(p->tokens_per_s_per_gpu - row.measured_tokens_per_s_per_gpu) /
        row.measured_tokens_per_s_per_gpu);
    memory_errors.push_back(MemoryError(*p));
  }
  s.not_expressible = s.rows - s.simulated;
  // Whether a pick ran within 10% of the group's measured best.
  auto within_10pct = [&](const SweepPrediction* p) {
    return p != nullptr && p->row->ran &&
           p->row->measured_tokens_per_s_per_gpu >= 0.9 * s.best_measured;
  };
  if (const SweepPrediction* pick = fastest(&SweepPrediction::PlannerWouldPick)) {
    s.pick_line = pick->row->line;
    s.picks = 1;
    s.pick_measured = pick->row->ran ? pick->row->measured_tokens_per_s_per_gpu : 0;
    s.picks_ran = pick->row->ran ? 1 : 0;
    s.picks_within_10pct = within_10pct(pick) ? 1 : 0;
    for (const SweepPrediction* p : group) {
      if (p->row->ran && SweepZeroTwins(*p->row, *pick->row)) {
        s.pick_twin_line = p->row->line;
        s.pick_twin_measured = p->row->measured_tokens_per_s_per_gpu;
      }
    }
  }
  const std::vector<double> departures = ZeroTwinDepartures(group);
  s.zero_twin_pairs = static_cast<int>(departures.size());
  s.zero_twin_pairs_off =
      static_cast<int>(std::count_if(departures.begin(), departures.end(), TwinOff));
  s.zero_twin_median_departure = Median(departures);
  twin_departures->insert(twin_departures->end(), departures.begin(), departures.end());
  s.unmargined_picks_within_10pct =
      within_10pct(fastest(&SweepPrediction::PlannerCouldPickWithoutMargin)) ? 1 : 0;
  s.spearman = SpearmanCorrelation(predicted, measured);
  s.median_abs_throughput_error = Median(throughput_errors);
  s.median_abs_memory_error = Median(memory_errors);
  return s;
}

// A message as one CSV field: quoted, since it may hold commas, with its double quotes made
// single; empty stays empty.
std::string CsvText(std::string text) {
  if (text.empty()) return text;
  std::replace(text.begin(), text.end(), '"', '\'');
  return "\"" + text + "\"";
}

std::string Percent(double fraction) {
  return std::isnan(fraction) ? "-" : StrFormat("%.1f%%", 100 * fraction);
}
std::string Share(int part, int whole) {
  return whole == 0 ? "-" : StrFormat("%d/%d", part, whole);
}
std::string PickVerdict(const SweepSummary& s, bool overall) {
  if (overall) {
    return StrFormat("%d ran, %d within 10%% of %d", s.picks_ran, s.picks_within_10pct, s.picks);
  }
  if (s.picks == 0) return "none fits";
  if (!s.picks_ran) return StrFormat("line %d crashed", s.pick_line);
  return StrFormat("line %d: %.0f%% of best", s.pick_line, 100 * s.pick_measured / s.best_measured);
}

// The cells of one summary line, shared by both formats.
std::vector<std::string> Cells(const SweepSummary& s, bool overall) {
  return {s.label,
          StrFormat("%d", s.simulated),
          StrFormat("%d", s.not_expressible),
          PickVerdict(s, overall),
          FormatSpearman(s.spearman),
          Percent(s.median_abs_throughput_error),
          Percent(s.median_abs_memory_error),
          Share(s.crashed_predicted_fail, s.crashed),
          Share(s.ran_predicted_fail, s.ran),
          StrFormat("%d (%d)", s.stalled, s.stalled_pp)};
}

constexpr const char* kHeaders[] = {"group",
                                    "simulated",
                                    "not expr.",
                                    "planner's pick",
                                    "Spearman",
                                    "tok/s err",
                                    "memory err",
                                    "crashed: fail predicted",
                                    "ran: fail predicted",
                                    "stalled (pp>1)"};

std::string Assumptions(const SweepReport& report) {
  return "Network between nodes: " + report.network +
         " (the collective busbw the source measured on its cluster at 2-64 nodes; "
         "docs/HARDWARE_DB.md). Stack: nanotron (its memory "
         "traits, docs/COST_MODEL.md). Recomputation: none (nanotron's default). TP "
         "communication overlap: off. Global batch: dp*mbs*grad_acc. Memory: "
         "gpu_mem_gb is GiB of PyTorch's allocator on world rank 0, on the first pipeline stage "
         "(nanotron's log_throughput): compared with that stage's predicted peak less framework_gb "
         "(CUDA context, NCCL buffers). Predicted to fail: the most loaded stage's whole peak "
         "does not fit, or nanotron cannot run the layout (StackRunsLayout). Planner's pick: the "
         "row predicted fastest among those predicted to run with the planner's default memory "
         "margin (" +
         StrFormat("%.0f%%", 100 * kDefaultMemoryMargin) +
         ") free, of the layouts that run the sweep's stated global batch (gbs; " +
         StrFormat("%d simulated %s run another, dp*mbs*grad_acc, and only the pick leaves %s out)",
                   report.overall.off_batch, Noun(report.overall.off_batch, "row", "rows").c_str(),
                   report.overall.off_batch == 1 ? "it" : "them") +
         "; with no margin " +
         StrFormat("%d of %d", report.overall.unmargined_picks_within_10pct, report.overall.picks) +
         " picks are within 10%. "
         "Medians are of absolute errors over rows that ran; "
         "Spearman ranks a row that ran but is predicted to fail last (predicted tokens/s 0); "
         "'all' gives the median Spearman over groups. Stalled: rows that ran slower than "
         "predicted by >= 1 s per micro-batch, (of them with pp > 1); a diagnostic, every "
         "metric keeps them (docs/ACCURACY.md). " +
         StrFormat("%d of the crashed rows predicted to fail fit but nanotron cannot run them.\n",
                   report.overall.crashed_refused);
}

constexpr const char* kTwinHeaders[] = {"group", "ZeRO twins", "median departure", "off by >25%",
                                        "pick's ZeRO twin"};

// The repeatability table's cells of one summary line, shared by both formats.
std::vector<std::string> TwinCells(const SweepSummary& s, bool overall) {
  std::string pick_twin = "-";
  if (!overall) {
    pick_twin = s.pick_twin_line == 0 ? "none ran"
                                      : StrFormat("line %d: %.0f%% of best", s.pick_twin_line,
                                                  100 * s.pick_twin_measured / s.best_measured);
  }
  return {s.label, StrFormat("%d", s.zero_twin_pairs),
          std::isnan(s.zero_twin_median_departure)
              ? "-"
              : StrFormat("%.2f", s.zero_twin_median_departure),
          Share(s.zero_twin_pairs_off, s.zero_twin_pairs), pick_twin};
}

std::string TwinExplanation() {
  return StrFormat(
      "Repeatability: pairs of rows that ran and differ only in their ZeRO stage. The model "
      "predicts each pair's throughput ratio; departure is |ln(measured ratio) - ln(predicted "
      "ratio)|, run-to-run noise plus the model's error on the ZeRO stage alone; off: the two "
      "ratios differ by more than %.0f%%. Pick's ZeRO twin: the row that ran with the planner's "
      "pick's layout at the other ZeRO stage, against the group's best (docs/METRICS.md).\n",
      100 * kSweepTwinTolerance);
}

// Rows of cells as aligned plain text, the columns in `left` left-aligned and the others
// right-aligned.
std::string AlignedTable(const std::vector<std::vector<std::string>>& table,
                         const std::vector<size_t>& left) {
  std::vector<size_t> width(table[0].size(), 0);
  for (const auto& line : table) {
    for (size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
  }
  std::string out;
  for (const auto& line : table) {
    std::string text;
    for (size_t i = 0; i < line.size(); ++i) {
      const std::string pad(width[i] - line[i].size(), ' ');
      const bool left_aligned = std::find(left.begin(), left.end(), i) != left.end();
      text += left_aligned ? line[i] + pad : pad + line[i];
      text += i + 1 < line.size() ? "  " : "";
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  }
  return out;
}

// The same rows as a Markdown table, the first row its header.
std::string MarkdownTable(const std::vector<std::vector<std::string>>& table,
                          const std::vector<size_t>& left) {
  std::string out;
  for (size_t r = 0; r < table.size(); ++r) {
    out += "|";
    for (const std::string& cell : table[r]) out += " " + cell + " |";
    out += "\n";
    if (r > 0) continue;
    out += "|";
    for (size_t i = 0; i < table[r].size(); ++i) {
      out += std::find(left.begin(), left.end(), i) != left.end() ? "---|" : "---:|";
    }
    out += "\n";
  }
  return out;
}

// A header and one line per group and one for the whole sweep, from `cells` (Cells, TwinCells).
template <size_t N>
std::vector<std::vector<std::string>> SummaryRows(
    const SweepReport& report, const char* const (&headers)[N],
    std::vector<std::string> (*cells)(const SweepSummary&, bool)) {
  std::vector<std::vector<std::string>> table;
  table.emplace_back(std::begin(headers), std::end(headers));
  for (const SweepSummary& s : report.groups) table.push_back(cells(s, false));
  table.push_back(cells(report.overall, true));
  return table;
}

// Labels and verdicts left-aligned, numbers right-aligned.
const std::vector<size_t> kLeftColumns = {0, 3};
const std::vector<size_t> kTwinLeftColumns = {0, 4};

}  // namespace

Expected<std::vector<SweepRow>> ParseLayoutSweep(const std::string& text, const std::string& origin,
                                                 const HardwareDb& db) {
  const FrameworkSpec* nanotron = db.FindFramework(kSweepFrameworkId);
  if (db.FindGpu(kSweepGpuId) == nullptr || db.FindNetwork(kSweepNetworkId) == nullptr ||
      nanotron == nullptr) {
    return Status::Invalid(origin + ": the hardware database needs GPU '" +
                           std::string(kSweepGpuId) + "', network '" + kSweepNetworkId +
                           "' and framework '" + kSweepFrameworkId + "' for the sweep's cluster");
  }
  // The columns read; others (params, mfu_pct, tokens_per_s, ...) are ignored, and `gbs` is read
  // when present (SweepRow::stated_global_batch).
  Expected<CsvTable> table = ParseCsvTable(text, origin,
                                           {"model",
                                            "num_layers",
                                            "hidden",
                                            "heads",
                                            "kv_heads",
                                            "ffn_hidden",
                                            "vocab",
                                            "tied_embeddings",
                                            "seq_len",
                                            "gpu",
                                            "gpus_per_node",
                                            "nodes",
                                            "gpus",
                                            "dp",
                                            "tp",
                                            "pp",
                                            "cp",
                                            "ep",
                                            "zero_stage",
                                            "mbs",
                                            "grad_acc",
                                            "tp_mode",
                                            "precision",
                                            "pp_schedule",
                                            "tokens_per_s_per_gpu",
                                            "gpu_mem_gb",
                                            "status"},
                                           "the sweep's CSV");
  if (!table.ok()) return table.status();
  std::vector<SweepRow> rows;
  for (const CsvLine& line : table->rows) {
    CsvRowReader r(*table, line, origin);
    SweepRow row;
    row.line = line.number;
    row.model = std::string(r.Text("model"));
    row.nodes = r.PositiveInt("nodes");
    ModelSpec& m = row.job.model;
    m.name = row.model;
    m.num_layers = r.PositiveInt("num_layers");
    m.hidden_size = r.PositiveInt("hidden");
    m.num_attention_heads = r.PositiveInt("heads");
    m.num_kv_heads = r.PositiveInt("kv_heads");
    m.ffn_hidden_size = r.PositiveInt("ffn_hidden");
    m.vocab_size = r.PositiveInt("vocab");
    m.mlp = MlpKind::kSwiGlu;  // Llama-style (hardware-db/calibration/README.md)
    m.tied_embeddings = r.OneOf("tied_embeddings", {"False", "True"}) == 1;
    r.OneOf("gpu", {kSweepGpuName});
    ClusterSpec& c = row.job.cluster;
    c.gpu = kSweepGpuId;
    c.gpus_per_node = r.PositiveInt("gpus_per_node");
    c.num_gpus = r.PositiveInt("gpus");
    c.inter_node = kSweepNetworkId;
    ParallelSpec& p = row.job.parallel;
    p.dp = r.PositiveInt("dp");
    p.tp = r.PositiveInt("tp");
    p.pp = r.PositiveInt("pp");
    p.cp = r.PositiveInt("cp");
    p.ep = r.PositiveInt("ep");
    p.zero_stage = static_cast<int>(r.OneOf("zero_stage", {"0", "1"}));
    p.sequence_parallel = r.OneOf("tp_mode", {"ALL_REDUCE", "REDUCE_SCATTER(SP)"}) == 1;
    r.OneOf("pp_schedule", {"1F1B"});
    p.schedule = Schedule::k1F1B;
    TrainingSpec& t = row.job.training;
    t.seq_len = r.PositiveInt("seq_len");
    t.micro_batch_size = r.PositiveInt("mbs");
    const int64_t grad_acc = r.PositiveInt("grad_acc");
    const std::optional<int64_t> global_batch =
        CheckedProduct({p.dp, t.micro_batch_size, grad_acc});
    if (!global_batch) {
      r.Fail("grad_acc", "dp*mbs*grad_acc does not fit a 64-bit integer", r.Text("grad_acc"));
    }
    t.global_batch_size = global_batch.value_or(0);
    if (table->index.contains("gbs")) row.stated_global_batch = r.PositiveInt("gbs");
    const std::string_view precision = r.Text("precision");
    if (!ParsePrecision(precision, &t.precision)) {
      r.Fail("precision", "must be fp32, tf32, bf16, fp16, fp8 or fp4", precision);
    }
    t.recompute = Recompute::kNone;
    t.framework = *nanotron;
    ApplyStackPipelineSplit(&row.job);  // nanotron's cost-balanced stages
    row.ran = r.OneOf("status", {"crashed_or_oom", "ok"}) == 1;
    row.measured_tokens_per_s_per_gpu = r.OptionalNumber("tokens_per_s_per_gpu", kMaxMeasurement);
    // gpu_mem_gb is GiB: nanotron's log_throughput (helpers.py) divides PyTorch's byte counts by
    // 1024**3.
    row.measured_memory_bytes = r.OptionalNumber("gpu_mem_gb", kMaxMeasurement) * kBytesPerGiB;
    const std::string at_least =
        "must be positive (at least " + StrFormat("%g", kMinMeasurement) + ") when status is ok";
    if (row.ran && !(row.measured_tokens_per_s_per_gpu >= kMinMeasurement)) {
      r.Fail("tokens_per_s_per_gpu", at_least, r.Text("tokens_per_s_per_gpu"));
    }
    if (row.ran && !(row.measured_memory_bytes >= kMinMeasurement * kBytesPerGiB)) {
      r.Fail("gpu_mem_gb", at_least, r.Text("gpu_mem_gb"));
    }
    if (!r.status().ok()) return r.status();
    rows.push_back(std::move(row));
  }
  return rows;
}

Expected<std::vector<SweepRow>> ReadLayoutSweepFile(const std::string& path, const HardwareDb& db) {
  // ReadInputFile: a regular file of at most kMaxInputFileBytes (a FIFO or device never blocks).
  Expected<std::string> text = ReadInputFile(path, kMaxInputFileBytes);
  if (!text.ok()) return text.status();
  return ParseLayoutSweep(*text, path, db);
}

SweepReport CompareWithLayoutSweep(const std::vector<SweepRow>& rows, const HardwareDb& db) {
  SweepReport report;
  std::map<std::pair<std::string, int64_t>, std::vector<size_t>> groups;
  std::map<std::string, int> reasons;
  report.rows.reserve(rows.size());
  for (const SweepRow& row : rows) {
    SweepPrediction p;
    p.row = &row;
    report.network = row.job.cluster.inter_node;
    const Status valid = ValidateJob(row.job, db);
    p.expressible = valid.ok();
    if (!valid.ok()) {
      p.reason = valid.message();
      reasons[p.reason] += 1;
    } else {
      const StepResult r = EvaluateStep(row.job, *db.FindGpu(row.job.cluster.gpu),
                                        *db.FindNetwork(row.job.cluster.inter_node));
      p.tokens_per_s_per_gpu = r.tokens_per_s_per_gpu;
      p.fits = r.memory.fits;
      p.fits_with_margin = FitsWithMargin(r.memory, kDefaultMemoryMargin);
      const Status runs = StackRunsLayout(row.job);
      if (!runs.ok()) p.refusal = runs.message();
      p.peak_bytes = r.memory.peak_bytes;
      p.time_s = r.breakdown_s;
      p.rank0_memory = StageMemory(row.job, *db.FindGpu(row.job.cluster.gpu), 0);
      p.rank0_allocator_bytes = p.rank0_memory.peak_bytes - BytesOutsideAllocator(row.job);
    }
    groups[{row.model, row.nodes}].push_back(report.rows.size());
    report.rows.push_back(std::move(p));
  }
  SweepSummary& all = report.overall;
  all.label = "all";
  std::vector<double> rhos, throughput_errors, memory_errors, twin_departures;
  for (const auto& [key, indices] : groups) {
    std::vector<const SweepPrediction*> members;
    for (size_t i : indices) members.push_back(&report.rows[i]);
    const SweepSummary s = SummarizeGroup(
        StrFormat("%s x %lld %s", key.first.c_str(), static_cast<long long>(key.second),
                  Noun(key.second, "node", "nodes").c_str()),
        members, &twin_departures);
    all.rows += s.rows;
    all.simulated += s.simulated;
    all.not_expressible += s.not_expressible;
    all.ran += s.ran;
    all.crashed += s.crashed;
    all.picks += s.picks;
    all.picks_ran += s.picks_ran;
    all.picks_within_10pct += s.picks_within_10pct;
    all.unmargined_picks_within_10pct += s.unmargined_picks_within_10pct;
    all.crashed_predicted_fail += s.crashed_predicted_fail;
    all.ran_predicted_fail += s.ran_predicted_fail;
    all.crashed_refused += s.crashed_refused;
    all.stalled += s.stalled;
    all.stalled_pp += s.stalled_pp;
    all.off_batch += s.off_batch;
    all.zero_twin_pairs += s.zero_twin_pairs;
    all.zero_twin_pairs_off += s.zero_twin_pairs_off;
    if (!std::isnan(s.spearman)) rhos.push_back(s.spearman);
    report.groups.push_back(s);
  }
  for (const SweepPrediction& p : report.rows) {
    if (!p.expressible || !p.row->ran) continue;
    throughput_errors.push_back(
        std::abs(p.tokens_per_s_per_gpu - p.row->measured_tokens_per_s_per_gpu) /
        p.row->measured_tokens_per_s_per_gpu);
    memory_errors.push_back(MemoryError(p));
  }
  all.spearman = Median(rhos);
  all.median_abs_throughput_error = Median(throughput_errors);
  all.median_abs_memory_error = Median(memory_errors);
  all.zero_twin_median_departure = Median(twin_departures);
  report.reasons.assign(reasons.begin(), reasons.end());
  std::stable_sort(report.reasons.begin(), report.reasons.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return report;
}

std::string FormatSweepTable(const SweepReport& report) {
  std::string out = AlignedTable(SummaryRows(report, kHeaders, Cells), kLeftColumns);
  out += "\n" + Assumptions(report);
  for (const auto& [reason, count] : report.reasons) {
    out += StrFormat("Not expressible (%d): %s\n", count, reason.c_str());
  }
  out += "\n" + AlignedTable(SummaryRows(report, kTwinHeaders, TwinCells), kTwinLeftColumns);
  return out + "\n" + TwinExplanation();
}

std::string FormatSweepMarkdown(const SweepReport& report) {
  std::string out = MarkdownTable(SummaryRows(report, kHeaders, Cells), kLeftColumns);
  out += "\n" + Assumptions(report);
  if (!report.reasons.empty()) {
    out += "\n| not expressible | rows |\n|---|---:|\n";
    for (const auto& [reason, count] : report.reasons) {
      out += StrFormat("| %s | %d |\n", reason.c_str(), count);
    }
  }
  out += "\n" + MarkdownTable(SummaryRows(report, kTwinHeaders, TwinCells), kTwinLeftColumns);
  return out + "\n" + TwinExplanation();
}

std::string FormatSweepRowsCsv(const SweepReport& report) {
  std::string out =
      "line,model,nodes,dp,tp,pp,mbs,grad_acc,zero_stage,sp,status,measured_tokens_per_s_per_gpu,"
      "predicted_tokens_per_s_per_gpu,measured_memory_gb,predicted_memory_gb,predicted_peak_gb,"
      "predicted_fits,"
      "step_s,compute_s,tp_comm_s,cp_comm_s,pp_comm_s,dp_comm_s,ep_comm_s,bubble_s,optimizer_s,"
      "weights_gb,grads_gb,"
      "optimizer_gb,activations_gb,logits_gb,overhead_gb,stack_refusal,not_expressible\n";
  for (const SweepPrediction& p : report.rows) {
    const SweepRow& r = *p.row;
    const ParallelSpec& par = r.job.parallel;
    out +=
        StrFormat("%d,%s,%lld,%lld,%lld,%lld,%lld,%lld,%d,%d,%s,", r.line, r.model.c_str(),
                  static_cast<long long>(r.nodes), static_cast<long long>(par.dp),
                  static_cast<long long>(par.tp), static_cast<long long>(par.pp),
                  static_cast<long long>(r.job.training.micro_batch_size),
                  static_cast<long long>(r.job.training.global_batch_size /
                                         (par.dp * r.job.training.micro_batch_size)),
                  par.zero_stage, par.sequence_parallel ? 1 : 0, r.ran ? "ok" : "crashed_or_oom");
    out += r.ran ? StrFormat("%.0f,", r.measured_tokens_per_s_per_gpu) : ",";
    out += p.expressible ? StrFormat("%.0f,", p.tokens_per_s_per_gpu) : ",";
    out += r.ran ? StrFormat("%.1f,", r.measured_memory_bytes / 1e9) : ",";
    if (!p.expressible) {
      out += ",,,,,,,,,,,,,,,,,,," + CsvText(p.reason) + "\n";
      continue;
    }
    const TimeBreakdown& t = p.time_s;
    const MemoryBreakdown& m = p.rank0_memory;
    out += StrFormat(
        "%.1f,%.1f,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.2f,%.2f,%.2f,"
        "%.2f,%.2f,%.2f,",
        p.rank0_allocator_bytes / 1e9, p.peak_bytes / 1e9, p.fits ? 1 : 0, t.Total(), t.compute,
        t.tp_comm, t.cp_comm, t.pp_comm, t.dp_comm, t.ep_comm, t.bubble, t.optimizer,
        m.weights_bytes / 1e9, m.grads_bytes / 1e9, m.optimizer_bytes / 1e9,
        m.activations_bytes / 1e9, m.logits_bytes / 1e9, m.overhead_bytes / 1e9);
    out += CsvText(p.refusal) + ",\n";
  }
  return out;
}

}  // namespace gpuplan
