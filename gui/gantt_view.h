// GanttView: the event simulator's step (a Timeline) as an interactive Gantt chart, one row
// per simulated GPU and stream, coloured like `gpuplan simulate --timeline-svg`.
#pragma once

#include <QPointF>
#include <QRect>
#include <QSize>
#include <QString>
#include <QWidget>
#include <cstdint>
#include <vector>

#include "gui/chart_paint.h"
#include "planner/timeline_style.h"
#include "simulator/timeline.h"

namespace gpuplan {

/// From the top: a legend of the op kinds drawn, the time axis (round ticks in s, ms or µs) and
/// the rows. Per rank of the timeline, a band of rows (alternating backgrounds) with the rank's
/// name in bold and each row's stream name in the left gutter: the compute row, then one row per
/// other stream the rank uses (RowStreams). Runs of a micro-batch's forward or backward bars
/// carry its number where it fits.
///
/// Interaction: the wheel zooms around the cursor (horizontal wheel pans; Shift+wheel is left to
/// the parent, so a QScrollArea scrolls the rows), dragging with the left button pans,
/// double-click shows the whole step; keys + and − zoom, ← and → pan, Home shows the whole step.
/// Hovering an op shows its details as a tooltip, hovering the gutter the rank's.
///
/// The rows have a fixed height from the font; the widget asks for the height of all of them
/// (sizeHint, minimumSizeHint), so a caller with many rows puts it in a QScrollArea. Only the
/// rows in the paint event's rectangle and the visible time window are painted, and bars
/// narrower than a pixel are merged per pixel column, so the bars cost O(visible rows × width),
/// not O(ops).
class GanttView : public QWidget {
  Q_OBJECT

 public:
  explicit GanttView(QWidget* parent = nullptr);

  /// Shows `timeline` (moved in; the view owns it) over [min(0, first start), last end]
  /// seconds and resets the zoom to that. Ops that are not drawable (IsDrawableOp) are ignored.
  /// The ops of one stream are expected to run one after another, as the simulator's do.
  void SetTimeline(Timeline timeline);
  /// No timeline: `reason` as grey text (e.g. "simulating…" or why there is none). RowCount()
  /// becomes 0 and the visible range [0, 0].
  void Clear(const QString& reason = {});

  /// Rows drawn: per rank its compute row and one row per other stream that rank uses.
  int RowCount() const;
  /// The rank (index into Timeline::ranks) and stream of row `row`, 0 <= row < RowCount().
  int32_t RowRank(int row) const;
  SimStream RowStream(int row) const;
  /// Row `row` in widget pixels, from the left edge to the right edge of the plot;
  /// 0 <= row < RowCount(). For QScrollArea::ensureVisible and tests.
  QRect RowRect(int row) const;
  /// Height of one row in pixels (from the font).
  int RowHeight() const { return row_height_; }

  /// Visible time window in seconds from the start of the step. SetVisibleRange moves the
  /// window inside the timeline, keeping its span where it fits; a span wider than the timeline
  /// becomes the whole timeline, one under a microsecond (or under 1e-6 of the timeline) is
  /// widened around its centre; non-finite bounds or end <= start are ignored. Without a
  /// timeline it does nothing and the range is [0, 0]. Emits VisibleRangeChanged on a change.
  void SetVisibleRange(double start_s, double end_s);
  double VisibleStart() const { return visible_lo_; }
  double VisibleEnd() const { return visible_hi_; }
  /// The whole step: SetVisibleRange over the timeline's full range.
  void ResetZoom();
  /// Zooms by `factor` (< 1 in, > 1 out) keeping the time at widget x `anchor_x` in place.
  void Zoom(double factor, double anchor_x);

  /// Widget x of time `t_s` (seconds) at the current zoom, and the inverse.
  double XAt(double t_s) const;
  double TimeAt(double x) const;

  /// The op under widget position `pos`, or nullptr: on a row, the op that covers the time at
  /// pos.x(), else the nearest op of that row within one pixel. O(log ops of the row).
  const TimelineOp* OpAt(const QPointF& pos) const;

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 signals:
  /// The visible time window changed (zoom, pan, a new timeline).
  void VisibleRangeChanged(double start_s, double end_s);

 protected:
  bool event(QEvent* event) override;
  void changeEvent(QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;

 private:
  /// A run of one micro-batch's forward (or backward) bars on a compute row: consecutive ops of
  /// the same kind, micro-batch and chunk (SameRun).
  struct LabelRun {
    double start_s = 0, end_s = 0;
    double reach_s = 0;  ///< the latest end of this run and the runs before it
    QString text;        ///< the micro-batch number
  };
  /// The drawable ops of one (rank, stream), sorted by start.
  struct Row {
    int32_t rank = 0;
    SimStream stream = SimStream::kCompute;
    int top = 0;  ///< widget y (set by Relayout)
    std::vector<double> start_s, end_s;
    std::vector<double> reach_s;  ///< per op: the latest end of it and the ops before it
    std::vector<int32_t> op;      ///< index into Timeline::ops
    std::vector<OpKind> kind;
    std::vector<LabelRun> labels;  ///< compute rows only
  };

  /// Row height, gutter, legend and row positions from the font and the width.
  void Relayout();
  /// The height everything needs at the current width.
  int ContentHeight() const;
  /// Index of the row containing widget y, or -1.
  int RowAtY(double y) const;
  double PlotLeft() const { return gutter_width_; }
  double PlotRight() const;
  /// Pans by `pixels` of the plot (positive: later times).
  void PanPixels(double pixels);
  /// Tooltips: of rank `rank` (over the gutter) and of an op.
  QString RankToolTip(int32_t rank) const;
  QString ToolTipFor(const TimelineOp& op) const;

  void PaintAxis(QPainter& painter, const std::vector<double>& ticks) const;
  void PaintBars(QPainter& painter, const Row& row) const;
  void PaintLabels(QPainter& painter, const Row& row) const;

  Timeline timeline_;
  bool has_timeline_ = false;
  QString reason_;
  std::vector<Row> rows_;
  std::vector<int> band_top_, band_bottom_;  ///< per rank: its rows' extent in widget y
  std::vector<QString> rank_names_;          ///< per rank: its name as drawn (elided to the gutter)
  std::vector<bool> kind_used_;
  double full_lo_ = 0, full_hi_ = 0;
  double visible_lo_ = 0, visible_hi_ = 0;

  // Layout (Relayout).
  int row_height_ = 16;
  int gutter_width_ = 0;
  ChartLegend legend_;
  double axis_top_ = 0;  ///< top of the tick labels
  int rows_top_ = 0;
  int rows_bottom_ = 0;

  // Dragging.
  bool dragging_ = false;
  double drag_x_ = 0;
};

}  // namespace gpuplan
