#include "profiler/profile_rates.h"

#include <algorithm>

#include "common/str_format.h"
#include "simulator/gemm_time.h"

namespace gpuplan {
namespace {

// Useful FLOP/s over all samples of `kind` in a 16-bit dtype, else (a device without 16-bit
// math: the CPU backend) in fp32, at kAttentionReferenceTokens: each sample's FLOPs divided by
// the device's AttentionLengthFactor at its length (`half_rate_tokens`, DeviceRates). 0 when
// there are none; `precision` gets kBf16 or kFp32, the family the samples ran in.
double AttentionRate(const Profile& p, KernelKind kind, double half_rate_tokens,
                     Precision* precision) {
  for (const bool sixteen_bit : {true, false}) {
    double flops = 0, seconds = 0;
    for (const KernelSample& k : p.kernels) {
      if (k.kernel.kind != kind) continue;
      const bool is_16 = k.kernel.dtype == Precision::kBf16 || k.kernel.dtype == Precision::kFp16;
      if (sixteen_bit ? !is_16 : k.kernel.dtype != Precision::kFp32) continue;
      flops += GetKernelInfo(kind).flops(k.kernel) /
               AttentionLengthFactor(static_cast<double>(k.kernel.seq), half_rate_tokens);
      seconds += k.seconds;
    }
    if (seconds > 0) {
      *precision = sixteen_bit ? Precision::kBf16 : Precision::kFp32;
      return flops / seconds;
    }
  }
  return 0.0;
}

// Seconds per element (rows x cols; AdamW: per parameter) of the profile's fp32 samples of
// `kind` together, or 0 when it has none.
double SecondsPerElement(const Profile& p, KernelKind kind) {
  double elements = 0, seconds = 0;
  for (const KernelSample& k : p.kernels) {
    if (k.kernel.kind != kind || k.kernel.dtype != Precision::kFp32) continue;
    elements += static_cast<double>(kind == KernelKind::kAdam ? k.kernel.cols
                                                              : k.kernel.rows * k.kernel.cols);
    seconds += k.seconds;
  }
  return elements > 0 ? seconds / elements : 0.0;
}

// The host device's element-wise kernel times (HostKernelTimes) from a CPU profile's samples.
HostKernelTimes HostKernels(const Profile& p) {
  auto pair = [&p](KernelKind forward, KernelKind backward) {
    return ElementwiseTimes{SecondsPerElement(p, forward), SecondsPerElement(p, backward)};
  };
  HostKernelTimes t;
  t.rmsnorm = pair(KernelKind::kRmsNormForward, KernelKind::kRmsNormBackward);
  t.layernorm = pair(KernelKind::kLayerNormForward, KernelKind::kLayerNormBackward);
  t.gelu = pair(KernelKind::kGeluForward, KernelKind::kGeluBackward);
  t.swiglu = pair(KernelKind::kSwiGluForward, KernelKind::kSwiGluBackward);
  t.cross_entropy_s = SecondsPerElement(p, KernelKind::kCrossEntropy);
  t.adam_s = SecondsPerElement(p, KernelKind::kAdam);
  return t;
}

// The device-copy sample with the most bytes, or nullptr.
const BandwidthSample* LargestCopy(const Profile& p) {
  const BandwidthSample* best = nullptr;
  for (const BandwidthSample& b : p.bandwidth) {
    if (b.kind == BandwidthKind::kDeviceCopy && (best == nullptr || b.bytes > best->bytes))
      best = &b;
  }
  return best;
}

// TFLOP/s as a report prints it: whole numbers for GPUs, three significant digits below 10
// (a CPU rank).
std::string TflopsText(double flops_per_s) {
  const double t = flops_per_s / 1e12;
  return StrFormat(t < 10 ? "%.3g" : "%.0f", t);
}

std::string SkipReason(const Profile& p, std::string_view what) {
  for (const std::string& s : p.skipped)
    if (s.find(what) != std::string::npos) return s;
  return "";
}

}  // namespace

Expected<ProfileCalibration> CalibrateFromProfile(const Profile& profile, const HardwareDb& db,
                                                  const std::string& origin, ProfileUse use) {
  const std::string measured_on = profile.devices.empty() ? "?" : profile.devices.front().name;
  if (profile.gpu_id.empty()) {
    return Status::Invalid(origin + ": field 'gpu_id': the profile was measured on '" +
                           measured_on +
                           "', which matches no GPU of the hardware database; "
                           "set gpu_id to the id it should calibrate (see `gpuplan hardware`)");
  }
  const GpuSpec* gpu = db.FindGpu(profile.gpu_id);
  if (gpu == nullptr) {
    return Status::Invalid(origin + ": field 'gpu_id': '" + profile.gpu_id +
                           "' is not a GPU of the hardware database (see `gpuplan hardware`)");
  }
  ProfileCalibration cal;
  MeasuredRates& m = cal.rates;
  m.gpu_id = gpu->id;
  const int sms = profile.devices.front().sm_count;

  const BandwidthSample* copy = LargestCopy(profile);
  if (copy != nullptr) {
    m.memory_bytes_per_s = copy->BytesPerSecond();
    cal.sources.push_back(
        {"memory bandwidth", true,
         StrFormat("%.0f GB/s measured (copy of %.0f MB; datasheet peak x efficiency %.0f GB/s)",
                   m.memory_bytes_per_s / 1e9, copy->bytes / 1e6,
                   gpu->memory_bandwidth_bytes_per_s * gpu->memory_efficiency / 1e9)});
  } else {
    cal.sources.push_back({"memory bandwidth", false,
                           "datasheet peak x memory_efficiency "
                           "(the profile has no device copy)"});
  }

  int shape_fit = -1;  // index into cal.gemm_fits of the fit that sets fill depth and overhead
  for (int i = 0; i < kPrecisionCount; ++i) {
    const auto p = static_cast<Precision>(i);
    const std::string figure = "GEMM " + std::string(PrecisionName(p));
    const bool any = std::any_of(profile.gemm.begin(), profile.gemm.end(),
                                 [&](const GemmSample& g) { return g.dtype == p; });
    if (!any) {
      if (gpu->PeakFlops(p) <= 0) continue;  // the GPU has no such precision: nothing to say
      const std::string why = SkipReason(profile, std::string(PrecisionName(p)));
      const bool fp8_field = QuantizedLinears(p) && gpu->gemm_efficiency_fp8 > 0;
      cal.sources.push_back(
          {figure, false,
           "datasheet peak x " +
               std::string(fp8_field ? "gemm_efficiency_fp8" : "gemm_efficiency") + " (" +
               (why.empty() ? "no " + std::string(PrecisionName(p)) + " samples in the profile"
                            : why) +
               ")"});
      continue;
    }
    Expected<GemmFit> fit = FitGemm(profile.gemm, p, sms, m.memory_bytes_per_s);
    if (!fit.ok()) {
      cal.sources.push_back({figure, false, "datasheet (" + fit.status().message() + ")"});
      continue;
    }
    const double peak = gpu->PeakFlops(p);
    // A GEMM faster than the datasheet peak is not a measurement of this GPU (a wrong gpu_id or
    // a damaged file): the datasheet figure stays, with a warning, so MFU never exceeds 100%.
    if (peak > 0 && fit->flops_per_s > kMaxFittedPeakFraction * peak) {
      cal.sources.push_back(
          {figure, false,
           StrFormat("datasheet (the fitted rate %.0f TFLOP/s exceeds the datasheet peak)",
                     fit->flops_per_s / 1e12)});
      cal.warnings.push_back("fitted " + figure +
                             StrFormat(" rate %.0f TFLOP/s exceeds the datasheet peak %.0f TFLOP/s",
                                       fit->flops_per_s / 1e12, peak / 1e12) +
                             " of " + gpu->id + ": not used; is gpu_id right?");
      continue;
    }
    cal.gemm_fits.push_back(*fit);
    m.gemm_flops_per_s[static_cast<size_t>(i)] = fit->flops_per_s;
    cal.sources.push_back(
        {figure, true,
         StrFormat("fit over %d shapes: best rate %s TFLOP/s (%.0f%% of datasheet peak), "
                   "fill depth %.0f, overhead %.1f us, rms error %.1f%%; x %.2f sustained in "
                   "training",
                   fit->samples, TflopsText(fit->flops_per_s).c_str(),
                   peak > 0 ? 100.0 * fit->flops_per_s / peak : 0.0, fit->fill_depth,
                   fit->overhead_s * 1e6, 100.0 * fit->rms_relative_error,
                   SustainedGemmFraction(*gpu))});
    if (p == Precision::kBf16 || shape_fit < 0)
      shape_fit = static_cast<int>(cal.gemm_fits.size()) - 1;
  }
  if (shape_fit >= 0) {
    const GemmFit& f = cal.gemm_fits[static_cast<size_t>(shape_fit)];
    m.gemm_fill_depth = f.fill_depth;
    if (f.overhead_s > 0) m.kernel_overhead_s = f.overhead_s;
  }

  const double half_rate_tokens = AttentionHalfRateTokens(*gpu);
  Precision backward_precision = Precision::kBf16;
  m.attention_forward_flops_per_s = AttentionRate(profile, KernelKind::kAttentionForward,
                                                  half_rate_tokens, &m.attention_precision);
  m.attention_backward_flops_per_s =
      AttentionRate(profile, KernelKind::kAttentionBackward, half_rate_tokens, &backward_precision);
  const bool attention_measured = m.attention_forward_flops_per_s > 0 &&
                                  m.attention_backward_flops_per_s > 0 &&
                                  m.attention_precision == backward_precision;
  if (attention_measured && use == ProfileUse::kTrainingStacks && !gpu->HostDevice()) {
    cal.sources.push_back(
        {"attention", false,
         StrFormat("datasheet GEMM rate x %.2f x the stack's kernel speed: training stacks run "
                   "FlashAttention or cuDNN, not the profile's attention kernels (kernels/: "
                   "forward %s, backward %s TFLOP/s), which gpuplan validate runs",
                   kFusedAttentionRelativeEfficiency,
                   TflopsText(m.attention_forward_flops_per_s).c_str(),
                   TflopsText(m.attention_backward_flops_per_s).c_str())});
    m.attention_forward_flops_per_s = m.attention_backward_flops_per_s = 0;
  } else if (attention_measured) {
    cal.sources.push_back(
        {"attention", true,
         StrFormat("the profile's attention kernels (kernels/): forward %s, backward %s "
                   "TFLOP/s (x %.2f sustained)",
                   TflopsText(m.attention_forward_flops_per_s).c_str(),
                   TflopsText(m.attention_backward_flops_per_s).c_str(),
                   SustainedGemmFraction(*gpu))});
  } else {
    m.attention_forward_flops_per_s = m.attention_backward_flops_per_s = 0;
    cal.sources.push_back(
        {"attention", false,
         StrFormat("datasheet GEMM rate x %.2f (the profile lacks attention_fwd and "
                   "attention_bwd samples of one precision)",
                   kFusedAttentionRelativeEfficiency)});
  }

  if (gpu->HostDevice()) {
    m.host_kernels = HostKernels(profile);
    const HostKernelTimes& k = m.host_kernels;
    cal.sources.push_back(
        {"element-wise", true,
         StrFormat("the profile's kernels (kernels/), ns per element forward/backward: RMSNorm "
                   "%.2f/%.2f, LayerNorm %.2f/%.2f, GELU %.2f/%.2f, SwiGLU %.2f/%.2f; "
                   "cross-entropy %.2f per logit, AdamW %.2f per parameter (0: not measured, "
                   "priced by its bytes)",
                   k.rmsnorm.forward_s * 1e9, k.rmsnorm.backward_s * 1e9,
                   k.layernorm.forward_s * 1e9, k.layernorm.backward_s * 1e9,
                   k.gelu.forward_s * 1e9, k.gelu.backward_s * 1e9, k.swiglu.forward_s * 1e9,
                   k.swiglu.backward_s * 1e9, k.cross_entropy_s * 1e9, k.adam_s * 1e9)});
  }
  m.compute_time_factor = profile.corrections.compute_time_factor;
  m.communication_time_factor = profile.corrections.communication_time_factor;
  if (profile.corrections.Any()) {
    cal.sources.push_back(
        {"validation", true,
         StrFormat("measured/predicted corrections from %zu report(s): compute x %.3f, "
                   "communication x %.3f (gpuplan calibrate)",
                   profile.corrections.reports.size(), m.compute_time_factor,
                   m.communication_time_factor)});
  }
  m.collectives = FitCollectives(profile.collectives);
  for (const CollectiveFit& f : m.collectives) {
    cal.sources.push_back(
        {std::string(GetCollectiveInfo(f.kind).name) + " x" + std::to_string(f.ranks), true,
         StrFormat("alpha %.1f us, busbw %.1f GB/s (%d sizes, rms error %.1f%%)", f.alpha_s * 1e6,
                   f.busbw_bytes_per_s / 1e9, f.samples, 100.0 * f.rms_relative_error)});
  }
  cal.sources.push_back(
      {"other collectives", false,
       m.collectives.empty()
           ? "datasheet scale-up and network bandwidth x efficiency (the profile has no "
             "multi-GPU collectives" +
                 std::string(profile.devices.size() < 2 ? ": one device)" : ")")
           : "group sizes not measured and everything across nodes: datasheet bandwidth x "
             "efficiency (a one-host profile cannot measure the network)"});
  return cal;
}

std::string FormatFigureSources(const ProfileCalibration& calibration) {
  std::string out;
  for (const FigureSource& s : calibration.sources) {
    out += "  " + s.figure + std::string(s.figure.size() < 18 ? 18 - s.figure.size() : 1, ' ') +
           (s.from_profile ? "profile    " : "datasheet  ") + s.detail + "\n";
  }
  for (const std::string& w : calibration.warnings) out += "  warning: " + w + "\n";
  return out;
}

}  // namespace gpuplan
