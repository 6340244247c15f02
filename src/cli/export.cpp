// dvfslab export: a database as CSV, JSON or a sweep table.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/output_file.hpp"
#include "dvfslab/store_tools.hpp"

namespace dvfslab::cli {

void add_export_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "export",
      "Write every measurement of a database to standard output or a file: csv (one row per measurement, "
      "every field), json (runs and measurements) or sweep-table (the published sweep-table layout, which "
      "'dvfslab import' and replay:FILE.csv read back).");
  auto database = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("csv");
  auto output = std::make_shared<std::string>();
  command->add_option("DB", *database, "The database to export")->required();
  command->add_option("--format", *format, "Output format: csv, json or sweep-table")
      ->check(CLI::IsMember({"csv", "json", "sweep-table"}))
      ->capture_default_str();
  command->add_option("-o,--out", *output,
                      "Write to this file instead of standard output (atomically; never over the database)");
  command->callback([command, database, format, output] {
    const ExportFormat chosen = parse_export_format(*format);
    Store store = Store::open_existing(*database);
    if (command->count("--out") == 0) {
      refuse_standard_output_over(database_files(*database));
      export_store(store, chosen, std::cout);
      std::cout.flush();
      if (!std::cout) throw Error("could not write to standard output: check the pipe or redirection");
      return;
    }
    OutputFile file(*output, database_files(*database));
    export_store(store, chosen, file.stream());
    file.commit();
  });
}

}  // namespace dvfslab::cli
