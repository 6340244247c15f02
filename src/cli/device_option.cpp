#include <string>

#include "cli/commands.hpp"
#include "dvfslab/gpu.hpp"

namespace dvfslab::cli {

CLI::Option* add_device_option(CLI::App& command, std::string& device, const std::string& extra_help) {
  const CLI::Validator non_empty(
      [](const std::string& value) {
        return value.empty() ? "empty: give " + device_spec_summary() : std::string();
      },
      "");
  return command.add_option("--device", device, device_spec_help() + extra_help)->check(non_empty);
}

}  // namespace dvfslab::cli
