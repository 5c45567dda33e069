// gpuplan: plan and simulate multi-GPU training. Thin program over the libraries.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/option_checks.h"

namespace {

// The subcommand table.
constexpr gpuplan::CommandSpec kCommands[] = {
    {"simulate", "Predict step time, throughput, MFU and memory of one training job",
     &gpuplan::AttachSimulate},
    {"plan", "Find the best GPU type, count, layout and price for a model and a job",
     &gpuplan::AttachPlan},
    {"accuracy", "Compare predictions with published runs and the measured layout sweep",
     &gpuplan::AttachAccuracy},
    {"hardware", "List the GPUs, networks and node templates of the hardware database",
     &gpuplan::AttachHardware},
    {"models", "List the built-in model presets", &gpuplan::AttachModels},
    {"profile", "Measure the local GPUs (GEMM, kernels, copies, NCCL) into a profile",
     &gpuplan::AttachProfile},
    {"validate", "Run a plan on GPUs against its prediction (--dry-run: print what would run)",
     &gpuplan::AttachValidate},
    {"calibrate", "Fit a profile's corrections to validation reports; show errors before and after",
     &gpuplan::AttachCalibrate},
};

// The exit codes, one per outcome a script can act on (also printed by --help).
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitInvalidInput = 2;
constexpr int kExitNoPlan = 3;
constexpr const char* kExitCodesHelp =
    "Exit codes:\n"
    "  0  success\n"
    "  1  failure, or something unavailable (no GPU; a file that cannot be written)\n"
    "  2  invalid input (an unknown command, a bad flag, value or file)\n"
    "  3  no plan found (plan: nothing fits, the deadline or budget is unmet, or no layout can\n"
    "     be enumerated; the report is still printed)\n";

int ExitCode(gpuplan::ErrorKind kind) {
  switch (kind) {
    case gpuplan::ErrorKind::kInvalidInput:
      return kExitInvalidInput;
    case gpuplan::ErrorKind::kNotFound:
      return kExitNoPlan;
    case gpuplan::ErrorKind::kUnavailable:
    case gpuplan::ErrorKind::kInternal:
    case gpuplan::ErrorKind::kCancelled:
      return kExitFailure;
  }
  return kExitFailure;
}

// "simulate, plan, ..." from the command table.
std::string CommandNames() {
  std::string out;
  for (const gpuplan::CommandSpec& c : kCommands)
    out += (out.empty() ? "" : ", ") + std::string(c.name);
  return out;
}

// A message as the terminal should show it: a control byte the user's input carried into it (a
// NUL would cut the line, an ESC would drive the terminal) is written as \xNN.
std::string TerminalSafe(const std::string& message) {
  std::string out;
  for (const char c : message) {
    const auto b = static_cast<unsigned char>(c);
    if ((b < 0x20 && c != '\n' && c != '\t') || b == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 15];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpuplan: simulate and plan multi-GPU training strategy and cost"};
  app.require_subcommand(1);
  app.set_version_flag(
      "--version", std::string("gpuplan ") + GPUPLAN_VERSION + " (commit " + GPUPLAN_COMMIT + ")",
      "Print the version and the git commit it was built from");
  app.footer(kExitCodesHelp);
  gpuplan::GlobalOptions global;
  // One directory per --hardware-db, so a command name after it is not taken as a second one.
  app.add_option("--hardware-db", global.hardware_db_dirs,
                 "Extra hardware-db directory (JSON files; entries override built-in ids)")
      ->check(CLI::ExistingDirectory)
      ->allow_extra_args(false);
  std::function<gpuplan::Status()> run;
  for (const gpuplan::CommandSpec& c : kCommands) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    c.attach(sub, &global, &run);
  }
  gpuplan::CheckOptionValues(&app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (app.get_subcommands().empty() && dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
      // No command recognised: name what came instead of one.
      const std::vector<std::string> rest = app.remaining();
      const std::string what = rest.empty() ? std::string("no command given")
                               : rest.front().rfind('-', 0) == 0
                                   ? "unknown option '" + rest.front() + "'"
                                   : "unknown command '" + rest.front() + "'";
      std::fprintf(stderr, "gpuplan: %s\ncommands: %s (gpuplan COMMAND --help for its options)\n",
                   what.c_str(), CommandNames().c_str());
    } else {
      std::fprintf(stderr, "gpuplan: %s\n", e.what());
    }
    return kExitInvalidInput;
  }
  const gpuplan::Status st = run();
  if (st.ok()) return kExitOk;
  const char* label = st.kind() == gpuplan::ErrorKind::kNotFound ? "" : "error: ";
  std::fprintf(stderr, "gpuplan: %s%s\n", label, TerminalSafe(st.message()).c_str());
  return ExitCode(st.kind());
}
