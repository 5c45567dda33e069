#include "simulator/vtrain_runs.h"

#include <optional>

#include "common/checked_math.h"
#include "common/csv_table.h"
#include "common/json_reader.h"
#include "common/limits.h"
#include "common/str_format.h"
#include "simulator/framework.h"
#include "simulator/job_spec_json.h"
#include "simulator/memory.h"
#include "simulator/shard.h"

namespace gpuplan {
namespace {

constexpr const char* kParameters = "Parameters (billion)";
// Megatron's GPT-2 BPE vocabulary: vTrainConfig's vocab_size default (src/config.py), which
// every validation config keeps.
constexpr int64_t kVtrainVocabulary = 50257;
// A step longer than a day is a typo, not a measurement, and so is one shorter than a
// microsecond (the tokens/s it gives would overflow the errors built on it).
constexpr double kMaxIterationMs = 86400e3;
constexpr double kMinIterationMs = 1e-3;

}  // namespace

Expected<std::vector<PublishedRun>> ParseVtrainRuns(const std::string& text,
                                                    const std::string& origin,
                                                    const HardwareDb& db) {
  const FrameworkSpec* stack = db.FindFramework(kVtrainFrameworkId);
  const GpuSpec* gpu = db.FindGpu(kVtrainGpuId);
  const NetworkSpec* net = db.FindNetwork(kVtrainNetworkId);
  if (gpu == nullptr || net == nullptr || stack == nullptr) {
    return Status::Invalid(origin + ": the hardware database needs GPU '" + kVtrainGpuId +
                           "', network '" + kVtrainNetworkId + "' and framework '" +
                           kVtrainFrameworkId + "' for vTrain's cluster");
  }
  Expected<CsvTable> table =
      ParseCsvTable(text, origin,
                    {"# GPUs", "global batch", "micro batch", "hidden size", "attention heads",
                     "# layers", "sequence length", "tensor parallelism", "data parallelism",
                     "pipeline parallelism", "iteration time (ms)"},
                    "vTrain's ground-truth CSV");
  if (!table.ok()) return table.status();
  // The multi-node file names each model by its size; the single-node file's models are named
  // by their dimensions.
  const bool multi_node = table->index.contains(kParameters);
  std::vector<PublishedRun> runs;
  for (const CsvLine& line : table->rows) {
    CsvRowReader r(*table, line, origin);
    JobSpec job;
    ModelSpec& m = job.model;
    m.num_layers = r.PositiveInt("# layers");
    m.hidden_size = r.PositiveInt("hidden size");
    m.num_attention_heads = r.PositiveInt("attention heads");
    const std::string size = multi_node ? std::string(r.Text(kParameters)) : "";
    if (multi_node) r.PositiveNumber(kParameters, 1e6);
    m.name = multi_node
                 ? "GPT " + size + "B (vTrain)"
                 : StrFormat("GPT h%lld x %lld (vTrain)", static_cast<long long>(m.hidden_size),
                             static_cast<long long>(m.num_layers));
    m.num_kv_heads = m.num_attention_heads;
    // Megatron's GPT MLP is 4h wide (vTrain's model: ParamInfo(config.hidden_size * 4 * ...)).
    const std::optional<int64_t> ffn = CheckedMul(4, m.hidden_size);
    if (!ffn) r.Fail("hidden size", "is too large", r.Text("hidden size"));
    m.ffn_hidden_size = ffn.value_or(0);
    m.vocab_size = kVtrainVocabulary;
    m.mlp = MlpKind::kGelu;
    m.tied_embeddings = true;
    ClusterSpec& c = job.cluster;
    c.gpu = kVtrainGpuId;
    c.num_gpus = r.PositiveInt("# GPUs");
    c.gpus_per_node = 8;  // node_size in every validation config
    c.inter_node = kVtrainNetworkId;
    TrainingSpec& t = job.training;
    t.seq_len = r.PositiveInt("sequence length");
    t.global_batch_size = r.PositiveInt("global batch");
    t.micro_batch_size = r.PositiveInt("micro batch");
    t.precision = Precision::kFp16;
    t.recompute = Recompute::kFull;         // use_checkpoint: true
    t.attention = AttentionImpl::kUnfused;  // Megatron's fused softmax over materialised scores
    t.dropout = true;  // Megatron-DeepSpeed's defaults: hidden and attention dropout 0.1
    t.framework = *stack;
    ParallelSpec& p = job.parallel;
    p.tp = r.PositiveInt("tensor parallelism");
    p.dp = r.PositiveInt("data parallelism");
    p.pp = r.PositiveInt("pipeline parallelism");
    p.zero_stage = 1;
    p.schedule = Schedule::k1F1B;
    p.dp_overlap = false;  // use_gradient_bucket: false
    const double iteration_ms = r.PositiveNumber("iteration time (ms)", kMaxIterationMs);
    if (r.status().ok() && iteration_ms < kMinIterationMs) {
      r.Fail("iteration time (ms)", "must be at least 0.001 (a microsecond)",
             r.Text("iteration time (ms)"));
    }
    if (!r.status().ok()) return r.status();
    job.overhead = DefaultOverhead(*gpu);
    ApplyStackPipelineSplit(&job);
    const std::string context = origin + ": line " + std::to_string(line.number);
    GPUPLAN_RETURN_IF_ERROR(ValidateJob(job, db).WithPrefix(context));
    GPUPLAN_RETURN_IF_ERROR(StackRunsLayout(job).WithPrefix(context));
    PublishedRun run;
    run.id =
        multi_node
            ? StrFormat("vtrain_%sB_tp%lld_pp%lld_dp%lld_mb%lld_line%d", size.c_str(),
                        static_cast<long long>(p.tp), static_cast<long long>(p.pp),
                        static_cast<long long>(p.dp), static_cast<long long>(t.micro_batch_size),
                        line.number)
            : StrFormat("vtrain_h%lld_l%lld_b%lld_tp%lld_pp%lld_dp%lld_mb%lld_line%d",
                        static_cast<long long>(m.hidden_size), static_cast<long long>(m.num_layers),
                        static_cast<long long>(t.global_batch_size), static_cast<long long>(p.tp),
                        static_cast<long long>(p.pp), static_cast<long long>(p.dp),
                        static_cast<long long>(t.micro_batch_size), line.number);
    run.source = multi_node ? "vTrain multi-node" : "vTrain single-node";
    run.measured_tokens_per_s_per_gpu = static_cast<double>(t.global_batch_size) *
                                        static_cast<double>(t.seq_len) / (iteration_ms / 1e3) /
                                        static_cast<double>(c.num_gpus);
    run.job = std::move(job);
    run.gpu = gpu;
    run.net = net;
    runs.push_back(std::move(run));
  }
  if (runs.empty()) return Status::Invalid(origin + ": no runs after the header");
  return runs;
}

Expected<std::vector<PublishedRun>> ReadVtrainRunsFile(const std::string& path,
                                                       const HardwareDb& db) {
  // ReadInputFile: a regular file of at most kMaxInputFileBytes (a FIFO or device never blocks).
  Expected<std::string> text = ReadInputFile(path, kMaxInputFileBytes);
  if (!text.ok()) return text.status();
  return ParseVtrainRuns(*text, path, db);
}

}  // namespace gpuplan
