// dvfslab export: a database in one of the store's export formats (store_writers()).
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/output_file.hpp"
#include "dvfslab/store_tools.hpp"

namespace dvfslab::cli {

void add_export_command(CLI::App& app) {
  const WriterRegistry<Store&>& writers = store_writers();
  auto* command = app.add_subcommand(
      "export",
      fmt::format("Write every measurement of a database to standard output or a file: {}.", writers.help()));
  auto database = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("csv");
  auto output = std::make_shared<std::string>();
  command->add_option("DB", *database, "The database to export")->required();
  command->add_option("--format", *format, fmt::format("Output format: {}", writers.choices()))
      ->check(CLI::IsMember(writers.names()))
      ->capture_default_str();
  command->add_option("-o,--out", *output,
                      "Write to this file instead of standard output (atomically; never over the database)");
  command->callback([command, database, format, output] {
    const StoreWriter& writer = store_writers().find(*format);
    Store store = Store::open_existing(*database);
    if (command->count("--out") == 0) {
      refuse_standard_output_over(database_files(*database));
      writer.write(store, std::cout);
      std::cout.flush();
      if (!std::cout) throw Error("could not write to standard output: check the pipe or redirection");
      return;
    }
    OutputFile file(*output, database_files(*database));
    writer.write(store, file.stream());
    file.commit();
  });
}

}  // namespace dvfslab::cli
