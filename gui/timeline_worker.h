// The event simulator behind the Timeline tab, on one background thread: the window posts the
// job of every change and only the newest one waiting is simulated, so typing never queues up
// work and the window never waits for it.
#pragma once

#include <QObject>
#include <QString>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "hardware-db/hardware_db.h"
#include "simulator/calibration.h"
#include "simulator/event_sim.h"
#include "simulator/job.h"

namespace gpuplan {

class TimelineWorker : public QObject {
  Q_OBJECT

 public:
  /// `db` must outlive the worker. Starts the thread.
  explicit TimelineWorker(const HardwareDb& db, QObject* parent = nullptr);
  /// Drops what is waiting, lets the running simulation end and joins the thread.
  ~TimelineWorker() override;

  /// Asks for a simulation of `job` (it must pass ValidateJob) with the timeline recorded, at
  /// the rates of `measured` for its GPU type (nullptr: datasheet), replacing any request that
  /// has not started. Returns the request's ticket (increasing).
  int64_t Post(const JobSpec& job, std::shared_ptr<const MeasuredRates> measured);
  /// Forgets a request that has not started (the inputs became invalid).
  void Drop();
  /// The ticket of the newest request; answers with another ticket are stale.
  int64_t latest() const { return latest_; }

 signals:
  /// The simulation of request `ticket`; emitted on this object's thread.
  void Simulated(qint64 ticket, std::shared_ptr<EventSimResult> result);
  void SimulationFailed(qint64 ticket, const QString& message);

 private:
  void Run();

  const HardwareDb& db_;
  std::mutex mutex_;
  std::condition_variable wake_;
  struct Request {
    int64_t ticket = 0;
    JobSpec job;
    std::shared_ptr<const MeasuredRates> measured;
  };
  std::optional<Request> pending_;  // guarded by mutex_
  bool stop_ = false;               // guarded by mutex_
  int64_t latest_ = 0;              // GUI thread only
  std::thread thread_;
};

}  // namespace gpuplan
