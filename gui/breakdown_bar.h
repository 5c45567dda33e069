// BreakdownBar: the step time's parts (compute, TP/CP/PP/DP/EP communication, pipeline
// bubble, optimizer) as one horizontal stacked bar with a legend of their shares.
#pragma once

#include <QString>
#include <optional>

#include "gui/chart_paint.h"
#include "gui/stacked_bar_widget.h"
#include "simulator/cost_model.h"

namespace gpuplan {

/// A status line ("step time 1.73 s"), the stacked bar over the whole step, and a legend
/// ("compute 71.2%"). The widget's height follows its width (the legend wraps): it has a
/// height-for-width size policy.
class BreakdownBar : public StackedBarWidget {
  Q_OBJECT

 public:
  explicit BreakdownBar(QWidget* parent = nullptr);

  /// One stacked bar of the step time's parts in seconds; parts that take no time (or are
  /// not finite) are left out. Shows as Clear() does when no part takes time.
  void SetBreakdown(const TimeBreakdown& breakdown_s);
  /// No result (the inputs are invalid): an empty bar with `reason` as grey text. The height
  /// stays what the last breakdown needed, so the layout does not jump while the user types.
  void Clear(const QString& reason = {});

 protected:
  bool event(QEvent* event) override;
  void paintEvent(QPaintEvent* event) override;
  void DropLayout() override { layout_.reset(); }

 private:
  /// Everything paintEvent draws, computed once per SetBreakdown/Clear/resize/font change.
  struct Layout {
    QSize size;
    StackedBar bar;
  };

  const Layout& CurrentLayout() const;

  bool shown_ = false;  ///< a breakdown is shown
  QString status_;      ///< "step time 1.73 s"
  QString reason_;      ///< why nothing is shown
  double total_s_ = 0;  ///< sum of the parts shown
  mutable std::optional<Layout> layout_;
};

}  // namespace gpuplan
