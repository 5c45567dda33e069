#include "cli/profile_option.h"

namespace gpuplan {

Expected<ProfileCalibration> LoadProfileCalibration(const std::string& path, const HardwareDb& db,
                                                    ProfileUse use) {
  Expected<Profile> profile = ReadProfile(path);
  if (!profile.ok()) return profile.status().WithPrefix("--profile");
  Expected<ProfileCalibration> cal = CalibrateFromProfile(*profile, db, path, use);
  if (!cal.ok()) return cal.status().WithPrefix("--profile");
  return cal;
}

}  // namespace gpuplan
