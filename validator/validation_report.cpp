#include "validator/validation_report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>

#include "common/json_reader.h"
#include "common/limits.h"
#include "common/str_format.h"
#include "profiler/cpu_backends.h"
#include "simulator/job_spec_json.h"

namespace gpuplan {
namespace {

using nlohmann::json;

// TimeBreakdown's fields by name: the one table the JSON, Markdown and calibrate use.
struct PhaseField {
  const char* name;
  double TimeBreakdown::*field;
};
constexpr std::array<PhaseField, 8> kPhases = {{{"compute", &TimeBreakdown::compute},
                                                {"tp_comm", &TimeBreakdown::tp_comm},
                                                {"cp_comm", &TimeBreakdown::cp_comm},
                                                {"pp_comm", &TimeBreakdown::pp_comm},
                                                {"dp_comm", &TimeBreakdown::dp_comm},
                                                {"ep_comm", &TimeBreakdown::ep_comm},
                                                {"bubble", &TimeBreakdown::bubble},
                                                {"optimizer", &TimeBreakdown::optimizer}}};

json PhasesToJson(const TimeBreakdown& t) {
  json j = json::object();
  for (const PhaseField& f : kPhases) j[f.name] = t.*f.field;
  return j;
}

Status PhasesFromJson(const json* j, const std::string& context, TimeBreakdown* out) {
  if (j == nullptr) return Status::Ok();
  JsonObjectReader r(*j, context);
  r.RejectUnknownFields(
      {"compute", "tp_comm", "cp_comm", "pp_comm", "dp_comm", "ep_comm", "bubble", "optimizer"});
  for (const PhaseField& f : kPhases) (*out).*f.field = r.OptionalNonNegativeNumber(f.name, 0);
  return r.status();
}

double Error(double predicted, double measured) {
  return measured > 0 ? (predicted - measured) / measured : 0.0;
}

}  // namespace

std::string_view ValidationModeName(ValidationMode mode) {
  return mode == ValidationMode::kFull ? "full" : "rank_replay";
}

double ValidationReport::MeasuredStepSeconds() const {
  if (step_seconds.empty()) return 0;
  std::vector<double> sorted = step_seconds;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

double ValidationReport::StepError() const {
  return Error(predicted_step_s, MeasuredStepSeconds());
}

double ValidationReport::MemoryError() const {
  return Error(predicted_peak_memory_bytes, measured_peak_memory_bytes);
}

ValidationTargets TargetsFor(const JobSpec& job) {
  if (job.cluster.gpu == kCpuDeviceId) return {0.25, 0.10};
  return {0.10, 0.05};
}

bool ValidationReport::MeetsTargets() const {
  const ValidationTargets t = TargetsFor(job);
  return std::abs(StepError()) <= t.step_time && std::abs(MemoryError()) <= t.peak_memory;
}

json ValidationReportToJson(const ValidationReport& r) {
  json j = {{"format", kValidationReportFormat}, {"version", kValidationReportVersion}};
  auto put = [&j](const char* key, const std::string& value) {
    if (!value.empty()) j[key] = value;
  };
  put("created_utc", r.created_utc);
  put("tool", r.tool);
  put("host", r.host);
  put("device", r.device);
  put("profile", r.profile);
  j["mode"] = ValidationModeName(r.mode);
  if (r.mode == ValidationMode::kRankReplay) j["replayed_rank"] = r.replayed_rank;
  j["job"] = JobSpecToJson(r.job);
  j["warmup_steps"] = r.warmup_steps;
  j["step_seconds"] = r.step_seconds;
  j["predicted"] = {{"step_s", r.predicted_step_s},
                    {"peak_memory_bytes", r.predicted_peak_memory_bytes},
                    {"phases", PhasesToJson(r.phases.predicted)}};
  j["measured"] = {{"step_s", r.MeasuredStepSeconds()},
                   {"peak_memory_bytes", r.measured_peak_memory_bytes},
                   {"phases", PhasesToJson(r.phases.measured)}};
  j["errors"] = {{"step_time", r.StepError()}, {"peak_memory", r.MemoryError()}};
  j["notes"] = r.notes;
  return j;
}

Expected<ValidationReport> ValidationReportFromJson(const json& root, const std::string& origin,
                                                    const HardwareDb& db) {
  JsonObjectReader r(root, origin);
  r.RejectUnknownFields({"format", "version", "created_utc", "tool", "host", "device", "profile",
                         "mode", "replayed_rank", "job", "warmup_steps", "step_seconds",
                         "predicted", "measured", "errors", "notes"});
  ValidationReport v;
  const std::string format = r.String("format");
  if (r.status().ok() && format != kValidationReportFormat) {
    r.Fail("format",
           "must be \"" + std::string(kValidationReportFormat) + "\", got \"" + format + "\"");
  }
  const int64_t version = r.PositiveInt("version");
  if (r.status().ok() && version != kValidationReportVersion) {
    r.Fail("version", "this gpuplan reads validation report version " +
                          std::to_string(kValidationReportVersion) + ", the file is version " +
                          std::to_string(version));
  }
  v.created_utc = r.OptionalString("created_utc", "");
  v.tool = r.OptionalString("tool", "");
  v.host = r.OptionalString("host", "");
  v.device = r.OptionalString("device", "");
  v.profile = r.OptionalString("profile", "");
  const std::string mode = r.Enum("mode", {"full", "rank_replay"});
  v.mode = mode == "rank_replay" ? ValidationMode::kRankReplay : ValidationMode::kFull;
  if (v.mode == ValidationMode::kRankReplay) {
    if (!r.Has("replayed_rank")) r.Fail("replayed_rank", "is required with mode rank_replay");
    v.replayed_rank = r.OptionalNonNegativeInt("replayed_rank", 0);
  }
  v.warmup_steps = r.OptionalNonNegativeInt("warmup_steps", 0);
  v.notes = r.OptionalStringList("notes");
  const json* job = r.Object("job");
  const json* predicted = r.Object("predicted");
  const json* measured = r.Object("measured");
  GPUPLAN_RETURN_IF_ERROR(r.status());

  const auto steps = root.find("step_seconds");
  if (steps == root.end() || !steps->is_array() || steps->empty()) {
    return Status::Invalid(origin +
                           ": field 'step_seconds': must be a non-empty array of "
                           "seconds");
  }
  for (size_t i = 0; i < steps->size(); ++i) {
    const json& s = (*steps)[i];
    // A step shorter than a nanosecond is not a measurement, and the errors divided by it would
    // be infinite.
    if (!s.is_number() || !(s.get<double>() >= 1e-9) || !std::isfinite(s.get<double>())) {
      return Status::Invalid(origin + ": field 'step_seconds'[" + std::to_string(i) +
                             "]: must be a number of seconds, at least 1e-9, got " +
                             DescribeJson(s));
    }
    v.step_seconds.push_back(s.get<double>());
  }
  // A relative {"hf_config": path} resolves against the report's folder, as a spec file's does.
  Expected<JobSpec> spec = ParseJobSpec(*job, origin + ": job",
                                        std::filesystem::path(origin).parent_path().string(), db);
  if (!spec.ok()) return spec.status();
  v.job = *spec;
  if (v.mode == ValidationMode::kRankReplay) {
    const int64_t world = v.job.cluster.num_gpus;
    if (v.replayed_rank >= world) {
      return Status::Invalid(origin +
                             ": field 'replayed_rank': " + std::to_string(v.replayed_rank) +
                             " is not a rank of the job (0.." + std::to_string(world - 1) + ")");
    }
  }

  JsonObjectReader pr(*predicted, origin + ": predicted");
  pr.RejectUnknownFields({"step_s", "peak_memory_bytes", "phases"});
  v.predicted_step_s = pr.PositiveNumber("step_s");
  // Peaks from a byte to kMaxDeviceMemoryBytes, so that the errors built on them stay finite.
  v.predicted_peak_memory_bytes =
      pr.ScaledNumber("peak_memory_bytes", 1.0, 1.0, kMaxDeviceMemoryBytes);
  const json* pp = pr.OptionalObject("phases");
  GPUPLAN_RETURN_IF_ERROR(pr.status());
  GPUPLAN_RETURN_IF_ERROR(PhasesFromJson(pp, origin + ": predicted.phases", &v.phases.predicted));

  JsonObjectReader mr(*measured, origin + ": measured");
  mr.RejectUnknownFields({"step_s", "peak_memory_bytes", "phases"});
  v.measured_peak_memory_bytes =
      mr.ScaledNumber("peak_memory_bytes", 1.0, 1.0, kMaxDeviceMemoryBytes);
  // The step time is derived from step_seconds (MeasuredStepSeconds, their median) when read
  // back; a value that is there (null counts as absent) must be that median, not a string, a
  // negative number or an edited figure that calibrate would silently ignore.
  const double step_s = mr.OptionalPositiveNumber("step_s", 0);
  const json* mp = mr.OptionalObject("phases");
  GPUPLAN_RETURN_IF_ERROR(mr.status());
  const double median = v.MeasuredStepSeconds();
  if (step_s > 0 && std::abs(step_s - median) > 1e-9 * median) {
    return Status::Invalid(StrFormat(
        "%s: measured: field 'step_s': %.9g s is not the median of step_seconds (%.9g s), "
        "from which the measured step time is taken; remove it or make the two agree",
        origin.c_str(), step_s, median));
  }
  GPUPLAN_RETURN_IF_ERROR(PhasesFromJson(mp, origin + ": measured.phases", &v.phases.measured));
  return v;
}

Expected<ValidationReport> ReadValidationReport(const std::string& path, const HardwareDb& db) {
  Expected<json> j = ReadJsonFile(path);
  if (!j.ok()) return j.status();
  return ValidationReportFromJson(*j, path, db);
}

std::string ValidationReportMarkdown(const ValidationReport& r) {
  const JobSpec& job = r.job;
  const ParallelSpec& p = job.parallel;
  std::string out = "# Validation: " + job.model.name + " on " +
                    std::to_string(job.cluster.num_gpus) + " x " + job.cluster.gpu + "\n\n";
  out += StrFormat(
      "Layout tp %lld, cp %lld, dp %lld, pp %lld (vpp %lld), ep %lld; micro-batch "
      "%lld, global batch %lld, sequence %lld.\n\n",
      static_cast<long long>(p.tp), static_cast<long long>(p.cp), static_cast<long long>(p.dp),
      static_cast<long long>(p.pp), static_cast<long long>(p.vpp), static_cast<long long>(p.ep),
      static_cast<long long>(job.training.micro_batch_size),
      static_cast<long long>(job.training.global_batch_size),
      static_cast<long long>(job.training.seq_len));
  out += "Run: " +
         std::string(r.mode == ValidationMode::kFull
                         ? "every rank its own process on its own device, real collectives"
                         : "rank replay of rank " + std::to_string(r.replayed_rank) +
                               ": its compute alone on this host, its communication at the "
                               "modelled times") +
         "; device " + (r.device.empty() ? "?" : r.device) + ", " +
         (r.profile.empty() ? "datasheet rates" : "profile " + r.profile) + ", " +
         StrFormat("%lld warm-up and %zu measured steps", static_cast<long long>(r.warmup_steps),
                   r.step_seconds.size()) +
         (r.created_utc.empty() ? "" : ", " + r.created_utc) + ".\n\n";
  out += "| | predicted | measured | error | target |\n|---|---:|---:|---:|---|\n";
  const ValidationTargets targets = TargetsFor(r.job);
  out += StrFormat("| step time | %.4f s | %.4f s | %+.1f%% | within %.0f%%: %s |\n",
                   r.predicted_step_s, r.MeasuredStepSeconds(), 100 * r.StepError(),
                   100 * targets.step_time,
                   std::abs(r.StepError()) <= targets.step_time ? "met" : "missed");
  out += StrFormat("| peak memory | %.2f GB | %.2f GB | %+.1f%% | within %.0f%%: %s |\n\n",
                   r.predicted_peak_memory_bytes / 1e9, r.measured_peak_memory_bytes / 1e9,
                   100 * r.MemoryError(), 100 * targets.peak_memory,
                   std::abs(r.MemoryError()) <= targets.peak_memory ? "met" : "missed");
  out += "| phase | predicted (s) | measured (s) |\n|---|---:|---:|\n";
  for (const PhaseField& f : kPhases) {
    const double pr = r.phases.predicted.*f.field, me = r.phases.measured.*f.field;
    if (pr == 0 && me == 0) continue;
    out += StrFormat("| %s | %.4f | %.4f |\n", f.name, pr, me);
  }
  out += "\nMeasured steps (s):";
  for (double s : r.step_seconds) out += StrFormat(" %.4f", s);
  out += "\n";
  if (!r.notes.empty()) {
    out += "\nNotes:\n";
    for (const std::string& n : r.notes) out += "- " + n + "\n";
  }
  return out;
}

}  // namespace gpuplan
