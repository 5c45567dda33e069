// ParetoChart: the planner's time-vs-cost front, expected wall time (x, log) against expected
// cost (y), with the recommended plan highlighted and the user's current plan as a diamond.
#pragma once

#include <QLineF>
#include <QPointF>
#include <QPolygonF>
#include <QRectF>
#include <QSize>
#include <QString>
#include <QWidget>
#include <optional>
#include <vector>

#include "gui/chart_paint.h"
#include "planner/plan.h"

namespace gpuplan {

/// Points connected by a dashed line, labelled "h100-sxm5-80gb ×64" where the labels fit (the
/// recommendation always). Hovering a point shows the plan and the cursor becomes a pointing
/// hand; a left click on it emits PlanClicked.
class ParetoChart : public QWidget {
  Q_OBJECT

 public:
  explicit ParetoChart(QWidget* parent = nullptr);

  /// The planner's time-vs-cost front (PlanResult::pareto, sorted by expected wall time):
  /// x = econ.expected_wall_s (log scale), y = econ.expected_cost_usd. Plans without a price
  /// (econ.usd_per_gpu_hour <= 0) or without a positive finite wall time and a finite cost are
  /// not drawn. `recommended`: the index of the recommended plan in `front`, or -1.
  void SetPlans(const std::vector<Plan>& front, int recommended);
  /// The user's current what-if plan, drawn as a diamond; ignored unless the wall time is
  /// positive and finite and the cost finite and not negative.
  /// With an error band (low_factor < high_factor), a whisker from (wall, cost) x low_factor to
  /// (wall, cost) x high_factor: both scale with the measured / predicted step time. Where the
  /// model is biased for the plan's class the whisker does not reach the diamond.
  void SetCurrent(double expected_wall_s, double expected_cost_usd, double low_factor = 1,
                  double high_factor = 1);
  /// Removes the current plan's diamond.
  void ClearCurrent();
  /// No result: an empty chart with `reason` as grey text (the current plan is kept).
  void Clear(const QString& reason = {});

  /// Whether plan `index` of the front is drawn (it has a price and valid numbers).
  bool HasPoint(int index) const;
  /// Widget coordinates of plan `index` of the front (for tests and tooltips). Precondition:
  /// HasPoint(index); otherwise (-1, -1).
  QPointF PointPosition(int index) const;
  /// The index in the front of the drawn point within 8 px of `pos`, the nearest first; -1
  /// when none.
  int PointAt(const QPointF& pos) const;
  /// The number of points drawn (plans of the front with a price).
  int PointCount() const;

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 signals:
  /// A left click on plan `index` of the front.
  void PlanClicked(int index);

 protected:
  bool event(QEvent* event) override;
  void changeEvent(QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void paintEvent(QPaintEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;

 private:
  /// One drawn plan, with its texts formatted once.
  struct Point {
    int front_index = 0;
    double wall_s = 0, cost_usd = 0;
    bool recommended = false;
    QString label;    ///< "h100-sxm5-80gb ×64"
    QString tooltip;  ///< the label, the layout, wall time and cost
  };
  /// A point label where PlaceLabels put it: drawn in `box` with `alignment`.
  struct Label {
    QRectF box;
    Qt::Alignment alignment;
    QString text;
    bool bold = false;
  };
  /// Everything paintEvent draws, computed once per SetPlans/SetCurrent/Clear/resize/font
  /// change.
  struct Layout {
    QSize size;
    ChartLegend legend;
    ChartAxis x, y;
    std::vector<QPointF> positions;      ///< per point of points_
    QPolygonF line;                      ///< through the points in wall-time order
    std::optional<QPointF> current;      ///< the current plan's diamond
    std::optional<QLineF> current_band;  ///< its error band's whisker
    std::vector<Label> labels;
  };

  const Layout& CurrentLayout() const;
  void Invalidate();
  /// The index in points_ of the point within reach of `pos`, the nearest; -1 when none.
  int DrawnPointAt(const QPointF& pos) const;

  std::vector<Point> points_;
  std::vector<int> point_of_front_;  ///< per plan of the front: index in points_, or -1
  struct Current {
    double wall_s = 0, cost_usd = 0;
    double low_factor = 1, high_factor = 1;
  };
  std::optional<Current> current_;
  QString reason_;    ///< shown when no point is drawn
  int pressed_ = -1;  ///< front index under the last left press, or -1
  mutable std::optional<Layout> layout_;
};

}  // namespace gpuplan
