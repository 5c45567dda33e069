#include "validator/run_report.h"

#include <Eigen/Core>

#include "common/str_format.h"

namespace gpuplan {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace

std::string CpuBackendNote(const JobSpec& job) {
  return StrFormat(
      "CPU backend: %lld ranks under mpirun on this host, each one process with one thread "
      "(Eigen %d.%d.%d GEMMs, the float32 reference kernels of kernels/), communication over MPI "
      "on the same thread between compute ops (no overlap)",
      static_cast<long long>(job.cluster.num_gpus), EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION,
      EIGEN_MINOR_VERSION);
}

ValidationReport MeasuredValidationReport(const JobSpec& job, const GpuSpec& gpu,
                                          const NetworkSpec& net, const MeasuredRates* rates,
                                          const RunMeasurement& measured, const RunOptions& options,
                                          const std::string& backend, int64_t replayed_rank) {
  const StepResult predicted = EvaluateStep(job, gpu, net, rates);
  ValidationReport r;
  const bool replay = replayed_rank >= 0;
  r.mode = replay ? ValidationMode::kRankReplay : ValidationMode::kFull;
  r.replayed_rank = replayed_rank;
  r.job = job;
  r.warmup_steps = options.warmup_steps;
  r.step_seconds = measured.step_seconds;
  r.predicted_step_s = predicted.step_time_s;
  // The arena counts the tensors the executor asks for; the model's overhead (CUDA context,
  // cuBLAS and NCCL workspaces, the fragmentation allowance, TP-overlap buffers) lies outside it,
  // and on the GPU backend the note below gives the device's memory in use beside it.
  r.predicted_peak_memory_bytes = predicted.memory.peak_bytes - predicted.memory.overhead_bytes;
  r.measured_peak_memory_bytes = measured.peak_memory_bytes;
  r.phases.predicted = predicted.breakdown_s;
  r.phases.measured = measured.phases;
  r.notes.push_back(backend);
  if (replay) {
    r.notes.push_back(StrFormat(
        "predicted peak memory is the plan's busiest stage's (stage %lld); the replayed rank is on "
        "stage %lld",
        static_cast<long long>(predicted.memory.peak_stage),
        static_cast<long long>(replayed_rank / (job.cluster.num_gpus / job.parallel.pp))));
  } else {
    r.notes.push_back(StrFormat(
        "measured phases are rank %lld's (the slowest), seconds per step; pipeline waits, bubble "
        "included, are under pp_comm",
        static_cast<long long>(measured.slowest_rank)));
  }
  const std::string state =
      measured.trainable_parameters == measured.parameters
          ? StrFormat("%lld parameters, their gradients and optimizer state",
                      static_cast<long long>(measured.parameters))
          : StrFormat("%lld parameters, the gradients and optimizer state of the %lld trained",
                      static_cast<long long>(measured.parameters),
                      static_cast<long long>(measured.trainable_parameters));
  r.notes.push_back(StrFormat(
      "measured peak memory: the executor's arena on rank %lld (%s, kept forward outputs, op "
      "outputs and workspaces), not the process's resident size; predicted peak memory is the "
      "cost model's for the %s device less its overhead outside the tensors (%.2f GB: CUDA "
      "context, workspaces, fragmentation allowance)",
      static_cast<long long>(measured.peak_memory_rank), state.c_str(), gpu.id.c_str(),
      predicted.memory.overhead_bytes / 1e9));
  if (measured.allocator.device_total_bytes > 0) {
    r.notes.push_back(StrFormat(
        "rank %lld's memory pool peaked at %.2f GiB (the arena's buffers with the pool's rounding "
        "and reuse); the device had %.2f of %.2f GiB in use after the run (CUDA context, "
        "cuBLASLt workspace, NCCL buffers, input patterns included)",
        static_cast<long long>(measured.peak_memory_rank), measured.allocator.peak_bytes / kGiB,
        measured.allocator.device_used_bytes / kGiB, measured.allocator.device_total_bytes / kGiB));
  }
  if (!replay) {
    r.notes.push_back(StrFormat("%lld elements received and checked, %lld wrong",
                                static_cast<long long>(measured.elements),
                                static_cast<long long>(measured.wrong)));
  }
  return r;
}

}  // namespace gpuplan
