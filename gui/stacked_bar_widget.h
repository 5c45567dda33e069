// What the short bar widgets (MemoryBar, BreakdownBar) share: a StackedBar (status line, bar,
// legend) whose height follows the widget's width, laid out again only after a change, a resize
// or a font change, and an empty grey track with a reason when nothing is shown.
#pragma once

#include <QColor>
#include <QRectF>
#include <QSize>
#include <QString>
#include <QWidget>
#include <vector>

#include "gui/chart_paint.h"

class QPainter;

namespace gpuplan {

class StackedBarWidget : public QWidget {
  Q_OBJECT

 public:
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;
  /// Status line, bar and the legend rows of parts() at `width` pixels, with the padding.
  int heightForWidth(int width) const override;

 protected:
  /// Expanding width, fixed height that follows the width; opaque painting.
  explicit StackedBarWidget(QWidget* parent);

  /// The parts of the value shown (or last shown: a cleared bar keeps their height, so the
  /// layout does not jump while the user types). Calls Invalidate().
  void SetParts(std::vector<BarPart> parts);
  const std::vector<BarPart>& parts() const { return parts_; }
  /// The widget's rectangle inside the chart padding: where the StackedBar is laid out.
  QRectF Bounds() const;
  /// Drops the subclass's layout (DropLayout) and asks for a new geometry and a repaint.
  void Invalidate();
  /// The subclass forgets its cached layout; the next paint or tooltip lays it out again.
  virtual void DropLayout() = 0;
  /// The light grey of an empty track (the cleared state, unused memory).
  static constexpr QColor kEmptyTrack{0xee, 0xee, 0xee};
  /// The cleared state: `track` (the bar's place) in kEmptyTrack with `reason` as grey text.
  static void PaintCleared(QPainter& painter, const QRectF& track, const QString& reason);

  void changeEvent(QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  std::vector<BarPart> parts_;
};

}  // namespace gpuplan
