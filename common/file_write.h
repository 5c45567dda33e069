// Writing a whole file so that readers never see it half-written.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace gpuplan {

/// Writes `contents` to a new temporary file beside the target (".<name>.XXXXXX", a unique name
/// made by mkstemp, so that a stale or foreign temporary file is never reused), then renames it
/// over the target. The target is `path`, or, when `path` is a symbolic link, the file the link
/// points to (the link stays). A `path` that exists and is not a regular file (a directory, a
/// FIFO, a device) is refused. The new file gets mode 0666 less the umask. On failure nothing is
/// left behind and the error names `path` and the reason. The directory must exist.
Status WriteFileAtomically(const std::string& path, std::string_view contents);

}  // namespace gpuplan
