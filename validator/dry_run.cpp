#include "validator/dry_run.h"

#include <filesystem>

#include "common/checked_math.h"
#include "common/json_reader.h"
#include "common/limits.h"
#include "common/str_format.h"
#include "simulator/job_spec_json.h"
#include "simulator/pipeline_schedule.h"
#include "simulator/shard.h"
#include "validator/rank_program.h"

namespace gpuplan {
namespace {

std::string RankList(const std::vector<int64_t>& ranks, size_t max_shown = 16) {
  std::string out = "[";
  for (size_t i = 0; i < ranks.size() && i < max_shown; ++i) {
    if (i > 0) out += ' ';
    out += std::to_string(ranks[i]);
  }
  if (ranks.size() > max_shown) out += StrFormat(" ... %zu ranks", ranks.size());
  return out + "]";
}

std::string OpText(const RankOp& op) {
  std::string out = op.name;
  switch (op.kind) {
    case RankOpKind::kCollective:
      out +=
          StrFormat(" (%s, %.2f MB", std::string(GroupKindName(op.group)).c_str(), op.bytes / 1e6);
      out += op.count > 1 ? StrFormat(" x %lld)", static_cast<long long>(op.count)) : ")";
      break;
    case RankOpKind::kSend:
      out += StrFormat(" -> rank %lld (%.2f MB)", static_cast<long long>(op.peer), op.bytes / 1e6);
      break;
    case RankOpKind::kRecv:
      out += StrFormat(" <- rank %lld (%.2f MB)", static_cast<long long>(op.peer), op.bytes / 1e6);
      break;
    case RankOpKind::kCompute:
    case RankOpKind::kLayers:
      if (!op.shape.empty()) out += " [" + op.shape + "]";
      break;
  }
  if (op.recompute == RecomputeRole::kDiscard) out += " (output discarded, re-run in backward)";
  if (op.recompute == RecomputeRole::kCheckpoint) out += " (checkpointed, re-run in backward)";
  return out;
}

nlohmann::json OpJson(const RankOp& op) {
  static constexpr const char* kKinds[] = {"compute", "collective", "send", "recv", "layers"};
  nlohmann::json j = {{"kind", kKinds[static_cast<int>(op.kind)]}, {"name", op.name}};
  if (!op.shape.empty()) j["shape"] = op.shape;
  if (op.kind == RankOpKind::kCollective) j["group"] = GroupKindName(op.group);
  if (op.peer >= 0) j["peer"] = op.peer;
  if (op.bytes > 0) j["bytes"] = op.bytes;
  if (op.count != 1) j["count"] = op.count;
  if (op.recompute != RecomputeRole::kNone) {
    static constexpr const char* kRoles[] = {"", "discard", "checkpoint", "rerun"};
    j["recompute"] = kRoles[static_cast<int>(op.recompute)];
  }
  return j;
}

// The layer programs a job has: forward, backward (and weight-gradient) for dense and MoE layers.
struct LayerProgramSet {
  std::string title;
  PassKind kind;
  bool moe;
};

std::vector<LayerProgramSet> LayerProgramsOf(const JobSpec& job) {
  std::vector<LayerProgramSet> sets;
  const bool split = GetScheduleInfo(job.parallel.schedule).splits_backward;
  const bool has_dense = !job.model.is_moe() || job.model.moe_first_dense_layers > 0;
  for (bool moe : {false, true}) {
    if (moe ? !job.model.is_moe() : !has_dense) continue;
    const std::string layer = moe ? "MoE layer" : "layer";
    sets.push_back({layer + " forward", PassKind::kForward, moe});
    sets.push_back(
        {layer + (split ? " backward (input gradients)" : " backward"), PassKind::kBackward, moe});
    if (split) sets.push_back({layer + " weight gradients", PassKind::kWeightGrad, moe});
  }
  return sets;
}

// Group kinds worth printing: size > 1, and the expert groups only for MoE models (otherwise
// they repeat the dp groups), the expert TP groups only when etp differs from tp (otherwise they
// are the tp groups).
bool Shown(const JobSpec& job, const RankLayout& layout, GroupKind kind) {
  const auto& gs = layout.Groups(kind);
  if (gs.empty() || gs.front().size() < 2) return false;
  if (kind == GroupKind::kExpertTp) return job.parallel.ExpertTp() != job.parallel.tp;
  return job.model.is_moe() || (kind != GroupKind::kEp && kind != GroupKind::kExpertDp);
}

}  // namespace

Expected<JobSpec> ValidationJobFromJson(const nlohmann::json& doc, const std::string& origin,
                                        const std::string& base_dir, const HardwareDb& db) {
  const bool plan = doc.is_object() && doc.contains("recommendation");
  if (plan) {
    const nlohmann::json& rec = doc["recommendation"];
    if (!rec.is_object() || !rec.contains("job")) {
      return Status::Invalid(
          origin +
          ": field 'recommendation': has no 'job' (write the plan with "
          "`gpuplan plan --json`; a plan that found nothing cannot be validated)");
    }
  }
  const std::string context = plan ? origin + ": recommendation.job" : origin;
  Expected<JobSpec> job =
      ParseJobSpec(plan ? doc["recommendation"]["job"] : doc, context, base_dir, db);
  if (!job.ok()) return job;
  const ParallelSpec& p = job->parallel;
  const TrainingSpec& t = job->training;
  if (p.ep > 1 && t.moe_dispatcher == MoeDispatcher::kDeepEp) {
    return Status::Invalid(context +
                           ": training: field 'moe_dispatcher': deepep; the validator dispatches "
                           "with all-to-all collectives only (alltoall)");
  }
  if (t.moe_load_imbalance != 1.0) {
    return Status::Invalid(StrFormat(
        "%s: training: field 'moe_load_imbalance': %g; the validator routes every rank the "
        "same tokens, so it checks balanced routing only (1)",
        context.c_str(), t.moe_load_imbalance));
  }
  return job;
}

Expected<JobSpec> ReadValidationJob(const std::string& path, const HardwareDb& db) {
  Expected<nlohmann::json> doc = ReadJsonFile(path);
  if (!doc.ok()) return doc.status();
  // Not `base = "."` on an empty string: gcc 12 warns a false -Wrestrict on that assignment.
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return ValidationJobFromJson(*doc, path, parent.empty() ? std::string(".") : parent, db);
}

std::vector<int64_t> RepresentativeRanks(const JobSpec& job) {
  std::vector<int64_t> ranks;
  const int64_t stride = job.parallel.tp * job.parallel.cp * job.parallel.dp;
  for (int64_t s = 0; s < job.parallel.pp; ++s) ranks.push_back(s * stride);
  return ranks;
}

Status CheckDryRunSize(const JobSpec& job, std::span<const int64_t> ranks) {
  const int64_t per_microbatch = GetScheduleInfo(job.parallel.schedule).splits_backward ? 3 : 2;
  const int64_t per_rank = MicrobatchesPerStep(job) * job.parallel.vpp * per_microbatch;
  const std::optional<int64_t> passes =
      CheckedProduct({per_rank, static_cast<int64_t>(ranks.size())});
  if (passes && *passes <= kMaxDryRunPasses) return Status::Ok();
  return Status::Invalid(StrFormat(
      "--plan: the dry run would list %lld pipeline passes per rank for %zu ranks, more than %lld "
      "in all (kMaxDryRunPasses, docs/JOB_SPEC.md#limits); print fewer ranks with --rank, or "
      "validate a smaller global batch",
      static_cast<long long>(per_rank), ranks.size(), static_cast<long long>(kMaxDryRunPasses)));
}

std::string FormatDryRun(const JobSpec& job, const RankLayout& layout,
                         std::span<const int64_t> ranks) {
  const ParallelSpec& p = job.parallel;
  const int64_t nodes = (layout.world_size + layout.gpus_per_node - 1) / layout.gpus_per_node;
  std::string out = StrFormat(
      "Dry run: %s on %lld x %s (%lld %s x %lld %s), tp %lld cp %lld dp %lld pp %lld "
      "(vpp %lld, %s) ep %lld\n",
      job.model.name.c_str(), static_cast<long long>(layout.world_size), job.cluster.gpu.c_str(),
      static_cast<long long>(nodes), Noun(nodes, "node", "nodes").c_str(),
      static_cast<long long>(layout.gpus_per_node),
      Noun(layout.gpus_per_node, "GPU", "GPUs").c_str(), static_cast<long long>(p.tp),
      static_cast<long long>(p.cp), static_cast<long long>(p.dp), static_cast<long long>(p.pp),
      static_cast<long long>(p.vpp), std::string(ScheduleName(p.schedule)).c_str(),
      static_cast<long long>(p.ep));
  out +=
      "One process per GPU; rank = tp + TP*(cp + CP*(dp + DP*pp)) (Megatron-LM order); node = "
      "rank / GPUs per node, CUDA device = rank % GPUs per node.\n";

  out += "\nProcess layout\n   rank  node  gpu    tp    cp    dp    pp    ep\n";
  const size_t shown = layout.ranks.size() <= 64 ? layout.ranks.size() : 16;
  for (size_t i = 0; i < shown; ++i) {
    const RankCoord& c = layout.ranks[i];
    out += StrFormat("  %5lld %5lld %4lld %5lld %5lld %5lld %5lld %5lld\n",
                     static_cast<long long>(c.rank), static_cast<long long>(c.node),
                     static_cast<long long>(c.local_gpu), static_cast<long long>(c.tp),
                     static_cast<long long>(c.cp), static_cast<long long>(c.dp),
                     static_cast<long long>(c.pp), static_cast<long long>(c.ep));
  }
  if (shown < layout.ranks.size())
    out += StrFormat("  ... %zu more ranks (--json lists all)\n", layout.ranks.size() - shown);

  out += "\nCommunicators\n";
  for (int k = 0; k < kGroupKindCount; ++k) {
    const auto kind = static_cast<GroupKind>(k);
    if (!Shown(job, layout, kind)) continue;
    const auto& gs = layout.Groups(kind);
    out += StrFormat("  %-9s %lld %s of %zu:", std::string(GroupKindName(kind)).c_str(),
                     static_cast<long long>(gs.size()), Noun(gs.size(), "group", "groups").c_str(),
                     gs.front().size());
    for (size_t g = 0; g < gs.size() && g < 8; ++g) {
      out += ' ';
      out += RankList(gs[g], 8);
    }
    out += gs.size() > 8 ? " ...\n" : "\n";
  }

  for (int64_t rank : ranks) {
    const RankCoord& c = layout.ranks[static_cast<size_t>(rank)];
    out += StrFormat("\nRank %lld (node %lld, GPU %lld; stage %lld of %lld)\n",
                     static_cast<long long>(rank), static_cast<long long>(c.node),
                     static_cast<long long>(c.local_gpu), static_cast<long long>(c.pp),
                     static_cast<long long>(p.pp));
    for (int k = 0; k < kGroupKindCount; ++k) {
      const auto kind = static_cast<GroupKind>(k);
      if (!Shown(job, layout, kind)) continue;
      const int64_t g = layout.GroupOf(kind, rank);
      const auto& members = layout.Groups(kind)[static_cast<size_t>(g)];
      out += StrFormat("  %-9s group %lld %s\n", std::string(GroupKindName(kind)).c_str(),
                       static_cast<long long>(g), RankList(members).c_str());
    }
    for (const ProgramStep& step : RankProgram(job, layout, rank)) {
      out += StrFormat("  %-10s", step.label.c_str());
      for (size_t i = 0; i < step.ops.size(); ++i) {
        out += i > 0 ? "; " : " ";
        out += OpText(step.ops[i]);
      }
      out += "\n";
    }
  }

  for (const LayerProgramSet& set : LayerProgramsOf(job)) {
    out += "\nOps of one " + set.title + " (every rank; groups are the rank's own)\n";
    int i = 1;
    for (const RankOp& op : LayerProgram(job, set.kind, set.moe))
      out += StrFormat("  %2d %s\n", i++, OpText(op).c_str());
  }
  return out;
}

nlohmann::json DryRunToJson(const JobSpec& job, const RankLayout& layout,
                            std::span<const int64_t> ranks) {
  nlohmann::json j = {{"world_size", layout.world_size}, {"gpus_per_node", layout.gpus_per_node}};
  j["job"] = JobSpecToJson(job);
  j["ranks"] = nlohmann::json::array();
  for (const RankCoord& c : layout.ranks) {
    j["ranks"].push_back({{"rank", c.rank},
                          {"node", c.node},
                          {"gpu", c.local_gpu},
                          {"tp", c.tp},
                          {"cp", c.cp},
                          {"dp", c.dp},
                          {"pp", c.pp},
                          {"ep", c.ep}});
  }
  j["groups"] = nlohmann::json::object();
  for (int k = 0; k < kGroupKindCount; ++k) {
    const auto kind = static_cast<GroupKind>(k);
    j["groups"][std::string(GroupKindName(kind))] = layout.Groups(kind);
  }
  j["programs"] = nlohmann::json::array();
  for (int64_t rank : ranks) {
    nlohmann::json steps = nlohmann::json::array();
    for (const ProgramStep& step : RankProgram(job, layout, rank)) {
      nlohmann::json ops = nlohmann::json::array();
      for (const RankOp& op : step.ops) ops.push_back(OpJson(op));
      steps.push_back({{"label", step.label}, {"ops", ops}});
    }
    j["programs"].push_back({{"rank", rank}, {"steps", steps}});
  }
  j["layer_programs"] = nlohmann::json::array();
  for (const LayerProgramSet& set : LayerProgramsOf(job)) {
    nlohmann::json ops = nlohmann::json::array();
    for (const RankOp& op : LayerProgram(job, set.kind, set.moe)) ops.push_back(OpJson(op));
    j["layer_programs"].push_back({{"title", set.title}, {"ops", ops}});
  }
  return j;
}

}  // namespace gpuplan
