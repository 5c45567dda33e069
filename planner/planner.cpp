#include "planner/planner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

#include "common/checked_math.h"
#include "common/limits.h"
#include "common/str_format.h"
#include "planner/economics.h"
#include "planner/explain.h"
#include "planner/export.h"
#include "planner/rerank.h"
#include "planner/units_format.h"
#include "simulator/memory.h"
#include "simulator/model.h"

namespace gpuplan {

namespace {

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

bool Contains(const std::vector<std::string>& items, const std::string& x) {
  return std::find(items.begin(), items.end(), x) != items.end();
}

// Every (GPU, node template, count) the request allows, in request order.
std::vector<HardwarePoint> BuildPoints(const PlanRequest& req, const HardwareDb& db) {
  std::vector<HardwarePoint> points;
  for (const std::string& gpu_id : req.gpus) {
    const GpuSpec* gpu = db.FindGpu(gpu_id);
    for (const auto& [node_id, node] : db.nodes()) {
      if (node.gpu != gpu_id) continue;
      if (!req.nodes.empty() && !Contains(req.nodes, node_id)) continue;
      for (int64_t n : CandidateGpuCounts(req.min_gpus, req.max_gpus, node.gpus_per_node)) {
        points.push_back({gpu, &node, db.FindNetwork(node.network), n});
      }
    }
  }
  return points;
}

bool CostObjective(Objective o) {
  return o == Objective::kCost || o == Objective::kCostUnderDeadline;
}

bool NeedsPrice(const PlanRequest& req) {
  return CostObjective(req.objective) || req.budget_usd > 0;
}

// Expected wall time and cost as the planner ranks and checks them: at the band's
// `--confidence` end when one is asked for (Plan::rank_factor), else as expected.
double RankedWall(const Plan& p) { return p.econ.expected_wall_s * p.rank_factor; }
double RankedCost(const Plan& p) { return p.econ.expected_cost_usd * p.rank_factor; }

bool MeetsDeadline(const PlanRequest& req, const Plan& p) {
  return req.deadline_s <= 0 || RankedWall(p) <= req.deadline_s;
}
bool MeetsBudget(const PlanRequest& req, const Plan& p) {
  return req.budget_usd <= 0 || (IsPriced(p) && RankedCost(p) <= req.budget_usd);
}
bool Feasible(const PlanRequest& req, const Plan& p) {
  return MeetsDeadline(req, p) && MeetsBudget(req, p) && (!NeedsPrice(req) || IsPriced(p));
}

// Strict order of preference under the objective; ties go to fewer GPUs.
bool Better(const PlanRequest& req, const Plan& a, const Plan& b) {
  const auto time_key = [](const Plan& p) {
    return std::make_tuple(RankedWall(p), RankedCost(p), p.job.cluster.num_gpus);
  };
  const auto cost_key = [](const Plan& p) {
    return std::make_tuple(RankedCost(p), RankedWall(p), p.job.cluster.num_gpus);
  };
  return CostObjective(req.objective) ? cost_key(a) < cost_key(b) : time_key(a) < time_key(b);
}

// The preferred plan among `plans` passing `keep`; nullptr when none does.
template <typename Keep>
const Plan* Best(const PlanRequest& req, const std::vector<Plan>& plans, Keep keep) {
  const Plan* best = nullptr;
  for (const Plan& p : plans) {
    if (keep(p) && (best == nullptr || Better(req, p, *best))) best = &p;
  }
  return best;
}

// Plans no other priced plan beats on both expected wall time and expected cost.
std::vector<Plan> ParetoFront(const std::vector<Plan>& plans) {
  std::vector<const Plan*> priced;
  for (const Plan& p : plans) {
    if (IsPriced(p)) priced.push_back(&p);
  }
  std::sort(priced.begin(), priced.end(), [](const Plan* a, const Plan* b) {
    return std::make_tuple(a->econ.expected_wall_s, a->econ.expected_cost_usd) <
           std::make_tuple(b->econ.expected_wall_s, b->econ.expected_cost_usd);
  });
  std::vector<Plan> front;
  double cheapest = INFINITY;
  for (const Plan* p : priced) {
    if (p->econ.expected_cost_usd < cheapest) {
      front.push_back(*p);
      cheapest = p->econ.expected_cost_usd;
    }
  }
  return front;
}

// The search results, addressable by hardware point.
class SearchIndex {
 public:
  explicit SearchIndex(const std::vector<PointResult>& results) {
    for (const PointResult& r : results) {
      by_point_[{r.point.gpu->id, r.point.node->id, r.point.num_gpus}] = &r;
    }
  }
  const PointResult* Find(const std::string& gpu, const std::string& node, int64_t n) const {
    auto it = by_point_.find({gpu, node, n});
    return it == by_point_.end() ? nullptr : it->second;
  }
  /// Counts searched for (gpu, node), ascending.
  std::vector<int64_t> Counts(const std::string& gpu, const std::string& node) const {
    std::vector<int64_t> out;
    for (const auto& [key, r] : by_point_) {
      if (std::get<0>(key) == gpu && std::get<1>(key) == node) out.push_back(std::get<2>(key));
    }
    return out;
  }

