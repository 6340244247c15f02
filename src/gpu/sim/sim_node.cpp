#include "gpu/sim/sim_node.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>

#include "dvfslab/error.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "gpu/sim/board_variation.hpp"

namespace dvfslab::sim {
namespace {

struct ModelCount {
  std::string key;
  int count = 1;
};

bool is_model(std::string_view key) {
  const std::vector<std::string> keys = sim_gpu_keys();
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// "h200" or "h200x8". A model whose own key ends in x and digits stays one GPU.
ModelCount parse_item(std::string_view item, std::string_view names) {
  if (item.empty()) {
    throw UsageError(
        fmt::format("--device sim:{}: an empty simulated GPU name; write sim:NAME or sim:NAMExN, "
                    "separated by single commas",
                    names));
  }
  const std::size_t times = item.rfind('x');
  if (is_model(item) || times == std::string_view::npos || times == 0 || times + 1 == item.size()) {
    return {std::string(item), 1};
  }
  const std::string_view digits = item.substr(times + 1);
  const bool counted =
      is_model(item.substr(0, times)) &&
      std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); });
  if (!counted) {
    return {std::string(item), 1};
  }
  int count = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
  if (error != std::errc() || end != digits.data() + digits.size() || count < 1 ||
      count > kMaxSimulatedGpus) {
    throw UsageError(fmt::format("--device sim:{}: give 1 to {} simulated GPUs after the 'x' (sim:{}x8)",
                                 item, kMaxSimulatedGpus, item.substr(0, times)));
  }
  return {std::string(item.substr(0, times)), count};
}

}  // namespace

std::vector<std::unique_ptr<Gpu>> open_simulated_node(std::string_view names, SimTimeMode mode) {
  std::vector<ModelCount> models;
  int total = 0;
  std::size_t begin = 0;
  while (begin <= names.size()) {
    const std::size_t comma = std::min(names.find(',', begin), names.size());
    models.push_back(parse_item(names.substr(begin, comma - begin), names));
    total += models.back().count;
    begin = comma + 1;
  }
  if (total > kMaxSimulatedGpus) {
    throw UsageError(fmt::format("--device sim:{} names {} simulated GPUs; give at most {}", names, total,
                                 kMaxSimulatedGpus));
  }
  const std::shared_ptr<Clock> clock = mode == SimTimeMode::virtual_time
                                           ? std::shared_ptr<Clock>(std::make_shared<VirtualClock>())
                                           : std::shared_ptr<Clock>(std::make_shared<WallClock>());
  std::vector<std::unique_ptr<Gpu>> gpus;
  for (const ModelCount& model : models) {
    const SimGpuSpec& spec = sim_gpu_spec(model.key);
    for (int copy = 0; copy < model.count; ++copy) {
      const int position = static_cast<int>(gpus.size());
      gpus.push_back(std::make_unique<SimGpu>(board_at_position(spec, position), clock, position));
    }
  }
  return gpus;
}

}  // namespace dvfslab::sim
