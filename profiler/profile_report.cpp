#include "profiler/profile_report.h"

#include "common/str_format.h"
#include "profiler/nccl_tests_format.h"
#include "simulator/gemm_time.h"

namespace gpuplan {
namespace {

std::string Devices(const Profile& p) {
  std::string out = StrFormat("Profile %s, %s%s\n  %s\n", p.created_utc.c_str(), p.tool.c_str(),
                              p.quick ? " --quick" : "", p.source.c_str());
  out +=
      StrFormat("  CUDA runtime %s, driver %s (CUDA %s), NCCL %s, cuBLAS %s\n",
                p.versions.cuda_runtime.c_str(), p.versions.driver.c_str(),
                p.versions.cuda_driver.c_str(), p.versions.nccl.c_str(), p.versions.cublas.c_str());
  for (const GpuDeviceInfo& d : p.devices) {
    out += StrFormat("  GPU %d: %s  sm_%d%d  %d SMs  %.1f GB  %.0f MHz  %.0f W  bus %s\n", d.index,
                     d.name.c_str(), d.compute_capability_major, d.compute_capability_minor,
                     d.sm_count, d.memory_bytes / 1e9, d.clock_hz / 1e6, d.power_limit_watts,
                     d.pci_bus_id.c_str());
  }
  out += "  hardware-db GPU: " + (p.gpu_id.empty() ? std::string("none matched") : p.gpu_id) + "\n";
  for (const GpuLinkInfo& l : p.links) {
    out += StrFormat("  link %d -> %d: peer access %s, rank %d, NVLinks %d\n", l.from, l.to,
                     l.peer_access ? "yes" : "no", l.performance_rank, l.nvlinks);
  }
  return out;
}

// TFLOP/s with three decimals below 1 (a CPU rank's GEMMs), one above.
std::string Tflops(double flops_per_s) {
  const double t = flops_per_s / 1e12;
  return StrFormat(t < 1 ? "%.3f" : "%.1f", t);
}

std::string Gemms(const Profile& p, const ProfileCalibration* cal, const GpuSpec* gpu) {
  if (p.gemm.empty()) return "";
  const std::string library = p.versions.cpu_gemm.empty() ? "cuBLASLt" : p.versions.cpu_gemm;
  std::string out = "\nGEMM (" + library + "; model = the fitted GEMM model of the cost model)\n";
  out +=
      "  dtype             m x n x k  batch     time(us)  TFLOP/s  %peak  model TFLOP/s  error\n";
  const int sms = p.devices.front().sm_count;
  for (const GemmSample& g : p.gemm) {
    const double peak = gpu != nullptr ? gpu->PeakFlops(g.dtype) : 0.0;
    std::string model = "             -      -";
    if (cal != nullptr) {
      for (const GemmFit& f : cal->gemm_fits) {
        if (f.dtype != g.dtype) continue;
        const DeviceRates r = GemmFitRates(f, sms, cal->rates.memory_bytes_per_s);
        const double t =
            GemmSeconds(r, static_cast<double>(g.shape.m), static_cast<double>(g.shape.n),
                        static_cast<double>(g.shape.k), static_cast<double>(g.shape.batch));
        model = StrFormat("  %12s  %+5.1f%%", Tflops(g.Flops() / t).c_str(),
                          100.0 * (t - g.seconds) / g.seconds);
      }
    }
    out += StrFormat(
        "  %-5s %21s  %5lld  %11.1f  %7s  %5s%s\n", std::string(PrecisionName(g.dtype)).c_str(),
        (std::to_string(g.shape.m) + " x " + std::to_string(g.shape.n) + " x " +
         std::to_string(g.shape.k))
            .c_str(),
        static_cast<long long>(g.shape.batch), g.seconds * 1e6,
        Tflops(g.Flops() / g.seconds).c_str(),
        peak > 0 ? StrFormat("%4.0f%%", 100.0 * g.Flops() / g.seconds / peak).c_str() : "-",
        model.c_str());
  }
  return out;
}

std::string Kernels(const Profile& p) {
  if (p.kernels.empty()) return "";
  std::string out = "\nKernels (gpuplan kernels/)\n";
  out += "  kernel          dtype  shape                          time(us)  TFLOP/s     GB/s\n";
  for (const KernelSample& k : p.kernels) {
    const KernelInfo& info = GetKernelInfo(k.kernel.kind);
    const KernelCase& c = k.kernel;
    const std::string shape =
        info.attention ? StrFormat("b%lld s%lld h%lld d%lld", static_cast<long long>(c.batch),
                                   static_cast<long long>(c.seq), static_cast<long long>(c.heads),
                                   static_cast<long long>(c.head_dim))
                       : StrFormat("%lld x %lld", static_cast<long long>(c.rows),
                                   static_cast<long long>(c.cols));
    const double flops = info.flops(c);
    out += StrFormat("  %-15s %-5s  %-29s %9.1f  %7s  %7.0f\n", std::string(info.name).c_str(),
                     std::string(PrecisionName(c.dtype)).c_str(), shape.c_str(), k.seconds * 1e6,
                     flops > 0 ? Tflops(flops / k.seconds).c_str() : "-",
                     info.bytes(c) / k.seconds / 1e9);
  }
  return out;
}

std::string Bandwidths(const Profile& p, const GpuSpec* gpu) {
  if (p.bandwidth.empty()) return "";
  std::string out = "\nCopy bandwidth\n";
  out += "  kind              from  to      size(MB)     time(us)     GB/s\n";
  for (const BandwidthSample& b : p.bandwidth) {
    out += StrFormat("  %-16s %5d %3d  %12.1f  %11.1f  %7.1f\n",
                     std::string(BandwidthKindName(b.kind)).c_str(), b.from, b.to, b.bytes / 1e6,
                     b.seconds * 1e6, b.BytesPerSecond() / 1e9);
  }
  if (gpu != nullptr && gpu->HostDevice()) {
    out += StrFormat("  datasheet: memory %.0f GB/s (ranks in host memory: no PCIe link)\n",
                     gpu->memory_bandwidth_bytes_per_s / 1e9);
  } else if (gpu != nullptr) {
    out += StrFormat("  datasheet: memory %.0f GB/s, PCIe gen%d x16 %.0f GB/s per direction\n",
                     gpu->memory_bandwidth_bytes_per_s / 1e9, gpu->pcie_gen,
                     gpu->pcie_bytes_per_s / 1e9);
  }
  return out;
}

}  // namespace

std::string FormatProfile(const Profile& p, const ProfileCalibration* cal, const HardwareDb& db) {
  const GpuSpec* gpu = p.gpu_id.empty() ? nullptr : db.FindGpu(p.gpu_id);
  std::string out = Devices(p) + Gemms(p, cal, gpu) + Kernels(p) + Bandwidths(p, gpu);
  if (!p.collectives.empty()) {
    const std::string library = p.versions.mpi.empty() ? "NCCL" : "MPI (" + p.versions.mpi + ")";
    const ElementType type = p.versions.mpi.empty() ? ElementType{} : ElementType{"int64", 8};
    out += "\n" + library + " collectives (nccl-tests format)\n" +
           FormatNcclTests(p.collectives, type);
  }
  if (cal != nullptr)
    out += "\nCost-model figures for " + cal->rates.gpu_id + "\n" + FormatFigureSources(*cal);
  if (!p.skipped.empty()) {
    out += "\nNot measured\n";
    for (const std::string& s : p.skipped) out += "  " + s + "\n";
  }
  return out;
}

}  // namespace gpuplan
