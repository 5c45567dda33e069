// Job spec parsing and validation: every published calibration run, defaults, and one test per
// kind of invalid spec (each asserting that the message names the field).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "common/json_reader.h"
#include "hardware-db/hardware_db.h"
#include "simulator/job_spec_json.h"
#include "simulator/shard.h"
#include "tests/model/contains.h"

namespace gpuplan {
namespace {

const HardwareDb& Db() {
  static const Expected<HardwareDb>* const kDb = new Expected<HardwareDb>(LoadHardwareDb({}));
  EXPECT_TRUE(kDb->ok()) << kDb->status().message();
  static const HardwareDb kEmpty;
  return kDb->ok() ? **kDb : kEmpty;
}

// Narayanan et al. 2021 Table 1, 7.5B row (published_runs.json gives it the 2021 software:
// no sequence parallelism, ZeRO 0, unfused attention; the parser tests need the other values).
nlohmann::json BaseSpec() {
  return nlohmann::json::parse(R"({
    "model": {"name": "GPT 7.5B", "num_layers": 36, "hidden_size": 4096,
              "ffn_hidden_size": 16384, "num_attention_heads": 32, "num_kv_heads": 32,
              "vocab_size": 51200, "mlp": "gelu"},
    "cluster": {"gpu": "a100-sxm4-80gb", "num_gpus": 128, "gpus_per_node": 8,
                "inter_node": "ib-hdr-200"},
    "training": {"seq_len": 2048, "global_batch_size": 512, "micro_batch_size": 1,
                 "precision": "fp16", "recompute": "full"},
    "parallelism": {"tp": 4, "pp": 1, "dp": 32, "cp": 1, "ep": 1, "vpp": 1,
                    "sequence_parallel": true, "zero_stage": 1, "fsdp": false,
                    "schedule": "1f1b"}
  })");
}

Expected<JobSpec> Parse(const nlohmann::json& spec) {
  return ParseJobSpec(spec, "job.json", GPUPLAN_TEST_DATA "/model", Db());
}

// Parses `spec`, expects failure and returns the message.
std::string ErrorOf(const nlohmann::json& spec) {
  Expected<JobSpec> job = Parse(spec);
  EXPECT_FALSE(job.ok()) << "expected an error for " << spec.dump();
  return job.ok() ? std::string() : job.status().message();
}

TEST(JobSpec, BaseSpecParses) {
  Expected<JobSpec> job = Parse(BaseSpec());
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->model.num_layers, 36);
  EXPECT_EQ(job->parallel.tp, 4);
  EXPECT_EQ(job->parallel.dp, 32);
  EXPECT_EQ(job->training.precision, Precision::kFp16);
  EXPECT_EQ(job->training.recompute, Recompute::kFull);
  EXPECT_EQ(job->parallel.zero_stage, 1);
  EXPECT_TRUE(job->parallel.sequence_parallel);
  EXPECT_EQ(job->parallel.schedule, Schedule::k1F1B);
}

TEST(JobSpec, EveryPublishedRunParsesAndValidates) {
  Expected<nlohmann::json> runs = ReadJsonFile(BuiltinCalibrationDir() + "/published_runs.json");
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  ASSERT_TRUE(runs->contains("runs"));
  int parsed = 0;
  for (const nlohmann::json& run : (*runs)["runs"]) {
    const std::string id = run.value("id", std::string("?"));
    Expected<JobSpec> job = ParseJobSpec(run.at("spec"), "published_runs.json: " + id, "", Db());
    ASSERT_TRUE(job.ok()) << job.status().message();
    // JobSpecToJson writes what ParseJobSpec reads, and reading it back changes nothing.
    const nlohmann::json written = JobSpecToJson(*job);
    Expected<JobSpec> again = ParseJobSpec(written, "roundtrip: " + id, "", Db());
    ASSERT_TRUE(again.ok()) << again.status().message();
    EXPECT_EQ(JobSpecToJson(*again), written) << id;
    ++parsed;
  }
  EXPECT_GE(parsed, 100);
}

TEST(JobSpec, InterleavedScheduleWithVppParses) {
  nlohmann::json spec = BaseSpec();
  spec["model"]["num_layers"] = 96;
  spec["cluster"]["num_gpus"] = 64;
  spec["parallelism"] = {{"tp", 8}, {"pp", 8}, {"dp", 1}, {"vpp", 3}};
  spec["training"]["global_batch_size"] = 64;
  Expected<JobSpec> job = Parse(spec);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->parallel.schedule, Schedule::kInterleaved);  // the default when vpp > 1
  spec["parallelism"]["schedule"] = "interleaved";
  EXPECT_TRUE(Parse(spec).ok());
}

TEST(JobSpec, DefaultsFromPresetAndHardwareDb) {
  const nlohmann::json spec = {{"model", "llama3-8b"},
                               {"cluster", {{"gpu", "h100-sxm5-80gb"}, {"num_gpus", 16}}},
                               {"training", {{"seq_len", 8192}, {"global_batch_size", 64}}}};
  Expected<JobSpec> job = Parse(spec);
  ASSERT_TRUE(job.ok()) << job.status().message();
  const GpuSpec* gpu = Db().FindGpu("h100-sxm5-80gb");
  ASSERT_NE(gpu, nullptr);
  const NodeTemplate* node = Db().FindNode(gpu->default_node);
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(job->cluster.gpus_per_node, std::min<int64_t>(node->gpus_per_node, 16));
  EXPECT_EQ(job->cluster.inter_node, node->network);
  EXPECT_EQ(job->model.hidden_size, 4096);
  EXPECT_EQ(job->training.micro_batch_size, 1);
  EXPECT_EQ(job->training.precision, Precision::kBf16);
  EXPECT_EQ(job->training.recompute, Recompute::kNone);
  EXPECT_EQ(job->training.attention, AttentionImpl::kFlash);
  EXPECT_FALSE(job->training.lora.enabled);
  EXPECT_EQ(job->parallel.dp, 16);
  EXPECT_EQ(job->parallel.tp, 1);
  EXPECT_EQ(job->parallel.zero_stage, 0);
  EXPECT_EQ(job->parallel.schedule, Schedule::k1F1B);
  EXPECT_TRUE(job->parallel.dp_overlap);
  EXPECT_FALSE(job->parallel.tp_overlap);
  EXPECT_FALSE(job->parallel.tp_backward_overlap.has_value());  // the stack's
  EXPECT_DOUBLE_EQ(job->overhead.framework_bytes, 2.0e9);
  EXPECT_DOUBLE_EQ(job->overhead.fragmentation, 0.10);
  EXPECT_DOUBLE_EQ(job->overhead.allocator_headroom, kAllocatorHeadroom);
}

TEST(JobSpec, GpusPerNodeDefaultIsCappedAtNumGpus) {
  const nlohmann::json spec = {{"model", "llama3-8b"},
                               {"cluster", {{"gpu", "h100-sxm5-80gb"}, {"num_gpus", 2}}},
                               {"training", {{"seq_len", 4096}, {"global_batch_size", 8}}}};
  Expected<JobSpec> job = Parse(spec);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->cluster.gpus_per_node, 2);
}

TEST(JobSpec, FsdpImpliesZero3) {
  nlohmann::json spec = BaseSpec();
  spec["parallelism"] = {{"fsdp", true}};
  spec["cluster"]["num_gpus"] = 8;
  Expected<JobSpec> job = Parse(spec);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->parallel.zero_stage, 3);
  EXPECT_EQ(job->parallel.dp, 8);
  spec["parallelism"]["zero_stage"] = 1;
  EXPECT_TRUE(Contains(ErrorOf(spec), "parallelism: field 'zero_stage': 1 conflicts with fsdp"));
}

