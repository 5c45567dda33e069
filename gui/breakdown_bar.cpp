#include "gui/breakdown_bar.h"

#include <QEvent>
#include <QHelpEvent>
#include <QPainter>
#include <QSizePolicy>
#include <cmath>
#include <limits>

#include "planner/chart_series.h"
#include "planner/units_format.h"

namespace gpuplan {
namespace {

// The empty bar.
constexpr QColor kEmpty{0xee, 0xee, 0xee};

}  // namespace

BreakdownBar::BreakdownBar(QWidget* parent) : QWidget(parent) {
  QSizePolicy policy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  policy.setHeightForWidth(true);
  setSizePolicy(policy);
  setAttribute(Qt::WA_OpaquePaintEvent);
}

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
  parts_.clear();
  for (const TimePart& part : kTimeParts) {
    const double seconds = breakdown_s.*part.seconds;
    const QString label = QString::fromUtf8(part.label);
    const QString share = ToQ(FormatPercent(seconds / total_s));
    parts_.push_back(
        {label + ' ' + share, ChartColor(part.color), seconds,
         QStringLiteral("%1: %2 (%3)").arg(label, ToQ(FormatDuration(seconds)), share)});
  }
  Invalidate();
}

void BreakdownBar::Clear(const QString& reason) {
  shown_ = false;
  reason_ = reason;
  Invalidate();
}

QSize BreakdownBar::sizeHint() const { return QSize(360, heightForWidth(360)); }

QSize BreakdownBar::minimumSizeHint() const {
  return QSize(160, heightForWidth(std::numeric_limits<int>::max() / 2));
}

int BreakdownBar::heightForWidth(int width) const {
  const double inner = static_cast<double>(width) - 2 * kChartPadding;
  return static_cast<int>(
      std::ceil(StackedBar::HeightFor(parts_, inner, QFontMetricsF(font())) + 2 * kChartPadding));
}

void BreakdownBar::Invalidate() {
  layout_.reset();
  updateGeometry();
  update();
}

const BreakdownBar::Layout& BreakdownBar::CurrentLayout() const {
  if (layout_ && layout_->size == size()) return *layout_;
  const QRectF bounds =
      QRectF(rect()).adjusted(kChartPadding, kChartPadding, -kChartPadding, -kChartPadding);
  const QFontMetricsF metrics(font());
  layout_ = Layout{size(), shown_ ? StackedBar(parts_, total_s_, bounds, metrics)
                                  : StackedBar({}, 1, bounds, metrics)};
  return *layout_;
}

bool BreakdownBar::event(QEvent* event) {
  if (event->type() != QEvent::ToolTip) return QWidget::event(event);
  auto* help = static_cast<QHelpEvent*>(event);
  ShowChartToolTip(help, this, shown_ ? CurrentLayout().bar.ToolTipAt(help->pos()) : QString());
  return true;
}

void BreakdownBar::changeEvent(QEvent* event) {
  if (event->type() == QEvent::FontChange) Invalidate();
  QWidget::changeEvent(event);
}

void BreakdownBar::resizeEvent(QResizeEvent* event) {
  layout_.reset();
  QWidget::resizeEvent(event);
}

void BreakdownBar::paintEvent(QPaintEvent*) {
  const Layout& l = CurrentLayout();
  QPainter painter(this);
  PaintChartBackground(painter, rect());
  if (!shown_) {
    painter.fillRect(l.bar.track_rect(), kEmpty);
    PaintPlaceholder(painter, l.bar.track_rect(), reason_);
    return;
  }
  l.bar.Paint(painter);
  painter.setPen(kChartInk);
  PaintText(painter, l.bar.status_rect().topLeft(), status_, Qt::AlignLeft | Qt::AlignTop);
}

}  // namespace gpuplan
