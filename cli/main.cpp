// gpuplan: plan and simulate multi-GPU training. Thin program over the libraries.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>

#include "cli/commands.h"

namespace {

// The subcommand table.
constexpr gpuplan::CommandSpec kCommands[] = {
    {"simulate", "Predict step time, throughput, MFU and memory of one training job",
     &gpuplan::AttachSimulate},
    {"plan", "Find the best GPU type, count, layout and price for a model and a job",
     &gpuplan::AttachPlan},
    {"accuracy", "Compare predictions with published runs (calibration/published_runs.json)",
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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpuplan: simulate and plan multi-GPU training strategy and cost"};
  app.require_subcommand(1);
  gpuplan::GlobalOptions global;
  app.add_option("--hardware-db", global.hardware_db_dirs,
                 "Extra hardware-db directory (JSON files; entries override built-in ids)")
      ->check(CLI::ExistingDirectory);
  std::function<gpuplan::Status()> run;
  for (const gpuplan::CommandSpec& c : kCommands) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    c.attach(sub, &global, &run);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "gpuplan: %s\n", e.what());
    return 2;
  }
  const gpuplan::Status st = run();
  if (st.ok()) return 0;
  std::fprintf(stderr, "gpuplan: error: %s\n", st.message().c_str());
  return st.kind() == gpuplan::ErrorKind::kInvalidInput ? 2 : 1;
}
