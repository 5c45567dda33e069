// `gpuplan validate`: run a plan on GPUs and compare with the prediction; --dry-run prints what
// would run (process layout, communicators, each rank's op sequence) without a GPU.
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "profiler/gpu_probe.h"
#include "validator/dry_run.h"
#include "validator/rank_layout.h"

namespace gpuplan {
namespace {

struct ValidateOptions {
  std::string plan;
  bool dry_run = false;
  bool json = false;
  std::vector<int64_t> ranks;
};

constexpr const char* kDryRunHint =
    "`gpuplan validate --plan FILE --dry-run` prints the process layout, the communicators and "
    "each rank's op sequence without a GPU";

Status RunValidate(const ValidateOptions& o, const GlobalOptions& g) {
  Expected<HardwareDb> db = LoadHardwareDb(g.hardware_db_dirs);
  if (!db.ok()) return db.status();
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
    Expected<std::vector<GpuDeviceInfo>> devices = MakeSystemGpuProbe()->ListDevices();
    if (!devices.ok()) {
      return Status::Unavailable("cannot validate on GPUs: " + devices.status().message() + "; " +
                                 kDryRunHint);
    }
    return Status::Unavailable(
        "cannot validate on GPUs: the executor that runs a plan's ranks is not built yet "
        "(docs/VALIDATION.md); " +
        std::string(kDryRunHint));
  }
  if (o.json) {
    std::printf("%s\n", DryRunToJson(*job, layout, ranks).dump(1).c_str());
  } else {
    std::printf("%s", FormatDryRun(*job, layout, ranks).c_str());
  }
  return Status::Ok();
}

}  // namespace

void AttachValidate(CLI::App* sub, const GlobalOptions* global, std::function<Status()>* run) {
  auto o = std::make_shared<ValidateOptions>();
  sub->add_option("--plan", o->plan, "Plan JSON (gpuplan plan --json) or job spec to validate")
      ->required();
  sub->add_flag("--dry-run", o->dry_run,
                "Print the process layout, communicators and op sequences; run nothing");
  sub->add_option("--rank", o->ranks,
                  "Ranks whose op sequence to print (default: the first rank of each stage)");
  sub->add_flag("--json", o->json, "Print the dry run as JSON");
  sub->callback([=] { *run = [=] { return RunValidate(*o, *global); }; });
}

}  // namespace gpuplan
