#include "gui/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QKeySequence>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QScrollArea>
#include <QSplitter>
#include <QStatusBar>
#include <QToolBar>
#include <QUndoStack>
#include <utility>

#include "common/file_write.h"
#include "gui/chart_paint.h"
#include "gui/input_panel.h"
#include "gui/plan_search.h"
#include "gui/results_panel.h"
#include "gui/timeline_worker.h"
#include "planner/export.h"
#include "planner/plan_json.h"
#include "planner/report.h"
#include "planner/what_if.h"
#include "profiler/profile.h"
#include "profiler/profile_rates.h"

namespace gpuplan {
namespace {

// The scaling chart shows the layout from one replica up to this many times the current GPUs.
constexpr int64_t kScalingSpan = 8;

}  // namespace

MainWindow::MainWindow(const HardwareDb& db, const Session& initial, QWidget* parent)
    : QMainWindow(parent), db_(db) {
  undo_ = new QUndoStack(this);
  inputs_ = new InputPanel(db_, undo_, initial, this);
  results_ = new ResultsPanel(this);
  search_ = new PlanSearch(db_, this);
  timeline_ = new TimelineWorker(db_, this);

  auto* scroll = new QScrollArea(this);
  scroll->setWidget(inputs_);
  scroll->setWidgetResizable(true);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setMinimumWidth(inputs_->sizeHint().width() + 24);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(scroll);
  split->addWidget(results_);
  split->setStretchFactor(0, 0);
  split->setStretchFactor(1, 1);
  setCentralWidget(split);
  BuildMenus();

  rates_ = new QLabel(this);
  statusBar()->addPermanentWidget(rates_);
  eval_time_ = new QLabel(this);
  statusBar()->addPermanentWidget(eval_time_);
  Expected<std::vector<BandResidual>> residuals = ReadBandResidualsFile(BuiltinBandResidualsPath());
  if (residuals.ok()) {
    band_residuals_ = std::move(residuals).value();
  } else {
    statusBar()->showMessage(tr("No error bands: %1").arg(ToQ(residuals.status().message())));
  }

  connect(inputs_, &InputPanel::SessionChanged, this, &MainWindow::Evaluate);
  connect(results_, &ResultsPanel::PlanChosen, this, [this](const Plan& plan) {
    Session next = inputs_->session();
    LoadPlan(db_, plan, &next);
    inputs_->Edit(
        next,
        tr("Load plan %1 x %2").arg(plan.job.cluster.num_gpus).arg(ToQ(plan.job.cluster.gpu)));
    statusBar()->showMessage(tr("Loaded the plan into the inputs (Ctrl+Z undoes)"), 5000);
  });
  connect(timeline_, &TimelineWorker::Simulated, this,
          [this](qint64 ticket, std::shared_ptr<EventSimResult> sim) {
            if (ticket != timeline_->latest() || !plan_) return;
            timeline_pending_ = false;
            results_->ShowTimeline(std::move(*sim), plan_->step.step_time_s);
          });
  connect(timeline_, &TimelineWorker::SimulationFailed, this,
          [this](qint64 ticket, const QString& message) {
            if (ticket != timeline_->latest()) return;
            timeline_pending_ = false;
            results_->ShowTimelineError(message);
          });
  connect(search_, &PlanSearch::Progress, this, [this](int done, int total) {
    progress_->setRange(0, total);
    progress_->setValue(done);
    results_->ShowSearchProgress(done, total);
  });
  const auto search_ended = [this] {
    find_->setEnabled(true);
    cancel_->setEnabled(false);
    progress_->hide();
  };
  connect(search_, &PlanSearch::Finished, this,
          [this, search_ended](std::shared_ptr<const PlanResult> result) {
            search_ended();
            results_->ShowSearch(std::move(result));
            statusBar()->showMessage(tr("Search finished"), 5000);
          });
  connect(search_, &PlanSearch::Failed, this, [this, search_ended](const QString& message) {
    search_ended();
    results_->ShowSearchStopped(tr("The search could not run: %1").arg(message));
  });
  connect(search_, &PlanSearch::Cancelled, this, [this, search_ended] {
    search_ended();
    results_->ShowSearchStopped(tr("Search cancelled."));
  });

  UpdateTitle();
  resize(1600, 1000);
  Evaluate();
}

MainWindow::~MainWindow() = default;

void MainWindow::BuildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(tr("&Open session…"), this, [this] {
    RunFileAction(tr("Open session"), tr("gpuplan session (*.json)"), QString(), false,
                  [this](const QString& path) { return OpenSession(path); });
  });
  open->setShortcut(QKeySequence::Open);
  QAction* save = file->addAction(tr("&Save session…"), this, [this] {
    RunFileAction(tr("Save session"), tr("gpuplan session (*.json)"),
                  session_path_.isEmpty() ? QStringLiteral("session.json") : session_path_, true,
                  [this](const QString& path) { return SaveSession(path); });
  });
  save->setShortcut(QKeySequence::Save);
  file->addSeparator();
  QAction* profile = file->addAction(tr("Use measured &profile…"), this, [this] {
    RunFileAction(tr("Use measured profile"), tr("gpuplan profile (*.json)"), QString(), false,
                  [this](const QString& path) { return UseProfile(path); });
  });
  profile->setToolTip(
      tr("Rates measured by `gpuplan profile` replace the datasheet figures for "
         "jobs on the profiled GPU type"));
  datasheet_ = file->addAction(tr("Use &datasheet rates"), this, &MainWindow::UseDatasheet);
  datasheet_->setEnabled(false);
  file->addSeparator();
  file->addAction(tr("Export &report…"), this, [this] {
    RunFileAction(tr("Export report"), tr("HTML (*.html);;Markdown (*.md)"),
                  QStringLiteral("plan.html"), true,
                  [this](const QString& path) { return ExportReport(path); });
  });
  QMenu* launch = file->addMenu(tr("Export &launch configuration"));
  // Per node first, then each other launcher's scripts (planner/export.h: Launchers()).
  for (const LauncherSpec& launcher : Launchers()) {
    if (launcher.launcher != Launcher::kPerNode) launch->addSeparator();
    for (const ExporterSpec& exporter : Exporters()) {
      if (!CheckLauncher(exporter.name, launcher.launcher).ok()) continue;
      QString label = ToQ(std::string(exporter.name));
      if (launcher.launcher != Launcher::kPerNode) {
        label += QStringLiteral(" (%1)").arg(ToQ(std::string(launcher.name)));
      }
      QAction* action = launch->addAction(label, this, [this, &exporter, &launcher, label] {
        RunFileAction(tr("Export %1").arg(label), tr("All files (*)"),
                      ToQ(std::string(exporter.file_name)), true,
                      [this, &exporter, &launcher](const QString& p) {
                        return ExportLaunchConfig(p, exporter.name, launcher.launcher);
                      });
      });
      action->setToolTip(
          ToQ(std::string(exporter.description) + "; " + std::string(launcher.description)));
    }
  }
  file->addAction(tr("Export plan &JSON…"), this, [this] {
    RunFileAction(tr("Export plan JSON"), tr("JSON (*.json)"), QStringLiteral("plan.json"), true,
                  [this](const QString& path) { return ExportPlanJson(path); });
  });
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);

  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  QAction* undo = undo_->createUndoAction(this, tr("&Undo"));
  undo->setShortcut(QKeySequence::Undo);
  QAction* redo = undo_->createRedoAction(this, tr("&Redo"));
  redo->setShortcut(QKeySequence::Redo);
  edit->addAction(undo);
  edit->addAction(redo);

  QMenu* plan = menuBar()->addMenu(tr("&Plan"));
  find_ = plan->addAction(tr("&Find best plan"), this, &MainWindow::FindBestPlan);
  find_->setShortcut(Qt::Key_F5);
  find_->setToolTip(
      tr("Search every layout on every GPU count (and GPU type) for the current model and job, "
         "priced; in the background (F5)"));
  cancel_ = plan->addAction(tr("&Cancel search"), this, [this] { search_->Cancel(); });
  cancel_->setShortcut(Qt::Key_Escape);
  cancel_->setEnabled(false);

  QToolBar* bar = addToolBar(tr("Plan"));
  bar->setMovable(false);
  bar->addAction(find_);
  bar->addAction(cancel_);
  progress_ = new QProgressBar(bar);
  progress_->setMaximumWidth(240);
  progress_->setFormat(tr("%v of %m hardware points"));
  progress_->hide();
  bar->addWidget(progress_);
  bar->addSeparator();
  bar->addAction(undo);
  bar->addAction(redo);
}

