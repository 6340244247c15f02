// dvfslab clock-map: a GPU's clock map learned from earlier dense sweeps of other
// workloads on the same GPU model, for `dvfslab search --clock-map` (docs/search.md,
// "A GPU's clock map").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

#include "cli/commands.hpp"
#include "cli/result_input.hpp"
#include "dvfslab/clock_map.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/output_file.hpp"

namespace dvfslab::cli {
namespace {

struct ClockMapArguments {
  std::string input;
  std::optional<std::string> gpu;
  std::string output = "-";
};

// One line for the person who made it: what the map was learned from and how much the
// GPU's own table moves a setting's energy.
std::string summary(const ClockMap& map) {
  std::vector<std::pair<double, Setting>> ranked;
  double squares = 0;
  for (const auto& [setting, factor] : map.factor) {
    ranked.emplace_back(factor, setting);
    squares += (factor - 1) * (factor - 1);
  }
  std::sort(ranked.begin(), ranked.end());
  const double spread = std::sqrt(squares / static_cast<double>(std::max<std::size_t>(ranked.size(), 1)));
  return fmt::format(
      "dvfslab: clock map of {}: {} settings from {} workloads' lines; a setting's energy differs from its "
      "line's trend by {:.2f} % (rms; the lines' own scatter leaves {:.2f} % of noise in a factor); cheapest "
      "against its neighbours: {} ({:+.2f} %)\n",
      map.gpu, map.factor.size(), map.lines, 100 * spread, 100 * map.factor_noise,
      to_string(ranked.front().second), 100 * (ranked.front().first - 1));
}

void run(const ClockMapArguments& args) {
  std::optional<OutputFile> file;
  if (args.output != "-")
    file.emplace(args.output, input_files(args.input));
  else
    refuse_standard_output_over(input_files(args.input));
  const ClockMap map = learn_clock_map(load_result_rows(args.input), args.gpu);
  const std::string json = clock_map_json(map);
  if (file) {
    file->stream() << json;
    file->commit();
  } else {
    std::cout << json << std::flush;
    if (!std::cout) throw Error("could not write to standard output: check the pipe or redirection");
  }
  fmt::print(stderr, "{}", summary(map));
}

}  // namespace

void add_clock_map_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "clock-map",
      "Learn a GPU's clock map from dense sweeps of other workloads on the same GPU model: how much more or "
      "less energy each setting costs than the smooth trend of its line, for `search --clock-map` "
      "(docs/search.md)");
  auto args = std::make_shared<ClockMapArguments>();
  command
      ->add_option(
          "INPUT", args->input,
          "A dvfslab database or a sweep table (CSV) with lines of at least 30 settings of at least two "
          "workloads")
      ->required();
  command->add_option("--gpu", args->gpu,
                      "The GPU model (as named in INPUT); needed when INPUT holds several");
  command->add_option("-o,--output", args->output, "Write the map (JSON) here (default: standard output)");
  command->callback([args] { run(*args); });
}

}  // namespace dvfslab::cli
