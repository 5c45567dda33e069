// Starting a plan's ranks (`gpuplan validate --launch local|slurm`): gpuplan writes no launcher of
// its own, it runs OpenMPI's `mpirun` on this host, or Slurm's `srun` across the job's nodes, with
// one copy of itself per rank. The process start is the one side effect, behind RankLauncher so
// that tests use a fake.
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

/// This program's own path (/proc/self/exe, read before any launch: in the ranks it would name
/// mpirun's processes), which the launched ranks run; Unavailable when it cannot be read.
Expected<std::string> ThisProgramPath();

/// The mpirun command that starts `ranks` copies of `program args...` on this host:
/// `mpirun --oversubscribe [--allow-run-as-root] -np RANKS PROGRAM ARGS...`. --oversubscribe
/// because the ranks may outnumber the cores; --allow-run-as-root only when `as_root` (OpenMPI
/// refuses root otherwise).
std::vector<std::string> LocalMpirunCommand(const std::string& mpirun, int64_t ranks, bool as_root,
                                            const std::string& program,
                                            const std::vector<std::string>& args);

/// The srun command that starts `ranks` copies of `program args...` in the current Slurm job,
/// `ranks_per_node` on each node (the plan's GPUs per node): `srun --ntasks=RANKS
/// --ntasks-per-node=PER_NODE --kill-on-bad-exit=1 PROGRAM ARGS...`. No GPU binding is asked for:
/// each rank takes the GPU of its place on the node, or its own when the site binds GPUs per task
/// (LocalDevice). MPI_Init connects the ranks through Slurm's PMI (the site's MpiDefault, or
/// SLURM_MPI_TYPE).
std::vector<std::string> SlurmSrunCommand(int64_t ranks, int64_t ranks_per_node,
                                          const std::string& program,
                                          const std::vector<std::string>& args);

}  // namespace gpuplan
