// "Find best plan": the planner (MakePlan) on a worker thread, with progress and Cancel, so the
// window never waits for it.
#pragma once

#include <QObject>
#include <QString>
#include <atomic>
#include <memory>
#include <thread>

#include "hardware-db/hardware_db.h"
#include "planner/plan.h"
#include "simulator/calibration.h"

namespace gpuplan {

class PlanSearch : public QObject {
  Q_OBJECT

 public:
  /// `db` must outlive the search.
  explicit PlanSearch(const HardwareDb& db, QObject* parent = nullptr);
  /// Cancels a running search and waits for its thread.
  ~PlanSearch() override;

  /// Starts MakePlan(request) on a worker thread, with `measured` (may be null) as the
  /// request's measured rates, kept alive until the search ends. Returns false, starting
  /// nothing, while a search is running. Exactly one of Finished, Failed or Cancelled follows,
  /// on this object's thread.
  bool Start(PlanRequest request, std::shared_ptr<const MeasuredRates> measured);
  /// Asks the running search to stop; it ends with Cancelled() within one hardware point.
  void Cancel();
  bool Running() const { return running_; }

 signals:
  /// `done` of `total` hardware points are searched.
  void Progress(int done, int total);
  void Finished(std::shared_ptr<const PlanResult> result);
  /// The request was invalid (or the planner failed): one line naming the setting at fault.
  void Failed(const QString& message);
  void Cancelled();

 private:
  class Sink;
  void Join();

  const HardwareDb& db_;
  std::thread thread_;
  std::atomic<bool> cancel_{false};
  bool running_ = false;
};

}  // namespace gpuplan
