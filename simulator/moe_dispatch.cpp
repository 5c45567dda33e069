#include "simulator/moe_dispatch.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "common/limits.h"
#include "common/str_format.h"

namespace gpuplan {
namespace {

// log C(n, r); -inf when the binomial is 0.
double LogChoose(double n, double r) {
  if (r < 0.0 || r > n) return -INFINITY;
  return std::lgamma(n + 1.0) - std::lgamma(r + 1.0) - std::lgamma(n - r + 1.0);
}

// C(n, k) / C(pool, k): the chance that k experts drawn without replacement from `pool` all
// fall among n of them.
double AllAmong(double n, double pool, double k) {
  if (n < k) return 0.0;
  double p = 1.0;
  for (double i = 0.0; i < k; i += 1.0) p *= (n - i) / (pool - i);
  return p;
}

// Chance that a token reaches none of the experts [start, start + len).
double MissProbability(const ExpertRouting& r, double start, double len) {
  const double per_group = r.experts / r.groups;
  const double pool = r.group_topk * per_group;
  // The unit's overlap with each group it touches: whole groups are interchangeable (counted
  // by `full`), at most two partial ones at its ends.
  double full = 0.0;
  std::vector<double> partial;
  const double first = std::floor(start / per_group);
  const double last = std::floor((start + len - 1.0) / per_group);
  for (double j = first; j <= last; j += 1.0) {
    const double overlap =
        std::min(start + len, (j + 1.0) * per_group) - std::max(start, j * per_group);
    if (overlap >= per_group) {
      full += 1.0;
    } else {
      partial.push_back(overlap);
    }
  }
  const double touched = full + static_cast<double>(partial.size());
  const double log_all = LogChoose(r.groups, r.group_topk);
  double miss = 0.0;
  for (double a = 0.0; a <= std::min(full, r.group_topk); a += 1.0) {
    for (size_t mask = 0; mask < (size_t{1} << partial.size()); ++mask) {
      double chosen = a;
      double inside = a * per_group;
      for (size_t i = 0; i < partial.size(); ++i) {
        if ((mask >> i) & 1U) {
          chosen += 1.0;
          inside += partial[i];
        }
      }
      // Exactly these of the touched groups among the group_topk chosen (hypergeometric), then
      // all top_k experts outside the unit.
      const double log_p =
          LogChoose(full, a) + LogChoose(r.groups - touched, r.group_topk - chosen) - log_all;
      if (std::isinf(log_p)) continue;
      miss += std::exp(log_p) * AllAmong(pool - inside, pool, r.top_k);
    }
  }
  return miss;
}

}  // namespace

const char* NameOf(MoeDispatcher d) {
  for (const MoeDispatcherName& n : kMoeDispatchers) {
    if (n.id == d) return n.name;
  }
  return kMoeDispatchers[0].name;
}

bool ParseMoeDispatcher(std::string_view name, MoeDispatcher* out) {
  for (const MoeDispatcherName& n : kMoeDispatchers) {
    if (name == n.name) {
      *out = n.id;
      return true;
    }
  }
  return false;
}

std::string MoeLoadImbalanceProblem(double load_imbalance) {
  if (load_imbalance >= 1.0 && load_imbalance <= kMaxMoeLoadImbalance) return "";
  return StrFormat("must be in [1, %g] (busiest rank over the mean), got %g", kMaxMoeLoadImbalance,
                   load_imbalance);
}

double MoeRankImbalance(const JobSpec& job) {
  const auto ep = static_cast<double>(job.parallel.ep);
  if (!job.model.is_moe() || ep <= 1.0) return 1.0;
  return std::min(job.training.moe_load_imbalance, ep);
}

MoePermutation MoePermutationOf(double top_k, double local_tokens, double routed_rows,
                                double local_experts, double hidden, double element_bytes) {
  const double sorts = local_experts > 1.0 ? 2.0 : 0.0;
  const double rows =
      2.0 * top_k * local_tokens + sorts * 2.0 * routed_rows + (top_k + 1.0) * local_tokens;
  return {rows * hidden * element_bytes, 2.0 + sorts};
}

bool DeepEpRuns(const GpuSpec& gpu, int64_t gpus_per_node) {
  return gpu.scaleup_kind == "nvswitch" && gpu.scaleup_domain_gpus >= gpus_per_node &&
         gpus_per_node <= kDeepEpMaxNvlinkPeers;
}

ExpertRouting RoutingOf(const ModelSpec& m) {
  ExpertRouting r;
  r.experts = static_cast<double>(m.moe_num_experts);
  r.top_k = static_cast<double>(m.moe_top_k);
  if (m.moe_router_groups > 0) {
    r.groups = static_cast<double>(m.moe_router_groups);
    r.group_topk = static_cast<double>(m.moe_router_group_topk);
  }
  return r;
}

double ExpectedUnitsReached(const ExpertRouting& routing, double unit_experts) {
  if (routing.experts <= 0.0 || unit_experts <= 0.0) return 0.0;
  // Units at the same offset within a group are alike: the offsets repeat every
  // per_group / gcd(unit, per_group) units, and that period divides the unit count.
  const auto per_group = static_cast<int64_t>(routing.experts / routing.groups);
  const auto len = static_cast<int64_t>(unit_experts);
  const int64_t period = per_group / std::gcd(len, per_group);
  double reached = 0.0;
  for (int64_t u = 0; u < period; ++u) {
    reached += 1.0 - MissProbability(routing, static_cast<double>(u * len), unit_experts);
  }
  const double units = routing.experts / unit_experts;
  return reached * units / static_cast<double>(period);
}

double DeepEpSeconds(const ExpertRouting& routing, double tokens, double bytes_per_token,
                     double load_imbalance, const GroupLink& ep) {
  const double ranks = ep.ranks;
  if (ranks <= 1.0 || tokens <= 0.0) return 0.0;
  const double rank_experts = routing.experts / ranks;
  const double bytes = tokens * bytes_per_token * load_imbalance;
  const double nvlink_bytes_per_s = kDeepEpNvlinkEfficiency * ep.intra_bytes_per_s;
  // By symmetry a rank's own share of the ranks (nodes) a token reaches is 1/ranks (1/nodes).
  const double rank_copies = ExpectedUnitsReached(routing, rank_experts);
  const double nodes = ep.nodes();
  if (nodes <= 1.0) {
    return PointToPointLatencySeconds(ep) +
           bytes * rank_copies * (ranks - 1.0) / ranks / nvlink_bytes_per_s;
  }
  const double rpn = ep.ranks_per_node;
  const double node_copies = ExpectedUnitsReached(routing, rank_experts * rpn);
  const double network = bytes * node_copies * (nodes - 1.0) / nodes / ep.inter_bytes_per_s;
  // Each node's receiving GPU forwards the copies to the node's ranks; 1/rpn are its own.
  const double forward = bytes * rank_copies * (rpn - 1.0) / rpn / nvlink_bytes_per_s;
  return PointToPointLatencySeconds(ep) + std::max(network, forward);
}

}  // namespace gpuplan