 private:
  std::map<std::tuple<std::string, std::string, int64_t>, const PointResult*> by_point_;
};

// `layout` (fitting, timed) priced with `price`.
Plan PricedLike(const PlanRequest& req, const Plan& layout, const PriceOption& price) {
  Plan p = layout;
  PricePlan(req, price, &p);
  return p;
}

// `layout` priced with `price` when that offering serves its size, else with the cheapest
// option that does (rows of the scaling table, neighbouring counts); unpriced when none does.
Plan PricedAtSize(const PlanRequest& req, const HardwareDb& db, const Plan& layout,
                  const PriceOption& price) {
  const int64_t n = layout.job.cluster.num_gpus;
  if (price.Serves(n)) return PricedLike(req, layout, price);
  return PricedLike(req, layout,
                    CheapestServing(PriceOptionsFor(req, db, layout.job.cluster.gpu, layout.node),
                                    n, req.price_kind));
}

std::vector<ScalingRow> ScalingTable(const PlanRequest& req, const HardwareDb& db,
                                     const SearchIndex& index, const Plan& chosen,
                                     const PriceOption& price) {
  std::vector<ScalingRow> rows;
  const std::string& gpu = chosen.job.cluster.gpu;
  for (int64_t n = 1; n <= req.max_gpus; n *= 2) {
    if (n < req.min_gpus) continue;
    const PointResult* r = index.Find(gpu, chosen.node, n);
    if (r == nullptr) continue;  // not a whole number of nodes
    ScalingRow row;
    row.gpus = n;
    row.feasible = !r->best.empty();
    if (row.feasible) row.plan = PricedAtSize(req, db, r->best.front(), price);
    rows.push_back(std::move(row));
  }
  FillSpeedups(&rows);
  return rows;
}

std::string ChangeVs(const Plan& alt, const Plan& chosen) {
  const double dt = alt.econ.expected_wall_s / chosen.econ.expected_wall_s - 1.0;
  std::string s = (dt >= 0 ? "+" : "") + FormatPercent(dt) + " time";
  if (IsPriced(alt) && IsPriced(chosen)) {
    const double dc = alt.econ.expected_cost_usd / chosen.econ.expected_cost_usd - 1.0;
    s += ", " + std::string(dc >= 0 ? "+" : "") + FormatPercent(dc) + " cost";
  }
  return s;
}

std::string Outcome(const Plan& p) {
  std::string s = FormatDuration(p.econ.expected_wall_s);
  if (IsPriced(p)) s += ", " + FormatUsd(p.econ.expected_cost_usd);
  return s;
}

// A rack-scale NVLink template: its scale-up domain spans several hosts (trays), as a GB200
// NVL72 rack's does, where an HGX/DGX server's domain is the server.
bool RackScale(const HardwareDb& db, const std::string& node) {
  const NodeTemplate* n = db.FindNode(node);
  return n != nullptr && n->tray_gpus < n->gpus_per_node;
}

// Exposed communication a larger NVLink domain can shorten: TP, CP, PP and EP, as a share of
// the step.
double ModelParallelCommShare(const Plan& p) {
  const TimeBreakdown& b = p.step.breakdown_s;
  return (b.tp_comm + b.cp_comm + b.pp_comm + b.ep_comm) / p.step.step_time_s;
}

// "a model replica's 64 GPUs (TP4 x CP2 x PP8) sit in one NVLink domain of 64" or "... span 8
// NVLink domains of 8".
std::string ReplicaPlacement(const Plan& p) {
  const ParallelSpec& par = p.job.parallel;
  const int64_t replica = par.tp * par.cp * par.pp;
  const int64_t domain = std::min(p.job.cluster.gpus_per_node, p.job.cluster.num_gpus);
  const std::string dims = "TP" + std::to_string(par.tp) + " x CP" + std::to_string(par.cp) +
                           " x PP" + std::to_string(par.pp);
  if (replica <= domain) {
    return "a model replica's " + std::to_string(replica) + " " + Noun(replica, "GPU", "GPUs") +
           " (" + dims + ") sit in one NVLink domain of " + std::to_string(domain);
  }
  const int64_t domains = (replica + domain - 1) / domain;
  return "a model replica's " + std::to_string(replica) + " GPUs (" + dims + ") span " +
         std::to_string(domains) + " NVLink domains of " + std::to_string(domain);
}

// When the candidates hold both rack-scale (NVL72) and server (HGX/DGX) templates: why the
// recommendation's class won against the other's best plan, in the numbers that differ: where a
// model replica sits, its exposed model-parallel communication, throughput per GPU and price.
std::optional<std::string> ScaleUpSentence(const PlanRequest& req, const HardwareDb& db,
                                           const std::vector<Plan>& candidates,
                                           const Plan& chosen) {
  const bool chosen_rack = RackScale(db, chosen.node);
  const Plan* other = Best(req, candidates, [&](const Plan& p) {
    return RackScale(db, p.node) != chosen_rack && Feasible(req, p);
  });
  if (other == nullptr) {
    other =
        Best(req, candidates, [&](const Plan& p) { return RackScale(db, p.node) != chosen_rack; });
    if (other == nullptr) return std::nullopt;
  }
  const std::string kind = chosen_rack ? "HGX/DGX servers" : "rack-scale NVLink";
  std::string s = "Against " + kind + ": the best " + other->node + " plan, " + PlanName(*other) +
                  (IsPriced(*other) ? " at " + other->econ.provider : "") + ", " + Outcome(*other) +
                  (Feasible(req, *other) ? "" : " (misses the constraints)") + " (" +
                  ChangeVs(*other, chosen) + "). On " + chosen.node + " " +
                  ReplicaPlacement(chosen) + " and exposed TP/CP/PP/EP communication is " +
                  FormatPercent(ModelParallelCommShare(chosen)) + " of the step; on " +
                  other->node + " " + ReplicaPlacement(*other) + ", " +
                  FormatPercent(ModelParallelCommShare(*other)) +
                  ". Per GPU: " + FormatCount(chosen.step.tokens_per_s_per_gpu) + " against " +
                  FormatCount(other->step.tokens_per_s_per_gpu) + " tokens/s";
  if (IsPriced(chosen) && IsPriced(*other)) {
    s += ", " + FormatUsd(chosen.econ.usd_per_gpu_hour) + " against " +
         FormatUsd(other->econ.usd_per_gpu_hour) + " per GPU-hour";
  }
  const Plan& rack = chosen_rack ? chosen : *other;
  if (const std::string trays = SpareTrayClause(rack.econ, req.reliability.host_repair_s);
      !trays.empty()) {
    s += ". On " + rack.node + " " + trays;
  }
  return s + ".";
}

// A pick whose class no published run checks (its band is the pooled, widened one) against the
// best feasible plan of a checked class that the pick's own band cannot tell from it: that plan's
// expected cost (time, under a time objective) lies below the slow end of the pick's 80% band. The
// ranking stays with the expected values (or --confidence); the sentence says what rests on
// evidence. nullopt when the pick's class is checked, plans carry no bands, or no such plan exists.
std::optional<std::string> CheckedRivalSentence(const PlanRequest& req,
                                                const std::vector<Plan>& candidates,
                                                const Plan& chosen) {
  if (chosen.band.runs == 0 || chosen.band.validated) return std::nullopt;
  const bool cost = CostObjective(req.objective) && IsPriced(chosen);
  const auto value = [cost](const Plan& p) {
    return cost ? p.econ.expected_cost_usd : p.econ.expected_wall_s;
  };
  const double slow_end = value(chosen) * chosen.band.high_factor;
  // A checked plan's band is validated, so it is never the pick itself.
  const Plan* rival = Best(req, candidates, [&](const Plan& p) {
    return p.band.validated && Feasible(req, p) && (!cost || IsPriced(p)) && value(p) <= slow_end;
  });
  if (rival == nullptr) return std::nullopt;
  return "Inside this plan's 80% band: " + PlanName(*rival) +
         (IsPriced(*rival) ? " at " + rival->econ.provider : "") + ", " + Outcome(*rival) + " (" +
         ChangeVs(*rival, chosen) + "), whose class has " + std::to_string(rival->band.runs) +
         " published runs behind it (" + rival->band.basis +
         "); no published run checks this plan's class, so on the evidence the two are a tie "
         "(--confidence ranks by the ends of the bands).";
}

void Explain(const PlanRequest& req, const HardwareDb& db, const std::vector<Plan>& candidates,
             PlanResult* result) {
  const Plan& chosen = result->recommendation;
  const PlanEconomics& e = chosen.econ;
  std::vector<std::string>& out = result->explanation;
  std::string price = IsPriced(chosen) ? " at " + e.provider + " (" + e.offering + ", " +
                                             std::string(PriceKindName(e.price_kind)) + ", " +
                                             FormatUsd(e.usd_per_gpu_hour) + "/GPU-hour)"
                                       : " (no price known)";
  out.push_back("Recommended: " + PlanName(chosen) + price + ". Expected " + Outcome(chosen) +
                " for " + FormatSiCount(e.tokens) + " tokens (" + FormatCount(e.steps) + " " +
                Noun(e.steps, "step", "steps") + " of " + FormatDuration(chosen.step.step_time_s) +
                "; goodput " + FormatPercent(e.goodput) + ", " +
                FormatFixed(e.expected_interruptions, 1) +
                " expected interruptions, checkpoint every " +
                FormatDuration(e.checkpoint_interval_s) + ").");
  int feasible = 0;
  for (const Plan& p : candidates) feasible += Feasible(req, p) ? 1 : 0;
  std::string objective = "Objective " + std::string(ObjectiveName(req.objective)) + ": the " +
                          (CostObjective(req.objective) ? "cheapest" : "fastest") + " of " +
                          std::to_string(feasible) + " hardware/price choices";
  if (req.deadline_s > 0) objective += " finishing within " + FormatDuration(req.deadline_s);
  if (req.budget_usd > 0) objective += " costing at most " + FormatUsd(req.budget_usd);
  objective += ", each with its fastest layout";
  if (req.confidence > 0) {
    objective += "; times and costs taken at the " + FormatPercent(req.confidence) +
                 " end of each plan's error band (--confidence), not at the expected value";
  }
  out.push_back(objective + ".");

  // What bound it.
  PlanRequest cheapest_req = req;
  cheapest_req.objective = Objective::kCost;
  const Plan* cheapest = Best(cheapest_req, candidates, [](const Plan& p) { return IsPriced(p); });
  PlanRequest fastest_req = req;
  fastest_req.objective = Objective::kTime;
  const Plan* fastest = Best(fastest_req, candidates, [](const Plan&) { return true; });
  const GpuSpec* gpu = db.FindGpu(chosen.job.cluster.gpu);
  if (CostObjective(req.objective) && req.deadline_s > 0 && cheapest != nullptr &&
      !MeetsDeadline(req, *cheapest)) {
    result->bound = "deadline";
    out.push_back("The deadline binds: the cheapest plan overall, " + PlanName(*cheapest) +
                  ", would cost " + FormatUsd(cheapest->econ.expected_cost_usd) + " but take " +
                  FormatDuration(cheapest->econ.expected_wall_s) + ".");
  } else if (!CostObjective(req.objective) && req.budget_usd > 0 && fastest != nullptr &&
             !MeetsBudget(req, *fastest)) {
    result->bound = "budget";
    out.push_back("The budget binds: the fastest plan overall, " + PlanName(*fastest) +
                  ", would take " + FormatDuration(fastest->econ.expected_wall_s) + " but cost " +
                  FormatUsd(fastest->econ.expected_cost_usd) + ".");
  } else if (!CostObjective(req.objective) && chosen.job.cluster.num_gpus == req.max_gpus) {
    result->bound = "max-gpus";
    out.push_back("The GPU count limit binds: the plan uses " + std::to_string(req.max_gpus) + " " +
                  Noun(req.max_gpus, "GPU", "GPUs") + ", the most allowed (--max-gpus).");
  } else {
    result->bound = IntrinsicBound(chosen, req.memory_margin);
    const TimeBreakdown& b = chosen.step.breakdown_s;
    const double step = chosen.step.step_time_s;
    if (result->bound == "memory") {
      out.push_back("Memory shapes the layout: " + MemoryReason(chosen, *gpu, req.memory_margin) +
                    ".");
    } else if (result->bound == "communication") {
      out.push_back(
          "Communication is " +
          FormatPercent((b.tp_comm + b.cp_comm + b.pp_comm + b.dp_comm + b.ep_comm) / step) +
          " of the step (TP " + FormatPercent(b.tp_comm / step) + ", DP " +
          FormatPercent(b.dp_comm / step) + ", PP " + FormatPercent(b.pp_comm / step) + ").");
    } else if (result->bound == "pipeline bubble") {
      out.push_back("The pipeline bubble is " + FormatPercent(b.bubble / step) + " of the step.");
    } else {
      out.push_back("The step is compute-bound: MFU " + FormatPercent(chosen.step.mfu) + ".");
    }
  }
  for (std::string& s : LayoutAssumptions(chosen)) out.push_back(std::move(s));
  if (std::optional<std::string> s = CheckedRivalSentence(req, candidates, chosen)) {
    out.push_back(std::move(*s));
  }
  int shown = 0;
  for (const Plan& alt : result->alternatives) {
    if (shown++ == 3) break;
    out.push_back("Alternative: " + PlanName(alt) +
                  (IsPriced(alt) ? " at " + alt.econ.provider : "") + ": " + Outcome(alt) + " (" +
                  ChangeVs(alt, chosen) + ").");
  }
  if (std::optional<std::string> s = ScaleUpSentence(req, db, candidates, chosen)) {
    out.push_back(std::move(*s));
  }
  for (std::string& s : ScalingSentences(chosen, result->scaling)) out.push_back(std::move(s));
}

// Alternatives: the best plan of each other GPU type, the neighbouring counts of the chosen
// type, and the next-best layout on the chosen hardware.
std::vector<Plan> Alternatives(const PlanRequest& req, const HardwareDb& db,
                               const std::vector<Plan>& candidates, const SearchIndex& index,
                               const Plan& chosen, const PriceOption& price) {
  std::vector<Plan> alts;
  std::set<std::string> seen_gpus = {chosen.job.cluster.gpu};
  for (const std::string& gpu : req.gpus) {
    if (seen_gpus.count(gpu)) continue;
    seen_gpus.insert(gpu);
    const Plan* best = Best(req, candidates, [&](const Plan& p) {
      return p.job.cluster.gpu == gpu && Feasible(req, p);
    });
    if (best != nullptr) alts.push_back(*best);
  }
  const std::vector<int64_t> counts = index.Counts(chosen.job.cluster.gpu, chosen.node);
  auto at = std::find(counts.begin(), counts.end(), chosen.job.cluster.num_gpus);
  for (auto it : {at == counts.begin() ? counts.end() : at - 1, at + 1}) {
    if (at == counts.end() || it >= counts.end()) continue;
    const PointResult* r = index.Find(chosen.job.cluster.gpu, chosen.node, *it);
    if (r != nullptr && !r->best.empty()) {
      alts.push_back(PricedAtSize(req, db, r->best.front(), price));
    }
  }
  const PointResult* same =
      index.Find(chosen.job.cluster.gpu, chosen.node, chosen.job.cluster.num_gpus);
  if (same != nullptr && same->best.size() > 1) {
    alts.push_back(PricedLike(req, same->best[1], price));
  }
  return alts;
}

// Nothing fits: the smallest footprint, and configurations verified to fit instead.
void DiagnoseNoFit(const PlanRequest& req, const HardwareDb& db,
                   const std::vector<PointResult>& searched, PlanResult* result) {
  NoFitDiagnosis& d = result->no_fit;
  for (const PointResult& r : searched) {
    if (!r.any_layout) continue;
    if (!d.any_plan || r.smallest.step.memory.peak_bytes < d.smallest.step.memory.peak_bytes) {
      d.smallest = r.smallest;
    }
    d.any_plan = true;
  }
  if (!d.any_plan) {
    result->explanation.push_back(
        "No layout exists for this model on the requested GPU counts (heads, layers and batch "
        "do not divide); try other --min-gpus/--max-gpus or --global-batch.");
    return;
  }
  const GpuSpec* gpu = db.FindGpu(d.smallest.job.cluster.gpu);
  result->explanation.push_back("Nothing fits in memory with " + FormatPercent(req.memory_margin) +
                                " of it kept free (--memory-margin). " +
                                SmallestFootprintSentence(d.smallest, *gpu) + ".");
  // First fit of `variant` on `gpu_id` (its default node), counts ascending up to `max_gpus`.
  auto first_fit = [&](const PlanRequest& variant, const GpuSpec& g, int64_t max_gpus) -> int64_t {
    const NodeTemplate* node = db.FindNode(g.default_node);
    if (node == nullptr) return 0;
    for (int64_t n : CandidateGpuCounts(variant.min_gpus, max_gpus, node->gpus_per_node)) {
      const PointResult r = SearchPoint(variant, {&g, node, db.FindNetwork(node->network), n});
      if (!r.best.empty()) return n;
    }
    return 0;
  };
  for (const std::string& gpu_id : req.gpus) {
    const int64_t more = first_fit(req, *db.FindGpu(gpu_id), req.max_gpus * 64);
    if (more > req.max_gpus) {
      d.suggestions.push_back(gpu_id + " fits on " + std::to_string(more) + " GPUs (--max-gpus " +
                              std::to_string(more) + ")");
    }
  }
  for (const auto& [id, other] : db.gpus()) {
    if (Contains(req.gpus, id) || other.memory_bytes <= gpu->memory_bytes) continue;
    const int64_t n = first_fit(req, other, req.max_gpus);
    if (n > 0) {
      d.suggestions.push_back(id + " (" + FormatGb(UsableBytes(other, req.overhead)) +
                              ") fits on " + std::to_string(n) + " " + Noun(n, "GPU", "GPUs") +
                              " (--gpu " + id + ")");
    }
  }
  if (!req.lora.enabled) {
    PlanRequest lora = req;
    lora.lora = {true, 16, kLoraAll, BaseWeights::kSame};
    const int64_t n = first_fit(lora, *gpu, req.max_gpus);
    if (n > 0) {
      d.suggestions.push_back("fine-tuning LoRA adapters (--lora-rank 16) fits on " +
                              std::to_string(n) + " x " + gpu->id);
    }
  }
  if (d.suggestions.empty()) {
    d.suggestions.push_back("no larger GPU in the hardware database and no GPU count up to " +
                            std::to_string(req.max_gpus * 64) + " fits this model");
  }
}

// The event simulator re-times every kept layout of the best few hardware points (by the
// objective, feasible ones first) and their candidates take the fastest simulated layout.
Status RerankFinalists(const PlanRequest& req, const HardwareDb& db,
                       const std::vector<size_t>& origin, const std::vector<PriceOption>& prices,
                       std::vector<PointResult>* searched, std::vector<Plan>* candidates,
                       SearchStats* stats) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<size_t> order(candidates->size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Plan& pa = (*candidates)[a];
    const Plan& pb = (*candidates)[b];
    const bool fa = Feasible(req, pa), fb = Feasible(req, pb);
    return fa != fb ? fa : Better(req, pa, pb);
  });
  std::vector<size_t> finalists;
  for (size_t i : order) {
    if (finalists.size() == static_cast<size_t>(kEventSimFinalistPoints)) break;
    if (std::find(finalists.begin(), finalists.end(), origin[i]) == finalists.end()) {
      finalists.push_back(origin[i]);
    }
  }
  for (size_t point : finalists) {
    std::vector<Plan>& layouts = (*searched)[point].best;
    GPUPLAN_RETURN_IF_ERROR(RetimeWithEventSim(db, req.measured, &layouts));
    stats->event_simulated += static_cast<int64_t>(layouts.size());
    for (size_t c = 0; c < candidates->size(); ++c) {
      if (origin[c] == point) (*candidates)[c] = PricedLike(req, layouts.front(), prices[c]);
    }
  }
  stats->event_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return Status::Ok();
}

}  // namespace