TEST(JobSpec, LoraAndOverhead) {
  nlohmann::json spec = {
      {"model", "llama3-70b"},
      {"cluster", {{"gpu", "h100-sxm5-80gb"}, {"num_gpus", 8}}},
      {"training",
       {{"seq_len", 4096},
        {"global_batch_size", 16},
        {"lora", {{"rank", 16}, {"targets", {"attention", "gate"}}, {"base", "nf4"}}}}},
      {"parallelism", {{"tp", 8}, {"tp_backward_overlap", false}}},
      {"overhead", {{"framework_gb", 3.5}, {"fragmentation", 0.2}, {"allocator_headroom", 0.02}}}};
  Expected<JobSpec> job = Parse(spec);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_TRUE(job->training.lora.enabled);
  EXPECT_EQ(job->training.lora.rank, 16);
  EXPECT_EQ(job->training.lora.targets, kLoraAttention | kLoraGate);
  EXPECT_EQ(job->training.lora.base, BaseWeights::kNf4);
  EXPECT_DOUBLE_EQ(job->overhead.framework_bytes, 3.5e9);
  EXPECT_DOUBLE_EQ(job->overhead.fragmentation, 0.2);
  EXPECT_DOUBLE_EQ(job->overhead.allocator_headroom, 0.02);
  EXPECT_EQ(job->parallel.tp_backward_overlap, std::optional<bool>(false));
  const nlohmann::json written = JobSpecToJson(*job);
  EXPECT_EQ(written["parallelism"]["tp_backward_overlap"], false);
  Expected<JobSpec> again = ParseJobSpec(written, "roundtrip", "", Db());
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(JobSpecToJson(*again), written);

  spec["training"]["lora"] = {{"rank", 8}};
  job = Parse(spec);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->training.lora.targets, kLoraAttention);  // default q, k, v, o
  EXPECT_EQ(job->training.lora.base, BaseWeights::kSame);

  spec["training"]["lora"] = {{"rank", 8}, {"targets", {"q", "qkv"}}};
  EXPECT_TRUE(Contains(ErrorOf(spec), "training: lora: field 'targets': 'qkv' is not allowed"));
  spec["training"]["lora"] = {{"rank", 8}};
  spec["overhead"]["allocator_headroom"] = 0.6;
  EXPECT_TRUE(Contains(ErrorOf(spec), "overhead: field 'allocator_headroom'")) << ErrorOf(spec);
}

TEST(JobSpec, HfConfigModelRelativeToSpecFile) {
  Expected<JobSpec> job =
      ReadJobSpecFile(std::string(GPUPLAN_TEST_DATA) + "/model/job_hf_llama3_8b.json", Db());
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->model.num_kv_heads, 8);
  EXPECT_EQ(job->model.vocab_size, 128256);
  EXPECT_EQ(job->parallel.dp, 8);
  // Written back, the model is expanded to dimensions.
  const nlohmann::json written = JobSpecToJson(*job);
  EXPECT_EQ(written["model"]["hidden_size"], 4096);
  EXPECT_EQ(written["model"]["mlp"], "swiglu");
}

TEST(JobSpec, PresetModelWrittenExpanded) {
  nlohmann::json spec = BaseSpec();
  spec["model"] = "deepseek-v3";
  spec["cluster"]["num_gpus"] = 64;
  spec["parallelism"] = {{"tp", 1}, {"pp", 1}, {"ep", 64}, {"zero_stage", 1}};
  spec["training"]["precision"] = "bf16";
  spec["training"]["global_batch_size"] = 64;
  spec["model"] = "deepseek-v3";
  // 61 layers with pp 1: fine; experts 256 % 64 == 0; ep 64 divides dp*cp = 64.
  Expected<JobSpec> job = Parse(spec);
  ASSERT_TRUE(job.ok()) << job.status().message();
  const nlohmann::json written = JobSpecToJson(*job);
  EXPECT_EQ(written["model"]["moe_num_experts"], 256);
  EXPECT_EQ(written["model"]["head_dim"], 96);
  Expected<JobSpec> again = ParseJobSpec(written, "roundtrip", "", Db());
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(JobSpecToJson(*again), written);
}

TEST(JobSpec, DocumentedExampleParses) {
  // The ```json block of docs/JOB_SPEC.md must stay valid.
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/docs/JOB_SPEC.md");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const size_t begin = doc.find("```json\n");
  ASSERT_NE(begin, std::string::npos);
  const size_t end = doc.find("```", begin + 8);
  ASSERT_NE(end, std::string::npos);
  Expected<nlohmann::json> j = ParseJson(doc.substr(begin + 8, end - begin - 8), "JOB_SPEC.md");
  ASSERT_TRUE(j.ok()) << j.status().message();
  Expected<JobSpec> job = ParseJobSpec(*j, "JOB_SPEC.md", "", Db());
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->parallel.dp, 8);
  EXPECT_EQ(job->parallel.schedule, Schedule::kInterleaved);
  EXPECT_EQ(job->cluster.gpus_per_node, 8);
}

// ---- one test per invalid case --------------------------------------------------------------

TEST(JobSpecInvalid, ParallelProductNotGpuCount) {
  nlohmann::json spec = BaseSpec();
  spec["parallelism"]["dp"] = 24;
  EXPECT_EQ(ErrorOf(spec),
            "job.json: parallelism: dp*tp*pp*cp = 96 does not equal cluster.num_gpus = 128");
}

TEST(JobSpecInvalid, TpOverlapNeedsSequenceParallelInOneScaleUpDomain) {
  nlohmann::json spec = BaseSpec();
  spec["parallelism"]["tp_overlap"] = true;
  EXPECT_TRUE(Parse(spec).ok());
  spec["parallelism"]["sequence_parallel"] = false;
  EXPECT_TRUE(Contains(ErrorOf(spec),
                       "job.json: parallelism: field 'tp_overlap': needs sequence_parallel"));
  spec["parallelism"]["sequence_parallel"] = true;
  spec["cluster"]["gpus_per_node"] = 2;
  EXPECT_TRUE(Contains(ErrorOf(spec),
                       "field 'tp_overlap': needs the TP group inside one "
                       "scale-up domain"));
  EXPECT_TRUE(Contains(ErrorOf(spec), "tp = 4 exceeds 2 GPUs"));
  spec["cluster"]["gpus_per_node"] = 8;
  spec["cluster"]["gpu"] = "l40s";
  EXPECT_TRUE(Contains(ErrorOf(spec), "l40s has no scale-up fabric"));
  spec["parallelism"]["tp_overlap"] = false;
  EXPECT_TRUE(Parse(spec).ok());
}

// Userbuffer overlap is a stack's: nanotron has none (frameworks.json tp_overlap false).
TEST(JobSpecInvalid, TpOverlapNeedsAStackThatRunsIt) {
  nlohmann::json spec = BaseSpec();
  spec["parallelism"]["tp_overlap"] = true;
  spec["training"]["framework"] = "nanotron";
  EXPECT_TRUE(Contains(ErrorOf(spec),
                       "job.json: parallelism: field 'tp_overlap': is Transformer Engine's "
                       "userbuffer overlap (Megatron-Core --tp-comm-overlap); framework nanotron "
                       "has none (frameworks.json: tp_overlap false); set tp_overlap false"));
  spec["training"]["framework"] = "torchtitan-compile";
  EXPECT_TRUE(Parse(spec).ok());
}

