#include "kernels/reference_adam.h"

#include <cmath>

#include "kernels/tensor_shapes.h"

namespace gpuplan::kernels {

Status ReferenceAdamWStep(const AdamWConfig& config, std::span<double> param,
                          std::span<double> exp_avg, std::span<double> exp_avg_sq,
                          std::span<const double> grad) {
  GPUPLAN_RETURN_IF_ERROR(CheckAdamWConfig(config));
  const auto n = static_cast<int64_t>(grad.size());
  GPUPLAN_RETURN_IF_ERROR(CheckElementCount("adamw grad", n));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("adamw param", param.size(), n));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("adamw exp_avg", exp_avg.size(), n));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("adamw exp_avg_sq", exp_avg_sq.size(), n));
  const double bc1 = BiasCorrection(config.beta1, config.step);
  const double bc2 = BiasCorrection(config.beta2, config.step);
  for (size_t i = 0; i < grad.size(); ++i) {
    const double g = grad[i];
    exp_avg[i] = config.beta1 * exp_avg[i] + (1.0 - config.beta1) * g;
    exp_avg_sq[i] = config.beta2 * exp_avg_sq[i] + (1.0 - config.beta2) * g * g;
    const double m_hat = exp_avg[i] / bc1;
    const double v_hat = exp_avg_sq[i] / bc2;
    param[i] -=
        config.lr * (m_hat / (std::sqrt(v_hat) + config.eps) + config.weight_decay * param[i]);
  }
  return Status::Ok();
}

}  // namespace gpuplan::kernels
