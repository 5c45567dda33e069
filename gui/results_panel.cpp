#include "gui/results_panel.h"

#include <QFrame>
#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <utility>

#include "common/str_format.h"
#include "gui/breakdown_bar.h"
#include "gui/chart_paint.h"
#include "gui/gantt_view.h"
#include "gui/memory_bar.h"
#include "gui/pareto_chart.h"
#include "gui/plans_table_model.h"
#include "gui/scaling_chart.h"
#include "planner/economics.h"
#include "planner/report_document.h"
#include "planner/units_format.h"

namespace gpuplan {
namespace {

// The tiles' titles and what they explain (docs/METRICS.md defines each number).
struct MetricInfo {
  const char* title;
  const char* tooltip;
};
constexpr MetricInfo kMetrics[kMetricCount] = {
    {"Step time", "Seconds per optimizer step (analytic cost model; docs/METRICS.md)"},
    {"Throughput", "Tokens per second over the whole job"},
    {"MFU", "Model FLOPs utilisation: model FLOP/s per GPU / the GPU's dense peak"},
    {"Time to train",
     "Expected wall time for the training tokens, with checkpoints, failures "
     "and restarts (Young/Daly; planner/reliability.h)"},
    {"Cost to train", "Expected cost: wall time x GPUs billed (whole instances) x price"},
};

QLabel* Caption(const QString& text, QWidget* parent) {
  auto* label = new QLabel(text, parent);
  QFont font = label->font();
  font.setBold(true);
  label->setFont(font);
  return label;
}

}  // namespace

/// One headline number: title, value (large) and a detail line.
struct ResultsPanel::Tile {
  QFrame* frame = nullptr;
  QLabel* value = nullptr;
  QLabel* detail = nullptr;
};

ResultsPanel::ResultsPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);

  error_ = new QLabel(this);
  error_->setWordWrap(true);
  error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_->setStyleSheet(
      "QLabel { background: #fdecea; color: #8b1a1a; border: 1px solid #d62728; "
      "border-radius: 3px; padding: 6px; }");
  error_->hide();
  layout->addWidget(error_);

  auto* tiles = new QHBoxLayout;
  for (const MetricInfo& info : kMetrics) {
    auto tile = std::make_unique<Tile>();
    tile->frame = new QFrame(this);
    tile->frame->setFrameShape(QFrame::StyledPanel);
    tile->frame->setToolTip(tr(info.tooltip));
    auto* box = new QVBoxLayout(tile->frame);
    box->setContentsMargins(8, 4, 8, 4);
    box->setSpacing(0);
    auto* title = new QLabel(tr(info.title), tile->frame);
    title->setStyleSheet("color: #555;");
    tile->value = new QLabel(tile->frame);
    QFont big = tile->value->font();
    big.setPointSizeF(big.pointSizeF() * 1.6);
    big.setBold(true);
    tile->value->setFont(big);
    tile->detail = new QLabel(tile->frame);
    tile->detail->setStyleSheet("color: #555;");
    box->addWidget(title);
    box->addWidget(tile->value);
    box->addWidget(tile->detail);
    tiles->addWidget(tile->frame, 1);
    tiles_.push_back(std::move(tile));
  }
  layout->addLayout(tiles);

  auto* bars = new QGridLayout;
  memory_ = new MemoryBar(this);
  breakdown_ = new BreakdownBar(this);
  bars->addWidget(Caption(tr("Memory per GPU"), this), 0, 0, Qt::AlignTop);
  bars->addWidget(memory_, 0, 1);
  bars->addWidget(Caption(tr("Step time"), this), 1, 0, Qt::AlignTop);
  bars->addWidget(breakdown_, 1, 1);
  bars->setColumnStretch(1, 1);
  layout->addLayout(bars);

  auto* split = new QSplitter(Qt::Vertical, this);
  auto* charts = new QSplitter(Qt::Horizontal, split);
  scaling_ = new ScalingChart(charts);
  pareto_ = new ParetoChart(charts);
  charts->addWidget(scaling_);
  charts->addWidget(pareto_);
  split->addWidget(charts);

  tabs_ = new QTabWidget(split);
  auto* timeline = new QWidget(tabs_);
  auto* timeline_layout = new QVBoxLayout(timeline);
  timeline_layout->setContentsMargins(0, 4, 0, 0);
  timeline_note_ = new QLabel(timeline);
  timeline_note_->setWordWrap(true);
  gantt_ = new GanttView(timeline);
  auto* scroll = new QScrollArea(timeline);
  scroll->setWidget(gantt_);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  timeline_layout->addWidget(timeline_note_);
  timeline_layout->addWidget(scroll, 1);
  tabs_->addTab(timeline, tr("Timeline"));

  auto* plans = new QWidget(tabs_);
  auto* plans_layout = new QVBoxLayout(plans);
  plans_layout->setContentsMargins(0, 4, 0, 0);
  search_note_ = new QLabel(
      tr("Find best plan (toolbar) searches every layout on every GPU count and prices it; "
         "its plans appear here and on the Pareto chart."),
      plans);
  search_note_->setWordWrap(true);
  model_ = new PlansTableModel(this);
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(PlansTableModel::kSortRole);
  table_ = new QTableView(plans);
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setAlternatingRowColors(true);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  plans_layout->addWidget(search_note_);
  plans_layout->addWidget(table_, 1);
  tabs_->addTab(plans, tr("Plans"));
  split->addWidget(tabs_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  layout->addWidget(split, 1);

  connect(pareto_, &ParetoChart::PlanClicked, this, [this](int index) {
    if (search_ && index >= 0 && index < static_cast<int>(search_->pareto.size())) {
      emit PlanChosen(search_->pareto[static_cast<size_t>(index)]);
    }
  });
  connect(table_, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
    emit PlanChosen(model_->PlanAt(proxy_->mapToSource(index).row()));
  });
  ShowError(QString());
  ShowSearchStopped(QString());
}

