// The planner's answer as a table: every plan it shows (recommendation, Pareto front,
// alternatives, scaling rows) with its numbers, sortable by any column.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <vector>

#include "planner/plan.h"

namespace gpuplan {

class PlansTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  /// The role that carries each cell's sort key (numbers as numbers).
  static constexpr int kSortRole = Qt::UserRole;

  explicit PlansTableModel(QObject* parent = nullptr);

  /// Shows the plans of `result`: the recommendation, the Pareto front, the alternatives and the
  /// feasible scaling rows, each plan once (the first kind it appears under).
  void SetResult(const PlanResult& result);
  void Clear();

  /// The plan of row `row` (model order). Precondition: 0 <= row < rowCount().
  const Plan& PlanAt(int row) const { return rows_[static_cast<size_t>(row)].plan; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  struct Row {
    QString kind;
    Plan plan;
  };
  std::vector<Row> rows_;
};

}  // namespace gpuplan
