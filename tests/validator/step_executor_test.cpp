// A rank program's communication executed under a real MPI launch (issue 19): run by ctest as
// `mpirun -np 2` and `-np 4` (tests/validator/CMakeLists.txt) for the small plans of the issue.
// Every rank runs its RankProgram's collectives, sends and receives over the plan's
// communicators; the step must finish (no deadlock: ctest's timeout), every element must arrive
// right, and every receive must meet its send.
#include "validator/step_executor.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include "tests/validator/mpi_world.h"
#include "tests/validator/test_job.h"
#include "validator/plan_run.h"

namespace gpuplan {
namespace {

// Messages capped at 64 KiB: the schedule and the checks, not the bandwidth, are under test.
constexpr double kMaxBytesPerOp = 64 * 1024;
// A hang is reported by the watchdog well inside ctest's timeout (tests/validator/CMakeLists.txt).
constexpr double kWatchdogSeconds = 60;

void RunPlan(const TestLayout& l, int zero_stage = 0) {
  JobSpec job = TestJob(l);
  job.parallel.zero_stage = zero_stage;
  job.training.global_batch_size = 4 * l.dp;  // 4 micro-batches per DP rank (issue 19's PP2 plan)
  if (job.cluster.num_gpus != WorldSize()) {
    GTEST_SKIP() << "a plan of " << job.cluster.num_gpus << " ranks, launched on " << WorldSize();
  }
  const RankLayout layout = MakeRankLayout(job);
  Expected<PlanCommunicators> comms = PlanCommunicators::Split(layout, MPI_COMM_WORLD);
  ASSERT_TRUE(comms.ok()) << comms.status().message();
  const std::vector<ProgramStep> program = RankProgram(job, layout, WorldRank());
  StepOptions options;
  options.max_bytes_per_op = kMaxBytesPerOp;
  options.watchdog_s = kWatchdogSeconds;
  MpiTransport transport(*comms, MPI_COMM_WORLD);
  Expected<StepRunResult> run = RunStep(job, program, transport, options);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->wrong, 0) << run->wrong << " of " << run->elements << " elements wrong";
  EXPECT_GT(run->elements, 0);
  // Every send has its receive: the totals over all ranks agree.
  int64_t counts[2] = {run->sends, run->receives};
  int64_t totals[2] = {0, 0};
  MPI_Allreduce(counts, totals, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(totals[0], totals[1]);
  if (job.parallel.pp > 1) {
    EXPECT_GT(totals[0], 0);
  }
}

// Llama-style (or Mixtral) layers at 1,024 tokens, small enough for oversubscribed CPUs.
TestLayout Small(TestLayout l) {
  l.model = l.model == std::string("mixtral-8x7b") ? l.model : "llama3-8b";
  l.seq_len = 1024;
  return l;
}

TEST(CommExecutor, Dp2ZeroOne) { RunPlan(Small({.dp = 2}), 1); }
TEST(CommExecutor, Tp2SequenceParallel) { RunPlan(Small({.tp = 2, .sequence_parallel = true})); }
TEST(CommExecutor, Pp2OneFOneB) { RunPlan(Small({.pp = 2})); }
TEST(CommExecutor, Pp2Vpp2Interleaved) {
  RunPlan(Small({.pp = 2, .vpp = 2, .schedule = Schedule::kInterleaved}));
}
TEST(CommExecutor, Cp2) { RunPlan(Small({.cp = 2})); }
TEST(CommExecutor, Ep2Moe) { RunPlan(Small({.dp = 2, .ep = 2, .model = "mixtral-8x7b"})); }
// Expert TP below TP: TP2 with sequence parallelism, each expert rank its own expert TP group.
TEST(CommExecutor, Tp2Ep2Etp1Moe) {
  RunPlan(Small(
      {.tp = 2, .dp = 2, .ep = 2, .model = "mixtral-8x7b", .sequence_parallel = true, .etp = 1}));
}
TEST(CommExecutor, Tp2Dp2) { RunPlan(Small({.tp = 2, .dp = 2, .sequence_parallel = true}), 1); }
TEST(CommExecutor, Pp2Dp2) { RunPlan(Small({.dp = 2, .pp = 2}), 1); }
TEST(CommExecutor, Pp2Vpp2Tp2) {
  RunPlan(Small(
      {.tp = 2, .pp = 2, .vpp = 2, .schedule = Schedule::kInterleaved, .sequence_parallel = true}));
}
TEST(CommExecutor, Cp2Dp2ZeroThree) { RunPlan(Small({.cp = 2, .dp = 2}), 3); }

// A tiny Llama-style model on the cpu device, computed and communicated: DP2 ZeRO-1 on 2 ranks,
// TP2 PP2 with sequence parallelism on 4.
TEST(CpuRun, TinyPlanComputesAndCommunicates) {
  TestLayout l = WorldSize() == 2 ? TestLayout{.dp = 2} : TestLayout{.tp = 2, .pp = 2};
  l.sequence_parallel = l.tp > 1;
  l.seq_len = 128;
  JobSpec job = TinyCpuJob(l, 4);
  job.parallel.zero_stage = l.dp > 1 ? 1 : 0;
  if (job.cluster.num_gpus != WorldSize()) GTEST_SKIP() << "a plan of 2 or 4 ranks";
  RunOptions options;
  options.steps = 2;
  options.warmup_steps = 1;
  options.watchdog_s = kWatchdogSeconds;
  Expected<RunMeasurement> run = RunPlanOnCpu(job, MakeRankLayout(job), MPI_COMM_WORLD, options);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->step_seconds.size(), 2u);
  if (WorldRank() != 0) return;
  EXPECT_EQ(run->wrong, 0);
  EXPECT_GT(run->elements, 0);
  EXPECT_GT(run->phases.compute, 0);
  EXPECT_GT(run->phases.optimizer, 0);
  EXPECT_GT(run->peak_memory_bytes, 4.0 * 3 * static_cast<double>(run->parameters));
  for (double s : run->step_seconds) EXPECT_GT(s, 0);
}

}  // namespace
}  // namespace gpuplan
