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

/// Parses a whole file as JSON. Errors name the path and, for syntax errors, the byte offset.
Expected<nlohmann::json> ReadJsonFile(const std::string& path);

/// Parses text as JSON; `origin` names the text in error messages (a path or "<spec>").
Expected<nlohmann::json> ParseJson(const std::string& text, const std::string& origin);

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

  /// Integers (JSON numbers without a fractional part).
  int64_t PositiveInt(std::string_view field);
  int64_t OptionalPositiveInt(std::string_view field, int64_t default_value);
  int64_t OptionalNonNegativeInt(std::string_view field, int64_t default_value);

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

  /// Sub-objects; nullptr when absent (optional) or on error (required).
  const nlohmann::json* Object(std::string_view field);
  const nlohmann::json* OptionalObject(std::string_view field);

  /// Records an error for every key not in `allowed` (catches typos such as "tensor_paralel").
  void RejectUnknownFields(std::initializer_list<std::string_view> allowed);

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
/// (k=1e3, M=1e6, B/G=1e9, T=1e12). Returns nullopt for anything else.
std::optional<double> ParseCount(std::string_view text);

}  // namespace gpuplan
