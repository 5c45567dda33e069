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

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
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
  std::error_code ignored;
  if (write_errno != 0) {
    fs::remove(temp.data(), ignored);
    return Status::Unavailable(path + ": write failed: " + std::strerror(write_errno));
  }
  std::error_code ec;
  fs::rename(temp.data(), target, ec);
  if (ec) {
    fs::remove(temp.data(), ignored);
    return Status::Unavailable(path + ": " + ec.message());
  }
  return Status::Ok();
}

}  // namespace gpuplan
