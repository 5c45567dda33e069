#include "cli/moe_options.h"

namespace gpuplan {

void AddMoeOptions(CLI::App* sub, MoeOptions* o, const std::string& deepep_note) {
  sub->add_option("--moe-dispatcher", o->dispatcher,
                  "MoE token dispatch: alltoall (NCCL, default) | deepep (" + deepep_note + ")");
  sub->add_option("--moe-load-imbalance", o->load_imbalance,
                  "MoE: busiest expert-parallel rank's routed tokens over the mean (>= 1; "
                  "default 1, balanced)");
}

}  // namespace gpuplan
