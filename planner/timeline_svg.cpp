#include "planner/timeline_svg.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "common/str_format.h"
#include "planner/svg_chart.h"
#include "planner/timeline_style.h"

namespace gpuplan {
namespace {

std::string Ms(double ms, const char* format) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), format, ms);
  return buf;
}

std::string Tooltip(const TimelineOp& op) {
  std::string tip(op.name);
  if (op.microbatch >= 0) tip += " mb" + std::to_string(op.microbatch);
  if (op.chunk >= 0) tip += " c" + std::to_string(op.chunk);
  if (op.layer >= 0) tip += ", layer " + std::to_string(op.layer);
  return tip + ": " + Ms(op.start_s * 1e3, "%.3f") + "\u2013" + Ms(op.end_s * 1e3, "%.3f") + " ms";
}

std::string RankTooltip(const TimelineRank& rank) {
  return rank.name + ": global rank " + std::to_string(rank.global_rank) + ", stage " +
         std::to_string(rank.stage) + ", represents " + std::to_string(rank.represents) + " " +
         Noun(rank.represents, "GPU", "GPUs");
}

}  // namespace

std::string TimelineSvg(const Timeline& timeline, const GanttOptions& options) {
  const double width = std::isfinite(options.width_px) ? std::max(options.width_px, 300.0) : 1100;
  const double row_h =
      std::isfinite(options.row_height_px) ? std::max(options.row_height_px, 6.0) : 18;
  const size_t nranks = timeline.ranks.size();

  // The ops drawn, the streams each rank shows (compute always) and the time range in ms.
  std::vector<size_t> drawn;
  const std::vector<uint32_t> shown = RowStreams(timeline, options.compute_only);
  std::array<bool, kOpKindCount> kind_used{};
  double t_lo = 0, t_hi = 0;
  for (size_t i = 0; i < timeline.ops.size(); ++i) {
    const TimelineOp& op = timeline.ops[i];
    if (!IsDrawableOp(op, nranks)) continue;
    if (options.compute_only && op.stream != SimStream::kCompute) continue;
    drawn.push_back(i);
    kind_used[static_cast<size_t>(ClassifyOp(op))] = true;
    t_lo = std::min(t_lo, op.start_s * 1e3);
    t_hi = std::max(t_hi, std::max(op.start_s, op.end_s) * 1e3);
  }
  if (!(t_hi > t_lo)) t_hi = t_lo + 1;

  // Label column: bold rank names, then the stream names right-aligned against the plot.
  double rank_w = 0, stream_w = 0;
  for (size_t r = 0; r < nranks; ++r) {
    rank_w = std::max(rank_w, EstimateTextWidth(timeline.ranks[r].name, true));
    for (int s = 0; s < kSimStreamCount; ++s) {
      if (shown[r] & (1u << s)) {
        stream_w = std::max(stream_w, EstimateTextWidth(StreamName(static_cast<SimStream>(s))));
      }
    }
  }
  constexpr double kPad = 8, kGroupGap = 4, kLegendColumn = 140, kLegendRow = 18;
  const double left = std::min(kPad + rank_w + 12 + stream_w + 6, 0.45 * width);
  const double right = width - 24;
  const double plot_top = options.title.empty() ? kPad : 34;

  // Row positions: rank bands separated by a small gap.
  std::vector<std::array<double, kSimStreamCount>> row_y(nranks);
  std::vector<std::pair<double, double>> band(nranks);
  double y = plot_top;
  for (size_t r = 0; r < nranks; ++r) {
    band[r].first = y;
    for (int s = 0; s < kSimStreamCount; ++s) {
      if (!(shown[r] & (1u << s))) continue;
      row_y[r][static_cast<size_t>(s)] = y;
      y += row_h;
    }
    band[r].second = y;
    y += kGroupGap;
  }
  const double plot_bottom = nranks > 0 ? y - kGroupGap : y + row_h;
  const double axis_y = plot_bottom + 6;

  std::vector<LegendItem> legend;
  for (int k = 0; k < kOpKindCount; ++k) {
    if (kind_used[static_cast<size_t>(k)]) {
      const auto kind = static_cast<OpKind>(k);
      legend.push_back({OpKindColor(kind), std::string(OpKindLabel(kind))});
    }
  }
  const int per_row = std::max(1, static_cast<int>((width - 2 * kPad) / kLegendColumn));
  const double legend_y = axis_y + 62;
  const auto legend_rows = static_cast<double>((legend.size() + static_cast<size_t>(per_row) - 1) /
                                               static_cast<size_t>(per_row));
  const double height =
      legend.empty() ? axis_y + 46 : legend_y + (legend_rows - 1) * kLegendRow + 10;

  SvgCanvas svg(width, height, options.title.empty() ? "Timeline" : options.title);
  if (!options.title.empty()) svg.Text(kPad, 20, options.title, "start", true);

  for (size_t r = 0; r < nranks; ++r) {
    svg.Rect(4, band[r].first, width - 8, band[r].second - band[r].first,
             r % 2 == 0 ? "#f2f2f2" : "#fafafa", RankTooltip(timeline.ranks[r]));
    svg.Text(kPad, band[r].first + row_h / 2 + 4, timeline.ranks[r].name, "start", true);
    for (int s = 0; s < kSimStreamCount; ++s) {
      if (!(shown[r] & (1u << s))) continue;
      svg.Text(left - 6, row_y[r][static_cast<size_t>(s)] + row_h / 2 + 4,
               std::string(StreamName(static_cast<SimStream>(s))), "end");
    }
  }

  const Scale x{t_lo, t_hi, left, right, false};
  const std::vector<double> ticks = LinearTicks(t_lo, t_hi, 8);
  for (double t : ticks) svg.Line(x(t), plot_top, x(t), plot_bottom, "#dddddd");

  const double inset = row_h >= 10 ? 2 : 1;
  std::vector<std::vector<size_t>> compute_ops(nranks);
  for (size_t i : drawn) {
    const TimelineOp& op = timeline.ops[i];
    const double ry = row_y[static_cast<size_t>(op.rank)][static_cast<size_t>(op.stream)];
    const double x0 = x(op.start_s * 1e3);
    const double w = std::max(x(std::max(op.start_s, op.end_s) * 1e3) - x0, 0.5);
    svg.Rect(x0, ry + inset, w, row_h - 2 * inset, OpKindColor(ClassifyOp(op)), Tooltip(op));
    if (op.stream == SimStream::kCompute) compute_ops[static_cast<size_t>(op.rank)].push_back(i);
  }

  // Micro-batch labels, over runs of forward (or backward) bars of one micro-batch and chunk
  // that follow each other on a compute row (the simulator emits one op per layer).
  if (row_h >= 14) {
    for (size_t r = 0; r < nranks; ++r) {
      std::vector<size_t>& ops = compute_ops[r];
      std::stable_sort(ops.begin(), ops.end(), [&](size_t a, size_t b) {
        return timeline.ops[a].start_s < timeline.ops[b].start_s;
      });
      const double ry = row_y[r][static_cast<size_t>(SimStream::kCompute)];
      const TimelineOp* first = nullptr;  // of the current run
      double run_x0 = 0, run_x1 = 0;
      const auto flush = [&] {
        if (first == nullptr || !IsLabelledPass(*first)) return;
        const std::string text = std::to_string(first->microbatch);
        const double w = run_x1 - run_x0;
        if (w >= std::max(12.0, EstimateTextWidth(text) + 2)) {
          svg.Text(run_x0 + w / 2, ry + row_h / 2 + 4, text, "middle", false, "#fff");
        }
      };
      for (size_t i : ops) {
        const TimelineOp& op = timeline.ops[i];
        const double x0 = x(op.start_s * 1e3);
        const double x1 = std::max(x(std::max(op.start_s, op.end_s) * 1e3), x0 + 0.5);
        const bool continues = first != nullptr && SameRun(*first, op) && x0 <= run_x1 + 1;
        if (continues) {
          run_x1 = std::max(run_x1, x1);
          continue;
        }
        flush();
        first = &op;
        run_x0 = x0;
        run_x1 = x1;
      }
      flush();
    }
  }

  svg.XAxis(
      x, axis_y, ticks, [](double v) { return Ms(v + 0.0, "%.6g"); }, "time (ms)");
  if (!legend.empty()) svg.Legend(kPad, legend_y, legend, per_row, kLegendColumn);
  return svg.FinishStandalone();
}

}  // namespace gpuplan
