#include "common/csv_table.h"

#include <charconv>
#include <cmath>

#include "common/str_format.h"

namespace gpuplan {
namespace {

std::vector<std::string_view> SplitFields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    fields.push_back(line.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

// A whole field as a number (from_chars reads "inf" and "nan": the callers bound the value).
bool ParseNumber(std::string_view text, double* value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size();
}

// A bound as the messages print it: 86400000 or 1e15 (not %g's 8.64e+07 or 1e+15).
std::string Bound(double max) {
  std::string text = StrFormat("%.15g", max);
  const size_t plus = text.find("e+");
  if (plus != std::string::npos) text.erase(plus + 1, 1);
  return text;
}

}  // namespace

Expected<CsvTable> ParseCsvTable(std::string_view text, const std::string& origin,
                                 std::initializer_list<std::string_view> required,
                                 const std::string& format) {
  std::vector<std::string_view> lines;
  std::string_view rest = text;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
  }
  if (lines.empty()) return Status::Invalid(origin + ": empty file, expected a CSV header");
  // No field of these formats holds a comma, so none is quoted, and a quote would be read as
  // part of a field.
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find('"') != std::string_view::npos) {
      return Status::Invalid(origin + ": line " + std::to_string(i + 1) + ": a quote; " + format +
                             " has plain comma-separated fields, none quoted "
                             "(hardware-db/calibration/README.md)");
    }
  }
  CsvTable table;
  table.header = SplitFields(lines[0]);
  for (size_t i = 0; i < table.header.size(); ++i) {
    if (!table.index.emplace(std::string(table.header[i]), i).second) {
      return Status::Invalid(origin + ": line 1: column '" + std::string(table.header[i]) +
                             "' appears twice in the header");
    }
  }
  for (std::string_view column : required) {
    if (table.index.find(column) == table.index.end()) {
      return Status::Invalid(origin + ": line 1: header lacks column '" + std::string(column) +
                             "'");
    }
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    CsvLine line{static_cast<int>(i + 1), SplitFields(lines[i])};
    if (line.fields.size() != table.header.size()) {
      return Status::Invalid(StrFormat("%s: line %d: %zu fields, the header has %zu",
                                       origin.c_str(), line.number, line.fields.size(),
                                       table.header.size()));
    }
    table.rows.push_back(std::move(line));
  }
  return table;
}

CsvRowReader::CsvRowReader(const CsvTable& table, const CsvLine& line, const std::string& origin)
    : table_(table), line_(line), context_(origin + ": line " + std::to_string(line.number)) {}

std::string_view CsvRowReader::Text(std::string_view column) {
  return line_.fields[table_.index.find(column)->second];
}

int64_t CsvRowReader::PositiveInt(std::string_view column) {
  const std::string_view text = Text(column);
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value <= 0) {
    Fail(column, "must be a positive integer", text);
    return 0;
  }
  return value;
}

double CsvRowReader::PositiveNumber(std::string_view column, double max) {
  const std::string_view text = Text(column);
  double value = 0;
  if (!ParseNumber(text, &value) || !(value > 0) || !(value <= max)) {
    Fail(column, "must be a positive number up to " + Bound(max), text);
    return 0;
  }
  return value;
}

double CsvRowReader::OptionalNumber(std::string_view column, double max) {
  const std::string_view text = Text(column);
  if (text.empty()) return 0;
  double value = 0;
  if (!ParseNumber(text, &value) || !(value >= 0) || !(value <= max)) {
    Fail(column, "must be a non-negative number up to " + Bound(max) + ", or empty", text);
    return 0;
  }
  return value;
}

size_t CsvRowReader::OneOf(std::string_view column,
                           std::initializer_list<std::string_view> allowed) {
  const std::string_view text = Text(column);
  size_t i = 0;
  std::string names;
  for (std::string_view a : allowed) {
    if (text == a) return i;
    names += (i++ ? ", " : "") + std::string(a);
  }
  Fail(column, "must be one of " + names, text);
  return 0;
}

void CsvRowReader::Fail(std::string_view column, const std::string& what, std::string_view got) {
  if (status_.ok()) {
    status_ = Status::Invalid(context_ + ": column '" + std::string(column) + "': " + what +
                              ", got '" + std::string(got) + "'");
  }
}

}  // namespace gpuplan
