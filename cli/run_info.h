// Facts the commands that measure (profile, validate) record about their run.
#pragma once

#include <string>

namespace gpuplan {

/// Now, as "2026-11-25T10:00:00Z".
std::string UtcNow();
/// This host's name; "" when it cannot be read.
std::string HostName();

}  // namespace gpuplan