Status ValidatePlanRequest(const PlanRequest& req, const HardwareDb& db) {
  GPUPLAN_RETURN_IF_ERROR(ValidateModel(req.model, "--model"));
  if ((req.train_tokens > 0) == (req.train_steps > 0)) {
    return Status::Invalid(
        "the amount of work: give exactly one of --tokens, --samples with --epochs, or --steps");
  }
  if (req.seq_len < 1) return Status::Invalid("--seq-len: must be >= 1");
  if (req.seq_len > kMaxSeqLen) {
    return Status::Invalid("--seq-len: " + std::to_string(req.seq_len) + " exceeds the limit of " +
                           std::to_string(kMaxSeqLen) + " tokens");
  }
  if (!req.export_format.empty() && FindExporter(req.export_format) == nullptr) {
    return Status::Invalid("--export: unknown export format '" + req.export_format + "'");
  }
  if (const std::string problem = SeqLenProblem(req.model, req.seq_len); !problem.empty()) {
    return Status::Invalid("--seq-len: " + problem);
  }
  if (req.global_batch_sizes.empty()) return Status::Invalid("--global-batch: none given");
  if (static_cast<int64_t>(req.global_batch_sizes.size()) > kMaxPlannerBatchSizes) {
    return Status::Invalid("--global-batch: more than " + std::to_string(kMaxPlannerBatchSizes) +
                           " batch sizes");
  }
  for (int64_t b : req.global_batch_sizes) {
    if (b < 1) return Status::Invalid("--global-batch: must be >= 1, got " + std::to_string(b));
    const std::optional<int64_t> tokens = CheckedMul(b, req.seq_len);
    if (!tokens || *tokens > kMaxTokensPerStep) {
      return Status::Invalid("--global-batch: " + std::to_string(b) + " sequences of " +
                             std::to_string(req.seq_len) + " tokens exceed the limit of " +
                             std::to_string(kMaxTokensPerStep) + " tokens per step");
    }
    // Steps x batch x sequence: the training tokens, bounded like --tokens.
    if (req.train_steps > 0 &&
        static_cast<double>(req.train_steps) * static_cast<double>(*tokens) > kMaxTrainTokens) {
      return Status::Invalid("--steps: " + std::to_string(req.train_steps) + " steps of " +
                             std::to_string(*tokens) + " tokens exceed the limit of " +
                             StrFormat("%.0e", kMaxTrainTokens) + " training tokens");
    }
  }
  if (req.train_tokens > kMaxTrainTokens) {
    return Status::Invalid("--tokens: " + StrFormat("%.3g", req.train_tokens) +
                           " exceeds the limit of " + StrFormat("%.0e", kMaxTrainTokens) +
                           " training tokens");
  }
  if (req.precisions.empty()) return Status::Invalid("--precision: none given");
  if (req.gpus.empty()) return Status::Invalid("--gpu: no GPU type given");
  for (const std::string& g : req.gpus) {
    if (db.FindGpu(g) == nullptr) {
      return Status::Invalid("--gpu: unknown GPU '" + g + "' (known: " + Join(db.GpuIds()) + ")");
    }
  }
  for (const std::string& n : req.nodes) {
    const NodeTemplate* node = db.FindNode(n);
    if (node == nullptr) {
      return Status::Invalid("--node: unknown node template '" + n +
                             "' (known: " + Join(db.NodeIds()) + ")");
    }
    if (!Contains(req.gpus, node->gpu)) {
      return Status::Invalid("--node: template '" + n + "' holds " + node->gpu +
                             ", which is not among --gpu (" + Join(req.gpus) + ")");
    }
  }
  for (const std::string& g : req.gpus) {
    bool any = false;
    for (const auto& [id, node] : db.nodes()) {
      any = any || (node.gpu == g && (req.nodes.empty() || Contains(req.nodes, id)));
    }
    if (!any) return Status::Invalid("--node: no node template holds GPU '" + g + "'");
  }
  if (req.min_gpus < 1) return Status::Invalid("--min-gpus: must be >= 1");
  if (req.max_gpus > kMaxGpus) {
    return Status::Invalid("--max-gpus: " + std::to_string(req.max_gpus) +
                           " exceeds the limit of " + std::to_string(kMaxGpus) + " GPUs per job");
  }
  if (req.max_gpus < req.min_gpus) {
    return Status::Invalid("--max-gpus: must be >= --min-gpus (" + std::to_string(req.min_gpus) +
                           "), got " + std::to_string(req.max_gpus));
  }
  // Every layout runs at least b / (largest micro-batch x most GPUs) micro-batches per step.
  for (int64_t b : req.global_batch_sizes) {
    const int64_t fewest =
        (b + kMaxMicroBatch * req.max_gpus - 1) / (kMaxMicroBatch * req.max_gpus);
    if (fewest > kMaxMicroBatchesPerStep) {
      return Status::Invalid("--global-batch: " + std::to_string(b) + " sequences need at least " +
                             std::to_string(fewest) + " micro-batches per step on at most " +
                             std::to_string(req.max_gpus) + " GPUs (micro-batches of at most " +
                             std::to_string(kMaxMicroBatch) + " sequences), above the limit of " +
                             std::to_string(kMaxMicroBatchesPerStep) +
                             "; raise --max-gpus or lower the batch");
    }
  }
  if (req.deadline_s < 0) return Status::Invalid("--deadline: must be positive");
  if (req.budget_usd < 0) return Status::Invalid("--budget: must be positive");
  if (req.deadline_s > kMaxDeadlineSeconds) {
    return Status::Invalid(StrFormat("--deadline: must be at most %g s", kMaxDeadlineSeconds));
  }
  if (req.budget_usd > kMaxBudgetUsd) {
    return Status::Invalid(StrFormat("--budget: must be at most $%g", kMaxBudgetUsd));
  }
  for (const auto& [gpu, usd] : req.price_overrides) {
    if (!(usd >= kMinUsdPerGpuHour && usd <= kMaxUsdPerGpuHour)) {
      return Status::Invalid(StrFormat("--price: %s=%g is outside $%g..$%g per GPU-hour",
                                       gpu.c_str(), usd, kMinUsdPerGpuHour, kMaxUsdPerGpuHour));
    }
  }
  if (req.objective == Objective::kCostUnderDeadline && req.deadline_s <= 0) {
    return Status::Invalid("--objective cost-under-deadline needs --deadline");
  }
  if (req.objective == Objective::kTimeUnderBudget && req.budget_usd <= 0) {
    return Status::Invalid("--objective time-under-budget needs --budget");
  }
  const std::vector<std::string> providers = db.Providers();
  for (const std::string& p : req.providers) {
    if (!Contains(providers, p)) {
      return Status::Invalid("--provider: unknown provider '" + p + "' (known: " + Join(providers) +
                             ")");
    }
  }
  for (const auto& [g, usd] : req.price_overrides) {
    if (db.FindGpu(g) == nullptr) {
      return Status::Invalid("--price: unknown GPU '" + g + "' (known: " + Join(db.GpuIds()) + ")");
    }
    if (!(usd > 0)) return Status::Invalid("--price: " + g + ": $/GPU-hour must be > 0");
  }
  if (req.lora.enabled && req.lora.rank < 1) return Status::Invalid("--lora-rank: must be >= 1");
  // As ValidateJob: the NVFP4 recipe is a pre-training one.
  if (req.lora.enabled && std::find(req.precisions.begin(), req.precisions.end(),
                                    Precision::kFp4) != req.precisions.end()) {
    return Status::Invalid(
        "--precision: fp4 is modelled for full training (the NVFP4 pre-training recipe), not "
        "with --lora-rank; use bf16 or fp8");
  }
  if (req.confidence != 0) {
    if (!(req.confidence >= kMinConfidence && req.confidence <= kMaxConfidence)) {
      return Status::Invalid(StrFormat("--confidence: must be in [%g, %g], got %g", kMinConfidence,
                                       kMaxConfidence, req.confidence));
    }
    if (req.band_residuals.empty()) {
      return Status::Invalid("--confidence: needs the error bands' residuals (" +
                             BuiltinBandResidualsPath() + ")");
    }
  }
  const ReliabilitySpec& r = req.reliability;
  if (r.interruptions_per_gpu_hour < 0 || r.restart_s < 0 ||
      !(r.checkpoint_write_bytes_per_s_per_node > 0)) {
    return Status::Invalid(
        "reliability: failure rate and restart time must be >= 0 and the checkpoint bandwidth > 0");
  }
  return Status::Ok();
}

