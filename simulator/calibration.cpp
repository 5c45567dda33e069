#include "simulator/calibration.h"

namespace gpuplan {

HostKernelTimes HostKernelTimes::Scaled(double factor) const {
  HostKernelTimes out;
  auto scale = [factor](const ElementwiseTimes& t) {
    return ElementwiseTimes{t.forward_s * factor, t.backward_s * factor};
  };
  out.rmsnorm = scale(rmsnorm);
  out.layernorm = scale(layernorm);
  out.gelu = scale(gelu);
  out.swiglu = scale(swiglu);
  out.cross_entropy_s = cross_entropy_s * factor;
  out.adam_s = adam_s * factor;
  return out;
}

const CollectiveFit* MeasuredRates::FindCollective(Collective kind, double ranks) const {
  for (const CollectiveFit& f : collectives) {
    if (f.kind == kind && static_cast<double>(f.ranks) == ranks) return &f;
  }
  return nullptr;
}

}  // namespace gpuplan
