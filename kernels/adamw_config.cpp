#include "kernels/adamw_config.h"

#include <cmath>
#include <string>

namespace gpuplan::kernels {

Status CheckAdamWConfig(const AdamWConfig& config) {
  // Negated comparisons so that NaN fails every check.
  if (!(config.lr >= 0)) return Status::Invalid("adamw: lr must be >= 0");
  if (!(config.beta1 >= 0 && config.beta1 < 1)) {
    return Status::Invalid("adamw: beta1 must be in [0, 1)");
  }
  if (!(config.beta2 >= 0 && config.beta2 < 1)) {
    return Status::Invalid("adamw: beta2 must be in [0, 1)");
  }
  if (!(config.eps > 0)) return Status::Invalid("adamw: eps must be > 0");
  if (!(config.weight_decay >= 0)) return Status::Invalid("adamw: weight_decay must be >= 0");
  if (config.step < 1) {
    return Status::Invalid("adamw: step must be >= 1, got " + std::to_string(config.step));
  }
  return Status::Ok();
}

double BiasCorrection(double beta, int64_t step) {
  return 1.0 - std::pow(beta, static_cast<double>(step));
}

}  // namespace gpuplan::kernels
