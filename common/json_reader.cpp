#include "common/json_reader.h"

#include <cmath>
#include <fstream>
#include <sstream>

namespace gpuplan {
namespace {

std::string Describe(const nlohmann::json& v) {
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

std::string JoinAllowed(std::span<const std::string_view> allowed) {
  std::string out;
  for (std::string_view a : allowed) {
    if (!out.empty()) out += ", ";
    out += a;
  }
  return out;
}

}  // namespace

Expected<nlohmann::json> ParseJson(const std::string& text, const std::string& origin) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    // Re-parse with exceptions only to recover the position for the message.
    try {
      [[maybe_unused]] nlohmann::json ignored = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      return Status::Invalid(origin + ": malformed JSON at byte " + std::to_string(e.byte) + ": " +
                             e.what());
    }
    return Status::Invalid(origin + ": malformed JSON");
  }
  return j;
}

Expected<nlohmann::json> ReadJsonFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Invalid(path + ": cannot open file");
  std::ostringstream buf;
  buf << in.rdbuf();
  return ParseJson(buf.str(), path);
}

JsonObjectReader::JsonObjectReader(const nlohmann::json& object, std::string context)
    : object_(object), context_(std::move(context)) {
  if (!object_.is_object()) {
    status_ = Status::Invalid(context_ + ": expected a JSON object, got " + Describe(object_));
  }
}

bool JsonObjectReader::Has(std::string_view field) const {
  return object_.is_object() && object_.contains(field);
}

void JsonObjectReader::Fail(std::string_view field, const std::string& problem) {
  if (!status_.ok()) return;
  status_ = Status::Invalid(context_ + ": field '" + std::string(field) + "': " + problem);
}

const nlohmann::json* JsonObjectReader::Find(std::string_view field, bool required) {
  if (!status_.ok() || !object_.is_object()) return nullptr;
  auto it = object_.find(field);
  if (it == object_.end() || it->is_null()) {
    if (required) Fail(field, "is required but missing");
    return nullptr;
  }
  return &*it;
}

double JsonObjectReader::PositiveNumber(std::string_view field) {
  const nlohmann::json* v = Find(field, true);
  if (!v) return 0;
  if (!v->is_number() || !(v->get<double>() > 0) || !std::isfinite(v->get<double>())) {
    Fail(field, "must be a positive number, got " + Describe(*v));
    return 0;
  }
  return v->get<double>();
}

double JsonObjectReader::NonNegativeNumber(std::string_view field) {
  const nlohmann::json* v = Find(field, true);
  if (!v) return 0;
  if (!v->is_number() || !(v->get<double>() >= 0) || !std::isfinite(v->get<double>())) {
    Fail(field, "must be a number >= 0, got " + Describe(*v));
    return 0;
  }
  return v->get<double>();
}

double JsonObjectReader::OptionalPositiveNumber(std::string_view field, double default_value) {
  return Has(field) && !object_.at(field).is_null() ? PositiveNumber(field) : default_value;
}

double JsonObjectReader::OptionalNonNegativeNumber(std::string_view field, double default_value) {
  return Has(field) && !object_.at(field).is_null() ? NonNegativeNumber(field) : default_value;
}

double JsonObjectReader::OptionalNumberInRange(std::string_view field, double default_value,
                                               double lo, double hi) {
  const nlohmann::json* v = Find(field, false);
  if (!v) return default_value;
  if (!v->is_number() || !(v->get<double>() >= lo && v->get<double>() <= hi)) {
    std::ostringstream msg;
    msg << "must be a number in [" << lo << ", " << hi << "], got " << Describe(*v);
    Fail(field, msg.str());
    return default_value;
  }
  return v->get<double>();
}

int64_t JsonObjectReader::PositiveInt(std::string_view field) {
  const nlohmann::json* v = Find(field, true);
  if (!v) return 0;
  if (!v->is_number() || std::floor(v->get<double>()) != v->get<double>() || v->get<double>() < 1 ||
      v->get<double>() > 9.0e15) {
    Fail(field, "must be a positive integer, got " + Describe(*v));
    return 0;
  }
  return static_cast<int64_t>(v->get<double>());
}

