// Job specs for GoogleTest suites: parsed against the built-in hardware database.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "simulator/job_spec_json.h"
#include "tests/builtin_db.h"

namespace gpuplan {

/// `spec` parsed as `gpuplan simulate --spec` would; a spec that does not parse fails the test
/// with the parser's message and yields a default JobSpec.
inline JobSpec ParseTestJob(const nlohmann::json& spec) {
  Expected<JobSpec> job = ParseJobSpec(spec, "<test>", ".", BuiltinDb());
  EXPECT_TRUE(job.ok()) << job.status().message();
  return job.ok() ? *job : JobSpec{};
}

/// The job's GPU from the built-in database.
inline const GpuSpec& GpuOf(const JobSpec& job) { return *BuiltinDb().FindGpu(job.cluster.gpu); }

}  // namespace gpuplan
