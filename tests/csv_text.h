// Reading CSV and line-based text in tests: the reports and the sweep's rows file.
#pragma once

#include <string>
#include <vector>

namespace gpuplan {

/// The lines of `text`, each ended by `end` (a last piece without it is dropped).
inline std::vector<std::string> Lines(const std::string& text, const std::string& end = "\n") {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t pos = text.find(end); pos != std::string::npos; pos = text.find(end, start)) {
    lines.push_back(text.substr(start, pos - start));
    start = pos + end.size();
  }
  return lines;
}

/// Fields of one RFC 4180 record (no embedded line breaks): a quoted field is taken whole, a
/// doubled quote inside it is one quote.
inline std::vector<std::string> CsvFields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

}  // namespace gpuplan
