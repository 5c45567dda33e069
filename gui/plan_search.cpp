#include "gui/plan_search.h"

#include <QMetaObject>
#include <utility>

#include "planner/planner.h"

namespace gpuplan {

// Forwards the planner's progress to the GUI thread and its cancel flag to the planner.
class PlanSearch::Sink : public ProgressSink {
 public:
  explicit Sink(PlanSearch* owner) : owner_(owner) {}
  void Update(int64_t done, int64_t total) override {
    PlanSearch* owner = owner_;
    QMetaObject::invokeMethod(
        owner,
        [owner, done, total] {
          emit owner->Progress(static_cast<int>(done), static_cast<int>(total));
        },
        Qt::QueuedConnection);
  }
  bool Cancelled() const override { return owner_->cancel_.load(); }

 private:
  PlanSearch* owner_;
};

PlanSearch::PlanSearch(const HardwareDb& db, QObject* parent) : QObject(parent), db_(db) {}

PlanSearch::~PlanSearch() {
  cancel_ = true;
  Join();
}

void PlanSearch::Join() {
  if (thread_.joinable()) thread_.join();
}

bool PlanSearch::Start(PlanRequest request, std::shared_ptr<const MeasuredRates> measured) {
  if (running_) return false;
  Join();  // the previous search's thread has delivered its answer; reap it
  running_ = true;
  cancel_ = false;
  request.measured = measured.get();
  // The lambda owns `measured`, so request.measured stays valid while MakePlan runs.
  thread_ = std::thread([this, request = std::move(request), measured = std::move(measured)] {
    Sink sink(this);
    Expected<PlanResult> result = MakePlan(request, db_, &sink);
    const bool cancelled = !result.ok() && result.status().kind() == ErrorKind::kCancelled;
    const QString error = QString::fromStdString(result.status().message());
    std::shared_ptr<const PlanResult> answer;
    if (result.ok()) answer = std::make_shared<const PlanResult>(std::move(result).value());
    // Delivered on the GUI thread; dropped by Qt if this object is gone by then.
    QMetaObject::invokeMethod(
        this,
        [this, answer, cancelled, error] {
          running_ = false;
          if (answer) {
            emit Finished(answer);
          } else if (cancelled) {
            emit Cancelled();
          } else {
            emit Failed(error);
          }
        },
        Qt::QueuedConnection);
  });
  return true;
}

void PlanSearch::Cancel() { cancel_ = true; }

}  // namespace gpuplan