TEST(JobSpecInvalid, HeadsNotDivisibleByTp) {
  nlohmann::json spec = BaseSpec();
  spec["model"]["num_attention_heads"] = 96;
  spec["model"]["num_kv_heads"] = 96;
  spec["model"]["hidden_size"] = 12288;
  spec["cluster"]["num_gpus"] = 7;
  spec["parallelism"]["tp"] = 7;
  spec["parallelism"]["dp"] = 1;
  spec["training"]["global_batch_size"] = 8;
  EXPECT_EQ(ErrorOf(spec),
            "job.json: model: field 'num_attention_heads': 96 is not divisible by "
            "parallelism.tp = 7");
}

TEST(JobSpecInvalid, KvHeadsAndTp) {
  nlohmann::json spec = BaseSpec();
  spec["model"]["num_attention_heads"] = 48;
  spec["model"]["num_kv_heads"] = 12;
  spec["model"]["hidden_size"] = 6144;
  spec["parallelism"]["tp"] = 8;
  spec["parallelism"]["dp"] = 16;
  EXPECT_EQ(ErrorOf(spec),
            "job.json: model: field 'num_kv_heads': 12 and parallelism.tp = 8: neither divides "
            "the other");
  spec["model"]["num_kv_heads"] = 4;  // tp 8 is a multiple of 4 kv heads: replicated, fine
  EXPECT_TRUE(Parse(spec).ok());
}

TEST(JobSpecInvalid, LayersNotDivisibleByPipelineStages) {
  nlohmann::json spec = BaseSpec();
  spec["parallelism"]["pp"] = 2;
  spec["parallelism"]["vpp"] = 5;
  spec["parallelism"]["dp"] = 16;
  spec["parallelism"]["schedule"] = "interleaved";
  EXPECT_EQ(ErrorOf(spec),
            "job.json: model: field 'num_layers': 36 is not divisible by parallelism.pp*vpp = 10 "
            "(parallelism.account_for_embedding_in_pipeline_split / "
            "parallelism.account_for_loss_in_pipeline_split add one slot each)");
}

TEST(JobSpecInvalid, LayerSlotsNotDivisibleByPipelineStages) {
  nlohmann::json spec = BaseSpec();
  spec["parallelism"]["pp"] = 4;
  spec["parallelism"]["dp"] = 8;
  spec["parallelism"]["account_for_loss_in_pipeline_split"] = true;
  EXPECT_EQ(
      ErrorOf(spec),
      "job.json: parallelism: field 'account_for_loss_in_pipeline_split': model.num_layers 36 + 1 "
      "slot = 37 is not divisible by parallelism.pp*vpp = 4");
}

TEST(JobSpecInvalid, LayerSlotsNeedPipeline) {
  nlohmann::json spec = BaseSpec();
  spec["parallelism"]["account_for_embedding_in_pipeline_split"] = true;
  EXPECT_EQ(ErrorOf(spec),
            "job.json: parallelism: field 'account_for_embedding_in_pipeline_split': needs pp > 1");
}

TEST(JobSpec, EmbeddingAndLossSlotsShortenTheEndStages) {
  // Llama 3 405B's layout (Dubey et al. 2024 Sec. 3.3.2): 126 layers + 2 slots on 16 stages.
  nlohmann::json spec = BaseSpec();
  spec["model"] = "llama3-405b";
  spec["cluster"]["num_gpus"] = 128;
  spec["parallelism"] = {{"tp", 8},
                         {"pp", 16},
                         {"account_for_embedding_in_pipeline_split", true},
                         {"account_for_loss_in_pipeline_split", true}};
  Expected<JobSpec> job = Parse(spec);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(StageLayers(*job, 0), 7);
  EXPECT_EQ(StageLayers(*job, 1), 8);
  EXPECT_EQ(StageLayers(*job, 15), 7);
  EXPECT_EQ(ChunkFirstLayer(*job, 1, 0), 7);
  EXPECT_EQ(ChunkFirstLayer(*job, 15, 0), 119);
  int64_t total = 0;
  for (int64_t s = 0; s < 16; ++s) total += StageLayers(*job, s);
  EXPECT_EQ(total, 126);
}

// Llama 3 405B (126 layers) on pp stages of 8 GPUs each, with first/last stage layers when > 0.
nlohmann::json Llama405bUneven(int64_t pp, int64_t vpp, int64_t first, int64_t last) {
  nlohmann::json spec = BaseSpec();
  spec["model"] = "llama3-405b";
  spec["cluster"]["num_gpus"] = 8 * pp;
  spec["training"]["precision"] = "bf16";
  spec["parallelism"] = {{"tp", 8}, {"pp", pp}, {"vpp", vpp}};
  if (first > 0) spec["parallelism"]["first_stage_layers"] = first;
  if (last > 0) spec["parallelism"]["last_stage_layers"] = last;
  return spec;
}

TEST(JobSpec, FirstAndLastStageLayersLeaveTheRestEven) {
  // Megatron-LM --decoder-first/last-pipeline-num-layers 7: 126 = 7 + 14 x 8 + 7.
  Expected<JobSpec> job = Parse(Llama405bUneven(16, 1, 7, 7));
  ASSERT_TRUE(job.ok()) << job.status().message();
  int64_t total = 0;
  for (int64_t s = 0; s < 16; ++s) {
    const int64_t layers = s == 0 || s == 15 ? 7 : 8;
    EXPECT_EQ(StageLayers(*job, s), layers) << s;
    EXPECT_EQ(ChunkLayers(*job, s, 0), layers) << s;
    EXPECT_EQ(ChunkFirstLayer(*job, s, 0), s == 0 ? 0 : 7 + 8 * (s - 1)) << s;
    total += StageLayers(*job, s);
  }
  EXPECT_EQ(total, 126);
  const nlohmann::json written = JobSpecToJson(*job);
  EXPECT_EQ(written["parallelism"]["first_stage_layers"], 7);
  EXPECT_EQ(written["parallelism"]["last_stage_layers"], 7);
  Expected<JobSpec> again = ParseJobSpec(written, "roundtrip", "", Db());
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(JobSpecToJson(*again), written);

  // Interleaved, 14 + 6 x 16 + 16 on 8 stages x 2 chunks: a round of chunks holds 7 + 6 x 8 + 8
  // = 63 layers (Megatron-LM get_transformer_layer_offset).
  job = Parse(Llama405bUneven(8, 2, 14, 16));
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(ChunkLayers(*job, 0, 1), 7);
  EXPECT_EQ(ChunkLayers(*job, 3, 1), 8);
  EXPECT_EQ(ChunkLayers(*job, 7, 0), 8);
  EXPECT_EQ(ChunkFirstLayer(*job, 0, 1), 63);
  EXPECT_EQ(ChunkFirstLayer(*job, 1, 0), 7);
  EXPECT_EQ(ChunkFirstLayer(*job, 7, 0), 55);
  EXPECT_EQ(ChunkFirstLayer(*job, 7, 1), 118);

  // Only the first stage given: the other 15 stages share 126 - 6 = 120.
  job = Parse(Llama405bUneven(16, 1, 6, 0));
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(StageLayers(*job, 0), 6);
  EXPECT_EQ(StageLayers(*job, 15), 8);
  EXPECT_EQ(ChunkFirstLayer(*job, 15, 0), 118);
  EXPECT_FALSE(JobSpecToJson(*job)["parallelism"].contains("last_stage_layers"));
}

