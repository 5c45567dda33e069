// A simulated step as a Gantt chart: one SVG row per (GPU, stream), drawn with planner/svg_chart.h.
#pragma once

#include <string>

#include "simulator/timeline.h"

namespace gpuplan {

struct GanttOptions {
  double width_px = 1100;     ///< width of the whole chart (at least 300 is used)
  double row_height_px = 18;  ///< height of one stream row (at least 6 is used)
  bool compute_only = false;  ///< only the compute stream of each rank
  std::string title;          ///< shown above the chart; also its accessible name ("Timeline")
};

/// A self-contained SVG Gantt chart of `timeline` (an <svg> element with the SVG namespace and
/// its font set, no scripts, no external references; valid inline in HTML and as a .svg file).
///
/// Rows, top to bottom: for each rank in the order of Timeline::ranks, its compute row (always,
/// even when empty) and one row per other stream it uses, in SimStream order; with
/// `compute_only`, the compute row alone. Each rank's rows lie on one background band (one
/// <rect>), with the rank name (bold) at the left and the stream name (StreamName) before each
/// row. The x axis is time in milliseconds from min(0, first start) to the last end, with
/// LinearTicks and light grid lines.
///
/// Each op drawn is one <rect> with a tooltip (name, micro-batch, chunk, layer, start–end in
/// ms); a bar is at least 0.5 px wide. Kinds, colours and legend labels are those of
/// planner/timeline_style.h (shared with the GUI's Gantt). Compute ops are coloured by the prefix
/// of their name:
/// "forward", "backward", "wgrad" or "weight grad" (legend "weight gradient"), "recompute",
/// "optimizer", anything else (embedding, lm head, ...) "other compute"; ops on the other streams
/// by stream, in muted colours, labelled by stream name. A run of forward (or backward) bars of
/// one micro-batch and chunk that follow each other on a compute row (gaps under 1 px; the
/// simulator emits one op per layer) carries the micro-batch number in white, centred, when the
/// run is at least 12 px and the number's estimated width + 2 px wide and the row at least
/// 14 px high.
///
/// Below the axis, a legend with one swatch (<rect>) per kind drawn, in the order above. So the
/// chart has exactly ranks + ops drawn + legend entries <rect> elements. Ops whose rank is out
/// of range or with a non-finite time are not drawn.
std::string TimelineSvg(const Timeline& timeline, const GanttOptions& options);

}  // namespace gpuplan
