// Harness: a layout-sweep CSV (hardware-db/calibration/ultrascale_sweep.csv's format) as
// `gpuplan accuracy --sweep FILE` reads it: ParseLayoutSweep. Invariant: every row has a line
// number after the header and non-negative measurements.
#include "simulator/layout_sweep.h"

#include "fuzz/fuzz_common.h"

using namespace gpuplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Expected<std::vector<SweepRow>> rows =
      ParseLayoutSweep(fuzz::Text(data, size), "<fuzz>", fuzz::BuiltinDb());
  if (!rows.ok()) return 0;
  for (const SweepRow& row : *rows) {
    fuzz::Require(row.line >= 2, "a row comes after the header");
    fuzz::Require(fuzz::IsAmount(row.measured_tokens_per_s_per_gpu) &&
                      fuzz::IsAmount(row.measured_memory_bytes),
                  "measurements are finite and >= 0");
  }
  return 0;
}
