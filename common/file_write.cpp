#include "common/file_write.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace gpuplan {

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::string name = target.filename().string();
  name.insert(0, 1, '.');
  name.append(".tmp");
  const fs::path temp = target.parent_path() / name;
  std::FILE* f = std::fopen(temp.c_str(), "wb");
  if (f == nullptr) {
    return Status::Unavailable(path + ": cannot create " + temp.string() + ": " +
                               std::strerror(errno));
  }
  const bool written = std::fwrite(contents.data(), 1, contents.size(), f) == contents.size();
  const int write_errno = errno;
  const bool closed = std::fclose(f) == 0;
  std::error_code ignored;
  if (!written || !closed) {
    fs::remove(temp, ignored);
    return Status::Unavailable(path +
                               ": write failed: " + std::strerror(written ? errno : write_errno));
  }
  std::error_code ec;
  fs::rename(temp, target, ec);
  if (ec) {
    fs::remove(temp, ignored);
    return Status::Unavailable(path + ": " + ec.message());
  }
  return Status::Ok();
}

}  // namespace gpuplan
