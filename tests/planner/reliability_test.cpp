// Reference tests for the reliability economics (planner/reliability.h): golden numbers from
// Daly 2006 and the Llama 3 405B training run.
#include "planner/reliability.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "hardware-db/hardware_db.h"
#include "planner/economics.h"
#include "simulator/presets.h"

namespace gpuplan {
namespace {

constexpr double kMinute = 60, kHour = 3600;

TEST(Reliability, DalyOptimumMatchesThePapersFigures) {
  // Daly 2006, Figs. 3-5: delta = 5 min, M = 24 h / 6 h / 15 min -> 117 / 57 / 9.1 min.
  EXPECT_NEAR(OptimalCheckpointIntervalSeconds(5 * kMinute, 24 * kHour) / kMinute, 117, 0.5);
  EXPECT_NEAR(OptimalCheckpointIntervalSeconds(5 * kMinute, 6 * kHour) / kMinute, 57, 0.5);
  EXPECT_NEAR(OptimalCheckpointIntervalSeconds(5 * kMinute, 15 * kMinute) / kMinute, 9.1, 0.05);
}

TEST(Reliability, DalyReducesToYoungForCheapCheckpoints) {
  const double delta = 1, mtbf = 1e7;
  EXPECT_NEAR(OptimalCheckpointIntervalSeconds(delta, mtbf), std::sqrt(2 * delta * mtbf),
              0.01 * std::sqrt(2 * delta * mtbf));
  // delta >= 2M: checkpoint once per MTBF.
  EXPECT_DOUBLE_EQ(OptimalCheckpointIntervalSeconds(100, 40), 40);
}

TEST(Reliability, ExpectedWallTime) {
  const double inf = std::numeric_limits<double>::infinity();
  // No failures: the work plus one checkpoint per interval.
  EXPECT_DOUBLE_EQ(ExpectedWallSeconds(1000, 100, 5, 60, inf), 1000 + 10 * 5);
  // Failures only add time, and more of it the more often they come.
  const double rare = ExpectedWallSeconds(1000, 100, 5, 60, 1e6);
  const double often = ExpectedWallSeconds(1000, 100, 5, 60, 1e3);
  EXPECT_GT(rare, 1050);
  EXPECT_GT(often, rare);
  // First order: each segment (tau + delta) pays, per failure, R plus half a segment of rework.
  const double m = 1e6, tau = 100, delta = 5, r = 60;
  const double first_order = 10 * (tau + delta) * (1 + (r + (tau + delta) / 2) / m);
  EXPECT_NEAR(rare, first_order, 1e-3 * first_order);
}

TEST(Reliability, CheckpointBytes) {
  JobSpec job;
  job.model = FindModelPreset("gpt3-175b").value();
  job.training.precision = Precision::kBf16;
  const double params = 174.6e9;
  EXPECT_NEAR(CheckpointBytes(job) / 14.0, params, 0.01 * params);  // 2 + 4 + 4 + 4 bytes
  job.training.lora = {true, 16, kLoraAttention, BaseWeights::kSame};
  EXPECT_LT(CheckpointBytes(job), 1e-3 * 14.0 * params);  // adapters only
}

TEST(Reliability, Llama3RunReproducesItsReportedGoodput) {
  // 16 384 H100 GPUs at the built-in per-GPU rate: the job's mean time to interrupt is the
  // paper's 3.1 h (Llama 3 paper Sec. 3.3.4: 419 unexpected interruptions in 54 days), and
  // with the sourced checkpoint bandwidth and restart time the effective training time is the
  // reported ">90%".
  Expected<HardwareDb> db = LoadHardwareDb({});
  ASSERT_TRUE(db.ok()) << db.status().message();
  JobSpec job;
  job.model = FindModelPreset("llama3-405b").value();
  ReliabilityInputs in;
  in.solve_s = 54 * 24 * kHour * 0.9;
  in.step_s = 10;
  in.checkpoint_bytes = CheckpointBytes(job);
  in.num_gpus = 16384;
  in.num_nodes = 2048;
  in.instances = 2048;
  const ReliabilityOutcome out = EvaluateReliability(in, db->reliability());
  EXPECT_NEAR(out.mtbf_s / kHour, 3.09, 0.05);
  EXPECT_GT(out.goodput, 0.90);
  EXPECT_LT(out.goodput, 0.99);
  EXPECT_NEAR(std::fmod(out.checkpoint_interval_s, in.step_s), 0, 1e-6);  // whole steps
  EXPECT_NEAR(out.expected_interruptions, out.expected_wall_s / out.mtbf_s, 1e-9);
}

// Every host writes its share of the checkpoint: 256 GB200 on 4 NVL72 racks of 64 GPUs are 64
// trays of 4 GPUs (gpus_per_host), not 4 nodes, so the write takes 16 times less than if each
// rack wrote through one host.
TEST(Reliability, RackScaleCheckpointsAreWrittenByEveryTray) {
  Expected<HardwareDb> db = LoadHardwareDb({});
  ASSERT_TRUE(db.ok()) << db.status().message();
  PlanRequest req;
  req.reliability = db->reliability();
  Plan plan;
  plan.job.model = FindModelPreset("llama3-405b").value();
  plan.job.cluster = {"gb200", 256, 64, "ib-ndr-400"};
  plan.step.step_time_s = 10;
  plan.econ.compute_time_s = 1e6;
  const PriceOption price{"x", "y", PriceKind::kOnDemand, 10, 4, 0};
  PricePlan(req, price, &plan);
  const double rack_hosts = plan.econ.checkpoint_write_s;
  plan.gpus_per_host = db->FindNode("gb200-nvl72")->tray_gpus;
  PricePlan(req, price, &plan);
  EXPECT_NEAR(rack_hosts / plan.econ.checkpoint_write_s, 16.0, 1e-9);
  EXPECT_NEAR(
      plan.econ.checkpoint_write_s,
      CheckpointBytes(plan.job) / (64 * req.reliability.checkpoint_write_bytes_per_s_per_node),
      1e-9);
}

TEST(Reliability, NoSpareHostProbabilityIsThePoissonTailOfTraysInRepair) {
  // No spare: every failure finds none.
  EXPECT_DOUBLE_EQ(NoSpareHostProbability(0, 17, 1e-6, 86400), 1.0);
  // mu = 17 x 1/(34 d) x 1 d = 0.5 trays in repair: P(k >= 2) = 1 - e^-0.5 (1 + 0.5) = 0.090204,
  // P(k >= 1) = 1 - e^-0.5 = 0.393469 (by hand).
  const double rate = 1.0 / (34 * 86400.0);
  EXPECT_NEAR(NoSpareHostProbability(2, 17, rate, 86400), 0.090204, 1e-6);
  EXPECT_NEAR(NoSpareHostProbability(1, 17, rate, 86400), 0.393469, 1e-6);
  // It bounds the finite-source answer from above: each of the 17 other trays is in repair with
  // probability p = rD / (1 + rD), independently: P(k >= 2) = 1 - (1-p)^17 - 17 p (1-p)^16.
  const double p = rate * 86400 / (1 + rate * 86400);
  const double finite = 1 - std::pow(1 - p, 17) - 17 * p * std::pow(1 - p, 16);
  EXPECT_GT(NoSpareHostProbability(2, 17, rate, 86400), finite);
  EXPECT_LT(NoSpareHostProbability(2, 17, rate, 86400), 1.1 * finite);
  // No repairs, no waiting.
  EXPECT_DOUBLE_EQ(NoSpareHostProbability(2, 17, rate, 0), 0.0);
}

// A GB200 NVL72 rack has 18 trays of 4 GPUs. A job on 64 of them keeps 2 spare trays per rack:
// a tray failure almost never waits for a repair. On all 72 it keeps none: every tray failure
// waits the whole repair time, which dominates the run. A DGX H100 job never waits: a failed
// server is swapped for one of the cluster's spares within the restart time.
TEST(Reliability, RackScaleTrayFailuresWaitForRepairOnlyWithoutSpareTrays) {
  Expected<HardwareDb> db = LoadHardwareDb({});
  ASSERT_TRUE(db.ok()) << db.status().message();
  PlanRequest req;
  req.reliability = db->reliability();
  const ReliabilitySpec& spec = req.reliability;
  const GpuSpec& gb200 = *db->FindGpu("gb200");
  const PriceOption price{"x", "y", PriceKind::kOnDemand, 10, 4, 0};
  const auto priced = [&](const std::string& node, const std::string& gpu, int64_t num_gpus,
                          int64_t gpus_per_node) {
    Plan plan;
    plan.job.model = FindModelPreset("llama3-405b").value();
    plan.job.cluster = {gpu, num_gpus, gpus_per_node, "ib-ndr-400"};
    PlaceOnTemplate(*db->FindNode(node), *db->FindGpu(gpu), &plan);
    plan.step.step_time_s = 10;
    plan.econ.compute_time_s = 30 * 86400.0;
    PricePlan(req, price, &plan);
    return plan.econ;
  };
  // Host failures per GPU-second: the interruption rate x the share that needs a repair.
  const double host_rate = spec.interruptions_per_gpu_hour * spec.host_repair_share / kHour;
  const double running = [&] {
    const PlanEconomics e = priced("gb200-nvl72", "gb200", 4096, 64);
    return e.expected_wall_s - e.expected_repair_wait_s;
  }();

  const PlanEconomics spares = priced("gb200-nvl72", "gb200", 4096, 64);
  EXPECT_EQ(gb200.scaleup_domain_gpus, 72);
  EXPECT_EQ(spares.spare_hosts_per_domain, 2);
  const double mu = 17 * 4 * host_rate * spec.host_repair_s;
  EXPECT_NEAR(spares.no_spare_probability, 1 - std::exp(-mu) * (1 + mu), 1e-12);
  EXPECT_LT(spares.no_spare_probability, 0.01);
  EXPECT_NEAR(spares.expected_repair_wait_s,
              running * 4096 * host_rate * spares.no_spare_probability * spec.host_repair_s / 3,
              1e-6 * spares.expected_repair_wait_s);
  EXPECT_NEAR(spares.expected_interruptions, running / spares.mtbf_s, 1e-9);

  // 4032 = 56 racks x 72: no spare tray, each tray failure waits D.
  const PlanEconomics full = priced("gb200-nvl72", "gb200", 4032, 72);
  EXPECT_EQ(full.spare_hosts_per_domain, 0);
  EXPECT_DOUBLE_EQ(full.no_spare_probability, 1.0);
  const double full_running = full.expected_wall_s - full.expected_repair_wait_s;
  EXPECT_NEAR(full.expected_repair_wait_s, full_running * 4032 * host_rate * spec.host_repair_s,
              1e-6 * full.expected_repair_wait_s);
  EXPECT_GT(full.expected_repair_wait_s, 10 * 86400.0);  // 30 days of work wait days more
  EXPECT_LT(full.goodput, spares.goodput);

  const PlanEconomics server = priced("dgx-h100", "h100-sxm5-80gb", 4096, 8);
  EXPECT_EQ(server.spare_hosts_per_domain, -1);
  EXPECT_EQ(server.expected_repair_wait_s, 0);
}

TEST(Reliability, SpotPreemptionsShortenTheMtbf) {
  Expected<HardwareDb> db = LoadHardwareDb({});
  ASSERT_TRUE(db.ok());
  ReliabilityInputs in;
  in.solve_s = 100 * kHour;
  in.step_s = 5;
  in.checkpoint_bytes = 1e11;
  in.num_gpus = 64;
  in.num_nodes = 8;
  in.instances = 8;
  const ReliabilityOutcome on_demand = EvaluateReliability(in, db->reliability());
  in.spot = true;
  in.spot_preemptions_per_instance_hour = db->reliability().SpotPreemptionsPerInstanceHour("aws");
  const ReliabilityOutcome spot = EvaluateReliability(in, db->reliability());
  EXPECT_LT(spot.mtbf_s, on_demand.mtbf_s);
  EXPECT_GT(spot.expected_wall_s, on_demand.expected_wall_s);
}

}  // namespace
}  // namespace gpuplan