int64_t JsonObjectReader::OptionalPositiveInt(std::string_view field, int64_t default_value) {
  return Has(field) && !object_.at(field).is_null() ? PositiveInt(field) : default_value;
}

int64_t JsonObjectReader::OptionalNonNegativeInt(std::string_view field, int64_t default_value) {
  const nlohmann::json* v = Find(field, false);
  if (!v) return default_value;
  if (!v->is_number() || std::floor(v->get<double>()) != v->get<double>() || v->get<double>() < 0 ||
      v->get<double>() > 9.0e15) {
    Fail(field, "must be an integer >= 0, got " + Describe(*v));
    return default_value;
  }
  return static_cast<int64_t>(v->get<double>());
}

std::string JsonObjectReader::String(std::string_view field) {
  const nlohmann::json* v = Find(field, true);
  if (!v) return {};
  if (!v->is_string() || v->get<std::string>().empty()) {
    Fail(field, "must be a non-empty string, got " + Describe(*v));
    return {};
  }
  return v->get<std::string>();
}

std::string JsonObjectReader::OptionalString(std::string_view field, std::string default_value) {
  return Find(field, false) ? String(field) : default_value;
}

std::string JsonObjectReader::Enum(std::string_view field,
                                   std::span<const std::string_view> allowed) {
  std::string s = String(field);
  if (!status_.ok()) return s;
  for (std::string_view a : allowed) {
    if (s == a) return s;
  }
  Fail(field, "'" + s + "' is not allowed (allowed: " + JoinAllowed(allowed) + ")");
  return {};
}

std::string JsonObjectReader::OptionalEnum(std::string_view field, std::string default_value,
                                           std::span<const std::string_view> allowed) {
  return Find(field, false) ? Enum(field, allowed) : default_value;
}

bool JsonObjectReader::OptionalBool(std::string_view field, bool default_value) {
  const nlohmann::json* v = Find(field, false);
  if (!v) return default_value;
  if (!v->is_boolean()) {
    Fail(field, "must be true or false, got " + Describe(*v));
    return default_value;
  }
  return v->get<bool>();
}

std::vector<std::string> JsonObjectReader::OptionalStringList(std::string_view field) {
  std::vector<std::string> out;
  const nlohmann::json* v = Find(field, false);
  if (!v) return out;
  if (!v->is_array()) {
    Fail(field, "must be a list of strings, got " + Describe(*v));
    return out;
  }
  for (const auto& e : *v) {
    if (!e.is_string()) {
      Fail(field, "must be a list of strings, got element " + Describe(e));
      return {};
    }
    out.push_back(e.get<std::string>());
  }
  return out;
}

const nlohmann::json* JsonObjectReader::Object(std::string_view field) {
  const nlohmann::json* v = Find(field, true);
  if (v && !v->is_object()) {
    Fail(field, "must be a JSON object, got " + Describe(*v));
    return nullptr;
  }
  return v;
}

const nlohmann::json* JsonObjectReader::OptionalObject(std::string_view field) {
  return Find(field, false) ? Object(field) : nullptr;
}

void JsonObjectReader::RejectUnknownFields(std::initializer_list<std::string_view> allowed) {
  if (!status_.ok()) return;
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    bool known = false;
    for (std::string_view a : allowed) known = known || it.key() == a;
    if (!known) {
      Fail(it.key(),
           "unknown field (allowed: " + JoinAllowed({allowed.begin(), allowed.size()}) + ")");
      return;
    }
  }
}

std::optional<double> ParseCount(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double scale = 1;
  switch (text.back()) {
    case 'k':
    case 'K':
      scale = 1e3;
      break;
    case 'M':
    case 'm':
      scale = 1e6;
      break;
    case 'B':
    case 'G':
    case 'b':
    case 'g':
      scale = 1e9;
      break;
    case 'T':
    case 't':
      scale = 1e12;
      break;
    default:
      break;
  }
  std::string digits(scale == 1 ? text : text.substr(0, text.size() - 1));
  if (digits.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size() || !std::isfinite(v) || v < 0) return std::nullopt;
  return v * scale;
}

}  // namespace gpuplan
