#include "simulator/timeline.h"

#include <array>

namespace gpuplan {

std::string_view StreamName(SimStream stream) {
  static constexpr std::array<std::string_view, kSimStreamCount> kNames = {
      "compute", "tp comm", "cp comm", "ep comm", "pp send", "pp recv", "dp gather", "dp reduce"};
  return kNames[static_cast<size_t>(stream)];
}

}  // namespace gpuplan
