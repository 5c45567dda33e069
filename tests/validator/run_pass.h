// Runs the compute ops of one step of a rank's program through a backend's compute, as the step
// executor does (without the communication), for the compute tests of both backends.
#pragma once

#include <gtest/gtest.h>

#include "validator/rank_compute.h"
#include "validator/rank_program.h"

namespace gpuplan {

/// Every kCompute op of `step` (layer runs expanded for stage 0), then EndPass for a pass.
inline void RunPass(RankCompute& c, const JobSpec& job, const ProgramStep& step) {
  for (const RankOp& op : step.ops) {
    if (op.kind == RankOpKind::kCompute) {
      const Status st = c.Run(op, OpSite{step.pass});
      ASSERT_TRUE(st.ok()) << op.name << ": " << st.message();
    } else if (op.kind == RankOpKind::kLayers) {
      for (const LayerOp& inner : ExpandLayers(job, 0, step, op)) {
        if (inner.op.kind != RankOpKind::kCompute) continue;
        const Status st = c.Run(inner.op, OpSite{step.pass, inner.layer, inner.layer_program});
        ASSERT_TRUE(st.ok()) << inner.op.name << ": " << st.message();
      }
    }
  }
  if (step.is_pass) c.EndPass(step.pass);
}

}  // namespace gpuplan
