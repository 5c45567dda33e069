// CPU reference of one AdamW optimizer step, in float64 (the tests' ground truth) or float32 (the
// validator's CPU ranks).
#pragma once

#include <span>

#include "common/status.h"
#include "kernels/adamw_config.h"

namespace gpuplan::kernels {

/// One AdamW step in place (Loshchilov & Hutter 2019, Algorithm 2; formulas in AdamWConfig) over
/// param, exp_avg (m), exp_avg_sq (v), all the size of grad (> 0). Invalid when the config or a
/// size is wrong; the buffers are then untouched.
/// `T` is float or double.
template <typename T>
Status ReferenceAdamWStep(const AdamWConfig& config, std::span<T> param, std::span<T> exp_avg,
                          std::span<T> exp_avg_sq, std::span<const T> grad);

}  // namespace gpuplan::kernels
