#include "common/file_write.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

namespace gpuplan {
namespace {

// The file a write to `path` replaces: `path`, or the end of its chain of symbolic links.
Expected<std::filesystem::path> ResolveTarget(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path target(path);
  const fs::file_status link = fs::symlink_status(target, ec);
  if (!ec && fs::is_symlink(link)) {
    target = fs::weakly_canonical(target, ec);
    if (ec) return Status::Unavailable(path + ": cannot follow the symbolic link: " + ec.message());
  }
  const fs::file_status st = fs::status(target, ec);
  if (!ec && fs::exists(st) && !fs::is_regular_file(st)) {
    return Status::Unavailable(path + ": exists and is not a regular file (" +
                               (fs::is_directory(st) ? "a directory" : "a FIFO, device or socket") +
                               "); give a file path");
  }
  return target;
}

mode_t CurrentUmask() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}

// A file written in full under a temporary name beside its target, not yet renamed.
struct StagedFile {
  std::string path;  // as the caller named it (for messages)
  std::filesystem::path temp, target;
};

void Discard(const std::vector<StagedFile>& staged) {
  std::error_code ignored;
  for (const StagedFile& f : staged) std::filesystem::remove(f.temp, ignored);
}

Expected<StagedFile> Stage(const std::string& path, std::string_view contents) {
  namespace fs = std::filesystem;
  Expected<fs::path> resolved = ResolveTarget(path);
  if (!resolved.ok()) return resolved.status();
  const fs::path target = *resolved;
  std::string name(".");
  name += target.filename().string();
  name += ".XXXXXX";
  const std::string pattern_text = (target.parent_path() / name).string();
  std::vector<char> temp(pattern_text.c_str(), pattern_text.c_str() + pattern_text.size() + 1);
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) {
    return Status::Unavailable(path + ": cannot create a temporary file in '" +
                               target.parent_path().string() + "': " + std::strerror(errno));
  }
  // mkstemp creates 0600; an output file gets the usual 0666 less the umask.
  ::fchmod(fd, static_cast<mode_t>(0666 & ~CurrentUmask()));
  size_t done = 0;
  int write_errno = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      write_errno = errno;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 && write_errno == 0) write_errno = errno;
  if (write_errno != 0) {
    std::error_code ignored;
    fs::remove(temp.data(), ignored);
    return Status::Unavailable(path + ": write failed: " + std::strerror(write_errno));
  }
  return StagedFile{path, fs::path(temp.data()), target};
}

}  // namespace

Status WriteFilesAtomically(std::span<const FileContents> files) {
  std::vector<StagedFile> staged;
  for (const FileContents& f : files) {
    Expected<StagedFile> s = Stage(f.path, f.contents);
    if (!s.ok()) {
      Discard(staged);
      return s.status();
    }
    staged.push_back(std::move(s).value());
  }
  for (size_t i = 0; i < staged.size(); ++i) {
    std::error_code ec;
    std::filesystem::rename(staged[i].temp, staged[i].target, ec);
    if (ec) {
      Discard(
          std::vector<StagedFile>(staged.begin() + static_cast<std::ptrdiff_t>(i), staged.end()));
      return Status::Unavailable(staged[i].path + ": " + ec.message());
    }
  }
  return Status::Ok();
}

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  const FileContents file{path, contents};
  return WriteFilesAtomically(std::span<const FileContents>(&file, 1));
}

Status CheckOutputPath(const std::string& path) {
  namespace fs = std::filesystem;
  Expected<fs::path> resolved = ResolveTarget(path);
  if (!resolved.ok()) return resolved.status();
  std::error_code ec;
  const fs::path dir = resolved->parent_path().empty() ? fs::path(".") : resolved->parent_path();
  if (!fs::is_directory(dir, ec)) {
    return Status::Unavailable(path + ": the directory '" + dir.string() + "' does not exist");
  }
  return Status::Ok();
}

Status CheckDistinctOutputs(std::span<const OutputPath> outputs) {
  namespace fs = std::filesystem;
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (size_t j = i + 1; j < outputs.size(); ++j) {
      if (outputs[i].path.empty() || outputs[j].path.empty()) continue;
      std::error_code ec_a, ec_b;
      const fs::path a = fs::weakly_canonical(outputs[i].path, ec_a);
      const fs::path b = fs::weakly_canonical(outputs[j].path, ec_b);
      if (!ec_a && !ec_b && a == b) {
        return Status::Invalid(outputs[i].option + " and " + outputs[j].option +
                               " name the same file, " + outputs[i].path + "; give each its own");
      }
    }
  }
  return Status::Ok();
}

}  // namespace gpuplan
