// QPainter helpers shared by the GUI's charts (MemoryBar, BreakdownBar, ScalingChart,
// ParetoChart): colours, anchored text, markers, axes, legends, stacked bars, the empty state.
#pragma once

#include <QColor>
#include <QFontMetricsF>
#include <QPointF>
#include <QRectF>
#include <QString>
#include <functional>
#include <string>
#include <vector>

#include "planner/svg_chart.h"

class QHelpEvent;
class QPainter;
class QWidget;

namespace gpuplan {

/// A text of the planner's formatting (UTF-8, planner/units_format.h) as a QString.
inline QString ToQ(const std::string& utf8) { return QString::fromStdString(utf8); }

/// A colour of planner/chart_series.h ("#rgb" or "#rrggbb") as a QColor.
QColor ChartColor(const char* hex);

/// Axis lines, tick marks and labels, titles.
inline constexpr QColor kChartInk{0x33, 0x33, 0x33};
/// Grid lines across a plot.
inline constexpr QColor kChartGrid{0xe5, 0xe5, 0xe5};
/// "Does not fit in memory": over-capacity marking, GPU counts where no layout fits. No data
/// series uses it.
inline constexpr QColor kChartDoesNotFit{0xd6, 0x27, 0x28};
/// Secondary text: the empty state, notes.
inline constexpr QColor kChartMuted{0x80, 0x80, 0x80};
/// Padding in pixels around a chart's content and between its rows.
inline constexpr double kChartPadding = 6;

/// Starts a paint: antialiasing on, `rect` filled white.
void PaintChartBackground(QPainter& painter, const QRectF& rect);

/// `text` in kChartMuted, centred in `rect` and word-wrapped: the empty state.
void PaintPlaceholder(QPainter& painter, const QRectF& rect, const QString& text);

/// Draws `text` in the painter's font and pen with its anchor at `anchor`: Qt::AlignLeft,
/// AlignHCenter or AlignRight put the text's left edge, centre or right edge at anchor.x();
/// Qt::AlignTop, AlignVCenter or AlignBottom do the same for its top, centre or bottom and
/// anchor.y().
void PaintText(QPainter& painter, const QPointF& anchor, const QString& text,
               Qt::Alignment alignment);

/// Shapes of point markers and legend swatches.
enum class MarkerShape { kCircle, kDiamond, kCross };

/// How far a diamond marker's corners reach from its centre, in multiples of its radius (so
/// that it looks as large as a circle of the same radius).
inline constexpr double kDiamondReach = 1.3;

/// A marker `radius` pixels around `center`: a circle or diamond filled with `color` and
/// outlined white, or a cross stroked in `color`.
void PaintMarker(QPainter& painter, const QPointF& center, double radius, MarkerShape shape,
                 const QColor& color);

/// Answers a QEvent::ToolTip: shows `text` at the event's position, or hides any tooltip and
/// ignores the event when `text` is empty.
void ShowChartToolTip(QHelpEvent* event, QWidget* widget, const QString& text);

/// Where an axis runs along its plot.
enum class AxisSide { kBottom, kLeft, kRight };

/// One axis. Constructed from the data range and tick values (labels formatted and measured
/// once), placed along the plot rectangle on every layout, painted on every paint.
class ChartAxis {
 public:
  ChartAxis() = default;
  /// An axis over data [lo, hi] (log scale: 0 < lo < hi) with a tick at each of `ticks`
  /// labelled by `label`, and `title`, which names the unit ("expected cost (USD)").
  ChartAxis(AxisSide side, double lo, double hi, bool log, const std::vector<double>& ticks,
            const std::function<std::string(double)>& label, const QString& title,
            const QFontMetricsF& metrics);

  /// Pixels the axis takes outside its plot: tick marks, labels and title.
  double Extent() const;
  /// Pixels the labels of a bottom axis reach beyond the ends of its plot: half the widest
  /// label. 0 for a left or right axis.
  double Overhang() const;
  /// Lays the axis along the bottom, left or right edge of `plot`, with light grid lines
  /// across the plot when `grid`. Labels of a bottom axis that would overlap the previous
  /// label are left out, and so is a title longer than the axis (the legend and the tick
  /// labels still name the series and unit).
  void Place(const QRectF& plot, bool grid);
  /// The pixel coordinate along the axis of data value `v` (after Place).
  double Map(double v) const { return scale_(v); }
  const Scale& scale() const { return scale_; }

