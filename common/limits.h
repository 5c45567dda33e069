// Limits on the size of the work gpuplan accepts (docs/JOB_SPEC.md, "Limits"). Each is far above
// any real training job; inputs beyond them are refused with an error naming the field, so that
// no input can make gpuplan overflow, allocate without bound or run for hours.
#pragma once

#include <cstdint>

namespace gpuplan {

/// Input files.
inline constexpr int64_t kMaxInputFileBytes = 64LL << 20;  ///< 64 MiB per input file (JSON, CSV)
inline constexpr int kMaxJsonDepth = 64;  ///< nesting of objects and arrays in a JSON file

/// Job size. Products of these are computed with CheckedMul (common/checked_math.h).
inline constexpr int64_t kMaxGpus = 1LL << 20;        ///< 1,048,576 GPUs in one job
inline constexpr int64_t kMaxLayers = 10'000;         ///< transformer layers
inline constexpr int64_t kMaxHiddenSize = 1LL << 20;  ///< hidden, FFN and head sizes
inline constexpr int64_t kMaxHeads = 1LL << 16;       ///< attention and KV heads
inline constexpr int64_t kMaxVocab = 1LL << 24;       ///< vocabulary entries
inline constexpr int64_t kMaxExperts = 1LL << 16;     ///< MoE experts
/// Busiest expert-parallel rank's routed tokens over the mean: at most all of them on one rank.
inline constexpr double kMaxMoeLoadImbalance = static_cast<double>(kMaxExperts);
inline constexpr int64_t kMaxSeqLen = 1LL << 24;  ///< tokens per sequence (16.8M)
/// Micro-batches one pipeline runs per optimizer step: global_batch / (micro_batch x dp).
inline constexpr int64_t kMaxMicroBatchesPerStep = 100'000;
/// Tokens per optimizer step: global_batch x seq_len (2^40, about 1.1T).
inline constexpr int64_t kMaxTokensPerStep = 1LL << 40;
/// Tokens of a whole training run (1e17; the largest published runs are about 1.5e13).
inline constexpr double kMaxTrainTokens = 1e17;

/// Event simulation: ops one simulated step may hold (each op is one compute, communication or
/// memory operation of one simulated GPU; about 0.6 us and 150 bytes each).
inline constexpr int64_t kMaxSimulatedOps = 4'000'000;
/// Ops written to a Chrome trace or a timeline SVG (about 200 bytes each in the trace).
inline constexpr int64_t kMaxTimelineOps = 500'000;
/// Pipeline passes one `validate --dry-run` lists, over all the ranks it prints (about 100 bytes
/// of text or 300 of JSON each, with their sends and receives).
inline constexpr int64_t kMaxDryRunPasses = 1'000'000;
/// Latest op end in a Chrome trace (int64 nanoseconds hold 292 years; 1e9 s is 31.7 years).
inline constexpr double kMaxTraceSeconds = 1e9;

/// Memory of one device: hardware-db memory_gb and a job's overhead.framework_gb (100 TB).
inline constexpr double kMaxDeviceMemoryBytes = 1e14;

/// Reliability inputs (hardware-db reliability.json, plan --failure-rate/--restart-time/
/// --checkpoint-bandwidth).
inline constexpr double kMaxInterruptionsPerGpuHour = 1.0;
inline constexpr double kMaxRestartSeconds = 1e7;        ///< about 116 days
inline constexpr double kMaxCheckpointBytesPerS = 1e15;  ///< 1 PB/s per node

/// Money and time of a plan: GPU-hour prices (hardware-db prices.json, plan --price, GUI
/// sessions), budgets and deadlines.
inline constexpr double kMinUsdPerGpuHour = 1e-4;
inline constexpr double kMaxUsdPerGpuHour = 1e4;
inline constexpr double kMaxBudgetUsd = 1e15;
inline constexpr double kMaxDeadlineSeconds = 1e12;  ///< about 31,700 years

/// Measurements compared with predictions (published runs, layout sweeps), in their unit
/// (tokens/s/GPU, GiB): anything above kMaxMeasurement is a typo, and anything below
/// kMinMeasurement would make the ratios built on it (errors, shares of the best) infinite.
inline constexpr double kMinMeasurement = 1e-15;
inline constexpr double kMaxMeasurement = 1e15;

/// Planner: global batch sizes searched in one request (--global-batch LOW:HIGH doubles).
inline constexpr int64_t kMaxPlannerBatchSizes = 64;

}  // namespace gpuplan
