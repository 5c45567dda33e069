// `gpuplan validate`: run a plan on GPUs and compare with the prediction; --dry-run prints what
// would run (process layout, communicators, each rank's op sequence) without a GPU; --show
// prints a validation report. `gpuplan calibrate`: fit a profile's corrections to reports.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/commands.h"
#include "cli/profile_option.h"
#include "cli/run_info.h"
#include "common/file_write.h"
#include "common/host_memory.h"
#include "common/str_format.h"
#include "planner/report_document.h"
#include "profiler/cpu_backends.h"
#include "profiler/gpu_probe.h"
#include "simulator/event_sim.h"
#include "simulator/trace_json.h"
#include "validator/calibrate.h"
#include "validator/cpu_compute.h"
#include "validator/dry_run.h"
#include "validator/executed_job.h"
#include "validator/launcher.h"
#include "validator/measured_trace.h"
#include "validator/rank_layout.h"
#include "validator/rank_program.h"
#include "validator/rank_replay.h"

#if GPUPLAN_BUILT_WITH_MPI
#include <mpi.h>

#include "validator/plan_run.h"
#include "validator/step_executor.h"
#endif
#if GPUPLAN_BUILT_WITH_NCCL
#include "validator/gpu_compute.h"
#include "validator/gpu_run.h"
#endif