TEST(JobSpec, StageLayersPlaceEveryLayer) {
  nlohmann::json spec = Llama405bUneven(4, 1, 0, 0);
  spec["parallelism"]["stage_layers"] = {30, 32, 32, 32};
  Expected<JobSpec> job = Parse(spec);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(StageLayers(*job, 0), 30);
  EXPECT_EQ(StageLayers(*job, 3), 32);
  EXPECT_EQ(ChunkFirstLayer(*job, 3, 0), 94);
  const nlohmann::json written = JobSpecToJson(*job);
  EXPECT_EQ(written["parallelism"]["stage_layers"], nlohmann::json({30, 32, 32, 32}));
  Expected<JobSpec> again = ParseJobSpec(written, "roundtrip", "", Db());
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(JobSpecToJson(*again), written);

  // nanotron places layers by its own cost estimate when the spec gives no split.
  nlohmann::json nanotron = Llama405bUneven(4, 1, 0, 0);
  nanotron["model"] = "llama3-8b";
  nanotron["training"]["framework"] = "nanotron";
  job = Parse(nanotron);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->parallel.stage_layers, CostBalancedStageLayers(job->model, 4));
  EXPECT_EQ(JobSpecToJson(*job)["parallelism"]["stage_layers"].size(), 4u);
}

TEST(JobSpecInvalid, StageLayersNameTheProblem) {
  const std::string field = "job.json: parallelism: field 'stage_layers': ";
  nlohmann::json spec = Llama405bUneven(4, 1, 0, 0);
  spec["parallelism"]["stage_layers"] = {42, 42, 42};
  EXPECT_EQ(ErrorOf(spec),
            field + "has 3 entries, parallelism.pp = 4 needs one per pipeline stage");
  spec["parallelism"]["stage_layers"] = {32, 32, 32, 32};
  EXPECT_EQ(ErrorOf(spec), field + "adds up to 128 layers, model.num_layers = 126");
  spec["parallelism"]["stage_layers"] = {30, 32, -1, 32};
  EXPECT_EQ(ErrorOf(spec), field + "must be a list of integers in [0, 10000], got element 2 = -1");
  spec["parallelism"]["stage_layers"] = "30,32";
  EXPECT_TRUE(Contains(ErrorOf(spec), field + "must be a list of integers"));
  spec = Llama405bUneven(4, 1, 30, 0);
  spec["parallelism"]["stage_layers"] = {30, 32, 32, 32};
  EXPECT_EQ(ErrorOf(spec),
            field +
                "cannot be combined with parallelism.first_stage_layers (stage_layers already "
                "places every layer); give one or the other");
  spec = Llama405bUneven(2, 3, 0, 0);
  spec["parallelism"]["stage_layers"] = {63, 63};
  EXPECT_EQ(ErrorOf(spec), field +
                               "needs vpp = 1 (interleaved stages split into equal chunks), got "
                               "parallelism.vpp = 3");
}

TEST(JobSpecInvalid, NanotronCannotRunTheLayout) {
  // nanotron's 1F1B engine needs pp - 1 micro-batches; Llama 3 8B on 8 stages with 4.
  nlohmann::json spec = Llama405bUneven(8, 1, 0, 0);
  spec["model"] = "llama3-8b";
  spec["training"]["framework"] = "nanotron";
  spec["training"]["global_batch_size"] = 4;
  EXPECT_TRUE(
      Contains(ErrorOf(spec),
               "job.json: training: field 'global_batch_size': nanotron's 1F1B engine needs at "
               "least pp - 1 = 7 micro-batches per step"));
}

TEST(JobSpec, SuggestedStageSplit) {
  EXPECT_EQ(SuggestStageSplit(126, 16)->first, 7);  // 7 + 14 x 8 + 7
  EXPECT_EQ(SuggestStageSplit(126, 16)->middle, 8);
  EXPECT_EQ(SuggestStageSplit(126, 16)->last, 7);
  EXPECT_EQ(SuggestStageSplit(32, 3)->first, 11);  // 11 + 11 + 10
  EXPECT_EQ(SuggestStageSplit(32, 3)->last, 10);
  EXPECT_EQ(SuggestStageSplit(33, 2)->first, 17);
  EXPECT_EQ(SuggestStageSplit(33, 2)->last, 16);
  EXPECT_FALSE(SuggestStageSplit(128, 16));  // even
  EXPECT_FALSE(SuggestStageSplit(7, 1));
  EXPECT_FALSE(SuggestStageSplit(80, 32));  // 30 middle stages of 3 exceed 80
}

TEST(JobSpecInvalid, UnevenStagesFollowMegatronRules) {
  const std::string field = "job.json: parallelism: field 'first_stage_layers': ";
  EXPECT_EQ(ErrorOf(Llama405bUneven(16, 1, 7, 6)),
            field +
                "model.num_layers 126 - 7 - 6 = 113 layers do not split evenly over the 14 other "
                "stages (Megatron-LM requires it)");
  EXPECT_EQ(ErrorOf(Llama405bUneven(16, 2, 7, 7)),
            field +
                "7 is not divisible by parallelism.vpp = 2 (Megatron-LM splits every stage into "
                "vpp equal model chunks)");
  EXPECT_EQ(ErrorOf(Llama405bUneven(4, 2, 2, 2)),
            field +
                "model.num_layers 126 - 2 - 2 = 122 layers over the 2 other stages give 61 per "
                "stage, not divisible by parallelism.vpp = 2");
  EXPECT_EQ(ErrorOf(Llama405bUneven(16, 1, 120, 0)),
            field +
                "model.num_layers 126 - 120 = 6 layers over the 15 other stages: every pipeline "
                "stage needs at least one layer");
  EXPECT_EQ(ErrorOf(Llama405bUneven(2, 1, 60, 60)),
            field +
                "model.num_layers 126 - 60 - 60 = 6 layers left, but pp = 2 has no other stage "
                "(first + last must equal 126)");
  EXPECT_EQ(ErrorOf(Llama405bUneven(1, 1, 7, 0)), field + "needs pp > 1");
  nlohmann::json slots = Llama405bUneven(16, 1, 7, 7);
  slots["parallelism"]["account_for_loss_in_pipeline_split"] = true;
  EXPECT_EQ(ErrorOf(slots),
            field +
                "cannot be combined with parallelism.account_for_loss_in_pipeline_split "
                "(Megatron-LM refuses uneven first/last stages together with the embedding/loss "
                "slots); give one or the other");
  nlohmann::json zero = Llama405bUneven(16, 1, 7, 7);
  zero["parallelism"]["first_stage_layers"] = 0;
  EXPECT_TRUE(Contains(ErrorOf(zero), "field 'first_stage_layers'"));
  // pp does not divide the layers and nothing is given: the error suggests a split.
  EXPECT_EQ(ErrorOf(Llama405bUneven(16, 1, 0, 0)),
            "job.json: model: field 'num_layers': 126 is not divisible by parallelism.pp*vpp = 16 "
            "(give parallelism.first_stage_layers and parallelism.last_stage_layers for an uneven "
            "split, e.g. 7 and 7: 7 + 14 x 8 + 7, or "
            "parallelism.account_for_embedding_in_pipeline_split / "
            "parallelism.account_for_loss_in_pipeline_split add one slot each)");
}

