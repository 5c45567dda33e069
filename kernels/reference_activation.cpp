#include "kernels/reference_activation.h"

#include <cmath>

#include "kernels/tensor_shapes.h"

namespace gpuplan::kernels {
namespace {

// Constants of the tanh approximation (Hendrycks & Gimpel 2016, Sec. 2).
constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2 / pi)
constexpr double kCubic = 0.044715;

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

Status CheckPair(const char* a_name, std::span<const double> a, const char* b_name,
                 std::span<const double> b) {
  GPUPLAN_RETURN_IF_ERROR(CheckElementCount(a_name, static_cast<int64_t>(a.size())));
  return CheckSize(b_name, b.size(), static_cast<int64_t>(a.size()));
}

}  // namespace

double Gelu(double x) {
  return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + kCubic * x * x * x)));
}

double GeluDerivative(double x) {
  const double t = std::tanh(kSqrt2OverPi * (x + kCubic * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * kSqrt2OverPi * (1.0 + 3.0 * kCubic * x * x);
}

Expected<std::vector<double>> ReferenceGeluForward(std::span<const double> x) {
  GPUPLAN_RETURN_IF_ERROR(CheckElementCount("gelu x", static_cast<int64_t>(x.size())));
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = Gelu(x[i]);
  return y;
}

Expected<std::vector<double>> ReferenceGeluBackward(std::span<const double> x,
                                                    std::span<const double> dy) {
  GPUPLAN_RETURN_IF_ERROR(CheckPair("gelu x", x, "gelu dy", dy));
  std::vector<double> dx(x.size());
  for (size_t i = 0; i < x.size(); ++i) dx[i] = dy[i] * GeluDerivative(x[i]);
  return dx;
}

Expected<std::vector<double>> ReferenceSwiGluForward(std::span<const double> gate,
                                                     std::span<const double> up) {
  GPUPLAN_RETURN_IF_ERROR(CheckPair("swiglu gate", gate, "swiglu up", up));
  std::vector<double> out(gate.size());
  for (size_t i = 0; i < gate.size(); ++i) out[i] = gate[i] * Sigmoid(gate[i]) * up[i];
  return out;
}

Expected<SwiGluGradients> ReferenceSwiGluBackward(std::span<const double> gate,
                                                  std::span<const double> up,
                                                  std::span<const double> dy) {
  GPUPLAN_RETURN_IF_ERROR(CheckPair("swiglu gate", gate, "swiglu up", up));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("swiglu dy", dy.size(), static_cast<int64_t>(gate.size())));
  SwiGluGradients g;
  g.dgate.resize(gate.size());
  g.dup.resize(gate.size());
  for (size_t i = 0; i < gate.size(); ++i) {
    const double s = Sigmoid(gate[i]);
    g.dgate[i] = dy[i] * up[i] * s * (1.0 + gate[i] * (1.0 - s));
    g.dup[i] = dy[i] * gate[i] * s;
  }
  return g;
}

}  // namespace gpuplan::kernels
