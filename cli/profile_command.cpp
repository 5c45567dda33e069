// `gpuplan profile`: measure the local GPUs (or show a saved profile) and print what the cost
// model will take from it.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/model_option.h"
#include "cli/option_checks.h"
#include "cli/profile_option.h"
#include "cli/progress_bar.h"
#include "cli/run_info.h"
#include "common/file_write.h"
#include "common/host_memory.h"
#include "common/str_format.h"
#include "profiler/cpu_backends.h"
#include "profiler/profile_report.h"
#include "profiler/sweep.h"
#include "validator/launcher.h"

#if GPUPLAN_BUILT_WITH_MPI
#include <mpi.h>

#include "validator/mpi_collective_runner.h"
#endif

namespace gpuplan {
namespace {

// The machines `gpuplan profile` measures (--backend), one row each.
struct ProfileBackendRow {
  const char* name;
  const char* what;
};
constexpr ProfileBackendRow kProfileBackends[] = {
    {"cuda", "the local GPUs: cuBLASLt GEMMs, kernels/ on the GPU, copies, NCCL collectives"},
    {"cpu",
     "this host as the validator's CPU ranks run: Eigen fp32 GEMMs on one thread, the reference "
     "kernels, memcpy (hardware-db device 'cpu')"},
};

struct ProfileCommandOptions {
  std::string backend = "cuda";
  std::string out = "profile.json";
  std::string show;
  bool quick = false;
  int device = 0;
  std::string model;
  int64_t tp = 1;
  int64_t tokens = 4096;
  std::string gpu_id;
  std::optional<int>
      ranks;  ///< --backend cpu: ranks the measured one runs beside (itself included)
  /// Internal (--launch-collectives): this process is one rank of the launch `--ranks N` starts
  /// to measure the collectives; rank 0 writes them to --out.
  bool launch_collectives = false;
};

class TerminalProfileProgress : public ProfileProgress {
 public:
  void Update(std::string_view phase, int64_t done, int64_t total) override {
    bar_.Draw(phase, done, total, "measurements");
  }

