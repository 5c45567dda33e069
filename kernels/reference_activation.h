// CPU reference of the elementwise MLP activations, GELU (tanh approximation) and SwiGLU: float64
// for the tests' ground truth, float32 (the ...Into forms) for the validator's CPU ranks.
#pragma once

#include <span>
#include <vector>

#include "common/status.h"

namespace gpuplan::kernels {

/// GELU, tanh approximation (Hendrycks & Gimpel 2016, Sec. 2):
///   gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
double Gelu(double x);
/// d gelu / dx of the same approximation:
///   0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2), t = tanh(...) above.
double GeluDerivative(double x);

/// y = gelu(x) elementwise; Invalid when x is empty.
Expected<std::vector<double>> ReferenceGeluForward(std::span<const double> x);
/// dx = dy * gelu'(x); x and dy the same non-zero size.
Expected<std::vector<double>> ReferenceGeluBackward(std::span<const double> x,
                                                    std::span<const double> dy);

/// SwiGLU's gating (Shazeer 2020, "GLU Variants Improve Transformer", Eq. 6, with beta = 1):
///   out = silu(gate) * up, silu(g) = g sigmoid(g). gate and up the same non-zero size.
Expected<std::vector<double>> ReferenceSwiGluForward(std::span<const double> gate,
                                                     std::span<const double> up);

/// dgate and dup, each the size of gate.
struct SwiGluGradients {
  std::vector<double> dgate;
  std::vector<double> dup;
};
/// With s = sigmoid(gate): dgate = dy up s (1 + gate (1 - s)), dup = dy gate s.
Expected<SwiGluGradients> ReferenceSwiGluBackward(std::span<const double> gate,
                                                  std::span<const double> up,
                                                  std::span<const double> dy);

/// The same in `T` (float or double) into the caller's buffers, each the size of the first input.
template <typename T>
Status ReferenceGeluForwardInto(std::span<const T> x, std::span<T> y);
template <typename T>
Status ReferenceGeluBackwardInto(std::span<const T> x, std::span<const T> dy, std::span<T> dx);
template <typename T>
Status ReferenceSwiGluForwardInto(std::span<const T> gate, std::span<const T> up, std::span<T> out);
template <typename T>
Status ReferenceSwiGluBackwardInto(std::span<const T> gate, std::span<const T> up,
                                   std::span<const T> dy, std::span<T> dgate, std::span<T> dup);

}  // namespace gpuplan::kernels
