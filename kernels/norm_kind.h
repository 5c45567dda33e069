// Which row normalisation a norm kernel or reference computes.
#pragma once

#include <string_view>

namespace gpuplan::kernels {

/// RMSNorm: y = x * rstd * w, rstd = 1/sqrt(mean(x^2) + eps) (Zhang & Sennrich 2019, Eq. 4).
/// LayerNorm: y = (x - mean) * rstd * w + b, rstd = 1/sqrt(var(x) + eps), var the biased
/// (population) variance over the row (Ba et al. 2016, Eq. 3-4).
enum class NormKind { kRmsNorm, kLayerNorm };

constexpr std::string_view NormKindName(NormKind kind) {
  return kind == NormKind::kRmsNorm ? "rmsnorm" : "layernorm";
}

}  // namespace gpuplan::kernels