 private:
  ProgressBar bar_;
};

// Prints the profile and, when its GPU is in the database, what the cost model takes from it.
Status Print(const Profile& profile, const std::string& origin, const HardwareDb& db) {
  Expected<ProfileCalibration> cal =
      CalibrateFromProfile(profile, db, origin, ProfileUse::kTrainingStacks);
  std::printf("%s", FormatProfile(profile, cal.ok() ? &*cal : nullptr, db).c_str());
  if (!cal.ok()) std::printf("\nNo cost-model figures: %s\n", cal.status().message().c_str());
  return Status::Ok();
}

// --launch-collectives, under the mpirun that AddLaunchCollectives runs: every rank takes part in
// the collectives of the sweep; rank 0 writes a profile of them alone to `o.out`.
Status RunLaunchCollectives(const ProfileCommandOptions& o, const HardwareDb& db) {
#if GPUPLAN_BUILT_WITH_MPI
  KeepFreedHostMemory();  // as the validator's ranks run, before MPI_Init maps its buffers
  MPI_Init(nullptr, nullptr);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Status st = Status::Ok();
  if (rank != 0) {
    st = ServeMpiCollectives(MPI_COMM_WORLD);
  } else {
    ProfileOptions options = CpuProfileOptions(o.quick);
    options.tool = std::string("gpuplan ") + GPUPLAN_VERSION;
    options.host = HostName();
    options.created_utc = UtcNow();
    Expected<Profile> profile = [&] {
      ProfileBackends b;
      b.probe = MakeCpuBackends().probe;
      auto runner = std::make_unique<MpiCollectiveRunner>(MPI_COMM_WORLD);
      const std::string mpi = runner->Version();
      b.collectives = std::move(runner);
      TerminalProfileProgress progress;
      Expected<Profile> p = RunProfile(options, b, db, &progress);
      if (p.ok()) p->versions.mpi = mpi;
      return p;  // b's runner releases the serving ranks
    }();
    st = profile.ok() ? WriteProfile(o.out, *profile) : profile.status();
  }
  MPI_Finalize();
  return st;
#else
  (void)o;
  (void)db;
  return Status::Unavailable(
      "--launch-collectives: this build has no MPI (install libopenmpi-dev and openmpi-bin, "
      "scripts/setup.sh, and build again)");
#endif
}

// --backend cpu --ranks N >= 2: the collectives of an N-rank launch, measured by N copies of this
// program that mpirun starts on this host (--launch-collectives), replace `profile`'s note that
// one process cannot measure them; when that fails, the note says why.
void AddLaunchCollectives(const ProfileCommandOptions& o, const GlobalOptions& g, int ranks,
                          Profile* profile) {
  auto note = [&](const std::string& why) {
    for (std::string& s : profile->skipped) {
      if (s.rfind("collectives: ", 0) == 0) s = "collectives: " + why;
    }
  };
#if !GPUPLAN_BUILT_WITH_MPI
  (void)o;
  (void)g;
  (void)ranks;
  note("this build has no MPI to measure them with (libopenmpi-dev, scripts/setup.sh)");
#else
  const std::string mpirun = GPUPLAN_MPIRUN;
  Expected<std::string> program = ThisProgramPath();
  if (!program.ok()) {
    note("cannot start the ranks: " + program.status().message());
    return;
  }
  std::string temp =
      (std::filesystem::temp_directory_path() / "gpuplan-collectives-XXXXXX").string();
  const int fd = mkstemp(temp.data());
  if (fd < 0) {
    note("cannot start the ranks: no temporary file for their measurements");
    return;
  }
  close(fd);
  std::vector<std::string> args;
  for (const std::string& dir : g.hardware_db_dirs) args.insert(args.end(), {"--hardware-db", dir});
  args.insert(args.end(), {"profile", "--backend", "cpu", "--launch-collectives", "--out", temp});
  if (o.quick) args.push_back("--quick");
  const std::vector<std::string> command =
      LocalMpirunCommand(mpirun, ranks, geteuid() == 0, *program, args);
  Expected<int> code = MakeProcessLauncher()->Run(command);
  Expected<Profile> measured =
      !code.ok() ? Expected<Profile>(code.status())
      : *code != 0
          ? Expected<Profile>(Status::Unavailable(StrFormat(
                "the %d ranks started by %s exited with status %d", ranks, mpirun.c_str(), *code)))
          : ReadProfile(temp);
  std::remove(temp.c_str());
  if (!measured.ok()) {
    note("measuring them failed: " + measured.status().message());
    return;
  }
  profile->collectives = measured->collectives;
  profile->versions.mpi = measured->versions.mpi;
  std::erase_if(profile->skipped,
                [](const std::string& s) { return s.rfind("collectives: ", 0) == 0; });
  for (const std::string& s : measured->skipped) {
    if (s.rfind("GEMM", 0) != 0 && s.rfind("kernels", 0) != 0 && s.rfind("bandwidth", 0) != 0 &&
        s.rfind("topology", 0) != 0) {
      profile->skipped.push_back(s);
    }
  }
#endif
}

Status RunProfileCommand(const ProfileCommandOptions& o, const GlobalOptions& g) {
  Expected<HardwareDb> db = LoadHardwareDb(g.hardware_db_dirs);
  if (!db.ok()) return db.status();
  if (!o.gpu_id.empty() && db->FindGpu(o.gpu_id) == nullptr) {
    return Status::Invalid("--gpu-id: unknown GPU '" + o.gpu_id + "' (see `gpuplan hardware`)");
  }
  if (!o.show.empty()) {
    Expected<Profile> profile = ReadProfile(o.show);
    if (!profile.ok()) return profile.status();
    if (!o.gpu_id.empty()) profile->gpu_id = o.gpu_id;
    return Print(*profile, o.show, *db);
  }
  const bool cpu = o.backend == "cpu";
  if (o.launch_collectives) {
    if (!cpu) return Status::Invalid("--launch-collectives: only with --backend cpu");
    return RunLaunchCollectives(o, *db);
  }
  if (o.ranks && !cpu) return Status::Invalid("--ranks: only with --backend cpu");
  if (o.ranks && !(*o.ranks >= 1 && *o.ranks <= kMaxCpuProfileRanks)) {
    return Status::Invalid(
        StrFormat("--ranks: must be in [1, %d], got %d", kMaxCpuProfileRanks, *o.ranks));
  }
  ProfileOptions options = cpu ? CpuProfileOptions(o.quick) : DefaultProfileOptions(o.quick);
  options.device = o.device;
  options.tool = std::string("gpuplan ") + GPUPLAN_VERSION;
  options.host = HostName();
  options.created_utc = UtcNow();
  if (!o.model.empty()) {
    Expected<ModelSpec> model = ResolveModel(o.model);
    if (!model.ok()) return model.status().WithPrefix("--model");
    // The shapes of a TP rank: tp must split the heads and the MLP as simulate requires.
    if (model->num_attention_heads % o.tp != 0 || model->ffn_hidden_size % o.tp != 0) {
      return Status::Invalid(StrFormat(
          "--tp: %lld does not divide the model's %lld attention heads and %lld MLP width",
          static_cast<long long>(o.tp), static_cast<long long>(model->num_attention_heads),
          static_cast<long long>(model->ffn_hidden_size)));
    }
    if (!cpu) options.gemm_shapes = DefaultGemmShapes(o.quick);
    for (const GemmShape& s : ModelGemmShapes(*model, o.tp, o.tokens))
      options.gemm_shapes.push_back(s);
  }
  GPUPLAN_RETURN_IF_ERROR(CheckOutputPath(o.out));  // before minutes of measuring
  if (cpu) KeepFreedHostMemory();  // as the validator's ranks run (validate --backend cpu)
  Expected<ProfileBackends> backends =
      cpu ? Expected<ProfileBackends>(MakeCpuBackends()) : MakeSystemBackends(o.device);
  if (!backends.ok()) return Status::Unavailable("cannot profile: " + backends.status().message());
  TerminalProfileProgress progress;
  const int ranks = o.ranks.value_or(1);
  Expected<Profile> profile = [&] {
    const CpuNeighbourLoad neighbours(cpu ? ranks - 1 : 0);
    return RunProfile(options, *backends, *db, &progress);
  }();
  if (!profile.ok()) return profile.status();
  if (cpu) {
    profile->gpu_id = kCpuDeviceId;
    if (ranks > 1) {
      for (GpuDeviceInfo& d : profile->devices) {
        d.name += StrFormat(", beside %d busy %s", ranks - 1, ranks == 2 ? "rank" : "ranks");
      }
      AddLaunchCollectives(o, g, ranks, &*profile);
    }
  }
  if (!o.gpu_id.empty()) profile->gpu_id = o.gpu_id;
  GPUPLAN_RETURN_IF_ERROR(WriteProfile(o.out, *profile));
  GPUPLAN_RETURN_IF_ERROR(Print(*profile, o.out, *db));
  std::printf("\nprofile written to %s\n", o.out.c_str());
  return Status::Ok();
}

}  // namespace

void AttachProfile(CLI::App* sub, const GlobalOptions* global, std::function<Status()>* run) {
  auto o = std::make_shared<ProfileCommandOptions>();
  std::vector<std::string> backend_names;
  std::string backend_help = "What to measure:";
  for (const ProfileBackendRow& b : kProfileBackends) {
    backend_names.push_back(b.name);
    backend_help += std::string(" '") + b.name + "': " + b.what + ";";
  }
  backend_help.back() = '.';
  sub->add_option("--backend", o->backend, backend_help)
      ->check(CLI::IsMember(backend_names))
      ->capture_default_str();
  sub->add_option("--out", o->out, "Profile JSON to write (docs/PROFILE.md)")
      ->capture_default_str();
  sub->add_flag("--quick", o->quick, "Smaller grids and shorter timing loops (<= 3 min, one GPU)");
  sub->add_option("--device", o->device, "GPU index for GEMMs, kernels and copies")
      ->check(CLI::Range(0, 1023))
      ->capture_default_str();
  CLI::Option* model = sub->add_option(
      "--model", o->model, "Also time the GEMMs of this model (preset id or HF config.json)");
  sub->add_option("--tp", o->tp, "Tensor parallelism of those GEMM shapes")
      ->check(PositiveInteger())
      ->needs(model)
      ->capture_default_str();
  sub->add_option("--tokens", o->tokens, "Tokens per micro-batch of those GEMM shapes")
      ->check(PositiveInteger())
      ->needs(model)
      ->capture_default_str();
  sub->add_option("--gpu-id", o->gpu_id,
                  "hardware-db GPU id the profile calibrates (default: matched from the device)");
  sub->add_option("--show", o->show, "Print a saved profile instead of measuring");
  sub->add_option("--ranks", o->ranks,
                  "--backend cpu: measure one rank while the other ranks of an N-rank launch keep "
                  "this host's other cores busy with GEMMs, as the validator runs them, then the "
                  "MPI collectives of N ranks that mpirun starts on this host; profile with the "
                  "rank count you validate with (default 1: alone, no collectives)");
  // Internal: one rank of the launch --ranks starts for the collectives (not for users).
  sub->add_flag("--launch-collectives", o->launch_collectives)->group("");
  sub->callback([=] { *run = [=] { return RunProfileCommand(*o, *global); }; });
}

}  // namespace gpuplan