TEST(JobSpecInvalid, MorePipelineStagesThanLayers) {
  nlohmann::json spec = BaseSpec();
  spec["cluster"]["num_gpus"] = 256;
  spec["parallelism"]["pp"] = 64;
  spec["parallelism"]["dp"] = 1;
  EXPECT_EQ(ErrorOf(spec),
            "job.json: parallelism: field 'pp': 64 exceeds model.num_layers = 36: every pipeline "
            "stage needs at least one layer");
}

TEST(JobSpecInvalid, VppNeedsInterleavedSchedule) {
  nlohmann::json spec = BaseSpec();
  spec["parallelism"]["pp"] = 2;
  spec["parallelism"]["vpp"] = 3;
  spec["parallelism"]["dp"] = 16;
  EXPECT_TRUE(Contains(ErrorOf(spec), "parallelism: field 'vpp': 3 needs schedule 'interleaved'"));
}

TEST(JobSpecInvalid, GlobalBatchNotDivisibleByMicroBatchTimesDp) {
  nlohmann::json spec = BaseSpec();
  spec["training"]["global_batch_size"] = 500;
  EXPECT_EQ(ErrorOf(spec),
            "job.json: training: field 'global_batch_size': 500 is not divisible by "
            "micro_batch_size*dp = 1*32 = 32");
}

TEST(JobSpecInvalid, MicroBatchLargerThanGlobal) {
  nlohmann::json spec = BaseSpec();
  spec["training"]["micro_batch_size"] = 1024;
  EXPECT_TRUE(Contains(ErrorOf(spec), "training: field 'micro_batch_size': 1024 exceeds"));
}

TEST(JobSpecInvalid, UnknownGpu) {
  nlohmann::json spec = BaseSpec();
  spec["cluster"]["gpu"] = "h900-imaginary";
  const std::string e = ErrorOf(spec);
  EXPECT_TRUE(Contains(e, "job.json: cluster: field 'gpu': unknown GPU 'h900-imaginary'"));
  EXPECT_TRUE(Contains(e, "a100-sxm4-80gb"));  // lists the known ids
}

TEST(JobSpecInvalid, UnknownNetwork) {
  nlohmann::json spec = BaseSpec();
  spec["cluster"]["inter_node"] = "carrier-pigeon";
  const std::string e = ErrorOf(spec);
  EXPECT_TRUE(Contains(e,
                       "job.json: cluster: field 'inter_node': unknown network "
                       "'carrier-pigeon'"));
  EXPECT_TRUE(Contains(e, "ib-hdr-200"));
}

TEST(JobSpecInvalid, NegativeSize) {
  nlohmann::json spec = BaseSpec();
  spec["model"]["hidden_size"] = -3;
  EXPECT_EQ(ErrorOf(spec),
            "job.json: model: field 'hidden_size': must be a positive integer, got -3");
}

TEST(JobSpecInvalid, ZeroSize) {
  nlohmann::json spec = BaseSpec();
  spec["cluster"]["num_gpus"] = 0;
  EXPECT_EQ(ErrorOf(spec),
            "job.json: cluster: field 'num_gpus': must be a positive integer, got 0");
}

TEST(JobSpecInvalid, FractionalSize) {
  nlohmann::json spec = BaseSpec();
  spec["training"]["seq_len"] = 2048.5;
  EXPECT_TRUE(Contains(ErrorOf(spec), "training: field 'seq_len': must be a positive integer"));
}

TEST(JobSpec, SeqLenDefaultsAsPlanDoes) {
  nlohmann::json spec = BaseSpec();
  spec["training"].erase("seq_len");
  Expected<JobSpec> job = Parse(spec);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->training.seq_len, kDefaultSeqLen);
}

// Fields set by command-line flags are named by the flag in errors (gpuplan simulate).
TEST(JobSpecInvalid, ErrorsNameTheFlagThatSetTheField) {
  nlohmann::json spec = BaseSpec();
  spec["cluster"]["num_gpus"] = 64;  // dp = 32 stays pinned by the spec
  SpecFlags flags;
  flags.given["cluster.num_gpus"] = "--gpus 64";
  Expected<JobSpec> job = ParseJobSpec(spec, "job.json", "", Db(), flags);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().message(),
            "--gpus 64: dp*tp*pp*cp = 32*4*1*1 = 128 GPUs, not 64; dp = 32 is set by "
            "parallelism.dp (leave it out of the spec to derive dp from the GPU count)");
  // Without a pinned dp the GPU count sets it.
  spec["parallelism"].erase("dp");
  job = ParseJobSpec(spec, "job.json", "", Db(), flags);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->parallel.dp, 16);
  spec["cluster"]["num_gpus"] = 66;
  flags.given["cluster.num_gpus"] = "--gpus 66";
  EXPECT_EQ(ParseJobSpec(spec, "job.json", "", Db(), flags).status().message(),
            "--gpus 66: cluster.num_gpus = 66 is not divisible by tp*pp*cp = 4*1*1 = 4, so dp "
            "cannot default to GPUs/(tp*pp*cp)");

  spec = BaseSpec();
  spec["parallelism"]["account_for_embedding_in_pipeline_split"] = true;
  flags = SpecFlags{};
  flags.given["parallelism.account_for_embedding_in_pipeline_split"] = "--embedding-slot";
  EXPECT_EQ(ParseJobSpec(spec, "flags", "", Db(), flags).status().message(),
            "--embedding-slot: needs pp > 1");
  spec["parallelism"]["pp"] = 4;
  spec["parallelism"]["dp"] = 8;
  spec["parallelism"]["account_for_loss_in_pipeline_split"] = true;
  flags.given["parallelism.account_for_loss_in_pipeline_split"] = "--loss-slot";
  EXPECT_EQ(ParseJobSpec(spec, "flags", "", Db(), flags).status().message(),
            "--embedding-slot: model.num_layers 36 + 2 slots (with --loss-slot) = 38 is not "
            "divisible by parallelism.pp*vpp = 4");

  // No slot: the hint names the flags when there is no spec file.
  spec["parallelism"].erase("account_for_embedding_in_pipeline_split");
  spec["parallelism"].erase("account_for_loss_in_pipeline_split");
  spec["parallelism"]["pp"] = 8;
  spec["parallelism"]["dp"] = 4;
  flags = SpecFlags{};
  flags.names["parallelism.account_for_embedding_in_pipeline_split"] = "--embedding-slot";
  flags.names["parallelism.account_for_loss_in_pipeline_split"] = "--loss-slot";
  flags.names["parallelism.first_stage_layers"] = "--first-stage-layers";
  flags.names["parallelism.last_stage_layers"] = "--last-stage-layers";
  flags.without_file = true;
  EXPECT_EQ(ParseJobSpec(spec, "flags", "", Db(), flags).status().message(),
            "flags: model: field 'num_layers': 36 is not divisible by parallelism.pp*vpp = 8 "
            "(give --first-stage-layers and --last-stage-layers for an uneven split, e.g. 3 and "
            "3: 3 + 6 x 5 + 3, or --embedding-slot / --loss-slot add one slot each)");
}

