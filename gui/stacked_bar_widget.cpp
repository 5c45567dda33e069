#include "gui/stacked_bar_widget.h"

#include <QEvent>
#include <QPainter>
#include <QSizePolicy>
#include <cmath>
#include <limits>
#include <utility>

namespace gpuplan {

StackedBarWidget::StackedBarWidget(QWidget* parent) : QWidget(parent) {
  QSizePolicy policy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  policy.setHeightForWidth(true);
  setSizePolicy(policy);
  setAttribute(Qt::WA_OpaquePaintEvent);
}

QSize StackedBarWidget::sizeHint() const { return QSize(360, heightForWidth(360)); }

QSize StackedBarWidget::minimumSizeHint() const {
  return QSize(160, heightForWidth(std::numeric_limits<int>::max() / 2));
}

int StackedBarWidget::heightForWidth(int width) const {
  const double inner = static_cast<double>(width) - 2 * kChartPadding;
  return static_cast<int>(
      std::ceil(StackedBar::HeightFor(parts_, inner, QFontMetricsF(font())) + 2 * kChartPadding));
}

void StackedBarWidget::SetParts(std::vector<BarPart> parts) {
  parts_ = std::move(parts);
  Invalidate();
}

QRectF StackedBarWidget::Bounds() const {
  return QRectF(rect()).adjusted(kChartPadding, kChartPadding, -kChartPadding, -kChartPadding);
}

void StackedBarWidget::Invalidate() {
  DropLayout();
  updateGeometry();
  update();
}

void StackedBarWidget::PaintCleared(QPainter& painter, const QRectF& track, const QString& reason) {
  painter.fillRect(track, kEmptyTrack);
  PaintPlaceholder(painter, track, reason);
}

void StackedBarWidget::changeEvent(QEvent* event) {
  if (event->type() == QEvent::FontChange) Invalidate();
  QWidget::changeEvent(event);
}

void StackedBarWidget::resizeEvent(QResizeEvent* event) {
  DropLayout();
  QWidget::resizeEvent(event);
}

}  // namespace gpuplan