namespace gpuplan {
namespace {

struct ValidateOptions {
  std::string plan;
  std::string show;
  bool dry_run = false;
  bool json = false;
  std::vector<int64_t> ranks;
  std::string backend = "gpu";
  bool comm_only = false;
  double max_message_kb = 64;
  double watchdog_s = 300;
  std::string launch;
  std::string report;
  std::string trace;  // Chrome-trace / Perfetto JSON: the measured step beside the simulated one
  std::string profile;
  int64_t steps = 5;
  int64_t warmup = 2;
  bool require_targets = false;
  bool replay = false;
};

// How `--launch` starts the plan's ranks: one table (validator/launcher.h builds the commands).
enum class LaunchMode { kLocal, kSlurm };
struct LaunchSpec {
  const char* name;
  LaunchMode mode;
};
constexpr LaunchSpec kLaunchModes[] = {{"local", LaunchMode::kLocal},
                                       {"slurm", LaunchMode::kSlurm}};

// `--launch local|slurm`: start the plan's ranks (on this host with mpirun, or across the current
// Slurm job's nodes with srun, `ranks_per_node` on each), each running this program with the same
// request minus --launch, and pass their outcome on (exit 0, 2 for invalid input, otherwise 1;
// the ranks print their own reports).
Status LaunchRanks(const ValidateOptions& o, const GlobalOptions& g, LaunchMode mode, int64_t ranks,
                   int64_t ranks_per_node) {
#if GPUPLAN_BUILT_WITH_MPI
  const std::string mpirun = GPUPLAN_MPIRUN;
#else
  const std::string mpirun = "mpirun";
#endif
  std::vector<std::string> args;
  for (const std::string& dir : g.hardware_db_dirs) {
    args.push_back("--hardware-db");
    args.push_back(dir);
  }
  args.insert(args.end(), {"validate", "--plan", o.plan, "--backend", o.backend, "--watchdog",
                           StrFormat("%.17g", o.watchdog_s)});
  if (o.comm_only) {
    args.insert(args.end(),
                {"--comm-only", "--max-message-kb", StrFormat("%.17g", o.max_message_kb)});
  } else {
    args.insert(args.end(),
                {"--steps", std::to_string(o.steps), "--warmup", std::to_string(o.warmup)});
    if (!o.report.empty()) args.insert(args.end(), {"--report", o.report});
    if (!o.trace.empty()) args.insert(args.end(), {"--trace", o.trace});
    if (!o.profile.empty()) args.insert(args.end(), {"--profile", o.profile});
    if (o.require_targets) args.push_back("--require-targets");
  }
  // Under Slurm every node runs this program from the same path (a filesystem the job's nodes
  // share).
  Expected<std::string> program = ThisProgramPath();
  if (!program.ok()) return program.status().WithPrefix("--launch " + o.launch);
  const std::vector<std::string> command =
      mode == LaunchMode::kSlurm
          ? SlurmSrunCommand(ranks, ranks_per_node, *program, args)
          : LocalMpirunCommand(mpirun, ranks, geteuid() == 0, *program, args);
  Expected<int> code = MakeProcessLauncher()->Run(command);
  if (!code.ok()) return code.status();
  if (*code == 0) return Status::Ok();
  const std::string why = StrFormat("the %lld ranks started by %s exited with status %d",
                                    static_cast<long long>(ranks), command[0].c_str(), *code);
  return *code == 2 ? Status::Invalid(why) : Status::Unavailable(why);
}

#if GPUPLAN_BUILT_WITH_MPI
// MPI started for the ranks of `layout`; this process's rank, or Invalid (after MPI_Finalize)
// when mpirun started another number of ranks: the same on every rank, so no abort is needed.
Expected<int> StartRanks(const RankLayout& layout) {
  KeepFreedHostMemory();  // before MPI_Init maps its buffers
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) MPI_Init(nullptr, nullptr);
  const Status size = CheckWorldSize(layout, MPI_COMM_WORLD);
  if (!size.ok()) {
    MPI_Finalize();
    return Status::Invalid("--plan: " + size.message());
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

// Prints `st` as `rank`'s error and aborts the whole job (MPI_Abort), so that no peer waits.
Status AbortRanks(int rank, const Status& st) {
  std::fprintf(stderr, "gpuplan: error: rank %d: %s\n", rank, st.message().c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  return st;
}
#else
// What --backend cpu answers in a build without MPI.
Status NoMpi() {
  return Status::Unavailable(
      "--backend cpu: this build has no MPI (install libopenmpi-dev and openmpi-bin, "
      "scripts/setup.sh, and build again)");
}
#endif

// `--backend cpu --comm-only` under mpirun: every rank runs its step's communication over the
// plan's MPI communicators, every element checked; rank 0 prints the table. A watchdog that
// fires or a wrong element aborts the whole job (MPI_Abort) with exit status 1 after rank 0 (or
// the rank that saw it) has printed why, so no rank is left waiting.
Status RunCommOnly(const JobSpec& job, const RankLayout& layout, const ValidateOptions& o) {
#if GPUPLAN_BUILT_WITH_MPI
  Expected<int> started = StartRanks(layout);
  if (!started.ok()) return started.status();
  const int rank = *started;
  auto fail = [rank](const Status& st) { return AbortRanks(rank, st); };
  int64_t wrong = 0;
  {  // the communicators are freed before MPI_Finalize
    Expected<PlanCommunicators> comms = PlanCommunicators::Split(layout, MPI_COMM_WORLD);
    if (!comms.ok()) return fail(comms.status());
    StepOptions options;
    options.max_bytes_per_op = o.max_message_kb * 1024.0;
    options.watchdog_s = o.watchdog_s;
    MpiTransport transport(*comms, MPI_COMM_WORLD);
    Expected<StepRunResult> run = RunStep(job, RankProgram(job, layout, rank), transport, options);
    if (!run.ok()) return fail(run.status());
    Expected<std::vector<StepRunResult>> all = GatherStepResults(*run, MPI_COMM_WORLD);
    if (!all.ok()) return fail(all.status());
    if (rank == 0) {
      std::printf(
          "communication of one step of %s on %lld ranks (CPU backend, MPI; messages capped at "
          "%g KiB, no compute)\n%s",
          job.model.name.c_str(), static_cast<long long>(layout.world_size), o.max_message_kb,
          FormatStepResults(*all).c_str());
      for (const StepRunResult& x : *all) wrong += x.wrong;
    }
    MPI_Bcast(&wrong, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  if (wrong > 0) {
    return Status::Internal(
        StrFormat("%lld elements arrived wrong", static_cast<long long>(wrong)));
  }
  return Status::Ok();
#else
  (void)job;
  (void)layout;
  (void)o;
  return NoMpi();
#endif
}

// The name of this host's first device for `backend` (the CPU's model, or GPU 0's), or `backend`.
std::string DeviceName(const std::string& backend) {
  std::unique_ptr<GpuProbe> probe =
      backend == "cpu" ? MakeCpuBackends().probe : MakeSystemGpuProbe();
  Expected<std::vector<GpuDeviceInfo>> devices = probe->ListDevices();
  return devices.ok() && !devices->empty() ? devices->front().name : backend;
}

#if GPUPLAN_BUILT_WITH_MPI
// --trace: the last measured step of every rank (`measured`) beside the event simulation of
// `job` with `rates`, as the text of a Chrome trace for `path`.
Expected<std::string> ComparisonTrace(const std::string& path, const JobSpec& job,
                                      const RankLayout& layout, const GpuSpec& gpu,
                                      const NetworkSpec& net, const MeasuredRates* rates,
                                      const RunMeasurement& measured) {
  EventSimOptions options;
  options.record_timeline = true;
  Expected<EventSimResult> sim = SimulateStepEvents(job, gpu, net, options, rates);
  if (!sim.ok()) return sim.status().WithPrefix("--trace: the event simulation");
  const Timeline timeline = ComparisonTimeline(layout, measured.rank_ops, sim->timeline);
  TraceInfo info;
  info.title = "measured and simulated: " + job.model.name + " on " +
               std::to_string(job.cluster.num_gpus) + " x " + job.cluster.gpu + ", " +
               LayoutSummary(job);
  info.facts = {{"tool", "gpuplan validate"},
                {"measured_step_s", StrFormat("%.6f", measured.step_seconds.back())},
                {"measured_ranks", std::to_string(measured.rank_ops.size())},
                {"simulated_step_s", StrFormat("%.6f", sim->step_time_s)},
                {"simulated_gpus", std::to_string(sim->simulated_gpus)},
                {"clocks",
                 "each measured rank from the start of its last measured step (after a "
                 "barrier); simulated from the step's start"}};
  return ChromeTraceFile(path, timeline, info);
}
#endif

// Adds UnexecutedOverlapNote's note for `plan` to `report`, whose job is the executed one.
void AddOverlapNote(const JobSpec& plan, const GpuSpec& gpu, const NetworkSpec& net,
                    const MeasuredRates* rates, ValidationReport* report) {
  const std::string note = UnexecutedOverlapNote(plan, gpu, net, rates, report->predicted_step_s);
  if (!note.empty()) report->notes.push_back(note);
}

// Says where and when `report` was made (`device`: what ran it), prints it as Markdown and
// writes it (--report, JSON) with the trace (--trace, `trace_text`) as one set, atomically; then
// fails the run when `wrong` elements arrived wrong or, with --require-targets, when the
// prediction misses its targets.
Status FinishReport(ValidationReport report, const ValidateOptions& o, const std::string& device,
                    int64_t wrong, const std::string& trace_text = "") {
  report.created_utc = UtcNow();
  report.tool = std::string("gpuplan ") + GPUPLAN_VERSION;
  report.host = HostName();
  report.profile = o.profile;
  report.device = device;
  std::printf("%s", ValidationReportMarkdown(report).c_str());
  const std::string json =
      ValidationReportToJson(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
      "\n";
  std::vector<FileContents> files;
  if (!o.report.empty()) files.push_back({o.report, json});
  if (!o.trace.empty()) files.push_back({o.trace, trace_text});
  GPUPLAN_RETURN_IF_ERROR(WriteFilesAtomically(files));
  if (!o.report.empty()) std::printf("\nreport written to %s\n", o.report.c_str());
  if (!o.trace.empty()) {
    std::printf("trace written to %s (open in https://ui.perfetto.dev)\n", o.trace.c_str());
  }
  if (wrong > 0) {
    return Status::Internal(
        StrFormat("%lld elements arrived wrong", static_cast<long long>(wrong)));
  }
  if (o.require_targets && !report.MeetsTargets()) {
    const ValidationTargets t = TargetsFor(report.job);
    return Status::Internal(
        StrFormat("--require-targets: the prediction misses its targets (step time %+.1f%%, within "
                  "%.0f%%; peak memory %+.1f%%, within %.0f%%)",
                  100 * report.StepError(), 100 * t.step_time, 100 * report.MemoryError(),
                  100 * t.peak_memory));
  }
  return Status::Ok();
}

// A full run under mpirun: every rank computes and communicates its step (RunPlanOnCpu, or
// RunPlanOnGpu with --backend gpu), warm-up steps then measured ones; rank 0 sets the
// measurements beside the prediction, prints the report as Markdown and writes it (--report,
// JSON, atomically). A failed rank reports and aborts the job, as in RunCommOnly; a wrong element
// fails the run after the report is written.
Status RunMeasured(const JobSpec& plan, const JobSpec& job, const RankLayout& layout,
                   const ValidateOptions& o, const HardwareDb& db, const MeasuredRates* rates) {
#if GPUPLAN_BUILT_WITH_MPI
  Expected<int> started = StartRanks(layout);
  if (!started.ok()) return started.status();
  const int rank = *started;
  RunOptions options;
  options.steps = o.steps;
  options.warmup_steps = o.warmup;
  options.watchdog_s = o.watchdog_s;
  options.record_trace = !o.trace.empty();
  const bool cpu = o.backend == "cpu";
  Expected<RunMeasurement> run = Status::Unavailable(
      "--backend gpu: this build has no GPU backend (it needs CUDA, NCCL and OpenMPI)");
  if (cpu) {
    run = RunPlanOnCpu(job, layout, MPI_COMM_WORLD, options);
  } else {
#if GPUPLAN_BUILT_WITH_NCCL
    run = RunPlanOnGpu(job, layout, MPI_COMM_WORLD, options);
#endif
  }
  if (!run.ok()) return AbortRanks(rank, run.status());
  MPI_Finalize();
  if (rank != 0) return Status::Ok();
  const std::string device = DeviceName(o.backend);
  std::string backend_note = CpuBackendNote(job);
#if GPUPLAN_BUILT_WITH_NCCL
  if (!cpu) backend_note = GpuBackendNote(job, device);
#endif
  const GpuSpec& gpu = *db.FindGpu(job.cluster.gpu);
  const NetworkSpec& net = *db.FindNetwork(job.cluster.inter_node);
  std::string trace;
  if (!o.trace.empty()) {
    Expected<std::string> text = ComparisonTrace(o.trace, job, layout, gpu, net, rates, *run);
    if (!text.ok()) return text.status();
    trace = std::move(text).value();
  }
  ValidationReport report =
      MeasuredValidationReport(job, gpu, net, rates, *run, options, backend_note);
  AddOverlapNote(plan, gpu, net, rates, &report);
  return FinishReport(std::move(report), o, device, run->wrong, trace);
#else
  (void)plan;
  (void)job;
  (void)layout;
  (void)db;
  (void)rates;
  return o.backend == "cpu" ? NoMpi()
                            : Status::Unavailable(
                                  "--backend gpu: this build has no MPI to launch "
                                  "ranks with (install libopenmpi-dev)");
#endif
}

// `--rank N --replay`: rank N's step alone in this process, its compute on this host's CPU
// (--backend cpu) or GPU 0 and its communication at the cost model's predicted time (ReplayRank);
// the report, in mode rank_replay, is printed and written as a full run's.
Status RunReplay(const JobSpec& plan, const JobSpec& job, const RankLayout& layout,
                 const ValidateOptions& o, const HardwareDb& db, const MeasuredRates* rates) {
  KeepFreedHostMemory();  // as the ranks of a full run keep it (StartRanks)
  const int64_t rank = o.ranks.front();
  const std::vector<ProgramStep> program = RankProgram(job, layout, rank);
  const RankCoord& me = layout.ranks[static_cast<size_t>(rank)];
  const int64_t dp_index = me.dp * job.parallel.cp + me.cp;
  std::unique_ptr<RankCompute> compute;
  if (o.backend == "cpu") {
    Expected<std::unique_ptr<CpuCompute>> made = CpuCompute::Create(job, program, me.pp, dp_index);
    if (!made.ok()) return made.status();
    compute = std::move(made).value();
  } else {
#if GPUPLAN_BUILT_WITH_NCCL
    Expected<std::unique_ptr<GpuCompute>> made =
        GpuCompute::Create(job, program, me.pp, dp_index, 0);
    if (!made.ok()) return made.status();
    compute = std::move(made).value();
#else
    return Status::Unavailable("--replay --backend gpu: this build has no GPU backend");
#endif
  }
  RunOptions options;
  options.steps = o.steps;
  options.warmup_steps = o.warmup;
  options.watchdog_s = o.watchdog_s;
  const GpuSpec& gpu = *db.FindGpu(job.cluster.gpu);
  const NetworkSpec& net = *db.FindNetwork(job.cluster.inter_node);
  Expected<RunMeasurement> run =
      ReplayRank(job, layout, rank, program, *compute, gpu, net, rates, options);
  if (!run.ok()) return run.status();
  const std::string device = DeviceName(o.backend);
  ValidationReport report = MeasuredValidationReport(job, gpu, net, rates, *run, options,
                                                     ReplayNote(rank, device, *run), rank);
  AddOverlapNote(plan, gpu, net, rates, &report);
  return FinishReport(std::move(report), o, device, 0);
}

constexpr const char* kDryRunHint =
    "`gpuplan validate --plan FILE --dry-run` prints the process layout, the communicators and "
    "each rank's op sequence without a GPU";

// Whether this host can run a plan's ranks on GPUs and, when it cannot, what that needs and what
// this build and host have of it, one line each, then what works instead.
// GPUPLAN_BUILT_WITH_CUDA and GPUPLAN_BUILT_WITH_NCCL (the validator's GPU backend: CUDA, NCCL
// and MPI) come from the build (cli/CMakeLists.txt).
struct GpuReadiness {
  bool ready = false;
  std::string missing;  ///< when not ready
};

// `gpus_here` false: the ranks run elsewhere (--launch slurm), so only the build is checked.
GpuReadiness GpuBackendReadiness(bool gpus_here = true) {
  bool have_gpus = false;
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
      have_gpus = !devices->empty();
      for (const GpuDeviceInfo& d : *devices)
        gpus += (&d == &devices->front() ? ": " : ", ") + d.name;
    }
  }
  const std::string executor =
      GPUPLAN_BUILT_WITH_NCCL
          ? "built (cuBLASLt and kernels/ per rank, NCCL communicators bootstrapped over MPI)"
          : "not built: it needs CUDA, NCCL and OpenMPI (libopenmpi-dev) at build time";
  if (GPUPLAN_BUILT_WITH_NCCL && (have_gpus || !gpus_here)) return {true, ""};
  return {false,
          "validate runs a plan's ranks on GPUs; this host cannot:\n"
          "  executor  " +
              executor + "\n" + "  CUDA      " + cuda + "\n" + "  NCCL      " + nccl + "\n" +
              "  GPUs      " + gpus + "\n" + "What works: " + kDryRunHint +
              "; --backend cpu runs plans whose cluster.gpu is 'cpu' on this host's "
              "cores.\n"};
}

Status RunValidate(const ValidateOptions& o, const GlobalOptions& g) {
  Expected<HardwareDb> db = LoadHardwareDb(g.hardware_db_dirs);
  if (!db.ok()) return db.status();
  if (!o.show.empty()) {
    if (!o.plan.empty()) return Status::Invalid("--show: prints a report; not with --plan");
    Expected<ValidationReport> report = ReadValidationReport(o.show, *db);
    if (!report.ok()) return report.status();
    std::printf("%s", ValidationReportMarkdown(*report).c_str());
    return Status::Ok();
  }
  if (o.plan.empty()) return Status::Invalid("--plan: required (or --show REPORT)");
  Expected<JobSpec> job = ReadValidationJob(o.plan, *db);
  if (!job.ok()) return job.status();
  // From here on the job as the executor runs it: what the dry run prints, the ranks execute
  // and the report predicts (validator/executed_job.h); `plan` for the overlaps it leaves out.
  const JobSpec plan = *job;
  *job = ExecutedJob(plan);
  const RankLayout layout = MakeRankLayout(*job);
  std::vector<int64_t> ranks = o.ranks.empty() ? RepresentativeRanks(*job) : o.ranks;
  for (int64_t r : ranks) {
    if (r < 0 || r >= layout.world_size) {
      return Status::Invalid("--rank: " + std::to_string(r) + " is not a rank of this plan (0.." +
                             std::to_string(layout.world_size - 1) + ")");
    }
  }
  if (o.backend != "gpu" && o.backend != "cpu") {
    return Status::Invalid("--backend: '" + o.backend + "' is not allowed (allowed: gpu, cpu)");
  }
  if (o.comm_only && o.backend != "cpu") {
    return Status::Invalid("--comm-only: needs --backend cpu");
  }
  if (!(o.max_message_kb > 0 && o.max_message_kb <= 1024 * 1024)) {
    return Status::Invalid(
        StrFormat("--max-message-kb: must be in (0, 1048576], got %g", o.max_message_kb));
  }
  if (!(o.watchdog_s > 0 && o.watchdog_s <= 86400)) {
    return Status::Invalid(
        StrFormat("--watchdog: must be seconds in (0, 86400], got %g", o.watchdog_s));
  }
  if (!o.launch.empty() && o.dry_run) {
    return Status::Invalid("--launch: not with --dry-run (it starts ranks)");
  }
  if (o.replay && (o.ranks.size() != 1 || o.dry_run || !o.launch.empty() || o.comm_only)) {
    return Status::Invalid(
        "--replay: needs exactly one --rank, and not --dry-run, --launch or --comm-only (the "
        "rank runs alone in this process)");
  }
  if (o.steps < 1 || o.steps > 1000) {
    return Status::Invalid(
        StrFormat("--steps: must be in [1, 1000], got %lld", static_cast<long long>(o.steps)));
  }
  if (o.warmup < 0 || o.warmup > 1000) {
    return Status::Invalid(
        StrFormat("--warmup: must be in [0, 1000], got %lld", static_cast<long long>(o.warmup)));
  }
  if (o.comm_only &&
      (!o.report.empty() || !o.profile.empty() || o.require_targets || !o.trace.empty())) {
    return Status::Invalid(
        "--report, --trace, --profile and --require-targets: not with --comm-only (it measures "
        "nothing)");
  }
  if (o.dry_run &&
      (o.require_targets || !o.report.empty() || !o.profile.empty() || !o.trace.empty())) {
    return Status::Invalid(
        "--require-targets, --report, --trace and --profile: not with --dry-run (it measures "
        "nothing)");
  }
  if (o.replay && !o.trace.empty()) {
    return Status::Invalid(
        "--trace: not with --replay (a replayed rank exchanges nothing, so its communication "
        "takes no time to draw); run the plan's ranks (--launch local)");
  }
  // Before the run: paths that cannot be written cost no measurement.
  const OutputPath outputs[] = {{"--report", o.report}, {"--trace", o.trace}};
  GPUPLAN_RETURN_IF_ERROR(CheckDistinctOutputs(outputs));
  for (const OutputPath& p : outputs) {
    if (!p.path.empty()) GPUPLAN_RETURN_IF_ERROR(CheckOutputPath(p.path));
  }
  if (!o.dry_run) {
    const bool cpu = o.backend == "cpu";
    std::optional<ProfileCalibration> cal;
    if (!o.comm_only) {
      const GpuSpec& gpu = *db->FindGpu(job->cluster.gpu);
      if (cpu && !gpu.HostDevice()) {
        return Status::Invalid("--plan: cluster.gpu is '" + gpu.id +
                               "'; --backend cpu runs plans on the 'cpu' device (this host's "
                               "ranks); --comm-only checks any plan's communication");
      }
      if (!cpu && gpu.HostDevice()) {
        return Status::Invalid("--plan: cluster.gpu is 'cpu': run it with --backend cpu");
      }
      GPUPLAN_RETURN_IF_ERROR((cpu ? CheckCpuExecutable(*job) : CheckGpuExecutable(*job))
                                  .WithPrefix("--plan " + o.plan));
      if (!o.profile.empty()) {
        Expected<ProfileCalibration> loaded =
            LoadProfileCalibration(o.profile, *db, ProfileUse::kGpuplanExecutor);
        if (!loaded.ok()) return loaded.status();
        if (loaded->rates.gpu_id != gpu.id) {
          return Status::Invalid("--profile: " + o.profile + " calibrates " + loaded->rates.gpu_id +
                                 ", not the plan's device " + gpu.id +
                                 "; profile it with `gpuplan "
                                 "profile" +
                                 (cpu ? " --backend cpu`" : "` on that GPU"));
        }
        cal = std::move(loaded).value();
      }
    }
    if (o.replay) {
      const GpuReadiness here = cpu ? GpuReadiness{true, ""} : GpuBackendReadiness();
      if (!here.ready) {
        std::fprintf(stderr, "%s", here.missing.c_str());
        return Status::Unavailable(
            "cannot replay a rank on a GPU here; --backend cpu replays "
            "plans of the cpu device");
      }
      return RunReplay(plan, *job, layout, o, *db, cal ? &cal->rates : nullptr);
    }
    const LaunchSpec* launch = nullptr;
    if (!o.launch.empty()) {
      std::string names;
      for (const LaunchSpec& l : kLaunchModes) {
        if (o.launch == l.name) launch = &l;
        names += (names.empty() ? "" : ", ") + std::string(l.name);
      }
      if (launch == nullptr) {
        return Status::Invalid("--launch: '" + o.launch + "' is not allowed (allowed: " + names +
                               ")");
      }
    }
    if (!cpu) {
      // Under srun the ranks run on the job's nodes: this one (a login node) needs no GPU.
      const GpuReadiness here =
          GpuBackendReadiness(launch == nullptr || launch->mode != LaunchMode::kSlurm);
      if (!here.ready) {
        std::fprintf(stderr, "%s", here.missing.c_str());
        return Status::Unavailable("cannot validate on GPUs here; --dry-run works");
      }
    }
    if (launch != nullptr) {
      // One rank per GPU: as many on a node as the plan's nodes have GPUs.
      const int64_t per_node =
          std::clamp<int64_t>(job->cluster.gpus_per_node, 1, layout.world_size);
      return LaunchRanks(o, g, launch->mode, layout.world_size, per_node);
    }
    if (o.comm_only) return RunCommOnly(*job, layout, o);
    return RunMeasured(plan, *job, layout, o, *db, cal ? &cal->rates : nullptr);
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
  sub->add_flag("--replay", o->replay,
                "With one --rank: run that rank's step alone in this process, its compute for "
                "real on this host (--backend cpu: its cores; gpu: GPU 0) and its communication "
                "at the cost model's predicted time (rank replay; the report says so)");
  sub->add_option("--backend", o->backend, "Where ranks run: gpu (NCCL) or cpu (MPI); default gpu");
  sub->add_flag("--comm-only", o->comm_only,
                "With --backend cpu, under mpirun -np <plan's GPUs>: run each rank's step of "
                "communication over the plan's MPI communicators, every element checked");
  sub->add_option("--max-message-kb", o->max_message_kb,
                  "With --comm-only: cap every collective and message at this many KiB "
                  "(default 64)");
  sub->add_option("--launch", o->launch,
                  "Start the plan's ranks (one gpuplan process per rank) instead of being started "
                  "by mpirun: local (mpirun on this host) or slurm (srun in the current Slurm "
                  "job, the plan's GPUs per node on each node)");
  sub->add_option("--report", o->report,
                  "Write the validation report (JSON) here as well as printing it");
  sub->add_option("--trace", o->trace,
                  "Write the last measured step of every rank beside the event simulation of "
                  "the plan as one Chrome-trace/Perfetto JSON file (docs/VALIDATION.md)");
  sub->add_option("--profile", o->profile,
                  "Predict with this profile of the plan's device (gpuplan profile on that GPU; "
                  "--backend cpu: gpuplan profile --backend cpu), as simulate --profile does; "
                  "default: the device's hardware-db rates");
  sub->add_option("--steps", o->steps, "Measured steps (default 5)");
  sub->add_flag("--require-targets", o->require_targets,
                "Exit 1 when the prediction misses the report's targets "
                "(step time within 25%, peak memory within 10%; the report is written first)");
  sub->add_option("--warmup", o->warmup, "Warm-up steps before the measured ones (default 2)");
  sub->add_option("--watchdog", o->watchdog_s,
                  "Seconds a collective or receive waits for its peers before the run is "
                  "reported and aborted (default 300)");
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
  for (size_t i = 0; i < o.reports.size(); ++i) {
    const std::string& path = o.reports[i];
    for (size_t j = 0; j < i; ++j) {
      std::error_code ec;
      if (std::filesystem::equivalent(o.reports[j], path, ec) && !ec) {
        return Status::Invalid("--report: " + path + " is given twice; each report counts once");
      }
    }
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
  if (!result->Improves()) {
    return Status::Unavailable(StrFormat(
        "calibrate: the corrections would raise the rms step-time error on these reports from "
        "%.1f%% to %.1f%%, so nothing is written (the measured phases and the predicted ones "
        "are not split alike for these runs; docs/VALIDATION.md)",
        100 * result->rms_error_before, 100 * result->rms_error_after));
  }
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