void MainWindow::Evaluate() {
  QElapsedTimer timer;
  timer.start();
  const Session& session = inputs_->session();
  // CalibratedRates uses a profile only for its own GPU type (simulator/gemm_time.h).
  if (!measured_) {
    rates_->setText(tr("rates: datasheet"));
  } else if (measured_->gpu_id == session.job.cluster.gpu) {
    rates_->setText(tr("rates: measured profile %1").arg(QFileInfo(profile_path_).fileName()));
  } else {
    rates_->setText(tr("rates: datasheet (the profile measured %1)").arg(ToQ(measured_->gpu_id)));
  }
  if (results_->search() != nullptr && !SearchedFor(results_->search()->request, session)) {
    results_->DropSearch(
        tr("The model or the job changed since the last search; Find best plan again."));
  }
  Expected<JobSpec> job = ResolvedJob(session, db_);
  if (!job.ok()) {
    plan_.reset();
    scaling_.clear();
    timeline_->Drop();
    timeline_pending_ = false;
    results_->ShowError(ToQ(job.status().message()));
    eval_time_->setText(tr("inputs invalid"));
    return;
  }
  PlanRequest req = WhatIfRequest(session, db_);
  req.measured = measured_.get();
  req.band_residuals = band_residuals_;
  plan_ = EvaluateFixedPlan(req, db_, *job, session.node);
  scaling_ =
      DataParallelScaling(req, db_, *job, session.node, job->cluster.num_gpus * kScalingSpan);
  results_->ShowPlan(*plan_, scaling_);
  timeline_->Post(*job, measured_);
  timeline_pending_ = true;
  results_->ShowTimelinePending();
  eval_time_->setText(
      tr("updated in %1 ms").arg(static_cast<double>(timer.nsecsElapsed()) / 1e6, 0, 'f', 2));
  UpdateTitle();
}

