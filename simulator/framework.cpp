#include "simulator/framework.h"


namespace gpuplan {
namespace {

constexpr FrameworkTraits kFrameworks[] = {
    {Framework::kMegatronCore, "megatron-core",
     "NVIDIA/Megatron-LM megatron/core (tensor_parallel/cross_entropy.py, "
     "distributed/distributed_data_parallel.py, fused SwiGLU and rotary)",
     6.0, 0.0, false, PipelineSplit::kEven},
    {Framework::kNanotron, "nanotron",
     "huggingface/nanotron src/nanotron (parallel/tensor_parallel/functional.py, "
     "optim/gradient_accumulator.py, models/llama.py, models/base.py)",
     10.0, 2.0, true, PipelineSplit::kCostBalanced},
};

}  // namespace

std::span<const FrameworkTraits> Frameworks() { return kFrameworks; }

const FrameworkTraits& TraitsOf(Framework f) {
  for (const FrameworkTraits& t : kFrameworks) {
    if (t.id == f) return t;
  }
  return kFrameworks[0];
}

bool ParseFramework(std::string_view name, Framework* out) {
  for (const FrameworkTraits& t : kFrameworks) {
    if (name == t.name) {
      *out = t.id;
      return true;
    }
  }
  return false;
}

std::string FrameworkNames() {
  std::string names;
  for (const FrameworkTraits& t : kFrameworks) names += (names.empty() ? "" : ", ") + std::string(t.name);
  return names;
}

}  // namespace gpuplan