  /// The grid lines (paint before the data).
  void PaintGrid(QPainter& painter) const;
  /// The axis line, tick marks, labels and title.
  void Paint(QPainter& painter) const;

 private:
  AxisSide side_ = AxisSide::kBottom;
  Scale scale_;
  QFontMetricsF metrics_{QFont()};
  std::vector<double> ticks_;
  std::vector<QString> labels_;
  std::vector<bool> shown_;  ///< per tick: whether its label is drawn
  QString title_;
  QString shown_title_;      ///< title_, or empty when longer than the axis
  double label_extent_ = 0;  ///< widest label (left, right) or label height (bottom)
  double position_ = 0;      ///< y of a bottom axis, x of a left or right one
  double grid_length_ = 0;   ///< 0 = no grid
  double grid_sign_ = 1;     ///< direction of the grid lines from the axis
};

/// One legend entry: a swatch in `color` and `label`; `tooltip` on hover (empty = none).
struct LegendEntry {
  enum class Swatch { kBox, kLine, kDashedLine, kCircle, kDiamond, kCross };
  QString label;
  QColor color;
  Swatch swatch = Swatch::kBox;
  QString tooltip;
};

/// Legend entries flowed left to right and wrapped into rows.
class ChartLegend {
 public:
  ChartLegend() = default;
  /// Flows `entries` into rows at most `width` pixels wide from `top_left`; an entry wider
  /// than `width` gets a row of its own and is elided.
  ChartLegend(std::vector<LegendEntry> entries, const QPointF& top_left, double width,
              const QFontMetricsF& metrics);

  /// Pixels from the top of the first row to the bottom of the last; 0 without entries.
  double Height() const { return height_; }
  void Paint(QPainter& painter) const;
  /// The tooltip of the entry under `pos`; empty when none.
  QString ToolTipAt(const QPointF& pos) const;

 private:
  std::vector<LegendEntry> entries_;
  std::vector<QRectF> boxes_;   ///< per entry: swatch and label
  std::vector<QString> shown_;  ///< per entry: the label, elided where too wide
  double height_ = 0;
};

/// One part of a stacked bar: `value` in the bar's unit, its colour, its legend label and
/// its tooltip.
struct BarPart {
  QString legend_label;
  QColor color;
  double value = 0;
  QString tooltip;
};

/// The layout of the short bar widgets (MemoryBar, BreakdownBar), from the top: a status line,
/// one horizontal stacked bar of the parts over [0, scale_max] and the legend of the parts.
class StackedBar {
 public:
  StackedBar() = default;
  /// Lays out `parts` (values > 0 and finite; others are left out) within `bounds`, stacked
  /// from 0 on a linear scale from 0 to `scale_max` (> 0).
  StackedBar(std::vector<BarPart> parts, double scale_max, const QRectF& bounds,
             const QFontMetricsF& metrics);

  /// The height `parts` need at `width` pixels: status line, bar and legend rows.
  static double HeightFor(const std::vector<BarPart>& parts, double width,
                          const QFontMetricsF& metrics);

  /// The status line's rectangle (one text line above the bar).
  const QRectF& status_rect() const { return status_; }
  /// The bar's full extent, values 0 to scale_max.
  const QRectF& track_rect() const { return track_; }
  /// The x pixel of value `v`.
  double Map(double v) const { return scale_(v); }

  /// The segments and the legend (not the status line).
  void Paint(QPainter& painter) const;
  /// The tooltip of the segment or legend entry under `pos`; empty when none.
  QString ToolTipAt(const QPointF& pos) const;

 private:
  std::vector<BarPart> parts_;
  std::vector<QRectF> segments_;  ///< per part
  QRectF status_, track_;
  Scale scale_;
  ChartLegend legend_;
};

}  // namespace gpuplan
