#include "cli/command_names.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

#include "dvfslab/error.hpp"

namespace dvfslab::cli {
namespace {

// Commands that exist only in builds with an optional dependency, and how to get
// them, for a build without it.
const std::map<std::string, std::string, std::less<>>& commands_left_out_of_this_build() {
  static const std::map<std::string, std::string, std::less<>> left_out = {
#ifndef DVFSLAB_RUN_WORKLOAD_MODULE
      {"run-workload",
       "run-workload is not in this build: it needs LibTorch when dvfslab is built; install one (Debian's "
       "CPU-only libtorch-dev, or PyTorch's with CUDA) and rebuild with `cmake --preset release "
       "-DDVFSLAB_WITH_TORCH=ON && cmake --build --preset release` (docs/workloads.md)"},
#endif
  };
  return left_out;
}

std::string command_path(const CLI::App& command) {
  const CLI::App* parent = command.get_parent();
  return parent == nullptr ? "dvfslab" : command_path(*parent) + " " + command.get_name();
}

const CLI::App* find_command(const CLI::App& parent, const std::string& word) {
  const auto found =
      parent.get_subcommands([&word](const CLI::App* command) { return command->check_name(word); });
  return found.empty() ? nullptr : found.front();
}

[[noreturn]] void refuse(const CLI::App& parent, const std::string& word) {
  if (parent.get_parent() == nullptr) {
    if (const auto left_out = commands_left_out_of_this_build().find(word);
        left_out != commands_left_out_of_this_build().end()) {
      throw UsageError(left_out->second);
    }
  }
  std::vector<std::string> names;
  for (const CLI::App* command : parent.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(command->get_name());
  const std::string where = command_path(parent);
  throw UsageError(fmt::format("unknown command '{}'; the commands of {} are: {} (see {} --help)", word,
                               where, fmt::join(names, ", "), where));
}

}  // namespace

void check_command_names(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* current = &app;
  for (const std::string& word : args) {
    // Options end the command words: what follows belongs to the command named so far.
    if (current->get_require_subcommand_min() == 0 || word.starts_with('-')) return;
    const CLI::App* command = find_command(*current, word);
    if (command == nullptr) refuse(*current, word);
    current = command;
  }
}

}  // namespace dvfslab::cli
