#include "simulator/calibration.h"

namespace gpuplan {

const CollectiveFit* MeasuredRates::FindCollective(Collective kind, double ranks) const {
  for (const CollectiveFit& f : collectives) {
    if (f.kind == kind && static_cast<double>(f.ranks) == ranks) return &f;
  }
  return nullptr;
}

}  // namespace gpuplan
