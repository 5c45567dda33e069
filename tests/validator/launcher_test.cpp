// `validate --launch local|slurm` starts the ranks through mpirun or srun (validator/launcher.h):
// the command lines it builds, and the process launcher's exit statuses.
#include "validator/launcher.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpuplan {
namespace {

TEST(Launcher, LocalMpirunCommand) {
  EXPECT_EQ(LocalMpirunCommand("/usr/bin/mpirun", 4, false, "/opt/gpuplan", {"validate", "--x"}),
            (std::vector<std::string>{"/usr/bin/mpirun", "--oversubscribe", "-np", "4",
                                      "/opt/gpuplan", "validate", "--x"}));
  // OpenMPI refuses root without the flag (CI runs as root).
  EXPECT_EQ(LocalMpirunCommand("mpirun", 2, true, "gpuplan", {}),
            (std::vector<std::string>{"mpirun", "--oversubscribe", "--allow-run-as-root", "-np",
                                      "2", "gpuplan"}));
}

// --launch slurm: one task per rank, the plan's GPUs per node on each node, the job ended when a
// rank fails.
TEST(Launcher, SlurmSrunCommand) {
  EXPECT_EQ(SlurmSrunCommand(16, 8, "/shared/gpuplan", {"validate", "--plan", "p.json"}),
            (std::vector<std::string>{"srun", "--ntasks=16", "--ntasks-per-node=8",
                                      "--kill-on-bad-exit=1", "/shared/gpuplan", "validate",
                                      "--plan", "p.json"}));
}

TEST(Launcher, ProcessLauncherPassesTheExitStatusOn) {
  const std::unique_ptr<RankLauncher> launcher = MakeProcessLauncher();
  EXPECT_EQ(*launcher->Run({"true"}), 0);
  EXPECT_EQ(*launcher->Run({"sh", "-c", "exit 7"}), 7);
  EXPECT_EQ(*launcher->Run({"sh", "-c", "kill -9 $$"}), 128 + 9);  // a killed launcher
  Expected<int> missing = launcher->Run({"/nonexistent/mpirun"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("could not start '/nonexistent/mpirun'"),
            std::string::npos)
      << missing.status().message();
  EXPECT_FALSE(launcher->Run({}).ok());
}

}  // namespace
}  // namespace gpuplan
