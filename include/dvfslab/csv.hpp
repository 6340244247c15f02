#pragma once
// CSV as RFC 4180 writes it: fields separated by commas, a field holding a comma,
// quote or line break is quoted, and a quote inside a quoted field is doubled.
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace dvfslab {

class CsvReader {
 public:
  // `name` is the file name used in error messages.
  CsvReader(std::istream& in, std::string name);
  // Reads the next record into `fields`; false at the end of the input. Blank lines
  // are skipped. An unterminated quote or text after a closing quote throws
  // ConfigError naming file:line.
  bool next(std::vector<std::string>& fields);
  // The line on which the last record read began (1-based).
  int line() const { return record_line_; }
  // "file:line" of the last record, for error messages.
  std::string where() const;

 private:
  std::istream& in_;
  std::string name_;
  int line_ = 0;
  int record_line_ = 0;
};

// `text` as one CSV field, quoted only when it has to be.
std::string csv_field(std::string_view text);
// The fields joined by commas, each quoted as needed, ending with a newline.
std::string csv_line(const std::vector<std::string>& fields);

}  // namespace dvfslab