TEST(JobSpecInvalid, MissingRequiredField) {
  nlohmann::json spec = BaseSpec();
  spec["training"].erase("global_batch_size");
  EXPECT_EQ(ErrorOf(spec),
            "job.json: training: field 'global_batch_size': is required but missing");
  spec = BaseSpec();
  spec.erase("cluster");
  EXPECT_EQ(ErrorOf(spec), "job.json: field 'cluster': is required but missing");
  spec = BaseSpec();
  spec["model"].erase("vocab_size");
  EXPECT_EQ(ErrorOf(spec), "job.json: model: field 'vocab_size': is required but missing");
}

TEST(JobSpecInvalid, MalformedJson) {
  Expected<JobSpec> job =
      ReadJobSpecFile(std::string(GPUPLAN_TEST_DATA) + "/model/malformed_syntax.json", Db());
  ASSERT_FALSE(job.ok());
  EXPECT_TRUE(Contains(job.status().message(), "malformed_syntax.json: malformed JSON at byte"));
  Expected<nlohmann::json> j = ParseJson("{\"model\": \"llama3-8b\",", "<spec>");
  ASSERT_FALSE(j.ok());
  EXPECT_TRUE(Contains(j.status().message(), "<spec>: malformed JSON"));
}

TEST(JobSpecInvalid, UnknownField) {
  nlohmann::json spec = BaseSpec();
  spec["parallelism"]["tensor_paralel"] = 4;
  const std::string e = ErrorOf(spec);
  EXPECT_TRUE(Contains(e, "job.json: parallelism: field 'tensor_paralel': unknown field"));
  EXPECT_TRUE(Contains(e, "allowed: tp, pp, dp"));
  spec = BaseSpec();
  spec["optimizer"] = "adam";
  EXPECT_TRUE(Contains(ErrorOf(spec), "job.json: field 'optimizer': unknown field"));
  spec = BaseSpec();
  spec["model"]["hiden_size"] = 4096;
  EXPECT_TRUE(Contains(ErrorOf(spec), "job.json: model: field 'hiden_size': unknown field"));
}

TEST(JobSpecInvalid, BadEnum) {
  nlohmann::json spec = BaseSpec();
  spec["training"]["precision"] = "int8";
  EXPECT_TRUE(Contains(ErrorOf(spec),
                       "training: field 'precision': 'int8' is not allowed (allowed: fp32, tf32, "
                       "bf16, fp16, fp8, fp4)"));
  spec = BaseSpec();
  spec["parallelism"]["schedule"] = "zigzag";
  EXPECT_TRUE(Contains(ErrorOf(spec), "parallelism: field 'schedule': 'zigzag' is not allowed"));
}

TEST(JobSpecInvalid, PrecisionNotSupportedByGpu) {
  nlohmann::json spec = BaseSpec();
  spec["cluster"] = {{"gpu", "v100-sxm2-32gb"},
                     {"num_gpus", 128},
                     {"gpus_per_node", 16},
                     {"inter_node", "ib-edr-100"}};
  spec["training"]["precision"] = "bf16";
  EXPECT_TRUE(Contains(ErrorOf(spec),
                       "job.json: training: field 'precision': bf16 is not "
                       "supported by GPU 'v100-sxm2-32gb'"));
}

TEST(JobSpecInvalid, GpusNotWholeNodes) {
  nlohmann::json spec = BaseSpec();
  spec["cluster"]["num_gpus"] = 12;
  spec["parallelism"]["tp"] = 4;
  spec["parallelism"]["dp"] = 3;
  spec["training"]["global_batch_size"] = 12;
  EXPECT_TRUE(Contains(ErrorOf(spec),
                       "cluster: field 'num_gpus': 12 is not a multiple of gpus_per_node = 8"));
}

TEST(JobSpecInvalid, UnknownPreset) {
  nlohmann::json spec = BaseSpec();
  spec["model"] = "gpt-5";
  const std::string e = ErrorOf(spec);
  EXPECT_TRUE(Contains(e, "job.json: field 'model': unknown model preset 'gpt-5'"));
  EXPECT_TRUE(Contains(e, "llama3-70b"));
}

TEST(JobSpecInvalid, ExpertParallelism) {
  nlohmann::json spec = BaseSpec();
  spec["parallelism"]["ep"] = 2;
  EXPECT_TRUE(Contains(ErrorOf(spec), "parallelism: field 'ep': 2 needs a mixture-of-experts"));
  spec["model"] = "mixtral-8x7b";
  spec["parallelism"]["ep"] = 16;
  spec["parallelism"]["dp"] = 32;
  EXPECT_TRUE(Contains(ErrorOf(spec),
                       "parallelism: field 'ep': 16 does not divide "
                       "model.moe_num_experts = 8"));
}

TEST(JobSpecInvalid, ExpertTensorParallelism) {
  nlohmann::json spec = BaseSpec();  // llama, tp 4, dp 32
  spec["parallelism"]["etp"] = 2;
  EXPECT_TRUE(Contains(ErrorOf(spec),
                       "parallelism: field 'etp': 2 differs from tp = 4 and needs a "
                       "mixture-of-experts model"));
  spec["model"] = "mixtral-8x7b";
  spec["parallelism"]["etp"] = 3;
  EXPECT_TRUE(Contains(ErrorOf(spec), "parallelism: field 'etp': 3 does not divide tp = 4"));
  // Megatron-Core's expert grid: etp x ep regroups the tp x cp x dp ranks.
  spec["parallelism"]["etp"] = 1;
  spec["parallelism"]["ep"] = 8;
  spec["parallelism"]["dp"] = 2;
  spec["cluster"]["num_gpus"] = 8;
  spec["training"]["global_batch_size"] = 8;
  spec["parallelism"]["sequence_parallel"] = true;
  const Expected<JobSpec> folded = Parse(spec);  // ep 8 over tp 4 x dp 2 at etp 1
  ASSERT_TRUE(folded.ok()) << folded.status().message();
  EXPECT_EQ(folded->parallel.ExpertTp(), 1);
  EXPECT_EQ(folded->parallel.ExpertDp(), 1);
  EXPECT_EQ(JobSpecToJson(*folded)["parallelism"]["etp"], 1);
  spec["parallelism"]["etp"] = 2;
  EXPECT_TRUE(Contains(ErrorOf(spec),
                       "parallelism: field 'ep': etp*ep = 2*8 does not divide tp*cp*dp = 8"));
  spec["parallelism"]["etp"] = 1;
  spec["parallelism"]["sequence_parallel"] = false;
  EXPECT_TRUE(Contains(ErrorOf(spec),
                       "parallelism: field 'sequence_parallel': must be true with tp > 1 and "
                       "ep > 1 or etp != tp"));
}

