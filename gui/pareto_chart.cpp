#include "gui/pareto_chart.h"

#include <QEvent>
#include <QFontMetricsF>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QSizePolicy>
#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

#include "planner/chart_series.h"
#include "planner/svg_chart.h"
#include "planner/units_format.h"

namespace gpuplan {
namespace {

constexpr double kParetoPointRadius = 4.5;
constexpr double kRecommendedRadius = 7;
constexpr double kCurrentRadius = 6;
// How far from a point a hover or click still hits it.
constexpr double kHitRadius = 8;

QColor PointColor() { return ChartColor(kChartPalette[0]); }
QColor RecommendedColor() { return ChartColor(kChartHighlight); }
QColor CurrentColor() { return ChartColor(kChartPalette[6]); }

bool Drawable(const Plan& p) {
  const PlanEconomics& e = p.econ;
  return e.usd_per_gpu_hour > 0 && std::isfinite(e.expected_wall_s) && e.expected_wall_s > 0 &&
         std::isfinite(e.expected_cost_usd);
}

}  // namespace

ParetoChart::ParetoChart(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  setAttribute(Qt::WA_OpaquePaintEvent);
  setMouseTracking(true);
}

void ParetoChart::SetPlans(const std::vector<Plan>& front, int recommended) {
  points_.clear();
  point_of_front_.assign(front.size(), -1);
  for (size_t i = 0; i < front.size(); ++i) {
    const Plan& plan = front[i];
    if (!Drawable(plan)) continue;
    const bool rec = static_cast<int>(i) == recommended;
    point_of_front_[i] = static_cast<int>(points_.size());
    points_.push_back({static_cast<int>(i), plan.econ.expected_wall_s, plan.econ.expected_cost_usd,
                       rec, ToQ(PlanPointLabel(plan)),
                       ToQ(PlanPointTooltip(plan)) + (rec ? '\n' + tr("recommended") : QString())});
  }
  reason_ = front.empty() ? tr("no Pareto front") : tr("no plan on the front has a known price");
  pressed_ = -1;
  Invalidate();
}

void ParetoChart::SetCurrent(double expected_wall_s, double expected_cost_usd, double low_factor,
                             double high_factor) {
  if (std::isfinite(expected_wall_s) && expected_wall_s > 0 && std::isfinite(expected_cost_usd) &&
      expected_cost_usd >= 0) {
    const bool band = std::isfinite(low_factor) && std::isfinite(high_factor) && low_factor > 0 &&
                      low_factor < high_factor;
    current_ = Current{expected_wall_s, expected_cost_usd, band ? low_factor : 1.0,
                       band ? high_factor : 1.0};
  } else {
    current_.reset();
  }
  Invalidate();
}

void ParetoChart::ClearCurrent() {
  current_.reset();
  Invalidate();
}

void ParetoChart::Clear(const QString& reason) {
  points_.clear();
  point_of_front_.clear();
  reason_ = reason;
  pressed_ = -1;
  Invalidate();
}

bool ParetoChart::HasPoint(int index) const {
  return index >= 0 && static_cast<size_t>(index) < point_of_front_.size() &&
         point_of_front_[static_cast<size_t>(index)] >= 0;
}

QPointF ParetoChart::PointPosition(int index) const {
  if (!HasPoint(index)) return QPointF(-1, -1);
  return CurrentLayout()
      .positions[static_cast<size_t>(point_of_front_[static_cast<size_t>(index)])];
}

int ParetoChart::PointAt(const QPointF& pos) const {
  const int drawn = DrawnPointAt(pos);
  return drawn < 0 ? -1 : points_[static_cast<size_t>(drawn)].front_index;
}

int ParetoChart::PointCount() const { return static_cast<int>(points_.size()); }

QSize ParetoChart::sizeHint() const { return QSize(520, 340); }

QSize ParetoChart::minimumSizeHint() const { return QSize(360, 240); }

void ParetoChart::Invalidate() {
  layout_.reset();
  update();
}

int ParetoChart::DrawnPointAt(const QPointF& pos) const {
  const Layout& l = CurrentLayout();
  int best = -1;
  double best_d = kHitRadius;
  for (size_t i = 0; i < l.positions.size(); ++i) {
    const double d = std::hypot(pos.x() - l.positions[i].x(), pos.y() - l.positions[i].y());
    if (d <= best_d) {
      best_d = d;
      best = static_cast<int>(i);
    }
  }
  return best;
}

const ParetoChart::Layout& ParetoChart::CurrentLayout() const {
  if (layout_ && layout_->size == size()) return *layout_;
  Layout l;
  l.size = size();
  if (points_.empty()) {
    layout_ = std::move(l);
    return *layout_;
  }
  const QFontMetricsF metrics(font());
  const QRectF bounds =
      QRectF(rect()).adjusted(kChartPadding, kChartPadding, -kChartPadding, -kChartPadding);
  double t_lo = points_.front().wall_s, t_hi = t_lo, cost_hi = 0;
  bool any_recommended = false;
  for (const Point& p : points_) {
    t_lo = std::min(t_lo, p.wall_s);
    t_hi = std::max(t_hi, p.wall_s);
    cost_hi = std::max(cost_hi, p.cost_usd);
    any_recommended = any_recommended || p.recommended;
  }
  if (current_) {
    t_lo = std::min(t_lo, current_->wall_s * current_->low_factor);
    t_hi = std::max(t_hi, current_->wall_s * current_->high_factor);
    cost_hi = std::max(cost_hi, current_->cost_usd * current_->high_factor);
  }

  std::vector<LegendEntry> legend = {
      {tr("Pareto-optimal plan"), PointColor(), LegendEntry::Swatch::kCircle, {}}};
  if (any_recommended) {
    legend.push_back({tr("recommended"), RecommendedColor(), LegendEntry::Swatch::kCircle, {}});
  }
  if (current_) {
    legend.push_back({tr("current plan"), CurrentColor(), LegendEntry::Swatch::kDiamond, {}});
  }
  l.legend = ChartLegend(std::move(legend), bounds.topLeft(), bounds.width(), metrics);

  const double x_lo = t_lo / 1.5, x_hi = t_hi * 1.5, y_hi = NiceCeiling(cost_hi * 1.1);
  l.x = ChartAxis(AxisSide::kBottom, x_lo, x_hi, true, DurationTicks(x_lo, x_hi), DurationTickLabel,
                  tr("expected wall time (log scale)"), metrics);
  l.y = ChartAxis(AxisSide::kLeft, 0, y_hi, false, LinearTicks(0, y_hi, 5), UsdTickLabel,
                  tr("expected cost (USD)"), metrics);
  const QRectF plot(
      QPointF(bounds.left() + l.y.Extent(), bounds.top() + l.legend.Height() + 2 * kChartPadding),
      QPointF(bounds.right() - std::max(l.x.Overhang(), kChartPadding),
              bounds.bottom() - l.x.Extent()));
  l.x.Place(plot, true);
  l.y.Place(plot, true);

  for (const Point& p : points_) l.positions.push_back({l.x.Map(p.wall_s), l.y.Map(p.cost_usd)});
  l.line = QPolygonF(QList<QPointF>(l.positions.begin(), l.positions.end()));
  std::sort(l.line.begin(), l.line.end(),
            [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
  if (current_) {
    l.current = QPointF(l.x.Map(current_->wall_s), l.y.Map(current_->cost_usd));
    if (current_->low_factor < current_->high_factor) {
      const Current& c = *current_;
      l.current_band =
          QLineF(l.x.Map(c.wall_s * c.low_factor), l.y.Map(c.cost_usd * c.low_factor),
                 l.x.Map(c.wall_s * c.high_factor), l.y.Map(c.cost_usd * c.high_factor));
    }
  }

  // PlaceLabels estimates text widths for a 12 px font; work in units scaled so that its
  // estimates are at least the real widths in this font, then scale its boxes back.
  QFont bold_font = font();
  bold_font.setBold(true);
  const QFontMetricsF bold_metrics(bold_font);
  std::vector<LabelRequest> requests;
  std::vector<QString> texts;
  std::vector<bool> bold;
  const auto request = [&](const QPointF& at, double radius, const QString& text, bool emphasis) {
    requests.push_back({at.x(), at.y(), radius + 1, text.toStdString(), emphasis});
    texts.push_back(text);
    bold.push_back(emphasis);
  };
  for (size_t i = 0; i < points_.size(); ++i) {
    const Point& p = points_[i];
    request(l.positions[i], p.recommended ? kRecommendedRadius : kParetoPointRadius, p.label,
            p.recommended);
  }
  if (l.current) request(*l.current, kCurrentRadius * kDiamondReach, tr("current"), false);
  double k = metrics.height() / 14;
  for (size_t i = 0; i < requests.size(); ++i) {
    const double real = (bold[i] ? bold_metrics : metrics).horizontalAdvance(texts[i]);
    k = std::max(k, real / EstimateTextWidth(requests[i].text, bold[i]));
  }
  for (LabelRequest& r : requests) {
    r.x /= k;
    r.y /= k;
    r.r /= k;
  }
  const std::vector<std::optional<PlacedLabel>> placed =
      PlaceLabels(requests, {plot.left() / k, plot.top() / k, plot.right() / k, plot.bottom() / k});
  for (size_t i = 0; i < placed.size(); ++i) {
    if (!placed[i]) continue;
    const Box& b = placed[i]->box;
    const std::string_view anchor = placed[i]->anchor;
    const Qt::Alignment h = anchor == "start" ? Qt::AlignLeft
                            : anchor == "end" ? Qt::AlignRight
                                              : Qt::AlignHCenter;
    l.labels.push_back({QRectF(QPointF(b.x0 * k, b.y0 * k), QPointF(b.x1 * k, b.y1 * k)),
                        h | Qt::AlignVCenter, texts[i], bold[i]});
  }
  layout_ = std::move(l);
  return *layout_;
}

bool ParetoChart::event(QEvent* event) {
  if (event->type() != QEvent::ToolTip) return QWidget::event(event);
  auto* help = static_cast<QHelpEvent*>(event);
  QString tip;
  const int drawn = DrawnPointAt(help->pos());
  const Layout& l = CurrentLayout();
  if (drawn >= 0) {
    tip = points_[static_cast<size_t>(drawn)].tooltip;
  } else if (l.current && QLineF(*l.current, help->pos()).length() <= kHitRadius) {
    tip = tr("current plan: %1, %2")
              .arg(ToQ(FormatDuration(current_->wall_s)), ToQ(FormatUsd(current_->cost_usd)));
  }
  ShowChartToolTip(help, this, tip);
  return true;
}

void ParetoChart::changeEvent(QEvent* event) {
  if (event->type() == QEvent::FontChange) Invalidate();
  QWidget::changeEvent(event);
}

void ParetoChart::resizeEvent(QResizeEvent* event) {
  layout_.reset();
  QWidget::resizeEvent(event);
}

void ParetoChart::mouseMoveEvent(QMouseEvent* event) {
  if (DrawnPointAt(event->position()) >= 0) {
    setCursor(Qt::PointingHandCursor);
  } else {
    unsetCursor();
  }
  QWidget::mouseMoveEvent(event);
}

void ParetoChart::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) {
    QWidget::mousePressEvent(event);
    return;
  }
  pressed_ = PointAt(event->position());
}

void ParetoChart::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) {
    QWidget::mouseReleaseEvent(event);
    return;
  }
  const int index = PointAt(event->position());
  const bool clicked = index >= 0 && index == pressed_;
  pressed_ = -1;
  if (clicked) emit PlanClicked(index);
}

