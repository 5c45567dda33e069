// A fresh directory under the system temp dir for one test, removed when the test ends.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <system_error>

namespace gpuplan {

class TempDir {
 public:
  /// `prefix` names the suite ("gpuplan_report_"); the test's name and the working directory's
  /// hash keep parallel test runs apart.
  explicit TempDir(const std::string& prefix) {
    namespace fs = std::filesystem;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            (prefix + std::string(info->name()) + "_" +
             std::to_string(std::hash<std::string>{}(fs::current_path().string())));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace gpuplan
