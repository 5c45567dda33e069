#include "gui/memory_bar.h"

#include <QEvent>
#include <QHelpEvent>
#include <QPainter>
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "planner/chart_series.h"
#include "planner/units_format.h"

namespace gpuplan {
namespace {

// Room beyond max(capacity, peak) on the scale, so the end of an overflow stays visible.
constexpr double kHeadroom = 1.05;
// How far the capacity marker reaches above and below the bar, and how near it a hover hits.
constexpr double kMarkerReach = 3;

QString Gb(double bytes) { return ToQ(FormatGb(bytes)); }

bool Showable(const MemoryBreakdown& m) {
  return std::isfinite(m.peak_bytes) && m.peak_bytes > 0 && std::isfinite(m.capacity_bytes) &&
         m.capacity_bytes >= 0;
}

}  // namespace

MemoryBar::MemoryBar(QWidget* parent) : StackedBarWidget(parent) {}

void MemoryBar::SetMemory(const MemoryBreakdown& memory, int64_t pipeline_stages) {
  if (!Showable(memory)) {
    Clear(tr("no memory estimate"));
    return;
  }
  memory_ = memory;
  pipeline_stages_ = pipeline_stages;
  reason_.clear();
  std::vector<BarPart> parts;
  for (const MemoryPart& part : kMemoryParts) {
    const double bytes = memory.*part.bytes;
    const QString label = QString::fromUtf8(part.label);
    parts.push_back({label + ' ' + Gb(bytes), ChartColor(part.color), bytes,
                     label + QStringLiteral(": ") + Gb(bytes)});
  }
  SetParts(std::move(parts));
}

void MemoryBar::Clear(const QString& reason) {
  memory_.reset();
  reason_ = reason;
  Invalidate();
}

bool MemoryBar::OverCapacity() const {
  return memory_ && memory_->peak_bytes > memory_->capacity_bytes;
}

QColor MemoryBar::OverCapacityColor() { return kChartDoesNotFit; }

const MemoryBar::Layout& MemoryBar::CurrentLayout() const {
  if (layout_ && layout_->size == size()) return *layout_;
  const QFontMetricsF metrics(font());
  const QRectF bounds = Bounds();
  Layout l;
  l.size = size();
  if (!memory_) {
    l.bar = StackedBar({}, 1, bounds, metrics);
    layout_ = std::move(l);
    return *layout_;
  }
  const MemoryBreakdown& m = *memory_;
  l.bar =
      StackedBar(parts(), std::max(m.capacity_bytes, m.peak_bytes) * kHeadroom, bounds, metrics);
  const QRectF& track = l.bar.track_rect();
  l.capacity_x = std::round(l.bar.Map(m.capacity_bytes));
  const double peak_x = std::round(l.bar.Map(m.peak_bytes));
  l.outline = QRectF(QPointF(track.left(), track.top()), QPointF(peak_x, track.bottom()));
  if (OverCapacity()) {
    l.overflow = QRectF(QPointF(l.capacity_x, track.top()), QPointF(peak_x, track.bottom()));
    l.status = tr("does not fit: %1 of %2").arg(Gb(m.peak_bytes), Gb(m.capacity_bytes));
  } else {
    l.free = QRectF(QPointF(peak_x, track.top()), QPointF(l.capacity_x, track.bottom()));
    l.status = tr("%1 of %2 (%3)")
                   .arg(Gb(m.peak_bytes), Gb(m.capacity_bytes),
                        ToQ(FormatPercent(m.peak_bytes / m.capacity_bytes)));
  }
  if (pipeline_stages_ > 1) {
    l.status += tr(", on pipeline stage %1 of %2").arg(m.peak_stage).arg(pipeline_stages_);
  }
  // The capacity label sits on the status line, centred on the marker but inside the widget,
  // and only where it leaves the status text readable.
  QFont bold = font();
  bold.setBold(OverCapacity());
  const double status_right =
      l.bar.status_rect().left() + QFontMetricsF(bold).horizontalAdvance(l.status);
  l.capacity_label = Gb(m.capacity_bytes);
  const double half = metrics.horizontalAdvance(l.capacity_label) / 2;
  const double centre =
      std::max(bounds.left() + half, std::min(l.capacity_x, bounds.right() - half));
  l.capacity_label_at = QPointF(centre, l.bar.status_rect().top());
  l.capacity_label_shown = centre - half > status_right + 2 * kChartPadding;
  layout_ = std::move(l);
  return *layout_;
}

bool MemoryBar::event(QEvent* event) {
  if (event->type() != QEvent::ToolTip) return QWidget::event(event);
  auto* help = static_cast<QHelpEvent*>(event);
  const Layout& l = CurrentLayout();
  const QPointF pos = help->pos();
  QString tip;
  if (memory_) {
    const QRectF& track = l.bar.track_rect();
    const bool on_bar_rows =
        pos.y() >= track.top() - kMarkerReach && pos.y() <= track.bottom() + kMarkerReach;
    tip = l.bar.ToolTipAt(pos);
    if (on_bar_rows && std::abs(pos.x() - l.capacity_x) <= kMarkerReach) {
      tip = tr("capacity: %1").arg(Gb(memory_->capacity_bytes));
    } else if (l.free.contains(pos)) {
      tip = tr("free: %1").arg(Gb(memory_->capacity_bytes - memory_->peak_bytes));
    } else if (l.overflow.contains(pos)) {
      tip +=
          '\n' + tr("over capacity by %1").arg(Gb(memory_->peak_bytes - memory_->capacity_bytes));
    }
  }
  ShowChartToolTip(help, this, tip);
  return true;
}

void MemoryBar::paintEvent(QPaintEvent*) {
  const Layout& l = CurrentLayout();
  QPainter painter(this);
  PaintChartBackground(painter, rect());
  const QRectF& track = l.bar.track_rect();
  if (!memory_) {
    PaintCleared(painter, track, reason_);
    return;
  }
  painter.fillRect(l.free, kEmptyTrack);
  l.bar.Paint(painter);
  const QColor red = OverCapacityColor();
  if (OverCapacity()) {
    painter.fillRect(l.overflow, QColor(255, 255, 255, 110));
    painter.fillRect(l.overflow, QBrush(red, Qt::BDiagPattern));
    painter.setPen(QPen(red, 2));
    painter.drawRect(l.outline);
  }
  painter.setPen(QPen(ChartColor(kChartCapacity), 2));
  painter.drawLine(QPointF(l.capacity_x, track.top() - kMarkerReach),
                   QPointF(l.capacity_x, track.bottom() + kMarkerReach));
  QFont status_font = font();
  status_font.setBold(OverCapacity());
  painter.setFont(status_font);
  painter.setPen(OverCapacity() ? red : kChartInk);
  PaintText(painter, l.bar.status_rect().topLeft(), l.status, Qt::AlignLeft | Qt::AlignTop);
  if (l.capacity_label_shown) {
    painter.setFont(font());
    painter.setPen(kChartInk);
    PaintText(painter, l.capacity_label_at, l.capacity_label, Qt::AlignHCenter | Qt::AlignTop);
  }
}

}  // namespace gpuplan
