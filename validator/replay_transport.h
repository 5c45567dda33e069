// The step transport of one rank replayed alone (issue 19, rank replay): on a host with fewer
// devices than the plan, one rank's compute runs for real and its communication has no peers.
// Every collective and pipeline receive instead takes the cost model's predicted time
// (CollectiveSeconds over the group's place on the plan's cluster), which is recorded per phase;
// nothing is exchanged or checked.
#pragma once

#include <cstdint>
#include <vector>

#include "hardware-db/hardware.h"
#include "simulator/calibration.h"
#include "simulator/cost_model.h"
#include "simulator/topology.h"
#include "validator/rank_layout.h"
#include "validator/step_transport.h"

namespace gpuplan {

class ReplayTransport : public StepTransport {
 public:
  /// Rank `rank` of `layout` (the plan `job`'s) on `gpu` and `net`, with a profile's `rates` or
  /// nullptr for the device's defaults (as EvaluateStep takes them). All must outlive it.
  ReplayTransport(const JobSpec& job, const RankLayout& layout, int64_t rank, const GpuSpec& gpu,
                  const NetworkSpec& net, const MeasuredRates* rates);
  const RankCoord& Coord() const override { return layout_.ranks[static_cast<size_t>(rank_)]; }
  const std::vector<int64_t>& Members(GroupKind kind) const override;
  /// Adds the predicted seconds of the collective (nccl-tests size: `count` x 8 bytes, times the
  /// group's size for the block-wise kinds) to its group's phase; {0, 0}.
  Expected<CollectiveCheck> Collective(CollectiveKind kind, GroupKind group, int64_t count,
                                       const Watchdog& watchdog) override;
  /// Sends cost the sender nothing (they complete while it computes, as in RunStep).
  Status Send(int64_t peer, int tag, int64_t count) override;
  /// Adds the predicted seconds of a `count` x 8-byte send/recv hop from `peer` to pp_comm.
  Expected<CollectiveCheck> Receive(int64_t peer, int tag, int64_t count,
                                    const Watchdog& watchdog) override;
  Status FinishSends(const Watchdog& watchdog) override;

  /// The predicted seconds charged since the last Reset, by phase (tp, cp, dp, ep, pp).
  const TimeBreakdown& Predicted() const { return predicted_; }
  void Reset() { predicted_ = TimeBreakdown{}; }

 private:
  /// The link model of this rank's group of `kind` (PlaceGroup by its size and stride).
  GroupLink Link(GroupKind kind) const;

  const RankLayout& layout_;
  int64_t rank_;
  ClusterLinks links_;
  TimeBreakdown predicted_;
};

}  // namespace gpuplan
