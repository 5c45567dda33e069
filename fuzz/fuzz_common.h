// Shared parts of the libFuzzer harnesses in fuzz/ (docs/TESTING.md, "Fuzzing"). Each harness
// feeds the bytes libFuzzer gives it to one reader, the way a user's file would reach it, and
// aborts when a result breaks an invariant, so that libFuzzer reports it as a crash.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "common/json_reader.h"
#include "hardware-db/hardware_db.h"
#include "simulator/cost_model.h"
#include "simulator/job_spec_json.h"

namespace gpuplan::fuzz {

/// The input as text (JSON and CSV readers take a std::string).
inline std::string Text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// The input through the hardened JSON reader, as every input file reaches gpuplan; nullopt when
/// the reader refuses it.
inline std::optional<nlohmann::json> Json(const uint8_t* data, size_t size) {
  Expected<nlohmann::json> doc = ParseJson(Text(data, size), "<fuzz>");
  if (!doc.ok()) return std::nullopt;
  return std::move(*doc);
}

/// Aborts with `what` on stderr when `ok` is false.
inline void Require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "gpuplan fuzz: invariant broken: %s\n", what);
  std::abort();
}

/// A time, size or rate a result may hold: finite and not negative.
inline bool IsAmount(double v) { return std::isfinite(v) && v >= 0; }

/// `parts` adds up to `total` (both finite), up to rounding of a sum of a few terms.
inline bool SumsTo(double parts, double total) {
  return std::isfinite(parts) && std::isfinite(total) &&
         std::fabs(parts - total) <= 1e-9 * std::fabs(total) + 1e-15;
}

/// Every part of a step's time is an amount; `sum_what` names the check that they add up to
/// `step_s`.
inline void RequireBreakdown(const TimeBreakdown& b, double step_s, const char* sum_what) {
  for (double part :
       {b.compute, b.tp_comm, b.cp_comm, b.pp_comm, b.dp_comm, b.ep_comm, b.bubble, b.optimizer}) {
    Require(IsAmount(part), "a step time part is finite and >= 0");
  }
  Require(SumsTo(b.Total(), step_s), sum_what);
}

/// The invariants of docs/METRICS.md on one evaluated step: a positive finite step time that its
/// parts add up to, finite non-negative rates and bytes, and `fits` exactly when the peak is
/// within the capacity.
inline void RequireSaneStep(const StepResult& r) {
  Require(std::isfinite(r.step_time_s) && r.step_time_s > 0, "step time is finite and > 0");
  RequireBreakdown(r.breakdown_s, r.step_time_s, "the breakdown adds up to the step time");
  for (double v : {r.tokens_per_s, r.tokens_per_s_per_gpu, r.model_flops_per_step,
                   r.hardware_flops_per_step, r.model_tflops_per_gpu, r.mfu, r.hfu}) {
    Require(IsAmount(v), "throughput, FLOPs, MFU and HFU are finite and >= 0");
  }
  Require(r.tokens_per_s > 0, "tokens/s > 0");
  Require(r.microbatches >= 1, "at least one micro-batch");
  const MemoryBreakdown& m = r.memory;
  for (double v : {m.weights_bytes, m.grads_bytes, m.optimizer_bytes, m.activations_bytes,
                   m.logits_bytes, m.overhead_bytes, m.peak_bytes, m.capacity_bytes}) {
    Require(IsAmount(v), "memory bytes are finite and >= 0");
  }
  Require(m.capacity_bytes > 0, "capacity > 0");
  Require(m.fits == (m.peak_bytes <= m.capacity_bytes), "fits == (peak <= capacity)");
}

/// The built-in hardware database (hardware-db/data), loaded once; aborts when it does not load.
inline const HardwareDb& BuiltinDb() {
  static const HardwareDb db = [] {
    Expected<HardwareDb> loaded = LoadHardwareDb({});
    Require(loaded.ok(), "the built-in hardware database loads");
    return std::move(*loaded);
  }();
  return db;
}

/// Aborts with `what` unless `value` written by `to_json` is read back by `read` (a reader of
/// JSON returning Expected<T>) to a value that `to_json` writes the same way.
template <class T, class ToJson, class Read>
void RequireRoundTrip(const T& value, ToJson to_json, Read read, const char* what) {
  const nlohmann::json written = to_json(value);
  auto again = read(written);
  Require(again.ok() && to_json(*again) == written, what);
}

/// A directory that does not exist: specs' relative {"hf_config": "path"} resolve against it, so
/// an input never reads a file of the machine by a relative name.
inline constexpr const char* kNoBaseDir = "/nonexistent-gpuplan-fuzz";

/// The input read as a file in kNoBaseDir by `read(doc, origin, db)`, a reader that resolves a
/// job's relative {"hf_config": "path"} against the folder of the file it reads (sessions,
/// validation reports); aborts with `what` unless an accepted value written by `to_json` reads
/// again the same way (RequireRoundTrip). Returns the accepted value, or nullopt.
template <class ToJson, class Read>
auto ReadFileInNoBaseDir(const uint8_t* data, size_t size, Read read, ToJson to_json,
                         const char* what)
    -> std::optional<
        std::decay_t<decltype(read(nlohmann::json(), std::string(), BuiltinDb()).value())>> {
  static const std::string origin = std::string(kNoBaseDir) + "/<fuzz>";
  static const std::string origin_again = std::string(kNoBaseDir) + "/<fuzz again>";
  std::optional<nlohmann::json> doc = Json(data, size);
  if (!doc) return std::nullopt;
  auto value = read(*doc, origin, BuiltinDb());
  if (!value.ok()) return std::nullopt;
  RequireRoundTrip(
      *value, to_json,
      [&read](const nlohmann::json& j) { return read(j, origin_again, BuiltinDb()); }, what);
  return std::move(*value);
}

/// Reads `doc` as a job spec against the built-in database, as `simulate --spec` does.
inline Expected<JobSpec> ReadSpec(const nlohmann::json& doc, const char* source) {
  return ParseJobSpec(doc, source, kNoBaseDir, BuiltinDb());
}

/// Aborts with `what` unless `job` written by JobSpecToJson reads again to the same spec.
inline void RequireSpecRoundTrip(const JobSpec& job, const char* what) {
  RequireRoundTrip(
      job, JobSpecToJson, [](const nlohmann::json& j) { return ReadSpec(j, "<fuzz again>"); },
      what);
}

}  // namespace gpuplan::fuzz
