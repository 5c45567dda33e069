#include "kernels/reference_activation.h"

#include <cmath>
#include <initializer_list>
#include <string>

#include "kernels/tensor_shapes.h"

namespace gpuplan::kernels {
namespace {

// Constants of the tanh approximation (Hendrycks & Gimpel 2016, Sec. 2).
constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2 / pi)
constexpr double kCubic = 0.044715;

template <typename T>
T GeluOf(T x) {
  return T(0.5) * x * (T(1) + std::tanh(T(kSqrt2OverPi) * (x + T(kCubic) * x * x * x)));
}

template <typename T>
T GeluDerivativeOf(T x) {
  const T t = std::tanh(T(kSqrt2OverPi) * (x + T(kCubic) * x * x * x));
  return T(0.5) * (T(1) + t) +
         T(0.5) * x * (T(1) - t * t) * T(kSqrt2OverPi) * (T(1) + T(3 * kCubic) * x * x);
}

template <typename T>
T Sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

// a non-empty, every other buffer its size.
template <typename T>
Status CheckSizes(const char* what, std::span<const T> a, std::initializer_list<size_t> others) {
  GPUPLAN_RETURN_IF_ERROR(
      CheckElementCount(std::string(what) + " input", static_cast<int64_t>(a.size())));
  for (size_t size : others) {
    GPUPLAN_RETURN_IF_ERROR(
        CheckSize(std::string(what) + " buffer", size, static_cast<int64_t>(a.size())));
  }
  return Status::Ok();
}

}  // namespace

double Gelu(double x) { return GeluOf(x); }
double GeluDerivative(double x) { return GeluDerivativeOf(x); }

template <typename T>
Status ReferenceGeluForwardInto(std::span<const T> x, std::span<T> y) {
  GPUPLAN_RETURN_IF_ERROR(CheckSizes("gelu", x, {y.size()}));
  for (size_t i = 0; i < x.size(); ++i) y[i] = GeluOf(x[i]);
  return Status::Ok();
}

template <typename T>
Status ReferenceGeluBackwardInto(std::span<const T> x, std::span<const T> dy, std::span<T> dx) {
  GPUPLAN_RETURN_IF_ERROR(CheckSizes("gelu", x, {dy.size(), dx.size()}));
  for (size_t i = 0; i < x.size(); ++i) dx[i] = dy[i] * GeluDerivativeOf(x[i]);
  return Status::Ok();
}

template <typename T>
Status ReferenceSwiGluForwardInto(std::span<const T> gate, std::span<const T> up,
                                  std::span<T> out) {
  GPUPLAN_RETURN_IF_ERROR(CheckSizes("swiglu", gate, {up.size(), out.size()}));
  for (size_t i = 0; i < gate.size(); ++i) out[i] = gate[i] * Sigmoid(gate[i]) * up[i];
  return Status::Ok();
}

template <typename T>
Status ReferenceSwiGluBackwardInto(std::span<const T> gate, std::span<const T> up,
                                   std::span<const T> dy, std::span<T> dgate, std::span<T> dup) {
  GPUPLAN_RETURN_IF_ERROR(
      CheckSizes("swiglu", gate, {up.size(), dy.size(), dgate.size(), dup.size()}));
  for (size_t i = 0; i < gate.size(); ++i) {
    const T s = Sigmoid(gate[i]);
    dgate[i] = dy[i] * up[i] * s * (T(1) + gate[i] * (T(1) - s));
    dup[i] = dy[i] * gate[i] * s;
  }
  return Status::Ok();
}

Expected<std::vector<double>> ReferenceGeluForward(std::span<const double> x) {
  std::vector<double> y(x.size());
  GPUPLAN_RETURN_IF_ERROR(ReferenceGeluForwardInto<double>(x, y));
  return y;
}

Expected<std::vector<double>> ReferenceGeluBackward(std::span<const double> x,
                                                    std::span<const double> dy) {
  std::vector<double> dx(x.size());
  GPUPLAN_RETURN_IF_ERROR(ReferenceGeluBackwardInto<double>(x, dy, dx));
  return dx;
}

Expected<std::vector<double>> ReferenceSwiGluForward(std::span<const double> gate,
                                                     std::span<const double> up) {
  std::vector<double> out(gate.size());
  GPUPLAN_RETURN_IF_ERROR(ReferenceSwiGluForwardInto<double>(gate, up, out));
  return out;
}

Expected<SwiGluGradients> ReferenceSwiGluBackward(std::span<const double> gate,
                                                  std::span<const double> up,
                                                  std::span<const double> dy) {
  SwiGluGradients g;
  g.dgate.resize(gate.size());
  g.dup.resize(gate.size());
  GPUPLAN_RETURN_IF_ERROR(ReferenceSwiGluBackwardInto<double>(gate, up, dy, g.dgate, g.dup));
  return g;
}

template Status ReferenceGeluForwardInto<float>(std::span<const float>, std::span<float>);
template Status ReferenceGeluBackwardInto<float>(std::span<const float>, std::span<const float>,
                                                 std::span<float>);
template Status ReferenceSwiGluForwardInto<float>(std::span<const float>, std::span<const float>,
                                                  std::span<float>);
template Status ReferenceSwiGluBackwardInto<float>(std::span<const float>, std::span<const float>,
                                                   std::span<const float>, std::span<float>,
                                                   std::span<float>);

}  // namespace gpuplan::kernels
