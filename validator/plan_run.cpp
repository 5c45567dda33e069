#include "validator/plan_run.h"

#include <algorithm>

#include "common/str_format.h"
#include "validator/cpu_compute.h"
#include "validator/mpi_check.h"
#include "validator/rank_program.h"
#include "validator/step_executor.h"

namespace gpuplan {

Expected<RunMeasurement> RunPlan(const JobSpec& job, const RankLayout& layout, MPI_Comm world,
                                 const RunOptions& options, const MakeRankBackends& make) {
  if (options.warmup_steps < 0 || options.steps < 1) {
    return Status::Invalid("a run needs steps >= 1 and warm-up steps >= 0");
  }
  int rank = 0;
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_rank(world, &rank));
  Expected<PlanCommunicators> comms = PlanCommunicators::Split(layout, world);
  if (!comms.ok()) return comms.status();
  const std::vector<ProgramStep> program = RankProgram(job, layout, rank);
  Expected<RankBackends> backends = make(program, *comms);
  if (!backends.ok()) return backends.status();
  RankCompute& compute = *backends->compute;
  StepOptions step_options;
  step_options.watchdog_s = options.watchdog_s;
  step_options.compute = &compute;

  RunMeasurement out;
  StepRunResult total;  // this rank over the measured steps
  std::vector<double> mine;
  std::vector<MeasuredOp> ops;  // of the last measured step, with options.record_trace
  const int64_t last = options.warmup_steps + options.steps - 1;
  for (int64_t i = 0; i <= last; ++i) {
    const bool measured = i >= options.warmup_steps;
    if (i == options.warmup_steps) GPUPLAN_RETURN_IF_ERROR(compute.ResetPeaks());
    if (options.record_trace && i == last) step_options.record = &ops;
    GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Barrier(world));
    Expected<StepRunResult> step = RunStep(job, program, *backends->transport, step_options);
    if (!step.ok()) return step.status();
    out.elements += step->elements;
    out.wrong += step->wrong;
    if (!measured) continue;
    mine.push_back(step->seconds);
    total.seconds += step->seconds;
    total.phases.Add(step->phases, 1.0 / static_cast<double>(options.steps));
  }
  out.step_seconds.resize(mine.size());
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Reduce(mine.data(), out.step_seconds.data(),
                                         static_cast<int>(mine.size()), MPI_DOUBLE, MPI_MAX, 0,
                                         world));
  if (rank != 0) out.step_seconds = mine;
  int64_t checked[2] = {out.elements, out.wrong};
  int64_t sums[2] = {0, 0};
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Reduce(checked, sums, 2, MPI_INT64_T, MPI_SUM, 0, world));
  Expected<std::vector<StepRunResult>> all = GatherStepResults(total, world);
  if (!all.ok()) return all.status();
  Expected<RankCompute::AllocatorUse> allocator = compute.Allocator();
  if (!allocator.ok()) return allocator.status();
  constexpr size_t kPeakFields = 6;
  const double peak_row[kPeakFields] = {
      compute.Arena().PeakBytes(),   static_cast<double>(compute.Parameters()),
      allocator->peak_bytes,         allocator->device_used_bytes,
      allocator->device_total_bytes, static_cast<double>(compute.TrainableParameters())};
  std::vector<double> peaks(rank == 0 ? kPeakFields * all->size() : 0);
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Gather(peak_row, kPeakFields, MPI_DOUBLE, peaks.data(),
                                         kPeakFields, MPI_DOUBLE, 0, world));
  if (options.record_trace) {
    Expected<std::vector<std::string>> texts = GatherText(SerializeMeasuredOps(ops), world);
    if (!texts.ok()) return texts.status();
    for (size_t r = 0; r < texts->size(); ++r) {
      Expected<std::vector<MeasuredOp>> parsed = ParseMeasuredOps((*texts)[r]);
      if (!parsed.ok()) return parsed.status().WithPrefix(StrFormat("rank %zu: ", r));
      out.rank_ops.push_back(std::move(parsed).value());
    }
  }
  if (rank != 0) return out;
  out.elements = sums[0];
  out.wrong = sums[1];
  for (size_t r = 0; r < all->size(); ++r) {
    if ((*all)[r].seconds > (*all)[static_cast<size_t>(out.slowest_rank)].seconds) {
      out.slowest_rank = static_cast<int64_t>(r);
    }
    const double* row = peaks.data() + kPeakFields * r;
    if (row[0] > out.peak_memory_bytes) {
      out.peak_memory_bytes = row[0];
      out.peak_memory_rank = static_cast<int64_t>(r);
      out.parameters = static_cast<int64_t>(row[1]);
      out.allocator = {row[2], row[3], row[4]};
      out.trainable_parameters = static_cast<int64_t>(row[5]);
    }
  }
  out.phases = (*all)[static_cast<size_t>(out.slowest_rank)].phases;
  return out;
}

Expected<RunMeasurement> RunPlanOnCpu(const JobSpec& job, const RankLayout& layout, MPI_Comm world,
                                      const RunOptions& options) {
  GPUPLAN_RETURN_IF_ERROR(CheckCpuExecutable(job));
  return RunPlan(job, layout, world, options,
                 [&](const std::vector<ProgramStep>& program,
                     const PlanCommunicators& comms) -> Expected<RankBackends> {
                   const RankCoord& me = comms.Coord();
                   Expected<std::unique_ptr<CpuCompute>> compute =
                       CpuCompute::Create(job, program, me.pp, me.dp * job.parallel.cp + me.cp);
                   if (!compute.ok()) return compute.status();
                   return RankBackends{std::move(compute).value(),
                                       std::make_unique<MpiTransport>(comms, world)};
                 });
}

}  // namespace gpuplan
