// Harness: whatever the job-spec reader accepts, run through the analytic cost model
// (EvaluateStep), the event simulator (SimulateStepEvents, with its timeline) and the validator's
// program generator (MakeRankLayout, RankProgram of each pipeline stage's first rank).
// Invariants: sane steps (fuzz_common.h), a timeline inside the simulated step, a rank layout of
// num_gpus ranks, and programs whose peers are ranks and whose byte counts are amounts.
//
// Bound: the libraries accept jobs up to the limits of common/limits.h, which take seconds to
// simulate; this harness keeps each input under about 10 ms by simulating and laying out only
// jobs of at most kFuzzMaxOps event ops and kFuzzMaxGpus GPUs (the CLI tests of issue 17 run the
// large ones). The analytic model runs on every accepted spec.
#include "fuzz/fuzz_common.h"
#include "simulator/event_sim.h"
#include "validator/dry_run.h"
#include "validator/rank_layout.h"
#include "validator/rank_program.h"

using namespace gpuplan;

namespace {

constexpr int64_t kFuzzMaxOps = 5'000;
constexpr int64_t kFuzzMaxGpus = 4'096;

void CheckEventSim(const JobSpec& job, const GpuSpec& gpu, const NetworkSpec& net,
                   const StepResult& analytic) {
  if (MinEventSimOps(job) > kFuzzMaxOps) return;
  Expected<EventSimResult> sim = SimulateStepEvents(job, gpu, net);
  if (!sim.ok()) return;  // a documented refusal: more ops than kMaxSimulatedOps/kMaxTimelineOps
  fuzz::Require(std::isfinite(sim->step_time_s) && sim->step_time_s > 0,
                "simulated step time is finite and > 0");
  fuzz::RequireBreakdown(sim->breakdown_s, sim->step_time_s,
                         "the simulated breakdown adds up to the simulated step time");
  fuzz::Require(fuzz::IsAmount(sim->pipeline_s) && sim->pipeline_s <= sim->step_time_s,
                "the pipeline ends within the step");
  fuzz::Require(sim->critical_rank >= 0 && sim->critical_rank < sim->simulated_gpus,
                "the critical rank is a simulated GPU");
  for (double b : sim->peak_activation_bytes) fuzz::Require(fuzz::IsAmount(b), "activations");
  for (const TimelineOp& op : sim->timeline.ops) {
    fuzz::Require(fuzz::IsAmount(op.start_s) && op.start_s <= op.end_s &&
                      op.end_s <= sim->step_time_s * (1 + 1e-12),
                  "a timeline op lies inside the step");
    fuzz::Require(fuzz::IsAmount(op.bytes) && fuzz::IsAmount(op.flops), "op bytes and FLOPs");
  }
  fuzz::RequireSaneStep(WithEventStep(analytic, *sim));
}

void CheckPrograms(const JobSpec& job) {
  if (job.cluster.num_gpus > kFuzzMaxGpus || MinEventSimOps(job) > kFuzzMaxOps) return;
  const RankLayout layout = MakeRankLayout(job);
  fuzz::Require(layout.world_size == job.cluster.num_gpus &&
                    static_cast<int64_t>(layout.ranks.size()) == layout.world_size,
                "one rank per GPU");
  for (int64_t rank : RepresentativeRanks(job)) {
    fuzz::Require(rank >= 0 && rank < layout.world_size, "a representative rank exists");
    for (const ProgramStep& step : RankProgram(job, layout, rank)) {
      for (const RankOp& op : step.ops) {
        fuzz::Require(fuzz::IsAmount(op.bytes) && op.count >= 1, "op bytes and count");
        if (op.kind == RankOpKind::kSend || op.kind == RankOpKind::kRecv) {
          fuzz::Require(op.peer >= 0 && op.peer < layout.world_size && op.peer != rank,
                        "a send/recv peer is another rank");
        }
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<nlohmann::json> doc = fuzz::Json(data, size);
  if (!doc) return 0;
  Expected<JobSpec> job = fuzz::ReadSpec(*doc, "<fuzz>");
  if (!job.ok()) return 0;
  const HardwareDb& db = fuzz::BuiltinDb();
  // ValidateJob (inside ParseJobSpec) checked that the GPU and the network exist.
  const GpuSpec& gpu = *db.FindGpu(job->cluster.gpu);
  const NetworkSpec& net = *db.FindNetwork(job->cluster.inter_node);
  const StepResult analytic = EvaluateStep(*job, gpu, net);
  fuzz::RequireSaneStep(analytic);
  CheckEventSim(*job, gpu, net, analytic);
  CheckPrograms(*job);
  return 0;
}
