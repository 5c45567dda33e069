// The right side of the window: the answer for the current inputs (headline numbers, memory
// bar, step-time breakdown, scaling chart), the planner's Pareto front and table, and the event
// simulator's timeline. It only shows what it is given; MainWindow computes.
#pragma once

#include <QString>
#include <QWidget>
#include <cstdint>
#include <memory>
#include <vector>

#include "planner/plan.h"
#include "simulator/event_sim.h"

class QLabel;
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;

namespace gpuplan {

class BreakdownBar;
class GanttView;
class MemoryBar;
class ParetoChart;
class PlansTableModel;
class ScalingChart;

/// The headline numbers, in the order of the tiles.
enum class Metric { kStepTime, kTokensPerS, kMfu, kTimeToTrain, kCostToTrain };
inline constexpr int kMetricCount = 5;

class ResultsPanel : public QWidget {
  Q_OBJECT

 public:
  explicit ResultsPanel(QWidget* parent = nullptr);
  ~ResultsPanel() override;

  /// The current inputs' plan and its data-parallel scaling (DataParallelScaling).
  void ShowPlan(const Plan& plan, const std::vector<ScalingRow>& scaling);
  /// The inputs are invalid: `message` (one line naming the field) in a red banner, every
  /// number and chart of the current plan cleared.
  void ShowError(const QString& message);

  /// The timeline is being simulated for the current inputs.
  void ShowTimelinePending();
  /// The event simulation of the current inputs; `analytic_step_s` is the cost model's step.
  void ShowTimeline(EventSimResult sim, double analytic_step_s);
  void ShowTimelineError(const QString& message);

  /// The planner's answer (Pareto chart, table); kept until the next search.
  void ShowSearch(std::shared_ptr<const PlanResult> result);
  /// A search is running: `done` of `total` hardware points (total 0: starting).
  void ShowSearchProgress(int done, int total);
  /// The search ended without an answer (cancelled or failed): `message` under the table.
  void ShowSearchStopped(const QString& message);
  /// Forgets the search's answer (it answered another job): `why` under the table and on the
  /// Pareto chart.
  void DropSearch(const QString& why);
  /// The last search's answer, or nullptr.
  const PlanResult* search() const { return search_.get(); }

  /// The text of a headline tile ("19.12 s", "41.7%", ...); empty when there is no plan.
  QString MetricText(Metric metric) const;
  /// The line under a tile's value (e.g. "N steps, goodput …" and the 80% band).
  QString MetricDetail(Metric metric) const;
  /// The error banner's text; empty when the inputs are valid.
  QString ErrorText() const;

  MemoryBar* memory_bar() const { return memory_; }
  BreakdownBar* breakdown_bar() const { return breakdown_; }
  ScalingChart* scaling_chart() const { return scaling_; }
  ParetoChart* pareto_chart() const { return pareto_; }
  GanttView* gantt_view() const { return gantt_; }
  QTableView* plans_table() const { return table_; }
  QTabWidget* tabs() const { return tabs_; }

 signals:
  /// The user picked a plan of the planner's answer (a Pareto point or a table row).
  void PlanChosen(const Plan& plan);

 private:
  struct Tile;
  QLabel* error_ = nullptr;
  std::vector<std::unique_ptr<Tile>> tiles_;
  MemoryBar* memory_ = nullptr;
  BreakdownBar* breakdown_ = nullptr;
  ScalingChart* scaling_ = nullptr;
  ParetoChart* pareto_ = nullptr;
  GanttView* gantt_ = nullptr;
  QLabel* timeline_note_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  QTableView* table_ = nullptr;
  PlansTableModel* model_ = nullptr;
  QSortFilterProxyModel* proxy_ = nullptr;
  QLabel* search_note_ = nullptr;
  std::shared_ptr<const PlanResult> search_;
};

}  // namespace gpuplan
