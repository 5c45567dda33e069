// Every published run shipped with gpuplan (hardware-db/calibration/published_runs.json),
// predicted and compared. The data is part of the repository, so this test never skips.
#include <gtest/gtest.h>

#include <cstdio>

#include "common/json_reader.h"
#include "hardware-db/hardware_db.h"
#include "simulator/accuracy.h"

namespace gpuplan {
namespace {

TEST(Calibration, PublishedRunsWithinBounds) {
  const std::string path = BuiltinCalibrationDir() + "/published_runs.json";
  Expected<nlohmann::json> doc = ReadJsonFile(path);
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  Expected<HardwareDb> db = LoadHardwareDb({});
  ASSERT_TRUE(db.ok()) << db.status().message();
  Expected<AccuracyReport> report = CompareWithPublishedRuns(*doc, path, *db);
  ASSERT_TRUE(report.ok()) << report.status().message();
  std::printf("\n%s\n", FormatAccuracyMarkdown(*report).c_str());
  // Issue 16's bar for the published runs.
  EXPECT_LE(report->overall.mape, 0.10) << "overall MAPE of tokens/s/GPU";
  for (const RunComparison& r : report->runs) {
    EXPECT_LE(std::abs(r.error), 0.35)
        << r.id << ": predicted " << r.predicted << " measured " << r.measured;
  }
}

}  // namespace
}  // namespace gpuplan
