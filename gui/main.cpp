// gpuplan-gui: the what-if window (docs/GUI.md). With --screenshot it renders the window with a
// realistic plan loaded (the default session or --open, the planner's answer and the
// timeline included) to a PNG and exits, without a display.
#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QImage>
#include <QThread>
#include <cstdio>
#include <string>
#include <vector>

#include "gui/main_window.h"
#include "gui/results_panel.h"
#include "gui/session.h"
#include "hardware-db/hardware_db.h"

namespace {

// Waits, processing events, until `done` holds or `timeout_ms` passes; returns done().
template <typename Done>
bool WaitFor(Done done, int timeout_ms) {
  QElapsedTimer timer;
  timer.start();
  while (!done() && timer.elapsed() < timeout_ms) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    QThread::msleep(5);
  }
  return done();
}

bool WantsScreenshot(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--screenshot" || arg.rfind("--screenshot=", 0) == 0) return true;
  }
  return false;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "gpuplan-gui: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  // A screenshot needs no display: render offscreen unless the user chose a platform.
  if (WantsScreenshot(argc, argv) && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
  }
  QApplication app(argc, argv);
  QApplication::setApplicationName("gpuplan-gui");
  QApplication::setApplicationVersion(GPUPLAN_VERSION);

  QCommandLineParser parser;
  parser.setApplicationDescription(
      "What-if explorer of multi-GPU training: time, memory and cost as the inputs change.");
  parser.addHelpOption();
  parser.addVersionOption();
  // Not "--session": QGuiApplication takes -session for X11 session management.
  const QCommandLineOption session_option(
      "open", "Open this session file (docs/GUI.md) instead of the default session.", "FILE");
  const QCommandLineOption db_option(
      "hardware-db", "Also load this hardware database directory (repeatable).", "DIR");
  const QCommandLineOption screenshot_option(
      "screenshot",
      "Render the window, with the planner's answer and the timeline, to this PNG and exit.",
      "PNG");
  const QCommandLineOption profile_option(
      "profile",
      "Measured profile (gpuplan profile) of one GPU type: its figures replace the datasheet "
      "ones for that type, as with gpuplan simulate --profile.",
      "FILE");
  const QCommandLineOption size_option("size", "Window size for --screenshot (default 1600x1000).",
                                       "WxH", "1600x1000");
  parser.addOptions({session_option, db_option, profile_option, screenshot_option, size_option});
  parser.process(app);

  std::vector<std::string> extra_dirs;
  for (const QString& dir : parser.values(db_option)) extra_dirs.push_back(dir.toStdString());
  gpuplan::Expected<gpuplan::HardwareDb> db = gpuplan::LoadHardwareDb(extra_dirs);
  if (!db.ok()) return Fail(db.status().message());

  gpuplan::Session session = gpuplan::DefaultSession(*db);
  if (parser.isSet(session_option)) {
    gpuplan::Expected<gpuplan::Session> opened =
        gpuplan::ReadSessionFile(parser.value(session_option).toStdString(), *db);
    if (!opened.ok()) return Fail(opened.status().message());
    session = std::move(opened).value();
  }

  gpuplan::MainWindow window(*db, session);
  if (parser.isSet(profile_option)) {
    const gpuplan::Status used = window.UseProfile(parser.value(profile_option));
    if (!used.ok()) return Fail(used.message());
  }
  if (!parser.isSet(screenshot_option)) {
    window.show();
    return QApplication::exec();
  }

  const QStringList size = parser.value(size_option).split('x');
  const int width = size.size() == 2 ? size[0].toInt() : 0;
  const int height = size.size() == 2 ? size[1].toInt() : 0;
  if (width < 640 || height < 480) {
    return Fail("--size: '" + parser.value(size_option).toStdString() +
                "' must be WIDTHxHEIGHT, at least 640x480");
  }
  window.resize(width, height);
  window.show();
  window.FindBestPlan();
  if (!WaitFor([&] { return !window.Searching() && !window.TimelinePending(); }, 120000)) {
    return Fail("--screenshot: the planner or the timeline did not finish within 120 s");
  }
  // Let the last layouts and repaints settle.
  WaitFor([] { return false; }, 200);
  const QString path = parser.value(screenshot_option);
  if (!window.grab().toImage().save(path, "PNG")) {
    return Fail("--screenshot: cannot write " + path.toStdString());
  }
  std::printf("gpuplan-gui: wrote %s (%dx%d)\n", path.toStdString().c_str(), width, height);
  return 0;
}
