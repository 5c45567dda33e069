// Harness: a validation report (docs/VALIDATION.md) as `gpuplan validate --show` and
// `gpuplan calibrate` read it: ParseJson, then ValidationReportFromJson. Invariants: an accepted
// report written back with ValidationReportToJson reads again to the same JSON, its errors are
// finite, and its Markdown renders. The report's file lies in fuzz::kNoBaseDir, the folder its
// job's relative {"hf_config": "path"} resolves against.
#include "validator/validation_report.h"

#include "fuzz/fuzz_common.h"

using namespace gpuplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<ValidationReport> report =
      fuzz::ReadFileInNoBaseDir(data, size, ValidationReportFromJson, ValidationReportToJson,
                                "an accepted report round-trips through ValidationReportToJson");
  if (!report) return 0;
  fuzz::Require(std::isfinite(report->StepError()) && std::isfinite(report->MemoryError()),
                "the errors of an accepted report are finite");
  fuzz::Require(!ValidationReportMarkdown(*report).empty(), "the report renders");
  return 0;
}