TEST(JobSpecInvalid, MoeDispatchAndRouting) {
  nlohmann::json spec = BaseSpec();  // llama, tp 4, dp 32
  spec["training"]["moe_dispatcher"] = "deepep";
  EXPECT_TRUE(Contains(ErrorOf(spec),
                       "training: field 'moe_dispatcher': deepep needs a "
                       "mixture-of-experts model"));
  spec["training"].erase("moe_dispatcher");
  spec["training"]["moe_load_imbalance"] = 1.2;
  EXPECT_TRUE(Contains(ErrorOf(spec),
                       "training: field 'moe_load_imbalance': 1.2 needs a "
                       "mixture-of-experts model"));
  spec["model"] = "mixtral-8x7b";
  spec["training"]["moe_load_imbalance"] = 0.9;
  EXPECT_TRUE(Contains(ErrorOf(spec), "field 'moe_load_imbalance'"));
  spec["training"]["moe_load_imbalance"] = 1.25;
  spec["training"]["moe_dispatcher"] = "deepep";
  EXPECT_TRUE(Contains(ErrorOf(spec),
                       "training: field 'moe_dispatcher': deepep is modelled "
                       "without expert tensor parallelism: set parallelism.etp = 1"));
  spec["training"]["moe_dispatcher"] = "nccl";
  EXPECT_TRUE(Contains(ErrorOf(spec), "moe_dispatcher"));
  spec["training"]["moe_dispatcher"] = "deepep";
  spec["parallelism"]["etp"] = 1;
  spec["parallelism"]["ep"] = 8;
  spec["parallelism"]["sequence_parallel"] = true;
  const Expected<JobSpec> job = Parse(spec);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->training.moe_dispatcher, MoeDispatcher::kDeepEp);
  EXPECT_DOUBLE_EQ(job->training.moe_load_imbalance, 1.25);
  const nlohmann::json written = JobSpecToJson(*job);
  EXPECT_EQ(written["training"]["moe_dispatcher"], "deepep");
  EXPECT_EQ(written["training"]["moe_load_imbalance"], 1.25);

  // Group-limited routing: both fields, groups dividing the experts, enough experts.
  nlohmann::json model = {
      {"num_layers", 2},          {"hidden_size", 64}, {"ffn_hidden_size", 128},
      {"num_attention_heads", 4}, {"vocab_size", 100}, {"mlp", "swiglu"},
      {"moe_num_experts", 16},    {"moe_top_k", 4},    {"moe_router_groups", 4}};
  spec = BaseSpec();
  spec["model"] = model;
  EXPECT_TRUE(Contains(ErrorOf(spec),
                       "field 'moe_router_group_topk': group-limited routing "
                       "needs both"));
  spec["model"]["moe_router_groups"] = 3;
  spec["model"]["moe_router_group_topk"] = 1;
  EXPECT_TRUE(Contains(ErrorOf(spec),
                       "field 'moe_router_groups': 3 does not divide "
                       "moe_num_experts 16"));
  spec["model"]["moe_router_groups"] = 8;
  EXPECT_TRUE(Contains(ErrorOf(spec),
                       "field 'moe_router_group_topk': 1 groups hold 2 experts, "
                       "fewer than moe_top_k 4"));
}

TEST(JobSpecInvalid, HybridSharding) {
  nlohmann::json spec = BaseSpec();  // tp 4, dp 32, ZeRO-1
  spec["parallelism"]["dp_replicate"] = 4;
  EXPECT_TRUE(
      Contains(ErrorOf(spec), "parallelism: field 'dp_replicate': 4 needs zero_stage 3 or fsdp"));
  spec["parallelism"]["zero_stage"] = 3;
  spec["parallelism"]["dp_replicate"] = 3;
  EXPECT_TRUE(
      Contains(ErrorOf(spec), "parallelism: field 'dp_replicate': 3 does not divide dp = 32"));
  spec["parallelism"]["dp_replicate"] = 0;
  EXPECT_TRUE(Contains(ErrorOf(spec), "parallelism: field 'dp_replicate'"));
  // Accepted, and written back so that the spec round-trips.
  spec["parallelism"]["dp_replicate"] = 4;
  Expected<JobSpec> job = Parse(spec);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->parallel.dp_replicate, 4);
  EXPECT_EQ(job->parallel.ShardRanks(), 8);
  EXPECT_EQ(JobSpecToJson(*job)["parallelism"]["dp_replicate"], 4);
  EXPECT_FALSE(JobSpecToJson(*Parse(BaseSpec()))["parallelism"].contains("dp_replicate"));
  // A job built in code is checked too, without dividing by zero.
  JobSpec built = *job;
  built.parallel.dp_replicate = 0;
  EXPECT_TRUE(
      Contains(ValidateJob(built, Db()).message(), "field 'dp_replicate': must be at least 1"));
}

// training.grad_reduce_bf16 needs a 16-bit or quantized precision; training.fp8_param_gather
// needs fp8, no LoRA, and the distributed optimizer or FSDP (Megatron-LM asserts it). Both are
// written back only when set.
TEST(JobSpecInvalid, Bf16GradientsAndFp8Parameters) {
  nlohmann::json spec = BaseSpec();  // ZeRO-1
  spec["cluster"]["gpu"] = "h100-sxm5-80gb";
  spec["training"]["precision"] = "bf16";
  spec["training"]["grad_reduce_bf16"] = true;
  spec["training"]["fp8_param_gather"] = true;
  EXPECT_TRUE(Contains(ErrorOf(spec), "training: field 'fp8_param_gather': needs precision fp8"));
  spec["training"]["precision"] = "fp8";
  Expected<JobSpec> job = Parse(spec);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_TRUE(job->training.grad_reduce_bf16);
  EXPECT_TRUE(job->training.fp8_param_gather);
  EXPECT_EQ(JobSpecToJson(*job)["training"]["fp8_param_gather"], true);
  EXPECT_EQ(JobSpecToJson(*job)["training"]["grad_reduce_bf16"], true);
  EXPECT_FALSE(JobSpecToJson(*Parse(BaseSpec()))["training"].contains("grad_reduce_bf16"));
  spec["parallelism"]["zero_stage"] = 0;
  EXPECT_TRUE(Contains(ErrorOf(spec), "field 'fp8_param_gather': needs the distributed optimizer"));
  spec["training"]["fp8_param_gather"] = false;
  spec["training"]["precision"] = "fp16";
  EXPECT_TRUE(
      Contains(ErrorOf(spec), "training: field 'grad_reduce_bf16': needs precision bf16, fp8"));
  spec["training"]["grad_reduce_bf16"] = "yes";
  EXPECT_TRUE(Contains(ErrorOf(spec), "field 'grad_reduce_bf16'"));
}

// Megatron-Core's --recompute-modules: with a selective recomputation only, the modules gpuplan
// models, a stack that chooses them, the MoE modules on a MoE model and mlp on a model with dense
// layers; written out only when not the default (core_attn).
TEST(JobSpecInvalid, RecomputeModules) {
  nlohmann::json spec = BaseSpec();  // llama, full recomputation
  spec["model"] = "mixtral-8x7b";
  spec["parallelism"] = {{"tp", 4}, {"dp", 32}, {"ep", 8}, {"sequence_parallel", true}};
  spec["training"]["recompute_modules"] = {"layernorm", "moe_act"};
  EXPECT_TRUE(Contains(ErrorOf(spec),
                       "training: field 'recompute_modules': names what a selective "
                       "recomputation re-runs: needs recompute selective, got full"))
      << ErrorOf(spec);
  spec["training"]["recompute"] = "selective";
  Expected<JobSpec> job = Parse(spec);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->training.recompute_modules, kRecomputeLayernorm | kRecomputeMoeAct);
  const nlohmann::json written = JobSpecToJson(*job);
  EXPECT_EQ(written["training"]["recompute_modules"],
            nlohmann::json::array({"layernorm", "moe_act"}));
  Expected<JobSpec> again = ParseJobSpec(written, "<again>", ".", Db());
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->training.recompute_modules, job->training.recompute_modules);
  spec["training"]["recompute_modules"] = {"core_attn"};
  EXPECT_FALSE(JobSpecToJson(*Parse(spec))["training"].contains("recompute_modules"));
  spec["training"]["recompute_modules"] = nlohmann::json::array();
  EXPECT_TRUE(Contains(ErrorOf(spec),
                       "must name at least one module (allowed: core_attn, "
                       "layernorm, moe_act, mlp)"));
  spec["training"]["recompute_modules"] = {"mlp"};
  EXPECT_TRUE(Contains(ErrorOf(spec), "every layer of the model is a mixture-of-experts layer"))
      << ErrorOf(spec);
  spec["training"]["recompute_modules"] = {"shared_experts"};
  EXPECT_TRUE(
      Contains(ErrorOf(spec), "'shared_experts' is a Megatron-Core module gpuplan does not model"));
  spec["training"]["recompute_modules"] = {"norms"};
  EXPECT_TRUE(Contains(ErrorOf(spec),
                       "'norms' is not allowed (allowed: core_attn, layernorm, "
                       "moe_act, mlp)"));
  spec["training"]["recompute_modules"] = {"moe_act"};
  spec["training"]["framework"] = "torchtitan";
  EXPECT_TRUE(Contains(ErrorOf(spec),
                       "the training stack 'torchtitan' does not choose the "
                       "modules it recomputes"))
      << ErrorOf(spec);
  spec["training"].erase("framework");
  spec["model"] = "llama3-8b";
  spec["parallelism"].erase("ep");
  EXPECT_TRUE(Contains(ErrorOf(spec), "the model has no MoE layers")) << ErrorOf(spec);
  spec["training"]["recompute_modules"] = {"core_attn", "mlp"};
  job = Parse(spec);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->training.recompute_modules, kRecomputeCoreAttn | kRecomputeMlp);
  EXPECT_EQ(JobSpecToJson(*job)["training"]["recompute_modules"],
            nlohmann::json::array({"core_attn", "mlp"}));
}

