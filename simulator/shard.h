// How many parameters one GPU holds, given the parallel layout.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "simulator/job.h"

namespace gpuplan {

/// Layer slots per model chunk of the stages that first_stage_layers / last_stage_layers do not
/// set: (num_layers + embedding slot + loss slot - first_stage_layers - last_stage_layers) /
/// (those stages * vpp); 0 when no such stage is left (pp 2 with both set).
int64_t LayerSlotsPerChunk(const JobSpec& job);

/// Transformer layers in model chunk `chunk` (0-based, < vpp) of pipeline stage `stage` (0-based,
/// < pp): first_stage_layers / vpp on the first stage and last_stage_layers / vpp on the last
/// when given (Megatron-LM's uneven pipeline); otherwise the slots of the chunk, less the
/// embedding's slot in the first chunk of the first stage and the loss's slot in the last chunk
/// of the last stage.
int64_t ChunkLayers(const JobSpec& job, int64_t stage, int64_t chunk);

/// Transformer layers of one pipeline stage: the sum over its chunks.
int64_t StageLayers(const JobSpec& job, int64_t stage);

/// Global index of the first layer of model chunk `chunk` on stage `stage`: Megatron places
/// virtual stage chunk*pp + stage there (interleaved layout, Narayanan et al. 2021 Fig. 4), each
/// round of chunks holding one chunk of every stage (Megatron-LM get_transformer_layer_offset).
int64_t ChunkFirstLayer(const JobSpec& job, int64_t stage, int64_t chunk);

/// Layers per stage of an uneven pipeline: `first` and `last` go to ParallelSpec::
/// first_stage_layers and last_stage_layers, each of the pp - 2 other stages holds `middle`.
struct StageSplit {
  int64_t first = 0;
  int64_t middle = 0;
  int64_t last = 0;
};
/// The split gpuplan suggests (and the planner searches) when pp does not divide num_layers:
/// every middle stage takes ceil(num_layers / pp) layers, the first and last stages share the
/// rest, and the last, which also runs the LM head and the loss, takes the smaller half
/// (126 layers on 16 stages: 7, 14 x 8, 7). nullopt when pp < 2, when pp divides num_layers (the
/// even split needs no first/last values), or when the rest leaves the first or the last stage
/// without a layer. Splits for vpp = 1 only: with vpp > 1 each stage's layers must also divide
/// by vpp.
std::optional<StageSplit> SuggestStageSplit(int64_t num_layers, int64_t pp);

/// nanotron's pipeline split (src/nanotron/models/base.py build_model, cost per block from
/// models/llama.py get_block_compute_costs): the blocks in forward order (embedding 0, each
/// decoder layer 4 x heads x head_dim x hidden + 3 x ffn x hidden, final norm 0, LM head
/// vocab x hidden, fp32 cast 0, loss 0) go to stage r until their running cost exceeds
/// (r + 1) / pp of the total; the block that crosses the threshold stays on r. Returns the
/// decoder layers of each of the pp stages (pp >= 1, pp <= num_layers). The cost counts no
/// attention and ignores GQA, so stages are not balanced in time: for the sweep's 1B model on
/// 4 stages it gives 6, 5, 5, 0 (the LM head alone on the last). When the head's block crosses
/// its threshold the cast and loss land on the next stage; gpuplan keeps the LM head and the
/// loss together on the last stage (docs/COST_MODEL.md, training stacks).
std::vector<int64_t> CostBalancedStageLayers(const ModelSpec& m, int64_t pp);

/// nanotron's split walked over all its pipeline blocks (CostBalancedStageLayers): the decoder
/// layers of each stage, and the stage that receives no block at all when the walk ends before
/// the last stage (-1 when every stage gets one). After its loop build_model makes the stage its
/// index ended on the model's output stage; when the threshold moved the index past the loss
/// block's stage, that output stage holds nothing. For the sweep's 1B model on 16 stages the
/// final norm and head land on stage 12, the cast on 13, the loss on 14, and stage 15 is empty.
struct CostBalancedSplit {
  std::vector<int64_t> layers;
  int64_t empty_stage = -1;
  double head_in_layers = 0;  ///< the LM head's cost in decoder layers (1B: 4)
};
CostBalancedSplit CostBalancedPlacement(const ModelSpec& m, int64_t pp);

/// The layers of each pipeline stage (StageLayers), "6+5+5+0": parallelism.stage_layers where
/// given, else the even, first/last or slot split.
std::string StageLayersText(const JobSpec& job);

/// Fills parallelism.stage_layers with the job's stack's own split (FrameworkTraits::
/// pipeline_split) when the stack does not split evenly, pp > 1, vpp = 1 and no split is given
/// (stage_layers, first/last_stage_layers, embedding/loss slots). Otherwise leaves `job` as is,
/// also when the model has more than kMaxLayers layers (a job not validated yet, which ValidateJob
/// refuses; the split takes time linear in the layers).
void ApplyStackPipelineSplit(JobSpec* job);

/// Dense-MLP and MoE layers (layer i is MoE when i >= moe_first_dense_layers).
struct StageLayerMix {
  double dense = 0;
  double moe = 0;
};
/// Dense-MLP and MoE layers of model chunk `chunk` of stage `stage`.
StageLayerMix ChunkLayerCounts(const JobSpec& job, int64_t stage, int64_t chunk);
/// Dense-MLP and MoE layers of one stage: the sum over its chunks.
StageLayerMix StageLayerCounts(const JobSpec& job, int64_t stage);

/// Parameters on one GPU of one pipeline stage, after TP (and EP for experts) splitting.
struct ShardParams {
  double dense = 0;      ///< attention, dense MLPs, norms, embeddings: replicated across DP
  double expert = 0;     ///< routed experts: replicated across the expert-data-parallel group
  double trainable = 0;  ///< what gets gradients: dense + expert, or only LoRA adapters
  double Total() const { return dense + expert; }
  /// Fraction of the parameters that are dense (1 when there are none).
  double DenseShare() const { return Total() > 0 ? dense / Total() : 1.0; }
  /// The trainable parameters split by DenseShare: dense ones synchronise over the DP group,
  /// expert ones over the expert-DP group.
  double DenseTrainable() const { return trainable * DenseShare(); }
  double ExpertTrainable() const { return trainable * (1.0 - DenseShare()); }
};

/// Parameters of one transformer layer on one GPU (dense or MoE layer), split as ParamsPerGpu
/// splits them; trainable = LoRA adapters under LoRA.
ShardParams LayerParamsPerGpu(const JobSpec& job, bool moe_layer);

/// The MLP's part of LayerParamsPerGpu (a dense MLP; a MoE layer's router, shared and routed
/// experts), all of it trainable: full training only (LoRA's adapters are not split by module).
ShardParams LayerMlpParamsPerGpu(const JobSpec& job, bool moe_layer);

/// Parameters of one GPU of pipeline stage `stage` (0-based, < pp). The first stage also holds
/// the embedding, the last the LM head. TP splits
/// every weight matrix (Megatron column/row parallel; the vocabulary-parallel embedding too);
/// experts split over ep and, inside an expert, over etp (ParallelSpec::ExpertTp).
/// Layers per stage follow StageLayers (uneven with embedding/loss slots or first/last stage
/// layers).
/// With tied embeddings and pp > 1 the last stage keeps its own copy of the embedding for the
/// LM head, as Megatron-LM does.
ShardParams ParamsPerGpu(const JobSpec& job, int64_t stage);

/// LoRA adapter parameters of one full layer (not split): rank x (in + out) per targeted
/// matrix (Hu et al. 2021, Sec. 4). Zero when LoRA is off.
double LoraParamsPerLayer(const ModelSpec& m, const LoraSpec& lora);

/// Micro-batches per optimizer step per pipeline: global_batch / (micro_batch * dp).
inline int64_t MicrobatchesPerStep(const JobSpec& job) {
  return job.training.global_batch_size / (job.training.micro_batch_size * job.parallel.dp);
}

}  // namespace gpuplan
