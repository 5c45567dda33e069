#include "gui/session.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "common/file_write.h"
#include "common/json_reader.h"
#include "common/limits.h"
#include "common/str_format.h"
#include "simulator/job_spec_json.h"
#include "simulator/presets.h"

namespace gpuplan {
namespace {

constexpr const char* kFormat = "gpuplan-session";
constexpr int kVersion = 1;

struct ModelSourceName {
  ModelSource source;
  std::string_view name;
};
constexpr ModelSourceName kModelSources[] = {{ModelSource::kPreset, "preset"},
                                             {ModelSource::kHfConfig, "hf_config"},
                                             {ModelSource::kCustom, "custom"}};

std::string_view NameOf(ModelSource source) {
  for (const ModelSourceName& row : kModelSources) {
    if (row.source == source) return row.name;
  }
  return "custom";
}

}  // namespace

Session DefaultSession(const HardwareDb& db) {
  Session s;
  s.model_source = ModelSource::kPreset;
  s.model_origin = "llama3-70b";
  s.job.model = FindModelPreset(s.model_origin).value();
  s.job.cluster.num_gpus = 256;
  // SelectGpu cannot fail for a GPU of the built-in database.
  (void)SelectGpu(db, "h100-sxm5-80gb", &s);
  s.job.training.seq_len = 8192;
  s.job.training.global_batch_size = 512;
  s.job.training.micro_batch_size = 1;
  s.job.training.precision = Precision::kBf16;
  s.job.parallel.tp = 8;
  s.job.parallel.pp = 4;
  s.job.parallel.vpp = 5;
  s.job.parallel.schedule = Schedule::kInterleaved;
  s.job.parallel.sequence_parallel = true;
  s.job.parallel.zero_stage = 1;
  s.job.parallel.dp = 8;  // 256 GPUs / (TP8 x PP4)
  s.train_tokens = 1e12;
  // Find best plan: the cheapest plan that trains within 60 days (the quick start's question).
  s.objective = Objective::kCostUnderDeadline;
  s.deadline_s = 60 * 86400.0;
  return s;
}

Expected<JobSpec> ResolvedJob(const Session& session, const HardwareDb& db) {
  JobSpec job = session.job;
  ParallelSpec& p = job.parallel;
  const int64_t model_parallel = p.tp * p.pp * p.cp;
  const int64_t gpus = job.cluster.num_gpus;
  if (model_parallel <= 0 || gpus <= 0 || gpus % model_parallel != 0) {
    return Status::Invalid("parallelism: " + std::to_string(gpus) + " " +
                           Noun(gpus, "GPU is", "GPUs are") +
                           " not a multiple of TP x PP x CP = " + std::to_string(model_parallel) +
                           "; change the GPU count or the TP, PP or CP size");
  }
  p.dp = gpus / model_parallel;
  // A job smaller than one node runs on part of one machine (ParseJobSpec's rule).
  job.cluster.gpus_per_node = std::min(job.cluster.gpus_per_node, gpus);
  GPUPLAN_RETURN_IF_ERROR(ValidateJob(job, db));
  return job;
}

void LoadPlan(const HardwareDb& db, const Plan& plan, Session* session) {
  session->job = plan.job;
  session->node = plan.node;
  // The session keeps the machine's size; ResolvedJob reduces it for jobs smaller than one.
  if (const NodeTemplate* node = db.FindNode(plan.node)) {
    session->job.cluster.gpus_per_node = node->gpus_per_node;
  }
  if (!plan.econ.provider.empty() && plan.econ.provider != "override") {
    session->provider = plan.econ.provider;
  }
  session->price_kind = plan.econ.price_kind;
}

std::vector<std::string> NodesOfGpu(const HardwareDb& db, const std::string& gpu) {
  std::vector<std::string> out;
  const GpuSpec* spec = db.FindGpu(gpu);
  for (const auto& [id, node] : db.nodes()) {
    if (node.gpu == gpu) out.push_back(id);
  }
  if (spec != nullptr) {
    auto it = std::find(out.begin(), out.end(), spec->default_node);
    if (it != out.end()) std::rotate(out.begin(), it, it + 1);
  }
  return out;
}

Status SelectGpu(const HardwareDb& db, const std::string& gpu, Session* session) {
  const GpuSpec* spec = db.FindGpu(gpu);
  if (spec == nullptr) return Status::Invalid("cluster: unknown GPU '" + gpu + "'");
  const std::vector<std::string> nodes = NodesOfGpu(db, gpu);
  ClusterSpec& c = session->job.cluster;
  c.gpu = gpu;
  if (!nodes.empty()) {
    const NodeTemplate& node = *db.FindNode(nodes.front());
    session->node = node.id;
    c.inter_node = node.network;
    c.gpus_per_node = node.gpus_per_node;
  }
  if (spec->PeakFlops(session->job.training.precision) <= 0) {
    session->job.training.precision = Precision::kBf16;
  }
  if (!session->provider.empty()) {
    bool sold = false;
    for (const PriceEntry& e : db.prices())
      sold = sold || (e.gpu == gpu && e.provider == session->provider);
    if (!sold) session->provider.clear();
  }
  return Status::Ok();
}

PlanRequest WhatIfRequest(const Session& s, const HardwareDb& db) {
  PlanRequest req;
  req.train_tokens = s.train_tokens;
  req.seq_len = s.job.training.seq_len;
  if (!s.provider.empty()) req.providers = {s.provider};
  req.price_kind = s.price_kind;
  if (s.price_override_usd_per_gpu_hour > 0) {
    req.price_overrides[s.job.cluster.gpu] = s.price_override_usd_per_gpu_hour;
  }
  req.reliability = db.reliability();
  return req;
}

PlanRequest SearchRequest(const Session& s, const HardwareDb& db) {
  PlanRequest req = WhatIfRequest(s, db);
  req.model = s.job.model;
  req.global_batch_sizes = {s.job.training.global_batch_size};
  req.precisions = {s.job.training.precision};
  req.lora = s.job.training.lora;
  req.attention = s.job.training.attention;
  req.framework = s.job.training.framework;
  req.dropout = s.job.training.dropout;
  req.overhead = s.job.overhead;
  req.gpus = s.search_all_gpus ? db.GpuIds() : std::vector<std::string>{s.job.cluster.gpu};
  req.max_gpus = s.search_max_gpus;
  req.objective = s.objective;
  req.deadline_s = s.deadline_s;
  req.budget_usd = s.budget_usd;
  return req;
}

bool SearchedFor(const PlanRequest& searched, const Session& s) {
  const TrainingSpec& t = s.job.training;
  return searched.model == s.job.model && searched.train_tokens == s.train_tokens &&
         searched.seq_len == t.seq_len &&
         searched.global_batch_sizes == std::vector<int64_t>{t.global_batch_size} &&
         searched.precisions == std::vector<Precision>{t.precision} && searched.lora == t.lora &&
         searched.attention == t.attention && searched.dropout == t.dropout &&
         searched.framework.id == t.framework.id;
}

PlanResult WhatIfReport(const Session& session, const HardwareDb& db, const Plan& plan,
                        const std::vector<ScalingRow>& scaling, const PlanResult* search) {
  PlanResult r;
  r.request = search != nullptr ? search->request : SearchRequest(session, db);
  r.found = true;
  r.recommendation = plan;
  r.bound = "what-if";
  r.explanation = {"The plan set by hand in gpuplan-gui (a what-if, not the planner's choice)."};
  if (search != nullptr && search->found) {
    r.explanation.push_back("The planner's recommendation for the same job: " +
                            std::to_string(search->recommendation.job.cluster.num_gpus) + " x " +
                            search->recommendation.job.cluster.gpu + ".");
    r.pareto = search->pareto;
    r.alternatives = search->alternatives;
  }
  r.scaling_gpu = plan.job.cluster.gpu;
  r.scaling = scaling;
  return r;
}

nlohmann::json SessionToJson(const Session& s) {
  nlohmann::json price = {{"kind", std::string(PriceKindName(s.price_kind))}};
  if (!s.provider.empty()) price["provider"] = s.provider;
  if (s.price_override_usd_per_gpu_hour > 0) {
    price["override_usd_per_gpu_hour"] = s.price_override_usd_per_gpu_hour;
  }
  nlohmann::json search = {{"objective", std::string(ObjectiveName(s.objective))},
                           {"all_gpus", s.search_all_gpus},
                           {"max_gpus", s.search_max_gpus}};
  if (s.deadline_s > 0) search["deadline_s"] = s.deadline_s;
  if (s.budget_usd > 0) search["budget_usd"] = s.budget_usd;
  return {{"format", kFormat},
          {"version", kVersion},
          {"model_source", std::string(NameOf(s.model_source))},
          {"model_origin", s.model_origin},
          {"job", JobSpecToJson(s.job)},
          {"node", s.node},
          {"work", {{"train_tokens", s.train_tokens}}},
          {"price", price},
          {"search", search}};
}

Expected<Session> SessionFromJson(const nlohmann::json& json, const std::string& origin,
                                  const HardwareDb& db) {
  if (!json.is_object()) return Status::Invalid(origin + ": must be a JSON object");
  JsonObjectReader top(json, origin);
  top.RejectUnknownFields({"format", "version", "model_source", "model_origin", "job", "node",
                           "work", "price", "search"});
  if (top.Enum("format", {kFormat}) != kFormat || !top.status().ok()) return top.status();
  const int64_t version = top.PositiveInt("version");
  if (top.status().ok() && version != kVersion) {
    top.Fail("version", "is " + std::to_string(version) + "; this gpuplan-gui reads version " +
                            std::to_string(kVersion));
  }
  Session s;
  const std::string source = top.Enum("model_source", {"preset", "hf_config", "custom"});
  for (const ModelSourceName& row : kModelSources) {
    if (row.name == source) s.model_source = row.source;
  }
  s.model_origin = top.OptionalString("model_origin", "");
  s.node = top.String("node");
  const nlohmann::json* job = top.Object("job");
  const nlohmann::json* work = top.Object("work");
  const nlohmann::json* price = top.Object("price");
  const nlohmann::json* search = top.Object("search");
  GPUPLAN_RETURN_IF_ERROR(top.status());

  std::string base_dir = std::filesystem::path(origin).parent_path().string();
  if (base_dir.empty()) base_dir = ".";
  Expected<JobSpec> parsed = ParseJobSpec(*job, origin + ": job", base_dir, db);
  if (!parsed.ok()) return parsed.status();
  s.job = std::move(parsed).value();
  const NodeTemplate* node = db.FindNode(s.node);
  if (node == nullptr || node->gpu != s.job.cluster.gpu) {
    std::string known;
    for (const std::string& id : NodesOfGpu(db, s.job.cluster.gpu)) {
      known += (known.empty() ? "" : ", ") + id;
    }
    return Status::Invalid(origin + ": field 'node': '" + s.node + "' is not a node template of " +
                           s.job.cluster.gpu + " (known: " + known + ")");
  }

  JsonObjectReader w(*work, origin + ": work");
  w.RejectUnknownFields({"train_tokens"});
  s.train_tokens = w.ScaledNumber("train_tokens", 1.0, 1.0, kMaxTrainTokens);
  GPUPLAN_RETURN_IF_ERROR(w.status());

  JsonObjectReader p(*price, origin + ": price");
  p.RejectUnknownFields({"kind", "provider", "override_usd_per_gpu_hour"});
  ParsePriceKind(p.Enum("kind", {"on-demand", "spot"}), &s.price_kind);
  s.provider = p.OptionalString("provider", "");
  s.price_override_usd_per_gpu_hour =
      p.OptionalScaledNumber("override_usd_per_gpu_hour", 0, 1.0, 0.0, kMaxUsdPerGpuHour);
  GPUPLAN_RETURN_IF_ERROR(p.status());
  if (!s.provider.empty()) {
    const std::vector<std::string> providers = db.Providers();
    if (std::find(providers.begin(), providers.end(), s.provider) == providers.end()) {
      p.Fail("provider", "'" + s.provider + "' is not a provider of the hardware database");
      return p.status();
    }
  }

  JsonObjectReader q(*search, origin + ": search");
  q.RejectUnknownFields({"objective", "all_gpus", "max_gpus", "deadline_s", "budget_usd"});
  ParseObjective(q.Enum("objective", {"time", "cost", "cost-under-deadline", "time-under-budget"}),
                 &s.objective);
  s.search_all_gpus = q.OptionalBool("all_gpus", true);
  s.search_max_gpus = q.IntInRange("max_gpus", 1, kMaxGpus);
  s.deadline_s = q.OptionalScaledNumber("deadline_s", 0, 1.0, 0.0, kMaxDeadlineSeconds);
  s.budget_usd = q.OptionalScaledNumber("budget_usd", 0, 1.0, 0.0, kMaxBudgetUsd);
  GPUPLAN_RETURN_IF_ERROR(q.status());
  return s;
}

Expected<Session> ReadSessionFile(const std::string& path, const HardwareDb& db) {
  Expected<nlohmann::json> json = ReadJsonFile(path);
  if (!json.ok()) return json.status();
  return SessionFromJson(*json, path, db);
}

Status WriteSessionFile(const std::string& path, const Session& session) {
  return WriteFileAtomically(
      path,
      SessionToJson(session).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

}  // namespace gpuplan
