// The GUI's inner loop, as the user feels it: one input changes, the window re-evaluates and
// repaints. Issue bar: <= 50 ms from a parameter change to the repaint for a 405B model.
// Llama 3 405B on 16,384 H100 (examples/llama3-405b-session.json: the layout of Dubey et al.
// 2024, Table 4); the GPU count alternates between 16,384 and 8,192, so every iteration is a real
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
    if (!db.ok()) {
      std::fprintf(stderr, "gui_bench: %s\n", db.status().message().c_str());
      std::exit(1);
    }
    fx->db = std::move(db).value();
    Expected<Session> s =
        ReadSessionFile(GPUPLAN_SOURCE_DIR "/examples/llama3-405b-session.json", fx->db);
    if (!s.ok()) {
      std::fprintf(stderr, "gui_bench: %s\n", s.status().message().c_str());
      std::exit(1);
    }
    fx->window = std::make_unique<MainWindow>(fx->db, *s);
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
