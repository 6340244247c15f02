// Hostile sweep tables (analyze, import, replay), databases, marker streams (measure)
// and output paths: the inputs issue 11 found crashing, hanging, losing data or
// changing files they should only read.
#include <sqlite3.h>

#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "hostile_cases.hpp"
#include "run_process.hpp"

namespace dvfslab::testing {

namespace fs = std::filesystem;

const char* const valid_table =
    "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n"
    "hostile,Tesla V100 PCIe,resnet50,1237,877,,0.0012,180.5,0\n"
    "hostile,Tesla V100 PCIe,resnet50,1380,877,,0.0010,210.0,1\n"
    "hostile,Tesla V100 PCIe,vgg16,1237,877,,0.0030,200.0,0\n"
    "hostile,Tesla V100 PCIe,vgg16,1380,877,,0.0026,240.0,1\n";

const char* const valid_plan =
    "[plan]\nname = \"valid\"\n[knobs]\nsm_mhz = [1380]\n[[cases]]\nworkloads = [\"resnet50\"]\nbatch_sizes "
    "= [1]\n"
    "[measure]\nduration_s = 0.2\nsettle_s = 0\nwarmup_iterations = 1\n";

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
}

std::string seeded_bytes(unsigned seed, std::size_t size) {
  std::mt19937 generator(seed);
  std::string bytes(size, '\0');
  for (char& byte : bytes) byte = static_cast<char>(generator() & 0xFF);
  return bytes;
}

