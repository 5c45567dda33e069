// Plain comma-separated tables, the format of gpuplan's measured data files
// (hardware-db/calibration/README.md): a header line of column names, then one line per entry;
// no field holds a comma, so none is quoted. Errors name the file, the line and the column.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gpuplan {

/// One data line: its 1-based number in the file (the header is line 1) and its fields.
struct CsvLine {
  int number = 0;
  std::vector<std::string_view> fields;
};

/// A parsed table. Its fields point into the text it was parsed from, which must outlive it.
struct CsvTable {
  std::vector<std::string_view> header;
  std::map<std::string, size_t, std::less<>> index;  ///< column name -> position
  std::vector<CsvLine> rows;                         ///< the non-empty data lines, in order
};

/// Splits `text` (LF or CRLF line ends) into a table whose header holds every column of
/// `required`; other columns are kept, for the caller to read or ignore. Errors, each starting
/// with `origin`: an empty file, a quote anywhere ("line 3: a quote; ... none quoted
/// (`format`)"), a column named twice, a missing required column ("line 1: header lacks column
/// 'x'"), a data line with another number of fields than the header.
Expected<CsvTable> ParseCsvTable(std::string_view text, const std::string& origin,
                                 std::initializer_list<std::string_view> required,
                                 const std::string& format);

/// Reads the fields of one line by column name. The first problem is kept ("origin: line 3:
/// column 'tp': must be a positive integer, got 'x'"); later reads return 0. The table and the
/// line must outlive the reader.
class CsvRowReader {
 public:
  CsvRowReader(const CsvTable& table, const CsvLine& line, const std::string& origin);

  /// The field of `column`, which the table's header must hold.
  std::string_view Text(std::string_view column);
  /// A whole number above 0.
  int64_t PositiveInt(std::string_view column);
  /// A finite number above 0 and at most `max`.
  double PositiveNumber(std::string_view column, double max);
  /// A finite number from 0 to `max`, or an empty field, which reads as 0.
  double OptionalNumber(std::string_view column, double max);
  /// The position of the field's text in `allowed` (0 after a failure).
  size_t OneOf(std::string_view column, std::initializer_list<std::string_view> allowed);
  /// Records a problem with `column` ("must be ...") and the text found, unless one is kept.
  void Fail(std::string_view column, const std::string& what, std::string_view got);
  const Status& status() const { return status_; }

 private:
  const CsvTable& table_;
  const CsvLine& line_;
  std::string context_;
  Status status_ = Status::Ok();
};

}  // namespace gpuplan
