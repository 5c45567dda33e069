#include "validator/launcher.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpuplan {
namespace {

class ProcessLauncher : public RankLauncher {
 public:
  Expected<int> Run(const std::vector<std::string>& argv) override {
    if (argv.empty()) return Status::Invalid("launcher: empty command");
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const pid_t pid = fork();
    if (pid < 0) return Status::Unavailable(std::string("launcher: fork: ") + strerror(errno));
    if (pid == 0) {
      execvp(args[0], args.data());
      // Only reached when the program could not be started; 127 as a shell reports it.
      _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) {
        return Status::Unavailable(std::string("launcher: waitpid: ") + strerror(errno));
      }
    }
    if (WIFEXITED(status)) {
      if (WEXITSTATUS(status) == 127) {
        return Status::Unavailable("launcher: could not start '" + argv[0] +
                                   "' (not found or not executable: mpirun comes with "
                                   "openmpi-bin, srun with Slurm's client commands)");
      }
      return WEXITSTATUS(status);
    }
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  }
};

}  // namespace

std::unique_ptr<RankLauncher> MakeProcessLauncher() { return std::make_unique<ProcessLauncher>(); }

Expected<std::string> ThisProgramPath() {
  char self[4096] = {};
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length <= 0) return Status::Unavailable("cannot find this program's path (/proc/self/exe)");
  return std::string(self, static_cast<size_t>(length));
}

std::vector<std::string> LocalMpirunCommand(const std::string& mpirun, int64_t ranks, bool as_root,
                                            const std::string& program,
                                            const std::vector<std::string>& args) {
  std::vector<std::string> cmd = {mpirun, "--oversubscribe"};
  if (as_root) cmd.push_back("--allow-run-as-root");
  cmd.push_back("-np");
  cmd.push_back(std::to_string(ranks));
  cmd.push_back(program);
  cmd.insert(cmd.end(), args.begin(), args.end());
  return cmd;
}

std::vector<std::string> SlurmSrunCommand(int64_t ranks, int64_t ranks_per_node,
                                          const std::string& program,
                                          const std::vector<std::string>& args) {
  // A rank that fails ends the step (--kill-on-bad-exit) instead of leaving its peers waiting.
  std::vector<std::string> cmd = {"srun", "--ntasks=" + std::to_string(ranks),
                                  "--ntasks-per-node=" + std::to_string(ranks_per_node),
                                  "--kill-on-bad-exit=1", program};
  cmd.insert(cmd.end(), args.begin(), args.end());
  return cmd;
}

}  // namespace gpuplan
