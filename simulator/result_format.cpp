#include "simulator/result_format.h"

#include <cstdio>
#include <string>

#include "common/str_format.h"
#include "simulator/gemm_time.h"

namespace gpuplan {
namespace {

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

std::string Seconds(double s) {
  if (s >= 1.0) return Fmt("%.3f s", s);
  if (s >= 1e-3) return Fmt("%.2f ms", s * 1e3);
  return Fmt("%.1f us", s * 1e6);
}

std::string Gb(double bytes) { return Fmt("%.2f GB", bytes / 1e9); }

nlohmann::json BreakdownToJson(const TimeBreakdown& b) {
  return {{"compute", b.compute}, {"tp_comm", b.tp_comm},    {"cp_comm", b.cp_comm},
          {"pp_comm", b.pp_comm}, {"dp_comm", b.dp_comm},    {"ep_comm", b.ep_comm},
          {"bubble", b.bubble},   {"optimizer", b.optimizer}};
}

}  // namespace

std::string FormatBreakdown(const TimeBreakdown& b, double step_time_s) {
  std::string out = "  time per step        seconds     share\n";
  const std::pair<const char*, double> parts[] = {
      {"compute", b.compute},           {"tp comm (exposed)", b.tp_comm},
      {"cp comm (exposed)", b.cp_comm}, {"pp comm", b.pp_comm},
      {"dp comm (exposed)", b.dp_comm}, {"ep comm", b.ep_comm},
      {"pipeline bubble", b.bubble},    {"optimizer", b.optimizer}};
  for (const auto& [name, v] : parts) {
    char line[96];
    std::snprintf(line, sizeof(line), "  %-20s %-11s %5.1f%%\n", name, Seconds(v).c_str(),
                  100.0 * v / step_time_s);
    out += line;
  }
  return out;
}

nlohmann::json EventSimResultToJson(const EventSimResult& sim, const StepResult& analytic) {
  nlohmann::json stages = nlohmann::json::array();
  for (size_t s = 0; s < sim.peak_activation_bytes.size(); ++s) {
    const double per_mb = sim.microbatch_activation_bytes[s];
    stages.push_back(
        {{"stage", s},
         {"peak_activation_bytes", sim.peak_activation_bytes[s]},
         {"microbatches_in_flight",
          per_mb > 0 ? nlohmann::json(sim.peak_activation_bytes[s] / per_mb) : nlohmann::json()}});
  }
  return {{"step_time_s", sim.step_time_s},
          {"analytic_step_time_s", analytic.step_time_s},
          {"relative_difference", sim.step_time_s / analytic.step_time_s - 1.0},
          {"pipeline_s", sim.pipeline_s},
          {"critical_stage", sim.critical_rank},
          {"simulated_gpus", sim.simulated_gpus},
          {"ops", sim.ops},
          {"events", sim.events},
          {"breakdown_s", BreakdownToJson(sim.breakdown_s)},
          {"stages", stages}};
}

std::string FormatEventSimResult(const EventSimResult& sim, const StepResult& analytic) {
  std::string out = "\nEvent simulation: " + std::to_string(sim.simulated_gpus) + " " +
                    Noun(sim.simulated_gpus, "GPU", "GPUs") +
                    " simulated (one per pipeline stage), " + std::to_string(sim.ops) + " " +
                    Noun(sim.ops, "op", "ops") + "\n";
  out += "  step time            " + Seconds(sim.step_time_s) + "  (analytic " +
         Seconds(analytic.step_time_s) + ", " +
         Fmt("%+.1f%%", 100.0 * (sim.step_time_s / analytic.step_time_s - 1.0)) + ")\n";
  out += "  critical GPU         stage " + std::to_string(sim.critical_rank) + "\n\n";
  out += FormatBreakdown(sim.breakdown_s, sim.step_time_s);
  out += "\n  stage   peak activations   micro-batches in flight\n";
  for (size_t s = 0; s < sim.peak_activation_bytes.size(); ++s) {
    const double per_mb = sim.microbatch_activation_bytes[s];
    char line[96];
    std::snprintf(line, sizeof(line), "  %5zu   %-18s %s\n", s,
                  Gb(sim.peak_activation_bytes[s]).c_str(),
                  per_mb > 0 ? Fmt("%.1f", sim.peak_activation_bytes[s] / per_mb).c_str() : "-");
    out += line;
  }
  return out;
}

nlohmann::json StepResultToJson(const StepResult& r) {
  const TimeBreakdown& b = r.breakdown_s;
  const MemoryBreakdown& m = r.memory;
  return {
      {"step_time_s", r.step_time_s},
      {"tokens_per_s", r.tokens_per_s},
      {"tokens_per_s_per_gpu", r.tokens_per_s_per_gpu},
      {"model_tflops_per_gpu", r.model_tflops_per_gpu},
      {"mfu", r.mfu},
      {"hfu", r.hfu},
      {"model_flops_per_step", r.model_flops_per_step},
      {"hardware_flops_per_step", r.hardware_flops_per_step},
      {"microbatches_per_step", r.microbatches},
      {"fits", m.fits},
      {"memory",
       {{"peak_bytes_per_gpu", m.peak_bytes},
        {"peak_stage", m.peak_stage},
        {"capacity_bytes", m.capacity_bytes},
        {"headroom_bytes", m.capacity_bytes - m.peak_bytes},
        {"weights_bytes", m.weights_bytes},
        {"grads_bytes", m.grads_bytes},
        {"optimizer_bytes", m.optimizer_bytes},
        {"activations_bytes", m.activations_bytes},
        {"logits_bytes", m.logits_bytes},
        {"overhead_bytes", m.overhead_bytes}}},
      {"breakdown_s", BreakdownToJson(b)},
  };
}

nlohmann::json ErrorBandToJson(const ErrorBand& band, const StepResult& r) {
  return {{"share", kBandCentralShare},
          {"step_time_s",
           {{"low", r.step_time_s * band.low_factor}, {"high", r.step_time_s * band.high_factor}}},
          {"tokens_per_s_per_gpu",
           {{"low", r.tokens_per_s_per_gpu / band.high_factor},
            {"high", r.tokens_per_s_per_gpu / band.low_factor}}},
          {"runs", band.runs},
          {"sweep_rows", band.sweep_rows},
          {"moe_candidate_runs", band.moe_candidate_runs},
          {"publications", band.publications},
          {"basis", band.basis},
          {"validated", band.validated}};
}

std::string FormatStepResult(const JobSpec& job, const StepResult& r, const ErrorBand* band) {
  const ParallelSpec& p = job.parallel;
  const TimeBreakdown& b = r.breakdown_s;
  const MemoryBreakdown& m = r.memory;
  std::string out;
  out += job.model.name + " on " + std::to_string(job.cluster.num_gpus) + "x " + job.cluster.gpu +
         " (" + std::to_string(job.cluster.gpus_per_node) + "/node, " + job.cluster.inter_node +
         ")\n";
  out += "  tp=" + std::to_string(p.tp) + " pp=" + std::to_string(p.pp) +
         " dp=" + std::to_string(p.dp) + " cp=" + std::to_string(p.cp) +
         " ep=" + std::to_string(p.ep) +
         (p.ExpertTp() != p.tp ? " etp=" + std::to_string(p.ExpertTp()) : "") +
         " vpp=" + std::to_string(p.vpp) +
         (p.dp_replicate > 1 ? " dp_replicate=" + std::to_string(p.dp_replicate) : "") +
         "  micro-batch=" + std::to_string(job.training.micro_batch_size) + " x " +
         std::to_string(r.microbatches) + " per step, seq " + std::to_string(job.training.seq_len) +
         "\n";
  // What was read of the model (a HF config.json especially), and what is approximated.
  const ParameterCounts params = CountParameters(job.model);
  out += "  model                " + Fmt("%.2fB parameters", params.total / 1e9);
  if (job.model.is_moe()) out += Fmt(", %.2fB active per token", params.active_per_token / 1e9);
  out += "\n";
  if (!job.model.approximation_note.empty()) {
    out += "  model note           " + job.model.approximation_note + "\n";
  }
  out += "\n";
  const std::string share = Fmt("%.0f%%", 100 * kBandCentralShare);
  out += "  step time            " + Seconds(r.step_time_s);
  if (band != nullptr) {
    out += "  (" + share + " band " + Seconds(r.step_time_s * band->low_factor) + " - " +
           Seconds(r.step_time_s * band->high_factor) + ")";
  }
  out += "\n  tokens/s             " + Fmt("%.0f", r.tokens_per_s) + "\n";
  out += "  tokens/s per GPU     " + Fmt("%.1f", r.tokens_per_s_per_gpu);
  if (band != nullptr) {
    out += "  (" + share + " band " + Fmt("%.1f", r.tokens_per_s_per_gpu / band->high_factor) +
           " - " + Fmt("%.1f", r.tokens_per_s_per_gpu / band->low_factor) + ")";
  }
  out += "\n";
  out += "  model TFLOP/s / GPU  " + Fmt("%.1f", r.model_tflops_per_gpu) + "\n";
  out += "  MFU / HFU            " + Fmt("%.1f%%", 100 * r.mfu) + " / " +
         Fmt("%.1f%%", 100 * r.hfu) + "\n";
  if (band != nullptr) {
    out += "  error band           " + DescribeBand(*band) + " (docs/ACCURACY.md)\n";
  }
  if (job.training.precision == Precision::kFp4) {
    out += "  precision            fp4: NVFP4 recipe, " +
           Fmt("%.0f%%", 100 * kFp4Bf16LayerFraction) +
           " of the layers in bf16 (docs/COST_MODEL.md); whether it trains as well as bf16 or "
           "fp8 for this model is your call\n";
  }
  out += "\n";
  out += FormatBreakdown(b, r.step_time_s);
  out += "\n  memory per GPU       " + Gb(m.peak_bytes) + " of " + Gb(m.capacity_bytes) +
         "  (stage " + std::to_string(m.peak_stage) + (m.fits ? ", fits)\n" : ", DOES NOT FIT)\n");
  const std::pair<const char*, double> mem[] = {
      {"weights", m.weights_bytes},           {"gradients", m.grads_bytes},
      {"optimizer state", m.optimizer_bytes}, {"activations", m.activations_bytes},
      {"logits buffers", m.logits_bytes},     {"framework overhead", m.overhead_bytes}};
  for (const auto& [name, v] : mem) {
    char line[96];
    std::snprintf(line, sizeof(line), "    %-18s %s\n", name, Gb(v).c_str());
    out += line;
  }
  return out;
}

}  // namespace gpuplan
