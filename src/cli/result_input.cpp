#include "cli/result_input.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dvfslab/error.hpp"
#include "dvfslab/search.hpp"
#include "dvfslab/store.hpp"

namespace dvfslab::cli {

std::optional<std::string> searched_objective_warning(const std::filesystem::path& path,
                                                      const Objective& objective) {
  if (path.extension() == ".csv") return std::nullopt;
  const std::string wanted = to_string(objective);
  std::vector<std::string> runs;
  // A database written by another tool may record a spelling this build does not read.
  const auto canonical = [](const std::string& text) {
    try {
      return to_string(parse_objective(text));
    } catch (const ConfigError&) {
      return text;
    }
  };
  for (const RunInfo& run : Store::open_existing(path).runs()) {
    const auto searched = objective_of_plan_text(run.plan_text);
    if (searched && canonical(*searched) != wanted)
      runs.push_back(
          fmt::format("run {} ({} for {})", run.id, *strategy_of_plan_text(run.plan_text), *searched));
  }
  if (runs.empty()) return std::nullopt;
  return fmt::format(
      "{} searched for another objective than {}: a search measures only the settings its own objective "
      "needs, so this optimum may miss one it never measured; search again with --objective {}, or sweep "
      "the grid",
      fmt::join(runs, ", "), wanted, wanted);
}

std::vector<std::filesystem::path> input_files(const std::filesystem::path& path) {
  if (path.extension() == ".csv") return {path};
  return database_files(path);
}

}  // namespace dvfslab::cli
