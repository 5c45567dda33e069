#include "common/json_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <sstream>

#include "common/limits.h"

namespace gpuplan {
namespace {

// At most this many characters of a value or token appear in a message.
constexpr size_t kMaxQuoted = 40;

std::string Truncated(std::string_view text) {
  if (text.size() <= kMaxQuoted) return ValidUtf8(text);
  return ValidUtf8(text.substr(0, kMaxQuoted - 3)) + "...";
}

std::string JoinAllowed(std::span<const std::string_view> allowed) {
  std::string out;
  for (std::string_view a : allowed) {
    if (!out.empty()) out += ", ";
    out += a;
  }
  return out;
}

// Length of the valid UTF-8 sequence starting at text[i] (RFC 3629: no overlong forms, no
// surrogates, at most U+10FFFF), or 0 when the bytes there are not valid UTF-8.
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

// Builds the document from SAX events, enforcing the depth limit and rejecting duplicate keys;
// the first problem is kept in `error` and stops the parse.
class DomBuilder {
 public:
  using json = nlohmann::json;

  bool null() { return Value(json(nullptr)); }
  bool boolean(bool v) { return Value(json(v)); }
  bool number_integer(json::number_integer_t v) { return Value(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return Value(json(v)); }
  // Non-finite numbers (1e309) never arrive here: the parser reports them as out_of_range.406.
  bool number_float(json::number_float_t v, const json::string_t& /*unused*/) {
    return Value(json(v));
  }
  bool string(json::string_t& v) { return Value(json(std::move(v))); }
  bool binary(json::binary_t& /*unused*/) { return Fail("binary values are not JSON"); }
  bool start_object(std::size_t /*unused*/) { return Open(json::value_t::object); }
  bool start_array(std::size_t /*unused*/) { return Open(json::value_t::array); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool key(json::string_t& k) {
    Level& top = stack_.back();
    if (top.value->contains(k)) {
      top.key = k;
      return Fail("duplicate key (a JSON object must not repeat a key)");
    }
    top.key = std::move(k);
    return true;
  }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& ex) {
    if (ex.id == 406) {  // out_of_range.406: a number too large for a double
      return Fail("number " + Truncated(last_token) + " is too large (a double holds at most " +
                  "1.8e308)");
    }
    // nlohmann's message repeats the position; keep the reason that follows it, cut short.
    const std::string what = ex.what();
    const size_t at = what.find("parse error");
    const size_t reason = at == std::string::npos ? std::string::npos : what.find(": ", at);
    std::string text = reason == std::string::npos ? what : what.substr(reason + 2);
    if (text.size() > 120) text = text.substr(0, 117) + "...";
    error_ = "malformed JSON at byte " + std::to_string(position) + ": " + ValidUtf8(text);
    return false;
  }

  json& root() { return root_; }
  const std::string& error() const { return error_; }

 private:
  struct Level {
    json* value;
    std::string key;   // objects: the key being read
    size_t index = 0;  // arrays: the index of the next element
  };

  // "cluster.num_gpus", "gpus[3].memory_gb"; the root is "(top level)".
  std::string Path() const {
    std::string out;
    for (const Level& l : stack_) {
      if (l.value->is_object()) {
        if (!out.empty()) out += '.';
        out += Truncated(l.key);
      } else {
        out += '[';
        out += std::to_string(l.index);
        out += ']';
      }
    }
    if (out.empty()) return "(top level)";
    // A deep path keeps its two ends.
    if (out.size() > 2 * kMaxQuoted)
      out = out.substr(0, kMaxQuoted) + "..." + out.substr(out.size() - kMaxQuoted);
    return out;
  }

  bool Fail(const std::string& problem) {
    error_ = "field '" + Path() + "': " + problem;
    return false;
  }

  json* Place(json v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Level& top = stack_.back();
    if (top.value->is_array()) {
      ++top.index;
      top.value->push_back(std::move(v));
      return &top.value->back();
    }
    json& slot = (*top.value)[top.key];
    slot = std::move(v);
    return &slot;
  }

  bool Value(json v) {
    Place(std::move(v));
    return true;
  }

  bool Open(json::value_t type) {
    if (stack_.size() >= static_cast<size_t>(kMaxJsonDepth)) {
      return Fail("nested deeper than " + std::to_string(kMaxJsonDepth) +
                  " levels of objects and arrays");
    }
    json* v = Place(json(type));
    // An array's index counts finished elements; the open one is index - 1.
    if (!stack_.empty() && stack_.back().value->is_array()) --stack_.back().index;
    stack_.push_back(Level{v, {}, 0});
    return true;
  }

  bool Close() {
    stack_.pop_back();
    if (!stack_.empty() && stack_.back().value->is_array()) ++stack_.back().index;
    return true;
  }

  json root_;
  std::vector<Level> stack_;
  std::string error_;
};

}  // namespace

std::string DescribeJson(const nlohmann::json& v) {
  if (v.is_array()) return "an array of " + std::to_string(v.size()) + " elements";
  if (v.is_object()) return "an object with " + std::to_string(v.size()) + " keys";
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    nlohmann::json cut = Truncated(s);
    return cut.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string ValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8SequenceLength(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::optional<size_t> FirstInvalidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8SequenceLength(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

Expected<nlohmann::json> ParseJson(const std::string& text, const std::string& origin) {
  if (std::optional<size_t> bad = FirstInvalidUtf8(text)) {
    return Status::Invalid(origin + ": not valid UTF-8 at byte " + std::to_string(*bad) +
                           " (JSON text must be UTF-8)");
  }
  DomBuilder builder;
  try {
    const bool ok = nlohmann::json::sax_parse(text, &builder, nlohmann::json::input_format_t::json,
                                              /*strict=*/true, /*ignore_comments=*/false);
    if (!ok) {
      return Status::Invalid(origin + ": " +
                             (builder.error().empty() ? "malformed JSON" : builder.error()));
    }
  } catch (const std::bad_alloc&) {
    return Status::Invalid(origin + ": out of memory while parsing JSON");
  } catch (const std::exception& e) {  // nlohmann::json::exception and anything else it throws
    return Status::Invalid(origin + ": malformed JSON: " + Truncated(e.what()));
  }
  return std::move(builder.root());
}

Expected<nlohmann::json> ReadJsonFile(const std::string& path) {
  Expected<std::string> text = ReadInputFile(path, kMaxInputFileBytes);
  if (!text.ok()) return text.status();
  return ParseJson(*text, path);
}

Expected<std::string> ReadInputFile(const std::string& path, int64_t max_bytes) {
  // stat() before open(): opening a FIFO for reading blocks until a writer appears.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return Status::Invalid(path + ": cannot read: " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return Status::Invalid(path + ": is a directory, not a file");
  if (!S_ISREG(st.st_mode)) {
    return Status::Invalid(path + ": is not a regular file (a FIFO, device or socket cannot be " +
                           "read as an input file)");
  }
  if (st.st_size > max_bytes) {
    return Status::Invalid(path + ": is " + std::to_string(st.st_size) + " bytes; input files " +
                           "are limited to " + std::to_string(max_bytes) + " bytes");
  }
  // O_NONBLOCK: a FIFO swapped in after stat() does not block the open; fstat() checks again.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Status::Invalid(path + ": cannot read: " + std::strerror(errno));
  std::string text;
  Status status = Status::Ok();
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    status = Status::Invalid(path + ": is not a regular file");
  } else {
    char buf[1 << 16];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0) {
        if (errno == EINTR) continue;
        status = Status::Invalid(path + ": cannot read: " + std::strerror(errno));
        break;
      }
      if (n == 0) break;
      text.append(buf, static_cast<size_t>(n));
      if (static_cast<int64_t>(text.size()) > max_bytes) {
        status = Status::Invalid(path + ": input files are limited to " +
                                 std::to_string(max_bytes) + " bytes");
        break;
      }
    }
  }
  ::close(fd);
  if (!status.ok()) return status;
  return text;
}

JsonObjectReader::JsonObjectReader(const nlohmann::json& object, std::string context)
    : object_(object), context_(std::move(context)) {
  if (!object_.is_object()) {
    status_ = Status::Invalid(context_ + ": expected a JSON object, got " + DescribeJson(object_));
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
    Fail(field, "must be a positive number, got " + DescribeJson(*v));
    return 0;
  }
  return v->get<double>();
}

double JsonObjectReader::NonNegativeNumber(std::string_view field) {
  const nlohmann::json* v = Find(field, true);
  if (!v) return 0;
  if (!v->is_number() || !(v->get<double>() >= 0) || !std::isfinite(v->get<double>())) {
    Fail(field, "must be a number >= 0, got " + DescribeJson(*v));
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
    msg << "must be a number in [" << lo << ", " << hi << "], got " << DescribeJson(*v);
    Fail(field, msg.str());
    return default_value;
  }
  return v->get<double>();
}

double JsonObjectReader::ScaledNumber(std::string_view field, double scale, double lo, double hi) {
  const nlohmann::json* v = Find(field, true);
  if (!v) return 0;
  const double scaled = v->is_number() ? v->get<double>() * scale : 0;
  if (!v->is_number() || !(scaled >= lo && scaled <= hi)) {
    std::ostringstream msg;
    msg << "must be a number in [" << lo / scale << ", " << hi / scale << "], got "
        << DescribeJson(*v);
    Fail(field, msg.str());
    return 0;
  }
  return scaled;
}

double JsonObjectReader::OptionalScaledNumber(std::string_view field, double default_value,
                                              double scale, double lo, double hi) {
  return Find(field, false) ? ScaledNumber(field, scale, lo, hi) : default_value;
}

int64_t JsonObjectReader::IntInRange(std::string_view field, int64_t lo, int64_t hi) {
  const nlohmann::json* v = Find(field, true);
  if (!v) return 0;
  // Compared as doubles before narrowing: 2^32 + 1 must not wrap to 1.
  const double d = v->is_number() ? v->get<double>() : 0;
  if (!v->is_number() || std::floor(d) != d || d < static_cast<double>(lo) ||
      d > static_cast<double>(hi)) {
    Fail(field, "must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                    "], got " + DescribeJson(*v));
    return 0;
  }
  return static_cast<int64_t>(d);
}

int64_t JsonObjectReader::OptionalIntInRange(std::string_view field, int64_t default_value,
                                             int64_t lo, int64_t hi) {
  return Find(field, false) ? IntInRange(field, lo, hi) : default_value;
}

int64_t JsonObjectReader::PositiveInt(std::string_view field) {
  const nlohmann::json* v = Find(field, true);
  if (!v) return 0;
  if (!v->is_number() || std::floor(v->get<double>()) != v->get<double>() || v->get<double>() < 1 ||
      v->get<double>() > 9.0e15) {
    Fail(field, "must be a positive integer, got " + DescribeJson(*v));
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
    Fail(field, "must be an integer >= 0, got " + DescribeJson(*v));
    return default_value;
  }
  return static_cast<int64_t>(v->get<double>());
}

std::string JsonObjectReader::String(std::string_view field) {
  const nlohmann::json* v = Find(field, true);
  if (!v) return {};
  if (!v->is_string() || v->get<std::string>().empty()) {
    Fail(field, "must be a non-empty string, got " + DescribeJson(*v));
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
    Fail(field, "must be true or false, got " + DescribeJson(*v));
    return default_value;
  }
  return v->get<bool>();
}

std::vector<std::string> JsonObjectReader::OptionalStringList(std::string_view field) {
  std::vector<std::string> out;
  const nlohmann::json* v = Find(field, false);
  if (!v) return out;
  if (!v->is_array()) {
    Fail(field, "must be a list of strings, got " + DescribeJson(*v));
    return out;
  }
  for (const auto& e : *v) {
    if (!e.is_string()) {
      Fail(field, "must be a list of strings, got element " + DescribeJson(e));
      return {};
    }
    out.push_back(e.get<std::string>());
  }
  return out;
}

std::vector<int64_t> JsonObjectReader::OptionalIntList(std::string_view field, int64_t lo,
                                                       int64_t hi) {
  std::vector<int64_t> out;
  const nlohmann::json* v = Find(field, false);
  if (!v) return out;
  const std::string wanted =
      "must be a list of integers in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (!v->is_array()) {
    Fail(field, wanted + ", got " + DescribeJson(*v));
    return out;
  }
  for (size_t i = 0; i < v->size(); ++i) {
    const nlohmann::json& e = (*v)[i];
    // Compared as doubles before narrowing, as IntInRange does.
    const double d = e.is_number() ? e.get<double>() : 0;
    if (!e.is_number() || std::floor(d) != d || d < static_cast<double>(lo) ||
        d > static_cast<double>(hi)) {
      Fail(field, wanted + ", got element " + std::to_string(i) + " = " + DescribeJson(e));
      return {};
    }
    out.push_back(static_cast<int64_t>(d));
  }
  return out;
}

const nlohmann::json* JsonObjectReader::Object(std::string_view field) {
  const nlohmann::json* v = Find(field, true);
  if (v && !v->is_object()) {
    Fail(field, "must be a JSON object, got " + DescribeJson(*v));
    return nullptr;
  }
  return v;
}

const nlohmann::json* JsonObjectReader::OptionalObject(std::string_view field) {
  return Find(field, false) ? Object(field) : nullptr;
}

void JsonObjectReader::RejectUnknownFields(std::span<const std::string_view> allowed) {
  if (!status_.ok()) return;
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    bool known = false;
    for (std::string_view a : allowed) known = known || it.key() == a;
    if (!known) {
      Fail(it.key(), "unknown field (allowed: " + JoinAllowed(allowed) + ")");
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
  // Decimal notation only: strtod alone would also take "0x10", "inf" and "nan".
  if (digits.empty() || digits.find_first_not_of("0123456789.eE+-") != std::string::npos) {
    return std::nullopt;
  }
  char* end = nullptr;
  double v = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size() || !std::isfinite(v * scale) || v < 0) {
    return std::nullopt;
  }
  return v * scale;
}

}  // namespace gpuplan
