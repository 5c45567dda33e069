// Element types of the activations and gradients the CUDA kernels read and write.
#pragma once

#include <cstddef>
#include <string_view>

namespace gpuplan::kernels {

/// fp32 (float), bf16 (__nv_bfloat16) or fp16 (__half). Kernels accumulate in fp32 whatever
/// the storage type.
enum class DType { kFp32, kBf16, kFp16 };

constexpr size_t DTypeBytes(DType t) { return t == DType::kFp32 ? 4 : 2; }

constexpr std::string_view DTypeName(DType t) {
  switch (t) {
    case DType::kFp32:
      return "fp32";
    case DType::kBf16:
      return "bf16";
    case DType::kFp16:
      return "fp16";
  }
  return "?";
}

}  // namespace gpuplan::kernels
