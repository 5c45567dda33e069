#include "tests/kernels/gpu_test_support.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <type_traits>

namespace gpuplan::kernels {

std::string NoGpuReason() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear it
    return std::string("cudaGetDeviceCount: ") + cudaGetErrorString(err);
  }
  return count == 0 ? "cudaGetDeviceCount reports 0 devices" : "";
}

Tolerance ToleranceFor(DType dtype) {
  switch (dtype) {
    case DType::kFp32:
      return {1e-5, 2e-5};
    case DType::kBf16:
      return {2e-2, 4e-2};
    case DType::kFp16:
      return {5e-3, 1e-2};
  }
  return {0, 0};
}

void ExpectClose(std::string_view what, std::span<const double> got, std::span<const double> want,
                 Tolerance tol) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double err_sq = 0;
  double ref_sq = 0;
  double ref_max = 0;
  double worst = -1;
  size_t worst_at = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = std::abs(got[i] - want[i]);
    err_sq += e * e;
    ref_sq += want[i] * want[i];
    ref_max = std::max(ref_max, std::abs(want[i]));
    if (!(e <= worst)) {  // also catches NaN
      worst = e;
      worst_at = i;
    }
  }
  const double rel = std::sqrt(err_sq) / std::max(std::sqrt(ref_sq), 1e-30);
  EXPECT_LE(rel, tol.rel_norm) << what << ": norm-wise relative error";
  EXPECT_LE(worst, tol.max_abs * ref_max)
      << what << ": max abs error at " << worst_at << ": got " << got[worst_at] << ", want "
      << want[worst_at] << " (max |ref| " << ref_max << ")";
}

std::vector<double> RoundTo(DType dtype, std::span<const double> values) {
  std::vector<double> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const auto f = static_cast<float>(values[i]);
    switch (dtype) {
      case DType::kFp32:
        out[i] = f;
        break;
      case DType::kBf16:
        out[i] = __bfloat162float(__float2bfloat16_rn(f));
        break;
      case DType::kFp16:
        out[i] = __half2float(__float2half_rn(f));
        break;
    }
  }
  return out;
}

std::vector<double> RandomValues(DType dtype, size_t n, double lo, double hi, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = dist(gen);
  return RoundTo(dtype, v);
}

DeviceArray::DeviceArray(size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  cudaError_t err = cudaMalloc(&ptr_, bytes);
  if (err == cudaSuccess) err = cudaMemset(ptr_, 0, bytes);
  if (err != cudaSuccess) {
    ADD_FAILURE() << "cudaMalloc/cudaMemset of " << bytes << " bytes: " << cudaGetErrorString(err);
    cudaFree(ptr_);
    ptr_ = nullptr;
  }
}

DeviceArray::DeviceArray(DeviceArray&& other) noexcept : ptr_(other.ptr_), bytes_(other.bytes_) {
  other.ptr_ = nullptr;
  other.bytes_ = 0;
}

DeviceArray::~DeviceArray() { cudaFree(ptr_); }

namespace {

void Upload(const DeviceArray& array, const void* host, size_t bytes) {
  if (array.get() == nullptr) return;
  const cudaError_t err = cudaMemcpy(array.get(), host, bytes, cudaMemcpyHostToDevice);
  EXPECT_EQ(err, cudaSuccess) << "cudaMemcpy to device: " << cudaGetErrorString(err);
}

// Host copies of the storage types, encoded through the CUDA conversion functions.
template <typename T>
std::vector<T> Encode(std::span<const double> values) {
  std::vector<T> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const auto f = static_cast<float>(values[i]);
    if constexpr (std::is_same_v<T, float>) {
      out[i] = f;
    } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      out[i] = __float2bfloat16_rn(f);
    } else {
      out[i] = __float2half_rn(f);
    }
  }
  return out;
}

template <typename T>
DeviceArray ToDeviceAs(std::span<const double> values) {
  const std::vector<T> host = Encode<T>(values);
  DeviceArray array(host.size() * sizeof(T));
  Upload(array, host.data(), host.size() * sizeof(T));
  return array;
}

template <typename T>
std::vector<double> Decode(const DeviceArray& array, size_t n) {
  std::vector<T> host(n);
  std::vector<double> out(n, std::nan(""));
  if (array.get() == nullptr) return out;
  cudaError_t err = cudaDeviceSynchronize();
  EXPECT_EQ(err, cudaSuccess) << "kernel failed: " << cudaGetErrorString(err);
  err = cudaMemcpy(host.data(), array.get(), n * sizeof(T), cudaMemcpyDeviceToHost);
  EXPECT_EQ(err, cudaSuccess) << "cudaMemcpy to host: " << cudaGetErrorString(err);
  for (size_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, float>) {
      out[i] = host[i];
    } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      out[i] = __bfloat162float(host[i]);
    } else {
      out[i] = __half2float(host[i]);
    }
  }
  return out;
}

}  // namespace

DeviceArray ToDevice(DType dtype, std::span<const double> values) {
  switch (dtype) {
    case DType::kBf16:
      return ToDeviceAs<__nv_bfloat16>(values);
    case DType::kFp16:
      return ToDeviceAs<__half>(values);
    case DType::kFp32:
      break;
  }
  return ToDeviceAs<float>(values);
}

DeviceArray ToDevice(std::span<const int64_t> values) {
  DeviceArray array(values.size() * sizeof(int64_t));
  Upload(array, values.data(), values.size() * sizeof(int64_t));
  return array;
}

std::vector<double> FromDevice(DType dtype, const DeviceArray& array, size_t n) {
  switch (dtype) {
    case DType::kBf16:
      return Decode<__nv_bfloat16>(array, n);
    case DType::kFp16:
      return Decode<__half>(array, n);
    case DType::kFp32:
      break;
  }
  return Decode<float>(array, n);
}

}  // namespace gpuplan::kernels
