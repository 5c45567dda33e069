#include "gui/chart_paint.h"

#include <QHelpEvent>
#include <QPainter>
#include <QPolygonF>
#include <QToolTip>
#include <QWidget>
#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

namespace gpuplan {
namespace {

constexpr double kTickLength = 5;
constexpr double kLabelGap = 3;  // between a tick mark and its label, a label and a title
constexpr double kLegendGap = 14;
constexpr double kLegendRowGap = 2;
constexpr double kSwatchGap = 5;
constexpr double kSwatchMarkerRadius = 4.5;

// Width in pixels of a legend swatch.
double SwatchWidth(LegendEntry::Swatch swatch) {
  return swatch == LegendEntry::Swatch::kLine || swatch == LegendEntry::Swatch::kDashedLine ? 18
                                                                                            : 10;
}

void PaintSwatch(QPainter& painter, const LegendEntry& entry, const QPointF& left_centre) {
  const double w = SwatchWidth(entry.swatch);
  const QPointF centre(left_centre.x() + w / 2, left_centre.y());
  switch (entry.swatch) {
    case LegendEntry::Swatch::kBox:
      painter.fillRect(QRectF(left_centre.x(), left_centre.y() - 5, 10, 10), entry.color);
      break;
    case LegendEntry::Swatch::kLine:
    case LegendEntry::Swatch::kDashedLine: {
      QPen pen(entry.color, 2);
      if (entry.swatch == LegendEntry::Swatch::kDashedLine) pen.setDashPattern({3, 2});
      painter.setPen(pen);
      painter.drawLine(QPointF(left_centre.x(), centre.y()),
                       QPointF(left_centre.x() + w, centre.y()));
      break;
    }
    case LegendEntry::Swatch::kCircle:
    case LegendEntry::Swatch::kDiamond:
    case LegendEntry::Swatch::kCross: {
      const MarkerShape shape = entry.swatch == LegendEntry::Swatch::kCircle ? MarkerShape::kCircle
                                : entry.swatch == LegendEntry::Swatch::kDiamond
                                    ? MarkerShape::kDiamond
                                    : MarkerShape::kCross;
      PaintMarker(painter, centre, kSwatchMarkerRadius, shape, entry.color);
      break;
    }
  }
}

}  // namespace

QColor ChartColor(const char* hex) { return QColor::fromString(hex); }

void PaintChartBackground(QPainter& painter, const QRectF& rect) {
  painter.setRenderHint(QPainter::Antialiasing);
  painter.fillRect(rect, Qt::white);
}

void PaintPlaceholder(QPainter& painter, const QRectF& rect, const QString& text) {
  painter.setPen(kChartMuted);
  painter.drawText(rect, Qt::AlignCenter | Qt::TextWordWrap, text);
}

void PaintText(QPainter& painter, const QPointF& anchor, const QString& text,
               Qt::Alignment alignment) {
  // A rectangle far larger than any text, positioned so that the alignment puts the text's
  // edge or centre on the anchor.
  constexpr double kBig = 10000;
  double x = anchor.x() - kBig / 2, y = anchor.y() - kBig / 2;
  if (alignment & Qt::AlignLeft) x = anchor.x();
  if (alignment & Qt::AlignRight) x = anchor.x() - kBig;
  if (alignment & Qt::AlignTop) y = anchor.y();
  if (alignment & Qt::AlignBottom) y = anchor.y() - kBig;
  painter.drawText(QRectF(x, y, kBig, kBig), static_cast<int>(alignment) | Qt::TextDontClip, text);
}

void PaintMarker(QPainter& painter, const QPointF& center, double radius, MarkerShape shape,
                 const QColor& color) {
  switch (shape) {
    case MarkerShape::kCircle:
      painter.setPen(QPen(Qt::white, 1.5));
      painter.setBrush(color);
      painter.drawEllipse(center, radius, radius);
      break;
    case MarkerShape::kDiamond: {
      const double r = radius * kDiamondReach;
      painter.setPen(QPen(Qt::white, 1.5));
      painter.setBrush(color);
      painter.drawPolygon(QPolygonF({center + QPointF(0, -r), center + QPointF(r, 0),
                                     center + QPointF(0, r), center + QPointF(-r, 0)}));
      break;
    }
    case MarkerShape::kCross: {
      const double r = radius * 0.8;
      painter.setPen(QPen(color, 2, Qt::SolidLine, Qt::RoundCap));
      painter.drawLine(center + QPointF(-r, -r), center + QPointF(r, r));
      painter.drawLine(center + QPointF(-r, r), center + QPointF(r, -r));
      break;
    }
  }
  painter.setBrush(Qt::NoBrush);
}

void ShowChartToolTip(QHelpEvent* event, QWidget* widget, const QString& text) {
  if (text.isEmpty()) {
    QToolTip::hideText();
    event->ignore();
  } else {
    QToolTip::showText(event->globalPos(), text, widget);
  }
}

// ---- ChartAxis -------------------------------------------------------------------------------

ChartAxis::ChartAxis(AxisSide side, double lo, double hi, bool log,
                     const std::vector<double>& ticks,
                     const std::function<std::string(double)>& label, const QString& title,
                     const QFontMetricsF& metrics)
    : side_(side),
      scale_{lo, hi, 0, 1, log},
      metrics_(metrics),
      ticks_(ticks),
      shown_(ticks.size(), true),
      title_(title) {
  for (double t : ticks_) {
    labels_.push_back(ToQ(label(t)));
    label_extent_ = std::max(label_extent_, side_ == AxisSide::kBottom
                                                ? metrics_.height()
                                                : metrics_.horizontalAdvance(labels_.back()));
  }
}

double ChartAxis::Extent() const {
  return kTickLength + kLabelGap + label_extent_ + 2 * kLabelGap + metrics_.height();
}

double ChartAxis::Overhang() const {
  if (side_ != AxisSide::kBottom) return 0;
  double widest = 0;
  for (const QString& l : labels_) widest = std::max(widest, metrics_.horizontalAdvance(l));
  return widest / 2;
}

void ChartAxis::Place(const QRectF& plot, bool grid) {
  const bool bottom = side_ == AxisSide::kBottom;
  scale_.px_lo = bottom ? plot.left() : plot.bottom();
  scale_.px_hi = bottom ? plot.right() : plot.top();
  position_ = side_ == AxisSide::kBottom ? plot.bottom()
              : side_ == AxisSide::kLeft ? plot.left()
                                         : plot.right();
  grid_length_ = grid ? (bottom ? plot.height() : plot.width()) : 0;
  grid_sign_ = side_ == AxisSide::kLeft ? 1 : -1;
  shown_title_ =
      metrics_.horizontalAdvance(title_) <= (bottom ? plot.width() : plot.height()) ? title_ : "";
  if (!bottom) return;
  double right_of_last = -1e300;
  for (size_t i = 0; i < ticks_.size(); ++i) {
    const double half = metrics_.horizontalAdvance(labels_[i]) / 2;
    const double x = scale_(ticks_[i]);
    shown_[i] = x - half >= right_of_last + 2 * kLabelGap;
    if (shown_[i]) right_of_last = x + half;
  }
}

void ChartAxis::PaintGrid(QPainter& painter) const {
  if (grid_length_ <= 0) return;
  painter.setPen(QPen(kChartGrid, 1));
  for (double t : ticks_) {
    const double p = scale_(t);
    if (side_ == AxisSide::kBottom) {
      painter.drawLine(QPointF(p, position_), QPointF(p, position_ - grid_length_));
    } else {
      painter.drawLine(QPointF(position_, p), QPointF(position_ + grid_sign_ * grid_length_, p));
    }
  }
}

void ChartAxis::Paint(QPainter& painter) const {
  painter.setPen(QPen(kChartInk, 1));
  const bool bottom = side_ == AxisSide::kBottom;
  if (bottom) {
    painter.drawLine(QPointF(scale_.px_lo, position_), QPointF(scale_.px_hi, position_));
  } else {
    painter.drawLine(QPointF(position_, scale_.px_lo), QPointF(position_, scale_.px_hi));
  }
  const double out = side_ == AxisSide::kLeft ? -1 : 1;  // away from the plot
  for (size_t i = 0; i < ticks_.size(); ++i) {
    const double p = scale_(ticks_[i]);
    if (bottom) {
      painter.drawLine(QPointF(p, position_), QPointF(p, position_ + kTickLength));
      if (shown_[i]) {
        PaintText(painter, QPointF(p, position_ + kTickLength + kLabelGap), labels_[i],
                  Qt::AlignHCenter | Qt::AlignTop);
      }
    } else {
      painter.drawLine(QPointF(position_, p), QPointF(position_ + out * kTickLength, p));
      PaintText(painter, QPointF(position_ + out * (kTickLength + kLabelGap), p), labels_[i],
                (side_ == AxisSide::kLeft ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter);
    }
  }
  // The title, centred along the axis beyond the labels; rotated beside a vertical axis.
  const double offset =
      kTickLength + kLabelGap + label_extent_ + 2 * kLabelGap + metrics_.height() / 2;
  const double middle = (scale_.px_lo + scale_.px_hi) / 2;
  painter.save();
  if (bottom) {
    painter.translate(middle, position_ + offset);
  } else {
    painter.translate(position_ + out * offset, middle);
    painter.rotate(side_ == AxisSide::kLeft ? -90 : 90);
  }
  PaintText(painter, QPointF(0, 0), shown_title_, Qt::AlignCenter);
  painter.restore();
}

// ---- ChartLegend -----------------------------------------------------------------------------

ChartLegend::ChartLegend(std::vector<LegendEntry> entries, const QPointF& top_left, double width,
                         const QFontMetricsF& metrics)
    : entries_(std::move(entries)) {
  const double row_height = std::max(metrics.height(), 12.0);
  double x = top_left.x(), y = top_left.y();
  for (const LegendEntry& e : entries_) {
    const double swatch = SwatchWidth(e.swatch) + kSwatchGap;
    QString label = e.label;
    double w = swatch + metrics.horizontalAdvance(label);
    if (x > top_left.x() && x + w > top_left.x() + width) {
      x = top_left.x();
      y += row_height + kLegendRowGap;
    }
    if (w > width) {
      label = metrics.elidedText(label, Qt::ElideRight, std::max(0.0, width - swatch));
      w = width;
    }
    boxes_.push_back(QRectF(x, y, w, row_height));
    shown_.push_back(label);
    x += w + kLegendGap;
  }
  height_ = entries_.empty() ? 0 : y + row_height - top_left.y();
}

void ChartLegend::Paint(QPainter& painter) const {
  for (size_t i = 0; i < entries_.size(); ++i) {
    const QRectF& box = boxes_[i];
    PaintSwatch(painter, entries_[i], QPointF(box.left(), box.center().y()));
    painter.setPen(kChartInk);
    PaintText(painter,
              QPointF(box.left() + SwatchWidth(entries_[i].swatch) + kSwatchGap, box.center().y()),
              shown_[i], Qt::AlignLeft | Qt::AlignVCenter);
  }
}

QString ChartLegend::ToolTipAt(const QPointF& pos) const {
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (boxes_[i].contains(pos)) return entries_[i].tooltip;
  }
  return {};
}

// ---- StackedBar ------------------------------------------------------------------------------

namespace {

// The bar's height for a font: a little more than a text line.
double BarHeight(const QFontMetricsF& metrics) { return std::round(metrics.height() * 1.2); }

std::vector<LegendEntry> LegendOf(const std::vector<BarPart>& parts) {
  std::vector<LegendEntry> entries;
  for (const BarPart& p : parts) {
    entries.push_back({p.legend_label, p.color, LegendEntry::Swatch::kBox, p.tooltip});
  }
  return entries;
}

bool Drawable(const BarPart& part) { return std::isfinite(part.value) && part.value > 0; }

}  // namespace

StackedBar::StackedBar(std::vector<BarPart> parts, double scale_max, const QRectF& bounds,
                       const QFontMetricsF& metrics) {
  std::copy_if(parts.begin(), parts.end(), std::back_inserter(parts_), Drawable);
  status_ = QRectF(bounds.left(), bounds.top(), bounds.width(), metrics.height());
  track_ = QRectF(std::round(bounds.left()), std::round(status_.bottom() + kLabelGap),
                  std::round(bounds.width()), BarHeight(metrics));
  scale_ = Scale{0, scale_max, track_.left(), track_.right(), false};
  double base = 0;
  for (const BarPart& p : parts_) {
    const double x0 = std::round(scale_(base)), x1 = std::round(scale_(base + p.value));
    segments_.push_back(QRectF(x0, track_.top(), x1 - x0, track_.height()));
    base += p.value;
  }
  legend_ = ChartLegend(LegendOf(parts_), QPointF(bounds.left(), track_.bottom() + kChartPadding),
                        bounds.width(), metrics);
}

double StackedBar::HeightFor(const std::vector<BarPart>& parts, double width,
                             const QFontMetricsF& metrics) {
  std::vector<BarPart> drawn;
  std::copy_if(parts.begin(), parts.end(), std::back_inserter(drawn), Drawable);
  const double legend = ChartLegend(LegendOf(drawn), QPointF(0, 0), width, metrics).Height();
  return metrics.height() + kLabelGap + BarHeight(metrics) +
         (legend > 0 ? kChartPadding + legend : 0);
}

void StackedBar::Paint(QPainter& painter) const {
  for (size_t i = 0; i < parts_.size(); ++i) painter.fillRect(segments_[i], parts_[i].color);
  legend_.Paint(painter);
}

QString StackedBar::ToolTipAt(const QPointF& pos) const {
  for (size_t i = 0; i < parts_.size(); ++i) {
    if (segments_[i].contains(pos)) return parts_[i].tooltip;
  }
  return legend_.ToolTipAt(pos);
}

}  // namespace gpuplan