void MainWindow::FindBestPlan() {
  if (search_->Running()) return;
  PlanRequest request = SearchRequest(inputs_->session(), db_);
  request.band_residuals = band_residuals_;
  if (!search_->Start(std::move(request), measured_)) return;
  find_->setEnabled(false);
  cancel_->setEnabled(true);
  progress_->setRange(0, 0);
  progress_->show();
  results_->ShowSearchProgress(0, 0);
}

bool MainWindow::Searching() const { return search_->Running(); }

Status MainWindow::UseProfile(const QString& path) {
  Expected<Profile> profile = ReadProfile(path.toStdString());
  if (!profile.ok()) return profile.status();
  Expected<ProfileCalibration> cal =
      CalibrateFromProfile(*profile, db_, path.toStdString(), ProfileUse::kTrainingStacks);
  if (!cal.ok()) return cal.status();
  measured_ = std::make_shared<const MeasuredRates>(std::move(cal->rates));
  profile_path_ = path;
  datasheet_->setEnabled(true);
  if (results_->search() != nullptr) {
    results_->DropSearch(tr("The rates changed since the last search; Find best plan again."));
  }
  Evaluate();
  return Status::Ok();
}

void MainWindow::UseDatasheet() {
  if (!measured_) return;
  measured_.reset();
  profile_path_.clear();
  datasheet_->setEnabled(false);
  if (results_->search() != nullptr) {
    results_->DropSearch(tr("The rates changed since the last search; Find best plan again."));
  }
  Evaluate();
}

QString MainWindow::RatesText() const { return rates_->text(); }

Status MainWindow::OpenSession(const QString& path) {
  Expected<Session> session = ReadSessionFile(path.toStdString(), db_);
  if (!session.ok()) return session.status();
  inputs_->Edit(*session, tr("Open %1").arg(QFileInfo(path).fileName()));
  session_path_ = path;
  UpdateTitle();
  return Status::Ok();
}

Status MainWindow::SaveSession(const QString& path) {
  // A session that does not resolve could not be opened again: refuse it with the reason.
  Expected<JobSpec> job = ResolvedJob(inputs_->session(), db_);
  if (!job.ok()) return job.status().WithPrefix("the inputs are invalid, fix them before saving");
  Session session = inputs_->session();
  session.job.parallel.dp = job->parallel.dp;
  GPUPLAN_RETURN_IF_ERROR(WriteSessionFile(path.toStdString(), session));
  session_path_ = path;
  UpdateTitle();
  return Status::Ok();
}

Status MainWindow::ExportReport(const QString& path) {
  if (!plan_) return Status::Invalid("no plan: the inputs are invalid");
  const PlanResult report =
      WhatIfReport(inputs_->session(), db_, *plan_, scaling_, results_->search());
  const QString suffix = QFileInfo(path).suffix().toLower();
  const std::string text =
      suffix == "html" || suffix == "htm" ? PlanResultToHtml(report) : PlanResultToMarkdown(report);
  return WriteFileAtomically(path.toStdString(), text);
}

Status MainWindow::ExportLaunchConfig(const QString& path, std::string_view format,
                                      Launcher launcher) {
  if (!plan_) return Status::Invalid("no plan: the inputs are invalid");
  Expected<std::string> text = ExportPlan(*plan_, format, launcher);
  if (!text.ok()) return text.status();
  return WriteFileAtomically(path.toStdString(), *text);
}

Status MainWindow::ExportPlanJson(const QString& path) {
  if (!plan_) return Status::Invalid("no plan: the inputs are invalid");
  return WriteFileAtomically(
      path.toStdString(),
      PlanToJson(*plan_).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

void MainWindow::RunFileAction(const QString& title, const QString& filter,
                               const QString& suggested, bool save,
                               const std::function<Status(const QString&)>& action) {
  const QString path = save ? QFileDialog::getSaveFileName(this, title, suggested, filter)
                            : QFileDialog::getOpenFileName(this, title, QString(), filter);
  if (path.isEmpty()) return;
  const Status status = action(path);
  if (!status.ok()) {
    QMessageBox::warning(this, title, ToQ(status.message()));
    return;
  }
  statusBar()->showMessage(tr("%1: %2").arg(title, path), 5000);
}

void MainWindow::UpdateTitle() {
  const Session& s = inputs_->session();
  QString title = tr("gpuplan — %1 on %2 x %3")
                      .arg(ToQ(s.job.model.name))
                      .arg(s.job.cluster.num_gpus)
                      .arg(ToQ(s.job.cluster.gpu));
  if (!session_path_.isEmpty()) title += " — " + QFileInfo(session_path_).fileName();
  setWindowTitle(title);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  search_->Cancel();
  event->accept();
}

}  // namespace gpuplan
