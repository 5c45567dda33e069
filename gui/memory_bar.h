// MemoryBar: one GPU's memory at the step's peak as a horizontal stacked bar (weights,
// gradients, optimizer state, activations, logits, overhead) against the GPU's capacity.
#pragma once

#include <QColor>
#include <QPointF>
#include <QRectF>
#include <QString>
#include <optional>

#include "gui/chart_paint.h"
#include "gui/stacked_bar_widget.h"
#include "simulator/memory.h"

namespace gpuplan {

/// A status line ("64.3 GB of 80.0 GB (80.4%)" or "does not fit: 97.3 GB of 80.0 GB"), the
/// stacked bar with a capacity marker, and a legend. Over capacity, the part of the bar beyond
/// the capacity is hatched and the bar outlined in OverCapacityColor(). The widget's height
/// follows its width (the legend wraps): it has a height-for-width size policy.
class MemoryBar : public StackedBarWidget {
  Q_OBJECT

 public:
  explicit MemoryBar(QWidget* parent = nullptr);

  /// Memory of one GPU at the step's peak (parts in bytes) against capacity_bytes. A memory
  /// whose peak_bytes is not positive and finite, or whose capacity_bytes is negative or not
  /// finite, shows as Clear() does. With `pipeline_stages` > 1 the status line names the stage
  /// the peak is on (memory.peak_stage, 0-based).
  void SetMemory(const MemoryBreakdown& memory, int64_t pipeline_stages = 1);
  /// The status line as painted ("43.0 GB of 80.0 GB (53.7%)", "does not fit: ..."); empty
  /// without a memory.
  QString StatusText() const { return CurrentLayout().status; }
  /// No result (the inputs are invalid): an empty bar with `reason` as grey text. The height
  /// stays what the last memory needed, so the layout does not jump while the user types.
  void Clear(const QString& reason = {});
  /// True when a memory is shown and its peak_bytes > capacity_bytes.
  bool OverCapacity() const;
  /// The colour of the does-not-fit marking (hatch, outline, status line); no memory part
  /// uses it.
  static QColor OverCapacityColor();

 protected:
  bool event(QEvent* event) override;
  void paintEvent(QPaintEvent* event) override;
  void DropLayout() override { layout_.reset(); }

 private:
  /// Everything paintEvent draws, computed once per SetMemory/Clear/resize/font change.
  struct Layout {
    QSize size;
    StackedBar bar;
    QString status;
    double capacity_x = 0;  ///< x of the capacity marker
    QRectF free;            ///< the unused part of the capacity (empty when over)
    QRectF overflow;        ///< the part of the bar beyond the capacity (empty when it fits)
    QRectF outline;         ///< the used bar, outlined when over capacity
    QString capacity_label;
    QPointF capacity_label_at;  ///< the label's top-centre; label hidden when it would overlap
    bool capacity_label_shown = false;
  };

  const Layout& CurrentLayout() const;

  std::optional<MemoryBreakdown> memory_;  ///< shown when set
  int64_t pipeline_stages_ = 1;            ///< of the job memory_ belongs to
  QString reason_;                         ///< why nothing is shown
  mutable std::optional<Layout> layout_;
};

}  // namespace gpuplan
