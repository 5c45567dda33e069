// The what-if window: inputs on the left, results on the right, Find best plan in the toolbar,
// sessions, exports and undo in the menus. Every change of the inputs is evaluated at once on
// the GUI thread (the analytic model takes microseconds); the event simulation and the planner
// run on background threads.
#pragma once

#include <QMainWindow>
#include <QString>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "gui/session.h"
#include "hardware-db/hardware_db.h"
#include "planner/export.h"
#include "planner/plan.h"
#include "simulator/calibration.h"

class QAction;
class QLabel;
class QProgressBar;
class QUndoStack;

namespace gpuplan {

class InputPanel;
class PlanSearch;
class ResultsPanel;
class TimelineWorker;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  /// `db` must outlive the window. Shows and evaluates `initial`.
  MainWindow(const HardwareDb& db, const Session& initial, QWidget* parent = nullptr);
  ~MainWindow() override;

  InputPanel* inputs() const { return inputs_; }
  ResultsPanel* results() const { return results_; }
  QUndoStack* undo_stack() const { return undo_; }

  /// The plan of the current inputs; nullptr while they are invalid.
  const Plan* current_plan() const { return plan_ ? &*plan_ : nullptr; }

  /// Starts "Find best plan" for the current inputs (no-op while one runs).
  void FindBestPlan();
  /// True while the planner runs.
  bool Searching() const;
  /// True until the timeline of the current inputs has arrived (or failed).
  bool TimelinePending() const { return timeline_pending_; }

  /// The file actions without their dialogs (the menus call them after asking for a path).
  Status OpenSession(const QString& path);
  Status SaveSession(const QString& path);
  /// HTML when `path` ends in .html or .htm, Markdown otherwise (planner/report.h).
  Status ExportReport(const QString& path);
  /// `format`: a name of the Exporters() table, started by `launcher` (planner/export.h).
  Status ExportLaunchConfig(const QString& path, std::string_view format,
                            Launcher launcher = Launcher::kPerNode);
  Status ExportPlanJson(const QString& path);

  /// Uses the measured rates of a profile (`gpuplan profile`, docs/PROFILE.md) for jobs on its
  /// GPU type, as `simulate --profile` does; the datasheet figures stay for other types and for
  /// what the profile did not measure. Errors name the file; the rates in use stay then.
  Status UseProfile(const QString& path);
  /// Back to the datasheet figures everywhere.
  void UseDatasheet();
  /// What the rates label in the status bar says ("rates: datasheet", "rates: profile …").
  QString RatesText() const;

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void BuildMenus();
  void Evaluate();
  void UpdateTitle();
  /// Asks for a path (open or save dialog) and runs `action` on it; errors in a message box.
  void RunFileAction(const QString& title, const QString& filter, const QString& suggested,
                     bool save, const std::function<Status(const QString&)>& action);

  const HardwareDb& db_;
  /// The error bands' data (hardware-db/calibration/cv_residuals.json); empty when it cannot be
  /// read, and then plans show no band and the status bar says why.
  std::vector<BandResidual> band_residuals_;
  QUndoStack* undo_ = nullptr;
  InputPanel* inputs_ = nullptr;
  ResultsPanel* results_ = nullptr;
  PlanSearch* search_ = nullptr;
  TimelineWorker* timeline_ = nullptr;
  QAction* find_ = nullptr;
  QAction* cancel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* eval_time_ = nullptr;
  QLabel* rates_ = nullptr;
  QAction* datasheet_ = nullptr;
  std::shared_ptr<const MeasuredRates> measured_;  ///< null: datasheet rates
  QString profile_path_;
  std::optional<Plan> plan_;
  std::vector<ScalingRow> scaling_;
  bool timeline_pending_ = false;
  QString session_path_;
};

}  // namespace gpuplan
