#include "gui/plans_table_model.h"

#include "gui/chart_paint.h"
#include "planner/economics.h"
#include "planner/report_document.h"
#include "planner/units_format.h"

namespace gpuplan {
namespace {

// The columns: header, tooltip, shown text and sort key of a row. One table, as the CSV report
// (docs/REPORTS.md) and docs/METRICS.md name them.
struct Column {
  const char* header;
  const char* tooltip;
  QString (*text)(const QString& kind, const Plan& p);
  QVariant (*key)(const QString& kind, const Plan& p);
};

const Column kColumns[] = {
    {"kind", "Where the planner shows this plan",
     [](const QString& kind, const Plan&) { return kind; },
     [](const QString& kind, const Plan&) { return QVariant(kind); }},
    {"GPU", "GPU type", [](const QString&, const Plan& p) { return ToQ(p.job.cluster.gpu); },
     [](const QString&, const Plan& p) { return QVariant(ToQ(p.job.cluster.gpu)); }},
    {"GPUs", "GPU count",
     [](const QString&, const Plan& p) { return QString::number(p.job.cluster.num_gpus); },
     [](const QString&, const Plan& p) { return QVariant(qlonglong{p.job.cluster.num_gpus}); }},
    {"layout", "Parallel layout (TP PP VPP DP CP EP, micro-batch, recompute, precision, ZeRO)",
     [](const QString&, const Plan& p) { return ToQ(LayoutSummary(p.job)); },
     [](const QString&, const Plan& p) { return QVariant(ToQ(LayoutSummary(p.job))); }},
    {"step time", "Seconds per optimizer step",
     [](const QString&, const Plan& p) { return ToQ(FormatDuration(p.step.step_time_s)); },
     [](const QString&, const Plan& p) { return QVariant(p.step.step_time_s); }},
    {"MFU", "Model FLOPs utilisation",
     [](const QString&, const Plan& p) { return ToQ(FormatPercent(p.step.mfu)); },
     [](const QString&, const Plan& p) { return QVariant(p.step.mfu); }},
    {"memory/GPU", "Peak memory per GPU",
     [](const QString&, const Plan& p) { return ToQ(FormatGb(p.step.memory.peak_bytes)); },
     [](const QString&, const Plan& p) { return QVariant(p.step.memory.peak_bytes); }},
    {"wall time", "Expected wall time to train, failures and checkpoints counted",
     [](const QString&, const Plan& p) { return ToQ(FormatDuration(p.econ.expected_wall_s)); },
     [](const QString&, const Plan& p) { return QVariant(p.econ.expected_wall_s); }},
    {"cost", "Expected cost to train",
     [](const QString&, const Plan& p) {
       return IsPriced(p) ? ToQ(FormatUsd(p.econ.expected_cost_usd)) : QString("no price");
     },
     [](const QString&, const Plan& p) {
       return QVariant(IsPriced(p) ? p.econ.expected_cost_usd : -1.0);
     }},
    {"$/GPU-h", "Price per GPU-hour",
     [](const QString&, const Plan& p) {
       return IsPriced(p) ? ToQ(FormatUsd(p.econ.usd_per_gpu_hour)) : QString();
     },
     [](const QString&, const Plan& p) { return QVariant(p.econ.usd_per_gpu_hour); }},
    {"provider", "Where the GPU-hours are bought",
     [](const QString&, const Plan& p) { return ToQ(p.econ.provider); },
     [](const QString&, const Plan& p) { return QVariant(ToQ(p.econ.provider)); }},
};
constexpr int kColumnCount = static_cast<int>(std::size(kColumns));

}  // namespace

PlansTableModel::PlansTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void PlansTableModel::SetResult(const PlanResult& result) {
  beginResetModel();
  rows_.clear();
  auto add = [this](const QString& kind, const Plan& plan) {
    for (const Row& row : rows_) {
      if (SamePlan(row.plan, plan)) return;
    }
    rows_.push_back({kind, plan});
  };
  if (result.found) add(tr("recommended"), result.recommendation);
  for (const Plan& p : result.pareto) add(tr("Pareto"), p);
  for (const Plan& p : result.alternatives) add(tr("alternative"), p);
  for (const ScalingRow& row : result.scaling) {
    if (row.feasible) add(tr("scaling"), row.plan);
  }
  endResetModel();
}

void PlansTableModel::Clear() {
  beginResetModel();
  rows_.clear();
  endResetModel();
}

int PlansTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int PlansTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant PlansTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= kColumnCount) return {};
  const Row& row = rows_[static_cast<size_t>(index.row())];
  const Column& column = kColumns[index.column()];
  switch (role) {
    case Qt::DisplayRole:
      return column.text(row.kind, row.plan);
    case kSortRole:
      return column.key(row.kind, row.plan);
    case Qt::TextAlignmentRole:
      return index.column() >= 4 && index.column() <= 9
                 ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                 : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    case Qt::ToolTipRole:
      return tr("Double-click to load this plan into the inputs");
    default:
      return {};
  }
}

QVariant PlansTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= kColumnCount) return {};
  if (role == Qt::DisplayRole) return tr(kColumns[section].header);
  if (role == Qt::ToolTipRole) return tr(kColumns[section].tooltip);
  return {};
}

}  // namespace gpuplan
