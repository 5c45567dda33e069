#include "planner/report_charts.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/str_format.h"
#include "planner/chart_series.h"
#include "planner/svg_chart.h"
#include "planner/units_format.h"

namespace gpuplan {
namespace {

std::string ParetoChart(const PlanResult& r) {
  std::vector<const Plan*> plans;
  for (const Plan& p : r.pareto) plans.push_back(&p);
  const bool rec_on_front = std::any_of(plans.begin(), plans.end(), [&](const Plan* p) {
    return r.found && SamePlan(*p, r.recommendation);
  });
  if (r.found && !rec_on_front) plans.push_back(&r.recommendation);
  std::erase_if(plans, [](const Plan* p) {
    return !(p->econ.expected_wall_s > 0) || !std::isfinite(p->econ.expected_wall_s) ||
           !(p->econ.usd_per_gpu_hour > 0) || !std::isfinite(p->econ.expected_cost_usd);
  });
  if (plans.empty()) return "";
  double t_lo = plans[0]->econ.expected_wall_s, t_hi = t_lo, cost_hi = 0;
  for (const Plan* p : plans) {
    t_lo = std::min(t_lo, p->econ.expected_wall_s);
    t_hi = std::max(t_hi, p->econ.expected_wall_s);
    cost_hi = std::max(cost_hi, p->econ.expected_cost_usd);
  }
  constexpr double kW = 720, kH = 400, kLeft = 110, kRight = 690, kTop = 40, kBottom = 340;
  const Scale x{t_lo / 1.5, t_hi * 1.5, kLeft, kRight, true};
  const Scale y{0, NiceCeiling(cost_hi * 1.1), kBottom, kTop, false};
  SvgCanvas svg(kW, kH, "Pareto front: expected wall time vs expected cost");
  svg.YAxis(y, kLeft, LinearTicks(y.lo, y.hi, 5), UsdTickLabel, "expected cost (USD)", false,
            kRight - kLeft);
  svg.XAxis(x, kBottom, DurationTicks(x.lo, x.hi), DurationTickLabel,
            "expected wall time (log scale)");
  std::vector<std::pair<double, double>> front;
  for (const Plan* p : plans) {
    if (p != &r.recommendation)
      front.push_back({x(p->econ.expected_wall_s), y(p->econ.expected_cost_usd)});
  }
  std::sort(front.begin(), front.end());
  if (front.size() > 1) svg.Polyline(front, kChartIdeal, true);
  std::vector<LabelRequest> labels;
  for (const Plan* p : plans) {
    const bool rec = r.found && SamePlan(*p, r.recommendation);
    labels.push_back({x(p->econ.expected_wall_s), y(p->econ.expected_cost_usd), rec ? 7.0 : 4.5,
                      PlanPointLabel(*p), rec});
    const std::string tip = PlanPointTooltip(*p);
    svg.Circle(labels.back().x, labels.back().y, labels.back().r,
               rec ? kChartHighlight : kChartPalette[0], tip);
  }
  const std::vector<std::optional<PlacedLabel>> placed =
      PlaceLabels(labels, {kLeft, kTop, kRight, kBottom});
  for (size_t i = 0; i < labels.size(); ++i) {
    if (placed[i]) {
      svg.Text(placed[i]->x, placed[i]->y, labels[i].text, placed[i]->anchor, labels[i].emphasis);
    }
  }
  svg.Legend(kLeft + 10, 22,
             {{kChartPalette[0], "Pareto-optimal plan"}, {kChartHighlight, "recommended"}}, 2, 190);
  return svg.Finish();
}

std::string ScalingChart(const PlanResult& r) {
  std::vector<const ScalingRow*> rows;
  for (const ScalingRow& row : r.scaling) {
    if (row.feasible && row.gpus > 0 && row.speedup > 0) rows.push_back(&row);
  }
  if (rows.empty()) return "";
  // The ideal line starts where the speedup does, at the first feasible row.
  const double g0 = static_cast<double>(rows.front()->gpus), s0 = rows.front()->speedup;
  const auto ideal_at = [&](const ScalingRow* row) {
    return s0 * static_cast<double>(row->gpus) / g0;
  };
  double g_hi = g0, speedup_lo = s0, speedup_hi = s0, eff_hi = 1;
  for (const ScalingRow* row : rows) {
    g_hi = std::max(g_hi, static_cast<double>(row->gpus));
    speedup_lo = std::min(speedup_lo, row->speedup);
    speedup_hi = std::max({speedup_hi, row->speedup, ideal_at(row)});
    eff_hi = std::max(eff_hi, row->scaling_efficiency);
  }
  constexpr double kW = 720, kH = 400, kLeft = 90, kRight = 630, kTop = 60, kBottom = 340;
  const Scale x{g0 / 1.5, g_hi * 1.5, kLeft, kRight, true};
  const Scale y{speedup_lo / 1.5, speedup_hi * 1.5, kBottom, kTop, true};
  const Scale eff{0, NiceCeiling(eff_hi * 1.1), kBottom, kTop, false};
  SvgCanvas svg(kW, kH, "Scaling on " + r.scaling_gpu + ": speedup and efficiency vs GPUs");
  svg.YAxis(y, kLeft, PowerTicks(y.lo, y.hi, 2, 6), SpeedupTickLabel,
            "speedup over " + FormatCount(g0) + " " + Noun(g0, "GPU", "GPUs") + " (log2 scale)",
            false, kRight - kLeft);
  svg.YAxis(eff, kRight, LinearTicks(eff.lo, eff.hi, 5), PercentTickLabel, "scaling efficiency",
            true);
  svg.XAxis(x, kBottom, PowerTicks(x.lo, x.hi, 2, 10), FormatCount, "GPUs (log2 scale)");
  std::vector<std::pair<double, double>> ideal, speedup, efficiency;
  for (const ScalingRow* row : rows) {
    const double g = static_cast<double>(row->gpus);
    ideal.push_back({x(g), y(ideal_at(row))});
    speedup.push_back({x(g), y(row->speedup)});
    efficiency.push_back({x(g), eff(row->scaling_efficiency)});
  }
  svg.Polyline(ideal, kChartIdeal, true);
  svg.Polyline(speedup, kChartPalette[0]);
  svg.Polyline(efficiency, kChartPalette[4]);
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string gpus =
        std::to_string(rows[i]->gpus) + " " + Noun(rows[i]->gpus, "GPU", "GPUs") + ": ";
    svg.Circle(speedup[i].first, speedup[i].second, 4, kChartPalette[0],
               gpus + FormatFixed(rows[i]->speedup, 2) + "x speedup");
    svg.Circle(efficiency[i].first, efficiency[i].second, 4, kChartPalette[4],
               gpus + FormatPercent(rows[i]->scaling_efficiency) + " efficiency");
  }
  svg.Legend(kLeft, 24,
             {{kChartPalette[0], "speedup"},
              {kChartIdeal, "ideal (linear)", true},
              {kChartPalette[4], "scaling efficiency"}},
             3, 170);
  return svg.Finish();
}

std::string MemoryChart(const PlanResult& r) {
  const Plan* plan = ChartedPlan(r);
  if (plan == nullptr) return "";
  const MemoryBreakdown& m = plan->step.memory;
  constexpr double kW = 720, kH = 380, kLeft = 100, kBarX = 130, kBarW = 130, kTop = 40,
                   kBottom = 330;
  const Scale y{0, NiceCeiling(std::max(m.peak_bytes, m.capacity_bytes) * 1.05), kBottom, kTop,
                false};
  SvgCanvas svg(kW, kH,
                "Memory per GPU: " + PlanPointLabel(*plan) + ", " + LayoutSummary(plan->job));
  svg.YAxis(y, kLeft, LinearTicks(y.lo, y.hi, 6), FormatGb, "memory per GPU (GB)", false, 300);
  std::vector<LegendItem> legend;
  double base = 0;
  for (const MemoryPart& part : kMemoryParts) {
    const double bytes = m.*part.bytes;
    const std::string label = std::string(part.label) + " " + FormatGb(bytes);
    svg.Rect(kBarX, y(base + bytes), kBarW, y(base) - y(base + bytes), part.color, label);
    legend.push_back({part.color, label});
    base += bytes;
  }
  svg.Text(kBarX + kBarW / 2, y(m.peak_bytes) - 6, "peak " + FormatGb(m.peak_bytes), "middle",
           true);
  svg.Line(kLeft, y(m.capacity_bytes), kLeft + 300, y(m.capacity_bytes), kChartCapacity, 2, true);
  svg.Text(kLeft + 300, y(m.capacity_bytes) - 6, "capacity " + FormatGb(m.capacity_bytes), "end");
  legend.push_back({kChartCapacity, "capacity " + FormatGb(m.capacity_bytes), true});
  svg.Legend(440, 70, legend, 1, 250);
  return svg.Finish();
}

std::string StepTimeChart(const PlanResult& r) {
  if (!r.found || !(r.recommendation.step.step_time_s > 0)) return "";
  const StepResult& st = r.recommendation.step;
  constexpr double kW = 720, kH = 220, kLeft = 30, kRight = 690, kBarY = 30, kBarH = 44;
  const Scale x{0, NiceCeiling(st.step_time_s), kLeft, kRight, false};
  SvgCanvas svg(kW, kH, "Step time breakdown: " + FormatDuration(st.step_time_s) + " per step");
  std::vector<LegendItem> legend;
  double base = 0;
  for (const TimePart& part : kTimeParts) {
    const double seconds = st.breakdown_s.*part.seconds;
    if (!(seconds > 0)) continue;
    const std::string label = std::string(part.label) + " " + FormatDuration(seconds) + " (" +
                              FormatPercent(seconds / st.step_time_s) + ")";
    svg.Rect(x(base), kBarY, x(base + seconds) - x(base), kBarH, part.color, label);
    legend.push_back({part.color, label});
    base += seconds;
  }
  svg.XAxis(x, kBarY + kBarH + 6, LinearTicks(x.lo, x.hi, 6), DurationTickLabel,
            "seconds per step");
  svg.Legend(kLeft, kBarY + kBarH + 78, legend, 3, 220);
  return svg.Finish();
}

}  // namespace

std::string RenderChart(ChartKind kind, const PlanResult& result) {
  switch (kind) {
    case ChartKind::kPareto:
      return ParetoChart(result);
    case ChartKind::kScaling:
      return ScalingChart(result);
    case ChartKind::kMemory:
      return MemoryChart(result);
    case ChartKind::kStepTime:
      return StepTimeChart(result);
  }
  return "";
}

}  // namespace gpuplan
