// dvfslab import: a published sweep table into the store.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "dvfslab/store_tools.hpp"
#include "dvfslab/sweep_table.hpp"

namespace dvfslab::cli {

void add_import_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "import",
      "Load a sweep table (CSV: source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default) "
      "into the database, as one run of kind 'import' per GPU of the file, so that analyze and report work "
      "on "
      "measurements published by others.");
  auto file = std::make_shared<std::string>();
  auto database = std::make_shared<std::string>(default_database_file);
  command->add_option("FILE.csv", *file, "The sweep table to load; extra columns are ignored")->required();
  command->add_option("--db", *database, "The database to load it into (created if absent)")
      ->capture_default_str();
  command->callback([file, database] {
    // Read the table before opening the database, so that a bad file creates nothing.
    const SweepTableFile table = read_sweep_table_file(*file);
    Store store(*database);
    const ImportSummary summary = import_sweep_table(store, table);
    fmt::print(stderr, "dvfslab: imported {} rows of {} into {} ({} run{})\n", summary.rows, *file, *database,
               summary.run_ids.size(), summary.run_ids.size() == 1 ? "" : "s");
  });
}

}  // namespace dvfslab::cli
