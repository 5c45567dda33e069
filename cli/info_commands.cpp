// `gpuplan accuracy`, `gpuplan hardware`, `gpuplan models`.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/file_write.h"
#include "common/json_reader.h"
#include "common/str_format.h"
#include "hardware-db/hardware_db.h"
#include "simulator/accuracy.h"
#include "simulator/cross_validation.h"
#include "simulator/error_band.h"
#include "simulator/layout_sweep.h"
#include "simulator/memory.h"
#include "simulator/presets.h"
#include "simulator/stack_comparison.h"
#include "simulator/sweep_cross_validation.h"
#include "simulator/vtrain_runs.h"

namespace gpuplan {
namespace {

// The files `accuracy --runs` reads, told apart by the name's ending (docs/METRICS.md).
struct RunsFormat {
  const char* suffix;
  Expected<std::vector<PublishedRun>> (*read)(const std::string& path, const HardwareDb& db);
};
constexpr RunsFormat kRunsFormats[] = {
    {".csv", ReadVtrainRunsFile},  // vTrain's ground truth (simulator/vtrain_runs.h)
    {"", ReadPublishedRunsFile},   // published_runs.json's format, whatever the name
};

Expected<std::vector<PublishedRun>> ReadRuns(const std::string& path, const HardwareDb& db) {
  for (const RunsFormat& f : kRunsFormats) {
    if (path.ends_with(f.suffix)) return f.read(path, db);
  }
  return Status::Internal("no runs format for " + path);  // the last entry takes every name
}

Status RunAccuracy(const std::string& path, bool markdown, bool cross_validate,
                   const std::string& residuals_path, const GlobalOptions& g) {
  Expected<HardwareDb> db = LoadHardwareDb(g.hardware_db_dirs);
  if (!db.ok()) return db.status();
  Expected<std::vector<PublishedRun>> runs = ReadRuns(path, *db);
  if (!runs.ok()) return runs.status();
  if (cross_validate) {
    Expected<CrossValidationReport> cv = CrossValidatePublishedRuns(*runs);
    if (!cv.ok()) return Status::Invalid(path + ": " + cv.status().message());
    Expected<std::vector<SweepRow>> sweep =
        ReadLayoutSweepFile(BuiltinCalibrationDir() + "/ultrascale_sweep.csv", *db);
    if (!sweep.ok()) return sweep.status();
    Expected<SweepCrossValidationReport> sweep_cv = CrossValidateSweepByModel(*sweep, *db);
    if (!sweep_cv.ok()) return sweep_cv.status();
    std::vector<BandResidual> residuals = BandResiduals(*cv, *runs);
    for (BandResidual& r : SweepBandResiduals(*sweep_cv, *db)) residuals.push_back(std::move(r));
    Expected<std::vector<PublishedRun>> candidates =
        ReadPublishedRunsFile(BuiltinCandidateRunsPath(), *db);
    if (!candidates.ok()) return candidates.status();
    for (BandResidual& r : CandidateMoeBandResiduals(*candidates))
      residuals.push_back(std::move(r));
    if (!residuals_path.empty()) {
      const Status written =
          WriteFileAtomically(residuals_path, FormatBandResidualsJson(residuals));
      if (!written.ok()) return written;
    }
    // Does the stack help? The same cross-validation with every run on the default stack, and
    // the layout sweep both ways.
    Expected<CrossValidationReport> agnostic = CrossValidatePublishedRuns(OnDefaultStack(*runs));
    if (!agnostic.ok()) return Status::Invalid(path + ": " + agnostic.status().message());
    std::vector<StackComparisonRow> stacks = CompareStackModels(*runs, *cv, *agnostic);
    stacks.push_back(CompareSweepStackModels(*sweep, *sweep_cv, *db));
    std::printf("%s\n%s\n%s\n%s", FormatCrossValidation(*cv, markdown).c_str(),
                FormatSweepCrossValidation(*sweep_cv, markdown).c_str(),
                FormatStackComparison(stacks, markdown).c_str(),
                FormatBandCoverage(CrossValidatedBandCoverage(residuals), markdown).c_str());
    return Status::Ok();
  }
  const AccuracyReport report = EvaluatePublishedRuns(*runs);
  if (markdown) {
    std::printf("%s", FormatAccuracyMarkdown(report).c_str());
    return Status::Ok();
  }
  std::printf("%s", FormatAccuracyTable(report).c_str());
  return Status::Ok();
}

// `gpuplan accuracy --sweep`: the layout-sweep metrics (docs/ACCURACY.md).
// With `rows_path`, also the per-row predictions as CSV (written before the table is printed).
Status RunSweep(const std::string& path, bool markdown, const std::string& rows_path,
                const GlobalOptions& g) {
  Expected<HardwareDb> db = LoadHardwareDb(g.hardware_db_dirs);
  if (!db.ok()) return db.status();
  Expected<std::vector<SweepRow>> rows = ReadLayoutSweepFile(path, *db);
  if (!rows.ok()) return rows.status();
  const SweepReport report = CompareWithLayoutSweep(*rows, *db);
  if (!rows_path.empty()) {
    const Status written = WriteFileAtomically(rows_path, FormatSweepRowsCsv(report));
    if (!written.ok()) return written;
  }
  std::printf("%s", (markdown ? FormatSweepMarkdown(report) : FormatSweepTable(report)).c_str());
  return Status::Ok();
}

// Dense peak TFLOP/s of one precision, one decimal; "-" when the GPU has none.
std::string DenseTflops(const GpuSpec& gpu, Precision p) {
  return gpu.PeakFlops(p) > 0 ? StrFormat("%.1f", gpu.PeakFlops(p) / 1e12) : "-";
}

// The link optimizer offload crosses to host memory, as "c2c 225" or "pcie5 63" (GB/s, one
// direction); "-" for the host device.
std::string HostLink(const GpuSpec& gpu) {
  if (gpu.c2c_bytes_per_s > 0) return StrFormat("c2c %.0f", gpu.c2c_bytes_per_s / 1e9);
  if (gpu.pcie_gen > 0) return StrFormat("pcie%d %.0f", gpu.pcie_gen, gpu.pcie_bytes_per_s / 1e9);
  return "-";
}

// With --sources, the entry's `source` under its row.
void PrintSource(bool sources, const std::string& source) {
  if (sources) std::printf("      source: %s\n", source.c_str());
}

Status RunHardware(bool sources, const GlobalOptions& g) {
  Expected<HardwareDb> db = LoadHardwareDb(g.hardware_db_dirs);
  if (!db.ok()) return db.status();
  std::printf(
      "GPUs (dense TFLOP/s per precision; scale-up GB/s per GPU one way x GPUs of its domain; host "
      "link GB/s one way)\n  %-16s %7s %7s %7s %7s %7s %8s  %-14s %11s %-9s %s\n",
      "id", "bf16", "fp16", "fp8", "fp4", "mem GiB", "HBM TB/s", "scale-up", "GB/s x GPUs",
      "host link", "name");
  for (const auto& [id, gpu] : db->gpus()) {
    const std::string domain =
        gpu.scaleup_bytes_per_s > 0
            ? StrFormat("%.0f x %d", gpu.scaleup_bytes_per_s / 1e9, gpu.scaleup_domain_gpus)
            : "-";
    std::printf(
        "  %-16s %7s %7s %7s %7s %7.1f %8.2f  %-14s %11s %-9s %s\n", id.c_str(),
        DenseTflops(gpu, Precision::kBf16).c_str(), DenseTflops(gpu, Precision::kFp16).c_str(),
        DenseTflops(gpu, Precision::kFp8).c_str(), DenseTflops(gpu, Precision::kFp4).c_str(),
        gpu.memory_bytes / kBytesPerGiB, gpu.memory_bandwidth_bytes_per_s / 1e12,
        gpu.scaleup_kind.c_str(), domain.c_str(), HostLink(gpu).c_str(), gpu.name.c_str());
    PrintSource(sources, gpu.source);
  }
  // latency: one crossing of the fabric; hop: what each further hop of a ring or tree adds
  // (NetworkSpec::hop_latency_s).
  std::printf("\nNetworks\n  %-16s %10s %12s %8s  %s\n", "id", "GB/s/GPU", "latency us", "hop us",
              "name");
  for (const auto& [id, net] : db->networks()) {
    std::printf("  %-16s %10.2f %12.2f %8.2f  %s\n", id.c_str(), net.bytes_per_s_per_gpu / 1e9,
                net.latency_s * 1e6, net.hop_latency_s * 1e6, net.name.c_str());
    PrintSource(sources, net.source);
  }
  std::printf(
      "\nNode templates (gpus: of one scale-up domain, a rack for NVL72; tray: GPUs of one "
      "host)\n  %-16s %-16s %5s %5s %-14s %-13s %9s %11s\n",
      "id", "gpu", "gpus", "tray", "network", "intra-node", "GB/s/GPU", "latency us");
  for (const auto& [id, node] : db->nodes()) {
    std::printf("  %-16s %-16s %5d %5d %-14s %-13s %9.2f %11.2f\n", id.c_str(), node.gpu.c_str(),
                node.gpus_per_node, node.tray_gpus, node.network.c_str(), node.intra_node.c_str(),
                node.intra_node_bytes_per_s / 1e9, node.intra_node_latency_s * 1e6);
    PrintSource(sources, node.source);
  }
  std::printf(
      "\nTraining stacks (frameworks.json)\n  %-18s %13s %12s %13s %12s %9s %5s %-11s %-17s  %s\n",
      "id", "host ms/layer", "+MoE layer", "pp ms/TP rank", "TP ms/node", "max ZeRO", "FSDP",
      "model par.", "Hopper attn.", "name");
  for (const auto& [id, f] : db->frameworks()) {
    std::string dims;
    for (const std::string& d : f.parallel_dims) dims += (dims.empty() ? "" : ",") + d;
    const auto hopper = f.attention_kernels.find("hopper");
    const std::string attention =
        hopper == f.attention_kernels.end()
            ? "reference"
            : StrFormat("%s %.2f", hopper->second.kernel.c_str(), hopper->second.relative_speed);
    std::printf("  %-18s %13.2f %12.2f %13.2f %12.2f %9d %5s %-11s %-17s  %s\n", id.c_str(),
                f.host_seconds_per_layer * 1e3, f.moe_host_seconds_per_layer * 1e3,
                f.pipeline_host_seconds_per_tp_rank * 1e3, f.tp_seconds_per_inter_node_hop * 1e3,
                f.max_zero_stage, f.fsdp ? "yes" : "no", dims.empty() ? "-" : dims.c_str(),
                attention.c_str(),
                (f.name + (f.version.empty() ? "" : " [" + f.version + "]")).c_str());
  }
  return Status::Ok();
}

Status RunModels() {
  std::printf("  %-18s %8s %7s %6s %6s %4s %8s  %s\n", "id", "params", "layers", "hidden", "heads",
              "kv", "vocab", "source");
  for (const ModelPreset& p : ModelPresets()) {
    const ParameterCounts c = CountParameters(p.spec);
    std::printf("  %-18s %7.1fB %7lld %6lld %6lld %4lld %8lld  %s\n", p.id, c.total / 1e9,
                static_cast<long long>(p.spec.num_layers),
                static_cast<long long>(p.spec.hidden_size),
                static_cast<long long>(p.spec.num_attention_heads),
                static_cast<long long>(p.spec.num_kv_heads),
                static_cast<long long>(p.spec.vocab_size), p.source);
  }
  return Status::Ok();
}

}  // namespace

void AttachAccuracy(CLI::App* sub, const GlobalOptions* global, std::function<Status()>* run) {
  auto path = std::make_shared<std::string>(BuiltinCalibrationDir() + "/published_runs.json");
  auto sweep_path = std::make_shared<std::string>();
  auto markdown = std::make_shared<bool>(false);
  auto rows_path = std::make_shared<std::string>();
  CLI::Option* runs =
      sub->add_option("--runs", *path,
                      "Published runs to compare with: a published_runs.json-style file, or one "
                      "of vTrain's ground-truth CSVs (*.csv; formats: "
                      "hardware-db/calibration/README.md); default: the runs shipped with gpuplan "
                      "(published_runs.json)");
  CLI::Option* sweep =
      sub->add_option("--sweep", *sweep_path,
                      "Compare with a measured layout sweep instead (CSV, format: "
                      "hardware-db/calibration/README.md); without FILE: the 1,631 nanotron "
                      "layouts of ultrascale_sweep.csv shipped with gpuplan")
          ->expected(0, 1)
          ->type_name("[FILE]")
          ->excludes(runs);
  auto cross_validate = std::make_shared<bool>(false);
  CLI::Option* cross_validate_flag =
      sub->add_flag("--cross-validate", *cross_validate,
                    "Leave one source out: predict each publication's runs with the calibrated "
                    "constants refitted on the other publications (docs/ACCURACY.md)")
          ->excludes(sweep);
  auto residuals_path = std::make_shared<std::string>();
  sub->add_option("--residuals", *residuals_path,
                  "With --cross-validate: also write every run's cross-validated residual as JSON "
                  "to FILE (the error bands' data, hardware-db/calibration/cv_residuals.json)")
      ->type_name("FILE")
      ->needs(cross_validate_flag);
  sub->add_flag("--markdown", *markdown, "Tables in Markdown (docs/ACCURACY.md)");
  sub->add_option("--rows", *rows_path,
                  "With --sweep: also write every row's prediction (step time and memory by part) "
                  "as CSV to FILE (columns: docs/ACCURACY.md)")
      ->type_name("FILE")
      ->needs(sweep);
  sub->callback([=] {
    if (sweep->count() == 0) {
      *run = [=] {
        return RunAccuracy(*path, *markdown, *cross_validate, *residuals_path, *global);
      };
      return;
    }
    const std::string file =
        sweep_path->empty() ? BuiltinCalibrationDir() + "/ultrascale_sweep.csv" : *sweep_path;
    *run = [=] { return RunSweep(file, *markdown, *rows_path, *global); };
  });
}

void AttachHardware(CLI::App* sub, const GlobalOptions* global, std::function<Status()>* run) {
  auto sources = std::make_shared<bool>(false);
  sub->add_flag("--sources", *sources,
                "Print each GPU's, network's and node template's source under its row");
  sub->callback([=] { *run = [=] { return RunHardware(*sources, *global); }; });
}

void AttachModels(CLI::App* sub, const GlobalOptions*, std::function<Status()>* run) {
  sub->callback([=] { *run = [] { return RunModels(); }; });
}

}  // namespace gpuplan
