#include "simulator/pipeline_schedule.h"

#include <algorithm>
#include <array>

namespace gpuplan {
namespace {

PipelinePass Pass(PassKind kind, int64_t microbatch, int64_t chunk) {
  return {kind, static_cast<int32_t>(microbatch), static_cast<int32_t>(chunk)};
}

// GPipe (Huang et al. 2019, Fig. 2c): all forwards, then all backwards.
std::vector<PipelinePass> GpipeOrder(int64_t /*p*/, int64_t m, int64_t /*v*/, int64_t /*stage*/) {
  std::vector<PipelinePass> order;
  order.reserve(static_cast<size_t>(2 * m));
  for (int64_t i = 0; i < m; ++i) order.push_back(Pass(PassKind::kForward, i, 0));
  for (int64_t i = 0; i < m; ++i) order.push_back(Pass(PassKind::kBackward, i, 0));
  return order;
}

// 1F1B (PipeDream-Flush; Narayanan et al. 2021 Sec. 2.2.1, Megatron-LM
// forward_backward_pipelining_without_interleaving): stage s runs min(p-s-1, m) warm-up
// forwards, then alternates one forward and one backward, then drains the backwards. With
// `wgrad_delay` >= 0 the backward is split (ZB-H1): W of micro-batch i follows B of micro-batch
// i + wgrad_delay, the rest run after the last B.
std::vector<PipelinePass> OneFOneB(int64_t p, int64_t m, int64_t stage, int64_t wgrad_delay) {
  std::vector<PipelinePass> order;
  order.reserve(static_cast<size_t>(3 * m));
  const int64_t warmup = std::min(p - stage - 1, m);
  int64_t next_w = 0;
  auto backward = [&](int64_t i) {
    order.push_back(Pass(PassKind::kBackward, i, 0));
    if (wgrad_delay >= 0 && i - next_w >= wgrad_delay) {
      order.push_back(Pass(PassKind::kWeightGrad, next_w++, 0));
    }
  };
  for (int64_t i = 0; i < warmup; ++i) order.push_back(Pass(PassKind::kForward, i, 0));
  for (int64_t i = 0; i < m - warmup; ++i) {
    order.push_back(Pass(PassKind::kForward, warmup + i, 0));
    backward(i);
  }
  for (int64_t i = m - warmup; i < m; ++i) backward(i);
  while (wgrad_delay >= 0 && next_w < m) order.push_back(Pass(PassKind::kWeightGrad, next_w++, 0));
  return order;
}

std::vector<PipelinePass> OneFOneBOrder(int64_t p, int64_t m, int64_t /*v*/, int64_t stage) {
  return OneFOneB(p, m, stage, -1);
}

// ZB-H1 (Qi et al. 2024 Sec. 2.1): 1F1B with W passes deferred by the stage index, so every
// stage holds at most p micro-batches (the first stage's 1F1B count) and the deferred W passes
// fill the drain.
std::vector<PipelinePass> ZeroBubbleH1Order(int64_t p, int64_t m, int64_t /*v*/, int64_t stage) {
  return OneFOneB(p, m, stage, stage);
}

// Interleaved 1F1B: InterleavedForwardSlot's table, InterleavedWarmup's warm-up forwards, then
// one forward and one backward at a time, then the drain. Backward visits the chunks in reverse.
std::vector<PipelinePass> InterleavedOrder(int64_t p, int64_t m, int64_t v, int64_t stage) {
  const int64_t total = m * v;
  const int64_t warmup = InterleavedWarmup(p, m, v, stage);
  std::vector<PipelinePass> order;
  order.reserve(static_cast<size_t>(2 * total));
  auto forward = [&](int64_t k) {
    const ChunkSlot slot = InterleavedForwardSlot(p, v, k);
    order.push_back(Pass(PassKind::kForward, slot.microbatch, slot.chunk));
  };
  auto backward = [&](int64_t k) {
    const ChunkSlot slot = InterleavedForwardSlot(p, v, k);
    order.push_back(Pass(PassKind::kBackward, slot.microbatch, v - 1 - slot.chunk));
  };
  for (int64_t k = 0; k < warmup; ++k) forward(k);
  for (int64_t k = 0; k < total - warmup; ++k) {
    forward(warmup + k);
    backward(k);
  }
  for (int64_t k = total - warmup; k < total; ++k) backward(k);
  return order;
}

constexpr std::array<ScheduleInfo, 4> kSchedules = {{
    {Schedule::kGpipe, "gpipe", "Huang et al. 2019, GPipe", false, false, GpipeOrder},
    {Schedule::k1F1B, "1f1b", "Narayanan et al. 2021 Sec. 2.2.1 (PipeDream-Flush)", false, false,
     OneFOneBOrder},
    {Schedule::kInterleaved, "interleaved", "Narayanan et al. 2021 Sec. 2.2.2", false, true,
     InterleavedOrder},
    {Schedule::kZeroBubbleH1, "zb-h1", "Qi et al. 2024, Zero Bubble Pipeline Parallelism, ZB-H1",
     true, false, ZeroBubbleH1Order},
}};

}  // namespace

ChunkSlot InterleavedForwardSlot(int64_t p, int64_t v, int64_t k) {
  const int64_t group = k / (p * v);  // p micro-batches each
  const int64_t offset = k % (p * v);
  return {group * p + offset % p, offset / p};
}

int64_t InterleavedWarmup(int64_t p, int64_t m, int64_t v, int64_t stage) {
  return std::min((p - stage - 1) * 2 + (v - 1) * p, m * v);
}

std::span<const ScheduleInfo> Schedules() { return kSchedules; }

const ScheduleInfo& GetScheduleInfo(Schedule schedule) {
  for (const ScheduleInfo& info : kSchedules) {
    if (info.kind == schedule) return info;
  }
  return kSchedules[1];
}

std::optional<Schedule> ParseScheduleName(std::string_view name) {
  for (const ScheduleInfo& info : kSchedules) {
    if (info.name == name) return info.kind;
  }
  return std::nullopt;
}

std::string_view ScheduleName(Schedule schedule) { return GetScheduleInfo(schedule).name; }

std::vector<PipelinePass> PassOrder(Schedule schedule, int64_t p, int64_t m, int64_t v,
                                    int64_t stage) {
  const ScheduleInfo& info = GetScheduleInfo(schedule);
  return info.order(p, m, info.uses_chunks ? v : 1, stage);
}

}  // namespace gpuplan
