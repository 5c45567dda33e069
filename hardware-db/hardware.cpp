#include "hardware-db/hardware.h"

#include <array>

namespace gpuplan {
namespace {

constexpr std::array<std::string_view, kPrecisionCount> kPrecisionNames = {"fp32", "tf32", "bf16",
                                                                           "fp16", "fp8",  "fp4"};

}  // namespace

std::string_view PrecisionName(Precision p) {
  const int i = static_cast<int>(p);
  if (i < 0 || i >= kPrecisionCount) return "unknown";
  return kPrecisionNames[static_cast<size_t>(i)];
}

const std::vector<double>* MeasuredNetworkBusbw::Find(std::string_view name) const {
  for (const auto& [collective, series] : busbw_bytes_per_s) {
    if (collective == name) return &series;
  }
  return nullptr;
}

bool ParsePrecision(std::string_view name, Precision* out) {
  for (int i = 0; i < kPrecisionCount; ++i) {
    if (kPrecisionNames[static_cast<size_t>(i)] == name) {
      if (out != nullptr) *out = static_cast<Precision>(i);
      return true;
    }
  }
  return false;
}

}  // namespace gpuplan
