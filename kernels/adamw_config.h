// Hyper-parameters of one AdamW step, shared by the float64 reference and the CUDA kernel.
#pragma once

#include <cstdint>

#include "common/status.h"

namespace gpuplan::kernels {

/// AdamW (Loshchilov & Hutter 2019, "Decoupled Weight Decay Regularization", Algorithm 2) with
/// the schedule multiplier folded into `lr`, as PyTorch's torch.optim.AdamW:
///   m = beta1 m + (1 - beta1) g,  v = beta2 v + (1 - beta2) g^2,
///   m_hat = m / (1 - beta1^step),  v_hat = v / (1 - beta2^step),
///   param -= lr * (m_hat / (sqrt(v_hat) + eps) + weight_decay * param).
/// The decay uses the parameter before this step (decoupled from the gradient).
struct AdamWConfig {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.01;
  int64_t step = 1;  ///< 1 for the first update (bias correction 1 - beta^step)
};

/// Ok when lr >= 0, 0 <= beta1, beta2 < 1, eps > 0, weight_decay >= 0 and step >= 1; else
/// Invalid naming the field.
Status CheckAdamWConfig(const AdamWConfig& config);

/// 1 - beta^step, the bias correction of a moment (Kingma & Ba 2015, Algorithm 1).
double BiasCorrection(double beta, int64_t step);

}  // namespace gpuplan::kernels
