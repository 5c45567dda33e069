#include "gui/scaling_chart.h"

#include <QEvent>
#include <QHelpEvent>
#include <QPainter>
#include <QSizePolicy>
#include <algorithm>
#include <cmath>
#include <limits>

#include "common/str_format.h"
#include "planner/chart_series.h"
#include "planner/svg_chart.h"
#include "planner/units_format.h"

namespace gpuplan {
namespace {

constexpr double kScalingPointRadius = 4;
constexpr double kCurrentPointRadius = 5.5;
// Share of the plots' height the cost strip takes.
constexpr double kStripShare = 0.3;

QColor SpeedupColor() { return ChartColor(kChartPalette[0]); }
QColor EfficiencyColor() { return ChartColor(kChartPalette[4]); }
QColor CostColor() { return ChartColor(kChartPalette[1]); }
QColor CurrentBandColor() {
  QColor c = ChartColor(kChartPalette[5]);
  c.setAlpha(70);
  return c;
}

}  // namespace

ScalingChart::ScalingChart(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  setAttribute(Qt::WA_OpaquePaintEvent);
}

void ScalingChart::SetRows(const std::vector<ScalingRow>& rows, int64_t current_gpus) {
  rows_.clear();
  base_gpus_ = 0;
  current_gpus_ = current_gpus;
  for (const ScalingRow& r : rows) {
    if (r.gpus > 0 && r.feasible && std::isfinite(r.speedup) && r.speedup > 0) {
      base_gpus_ = static_cast<double>(r.gpus);
      break;
    }
  }
  for (const ScalingRow& r : rows) {
    if (r.gpus <= 0) continue;
    Row row;
    row.gpus = static_cast<double>(r.gpus);
    row.fits = r.feasible;
    row.plotted = r.feasible && std::isfinite(r.speedup) && r.speedup > 0;
    const QString gpus =
        tr("%1 %2").arg(ToQ(FormatCount(row.gpus)), ToQ(Noun(r.gpus, "GPU", "GPUs"))) +
        (r.gpus == current_gpus ? tr(" (current)") : QString());
    if (!r.feasible) {
      row.tooltip = gpus + tr(": does not fit in memory");
      rows_.push_back(row);
      continue;
    }
    row.speedup = r.speedup;
    row.efficiency = r.scaling_efficiency;
    row.cost_usd = r.plan.econ.expected_cost_usd;
    const bool banded = r.plan.band.runs > 0;
    row.cost_low_usd = row.cost_usd * (banded ? r.plan.band.low_factor : 1.0);
    row.cost_high_usd = row.cost_usd * (banded ? r.plan.band.high_factor : 1.0);
    const QString speedup =
        row.plotted ? tr("%1x over %2 %3")
                          .arg(ToQ(FormatFixed(r.speedup, 2)), ToQ(FormatCount(base_gpus_)),
                               ToQ(Noun(base_gpus_, "GPU", "GPUs")))
                    : tr("n/a");
    const PlanEconomics& e = r.plan.econ;
    const QString cost = std::isfinite(row.cost_usd) && row.cost_usd > 0
                             ? tr("%1 at %2, %3/GPU-h")
                                   .arg(ToQ(FormatUsd(row.cost_usd)), ToQ(e.provider),
                                        ToQ(FormatUsd(e.usd_per_gpu_hour)))
                             : tr("no price known");
    row.tooltip = gpus + '\n' + tr("speedup: %1").arg(speedup) + '\n' +
                  tr("scaling efficiency: %1").arg(ToQ(FormatPercent(r.scaling_efficiency))) +
                  '\n' + tr("expected wall time: %1").arg(ToQ(FormatDuration(e.expected_wall_s))) +
                  '\n' + tr("expected cost: %1").arg(cost);
    if (!r.superlinear_reason.empty()) {
      row.tooltip += '\n' + tr("superlinear: %1").arg(ToQ(r.superlinear_reason));
    }
    rows_.push_back(row);
  }
  if (rows_.empty()) {
    reason_ = tr("no scaling data");
  } else if (std::none_of(rows_.begin(), rows_.end(), [](const Row& r) { return r.fits; })) {
    reason_ = tr("does not fit in memory on %1 to %2 GPUs")
                  .arg(ToQ(FormatCount(rows_.front().gpus)), ToQ(FormatCount(rows_.back().gpus)));
  } else if (base_gpus_ == 0) {
    reason_ = tr("no speedup known");
  } else {
    reason_.clear();
  }
  Invalidate();
}

void ScalingChart::Clear(const QString& reason) {
  rows_.clear();
  base_gpus_ = 0;
  current_gpus_ = 0;
  reason_ = reason;
  Invalidate();
}

QSize ScalingChart::sizeHint() const { return QSize(520, 340); }

QSize ScalingChart::minimumSizeHint() const { return QSize(360, 240); }

void ScalingChart::Invalidate() {
  layout_.reset();
  update();
}

const ScalingChart::Layout& ScalingChart::CurrentLayout() const {
  if (layout_ && layout_->size == size()) return *layout_;
  Layout l;
  l.size = size();
  if (base_gpus_ == 0) {
    layout_ = std::move(l);
    return *layout_;
  }
  const QFontMetricsF metrics(font());
  const QRectF bounds =
      QRectF(rect()).adjusted(kChartPadding, kChartPadding, -kChartPadding, -kChartPadding);
  // Data ranges: every row on x; speedup, the ideal line, efficiency and cost of plotted rows.
  const Row* first = nullptr;
  const Row* last = nullptr;
  double gpus_lo = rows_.front().gpus, gpus_hi = gpus_lo,
         speedup_lo = std::numeric_limits<double>::infinity(), speedup_hi = 0, eff_hi = 1,
         cost_hi = 0;
  bool any_no_fit = false;
  for (const Row& r : rows_) {
    gpus_lo = std::min(gpus_lo, r.gpus);
    gpus_hi = std::max(gpus_hi, r.gpus);
    any_no_fit = any_no_fit || !r.fits;
    if (!r.plotted) continue;
    if (first == nullptr) first = &r;
    last = &r;
    speedup_lo = std::min(speedup_lo, r.speedup);
    speedup_hi = std::max(speedup_hi, r.speedup);
    if (std::isfinite(r.efficiency)) eff_hi = std::max(eff_hi, r.efficiency);
    if (std::isfinite(r.cost_usd)) cost_hi = std::max(cost_hi, r.cost_usd);
    if (std::isfinite(r.cost_high_usd)) cost_hi = std::max(cost_hi, r.cost_high_usd);
  }
  const double ideal_hi = first->speedup * last->gpus / first->gpus;
  speedup_hi = std::max(speedup_hi, ideal_hi);
  const bool has_cost = cost_hi > 0;
  const double x_lo = gpus_lo / 1.5, x_hi = gpus_hi * 1.5;
  const double current = static_cast<double>(current_gpus_);
  const bool has_current = current_gpus_ > 0 && current >= x_lo && current <= x_hi;

  std::vector<LegendEntry> legend = {
      {tr("speedup"), SpeedupColor(), LegendEntry::Swatch::kLine, {}},
      {tr("ideal"), ChartColor(kChartIdeal), LegendEntry::Swatch::kDashedLine, {}},
      {tr("efficiency"), EfficiencyColor(), LegendEntry::Swatch::kLine, {}}};
  if (has_cost) legend.push_back({tr("cost to train"), CostColor(), LegendEntry::Swatch::kBox, {}});
  if (any_no_fit) {
    legend.push_back({tr("does not fit"), kChartDoesNotFit, LegendEntry::Swatch::kCross, {}});
  }
  if (has_current) {
    legend.push_back({tr("current"), CurrentBandColor(), LegendEntry::Swatch::kBox, {}});
  }
  l.legend = ChartLegend(std::move(legend), bounds.topLeft(), bounds.width(), metrics);

  l.x = ChartAxis(AxisSide::kBottom, x_lo, x_hi, true, PowerTicks(x_lo, x_hi, 2, 12), FormatCount,
                  tr("GPUs (log2 scale)"), metrics);
  const double s_lo = speedup_lo / 1.5, s_hi = speedup_hi * 1.5;
  l.speedup = ChartAxis(AxisSide::kLeft, s_lo, s_hi, true, PowerTicks(s_lo, s_hi, 2, 6),
                        SpeedupTickLabel, tr("speedup (log2 scale)"), metrics);
  const double e_hi = eff_hi * 1.1;
  l.efficiency = ChartAxis(AxisSide::kRight, 0, e_hi, false, LinearTicks(0, e_hi, 4),
                           PercentTickLabel, tr("scaling efficiency (%)"), metrics);
  const double c_hi = NiceCeiling(cost_hi * 1.1);
  l.cost = ChartAxis(AxisSide::kLeft, 0, c_hi, false, LinearTicks(0, c_hi, 2), UsdTickLabel,
                     tr("cost (USD)"), metrics);

  const double left = std::max(l.speedup.Extent(), has_cost ? l.cost.Extent() : 0.0);
  const QRectF plots(
      QPointF(bounds.left() + left, bounds.top() + l.legend.Height() + 2 * kChartPadding),
      QPointF(bounds.right() - l.efficiency.Extent(), bounds.bottom() - l.x.Extent()));
  l.main = plots;
  if (has_cost) {
    l.strip = QRectF(QPointF(plots.left(), plots.bottom() - kStripShare * plots.height()),
                     plots.bottomRight());
    l.main.setBottom(l.strip.top() - metrics.height());
  }
  l.x.Place(plots, true);
  l.speedup.Place(l.main, true);
  l.efficiency.Place(l.main, false);
  l.cost.Place(l.strip, true);

  // Rows: x pixels, hover reach and bar width from the spacing of neighbouring GPU counts.
  double spacing = plots.width() / 4;
  for (size_t i = 1; i < rows_.size(); ++i) {
    spacing = std::min(spacing, l.x.Map(rows_[i].gpus) - l.x.Map(rows_[i - 1].gpus));
  }
  l.hover_radius = std::max(spacing / 2, 6.0);
  l.hover_area = QRectF(QPointF(plots.left() - l.hover_radius, l.main.top()),
                        QPointF(plots.right() + l.hover_radius, plots.bottom()));
  const double bar_w = std::clamp(0.6 * spacing, 3.0, 28.0);
  QPolygonF speedup_run, efficiency_run;
  const auto end_run = [](QPolygonF& run, std::vector<QPolygonF>& runs) {
    if (run.size() > 1) runs.push_back(run);
    run.clear();
  };
  for (const Row& r : rows_) {
    Layout::Marks m;
    m.x = l.x.Map(r.gpus);
    if (!r.fits) m.no_fit = QPointF(m.x, l.main.bottom() - kScalingPointRadius - 3);
    if (r.plotted) {
      m.speedup = QPointF(m.x, l.speedup.Map(r.speedup));
      speedup_run << *m.speedup;
      if (std::isfinite(r.efficiency)) m.efficiency = QPointF(m.x, l.efficiency.Map(r.efficiency));
      if (has_cost && std::isfinite(r.cost_usd) && r.cost_usd > 0) {
        m.cost_bar = QRectF(QPointF(m.x - bar_w / 2, l.cost.Map(r.cost_usd)),
                            QPointF(m.x + bar_w / 2, l.strip.bottom()));
        if (r.cost_low_usd < r.cost_high_usd) {
          m.cost_band = QLineF(m.x, l.cost.Map(r.cost_low_usd), m.x, l.cost.Map(r.cost_high_usd));
        }
      }
    } else {
      end_run(speedup_run, l.speedup_runs);
    }
    if (m.efficiency) {
      efficiency_run << *m.efficiency;
    } else {
      end_run(efficiency_run, l.efficiency_runs);
    }
    l.marks.push_back(m);
  }
  end_run(speedup_run, l.speedup_runs);
  end_run(efficiency_run, l.efficiency_runs);
  l.ideal = QLineF(l.x.Map(first->gpus), l.speedup.Map(first->speedup), l.x.Map(last->gpus),
                   l.speedup.Map(ideal_hi));
  if (has_current) {
    const double w = std::max(bar_w + 10, 14.0), x = l.x.Map(current);
    l.current_band = QRectF(QPointF(x - w / 2, l.main.top()), QPointF(x + w / 2, plots.bottom()));
  }
  layout_ = std::move(l);
  return *layout_;
}

int ScalingChart::RowAt(const QPointF& pos) const {
  const Layout& l = CurrentLayout();
  if (!l.hover_area.contains(pos)) return -1;
  int best = -1;
  double best_dx = l.hover_radius;
  for (size_t i = 0; i < l.marks.size(); ++i) {
    const double dx = std::abs(pos.x() - l.marks[i].x);
    if (dx <= best_dx) {
      best_dx = dx;
      best = static_cast<int>(i);
    }
  }
  return best;
}

bool ScalingChart::event(QEvent* event) {
  if (event->type() != QEvent::ToolTip) return QWidget::event(event);
  auto* help = static_cast<QHelpEvent*>(event);
  const int row = RowAt(help->pos());
  ShowChartToolTip(help, this, row >= 0 ? rows_[static_cast<size_t>(row)].tooltip : QString());
  return true;
}

void ScalingChart::changeEvent(QEvent* event) {
  if (event->type() == QEvent::FontChange) Invalidate();
  QWidget::changeEvent(event);
}

void ScalingChart::resizeEvent(QResizeEvent* event) {
  layout_.reset();
  QWidget::resizeEvent(event);
}

void ScalingChart::paintEvent(QPaintEvent*) {
  const Layout& l = CurrentLayout();
  QPainter painter(this);
  PaintChartBackground(painter, rect());
  if (base_gpus_ == 0) {
    PaintPlaceholder(
        painter,
        QRectF(rect()).adjusted(kChartPadding, kChartPadding, -kChartPadding, -kChartPadding),
        reason_);
    return;
  }
  painter.fillRect(l.current_band, CurrentBandColor());
  l.x.PaintGrid(painter);
  l.speedup.PaintGrid(painter);
  if (!l.strip.isEmpty()) l.cost.PaintGrid(painter);
  for (const Layout::Marks& m : l.marks) painter.fillRect(m.cost_bar, CostColor());
  // Each cost's 80% error band as a whisker with caps (docs/GUI.md).
  painter.setPen(QPen(kChartInk, 1.5));
  for (const Layout::Marks& m : l.marks) {
    if (!m.cost_band) continue;
    painter.drawLine(*m.cost_band);
    for (const QPointF& end : {m.cost_band->p1(), m.cost_band->p2()}) {
      painter.drawLine(QLineF(end.x() - 4, end.y(), end.x() + 4, end.y()));
    }
  }
  QPen ideal(ChartColor(kChartIdeal), 2);
  ideal.setDashPattern({3, 2});
  painter.setPen(ideal);
  painter.drawLine(l.ideal);
  painter.setPen(QPen(SpeedupColor(), 2));
  for (const QPolygonF& run : l.speedup_runs) painter.drawPolyline(run);
  painter.setPen(QPen(EfficiencyColor(), 2));
  for (const QPolygonF& run : l.efficiency_runs) painter.drawPolyline(run);
  for (size_t i = 0; i < rows_.size(); ++i) {
    const Layout::Marks& m = l.marks[i];
    const double r = rows_[i].gpus == static_cast<double>(current_gpus_) ? kCurrentPointRadius
                                                                         : kScalingPointRadius;
    if (m.speedup) PaintMarker(painter, *m.speedup, r, MarkerShape::kCircle, SpeedupColor());
    if (m.efficiency) {
      PaintMarker(painter, *m.efficiency, r, MarkerShape::kCircle, EfficiencyColor());
    }
    if (m.no_fit)
      PaintMarker(painter, *m.no_fit, kScalingPointRadius, MarkerShape::kCross, kChartDoesNotFit);
  }
  l.x.Paint(painter);
  l.speedup.Paint(painter);
  l.efficiency.Paint(painter);
  if (!l.strip.isEmpty()) l.cost.Paint(painter);
  l.legend.Paint(painter);
}

}  // namespace gpuplan
