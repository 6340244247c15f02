#include "dvfslab/sweep_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <tuple>

#include "dvfslab/control_characters.hpp"
#include "dvfslab/csv.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/input_file.hpp"
#include "dvfslab/workload_profile_names.hpp"

namespace dvfslab {
namespace {

// workload_profile is optional and last: tables without profiles keep the
// published format's nine columns.
constexpr const char* columns[] = {"source",  "gpu",     "workload", "core_mhz", "mem_mhz",         "power_limit_w",
                                   "time_s",  "power_w", "default",  "workload_profile"};
enum Column {
  source,
  gpu,
  workload,
  core_mhz,
  mem_mhz,
  power_limit_w,
  time_s,
  power_w,
  is_default,
  workload_profile,
  column_count
};

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

std::optional<double> parse_double(std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

// Well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF),
// which every JSON output of the text needs.
bool is_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    int length = 0;
    unsigned min_second = 0x80, max_second = 0xbf;
    if (lead < 0x80) {
      length = 1;
    } else if (lead >= 0xc2 && lead <= 0xdf) {
      length = 2;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      if (lead == 0xe0) min_second = 0xa0;
      if (lead == 0xed) max_second = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      if (lead == 0xf0) min_second = 0x90;
      if (lead == 0xf4) max_second = 0x8f;
    } else {
      return false;
    }
    if (i + static_cast<std::size_t>(length) > text.size()) return false;
    for (int k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]);
      const unsigned low = k == 1 ? min_second : 0x80, high = k == 1 ? max_second : 0xbf;
      if (next < low || next > high) return false;
    }
    i += static_cast<std::size_t>(length);
  }
  return true;
}

class RowParser {
 public:
  RowParser(const CsvReader& reader, const std::vector<std::string>& fields, const std::vector<int>& index)
      : reader_(reader), fields_(fields), index_(index) {}

  std::string text(Column column) const {
    std::string value(trim(field(column)));
    if (value.empty()) fail(column, "is empty: every row names its " + std::string(columns[column]));
    if (!is_utf8(value)) {
      fail(column,
           "is not UTF-8 text (a Latin-1 or Windows file?): convert the file to UTF-8, e.g. with "
           "iconv -f latin1 -t utf-8");
    }
    // Names end up in one-line messages and in the comments of shell commands that
    // administrators run (analyze --emit).
    if (has_control_character(value)) {
      fail(column, fmt::format("'{}' holds a control character (a line break inside quotes?): a name is "
                               "one line of text",
                               escape_control_characters(value)));
    }
    return value;
  }

  // A knob in whole MHz or W; blank = not controlled.
  std::optional<int> knob(Column column) const {
    const std::string_view value = trim(field(column));
    if (value.empty()) return std::nullopt;
    const auto number = parse_double(value);
    if (!number || *number <= 0 || *number != std::floor(*number) || *number > 1e9) {
      fail(column, fmt::format("'{}' is not a positive whole number (leave it blank when the knob was not "
                               "controlled)",
                               value));
    }
    return static_cast<int>(*number);
  }

  // A workload power profile by name (docs/profiles.md); blank = none requested.
  std::optional<int> profile(Column column) const {
    const std::string_view value = trim(field(column));
    if (value.empty()) return std::nullopt;
    if (const auto id = workload_power_profile_id(value)) return id;
    fail(column, fmt::format("'{}' is not a workload power profile name (max-q, compute, memory-bound, ...; "
                             "blank when none was requested)",
                             escape_control_characters(value)));
  }

  double positive(Column column) const {
    const std::string_view value = trim(field(column));
    const auto number = parse_double(value);
    if (!number || *number <= 0) fail(column, fmt::format("'{}' is not a positive number", value));
    return *number;
  }

  bool flag(Column column) const {
    const std::string_view value = trim(field(column));
    if (value == "1") return true;
    if (value == "0") return false;
    fail(column, fmt::format("'{}' is not 0 or 1", value));
  }

 private:
  const std::string& field(Column column) const { return fields_[static_cast<std::size_t>(index_[column])]; }

  [[noreturn]] void fail(Column column, const std::string& problem) const {
    throw ConfigError(reader_.where(), fmt::format("column {} {}", columns[column], problem));
  }

  const CsvReader& reader_;
  const std::vector<std::string>& fields_;
  const std::vector<int>& index_;
};

// What a reader needs of a table: a sweep table has measurements; a table of
// settings (what to predict) only names the (gpu, workload, setting) rows.
enum class Content { measurements, settings };

bool required(Column column, Content content) {
  if (column == workload_profile) return false;
  if (content == Content::measurements) return true;
  return column == gpu || column == workload || column == core_mhz || column == mem_mhz ||
         column == power_limit_w;
}

