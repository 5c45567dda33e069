// Shared pieces of the GPU kernel tests: the skip-without-GPU check, the error bounds per dtype,
// host <-> device copies through float64, and the comparison against the float64 references.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/dtype.h"

namespace gpuplan::kernels {

/// gtest's name for a dtype parameter ("bf16"), in test names and ctest listings.
inline void PrintTo(DType dtype, std::ostream* os) { *os << DTypeName(dtype); }

/// Test-name generator for suites parameterized by dtype alone: "bf16".
inline std::string DTypeCaseName(const ::testing::TestParamInfo<DType>& info) {
  return std::string(DTypeName(info.param));
}

/// "" when a CUDA GPU is usable; else why not (cudaGetDeviceCount's error, or "0 devices").
std::string NoGpuReason();

/// First statement of every GPU test: skips it, with the reason, when there is no CUDA GPU.
#define GPUPLAN_SKIP_WITHOUT_GPU()                                  \
  do {                                                              \
    const std::string no_gpu = ::gpuplan::kernels::NoGpuReason();   \
    if (!no_gpu.empty()) GTEST_SKIP() << "no CUDA GPU: " << no_gpu; \
  } while (0)

/// Error bounds of a GPU output against the float64 reference run on the same (rounded) inputs:
/// ||got - ref||_2 / ||ref||_2 <= rel_norm and max_i |got_i - ref_i| <= max_abs * max_i |ref_i|.
struct Tolerance {
  double rel_norm;
  double max_abs;
};

/// The bounds for outputs stored in `dtype`, set here for every test:
///   fp32 1e-5 / 2e-5 (fp32 arithmetic, unit roundoff 2^-24, over reductions of up to ~1e5 terms),
///   bf16 2e-2 / 4e-2 (8 significant bits: unit roundoff 2^-8 = 3.9e-3 per rounding; attention
///        also rounds P and dS to bf16 before its matrix products, as FlashAttention-2 does),
///   fp16 5e-3 / 1e-2 (11 significant bits: unit roundoff 2^-11 = 4.9e-4 per rounding).
/// fp32 outputs of kernels with 16-bit inputs (statistics, log-sum-exp, AdamW state) use fp32's.
Tolerance ToleranceFor(DType dtype);

/// Expects `got` within `tol` of `want` (sizes equal), naming `what` and the worst element.
void ExpectClose(std::string_view what, std::span<const double> got, std::span<const double> want,
                 Tolerance tol);

/// n values uniform in [lo, hi) from `seed`, rounded to what `dtype` holds, so that the reference
/// sees exactly the GPU's inputs.
std::vector<double> RandomValues(DType dtype, size_t n, double lo, double hi, unsigned seed);
/// `values` rounded to `dtype` (round to nearest even, as the device conversions).
std::vector<double> RoundTo(DType dtype, std::span<const double> values);

/// A zero-filled device allocation, freed on destruction; null for 0 bytes. A failed cudaMalloc
/// records a test failure and leaves get() null (the kernels then return Invalid).
class DeviceArray {
 public:
  explicit DeviceArray(size_t bytes);
  ~DeviceArray();
  DeviceArray(DeviceArray&& other) noexcept;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray& operator=(DeviceArray&&) = delete;

  void* get() const { return ptr_; }
  float* f32() const { return static_cast<float*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

/// A device copy of `values` encoded in `dtype`.
DeviceArray ToDevice(DType dtype, std::span<const double> values);
/// A device copy of int64 values (labels).
DeviceArray ToDevice(std::span<const int64_t> values);
/// `n` elements of `dtype` copied back and widened to double (after a device synchronise, which
/// also surfaces kernel faults as test failures).
std::vector<double> FromDevice(DType dtype, const DeviceArray& array, size_t n);

}  // namespace gpuplan::kernels
