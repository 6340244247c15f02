#include "dvfslab/csv.hpp"

#include <fmt/format.h>

#include "dvfslab/error.hpp"

namespace dvfslab {
namespace {

void drop_carriage_return(std::string& line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
}

}  // namespace

CsvReader::CsvReader(std::istream& in, std::string name) : in_(in), name_(std::move(name)) {}

std::string CsvReader::where() const { return fmt::format("{}:{}", name_, record_line_); }

bool CsvReader::next(std::vector<std::string>& fields) {
  std::string line;
  do {
    if (!std::getline(in_, line)) return false;
    ++line_;
    drop_carriage_return(line);
    // A byte-order mark some spreadsheet programs put before the header.
    if (line_ == 1 && line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);
  } while (line.empty());
  record_line_ = line_;

  fields.assign(1, std::string());
  std::size_t i = 0;
  bool quoted = false;       // inside a quoted field
  bool after_quote = false;  // a quoted field just closed
  while (true) {
    if (i == line.size()) {
      if (!quoted) return true;
      // A line break inside a quoted field belongs to the field.
      if (!std::getline(in_, line)) {
        throw ConfigError(where(), "a quoted field is never closed: add the closing quote (\")");
      }
      ++line_;
      drop_carriage_return(line);
      fields.back() += '\n';
      i = 0;
      continue;
    }
    const char c = line[i++];
    if (quoted) {
      if (c != '"') {
        fields.back() += c;
      } else if (i < line.size() && line[i] == '"') {
        fields.back() += '"';
        ++i;
      } else {
        quoted = false;
        after_quote = true;
      }
    } else if (c == ',') {
      fields.emplace_back();
      after_quote = false;
    } else if (after_quote) {
      throw ConfigError(where(),
                        fmt::format("text after the closing quote of field {}: quote the whole field, "
                                    "doubling quotes inside it (\"\")",
                                    fields.size()));
    } else if (c == '"' && fields.back().empty()) {
      quoted = true;
    } else {
      fields.back() += c;
    }
  }
}

std::string csv_field(std::string_view text) {
  const bool needs_quotes = text.find_first_of(",\"\r\n") != std::string_view::npos ||
                            (!text.empty() && (text.front() == ' ' || text.back() == ' '));
  if (!needs_quotes) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    out += csv_field(fields[i]);
  }
  out += '\n';
  return out;
}

}  // namespace dvfslab
