// The subcommands of `gpuplan`: one table (main.cpp), one function per command.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "common/status.h"

namespace gpuplan {

/// Options every command shares.
struct GlobalOptions {
  std::vector<std::string> hardware_db_dirs;  ///< --hardware-db DIR (repeatable)
};

/// One row of the command table: registers its options on `sub` and returns the function that
/// runs it after parsing. Commands print their output and return a Status; main maps it to an
/// exit code (0 ok, 2 invalid input, 3 no plan found, 1 anything else).
struct CommandSpec {
  const char* name;
  const char* help;
  void (*attach)(CLI::App* sub, const GlobalOptions* global, std::function<Status()>* run);
};

void AttachSimulate(CLI::App* sub, const GlobalOptions* global, std::function<Status()>* run);
void AttachPlan(CLI::App* sub, const GlobalOptions* global, std::function<Status()>* run);
void AttachAccuracy(CLI::App* sub, const GlobalOptions* global, std::function<Status()>* run);
void AttachHardware(CLI::App* sub, const GlobalOptions* global, std::function<Status()>* run);
void AttachModels(CLI::App* sub, const GlobalOptions* global, std::function<Status()>* run);
void AttachProfile(CLI::App* sub, const GlobalOptions* global, std::function<Status()>* run);
void AttachValidate(CLI::App* sub, const GlobalOptions* global, std::function<Status()>* run);
void AttachCalibrate(CLI::App* sub, const GlobalOptions* global, std::function<Status()>* run);

}  // namespace gpuplan
