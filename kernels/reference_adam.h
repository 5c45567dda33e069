// Float64 CPU reference of one AdamW optimizer step.
#pragma once

#include <span>

#include "common/status.h"
#include "kernels/adamw_config.h"

namespace gpuplan::kernels {

/// One AdamW step in place (Loshchilov & Hutter 2019, Algorithm 2; formulas in AdamWConfig) over
/// param, exp_avg (m), exp_avg_sq (v), all the size of grad (> 0). Invalid when the config or a
/// size is wrong; the buffers are then untouched.
Status ReferenceAdamWStep(const AdamWConfig& config, std::span<double> param,
                          std::span<double> exp_avg, std::span<double> exp_avg_sq,
                          std::span<const double> grad);

}  // namespace gpuplan::kernels
