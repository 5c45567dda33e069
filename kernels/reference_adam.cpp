#include "kernels/reference_adam.h"

#include <cmath>

#include "kernels/tensor_shapes.h"

namespace gpuplan::kernels {

template <typename T>
Status ReferenceAdamWStep(const AdamWConfig& config, std::span<T> param, std::span<T> exp_avg,
                          std::span<T> exp_avg_sq, std::span<const T> grad) {
  GPUPLAN_RETURN_IF_ERROR(CheckAdamWConfig(config));
  const auto n = static_cast<int64_t>(grad.size());
  GPUPLAN_RETURN_IF_ERROR(CheckElementCount("adamw grad", n));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("adamw param", param.size(), n));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("adamw exp_avg", exp_avg.size(), n));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("adamw exp_avg_sq", exp_avg_sq.size(), n));
  const T beta1 = static_cast<T>(config.beta1);
  const T beta2 = static_cast<T>(config.beta2);
  const T bc1 = static_cast<T>(BiasCorrection(config.beta1, config.step));
  const T bc2 = static_cast<T>(BiasCorrection(config.beta2, config.step));
  const T lr = static_cast<T>(config.lr);
  const T eps = static_cast<T>(config.eps);
  const T weight_decay = static_cast<T>(config.weight_decay);
  for (size_t i = 0; i < grad.size(); ++i) {
    const T g = grad[i];
    exp_avg[i] = beta1 * exp_avg[i] + (T(1) - beta1) * g;
    exp_avg_sq[i] = beta2 * exp_avg_sq[i] + (T(1) - beta2) * g * g;
    const T m_hat = exp_avg[i] / bc1;
    const T v_hat = exp_avg_sq[i] / bc2;
    param[i] -= lr * (m_hat / (std::sqrt(v_hat) + eps) + weight_decay * param[i]);
  }
  return Status::Ok();
}

template Status ReferenceAdamWStep<double>(const AdamWConfig&, std::span<double>, std::span<double>,
                                           std::span<double>, std::span<const double>);
template Status ReferenceAdamWStep<float>(const AdamWConfig&, std::span<float>, std::span<float>,
                                          std::span<float>, std::span<const float>);

}  // namespace gpuplan::kernels
