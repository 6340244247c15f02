// dvfslab merge: the shard databases of one plan into one database.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "dvfslab/store_tools.hpp"

namespace dvfslab::cli {

void add_merge_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "merge",
      "Combine the databases of a sharded sweep (--shard i/N on several machines) into one new database. "
      "Refuses databases of different plans and points measured in two shards.");
  auto output = std::make_shared<std::string>();
  auto inputs = std::make_shared<std::vector<std::string>>();
  command->add_option("OUT.sqlite", *output, "The database to create (must not exist yet)")->required();
  command->add_option("IN.sqlite", *inputs, "The shard databases, one or more")->required();
  command->callback([output, inputs] {
    merge_stores(*output, std::vector<std::filesystem::path>(inputs->begin(), inputs->end()));
    Store merged = Store::open_existing(*output);
    fmt::print(stderr, "dvfslab: merged {} database{} into {}: {} runs, {} measurements\n", inputs->size(),
               inputs->size() == 1 ? "" : "s", *output, merged.runs().size(), merged.measurements().size());
  });
}

}  // namespace dvfslab::cli
