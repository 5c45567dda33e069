// Writing a whole file so that readers never see it half-written.
#pragma once

#include <span>
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

/// A file to write: its path and contents.
struct FileContents {
  std::string path;
  std::string_view contents;
};

/// Writes several files as one: each to its temporary file first (as WriteFileAtomically), and
/// only when all are written are they renamed over their targets, so a failure (a full disk, a
/// missing directory) leaves every target as it was and no temporary file behind.
Status WriteFilesAtomically(std::span<const FileContents> files);

/// Checks, without writing, that a write to `path` can start: the directory holding it exists,
/// and `path` is absent or a regular file (or a link to one). A command that writes several
/// files, or writes after long work, checks them all first.
Status CheckOutputPath(const std::string& path);

/// An output file and the option that named it ("--trace").
struct OutputPath {
  std::string option;
  std::string path;
};

/// Refuses two outputs that name the same file (after resolving "." and ".." and links); the
/// message names both options. Empty paths (options not given) are skipped.
Status CheckDistinctOutputs(std::span<const OutputPath> outputs);

}  // namespace gpuplan
