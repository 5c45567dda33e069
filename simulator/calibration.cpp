#include "simulator/calibration.h"

#include <algorithm>
#include <cmath>

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

double CollectiveFit::Seconds(double bytes) const {
  if (table.size() >= 2 && bytes >= table.front().first && bytes <= table.back().first) {
    auto hi =
        std::lower_bound(table.begin(), table.end(), bytes,
                         [](const std::pair<double, double>& p, double b) { return p.first < b; });
    if (hi->first == bytes) return hi->second;
    const auto lo = hi - 1;
    const double w = std::log(bytes / lo->first) / std::log(hi->first / lo->first);
    return std::exp(std::log(lo->second) + w * std::log(hi->second / lo->second));
  }
  return alpha_s + bytes * GetCollectiveInfo(kind).bus_factor(ranks) / busbw_bytes_per_s;
}

const CollectiveFit* MeasuredRates::FindCollective(Collective kind, double ranks) const {
  for (const CollectiveFit& f : collectives) {
    if (f.kind == kind && static_cast<double>(f.ranks) == ranks) return &f;
  }
  return nullptr;
}

}  // namespace gpuplan