ResultsPanel::~ResultsPanel() = default;

void ResultsPanel::ShowPlan(const Plan& plan, const std::vector<ScalingRow>& scaling) {
  error_->hide();
  error_->clear();
  const StepResult& s = plan.step;
  const PlanEconomics& e = plan.econ;
  const auto set = [this](Metric m, const QString& value, const QString& detail) {
    Tile& tile = *tiles_[static_cast<size_t>(m)];
    tile.value->setText(value);
    tile.detail->setText(detail);
  };
  set(Metric::kStepTime, ToQ(FormatDuration(s.step_time_s)),
      tr("%1 %2 per pipeline")
          .arg(s.microbatches)
          .arg(ToQ(Noun(s.microbatches, "micro-batch", "micro-batches"))));
  set(Metric::kTokensPerS, ToQ(FormatCount(s.tokens_per_s)) + tr(" tok/s"),
      tr("%1 per GPU").arg(ToQ(FormatCount(s.tokens_per_s_per_gpu))));
  set(Metric::kMfu, ToQ(FormatPercent(s.mfu)),
      tr("%1 TFLOP/s per GPU, HFU %2")
          .arg(ToQ(FormatFixed(s.model_tflops_per_gpu, 0)))
          .arg(ToQ(FormatPercent(s.hfu))));
  // The 80% error band of a duration or an amount of money (docs/ACCURACY.md, "Error bands"),
  // "WIDE" when no published run of the plan's class backs it; empty without a band.
  const ErrorBand& band = plan.band;
  const auto band_text = [&band](const std::string& low, const std::string& high) {
    if (band.runs == 0) return QString();
    return QStringLiteral("\n") + (band.validated ? QString() : QStringLiteral("WIDE ")) +
           QStringLiteral("80% band ") + ToQ(low) + QStringLiteral(" - ") + ToQ(high);
  };
  set(Metric::kTimeToTrain, ToQ(FormatDuration(e.expected_wall_s)),
      tr("%1 %2, goodput %3")
              .arg(ToQ(FormatCount(e.steps)))
              .arg(ToQ(Noun(e.steps, "step", "steps")))
              .arg(ToQ(FormatPercent(e.goodput))) +
          band_text(FormatDuration(e.expected_wall_s * band.low_factor),
                    FormatDuration(e.expected_wall_s * band.high_factor)));
  if (IsPriced(plan)) {
    set(Metric::kCostToTrain, ToQ(FormatUsd(e.expected_cost_usd)),
        tr("%1/GPU-h at %2, %3/M tokens")
                .arg(ToQ(FormatUsd(e.usd_per_gpu_hour)))
                .arg(ToQ(e.provider))
                .arg(ToQ(FormatUsd(e.usd_per_million_tokens))) +
            band_text(FormatUsd(e.expected_cost_usd * band.low_factor),
                      FormatUsd(e.expected_cost_usd * band.high_factor)));
  } else {
    set(Metric::kCostToTrain, tr("no price"),
        tr("no %1 offering sells this").arg(ToQ(std::string(PriceKindName(e.price_kind)))));
  }
  memory_->SetMemory(s.memory, plan.job.parallel.pp);
  breakdown_->SetBreakdown(s.breakdown_s);
  scaling_->SetRows(scaling, plan.job.cluster.num_gpus);
  if (IsPriced(plan)) {
    pareto_->SetCurrent(e.expected_wall_s, e.expected_cost_usd, band.low_factor, band.high_factor);
  } else {
    pareto_->ClearCurrent();
  }
}