// Where each known column is in the header (-1: absent and not required); unknown
// columns are ignored.
std::vector<int> column_positions(const CsvReader& reader, const std::vector<std::string>& header,
                                  Content content) {
  std::vector<int> index(column_count, -1);
  for (std::size_t position = 0; position < header.size(); ++position) {
    for (int column = 0; column < column_count; ++column) {
      if (trim(header[position]) != columns[column]) continue;
      if (index[column] >= 0)
        throw ConfigError(reader.where(), fmt::format("column {} appears twice", columns[column]));
      index[column] = static_cast<int>(position);
    }
  }
  for (int column = 0; column < column_count; ++column) {
    if (index[column] < 0 && required(static_cast<Column>(column), content)) {
      throw ConfigError(
          reader.where(),
          content == Content::measurements
              ? fmt::format("missing column {}: a sweep table's header is "
                            "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default",
                            columns[column])
              : fmt::format("missing column {}: a table of settings has the columns "
                            "gpu,workload,core_mhz,mem_mhz,power_limit_w",
                            columns[column]));
    }
  }
  return index;
}

std::string number_text(double value) { return fmt::format("{}", value); }

std::string knob_text(const std::optional<int>& value) {
  return value ? std::to_string(*value) : std::string();
}

std::vector<ResultRow> read_table(std::istream& in, const std::string& name, Content content) {
  CsvReader reader(in, name);
  std::vector<std::string> fields;
  if (!reader.next(fields))
    throw ConfigError(name + ":1", "the file is empty: a sweep table starts with its header");
  const std::vector<int> index = column_positions(reader, fields, content);
  const auto has = [&](Column column) { return index[column] >= 0; };
  const std::size_t width = fields.size();

  using Key = std::tuple<std::string, std::string, std::string, Setting>;
  std::map<Key, int> seen;
  std::vector<ResultRow> rows;
  while (reader.next(fields)) {
    if (fields.size() != width) {
      throw ConfigError(reader.where(),
                        fmt::format("{} fields where the header has {}: quote fields that hold a comma",
                                    fields.size(), width));
    }
    const RowParser parse(reader, fields, index);
    ResultRow row;
    if (has(source)) row.source = parse.text(source);
    row.gpu = parse.text(gpu);
    row.workload_case = Case{parse.text(workload), 0, Mode::train, Precision::fp32};
    row.setting.sm_mhz = parse.knob(core_mhz);
    row.setting.mem_mhz = parse.knob(mem_mhz);
    row.setting.power_limit_w = parse.knob(power_limit_w);
    if (has(workload_profile)) row.setting.workload_profile = parse.profile(workload_profile);
    if (content == Content::measurements) {
      row.time_per_iteration_s = parse.positive(time_s);
      row.mean_power_w = parse.positive(power_w);
    }
    if (has(is_default)) row.is_default = parse.flag(is_default);
    row.items_per_iteration = 1;
    row.energy_per_iteration_j = row.time_per_iteration_s * row.mean_power_w;
    row.repetition = seen[Key{row.source, row.gpu, row.workload_case.workload, row.setting}]++;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<ResultRow> read_table(const std::filesystem::path& path, Content content) {
  require_regular_file(path, "sweep table");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ConfigError(
        fmt::format("cannot read sweep table {}: check that the file exists and is readable", path.string()));
  return read_table(in, path.string(), content);
}

}  // namespace

std::vector<ResultRow> read_sweep_table(std::istream& in, const std::string& name) {
  return read_table(in, name, Content::measurements);
}

std::vector<ResultRow> read_sweep_table(const std::filesystem::path& path) {
  return read_table(path, Content::measurements);
}

std::vector<ResultRow> read_setting_table(const std::filesystem::path& path) {
  return read_table(path, Content::settings);
}

std::string sweep_table_workload_key(const ResultRow& row) {
  const Case& c = row.workload_case;
  if (c.batch == 0) return c.workload;
  return fmt::format("{}/{}/{}/b{}", c.workload, to_string(c.mode), to_string(c.precision), c.batch);
}

void write_sweep_table(const std::vector<ResultRow>& rows, std::ostream& out) {
  const bool profiles = std::any_of(rows.begin(), rows.end(),
                                    [](const ResultRow& row) { return row.setting.workload_profile.has_value(); });
  std::vector<std::string> header(std::begin(columns), std::end(columns));
  if (!profiles) header.pop_back();
  out << csv_line(header);
  for (const ResultRow& row : rows) {
    const bool label = row.simulated && row.source.find("SIMULATED") == std::string::npos;
    std::vector<std::string> fields({
        label ? row.source + " (SIMULATED)" : row.source,
        row.gpu,
        sweep_table_workload_key(row),
        knob_text(row.setting.sm_mhz),
        knob_text(row.setting.mem_mhz),
        knob_text(row.setting.power_limit_w),
        number_text(row.time_per_iteration_s),
        number_text(row.mean_power_w),
        row.is_default ? "1" : "0",
    });
    if (profiles) {
      fields.push_back(row.setting.workload_profile ? workload_power_profile_name(*row.setting.workload_profile)
                                                    : std::string());
    }
    out << csv_line(fields);
  }
}

}  // namespace dvfslab
