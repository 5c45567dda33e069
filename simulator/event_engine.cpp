#include "simulator/event_engine.h"

#include <algorithm>
#include <limits>
#include <string>

namespace gpuplan {

int32_t EventEngine::AddResource(int32_t gpu, ResourceKind kind) {
  resources_.push_back({gpu, kind, 0});
  return static_cast<int32_t>(resources_.size() - 1);
}

int32_t EventEngine::AddOp(int32_t resource, double work_s) {
  Op op;
  op.resource = resource;
  op.work = std::max(0.0, work_s);
  ops_.push_back(op);
  return static_cast<int32_t>(ops_.size() - 1);
}

void EventEngine::AddDependency(int32_t before, int32_t after) {
  edges_.emplace_back(before, after);
}

Status EventEngine::Run(ProgressSink* progress) {
  const size_t n = ops_.size();
  ProgressThrottle throttle(progress, static_cast<int64_t>(n));
  if (!throttle.Report(0)) return Status::Cancelled("event simulation: cancelled");
  // Successor lists in compressed form.
  std::vector<int32_t> first(n + 1, 0);
  for (const auto& [from, to] : edges_) {
    ++first[static_cast<size_t>(from) + 1];
    ++ops_[static_cast<size_t>(to)].pending;
  }
  for (size_t i = 0; i < n; ++i) first[i + 1] += first[i];
  std::vector<int32_t> successors(edges_.size());
  {
    std::vector<int32_t> fill(first.begin(), first.end() - 1);
    for (const auto& [from, to] : edges_)
      successors[static_cast<size_t>(fill[static_cast<size_t>(from)]++)] = to;
  }
  // Link ops active per GPU: slows that GPU's compute.
  int32_t max_gpu = 0;
  for (const Resource& r : resources_) max_gpu = std::max(max_gpu, r.gpu);
  std::vector<int32_t> gpu_comm(static_cast<size_t>(max_gpu) + 1, 0);

  std::vector<int32_t> active;
  std::vector<int32_t> finished;
  double now = 0;
  size_t done = 0;
  auto start = [&](int32_t id) {
    Op& op = ops_[static_cast<size_t>(id)];
    op.start = now;
    op.remaining = op.work;
    Resource& r = resources_[static_cast<size_t>(op.resource)];
    ++r.active;
    if (r.kind == ResourceKind::kLink) ++gpu_comm[static_cast<size_t>(r.gpu)];
    active.push_back(id);
  };
  for (size_t i = 0; i < n; ++i) {
    if (ops_[i].pending == 0) start(static_cast<int32_t>(i));
  }
  std::vector<double> rate;
  while (!active.empty()) {
    ++events_;
    // Rates under the current sharing, and the time to the next completion.
    rate.resize(active.size());
    double dt = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < active.size(); ++i) {
      const Op& op = ops_[static_cast<size_t>(active[i])];
      const Resource& r = resources_[static_cast<size_t>(op.resource)];
      rate[i] =
          r.kind == ResourceKind::kLink
              ? 1.0 / static_cast<double>(r.active)
              : (gpu_comm[static_cast<size_t>(r.gpu)] > 0 ? 1.0 / (1.0 + interference_) : 1.0);
      dt = std::min(dt, op.remaining / rate[i]);
    }
    now += dt;
    finished.clear();
    size_t keep = 0;
    for (size_t i = 0; i < active.size(); ++i) {
      Op& op = ops_[static_cast<size_t>(active[i])];
      op.remaining -= rate[i] * dt;
      // Relative tolerance: the op that set dt lands on zero up to rounding.
      if (op.remaining <= 1e-12 * std::max(op.work, 1e-9)) {
        finished.push_back(active[i]);
      } else {
        active[keep++] = active[i];
      }
    }
    active.resize(keep);
    for (int32_t id : finished) {
      Op& op = ops_[static_cast<size_t>(id)];
      op.end = now;
      op.remaining = 0;
      ++done;
      Resource& r = resources_[static_cast<size_t>(op.resource)];
      --r.active;
      if (r.kind == ResourceKind::kLink) --gpu_comm[static_cast<size_t>(r.gpu)];
    }
    if (!throttle.Report(static_cast<int64_t>(done))) {
      return Status::Cancelled("event simulation: cancelled");
    }
    for (int32_t id : finished) {
      for (int32_t k = first[static_cast<size_t>(id)]; k < first[static_cast<size_t>(id) + 1];
           ++k) {
        const int32_t next = successors[static_cast<size_t>(k)];
        if (--ops_[static_cast<size_t>(next)].pending == 0) start(next);
      }
    }
  }
  if (done != n) {
    for (size_t i = 0; i < n; ++i) {
      if (ops_[i].end < 0) {
        return Status::Internal("event simulation: op " + std::to_string(i) + " of " +
                                std::to_string(n) +
                                " never became ready (the dependency graph has a cycle)");
      }
    }
  }
  return Status::Ok();
}

}  // namespace gpuplan