void ResultsPanel::ShowError(const QString& message) {
  error_->setText(message);
  error_->setVisible(!message.isEmpty());
  for (const std::unique_ptr<Tile>& tile : tiles_) {
    tile->value->setText(QStringLiteral("–"));
    tile->detail->clear();
  }
  const QString reason = tr("no result: fix the inputs");
  memory_->Clear(reason);
  breakdown_->Clear(reason);
  scaling_->Clear(reason);
  pareto_->ClearCurrent();
  gantt_->Clear(reason);
  timeline_note_->setText(message.isEmpty() ? QString() : reason);
}

void ResultsPanel::ShowTimelinePending() {
  timeline_note_->setText(tr("Simulating the step event by event…"));
}

void ResultsPanel::ShowTimeline(EventSimResult sim, double analytic_step_s) {
  timeline_note_->setText(
      tr("Event simulation: step %1 (analytic model %2, %3%4), %5 %6 simulated, one per "
         "pipeline stage, each standing for its TP/CP/DP peers. Wheel zooms, drag pans, "
         "double-click shows the whole step, Shift+wheel scrolls the rows.")
          .arg(ToQ(FormatDuration(sim.step_time_s)))
          .arg(ToQ(FormatDuration(analytic_step_s)))
          .arg(sim.step_time_s >= analytic_step_s ? "+" : "")
          .arg(ToQ(FormatPercent(sim.step_time_s / analytic_step_s - 1.0)))
          .arg(sim.simulated_gpus)
          .arg(ToQ(Noun(sim.simulated_gpus, "GPU", "GPUs"))));
  gantt_->SetTimeline(std::move(sim.timeline));
}

void ResultsPanel::ShowTimelineError(const QString& message) {
  timeline_note_->setText(tr("The event simulator failed: %1").arg(message));
  gantt_->Clear(message);
}

void ResultsPanel::ShowSearch(std::shared_ptr<const PlanResult> result) {
  search_ = std::move(result);
  const PlanResult& r = *search_;
  model_->SetResult(r);
  table_->sortByColumn(-1, Qt::AscendingOrder);
  table_->resizeColumnsToContents();
  int recommended = -1;
  for (size_t i = 0; i < r.pareto.size(); ++i) {
    if (r.found && SamePlan(r.pareto[i], r.recommendation)) recommended = static_cast<int>(i);
  }
  pareto_->SetPlans(r.pareto, recommended);
  QString note;
  if (r.found) {
    note = tr("Recommended (objective %1): %2 x %3, %4. ")
               .arg(ToQ(std::string(ObjectiveName(r.request.objective))))
               .arg(r.recommendation.job.cluster.num_gpus)
               .arg(ToQ(r.recommendation.job.cluster.gpu))
               .arg(ToQ(LayoutSummary(r.recommendation.job)));
  } else {
    note = tr("No plan satisfies the request. ");
    for (const std::string& s : r.explanation) note += ToQ(s) + " ";
  }
  note += tr("%1 %2 evaluated in %3 s. Double-click a row or click a Pareto point to load "
             "that plan.")
              .arg(ToQ(FormatCount(static_cast<double>(r.stats.evaluated))))
              .arg(ToQ(Noun(r.stats.evaluated, "layout", "layouts")))
              .arg(ToQ(FormatFixed(r.stats.seconds, 2)));
  search_note_->setText(note);
}

void ResultsPanel::ShowSearchProgress(int done, int total) {
  search_note_->setText(total > 0 ? tr("Searching: %1 of %2 hardware points…").arg(done).arg(total)
                                  : tr("Searching…"));
}

void ResultsPanel::ShowSearchStopped(const QString& message) {
  if (!message.isEmpty()) search_note_->setText(message);
  if (!search_) {
    model_->Clear();
    pareto_->Clear(tr("Find best plan to see the time-vs-cost front"));
  }
}

void ResultsPanel::DropSearch(const QString& why) {
  search_.reset();
  model_->Clear();
  pareto_->Clear(why);
  search_note_->setText(why);
}

QString ResultsPanel::MetricText(Metric metric) const {
  return tiles_[static_cast<size_t>(metric)]->value->text();
}

QString ResultsPanel::MetricDetail(Metric metric) const {
  return tiles_[static_cast<size_t>(metric)]->detail->text();
}

QString ResultsPanel::ErrorText() const { return error_->isHidden() ? QString() : error_->text(); }

}  // namespace gpuplan
