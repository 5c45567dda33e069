#include "gui/breakdown_bar.h"

#include <QEvent>
#include <QHelpEvent>
#include <QPainter>
#include <cmath>
#include <vector>

#include "planner/chart_series.h"
#include "planner/units_format.h"

namespace gpuplan {

BreakdownBar::BreakdownBar(QWidget* parent) : StackedBarWidget(parent) {}

void BreakdownBar::SetBreakdown(const TimeBreakdown& breakdown_s) {
  double total_s = 0;
  for (const TimePart& part : kTimeParts) {
    const double seconds = breakdown_s.*part.seconds;
    if (std::isfinite(seconds) && seconds > 0) total_s += seconds;
  }
  if (!(total_s > 0) || !std::isfinite(total_s)) {
    Clear(tr("no step time"));
    return;
  }
  shown_ = true;
  total_s_ = total_s;
  reason_.clear();
  status_ = tr("step time %1").arg(ToQ(FormatDuration(total_s)));
  std::vector<BarPart> parts;
  for (const TimePart& part : kTimeParts) {
    const double seconds = breakdown_s.*part.seconds;
    const QString label = QString::fromUtf8(part.label);
    const QString share = ToQ(FormatPercent(seconds / total_s));
    parts.push_back(
        {label + ' ' + share, ChartColor(part.color), seconds,
         QStringLiteral("%1: %2 (%3)").arg(label, ToQ(FormatDuration(seconds)), share)});
  }
  SetParts(std::move(parts));
}

void BreakdownBar::Clear(const QString& reason) {
  shown_ = false;
  reason_ = reason;
  Invalidate();
}

const BreakdownBar::Layout& BreakdownBar::CurrentLayout() const {
  if (layout_ && layout_->size == size()) return *layout_;
  const QFontMetricsF metrics(font());
  layout_ = Layout{size(), shown_ ? StackedBar(parts(), total_s_, Bounds(), metrics)
                                  : StackedBar({}, 1, Bounds(), metrics)};
  return *layout_;
}

bool BreakdownBar::event(QEvent* event) {
  if (event->type() != QEvent::ToolTip) return QWidget::event(event);
  auto* help = static_cast<QHelpEvent*>(event);
  ShowChartToolTip(help, this, shown_ ? CurrentLayout().bar.ToolTipAt(help->pos()) : QString());
  return true;
}

void BreakdownBar::paintEvent(QPaintEvent*) {
  const Layout& l = CurrentLayout();
  QPainter painter(this);
  PaintChartBackground(painter, rect());
  if (!shown_) {
    PaintCleared(painter, l.bar.track_rect(), reason_);
    return;
  }
  l.bar.Paint(painter);
  painter.setPen(kChartInk);
  PaintText(painter, l.bar.status_rect().topLeft(), status_, Qt::AlignLeft | Qt::AlignTop);
}

}  // namespace gpuplan
