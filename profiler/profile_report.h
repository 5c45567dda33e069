// The text report of a profile: devices and links, GEMM samples against the fitted GEMM model,
// kernels, copy bandwidths, nccl-tests tables, alpha-beta fits and where each figure of the
// cost model now comes from. Printed by `gpuplan profile` and `gpuplan profile --show`.
#pragma once

#include <string>

#include "hardware-db/hardware_db.h"
#include "profiler/profile.h"
#include "profiler/profile_rates.h"

namespace gpuplan {

/// `calibration` may be null (a profile whose GPU is not in the database): the fits and the
/// datasheet comparison are then left out.
std::string FormatProfile(const Profile& profile, const ProfileCalibration* calibration,
                          const HardwareDb& db);

}  // namespace gpuplan
