// Typed, validating access to JSON objects with error messages that name file, entry and field.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpuplan {

/// Reads a whole input file of at most `max_bytes`. Only regular files are read: a directory, a
/// FIFO, a device or a socket is refused (checked with stat() before opening, so nothing
/// blocks). Errors name the path and the reason ("cannot read: Permission denied").
Expected<std::string> ReadInputFile(const std::string& path, int64_t max_bytes);

/// Parses a whole file as JSON (ReadInputFile with kMaxInputFileBytes, then ParseJson). Every
/// JSON input of gpuplan is read through this function or ParseJson.
Expected<nlohmann::json> ReadJsonFile(const std::string& path);

/// Parses text as JSON; `origin` names the text in error messages (a path or "<spec>").
/// Refused, with a one-line message naming `origin` and, where there is one, the field path
/// ("cluster.num_gpus", "gpus[3].memory_gb"): text that is not UTF-8, syntax errors (with the
/// byte offset), nesting deeper than kMaxJsonDepth, a key repeated in one object, numbers beyond
/// the range of a double (1e309). Never throws; messages quote at most 40 characters of a value.
Expected<nlohmann::json> ParseJson(const std::string& text, const std::string& origin);

/// A short description of a JSON value for messages: scalars as JSON, strings cut to 40
/// characters, arrays and objects by their size ("an array of 3 elements"), never the whole value.
std::string DescribeJson(const nlohmann::json& v);

/// `text` with every byte that is not part of valid UTF-8 replaced by U+FFFD, so that it can be
/// written to JSON (file names become model names).
std::string ValidUtf8(std::string_view text);

/// The offset of the first byte of `text` that is not valid UTF-8; nullopt when all of it is.
std::optional<size_t> FirstInvalidUtf8(std::string_view text);

/// Reads fields of one JSON object. The first problem found is kept (later reads return
/// defaults and do not overwrite it); callers check status() once after reading everything.
/// Messages look like: "<context>: field 'hidden_size': must be a positive integer, got -3".
class JsonObjectReader {
 public:
  /// `context` names the object, e.g. "gpus.json: entry 'a100-sxm4-80gb'". If `object` is not a
  /// JSON object the reader starts in the failed state.
  JsonObjectReader(const nlohmann::json& object, std::string context);

  bool Has(std::string_view field) const;

  /// Numbers. `min_exclusive`/`min_inclusive` bound the allowed range; a missing required field,
  /// a wrong type or an out-of-range value records an error and returns 0.
  double PositiveNumber(std::string_view field);
  double NonNegativeNumber(std::string_view field);
  double OptionalPositiveNumber(std::string_view field, double default_value);
  double OptionalNonNegativeNumber(std::string_view field, double default_value);
  /// A number in [lo, hi].
  double OptionalNumberInRange(std::string_view field, double default_value, double lo, double hi);
  /// A number in the file's unit whose value times `scale` (the unit conversion, e.g. 1e9 for
  /// GB -> bytes) must lie in [lo, hi] (in the converted unit); returns the converted value.
  /// The range is checked after the conversion, so that no value overflows to infinity.
  double ScaledNumber(std::string_view field, double scale, double lo, double hi);
  /// As ScaledNumber; an absent field gives `default_value` (in the converted unit).
  double OptionalScaledNumber(std::string_view field, double default_value, double scale, double lo,
                              double hi);

  /// Integers (JSON numbers without a fractional part, at most 9e15; exact in a double).
  int64_t PositiveInt(std::string_view field);
  int64_t OptionalPositiveInt(std::string_view field, int64_t default_value);
  int64_t OptionalNonNegativeInt(std::string_view field, int64_t default_value);
  /// An integer in [lo, hi] (the message names the range); absent: `default_value`.
  int64_t IntInRange(std::string_view field, int64_t lo, int64_t hi);
  int64_t OptionalIntInRange(std::string_view field, int64_t default_value, int64_t lo, int64_t hi);

  std::string String(std::string_view field);
  std::string OptionalString(std::string_view field, std::string default_value);
  /// A string that must be one of `allowed`; the message lists them.
  std::string Enum(std::string_view field, std::span<const std::string_view> allowed);
  std::string OptionalEnum(std::string_view field, std::string default_value,
                           std::span<const std::string_view> allowed);
  std::string Enum(std::string_view field, std::initializer_list<std::string_view> allowed) {
    return Enum(field, std::span<const std::string_view>(allowed.begin(), allowed.size()));
  }
  std::string OptionalEnum(std::string_view field, std::string default_value,
                           std::initializer_list<std::string_view> allowed) {
    return OptionalEnum(field, std::move(default_value),
                        std::span<const std::string_view>(allowed.begin(), allowed.size()));
  }
  bool OptionalBool(std::string_view field, bool default_value);
  std::vector<std::string> OptionalStringList(std::string_view field);
  /// A list of integers each in [lo, hi]; empty when absent. Error names the element's index.
  std::vector<int64_t> OptionalIntList(std::string_view field, int64_t lo, int64_t hi);

  /// Sub-objects; nullptr when absent (optional) or on error (required).
  const nlohmann::json* Object(std::string_view field);
  const nlohmann::json* OptionalObject(std::string_view field);

  /// Records an error for every key not in `allowed` (catches typos such as "tensor_paralel").
  void RejectUnknownFields(std::initializer_list<std::string_view> allowed) {
    RejectUnknownFields(std::span<const std::string_view>(allowed.begin(), allowed.size()));
  }
  void RejectUnknownFields(std::span<const std::string_view> allowed);

  /// Records a custom error about `field` (used for cross-field checks).
  void Fail(std::string_view field, const std::string& problem);

  const Status& status() const { return status_; }
  const std::string& context() const { return context_; }

 private:
  const nlohmann::json* Find(std::string_view field, bool required);
  const nlohmann::json& object_;
  std::string context_;
  Status status_;
};

/// Parses "2T", "500B", "1.5M", "3k" or plain numbers into a count. Suffixes are decimal
/// (k=1e3, M=1e6, B/G=1e9, T=1e12). Returns nullopt for anything else: negative, hexadecimal,
/// "inf", "nan", or a value that is not finite once scaled ("1e308T").
std::optional<double> ParseCount(std::string_view text);

}  // namespace gpuplan
