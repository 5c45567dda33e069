#include "validator/gpu_run.h"

#include <cublasLt.h>
#include <nccl.h>

#include "common/str_format.h"
#include "validator/gpu_compute.h"
#include "validator/nccl_transport.h"

namespace gpuplan {

Expected<RunMeasurement> RunPlanOnGpu(const JobSpec& job, const RankLayout& layout, MPI_Comm world,
                                      const RunOptions& options) {
  GPUPLAN_RETURN_IF_ERROR(CheckGpuExecutable(job));
  Expected<int> device = LocalDevice(world);
  if (!device.ok()) return device.status();
  return RunPlan(job, layout, world, options,
                 [&](const std::vector<ProgramStep>& program,
                     const PlanCommunicators& comms) -> Expected<RankBackends> {
                   // The transport first: it makes the device current on this thread.
                   Expected<std::unique_ptr<NcclTransport>> transport =
                       NcclTransport::Create(comms, world, *device);
                   if (!transport.ok()) return transport.status();
                   const RankCoord& me = comms.Coord();
                   Expected<std::unique_ptr<GpuCompute>> compute = GpuCompute::Create(
                       job, program, me.pp, me.dp * job.parallel.cp + me.cp, *device);
                   if (!compute.ok()) return compute.status();
                   return RankBackends{std::move(compute).value(), std::move(transport).value()};
                 });
}

std::string GpuBackendNote(const JobSpec& job, const std::string& device_name) {
  return StrFormat(
      "GPU backend: %lld ranks under mpirun, one process per GPU (%s), %s: cuBLASLt %zu GEMMs and "
      "the CUDA kernels of kernels/ on one stream, synchronised after every op so that each op is "
      "timed (no overlap of launch latency); NCCL %d.%d.%d collectives and pipeline messages, each "
      "group and pipeline link on its own stream, between compute ops (no overlap)",
      static_cast<long long>(job.cluster.num_gpus), device_name.c_str(),
      std::string(PrecisionName(job.training.precision)).c_str(), cublasLtGetVersion(), NCCL_MAJOR,
      NCCL_MINOR, NCCL_PATCH);
}

}  // namespace gpuplan
