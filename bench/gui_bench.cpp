// The GUI's inner loop, as the user feels it: one input changes, the window re-evaluates and
// repaints. Issue bar: <= 50 ms from a parameter change to the repaint for a 405B model.
// Llama 3 405B on 16,384 H100 (examples/llama3-405b-h100.json, the layout of Dubey et al. 2024,
// Table 4); the GPU count alternates between 16,384 and 8,192, so every iteration is a real
// change. Runs offscreen (no display needed).
#include <benchmark/benchmark.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QSpinBox>
#include <QThread>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "gui/input_panel.h"
#include "gui/main_window.h"
#include "gui/session.h"
#include "simulator/job_spec_json.h"

namespace gpuplan {
namespace {

struct Fixture {
  HardwareDb db;
  std::unique_ptr<MainWindow> window;
  QSpinBox* gpus = nullptr;
};

// Made on first use, destroyed by main() before the QApplication.
std::unique_ptr<Fixture> g_fixture;

Fixture& Gui() {
  if (!g_fixture) {
    g_fixture = std::make_unique<Fixture>();
    Fixture* fx = g_fixture.get();
    Expected<HardwareDb> db = LoadHardwareDb({});
    Expected<JobSpec> job =
        db.ok() ? ReadJobSpecFile(GPUPLAN_SOURCE_DIR "/examples/llama3-405b-h100.json", *db)
                : Expected<JobSpec>(db.status());
    if (!job.ok()) {
      std::fprintf(stderr, "gui_bench: %s\n", job.status().message().c_str());
      std::exit(1);
    }
    fx->db = std::move(db).value();
    Session s = DefaultSession(fx->db);
    s.model_origin = "llama3-405b";
    s.job = std::move(job).value();
    s.train_tokens = 15.6e12;  // Llama 3's pre-training tokens
    fx->window = std::make_unique<MainWindow>(fx->db, s);
    fx->window->resize(1600, 1000);
    fx->window->show();
    fx->gpus = qobject_cast<QSpinBox*>(fx->window->inputs()->FieldWidget("gpus"));
  }
  return *g_fixture;
}

// Waits for the background timeline of the current inputs.
void AwaitTimeline(MainWindow& w) {
  while (w.TimelinePending()) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
    QThread::usleep(200);
  }
}

// A change of the GPU count to the repaint of the whole window with its new numbers, memory
// bar, breakdown and scaling chart (the timeline pane still shows the previous step).
void BM_ParameterChangeToRepaint405B(benchmark::State& state) {
  Fixture& f = Gui();
  AwaitTimeline(*f.window);
  int n = 0;
  for (auto _ : state) {
    f.gpus->setValue(++n % 2 != 0 ? 8192 : 16384);
    f.window->repaint();
    state.PauseTiming();
    AwaitTimeline(*f.window);
    state.ResumeTiming();
  }
}
BENCHMARK(BM_ParameterChangeToRepaint405B)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same change until the event simulator's timeline of the new inputs is painted too
// (simulated on the background thread while the window stays responsive).
void BM_ParameterChangeToTimelineRepaint405B(benchmark::State& state) {
  Fixture& f = Gui();
  AwaitTimeline(*f.window);
  int n = 0;
  for (auto _ : state) {
    f.gpus->setValue(++n % 2 != 0 ? 8192 : 16384);
    AwaitTimeline(*f.window);
    f.window->repaint();
  }
}
BENCHMARK(BM_ParameterChangeToTimelineRepaint405B)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace gpuplan

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  gpuplan::g_fixture.reset();
  return 0;
}
