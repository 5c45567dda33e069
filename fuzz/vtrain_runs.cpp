// Harness: one of vTrain's ground-truth CSVs (hardware-db/calibration/vtrain/) as `gpuplan
// accuracy --runs FILE.csv` reads it: ParseVtrainRuns. Invariant: every run has a finite positive
// measurement and a job the cost model accepts, on vTrain's cluster.
#include "simulator/vtrain_runs.h"

#include "fuzz/fuzz_common.h"

using namespace gpuplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Expected<std::vector<PublishedRun>> runs =
      ParseVtrainRuns(fuzz::Text(data, size), "<fuzz>", fuzz::BuiltinDb());
  if (!runs.ok()) return 0;
  for (const PublishedRun& run : *runs) {
    fuzz::Require(
        fuzz::IsAmount(run.measured_tokens_per_s_per_gpu) && run.measured_tokens_per_s_per_gpu > 0,
        "the measurement is finite and positive");
    fuzz::Require(run.gpu != nullptr && run.net != nullptr, "the run has vTrain's cluster");
  }
  return 0;
}
