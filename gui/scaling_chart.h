// ScalingChart: how a plan scales with the GPU count: speedup (with the ideal linear line),
// scaling efficiency and the cost to train, against GPUs on a log2 axis.
#pragma once

#include <QLineF>
#include <QPolygonF>
#include <QSize>
#include <QString>
#include <QWidget>
#include <cstdint>
#include <optional>
#include <vector>

#include "gui/chart_paint.h"
#include "planner/plan.h"

namespace gpuplan {

/// The upper plot: speedup over the first feasible row (left axis, log2) with the ideal linear
/// line dashed, and scaling efficiency (right axis, %). The lower strip: the expected cost to
/// train as bars. GPU counts where nothing fits are crosses along the bottom of the upper plot
/// and gaps in the lines; the current GPU count is a highlighted band. Hovering a GPU count
/// shows its numbers.
class ScalingChart : public QWidget {
  Q_OBJECT

 public:
  explicit ScalingChart(QWidget* parent = nullptr);

  /// `rows`: GPU counts ascending (ScalingRow: speedup, scaling_efficiency and plan.econ's
  /// expected_wall_s and expected_cost_usd of feasible rows; a cost of 0 = no price known).
  /// Rows with !feasible, or a speedup that is not positive and finite, are drawn as "does
  /// not fit" (or left out); rows with gpus <= 0 are ignored. `current_gpus`: the GPU count of
  /// the user's plan, highlighted when within the axis (0 = none).
  void SetRows(const std::vector<ScalingRow>& rows, int64_t current_gpus);
  /// No result: an empty chart with `reason` as grey text.
  void Clear(const QString& reason = {});

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 protected:
  bool event(QEvent* event) override;
  void changeEvent(QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void paintEvent(QPaintEvent* event) override;

 private:
  /// One GPU count, with its numbers formatted once.
  struct Row {
    double gpus = 0;
    bool fits = false;     ///< ScalingRow::feasible
    bool plotted = false;  ///< fits, with a positive finite speedup
    double speedup = 0;
    double efficiency = 0;
    double cost_usd = 0;
    /// The cost's 80% error band (planner Plan::band); equal to cost_usd without a band.
    double cost_low_usd = 0, cost_high_usd = 0;
    QString tooltip;
  };
  /// Everything paintEvent draws, computed once per SetRows/Clear/resize/font change.
  struct Layout {
    /// What one row of rows_ draws.
    struct Marks {
      double x = 0;
      std::optional<QPointF> speedup, efficiency;
      QRectF cost_bar;                  ///< empty without a price
      std::optional<QLineF> cost_band;  ///< the cost's error band, a whisker on the bar
      std::optional<QPointF> no_fit;    ///< the "does not fit" cross
    };
    QSize size;
    QRectF main, strip;  ///< upper plot; cost strip (empty when no cost is known)
    QRectF hover_area;   ///< where hovering picks the nearest GPU count
    ChartLegend legend;
    ChartAxis x, speedup, efficiency, cost;
    std::vector<Marks> marks;                              ///< per row of rows_
    std::vector<QPolygonF> speedup_runs, efficiency_runs;  ///< lines, broken where nothing fits
    QLineF ideal;
    QRectF current_band;      ///< empty when the current GPU count is outside the axis
    double hover_radius = 0;  ///< how far from a row's x a hover still picks it
  };

  const Layout& CurrentLayout() const;
  void Invalidate();
  /// The row whose GPU count is nearest to `pos` horizontally within the plots; -1 when none.
  int RowAt(const QPointF& pos) const;

  std::vector<Row> rows_;
  double base_gpus_ = 0;  ///< GPUs of the first plotted row: speedup 1
  int64_t current_gpus_ = 0;
  QString reason_;  ///< shown when no row is plotted
  mutable std::optional<Layout> layout_;
};

}  // namespace gpuplan
