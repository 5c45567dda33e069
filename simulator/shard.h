// How many parameters one GPU holds, given the parallel layout.
#pragma once

#include "simulator/job.h"

namespace gpuplan {

/// Which pipeline stage: the first holds the embedding, the last the LM head (one stage: both).
enum class StageKind { kFirst, kMiddle, kLast, kOnly };

/// Parameters on one GPU of one pipeline stage, after TP (and EP for experts) splitting.
struct ShardParams {
  double dense = 0;    ///< attention, dense MLPs, norms, embeddings: replicated across DP
  double expert = 0;   ///< routed experts: replicated across the expert-data-parallel group
  double trainable = 0;  ///< what gets gradients: dense + expert, or only LoRA adapters
  double Total() const { return dense + expert; }
};

/// Parameters of one GPU on the given stage. Layers split evenly over pp (validated); TP splits
/// every weight matrix (Megatron column/row parallel; the vocabulary-parallel embedding too);
/// experts split over ep and, inside an expert, over tp (Megatron's default expert TP = TP).
/// With tied embeddings and pp > 1 the last stage keeps its own copy of the embedding for the
/// LM head, as Megatron-LM does.
ShardParams ParamsPerGpu(const JobSpec& job, StageKind stage);

/// LoRA adapter parameters of one full layer (not split): rank x (in + out) per targeted
/// matrix (Hu et al. 2021, Sec. 4). Zero when LoRA is off.
double LoraParamsPerLayer(const ModelSpec& m, const LoraSpec& lora);

/// Micro-batches per optimizer step per pipeline: global_batch / (micro_batch * dp).
inline int64_t MicrobatchesPerStep(const JobSpec& job) {
  return job.training.global_batch_size / (job.training.micro_batch_size * job.parallel.dp);
}

}  // namespace gpuplan