void ParetoChart::paintEvent(QPaintEvent*) {
  const Layout& l = CurrentLayout();
  QPainter painter(this);
  PaintChartBackground(painter, rect());
  if (points_.empty()) {
    PaintPlaceholder(
        painter,
        QRectF(rect()).adjusted(kChartPadding, kChartPadding, -kChartPadding, -kChartPadding),
        reason_);
    return;
  }
  l.x.PaintGrid(painter);
  l.y.PaintGrid(painter);
  l.x.Paint(painter);
  l.y.Paint(painter);
  QPen dashed(ChartColor(kChartIdeal), 1.5);
  dashed.setDashPattern({4, 3});
  painter.setPen(dashed);
  painter.drawPolyline(l.line);
  // The recommendation last, on top of its neighbours.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < points_.size(); ++i) {
      if (points_[i].recommended != (pass == 1)) continue;
      PaintMarker(painter, l.positions[i], pass == 1 ? kRecommendedRadius : kParetoPointRadius,
                  MarkerShape::kCircle, pass == 1 ? RecommendedColor() : PointColor());
    }
  }
  if (l.current_band) {
    // The whisker: the band's segment with a short cap across each end, crisp (not antialiased)
    // so that it keeps the diamond's colour.
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing, false);
    painter.setPen(QPen(CurrentColor(), 2));
    painter.drawLine(*l.current_band);
    const QLineF cap = QLineF(*l.current_band).normalVector().unitVector();
    const QPointF half = (cap.p2() - cap.p1()) * 4.0;
    for (const QPointF& end : {l.current_band->p1(), l.current_band->p2()}) {
      painter.drawLine(QLineF(end - half, end + half));
    }
    painter.restore();
  }
  if (l.current)
    PaintMarker(painter, *l.current, kCurrentRadius, MarkerShape::kDiamond, CurrentColor());
  QFont label_font = font();
  painter.setPen(kChartInk);
  for (const Label& label : l.labels) {
    label_font.setBold(label.bold);
    painter.setFont(label_font);
    painter.drawText(label.box, static_cast<int>(label.alignment) | Qt::TextDontClip, label.text);
  }
  painter.setFont(font());
  l.legend.Paint(painter);
}

}  // namespace gpuplan
