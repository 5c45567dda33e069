#include "validator/replay_transport.h"

#include <cstdlib>

#include "validator/step_executor.h"

namespace gpuplan {

ReplayTransport::ReplayTransport(const JobSpec& job, const RankLayout& layout, int64_t rank,
                                 const GpuSpec& gpu, const NetworkSpec& net,
                                 const MeasuredRates* rates)
    : layout_(layout),
      rank_(rank),
      links_(ResolveLinks(gpu, net, job.cluster.gpus_per_node, rates)) {}

const std::vector<int64_t>& ReplayTransport::Members(GroupKind kind) const {
  return layout_.Groups(kind)[static_cast<size_t>(layout_.GroupOf(kind, rank_))];
}

GroupLink ReplayTransport::Link(GroupKind kind) const {
  const std::vector<int64_t>& members = Members(kind);
  const int64_t stride = members.size() > 1 ? std::llabs(members[1] - members[0]) : 1;
  return PlaceGroup(links_, static_cast<int64_t>(members.size()), stride);
}

Expected<CollectiveCheck> ReplayTransport::Collective(CollectiveKind kind, GroupKind group,
                                                      int64_t count, const Watchdog&) {
  // The executor's collective kinds as the cost model names them (the CP ring: send/recv hops).
  static constexpr gpuplan::Collective kModel[] = {
      gpuplan::Collective::kAllReduce, gpuplan::Collective::kAllGather,
      gpuplan::Collective::kReduceScatter, gpuplan::Collective::kAllToAll,
      gpuplan::Collective::kSendRecv};
  const GroupLink link = Link(group);
  const bool blocks = kind == CollectiveKind::kAllGather ||
                      kind == CollectiveKind::kReduceScatter || kind == CollectiveKind::kAllToAll;
  const double bytes = 8.0 * static_cast<double>(count) * (blocks ? link.ranks : 1.0);
  CommPhase(group, &predicted_) +=
      CollectiveSeconds(kModel[static_cast<size_t>(kind)], bytes, link);
  return CollectiveCheck{};
}

Status ReplayTransport::Send(int64_t, int, int64_t) { return Status::Ok(); }

Expected<CollectiveCheck> ReplayTransport::Receive(int64_t peer, int, int64_t count,
                                                   const Watchdog&) {
  const int64_t stride = std::llabs(peer - rank_);
  const GroupLink hop = PlaceGroup(links_, 2, stride > 0 ? stride : 1);
  predicted_.pp_comm +=
      CollectiveSeconds(gpuplan::Collective::kSendRecv, 8.0 * static_cast<double>(count), hop);
  return CollectiveCheck{};
}

Status ReplayTransport::FinishSends(const Watchdog&) { return Status::Ok(); }

}  // namespace gpuplan