Expected<PlanResult> MakePlan(const PlanRequest& req, const HardwareDb& db,
                              ProgressSink* progress) {
  GPUPLAN_RETURN_IF_ERROR(ValidatePlanRequest(req, db));
  const auto start = std::chrono::steady_clock::now();
  PlanResult result;
  result.request = req;
  const int threads = req.threads > 0
                          ? req.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  std::vector<PointResult> searched = SearchPoints(req, BuildPoints(req, db), threads, progress);
  if (progress != nullptr && progress->Cancelled()) return Status::Cancelled("search cancelled");
  result.stats.threads = threads;
  for (const PointResult& r : searched) {
    result.stats.configurations += r.stats.configurations;
    result.stats.evaluated += r.stats.evaluated;
    result.stats.pruned_memory += r.stats.pruned_memory;
    result.stats.pruned_invalid += r.stats.pruned_invalid;
    result.stats.pruned_export += r.stats.pruned_export;
  }
  if (req.global_batch_sizes.size() > 1) {
    result.warnings.push_back(
        "the global batch size is searched: it changes convergence (loss per token), which this "
        "planner does not model; confirm the chosen batch size trains as well");
  }

  // Price each hardware point's fastest layout with every price option for its GPU.
  std::vector<Plan> candidates;
  std::vector<PriceOption> prices;
  std::vector<size_t> origin;  // index into `searched` of each candidate
  std::set<std::string> unpriced;
  // A GPU with no price at all is ranked by time only; a node template nobody sells it in (under
  // the requested providers) is left out when the GPU is sold in another.
  std::set<std::string> sold;
  for (const std::string& gpu : req.gpus) {
    for (const auto& [id, node] : db.nodes()) {
      if (node.gpu == gpu && !PriceOptionsFor(req, db, gpu, id).empty()) sold.insert(gpu);
    }
  }
  for (const PointResult& r : searched) {
    if (r.best.empty()) continue;
    const size_t point_index = static_cast<size_t>(&r - searched.data());
    std::vector<PriceOption> options = PriceOptionsFor(req, db, r.point.gpu->id, r.point.node->id);
    if (options.empty()) {
      if (sold.count(r.point.gpu->id)) continue;
      unpriced.insert(r.point.gpu->id);
      options.push_back(PriceOption{"", "", req.price_kind, 0, 1, 0});
    }
    for (const PriceOption& option : options) {
      if (!option.Serves(r.point.num_gpus)) continue;  // not sold at this size
      candidates.push_back(PricedLike(req, r.best.front(), option));
      prices.push_back(option);
      origin.push_back(point_index);
    }
  }
  for (const std::string& g : unpriced) {
    result.warnings.push_back("no " + std::string(PriceKindName(req.price_kind)) + " price for " +
                              g + (req.providers.empty() ? "" : " at " + Join(req.providers)) +
                              " in the hardware database: its plans are ranked by time only "
                              "(give one with --price " +
                              g + "=USD)");
  }
  if (req.price_kind == PriceKind::kSpot) {
    result.warnings.push_back(
        "spot capacity: preemptions are counted at the provider's published interruption "
        "frequency; availability of many spot GPUs at once is not guaranteed");
  }
  const auto finish = [&] {
    result.stats.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  if (candidates.empty()) {
    // Layouts that fit, none at a size any price option sells (PriceOption::max_gpus_per_job):
    // say so rather than blame memory.
    const auto fits = std::find_if(searched.begin(), searched.end(),
                                   [](const PointResult& r) { return !r.best.empty(); });
    if (fits != searched.end()) {
      result.explanation.push_back(
          "Layouts fit (" + PlanName(fits->best.front()) + "), but no " +
          std::string(PriceKindName(req.price_kind)) + " offering" +
          (req.providers.empty() ? "" : " at " + Join(req.providers)) +
          " in the hardware database sells that many GPUs in one job; choose fewer GPUs "
          "(--max-gpus) or give a price with --price " +
          fits->point.gpu->id + "=USD.");
    } else {
      DiagnoseNoFit(req, db, searched, &result);
    }
    finish();
    return result;
  }

  GPUPLAN_RETURN_IF_ERROR(
      RerankFinalists(req, db, origin, prices, &searched, &candidates, &result.stats));
  result.pareto = ParetoFront(candidates);
  const Plan* chosen = Best(req, candidates, [&](const Plan& p) { return Feasible(req, p); });
  const Plan* shown = chosen;
  if (chosen == nullptr) {
    // Plans fit but none meets the constraints: show the closest one, the fastest when a
    // deadline is missed, else the cheapest.
    PlanRequest closest = req;
    closest.objective = req.deadline_s > 0 ? Objective::kTime : Objective::kCost;
    shown =
        Best(closest, candidates, [&](const Plan& p) { return !NeedsPrice(req) || IsPriced(p); });
    if (shown == nullptr) shown = &candidates.front();
    std::string why =
        "No plan meets the constraints. Closest: " + PlanName(*shown) + ": " + Outcome(*shown);
    if (req.deadline_s > 0) why += " (deadline " + FormatDuration(req.deadline_s) + ")";
    if (req.budget_usd > 0) why += " (budget " + FormatUsd(req.budget_usd) + ")";
    if (NeedsPrice(req) && !IsPriced(*shown)) why += "; no price is known for these GPUs";
    result.explanation.push_back(why + ".");
  }
  const PriceOption& price = prices[static_cast<size_t>(shown - candidates.data())];
  SearchIndex index(searched);
  result.scaling_gpu = shown->job.cluster.gpu;
  result.scaling = ScalingTable(req, db, index, *shown, price);
  if (chosen != nullptr) {
    result.found = true;
    result.recommendation = *chosen;
    result.alternatives = Alternatives(req, db, candidates, index, *chosen, price);
    Explain(req, db, candidates, &result);
  }
  finish();
  return result;
}

}  // namespace gpuplan
