// `--profile FILE` of simulate, plan and validate: read a profile and fit it for the cost model.
#pragma once

#include <string>

#include "common/status.h"
#include "hardware-db/hardware_db.h"
#include "profiler/profile_rates.h"

namespace gpuplan {

/// Reads and fits the profile at `path` for `use` (profiler/profile_rates.h). Errors name the file.
Expected<ProfileCalibration> LoadProfileCalibration(const std::string& path, const HardwareDb& db,
                                                    ProfileUse use);

}  // namespace gpuplan
