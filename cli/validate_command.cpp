// `gpuplan validate`: run a plan on GPUs and compare with the prediction; --dry-run prints what
// would run (process layout, communicators, each rank's op sequence) without a GPU; --show
// prints a validation report. `gpuplan calibrate`: fit a profile's corrections to reports.
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "common/str_format.h"
#include "profiler/gpu_probe.h"
#include "validator/calibrate.h"
#include "validator/dry_run.h"
#include "validator/rank_layout.h"

namespace gpuplan {
namespace {

struct ValidateOptions {
  std::string plan;
  std::string show;
  bool dry_run = false;
  bool json = false;
  std::vector<int64_t> ranks;
};

constexpr const char* kDryRunHint =
    "`gpuplan validate --plan FILE --dry-run` prints the process layout, the communicators and "
    "each rank's op sequence without a GPU";

// What running a plan on GPUs needs and what this build has of it, one line each, then what
// works instead. GPUPLAN_BUILT_WITH_CUDA comes from the build (cli/CMakeLists.txt); NCCL is
// linked whenever CUDA is (profiler/CMakeLists.txt).
std::string MissingForValidation() {
  std::string cuda = "not compiled in (configured with GPUPLAN_CUDA=OFF or without a CUDA toolkit)";
  std::string nccl = "not compiled in (it comes with CUDA)";
  std::string gpus = "not looked for (no CUDA)";
  if (GPUPLAN_BUILT_WITH_CUDA) {
    std::unique_ptr<GpuProbe> probe = MakeSystemGpuProbe();
    const SoftwareVersions v = probe->Versions();
    cuda = "compiled in (" + probe->VersionString() + ")";
    nccl = "compiled in (" + (v.nccl.empty() ? std::string("version unknown") : "NCCL " + v.nccl) +
           ")";
    Expected<std::vector<GpuDeviceInfo>> devices = probe->ListDevices();
    if (!devices.ok()) {
      gpus = "none usable: " + devices.status().message();
    } else {
      gpus = std::to_string(devices->size()) + " found";
      for (const GpuDeviceInfo& d : *devices)
        gpus += (&d == &devices->front() ? ": " : ", ") + d.name;
    }
  }
  return "validate runs a plan's ranks on GPUs; this build cannot:\n"
         "  executor  not built: nothing launches a plan's ranks yet (a later issue; "
         "docs/VALIDATION.md)\n"
         "  CUDA      " +
         cuda + "\n" + "  NCCL      " + nccl + "\n" + "  GPUs      " + gpus + "\n" +
         "What works: " + kDryRunHint + ".\n";
}

Status RunValidate(const ValidateOptions& o, const GlobalOptions& g) {
  Expected<HardwareDb> db = LoadHardwareDb(g.hardware_db_dirs);
  if (!db.ok()) return db.status();
  if (!o.show.empty()) {
    Expected<ValidationReport> report = ReadValidationReport(o.show, *db);
    if (!report.ok()) return report.status();
    std::printf("%s", ValidationReportMarkdown(*report).c_str());
    return Status::Ok();
  }
  if (o.plan.empty()) return Status::Invalid("--plan: required (or --show REPORT)");
  Expected<JobSpec> job = ReadValidationJob(o.plan, *db);
  if (!job.ok()) return job.status();
  const RankLayout layout = MakeRankLayout(*job);
  std::vector<int64_t> ranks = o.ranks.empty() ? RepresentativeRanks(*job) : o.ranks;
  for (int64_t r : ranks) {
    if (r < 0 || r >= layout.world_size) {
      return Status::Invalid("--rank: " + std::to_string(r) + " is not a rank of this plan (0.." +
                             std::to_string(layout.world_size - 1) + ")");
    }
  }
  if (!o.dry_run) {
    std::fprintf(stderr, "%s", MissingForValidation().c_str());
    return Status::Unavailable(
        "cannot validate on GPUs: this build has no executor for running plans; --dry-run works");
  }
  GPUPLAN_RETURN_IF_ERROR(CheckDryRunSize(*job, ranks));
  if (o.json) {
    std::printf("%s\n", DryRunToJson(*job, layout, ranks)
                            .dump(1, ' ', false, nlohmann::json::error_handler_t::replace)
                            .c_str());
  } else {
    std::printf("%s", FormatDryRun(*job, layout, ranks).c_str());
  }
  return Status::Ok();
}

}  // namespace

void AttachValidate(CLI::App* sub, const GlobalOptions* global, std::function<Status()>* run) {
  auto o = std::make_shared<ValidateOptions>();
  sub->add_option("--plan", o->plan, "Plan JSON (gpuplan plan --json) or job spec to validate");
  sub->add_option("--show", o->show, "Print a validation report (JSON) as Markdown");
  sub->add_flag("--dry-run", o->dry_run,
                "Print the process layout, communicators and op sequences; run nothing");
  sub->add_option("--rank", o->ranks,
                  "Ranks whose op sequence to print (default: the first rank of each stage)");
  sub->add_flag("--json", o->json, "Print the dry run as JSON");
  sub->callback([=] { *run = [=] { return RunValidate(*o, *global); }; });
}

namespace {

struct CalibrateOptions {
  std::string profile;
  std::vector<std::string> reports;
  std::string out;
};

Status RunCalibrate(const CalibrateOptions& o, const GlobalOptions& g) {
  Expected<HardwareDb> db = LoadHardwareDb(g.hardware_db_dirs);
  if (!db.ok()) return db.status();
  Expected<Profile> profile = ReadProfile(o.profile);
  if (!profile.ok()) return profile.status().WithPrefix("--profile");
  std::vector<ValidationReport> reports;
  for (const std::string& path : o.reports) {
    Expected<ValidationReport> r = ReadValidationReport(path, *db);
    if (!r.ok()) return r.status().WithPrefix("--report");
    reports.push_back(std::move(r).value());
  }
  Expected<CalibrationResult> result = CalibrateWithReports(*profile, reports, o.reports, *db);
  if (!result.ok()) return result.status();
  std::printf("Calibrating %s (%s) with %zu validation %s\n%s", o.profile.c_str(),
              profile->gpu_id.c_str(), reports.size(),
              Noun(reports.size(), "report", "reports").c_str(),
              FormatCalibration(*result).c_str());
  profile->corrections = result->corrections;
  const std::string out = o.out.empty() ? o.profile : o.out;
  GPUPLAN_RETURN_IF_ERROR(WriteProfile(out, *profile));
  std::printf("profile written to %s\n", out.c_str());
  return Status::Ok();
}

}  // namespace

void AttachCalibrate(CLI::App* sub, const GlobalOptions* global, std::function<Status()>* run) {
  auto o = std::make_shared<CalibrateOptions>();
  sub->add_option("--profile", o->profile, "Profile of the GPU the reports ran on")->required();
  sub->add_option("--report", o->reports, "Validation report JSON (repeatable)")->required();
  sub->add_option("--out", o->out, "Where to write the calibrated profile (default: --profile)");
  sub->callback([=] { *run = [=] { return RunCalibrate(*o, *global); }; });
}

}  // namespace gpuplan
