// Training stacks: whether the stack a job runs on (TrainingSpec::framework, a FrameworkSpec of
// hardware-db/data/frameworks.json) can run its layout.
#pragma once

#include "common/status.h"

namespace gpuplan {

struct JobSpec;

/// Whether the job's stack can run its layout at all, from its FrameworkSpec; an invalid-input
/// Status naming the field and the reason when it cannot: tp, pp, cp or ep above 1 where the
/// stack's parallel_dims lacks it (Composer: data parallelism and FSDP only), a ZeRO stage above
/// max_zero_stage or FSDP without `fsdp` (nanotron shards only the optimizer state, optim/zero.py),
/// CPU offload without `cpu_offload` (nanotron has no optimizer offload, config/config.py),
/// with pp >= 2 a ZeRO stage above max_zero_stage_with_pp (DeepSpeed's PipelineEngine: 0-1), or
/// vpp > 1 without interleaved_pipeline (DeepSpeed's and nanotron's engines run one chunk a stage);
/// with pp >= 2 and vpp 1, fewer than pp - 1 micro-batches per step where
/// pipeline_needs_pp_minus_1_microbatches (nanotron's 1F1B engine asserts it,
/// parallel/pipeline_parallel/engine.py), or a cost-balanced split that leaves a stage without a
/// block (models/base.py build_model makes the stage its walk ended on the output stage;
/// CostBalancedPlacement). The Ultra-Scale Playbook's config generator (huggingface/bench_cluster
/// create_configs.py) skips both pipeline cases, and in the layout sweep every row of either kind
/// crashed (105 rows with too few micro-batches; the 1B on 16 stages, 65 of 66).
Status StackRunsLayout(const JobSpec& job);

}  // namespace gpuplan
