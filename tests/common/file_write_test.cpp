// Atomic output writes (common/file_write.h): unique temporary names, symbolic links followed,
// FIFOs and directories refused.
#include "common/file_write.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/model/contains.h"
#include "tests/temp_dir.h"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(WriteFileAtomically, WritesAndLeavesNoTemporaryFile) {
  TempDir dir("gpuplan_file_write_");
  const fs::path out = dir.path() / "out.json";
  ASSERT_TRUE(WriteFileAtomically(out.string(), "one").ok());
  ASSERT_TRUE(WriteFileAtomically(out.string(), "two").ok());
  EXPECT_EQ(Slurp(out), "two");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(WriteFileAtomically, AStaleTemporaryFileIsNotOurs) {
  TempDir dir("gpuplan_file_write_");
  const fs::path stale = dir.path() / ".out.json.tmp";
  std::ofstream(stale) << "stale";
  ASSERT_TRUE(WriteFileAtomically((dir.path() / "out.json").string(), "new").ok());
  EXPECT_EQ(Slurp(stale), "stale");
  EXPECT_EQ(Slurp(dir.path() / "out.json"), "new");
}

TEST(WriteFileAtomically, FollowsASymbolicLink) {
  TempDir dir("gpuplan_file_write_");
  const fs::path target = dir.path() / "target.json";
  const fs::path link = dir.path() / "link.json";
  std::ofstream(target) << "old";
  fs::create_symlink(target, link);
  ASSERT_TRUE(WriteFileAtomically(link.string(), "new").ok());
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(Slurp(target), "new");
}

TEST(WriteFileAtomically, RefusesFifoAndDirectory) {
  TempDir dir("gpuplan_file_write_");
  const fs::path fifo = dir.path() / "f.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Status st = WriteFileAtomically(fifo.string(), "x");
  EXPECT_TRUE(Contains(st.message(), fifo.string() + ": exists and is not a regular file"));
  EXPECT_TRUE(fs::is_fifo(fs::status(fifo)));
  EXPECT_TRUE(Contains(WriteFileAtomically(dir.path().string(), "x").message(), "a directory"));
}

TEST(WriteFileAtomically, MissingDirectoryNamesThePath) {
  TempDir dir("gpuplan_file_write_");
  const std::string path = (dir.path() / "no-such-dir" / "x.json").string();
  EXPECT_TRUE(Contains(WriteFileAtomically(path, "x").message(), path));
}

TEST(WriteFilesAtomically, AFailedFileLeavesEveryTargetAsItWas) {
  TempDir dir("gpuplan_file_write_");
  const fs::path first = dir.path() / "plan.md";
  std::ofstream(first) << "old";
  const std::string second = (dir.path() / "missing" / "x.sh").string();
  const FileContents files[] = {{first.string(), "new"}, {second, "script"}};
  const Status st = WriteFilesAtomically(files);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), second)) << st.message();
  EXPECT_EQ(Slurp(first), "old");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1)
      << "no temporary file is left";
  const FileContents both[] = {{first.string(), "new"}, {(dir.path() / "x.sh").string(), "s"}};
  ASSERT_TRUE(WriteFilesAtomically(both).ok());
  EXPECT_EQ(Slurp(first), "new");
}

TEST(CheckOutputs, PathsCheckedBeforeWriting) {
  TempDir dir("gpuplan_file_write_");
  EXPECT_TRUE(CheckOutputPath((dir.path() / "a.json").string()).ok());
  EXPECT_TRUE(Contains(CheckOutputPath((dir.path() / "no" / "a.json").string()).message(),
                       "does not exist"));
  EXPECT_TRUE(Contains(CheckOutputPath(dir.path().string()).message(), "a directory"));
  const std::string a = (dir.path() / "a").string();
  const OutputPath same[] = {{"--trace", a}, {"--timeline-svg", (dir.path() / "." / "a").string()}};
  EXPECT_TRUE(Contains(CheckDistinctOutputs(same).message(),
                       "--trace and --timeline-svg name the same file"));
  const OutputPath distinct[] = {{"--trace", a}, {"--timeline-svg", ""}};
  EXPECT_TRUE(CheckDistinctOutputs(distinct).ok());
}

}  // namespace
}  // namespace gpuplan
