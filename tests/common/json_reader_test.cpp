// The hardened JSON reader (common/json_reader.h): file checks, depth, duplicate keys, numbers
// beyond a double, UTF-8, short messages, and the range checks of JsonObjectReader.
#include "common/json_reader.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "common/limits.h"
#include "tests/model/contains.h"
#include "tests/temp_dir.h"

namespace gpuplan {
namespace {

std::string ParseError(const std::string& text) {
  Expected<nlohmann::json> j = ParseJson(text, "t.json");
  EXPECT_FALSE(j.ok()) << text.substr(0, 80);
  return j.status().message();
}

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(ParseJson, DepthLimit) {
  EXPECT_TRUE(ParseJson(Nested(kMaxJsonDepth), "t.json").ok());
  const std::string err = ParseError(Nested(kMaxJsonDepth + 1));
  EXPECT_TRUE(Contains(err, "t.json: field '"));
  EXPECT_TRUE(Contains(err, "nested deeper than 64 levels"));
  EXPECT_LT(err.size(), 200u);
  // 100,000 levels: an error, no stack overflow.
  EXPECT_TRUE(Contains(ParseError(Nested(100'000)), "nested deeper"));
}

TEST(ParseJson, DuplicateKeysNameTheKeyAndPath) {
  EXPECT_EQ(ParseError(R"({"parallelism": {"tp": 8, "tp": 1}})"),
            "t.json: field 'parallelism.tp': duplicate key (a JSON object must not repeat a key)");
  EXPECT_EQ(ParseError(R"({"gpus": [{"id": "a"}, {"id": "b", "id": "c"}]})"),
            "t.json: field 'gpus[1].id': duplicate key (a JSON object must not repeat a key)");
  // The same key in different objects is fine.
  EXPECT_TRUE(ParseJson(R"({"a": {"x": 1}, "b": {"x": 2}})", "t.json").ok());
}

TEST(ParseJson, NumberBeyondADoubleNamesTheField) {
  EXPECT_EQ(ParseError(R"({"model": 1e309})"),
            "t.json: field 'model': number 1e309 is too large (a double holds at most 1.8e308)");
  EXPECT_TRUE(Contains(ParseError(R"({"a": [1, -1e400]})"), "field 'a[1]': number -1e400"));
  // Large but finite numbers and big integers parse (range checks come later, per field).
  EXPECT_TRUE(ParseJson(R"({"a": 1e308, "b": 9223372036854775808})", "t.json").ok());
}

TEST(ParseJson, Utf8) {
  EXPECT_TRUE(ParseJson("{\"name\": \"\xC3\xBC\xE2\x82\xAC\xF0\x9F\x98\x80\"}", "t.json").ok());
  EXPECT_EQ(ParseError("{\"name\": \"bad\xFFname\"}"),
            "t.json: not valid UTF-8 at byte 13 (JSON text must be UTF-8)");
  EXPECT_TRUE(Contains(ParseError("{\"a\": \"\xED\xA0\x80\"}"), "not valid UTF-8"));  // surrogate
  EXPECT_TRUE(Contains(ParseError("{\"a\": \"\xC0\xAF\"}"), "not valid UTF-8"));      // overlong
}

TEST(ParseJson, SyntaxErrorsAreShort) {
  const std::string err = ParseError("{\"a\": \"" + std::string(100'000, 'x'));
  EXPECT_TRUE(Contains(err, "t.json: malformed JSON at byte"));
  EXPECT_LT(err.size(), 300u);
}

TEST(ValidUtf8, ReplacesBadBytes) {
  EXPECT_EQ(ValidUtf8("ok \xC3\xBC"), "ok \xC3\xBC");
  EXPECT_EQ(ValidUtf8("bad\xFFname"), "bad\xEF\xBF\xBDname");
  EXPECT_EQ(FirstInvalidUtf8("bad\xFFname"), 3u);
  EXPECT_FALSE(FirstInvalidUtf8("fine").has_value());
}

TEST(DescribeJson, NeverTheWholeValue) {
  EXPECT_EQ(DescribeJson(nlohmann::json::parse("[1, 2, 3]")), "an array of 3 elements");
  EXPECT_EQ(DescribeJson(nlohmann::json::parse(R"({"a": 1})")), "an object with 1 keys");
  EXPECT_EQ(DescribeJson(nlohmann::json(std::string(1000, 'a'))).size(), 42u);  // "37 a..."
  EXPECT_EQ(DescribeJson(nlohmann::json(-3)), "-3");
}

class ReadJsonFileTest : public ::testing::Test {
 protected:
  TempDir dir_{"gpuplan_json_reader_"};
  std::string Path(const std::string& name) const { return (dir_.path() / name).string(); }
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(Path(name), std::ios::binary) << text;
    return Path(name);
  }
};

TEST_F(ReadJsonFileTest, ReadsARegularFile) {
  Expected<nlohmann::json> j = ReadJsonFile(Write("a.json", R"({"x": 1})"));
  ASSERT_TRUE(j.ok()) << j.status().message();
  EXPECT_EQ((*j)["x"], 1);
}

TEST_F(ReadJsonFileTest, DirectoryFifoAndDeviceAreRefusedWithoutBlocking) {
  EXPECT_EQ(ReadJsonFile(dir_.path().string()).status().message(),
            dir_.path().string() + ": is a directory, not a file");
  const std::string fifo = Path("f.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_TRUE(Contains(ReadJsonFile(fifo).status().message(),
                       fifo + ": is not a regular file (a FIFO, device or socket"));
  EXPECT_TRUE(
      Contains(ReadJsonFile("/dev/zero").status().message(), "/dev/zero: is not a regular file"));
}

TEST_F(ReadJsonFileTest, MissingFileSaysWhy) {
  EXPECT_EQ(ReadJsonFile(Path("none.json")).status().message(),
            Path("none.json") + ": cannot read: No such file or directory");
}

TEST_F(ReadJsonFileTest, SizeLimit) {
  const std::string path = Write("big.json", std::string(1000, ' ') + "1");
  Expected<std::string> text = ReadInputFile(path, 100);
  EXPECT_TRUE(Contains(text.status().message(),
                       "big.json: is 1001 bytes; input files are limited "
                       "to 100 bytes"));
  EXPECT_TRUE(ReadInputFile(path, 1001).ok());
}

TEST(JsonObjectReader, RangesAreCheckedAfterScaling) {
  const nlohmann::json j = nlohmann::json::parse(R"({"gb": 80, "huge": 1e300, "tiny": 1e-300})");
  JsonObjectReader r(j, "gpus.json: gpu 'x'");
  EXPECT_EQ(r.ScaledNumber("gb", 1e9, 1e6, 1e14), 80e9);
  EXPECT_TRUE(r.status().ok());
  r.ScaledNumber("huge", 1e9, 1e6, 1e14);
  EXPECT_EQ(r.status().message(),
            "gpus.json: gpu 'x': field 'huge': must be a number in [0.001, 100000], got 1e+300");
  JsonObjectReader t(j, "gpus.json: gpu 'x'");
  t.ScaledNumber("tiny", 1e9, 1e6, 1e14);
  EXPECT_TRUE(Contains(t.status().message(), "field 'tiny': must be a number in"));
}

TEST(JsonObjectReader, IntegersAreCheckedBeforeNarrowing) {
  // 2^32 + 1 would be read as 1 through an int.
  const nlohmann::json j = nlohmann::json::parse(R"({"version": 4294967297, "ok": 7})");
  JsonObjectReader r(j, "p.json");
  EXPECT_EQ(r.IntInRange("ok", 1, 100), 7);
  r.IntInRange("version", 1, 2147483647);
  EXPECT_EQ(r.status().message(),
            "p.json: field 'version': must be an integer in [1, 2147483647], got 4294967297");
}

TEST(ParseCount, DecimalOnlyAndFinite) {
  EXPECT_EQ(ParseCount("2T"), 2e12);
  EXPECT_EQ(ParseCount("1.5M"), 1.5e6);
  EXPECT_FALSE(ParseCount("0x10").has_value());
  EXPECT_FALSE(ParseCount("inf").has_value());
  EXPECT_FALSE(ParseCount("nan").has_value());
  EXPECT_FALSE(ParseCount("1e308T").has_value());
  EXPECT_FALSE(ParseCount("-5").has_value());
}

}  // namespace
}  // namespace gpuplan
