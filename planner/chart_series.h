// What the charts of the HTML report (planner/report_charts.cpp) and of the GUI (gui/) share:
// the palette, the memory and step-time parts with their labels and colours, point and tick labels.
#pragma once

#include <cstddef>
#include <string>

#include "planner/plan.h"
#include "planner/report_document.h"
#include "planner/units_format.h"
#include "simulator/cost_model.h"
#include "simulator/memory.h"

namespace gpuplan {

/// Tableau 10, the palette of every chart, as "#rrggbb".
inline constexpr const char* kChartPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                                "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                                                "#9c755f", "#bab0ac"};
/// The recommended plan.
inline constexpr const char* kChartHighlight = "#e15759";
/// Reference lines: the ideal linear speedup, the line through the Pareto front.
inline constexpr const char* kChartIdeal = "#999";
/// The memory capacity line.
inline constexpr const char* kChartCapacity = "#222";

/// One part of the memory of a GPU: its label, its colour and where MemoryBreakdown holds it.
struct MemoryPart {
  const char* label;
  const char* color;
  double MemoryBreakdown::*bytes;
};

/// The parts that add up to MemoryBreakdown::peak_bytes, in stacking order.
inline constexpr MemoryPart kMemoryParts[] = {
    {"weights", kChartPalette[0], &MemoryBreakdown::weights_bytes},
    {"gradients", kChartPalette[1], &MemoryBreakdown::grads_bytes},
    {"optimizer state", kChartPalette[2], &MemoryBreakdown::optimizer_bytes},
    {"activations", kChartPalette[3], &MemoryBreakdown::activations_bytes},
    {"logits buffers", kChartPalette[4], &MemoryBreakdown::logits_bytes},
    {"framework overhead", kChartPalette[5], &MemoryBreakdown::overhead_bytes}};

/// One part of the step time: its label, its colour and where TimeBreakdown holds it.
struct TimePart {
  const char* label;
  const char* color;
  double TimeBreakdown::*seconds;
};

/// The parts that add up to TimeBreakdown::Total(), in stacking order.
inline constexpr TimePart kTimeParts[] = {
    {"compute", kChartPalette[0], &TimeBreakdown::compute},
    {"TP comm", kChartPalette[1], &TimeBreakdown::tp_comm},
    {"CP comm", kChartPalette[2], &TimeBreakdown::cp_comm},
    {"PP comm", kChartPalette[3], &TimeBreakdown::pp_comm},
    {"DP comm", kChartPalette[4], &TimeBreakdown::dp_comm},
    {"EP comm", kChartPalette[5], &TimeBreakdown::ep_comm},
    {"bubble", kChartPalette[6], &TimeBreakdown::bubble},
    {"optimizer", kChartPalette[7], &TimeBreakdown::optimizer}};

/// A plan as a chart point label: "h100-sxm5-80gb ×128".
inline std::string PlanPointLabel(const Plan& plan) {
  return plan.job.cluster.gpu + " \u00d7" + std::to_string(plan.job.cluster.num_gpus);
}

/// A plan as a chart point tooltip: the point label, the layout, expected wall time and cost.
inline std::string PlanPointTooltip(const Plan& plan) {
  return PlanPointLabel(plan) + ", " + LayoutSummary(plan.job) + ": " +
         FormatDuration(plan.econ.expected_wall_s) + ", " + FormatUsd(plan.econ.expected_cost_usd);
}

/// `formatted` without the zero decimals of its number, which ends at `unit_at` ("6.0 h" -> "6 h"
/// with unit_at 3).
inline std::string WithoutZeroDecimals(std::string formatted, size_t unit_at) {
  for (const char* zeros : {".00", ".0"}) {
    const size_t n = std::char_traits<char>::length(zeros);
    if (unit_at != std::string::npos && unit_at >= n &&
        formatted.compare(unit_at - n, n, zeros) == 0) {
      return formatted.erase(unit_at - n, n);
    }
  }
  return formatted;
}

/// A duration axis tick: FormatDuration without zero decimals ("6 h", "30 min", "1.5 d"), "0"
/// for zero.
inline std::string DurationTickLabel(double seconds) {
  if (seconds == 0) return "0";
  const std::string s = FormatDuration(seconds);
  return WithoutZeroDecimals(s, s.find(' '));
}

/// A percentage axis tick: FormatPercent without zero decimals ("50%", "12.5%").
inline std::string PercentTickLabel(double fraction) {
  const std::string s = FormatPercent(fraction);
  return WithoutZeroDecimals(s, s.find('%'));
}

/// A speedup axis tick: "0.50x" below 1, else "1x", "16x", "1,024x".
inline std::string SpeedupTickLabel(double speedup) {
  return (speedup < 1 ? FormatFixed(speedup, 2) : FormatCount(speedup)) + "x";
}

/// A money axis tick: "$0" for zero, else FormatUsd.
inline std::string UsdTickLabel(double usd) {
  return usd == 0 ? std::string("$0") : FormatUsd(usd);
}

}  // namespace gpuplan
