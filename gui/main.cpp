// gpuplan-gui: the what-if window (docs/GUI.md). With --screenshot it renders the window with a
// realistic plan loaded (the default session or --open, the planner's answer and the
// timeline included) to a PNG and exits, without a display; --help and --version need none
// either.
#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QImage>
#include <QMessageBox>
#include <QThread>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "gui/main_window.h"
#include "gui/results_panel.h"
#include "gui/session.h"
#include "hardware-db/hardware_db.h"

namespace {

// --screenshot window sizes (docs/GUI.md): below the minimum the layout does not fit; above the
// maximum (8K UHD) the offscreen image would take gigabytes (99999x99999 is 40 GB).
constexpr int kMinWidth = 640, kMinHeight = 480;
constexpr int kMaxWidth = 7680, kMaxHeight = 4320;

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

bool HasArgument(int argc, char** argv, std::initializer_list<std::string_view> names) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    for (std::string_view name : names) {
      if (arg == name || (arg.size() > name.size() && arg.substr(0, name.size()) == name &&
                          arg[name.size()] == '=')) {
        return true;
      }
    }
  }
  return false;
}

// The options of gpuplan-gui and the parser that reads them.
struct CommandLine {
  QCommandLineParser parser;
  // Not "--session": QGuiApplication takes -session for X11 session management.
  const QCommandLineOption session_option{
      "open", "Open this session file (docs/GUI.md) instead of the default session.", "FILE"};
  const QCommandLineOption db_option{
      "hardware-db", "Also load this hardware database directory (repeatable).", "DIR"};
  const QCommandLineOption screenshot_option{
      "screenshot",
      "Render the window, with the planner's answer and the timeline, to this PNG and exit.",
      "PNG"};
  const QCommandLineOption profile_option{
      "profile",
      "Measured profile (gpuplan profile) of one GPU type: its figures replace the datasheet "
      "ones for that type, as with gpuplan simulate --profile.",
      "FILE"};
  const QCommandLineOption size_option{"size", "Window size for --screenshot (default 1600x1000).",
                                       "WxH", "1600x1000"};

  CommandLine() {
    parser.setApplicationDescription(
        "What-if explorer of multi-GPU training: time, memory and cost as the inputs change.");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOptions({session_option, db_option, profile_option, screenshot_option, size_option});
  }
};

void SetIdentity() {
  QCoreApplication::setApplicationName("gpuplan-gui");
  QCoreApplication::setApplicationVersion(GPUPLAN_VERSION);
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "gpuplan-gui: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  // Help and version need no display: answer them before QApplication looks for one. Qt's
  // own options (-platform) are unknown to this parser, so it parses without failing on them;
  // "--open --help" opens a file named --help, below.
  if (HasArgument(argc, argv, {"-h", "-?", "--help", "-v", "--version"})) {
    const QCoreApplication core(argc, argv);
    SetIdentity();
    CommandLine cli;
    cli.parser.parse(QCoreApplication::arguments());
    if (cli.parser.isSet("help")) cli.parser.showHelp(0);
    if (cli.parser.isSet("version")) cli.parser.showVersion();
  }
  // A screenshot needs no display: render offscreen unless the user chose a platform.
  if (HasArgument(argc, argv, {"--screenshot"}) && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
  }
  QApplication app(argc, argv);
  SetIdentity();
  CommandLine cli;
  cli.parser.process(app);
  // A startup error goes to stderr with exit status 1; when the window would have opened, it is
  // also shown in a message box, so that a user who started the program from a desktop sees it.
  const bool interactive = !cli.parser.isSet(cli.screenshot_option);
  auto fail = [interactive](const std::string& message) {
    if (interactive) QMessageBox::critical(nullptr, "gpuplan-gui", QString::fromStdString(message));
    return Fail(message);
  };

  std::vector<std::string> extra_dirs;
  for (const QString& dir : cli.parser.values(cli.db_option))
    extra_dirs.push_back(dir.toStdString());
  gpuplan::Expected<gpuplan::HardwareDb> db = gpuplan::LoadHardwareDb(extra_dirs);
  if (!db.ok()) return fail(db.status().message());

  gpuplan::Session session = gpuplan::DefaultSession(*db);
  if (cli.parser.isSet(cli.session_option)) {
    gpuplan::Expected<gpuplan::Session> opened =
        gpuplan::ReadSessionFile(cli.parser.value(cli.session_option).toStdString(), *db);
    if (!opened.ok()) return fail(opened.status().message());
    session = std::move(opened).value();
  }

  gpuplan::MainWindow window(*db, session);
  if (cli.parser.isSet(cli.profile_option)) {
    const gpuplan::Status used = window.UseProfile(cli.parser.value(cli.profile_option));
    if (!used.ok()) return fail(used.message());
  }
  if (!cli.parser.isSet(cli.screenshot_option)) {
    window.show();
    return QApplication::exec();
  }

  const QStringList size = cli.parser.value(cli.size_option).split('x');
  const int width = size.size() == 2 ? size[0].toInt() : 0;
  const int height = size.size() == 2 ? size[1].toInt() : 0;
  if (width < kMinWidth || height < kMinHeight || width > kMaxWidth || height > kMaxHeight) {
    return fail("--size: '" + cli.parser.value(cli.size_option).toStdString() +
                "' must be WIDTHxHEIGHT, from " + std::to_string(kMinWidth) + "x" +
                std::to_string(kMinHeight) + " to " + std::to_string(kMaxWidth) + "x" +
                std::to_string(kMaxHeight));
  }
  window.resize(width, height);
  window.show();
  window.FindBestPlan();
  // A guard against a search that never ends, not a speed bar (the planner's speed is measured by
  // bench/planner_bench): generous enough for the sanitizer and fuzzing build, where a 405B
  // search over every GPU type takes about 2 minutes, and under the tests' 300 s timeout.
  if (!WaitFor([&] { return !window.Searching() && !window.TimelinePending(); }, 280000)) {
    return fail("--screenshot: the planner or the timeline did not finish within 280 s");
  }
  // Let the last layouts and repaints settle.
  WaitFor([] { return false; }, 200);
  const QString path = cli.parser.value(cli.screenshot_option);
  if (!window.grab().toImage().save(path, "PNG")) {
    return fail("--screenshot: cannot write " + path.toStdString());
  }
  std::printf("gpuplan-gui: wrote %s (%dx%d)\n", path.toStdString().c_str(), width, height);
  return 0;
}