namespace {

const std::string table_header =
    "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n";

std::string table_row(const std::string& workload, const std::string& core, const std::string& time,
                      const std::string& power, const std::string& is_default = "0") {
  return "hostile,Tesla V100 PCIe," + workload + "," + core + ",877,," + time + "," + power + "," +
         is_default + "\n";
}

struct NamedBytes {
  std::string name;
  std::string bytes;
};

std::vector<NamedBytes> hostile_tables() {
  const std::string valid = valid_table;
  std::string duplicated = valid;
  for (int i = 0; i < 50; ++i) duplicated += table_row("resnet50", "1237", "0.0012", "180.5");
  return {
      {"truncated_mid_row", valid.substr(0, valid.size() - 20)},
      {"truncated_mid_quote", valid + "\"hostile,Tesla V100 PCIe,resnet50,12"},
      {"nan_time", table_header + table_row("resnet50", "1237", "nan", "180") +
                       table_row("resnet50", "1380", "0.001", "200", "1")},
      {"nan_power", table_header + table_row("resnet50", "1237", "0.001", "NaN") +
                        table_row("resnet50", "1380", "0.001", "200", "1")},
      {"inf_power", table_header + table_row("resnet50", "1237", "0.001", "inf") +
                        table_row("resnet50", "1380", "0.001", "200", "1")},
      {"negative_time", table_header + table_row("resnet50", "1237", "-0.001", "180") +
                            table_row("resnet50", "1380", "0.001", "200", "1")},
      {"negative_power", table_header + table_row("resnet50", "1237", "0.001", "-180") +
                             table_row("resnet50", "1380", "0.001", "200", "1")},
      {"zero_time", table_header + table_row("resnet50", "1237", "0", "180") +
                        table_row("resnet50", "1380", "0", "200", "1")},
      {"huge_numbers", table_header + table_row("resnet50", "1237", "1e308", "1e308") +
                           table_row("resnet50", "1380", "1e-308", "1e308", "1")},
      {"numbers_beyond_double", table_header + table_row("resnet50", "1237", "1e400", "180") +
                                    table_row("resnet50", "1380", "0.001", "200", "1")},
      {"clock_beyond_int", table_header + table_row("resnet50", "4294968617", "0.001", "180") +
                               table_row("resnet50", "1380", "0.001", "200", "1")},
      {"clock_negative", table_header + table_row("resnet50", "-1237", "0.001", "180") +
                             table_row("resnet50", "1380", "0.001", "200", "1")},
      {"duplicated_rows", duplicated},
      {"duplicated_header", table_header + valid},
      {"latin1_workload", table_header + table_row("r\xe9snet", "1237", "0.001", "180") +
                              table_row("r\xe9snet", "1380", "0.001", "200", "1")},
      {"latin1_gpu",
       "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\nx,GPU "
       "\xb5,w,1237,877,,0.001,180,1\n"},
      {"missing_columns", "source,gpu,workload,time_s\nx,y,z,1\n"},
      {"empty_file", ""},
      {"header_only", table_header},
      {"binary_garbage", seeded_bytes(11, 8'192)},
      {"nul_bytes",
       table_header + std::string("\0\0\0\n", 4) + table_row("resnet50", "1380", "0.001", "200", "1")},
      {"long_field_300k", table_header + table_row(std::string(300'000, 'w'), "1380", "0.001", "200", "1")},
      {"ten_thousand_columns", std::string(20'000, ',') + "\n" + valid},
      {"crlf_and_bom", "\xef\xbb\xbf" + table_header.substr(0, table_header.size() - 1) + "\r\n" +
                           table_row("resnet50", "1380", "0.001", "200", "1")},
  };
}

// Tables need not be refused: a malformed row may be skipped with a notice.
HostileCase table_case(const std::string& name, const std::string& bytes,
                       std::vector<std::string> arguments) {
  return HostileCase{.name = name,
                     .prepare = [bytes](const fs::path& in) { write_file(in / "table.csv", bytes); },
                     .arguments = std::move(arguments),
                     .must_fail = false};
}

// A dvfslab database holding the valid table, made by the binary itself.
void make_valid_database(const fs::path& in, const std::string& name = "db.sqlite") {
  write_file(in / "source.csv", valid_table);
  const auto result = run_dvfslab({"import", (in / "source.csv").string(), "--db", (in / name).string()});
  if (result.exit_code != 0) throw std::runtime_error("cannot make the valid database: " + result.err);
  fs::remove(in / "source.csv");
}

void run_sql(const fs::path& path, const char* sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK)
    throw std::runtime_error("cannot create " + path.string());
  const int status = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  sqlite3_close(db);
  if (status != SQLITE_OK) throw std::runtime_error("cannot fill " + path.string());
}

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

using Prepare = std::function<void(const fs::path&)>;

std::vector<std::pair<std::string, Prepare>> hostile_databases() {
  return {
      {"text_file", [](const fs::path& in) { write_file(in / "db.sqlite", "this is not a database\n"); }},
      {"empty_file", [](const fs::path& in) { write_file(in / "db.sqlite", ""); }},
      {"zeros", [](const fs::path& in) { write_file(in / "db.sqlite", std::string(8'192, '\0')); }},
      {"garbage", [](const fs::path& in) { write_file(in / "db.sqlite", seeded_bytes(21, 16'384)); }},
      {"truncated",
       [](const fs::path& in) {
         make_valid_database(in);
         const std::string bytes = read_all(in / "db.sqlite");
         write_file(in / "db.sqlite", bytes.substr(0, bytes.size() / 2));
       }},
      {"corrupted_page",
       [](const fs::path& in) {
         make_valid_database(in);
         std::string bytes = read_all(in / "db.sqlite");
         const std::string noise = seeded_bytes(22, 2'000);
         // Over the second page's header and cell pointers, where SQLite's integrity
         // check sees it (noise in a page's unused middle is no damage at all).
         if (bytes.size() > 6'100) bytes.replace(4'096, noise.size(), noise);
         write_file(in / "db.sqlite", bytes);
       }},
      {"another_programs_sqlite",
       [](const fs::path& in) {
         run_sql(in / "db.sqlite",
                 "CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT);"
                 "INSERT INTO notes(text) VALUES ('mine, not dvfslab''s');");
       }},
      {"directory", [](const fs::path& in) { fs::create_directories(in / "db.sqlite"); }},
  };
}

// The measured program copies FILE to the marker descriptor and exits 0.
std::vector<std::string> measure_markers(const std::string& device, std::vector<std::string> options = {}) {
  std::vector<std::string> arguments = {"measure", "--device", device};
  arguments.insert(arguments.end(), options.begin(), options.end());
  arguments.insert(arguments.end(),
                   {"--", "/bin/sh", "-c", "cat \"$0\" >&\"$DVFSLAB_MARK_FD\"", "{in}/markers.txt"});
  return arguments;
}

std::vector<NamedBytes> hostile_marker_streams() {
  std::string many_windows;
  for (int i = 0; i < 2'000; ++i)
    many_windows +=
        "dvfslab:begin w" + std::to_string(i) + "\ndvfslab:iter 1\ndvfslab:end w" + std::to_string(i) + "\n";
  return {
      {"garbage_lines",
       "hello\ndvfslab:\ndvfslab:iter\ndvfslab:iter x\ndvfslab:iter 1 items\ndvfslab:frobnicate 3\n:::\n"},
      {"iteration_sum_overflows",
       "dvfslab:iter 9223372036854775807\ndvfslab:iter 9223372036854775807\ndvfslab:iter 5\n"},
      {"items_overflow",
       "dvfslab:iter 1 items 9223372036854775807\ndvfslab:iter 1 items 9223372036854775807\n"},
      {"numbers_beyond_int64", "dvfslab:iter 99999999999999999999\ndvfslab:iter 1 items 1e400\n"},
      {"negative_and_zero", "dvfslab:iter -5\ndvfslab:iter 0\ndvfslab:iter 1 items -3\n"},
      {"binary", seeded_bytes(31, 8'192)},
      {"very_long_line", "dvfslab:begin " + std::string(1 << 20, 'x') + "\n"},
      {"no_final_newline", "dvfslab:iter 3"},
      {"nul_bytes", std::string("dvfslab:iter 1\0\0\ndvfslab:begin a\0b\n", 32)},
      {"invalid_utf8_window_name", "dvfslab:begin \xff\xfe\ndvfslab:iter 1\ndvfslab:end \xff\xfe\n"},
      {"json_special_window_name", "dvfslab:begin \"}\\\n\x01\ndvfslab:end \"}\\\n"},
      {"end_without_begin", "dvfslab:end nothing\n"},
      {"begin_without_end", "dvfslab:begin forever\ndvfslab:iter 2\n"},
      {"two_thousand_windows", many_windows},
      {"crlf", "dvfslab:begin a\r\ndvfslab:iter 1\r\ndvfslab:end a\r\n"},
  };
}

}  // namespace

std::vector<HostileCase> hostile_table_cases() {
  std::vector<HostileCase> cases;
  for (const auto& table : hostile_tables()) {
    cases.push_back(
        table_case("analyze_" + table.name, table.bytes, {"analyze", "{in}/table.csv", "--json"}));
    cases.push_back(table_case("import_" + table.name, table.bytes,
                               {"import", "{in}/table.csv", "--db", "{out}/t.sqlite"}));
    cases.push_back(
        table_case("replay_" + table.name, table.bytes, {"info", "--device", "replay:{in}/table.csv"}));
  }
  for (const std::string path : {"/dev/zero", "/dev/null", "{in}"}) {
    const std::string name = path == "{in}" ? "directory" : path.substr(5);
    cases.push_back(table_case("analyze_path_" + name, "", {"analyze", path, "--json"}));
    cases.push_back(table_case("replay_path_" + name, "", {"info", "--device", "replay:" + path}));
  }
  return cases;
}

std::vector<HostileCase> hostile_database_cases() {
  std::vector<HostileCase> cases;
  for (const auto& [name, prepare] : hostile_databases()) {
    const auto database_case = [&, prepare = prepare](const std::string& command,
                                                      std::vector<std::string> arguments) {
      // A damaged page that the reader never visits need not fail it.
      cases.push_back(HostileCase{.name = command + "_" + name,
                                  .prepare = prepare,
                                  .arguments = std::move(arguments),
                                  .must_fail = name != "corrupted_page"});
    };
    database_case("analyze", {"analyze", "{in}/db.sqlite", "--json"});
    database_case("export", {"export", "{in}/db.sqlite", "--format", "csv", "-o", "{out}/x.csv"});
    database_case("report", {"report", "{in}/db.sqlite", "-o", "{out}/r.html"});
    database_case("merge", {"merge", "{out}/merged.sqlite", "{in}/db.sqlite"});
    // An empty file is a fine new database for a sweep; the others must be refused.
    if (name == "empty_file") continue;
    cases.push_back(HostileCase{
        .name = "sweep_into_" + name,
        .prepare =
            [prepare = prepare](const fs::path& in) {
              prepare(in);
              write_file(in / "plan.toml", valid_plan);
            },
        .arguments = {"sweep", "{in}/plan.toml", "--device", "sim:v100", "--db", "{in}/db.sqlite"}});
  }
  return cases;
}

std::vector<HostileCase> hostile_marker_cases() {
  std::vector<HostileCase> cases;
  int index = 0;
  for (const auto& stream : hostile_marker_streams()) {
    // Alternate the simulated GPU and the fake NVML, which also checks the GPU state.
    const bool fake_gpu = index++ % 2 == 1;
    // measure exits with its program's status: 0 here, whatever the markers said.
    cases.push_back(HostileCase{
        .name = "measure_" + stream.name,
        .prepare = [bytes = stream.bytes](const fs::path& in) { write_file(in / "markers.txt", bytes); },
        .arguments = measure_markers(fake_gpu ? "0" : "sim:v100", {"--json"}),
        .fake_gpu = fake_gpu,
        .must_fail = false});
  }
  return cases;
}

std::vector<HostileCase> hostile_output_cases() {
  const Prepare database = [](const fs::path& in) { make_valid_database(in); };
  const Prepare table = [](const fs::path& in) { write_file(in / "table.csv", valid_table); };
  const Prepare plan = [](const fs::path& in) { write_file(in / "plan.toml", valid_plan); };
  // A loop start, then one iteration: steady figures, so no warning precedes the error line.
  const Prepare markers = [](const fs::path& in) {
    write_file(in / "markers.txt", "dvfslab:step 0\ndvfslab:iter 1\n");
  };
  const auto output_case = [](const std::string& name, Prepare prepare, std::vector<std::string> arguments,
                              bool to_dev_full = false) {
    return HostileCase{.name = name,
                       .prepare = std::move(prepare),
                       .arguments = std::move(arguments),
                       .stdout_to_dev_full = to_dev_full};
  };
  return {
      output_case("export_o_empty", database, {"export", "{in}/db.sqlite", "-o", ""}),
      output_case("export_o_dev_full", database, {"export", "{in}/db.sqlite", "-o", "/dev/full"}),
      output_case("export_csv_onto_input", database,
                  {"export", "{in}/db.sqlite", "--format", "csv", "-o", "{in}/db.sqlite"}),
      output_case("export_json_onto_input", database,
                  {"export", "{in}/db.sqlite", "--format", "json", "-o", "{in}/db.sqlite"}),
      output_case("export_into_missing_directory", database,
                  {"export", "{in}/db.sqlite", "-o", "{out}/missing/x.csv"}),
      output_case("export_stdout_dev_full", database, {"export", "{in}/db.sqlite", "--format", "json"}, true),
      output_case("report_o_empty", database, {"report", "{in}/db.sqlite", "-o", ""}),
      output_case("report_o_dev_full", database, {"report", "{in}/db.sqlite", "-o", "/dev/full"}),
      output_case("report_onto_input", database, {"report", "{in}/db.sqlite", "-o", "{in}/db.sqlite"}),
      output_case("report_onto_table_input", table, {"report", "{in}/table.csv", "-o", "{in}/table.csv"}),
      output_case("analyze_json_stdout_dev_full", table, {"analyze", "{in}/table.csv", "--json"}, true),
      output_case("analyze_text_stdout_dev_full", table, {"analyze", "{in}/table.csv"}, true),
      output_case("import_into_missing_directory", table,
                  {"import", "{in}/table.csv", "--db", "{out}/missing/t.sqlite"}),
      output_case("import_onto_input", table, {"import", "{in}/table.csv", "--db", "{in}/table.csv"}),
      output_case("merge_onto_input", database, {"merge", "{in}/db.sqlite", "{in}/db.sqlite"}),
      output_case("sweep_db_empty", plan, {"sweep", "{in}/plan.toml", "--device", "sim:v100", "--db", ""}),
      output_case("sweep_db_memory", plan,
                  {"sweep", "{in}/plan.toml", "--device", "sim:v100", "--db", ":memory:"}),
      output_case("sweep_db_memory_uri", plan,
                  {"sweep", "{in}/plan.toml", "--device", "sim:v100", "--db", "file:x?mode=memory"}),
      output_case("sweep_db_onto_plan", plan,
                  {"sweep", "{in}/plan.toml", "--device", "sim:v100", "--db", "{in}/plan.toml"}),
      output_case("sweep_stdout_dev_full", plan,
                  {"sweep", "{in}/plan.toml", "--device", "sim:v100", "--dry-run"}, true),
      output_case("measure_json_stdout_dev_full", markers, measure_markers("sim:v100", {"--json"}), true),
      output_case("measure_trace_dev_full", markers,
                  measure_markers("sim:v100", {"--json", "--trace", "/dev/full"})),
      output_case("measure_trace_missing_directory", markers,
                  measure_markers("sim:v100", {"--json", "--trace", "{out}/missing/trace.csv"})),
      output_case("measure_trace_onto_input", markers,
                  measure_markers("sim:v100", {"--json", "--trace", "{in}/markers.txt"})),
  };
}

}  // namespace dvfslab::testing
