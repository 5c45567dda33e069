// Writing a whole file so that readers never see it half-written.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace gpuplan {

/// Writes `contents` to a temporary file beside `path` (".<name>.tmp"), then renames it over
/// `path`. On failure nothing is left behind and the error names `path` and the reason. The
/// directory must exist.
Status WriteFileAtomically(const std::string& path, std::string_view contents);

}  // namespace gpuplan