// Megatron-Core's checks (transformer_config.py): fewer layers than the model, pp 1, no
// recomputation; and a stack that offloads.
TEST(JobSpecInvalid, ActivationOffload) {
  nlohmann::json spec = BaseSpec();  // 36 layers, pp 1, full recomputation
  spec["training"]["activation_offload_layers"] = 12;
  EXPECT_TRUE(Contains(ErrorOf(spec),
                       "training: field 'activation_offload_layers': needs "
                       "recompute none"));
  spec["training"]["recompute"] = "none";
  Expected<JobSpec> job = Parse(spec);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->training.activation_offload_layers, 12);
  EXPECT_EQ(JobSpecToJson(*job)["training"]["activation_offload_layers"], 12);
  EXPECT_FALSE(JobSpecToJson(*Parse(BaseSpec()))["training"].contains("activation_offload_layers"));
  spec["training"]["activation_offload_layers"] = 36;
  EXPECT_TRUE(Contains(ErrorOf(spec), "36 must be less than num_layers = 36"));
  spec["training"]["activation_offload_layers"] = -1;
  EXPECT_TRUE(Contains(ErrorOf(spec), "field 'activation_offload_layers'"));
  spec["training"]["activation_offload_layers"] = 12;
  spec["parallelism"]["pp"] = 2;
  spec["parallelism"]["dp"] = 16;
  EXPECT_TRUE(Contains(ErrorOf(spec), "needs pp 1"));
  spec["parallelism"]["pp"] = 1;
  spec["parallelism"]["dp"] = 32;
  spec["training"]["framework"] = "torchtitan";
  spec["parallelism"]["tp"] = 1;
  spec["parallelism"]["dp"] = 128;
  spec["parallelism"]["sequence_parallel"] = false;
  spec["parallelism"].erase("zero_stage");
  spec["parallelism"]["fsdp"] = true;
  EXPECT_TRUE(Contains(ErrorOf(spec), "the training stack 'torchtitan' does not offload"));
  // The offloaded layers must fit in the host memory behind a Grace superchip's GPU (240 GB per
  // GB200): 79 layers of Llama 3 70B at TP8, micro-batch 16 x 8192 tokens are 4.5 GB each.
  const nlohmann::json gb200 = {
      {"model", "llama3-70b"},
      {"cluster", {{"gpu", "gb200"}, {"num_gpus", 8}}},
      {"training",
       {{"seq_len", 8192},
        {"global_batch_size", 16},
        {"micro_batch_size", 16},
        {"activation_offload_layers", 79}}},
      {"parallelism", {{"tp", 8}, {"sequence_parallel", true}, {"zero_stage", 1}}}};
  EXPECT_TRUE(Contains(ErrorOf(gb200), "field 'activation_offload_layers': 79 layers offload "))
      << ErrorOf(gb200);
  EXPECT_TRUE(Contains(ErrorOf(gb200), "more than the 240 GB of host memory per gb200 GPU"));
}

TEST(JobSpecInvalid, SeqLenNotDivisibleByCp) {
  nlohmann::json spec = BaseSpec();
  spec["training"]["seq_len"] = 2050;
  spec["parallelism"]["cp"] = 4;
  spec["parallelism"]["dp"] = 8;
  spec["training"]["global_batch_size"] = 512;
  EXPECT_TRUE(Contains(ErrorOf(spec),
                       "training: field 'seq_len': 2050 is not divisible by parallelism.cp = 4"));
}

TEST(JobSpecInvalid, SeqLenBeyondTheLearnedPositions) {
  // Megatron-LM asserts max_position_embeddings >= seq_length; GPT-2 has 1,024 rows.
  nlohmann::json spec = BaseSpec();
  spec["model"]["max_position_embeddings_learned"] = 2048;
  EXPECT_TRUE(Parse(spec).ok());
  spec["training"]["seq_len"] = 4096;
  EXPECT_TRUE(Contains(ErrorOf(spec),
                       "training: field 'seq_len': 4096 tokens exceed the 2048 learned positions "
                       "of GPT 7.5B (max_position_embeddings_learned"))
      << ErrorOf(spec);
}

TEST(JobSpecInvalid, ZeroStageOutOfRange) {
  nlohmann::json spec = BaseSpec();
  spec["parallelism"]["zero_stage"] = 4;
  EXPECT_TRUE(Contains(ErrorOf(spec), "parallelism: field 'zero_stage': must be 0, 1, 2 or 3"));
}

TEST(JobSpecInvalid, ModelNotAnObjectOrString) {
  nlohmann::json spec = BaseSpec();
  spec["model"] = 7;
  EXPECT_TRUE(Contains(ErrorOf(spec), "job.json: field 'model': must be a preset id"));
}

TEST(JobSpecInvalid, HfConfigProblemsNameBothFiles) {
  nlohmann::json spec = BaseSpec();
  spec["model"] = {{"hf_config", "malformed_missing_layers.json"}};
  const std::string e = ErrorOf(spec);
  EXPECT_TRUE(Contains(e, "job.json: model: "));
  EXPECT_TRUE(Contains(e, "malformed_missing_layers.json: field 'num_hidden_layers'"));
}

TEST(ValidateJob, ProgrammaticJobChecked) {
  Expected<JobSpec> job = Parse(BaseSpec());
  ASSERT_TRUE(job.ok()) << job.status().message();
  JobSpec j = *job;
  EXPECT_TRUE(ValidateJob(j, Db()).ok());
  j.parallel.zero_stage = 5;
  EXPECT_TRUE(Contains(ValidateJob(j, Db()).message(), "field 'zero_stage'"));
  j = *job;
  j.cluster.gpu = "nope";
  EXPECT_TRUE(Contains(ValidateJob(j, Db()).message(), "cluster: field 'gpu'"));
}

}  // namespace
}  // namespace gpuplan
