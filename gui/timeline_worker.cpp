#include "gui/timeline_worker.h"

#include <QMetaObject>
#include <utility>

namespace gpuplan {

TimelineWorker::TimelineWorker(const HardwareDb& db, QObject* parent)
    : QObject(parent), db_(db), thread_([this] { Run(); }) {}

TimelineWorker::~TimelineWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    pending_.reset();
  }
  wake_.notify_one();
  thread_.join();
}

int64_t TimelineWorker::Post(const JobSpec& job, std::shared_ptr<const MeasuredRates> measured) {
  const int64_t ticket = ++latest_;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_ = Request{ticket, job, std::move(measured)};
  }
  wake_.notify_one();
  return ticket;
}

void TimelineWorker::Drop() {
  ++latest_;  // whatever is running is stale now
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.reset();
}

void TimelineWorker::Run() {
  for (;;) {
    Request request;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stop_ || pending_.has_value(); });
      if (stop_) return;
      request = std::move(*pending_);
      pending_.reset();
    }
    const JobSpec& job = request.job;
    const qint64 ticket = request.ticket;
    EventSimOptions options;
    options.record_timeline = true;
    Expected<EventSimResult> sim = SimulateStepEvents(job, *db_.FindGpu(job.cluster.gpu),
                                                      *db_.FindNetwork(job.cluster.inter_node),
                                                      options, request.measured.get());
    if (sim.ok()) {
      auto result = std::make_shared<EventSimResult>(std::move(sim).value());
      QMetaObject::invokeMethod(
          this, [this, ticket, result] { emit Simulated(ticket, result); }, Qt::QueuedConnection);
    } else {
      const QString message = QString::fromStdString(sim.status().message());
      QMetaObject::invokeMethod(
          this, [this, ticket, message] { emit SimulationFailed(ticket, message); },
          Qt::QueuedConnection);
    }
  }
}

}  // namespace gpuplan
