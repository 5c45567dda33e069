// Starting a plan's ranks on this host (`gpuplan validate --launch local`): gpuplan writes no
// launcher of its own, it runs OpenMPI's `mpirun` with one copy of itself per rank. The process
// start is the one side effect, behind RankLauncher so that tests use a fake.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace gpuplan {

/// Runs a command and waits for it.
class RankLauncher {
 public:
  virtual ~RankLauncher() = default;
  /// Runs `argv` (argv[0] is the program, looked up in PATH when it has no '/'), with this
  /// process's standard streams, and returns its exit status (128 + the signal when a signal
  /// ended it), or Unavailable when it could not be started.
  virtual Expected<int> Run(const std::vector<std::string>& argv) = 0;
};

/// fork + execvp + waitpid.
std::unique_ptr<RankLauncher> MakeProcessLauncher();

/// The mpirun command that starts `ranks` copies of `program args...` on this host:
/// `mpirun --oversubscribe [--allow-run-as-root] -np RANKS PROGRAM ARGS...`. --oversubscribe
/// because the ranks may outnumber the cores; --allow-run-as-root only when `as_root` (OpenMPI
/// refuses root otherwise).
std::vector<std::string> LocalMpirunCommand(const std::string& mpirun, int64_t ranks, bool as_root,
                                            const std::string& program,
                                            const std::vector<std::string>& args);

}  // namespace gpuplan
