// Helpers of the float64 reference tests: seeded random vectors and central-difference gradients.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <functional>
#include <random>
#include <span>
#include <string_view>
#include <vector>

namespace gpuplan::kernels {

/// n values uniform in [lo, hi) from a fixed seed.
inline std::vector<double> UniformValues(size_t n, double lo, double hi, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = dist(gen);
  return v;
}

/// sum_i a_i b_i.
inline double Dot(std::span<const double> a, std::span<const double> b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

/// d f / d x_i for every i by central differences, (f(x + h e_i) - f(x - h e_i)) / 2h: error
/// O(h^2) from the third derivative plus O(eps |f| / h) from rounding, ~1e-9 here.
inline std::vector<double> NumericalGradient(
    const std::function<double(std::span<const double>)>& f, std::vector<double> x,
    double h = 1e-5) {
  std::vector<double> g(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double xi = x[i];
    x[i] = xi + h;
    const double up = f(x);
    x[i] = xi - h;
    const double down = f(x);
    x[i] = xi;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

/// Expects |got_i - want_i| <= tol (1 + |want_i|) for every i, naming the first few misses.
inline void ExpectAllNear(std::string_view what, std::span<const double> got,
                          std::span<const double> want, double tol) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int misses = 0;
  for (size_t i = 0; i < got.size() && misses < 5; ++i) {
    if (!(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i])))) {
      ADD_FAILURE() << what << "[" << i << "] = " << got[i] << ", expected " << want[i];
      ++misses;
    }
  }
}

}  // namespace gpuplan::kernels
