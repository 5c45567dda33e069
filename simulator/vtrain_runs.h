// vTrain's measured validation runs as published runs (Bang et al., "vTrain: A Simulation
// Framework for Evaluating Cost-effective and Compute-optimal Large Language Model Training",
// MICRO 2024): VIA-Research/vTrain data/ground_truth_multi.csv (109 iterations of GPT 3.6B-175B
// on 64-512 A100) and data/ground_truth_single.csv (1,440 iterations of small GPT models on 2-8
// A100 of one node), shipped unchanged in hardware-db/calibration/vtrain/. Every point was
// measured with Megatron-DeepSpeed. `gpuplan accuracy --runs FILE.csv` reads them;
// docs/ACCURACY.md and hardware-db/calibration/README.md say what each run assumes.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "hardware-db/hardware_db.h"
#include "simulator/accuracy.h"

namespace gpuplan {

/// The cluster and stack every run is evaluated on: vTrain's configs name an 8-GPU A100 node
/// with 800 Gb/s between nodes (100 Gb/s per GPU, the rate of kVtrainNetworkId) and the runs
/// are Megatron-DeepSpeed's.
inline constexpr const char* kVtrainGpuId = "a100-sxm4-80gb";
inline constexpr const char* kVtrainNetworkId = "ib-edr-100";
inline constexpr const char* kVtrainFrameworkId = "deepspeed";

/// Parses one of vTrain's two ground-truth CSVs, told apart by the header: the multi-node file's
/// columns are "Parameters (billion)", "# GPUs", "global batch", "micro batch", "hidden size",
/// "attention heads", "# layers", "sequence length", "tensor parallelism", "data parallelism",
/// "pipeline parallelism", "iteration time (ms)"; the single-node file's the same without the
/// first. Each line becomes a run of Megatron's GPT (GeLU MLP of 4h, biases, tied embeddings,
/// vocabulary 50257) in fp16 with full recomputation, unfused attention, 1F1B, ZeRO-1 and
/// gradients reduced after the backward, on kVtrainGpuId, kVtrainNetworkId and the
/// kVtrainFrameworkId stack; measured tokens/s/GPU = global batch x sequence length / iteration
/// time / GPUs. Errors name `origin`, the line and the column, or the line and what gpuplan
/// cannot run (ValidateJob). `db` must hold the three ids and outlive the runs.
Expected<std::vector<PublishedRun>> ParseVtrainRuns(const std::string& text,
                                                    const std::string& origin,
                                                    const HardwareDb& db);

/// Reads and parses a vTrain ground-truth file (errors name the path).
Expected<std::vector<PublishedRun>> ReadVtrainRunsFile(const std::string& path,
                                                       const HardwareDb& db);

}  // namespace gpuplan
